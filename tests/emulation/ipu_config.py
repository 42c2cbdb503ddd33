"""`tensorflow.python.ipu.config` emulated: a strict, typed option tree ("Configuring system options").

Unknown attributes fail with a "did you mean" hint, categories cannot be assigned, values are
type-checked when set, and nothing takes effect until `configure_ipu_system()`."""

import difflib
import enum

from .state import STATE


class SelectionOrder(enum.Enum):
    AUTO = 0
    ZIGZAG = 1
    SNAKE = 2
    HOOF = 3


class DeviceConnectionType(enum.Enum):
    ALWAYS = 0
    ON_DEMAND = 1
    PRE_COMPILE = 2
    NEVER = 3


class StochasticRoundingBehaviour(enum.Enum):
    OFF = 0
    ON = 1
    REPLICA_IDENTICAL_ONLY = 2


class SchedulingAlgorithm(enum.Enum):
    CHOOSE_BEST = 0
    CLUSTERING = 1
    POST_ORDER = 2
    LOOK_AHEAD = 3
    SHORTEST_PATH = 4


class MergeRemoteBuffersBehaviour(enum.Enum):
    NO_MERGING = 0
    MERGE = 1
    IF_BENEFICIAL = 2


class ExecutionProfileType(enum.Enum):
    NO_PROFILE = 0
    DEVICE_PROFILE = 1
    IPU_PROFILE = 2
    TILE_PROFILE = 3


def _ipu_list(value):
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, (list, tuple)) and all(
        isinstance(item, int) and not isinstance(item, bool) for item in value)


_BOOL = (bool, "bool")
_INT = (lambda v: isinstance(v, int) and not isinstance(v, bool), "int")
_FLOAT = (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "float")
_STR = (str, "str")
_DICT = (dict, "dict")
_IPUS = (_ipu_list, "int or a list/tuple of ints")


def _enum(kind):
    return (kind, kind.__name__)


def _poplar_options():
    return {"poplar_options": ({}, _DICT)}


# name -> (default, (type or predicate, description)) for leaves, name -> dict for categories
SCHEMA = {
    "auto_select_ipus": ([], _IPUS),
    "select_ipus": ([], _IPUS),
    "allow_recompute": (False, _BOOL),
    "selection_order": (SelectionOrder.AUTO, _enum(SelectionOrder)),
    "serialization_output_folder": ("", _STR),
    "compilation_poplar_options": ({}, _DICT),
    "gcl_poplar_options": ({}, _DICT),
    "convolutions": _poplar_options(),
    "matmuls": dict(_poplar_options(), clear_pass_type=(False, _BOOL)),
    "slices": _poplar_options(),
    "pooling": _poplar_options(),
    "device_connection": {
        "type": (DeviceConnectionType.ALWAYS, _enum(DeviceConnectionType)),
        "version": ("", _STR),
        "enable_remote_buffers": (False, _BOOL),
    },
    "floating_point_behaviour": {
        "inv": (False, _BOOL), "div0": (False, _BOOL), "oflo": (False, _BOOL),
        "nanoo": (False, _BOOL), "set_all": (False, _BOOL),
        "esr": (StochasticRoundingBehaviour.OFF, _enum(StochasticRoundingBehaviour)),
    },
    "ipu_model": {
        "compile_ipu_code": (True, _BOOL), "tiles_per_ipu": (0, _INT), "version": ("ipu2", _STR),
    },
    "io_tiles": {
        "num_io_tiles": (0, _INT), "place_ops_on_io_tiles": (False, _BOOL),
        "available_memory_proportion": (0.9, _FLOAT),
    },
    "norms": {
        "use_stable_statistics": (False, _BOOL),
        "experimental": {"distributed_batch_norm_replica_group_size": (1, _INT)},
    },
    "optimizations": {
        "math": {"fast": (False, _BOOL), "dot_strength": (True, _BOOL)},
        "enable_fast_math": (False, _BOOL),
        "prefetch_data_streams": (True, _BOOL),
        "combine_embedding_lookups": (False, _BOOL),
        "combine_matmuls": (False, _BOOL),
        "enable_graph_outlining": (True, _BOOL),
        "merge_infeed_io_copies": (True, _BOOL),
        "merge_remote_buffers": (MergeRemoteBuffersBehaviour.IF_BENEFICIAL,
                                 _enum(MergeRemoteBuffersBehaviour)),
        "maximum_cross_replica_sum_buffer_size": (0, _INT),
        "maximum_reduce_scatter_buffer_size": (0, _INT),
        "maximum_inter_ipu_copies_buffer_size": (0, _INT),
        "maximum_send_recv_cluster_size": (0, _INT),
        "minimum_remote_tensor_size": (128, _INT),
        "triangular_solve_expander_block_size": (0, _INT),
        "cholesky_block_size": (0, _INT),
        "enable_dynamic_slice_replacement": (True, _BOOL),
    },
    "scheduling": {
        "algorithm": (SchedulingAlgorithm.CHOOSE_BEST, _enum(SchedulingAlgorithm)),
        "maximum_scheduler_lookahead_depth": (5, _INT),
        "maximum_scheduler_search_space_size": (64, _INT),
    },
    "experimental": {
        "always_rearrange_copies_on_the_host": (False, _BOOL),
        "enable_remote_buffer_embedding": (False, _BOOL),
        "enable_prng_stability": (False, _BOOL),
        "multi_replica_distribution": {"process_count": (0, _INT), "process_index": (0, _INT)},
    },
}


