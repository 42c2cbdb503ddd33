"""The ``ipu-port`` command: options -> Config, port each file (porter.api), render, exit code.

Exit codes, as ruff and black users expect: 0 nothing to port (or everything written), 1 porting
needed (``--check``, ``--diff``), 2 usage error, unreadable or unparsable input, internal error.
Reports go to stdout; errors and progress to stderr. libcst, rich and the rules are imported only
once a file actually needs them, so checking a tree without ML code starts fast.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Dict, List, Optional, Sequence, Set

import click

from porter import __version__
from porter.api import (Job, OutDirError, OutTree, batch_makers, copy_tree, imported_neighbours, importing_neighbours,
                        library_callers, needs_port, out_tree, port_all, port_text, program_of, projects, save,
                        with_callers)
from porter.config import Config, ConfigError, Projects
from porter.files import FileError, Source, decode, discover, encode, read, write_atomic
from porter.outcome import FileOutcome
from porter.project import ALONE
from porter.report import finding_line, summary_lines, to_json, unified_diff

EXIT_OK, EXIT_PORTING_NEEDED, EXIT_ERROR = 0, 1, 2
# The progress bar appears once a run has taken this long (seconds), on a terminal only.
PROGRESS_AFTER = 1.0


def _codes(values: Sequence[str]) -> tuple:
    codes = []
    for value in values:
        codes.extend(part.strip().upper() for part in value.split(",") if part.strip())
    return tuple(codes)


def _validate_codes(codes: Sequence[str], option: str) -> None:
    if not codes:
        return
    from porter.markers import NOTICES
    from porter.rule import all_rules

    known = [rule.code for rule in all_rules()] + list(NOTICES)
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
    from porter.markers import NOTICES
    from porter.rule import rule_by_code

    if code.upper() in NOTICES:
        name, summary, help_text = NOTICES[code.upper()]
        click.echo(f"{code.upper()} {name} (reported by the porter itself)\n\n{summary}\n\n{help_text}")
        return
    rule = rule_by_code(code)
    if rule is None:
        raise click.BadParameter(f"no rule {code!r}; see --list-rules", param_hint="--explain")
    lines = [f"{rule.code} {rule.name} ({rule.kind}; what it leaves for a person: {rule.severity})", "",
             rule.summary, "", rule.rationale, ""]
    for number, example in enumerate(rule.examples, 1):
        label = "reported" if example.reported else "not reported"
        options = "".join(f", --{key.replace('_', '-')}" + ("" if value is True else f" {value}")
                          for key, value in (example.options or {}).items())
        lines.append(f"Example {number} ({label}{options}):")
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
              help="Print only the findings; exit 1 if a file needs porting or has an error or a warning.")
@click.option("--strict", is_flag=True, help="With --check: notes (optional improvements) fail too.")
@click.option("-w", "--write", is_flag=True, help="Rewrite the files in place.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True),
              help="Write the port of the single input to this file.")
@click.option("--out-dir", type=click.Path(file_okay=False), metavar="DIR",
              help="Write the ported tree to DIR (outside the input), copying every other file unchanged.")
@click.option("--select", multiple=True, metavar="CODES",
              help="Only these rule codes or prefixes (IPU1, IPU103); comma-separated or repeated.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Skip these rule codes or prefixes.")
@click.option("--ipus", type=click.IntRange(min=1), default=1, show_default=True,
              help="IPUs to select (auto_select_ipus / replication); without it, the IPUs that "
                   "--pipeline-stages or --shards need.")
@click.option("--shards", type=click.IntRange(min=1), default=1, show_default=True, metavar="N",
              help="TF1: split the compiled graph over N IPUs with ipu_shard (a power of two, at most --ipus).")
@click.option("--steps-per-execution", metavar="auto|K",
              help="Keras: batches per replica in one device execution (compile); auto: a whole epoch.")
@click.option("--device-iterations", type=int, metavar="K", help="PopTorch: batches per device execution.")
@click.option("--pipeline-stages", type=int, metavar="S",
              help="Split the model into S pipeline stages over the IPUs (needs --gradient-accumulation).")
@click.option("--gradient-accumulation", type=int, metavar="G",
              help="Batches accumulated per weight update (per replica).")
@click.option("--pipeline-schedule", type=click.Choice(["grouped", "interleaved", "sequential"]),
              default="grouped", show_default=True, help="Pipeline schedule.")
@click.option("--executable-cache", metavar="DIR", help="Cache compiled executables in DIR.")
@click.option("--ipu-model", is_flag=True, help="Run on the IPU Model simulator instead of IPU hardware.")
@click.option("--annotate", is_flag=True,
              help="Insert `# TODO(ipu-port CODE): ...` above each line that needs manual work.")
@click.option("--show-unused-suppressions", is_flag=True,
              help="Report `# ipu-port: ignore` comments that suppress nothing (IPU802).")
@click.option("--format", "output_format", type=click.Choice(["text", "json", "sarif", "github", "markdown"]),
              default="text", show_default=True,
              help="Report format: text, JSON, SARIF 2.1.0, GitHub Actions annotations, or Markdown (findings "
                   "and diffs per file, for a pull request).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Read [tool.ipu-port] from FILE instead of the nearest pyproject.toml.")
@click.option("--force-exclude", is_flag=True, default=None,
              help="Apply exclude/extend-exclude to files given explicitly too (for pre-commit).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), metavar="N",
              help="Port N files at a time (default: the number of CPUs).")
@click.option("--list-rules", is_flag=True, help="Show the rules and exit.")
@click.option("--explain", metavar="CODE", help="Explain one rule, with its examples, and exit.")
@click.version_option(__version__, prog_name="ipu-port")
@click.pass_context
def main(context: click.Context, paths: Sequence[str], show_diff: bool, check: bool, strict: bool, write: bool,
         output: Optional[str], out_dir: Optional[str], select: Sequence[str], ignore: Sequence[str],
         ipus: int, shards: int, annotate: bool, show_unused_suppressions: bool, output_format: str,
         config_file: Optional[str], force_exclude: Optional[bool], jobs: Optional[int],
         list_rules: bool, explain: Optional[str], steps_per_execution: Optional[str] = None,
         device_iterations: Optional[int] = None, pipeline_stages: Optional[int] = None,
         gradient_accumulation: Optional[int] = None, pipeline_schedule: str = "grouped",
         executable_cache: Optional[str] = None, ipu_model: bool = False) -> None:
    """Port TensorFlow 2 Keras, TensorFlow 1 and PyTorch training scripts to Graphcore IPUs.

    PATHS are files, folders (every *.py and *.ipynb below them, except what .gitignore and the
    configured excludes leave out) or - for standard input. Settings come from [tool.ipu-port] in
    the nearest pyproject.toml; options given here override them.
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
                                   ("--output", output is not None), ("--out-dir", out_dir is not None)) if on]
    if len(modes) > 1:
        raise click.UsageError(f"{' and '.join(modes)} cannot be combined")
    if strict and not check:
        raise click.UsageError("--strict goes with --check")
    for option, codes in (("--select", _codes(select)), ("--ignore", _codes(ignore))):
        _validate_codes(codes, option)
    try:
        overrides = _overrides(context)
        _checked_options(overrides)
        projects = Projects(overrides, config_file)
        files = discover(paths, projects, force_exclude)
    except ConfigError as error:
        _error(f"ipu-port: error: {error}")
        sys.exit(EXIT_ERROR)
    if output is not None and len(files) != 1:
        raise click.UsageError("--output needs exactly one input file")
    if "-" in files and len(files) > 1:
        raise click.UsageError("- (standard input) cannot be combined with other paths")
    if out_dir is not None and "-" in files:
        raise click.UsageError("--out-dir needs files or folders, not - (standard input)")
    if files == ["-"]:
        config = projects.for_path("-").config
        sys.exit(_run_stdin(config, show_diff, check, output, output_format, strict))
    tree = None
    if out_dir is not None:
        tree = _out_tree(paths, out_dir)
    configs = {}
    try:
        for path in files:
            configs[path] = projects.for_path(path).config_for(path)
    except ConfigError as error:
        _error(f"ipu-port: error: {error}")
        sys.exit(EXIT_ERROR)
    run = Run(show_diff, check, write, output, output_format, jobs or os.cpu_count() or 1, tree, strict)
    sys.exit(_run_files(files, configs, run))


