"""Config: the options a port runs with (CLI options merged over ``[tool.ipu-port]``)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional, Tuple, Union


@dataclass(frozen=True)
class Config:
    select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    ipus: int = 1
    # Speed options, checked together by porter.throughput.validate. None (or False) means not
    # asked for: the rules that use them then change nothing.
    steps_per_execution: Optional[Union[int, str]] = None  # K, or "auto"
    device_iterations: Optional[int] = None  # PopTorch
    pipeline_stages: Optional[int] = None
    gradient_accumulation: Optional[int] = None
    pipeline_schedule: str = field(default="grouped", metadata={"choices": ("grouped", "interleaved", "sequential")})
    executable_cache: Optional[str] = None
    ipu_model: bool = False

    def with_changes(self, **changes) -> "Config":
        return replace(self, **changes)
