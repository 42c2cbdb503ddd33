from typing import Dict, List, Optional, Set

import libcst as cst

from porter.context import SharedKey, walk
from porter.cstutil import argument, keyword, remove_arg, string_value
from porter.rules.keras._analysis.util import last_name
from porter.rule import FIX, KERAS, TF1, Example, Rule, is_selected
from porter.rules.keras._analysis.model_plan import is_gpu_device, model_plan, without_compat
from porter.rules.keras.strategy_scope import RULE as STRATEGY_SCOPE, strategy_or_none
from porter.scopes import assignments, owner, parameter_names, statements_in
from porter.statements import keep_blank_lines

_QUERIES = frozenset({
    "tensorflow.config.list_physical_devices", "tensorflow.config.experimental.list_physical_devices",
    "tensorflow.config.list_logical_devices", "tensorflow.config.experimental.list_logical_devices",
})
_GPU_TESTS = frozenset({"tensorflow.test.is_gpu_available", "tensorflow.test.is_built_with_cuda",
                        "tensorflow.test.gpu_device_name"})
# Set-up calls, with what the finding calls them.
_SETUP = {
    "tensorflow.config.experimental.set_memory_growth": "GPU memory-growth set-up",
    "tensorflow.config.set_visible_devices": "GPU visibility set-up",
    "tensorflow.config.experimental.set_visible_devices": "GPU visibility set-up",
    "tensorflow.config.set_logical_device_configuration": "GPU virtual-device set-up",
    "tensorflow.config.experimental.set_virtual_device_configuration": "GPU virtual-device set-up",
    "tensorflow.debugging.set_log_device_placement": "device-placement logging",
}
_DEVICE_SETUP = frozenset(name for name in _SETUP if "visible" in name or "device_configuration" in name)
_ENVIRONMENT = frozenset({"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "TF_FORCE_GPU_ALLOW_GROWTH",
                          "TF_GPU_ALLOCATOR", "TF_GPU_THREAD_MODE", "TF_GPU_THREAD_COUNT"})
_LOG_METHODS = frozenset({"info", "debug", "warning", "warn", "error", "critical", "log"})
_EXITS = frozenset({"sys.exit", "exit", "quit", "os._exit"})
_PURE = (cst.Name, cst.Attribute, cst.Comparison, cst.BooleanOperation, cst.UnaryOperation, cst.Subscript,
         cst.Integer, cst.Float, cst.SimpleString)


# Keras' float16 policy set for the whole program: under a GPU check it is lost on the IPU, which
# computes in float16 too.
_POLICY_SETTERS = frozenset({"keras.mixed_precision.set_global_policy", "keras.mixed_precision.experimental.set_policy"})

_LAST_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in (*_QUERIES, *_GPU_TESTS, *_SETUP))
_STATEMENTS: SharedKey[List[cst.BaseStatement]] = SharedKey("gpu-statements")  # per function (or module)



def _call_name(ctx, call: cst.Call) -> Optional[str]:
    """The normalised qualified name of a call to one of the TensorFlow functions above, else None
    (a cheap test of the last name first: most calls are not these)."""
    func = call.func
    if last_name(func) not in _LAST_NAMES:
        return None
    return without_compat(ctx.qualified_name(func))


def _tower_loop(ctx, use: cst.Name) -> Optional[cst.For]:
    """The loop that iterates over ``use`` (a list of GPUs), or binds it (one of them), when its body
    enters a ``tf.device`` scope: ``for i, gpu in enumerate(gpus): with tf.device(gpu.name): ...``,
    one tower per GPU."""
    loop = ctx.enclosing(use, cst.For)
    if loop is None or not (any(node is use for node in walk(loop.iter))
                            or any(isinstance(node, cst.Name) and node.value == use.value
                                   for node in walk(loop.target))):
        return None
    entered = (item.item for with_node in walk(loop.body) if isinstance(with_node, cst.With)
               for item in with_node.items)
    return loop if any(isinstance(item, cst.Call) and without_compat(ctx.qualified_name(item.func) or "")
                       == "tensorflow.device" for item in entered) else None


