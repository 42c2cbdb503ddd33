"""The arithmetic of a fast IPU port, and the checks on the options that drive it.

Everything the speed rules compute lives here, so the numbers are tested once against the
figures of Graphcore's "Keras tutorial: How to run on IPU" (60000 MNIST images, batch 64 -> 937
steps per epoch on one IPU, 936 with two replicas) and the constraints that Targeting the IPU from
TensorFlow 2 and the PopTorch User Guide ("Pipelined execution") state:

- replicas = IPUs / IPUs per model copy, where a pipeline of S stages takes S rounded up to a
  power of two IPUs (Keras ``_get_replication_factor``; "Selecting the number of replicas");
- ``steps_per_execution`` counts batches of one replica and must divide the batches per epoch
  per replica; with gradient accumulation it must be a multiple of the accumulation count
  ("Keras with IPUs");
- a grouped pipeline needs an accumulation count that is a multiple of 2 x stages, an interleaved
  one a multiple of the stages (the Keras tutorial, "Pipelining");
- NumPy inputs are trimmed to a multiple of batch x replicas x steps_per_execution x accumulation
  (the steps of an execution already include the accumulated batches), so that every execution is
  complete ("Keras with IPUs").
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Dict, Optional, Union

if TYPE_CHECKING:  # pragma: no cover
    from porter.config import Config

AUTO = "auto"
# --pipeline-schedule value -> ipu.ops.pipelining_ops.PipelineSchedule member (Graphcore's Keras
# tutorial, "Pipelining").
SCHEDULES = {"grouped": "Grouped", "interleaved": "Interleaved", "sequential": "Sequential"}


class OptionError(ValueError):
    """A bad option value or combination; ``option`` names the option to blame."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(message)
        self.option = option
        self.message = message


def is_power_of_two(number: int) -> bool:
    return number >= 1 and number & (number - 1) == 0


def ipus_per_replica(stages: Optional[int]) -> int:
    """IPUs one copy of the model takes: the pipeline stages rounded up to a power of two."""
    if not stages or stages <= 1:
        return 1
    return 1 << (stages - 1).bit_length()


