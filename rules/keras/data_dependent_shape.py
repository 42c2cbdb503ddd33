"""IPU162: ops whose output shape depends on tensor values, in a step compiled for the IPU."""

from typing import List, Optional

import libcst as cst

from porter.context import code_of, walk
from porter.cstutil import argument
from porter.rule import KERAS, WARN, Example, Rule
from porter.rules.keras._analysis.custom_loop import loop_plans
from porter.rules.keras._analysis.steps import functions_run_by, is_jit_compiled, step_functions

# Ops that give as many values as the data selects: the size of their output is known only at run time.
_SELECTING_OPS = {
    "tensorflow.boolean_mask": "keeps the values the mask selects",
    "tensorflow.ragged.boolean_mask": "keeps the values the mask selects",
    "tensorflow.unique": "gives one value per distinct value",
    "tensorflow.unique_with_counts": "gives one value per distinct value",
    "tensorflow.dynamic_partition": "splits the values by the partition each is given",
    "tensorflow.image.non_max_suppression": "keeps the boxes that overlap less than the threshold",
    "tensorflow.experimental.numpy.nonzero": "gives the indices of the nonzero values",
}
# `tf.where(condition)` alone gives the indices of the true values; with `x` and `y` it selects per element.
_WHERE = ("tensorflow.where", "tensorflow.compat.v1.where", "tensorflow.where_v2")
# TensorFlow functions that read what is known when the step is compiled, not tensor values.
_STATIC_QUERIES = ("tensorflow.is_tensor", "tensorflow.executing_eagerly", "tensorflow.shape", "tensorflow.rank",
                   "tensorflow.size", "tensorflow.config.", "tensorflow.distribute.", "tensorflow.test.")
_NOT_DEFINED = "the IPU compiles the step for static shapes (\"not fully defined\")"


class DataDependentShape(Rule):
    code = "IPU162"
    name = "data-dependent-shape"
    kind = WARN
    frameworks = frozenset({KERAS})
    summary = "Warn about ops whose output shape depends on tensor values in a custom step compiled for the IPU."
    rationale = (
        "A custom training step runs on the IPU compiled (`tf.function(jit_compile=True)`, through "
        "`strategy.run`), and the compiled program has one static shape for every tensor (Targeting the IPU "
        "from TensorFlow 2: shapes must be fully defined; the graph is static). Ops that give as many values "
        "as the data selects (`tf.boolean_mask`, `tf.where` of a condition alone, `tf.unique`, "
        "`tf.dynamic_partition`, `tf.image.non_max_suppression`) cannot be compiled so, and Python control flow "
        "on a tensor value becomes a compiled conditional or loop whose branches must give one shape (a loop "
        "whose trip count depends on values is run up to a fixed maximum of iterations). The port compiles "
        "the step all the same: these are reported where they are, for a person to rewrite with fixed shapes "
        "(a mask multiplied in, `tf.where(condition, x, y)`, padded outputs)."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            optimizer = tf.keras.optimizers.Adam()


            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    losses = loss_fn(y, model(x, training=True))
                    hard = tf.boolean_mask(losses, losses > tf.reduce_mean(losses))
                    loss = tf.reduce_mean(hard)
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


            for x, y in train_ds:
                train_step(x, y)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("tagger.keras")
            optimizer = tf.keras.optimizers.SGD(0.01)


            def masked_loss(y, logits):
                kept = tf.where(y >= 0)
                return loss_fn(tf.gather_nd(y, kept), tf.gather_nd(logits, kept))


            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = masked_loss(y, model(x, training=True))
                    if tf.reduce_max(loss) > 2.0:
                        loss = loss * 0.5
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


            for x, y in train_ds:
                train_step(x, y)
            """,
        ),
        # Fixed shapes: the mask is multiplied in, and `tf.where` selects per element.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            optimizer = tf.keras.optimizers.Adam()


            @tf.function
            def train_step(x, y, training):
                with tf.GradientTape() as tape:
                    losses = loss_fn(y, model(x, training=training))
                    weights = tf.cast(losses > tf.reduce_mean(losses), tf.float32)
                    losses = tf.where(tf.math.is_nan(losses), tf.zeros_like(losses), losses)
                    if training:
                        losses = losses * weights
                    loss = tf.reduce_sum(losses) / tf.reduce_sum(weights)
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


            for x, y in train_ds:
                train_step(x, y, True)
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        done = set()
        for step in _compiled_steps(ctx):
            for function in functions_run_by(ctx, step):
                if id(function) in done:
                    continue
                done.add(id(function))
                self._report_function(ctx, function, step.name.value)

    def _report_function(self, ctx, function: cst.FunctionDef, step: str) -> None:
        for node in walk(function.body, skip=(cst.FunctionDef, cst.ClassDef)):
            if isinstance(node, cst.Call):
                what = _selects(ctx, node)
                if what is not None:
                    ctx.report(self.code, node.func, f"`{code_of(ctx, node.func)}` {what}, so the size of its output "
                               f"depends on the data, and {_NOT_DEFINED}: in `{step}`, keep the shapes fixed (multiply "
                               "by a mask, `tf.where(condition, x, y)`, or pad to a maximum size)", fixed=False)
            elif isinstance(node, (cst.If, cst.While)) and _reads_tensor_values(ctx, node.test):
                keyword = "if" if isinstance(node, cst.If) else "while"
                ctx.report(self.code, node, f"the Python `{keyword}` on a tensor value (`{code_of(ctx, node.test)}`) "
                           f"in `{step}` is compiled into the step as a conditional or a loop, and {_NOT_DEFINED}: "
                           "its branches must give tensors of the same shapes (a loop runs up to a fixed number of "
                           "iterations); compute both results and select with `tf.where`, or keep the shapes the "
                           "same", fixed=False)


def _compiled_steps(ctx) -> List[cst.FunctionDef]:
    """The custom steps compiled for the IPU: those the port compiles, and those compiled already."""
    found = [plan.step.function for plan in loop_plans(ctx) if plan.problem is None]
    found += [function for functions in step_functions(ctx).values() for function in functions
              if is_jit_compiled(ctx, function) and function not in found]
    return found


def _selects(ctx, call: cst.Call) -> Optional[str]:
    """What ``call`` does when it gives as many values as the data selects, else None."""
    qualified = ctx.qualified_name(call.func)
    if qualified in _WHERE and len(call.args) == 1 and argument(call, "x", 1) is None:
        return "gives the indices where the condition holds"
    return _SELECTING_OPS.get(qualified or "")


def _reads_tensor_values(ctx, test: cst.BaseExpression) -> bool:
    """A condition that calls a TensorFlow op on tensors (``tf.reduce_max(loss) > 2.0``)."""
    return any(isinstance(node, cst.Call) and (ctx.qualified_name(node.func) or "").startswith("tensorflow.")
               and not (ctx.qualified_name(node.func) or "").startswith(_STATIC_QUERIES) for node in walk(test))


RULE = DataDependentShape()
