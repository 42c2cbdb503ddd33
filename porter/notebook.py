"""Jupyter notebooks: the code cells are ported as one program, then put back cell by cell.

The model code of a notebook is spread over its cells (imports in one, the model in the next, the
training loop in a third), so the engine sees the code cells joined, each one after a
``__ipu_port_cell__(N)`` line. The engine never edits those lines and never wraps statements of
different cells into one block: a ``with strategy.scope():`` that would span cells becomes one
such block per cell (re-entering a scope in each cell is how IPU notebooks are written). After the
port the text is cut at the marker lines again; code the engine puts before the first cell (an
import in a notebook whose first cell defines a function) goes to the top of the first cell.

IPython syntax is masked before the parse and restored after it, line by line, with the
indentation the port gave the line: line magics (``%time``), shell escapes (``!pip ...``,
``files = !ls``), help (``tf.data?``, ``??model``), and the first line of a cell magic that runs
Python (``%%time``); only at the start of a logical line, as IPython reads them: a line inside
brackets, a triple-quoted string or after a backslash is Python (``!= y`` or ``% 2`` where black
breaks a long expression before its operator). A cell under any other cell magic (``%%bash``) is not Python and is left
alone, but for a cell that writes a Python script (``%%writefile train.py``, which the notebook then
runs or imports): the script is ported as a file of its own. A cell that still does not parse is
left alone and reported (IPU801), unless the line where it stops parsing is a shell command
IPython runs without ``!`` (``ls ./data``, ``pip install ...``): that line is masked too. A cell
indented as a whole (its first line is) is ported without that indentation, which IPython removes
too, and gets it back after.

Only the changed cells are written back, in the form they had (a ``source`` list of lines or one
string); outputs, metadata, key order, the JSON indentation, ``ensure_ascii`` style and the final
newline are kept. Findings carry the cell number (1-based, counting every cell) and the line in it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Dict, List, Optional, Sequence, Set, Tuple

from porter.config import Config
from porter.detect import imported_modules, uses_framework
from porter.markers import CELL_MARKER, HIDDEN_RUN, LOCAL_CELL_MAGIC, PYTHON_MAGIC, SHELL_LINE, UNPARSABLE
from porter.outcome import FileOutcome
from porter.project import ALONE, Project
from porter.rule import WARNING, Finding, is_selected

_MARKER_LINE = re.compile(rf"^{CELL_MARKER}\((\d+)\)[ \t]*\r?\n", re.MULTILINE)
CELL_MAGIC = "#__ipu_port_cell_magic__"
_PLACEHOLDER = re.compile(rf"^([ \t]*)(?:{PYTHON_MAGIC}|{SHELL_LINE})(\d+)__[ \t]*$")

# Cell magics whose body is Python: the magic line is masked, the body ported.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "pypy", "python",
                                "python3", "tensorboard", "profile"})
# Of those, the ones that run the cell as the body of a function: its names are gone after it.
LOCAL_CELL_MAGICS = frozenset({"timeit"})
_HELP = re.compile(r"^[ \t]*(\?\??[ \t]*[\w.\[\]()'\"]+|[\w.\[\]()'\"]+[ \t]*\?\??)[ \t]*$")
_MAGIC_ASSIGNMENT = re.compile(r"^[ \t]*[\w.,\s()\[\]]+=[ \t]*[%!]")
# IPython's shell aliases and the line magics it runs without `%` (automagic), by their first word.
_AUTOMAGIC = frozenset({"ls", "ll", "cat", "cp", "mv", "rm", "rmdir", "mkdir", "cd", "pwd", "pip", "conda"})


class NotebookError(Exception):
    """Not a notebook that can be ported; the message is one line."""


@dataclass
class _Cell:
    number: int  # 1-based position among all cells
    cell: dict
    source: str  # as in the notebook
    masked: str  # IPython syntax replaced by placeholders
    magics: Dict[int, Tuple[str, str]]  # placeholder number -> (original line, its indent then)
    indent: str = ""  # the leading indentation IPython removes from the cell's lines (`leading_indent`)


def load(text: str) -> dict:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise NotebookError(f"invalid notebook JSON: {error.msg} at line {error.lineno}, column {error.colno}") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        if isinstance(data, dict) and "worksheets" in data:
            raise NotebookError(f"nbformat {data.get('nbformat')} notebooks are not supported; convert to nbformat 4")
        raise NotebookError("not a Jupyter notebook: no list of cells")
    return data


def _language(data: dict) -> str:
    metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    for key, field in (("kernelspec", "language"), ("language_info", "name")):
        value = metadata.get(key)
        if isinstance(value, dict) and isinstance(value.get(field), str):
            return value[field].lower()
    return "python"


def _source_text(cell: dict) -> str:
    source = cell.get("source") or ""
    return "".join(str(line) for line in source) if isinstance(source, list) else str(source)


def mask(source: str) -> Optional[Tuple[str, Dict[int, Tuple[str, str]]]]:
    """The source with IPython syntax replaced by placeholder lines (same line count), and the
    replaced lines; None when the cell is not Python (a ``%%bash`` cell, say)."""
    lines = source.splitlines(keepends=True)
    magics: Dict[int, Tuple[str, str]] = {}
    out: List[str] = []
    continued_indent: Optional[str] = None
    first_code = True
    cell_magic = CELL_MAGIC
    python = _Continuation()
    for line in lines:
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        stripped = body.strip()
        indent = body[:len(body) - len(body.lstrip())]
        first_magic_line = False
        if python.open and continued_indent is None:
            # Inside brackets, a string or after a backslash (`!= y` on a line of its own, as
            # black writes a long comparison): Python, never IPython syntax, as IPython reads it.
            python.read(body)
            out.append(line)
            continue
        if continued_indent is not None:
            masked = True
            indent = continued_indent
        elif first_code and stripped.startswith("%%"):
            name = stripped[2:].split(None, 1)[0] if stripped[2:] else ""
            if name not in PYTHON_CELL_MAGICS:
                return None
            masked = first_magic_line = True
            cell_magic = LOCAL_CELL_MAGIC if name in LOCAL_CELL_MAGICS else CELL_MAGIC
        else:
            masked = bool(stripped) and (
                stripped.startswith(("%", "!")) or _HELP.match(body) is not None
                or _MAGIC_ASSIGNMENT.match(body) is not None)
        if stripped and not stripped.startswith("#"):
            first_code = False
        if not masked:
            python.read(body)
            out.append(line)
            continue
        number = len(magics)
        magics[number] = (body, indent)
        if first_magic_line:  # a cell magic: a comment, so that it is never wrapped into a block
            out.append(f"{cell_magic}{ending}")
            continue
        if continued_indent is None:
            placeholder = PYTHON_MAGIC if _runs_python(stripped) else SHELL_LINE
        out.append(f"{indent}{placeholder}{number}__{ending}")
        continued_indent = indent if body.endswith("\\") else None
    return "".join(out), magics


class _Continuation:
    """Whether the next line of a cell continues the Python of the lines read so far: an open
    bracket, an open triple-quoted string, or a backslash at the end. IPython finds its syntax
    (``%time``, ``!ls``, ``x?``) only at the start of a logical line."""

    def __init__(self) -> None:
        self.depth = 0  # brackets open
        self.quote: Optional[str] = None  # the triple quote of a string still open
        self.backslash = False

    @property
    def open(self) -> bool:
        return self.depth > 0 or self.quote is not None or self.backslash

    def read(self, line: str) -> None:
        index, length = 0, len(line)
        self.backslash = False
        while index < length:
            char = line[index]
            if self.quote is not None:
                if line.startswith(self.quote, index):
                    index, self.quote = index + 3, None
                else:
                    index += 2 if char == "\\" else 1
                continue
            if char == "#":
                return
            if char == "\\" and index == length - 1:
                self.backslash = True
            elif line.startswith(('"""', "'''"), index):
                self.quote = line[index:index + 3]
                index += 3
                continue
            elif char in "\"'":
                index = _string_end(line, index)
                continue
            elif char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(0, self.depth - 1)
            index += 1


