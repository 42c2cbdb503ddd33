"""The ``ipu-port`` command: options -> Config, port each file, render, exit code.

Exit codes, as ruff and black users expect: 0 nothing to port (or everything written), 1 porting
needed (``--check``, ``--diff``), 2 usage error, unreadable or unparsable input, internal error.
Reports go to stdout; errors and progress to stderr. libcst, rich and the rules are imported only
once a file actually needs them, so checking a tree without ML code starts fast.
"""

from __future__ import annotations

import sys
from typing import List, Optional, Sequence

import click

from porter import __version__
from porter.config import Config
from porter.detect import uses_framework
from porter.files import FileError, decode, discover, encode, read, write_atomic
from porter.report import FileOutcome, finding_line, summary_lines, to_json, unified_diff

EXIT_OK, EXIT_PORTING_NEEDED, EXIT_ERROR = 0, 1, 2


def _codes(values: Sequence[str]) -> tuple:
    codes = []
    for value in values:
        codes.extend(part.strip().upper() for part in value.split(",") if part.strip())
    return tuple(codes)


def port_text(path: str, text: str, config: Config) -> FileOutcome:
    if not uses_framework(text):
        return FileOutcome(path, text, text)
    from porter.engine import port

    result = port(text, config)
    return FileOutcome(path, text, result.source, result.findings, result.error)


def port_file(path: str, config: Config) -> "tuple[FileOutcome, Optional[object]]":
    try:
        source = read(path)
    except FileError as error:
        return FileOutcome(path, error=str(error)), None
    return port_text(path, source.text, config), source


def _validate_codes(codes: Sequence[str], option: str) -> None:
    if not codes:
        return
    from porter.rule import all_rules

    known = [rule.code for rule in all_rules()]
    for code in codes:
        if not any(known_code.startswith(code) for known_code in known):
            raise click.BadParameter(f"unknown rule code or prefix {code!r}", param_hint=option)


def _list_rules() -> None:
    from rich.console import Console
    from rich.table import Table

    from porter.rule import all_rules

    table = Table(title="ipu-port rules")
    for column in ("code", "name", "kind", "summary"):
        table.add_column(column)
    for rule in all_rules():
        table.add_row(rule.code, rule.name, rule.kind, rule.summary)
    Console().print(table)


def _explain(code: str) -> None:
    from porter.rule import rule_by_code

    rule = rule_by_code(code)
    if rule is None:
        raise click.BadParameter(f"no rule {code!r}; see --list-rules", param_hint="--explain")
    lines = [f"{rule.code} {rule.name} ({rule.kind})", "", rule.summary, "", rule.rationale, ""]
    for number, example in enumerate(rule.examples, 1):
        label = "reported" if example.reported else "not reported"
        lines.append(f"Example {number} ({label}):")
        lines.append("  before:")
        lines.extend("    " + line for line in example.before.splitlines())
        if example.after is not None:
            lines.append("  after:")
            lines.extend("    " + line for line in example.after.splitlines())
        lines.append("")
    click.echo("\n".join(lines).rstrip())


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path(allow_dash=True))
@click.option("--diff", "show_diff", is_flag=True, help="Print unified diffs; exit 1 if anything would change.")
@click.option("--check", is_flag=True,
              help="Print only the findings; exit 1 if a file needs porting or has a warning.")
@click.option("-w", "--write", is_flag=True, help="Rewrite the files in place.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True),
              help="Write the port of the single input to this file.")
@click.option("--select", multiple=True, metavar="CODES",
              help="Only these rule codes or prefixes (IPU1, IPU103); comma-separated or repeated.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Skip these rule codes or prefixes.")
@click.option("--ipus", type=click.IntRange(min=1), default=1, show_default=True,
              help="IPUs to select (auto_select_ipus / replication).")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="Report format.")
@click.option("--list-rules", is_flag=True, help="Show the rules and exit.")
@click.option("--explain", metavar="CODE", help="Explain one rule, with its examples, and exit.")
@click.version_option(__version__, prog_name="ipu-port")
def main(paths: Sequence[str], show_diff: bool, check: bool, write: bool, output: Optional[str],
         select: Sequence[str], ignore: Sequence[str], ipus: int, output_format: str,
         list_rules: bool, explain: Optional[str]) -> None:
    """Port TensorFlow 2 Keras, TensorFlow 1 and PyTorch training scripts to Graphcore IPUs.

    PATHS are files, folders (every *.py below them) or - for standard input.
    """
    if list_rules:
        _list_rules()
        return
    if explain:
        _explain(explain)
        return
    if not paths:
        raise click.UsageError("give at least one PATH (a file, a folder, or - for standard input)")
    modes = [name for name, on in (("--diff", show_diff), ("--check", check), ("--write", write),
                                   ("--output", output is not None)) if on]
    if len(modes) > 1:
        raise click.UsageError(f"{' and '.join(modes)} cannot be combined")
    config = Config(select=_codes(select), ignore=_codes(ignore), ipus=ipus)
    for option, codes in (("--select", config.select), ("--ignore", config.ignore)):
        _validate_codes(codes, option)

    files = discover(paths)
    if output is not None and len(files) != 1:
        raise click.UsageError("--output needs exactly one input file")
    if "-" in files and len(files) > 1:
        raise click.UsageError("- (standard input) cannot be combined with other paths")
    if files == ["-"]:
        sys.exit(_run_stdin(config, show_diff, check, output, output_format))
    sys.exit(_run_files(files, config, show_diff, check, write, output, output_format))