def _overrides(context: click.Context) -> Dict[str, object]:
    """The options given on the command line that are also settings: they win over the file."""
    from click.core import ParameterSource

    from porter.config import config_keys

    fields = {item.name for item in config_keys().values()}
    overrides: Dict[str, object] = {}
    for name, value in context.params.items():
        source = context.get_parameter_source(name)
        if source not in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
            continue
        if name in ("select", "ignore"):
            overrides[name] = _codes(value)
        elif name == "force_exclude":
            overrides[name] = bool(value)
        elif name in fields:
            overrides[name] = value
    return overrides


class Run:
    """What the command was asked to do with the files."""

    def __init__(self, show_diff: bool, check: bool, write: bool, output: Optional[str],
                 output_format: str, jobs: int, tree: Optional["OutTree"], strict: bool = False) -> None:
        self.show_diff = show_diff
        self.check = check
        self.strict = strict
        self.write = write
        self.output = output
        self.output_format = output_format
        self.jobs = jobs
        self.tree = tree

    @property
    def writes(self) -> bool:
        return self.write or self.output is not None or self.tree is not None


def _out_tree(paths: Sequence[str], out_dir: str) -> OutTree:
    try:
        return out_tree(paths, out_dir)
    except OutDirError as error:
        _error(f"ipu-port: error: --out-dir {error}")
        sys.exit(EXIT_ERROR)


