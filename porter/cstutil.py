"""Small helpers for reading and building libcst nodes, shared by the rules."""

from __future__ import annotations

from functools import lru_cache
from typing import List, Optional, Sequence, Tuple

import libcst as cst


def keyword(call: cst.Call, name: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional(call: cst.Call) -> List[cst.Arg]:
    return [arg for arg in call.args if arg.keyword is None and not arg.star]


def argument(call: cst.Call, name: str, position: int) -> Optional[cst.Arg]:
    """The argument bound to parameter ``name``, passed by keyword or at ``position``."""
    found = keyword(call, name)
    if found is not None:
        return found
    args = positional(call)
    return args[position] if len(args) > position else None


def is_name(node: Optional[cst.CSTNode], value: str) -> bool:
    return isinstance(node, cst.Name) and node.value == value


def is_true(node: Optional[cst.CSTNode]) -> bool:
    return is_name(node, "True")


def is_false(node: Optional[cst.CSTNode]) -> bool:
    return is_name(node, "False")


def string_value(node: Optional[cst.CSTNode]) -> Optional[str]:
    """The value of a plain string literal, else None."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


# Parsing a snippet costs about a millisecond, so each snippet is parsed once; every use gets its
# own copy, since one node object in two places of a tree confuses the index (porter.context).
def is_main_guard(statement: cst.CSTNode) -> bool:
    """``if __name__ == "__main__":`` with no other branch: the code a script runs only when it is
    run, not imported."""
    if not (isinstance(statement, cst.If) and statement.orelse is None
            and isinstance(statement.test, cst.Comparison) and len(statement.test.comparisons) == 1):
        return False
    test = statement.test
    sides = (test.left, test.comparisons[0].comparator)
    return isinstance(test.comparisons[0].operator, cst.Equal) and any(is_name(side, "__name__") for side in sides) \
        and any(string_value(side) == "__main__" for side in sides)


def expression(code: str) -> cst.BaseExpression:
    return _parsed_expression(code).deep_clone()


def statement(code: str) -> cst.BaseStatement:
    return _parsed_statement(code).deep_clone()


def statements(code: str) -> List[cst.BaseStatement]:
    return [node.deep_clone() for node in _module_body(code)]


@lru_cache(maxsize=1024)
def _parsed_expression(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


@lru_cache(maxsize=1024)
def _parsed_statement(code: str) -> cst.BaseStatement:
    return cst.parse_statement(code)


@lru_cache(maxsize=256)
def _module_body(code: str):
    return tuple(cst.parse_module(code).body)


def keyword_arg(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(
        keyword=cst.Name(name),
        value=value,
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )


def with_args(call: cst.Call, args: Sequence[cst.Arg]) -> cst.Call:
    """Replace the arguments of ``call``, keeping its comma, line-break and trailing-comma style."""
    old = list(call.args)
    args = list(args)
    if not old or not args:
        return call.with_changes(args=[arg.with_changes(comma=cst.MaybeSentinel.DEFAULT) if i == len(args) - 1
                                       else arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                                       for i, arg in enumerate(args)])
    kept_commas = {id(arg): arg.comma for arg in old[:-1]}
    separator = next(
        (arg.comma for arg in old[:-1] if isinstance(arg.comma, cst.Comma)),
        cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
    )
    trailing = old[-1].comma if isinstance(old[-1].comma, cst.Comma) else cst.MaybeSentinel.DEFAULT
    closing_space = old[-1].whitespace_after_arg  # the space (or line break) before ")"
    fixed = []
    for index, arg in enumerate(args):
        if index == len(args) - 1:
            fixed.append(arg.with_changes(comma=trailing, whitespace_after_arg=closing_space))
        else:
            fixed.append(arg.with_changes(
                comma=kept_commas.get(id(arg), separator),
                whitespace_after_arg=cst.SimpleWhitespace("") if arg is old[-1] else arg.whitespace_after_arg,
            ))
    return call.with_changes(args=fixed)


def append_args(call: cst.Call, *new: cst.Arg) -> cst.Call:
    """``call`` with ``new`` arguments after its own. A call written on several lines gives each
    new argument a line of its own, lined up as its last line break does, when each of its
    arguments has a line of its own or the new ones would make its last line too long. A keyword
    the call already has is not added again: Python rejects a call that repeats one, and two
    rules may ask for the same argument on one call."""
    present = {arg.keyword.value for arg in call.args if arg.keyword is not None}
    new = tuple(arg for arg in new if arg.keyword is None or arg.keyword.value not in present)
    appended = with_args(call, [*call.args, *new])
    old = list(call.args)
    breaks = [arg.comma for arg in old[:-1] if _breaks_line(arg.comma)]
    if not breaks or not new:
        return appended
    last_line = cst.Module(body=[]).code_for_node(appended).rsplit("\n", 1)[-1]
    # (4 more columns: the port may put the statement in a `with` block)
    if len(breaks) < len(old) - 1 and len(last_line) + 4 <= LINE_LIMIT:
        return appended
    args = list(appended.args)
    for index in range(len(old) - 1, len(args) - 1):
        args[index] = args[index].with_changes(comma=breaks[-1])
    return appended.with_changes(args=args)


# The longest line the port writes when it breaks a call it changes.
LINE_LIMIT = 100


def _breaks_line(comma) -> bool:
    return isinstance(getattr(comma, "whitespace_after", None), cst.ParenthesizedWhitespace)


def replace_arg(call: cst.Call, index: int, new: cst.Arg) -> cst.Call:
    """Replace the argument at ``index`` (as in the original call), keeping its comma."""
    args = list(call.args)
    args[index] = new.with_changes(comma=args[index].comma, whitespace_after_arg=args[index].whitespace_after_arg)
    return call.with_changes(args=args)


def remove_arg(call: cst.Call, index: int) -> cst.Call:
    return with_args(call, [arg for position, arg in enumerate(call.args) if position != index])


def call_root(node: cst.BaseExpression) -> cst.BaseExpression:
    """The start of a method chain: ``a.b(1).c(2)`` -> ``a.b(1)``'s ``a``... specifically the first
    expression that is neither a call on an attribute nor an attribute."""
    while True:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            node = node.func.value
        elif isinstance(node, cst.Attribute):
            node = node.value
        else:
            return node


# ------------------------------------------------------------------------------ statement shapes
def as_receiver(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` ready to take ``.method(...)``: parenthesised when it is not a name, an attribute, a
    subscript or a call (``a if t else b`` would otherwise give the method to ``b`` alone)."""
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)) or expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def alternatives(node: cst.BaseExpression) -> List[cst.BaseExpression]:
    """What ``node`` may evaluate to: each branch of ``a if test else b`` (nested ones too), else
    ``node`` itself."""
    if isinstance(node, cst.IfExp):
        return alternatives(node.body) + alternatives(node.orelse)
    return [node]


