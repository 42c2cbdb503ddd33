"""Renderers: the per-file summary, unified diffs, JSON, and the rule table."""

from __future__ import annotations

import os
from typing import Dict, List, Optional, Sequence, Tuple

from porter.markers import NOTICES
from porter.outcome import FileOutcome
from porter.rule import ERROR, NOTE, WARNING, Finding


# A fixed finding is code still to port (`--write` ports it); what is left for a person has the
# level of its severity.
_SARIF_LEVELS = {"fixed": "warning", ERROR: "error", WARNING: "warning", NOTE: "note"}
_GITHUB_LEVELS = {"fixed": "warning", ERROR: "error", WARNING: "warning", NOTE: "notice"}


def finding_line(path: str, finding: Finding) -> str:
    where = f"{path}:cell {finding.cell}:{finding.line}:{finding.column}" if finding.cell else (
        f"{path}:{finding.line}:{finding.column}")
    return f"{where}: {finding.code} {finding.message} [{finding.status}]"


def summary_lines(outcomes: Sequence[FileOutcome], written: bool) -> List[str]:
    """The closing summary: files, and the migration coverage (sites ported automatically vs left)."""
    changed = sum(1 for outcome in outcomes if outcome.changed)
    errors = sum(1 for outcome in outcomes if outcome.error)
    fixed = sum(1 for outcome in outcomes for finding in outcome.findings if finding.fixed)
    manual = sum(outcome.manual for outcome in outcomes)
    notes = sum(outcome.notes for outcome in outcomes)
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
    if notes:
        lines.append(f"{notes} note{'s' if notes != 1 else ''}: optional improvements, not counted.")
    return lines


def _label(side: str, path: str) -> str:
    """``a/train.py`` as git writes it; an absolute path is shown as it is."""
    return path if path.startswith("/") else f"{side}/{path}"


def unified_diff(outcome: FileOutcome) -> str:
    if outcome.cells is not None:
        return "".join(
            _diff(old, new, f"{outcome.path}:cell {number}") for number, old, new in outcome.cells if old != new)
    return _diff(outcome.original, outcome.ported, outcome.path)


def _diff(original: str, ported: str, name: str) -> str:
    import difflib  # only --diff and the reports that show diffs need it

    old = original.splitlines(keepends=True)
    new = ported.splitlines(keepends=True)
    lines = []
    for line in difflib.unified_diff(old, new, fromfile=_label("a", name), tofile=_label("b", name)):
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


def rule_info(codes) -> Dict[str, Tuple[str, str, str]]:
    """code -> (name, summary, help text) for the given codes: rules and the porter's notices.
    The rules are imported only when there is a code to describe."""
    codes = set(codes)
    info: Dict[str, Tuple[str, str, str]] = {code: NOTICES[code] for code in codes if code in NOTICES}
    if codes - set(info):
        from porter.rule import all_rules

        for rule in all_rules():
            if rule.code in codes:
                info[rule.code] = (rule.name, rule.summary, rule.rationale)
    return info


def _all_codes(outcomes: Sequence[FileOutcome]) -> List[str]:
    return sorted({finding.code for outcome in outcomes for finding in outcome.findings})


def _summary(outcomes: Sequence[FileOutcome]) -> Dict[str, int]:
    """Files, changed files, files with errors, and the sites ported automatically (fixed) and
    left for a person (manual): the coverage is fixed / (fixed + manual)."""
    return {
        "files": len(outcomes),
        "changed": sum(1 for outcome in outcomes if outcome.changed),
        "errors": sum(1 for outcome in outcomes if outcome.error),
        "fixed": sum(1 for outcome in outcomes for finding in outcome.findings if finding.fixed),
        "manual": sum(outcome.manual for outcome in outcomes),
        "notes": sum(outcome.notes for outcome in outcomes),
    }


def to_sarif(outcomes: Sequence[FileOutcome], version: str) -> str:
    """SARIF 2.1.0: one run, the rules that were reported in the driver, one result per finding.
    Notebook cells have no place in SARIF regions: the cell goes in the message and properties."""
    codes = _all_codes(outcomes)
    info = rule_info(codes)
    rules = []
    for code in codes:
        name, summary, help_text = info.get(code, (code.lower(), code, code))
        rules.append({
            "id": code,
            "name": name,
            "shortDescription": {"text": summary},
            "fullDescription": {"text": help_text},
            "help": {"text": f"{summary}\n\n{help_text}\n\nSee `ipu-port --explain {code}`."},
            "defaultConfiguration": {"level": "warning"},
        })
    index = {code: number for number, code in enumerate(codes)}
    cache: Dict[str, Dict[int, List[int]]] = {}
    results = []
    for outcome in outcomes:
        for finding in outcome.findings:
            where = f"cell {finding.cell}, line {finding.line}: " if finding.cell else ""
            status = "ported automatically" if finding.fixed else "needs a person"
            region = {"startLine": finding.line, "startColumn": finding.column}
            if finding.cell:
                region = {"startLine": _notebook_line(outcome, finding, cache) or 1}
            results.append({
                "ruleId": finding.code,
                "ruleIndex": index[finding.code],
                "level": _SARIF_LEVELS[finding.status],
                "message": {"text": f"{where}{finding.message} ({status})"},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": _uri(outcome.path)},
                    "region": region,
                }}],
                "properties": {"fixed": finding.fixed, "cell": finding.cell, "severity": finding.severity},
            })
    notifications = [
        {"level": "error", "message": {"text": f"{outcome.path}: {outcome.error}"},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(outcome.path)}}}]}
        for outcome in outcomes if outcome.error
    ]
    run = {
        "tool": {"driver": {
            "name": "ipu-port",
            "version": version,
            "informationUri": "https://github.com/graphcore/ipu-port",
            "rules": rules,
        }},
        "results": results,
        "invocations": [{"executionSuccessful": not notifications,
                         "toolExecutionNotifications": notifications}],
        "properties": {"summary": _summary(outcomes)},
    }
    document = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [run],
    }
    import json  # imported by the formats that need it, not at start-up

    return json.dumps(document, indent=2)


