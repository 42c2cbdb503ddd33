"""IPU290: the last check of a TF1 port. A port may be partial, never falsely complete."""

import libcst as cst

from porter.context import code_of
from porter.rule import ERROR, TF1, WARN, Example, Rule
from porter.rules.tf1._analysis.graph import IPU_COMPILE, IPU_SCOPE, compiled_now, find_calls, session_calls
from porter.rules.tf1.ipu_scope import RULE as SCOPE_RULE
from porter.rules.tf1.xla_compile import RULE as COMPILE_RULE


# Calls that switch eager execution off, making TensorFlow 2 code run as a TF1 graph.
_GRAPH_MODE_SWITCHES = tuple(prefix + switch for prefix in ("tensorflow.", "tensorflow.compat.v1.")
                             for switch in ("disable_v2_behavior", "disable_eager_execution"))
_KERAS_TRAINING = ("fit", "fit_generator", "train_on_batch")


class Tf1Audit(Rule):
    code = "IPU290"
    name = "tf1-audit"
    kind = WARN
    frameworks = frozenset({TF1})
    # What it reports makes the port incomplete.
    severity = ERROR
    # It judges what the other rules made of the file.
    after = ("IPU201", "IPU202", "IPU208")
    summary = ("Report a TF1 script whose session runs no compiled IPU computation after the port, or that "
               "trains a Keras model with eager execution switched off for graph-mode code.")
    rationale = (
        "A TensorFlow 1 graph runs on the IPU when its step is built in a function compiled with "
        "`ipu.ipu_compiler.compile` inside `ipu.scopes.ipu_scope(\"/device:IPU:0\")`, and the session fetches "
        "what that returns (Graphcore, *Targeting the IPU from TensorFlow 1*, \"Compiling the graph for the "
        "IPU\"). A session that runs a graph built anywhere else runs it on the CPU. After the other rules, "
        "this check reports a script whose sessions run and whose port has no IPU computation at all, at "
        "the first `run`, so that the port is never taken for a complete one. Keras runs on the IPU as "
        "TensorFlow 2 Keras in an `IPUStrategy` scope (Graphcore, *Keras with IPUs*): a script that switches "
        "eager execution off (`tf.disable_v2_behavior()`, `tf.compat.v1.disable_eager_execution()`), "
        "trains a Keras model with `fit` and needs graph mode elsewhere (sessions, `K.gradients`, `K.function`, "
        "`optimizer.get_updates`, other TensorFlow 1 API) is reported at that call, naming that code, with "
        "what to do (where nothing else needs graph mode, the Keras rules remove the call: IPU118)."
    )
    examples = (
        Example(
            """\
            import tensorflow.compat.v1 as tf

            x = tf.placeholder(tf.float32, [None, 4])
            total = tf.reduce_sum(custom_op(x))
            with tf.Session() as sess:
                print(sess.run(total, feed_dict={x: batch}))
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu

            x = tf.placeholder(tf.float32, [None, 4])


            def step(x):
                return tf.reduce_sum(x)


            with ipu.scopes.ipu_scope("/device:IPU:0"):
                total = ipu.ipu_compiler.compile(step, inputs=[x])
            with tf.Session() as sess:
                print(sess.run(total, feed_dict={x: batch}))
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf

            graph = tf.get_default_graph()
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf
            tf.disable_v2_behavior()

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss="mse")
            model.fit(x, y, batch_size=32, epochs=2)
            saliency = tf.gradients(tf.reduce_sum(model.output), model.input)
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras import backend as K

            tf.compat.v1.disable_eager_execution()
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss="mse")
            model.fit(x, y, batch_size=32, epochs=2)
            get_features = K.function([model.input], [model.layers[0].output])
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.compat.v1 import disable_v2_behavior

            disable_v2_behavior()
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss="mse")
            model.fit(x, y, batch_size=32, epochs=2)
            updates = model.optimizer.get_updates(loss, model.trainable_weights)
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras import backend as K

            tf.compat.v1.disable_eager_execution()
            model = tf.keras.models.load_model("classifier.h5")
            print(model.predict(images, batch_size=16))
            saliency = K.gradients(K.max(model.output), model.input)
            """,
        ),
    )

    def run(self, ctx) -> None:
        self._report_graph_mode_keras(ctx)
        if not session_calls(ctx) or self._has_ipu_computation(ctx):
            return
        runs = [call for call in ctx.nodes(cst.Call)
                if isinstance(call.func, cst.Attribute) and call.func.attr.value == "run"]
        if not runs:
            return
        ctx.report(self.code, runs[0], "this session runs a graph with no IPU computation in the port (it runs "
                   "on the CPU): the port is not complete; build the step in a function, compile it with "
                   "`ipu.ipu_compiler.compile(step, inputs=[...])` inside "
                   "`ipu.scopes.ipu_scope(\"/device:IPU:0\")` and fetch what it returns", fixed=False)

    def _report_graph_mode_keras(self, ctx) -> None:
        """Keras trained in graph mode: no rule ports it (the IPU's Keras is TF2 Keras in an
        IPUStrategy, the TF1 rules compile session graphs), so it would come back unchanged."""
        switches = find_calls(ctx, *_GRAPH_MODE_SWITCHES)
        if switches and ctx.runs_keras():
            ctx.report(self.code, switches[0], "this call switches eager execution off, so the Keras model "
                       f"used below runs in TF1 graph mode, which is not ported to the IPU{self._needing(ctx)}: "
                       "rewrite that for TensorFlow 2 (`tf.GradientTape` for gradients, the model's `predict` "
                       "for `K.function`, no sessions), remove this call and port the script again, or port it "
                       "as TF1 (a step built in a function compiled with `ipu.ipu_compiler.compile` and run by "
                       "a session)", fixed=False)
            return
        if switches or not ctx.trains_keras():
            return
        training = [call for call in ctx.nodes(cst.Call)
                    if isinstance(call.func, cst.Attribute) and call.func.attr.value in _KERAS_TRAINING]
        if training:
            ctx.report(self.code, training[0], "this Keras model trains in a TF1 graph (sessions), which is not ported "
                       "to the IPU: train it as TensorFlow 2 Keras (no sessions) and port the script again, or "
                       "port it as TF1 (a step built in a function compiled with `ipu.ipu_compiler.compile` "
                       "and run by a session)", fixed=False)

    @staticmethod
    def _needing(ctx) -> str:
        """What in the file needs graph mode, for the message, named as the file writes it (a line
        number would not be a notebook cell's): ``; `K.gradients` is TensorFlow 1 code that needs it``."""
        found = ctx.graph_mode_code()
        if found is None:
            return ""
        node, _ = found
        return f"; `{code_of(ctx, node)}` is TensorFlow 1 code that needs it"

    @staticmethod
    def _has_ipu_computation(ctx) -> bool:
        if find_calls(ctx, IPU_COMPILE, IPU_SCOPE) or compiled_now(ctx):
            return True
        return any(report.fixed and report.code in (SCOPE_RULE.code, COMPILE_RULE.code) for report in ctx.reports)


RULE = Tf1Audit()
