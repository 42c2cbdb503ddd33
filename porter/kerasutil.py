"""Helpers shared by the Keras rules: where data enters a model, what a variable was assigned,
which functions are generators. All of it is static and local to one function (or the module)."""

from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Tuple

import libcst as cst

from porter.context import FileContext
from porter.cstutil import argument, keyword

# Model methods that take data, and where their x / y arguments sit.
DATA_METHODS = ("fit", "evaluate", "predict", "train_on_batch", "test_on_batch", "predict_on_batch")
GENERATOR_METHODS = ("fit_generator", "evaluate_generator", "predict_generator")


def last_name(node: cst.CSTNode) -> Optional[str]:
    """``LSTM`` for ``LSTM`` or ``tf.keras.layers.LSTM``: a cheap test before resolving a name."""
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Name):
        return node.value
    return None


def owner(ctx: FileContext, node: cst.CSTNode) -> cst.CSTNode:
    """The function that holds ``node``, or the module."""
    return ctx.enclosing_function(node) or ctx.module


def method_calls(ctx: FileContext, *methods: str) -> Iterator[Tuple[cst.Call, str]]:
    """Calls ``<anything>.method(...)`` for the given method names, in source order."""
    for call in ctx.nodes(cst.Call):
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in methods:
            yield call, func.attr.value


def data_arguments(call: cst.Call, method: str) -> List[Tuple[str, cst.BaseExpression]]:
    """The data a model method gets: ``("x", expr)``, ``("y", expr)`` and, for ``fit``, the parts
    of ``validation_data`` (``("x", ...)``, ``("y", ...)`` for a tuple, else ``("validation", ...)``)."""
    found: List[Tuple[str, cst.BaseExpression]] = []
    x = argument(call, "x", 0)
    if x is not None:
        found.append(("x", x.value))
    if not method.startswith("predict"):
        y = argument(call, "y", 1)
        if y is not None:
            found.append(("y", y.value))
    validation = keyword(call, "validation_data")
    if validation is not None:
        value = validation.value
        if isinstance(value, cst.Tuple) and len(value.elements) in (2, 3) and not any(
            isinstance(element, cst.StarredElement) for element in value.elements
        ):
            found.append(("x", value.elements[0].value))
            found.append(("y", value.elements[1].value))
        else:
            found.append(("validation", value))
    return found


def assignments(ctx: FileContext, scope: cst.CSTNode) -> List[Tuple[cst.BaseStatement, str, Optional[cst.BaseExpression]]]:
    """``(statement, name, value)`` for every name bound by an assignment in ``scope`` (not in
    nested functions), in source order. ``a, b = c, d`` gives each name its own value; a name
    bound by unpacking anything else (``a, b = f()``) gets ``None``; ``for`` targets too."""
    cache: Dict[int, list] = ctx.__dict__.setdefault("_keras_assignments", {})
    found = cache.get(id(scope))
    if found is not None:
        return found
    found = cache[id(scope)] = []
    for statement in statements_in(scope):
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        smalls = list(statement.body) if isinstance(statement, cst.SimpleStatementLine) else [
            small for block in sub_blocks(statement) if isinstance(block, cst.SimpleStatementSuite)
            for small in block.body]
        if isinstance(statement, cst.For):
            found.extend((statement, name, None) for name, _ in _pairs(statement.target, None))
        elif isinstance(statement, cst.With):
            for item in statement.items:
                if item.asname is not None:
                    found.extend((statement, name, None) for name, _ in _pairs(item.asname.name, None))
        for small in smalls:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    found.extend((statement, name, value) for name, value in _pairs(target.target, small.value))
            elif isinstance(small, cst.AnnAssign):
                found.extend((statement, name, small.value) for name, _ in _pairs(small.target, None))
            elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
                found.append((statement, small.target.value, None))
    return found


def _pairs(target: cst.CSTNode, value: Optional[cst.BaseExpression]):
    if isinstance(target, cst.Name):
        yield target.value, value
    elif isinstance(target, (cst.Tuple, cst.List)):
        values = None
        if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(target.elements) and not any(
            isinstance(element, cst.StarredElement) for element in (*value.elements, *target.elements)
        ):
            values = [element.value for element in value.elements]
        for index, element in enumerate(target.elements):
            inner = element.value
            yield from _pairs(inner, values[index] if values is not None else None)
    elif isinstance(target, cst.StarredElement):
        yield from _pairs(target.value, None)


