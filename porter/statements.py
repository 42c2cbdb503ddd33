"""Statement edits through the ``FileContext`` that keep the file's layout: blank lines around new
module-level code, comments of removed statements, names replaced in copied code."""

from __future__ import annotations

from typing import Dict, Optional, Sequence, Set, Tuple

import libcst as cst

from porter.context import FileContext, SharedKey
from porter.cstutil import argument, expression, is_name, leading_blank_count, simple_assign, single_small

# The comments and blank lines of removed statements that the next statement kept must carry, by
# that statement's id: the rules removing statements (IPU305, IPU307, IPU309) pass them along.
CARRIED_LINES: SharedKey[Dict[int, Tuple[cst.EmptyLine, ...]]] = SharedKey("carried-lines", dict)


def rename(node: cst.CSTNode, mapping: Dict[str, str]) -> cst.CSTNode:
    """Replace read names by expressions (``model`` -> ``self.model``) in a small subtree."""
    return node.visit(_Renamer(mapping))


class _Renamer(cst.CSTTransformer):
    def __init__(self, mapping: Dict[str, str]) -> None:
        super().__init__()
        self.mapping = mapping
        self.protected: Set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self.protected.add(id(node.attr))
        return True

    def visit_Arg(self, node: cst.Arg) -> bool:
        if node.keyword is not None:
            self.protected.add(id(node.keyword))
        return True

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        if id(original) in self.protected or original.value not in self.mapping:
            return updated
        return expression(self.mapping[original.value])


def first_code_statement(ctx: FileContext) -> Optional[cst.BaseStatement]:
    """The first module statement after the docstring and the imports."""
    for index, statement in enumerate(ctx.module.body):
        small = single_small(statement)
        if index == 0 and isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString,
                                                                                   cst.ConcatenatedString)):
            continue
        if isinstance(statement, cst.SimpleStatementLine) and all(
                isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body):
            continue
        return statement
    return None


def blank_lines(count: int) -> Tuple[cst.EmptyLine, ...]:
    return tuple(cst.EmptyLine(indent=False, whitespace=cst.SimpleWhitespace("")) for _ in range(count))


def ensure_blank_lines(ctx: FileContext, statement: cst.BaseStatement, count: int = 2) -> None:
    """Make sure at least ``count`` blank lines precede ``statement`` (after a new class)."""
    def pad(node):
        blanks = leading_blank_count(node)
        if blanks >= count:
            return node
        return node.with_changes(leading_lines=(*blank_lines(count - blanks), *node.leading_lines))
    ctx.replace(statement, pad)


def insert_module_class(ctx: FileContext, new: cst.BaseStatement, before: cst.BaseStatement) -> None:
    """Put a new module-level class after the last class defined before ``before`` (a module
    statement), or else before the first statement after the imports."""
    body = list(ctx.module.body)
    new = new.with_changes(leading_lines=blank_lines(2))
    classes = [s for s in body[:body.index(before)] if isinstance(s, cst.ClassDef)]
    if classes:
        ctx.insert_after(classes[-1], [new])
        return
    first = first_code_statement(ctx) or before
    ctx.insert_before(first, [new])
    if not isinstance(first, (cst.FunctionDef, cst.ClassDef)):
        ensure_blank_lines(ctx, first)


def unwrap_call(ctx: FileContext, call: cst.Call, parameter: str) -> None:
    """``call`` becomes the argument it wraps (``parameter``, else the first): ``wrap(x, ...)`` ->
    ``x``, and a statement ``x = wrap(x, ...)``, which would give ``x`` to itself, goes."""
    statement = ctx.statement_of(call)
    assign = simple_assign(statement)
    if assign is not None and assign[1] is call and isinstance(assign[0], cst.Name) and is_name(
            argument(call, parameter, 0).value, assign[0].value):
        remove_statement(ctx, statement)
    else:
        # The argument as edited: other rules' edits inside it (`hvd.size()` made 1) are kept.
        ctx.replace(call, lambda node: argument(node, parameter, 0).value)


