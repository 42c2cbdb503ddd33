import libcst as cst

from porter.cstutil import string_value
from porter.rules.keras._analysis.util import last_name
from porter.rule import KERAS, WARN, Example, Rule

_DTYPES = frozenset({
    "tensorflow.float64", "tensorflow.double", "tensorflow.dtypes.float64", "tensorflow.dtypes.double",
    "tensorflow.experimental.numpy.float64", "numpy.float64", "numpy.double", "numpy.longdouble",
})
_NAMES = frozenset({"float64", "double"})
_LAST_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in _DTYPES)
# Calls whose (first or ``dtype``) string argument is a dtype.
_DTYPE_CALLS = ("astype", "set_floatx", "cast", "Variable", "constant", "zeros", "ones", "array", "asarray")
_INSPECTIONS = frozenset({"finfo", "iinfo", "isinstance", "issubdtype", "can_cast", "issubclass"})
_MESSAGE = ("float64 is not supported on the IPU: a float64 input or constant in a compiled function "
            "raises TypeError; use float32 (or float16)")


class Float64(Rule):
    code = "IPU155"
    name = "float64"
    kind = WARN
    frameworks = frozenset({KERAS})
    summary = "Warn about float64 dtypes (`tf.float64`, `np.float64`, `dtype=\"float64\"`)."
    rationale = (
        "The IPU computes in float32, float16, int32 and bool; the device accepts no DT_DOUBLE "
        "(Targeting the IPU from TensorFlow 2, \"Supported types\"). Keras `fit` casts float64 arrays to "
        "float32 itself, but float64 inputs to a "
        "function run through `strategy.run` raise `TypeError(\"Unsupported data type for input: "
        "float64\")` and float64 weights or constants fail to compile. "
        "Each float64 dtype the porter sees is reported, to be changed to float32."
    )
    examples = (
        Example("""\
            import tensorflow as tf

            scale = tf.constant(0.5, dtype=tf.float64)
            """),
        Example("""\
            import numpy as np
            import tensorflow as tf

            x_train = x_train.astype(np.float64)
            """),
        Example("""\
            import tensorflow as tf

            tf.keras.backend.set_floatx("float64")
            """),
        Example(
            """\
            from tensorflow import keras


            def build():
                inputs = keras.Input(shape=(10,), dtype="float64")
                return keras.Model(inputs, keras.layers.Dense(1)(inputs))
            """,
        ),
        Example("""\
            import tensorflow as tf
            from tensorflow import float64

            w = tf.Variable(init, dtype=float64)
            """),
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x = tf.constant(0.5, dtype=tf.float32)
            x_train = x_train.astype("float32")
            label = "float64 is not used"
            eps = np.finfo(np.float64).eps
            if isinstance(value, np.float64):
                value = float(value)
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        for node_type in (cst.Attribute, cst.Name):
            for node in ctx.nodes(node_type):
                last = node.attr.value if isinstance(node, cst.Attribute) else node.value
                if last not in _LAST_NAMES:
                    continue
                if isinstance(node, cst.Name) and isinstance(ctx.parent(node), (cst.Attribute, cst.ImportAlias)):
                    continue
                if ctx.qualified_name(node) in _DTYPES and not self._only_inspected(ctx, node):
                    ctx.report(self.code, node, _MESSAGE, fixed=False)
        for node in ctx.nodes(cst.SimpleString):
            if string_value(node) in _NAMES and self._is_dtype_argument(ctx, node):
                ctx.report(self.code, node, _MESSAGE, fixed=False)

    @staticmethod
    def _only_inspected(ctx, node) -> bool:
        """``np.finfo(np.float64)``, ``isinstance(x, np.float64)``: the dtype is looked at, not used."""
        arg = ctx.parent(node)
        call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
        if not isinstance(call, cst.Call):
            return False
        return last_name(call.func) in _INSPECTIONS

    @staticmethod
    def _is_dtype_argument(ctx, node) -> bool:
        arg = ctx.parent(node)
        if not isinstance(arg, cst.Arg):
            return False
        if arg.keyword is not None:
            return arg.keyword.value in ("dtype", "compute_dtype", "variable_dtype")
        call = ctx.parent(arg)
        if not isinstance(call, cst.Call):
            return False
        return last_name(call.func) in _DTYPE_CALLS


RULE = Float64()
