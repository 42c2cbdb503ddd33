"""Line and column of a few nodes, found with one plain render of the module.

libcst's ``PositionProvider`` records a range for every node, which costs about twice the parse;
findings need the start of a handful of nodes only. This render notes where those nodes start and
counts newlines only up to them.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Tuple

import libcst as cst
from libcst._nodes.internal import CodegenState


class _AnchorState(CodegenState):
    def __init__(self, module: cst.Module, wanted: Dict[int, cst.CSTNode]) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.wanted = wanted
        self.found: Dict[int, Tuple[int, int]] = {}
        self._line = 1
        self._column = 0
        self._scanned = 0

    def _advance(self) -> None:
        tokens: List[str] = self.tokens
        for token in tokens[self._scanned:]:
            newlines = token.count("\n") + token.count("\r") - token.count("\r\n")
            if newlines:
                self._line += newlines
                self._column = len(token) - max(token.rfind("\n"), token.rfind("\r")) - 1
            else:
                self._column += len(token)
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


def positions(module: cst.Module, anchors: Iterable[cst.CSTNode]) -> Dict[int, Tuple[int, int]]:
    """Map ``id(node)`` to its 1-based (line, column) for each anchor found in ``module``."""
    wanted = {id(node): node for node in anchors}
    if not wanted:
        return {}
    state = _AnchorState(module, wanted)
    module._codegen(state)
    return state.found
