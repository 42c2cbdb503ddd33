"""Rendering a module, and the line and column of a few of its nodes.

libcst's renderer asks its state to record the position of every node it writes, through a
generator-based context manager that records nothing unless positions are wanted: about a third of
the render time. ``render`` gives the same text with a state whose recorder does nothing at all.

libcst's ``PositionProvider`` records a range for every node, which costs about twice the parse;
findings need the start of a handful of nodes only. ``positions`` renders the module, notes where
those nodes start, counts newlines only up to them, and stops once it has seen the last of them.
A top-level statement that holds none of them and whose line count is known (the port renders the
edited module, which shares every untouched statement with the original) is counted, not rendered.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Mapping, Optional, Tuple

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


def _line_breaks(text: str) -> int:
    return text.count("\n") + text.count("\r") - text.count("\r\n")


class _StatementsState(_RenderState):
    """Also notes which tokens each top-level statement rendered."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(module)
        self._statements = iter(module.body)
        self._next = next(self._statements, None)
        self._start = 0
        self.spans: List[Tuple[cst.CSTNode, int, int]] = []

    def before_codegen(self, node: cst.CSTNode) -> None:
        # No indent: a top-level statement, not the same object met inside a block.
        if node is self._next and not self.indent_tokens:
            self._start = len(self.tokens)

    def after_codegen(self, node: cst.CSTNode) -> None:
        if node is self._next and not self.indent_tokens:
            self.spans.append((node, self._start, len(self.tokens)))
            self._next = next(self._statements, None)


def render_counting_lines(module: cst.Module) -> Tuple[str, Dict[int, int]]:
    """``render(module)``, and the number of lines (by id) of each top-level statement whose text
    ends with its line break: the same statement takes as many lines at the top of any module with
    the same default indent and newline."""
    state = _StatementsState(module)
    module._codegen(state)
    tokens = state.tokens
    lines = {}
    for statement, start, end in state.spans:
        # (the last statement of a file without a final newline lost its line break)
        text = "".join(tokens[start:end]) if end <= len(tokens) else ""
        if text.endswith(("\n", "\r")):
            lines[id(statement)] = _line_breaks(text)
    return "".join(tokens), lines


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
        newlines = _line_breaks(text)
        if newlines:
            self._line += newlines
            self._column = len(text) - max(text.rfind("\n"), text.rfind("\r")) - 1
        else:
            self._column += len(text)
        self._scanned = len(tokens)

    def skip(self, lines: int) -> None:
        """Count ``lines`` whole lines that were not rendered."""
        self._advance()
        self._line += lines
        self._column = 0

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


def positions(module: cst.Module, anchors: Iterable[cst.CSTNode],
              skipped: Optional[Mapping[int, int]] = None) -> Dict[int, Tuple[int, int]]:
    """Map ``id(node)`` to its 1-based (line, column) for each anchor found in ``module``.

    ``skipped``: top-level statements (by id) that hold no anchor, and how many lines each takes;
    they are counted instead of rendered.
    """
    wanted = {id(node): node for node in anchors}
    if not wanted:
        return {}
    state = _AnchorState(module, wanted)
    try:
        if not skipped or id(module) in wanted:
            module._codegen(state)
        else:  # Module._codegen_impl up to the last statement, skipping what it can
            for line in module.header:
                line._codegen(state)
            for statement in module.body:
                lines = skipped.get(id(statement))
                if lines is None:
                    statement._codegen(state)
                else:
                    state.skip(lines)
    except _AllFound:
        pass
    return state.found
