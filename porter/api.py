"""The porter for other programs: port a text, a file or many files, and save the result.

    from porter.api import port_file, port_text, save
    from porter.config import Config

    outcome = port_text("train.py", source_text, Config(ipus=4))
    outcome.changed, outcome.ported          # did it change, and the new source
    for finding in outcome.findings:         # what was ported (fixed) and what a person must do
        print(finding.line, finding.code, finding.message, finding.fixed)

    outcome, source = port_file("train.py", Config())
    if outcome.changed:
        outcome = save(outcome, source, "train.py")   # atomic, in the file's encoding and newlines
    if outcome.error:
        print(outcome.error)

Many files: ``port_all`` ports ``(path, text, config)`` jobs, in a process pool when there are
enough of them to pay for it; the files of one project add what they learn from each other
(``projects``: ``(path, text, config, project)``). A ported copy of a tree (``ipu-port
--out-dir``): ``out_tree`` says where each file goes, ``save(..., copy_from=path)`` writes each
port there, and ``copy_tree`` copies the rest. ``.ipynb`` paths are ported as notebooks.

Nothing here prints or exits: a file that cannot be read, parsed, ported or written comes back with
``FileOutcome.error`` set and its text unchanged. libcst and the rules are imported only once a file
uses a framework, so a program that ports no ML code does not pay for them.
"""

from __future__ import annotations

import os
from typing import AbstractSet, Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple, Union

from porter.config import Config
from porter.detect import imported_modules, uses_framework
from porter.files import FileError, Source, encode, read, walk_all, write_atomic
from porter.outcome import FileOutcome
from porter.project import ALONE, Project

__all__ = ["FileOutcome", "Job", "OutDirError", "OutTree", "batch_makers", "copy_tree", "imported_neighbours",
           "importing_neighbours", "library_callers", "needs_port", "out_tree", "port_all", "port_file", "port_text",
           "program_of", "projects", "save", "with_callers"]

# One file to port: (path, text, config), and optionally what the files of its project ported with
# it tell about it (``port_text``'s ``project``).
Job = Union[Tuple[str, str, Config], Tuple[str, str, Config, Project]]
# A process pool pays for itself from about this many files to parse (start-up and imports).
MIN_FILES_FOR_POOL = 8


def needs_port(path: str, text: str) -> bool:
    """Whether a file must be parsed at all: a notebook, or code that uses a framework."""
    return path.endswith(".ipynb") or uses_framework(text)


def port_text(path: str, text: str, config: Config = Config(), project: Project = ALONE) -> FileOutcome:
    """The port of ``text``; ``path`` names it in the findings and says whether it is a notebook.
    ``project``: what the files of its project ported with it tell about it (``porter.project``;
    ``Project(keras_import=True)`` when it imports a module of its project that is Keras code,
    ``from models import build_model``: it is Keras code even without a framework import of its
    own)."""
    if path.endswith(".ipynb"):
        from porter.notebook import port_notebook

        return port_notebook(path, text, config, project)
    if not (uses_framework(text) or project.keras_import):
        return FileOutcome(path, text, text)
    from porter.engine import port

    result = port(text, config, project=project)
    return FileOutcome(path, text, result.source, result.findings, result.error)


def port_file(path: str, config: Config = Config()) -> Tuple[FileOutcome, Optional[Source]]:
    """The port of the file at ``path``, and its source as read (None when it cannot be read)."""
    try:
        source = read(path)
    except FileError as error:
        return FileOutcome(path, error=str(error)), None
    return port_text(path, source.text, config), source


