"""What host-side data an expression holds, as far as its float64 dtype goes: NumPy makes float64
unless told otherwise (``np.random.randn``, ``np.linspace``, ``np.zeros``, ``np.array([0.5, 1.0])``,
``np.loadtxt``), a pandas table gives float64 for its float columns, and arithmetic, slicing and
the array methods that keep a dtype keep it. Read by the uint8/float64 flow of
``porter.rules._tf.tfdata``, which follows variables through a function in source order and hands
what it knows of each name (``known``).

Only the flow's kinds of float64 data are answered here: ``FLOAT64`` (certainly float64), ``TABLE``
(the values of a pandas table: float64 when its columns are float, int64 when they are integers)
and ``MAYBE_FLOAT64`` (float64 on some paths only). ``RANDOM`` and ``FRAME`` are what the flow
notes for the objects that make such data: a NumPy random generator, a pandas table.
"""

from __future__ import annotations

from typing import Mapping, NamedTuple, Optional

import libcst as cst

from porter.context import FileContext, code_of

FLOAT64 = "float64"
TABLE = "table"
MAYBE_FLOAT64 = "maybe-float64"
RANDOM = "random-generator"
FRAME = "pandas-table"
FLOAT64_KINDS = frozenset({FLOAT64, TABLE, MAYBE_FLOAT64})
_NOTED = FLOAT64_KINDS | {RANDOM, FRAME}


class ArrayData(NamedTuple):
    """What the flow knows about a variable: ``kind``, where its data comes from (for messages,
    e.g. "`np.random.randn`") and its ``role``: "images" or "labels" from a Keras dataset, else
    "array"."""

    kind: str
    origin: str
    role: str = "array"


# NumPy functions that make float64 data, with the position of their dtype argument (None: they
# take none).
_NUMPY_MAKERS = {
    **{f"numpy.random.{name}": None for name in (
        "rand", "randn", "random", "random_sample", "ranf", "sample", "normal", "uniform", "standard_normal",
        "exponential", "laplace", "lognormal", "beta", "gamma", "multivariate_normal")},
    "numpy.zeros": 1, "numpy.ones": 1, "numpy.empty": 1, "numpy.identity": 1, "numpy.eye": 3,
    "numpy.linspace": 5, "numpy.logspace": 5, "numpy.loadtxt": 1, "numpy.genfromtxt": 1,
}
# `np.array([[0.1, 0.2], ...])`: float64 when the literal holds a Python float.
_NUMPY_LITERALS = {"numpy.array": 1, "numpy.asarray": 1}
# Random generators and the methods of theirs that make float64 (`rng.random` and
# `rng.standard_normal` take a dtype second).
_GENERATORS = frozenset({"numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.Generator"})
_GENERATOR_METHODS = {**{name: None for name in (
    "normal", "uniform", "rand", "randn", "random_sample", "exponential", "laplace", "lognormal", "beta", "gamma",
    "multivariate_normal")}, "random": 1, "standard_normal": 1}
# NumPy functions whose result is float64 when one of their operands is.
_NUMPY_KEEPING = frozenset(f"numpy.{name}" for name in (
    "concatenate", "vstack", "hstack", "stack", "column_stack", "dstack", "expand_dims", "reshape", "squeeze",
    "transpose", "sin", "cos", "tan", "tanh", "arctan", "exp", "log", "log1p", "sqrt", "abs", "absolute", "square",
    "power", "clip", "dot", "matmul", "outer", "mean", "std", "sum", "cumsum", "maximum", "minimum", "round", "floor",
    "ceil", "tile", "repeat", "roll", "flip", "atleast_2d", "sort", "copy", "diff", "asarray", "array",
    "ascontiguousarray"))
# Array methods whose result keeps the array's float dtype.
_KEEPING_METHODS = frozenset({"reshape", "squeeze", "flatten", "ravel", "copy", "transpose", "swapaxes", "mean", "std",
                              "var", "sum", "min", "max", "cumsum", "clip", "round", "dot", "repeat"})
# Functions whose result is a plain number: neutral in arithmetic.
_NUMBERS = frozenset({"len", "float", "int", "abs", "min", "max", "round"})
# pandas calls that make a table, and scikit-learn functions that give float64 arrays or pass
# arrays through: `X, y = make_regression(...)`, `x_fit, x_val, y_fit, y_val = train_test_split(x, y)`.
_TABLES = ("pandas.read_", "pandas.DataFrame", "pandas.Series", "pandas.concat", "pandas.merge")
SKLEARN_MADE = {"sklearn.datasets.make_regression": (True, True), "sklearn.datasets.make_classification": (True, False),
                "sklearn.datasets.make_blobs": (True, False), "sklearn.datasets.make_moons": (True, False),
                "sklearn.datasets.make_circles": (True, False)}
