"""What a function (or the module) binds: its statements, its assignments, the values a variable
gets. Static and local: a name is followed within one function, then the module."""

from __future__ import annotations

from typing import AbstractSet, Iterator, List, Optional, Set, Tuple

import libcst as cst

from porter.context import FileContext, SharedKey

Assignment = Tuple[cst.BaseStatement, str, Optional[cst.BaseExpression]]

_ASSIGNMENTS: SharedKey[List[Assignment]] = SharedKey("assignments")  # per function (or module)
_NAMES: SharedKey[Set[str]] = SharedKey("names")


def owner(ctx: FileContext, node: cst.CSTNode) -> cst.CSTNode:
    """The function that holds ``node``, or the module."""
    return ctx.enclosing_function(node) or ctx.module


def assignments(ctx: FileContext, scope: cst.CSTNode) -> List[Tuple[cst.BaseStatement, str, Optional[cst.BaseExpression]]]:
    """``(statement, name, value)`` for every name bound by an assignment in ``scope`` (not in
    nested functions), in source order. ``a, b = c, d`` gives each name its own value; a name
    bound by unpacking anything else (``a, b = f()``) gets ``None``; ``for`` targets too."""
    return ctx.shared(_ASSIGNMENTS, lambda: _assignments(scope), per=id(scope))


def _assignments(scope: cst.CSTNode) -> List[Tuple[cst.BaseStatement, str, Optional[cst.BaseExpression]]]:
    found: List[Tuple[cst.BaseStatement, str, Optional[cst.BaseExpression]]] = []
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


# ---------------------------------------------------------------------------------- new names
def names_in_file(ctx: FileContext) -> Set[str]:
    """Every identifier the file spells anywhere: bound, used, imported, or as an attribute or a
    keyword. A name outside this set can clash with nothing of the file's, in any scope."""
    return ctx.shared(_NAMES, lambda: {name.value for name in ctx.nodes(cst.Name)})


def fresh_name(ctx: FileContext, *candidates: str, taken: AbstractSet[str] = frozenset()) -> str:
    """A name for something a port adds to the file (a variable, a function, a class): the first
    of ``candidates`` that the file does not spell and ``taken`` (the names the caller already
    chose) does not hold; when every one is in use, the first candidate with the smallest free
    number from 2: ``ipu_config2``.

    The answer depends on the original file and the arguments alone, so two rules that need the
    same new name (one writes a helper, another calls it) ask alike and agree."""
    if not candidates:
        raise ValueError("fresh_name needs at least one candidate")
    names = names_in_file(ctx)
    for candidate in candidates:
        if candidate not in names and candidate not in taken:
            return candidate
    index = 2
    while f"{candidates[0]}{index}" in names or f"{candidates[0]}{index}" in taken:
        index += 1
    return f"{candidates[0]}{index}"