def _string_end(line: str, start: int) -> int:
    """The index after the one-line string that opens at ``start`` (the end of the line when it
    does not close there)."""
    index = start + 1
    while index < len(line) and line[index] != line[start]:
        index += 2 if line[index] == "\\" else 1
    return index + 1


def _runs_python(line: str) -> bool:
    """A masked line that runs Python of the notebook (``%time model.fit(x, y)``), which must stay
    where the port puts it; shell escapes, other magics and help do not."""
    assignment = _MAGIC_ASSIGNMENT.match(line)
    if assignment is not None:  # `timing = %timeit -o model.predict(x)`
        line = line[assignment.end() - 1:]
    if not line.startswith("%"):
        return False
    name = line.lstrip("%").split(None, 1)[0] if line.lstrip("%") else ""
    return name in PYTHON_CELL_MAGICS


def unmask(text: str, magics: Dict[int, Tuple[str, str]]) -> str:
    if not magics:
        return text
    out = []
    cell_magic = None
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        if body.strip() in (CELL_MAGIC, LOCAL_CELL_MAGIC) and 0 in magics:
            cell_magic = magics[0][0] + (line[len(body):] or "\n")
            continue
        match = _PLACEHOLDER.match(body)
        if match is None or int(match.group(2)) not in magics:
            out.append(line)
            continue
        original, indent_then = magics[int(match.group(2))]
        indent_now = match.group(1)
        shift = indent_now[len(indent_then):] if indent_now.startswith(indent_then) else ""
        out.append(shift + original + line[len(body):])
    if cell_magic is not None:  # back on the first line, where IPython wants it
        out.insert(0, cell_magic)
    return "".join(out)