def _error(message: str) -> None:
    click.echo(message, err=True)


def _run_stdin(config: Config, show_diff: bool, check: bool, output: Optional[str], output_format: str) -> int:
    data = sys.stdin.buffer.read()
    try:
        source = decode(data)
    except FileError as error:
        _error(f"-: {error}")
        return EXIT_ERROR
    outcome = port_text("-", source.text, config)
    to_stdout = output in (None, "-")
    if outcome.error:
        _error(f"-: {outcome.error}")
        if not (show_diff or check) and to_stdout:
            sys.stdout.buffer.write(data)
        return EXIT_ERROR
    if show_diff or check:
        _render([outcome], show_diff, check, output_format, written=False)
        return EXIT_PORTING_NEEDED if _needs_porting(outcome, check) else EXIT_OK
    try:
        ported = encode(outcome.ported, source)
        if to_stdout:
            sys.stdout.buffer.write(ported)
        else:
            write_atomic(output, ported)
    except FileError as error:
        _error(f"-: {output}: {error}" if not to_stdout else f"-: {error}")
        return EXIT_ERROR
    for finding in outcome.findings:
        _error(finding_line("-", finding))
    return EXIT_OK


def _needs_porting(outcome: FileOutcome, check: bool) -> bool:
    return outcome.changed or (check and outcome.manual > 0)


def _run_files(files: List[str], config: Config, show_diff: bool, check: bool, write: bool,
               output: Optional[str], output_format: str) -> int:
    outcomes: List[FileOutcome] = []
    failed = False
    for path in files:
        outcome, source = port_file(path, config)
        if outcome.error is None and (write or output) and source is not None:
            outcome = _save(outcome, source, path if write else output)
        if outcome.error is not None:
            failed = True
            _error(f"{path}: {outcome.error}")
        outcomes.append(outcome)
    # With ``-o -`` the port goes to stdout, so the report goes to stderr.
    _render(outcomes, show_diff, check, output_format, written=write or output is not None,
            report_to_stderr=output == "-")
    if failed:
        return EXIT_ERROR
    if show_diff or check:
        return EXIT_PORTING_NEEDED if any(_needs_porting(o, check) for o in outcomes) else EXIT_OK
    return EXIT_OK


def _save(outcome: FileOutcome, source, target: str) -> FileOutcome:
    """Write the port (in place only when it changed); a failure becomes the file's error."""
    if target == "-":
        sys.stdout.buffer.write(encode(outcome.ported, source))
        return outcome
    if target == outcome.path and not outcome.changed:
        return outcome
    try:
        write_atomic(target, encode(outcome.ported, source))
    except FileError as error:
        cause = str(error) if target == outcome.path else f"{target}: {error}"
        return FileOutcome(outcome.path, outcome.original, outcome.original, outcome.findings, cause)
    return outcome


def _render(outcomes: Sequence[FileOutcome], show_diff: bool, check: bool, output_format: str,
            written: bool, report_to_stderr: bool = False) -> None:
    if output_format == "json":
        from porter.rule import all_rules

        names = {rule.code: rule.name for rule in all_rules()}
        click.echo(to_json(outcomes, names), err=report_to_stderr)
        return
    if show_diff:
        _render_diffs(outcomes)
        return
    for outcome in outcomes:
        for finding in outcome.findings:
            click.echo(finding_line(outcome.path, finding), err=report_to_stderr)
    if not check:
        for line in summary_lines(outcomes, written):
            _error(line)


def _render_diffs(outcomes: Sequence[FileOutcome]) -> None:
    diffs = [unified_diff(outcome) for outcome in outcomes if outcome.changed]
    if not diffs:
        return
    if sys.stdout.isatty():
        from rich.console import Console

        from porter.report import print_colored_diff

        console = Console()
        for diff in diffs:
            print_colored_diff(diff, console)
    else:
        for diff in diffs:
            click.echo(diff, nl=False)
