"""Apply the edits the rules asked for, in one pass over the tree.

Only the spines that lead to an edited node are visited and rebuilt; every other subtree is kept
as the very same object, so the cost is proportional to the edits, not to the file.
"""

from __future__ import annotations

from typing import List, Sequence, Union

import libcst as cst

from porter.context import FileContext, _Deferred
from porter.cstutil import leading_blank_count


class _Applier(cst.CSTTransformer):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx

    def on_visit(self, node: cst.CSTNode) -> bool:
        return id(node) in self.ctx.dirty

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[override]
        ctx = self.ctx
        if isinstance(updated_node, (cst.Module, cst.IndentedBlock)) and id(original_node) in ctx.dirty:
            updated_node = _rebuild_block(ctx, original_node, updated_node)  # type: ignore[arg-type]
        for _, replacement in ctx.replacements.get(id(original_node), ()):
            updated_node = replacement(updated_node) if callable(replacement) else replacement
        if id(original_node) in ctx.dirty:
            ctx.latest[id(original_node)] = updated_node
        return updated_node


def _rebuild_block(ctx: FileContext, original: Union[cst.Module, cst.IndentedBlock],
                   updated: Union[cst.Module, cst.IndentedBlock]):
    """Removals, insertions and wraps among the statements of one block."""
    originals: Sequence[cst.BaseStatement] = original.body
    segments: List[List[cst.BaseStatement]] = []
    leading: List[List[cst.BaseStatement]] = []
    trailing: List[List[cst.BaseStatement]] = []
    for old, new in zip(originals, updated.body):
        leading.append(_expand(ctx.inserted_before.get(id(old), ())))
        trailing.append(list(ctx.inserted_after.get(id(old), ())))
        if id(old) in ctx.removed:
            segments.append([])
        elif id(old) in ctx.unwrapped:
            segments.append(_unwrapped_body(new))
        else:
            segments.append([new])

    _no_doubled_blank_lines(ctx, originals, leading, segments)
    wraps = sorted(ctx.wraps.get(id(original), ()), key=lambda wrap: wrap.start)
    body: List[cst.BaseStatement] = []
    index = 0
    for wrap in wraps:
        while index < wrap.start:
            body += leading[index] + segments[index] + trailing[index]
            index += 1
        inner: List[cst.BaseStatement] = []
        for position in range(wrap.start, wrap.end + 1):
            if position != wrap.start:
                inner += leading[position]
            inner += segments[position]
            if position != wrap.end:
                inner += trailing[position]
        inner = [_unindented_blank_lines(statement) for statement in inner]
        shown = _kept_value(inner, wrap.shown_as)
        body += leading[wrap.start]
        if inner:
            body.append(_lift_leading_lines(wrap.build(inner), inner))
        body += shown + trailing[wrap.end]
        index = wrap.end + 1
    while index < len(originals):
        body += leading[index] + segments[index] + trailing[index]
        index += 1

    inserted = {id(statement) for group in leading for statement in group}
    body = _blank_lines_before_insertions(body, inserted)
    if isinstance(updated, cst.IndentedBlock) and not body:
        body = [cst.SimpleStatementLine([cst.Pass()])]
    return updated.with_changes(body=body)


def _no_doubled_blank_lines(ctx: FileContext, originals, leading, segments) -> None:
    """Definitions inserted before a removed statement end with their own blank lines (a body
    footer): the statement kept after them drops the blank lines above it (not its comments),
    which would double them."""
    for index, old in enumerate(originals[:-1]):
        if id(old) not in ctx.removed or not leading[index] or leading[index + 1] or not segments[index + 1]:
            continue
        if not getattr(getattr(leading[index][-1], "body", None), "footer", ()):
            continue
        following = segments[index + 1][0]
        lines = list(following.leading_lines)
        while lines and lines[0].comment is None:
            lines.pop(0)
        segments[index + 1][0] = following.with_changes(leading_lines=lines)