def values_of(ctx: FileContext, name: cst.Name) -> List[Optional[cst.BaseExpression]]:
    """Every value the variable ``name`` is assigned in its function (None: not readable); for a
    name the function neither assigns nor takes as a parameter, the module's assignments."""
    scope = owner(ctx, name)
    found = [value for _, bound, value in assignments(ctx, scope) if bound == name.value]
    if not found and isinstance(scope, cst.FunctionDef) and name.value not in _parameters(scope):
        found = [value for _, bound, value in assignments(ctx, ctx.module) if bound == name.value]
    return found


def _parameters(function: cst.FunctionDef) -> List[str]:
    params = function.params
    names = [param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params)]
    names.extend(star.name.value for star in (params.star_arg, params.star_kwarg) if isinstance(star, cst.Param))
    return names


def statements_in(scope: cst.CSTNode) -> Iterator[cst.BaseStatement]:
    """Every statement of a module or function, nested blocks included (not nested functions or
    classes, which are yielded but not entered), in source order; expressions are not walked."""
    if isinstance(scope, cst.Module):
        stack = list(reversed(scope.body))
    elif isinstance(scope.body, cst.IndentedBlock):
        stack = list(reversed(scope.body.body))
    else:
        return
    while stack:
        statement = stack.pop()
        yield statement
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) or not isinstance(statement, cst.BaseCompoundStatement):
            continue
        inner: List[cst.BaseStatement] = []
        for block in sub_blocks(statement):
            if isinstance(block, cst.IndentedBlock):
                inner.extend(block.body)
        stack.extend(reversed(inner))


def sub_blocks(statement: cst.CSTNode) -> Iterator[cst.BaseSuite]:
    """The blocks of a compound statement: body, elif/else, except and finally blocks."""
    for name in ("body", "orelse", "finalbody"):
        block = getattr(statement, name, None)
        if isinstance(block, (cst.Else, cst.Finally)):
            block = block.body
        if isinstance(block, cst.If):  # elif
            yield from sub_blocks(block)
            continue
        if isinstance(block, cst.BaseSuite):
            yield block
    for handler in getattr(statement, "handlers", ()):
        yield handler.body


def generator_functions(ctx: FileContext) -> Dict[str, cst.FunctionDef]:
    """Functions (and methods) of the file that contain ``yield``, by name."""
    cache = ctx.__dict__.get("_keras_generators")
    if cache is None:
        cache = {}
        for node in ctx.nodes(cst.Yield):
            function = ctx.enclosing(node, (cst.FunctionDef, cst.Lambda))  # type: ignore[arg-type]
            if isinstance(function, cst.FunctionDef):
                cache[function.name.value] = function
        ctx.__dict__["_keras_generators"] = cache
    return cache


def subclasses_of(ctx: FileContext, *bases: str) -> Dict[str, cst.ClassDef]:
    """Classes of the file deriving (directly or through other classes of the file) from one
    of the Keras-canonical ``bases`` (e.g. ``keras.utils.Sequence``)."""
    found: Dict[str, cst.ClassDef] = {}
    classes = ctx.nodes(cst.ClassDef)
    changed = True
    while changed:
        changed = False
        for node in classes:
            if node.name.value in found:
                continue
            for base in node.bases:
                if ctx.keras_name(base.value) in bases or (
                    isinstance(base.value, cst.Name) and base.value.value in found
                ):
                    found[node.name.value] = node
                    changed = True
                    break
    return found


def is_literal_false(node: Optional[cst.CSTNode]) -> bool:
    return isinstance(node, cst.Name) and node.value in ("False", "None")


def number_value(node: Optional[cst.CSTNode]) -> Optional[float]:
    """The value of an int/float literal (with an optional sign), else None."""
    sign = 1.0
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        sign = -1.0 if isinstance(node.operator, cst.Minus) else 1.0
        node = node.expression
    if isinstance(node, (cst.Integer, cst.Float)):
        try:
            return sign * float(node.evaluated_value)
        except (TypeError, ValueError):
            return None
    return None