SKLEARN_SPLIT = "sklearn.model_selection.train_test_split"
_FLOAT64_DTYPES = frozenset({"numpy.float64", "numpy.double", "numpy.float_"})
_FLOAT64_STRINGS = frozenset({"float64", "float", "double", "f8"})
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power,
               cst.MatrixMultiply)
_NEUTRAL = ArrayData("neutral", "")  # a number, or data that does not decide the dtype of arithmetic


def float64_value(ctx: FileContext, value: cst.BaseExpression,
                  known: Mapping[str, ArrayData]) -> Optional[ArrayData]:
    """What float64 data ``value`` makes (a kind of ``FLOAT64_KINDS``), or the generator or table
    it is (``RANDOM``, ``FRAME``); None when it is none of these or it is not known."""
    data = _operand(ctx, value, known)
    return data if data is not None and data is not _NEUTRAL else None


def _operand(ctx: FileContext, value: cst.BaseExpression, known: Mapping[str, ArrayData]) -> Optional[ArrayData]:
    """``value`` as an operand of arithmetic: float64 data (or a generator, a table), ``_NEUTRAL``
    (a number, a name not known to hold float64), or None when it may be anything (a call of
    another library, a tensor)."""
    if isinstance(value, (cst.Integer, cst.Float)):
        return _NEUTRAL
    if isinstance(value, cst.Name):
        data = known.get(value.value)
        return data if data is not None and data.kind in _NOTED else _NEUTRAL
    if isinstance(value, cst.UnaryOperation):
        return _operand(ctx, value.expression, known)
    if isinstance(value, cst.BinaryOperation):
        return _arithmetic(ctx, value, known) if isinstance(value.operator, _ARITHMETIC) else None
    if isinstance(value, cst.Subscript):
        inner = _operand(ctx, value.value, known)
        return inner if inner is None or inner.kind != RANDOM else None
    if isinstance(value, cst.Attribute):
        return _attribute(ctx, value, known)
    if isinstance(value, cst.Call):
        return _call(ctx, value, known)
    return None


def _arithmetic(ctx: FileContext, value: cst.BinaryOperation, known: Mapping[str, ArrayData]) -> Optional[ArrayData]:
    """NumPy promotes: a float64 operand makes the result float64, whatever the other is."""
    operands = [_operand(ctx, side, known) for side in (value.left, value.right)]
    if None in operands:
        return None
    found = [data for data in operands if data.kind in FLOAT64_KINDS]
    certain = [data for data in found if data.kind == FLOAT64]
    return (certain or found or [_NEUTRAL])[0]


def _attribute(ctx: FileContext, value: cst.Attribute, known: Mapping[str, ArrayData]) -> Optional[ArrayData]:
    """``x.T`` keeps ``x``; ``table.values`` are the table's, ``table.price`` is a column of it;
    ``args.scale``, ``np.pi``: neutral."""
    if value.attr.value == "T":
        return _operand(ctx, value.value, known)
    if value.attr.value == "values":
        return ArrayData(TABLE, f"`{code_of(ctx, value)}`") if _is_table(
            ctx, value.value, known) else None
    if ctx.qualified_name(value) is not None:
        return _NEUTRAL
    receiver = _operand(ctx, value.value, known)
    return receiver if receiver is _NEUTRAL or receiver is not None and receiver.kind == FRAME else None


def _call(ctx: FileContext, call: cst.Call, known: Mapping[str, ArrayData]) -> Optional[ArrayData]:
    func = call.func
    qualified = ctx.qualified_name(func)
    if qualified is not None and qualified.startswith(("tensorflow.", "keras.", "torch.")):
        return None  # a tensor: its own dtype rules
    origin = f"`{code_of(ctx, func)}`"
    if qualified in _NUMPY_MAKERS or qualified in _NUMPY_LITERALS:
        dtype = _dtype(call, {**_NUMPY_MAKERS, **_NUMPY_LITERALS}[qualified])
        if dtype is not None:
            return _of_dtype(ctx, dtype, origin)
        if qualified in _NUMPY_MAKERS or call.args and _holds_floats(call.args[0].value):
            return ArrayData(FLOAT64, origin)
    if qualified in _GENERATORS:
        return ArrayData(RANDOM, origin)
    if qualified is not None and qualified.startswith(_TABLES):
        return ArrayData(FRAME, origin)
    if qualified in _NUMPY_KEEPING:
        return _keeping_call(ctx, call, known)
    if qualified is not None and qualified.startswith("numpy."):
        return _NEUTRAL if not any(_operand(ctx, arg.value, known) not in (_NEUTRAL, None)
                                   for arg in call.args) else None
    if isinstance(func, cst.Name) and func.value in _NUMBERS and qualified is None:
        return _NEUTRAL
    return _method(ctx, call, known, origin) if isinstance(func, cst.Attribute) and qualified is None else None