class GpuBoilerplate(Rule):
    code = "IPU001"
    name = "gpu-boilerplate"
    kind = FIX
    frameworks = frozenset({KERAS, TF1})
    summary = "Remove GPU set-up: device checks, memory growth, visible devices, `CUDA_VISIBLE_DEVICES`."
    rationale = (
        "An IPU system has no GPUs: `tf.config.list_physical_devices(\"GPU\")` is empty there, and the "
        "GPU set-up that follows it (`set_memory_growth` loops, `set_visible_devices`, virtual devices, "
        "`CUDA_VISIBLE_DEVICES`, `tf.debugging.set_log_device_placement`) does nothing or fails "
        "there, so it is deleted. Whole statements go: a loop over the "
        "GPUs, an `if gpus:` block that only sets GPUs up, and the `gpus = ...` list itself. A GPU list "
        "that is also used for something else is kept and that use is reported, and so is a choice made on "
        "the query itself (`64 if not tf.test.is_gpu_available() else 4096`), whose no-GPU branch runs; a "
        "choice between distribution strategies that the port replaces makes the same IPU strategy either way, "
        "and is not reported. A float16 Keras policy set only when GPUs are found is reported where it is set: "
        "the IPU never takes that branch and trains in float32, though Keras' `mixed_float16` policy runs "
        "under the IPU strategy."
    )
    examples = (
        # One tower per GPU, built by hand: the loop is reported, with what to write instead.
        Example(
            """\
            import tensorflow as tf

            gpus = tf.config.list_logical_devices("GPU")
            grads = []
            for gpu in gpus:
                with tf.device(gpu.name):
                    with tf.GradientTape() as tape:
                        loss = model(x)
                    grads.append(tape.gradient(loss, model.trainable_variables))
            """,
        ),
        # A GPU list of the module that functions read stays (removing it would leave them a
        # NameError, a print of it too: it is another function's statement); the first use is reported.
        Example(
            """\
            import tensorflow as tf

            gpus = tf.config.list_physical_devices("GPU")


            def batch_size():
                return 256 if gpus else 32


            def report(width):
                print(f"width {width} on {len(gpus)} GPUs")
            """,
        ),
        # Sizes chosen on the GPU query itself: the no-GPU branch runs on an IPU system; reported.
        Example(
            """\
            import tensorflow as tf

            width = 4096 if tf.config.list_physical_devices("GPU") else 64
            model = tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(10)])
            """,
        ),
        # A print of the answer goes, and what it chose between goes with it (nothing left to choose).
        Example(
            """\
            import tensorflow as tf

            print("GPU is", "available" if tf.config.list_physical_devices("GPU") else "NOT AVAILABLE")
            model = build_model()
            """,
            """\
            import tensorflow as tf

            model = build_model()
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            gpus = tf.config.list_physical_devices("GPU")
            for gpu in gpus:
                tf.config.experimental.set_memory_growth(gpu, True)

            model = build_model()
            """,
            """\
            import tensorflow as tf

            model = build_model()
            """,
        ),
        Example(
            """\
            import os

            import tensorflow as tf

            os.environ["CUDA_VISIBLE_DEVICES"] = "0"


            def main():
                # Let TensorFlow grow GPU memory as needed.
                gpus = tf.config.experimental.list_physical_devices('GPU')
                if gpus:
                    try:
                        for gpu in gpus:
                            tf.config.experimental.set_memory_growth(gpu, True)
                        logical = tf.config.experimental.list_logical_devices('GPU')
                        print(len(gpus), "physical GPUs,", len(logical), "logical GPUs")
                    except RuntimeError as error:
                        print(error)
                tf.debugging.set_log_device_placement(True)
                train()
            """,
            """\
            import os

            import tensorflow as tf


            def main():
                train()
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            print("GPUs:", tf.config.list_physical_devices("GPU"))
            devices = tf.config.list_physical_devices("GPU")
            assert len(devices) > 0, "no GPU found"
            tf.config.set_visible_devices(devices[0], "GPU")
            x = 1
            """,
            """\
            import tensorflow as tf

            x = 1
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def pick(args):
                gpus = tf.config.list_physical_devices("GPU")
                for gpu in gpus:
                    tf.config.experimental.set_memory_growth(gpu, True)
                batch = args.batch * max(1, len(gpus))
                return batch
            """,
            """\
            import tensorflow as tf


            def pick(args):
                gpus = tf.config.list_physical_devices("GPU")
                batch = args.batch * max(1, len(gpus))
                return batch
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def limit_gpu_memory():
                for gpu in tf.config.list_physical_devices("GPU"):
                    tf.config.experimental.set_memory_growth(gpu, True)


            def main():
                limit_gpu_memory()
                train()


            if __name__ == "__main__":
                main()
            """,
            """\
            import tensorflow as tf


            def main():
                train()


            if __name__ == "__main__":
                main()
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf

            if not tf.test.is_gpu_available():
                raise SystemExit("this script needs a GPU")
            config = tf.ConfigProto()
            config.gpu_options.allow_growth = True
            sess = tf.Session(config=config)
            """,
            """\
            import tensorflow.compat.v1 as tf

            config = tf.ConfigProto()
            sess = tf.Session(config=config)
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf


            def session():
                gpu_options = tf.GPUOptions(per_process_gpu_memory_fraction=0.5)
                return tf.Session(config=tf.ConfigProto(gpu_options=gpu_options, allow_soft_placement=True))
            """,
            """\
            import tensorflow.compat.v1 as tf


            def session():
                return tf.Session(config=tf.ConfigProto(allow_soft_placement=True))
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            devices = tf.config.list_physical_devices('GPU')
            try:
                tf.config.experimental.set_memory_growth(devices[0], True)
            except:
                # no GPU, or already initialised
                pass
            if devices: tf.config.set_visible_devices(devices[0], 'GPU')

            model = tf.keras.Sequential()
            """,
            """\
            import tensorflow as tf

            model = tf.keras.Sequential()
            """,
        ),
        # A float16 policy set only when GPUs are found: the IPU never takes the branch.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras import mixed_precision

            if tf.config.list_physical_devices("GPU"):
                mixed_precision.set_global_policy("mixed_float16")
            model = tf.keras.Sequential([tf.keras.layers.Dense(10, dtype="float32")])
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            cpus = tf.config.list_physical_devices("CPU")
            print(len(cpus), tf.config.list_physical_devices())
            tf.config.set_visible_devices(cpus[0], "CPU")
            x = tf.constant(1)
            """,
            reported=False,
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
        _Scan(self.code, ctx).run()


class _Scan:
    """One port of one file: the GPU variables, what can go, what was removed."""

    def __init__(self, code: str, ctx) -> None:
        self.code = code
        self.ctx = ctx
        self.emptied: List[cst.FunctionDef] = []
        self.replaced = self._replaced_strategies(ctx)

    def run(self) -> None:
        ctx = self.ctx
        scopes = {id(owner(ctx, node)): owner(ctx, node) for node in self._seeds(ctx)}
        for scope in scopes.values():
            self._run_scope(ctx, scope)
        for function in self.emptied:
            self._remove_function(ctx, function)
        self._session_gpu_options(ctx)
        self._report_gpu_choices(ctx)
        self._report_gpu_only_policies(ctx)

    def _report_gpu_choices(self, ctx) -> None:
        """``if tf.config.list_physical_devices("GPU"): units = 4096 else: units = 64`` and ``256 if
        tf.test.is_gpu_available() else 32``: a choice made on the GPU query itself, which an IPU
        system always answers with the no-GPU branch. Reported where it is not removed (nor the
        statement that holds it: a ``print`` of the answer)."""
        for call in ctx.nodes(cst.Call):
            if _call_name(ctx, call) not in _QUERIES | _GPU_TESTS:
                continue
            choice = next((node for node in ctx.ancestors(call) if isinstance(node, (cst.If, cst.IfExp))
                           or isinstance(node, cst.BaseStatement)), None)
            if not isinstance(choice, (cst.If, cst.IfExp)) or not _contains(choice.test, call) \
                    or choice.orelse is None or any(ctx.is_removed(node) for node in (choice, *ctx.ancestors(choice))):
                continue
            if _only_makes(choice, self.replaced):
                continue  # each branch makes a strategy the port replaces: the same IPU strategy either way
            ctx.report(self.code, call, "this choice asks for GPUs, and an IPU system has none: the branch for no "
                       "GPU runs (smaller sizes, a CPU path, say); choose for the IPU", fixed=False)

    def _report_gpu_only_policies(self, ctx) -> None:
        """``if tf.config.list_physical_devices("GPU"): set_global_policy("mixed_float16")`` (or
        ``if gpus:``): the IPU, which has no GPU, never takes the branch, so the port trains in
        float32 where the original trained in float16, with nothing removed to say so."""
        for call in ctx.nodes(cst.Call):
            if ctx.keras_name(call.func) not in _POLICY_SETTERS or not self._float16_policy(call):
                continue
            self.gpu_vars = self._gpu_variables(ctx, owner(ctx, call))
            checks = [node for node in ctx.ancestors(call) if isinstance(node, cst.If) and _contains(node.body, call)
                      and self._is_gpu_value(node.test)]
            if checks and not any(ctx.is_removed(node) for node in (checks[0], *ctx.ancestors(checks[0]))):
                ctx.report(self.code, call, "this float16 policy is set only when GPUs are found, and an IPU system "
                           "has none: the port trains in float32; set it without the check, as Keras' "
                           "`mixed_float16` policy runs under the IPU strategy", fixed=False)

    @staticmethod
    def _float16_policy(call: cst.Call) -> bool:
        policy = argument(call, "policy", 0)
        name = string_value(policy.value) if policy is not None else None
        return name is not None and "float16" in name and "bfloat16" not in name

    # --------------------------------------------------------------------------- finding them
    def _seeds(self, ctx) -> List[cst.CSTNode]:
        found = []
        for call in ctx.nodes(cst.Call):
            name = _call_name(ctx, call)
            if name in _SETUP or name in _GPU_TESTS or (name in _QUERIES and self._is_gpu_query(call)):
                found.append(call)
        for subscript in ctx.nodes(cst.Subscript):
            if self._is_environment(ctx, subscript):
                found.append(subscript)
        return found

    def _sets_up_gpus(self, call: cst.Call) -> bool:
        """Memory growth and placement logging always; device visibility and virtual devices when
        they name GPUs (``device_type="GPU"``, or a device from a GPU list)."""
        name = _call_name(self.ctx, call)
        if name not in _DEVICE_SETUP:
            return True
        kind = argument(call, "device_type", 1) if name.endswith("set_visible_devices") else None
        value = string_value(kind.value) if kind is not None else None
        if value is not None:
            return value.upper() == "GPU"
        first = argument(call, "devices", 0) or argument(call, "device", 0)
        return first is not None and self._mentions_gpu(first.value)

    @staticmethod
    def _is_gpu_query(call: cst.Call) -> bool:
        arg = argument(call, "device_type", 0)
        value = string_value(arg.value) if arg is not None else None
        return value is not None and value.upper() == "GPU"

    @staticmethod
    def _is_environment(ctx, node) -> bool:
        if not isinstance(node, cst.Subscript) or not (
                isinstance(node.value, cst.Attribute) and node.value.attr.value == "environ"
                or isinstance(node.value, cst.Name) and node.value.value == "environ"):
            return False
        if ctx.qualified_name(node.value) != "os.environ":
            return False
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return False
        return string_value(node.slice[0].slice.value) in _ENVIRONMENT

    def _run_scope(self, ctx, scope) -> None:
        self.scope = scope
        self.gpu_vars = self._gpu_variables(ctx, scope)
        kept: Set[str] = set()
        while True:
            self.kept = kept
            self.memo: Dict[int, bool] = {}
            uncovered = {name for name in self.gpu_vars if name not in kept and self._uncovered_uses(ctx, name)}
            if not uncovered:
                break
            kept |= uncovered
        removed = [statement for statement in self._statements(ctx, scope) if self._removable(statement)
                   and not any(isinstance(a, cst.BaseStatement) and self._removable(a) for a in ctx.ancestors(statement))]
        for statement in removed:
            if ctx.remove(statement):
                ctx.report(self.code, statement, f"removed {self._describe(statement)}: an IPU system has no GPUs",
                           fixed=True)
        keep_blank_lines(ctx, removed)
        if isinstance(scope, cst.FunctionDef) and isinstance(scope.body, cst.IndentedBlock):
            body = [statement for statement in scope.body.body if not _is_docstring(statement)]
            gone = {id(statement) for statement in removed}
            if body and all(id(statement) in gone for statement in body):
                self.emptied.append(scope)
        for name in sorted(kept):
            uses = [use for use in self._uncovered_uses(ctx, name)
                    if not set(self._binding(ctx.statement_of(use))[0]) & kept]
            towers = [loop for loop in (_tower_loop(ctx, use) for use in uses) if loop is not None]
            if towers:
                ctx.report(self.code, towers[0], f"`{name}` comes from a GPU query: this loop builds one copy of "
                           "the computation per GPU by hand (a tower in a `tf.device` scope each), and an IPU "
                           "system has no GPUs, so it builds none. Make the step one copy on the whole batch "
                           "(no split of the batch, no loop, no averaging of gradients), and replicate it over "
                           "IPUs instead (`--ipus N` for Keras)", fixed=False)
                continue
            for use in uses[:1]:
                ctx.report(self.code, use, f"`{name}` comes from a GPU query, and an IPU system has no GPUs (an "
                           "empty list): check what this code does with it", fixed=False)

    def _statements(self, ctx, scope) -> List[cst.BaseStatement]:
        return ctx.shared(_STATEMENTS, lambda: [statement for statement in statements_in(scope)
                                                if not isinstance(statement, (cst.FunctionDef, cst.ClassDef))],
                          per=id(scope))

    def _gpu_variables(self, ctx, scope) -> Set[str]:
        names: Set[str] = set()
        self.gpu_vars = names
        changed = True
        while changed:
            changed = False
            for node in self._statements(ctx, scope):
                targets, value = self._binding(node)
                if value is None or not self._is_gpu_value(value):
                    continue
                for target in targets:
                    if target not in names:
                        names.add(target)
                        changed = True
        return names

    @staticmethod
    def _binding(statement):
        """(names bound, value) for ``a = b = value`` and ``for a in value:``."""
        if isinstance(statement, cst.For):
            return _names(statement.target), statement.iter
        if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
            small = statement.body[0]
            if isinstance(small, cst.Assign):
                names = [name for target in small.targets for name in _names(target.target)]
                if all(isinstance(target.target, cst.Name) for target in small.targets):
                    return names, small.value
        return [], None

    def _is_gpu_value(self, node) -> bool:
        """A GPU query, a GPU list or one of its items, ``len()`` of one: a value that is all about GPUs."""
        ctx = self.ctx
        if isinstance(node, cst.Call):
            name = _call_name(ctx, node)
            if name in _GPU_TESTS or (name in _QUERIES and self._is_gpu_query(node)):
                return True
            if isinstance(node.func, cst.Name) and node.func.value in ("len", "bool", "list") and len(node.args) == 1:
                return self._is_gpu_value(node.args[0].value)
            return False
        if isinstance(node, cst.Subscript):
            return self._is_gpu_value(node.value)
        if isinstance(node, cst.Comparison):
            return self._is_gpu_value(node.left)
        return isinstance(node, cst.Name) and node.value in self.gpu_vars

    def _mentions_gpu(self, node) -> bool:
        ctx = self.ctx
        for inner in walk(node):
            if isinstance(inner, cst.Call):
                name = _call_name(ctx, inner)
                if name in _GPU_TESTS or (name in _QUERIES and self._is_gpu_query(inner)):
                    return True
            elif isinstance(inner, cst.Name) and inner.value in self.gpu_vars and _is_load(ctx, inner):
                return True
        return False

    def _uncovered_uses(self, ctx, name) -> List[cst.Name]:
        uses = []
        replaced = self.replaced
        for node in ctx.nodes(cst.Name):
            if node.value != name or not _is_load(ctx, node) or not self._reads_scope(ctx, node):
                continue
            # A statement of another function is not removed with this scope's: its use stays.
            own = owner(ctx, node) is self.scope
            if any(isinstance(a, cst.BaseStatement) and own and self._removable(a) or id(a) in replaced
                   for a in ctx.ancestors(node)):
                continue
            uses.append(node)
        return uses

    def _reads_scope(self, ctx, node: cst.Name) -> bool:
        """Whether ``node`` reads the name of the scope being ported: a use in that scope, or, for
        the module, in a function that does not bind the name itself (``gpus`` listed at the top of
        the file and tested in ``main()``: removing the listing would leave ``main()`` a NameError)."""
        function = owner(ctx, node)
        if function is self.scope:
            return True
        return isinstance(self.scope, cst.Module) and node.value not in parameter_names(function) and all(
            bound != node.value for _, bound, _ in assignments(ctx, function))

    @staticmethod
    def _replaced_strategies(ctx) -> Set[int]:
        """The distribution strategies the Keras port replaces by ``IPUStrategy()`` (IPU103), and
        the GPU device scopes it unwraps (``with tf.device(device_name):``): the GPUs given to them
        go with them, so a GPU list or name used there only is boilerplate too. Seen in the same
        pass, so that the port is stable."""
        if KERAS not in ctx.frameworks or not is_selected(STRATEGY_SCOPE.code, ctx.config.select, ctx.config.ignore):
            return set()
        plan = model_plan(ctx)
        # A GPU device, or a choice of the strategy's scope or none on a GPU query (`strategy.scope()
        # if gpus else nullcontext()`): the port's scope replaces it.
        device_calls = [item.item for with_node in plan.transparent for item in with_node.items
                        if (is_gpu_device(ctx, item.item) or isinstance(item.item, cst.IfExp))
                        and ctx.allowed(with_node, STRATEGY_SCOPE.code)]
        if plan.has_ipu_strategy:
            return {id(call) for call in device_calls}
        replaced = [strategy_or_none(ctx, plan, call) or call for call in plan.replaced_strategies]
        return {id(node) for node in replaced + device_calls if ctx.allowed(node, STRATEGY_SCOPE.code)}

    # ------------------------------------------------------------------------- what can go
    def _removable(self, statement, in_gpu_block: bool = False) -> bool:
        key = id(statement) * 2 + int(in_gpu_block)
        if key not in self.memo:
            self.memo[key] = False  # no cycles
            self.memo[key] = self._check(statement, in_gpu_block)
        return self.memo[key]

    def _check(self, statement, in_gpu_block: bool) -> bool:
        if isinstance(statement, cst.SimpleStatementLine):
            return len(statement.body) == 1 and self._small_removable(statement, statement.body[0], in_gpu_block)
        if isinstance(statement, cst.For):
            return statement.orelse is None and self._mentions_gpu(statement.iter) and self._all(statement.body, True)
        if isinstance(statement, cst.If):
            gpu_test = self._mentions_gpu(statement.test)
            if not gpu_test and (statement.orelse is not None or not self._pure(statement.test)):
                return False
            if not self._all(statement.body, gpu_test):
                return False
            orelse = statement.orelse
            if isinstance(orelse, cst.Else):
                return self._all(orelse.body, True)
            if isinstance(orelse, cst.If):
                return self._removable(orelse, True)
            return True
        if isinstance(statement, cst.Try):
            if statement.orelse is not None or statement.finalbody is not None:
                return False
            return self._all(statement.body, in_gpu_block) and all(
                all(self._inert_statement(inner) for inner in handler.body.body) for handler in statement.handlers)
        return False

    def _small_removable(self, statement, small, in_gpu_block: bool) -> bool:
        ctx = self.ctx
        if in_gpu_block and self._inert(small):
            return True
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            call = small.value
            if _call_name(ctx, call) in _SETUP:
                return self._sets_up_gpus(call)
            return self._is_output(call) and self._mentions_gpu(call)
        if isinstance(small, cst.Assert):
            return self._mentions_gpu(small.test)
        if isinstance(small, cst.Assign):
            targets = [target.target for target in small.targets]
            if all(self._is_environment(ctx, target) for target in targets):
                return True
            if all(_gpu_options(target) for target in targets):
                return True
            names, value = self._binding(statement)
            return bool(names) and all(name in self.gpu_vars and name not in self.kept for name in names) \
                and value is not None and self._mentions_gpu(value)
        return False

    def _all(self, block, in_gpu_block: bool) -> bool:
        if isinstance(block, cst.SimpleStatementSuite):
            return all(self._small_removable(cst.SimpleStatementLine(body=[small]), small, in_gpu_block)
                       for small in block.body)
        body = block.body if isinstance(block, cst.IndentedBlock) else None
        return bool(body) and all(self._removable(inner, in_gpu_block) for inner in body)

    def _inert_statement(self, statement) -> bool:
        return isinstance(statement, cst.SimpleStatementLine) and all(self._inert(small) for small in statement.body)

    def _inert(self, small) -> bool:
        """Statements with no effect beyond output or leaving: fine to drop with a GPU check."""
        if isinstance(small, (cst.Pass, cst.Raise, cst.Continue, cst.Break)):
            return True
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            call = small.value
            return self._is_output(call) or self.ctx.qualified_name(call.func) in _EXITS or (
                isinstance(call.func, cst.Name) and call.func.value in _EXITS)
        return False

    def _is_output(self, call: cst.Call) -> bool:
        func = call.func
        if isinstance(func, cst.Name):
            return func.value == "print"
        if isinstance(func, cst.Attribute):
            return func.attr.value in _LOG_METHODS or without_compat(self.ctx.qualified_name(func)) == "tensorflow.print"
        return False

    @staticmethod
    def _pure(test) -> bool:
        return all(isinstance(node, _PURE) or not isinstance(node, cst.BaseExpression) for node in walk(test))

    # ---------------------------------------------------------------------------- reporting
    def _describe(self, statement) -> str:
        ctx = self.ctx
        names = set()
        for node in walk(statement):
            if isinstance(node, cst.Call):
                names.add(_SETUP.get(_call_name(ctx, node) or "", "GPU check"
                                     if self._mentions_gpu(node) else ""))
            elif isinstance(node, cst.Subscript) and self._is_environment(ctx, node):
                names.add(f"`{string_value(node.slice[0].slice.value)}`")
            elif isinstance(node, cst.Attribute) and node.attr.value == "gpu_options":
                names.add("GPU memory options")
        names.discard("")
        for preferred in ("GPU memory-growth set-up", "GPU visibility set-up", "GPU virtual-device set-up",
                          "device-placement logging"):
            if preferred in names:
                return preferred
        specific = sorted(name for name in names if name.startswith("`"))
        if specific:
            return " and ".join(specific)
        if "GPU memory options" in names:
            return "GPU memory options"
        return "a GPU check"

    def _session_gpu_options(self, ctx) -> None:
        """TF1: ``tf.ConfigProto(gpu_options=tf.GPUOptions(...))`` loses its GPU options, and a
        ``gpu_options = tf.GPUOptions(...)`` variable used only there goes too."""
        for call in ctx.nodes(cst.Call):
            if last_name(call.func) != "ConfigProto" or without_compat(ctx.qualified_name(call.func)) != "tensorflow.ConfigProto":
                continue
            arg = keyword(call, "gpu_options")
            if arg is None:
                continue
            statements = []
            if isinstance(arg.value, cst.Name):
                statements = self._options_variable(ctx, arg.value)
                if statements is None:
                    continue
            elif not self._is_gpu_options(arg.value):
                continue
            index = call.args.index(arg)
            ctx.replace(call, lambda node, index=index: remove_arg(node, index))
            ctx.report(self.code, arg, "removed `gpu_options`: an IPU system has no GPUs", fixed=True)
            for statement in statements:
                ctx.remove(statement)
            keep_blank_lines(ctx, statements)

    def _is_gpu_options(self, node) -> bool:
        return isinstance(node, cst.Call) and last_name(node.func) == "GPUOptions" and \
            without_compat(self.ctx.qualified_name(node.func)) == "tensorflow.GPUOptions"

    def _options_variable(self, ctx, name: cst.Name):
        """The statements assigning ``name`` a ``tf.GPUOptions(...)`` when that is all it is and
        it is used only as this ``gpu_options`` argument; else None."""
        scope = owner(ctx, name)
        bindings = [(statement, value) for statement, bound, value in assignments(ctx, scope) if bound == name.value]
        if not bindings or not all(self._is_gpu_options(value) for _, value in bindings):
            return None
        for statement, _ in bindings:
            if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                    and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1
                    and isinstance(statement.body[0].targets[0].target, cst.Name)):
                return None
        uses = [node for node in ctx.nodes(cst.Name) if node.value == name.value and _is_load(ctx, node)
                and owner(ctx, node) is scope]
        return [statement for statement, _ in bindings] if uses == [name] else None

    def _remove_function(self, ctx, function: cst.FunctionDef) -> None:
        """A function left empty (it only set GPUs up) goes, with the statements that call it, in a
        script (with a ``__main__`` guard) that calls it and uses its name for nothing else."""
        name = function.name.value
        if function.decorators or ctx.block_of(function) is None or not _is_script(ctx):
            return
        if isinstance(ctx.enclosing(function, (cst.ClassDef, cst.FunctionDef)), cst.ClassDef):
            return  # a method: callers elsewhere may reach it through `self`
        calls = []
        for node in ctx.nodes(cst.Name):
            if node.value != name or node is function.name or not _is_load(ctx, node):
                continue
            call = ctx.parent(node)
            statement = ctx.statement_of(node)
            if not (isinstance(call, cst.Call) and call.func is node and isinstance(statement, cst.SimpleStatementLine)
                    and len(statement.body) == 1 and isinstance(statement.body[0], cst.Expr)
                    and statement.body[0].value is call):
                return
            calls.append(statement)
        if not calls:
            return  # not used here: other modules may import it
        ctx.remove(function)
        ctx.report(self.code, function, f"removed `{name}()`, which only set GPUs up, and its calls", fixed=True)
        for statement in calls:
            ctx.remove(statement)
        keep_blank_lines(ctx, calls)


def _is_script(ctx) -> bool:
    for statement in ctx.module.body:
        if isinstance(statement, cst.If) and any(
                isinstance(node, cst.Name) and node.value == "__name__" for node in walk(statement.test)):
            return True
    return False


def _is_docstring(statement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Expr) \
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def _names(target) -> List[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _names(element.value)]
    return []


def _gpu_options(target) -> bool:
    node = target
    while isinstance(node, cst.Attribute):
        if node.attr.value == "gpu_options":
            return True
        node = node.value
    return False


def _is_load(ctx, name: cst.Name) -> bool:
    parent = ctx.parent(name)
    if isinstance(parent, cst.Attribute) and parent.attr is name:
        return False
    if isinstance(parent, cst.Arg) and parent.keyword is name:
        return False
    if isinstance(parent, (cst.AssignTarget, cst.ImportAlias, cst.AsName, cst.Param, cst.FunctionDef, cst.ClassDef)):
        return False
    if isinstance(parent, cst.For) and parent.target is name:
        return False
    if isinstance(parent, (cst.Element, cst.Tuple)):
        for ancestor in ctx.ancestors(name):
            if isinstance(ancestor, cst.AssignTarget) or (isinstance(ancestor, cst.For) and _contains(ancestor.target, name)):
                return False
            if isinstance(ancestor, cst.BaseStatement):
                break
    return True


def _only_makes(choice, calls: Set[int]) -> bool:
    """Whether every branch of ``choice`` (an ``if``/``elif``/``else`` chain, or ``a if test else
    b``) only assigns or returns what one of ``calls`` makes."""
    if isinstance(choice, cst.IfExp):
        return id(choice.body) in calls and id(choice.orelse) in calls
    if not _block_only_makes(choice.body, calls):
        return False
    if isinstance(choice.orelse, cst.If):
        return _only_makes(choice.orelse, calls)
    return choice.orelse is not None and _block_only_makes(choice.orelse.body, calls)


def _block_only_makes(block, calls: Set[int]) -> bool:
    return isinstance(block, cst.IndentedBlock) and all(
        isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1
        and isinstance(line.body[0], (cst.Assign, cst.Return)) and id(line.body[0].value) in calls
        for line in block.body)


def _contains(root, node) -> bool:
    return any(inner is node for inner in walk(root))


RULE = GpuBoilerplate()
