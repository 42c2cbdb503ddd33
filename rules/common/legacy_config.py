from typing import Callable, Dict, List, Optional, Tuple

import libcst as cst

from porter.context import SharedKey, dotted_name
from porter.cstutil import is_false, is_true, string_value
from porter.rules.common._analysis.legacy import drop_removed_import
from porter.rule import FIX, KERAS, TF1, Example, Rule
from porter.rules.tf1._analysis.graph import find_calls

UTILS = "tensorflow.python.ipu.utils."
_RENDER = cst.Module(body=[])
_ENUM = "ipu.config."


def _code(node: cst.CSTNode) -> str:
    return _RENDER.code_for_node(node)


# A converter turns the old argument into the new value's source, or None when it cannot.
Converter = Callable[[cst.BaseExpression], Optional[str]]


def _same(value):
    return _code(value)


def _inverted(value):
    if is_true(value):
        return "False"
    if is_false(value):
        return "True"
    return f"not ({_code(value)})"


def _enum(enum: str) -> Converter:
    """``ipu.utils.SelectionOrder.SNAKE`` -> ``ipu.config.SelectionOrder.SNAKE``."""
    def convert(value):
        name = dotted_name(value) or ""
        parts = name.split(".")
        if len(parts) >= 2 and parts[-2] == enum:
            return f"{_ENUM}{enum}.{parts[-1]}"
        return _code(value)
    return convert


def _esr(value):
    if is_true(value):
        return f"{_ENUM}StochasticRoundingBehaviour.ON"
    if is_false(value):
        return f"{_ENUM}StochasticRoundingBehaviour.OFF"
    return None


def _ipu_version(value):
    if isinstance(value, cst.Integer) and value.value in ("1", "2"):
        return f'"ipu{value.value}"'
    return _code(value) if string_value(value) is not None else None


_SCHEDULERS = {"": "CHOOSE_BEST", "Clustering": "CLUSTERING", "PostOrder": "POST_ORDER",
               "LookAhead": "LOOK_AHEAD", "ShortestPath": "SHORTEST_PATH"}


def _scheduler(value):
    name = _SCHEDULERS.get(string_value(value) or "?")
    return f"{_ENUM}SchedulingAlgorithm.{name}" if name else None


def _merge_remote_buffers(value):
    if is_true(value):
        return f"{_ENUM}MergeRemoteBuffersBehaviour.MERGE"
    if is_false(value):
        return f"{_ENUM}MergeRemoteBuffersBehaviour.NO_MERGING"
    if isinstance(value, cst.Name) and value.value == "None":
        return f"{_ENUM}MergeRemoteBuffersBehaviour.IF_BENEFICIAL"
    return None


# Parameter: (name, IPUConfig attribute, converter, value the old call used when not given, or None).
Param = Tuple[str, str, Converter, Optional[str]]
_PROFILING = ("profiling", "enable_ipu_events", "use_poplar_text_report", "use_poplar_cbor_report",
              "profile_execution", "enable_poplar_serialized_graph", "report_every_nth_execution",
              "max_report_size", "report_directory")
