"""port(source, config) -> PortResult: parse once, run the rules, apply their edits, verify.

The engine never raises for a bad input: a syntax error, a file too deeply nested for the parser,
or a port that fails its own checks comes back as ``PortResult.error``, with the source unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import libcst as cst

from porter.config import Config
from porter.context import FileContext
from porter.detect import uses_framework
from porter.edits import apply_edits
from porter.imports import resolve_imports
from porter.rule import Finding, Rule, all_rules, is_selected
from porter.markers import CELL_MARKER, UNPARSABLE, UNUSED_SUPPRESSION as UNUSED
from porter.parsing import ParseError, compiler_rejects, parse, python_rejects
from porter.positions import render, render_counting_lines
from porter.project import ALONE, Project
from porter.suppress import MARKER
from porter.suppress import find as find_suppressions


@dataclass(frozen=True)
class PortResult:
    source: str
    findings: Tuple[Finding, ...] = ()
    error: Optional[str] = None
    changed: bool = False


def rules_for(frameworks, config: Config) -> List[Rule]:
    return [
        rule for rule in all_rules()
        if rule.frameworks & frameworks and is_selected(rule.code, config.select, config.ignore)
    ]


def _parse(source: str) -> cst.Module:
    try:
        return parse(source)
    except ParseError as error:
        raise _PortError(str(error))


class _PortError(Exception):
    pass


def _run_rules(module: cst.Module, config: Config, source: str, cells: bool = False,
               project: Project = ALONE) -> FileContext:
    ctx = FileContext(module, config, project)
    if cells:
        ctx.barriers = {id(statement) for statement in module.body if is_cell_marker(statement)}
    suppressions = []
    if MARKER in source:
        suppressions = find_suppressions(module)
        ctx.suppress(suppressions)
    for rule in rules_for(ctx.frameworks, config):
        ctx.rule_code = rule.code
        try:
            rule.run(ctx)
        except RecursionError:
            raise _PortError(f"too deeply nested for rule {rule.code}")
        except Exception as error:  # a rule bug must not take the run down with it
            raise _PortError(f"internal error in {rule.code} ({rule.name}): {type(error).__name__}: {error}")
    ctx.rule_code = None
    ctx.drop_orphan_imports()
    resolve_imports(ctx)
    if config.show_unused_suppressions and is_selected(UNUSED, config.select, config.ignore):
        for suppression in suppressions:
            if not suppression.used:
                where = "on a line of its own covers nothing" if suppression.owner is None else (
                    "suppresses nothing here")
                ctx.report(UNUSED, suppression.anchor, f"`{suppression.text}` {where}; remove it", fixed=False)
    return ctx


def is_cell_marker(statement: cst.BaseStatement) -> bool:
    """``__ipu_port_cell__(N)``: the line porter.notebook puts before each code cell."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    return (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)
            and isinstance(small.value.func, cst.Name) and small.value.func.value == CELL_MARKER)


def port(source: str, config: Config = Config(), cells: bool = False, project: Project = ALONE) -> PortResult:
    """Port one module. With ``cells``, the source is a notebook's code cells joined by
    ``__ipu_port_cell__(N)`` lines (see porter.notebook): they are kept, and no block spans them.
    ``project``: what the files of its project ported with it tell about it (``porter.project``):
    a module that imports Keras code of its project is Keras code even when it imports no
    framework itself."""
    if not (uses_framework(source) or project.keras_import):
        return PortResult(source)
    try:
        ctx = _run_rules(_parse(source), config, source, cells, project)
        final, new_source = ctx, source
        if ctx.dirty:
            new_module, new_source, statement_lines = _render_edits(ctx)
            findings = tuple(ctx.findings(statement_lines))
            # the original index goes before the verification builds the new one
            ctx = final = None
            final = _verify(source, new_module, new_source, config, cells, project)
        else:
            findings = tuple(ctx.findings())
        if config.annotate:
            new_source = _annotate(final, new_source)
    except _PortError as error:
        return PortResult(source, error=str(error))
    except RecursionError:  # e.g. locating the findings in a very long expression
        return PortResult(source, error="too deeply nested to port")
    return PortResult(new_source, findings, changed=new_source != source)