class _Category:
    """One level of the option tree; leaves are type-checked on assignment."""

    def __init__(self, schema, path):
        object.__setattr__(self, "_schema", schema)
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_values", {})
        for name, spec in schema.items():
            if isinstance(spec, dict):
                self._values[name] = _Category(spec, path + "." + name)
            else:
                default = spec[0]
                self._values[name] = type(default)(default) if isinstance(default, (list, dict)) else default

    def _full(self, name):
        return self._path + "." + name

    def _unknown(self, name):
        close = difflib.get_close_matches(name, list(self._schema), n=1)
        hint = " Did you mean '%s'?" % close[0] if close else ""
        return STATE.error(AttributeError(
            "'%s' is not a valid attribute of %s.%s" % (name, self._path, hint)))

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        values = object.__getattribute__(self, "_values")
        if name not in values:
            raise self._unknown(name)
        return values[name]

    def __setattr__(self, name, value):
        if name not in self._schema:
            raise self._unknown(name)
        spec = self._schema[name]
        if isinstance(spec, dict):
            raise STATE.error(AttributeError(
                "%s is a category and cannot be assigned to; set one of its attributes: %s"
                % (self._full(name), ", ".join(sorted(spec)))))
        kind, description = spec[1]
        if name == "esr" and isinstance(value, bool):
            raise STATE.error(ValueError(
                "%s must be a StochasticRoundingBehaviour (OFF, ON or REPLICA_IDENTICAL_ONLY), not a bool"
                % self._full(name)))
        ok = kind(value) if callable(kind) and not isinstance(kind, type) else isinstance(value, kind)
        if not ok or (kind is int and isinstance(value, bool)):
            raise STATE.error(TypeError(
                "Trying to set %s to %r, but it must be of type %s." % (self._full(name), value, description)))
        self._values[name] = value

    def _walk(self):
        for name, value in self._values.items():
            if isinstance(value, _Category):
                for item in value._walk():
                    yield item
            else:
                yield self._full(name), value


class IPUConfig(_Category):
    def __init__(self):
        super().__init__(SCHEMA, "IPUConfig")

    def configure_ipu_system(self, device="cpu"):
        configure_ipu_system(self, device=device)


def _validate(config):
    if config.auto_select_ipus != [] and config.select_ipus != []:
        raise STATE.error(Exception("Only one of `auto_select_ipus` and `select_ipus` can be set."))
    if isinstance(config.select_ipus, (list, tuple)) and len(set(config.select_ipus)) != len(config.select_ipus):
        raise STATE.error(ValueError("`select_ipus` must contain unique device IDs."))
    if config.device_connection.type in (DeviceConnectionType.PRE_COMPILE, DeviceConnectionType.NEVER) \
            and not config.device_connection.version:
        raise STATE.error(ValueError(
            "`device_connection.version` must be set when `device_connection.type` is %s."
            % config.device_connection.type.name))
    for name, value in config._walk():
        if name.endswith("poplar_options"):
            for option, option_value in value.items():
                if not isinstance(option_value, str):
                    raise STATE.error(TypeError(
                        "%r has type %s, but expected one of: bytes, unicode (Poplar option %s in %s "
                        "must be a string)" % (option_value, type(option_value).__name__, option, name)))


def configure_ipu_system(config, device="cpu", reset_configuration=True):
    if not isinstance(config, IPUConfig):
        raise STATE.error(TypeError("configure_ipu_system expects an IPUConfig, got %r" % type(config)))
    _validate(config)
    STATE.configured.append(config)


def reset_ipu_configuration():
    del STATE.configured[:]


def get_ipu_config(session=None):
    return list(STATE.configured[-1:])


def configured_ipus():
    """IPUs attached to /device:IPU:0 by the last configuration (0 when not configured)."""
    if not STATE.configured:
        return 0
    config = STATE.configured[-1]
    selected = config.auto_select_ipus if config.auto_select_ipus != [] else config.select_ipus
    if isinstance(selected, int):
        return selected if config.auto_select_ipus != [] else 1
    if not selected:
        return 0
    return selected[0] if config.auto_select_ipus != [] else 1