_FUNCTIONS: Dict[str, List[Param]] = {
    "create_ipu_config": [
        ("scheduler_selection", "scheduling.algorithm", _scheduler, None),
        ("always_rearrange_copies_on_the_host", "experimental.always_rearrange_copies_on_the_host", _same, None),
        ("merge_infeed_io_copies", "optimizations.merge_infeed_io_copies", _same, None),
        ("disable_graph_outlining", "optimizations.enable_graph_outlining", _inverted, None),
        ("max_scheduler_lookahead_depth", "scheduling.maximum_scheduler_lookahead_depth", _same, None),
        ("max_scheduler_search_space_size", "scheduling.maximum_scheduler_search_space_size", _same, None),
        ("prefetch_data_streams", "optimizations.prefetch_data_streams", _same, None),
        ("selection_order", "selection_order", _enum("SelectionOrder"), None),
        ("merge_remote_buffers", "optimizations.merge_remote_buffers", _merge_remote_buffers, None),
        ("enable_experimental_remote_buffer_embedding", "experimental.enable_remote_buffer_embedding", _same, None),
    ],
    "auto_select_ipus": [("num_ipus", "auto_select_ipus", _same, None)],
    "select_ipus": [("indices", "select_ipus", _same, None)],
    "set_ipu_model_options": [
        ("compile_ipu_code", "ipu_model.compile_ipu_code", _same, None),
        ("tiles_per_ipu", "ipu_model.tiles_per_ipu", _same, None),
        ("ipu_model_version", "ipu_model.version", _same, None),
    ],
    "set_recomputation_options": [("allow_recompute", "allow_recompute", _same, "True")],
    "set_floating_point_behaviour_options": [
        ("inv", "floating_point_behaviour.inv", _same, "True"),
        ("div0", "floating_point_behaviour.div0", _same, "True"),
        ("oflo", "floating_point_behaviour.oflo", _same, "True"),
        ("esr", "floating_point_behaviour.esr", _esr, f"{_ENUM}StochasticRoundingBehaviour.ON"),
        ("nanoo", "floating_point_behaviour.nanoo", _same, "True"),
    ],
    "set_matmul_options": [
        ("matmul_options", "matmuls.poplar_options", _same, None),
        ("clear_pass_type", "matmuls.clear_pass_type", _same, None),
    ],
    "set_convolution_options": [("convolution_options", "convolutions.poplar_options", _same, None)],
    "set_pooling_options": [("pooling_options", "pooling.poplar_options", _same, None)],
    "set_compilation_options": [("compilation_options", "compilation_poplar_options", _same, None)],
    "set_gcl_options": [("gcl_options", "gcl_poplar_options", _same, None)],
    "set_io_tile_options": [
        ("num_io_tiles", "io_tiles.num_io_tiles", _same, None),
        ("place_ops_on_io_tiles", "io_tiles.place_ops_on_io_tiles", _same, None),
        ("io_tile_available_memory_proportion", "io_tiles.available_memory_proportion", _same, None),
    ],
    "set_ipu_connection_type": [
        ("connection_type", "device_connection.type", _enum("DeviceConnectionType"), None),
        ("ipu_version", "device_connection.version", _ipu_version, None),
        ("enable_remote_buffers", "device_connection.enable_remote_buffers", _same, None),
    ],
    "set_serialization_options": [("output_folder", "serialization_output_folder", _same, None)],
    "set_norm_options": [("use_stable_statistics", "norms.use_stable_statistics", _same, None)],
    "set_optimization_options": [("enable_fast_math", "optimizations.math.fast", _same, None)],
    "set_experimental_multi_replica_distribution_options": [
        ("process_count", "experimental.multi_replica_distribution.process_count", _same, None),
        ("process_index", "experimental.multi_replica_distribution.process_index", _same, None),
    ],
    "set_transfer_options": [],
}
_TRAPS = {
    "set_recomputation_options": "the old call enabled recomputation by default",
    "set_floating_point_behaviour_options": "the old call enabled every exception and stochastic "
                                            "rounding by default",
}
# The ``(config variable, attribute)`` of each Poplar-options attribute written so far, and the call
# that set it: a second call setting the same one is reported.
_OPTIONS_SET: SharedKey[Dict[Tuple[str, str], cst.Call]] = SharedKey("legacy-poplar-options", dict)
_POPLAR_OPTIONS = {"matmuls.poplar_options", "convolutions.poplar_options", "pooling.poplar_options",
                   "compilation_poplar_options", "gcl_poplar_options"}