def replicas(ipus: int, stages: Optional[int] = None) -> int:
    return max(1, ipus // ipus_per_replica(stages))


def trim_multiple(batch_size: int, replica_count: int = 1, steps_per_execution: int = 1,
                  accumulation: int = 1) -> int:
    """Samples consumed by one complete execution over all replicas: batch x replicas x steps per
    execution x accumulation, where the steps of an execution already count the accumulated
    batches (``steps_per_execution`` is a multiple of the accumulation count, "Keras with IPUs"), so
    the two factors combine as their least common multiple and data is not trimmed twice over."""
    steps = steps_per_execution * accumulation // math.gcd(steps_per_execution, accumulation)
    return batch_size * replica_count * steps


def usable_samples(samples: int, multiple: int) -> int:
    """The largest number of samples, no more than ``samples``, that is a multiple of ``multiple``."""
    return samples - samples % multiple


def batches_per_replica(samples: int, batch_size: int, replica_count: int = 1) -> int:
    return samples // (batch_size * replica_count)


def steps_per_epoch(samples: int, batch_size: int, replica_count: int = 1) -> int:
    """The steps Keras shows per epoch: whole batches, the same number on every replica."""
    return batches_per_replica(samples, batch_size, replica_count) * replica_count


def auto_steps_per_execution(samples: int, batch_size: int, replica_count: int = 1,
                             accumulation: int = 1) -> int:
    """``--steps-per-execution auto``: the largest value that divides the batches per epoch of one
    replica once the data is trimmed, and that is a multiple of the accumulation count: the whole
    epoch in one execution. 0 when the data does not fill one execution."""
    batches = batches_per_replica(samples, batch_size, replica_count)
    return batches - batches % accumulation


def parse_steps_per_execution(value: Union[None, int, str]) -> Union[None, int, str]:
    """``auto`` or a positive integer (from the command line or the settings file)."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip().lower()
        if text == AUTO:
            return AUTO
        if not text.isdigit():
            raise OptionError("--steps-per-execution", f"expected auto or a positive integer, got {value!r}")
        value = int(text)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise OptionError("--steps-per-execution", f"expected auto or a positive integer, got {value!r}")
    return value


def _positive(option: str, value) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise OptionError(option, f"expected a positive integer, got {value!r}")


def implied_ipus(values: Dict[str, Any]) -> Dict[str, Any]:
    """``values`` (Config field -> value) with ``ipus`` taken from the pipeline stages or the
    shards when it is not given: asking for S stages (or N shards) is asking for the IPUs that
    hold them. A given ``ipus`` is kept, and a contradiction is still refused by ``validate``."""
    if values.get("ipus") is not None:
        return values
    needed = max(ipus_per_replica(values.get("pipeline_stages")), values.get("shards") or 1)
    return {**values, "ipus": needed} if needed > 1 else values


def validate(config: "Config") -> "Config":
    """Check the speed options together; return the config with ``steps_per_execution`` parsed.
    Raises ``OptionError`` with a one-line message."""
    spe = parse_steps_per_execution(config.steps_per_execution)
    _positive("--ipus", config.ipus)
    _positive("--device-iterations", config.device_iterations)
    _positive("--pipeline-stages", config.pipeline_stages)
    _positive("--gradient-accumulation", config.gradient_accumulation)
    ipus, stages, accumulation = config.ipus, config.pipeline_stages, config.gradient_accumulation
    if not is_power_of_two(ipus):
        raise OptionError("--ipus", f"the number of IPUs must be a power of two (1, 2, 4, 8...), got {ipus}")
    if config.pipeline_schedule not in SCHEDULES:
        raise OptionError("--pipeline-schedule",
                          f"expected one of {', '.join(SCHEDULES)}, got {config.pipeline_schedule!r}")
    if stages is not None:
        if stages < 2:
            raise OptionError("--pipeline-stages", f"a pipeline needs at least 2 stages, got {stages}")
        per_replica = ipus_per_replica(stages)
        if ipus % per_replica:
            raise OptionError("--ipus", f"{ipus} IPUs cannot hold a pipeline of {stages} stages: the IPUs must "
                              f"be a multiple of the stages rounded up to a power of two ({per_replica})")
        if accumulation is None:
            raise OptionError("--pipeline-stages", "a pipeline needs --gradient-accumulation G "
                              f"(a multiple of {_accumulation_step(config)} for the "
                              f"{config.pipeline_schedule} schedule)")
        step = _accumulation_step(config)
        if accumulation % step:
            raise OptionError("--gradient-accumulation", f"the {config.pipeline_schedule} schedule of "
                              f"{stages} stages needs a multiple of {step}, got {accumulation}")
    if accumulation is not None and isinstance(spe, int) and spe % accumulation:
        raise OptionError("--steps-per-execution", f"{spe} is not a multiple of the gradient "
                          f"accumulation count {accumulation}")
    cache = config.executable_cache
    if cache is not None and (not cache.strip() or any(char.isspace() for char in cache)):
        raise OptionError("--executable-cache", "the cache folder must be a path without spaces "
                          f"(TF_POPLAR_FLAGS are separated by spaces), got {cache!r}")
    return config.with_changes(steps_per_execution=spe)


def _accumulation_step(config: "Config") -> int:
    stages = config.pipeline_stages or 1
    if config.pipeline_schedule == "grouped":
        return 2 * stages
    if config.pipeline_schedule == "interleaved":
        return stages
    return 1


# --------------------------------------------------------------------- what the rules use
def config_replicas(config: "Config") -> int:
    return replicas(config.ipus, config.pipeline_stages)


def config_accumulation(config: "Config") -> int:
    return config.gradient_accumulation or 1


def config_steps(config: "Config") -> Optional[int]:
    """The fixed ``steps_per_execution`` asked for, or None (not asked, or auto)."""
    spe = config.steps_per_execution
    return spe if isinstance(spe, int) and not isinstance(spe, bool) else None


def is_auto(config: "Config") -> bool:
    return isinstance(config.steps_per_execution, str) and config.steps_per_execution.lower() == AUTO


def schedule_member(config: "Config") -> str:
    return SCHEDULES[config.pipeline_schedule]
