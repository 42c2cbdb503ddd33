"""Add the imports the rules asked for: once, deduplicated, merged into an existing
``from module import ...`` where there is one, otherwise after the file's last top-level import,
or, when module-level code that the rules add or change uses a new name before that import, after
the last import above that code (a name must be bound before its first use).

libcst's ``AddImportsVisitor`` does the same, but importing ``libcst.codemod`` alone costs more than
the whole port of a typical file, so the porter keeps this small equivalent.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from porter.context import FileContext, _Deferred, bound_name, dotted_name, import_bindings, walk
from porter.cstutil import statement as parse_statement
from porter.scopes import loads
from porter.statements import remove_statement


def _import_statement(module: str, name: Optional[str], asname: Optional[str]) -> cst.SimpleStatementLine:
    alias = f" as {asname}" if asname else ""
    code = f"import {module}{alias}" if name is None else f"from {module} import {name}{alias}"
    statement = parse_statement(code)
    assert isinstance(statement, cst.SimpleStatementLine)
    return statement


def _top_level_imports(module: cst.Module) -> List[cst.SimpleStatementLine]:
    """Module-level import lines that come before the first function or class."""
    found = []
    for statement in module.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            break
        if isinstance(statement, cst.SimpleStatementLine) and any(
            isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
        ):
            found.append(statement)
    return found


def insertion_point(ctx: FileContext, names: Set[str]) -> Tuple[Optional[cst.BaseStatement], bool]:
    """Where new module-level code that binds ``names`` goes (the imports the rules ask for, a
    rule's helper functions): ``(statement, after)``; ``(None, _)`` for the top of the file."""
    imports = _top_level_imports(ctx.module)
    if not imports:
        return None, True
    body = ctx.module.body
    first_use = _first_use(ctx, names, body.index(imports[-1]))
    if first_use is None:
        return imports[-1], True
    earlier = [line for line in imports if body.index(line) < first_use]
    return (earlier[-1], True) if earlier else (body[first_use], False)


def _first_use(ctx: FileContext, names: Set[str], end: int) -> Optional[int]:
    """The index of the first module-level statement before ``end`` where the rules' edits bring
    in one of ``names`` (functions and classes aside: their code runs when called)."""
    for index, statement in enumerate(ctx.module.body[:end]):
        if not isinstance(statement, (cst.FunctionDef, cst.ClassDef)) and _edits_use(ctx, statement, names):
            return index
    return None


def _edits_use(ctx: FileContext, statement: cst.BaseStatement, names: Set[str]) -> bool:
    key = id(statement)
    new_code: List[object] = [*ctx.inserted_before.get(key, ()), *ctx.inserted_after.get(key, ())]
    if key in ctx.dirty:
        for node in walk(statement):
            for original, replacement in ctx.replacements.get(id(node), ()):
                new_code.append(replacement(original) if callable(replacement) else replacement)
    for code in new_code:
        if isinstance(code, _Deferred) or not isinstance(code, cst.CSTNode):
            return True  # built when the edits are applied: assume it uses them
        if any(isinstance(node, cst.Name) and node.value in names for node in walk(code)):
            return True
    return False


def _is_docstring_or_future(statement: cst.BaseStatement) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    small = statement.body[0]
    if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
        return True
    return isinstance(small, cst.ImportFrom) and dotted_name(small.module or cst.Name("x")) == "__future__"


def _mergeable_from(ctx: FileContext, module: str, anchor: Optional[cst.BaseStatement]) -> Optional[cst.ImportFrom]:
    """An import line, up to ``anchor``, that the new name can join."""
    lines = _top_level_imports(ctx.module)
    for line in lines[:lines.index(anchor) + 1] if anchor in lines else ():
        for small in line.body:
            if (isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None
                    and dotted_name(small.module) == module and not isinstance(small.names, cst.ImportStar)):
                return small
    return None


def _add_alias(name: str, asname: Optional[str]):
    def merge(node: cst.ImportFrom) -> cst.ImportFrom:
        names = list(node.names)
        last = names[-1]
        trailing_comma = isinstance(last.comma, cst.Comma)
        if not trailing_comma:
            names[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        alias = cst.ImportAlias(
            name=cst.Name(name),
            asname=cst.AsName(cst.Name(asname)) if asname else None,
            comma=cst.Comma() if trailing_comma else cst.MaybeSentinel.DEFAULT,
        )
        return node.with_changes(names=[*names, alias])

    return merge


def _same_alias(left: cst.ImportAlias, right: cst.ImportAlias) -> bool:
    return dotted_name(left.name) == dotted_name(right.name) and bound_name(left) == bound_name(right)


def _from_imports(moves: List[Tuple[cst.ImportAlias, str]]) -> List[cst.ImportFrom]:
    """``from module import a, b as c`` for each new module of ``moves``, in their order."""
    names: Dict[str, List[str]] = {}
    for alias, module in moves:
        asname = bound_name(alias)
        name = dotted_name(alias.name) or asname
        names.setdefault(module, []).append(name if asname == name else f"{name} as {asname}")
    found = []
    for module, aliases in names.items():
        statement = parse_statement(f"from {module} import {', '.join(aliases)}")
        assert isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.ImportFrom)
        found.append(statement.body[0])
    return found


def _without(moved: List[cst.ImportAlias]):
    """The import with the ``moved`` names left out (the new last name takes the old last comma)."""
    def drop(updated):
        kept = [alias for alias in updated.names if not any(_same_alias(alias, gone) for gone in moved)]
        if kept and kept[-1] is not updated.names[-1]:
            kept[-1] = kept[-1].with_changes(comma=updated.names[-1].comma)
        return updated.with_changes(names=kept) if kept else updated

    return drop


def _moved_whole(updated: cst.CSTNode, new: cst.ImportFrom) -> cst.CSTNode:
    """An import whose every name moves to ``new``'s module: a ``from`` import keeps its names as
    written (parentheses, comments), only its module changes."""
    if isinstance(updated, cst.ImportFrom):
        return updated.with_changes(module=new.module, relative=())
    return new.with_changes(semicolon=getattr(updated, "semicolon", cst.MaybeSentinel.DEFAULT))


def _apply_moves(ctx: FileContext, bound: Dict[str, str]) -> None:
    """The imports the rules take from another module (``FileContext.move_import``) or drop
    (``FileContext.drop_import``), in place: an import whose every name moves or is dropped becomes
    the new import (the first, when they go to several modules), or goes when none moves; otherwise
    the moved and dropped names leave it. Other new imports follow its line."""
    owners: Dict[int, Tuple[cst.CSTNode, List[Tuple[cst.ImportAlias, Optional[str]]]]] = {}
    for alias, module in ctx.moved_imports:
        owner = ctx.parent(alias)
        owners.setdefault(id(owner), (owner, []))[1].append((alias, module))
        if module is not None:
            bound[bound_name(alias)] = f"{module}.{dotted_name(alias.name)}"
        else:
            bound.pop(bound_name(alias), None)
    for owner, moves in owners.values():
        moved = [(alias, module) for alias, module in moves if module is not None]
        dropped = [alias for alias, module in moves if module is None]
        new_imports = _from_imports(moved)
        assert isinstance(owner, (cst.Import, cst.ImportFrom))
        if len(moves) < len(owner.names):
            ctx.replace(owner, _without([alias for alias, _ in moves]))
        elif new_imports:
            first = new_imports.pop(0)
            if dropped:
                ctx.replace(owner, _without(dropped))
            ctx.replace(owner, lambda updated, first=first: _moved_whole(updated, first))
        else:
            remove_statement(ctx, ctx.statement_of(owner))  # every name it imported is dropped
        if new_imports:
            statement = ctx.statement_of(owner)
            assert statement is not None
            ctx.insert_after(statement, [cst.SimpleStatementLine([new]) for new in new_imports])


def drop_imports_of_removed_code(ctx: FileContext) -> None:
    """A name of a module-level ``from`` import whose every use was in code the rules removed,
    replaced by code without it, or unwrapped (the ``disable_v2_behavior`` of ``from
    tensorflow.compat.v1 import disable_v2_behavior`` once its call goes, ``autocast`` once
    ``with autocast():`` goes) is left unused by the port: the name goes (the import with it
    when it binds nothing else), reported under the code of the rule that took its last use."""
    if not ctx.removed_by:
        return
    new_code = _new_code(ctx)
    if _unknown(new_code):
        return
    in_removed: Dict[int, Optional[str]] = {}  # the names read in removed code -> the remover's code
    for statement, code in ctx.removed_by.values():
        # an unwrapped statement (`with autocast():`) keeps its body; what a replacement keeps is
        # found in the new code
        kept = {id(name) for name in loads(statement.body)} if id(statement) in ctx.unwrapped else set()
        for name in loads(statement):
            if id(name) not in kept:
                in_removed.setdefault(id(name), code)
    uses = _uses_by_name(ctx)
    added = _names_in(new_code)
    # A module import (``import torch``) stays: it names the framework the file is written for.
    for alias in (alias for owner in ctx.nodes(cst.ImportFrom) if isinstance(owner.names, Sequence)
                  for alias in owner.names):
        local = bound_name(alias)
        read = uses.get(local, [])
        if not read or local in added or not all(id(name) in in_removed for name in read) or any(
                moved is alias for moved, _ in ctx.moved_imports):  # a rule changes it already, and says why
            continue
        code = in_removed[id(read[-1])]
        if code is not None and ctx.drop_import(alias):
            ctx.report(code, alias, f"`{local}` taken out of its import: its only uses were in code the "
                       "port removed or rewrote", fixed=True)


def _uses_by_name(ctx: FileContext) -> Dict[str, List[cst.Name]]:
    """The names the file reads, by name (the names of its import statements aside)."""
    in_imports = {id(node) for kind in (cst.Import, cst.ImportFrom) for statement in ctx.nodes(kind)
                  for node in walk(statement)}
    uses: Dict[str, List[cst.Name]] = {}
    for name in loads(ctx.module):
        if id(name) not in in_imports:
            uses.setdefault(name.value, []).append(name)
    return uses


def _new_code(ctx: FileContext) -> List[object]:
    """The statements the rules insert and the nodes their replacements build (None for one that
    can only be built when the edits are applied)."""
    code: List[object] = [statement for inserted in (ctx.inserted_before, ctx.inserted_after)
                          for statements in inserted.values() for statement in statements]
    for replacements in ctx.replacements.values():
        for original, replacement in replacements:
            if _goes(ctx, original):
                continue
            try:
                code.append(replacement(original) if callable(replacement) else replacement)
            except Exception:  # built for the node other edits made: its code is not known here
                code.append(None)
    return code


def _goes(ctx: FileContext, node: cst.CSTNode) -> bool:
    """Whether ``node`` is in a removed statement, or is one."""
    return id(node) in ctx.removed or any(id(ancestor) in ctx.removed for ancestor in ctx.ancestors(node))


def _unknown(new_code: List[object]) -> bool:
    """Whether some of the code the rules add (``_new_code``) is built only when the edits are applied."""
    return any(isinstance(code, _Deferred) or not isinstance(code, (cst.CSTNode, cst.RemovalSentinel))
               for code in new_code)


def _names_in(new_code: List[object]) -> Set[str]:
    return {node.value for code in new_code if isinstance(code, cst.CSTNode)
            for node in walk(code) if isinstance(node, cst.Name)}


def resolve_imports(ctx: FileContext) -> None:
    """Turn the import requests into edits; report each import actually added."""
    drop_imports_of_removed_code(ctx)
    bound = dict(ctx.aliases)
    _apply_moves(ctx, bound)
    new_lines: List[cst.SimpleStatementLine] = []
    locals_ = {asname or (name if name is not None else module.split(".")[0]) for module, name, asname, _ in ctx.imports}
    anchor, after = insertion_point(ctx, locals_) if ctx.imports else (None, True)
    for module, name, asname, code in ctx.imports:
        local = asname or (name if name is not None else module.split(".")[0])
        full = module if name is None else f"{module}.{name}"
        if name is None and asname is None:
            full = local
        if bound.get(local) == full:
            continue
        bound[local] = full
        text = (f"import {module}" if name is None else f"from {module} import {name}") + (
            f" as {asname}" if asname else "")
        existing = _mergeable_from(ctx, module, anchor if after else None) if name is not None else None
        if existing is not None:
            ctx.replace(existing, _add_alias(name, asname))
            ctx.report(code, existing, f"added `{text}`", fixed=True)
            continue
        new_lines.append(_import_statement(module, name, asname))
        ctx.report(code, anchor if anchor is not None else ctx.module, f"added `{text}`", fixed=True)
    if not new_lines:
        return
    if anchor is not None:
        if after:
            ctx.insert_after(anchor, new_lines)
        else:  # ahead of the code the rules put before that statement: it is what uses the names
            ctx.insert_before(anchor, new_lines, first=True)
        return
    body = ctx.module.body
    leading = 0
    while leading < len(body) and _is_docstring_or_future(body[leading]):
        leading += 1
    if leading:
        ctx.insert_after(body[leading - 1], new_lines)
    elif body:
        ctx.insert_before(body[0], new_lines, first=True)
    else:
        ctx.replace(ctx.module, lambda module: module.with_changes(body=new_lines))


__all__ = ["resolve_imports", "import_bindings"]
