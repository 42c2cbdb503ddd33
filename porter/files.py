"""Finding files, reading bytes into text and back, and atomic writes.

Text is decoded exactly as Python would (a UTF-8 BOM or a PEP 263 coding cookie), without any
newline translation, so LF, CRLF and mixed line endings come back as they were.
"""

from __future__ import annotations

import io
import os
import stat
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, List

# Folders never searched when a folder is given (as ruff and black skip them).
SKIPPED_DIRS = frozenset({
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", "__pycache__", "node_modules", "build", "dist", "site-packages", ".eggs",
})


class FileError(Exception):
    """A file that cannot be read or written; the message is the cause, in one line."""


@dataclass(frozen=True)
class Source:
    text: str
    encoding: str  # the codec that round-trips the bytes ("utf-8-sig" keeps a BOM)


def discover(paths: Iterable[str]) -> List[str]:
    """Files to port, in order: given files as they are, ``*.py`` below given folders, sorted."""
    found: List[str] = []
    for given in paths:
        path = Path(given)
        if given == "-" or not path.is_dir():
            found.append(given)
            continue
        below = []
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.endswith(".egg-info"))
            below.extend(os.path.join(root, name) for name in files if name.endswith(".py"))
        found.extend(sorted(below))
    return found


def decode(data: bytes) -> Source:
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


def read(path: str) -> Source:
    try:
        if os.path.isdir(path):
            raise FileError("is a directory")
        with open(path, "rb") as handle:
            data = handle.read()
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
    except FileNotFoundError:
        mode = _new_file_mode()  # not mkstemp's 0o600
    except OSError as error:
        raise FileError(error.strerror or str(error)) from None
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