def projects(sources: Dict[str, Source], configs: Dict[str, Config], read_only: AbstractSet[str] = frozenset()
             ) -> Dict[str, Project]:
    """What each of the scripts and notebooks ported together (a folder) learns from the ``.py``
    files among them (``porter.project``); the files not listed learn nothing. ``read_only``: those of ``sources``
    that are read as they are and not ported (``imported_neighbours``): they learn nothing, and
    their strategy functions count only where they return an IPU strategy already."""
    imports = {path: imported_modules(program_of(path, source.text)) for path, source in sources.items()
               if path.endswith((".py", ".ipynb"))}
    keras = _keras_modules(sources)
    factories, configuring, overriding, owners = _project_names(sources, configs, set().union(*imports.values()),
                                                                read_only)
    sequences, generators = _python_data_names(sources, configs, set().union(*imports.values()))
    trainers = _trainer_names(sources, configs, set().union(*imports.values()))
    found = {}
    for path, imported in imports.items():
        if path in read_only:
            continue
        project = Project(bool(imported & keras),
                          frozenset(name for name in factories if name.partition(".")[0] in imported),
                          frozenset(name for name in overriding if name.partition(".")[0] in imported),
                          frozenset(name for name in sequences if name.partition(".")[0] in imported),
                          frozenset(name for name in generators if name.partition(".")[0] in imported),
                          frozenset(name for name in configuring if name.partition(".")[0] in imported),
                          frozenset(trainer for trainer in trainers if trainer[0].partition(".")[0] in imported),
                          strategy_owners=frozenset(name for name in owners if name.partition(".")[0] in imported))
        if project != ALONE:
            found[path] = project
    return found


def imported_neighbours(sources: Dict[str, Source], configs: Dict[str, Config]
                        ) -> Tuple[Dict[str, Source], Dict[str, Config]]:
    """The modules of the project that the scripts and notebooks of ``sources`` import and that are not
    among them, read (never ported) from beside each file (``models.py`` for ``from models import
    build``), with the config of the file that imports each: a script ported alone, as pre-commit
    passes it, learns from its project what it learns ported with it. A module that cannot be read
    is left out."""
    given = {os.path.abspath(path) for path in sources}
    found: Dict[str, Source] = {}
    found_configs: Dict[str, Config] = {}
    for path, source in sources.items():
        if not path.endswith((".py", ".ipynb")):
            continue
        folder = os.path.dirname(path)
        for module in sorted(imported_modules(program_of(path, source.text))):
            neighbour = os.path.join(folder, module + ".py")
            if os.path.abspath(neighbour) in given or neighbour in found or not os.path.isfile(neighbour):
                continue
            try:
                found[neighbour] = read(neighbour)
            except FileError:
                continue
            found_configs[neighbour] = configs[path]
    return found, found_configs


def program_of(path: str, text: str) -> str:
    """The Python code of the script ``text``, or of the code cells of a notebook's."""
    if not path.endswith(".ipynb"):
        return text
    from porter.notebook import program_text

    return program_text(text)


def _runs_models(path: str, text: str) -> bool:
    """Whether the module may define functions that run a Keras model (``trainer.py``: ``def
    train(model, ds): model.fit(ds)``), by its text: its callers decide whether they run in the IPU
    strategy's scope."""
    if not (path.endswith(".py") and uses_framework(text)):
        return False
    from porter.rules.keras._analysis.project_trainers import MARKERS

    return any(marker in text for marker in MARKERS)


def library_callers(sources: Dict[str, Source], libraries: AbstractSet[str]) -> Dict[str, List[str]]:
    """For each of ``libraries`` (paths among ``sources``) that may define functions running a
    Keras model, the other scripts and notebooks of ``sources`` that import it (``import trainer``,
    ``from trainer import train``): found by a text search for its name before any import is read."""
    found: Dict[str, List[str]] = {}
    for path in sorted(libraries):
        module = _module_name(path)
        if not _runs_models(path, sources[path].text):
            continue
        callers = [caller for caller, source in sorted(sources.items())
                   if caller != path and caller.endswith((".py", ".ipynb")) and module in source.text
                   and module in imported_modules(program_of(caller, source.text))]
        if callers:
            found[path] = callers
    return found


def importing_neighbours(sources: Dict[str, Source], configs: Dict[str, Config]
                         ) -> Tuple[Dict[str, Source], Dict[str, Config]]:
    """The scripts beside each module of ``sources`` that may run a Keras model, that import it and
    that are not among ``sources``, read (never ported), with the config of the module: a library
    module ported alone, as pre-commit passes it, is judged by the callers it has in its folder. A
    file that cannot be read is left out."""
    given = {os.path.abspath(path) for path in sources}
    found: Dict[str, Source] = {}
    found_configs: Dict[str, Config] = {}
    for path, source in sources.items():
        if not _runs_models(path, source.text):
            continue
        folder, module = os.path.dirname(path), _module_name(path)
        try:
            names = sorted(os.listdir(folder or "."))
        except OSError:
            continue
        for name in names:
            neighbour = os.path.join(folder, name)
            if not name.endswith(".py") or os.path.abspath(neighbour) in given or neighbour in found:
                continue
            try:
                text = read(neighbour)
            except FileError:
                continue
            if module in text.text and module in imported_modules(text.text):
                found[neighbour] = text
                found_configs[neighbour] = configs[path]
    return found, found_configs


