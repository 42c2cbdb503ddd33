"""Splitting a model into pipeline stages: parameter counts of Keras layers read statically, and
the contiguous split of a sequence of layers that balances them (IPU110).

Parameter counts follow the Keras formulas for the common layers, with the input shape carried
from layer to layer; as soon as a layer or a shape cannot be read, the caller falls back to
balancing by layer count.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import libcst as cst

from porter.cstutil import argument, keyword

Shape = Tuple[int, ...]

_SAME_SHAPE = frozenset({
    "Dropout", "Activation", "ReLU", "Softmax", "LeakyReLU", "ELU", "PReLU", "GaussianNoise",
    "GaussianDropout", "SpatialDropout1D", "SpatialDropout2D", "AlphaDropout",
})


def _int(node: Optional[cst.CSTNode]) -> Optional[int]:
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    return None


def _ints(node: Optional[cst.CSTNode], count: int) -> Optional[Tuple[int, ...]]:
    """An int (repeated ``count`` times) or a tuple/list of ints."""
    single = _int(node)
    if single is not None:
        return (single,) * count
    if isinstance(node, (cst.Tuple, cst.List)):
        values = tuple(_int(element.value) for element in node.elements)
        if all(value is not None for value in values):
            return values  # type: ignore[return-value]
    return None


def _string(node: Optional[cst.CSTNode]) -> Optional[str]:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _value(call: cst.Call, name: str, position: int) -> Optional[cst.BaseExpression]:
    found = argument(call, name, position)
    return found.value if found is not None else None


def input_shape(call: cst.Call, kind: str) -> Optional[Shape]:
    """The shape declared by ``keras.Input(shape=...)``, ``InputLayer(input_shape=...)`` or a first
    layer's ``input_shape=`` (without the batch dimension)."""
    if kind in ("Input", "InputLayer"):
        node = _value(call, "shape", 0) if kind == "Input" else (
            _value(call, "input_shape", 0))
    else:
        found = keyword(call, "input_shape")
        node = found.value if found is not None else None
    if node is None:
        return None
    if isinstance(node, (cst.Tuple, cst.List)):
        values = tuple(_int(element.value) for element in node.elements)
        return values if values and all(value is not None for value in values) else None  # type: ignore
    single = _int(node)
    return (single,) if single is not None else None


def _conv_length(size: int, kernel: int, stride: int, padding: str) -> int:
    if padding == "same":
        return -(-size // stride)
    return (size - kernel) // stride + 1


def layer_parameters(call: cst.Call, kind: str, shape: Shape) -> Optional[Tuple[int, Shape]]:
    """(parameter count, output shape) of ``keras.layers.<kind>(...)`` on inputs of ``shape``."""
    if kind in _SAME_SHAPE:
        return 0, shape
    if kind == "Flatten":
        total = 1
        for size in shape:
            total *= size
        return 0, (total,)
    if kind == "Dense":
        units = _int(_value(call, "units", 0))
        bias = keyword(call, "use_bias")
        if units is None or not shape:
            return None
        has_bias = not (bias is not None and isinstance(bias.value, cst.Name) and bias.value.value == "False")
        return shape[-1] * units + (units if has_bias else 0), (*shape[:-1], units)
    if kind in ("Conv2D", "Conv1D"):
        rank = 2 if kind == "Conv2D" else 1
        filters = _int(_value(call, "filters", 0))
        kernel = _ints(_value(call, "kernel_size", 1), rank)
        strides = _ints(_value(call, "strides", 2), rank) if argument(call, "strides", 2) else (1,) * rank
        padding = _string(_value(call, "padding", 3)) if argument(call, "padding", 3) else "valid"
        if filters is None or kernel is None or strides is None or padding not in ("valid", "same"):
            return None
        if len(shape) != rank + 1 or keyword(call, "data_format") is not None or keyword(call, "groups"):
            return None
        weights = shape[-1] * filters
        for size in kernel:
            weights *= size
        bias = keyword(call, "use_bias")
        has_bias = not (bias is not None and isinstance(bias.value, cst.Name) and bias.value.value == "False")
        sizes = tuple(_conv_length(size, k, s, padding) for size, k, s in zip(shape[:-1], kernel, strides))
        return weights + (filters if has_bias else 0), (*sizes, filters)
    if kind in ("MaxPooling2D", "AveragePooling2D", "MaxPool2D", "AvgPool2D"):
        pool = _ints(_value(call, "pool_size", 0), 2) if argument(call, "pool_size", 0) else (2, 2)
        strides_node = _value(call, "strides", 1)
        strides = _ints(strides_node, 2) if strides_node is not None and not (
            isinstance(strides_node, cst.Name) and strides_node.value == "None") else pool
        padding = _string(_value(call, "padding", 2)) if argument(call, "padding", 2) else "valid"
        if pool is None or strides is None or padding not in ("valid", "same") or len(shape) != 3:
            return None
        sizes = tuple(_conv_length(size, p, s, padding) for size, p, s in zip(shape[:2], pool, strides))
        return 0, (*sizes, shape[2])
    if kind in ("GlobalAveragePooling2D", "GlobalMaxPooling2D", "GlobalAveragePooling1D", "GlobalMaxPooling1D"):
        return 0, (shape[-1],) if shape else None  # type: ignore[return-value]
    if kind == "BatchNormalization" and shape:
        return 4 * shape[-1], shape
    if kind == "LayerNormalization" and shape:
        return 2 * shape[-1], shape
    if kind == "Embedding":
        size = _int(_value(call, "input_dim", 0))
        width = _int(_value(call, "output_dim", 1))
        if size is None or width is None:
            return None
        return size * width, (*shape, width)
    return None


def split(weights: Sequence[int], stages: int) -> Optional[List[int]]:
    """The stage of each item: ``stages`` contiguous, non-empty groups with the smallest largest
    total weight (ties: the earliest such split). None when there are fewer items than stages."""
    count = len(weights)
    if count < stages or stages < 1:
        return None
    prefix = [0]
    for weight in weights:
        prefix.append(prefix[-1] + weight)
    infinity = float("inf")
    # best[k][i]: the smallest largest group when the first i items form k groups.
    best = [[infinity] * (count + 1) for _ in range(stages + 1)]
    cut = [[0] * (count + 1) for _ in range(stages + 1)]
    best[0][0] = 0
    for groups in range(1, stages + 1):
        for end in range(groups, count + 1):
            for start in range(groups - 1, end):
                cost = max(best[groups - 1][start], prefix[end] - prefix[start])
                if cost < best[groups][end]:
                    best[groups][end] = cost
                    cut[groups][end] = start
    assignment = [0] * count
    end = count
    for groups in range(stages, 0, -1):
        start = cut[groups][end]
        for index in range(start, end):
            assignment[index] = groups - 1
        end = start
    return assignment


def balanced(parameters: Optional[Sequence[int]], count: int, stages: int) -> Optional[List[int]]:
    """Split by parameters when they are known (layer count breaks ties), else by layer count."""
    if parameters is not None:
        return split([value * (count + 1) + 1 for value in parameters], stages)
    return split([1] * count, stages)


def stage_totals(assignment: Sequence[int], weights: Sequence[int], stages: int) -> List[int]:
    totals = [0] * stages
    for stage, weight in zip(assignment, weights):
        totals[stage] += weight
    return totals
