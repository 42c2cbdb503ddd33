"""``# ipu-port: ignore`` and ``# ipu-port: ignore[IPU105,IPU3]`` comments.

A comment on a statement (on any of its lines) covers that statement; a comment on the first line
of a block (``with ...:  # ipu-port: ignore``, ``def main():  # ...``, a decorator line) covers the
whole compound statement, and one on an ``else:``/``except:``/``finally:`` line that clause. Covered means: the named rules (codes or prefixes; all rules without a
list) neither edit nor report anything anchored inside it, and edits that would move or replace it
are refused too. The FileContext enforces this, so a suppressed rewrite is skipped, not just hidden.

A comment on a line of its own covers nothing (it is reported as unused, IPU802, with
``--show-unused-suppressions``), as are comments that never stopped an edit or a finding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

import libcst as cst

MARKER = "ipu-port:"
# The clauses of a compound statement: a comment on their line covers that clause only.
_CLAUSES = (cst.Else, cst.ExceptHandler, cst.Finally)
_COMMENT = re.compile(r"#\s*ipu-port:\s*ignore\b(?:\[([^\]]*)\])?", re.IGNORECASE)


@dataclass(eq=False)
class Suppression:
    owner: Optional[cst.CSTNode]  # the statement covered; None for a comment on a line of its own
    anchor: cst.CSTNode  # where to report it
    codes: Tuple[str, ...]  # empty: every rule
    text: str
    used: bool = field(default=False)

    def covers(self, code: str) -> bool:
        return not self.codes or any(code.startswith(prefix) for prefix in self.codes)


def parse_comment(text: str) -> Optional[Tuple[str, ...]]:
    """The codes a comment names (``()`` for all), or None when it is no suppression."""
    match = _COMMENT.search(text)
    if match is None:
        return None
    if match.group(1) is None:
        return ()
    return tuple(part.strip().upper() for part in match.group(1).split(",") if part.strip())


def find(module: cst.Module) -> List[Suppression]:
    """Every suppression comment of the module, with the statement it covers. Walks the whole tree,
    comments included: called only for files whose text contains ``ipu-port:``."""
    found: List[Suppression] = []
    # (node, the innermost statement around it): a block's header comment is inside its compound
    # statement and outside the statements of its body, so it covers the compound statement.
    stack: List[Tuple[cst.CSTNode, Optional[cst.CSTNode]]] = [(module, None)]
    while stack:
        node, owner = stack.pop()
        if isinstance(node, cst.EmptyLine):  # a comment on a line of its own
            if node.comment is not None:
                codes = parse_comment(node.comment.value)
                if codes is not None:
                    found.append(Suppression(None, owner or module, codes, node.comment.value.strip()))
            continue
        if isinstance(node, cst.Comment):
            codes = parse_comment(node.value)
            if codes is not None and owner is not None:
                found.append(Suppression(owner, owner, codes, node.value.strip()))
            continue
        if isinstance(node, (cst.BaseStatement, *_CLAUSES)):
            owner = node
        stack.extend((child, owner) for child in reversed(node.children))
    return found
