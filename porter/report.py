"""Renderers: the per-file summary, unified diffs, JSON, and the rule table."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from porter.rule import Finding


@dataclass(frozen=True)
class FileOutcome:
    """What happened to one file."""

    path: str
    original: str = ""
    ported: str = ""
    findings: Tuple[Finding, ...] = ()
    error: Optional[str] = None

    @property
    def changed(self) -> bool:
        return self.error is None and self.ported != self.original

    @property
    def manual(self) -> int:
        return sum(1 for finding in self.findings if not finding.fixed)


def finding_line(path: str, finding: Finding) -> str:
    where = f"{path}:cell {finding.cell}:{finding.line}:{finding.column}" if finding.cell else (
        f"{path}:{finding.line}:{finding.column}")
    status = "fixed" if finding.fixed else "manual"
    return f"{where}: {finding.code} {finding.message} [{status}]"


def summary_lines(outcomes: Sequence[FileOutcome], written: bool) -> List[str]:
    """The closing summary: files, and the migration coverage (sites ported automatically vs left)."""
    changed = sum(1 for outcome in outcomes if outcome.changed)
    errors = sum(1 for outcome in outcomes if outcome.error)
    fixed = sum(1 for outcome in outcomes for finding in outcome.findings if finding.fixed)
    manual = sum(outcome.manual for outcome in outcomes)
    verb = "ported" if written else "would be ported"
    parts = [f"{changed} file{'s' if changed != 1 else ''} {verb}",
             f"{len(outcomes) - changed - errors} unchanged"]
    if errors:
        parts.append(f"{errors} with errors")
    lines = [", ".join(parts) + "."]
    total = fixed + manual
    if total:
        lines.append(
            f"Coverage: {fixed} site{'s' if fixed != 1 else ''} ported automatically, {manual} left for "
            f"a person ({100 * fixed / total:.0f}% automatic)."
        )
    return lines


def unified_diff(outcome: FileOutcome) -> str:
    old = outcome.original.splitlines(keepends=True)
    new = outcome.ported.splitlines(keepends=True)
    lines = []
    for line in difflib.unified_diff(old, new, fromfile=f"a/{outcome.path}", tofile=f"b/{outcome.path}"):
        lines.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(lines)


def print_colored_diff(diff: str, console) -> None:
    from rich.text import Text

    for line in diff.splitlines():
        style = ""
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        console.print(Text(line, style=style), soft_wrap=True, highlight=False)


def to_json(outcomes: Sequence[FileOutcome], rule_names) -> str:
    files = []
    for outcome in outcomes:
        files.append({
            "path": outcome.path,
            "changed": outcome.changed,
            "error": outcome.error,
            "findings": [
                {"code": finding.code, "name": rule_names.get(finding.code, ""), "line": finding.line,
                 "column": finding.column, "cell": finding.cell, "message": finding.message,
                 "fixed": finding.fixed}
                for finding in outcome.findings
            ],
        })
    fixed = sum(1 for outcome in outcomes for finding in outcome.findings if finding.fixed)
    manual = sum(outcome.manual for outcome in outcomes)
    summary = {
        "files": len(outcomes),
        "changed": sum(1 for outcome in outcomes if outcome.changed),
        "errors": sum(1 for outcome in outcomes if outcome.error),
        "fixed": fixed,
        "manual": manual,
    }
    return json.dumps({"files": files, "summary": summary}, indent=2)
