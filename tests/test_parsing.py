"""Large files are parsed in pieces; the module must be the one a parse of the whole file gives."""

from pathlib import Path

import libcst as cst
import pytest

from porter import parsing

FIXTURES = sorted(path for path in (Path(__file__).parent.parent / "fixtures").glob("*/*.py"))


@pytest.fixture
def tiny_pieces(monkeypatch):
    """Every file counts as large and is cut at every top-level statement it can be cut at."""
    monkeypatch.setattr(parsing, "LARGE_FILE", 0)
    monkeypatch.setattr(parsing, "PIECE_SIZE", 1)


def assert_same_module(source: str) -> cst.Module:
    in_pieces = parsing.parse(source)
    whole = cst.parse_module(source)
    assert in_pieces.code == source
    assert in_pieces.deep_equals(whole)
    for attribute in ("default_indent", "default_newline", "has_trailing_newline", "encoding"):
        assert getattr(in_pieces, attribute) == getattr(whole, attribute)
    return in_pieces


@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_fixtures_parsed_in_pieces_give_the_whole_module(tiny_pieces, path):
    assert_same_module(path.read_text(encoding="utf-8"))


def test_a_large_script_is_cut_and_joined(tiny_pieces, monkeypatch):
    source = (
        "#!/usr/bin/env python\n"
        '"""Train a small model."""\n'
        "import torch\n"
        "\n"
        "\n"
        "# the model\n"
        "@torch.no_grad()\n"
        "def evaluate(model):\n"
        "\treturn model(1)\n"
        "\n"
        "# comments above a statement travel with it\n"
        "\n"
        "x = 1; y = 2\n"
        "if x:\n"
        "\tpass\n"
        "else:\n"
        "\tpass\n"
        "# the end\n"
    )
    pieces = []
    real = cst.parse_module
    monkeypatch.setattr(parsing.cst, "parse_module", lambda text: pieces.append(text) or real(text))
    module = assert_same_module(source)
    assert len(pieces) > 3  # cut, not parsed whole
    assert module.default_indent == "\t"  # seen in a later piece, not the first


@pytest.mark.parametrize("source", [
    # an indented comment closes the first block: it belongs to it, so no cut before `y`
    "def f():\n    return 1\n    # the block's own comment\n\ny = 2\n",
    # Windows line endings, no newline at the end
    "import os\r\n\r\nx = 1\r\n\r\ndef f():\r\n    return x\r\ny = f()",
    # form feeds between functions (Python counts lines at \n only)
    "def f():\n    pass\n\x0c\ndef g():\n    pass\n",
    # a string spanning lines that look like statements
    'text = """\nx = 1\ndef f():\n"""\ny = 2\n',
    # blocks indented differently in different places
    "if a:\n  b = 1\n\nif c:\n    d = 2\n",
])
def test_odd_files_come_out_exactly(tiny_pieces, source):
    assert_same_module(source)


def test_a_syntax_error_in_a_large_file_names_its_line(tiny_pieces):
    source = "import torch\n\nx = 1\n\ndef f(:\n    pass\n"
    with pytest.raises(parsing.ParseError, match=r"^syntax error at line 5, column 7"):
        parsing.parse(source)


def _largest_stdlib_modules(count: int):
    import sysconfig

    folder = Path(sysconfig.get_paths()["stdlib"])
    paths = [path for path in folder.glob("*.py") if path.is_file()]
    return sorted(paths, key=lambda path: (-path.stat().st_size, path.name))[:count]


@pytest.mark.parametrize("path", _largest_stdlib_modules(12), ids=lambda path: path.name)
def test_real_modules_parsed_in_pieces_give_the_whole_module(monkeypatch, path):
    """Code no one here wrote, cut in pieces of 2 KB: the same module as a whole parse."""
    monkeypatch.setattr(parsing, "LARGE_FILE", 0)
    monkeypatch.setattr(parsing, "PIECE_SIZE", 2048)
    try:
        source = path.read_text(encoding="utf-8")
        cst.parse_module(source)
    except (UnicodeDecodeError, cst.ParserSyntaxError):
        pytest.skip("not UTF-8 or not parsable by libcst")
    assert parsing._parse_in_pieces(source) is not None  # cut and joined, not parsed whole
    assert_same_module(source)
