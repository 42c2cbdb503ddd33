"""What host-side data an expression holds, as far as its uint8 or float64 dtype goes: NumPy makes
float64 unless told otherwise (``np.random.randn``, ``np.linspace``, ``np.zeros``,
``np.array([0.5, 1.0])``, ``np.loadtxt``), a pandas table gives float64 for its float columns,
arithmetic, slicing and the array methods that keep a dtype keep it, a true division (or arithmetic
with a Python float) makes float64 of integer data, and ``.astype(...)`` sets the dtype anew. The
answer composes through method chains and arithmetic: ``x.reshape(-1, 784) / 255.0`` of uint8 ``x``
is float64. Read by the uint8/float64 flow of ``porter.rules._tf.tfdata``, which follows variables
through a function in source order and hands what it knows of each name (``known``).

The kinds of data answered here: ``UINT8`` (certainly uint8), ``FLOAT64`` (certainly float64),
``TABLE`` (the values of a pandas table: float64 when its columns are float, int64 when they are
integers) and ``MAYBE_FLOAT64`` (float64 on some paths only). ``INTEGRAL`` is uint8 data after
arithmetic with numbers: integers or float64, so float64 once divided. ``RANDOM`` and ``FRAME`` are
what the flow notes for the objects that make such data: a NumPy random generator, a pandas table.
"""

from __future__ import annotations

from typing import Mapping, NamedTuple, Optional

import libcst as cst

from porter.context import FileContext, code_of, walk

UINT8 = "uint8"
INTEGRAL = "integral"
# NumPy integers of no narrow dtype (`np.arange(n)`: int64): a true division or arithmetic with a
# Python float makes float64 of them, as of uint8 data; the uint8 rules leave them alone.
INTEGERS = "integers"
FLOAT64 = "float64"
TABLE = "table"
MAYBE_FLOAT64 = "maybe-float64"
RANDOM = "random-generator"
FRAME = "pandas-table"
# A tensor TensorFlow made of uint8 data by an op that keeps the dtype (`tf.expand_dims(x_train, -1)`):
# still uint8, and cast with `tf.cast` (a tensor has no `.astype`).
UINT8_TENSOR = "uint8-tensor"
# A tensor TensorFlow made of float64 NumPy data without a dtype (`tf.convert_to_tensor(x)` of
# `x = np.linspace(...)`): TensorFlow keeps float64, and a tensor is cast with `tf.cast`.
FLOAT64_TENSOR = "float64-tensor"
FLOAT64_KINDS = frozenset({FLOAT64, TABLE, MAYBE_FLOAT64})
_INTEGER_KINDS = frozenset({UINT8, INTEGRAL, INTEGERS})
_NOTED = FLOAT64_KINDS | _INTEGER_KINDS | {RANDOM, FRAME, UINT8_TENSOR, FLOAT64_TENSOR}
# TensorFlow functions that make a tensor of their first argument's dtype (unless given a `dtype`,
# by keyword or, for the conversions, second: `tf.constant(x, tf.float32)`).
_TF_CONVERTING = frozenset({"tensorflow.convert_to_tensor", "tensorflow.constant"})
_TF_KEEPING = _TF_CONVERTING | frozenset(f"tensorflow.{name}" for name in (
    "expand_dims", "reshape", "squeeze", "identity", "transpose"))


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
    "power", "clip", "dot", "matmul", "outer", "mean", "std", "sum", "cumsum", "cumprod", "prod", "append",
    "arccos", "arcsin", "log2", "log10", "maximum", "minimum", "round", "floor",
    "ceil", "tile", "repeat", "roll", "flip", "atleast_2d", "sort", "copy", "diff", "asarray", "array",
    "ascontiguousarray"))
# NumPy functions and array methods that change only the shape (or the memory) of their array: they
# keep any dtype, an integer one too.
_NUMPY_RESHAPING = frozenset(f"numpy.{name}" for name in (
    "expand_dims", "reshape", "squeeze", "transpose", "asarray", "array", "ascontiguousarray"))
