"""Bad inputs through the real command line, with ``--write``, beside good files.

Each bad file must give one line on stderr naming it (``path: cause``), the run exits 2, the bad
file's bytes and mode stay as they were, and the good files beside it are still ported. Inputs that
are odd but valid (a latin-1 cookie, a BOM, CRLF or mixed line endings, an empty file, a folder
named ``x.py``, a 5 MB file) are ported (or left alone) with what makes them odd kept.

The tests run as root on CI, and root reads and writes files whatever their mode. Where a test
needs permissions to hold (a file without read permission, a read-only file or folder), it runs the
command as root without the two capabilities that let root ignore them (CAP_DAC_OVERRIDE and
CAP_DAC_READ_SEARCH, dropped from the bounding set before the command starts): the permission
checks are then the kernel's, as for any user. Not root: chmod alone does it.
"""

from __future__ import annotations

import ctypes
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from porter.engine import port

KERAS_GOOD = '''import tensorflow as tf


def main():
    dataset = tf.data.Dataset.from_tensor_slices(([1.0] * 64, [0] * 64)).batch(16)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(dataset, epochs=1)


if __name__ == "__main__":
    main()
'''
PLAIN_GOOD = "import os\n\nprint(os.getcwd())\n"
ML_LINES = 'import tensorflow as tf\n\nds = tf.data.Dataset.range(64).batch(8)\n'

PR_CAPBSET_DROP = 24
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 1, 2