def _render_edits(ctx: FileContext) -> Tuple[cst.Module, str, Optional[Dict[int, int]]]:
    """The edited module, its code, and the line count of its top-level statements when the
    original's untouched statements take the same lines (the same default indent and newline)."""
    try:
        new_module = apply_edits(ctx)
        new_source, statement_lines = render_counting_lines(new_module)
    except RecursionError:
        raise _PortError("too deeply nested to render")
    original = ctx.module
    if (new_module.default_indent, new_module.default_newline) != (original.default_indent,
                                                                   original.default_newline):
        return new_module, new_source, None
    return new_module, new_source, statement_lines


TODO = "# TODO(ipu-port {code}): {message}"
# The porter's own notices (porter.markers.NOTICES) never get a TODO.
PORTER_CODES = frozenset({UNPARSABLE, UNUSED})


def _annotate(ctx: FileContext, source: str) -> str:
    """Put ``# TODO(ipu-port CODE): what to do`` above the statement of each manual finding of the
    final code, unless that very line is already there: running again adds nothing."""
    todos = {}
    order = []
    for report in ctx.reports:
        if report.fixed or report.code in PORTER_CODES:
            continue
        statement = ctx.statement_of(report.anchor)
        if statement is None or not hasattr(statement, "leading_lines"):
            continue
        text = TODO.format(code=report.code, message=" ".join(report.message.split()))
        present = {line.comment.value.strip() for line in statement.leading_lines if line.comment is not None}
        if text in present or text in todos.get(id(statement), ()):
            continue
        if id(statement) not in todos:
            order.append(statement)
        todos.setdefault(id(statement), []).append(text)
    if not order:
        return source
    for statement in order:
        lines = [cst.EmptyLine(comment=cst.Comment(text)) for text in todos[id(statement)]]
        ctx.replace(statement, lambda node, lines=lines: node.with_changes(
            leading_lines=(*node.leading_lines, *lines)))
    return render(apply_edits(ctx))


def _verify(source: str, new_module: cst.Module, new_source: str, config: Config, cells: bool = False,
            project: Project = ALONE) -> FileContext:
    """The port must compile, and porting it again must change nothing.

    Python's compiler checks that the new source parses and compiles, at a fraction of the cost
    of libcst's parse: a port must not bring what the compiler refuses (a keyword given twice by
    two edits of one call) into code it accepted. The rules run again on the tree that rendered
    the new source, which is the tree a parse of it gives back. The new source is parsed by libcst
    only when that shortcut cannot decide: the running Python's parser rejects it (it may predate
    syntax the file already used), or an edit put one node object in two places (the index maps
    each node to one parent).
    """
    rejected = compiler_rejects(new_source)
    parser_rejects = rejected is not None and python_rejects(new_source) is not None
    if rejected is not None and not parser_rejects and compiler_rejects(source) is None:
        raise _PortError("internal error: the ported code does not compile "
                         f"({getattr(rejected, 'msg', rejected)}, line {getattr(rejected, 'lineno', '?')})")
    try:
        if parser_rejects:
            new_module = _parse(new_source)
        again = _run_rules(new_module, config, new_source, cells, project)
        if again.shared_nodes:
            again = _run_rules(_parse(new_source), config, new_source, cells, project)
    except _PortError as error:
        raise _PortError(f"internal error: the ported code does not check out ({error})")
    if again.dirty:
        codes = sorted({report.code for report in again.reports if report.fixed})
        raise _PortError(
            "internal error: the port is not stable, a second port changes it again"
            + (f" ({', '.join(codes)})" if codes else "")
        )
    return again