# NumPy functions that join arrays: uint8 arrays joined (`np.concatenate([x_train, x_test])`) stay uint8.
_NUMPY_JOINING = frozenset(f"numpy.{name}" for name in ("concatenate", "vstack", "hstack", "stack", "dstack"))
_RESHAPING_METHODS = frozenset({"reshape", "squeeze", "flatten", "ravel", "copy", "transpose", "swapaxes"})
# Array methods whose result keeps the array's float dtype.
_KEEPING_METHODS = _RESHAPING_METHODS | {"mean", "std", "var", "sum", "min", "max", "cumsum", "clip", "round", "dot",
                                         "repeat"}
# Attributes of an array that are numbers or dtypes, whatever it holds.
_ARRAY_NUMBERS = frozenset({"shape", "size", "ndim", "dtype", "itemsize", "nbytes"})
# NumPy scalars narrower than float64: `x / np.float32(255)` of integer data is float32.
_NARROW_SCALARS = frozenset({"numpy.float32", "numpy.float16", "numpy.single", "numpy.half"})
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
UINT8_DTYPES = frozenset({"numpy.uint8", "tensorflow.uint8", "tensorflow.dtypes.uint8"})
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power,
               cst.MatrixMultiply)
_NEUTRAL = ArrayData("neutral", "")  # a number, or data that does not decide the dtype of arithmetic
_NARROW = ArrayData("narrow", "")  # a float32 (or float16) NumPy scalar: keeps integer data from float64
_SENTINELS = (_NEUTRAL, _NARROW)


def array_value(ctx: FileContext, value: cst.BaseExpression,
                known: Mapping[str, ArrayData]) -> Optional[ArrayData]:
    """What uint8 or float64 data ``value`` makes (``UINT8``, ``INTEGRAL``, a kind of
    ``FLOAT64_KINDS``), or the generator or table it is (``RANDOM``, ``FRAME``); None when it is
    none of these or it is not known."""
    data = _operand(ctx, value, known)
    return data if data is not None and data not in _SENTINELS else None


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
        return inner if inner is None or inner.kind != RANDOM else None  # `x[..., None]`, `x[:n]`
    if isinstance(value, cst.Attribute):
        return _attribute(ctx, value, known)
    if isinstance(value, cst.Call):
        return _call(ctx, value, known)
    return None


def _arithmetic(ctx: FileContext, value: cst.BinaryOperation, known: Mapping[str, ArrayData]) -> Optional[ArrayData]:
    """NumPy promotes: a float64 operand makes the result float64, whatever the other is. pandas
    keeps its tables: arithmetic on a table (``(table - table.mean()) / table.std()``) is a table,
    whose values are what ``.values`` and ``.to_numpy()`` give."""
    operands = [_operand(ctx, side, known) for side in (value.left, value.right)]
    if None in operands:
        return None
    tensors = [data for data in operands if data.kind == FLOAT64_TENSOR]
    if tensors:  # `t - 0.5`, `t * x` of a float64 tensor `t`: TensorFlow converts the rest to float64
        return tensors[0]
    found = [data for data in operands if data.kind in FLOAT64_KINDS]
    tables = [data for data in operands if data.kind == FRAME]
    if tables and not found:
        return tables[0]
    certain = [data for data in found if data.kind == FLOAT64]
    integers = [data for data in operands if data.kind in _INTEGER_KINDS]
    if found or not integers:
        return (certain or found or [_NEUTRAL])[0]
    if len(integers) == 2 and all(data.kind == UINT8 for data in integers) and isinstance(value.operator, _UINT8_KEEPING):
        return integers[0]  # `(labels // 5) * (labels % 2)`: uint8 with uint8 stays uint8
    return _integer_arithmetic(value, integers[0], narrow=_NARROW in operands)


def _integer_arithmetic(value: cst.BinaryOperation, data: ArrayData, narrow: bool) -> Optional[ArrayData]:
    """Integer data (uint8 data, or what arithmetic with numbers made of it) with numbers: a true
    division makes float64 of it (``x / 255.0``, ``(x - 127.5) / 127.5``), and so does arithmetic
    with a Python float (``x * 0.5``); other arithmetic gives integers or float64 (``x - mean``):
    float64 once divided. A float32 NumPy scalar keeps it from float64: not known."""
    if narrow:
        return None
    integers = "the integers" if data.kind == INTEGERS else "the uint8 data"
    if isinstance(value.operator, cst.Divide):
        return data._replace(kind=FLOAT64, origin=f"{integers} of {data.origin} divided in NumPy")
    if any(_is_float_literal(side) for side in (value.left, value.right)):
        return data._replace(kind=FLOAT64, origin=f"{integers} of {data.origin} in NumPy arithmetic with a float")
    if data.kind == INTEGERS:
        return data  # `np.arange(n) + 1`: integers still
    if data.kind == UINT8 and isinstance(value.operator, _UINT8_KEEPING) and any(
            _is_byte_literal(side) for side in (value.left, value.right)):
        return data  # `labels % 2`, `255 - images`: NumPy keeps uint8 with a Python int it can hold
    return data._replace(kind=INTEGRAL)


