"""Real code no one here wrote: the CPython standard library, ported with framework imports added.

Every ``.py`` file below ``sysconfig.get_paths()["stdlib"]`` (site-packages excluded) gets a
framework prelude (``import tensorflow as tf`` ... or ``import tensorflow.compat.v1 as tf``) after
its docstring and ``__future__`` imports, so that every rule of those frameworks runs over
real-world syntax; half of the files also get a small training function at the end, so that the
engine edits, renders and re-verifies them with the real-world code around the edits. Then: the engine never raises, the output compiles, a second port changes nothing, and a
file the parser rejects comes back unchanged with a clean error (see ``robustness.port_problems``).

Coverage, to stay within about a minute on two cores: every file outside the ``test`` package, and
a fixed quarter of the files of the ``test`` package (chosen by a hash of the path, so the same
ones every run): about 58% of the standard library's bytes and 66% of its files. The prelude, and
whether a file gets the training function, are also chosen by hashes of the path.
The files are split into chunks (one test each) and ported on a process pool as wide as the machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zlib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from porter.engine import port
from porter.files import FileError, decode
from robustness import PRELUDES, SNIPPETS, port_problems, python_accepts, with_prelude

STDLIB = Path(sysconfig.get_paths()["stdlib"])
SKIPPED_DIRS = {"site-packages", "dist-packages", "__pycache__"}
TEST_PACKAGE_SHARE = 4  # one file in four of the ``test`` package
CHUNKS = 24


def _hash(text: str) -> int:
    return zlib.crc32(text.encode("utf-8"))


def stdlib_files():
    found = []
    for root, dirs, names in os.walk(STDLIB):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        found.extend(Path(root, name) for name in sorted(names) if name.endswith(".py"))
    return found


def selected(path: Path) -> bool:
    relative = path.relative_to(STDLIB).as_posix()
    return not relative.startswith("test/") or _hash(relative) % TEST_PACKAGE_SHARE == 0


def variant_of(path: Path) -> str:
    return sorted(PRELUDES)[_hash("variant:" + path.relative_to(STDLIB).as_posix()) % len(PRELUDES)]


FILES = [path for path in stdlib_files() if selected(path)]


def check_file(path: Path):
    """The problems of one stdlib file, as ``(relative path, problem)`` pairs."""
    relative = path.relative_to(STDLIB).as_posix()
    try:
        text = decode(path.read_bytes()).text
    except FileError:
        return []  # not text Python can read: the CLI reports it (see test_robust_cli)
    variant = variant_of(path)
    source = with_prelude(text, PRELUDES[variant])
    if _hash("snippet:" + relative) % 2:
        if not source.endswith(("\n", "\r")):
            source += "\n"
        source += SNIPPETS[variant]
    return [(relative, f"[{variant}] {problem}") for problem in port_problems(source)]


@pytest.fixture(scope="module")
def pool():
    with ProcessPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as executor:
        yield executor


def test_the_standard_library_is_there():
    assert len(FILES) > 500, f"only {len(FILES)} files found below {STDLIB}"


@pytest.mark.parametrize("chunk", range(CHUNKS), ids=lambda chunk: f"chunk{chunk:02d}")
def test_stdlib_ports_cleanly(chunk, pool):
    files = FILES[chunk::CHUNKS]
    problems = [problem for found in pool.map(check_file, files, chunksize=4) for problem in found]
    assert not problems, "\n".join(f"{path}: {problem}" for path, problem in problems)


def rejected_by_the_porter(path: Path):
    """The bytes of a stdlib file the porter must refuse (undecodable, or code the engine's parser
    rejects once a framework import makes it parse the file), else None."""
    data = path.read_bytes()
    try:
        text = decode(data).text
    except FileError:
        return data
    if python_accepts(text):
        return None
    # a framework import after the leading comment lines (a BOM and a coding cookie stay first)
    lines = data.splitlines(keepends=True)
    head = 0
    while head < len(lines) and lines[head].lstrip(b"\xef\xbb\xbf").startswith(b"#"):
        head += 1
    data = b"".join(lines[:head]) + b"import torch\n" + b"".join(lines[head:])
    return data if port(decode(data).text).error is not None else None


def test_stdlib_files_the_parser_rejects_get_a_clean_cli_error(tmp_path, pool):
    """Python 2 test data, undecodable and deliberately broken files: through ``ipu-port --write``
    beside a good file, each gets one line on stderr naming it, exit 2, and its bytes stay."""
    files = stdlib_files()
    copies = {}
    for path, data in zip(files, pool.map(rejected_by_the_porter, files, chunksize=32)):
        if data is not None:
            target = tmp_path / f"{len(copies):03d}_{path.name}"
            target.write_bytes(data)
            copies[target] = data
    assert len(copies) >= 5, "the standard library carries Python 2 and broken test data"
    good = tmp_path / "zz_good.py"
    good.write_text("import tensorflow as tf\n\nds = tf.data.Dataset.range(8).batch(4)\n")
    completed = subprocess.run(
        [sys.executable, "-m", "porter", "--write", str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )
    assert completed.returncode == 2, completed.stderr
    assert "Traceback" not in completed.stderr
    for target, data in copies.items():
        assert target.read_bytes() == data, target
        named = [line for line in completed.stderr.splitlines() if line.startswith(f"{target}: ")]
        assert len(named) == 1, (target, completed.stderr)
    assert "drop_remainder=True" in good.read_text()