def _dump(data: dict, text: str) -> str:
    """Serialise like the original file: indentation, ASCII escapes, final newline, CRLF."""
    match = re.search(r"\n([ \t]+)\S", text)
    indent = match.group(1) if match else None
    indent_value = (len(indent) if indent.strip(" ") == "" else indent) if indent else None
    newline = "\r\n" if "\r\n" in text else "\n"
    final = newline if text.endswith("\n") else ""
    # json.dumps escapes non-ASCII characters or writes them as they are: do what the file does.
    ensure_ascii = text.isascii() and "\\u" in text
    dumped = json.dumps(data, indent=indent_value, ensure_ascii=ensure_ascii)
    if newline != "\n":
        dumped = dumped.replace("\n", newline)
    return dumped + final


def _map_line(line: int, starts: Sequence[Tuple[int, int]]) -> Tuple[int, int]:
    """(cell number, line in the cell) for a line of the joined program."""
    cell, first = starts[0]
    for number, start in starts:
        if start > line:
            break
        cell, first = number, start
    return cell, max(1, line - first + 1)


def program_text(text: str) -> str:
    """The Python code cells of the notebook ``text``, masked and joined: what its cells import,
    for what the modules beside it tell about it (``porter.api.projects``). "" for a notebook that
    cannot be read or is not Python."""
    try:
        data = load(text)
    except NotebookError:
        return ""
    if _language(data) != "python":
        return ""
    masked = [mask(_leading_indent(_source_text(cell))[1]) for cell in data["cells"]
              if isinstance(cell, dict) and cell.get("cell_type") == "code"]
    return "\n".join(code for code, _ in filter(None, masked))