# Operators whose result NumPy keeps uint8 when the other operand is a Python int from 0 to 255.
_UINT8_KEEPING = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo)


def _is_byte_literal(value: cst.BaseExpression) -> bool:
    """An integer literal that uint8 holds (NumPy keeps uint8 arithmetic with it uint8)."""
    return isinstance(value, cst.Integer) and 0 <= int(value.evaluated_value) <= 255


def _is_float_literal(value: cst.BaseExpression) -> bool:
    while isinstance(value, cst.UnaryOperation):
        value = value.expression
    return isinstance(value, cst.Float)


def _attribute(ctx: FileContext, value: cst.Attribute, known: Mapping[str, ArrayData]) -> Optional[ArrayData]:
    """``x.T`` keeps ``x``; ``table.values`` are the table's, ``table.price`` is a column of it;
    ``args.scale``, ``np.pi``, ``x.shape``: neutral."""
    if value.attr.value == "T":
        return _operand(ctx, value.value, known)
    if value.attr.value in _ARRAY_NUMBERS and ctx.qualified_name(value) is None:
        return _NEUTRAL
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
    if qualified in _TF_KEEPING and call.args and _dtype(call, 1 if qualified in _TF_CONVERTING else None) is None:
        return _kept_tensor(ctx, call, known)
    if qualified is not None and qualified.startswith(("tensorflow.", "keras.", "torch.")):
        return None  # a tensor: its own dtype rules
    origin = f"`{code_of(ctx, func)}`"
    if qualified in _NUMPY_MAKERS or qualified in _NUMPY_LITERALS:
        dtype = _dtype(call, {**_NUMPY_MAKERS, **_NUMPY_LITERALS}[qualified])
        if dtype is not None:
            return _of_dtype(ctx, dtype, origin)
        if qualified in _NUMPY_MAKERS or call.args and _holds_floats(call.args[0].value):
            return ArrayData(FLOAT64, origin)
    if qualified == "numpy.arange":
        return _arange(ctx, call, origin)
    if qualified in _GENERATORS:
        return ArrayData(RANDOM, origin)
    if qualified is not None and qualified.startswith(_TABLES):
        return ArrayData(FRAME, origin)
    if qualified in _NARROW_SCALARS:
        return _NARROW
    if qualified in _NUMPY_KEEPING:
        return _keeping_call(ctx, call, known, reshaping=qualified in _NUMPY_RESHAPING,
                             joining=qualified in _NUMPY_JOINING)
    if qualified is not None and qualified.startswith("numpy."):
        dtype = _dtype(call, None)
        if dtype is not None:  # `np.frombuffer(raw, dtype=np.uint8)`
            return _of_dtype(ctx, dtype, origin)
        return _NEUTRAL if not any(_operand(ctx, arg.value, known) not in (_NEUTRAL, None)
                                   for arg in call.args) else None
    if isinstance(func, cst.Name) and func.value in _NUMBERS and qualified is None:
        return _NEUTRAL
    return _method(ctx, call, known, origin) if isinstance(func, cst.Attribute) and qualified is None else None


def _arange(ctx: FileContext, call: cst.Call, origin: str) -> Optional[ArrayData]:
    """``np.arange(n)``: integers (int64), float64 with a Python float among its bounds
    (``np.arange(0.0, 1.0, 0.1)``), or what its dtype says."""
    dtype = _dtype(call, 3)
    if dtype is not None:
        return _of_dtype(ctx, dtype, origin)
    if any(_is_float_literal(arg.value) for arg in call.args if arg.keyword is None):
        return ArrayData(FLOAT64, origin)
    return ArrayData(INTEGERS, origin)


