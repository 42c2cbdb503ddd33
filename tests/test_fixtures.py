"""Whole-script fixtures: ``fixtures/<group>/<name>.py`` ports to ``<name>.expected.py`` byte for
byte, and the expected output ports to itself. ``<name>.options.json``, when present, holds the
Config fields the fixture is ported with (for example ``{"ipus": 2}``)."""

import json
from pathlib import Path

import pytest

from porter.config import Config
from porter.engine import port

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
INPUTS = sorted(
    path for path in FIXTURES.rglob("*.py") if not path.name.endswith(".expected.py")
)


def fixture_config(path: Path) -> Config:
    options = path.with_name(path.stem + ".options.json")
    if not options.exists():
        return Config()
    values = json.loads(options.read_text())
    return Config(**{key: tuple(value) if isinstance(value, list) else value for key, value in values.items()})


def expected_path(path: Path) -> Path:
    return path.with_name(path.stem + ".expected.py")


@pytest.mark.parametrize("path", INPUTS, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_fixture_ports_to_expected(path):
    config = fixture_config(path)
    result = port(path.read_text(encoding="utf-8"), config)
    assert result.error is None
    assert result.source == expected_path(path).read_text(encoding="utf-8")


@pytest.mark.parametrize("path", INPUTS, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_fixture_port_is_stable(path):
    config = fixture_config(path)
    expected = expected_path(path).read_text(encoding="utf-8")
    again = port(expected, config)
    assert again.error is None
    assert again.source == expected
    assert not again.changed


def test_every_fixture_has_an_expected_output():
    assert INPUTS
    for path in INPUTS:
        assert expected_path(path).exists(), path
