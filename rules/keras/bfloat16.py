from typing import Optional

import libcst as cst

from porter.context import code_of
from porter.cstutil import argument
from porter.rule import KERAS, WARN, Example, Rule
from porter.scopes import values_of

# Keras' mixed precision policies, set for the whole program or made to be given to layers.
_POLICIES = ("keras.mixed_precision.set_global_policy", "keras.mixed_precision.experimental.set_policy",
             "keras.mixed_precision.Policy", "keras.mixed_precision.experimental.Policy")
_ADVICE = ("the IPU computes in float32 and float16 and has no bfloat16, so the model does not compile for it; "
           "use `mixed_float16` (Keras' `compile` then scales the loss) or float32")


def _bfloat16_string(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.SimpleString) and "bfloat16" in node.evaluated_value


def _bfloat16_value(ctx, node: cst.BaseExpression) -> Optional[str]:
    """The bfloat16 string ``node`` is, or one a variable ``node`` is assigned (``POLICY =
    "mixed_bfloat16"``, then ``Policy(POLICY)``), also as a choice (``"mixed_bfloat16" if tpu else
    "float32"``)."""
    values = values_of(ctx, node) if isinstance(node, cst.Name) else [node]
    for value in values:
        choices = [value.body, value.orelse] if isinstance(value, cst.IfExp) else [value]
        found = [choice.evaluated_value for choice in choices if _bfloat16_string(choice)]
        if found:
            return found[0]
    return None


class Bfloat16(Rule):
    code = "IPU164"
    name = "bfloat16"
    kind = WARN
    frameworks = frozenset({KERAS})
    summary = "Report the `mixed_bfloat16` policy and bfloat16 dtypes, which the IPU does not compute with."
    rationale = (
        "TensorFlow on the IPU computes in float32, float16, int32 and bool (Targeting the IPU from "
        "TensorFlow 2, \"Supported types\"); bfloat16, the type TPU scripts train in with the "
        "`mixed_bfloat16` policy, is not one of them, and a model that computes in it does not compile for the "
        "IPU. Keras' `mixed_float16` policy runs under the IPU strategy, with the loss scaled by `compile`. The "
        "porter does not switch the type itself, as float16 has a narrower range than bfloat16 and a custom "
        "loop must scale its loss by hand: each policy (its name given directly, through a variable, or as "
        "one choice of a conditional), `tf.bfloat16` and `dtype=\"bfloat16\"` is reported."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras import mixed_precision

            mixed_precision.set_global_policy("mixed_bfloat16")
            model = tf.keras.Sequential([tf.keras.layers.Dense(10, dtype="float32")])
            """,
        ),
        # The policy's name held in a variable.
        Example(
            """\
            from tensorflow.keras import mixed_precision

            PRECISION = "mixed_bfloat16"
            mixed_precision.set_global_policy(mixed_precision.Policy(PRECISION))


            def configure(on_tpu):
                policy = "mixed_bfloat16" if on_tpu else "float32"
                mixed_precision.set_global_policy(policy)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            images = tf.cast(images, tf.bfloat16)
            head = tf.keras.layers.Dense(10, dtype="bfloat16")
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras import mixed_precision

            mixed_precision.set_global_policy("mixed_float16")
            model = tf.keras.Sequential([tf.keras.layers.Dense(10, dtype="float32")])
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        for call, name in ctx.calls_to(*_POLICIES):
            policy = argument(call, "name", 0)
            value = _bfloat16_value(ctx, policy.value) if policy is not None else None
            if value is not None:
                ctx.report(self.code, policy, f"the `{value}` policy: {_ADVICE}", fixed=False)
        for arg in ctx.nodes(cst.Arg):
            value = _bfloat16_value(ctx, arg.value) if arg.keyword is not None and arg.keyword.value == "dtype" else None
            if value is not None:
                ctx.report(self.code, arg, f"`dtype=\"{value}\"`: {_ADVICE}", fixed=False)
        for node in ctx.nodes(cst.Attribute):
            if ctx.qualified_name(node) == "tensorflow.bfloat16":
                ctx.report(self.code, node, f"`{code_of(ctx, node)}`: {_ADVICE}", fixed=False)


RULE = Bfloat16()