def port_notebook(path: str, text: str, config: Config, project: Project = ALONE) -> FileOutcome:
    """The port of the notebook ``text``; ``project``: what the modules of its project tell about
    its cells (``porter.api.port_text``)."""
    try:
        data = load(text)
    except NotebookError as error:
        return FileOutcome(path, text, text, error=str(error))
    if _language(data) != "python":
        return FileOutcome(path, text, text)
    cells: List[_Cell] = []
    scripts: List[Tuple[int, dict, str, str]] = []
    for index, cell in enumerate(data["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = _source_text(cell)
        indent, code = _leading_indent(source)
        masked = mask(code)
        if masked is not None:
            cells.append(_Cell(index + 1, cell, source, masked[0], masked[1], indent))
            continue
        script = _written_script(source)
        if script is not None:
            scripts.append((index + 1, cell, *script))
    keras_modules = _keras_modules(scripts)
    scripts = [script for script in scripts if uses_framework(script[3]) or imported_modules(script[3]) & keras_modules]
    keras_import = project.keras_import or bool(imported_modules("\n".join(cell.masked for cell in cells))
                                                & keras_modules)
    if not scripts and not keras_import and not uses_framework("\n".join(cell.masked for cell in cells)):
        return FileOutcome(path, text, text)

    findings, diffs, error = _port_cells(cells, config, replace(project, keras_import=keras_import))
    if error is not None:
        return FileOutcome(path, text, text, tuple(findings), error=error)
    for number, cell, magic, script in scripts:
        new_script = _port_script(number, script, config, findings,
                                  bool(imported_modules(script) & keras_modules))
        diffs.append((number, magic + script, magic + new_script))
        if new_script != script:
            _set_source(cell, magic + new_script)
    findings.sort(key=Finding.sort_key)
    diffs.sort()
    if all(before == after for _, before, after in diffs):
        return FileOutcome(path, text, text, tuple(findings), cells=())
    return FileOutcome(path, text, _dump(data, text), tuple(findings), cells=tuple(diffs))


def _port_cells(cells: List[_Cell], config: Config,
                project: Project) -> Tuple[List[Finding], List[Tuple[int, str, str]], Optional[str]]:
    """The port of the Python cells as one program: its findings, each cell's source before and
    after (set in the cells), and the error that leaves the notebook unchanged. ``project``: what
    the modules the cells import tell about them (``keras_import``: they import Keras code that a
    cell writes, ``from model import build``, or a module beside the notebook)."""
    findings: List[Finding] = []
    parsed: List[_Cell] = []
    for cell in cells:
        problem = _syntax_problem(cell.masked)
        while problem is not None and _mask_automagic(cell, problem[0]):
            problem = _syntax_problem(cell.masked)
        if problem is None:
            parsed.append(cell)
        elif is_selected(UNPARSABLE, config.select, config.ignore):
            line, column, message = problem  # on the code without the cell's own indentation
            findings.append(Finding(UNPARSABLE, line, column + len(cell.indent),
                                    f"cell not ported, it does not parse: {message}", False, cell.number))
    if not parsed or not (project.keras_import or uses_framework("\n".join(cell.masked for cell in cells))):
        return findings, [], None

    joined, starts = _join(parsed)
    from porter.engine import port

    result = port(joined, config, cells=True, project=project)
    if result.error:
        return findings, [], _cell_error(result.error, starts)
    indents = {cell.number: len(cell.indent) for cell in parsed}
    for finding in result.findings:
        number, line = _map_line(finding.line, starts)
        findings.append(Finding(finding.code, line, finding.column + indents[number], finding.message, finding.fixed,
                                number, finding.severity))
    if is_selected(HIDDEN_RUN, config.select, config.ignore):
        findings.extend(_hidden_runs(parsed, only_at_margin=not result.changed))
    if not result.changed:
        return findings, [], None
    pieces = _split(result.source, [cell.number for cell in parsed])
    if pieces is None:
        return findings, [], "internal error: the port crossed a cell boundary; notebook left unchanged"
    diffs = []
    for cell, piece in zip(parsed, pieces):
        if not cell.masked.endswith("\n") and piece.endswith("\n"):
            piece = piece[:-1]
        new_source = cell.source if piece == cell.masked else _indented(unmask(piece, cell.magics), cell.indent)
        diffs.append((cell.number, cell.source, new_source))
        if new_source != cell.source:
            _set_source(cell.cell, new_source)
    return findings, diffs, None


def _leading_indent(source: str) -> Tuple[str, str]:
    """(indentation, code) of a cell whose first line that is not blank is indented: IPython runs
    it with that indentation removed from each line that has it (its ``leading_indent`` input
    transform), so the code is ported without it and gets it back after. Only when every line
    that is not blank has it (a line of a string at the margin would be changed by giving it
    back); else ``("", source)``."""
    lines = source.splitlines(keepends=True)
    first = next((line for line in lines if line.strip()), "")
    indent = first[:len(first) - len(first.lstrip(" \t"))]
    if not indent or not all(line.startswith(indent) or not line.strip() for line in lines):
        return "", source
    return indent, "".join(line[len(indent):] if line.startswith(indent) else line for line in lines)


def _indented(code: str, indent: str) -> str:
    """``code`` with ``indent`` given back to each line that is not blank."""
    if not indent:
        return code
    return "".join(indent + line if line.strip() else line for line in code.splitlines(keepends=True))


def _set_source(cell: dict, source: str) -> None:
    """In the form the cell had: a list of lines or one string."""
    cell["source"] = source.splitlines(keepends=True) if isinstance(cell.get("source"), list) else source


# ``%%writefile train.py``: a cell that writes a Python file (not one that appends to it, ``-a``).
_WRITEFILE = re.compile(r"%%(?:writefile|file)[ \t]+(?!-)(\S+\.py)[ \t]*\r?\n")


def _written_script(source: str) -> Optional[Tuple[str, str]]:
    """(the magic line, the script) of a cell that writes a Python script, which the notebook then
    runs (``!python train.py``) or imports: it is a file of the program, ported as one."""
    match = _WRITEFILE.match(source)
    if match is None:
        return None
    return source[:match.end()], source[match.end():]


def _keras_modules(scripts: Sequence[Tuple[int, dict, str, str]]) -> Set[str]:
    """The modules the cells write that are Keras code (``model`` for ``%%writefile model.py``): a
    script or cell that imports one (``from model import build``) trains a Keras model, framework
    import or not."""
    return {re.split(r"[\\/]", _WRITEFILE.match(magic).group(1))[-1][:-3] for _, _, magic, script in scripts
            if "keras" in script and uses_framework(script)}


def _port_script(number: int, script: str, config: Config, findings: List[Finding], keras_import: bool) -> str:
    """The port of the script that cell ``number`` writes, its findings (at the cell's lines, after
    the magic line) added to ``findings``; the script as it was when it cannot be ported."""
    from porter.engine import port

    result = port(script, config, project=Project(keras_import=keras_import))
    if result.error:
        if is_selected(UNPARSABLE, config.select, config.ignore):
            findings.append(Finding(UNPARSABLE, 1, 1, f"the script this cell writes is not ported: {result.error}",
                                    False, number))
        return script
    findings.extend(Finding(finding.code, finding.line + 1, finding.column, finding.message, finding.fixed, number,
                            finding.severity) for finding in result.findings)
    return result.source


# What runs a model in a line of Python: Keras' methods, a strategy's `run`, a PyTorch backward pass.
_MODEL_RUN = re.compile(r"\.(fit|fit_generator|evaluate|predict|train_on_batch|test_on_batch|predict_on_batch"
                        r"|run|backward)\(")


def _hidden_runs(cells: Sequence[_Cell], only_at_margin: bool) -> List[Finding]:
    """``%time history = model.fit(x, y)`` in a notebook the port changed: the call is masked
    from the port (it is IPython syntax), so nothing made it run on the IPU. In a notebook the
    port leaves as it is (ported already), only such a line at the margin of its cell, which is
    in no block and so outside any strategy's scope: a second port must not pass it silently."""
    found = []
    program = "\n".join(cell.masked for cell in cells)
    for cell in cells:
        lines = cell.source.splitlines()
        for original, _ in cell.magics.values():
            stripped = original.strip()
            if not _runs_python(stripped) or only_at_margin and original != original.lstrip():
                continue
            written = cell.indent + original  # as the cell has it (a cell indented as a whole)
            line = lines.index(written) + 1 if written in lines else 1
            column = len(written) - len(written.lstrip()) + 1
            made = _made_model(stripped, program)
            if _MODEL_RUN.search(stripped) is not None:
                message = (f"`{stripped}` runs model code inside a line magic, which the port cannot see: it is not "
                           "checked for the IPU (the strategy's scope, whole batches)")
            elif made is not None:
                message = (f"`{stripped}` makes `{made}`, which the notebook compiles or runs as a model, inside a line "
                           "magic, which the port cannot see: the model is not made in the IPU strategy's scope")
            else:
                continue
            found.append(Finding(HIDDEN_RUN, line, column, f"{message}; write it as Python (time the cell with "
                                 "`%%time`), or check it by hand", False, cell.number, WARNING))
    return found


# `%time model = keras.Sequential(...)`: the one name the Python of a line magic binds.
_MAGIC_BINDS = re.compile(r"^%+\w+(?:[ \t]+-\S+)*[ \t]+([A-Za-z_]\w*)[ \t]*=(?!=)")


def _made_model(line: str, program: str) -> Optional[str]:
    """The name a line magic binds (``%time model = build()``) when the program then compiles or
    trains it as a model (``model.compile(...)``, ``model.fit(...)``)."""
    match = _MAGIC_BINDS.match(line)
    if match is None:
        return None
    name = match.group(1)
    used = re.search(rf"\b{re.escape(name)}\.(?:compile|fit|fit_generator|evaluate|predict|train_on_batch)\(", program)
    return name if used is not None else None


def _mask_automagic(cell: _Cell, line: int) -> bool:
    """Mask line ``line`` of ``cell``, where it stops parsing, when it is a shell command IPython
    runs without ``!`` (its shell aliases and automagic line magics: ``ls ./data``, ``pip install
    x``): a line at the margin whose first word is one of them. Only a line that is not Python."""
    lines = cell.masked.splitlines(keepends=True)
    if not 0 < line <= len(lines):
        return False
    body = lines[line - 1].rstrip("\r\n")
    words = body.split(None, 1)
    if body != body.lstrip() or not words or words[0] not in _AUTOMAGIC:
        return False
    number = len(cell.magics)
    cell.magics[number] = (body, "")
    lines[line - 1] = f"{SHELL_LINE}{number}__{lines[line - 1][len(body):]}"
    cell.masked = "".join(lines)
    return True


def _syntax_problem(masked: str) -> Optional[Tuple[int, int, str]]:
    import ast

    try:
        ast.parse(masked)
    except SyntaxError as error:
        return error.lineno or 1, (error.offset or 1), (error.msg or "invalid syntax")
    except (ValueError, RecursionError, MemoryError) as error:
        return 1, 1, str(error) or type(error).__name__
    return None


def _join(cells: Sequence[_Cell]) -> Tuple[str, List[Tuple[int, int]]]:
    parts: List[str] = []
    starts: List[Tuple[int, int]] = []
    line = 1
    for cell in cells:
        parts.append(f"{CELL_MARKER}({cell.number})\n")
        line += 1
        starts.append((cell.number, line))
        body = cell.masked if cell.masked.endswith("\n") or not cell.masked else cell.masked + "\n"
        parts.append(body)
        line += body.count("\n")
    return "".join(parts), starts


def _split(source: str, numbers: Sequence[int]) -> Optional[List[str]]:
    """Cut the ported program at the marker lines; None unless every marker is there, in order,
    at the start of a line."""
    matches = list(_MARKER_LINE.finditer(source))
    if [int(match.group(1)) for match in matches] != list(numbers):
        return None
    pieces = []
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(source)
        pieces.append(source[match.end():end])
    prefix = source[:matches[0].start()] if matches else ""
    if prefix and pieces:
        pieces[0] = prefix + pieces[0]
    return pieces


def _cell_error(error: str, starts: Sequence[Tuple[int, int]]) -> str:
    match = re.search(r"line (\d+), column (\d+)", error)
    if match is None:
        return error
    number, line = _map_line(int(match.group(1)), starts)
    return error.replace(match.group(0), f"cell {number}, line {line}, column {match.group(2)}")


class _Positions:
    """Where each cell's ``source`` lines are in the notebook's JSON text: a small scanner that
    follows the JSON grammar only as far as ``cells[i].source`` (the text is valid JSON)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.index = 0
        self.line = 1
        self.found: Dict[int, List[int]] = {}

    def _space(self) -> None:
        text = self.text
        while self.index < len(text) and text[self.index] in " \t\r\n":
            if text[self.index] == "\n":
                self.line += 1
            self.index += 1

    def _string(self) -> str:
        text = self.text
        start = self.index + 1
        index = start
        while text[index] != '"':
            index += 2 if text[index] == "\\" else 1
        self.index = index + 1
        return text[start:index]

    def _skip(self) -> None:
        """Skip one value (nested values included)."""
        self._space()
        char = self.text[self.index]
        if char == '"':
            self._string()
        elif char in "[{":
            self._container(None)
        else:
            while self.index < len(self.text) and self.text[self.index] not in ",]} \t\r\n":
                self.index += 1

    def _container(self, on_item) -> None:
        """An object or array; ``on_item(key_or_index)`` reads each value (else it is skipped)."""
        closing = "]" if self.text[self.index] == "[" else "}"
        is_object = closing == "}"
        self.index += 1
        position = 0
        while True:
            self._space()
            if self.text[self.index] == closing:
                self.index += 1
                return
            if self.text[self.index] == ",":
                self.index += 1
                self._space()
            key = position
            if is_object:
                key = self._string()
                self._space()
                self.index += 1  # the colon
            self._space()
            if on_item is None or not on_item(key):
                self._skip()
            position += 1

    def scan(self) -> Dict[int, List[int]]:
        self._space()

        def top(key) -> bool:
            if key != "cells":
                return False
            self._space()
            self._container(cell)
            return True

        def cell(number) -> bool:
            self._space()
            if self.text[self.index] != "{":
                return False

            def field(key) -> bool:
                if key != "source":
                    return False
                self._space()
                lines = self.found.setdefault(number + 1, [])
                if self.text[self.index] == '"':
                    line = self.line
                    lines.extend([line] * (self._string().count("\\n") + 1))
                    return True

                def element(_) -> bool:
                    self._space()
                    lines.append(self.line)
                    return False

                self._container(element)
                return True

            self._container(field)
            return True

        self._container(top)
        return self.found


def json_lines(text: str) -> Dict[int, List[int]]:
    """Cell number -> the line of the notebook file that holds each line of its source (a
    ``source`` written as one string puts all its lines on one line of the file); empty when the
    text cannot be scanned."""
    try:
        return _Positions(text).scan()
    except (IndexError, ValueError):
        return {}


def file_line(lines: Dict[int, List[int]], cell: int, line: int) -> Optional[int]:
    found = lines.get(cell)
    if not found:
        return None
    return found[min(line, len(found)) - 1]