def with_callers(project: Project, path: str, callers: Dict[str, Tuple[str, Config]],
                 makers: AbstractSet[str] = frozenset()) -> Project:
    """``project`` of the library module at ``path``, told which of its functions the scripts that
    import it (``callers``: path -> (Python code as ported, config)) call in the IPU strategy's
    scope, every time, which one of them calls outside it, and which datasets in whole batches
    each call gives them (``makers``: the ``module.function`` of the project that return those)."""
    from dataclasses import replace

    from porter.context import FileContext
    from porter.parsing import ParseError, parse
    from porter.rules.keras._analysis.project_batches import batched_calls
    from porter.rules.keras.keras_audit import calls_in_scope

    inside: Set[str] = set()
    outside: Set[Tuple[str, str]] = set()
    batched: Set[Tuple[str, Tuple[bool, ...], FrozenSet[Tuple[str, bool]]]] = set()
    for caller, (text, config) in sorted(callers.items()):
        try:
            ctx = FileContext(parse(text), config)
        except ParseError:  # a caller that does not parse calls nothing the porter can see
            continue
        batched |= batched_calls(ctx, _module_name(path), makers)
        for function, scoped in calls_in_scope(ctx, _module_name(path)).items():
            if scoped:
                inside.add(function)
            else:
                outside.add((function, caller))
    inside -= {function for function, _ in outside}
    return replace(project, called_in_scope=frozenset(inside), called_outside=frozenset(outside),
                   batched_calls=frozenset(batched))


def batch_makers(sources: Dict[str, Source], configs: Dict[str, Config]) -> Set[str]:
    """``module.function`` for each function of the ``.py`` files of ``sources`` that returns a
    dataset in whole batches; only files that hold the marker of such batches are parsed."""
    from porter.rules.keras._analysis.project_batches import MARKER, whole_batch_makers

    return {f"{_module_name(path)}.{name}" for path, source in sorted(sources.items())
            if path.endswith(".py") and MARKER in source.text
            for name in whole_batch_makers(source.text, configs[path])}


# Text a module must hold to define Python data Keras on the IPU refuses: a Sequence or a generator.
_PYTHON_DATA_MARKERS = ("Sequence", "PyDataset", "yield")


def _python_data_names(sources: Dict[str, Source], configs: Dict[str, Config], imported: Set[str]
                       ) -> Tuple[Set[str], Set[str]]:
    """``module.Class`` for each ``keras.utils.Sequence`` class, and ``module.function`` for each
    generator function, of the ``.py`` files that some file imports (parsed only when they hold a
    marker of either)."""
    sequences: Set[str] = set()
    generators: Set[str] = set()
    for path, source in sources.items():
        module = _module_name(path)
        marked = any(marker in source.text for marker in _PYTHON_DATA_MARKERS)
        if not (path.endswith(".py") and module in imported and marked):  # (a generator needs no framework)
            continue
        from porter.rules.keras._analysis.python_data import python_data_names

        classes, functions = python_data_names(source.text, configs[path])
        sequences.update(f"{module}.{name}" for name in classes)
        generators.update(f"{module}.{name}" for name in functions)
    return sequences, generators


def _trainer_names(sources: Dict[str, Source], configs: Dict[str, Config], imported: Set[str]
                   ) -> Set[Tuple[str, str, int, bool]]:
    """``(module.function, parameter, position, trains)`` for each function of the ``.py`` files
    that some file imports that runs a model it is given (``def train_model(model, ds):
    model.fit(ds)``); a module is parsed only when it holds a call of a Keras model's method and
    uses a framework."""
    found: Set[Tuple[str, str, int, bool]] = set()
    for path, source in sources.items():
        module = _module_name(path)
        if not (path.endswith(".py") and module in imported and uses_framework(source.text)):
            continue
        from porter.rules.keras._analysis.project_trainers import MARKERS, trained_parameters

        if any(marker in source.text for marker in MARKERS):
            found.update((f"{module}.{name}", *rest) for name, *rest in trained_parameters(source.text, configs[path]))
    return found