def _checked_options(overrides: Dict[str, object]) -> None:
    """The speed options given on the command line, checked together: a bad one is a usage error
    (settings files are checked when they are read, porter.config)."""
    from porter.config import config_keys
    from porter.throughput import implied_ipus

    fields = {item.name for item in config_keys().values()}
    _checked(Config(**implied_ipus({name: value for name, value in overrides.items() if name in fields})))


def _checked(config: Config) -> Config:
    """The speed options checked together (porter.throughput): a bad one is a usage error."""
    from porter.throughput import OptionError, validate

    try:
        return validate(config)
    except OptionError as error:
        raise click.BadParameter(error.message, param_hint=error.option)


def _error(message: str) -> None:
    click.echo(message, err=True)


def _run_stdin(config: Config, show_diff: bool, check: bool, output: Optional[str], output_format: str,
               strict: bool = False) -> int:
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
        return EXIT_PORTING_NEEDED if _needs_porting(outcome, check, strict) else EXIT_OK
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


def _needs_porting(outcome: FileOutcome, check: bool, strict: bool = False) -> bool:
    """Changed, or (``--check``) with an error or a warning left for a person, or (``--strict``)
    a note."""
    return outcome.changed or (check and (outcome.manual > 0 or (strict and outcome.notes > 0)))


def _run_files(files: List[str], configs: Dict[str, Config], run: Run) -> int:
    outcomes: Dict[str, FileOutcome] = {}
    sources: Dict[str, Source] = {}
    jobs: List[Job] = []
    for path in files:
        try:
            sources[path] = read(path)
        except FileError as error:
            outcomes[path] = FileOutcome(path, error=str(error))
    neighbours, neighbour_configs = imported_neighbours(sources, configs)
    told = projects({**sources, **neighbours}, {**configs, **neighbour_configs}, read_only=neighbours.keys())
    for path, source in sources.items():
        project = told.get(path, ALONE)
        if needs_port(path, source.text) or project.keras_import:
            jobs.append((path, source.text, configs[path], project))
        else:
            outcomes[path] = FileOutcome(path, source.text, source.text)
    if jobs:
        try:
            _check_codes(configs.values())
        except ConfigError as error:
            _error(f"ipu-port: error: {error}")
            return EXIT_ERROR
    for outcome in _port_libraries_last(jobs, sources, configs, run):
        outcomes[outcome.path] = outcome

    failed = False
    ordered = []
    unreadable = set()
    for path in files:
        outcome = outcomes[path]
        source = sources.get(path)
        if outcome.error is None and source is not None and run.tree is not None:
            outcome = save(outcome, source, run.tree.destination(path), copy_from=path)
        elif outcome.error is None and source is not None and (run.write or run.output):
            outcome = _save(outcome, source, path if run.write else run.output)
        if outcome.error is not None:
            failed = True
            unreadable.add(path)
            _error(f"{path}: {outcome.error}")
        ordered.append(outcome)
    if run.tree is not None:  # files that failed are copied unchanged, so the tree is complete
        failed = _copy_tree(run.tree, set(files) - unreadable) or failed
    # With ``-o -`` the port goes to stdout, so the report goes to stderr.
    _render(ordered, run.show_diff, run.check, run.output_format, written=run.writes,
            report_to_stderr=run.output == "-")
    if failed:
        return EXIT_ERROR
    if run.show_diff or run.check:
        return EXIT_PORTING_NEEDED if any(_needs_porting(o, run.check, run.strict) for o in ordered) else EXIT_OK
    return EXIT_OK


def _check_codes(configs) -> None:
    """Every code in the settings must name a rule (or a prefix of one): checked once a file is
    about to be parsed, since the rule registry imports libcst."""
    from porter.markers import NOTICES
    from porter.rule import all_rules

    known = [rule.code for rule in all_rules()] + list(NOTICES)
    for config in configs:
        for code in (*config.select, *config.ignore):
            if not any(known_code.startswith(code) for known_code in known):
                raise ConfigError(f"unknown rule code or prefix {code!r} in the settings; see --list-rules")


