"""Finding files, reading bytes into text and back, and atomic writes.

Text is decoded exactly as Python would (a UTF-8 BOM or a PEP 263 coding cookie), without any
newline translation, so LF, CRLF and mixed line endings come back as they were.
"""

from __future__ import annotations

import codecs
import io
import os
import stat
from dataclasses import dataclass
from typing import Iterable, List, Optional

SUFFIXES = (".py", ".ipynb")


class FileError(Exception):
    """A file that cannot be read or written; the message is the cause, in one line."""


@dataclass(frozen=True)
class Source:
    text: str
    encoding: str  # the codec that round-trips the bytes ("utf-8-sig" keeps a BOM)


def discover(paths: Iterable[str], projects=None, force_exclude: Optional[bool] = None) -> List[str]:
    """Files to port, each once, in a fixed order: given files where they are given, ``*.py`` and
    ``*.ipynb`` below given folders in sorted order, leaving out what ``.gitignore`` (inside a git
    working tree) and the settings' ``exclude``/``extend-exclude`` leave out. With
    ``force_exclude`` (or the setting), the excludes apply to the given files too (pre-commit
    passes files one by one)."""
    from porter.config import Projects

    projects = projects if projects is not None else Projects({})
    found: List[str] = []
    seen = set()

    def add(path: str) -> None:
        key = path if path == "-" else os.path.normpath(os.path.abspath(path))
        if key not in seen:
            seen.add(key)
            found.append(path)

    for given in paths:
        if given == "-":
            add(given)
            continue
        absolute = os.path.abspath(given)
        if not os.path.isdir(absolute):
            forced = force_exclude if force_exclude is not None else projects.for_path(given).force_exclude
            if not (forced and _excluded_path(absolute, projects)):
                add(given)
            continue
        for path in sorted(_walk(given, absolute, projects)):
            add(path)
    return found


def _walk(given: str, absolute: str, projects) -> List[str]:
    def excluded(path: str, is_dir: bool, folder: str) -> bool:
        return bool(projects.for_folder(folder).excludes.match(path, is_dir))

    return [os.path.join(given, relative) for relative in _files_below(absolute, excluded)
            if relative.endswith(SUFFIXES)]


def _files_below(absolute: str, excluded) -> List[str]:
    """The files below a folder, as paths relative to it, leaving out what git ignores (inside a
    git working tree) and what ``excluded(path, is_dir, its folder)`` says; no folder that is left
    out is entered."""
    from porter import ignore

    in_git = ignore.git_root(absolute) is not None
    found: List[str] = []
    # (folder, its path relative to ``absolute``, the gitignore pattern sets in force there)
    stack = [(absolute, "", ignore.gitignores_above(absolute))]
    while stack:
        folder, relative, sets = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            path = os.path.join(folder, entry.name)
            if excluded(path, is_dir, folder) or ignore.is_ignored(sets, path, is_dir):
                continue
            if is_dir:
                local = ignore.load(path) if in_git else None
                stack.append((path, os.path.join(relative, entry.name), [*sets, local] if local else sets))
            else:
                found.append(os.path.join(relative, entry.name))
    return found


def _excluded_path(absolute: str, projects) -> bool:
    """Whether the settings exclude a file or any folder above it, below the settings' folder
    and, for a file in the current folder, below that (a checkout in ``/tmp/build/`` is fine)."""
    from porter.config import matches_path

    cwd = os.getcwd()
    stop = cwd if absolute.startswith(cwd.rstrip(os.sep) + os.sep) else None
    return matches_path(projects.for_path(absolute).excludes, absolute, stop)


def walk_all(folder: str) -> List[str]:
    """Every file below ``folder`` (relative paths, sorted) but what git ignores and what the
    default excludes skip (version control, virtual environments, caches, build output): the
    files ``--out-dir`` copies."""
    from porter import ignore
    from porter.config import DEFAULT_EXCLUDE

    skipped = ignore.PatternSet(os.path.abspath(os.sep), tuple(ignore.parse(DEFAULT_EXCLUDE)))
    return sorted(_files_below(os.path.abspath(folder), lambda path, is_dir, _: skipped.match(path, is_dir)))


def decode(data: bytes) -> Source:
    fast = _decode_plain_utf8(data)
    if fast is not None:
        return fast
    import tokenize  # here, not at start-up: most files take the fast path above

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        raise FileError(str(error).splitlines()[0]) from None
    if b"\x00" in data:
        raise FileError("binary file (contains NUL bytes)")
    try:
        return Source(data.decode(encoding), encoding)
    except UnicodeDecodeError as error:
        raise FileError(
            f"cannot decode as {encoding}: byte 0x{data[error.start]:02x} at offset {error.start}; "
            "declare the encoding with a coding comment"
        ) from None
    except LookupError:
        raise FileError(f"unknown encoding {encoding!r} in the coding comment") from None


def encode(text: str, source: Source) -> bytes:
    try:
        return text.encode(source.encoding)
    except UnicodeEncodeError as error:
        raise FileError(f"the port cannot be written in {source.encoding}: {error.reason}") from None


def _decode_plain_utf8(data: bytes):
    """The common case, without tokenize's encoding detection (several times the cost of the read
    itself): no BOM, no coding cookie in the first two lines, valid UTF-8. Anything else, None:
    ``decode`` then takes the full path, with its exact messages."""
    if data.startswith(codecs.BOM_UTF8):
        return None
    first = data.find(b"\n")
    second = data.find(b"\n", first + 1) if first >= 0 else -1
    if b"coding" in (data if second < 0 else data[:second]):
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if b"\x00" in data:
        raise FileError("binary file (contains NUL bytes)")
    return Source(text, "utf-8")


def read(path: str) -> Source:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except IsADirectoryError:  # (not an isdir() call before every read: it costs a stat)
        raise FileError("is a directory") from None
    except FileNotFoundError:
        raise FileError("no such file") from None
    except PermissionError:
        raise FileError("permission denied") from None
    except OSError as error:
        raise FileError(error.strerror or str(error)) from None
    return decode(data)


def write_atomic(path: str, data: bytes) -> None:
    """Write through a temporary file in the same folder, then rename over the target: a reader
    (or a crash) sees the old bytes or the new bytes, never a mix. The file mode is kept."""
    target = os.path.realpath(path)
    folder = os.path.dirname(target) or "."
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
        if not os.access(target, os.W_OK):
            # the rename below would replace it anyway: respect the file's own permission
            raise FileError("cannot write: read-only file")
    except FileNotFoundError:
        mode = _new_file_mode()  # not mkstemp's 0o600
    except OSError as error:
        raise FileError(error.strerror or str(error)) from None
    import tempfile  # here, not at start-up: most runs write nothing

    try:
        descriptor, temporary = tempfile.mkstemp(prefix=".ipu-port-", suffix=".tmp", dir=folder)
    except OSError as error:
        raise FileError(f"cannot write: {error.strerror or error}") from None
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except OSError as error:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise FileError(f"cannot write: {error.strerror or error}") from None


def _new_file_mode() -> int:
    """The mode ``open()`` gives a new file: 0o666 less the umask."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask
