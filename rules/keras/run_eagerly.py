import libcst as cst

from porter.context import code_of
from porter.cstutil import argument, is_false, is_true, keyword
from porter.rules.keras._analysis.steps import is_tf_function
from porter.rules.keras._analysis.util import method_calls
from porter.rule import ERROR, KERAS, WARN, Example, Rule

_EAGER_SWITCHES = ("tensorflow.config.run_functions_eagerly", "tensorflow.config.experimental_run_functions_eagerly")
_WHY = "Keras models cannot run eagerly under `IPUStrategy` (RuntimeError)"
# Keras 2 backend functions written for graph mode (the TensorFlow 1 backend of Keras 2.x).
_BACKEND_FUNCTION = "keras.backend.function"
_BACKEND_GRADIENTS = "keras.backend.gradients"


class RunEagerly(Rule):
    code = "IPU152"
    name = "run-eagerly"
    kind = WARN
    frameworks = frozenset({KERAS})
    summary = ("Warn about `compile(run_eagerly=True)`, other switches to eager execution, and Keras 2 backend "
               "code that runs the model eagerly (`K.function`) or needs graph mode (`K.gradients`).")
    rationale = (
        "The IPU runs compiled graphs only: `model.compile(run_eagerly=True)` makes IPU Keras raise "
        "`RuntimeError(\"Keras models cannot run eagerly when using IPUStrategy...\")` (Targeting the IPU "
        "from TensorFlow 2, \"Keras with IPUs\"). `model.run_eagerly = True` and "
        "`tf.config.run_functions_eagerly(True)` "
        "do the same. Remove them (they are a debugging aid); a value the porter cannot read is "
        "reported too, to be checked. Keras 2 scripts written for the graph-mode backend also call "
        "`K.function([model.input], [layer.output])`, which under TensorFlow 2 wraps the outputs in a "
        "Keras `Model` and calls it eagerly, op by op, at each call, out of the programs the IPU compiles, "
        "and `K.gradients(loss, x)`, which is `tf.gradients` and raises `RuntimeError` under eager "
        "execution, which Keras on the IPU runs with (Targeting the IPU from TensorFlow 2, "
        "\"Keras with IPUs\")."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf

            model.compile(optimizer="adam", loss="mse", run_eagerly=True)
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def main(args):
                model = build()
                model.compile("sgd", "mse", run_eagerly=args.debug)
            """,
        ),
        Example("""\
            import tensorflow as tf

            tf.config.run_functions_eagerly(True)
            model.run_eagerly = True
            """),
        Example(
            """\
            import tensorflow as tf

            model.compile(optimizer="adam", loss="mse", run_eagerly=False)
            tf.config.run_functions_eagerly(False)
            model.compile("adam", "mse", steps_per_execution=8)
            """,
            reported=False,
        ),
        Example("""\
            from tensorflow import keras
            from tensorflow.keras import backend as K


            def main():
                model = keras.models.load_model("model.h5")
                features = K.function([model.input], [model.layers[-2].output])
                print(features([x_test[:8]])[0].shape)
                loss = K.mean(model.output[:, 0])
                grads = K.gradients(loss, model.input)[0]
            """),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras import backend as K


            @tf.function
            def saliency(model, x):
                return K.gradients(K.sum(model(x)), x)[0]


            class Probe(tf.keras.layers.Layer):
                def call(self, inputs):
                    return K.gradients(K.sum(inputs), inputs)[0]
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        for call, _ in method_calls(ctx, "compile"):
            self._check(ctx, keyword(call, "run_eagerly"), "`compile(run_eagerly=...)`")
        for call, name in ctx.calls_to(*_EAGER_SWITCHES):
            self._check(ctx, argument(call, "run_eagerly", 0), f"`{name.replace('tensorflow', 'tf')}()`")
        for assign in ctx.nodes(cst.Assign):
            for target in assign.targets:
                if isinstance(target.target, cst.Attribute) and target.target.attr.value == "run_eagerly":
                    self._check(ctx, assign, "`.run_eagerly = ...`", value=assign.value)
        self._backend_graph_code(ctx)

    def _backend_graph_code(self, ctx) -> None:
        """``K.function`` and ``K.gradients`` of a Keras 2 script: written for graph mode, which
        Keras on the IPU does not run in. ``K.gradients`` where TensorFlow traces it (a
        ``tf.function``, a method of a layer or model class, a lambda) builds a graph, and is left."""
        for call, _ in ctx.calls_to(_BACKEND_FUNCTION):
            ctx.report(self.code, call, f"`{code_of(ctx, call.func)}(...)` wraps these outputs, under TensorFlow 2, "
                       "in a Keras `Model` that each call of the function it returns runs eagerly, op by op, out "
                       "of the programs the IPU compiles: build `keras.Model(inputs, outputs)` in the IPU "
                       "strategy's scope and call its `predict(...)` on the inputs (whole batches), or compute "
                       "what is not a layer's output (a loss, gradients) in a `@tf.function(jit_compile=True)` "
                       "step run through `strategy.run`", fixed=False)
        for call, _ in ctx.calls_to(_BACKEND_GRADIENTS):
            if self._traced(ctx, call):
                continue
            ctx.report(self.code, call, f"`{code_of(ctx, call.func)}(...)` is `tf.gradients`, which runs only in "
                       "graph mode: TensorFlow 2 raises `RuntimeError` (\"tf.gradients is not supported when eager "
                       "execution is enabled\") under the eager execution Keras on the IPU needs; compute the "
                       "gradients with `tf.GradientTape` in a `@tf.function(jit_compile=True)` step run through "
                       "`strategy.run`", fixed=False, severity=ERROR)

    @staticmethod
    def _traced(ctx, node) -> bool:
        """Whether TensorFlow traces ``node`` into a graph: in a ``tf.function``, in a method of a
        class (a layer's ``call``, a model's ``train_step``) or in a lambda (a ``Lambda`` layer)."""
        if ctx.enclosing(node, cst.Lambda) is not None or ctx.enclosing(node, cst.ClassDef) is not None:
            return True
        function = ctx.enclosing_function(node)
        while function is not None:
            if is_tf_function(ctx, function):
                return True
            function = ctx.enclosing_function(function)
        return False

    def _check(self, ctx, arg, what, value=None):
        if arg is None:
            return
        value = value if value is not None else arg.value
        if is_false(value):
            return
        if is_true(value):
            ctx.report(self.code, arg, f"{what}: {_WHY}; remove it", fixed=False)
        else:
            ctx.report(self.code, arg, f"{what}: {_WHY}; make sure this value is False", fixed=False)


RULE = RunEagerly()