def _port_libraries_last(jobs: List[Job], sources: Dict[str, Source], configs: Dict[str, Config], run: Run
                         ) -> List[FileOutcome]:
    """The outcomes of the jobs: first of the files that import no library module of the project
    (``trainer.py``, whose functions run a model they are given), then of those modules, each told
    whether the ports of the scripts that import it (those ported, and those beside it read as they
    are) call its functions in the IPU strategy's scope."""
    callers, caller_configs = importing_neighbours(sources, configs)
    known = {**sources, **callers}
    libraries = library_callers(known, {job[0] for job in jobs})
    progress = _Progress(len(jobs), run.output_format)
    makers: Set[str] = set()
    if libraries:  # (the modules the callers import, read from beside them when not ported: `data.load`)
        known_configs = {**caller_configs, **configs}
        modules, module_configs = imported_neighbours(known, known_configs)
        makers = batch_makers({**modules, **known}, {**module_configs, **known_configs})
    outcomes = {outcome.path: outcome for outcome in _port_all(
        [job for job in jobs if job[0] not in libraries], run, progress)}
    last = []
    for path, text, config, *project in (job for job in jobs if job[0] in libraries):
        texts = {}
        for caller in libraries[path]:
            outcome = outcomes.get(caller)
            text_now = outcome.ported if outcome is not None and outcome.error is None else known[caller].text
            texts[caller] = (program_of(caller, text_now), configs.get(caller) or caller_configs[caller])
        last.append((path, text, config, with_callers(project[0] if project else ALONE, path, texts, makers)))
    outcomes.update((outcome.path, outcome) for outcome in _port_all(last, run, progress))
    progress.close()
    return [outcomes[job[0]] for job in jobs]


def _port_all(jobs: List[Job], run: Run, progress: "_Progress") -> List[FileOutcome]:
    """The outcomes of the jobs, in their order; ``progress`` shows a bar on a terminal once the run
    takes a while."""
    if not jobs:
        return []
    return port_all(jobs, run.jobs, progress.advance)


def _stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


class _Progress:
    """A rich progress bar on stderr, shown only on a terminal, only for text and github output,
    and only once the run has lasted PROGRESS_AFTER seconds (rich is imported then, not before)."""

    def __init__(self, total: int, output_format: str) -> None:
        self.total = total
        self.done = 0
        self.started = time.monotonic()
        self.enabled = output_format in ("text", "github") and _stderr_is_terminal()
        self.bar = None
        self.task = None

    def advance(self) -> None:
        self.done += 1
        if not self.enabled:
            return
        if self.bar is None:
            if self.done >= self.total or time.monotonic() - self.started < PROGRESS_AFTER:
                return
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(stderr=True, force_terminal=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("porting", total=self.total, completed=self.done)
            return
        self.bar.update(self.task, completed=self.done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _save(outcome: FileOutcome, source: Source, target: str) -> FileOutcome:
    """``--write`` and ``--output``: the port saved, or printed for ``-o -``."""
    if target == "-":
        sys.stdout.buffer.write(encode(outcome.ported, source))
        return outcome
    return save(outcome, source, target)


def _copy_tree(tree: OutTree, ported: set) -> bool:
    """``--out-dir``: the files that were not ported copied too; True when one could not be."""
    failures = copy_tree(tree, ported)
    for path, error in failures:
        _error(f"{path}: {error}")
    return bool(failures)


def _render(outcomes: Sequence[FileOutcome], show_diff: bool, check: bool, output_format: str,
            written: bool, report_to_stderr: bool = False) -> None:
    if output_format == "json":
        click.echo(to_json(outcomes), err=report_to_stderr)
        return
    if output_format == "sarif":
        from porter.report import to_sarif

        click.echo(to_sarif(outcomes, __version__), err=report_to_stderr)
        return
    if output_format == "markdown":
        from porter.report import to_markdown

        click.echo(to_markdown(outcomes, written), nl=False, err=report_to_stderr)
        return
    if output_format == "github":
        from porter.report import github_lines

        for line in github_lines(outcomes):
            click.echo(line, err=report_to_stderr)
        return
    if show_diff:
        _render_diffs(outcomes)
        return
    for outcome in outcomes:
        for finding in outcome.findings:
            click.echo(finding_line(outcome.path, finding), err=report_to_stderr)
    if not check:
        # The findings first when both streams go to one place (`2>&1`): stdout is buffered there.
        sys.stdout.flush()
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