def single_small(statement: cst.CSTNode) -> Optional[cst.BaseSmallStatement]:
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        return statement.body[0]
    return None


def expr_call(statement: cst.CSTNode) -> Optional[cst.Call]:
    """The call of an expression statement ``f(...)``."""
    small = single_small(statement)
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        return small.value
    return None


def method_of(call: Optional[cst.CSTNode], *methods: str) -> Optional[cst.BaseExpression]:
    """The receiver of ``receiver.method(...)`` when the method is one of ``methods``."""
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in methods:
        return call.func.value
    return None


def name_of(node: Optional[cst.CSTNode]) -> Optional[str]:
    return node.value if isinstance(node, cst.Name) else None


def simple_assign(statement: cst.CSTNode) -> Optional[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    """(target, value) of ``target = value`` with a single target."""
    small = single_small(statement)
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        return small.targets[0].target, small.value
    return None


def assigned_name(statement: cst.CSTNode) -> Optional[str]:
    found = simple_assign(statement)
    return name_of(found[0]) if found else None


def target_place(target: cst.BaseExpression, name: str) -> Optional[List[int]]:
    """Where a tuple target binds ``name``: ``[1, 0]`` for ``x`` in ``_, (x, y) = ...``; None when it
    does not (or a starred target makes the places uncertain)."""
    if not isinstance(target, (cst.Tuple, cst.List)) or any(
            isinstance(element, cst.StarredElement) for element in target.elements):
        return None
    for index, element in enumerate(target.elements):
        if is_name(element.value, name):
            return [index]
        inner = target_place(element.value, name)
        if inner is not None:
            return [index, *inner]
    return None


def element_at(value: cst.BaseExpression, place: List[int]) -> Optional[cst.BaseExpression]:
    """The element of a tuple written out (``return x[:n], y[:n]``) at ``place``, through nested ones."""
    for index in place:
        if not isinstance(value, (cst.Tuple, cst.List)) or len(value.elements) <= index or any(
                isinstance(element, cst.StarredElement) for element in value.elements):
            return None
        value = value.elements[index].value
    return value


def leading_blank_count(statement: cst.CSTNode) -> int:
    """How many blank lines (before any comment) open a statement's leading lines."""
    lines = getattr(statement, "leading_lines", ())
    count = 0
    while count < len(lines) and lines[count].comment is None:
        count += 1
    return count
