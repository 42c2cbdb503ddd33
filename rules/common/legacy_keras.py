from typing import Set

import libcst as cst

from porter.context import SharedKey
from porter.rules.keras._analysis.model_plan import IPU_STRATEGIES
from porter.rules.common._analysis.legacy import drop_removed_import
from porter.rule import FIX, KERAS, TF1, TORCH, Example, Rule
from porter.scopes import fresh_name
from porter.rules.tf1._analysis.graph import calls_by_last_name, calls_named, find_calls, names_used

OLD_KERAS = "tensorflow.python.ipu.keras."
# Layers that moved from ipu.keras.layers to ipu_tensorflow_addons.keras.layers (SDK 2.6 addons).
ADDONS_LAYERS = frozenset({
    "AssumeEqualAcrossReplicas", "CTCInferenceLayer", "CTCLoss", "CTCPredictionsLayer", "SerialDense",
    "Dropout", "EffectiveTransformer", "Embedding", "GroupNorm", "InstanceNorm", "LayerNorm",
    "GroupNormalization", "InstanceNormalization", "LayerNormalization", "RecomputationCheckpoint",
    "PopnnLSTM", "LSTM", "PopnnGRU", "GRU",
})
# The ids of the calls this rule upgraded (their imports may go), and the names of the file's
# IPU strategies.
_UPGRADED: SharedKey[Set[int]] = SharedKey("ipu011-upgraded", set)
_STRATEGY_NAMES: SharedKey[Set[str]] = SharedKey("ipu-strategy-names")
_MODEL_ARGS = {"Sequential": {"layers", "name"}, "Model": {"inputs", "outputs", "name", "trainable"}}