def _kept_tensor(ctx: FileContext, call: cst.Call, known: Mapping[str, ArrayData]) -> Optional[ArrayData]:
    """``tf.expand_dims(x_train, -1)``, ``tf.convert_to_tensor(labels)``: a uint8 tensor when its
    first argument is uint8 data (an array or a tensor), a float64 tensor when it is certainly
    float64 (``tf.constant(np.linspace(0, 1, 100))``), else not known."""
    first = call.args[0].value if call.args[0].keyword is None and not call.args[0].star else None
    data = _operand(ctx, first, known) if first is not None else None
    if data is not None and data.kind in (UINT8, UINT8_TENSOR):
        return data._replace(kind=UINT8_TENSOR)
    if data is not None and data.kind in (FLOAT64, FLOAT64_TENSOR):
        return data._replace(kind=FLOAT64_TENSOR)
    return None


def _keeping_call(ctx: FileContext, call: cst.Call, known: Mapping[str, ArrayData],
                  reshaping: bool, joining: bool = False) -> Optional[ArrayData]:
    """``np.concatenate([x, noise])``, ``np.sin(x)``: float64 when an operand is; a dtype decides.
    Of a pandas table (``np.array(table)``), the table's values. A function that only reshapes (``reshaping``: ``np.reshape(x, ...)``, ``np.expand_dims``)
    keeps integer data too, and one that joins arrays (``joining``) keeps uint8 data when every
    array it joins is uint8."""
    dtype = _dtype(call, None)
    if dtype is not None:
        return _of_dtype(ctx, dtype, f"`{code_of(ctx, call.func)}`")
    operands = []
    for arg in call.args:
        operands.extend(_operand(ctx, value, known) for value in _items(arg.value))
    found = [data for data in operands if data is not None and data.kind in FLOAT64_KINDS]
    if found:
        return found[0]
    if any(data is not None and data.kind == FRAME for data in operands):
        return ArrayData(TABLE, f"`{code_of(ctx, call)}`")  # `np.array(table)`: the table's values
    if joining and operands and all(data is not None and data.kind == UINT8 for data in operands):
        return _joined(operands)
    if any(data is not None and data.kind in _INTEGER_KINDS for data in operands):
        first = _operand(ctx, call.args[0].value, known) if reshaping and call.args else None
        return first if first is not None and first.kind in _INTEGER_KINDS else None
    return _NEUTRAL if None not in operands else None


def _items(value: cst.BaseExpression) -> list:
    """The arrays a NumPy function gets in ``value``: the items of a list or tuple, the item a
    comprehension makes (``np.array([series[i:i + w] for i in starts])``, windows cut by hand) when
    it reads no name the comprehension binds but in its subscripts, or ``value`` itself."""
    if isinstance(value, (cst.List, cst.Tuple)):
        return [element.value for element in value.elements]
    if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
        bound = {name.value for comp in walk(value.for_in) if isinstance(comp, cst.CompFor)
                 for name in walk(comp.target) if isinstance(name, cst.Name)}
        item = value.elt
        while isinstance(item, cst.Subscript):
            item = item.value
        return [value.elt] if not (isinstance(item, cst.Name) and item.value in bound) else [None]
    return [value]


def _joined(parts: list) -> ArrayData:
    """The uint8 data of arrays joined: images or labels when every part is, else plain data."""
    roles = {part.role for part in parts}
    return parts[0] if len(roles) == 1 else parts[0]._replace(role="array")


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
    if inner is None or inner in _SENTINELS:
        return None
    if inner.kind in _INTEGER_KINDS:
        return inner if method in _RESHAPING_METHODS else None
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
    if isinstance(value, (cst.Name, cst.Call, cst.BinaryOperation)):  # `((table - mean) / std).values` too
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
    """Float64 data when ``dtype`` says float64 (``np.float64``, ``float``, ``"float64"``), uint8
    data when it says uint8; None for any other dtype."""
    if is_uint8_dtype(ctx, dtype):
        return ArrayData(UINT8, "a uint8 array")
    return ArrayData(FLOAT64, f"{origin} with a float64 dtype") if is_float64_dtype(ctx, dtype) else None


def is_uint8_dtype(ctx: FileContext, node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value == "uint8"
    return ctx.qualified_name(node) in UINT8_DTYPES


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
