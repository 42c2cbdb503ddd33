from typing import Set

import libcst as cst

from porter.context import bound_names
from porter.cstutil import argument
from porter.rule import TF1, WARN, Example, Rule
from porter.rules.tf1._analysis.graph import (IPU_COMPILE, calls_named, compiled_now, find_calls, ipu_bound_scopes,
                                              names_used)


class UnknownPlaceholderShape(Rule):
    code = "IPU210"
    name = "unknown-placeholder-shape"
    kind = WARN
    frameworks = frozenset({TF1})
    # It also checks the inputs of the steps IPU208 compiles.
    after = ("IPU208",)
    summary = "Placeholders fed to IPU code need fully defined shapes (no `None`)."
    rationale = (
        "XLA compiles the IPU graph for fixed shapes: every tensor given to `ipu.ipu_compiler.compile` "
        "must have a fully defined shape (Targeting the IPU from TensorFlow 1, \"A basic graph\", defines the "
        "placeholders' shapes on the CPU). A placeholder with a `None` dimension, or no shape, used in "
        "an IPU scope is reported: give it the batch size, and feed batches of exactly that size."
    )
    examples = (
        Example(
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu

            x = tf.placeholder(tf.float32, [None, 784])
            with ipu.scopes.ipu_scope("/device:IPU:0"):
                out = ipu.ipu_compiler.compile(model, inputs=[x])
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf

            x = tf.placeholder(tf.float32, shape=[32, 784])
            labels = tf.placeholder(tf.int32)
            with tf.device("/gpu:0"):
                out = model(x)
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        used = self._ipu_names(ctx)
        if not used:
            return
        for call in calls_named(ctx, {"placeholder"}):
            assign = ctx.parent(call)
            if not isinstance(assign, cst.Assign) or assign.value is not call:
                continue
            names = [name for target in assign.targets for name in bound_names(target.target)]
            if not any(name in used for name in names):
                continue
            shape = argument(call, "shape", 1)
            if shape is None or (isinstance(shape.value, cst.Name) and shape.value.value == "None"):
                problem = "has no shape"
            elif isinstance(shape.value, (cst.List, cst.Tuple)) and any(
                    isinstance(element.value, cst.Name) and element.value.value == "None"
                    for element in shape.value.elements):
                problem = "has an unknown (`None`) dimension"
            else:
                continue
            ctx.report(self.code, call, f"placeholder `{names[0]}` {problem} and is fed to IPU code: XLA needs "
                       "fully defined shapes: give it the batch size and feed full batches", fixed=False)

    @staticmethod
    def _ipu_names(ctx) -> Set[str]:
        used: Set[str] = set()
        for scope in ipu_bound_scopes(ctx):
            used |= names_used(scope.body)
        for call in find_calls(ctx, IPU_COMPILE):
            used |= names_used(call)
        for kind, statements, _ in compiled_now(ctx):
            if kind == "statements":
                used |= {name for statement in statements for name in names_used(statement)}
        return used


RULE = UnknownPlaceholderShape()