class LegacyConfig(Rule):
    code = "IPU010"
    name = "legacy-config"
    kind = FIX
    frameworks = frozenset({KERAS, TF1})
    summary = "Upgrade the `ipu.utils` configuration functions (removed in SDK 2.4) to `IPUConfig`."
    rationale = (
        "`ipu.utils.create_ipu_config`, `auto_select_ipus`, `select_ipus`, `set_*_options` and "
        "`configure_ipu_system(cfg)` were removed in SDK 2.4; their settings are attributes of "
        "`ipu.config.IPUConfig` (Targeting the IPU from TensorFlow 2, \"Configuring system options\"). Each "
        "call becomes attribute assignments. Old defaults that differ are written out: a bare "
        "`set_recomputation_options(cfg)` enabled recomputation, a bare "
        "`set_floating_point_behaviour_options(cfg)` enabled every exception and stochastic rounding. "
        "Options without an equivalent (profiling, transfer verification, most optimisation options) "
        "are reported, and calls the porter cannot follow are left for a person."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            # one IPU
            cfg = ipu.utils.create_ipu_config()
            cfg = ipu.utils.auto_select_ipus(cfg, 1)
            ipu.utils.configure_ipu_system(cfg)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            # one IPU
            cfg = ipu.config.IPUConfig()
            cfg.auto_select_ipus = 1
            cfg.configure_ipu_system()
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python.ipu import utils


            def configure(n):
                opts = utils.create_ipu_config(profiling=True, disable_graph_outlining=True)
                opts = utils.set_recomputation_options(opts)
                opts = utils.set_matmul_options(opts, {"availableMemoryProportion": "0.4"})
                opts = utils.set_ipu_connection_type(opts, utils.DeviceConnectionType.ON_DEMAND, 2)
                return utils.auto_select_ipus(opts, num_ipus=n)
            """,
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu


            def configure(n):
                opts = ipu.config.IPUConfig()
                opts.optimizations.enable_graph_outlining = False
                opts.allow_recompute = True
                opts.matmuls.poplar_options = {"availableMemoryProportion": "0.4"}
                opts.device_connection.type = ipu.config.DeviceConnectionType.ON_DEMAND
                opts.device_connection.version = "ipu2"
                opts.auto_select_ipus = n
                return opts
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            cfg = ipu.utils.auto_select_ipus(ipu.utils.create_ipu_config(), [1, 1])
            cfg = ipu.utils.set_floating_point_behaviour_options(cfg, esr=False)
            ipu.utils.configure_ipu_system(config=cfg)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            cfg = ipu.config.IPUConfig()
            cfg.auto_select_ipus = [1, 1]
            cfg.floating_point_behaviour.inv = True
            cfg.floating_point_behaviour.div0 = True
            cfg.floating_point_behaviour.oflo = True
            cfg.floating_point_behaviour.esr = ipu.config.StochasticRoundingBehaviour.OFF
            cfg.floating_point_behaviour.nanoo = True
            cfg.configure_ipu_system()
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python.ipu.utils import auto_select_ipus, configure_ipu_system, create_ipu_config

            config = auto_select_ipus(create_ipu_config(), 4)
            configure_ipu_system(config)
            """,
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu

            config = ipu.config.IPUConfig()
            config.auto_select_ipus = 4
            config.configure_ipu_system()
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            run_config = ipu.ipu_run_config.IPURunConfig(ipu_options=ipu.utils.create_ipu_config())
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            cfg = ipu.config.IPUConfig()
            cfg.auto_select_ipus = 1
            cfg.configure_ipu_system()
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        legacy_calls = find_calls(ctx, *(UTILS + name for name in (*_FUNCTIONS, "configure_ipu_system")))
        if not legacy_calls:
            return
        handled = set()
        for line in {id(ctx.statement_of(call)): ctx.statement_of(call) for call in legacy_calls}.values():
            if not isinstance(line, cst.SimpleStatementLine):
                continue
            if len(line.body) != 1 or ctx.block_of(line) is None:
                continue
            small = line.body[0]
            value = small.value if isinstance(small, (cst.Assign, cst.Expr, cst.Return)) else None
            if not isinstance(value, cst.Call) or self._legacy(ctx, value) is None:
                continue
            if isinstance(small, cst.Assign) and not (
                    len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)):
                continue
            reports = []
            new = self._upgrade(ctx, small, value, reports)
            if new is None:
                continue
            for anchor, message, fixed in reports:
                ctx.report(self.code, anchor, message, fixed=fixed)
            handled.update(id(call) for call in self._chain(ctx, value))
            if not new:
                ctx.remove(line)
                continue
            first = new[0].with_changes(leading_lines=line.leading_lines)
            if len(new) == 1:
                first = first.with_changes(trailing_whitespace=line.trailing_whitespace)
            ctx.replace(line, first)
            if new[1:]:
                ctx.insert_after(line, new[1:])
            ctx.add_import("tensorflow.python", "ipu", code=self.code)
        drop_removed_import(ctx, self.code, UTILS.rstrip("."), {*_FUNCTIONS, "configure_ipu_system"}, handled,
                            "the `ipu.utils` configuration functions were removed in SDK 2.4",
                            "use `ipu.config.IPUConfig` (`from tensorflow.python import ipu`)")
        for call in legacy_calls:
            name = self._legacy(ctx, call)
            if name is not None and id(call) not in handled:
                ctx.report(self.code, call, f"`ipu.utils.{name}` was removed in SDK 2.4: set the matching "
                           "`ipu.config.IPUConfig` attributes here by hand (Targeting the IPU from TensorFlow "
                           "2, \"Configuring system options\")", fixed=False)

    @staticmethod
    def _legacy(ctx, call: cst.Call) -> Optional[str]:
        qualified = ctx.qualified_name(call.func)
        if qualified is None or not qualified.startswith(UTILS):
            return None
        name = qualified[len(UTILS):]
        return name if name in _FUNCTIONS or name == "configure_ipu_system" else None

    def _chain(self, ctx, call: cst.Call) -> List[cst.Call]:
        """``call`` and the legacy calls nested as its first argument, outermost first."""
        chain = [call]
        while chain[-1].args and isinstance(chain[-1].args[0].value, cst.Call) and \
                self._legacy(ctx, chain[-1].args[0].value) is not None:
            chain.append(chain[-1].args[0].value)
        return chain

    def _upgrade(self, ctx, small, call: cst.Call, reports) -> Optional[List[cst.BaseStatement]]:
        """The statements replacing ``small`` (whose value is ``call``), or None to leave it;
        the findings go to ``reports``."""
        chain = self._chain(ctx, call)
        innermost = chain[-1]
        target = small.targets[0].target.value if isinstance(small, cst.Assign) else None
        if self._legacy(ctx, innermost) == "create_ipu_config":
            if target is None or any(arg.keyword is None for arg in innermost.args):
                return None
            config = target
            lines = [f"{config} = ipu.config.IPUConfig()"]
        else:
            opts = self._opts(innermost)
            if not isinstance(opts, cst.Name):
                return None
            config = opts.value
            lines = []
        for legacy in reversed(chain):
            name = self._legacy(ctx, legacy)
            if name == "configure_ipu_system":
                if legacy is not call or target is not None:
                    return None
                device = [arg for arg in legacy.args if arg.keyword is not None and arg.keyword.value == "device"]
                lines.append(f"{config}.configure_ipu_system({_code(device[0]).rstrip(', ') if device else ''})")
                reports.append((legacy, f"`ipu.utils.configure_ipu_system({config})` becomes "
                                f"`{config}.configure_ipu_system()`", True))
                continue
            assigned = self._attributes(ctx, name, legacy, config, reports)
            if assigned is None:
                return None
            lines += assigned
        if isinstance(small, cst.Return):
            lines.append(f"return {config}")
        elif target is not None and target != config:
            lines.append(f"{target} = {config}")
        return [cst.parse_statement(line + "\n") for line in lines]

    @staticmethod
    def _opts(call: cst.Call) -> Optional[cst.BaseExpression]:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in ("opts", "config"):
                return arg.value
        return call.args[0].value if call.args and call.args[0].keyword is None else None

    def _attributes(self, ctx, name: str, call: cst.Call, config: str, reports) -> Optional[List[str]]:
        params = _FUNCTIONS[name]
        offset = 0 if name == "create_ipu_config" else 1
        given: Dict[str, cst.BaseExpression] = {}
        positional = [arg for arg in call.args if arg.keyword is None]
        if any(arg.star for arg in call.args) or len(positional) - offset > len(params):
            return None
        for index, arg in enumerate(positional[offset:]):
            given[params[index][0]] = arg.value
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value not in ("opts", "config"):
                given[arg.keyword.value] = arg.value
        known = {param[0] for param in params}
        if name == "set_transfer_options":
            reports.append((call, "`set_transfer_options` is dropped: verified transfers no longer exist", False))
            return []
        for keyword, value in given.items():
            if keyword not in known and keyword in _PROFILING and is_false(value):
                reports.append((value, f"`{name}({keyword}=False)` is dropped: profiling is off by default", True))
            elif keyword not in known:
                what = ("profiling is not an `IPUConfig` option: use the Poplar engine options "
                        "(`POPLAR_ENGINE_OPTIONS`)" if keyword in _PROFILING
                        else "it has no `IPUConfig` equivalent in this upgrade: set it by hand if it matters")
                reports.append((value, f"`{name}({keyword}=...)` is dropped: {what}", False))
        lines = []
        for keyword, attribute, convert, old_default in params:
            if keyword in given:
                value = convert(given[keyword])
                if value is None:
                    return None
            elif old_default is not None:
                value = old_default
            else:
                continue
            lines.append(f"{config}.{attribute} = {value}")
            if attribute in _POPLAR_OPTIONS:
                self._check_accumulated(ctx, call, config, attribute, reports)
        trap = _TRAPS.get(name)
        message = f"`ipu.utils.{name}` becomes `IPUConfig` attributes"
        reports.append((call, message + (f" ({trap}: written out)" if trap else ""), True))
        return lines

    def _check_accumulated(self, ctx, call, config: str, attribute: str, reports) -> None:
        seen = ctx.shared(_OPTIONS_SET)
        key = (config, attribute)
        if key in seen:
            reports.append((call, f"`{config}.{attribute}` is set twice: the old calls added to the "
                            "options, the attribute replaces them: merge the two dicts", False))
        seen[key] = call


RULE = LegacyConfig()
