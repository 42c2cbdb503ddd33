"""Rendering a module, and the line and column of a few of its nodes.

libcst's renderer asks its state to record the position of every node it writes, through a
generator-based context manager that records nothing unless positions are wanted: about a third of
the render time. ``render`` gives the same text with a state whose recorder does nothing at all.

libcst's ``PositionProvider`` records a range for every node, which costs about twice the parse;
findings need the start of a handful of nodes only. ``positions`` renders the module, notes where
those nodes start, counts newlines only up to them, and stops once it has seen the last of them.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Tuple

import libcst as cst
from libcst._nodes.internal import CodegenState


class _NoRecord:
    """A context manager that does nothing (``contextlib.nullcontext`` costs more per use)."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc_info: object) -> None:
        return None


_NO_RECORD = _NoRecord()


class _RenderState(CodegenState):
    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)

    def record_syntactic_position(self, node, *, start_node=None, end_node=None) -> _NoRecord:
        return _NO_RECORD


def render(module: cst.Module) -> str:
    """``module.code``, the same text at about two thirds of the cost."""
    state = _RenderState(module)
    module._codegen(state)
    return "".join(state.tokens)


class _AnchorState(_RenderState):
    def __init__(self, module: cst.Module, wanted: Dict[int, cst.CSTNode]) -> None:
        super().__init__(module)
        self.wanted = wanted
        self.found: Dict[int, Tuple[int, int]] = {}
        self._line = 1
        self._column = 0
        self._scanned = 0

    def _advance(self) -> None:
        tokens: List[str] = self.tokens
        text = "".join(tokens[self._scanned:])  # counted in one go: per token is several times slower
        newlines = text.count("\n") + text.count("\r") - text.count("\r\n")
        if newlines:
            self._line += newlines
            self._column = len(text) - max(text.rfind("\n"), text.rfind("\r")) - 1
        else:
            self._column += len(text)
        self._scanned = len(tokens)

    def before_codegen(self, node: cst.CSTNode) -> None:
        if id(node) not in self.wanted:
            return
        self._advance()
        line, column = self._line, self._column
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            # A statement renders its leading blank and comment lines first, then the indent.
            line += len(node.leading_lines)
            column = sum(len(token) for token in self.indent_tokens)
        self.found[id(node)] = (line, column + 1)
        if len(self.found) == len(self.wanted):
            raise _AllFound  # the rest of the module does not need rendering


class _AllFound(Exception):
    pass


def positions(module: cst.Module, anchors: Iterable[cst.CSTNode]) -> Dict[int, Tuple[int, int]]:
    """Map ``id(node)`` to its 1-based (line, column) for each anchor found in ``module``."""
    wanted = {id(node): node for node in anchors}
    if not wanted:
        return {}
    state = _AnchorState(module, wanted)
    try:
        module._codegen(state)
    except _AllFound:
        pass
    return state.found