def _keeping_call(ctx: FileContext, call: cst.Call, known: Mapping[str, ArrayData]) -> Optional[ArrayData]:
    """``np.concatenate([x, noise])``, ``np.sin(x)``: float64 when an operand is; a dtype decides."""
    dtype = _dtype(call, None)
    if dtype is not None:
        return _of_dtype(ctx, dtype, f"`{code_of(ctx, call.func)}`")
    operands = []
    for arg in call.args:
        values = [element.value for element in arg.value.elements] if isinstance(
            arg.value, (cst.List, cst.Tuple)) else [arg.value]
        operands.extend(_operand(ctx, value, known) for value in values)
    found = [data for data in operands if data is not None and data.kind in FLOAT64_KINDS]
    return found[0] if found else (_NEUTRAL if None not in operands else None)


def _method(ctx: FileContext, call: cst.Call, known: Mapping[str, ArrayData], origin: str) -> Optional[ArrayData]:
    """``x.astype(float)``, ``x.mean(axis=0)``, ``rng.normal(size=n)``, ``table.to_numpy()``."""
    method = call.func.attr.value
    receiver = call.func.value
    if method == "astype":
        return _of_dtype(ctx, call.args[0].value, origin) if call.args else None
    if method == "to_numpy" and _is_table(ctx, receiver, known):
        dtype = _dtype(call, 0)
        return _of_dtype(ctx, dtype, origin) if dtype is not None else ArrayData(
            TABLE, f"`{code_of(ctx, call)}`")
    inner = _operand(ctx, receiver, known)
    if inner is None or inner is _NEUTRAL:
        return None
    if inner.kind == RANDOM and method in _GENERATOR_METHODS:
        dtype = _dtype(call, _GENERATOR_METHODS[method])
        return _of_dtype(ctx, dtype, origin) if dtype is not None else ArrayData(FLOAT64, origin)
    if inner.kind == FRAME and _dtype(call, None) is None:
        return inner  # `table.dropna()`, `table.drop(columns=...)`: still the table
    return inner if inner.kind in FLOAT64_KINDS and method in _KEEPING_METHODS else None


def _is_table(ctx: FileContext, value: cst.BaseExpression, known: Mapping[str, ArrayData]) -> Optional[bool]:
    """Whether ``value`` is a pandas table (or a column, or rows of one): ``df``, ``df[cols]``,
    ``df.iloc[:, :-1]``; None when not known."""
    while isinstance(value, (cst.Subscript, cst.Attribute)) and not (
            isinstance(value, cst.Attribute) and ctx.qualified_name(value) is not None):
        value = value.value
    if isinstance(value, (cst.Name, cst.Call)):
        data = _operand(ctx, value, known)
        return data.kind == FRAME if data is not None else None
    return None


def _dtype(call: cst.Call, position: Optional[int]) -> Optional[cst.BaseExpression]:
    """The dtype argument of ``call``: ``dtype=...``, or the argument at ``position``."""
    for index, arg in enumerate(call.args):
        if arg.keyword is not None and arg.keyword.value == "dtype":
            return arg.value
        if arg.keyword is None and not arg.star and index == position:
            return arg.value
    return None


def _of_dtype(ctx: FileContext, dtype: cst.BaseExpression, origin: str) -> Optional[ArrayData]:
    """Float64 data when ``dtype`` says float64 (``np.float64``, ``float``, ``"float64"``)."""
    return ArrayData(FLOAT64, f"{origin} with a float64 dtype") if is_float64_dtype(ctx, dtype) else None


def is_float64_dtype(ctx: FileContext, node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value in _FLOAT64_STRINGS
    if isinstance(node, cst.Name) and node.value == "float" and ctx.qualified_name(node) is None:
        return True
    return ctx.qualified_name(node) in _FLOAT64_DTYPES


def _holds_floats(literal: cst.BaseExpression) -> bool:
    """A list or tuple literal (nested) with a Python float in it: ``[[0.5, 1.0], [2.0, 3.0]]``."""
    if isinstance(literal, cst.Float):
        return True
    if isinstance(literal, cst.UnaryOperation):
        return _holds_floats(literal.expression)
    if isinstance(literal, cst.BinaryOperation) and isinstance(literal.operator, cst.Multiply):
        return _holds_floats(literal.left) or _holds_floats(literal.right)  # `[[0.0, 1.0]] * n`
    if isinstance(literal, (cst.List, cst.Tuple)):
        return any(_holds_floats(element.value) for element in literal.elements)
    return False