def _drop_root_permission_bypass():
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def _can_enforce_permissions(tmp_path: Path) -> bool:
    probe = tmp_path / "probe"
    probe.write_text("x")
    probe.chmod(0)
    try:
        completed = subprocess.run(
            [sys.executable, "-c", f"open({str(probe)!r}).read()"],
            preexec_fn=_drop_root_permission_bypass if os.geteuid() == 0 else None,
            capture_output=True,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        probe.unlink()
    return completed.returncode != 0


def run_cli(*args, enforce_permissions=False):
    return subprocess.run(
        [sys.executable, "-m", "porter", *map(str, args)],
        capture_output=True, timeout=300,
        preexec_fn=_drop_root_permission_bypass if enforce_permissions and os.geteuid() == 0 else None,
    )


def good_files(folder: Path):
    """Files that must be ported (or left alone) whatever happens beside them."""
    folder.mkdir(parents=True, exist_ok=True)
    keras = folder / "a_train.py"
    keras.write_text(KERAS_GOOD)
    plain = folder / "b_plain.py"
    plain.write_text(PLAIN_GOOD)
    return {keras: KERAS_GOOD, plain: PLAIN_GOOD}


def assert_good_files_ported(files):
    for path, original in files.items():
        expected = port(original).source
        assert path.read_text() == expected, path
    assert any(path.read_text() != original for path, original in files.items())


def snapshot(path: Path):
    info = os.lstat(path)
    content = os.readlink(path) if stat.S_ISLNK(info.st_mode) else (
        None if stat.S_ISDIR(info.st_mode) else path.read_bytes())
    return content, stat.S_IMODE(info.st_mode), stat.S_IFMT(info.st_mode)


def error_lines(completed, path: Path):
    stderr = completed.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr
    return [line for line in stderr.splitlines() if line.startswith(f"{path}: ")]


def assert_bad_file_reported(completed, bad: Path, before, cause_words=()):
    assert completed.returncode == 2, completed
    lines = error_lines(completed, bad)
    assert len(lines) == 1, completed.stderr
    for word in cause_words:
        assert word in lines[0].lower(), lines[0]
    assert snapshot(bad) == before


BAD_CONTENTS = {
    "syntax-error": (b"import tensorflow as tf\n\ndef broken(:\n    pass\n", ("syntax",)),
    "python2-print": (b"import tensorflow as tf\n\nprint 'training'\n", ("syntax",)),
    "non-utf8-without-cookie": (b"import torch\n\nname = 'caf\xe9'\n", ("decode",)),
    "binary": (bytes(range(256)) * 8, ("binary",)),
    "unknown-cookie": (b"# -*- coding: no-such-codec -*-\nimport torch\n", ("encoding",)),
    "nul-in-text": (b"import torch\nx = 1\x00\n", ("binary",)),
}


@pytest.mark.parametrize("kind", sorted(BAD_CONTENTS))
def test_bad_file_beside_good_files(tmp_path, kind):
    data, cause_words = BAD_CONTENTS[kind]
    good = good_files(tmp_path)
    bad = tmp_path / "c_bad.py"
    bad.write_bytes(data)
    bad.chmod(0o640)
    before = snapshot(bad)
    completed = run_cli("--write", tmp_path)
    assert_bad_file_reported(completed, bad, before, cause_words)
    assert_good_files_ported(good)


def test_bad_file_given_by_name_beside_good_files(tmp_path):
    good = good_files(tmp_path)
    bad = tmp_path / "broken.py"
    bad.write_bytes(b"import torch\nclass :\n")
    before = snapshot(bad)
    completed = run_cli("--write", *good, bad)
    assert_bad_file_reported(completed, bad, before, ("syntax",))
    assert_good_files_ported(good)


def test_several_bad_files_each_get_their_line(tmp_path):
    good = good_files(tmp_path)
    bads = {}
    for index, kind in enumerate(sorted(BAD_CONTENTS)):
        bad = tmp_path / f"c_bad_{index}.py"
        bad.write_bytes(BAD_CONTENTS[kind][0])
        bads[bad] = snapshot(bad)
    completed = run_cli("--write", tmp_path)
    assert completed.returncode == 2
    for bad, before in bads.items():
        assert_bad_file_reported(completed, bad, before)
    assert_good_files_ported(good)


def port_beside_good_files(tmp_path: Path, name: str, data: bytes) -> bytes:
    """Write ``data`` to ``name`` beside the good files, run ``--write`` (which must succeed) and
    give back the new bytes of ``name``."""
    good = good_files(tmp_path)
    path = tmp_path / name
    path.write_bytes(data)
    completed = run_cli("--write", tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert_good_files_ported(good)
    return path.read_bytes()


def test_latin1_file_with_cookie_is_ported_in_latin1(tmp_path):
    data = port_beside_good_files(
        tmp_path, "latin.py", b"# -*- coding: latin-1 -*-\n# donn\xe9es d'entra\xeenement\n" + ML_LINES.encode())
    assert data.startswith(b"# -*- coding: latin-1 -*-\n# donn\xe9es d'entra\xeenement\n")
    assert "drop_remainder=True" in data.decode("latin-1")


def test_utf8_bom_is_kept(tmp_path):
    data = port_beside_good_files(tmp_path, "bom.py", b"\xef\xbb\xbf" + ML_LINES.encode())
    assert data.startswith(b"\xef\xbb\xbfimport tensorflow as tf\n")
    assert data.count(b"\xef\xbb\xbf") == 1
    assert b"drop_remainder=True" in data


def test_crlf_line_endings_are_kept(tmp_path):
    data = port_beside_good_files(tmp_path, "crlf.py", KERAS_GOOD.replace("\n", "\r\n").encode())
    assert data != KERAS_GOOD.replace("\n", "\r\n").encode()
    assert b"\n" not in data.replace(b"\r\n", b""), "every line ending stays CRLF"
    assert data.decode() == port(KERAS_GOOD).source.replace("\n", "\r\n")


def test_mixed_line_endings_are_kept(tmp_path):
    lines = KERAS_GOOD.splitlines(keepends=True)
    mixed = "".join(line.replace("\n", "\r\n") if index % 2 else line for index, line in enumerate(lines))
    ported = port_beside_good_files(tmp_path, "mixed.py", mixed.encode()).decode()
    assert ported != mixed
    # every line the port did not touch keeps its own line ending
    kept = [line for line in mixed.splitlines(keepends=True) if line.strip()]
    ported_lines = ported.splitlines(keepends=True)
    untouched = [line for line in kept if line in ported_lines]
    assert len(untouched) >= len(kept) - 4
    assert any(line.endswith("\r\n") for line in untouched) and any(
        not line.endswith("\r\n") for line in untouched)


def test_empty_file_is_left_alone(tmp_path):
    good = good_files(tmp_path)
    path = tmp_path / "empty.py"
    path.write_bytes(b"")
    before = snapshot(path)
    completed = run_cli("--write", tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert snapshot(path) == before
    assert not error_lines(completed, path)
    assert_good_files_ported(good)


def test_folder_named_like_a_python_file_is_searched_not_read(tmp_path):
    good = good_files(tmp_path)
    folder = tmp_path / "x.py"
    inner = good_files(folder / "pkg")
    completed = run_cli("--write", tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert folder.is_dir()
    assert_good_files_ported(good)
    assert_good_files_ported(inner)
    # given by name, it is a folder to search too
    completed = run_cli("--check", folder)
    assert completed.returncode == 0, completed.stderr


def test_broken_symlink(tmp_path):
    good = good_files(tmp_path)
    link = tmp_path / "c_link.py"
    link.symlink_to(tmp_path / "does-not-exist.py")
    before = snapshot(link)
    completed = run_cli("--write", tmp_path)
    assert_bad_file_reported(completed, link, before)
    assert not (tmp_path / "does-not-exist.py").exists()
    assert_good_files_ported(good)


def test_symlink_to_a_good_file_ports_the_target_and_keeps_the_link(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    target = real / "train.py"
    target.write_text(KERAS_GOOD)
    link_dir = tmp_path / "links"
    link_dir.mkdir()
    link = link_dir / "train.py"
    link.symlink_to(target)
    completed = run_cli("--write", link)
    assert completed.returncode == 0, completed.stderr
    assert link.is_symlink()
    assert target.read_text() == port(KERAS_GOOD).source


@pytest.fixture
def permissions(tmp_path):
    if not _can_enforce_permissions(tmp_path):
        pytest.skip("file permissions cannot be enforced here (root without a way to drop "
                    "CAP_DAC_OVERRIDE): an unreadable or read-only file cannot exist")


def test_unreadable_file(tmp_path, permissions):
    good = good_files(tmp_path)
    bad = tmp_path / "c_secret.py"
    bad.write_text(ML_LINES)
    bad.chmod(0)
    before = snapshot(bad)
    completed = run_cli("--write", tmp_path, enforce_permissions=True)
    assert_bad_file_reported(completed, bad, before, ("permission",))
    assert_good_files_ported(good)


def test_read_only_file_is_not_written(tmp_path, permissions):
    good = good_files(tmp_path)
    bad = tmp_path / "c_read_only.py"
    bad.write_text(ML_LINES)
    bad.chmod(0o444)
    before = snapshot(bad)
    completed = run_cli("--write", tmp_path, enforce_permissions=True)
    assert_bad_file_reported(completed, bad, before)
    assert_good_files_ported(good)
    assert not list(tmp_path.glob(".ipu-port-*"))


def test_read_only_folder_is_not_written(tmp_path, permissions):
    good = good_files(tmp_path / "writable")
    folder = tmp_path / "locked"
    folder.mkdir()
    bad = folder / "train.py"
    bad.write_text(ML_LINES)
    before = snapshot(bad)
    folder.chmod(0o555)
    try:
        completed = run_cli("--write", tmp_path, enforce_permissions=True)
        assert_bad_file_reported(completed, bad, before)
        assert sorted(os.listdir(folder)) == ["train.py"]
    finally:
        folder.chmod(0o755)
    assert_good_files_ported(good)


def test_five_megabyte_files(tmp_path):
    """A 5 MB training script (its weights inlined as a string, as exported scripts do) is ported;
    a 5 MB file without ML code is never parsed and stays as it is."""
    good = good_files(tmp_path)
    blob = "".join(f"{(index * 7919) % 65536:04x}" for index in range(5 * 1024 * 1024 // 4))
    big_ml = tmp_path / "big_model.py"
    big_ml.write_text(ML_LINES + f'\nWEIGHTS = (\n    "{blob}"\n)\n')
    plain_lines = "".join(f"value_{index} = {index} * 2  # plain python\n" for index in range(170000))
    big_plain = tmp_path / "big_plain.py"
    big_plain.write_text(plain_lines)
    assert big_ml.stat().st_size > 5 * 1024 * 1024 and big_plain.stat().st_size > 5 * 1024 * 1024
    before = snapshot(big_plain)
    completed = run_cli("--write", tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert "drop_remainder=True" in big_ml.read_text()
    assert blob in big_ml.read_text()
    assert snapshot(big_plain) == before
    assert_good_files_ported(good)


def test_notebook_with_invalid_json(tmp_path):
    pytest.importorskip("porter.notebook", reason="no .ipynb support in this version")
    good = good_files(tmp_path)
    bad = tmp_path / "c_broken.ipynb"
    bad.write_bytes(b'{"cells": [{"cell_type": "code", "source": ["import torch\\n"]')
    before = snapshot(bad)
    completed = run_cli("--write", tmp_path)
    assert completed.returncode == 2, completed
    assert error_lines(completed, bad), completed.stderr
    assert snapshot(bad) == before
    assert_good_files_ported(good)


def test_mode_of_a_ported_file_is_kept(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(KERAS_GOOD)
    path.chmod(0o751)
    completed = run_cli("--write", path)
    assert completed.returncode == 0, completed.stderr
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert path.read_text() == port(KERAS_GOOD).source
    assert not list(tmp_path.glob(".ipu-port-*"))