def _keras_modules(sources: Dict[str, Source]) -> Set[str]:
    """The modules, among the files ported together, that are Keras code (``models`` for
    ``models.py``), and the packages that hold them: a file that imports one (``from models
    import build_model``) and no framework trains its model all the same, and is ported as Keras
    code."""
    found = set()
    for path, source in sources.items():
        if path.endswith(".py") and "keras" in source.text and uses_framework(source.text):
            found.add(_module_name(path))
            folder = os.path.dirname(os.path.abspath(path))
            if os.path.exists(os.path.join(folder, "__init__.py")):  # its package: ``from proj import build``
                found.add(os.path.basename(folder))
    return found


# Text a module must hold to tell the files importing it something: a strategy it makes, or a
# method of a model class that the IPU Keras extensions refuse.
_STRATEGY_MARKERS = ("Strategy", "get_strategy")
_OVERRIDE_MARKERS = ("def train_step", "_function(self")


def _project_names(sources: Dict[str, Source], configs: Dict[str, Config], imported: Set[str],
                   read_only: AbstractSet[str]) -> Tuple[Set[str], Set[str], Set[str], Set[str]]:
    """``module.function`` for each function of the ``.py`` files that returns the distribution
    strategy it makes, which the port of that file replaces by an IPU strategy, those of them that
    configure the IPU system themselves, ``module.Class`` for each Keras model class that overrides
    ``train_step`` (or a ``make_*_function``), and ``module.function`` for each function that
    enters the scope of a strategy it makes (``strategy_owners``). Only
    modules that some file imports, that use a framework and that hold a marker of either are
    parsed, once (libcst and the rules are imported then): a file ported alone costs nothing more."""
    factories: Set[str] = set()
    configuring: Set[str] = set()
    overriding: Set[str] = set()
    owners: Set[str] = set()
    for path, source in sources.items():
        module = _module_name(path)
        makes_strategy = any(marker in source.text for marker in _STRATEGY_MARKERS)
        overrides = any(marker in source.text for marker in _OVERRIDE_MARKERS)
        if not (path.endswith(".py") and module in imported and (makes_strategy or overrides)
                and uses_framework(source.text)):
            continue
        from porter.rules.keras.strategy_scope import project_names

        made, configures, classes, entering = project_names(source.text, configs[path], as_is=path in read_only)
        if makes_strategy:
            factories.update(f"{module}.{name}" for name in made)
            configuring.update(f"{module}.{name}" for name in configures)
            owners.update(f"{module}.{name}" for name in entering)
        if overrides:
            overriding.update(f"{module}.{name}" for name in classes)
    return factories, configuring, overriding, owners


