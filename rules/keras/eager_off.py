"""IPU118: remove the switch to graph mode of a Keras script that needs graph mode nowhere else."""

import libcst as cst

from porter.context import code_of
from porter.rule import ERROR, FIX, KERAS, Example, Rule
from porter.statements import keep_blank_lines


class EagerOff(Rule):
    code = "IPU118"
    name = "eager-off"
    kind = FIX
    frameworks = frozenset({KERAS})
    # A switch left in makes Keras train off the IPU.
    severity = ERROR
    summary = ("Remove `tf.compat.v1.disable_eager_execution()` (or `disable_v2_behavior()`) from a Keras script "
               "that needs graph mode nowhere else, so that Keras runs as TensorFlow 2 Keras on the IPU.")
    rationale = (
        "Keras runs on the IPU as TensorFlow 2 Keras, with `fit`, `evaluate` and `predict` compiled for the IPU "
        "in an `IPUStrategy` scope (Targeting the IPU from TensorFlow 2, \"Keras with IPUs\"). Keras 2 era "
        "scripts often switch eager execution off near the top, for speed: the model then trains and "
        "predicts through Keras' TensorFlow 1 (graph mode) loops, not the TensorFlow 2 ones that the IPU's Keras "
        "extensions compile. In a script where nothing else "
        "needs graph mode (no sessions, placeholders, `K.gradients`, `K.function`, `optimizer.get_updates` or "
        "other TensorFlow 1 API), the switch is removed and the script ported as TensorFlow 2 Keras, which "
        "`fit` compiles into graphs anyway. A switch guarded by an `if` of its own (a version check) goes "
        "with its `if`; one that is part of other code is reported, to be removed by hand. Scripts that "
        "need graph mode are TensorFlow 1 scripts (IPU290)."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf

            tf.compat.v1.disable_eager_execution()
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss="mse")
            model.fit(x, y, batch_size=32, epochs=2)
            """,
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss="mse")
            model.fit(x, y, batch_size=32, epochs=2)
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            if tf.__version__.startswith("2"):
                tf.compat.v1.disable_eager_execution()


            def main(args):
                model = tf.keras.models.load_model(args.model)
                model.fit(x, y, batch_size=32, epochs=2)
            """,
            """\
            import tensorflow as tf


            def main(args):
                model = tf.keras.models.load_model(args.model)
                model.fit(x, y, batch_size=32, epochs=2)
            """,
        ),
        Example(
            """\
            from tensorflow import keras
            from tensorflow.compat.v1 import disable_v2_behavior

            disable_v2_behavior()
            model = keras.models.load_model("classifier.h5")
            print(model.predict(images, batch_size=16))
            """,
            """\
            from tensorflow import keras

            model = keras.models.load_model("classifier.h5")
            print(model.predict(images, batch_size=16))
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def main(args):
                setup = tf.compat.v1.disable_eager_execution() if args.graph_mode else None
                model = tf.keras.models.load_model(args.model)
                model.fit(x, y, batch_size=32, epochs=2)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            tf.compat.v1.enable_eager_execution()
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.fit(x, y, batch_size=32, epochs=2)
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        for call in ctx.eager_off_calls():
            statement = self._removable(ctx, call)
            # Its comments go with it: they are about the switch.
            if statement is not None and ctx.remove(statement):
                keep_blank_lines(ctx, [statement])
                ctx.report(self.code, call, f"removed `{code_of(ctx, call)}`: it made Keras run in TensorFlow 1 "
                           "graph mode, which the IPU's Keras does not compile; nothing else in the file needs graph "
                           "mode, so the script runs as TensorFlow 2 Keras", fixed=True)
            else:
                ctx.report(self.code, call, f"`{code_of(ctx, call)}` makes Keras run in TensorFlow 1 graph "
                           "mode, which the IPU's Keras does not compile, and nothing else in the file needs graph mode: "
                           "remove this call", fixed=False)

    @staticmethod
    def _removable(ctx, call: cst.Call):
        """The statement that only switches eager execution off: the call's own line, or an ``if``
        (a version check, an option) whose body is that line alone. None if the call is part of
        more code, or the last statement of its block."""
        line = ctx.parent(ctx.parent(call))
        if not (isinstance(ctx.parent(call), cst.Expr) and isinstance(line, cst.SimpleStatementLine)
                and len(line.body) == 1):
            return None
        if len(ctx.siblings(line)) > 1:
            return line
        guard = ctx.parent(ctx.parent(line))
        if isinstance(guard, cst.If) and guard.orelse is None and guard.body is ctx.parent(line) \
                and len(ctx.siblings(guard)) > 1:
            return guard
        return None


RULE = EagerOff()