def _kept_value(inner: List[cst.BaseStatement], name) -> List[cst.BaseStatement]:
    """A notebook cell's last value, computed in the block: the bare expression that ends
    ``inner`` becomes ``name = ...`` (in place), and the statement returned shows ``name`` after
    the block, as the cell's output."""
    last = inner[-1] if inner and name is not None else None
    if not (isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 and isinstance(last.body[0], cst.Expr)):
        return []
    inner[-1] = last.with_changes(body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=last.body[0].value)])
    return [cst.SimpleStatementLine(body=[cst.Expr(cst.Name(name))])]


def _expand(statements) -> List[cst.BaseStatement]:
    """Inserted statements, with the deferred ones (``FileContext.move_before``) built now."""
    expanded: List[cst.BaseStatement] = []
    for statement in statements:
        expanded.extend(statement.build() if isinstance(statement, _Deferred) else [statement])
    return expanded


def _blank_lines_before_insertions(body: List[cst.BaseStatement], inserted) -> List[cst.BaseStatement]:
    """Statements inserted before a statement go below the blank lines that separated it from the
    code above (its comments stay with it)."""
    body = list(body)
    index = 0
    while index < len(body):
        if id(body[index]) not in inserted:
            index += 1
            continue
        start = index
        while index < len(body) and id(body[index]) in inserted:
            index += 1
        if index == len(body):
            break
        following = body[index]
        if isinstance(body[index - 1], (cst.FunctionDef, cst.ClassDef)):
            continue  # a new def or class carries its own blank lines, and so does what follows it
        lines = list(getattr(following, "leading_lines", ()))
        blanks = leading_blank_count(following)
        if blanks:
            body[index] = following.with_changes(leading_lines=lines[blanks:])
            first = body[start]
            # A new def brings its own two blank lines: the moved ones add only what it lacks.
            owned = leading_blank_count(first) if isinstance(first, (cst.FunctionDef, cst.ClassDef)) else 0
            missing = max(0, blanks - owned)
            body[start] = first.with_changes(leading_lines=(*lines[:missing], *first.leading_lines))
    return body


def _unindented_blank_lines(statement: cst.BaseStatement) -> cst.BaseStatement:
    """Blank lines above a statement moved into a deeper block stay empty: libcst would render
    them with the new block's indentation."""
    lines = getattr(statement, "leading_lines", ())
    if not any(line.indent and line.comment is None and not line.whitespace.value for line in lines):
        return statement
    return statement.with_changes(leading_lines=[
        line.with_changes(indent=False) if line.comment is None and not line.whitespace.value else line
        for line in lines
    ])


def _unwrapped_body(compound: cst.BaseCompoundStatement) -> List[cst.BaseStatement]:
    """The body of a compound statement, with its comments moved onto the first statement."""
    body = list(compound.body.body)
    if body and compound.leading_lines:
        first = body[0]
        body[0] = first.with_changes(leading_lines=(*compound.leading_lines, *first.leading_lines))
    return body


def _lift_leading_lines(wrapper: cst.BaseCompoundStatement, inner: List[cst.BaseStatement]):
    """Comments and blank lines above the first wrapped statement go above the new block."""
    first = wrapper.body.body[0] if isinstance(wrapper.body, cst.IndentedBlock) and wrapper.body.body else None
    if first is None or not getattr(first, "leading_lines", None) or first is not inner[0]:
        return wrapper
    lifted = first.with_changes(leading_lines=())
    body = wrapper.body.with_changes(body=[lifted, *wrapper.body.body[1:]])
    return wrapper.with_changes(leading_lines=(*wrapper.leading_lines, *first.leading_lines), body=body)


def apply_edits(ctx: FileContext) -> cst.Module:
    if not ctx.dirty:
        return ctx.module
    result = ctx.module.visit(_Applier(ctx))
    assert isinstance(result, cst.Module)
    return result
