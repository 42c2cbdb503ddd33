"""porter.files: finding files, bytes to text and back exactly, atomic writes."""

import os
import stat

import pytest

from porter.files import FileError, Source, decode, discover, encode, read, write_atomic


@pytest.mark.parametrize("data, encoding", [
    (b"import os\n", "utf-8"),
    (b"import os\r\nx = 1\r\n", "utf-8"),
    (b"a = 1\rb = 2\r\nc = 3\n", "utf-8"),  # mixed line endings
    (b"\xef\xbb\xbfx = '\xc3\xa9'\r\n", "utf-8-sig"),
    (b"# -*- coding: latin-1 -*-\nx = '\xe9'\n", "iso-8859-1"),
    (b"#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\nx = '\x80'\n", "cp1252"),
    (b"", "utf-8"),
])
def test_decode_then_encode_gives_the_same_bytes(data, encoding):
    source = decode(data)
    assert source.encoding == encoding
    assert "\r\n" not in source.text or b"\r\n" in data  # no newline translation
    assert encode(source.text, source) == data


def test_decode_keeps_the_text_exact():
    assert decode(b"\xef\xbb\xbfa\r\nb\rc\n").text == "a\r\nb\rc\n"
    assert decode(b"# coding: latin-1\n# \xe9\n").text == "# coding: latin-1\n# \xe9\n"


@pytest.mark.parametrize("data, message", [
    (b"x = 1\n# \xe9\n", "cannot decode as utf-8: byte 0xe9 at offset 8; declare the encoding with a coding comment"),
    (b"# \xe9\n", "invalid or missing encoding declaration"),
    (b"# coding: klingon\n", "unknown encoding: klingon"),
    (b"x = 1\n\x00", "binary file (contains NUL bytes)"),
    (b"\xef\xbb\xbf# coding: latin-1\n", "encoding problem: utf-8"),
])
def test_decode_errors_are_one_line(data, message):
    with pytest.raises(FileError) as error:
        decode(data)
    assert str(error.value) == message


def test_encode_reports_text_the_encoding_cannot_hold():
    with pytest.raises(FileError) as error:
        encode("x = '\u2603'\n", Source("", "iso-8859-1"))
    assert str(error.value) == "the port cannot be written in iso-8859-1: ordinal not in range(256)"


def test_read_errors(tmp_path):
    with pytest.raises(FileError, match="^no such file$"):
        read(str(tmp_path / "missing.py"))
    with pytest.raises(FileError, match="^is a directory$"):
        read(str(tmp_path))


def test_discover_sorts_and_skips_tool_folders(tmp_path):
    for name in ("b.py", "a.py", "sub/c.py", "sub/z/d.py", "readme.md", ".venv/e.py", "venv/e.py",
                 "build/e.py", "dist/e.py", "x.egg-info/e.py", "__pycache__/e.py", ".git/e.py",
                 "node_modules/e.py", ".mypy_cache/e.py"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    root = str(tmp_path)
    assert discover([root]) == [os.path.join(root, *parts) for parts in (
        ("a.py",), ("b.py",), ("sub", "c.py"), ("sub", "z", "d.py"))]
    # Files and stdin are passed through as given, in order; so is a missing path (read reports it).
    assert discover(["-", "readme.md", "missing.py"]) == ["-", "readme.md", "missing.py"]


def test_write_atomic_keeps_the_mode_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "train.py"
    path.write_bytes(b"old\n")
    path.chmod(0o754)
    write_atomic(str(path), b"new\r\n")
    assert path.read_bytes() == b"new\r\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o754
    assert os.listdir(tmp_path) == ["train.py"]


def test_write_atomic_gives_a_new_file_the_umask_mode(tmp_path):
    umask = os.umask(0o027)
    try:
        write_atomic(str(tmp_path / "new.py"), b"x = 1\n")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.py").stat().st_mode) == 0o640


def test_write_atomic_writes_through_a_symlink(tmp_path):
    (tmp_path / "real.py").write_bytes(b"old\n")
    os.symlink("real.py", tmp_path / "link.py")
    write_atomic(str(tmp_path / "link.py"), b"new\n")
    assert (tmp_path / "link.py").is_symlink()
    assert (tmp_path / "real.py").read_bytes() == b"new\n"


def test_write_atomic_into_a_missing_folder_is_a_file_error(tmp_path):
    with pytest.raises(FileError) as error:
        write_atomic(str(tmp_path / "missing" / "x.py"), b"")
    assert str(error.value) == "cannot write: No such file or directory"
