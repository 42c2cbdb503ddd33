from typing import Set

import libcst as cst

from porter.context import code_of
from porter.cstutil import argument, string_value
from porter.rules._tf.tfdata import float64_data, tensor_slices_inputs
from porter.rules.keras._analysis.custom_loop import run_targets
from porter.rules.keras._analysis.steps import step_functions
from porter.rules.keras._analysis.util import last_name
from porter.rules.keras._analysis.util import HOST_FUNCTIONS
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
# Host-side data code: NumPy, pandas and SciPy arrays, and the array methods that convert them. A
# float64 array made there is cast by Keras `fit`, or by the code that feeds it to the model.
_HOST_MODULES = ("numpy.", "pandas.", "scipy.")
_HOST_METHODS = frozenset({"astype", "to_numpy"})
_MESSAGE = ("float64 is not supported on the IPU: a float64 input or constant in a compiled function "
            "raises TypeError; use float32 (or float16)")


_DIVIDED_IMAGES = """\
import tensorflow as tf

(images, labels), _ = tf.keras.datasets.mnist.load_data()
images = {scaled}
batches = tf.data.Dataset.from_tensor_slices((images, labels)).batch(64, drop_remainder=True)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
"""


class Float64(Rule):
    code = "IPU155"
    name = "float64"
    kind = WARN
    frameworks = frozenset({KERAS})
    summary = "Warn about float64 dtypes that reach the IPU (`tf.float64`, `dtype=\"float64\"` in model code)."
    rationale = (
        "The IPU computes in float32, float16, int32 and bool; the device accepts no DT_DOUBLE "
        "(Targeting the IPU from TensorFlow 2, \"Supported types\"). Keras `fit` casts float64 arrays to "
        "float32 itself, but float64 inputs to a "
        "function run through `strategy.run` raise `TypeError(\"Unsupported data type for input: "
        "float64\")` and float64 weights or constants fail to compile. "
        "Each float64 dtype that reaches the device is reported, to be changed to float32: in TensorFlow "
        "and Keras code (layers' `dtype`, `tf.cast`, `tf.constant`, `set_floatx`). Host-side data code is "
        "not: NumPy and pandas arrays (`np.float64`, `.astype(\"float64\")`) and the Python functions a "
        "`tf.data` pipeline runs through `tf.py_function`/`tf.numpy_function`. uint8 data divided in NumPy "
        "(`images / 255.0`) is float64: where a custom loop's dataset is made of it, it is reported too."
    )
    examples = (
        Example("""\
            import tensorflow as tf

            scale = tf.constant(0.5, dtype=tf.float64)
            """),
        Example("""\
            import tensorflow as tf


            def train_step(x, y):
                logits = model(tf.cast(x, tf.float64))
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
        # uint8 images divided in NumPy are float64, and the custom loop feeds them to `strategy.run`;
        # cast first, they are float32.
        Example(_DIVIDED_IMAGES.format(scaled="images / 255.0")),
        Example(_DIVIDED_IMAGES.format(scaled="images.astype(\"float32\") / 255.0"), reported=False),
        # Host-side data code: NumPy and pandas arrays, and the Python function of a tf.data map.
        Example(
            """\
            import numpy as np
            import pandas as pd
            import tensorflow as tf

            table = pd.read_csv("prices.csv", dtype={"close": np.float64})
            features = table.to_numpy(dtype="float64")
            weights = np.ones(len(features), dtype=np.float64)


            def normalise(row):
                return ((row - row.mean()) / row.std()).astype(np.float32)


            dataset = tf.data.Dataset.from_tensor_slices(features.astype("float64"))
            dataset = dataset.map(lambda row: tf.numpy_function(normalise, [row], tf.float32))
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        found = []  # (node, whether it is a NumPy dtype)
        for node_type in (cst.Attribute, cst.Name):
            for node in ctx.nodes(node_type):
                last = node.attr.value if isinstance(node, cst.Attribute) else node.value
                if last not in _LAST_NAMES:
                    continue
                if isinstance(node, cst.Name) and isinstance(ctx.parent(node), (cst.Attribute, cst.ImportAlias)):
                    continue
                qualified = ctx.qualified_name(node)
                if qualified in _DTYPES and not self._only_inspected(ctx, node):
                    found.append((node, qualified.startswith(_HOST_MODULES)))
        for node in ctx.nodes(cst.SimpleString):
            if string_value(node) in _NAMES and self._is_dtype_argument(ctx, node):
                found.append((node, False))
        host_functions = _host_functions(ctx) if found else set()
        for node, numpy_dtype in found:
            if _reaches_device(ctx, node, numpy_dtype, host_functions):
                ctx.report(self.code, node, _MESSAGE, fixed=False)
        self._report_divided_data(ctx)

    def _report_divided_data(self, ctx) -> None:
        """``x_train = x_train / 255.0`` of uint8 data is float64 in NumPy; Keras' ``fit`` casts it,
        but a custom loop hands its dataset's batches to ``strategy.run``, which does not."""
        if not (step_functions(ctx) or run_targets(ctx)):
            return
        for _, inputs in tensor_slices_inputs(ctx):
            for _, expr in inputs:
                data = float64_data(ctx, expr)
                if data is not None:
                    ctx.report(self.code, expr, f"`{code_of(ctx, expr)}` is float64: NumPy divides the uint8 data of "
                               f"{data.origin} into float64, and a custom loop hands its batches to `strategy.run`, "
                               "which raises TypeError for float64 inputs (Keras' `fit` casts them, `strategy.run` "
                               "does not): divide `.astype(\"float32\")` data instead", fixed=False)

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


def _host_functions(ctx) -> Set[int]:
    """The functions and lambdas that ``tf.py_function``/``tf.numpy_function`` run on the host
    (by id): what they compute is NumPy code."""
    names, found = set(), set()
    for call, _ in ctx.calls_to(*HOST_FUNCTIONS):
        function = argument(call, "func", 0)
        if function is not None and isinstance(function.value, cst.Name):
            names.add(function.value.value)
        elif function is not None and isinstance(function.value, cst.Lambda):
            found.add(id(function.value))
    found.update(id(function) for function in ctx.nodes(cst.FunctionDef) if function.name.value in names)
    return found


def _reaches_device(ctx, node: cst.CSTNode, numpy_dtype: bool, host_functions: Set[int]) -> bool:
    """Whether a float64 dtype is used by TensorFlow code (the model, a step, a tensor), not by
    host-side data code: an argument of a NumPy/pandas call or of ``.astype(...)``, a NumPy dtype
    used outside TensorFlow calls, or code of a function run by ``tf.py_function``."""
    if any(id(ancestor) in host_functions for ancestor in ctx.ancestors(node)):
        return False
    arg = ctx.parent(node)
    call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    if not isinstance(call, cst.Call):
        return not numpy_dtype
    qualified = ctx.qualified_name(call.func)
    if qualified is not None:
        return not qualified.startswith(_HOST_MODULES)
    return last_name(call.func) not in _HOST_METHODS


RULE = Float64()
