"""Imports of IPU API names that an SDK removed, for the rules that upgrade their uses (IPU010,
IPU011): once every use is upgraded the import line must go too, or it fails at import time."""

from __future__ import annotations

from typing import Collection, Set

import libcst as cst

from porter.context import FileContext, dotted_name


def removed_imports(ctx: FileContext, module: str):
    """``(line, node, [(imported name, local name)])`` for ``from module import ...`` lines."""
    for node in ctx.nodes(cst.ImportFrom):
        if node.relative or node.module is None or dotted_name(node.module) != module:
            continue
        line = ctx.parent(node)
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            continue
        if isinstance(node.names, cst.ImportStar):
            yield line, node, None
            continue
        yield line, node, [(dotted_name(alias.name),
                            alias.asname.name.value if alias.asname is not None else dotted_name(alias.name))
                           for alias in node.names]


def all_uses_upgraded(ctx: FileContext, local: str, upgraded: Set[int]) -> bool:
    """True when every use of ``local`` is the function of a call the rule upgraded (its id is in
    ``upgraded``)."""
    for name in ctx.nodes(cst.Name):
        if name.value != local:
            continue
        parent = ctx.parent(name)
        if isinstance(parent, (cst.ImportAlias, cst.AsName)):
            continue
        if not (isinstance(parent, cst.Call) and parent.func is name and id(parent) in upgraded):
            return False
    return True


def drop_removed_import(ctx: FileContext, code: str, module: str, removed: Collection[str], upgraded: Set[int],
                        message: str, instead: str) -> None:
    """``from module import ...`` lines naming ``removed`` API: dropped when they import nothing
    else and every use was upgraded, reported otherwise. ``message`` says what was removed when,
    ``instead`` where the names are now."""
    for line, node, names in removed_imports(ctx, module):
        if names is not None and not any(name in removed for name, _ in names):
            continue
        if names and all(name in removed and all_uses_upgraded(ctx, local, upgraded) for name, local in names) \
                and ctx.remove(line):
            ctx.report(code, node, f"{message}: import dropped, its uses upgraded", fixed=True)
        else:
            ctx.report(code, node, f"{message}: {instead}", fixed=False)