def remove_statement(ctx: FileContext, *statements: cst.BaseStatement, own_comments: bool = False) -> None:
    """Remove statements; their comments and blank lines go to the next statement kept. With
    ``own_comments``, the comment lines right above a statement (no blank line between) go with
    it when every statement of its paragraph (up to the next blank or comment line) goes too:
    they describe only what went (``# Step weights`` above ``optimizer.step()``)."""
    for statement in statements:
        ctx.remove(statement)
    for statement in statements:
        _move_lines(ctx, statement, own_comments and _paragraph_removed(ctx, statement))


def _paragraph_removed(ctx: FileContext, statement: cst.BaseStatement) -> bool:
    siblings = list(ctx.siblings(statement))
    for sibling in siblings[siblings.index(statement) + 1:]:
        if sibling.leading_lines:
            break
        if not ctx.is_removed(sibling):
            return False
    return True


def _attached_comments(lines) -> int:
    """How many of ``lines`` at their end are comment lines, with no blank line after them."""
    count = 0
    for line in reversed(lines):
        if line.comment is None:
            break
        count += 1
    return count


def keep_blank_lines(ctx: FileContext, removed: Sequence[cst.BaseStatement]) -> None:
    """A blank line above a removed run of statements stays above the statement after it."""
    gone = {id(statement) for statement in removed}
    for statement in removed:
        siblings = list(ctx.siblings(statement))
        index = siblings.index(statement)
        if index > 0 and id(siblings[index - 1]) in gone:
            continue  # not the first of its run
        blanks = [line for line in getattr(statement, "leading_lines", ()) if line.comment is None]
        if not blanks:
            continue
        after = index + 1
        while after < len(siblings) and id(siblings[after]) in gone:
            after += 1
        if index == 0 or after >= len(siblings):
            continue
        following = siblings[after]
        if any(line.comment is None for line in following.leading_lines[:1]):
            continue
        ctx.replace(following, lambda node, blank=blanks[0]: node.with_changes(
            leading_lines=(blank, *node.leading_lines)))


def _move_lines(ctx: FileContext, statement: cst.BaseStatement, drop_comments: bool = False) -> None:
    carried = ctx.shared(CARRIED_LINES)
    own = tuple(statement.leading_lines)
    if drop_comments:
        own = own[:len(own) - _attached_comments(own)]
    lines = (*carried.pop(id(statement), ()), *own)
    siblings = list(ctx.siblings(statement))
    if statement not in siblings:
        return
    index = siblings.index(statement)
    following = [s for s in siblings[index + 1:] if not ctx.is_removed(s)]
    if not following:
        return
    target = following[0]
    if all(ctx.is_removed(s) for s in siblings[:index]) and isinstance(ctx.block_of(statement), cst.IndentedBlock):
        # The next statement now opens the block: no blank line above it.
        lines = tuple(line for line in lines if line.comment is not None)
        ctx.replace(target, lambda node: node.with_changes(
            leading_lines=[line for line in node.leading_lines if line.comment is not None]))
    if not lines:
        return
    inserted = ctx.inserted_before.get(id(target))
    if inserted:
        # Statements inserted above the next one come first: the lines go above them.
        own = tuple(inserted[0].leading_lines)
        if not (all(line.comment is None for line in lines) and own and own[0].comment is None):
            inserted[0] = inserted[0].with_changes(leading_lines=(*lines, *own))
        return
    if id(target) not in carried:
        # Read when the edits are applied: a later removal of ``target`` carries the lines on.
        ctx.replace(target, lambda node, key=id(target): _prepend(node, carried.get(key, ())))
    carried[id(target)] = (*carried.get(id(target), ()), *lines)


def _prepend(node: cst.BaseStatement, lines) -> cst.BaseStatement:
    own = tuple(node.leading_lines)
    if not lines or (all(line.comment is None for line in lines) and own and own[0].comment is None):
        return node
    return node.with_changes(leading_lines=(*lines, *own))