def _notebook_line(outcome: FileOutcome, finding: Finding, cache: Dict[str, Dict[int, List[int]]]) -> Optional[int]:
    """The line of the notebook file that holds a finding's cell line (machines point at the
    file; the message says ``cell N, line L``)."""
    if not outcome.original:
        return None
    from porter.notebook import file_line, json_lines

    lines = cache.get(outcome.path)
    if lines is None:
        lines = cache[outcome.path] = json_lines(outcome.original)
    return file_line(lines, finding.cell, finding.line)


def _uri(path: str) -> str:
    from urllib.parse import quote

    if path == "-":
        return "stdin"
    if os.path.isabs(path):
        return "file://" + quote(path.replace(os.sep, "/"))
    return quote(os.path.normpath(path).replace(os.sep, "/"))


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_lines(outcomes: Sequence[FileOutcome]) -> List[str]:
    """GitHub Actions workflow commands: one ``::warning`` per finding, ``::error`` per bad file."""
    lines = []
    cache: Dict[str, Dict[int, List[int]]] = {}
    for outcome in outcomes:
        path = _escape_property(os.path.normpath(outcome.path) if outcome.path != "-" else "-")
        if outcome.error:
            lines.append(f"::error file={path},title=ipu-port::{_escape_data(outcome.error)}")
        for finding in outcome.findings:
            status = "fixed by ipu-port --write" if finding.fixed else "needs a person"
            if finding.cell:
                line = _notebook_line(outcome, finding, cache)
                place = f"file={path},line={line}" if line else f"file={path}"
                message = f"cell {finding.cell}, line {finding.line}: {finding.message} ({status})"
            else:
                place = f"file={path},line={finding.line},col={finding.column}"
                message = f"{finding.message} ({status})"
            lines.append(f"::{_GITHUB_LEVELS[finding.status]} {place},title={finding.code}::{_escape_data(message)}")
    return lines


def to_json(outcomes: Sequence[FileOutcome], rule_names=None) -> str:
    if rule_names is None:
        rule_names = {code: name for code, (name, _, _) in rule_info(_all_codes(outcomes)).items()}
    files = []
    for outcome in outcomes:
        files.append({
            "path": outcome.path,
            "changed": outcome.changed,
            "error": outcome.error,
            "findings": [
                {"code": finding.code, "name": rule_names.get(finding.code, ""), "line": finding.line,
                 "column": finding.column, "cell": finding.cell, "message": finding.message,
                 "fixed": finding.fixed, "severity": finding.severity}
                for finding in outcome.findings
            ],
        })
    import json

    return json.dumps({"files": files, "summary": _summary(outcomes)}, indent=2)


def to_markdown(outcomes: Sequence[FileOutcome], written: bool) -> str:
    """A report to paste into a pull request or a porting guide: the summary, then per file with
    findings or changes a heading, the findings as a list with their codes, and the change as a
    fenced ``diff`` block of ``+``/``-`` lines (hunks only: the heading names the file)."""
    lines = ["# IPU port", "", " ".join(summary_lines(outcomes, written))]
    for outcome in outcomes:
        if not (outcome.findings or outcome.changed or outcome.error):
            continue
        lines += ["", f"## `{outcome.path}`", ""]
        if outcome.error:
            lines.append(f"- error: {outcome.error}")
        for finding in outcome.findings:
            where = f"cell {finding.cell}, line {finding.line}" if finding.cell else f"line {finding.line}"
            lines.append(f"- `{finding.code}` {where} ({finding.status}): {finding.message}")
        if outcome.changed:
            diff = _hunks(unified_diff(outcome).splitlines())
            fence = "```"
            while any(line.lstrip(" +-").startswith(fence) for line in diff):
                fence += "`"
            if outcome.findings or outcome.error:
                lines.append("")
            lines += [fence + "diff", *diff, fence]
    return "\n".join(lines) + "\n"


def _hunks(lines: List[str]) -> List[str]:
    """A unified diff without its ``---``/``+++`` file headers (a removed line that starts with
    ``-- `` is kept: a header is followed by ``+++`` and a hunk)."""
    kept = []
    index = 0
    while index < len(lines):
        if lines[index].startswith("--- ") and index + 2 < len(lines) and lines[index + 1].startswith("+++ ") \
                and lines[index + 2].startswith("@@"):
            index += 2
            continue
        kept.append(lines[index])
        index += 1
    return kept