def _module_name(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def _port_job(job: Job) -> FileOutcome:
    path, text, config, *project = job
    return port_text(path, text, config, *project)


def port_all(jobs: Sequence[Job], workers: int = 1,
             on_done: Optional[Callable[[], None]] = None) -> List[FileOutcome]:
    """The outcomes of the jobs, in their order: in this process for a few files, in a pool of up
    to ``workers`` processes for more. ``on_done`` is called as each job finishes (progress)."""
    workers = min(workers, len(jobs))
    pool = None
    if workers >= 2 and len(jobs) >= MIN_FILES_FOR_POOL:
        from concurrent.futures import ProcessPoolExecutor

        try:
            pool = ProcessPoolExecutor(max_workers=workers, initializer=_exit_with_parent)
        except (OSError, ImportError, NotImplementedError):  # no process support here: one by one
            pool = None
    if pool is None:
        return [_done(_port_job(job), on_done) for job in jobs]
    return _port_in_pool(pool, jobs, on_done)


def _exit_with_parent() -> None:
    """Run in each pool worker as it starts: end the worker once the process that started it is
    gone. A porter killed outright (SIGKILL, the out-of-memory killer) cannot stop its workers,
    which would otherwise wait for work forever."""
    import threading
    import time

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _done(outcome: FileOutcome, on_done: Optional[Callable[[], None]]) -> FileOutcome:
    if on_done is not None:
        on_done()
    return outcome


def _port_in_pool(pool, jobs: Sequence[Job], on_done: Optional[Callable[[], None]]) -> List[FileOutcome]:
    from concurrent.futures import as_completed

    # Largest files first, one at a time: the workers finish together, not one of them on a big
    # file while the other waits.
    results: List[Optional[FileOutcome]] = [None] * len(jobs)
    with pool:
        largest_first = sorted(range(len(jobs)), key=lambda index: -len(jobs[index][1]))
        futures = {pool.submit(_port_job, jobs[index]): index for index in largest_first}
        for future in as_completed(futures):
            results[futures[future]] = _done(future.result(), on_done)
    return results


def save(outcome: FileOutcome, source: Source, target: str, copy_from: Optional[str] = None) -> FileOutcome:
    """Write the port to ``target`` atomically, in the encoding and newlines of ``source``; the
    file itself is rewritten only when the port changed it. A failure becomes the outcome's error.
    ``copy_from``: the input file, whose mode the new file gets, and whose bytes are copied when
    the port changed nothing (a ported copy of a tree)."""
    if target == outcome.path and not outcome.changed:
        return outcome
    try:
        if copy_from is not None:
            _copy_or_write(copy_from, target, encode(outcome.ported, source) if outcome.changed else None)
        else:
            write_atomic(target, encode(outcome.ported, source))
    except FileError as error:
        cause = str(error) if target == outcome.path else f"{target}: {error}"
        return FileOutcome(outcome.path, outcome.original, outcome.original, outcome.findings, cause)
    return outcome


def _copy_or_write(source_path: str, target: str, data: Optional[bytes]) -> None:
    """Copy ``source_path`` to ``target`` (``data`` instead of its bytes when given), keeping its mode."""
    import shutil
    import stat

    try:
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        if data is None:
            shutil.copy2(source_path, target)
            return
        write_atomic(target, data)
        os.chmod(target, stat.S_IMODE(os.stat(source_path).st_mode))
    except OSError as error:
        raise FileError(f"cannot write: {error.strerror or error}") from None


class OutDirError(ValueError):
    """The folder for a ported copy is inside the tree being ported."""


class OutTree:
    """Where the ported copy of an input tree goes."""

    def __init__(self, root: str, target: str, folders: List[str]) -> None:
        self.root = root  # absolute: the common folder of the inputs
        self.target = target  # absolute
        self.folders = folders  # the folders given (absolute), copied whole

    def destination(self, path: str) -> str:
        return os.path.join(self.target, os.path.relpath(os.path.realpath(path), self.root))


def out_tree(paths: Sequence[str], out_dir: str) -> OutTree:
    """The copy of the files and folders ``paths`` in ``out_dir``, which must lie outside them."""
    absolute = [os.path.realpath(path) for path in paths]
    folders = [path for path in absolute if os.path.isdir(path)]
    bases = [path if os.path.isdir(path) else os.path.dirname(path) for path in absolute]
    root = os.path.commonpath(bases)
    target = os.path.realpath(out_dir)
    for inside in (*folders, root):
        if target == inside or (inside in folders and target.startswith(inside.rstrip(os.sep) + os.sep)):
            raise OutDirError(f"{out_dir} is inside the input tree {inside}; choose a folder outside it")
    return OutTree(root, target, folders)


def copy_tree(tree: OutTree, ported: Iterable[str]) -> List[Tuple[str, str]]:
    """Copy the files of the tree's folders that are not among ``ported`` (data, configs, excluded
    code) unchanged into the copy; ``(path, error)`` for each one that could not be copied."""
    done = {os.path.realpath(path) for path in ported}
    failures = []
    for folder in tree.folders:
        for relative in walk_all(folder):
            path = os.path.join(folder, relative)
            if path in done:
                continue
            done.add(path)
            try:
                _copy_or_write(path, tree.destination(path), None)
            except FileError as error:
                failures.append((path, f"{tree.destination(path)}: {error}"))
    return failures