class LegacyKeras(Rule):
    code = "IPU011"
    name = "legacy-keras"
    kind = FIX
    frameworks = frozenset({KERAS, TF1, TORCH})
    summary = "Upgrade removed IPU APIs: `ipu.keras` models and layers, `experimental_compile`, `anchorMode`."
    rationale = (
        "`ipu.keras.Sequential`/`Model` were replaced by plain Keras models built in "
        "`IPUStrategy().scope()` (SDK 2.2); the `ipu.keras` module was removed in SDK 3.1: "
        "`ipu.keras.PipelineStage` is `keras.ipu.PipelineStage`, and `ipu.keras.layers` LSTM, GRU, "
        "Dropout, Embedding, norms... are the `ipu_tensorflow_addons.keras.layers` ones (Targeting the IPU "
        "from TensorFlow 2, API changes, \"Release 3.1\", \"Removal of deprecated Keras API\"). "
        "`tf.function(experimental_compile=True)` is `jit_compile=True` on the TF 2.6 SDKs, as their "
        "documentation writes it. PopTorch's `anchorMode`/`AnchorMode` became `outputMode`/`OutputMode` in "
        "SDK 2.5 (PopTorch User Guide, \"Options\"). A model built outside a strategy scope gets `strategy = "
        "ipu.ipu_strategy.IPUStrategy()` and `with strategy.scope():` around it and its uses; models "
        "with IPU-only constructor options are reported."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = ipu.keras.Sequential([
                    tf.keras.layers.Flatten(),
                    ipu.keras.layers.Dropout(0.2),
                    tf.keras.layers.Dense(10),
                ])
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu
            from ipu_tensorflow_addons.keras import layers as ipu_layers

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([
                    tf.keras.layers.Flatten(),
                    ipu_layers.Dropout(0.2),
                    tf.keras.layers.Dense(10),
                ])
            """,
        ),
        Example(
            """\
            from tensorflow import keras
            from tensorflow.python import ipu

            inputs = keras.Input((28, 28))
            with ipu.keras.PipelineStage(0):
                x = ipu.keras.layers.LSTM(64)(inputs)
            model = ipu.keras.Model(inputs, keras.layers.Dense(10)(x))
            model.compile("sgd", "mse")
            model.fit(data, epochs=2)
            print("done")
            """,
            """\
            from tensorflow import keras
            from tensorflow.python import ipu
            from ipu_tensorflow_addons.keras import layers as ipu_layers

            inputs = keras.Input((28, 28))
            with keras.ipu.PipelineStage(0):
                x = ipu_layers.LSTM(64)(inputs)
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = keras.Model(inputs, keras.layers.Dense(10)(x))
                model.compile("sgd", "mse")
                model.fit(data, epochs=2)
            print("done")
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python.ipu.keras.layers import Embedding, GRU

            layers = [Embedding(1000, 32), GRU(64)]
            """,
            """\
            import tensorflow as tf
            from ipu_tensorflow_addons.keras import layers as ipu_layers

            layers = [ipu_layers.Embedding(1000, 32), ipu_layers.GRU(64)]
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            @tf.function(experimental_compile=True)
            def step(x):
                return x * 2
            """,
            """\
            import tensorflow as tf


            @tf.function(jit_compile=True)
            def step(x):
                return x * 2
            """,
        ),
        Example(
            """\
            import poptorch
            import torch

            opts = poptorch.Options()
            opts.anchorMode(poptorch.AnchorMode.EveryN, anchor_return_period=10)
            """,
            """\
            import poptorch
            import torch

            opts = poptorch.Options()
            opts.outputMode(poptorch.OutputMode.EveryN, output_return_period=10)
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python.ipu.keras import Sequential

            model = Sequential(layers, gradient_accumulation_count=8)
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        for call in self._old_keras_candidates(ctx):
            qualified = ctx.qualified_name(call.func)
            if qualified is not None and qualified.startswith(OLD_KERAS):
                self._keras(ctx, call, qualified[len(OLD_KERAS):])
        for call in calls_named(ctx, {"function", "compat.v2.function"}):
            self._rename_keyword(ctx, call, "experimental_compile", "jit_compile")
        if ctx.imports_module("poptorch"):
            for call in calls_by_last_name(ctx, "anchorMode"):
                if isinstance(call.func, cst.Attribute):
                    ctx.replace(call.func.attr, cst.Name("outputMode"))
                    ctx.report(self.code, call.func.attr, "`anchorMode` is `outputMode` since SDK 2.5", fixed=True)
                    self._rename_keyword(ctx, call, "anchor_return_period", "output_return_period")
        for module, removed in ((OLD_KERAS.rstrip("."), {"PipelineStage", *_MODEL_ARGS}),
                                (OLD_KERAS + "layers", ADDONS_LAYERS)):
            drop_removed_import(ctx, self.code, module, removed, self._upgraded(ctx),
                                f"`{module}` was removed in SDK 3.1",
                                "import these names from `tensorflow.keras`, `keras.ipu` or "
                                "`ipu_tensorflow_addons.keras.layers`")
        for attribute in ctx.nodes(cst.Attribute):
            if ctx.qualified_name(attribute) == "poptorch.AnchorMode":
                ctx.replace(attribute.attr, cst.Name("OutputMode"))
                ctx.report(self.code, attribute, "`poptorch.AnchorMode` is `poptorch.OutputMode`", fixed=True)

    @staticmethod
    def _old_keras_candidates(ctx):
        """Calls that may reach ``ipu.keras``: spelled ``<name from tensorflow.python>...keras...``
        (``ipu.keras.Sequential``), or a name imported from it (``LSTM`` from ``ipu.keras.layers``)."""
        heads = {local for local, full in ctx.aliases.items() if full.startswith("tensorflow.python")}
        if not heads:
            return []
        imported = {local for local, full in ctx.aliases.items() if full.startswith(OLD_KERAS)}
        found = []
        for call in ctx.nodes(cst.Call):
            node, spelled_keras = call.func, False
            while isinstance(node, cst.Attribute):
                spelled_keras = spelled_keras or node.attr.value == "keras"
                node = node.value
            if isinstance(node, cst.Name) and (node.value in imported or spelled_keras and node.value in heads):
                found.append(call)
        return found

    @staticmethod
    def _upgraded(ctx) -> set:
        return ctx.shared(_UPGRADED)

    def _rename_keyword(self, ctx, call: cst.Call, old: str, new: str) -> None:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == old:
                ctx.replace(arg.keyword, cst.Name(new))
                ctx.report(self.code, arg, f"`{old}` is `{new}`", fixed=True)

    def _keras(self, ctx, call: cst.Call, name: str) -> None:
        if name.startswith("layers.") and name[len("layers."):] in ADDONS_LAYERS:
            layer = name[len("layers."):]
            ctx.add_import("ipu_tensorflow_addons.keras", "layers", "ipu_layers", code=self.code)
            ctx.replace(call.func, cst.parse_expression(f"ipu_layers.{layer}"))
            self._upgraded(ctx).add(id(call))
            ctx.report(self.code, call.func, f"`ipu.keras.layers.{layer}` is "
                       f"`ipu_tensorflow_addons.keras.layers.{layer}`", fixed=True)
        elif name == "PipelineStage":
            keras = self._keras_module(ctx, pipeline=True)
            ctx.replace(call.func, cst.parse_expression(f"{keras}.ipu.PipelineStage"))
            self._upgraded(ctx).add(id(call))
            ctx.report(self.code, call.func, "`ipu.keras.PipelineStage` is `keras.ipu.PipelineStage`", fixed=True)
        elif name in _MODEL_ARGS:
            extra = [arg.keyword.value for arg in call.args
                     if arg.keyword is not None and arg.keyword.value not in _MODEL_ARGS[name]]
            if extra:
                ctx.report(self.code, call, f"`ipu.keras.{name}` options {', '.join(f'`{e}`' for e in extra)} "
                           f"have no constructor argument in `keras.{name}`: build a plain Keras model and use "
                           "`model.set_gradient_accumulation_options(...)` / `set_pipelining_options(...)`",
                           fixed=False)
                return
            keras = self._keras_module(ctx)
            if not self._in_strategy_scope(ctx, call) and not self._wrap(ctx, call):
                ctx.report(self.code, call, f"build this `keras.{name}` inside `strategy.scope()` of an "
                           "`ipu.ipu_strategy.IPUStrategy()`", fixed=False)
            ctx.replace(call.func, cst.parse_expression(f"{keras}.{name}"))
            self._upgraded(ctx).add(id(call))
            ctx.report(self.code, call.func, f"`ipu.keras.{name}` is a plain `keras.{name}` built in "
                       "`strategy.scope()`", fixed=True)
        else:
            ctx.report(self.code, call, f"`ipu.keras.{name}` was removed in SDK 3.1: port it by hand "
                       "(Targeting the IPU from TensorFlow 2, \"Keras with IPUs\")", fixed=False)

    @staticmethod
    def _keras_module(ctx, pipeline: bool = False) -> str:
        """How the file reaches Keras: ``keras`` or ``tf.keras`` (importing keras when neither)."""
        for local, full in sorted(ctx.aliases.items()):
            if full in ("keras", "tensorflow.keras"):
                return local
        if not pipeline:
            for local, full in sorted(ctx.aliases.items()):
                if full == "tensorflow":
                    return f"{local}.keras"
        ctx.add_import("tensorflow", "keras", code=LegacyKeras.code)
        return "keras"

    @staticmethod
    def _strategy_names(ctx):
        """Names assigned an ``IPUStrategy()`` anywhere in the file."""
        def find():
            names = set()
            for call in find_calls(ctx, *IPU_STRATEGIES):
                assign = ctx.parent(call)
                if isinstance(assign, cst.Assign) and assign.value is call:
                    names.update(t.target.value for t in assign.targets if isinstance(t.target, cst.Name))
            return names

        return ctx.shared(_STRATEGY_NAMES, find)

    def _in_strategy_scope(self, ctx, node, depth: int = 0) -> bool:
        strategies = self._strategy_names(ctx)
        for ancestor in ctx.ancestors(node):
            if isinstance(ancestor, cst.With):
                for item in ancestor.items:
                    scope = item.item
                    if (isinstance(scope, cst.Call) and isinstance(scope.func, cst.Attribute)
                            and scope.func.attr.value == "scope"):
                        owner = scope.func.value
                        if isinstance(owner, cst.Name) and owner.value in strategies or (
                                isinstance(owner, cst.Call) and ctx.qualified_name(owner.func) in IPU_STRATEGIES):
                            return True
            if isinstance(ancestor, cst.FunctionDef) and depth < 3:
                calls = [call for call in calls_by_last_name(ctx, ancestor.name.value)
                         if isinstance(call.func, cst.Name)]
                return bool(calls) and all(self._in_strategy_scope(ctx, c, depth + 1) for c in calls)
        return False

    def _wrap(self, ctx, call: cst.Call) -> bool:
        """``strategy = IPUStrategy()`` and ``with strategy.scope():`` from the statement building
        the model to the last statement of the block using it."""
        statement = ctx.statement_of(call)
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
        if not (isinstance(small, cst.Assign) and small.value is call and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)) or ctx.block_of(statement) is None:
            return False
        model = small.targets[0].target.value
        siblings = list(ctx.siblings(statement))
        last = statement
        for later in siblings[siblings.index(statement) + 1:]:
            if model in names_used(later):
                last = later
        name = fresh_name(ctx, "strategy", "ipu_strategy")
        scope = cst.parse_statement(f"with {name}.scope():\n    pass\n")
        if not ctx.wrap(statement, last, lambda body: scope.with_changes(body=scope.body.with_changes(body=body))):
            return False
        ctx.insert_before(statement, [cst.parse_statement(f"{name} = ipu.ipu_strategy.IPUStrategy()\n")])
        ctx.add_import("tensorflow.python", "ipu", code=self.code)
        return True

RULE = LegacyKeras()
