"""FileOutcome: what porting did to one file. The API and the notebook support make them, the
renderers (porter.report) read them; this module reads neither, so neither depends on the other."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

from porter.rule import Finding


@dataclass(frozen=True)
class FileOutcome:
    """What happened to one file."""

    path: str
    original: str = ""
    ported: str = ""
    findings: Tuple[Finding, ...] = ()
    error: Optional[str] = None
    # Notebooks: (cell number, source before, source after) for each code cell, for --diff.
    cells: Optional[Tuple[Tuple[int, str, str], ...]] = None

    @property
    def changed(self) -> bool:
        return self.error is None and self.ported != self.original

    @property
    def manual(self) -> int:
        """Errors and warnings: what a person must do (notes are advice)."""
        return sum(1 for finding in self.findings if finding.blocking)

    @property
    def notes(self) -> int:
        return sum(1 for finding in self.findings if not finding.fixed and not finding.blocking)
