"""Whole-script fixtures: ``fixtures/<group>/<name>.py`` ports to ``<name>.expected.py`` byte for
byte, the expected output ports to itself, and ``<name>.findings.txt`` is the exact text report of
the port (the lines ``ipu-port <name>.py`` prints, in its order), so a changed message, code or
line number fails the fixture that shows it. ``<name>.options.json``, when present, holds the
Config fields the fixture is ported with (for example ``{"ipus": 2}``). A notebook fixture
``<name>.ipynb`` is checked the same way against ``<name>.expected.ipynb``, ported as the CLI ports
a notebook (the whole file, outputs and metadata included).

After an intended change, regenerate the snapshots with

    IPU_PORT_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_fixtures.py

which rewrites every ``.expected.py`` and ``.findings.txt`` that differs and fails each test that
rewrote one, naming the file: read the diff, commit it, and run the tests again. Update mode is
refused when ``CI`` is set, so a CI run never passes by rewriting what it checks."""

import json
import os
from pathlib import Path

import pytest

from porter.cli import port_text
from porter.config import Config
from porter.engine import port
from porter.report import finding_line

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
INPUTS = sorted(
    path for path in FIXTURES.rglob("*.py") if not path.name.endswith(".expected.py")
)
NOTEBOOKS = sorted(
    path for path in FIXTURES.rglob("*.ipynb") if not path.name.endswith(".expected.ipynb")
)
UPDATE = os.environ.get("IPU_PORT_UPDATE_SNAPSHOTS", "") not in ("", "0")


def fixture_config(path: Path) -> Config:
    options = path.with_name(path.stem + ".options.json")
    if not options.exists():
        return Config()
    values = json.loads(options.read_text())
    return Config(**{key: tuple(value) if isinstance(value, list) else value for key, value in values.items()})


def expected_path(path: Path) -> Path:
    return path.with_name(path.stem + path.suffix.replace(".", ".expected."))


def findings_path(path: Path) -> Path:
    return path.with_name(path.stem + ".findings.txt")


def findings_report(path: Path) -> str:
    """What ``ipu-port NAME.py`` prints for the fixture, one line per finding (the summary lines
    go to stderr and are not part of it)."""
    outcome = port_text(path.name, path.read_text(encoding="utf-8"), fixture_config(path))
    assert outcome.error is None, outcome.error
    return "".join(finding_line(outcome.path, finding) + "\n" for finding in outcome.findings)


def check_snapshot(snapshot: Path, actual: str) -> None:
    """``actual`` must be the bytes of ``snapshot``. In update mode a differing (or missing)
    snapshot is rewritten and the test fails naming it, so an update never passes unnoticed."""
    current = snapshot.read_text(encoding="utf-8") if snapshot.exists() else None
    if UPDATE and current != actual:
        snapshot.write_text(actual, encoding="utf-8")
        pytest.fail(f"rewrote {snapshot.relative_to(FIXTURES)}", pytrace=False)
    assert current is not None, f"{snapshot.relative_to(FIXTURES)} is missing (see this module's docstring)"
    assert actual == current


@pytest.fixture(scope="module", autouse=True)
def no_update_on_ci():
    if UPDATE and os.environ.get("CI"):
        pytest.fail("IPU_PORT_UPDATE_SNAPSHOTS is set on CI: snapshots are checked there, never rewritten",
                    pytrace=False)


@pytest.mark.parametrize("path", INPUTS, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_fixture_ports_to_expected(path):
    config = fixture_config(path)
    result = port(path.read_text(encoding="utf-8"), config)
    assert result.error is None
    check_snapshot(expected_path(path), result.source)


@pytest.mark.parametrize("path", INPUTS, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_fixture_port_is_stable(path):
    config = fixture_config(path)
    expected = expected_path(path).read_text(encoding="utf-8")
    again = port(expected, config)
    assert again.error is None
    assert again.source == expected
    assert not again.changed


@pytest.mark.parametrize("path", INPUTS, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_fixture_reports_its_findings(path):
    check_snapshot(findings_path(path), findings_report(path))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_notebook_fixture_ports_to_expected(path):
    outcome = port_text(path.name, path.read_text(encoding="utf-8"), fixture_config(path))
    assert outcome.error is None
    check_snapshot(expected_path(path), outcome.ported)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_notebook_fixture_port_is_stable(path):
    expected = expected_path(path).read_text(encoding="utf-8")
    again = port_text(path.name, expected, fixture_config(path))
    assert again.error is None
    assert again.ported == expected


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_notebook_fixture_reports_its_findings(path):
    check_snapshot(findings_path(path), findings_report(path))


def test_every_fixture_has_an_expected_output_and_findings():
    assert INPUTS and NOTEBOOKS
    for path in INPUTS + NOTEBOOKS:
        assert expected_path(path).exists(), path
        assert findings_path(path).exists(), path


def test_no_snapshot_without_its_fixture():
    """A renamed or deleted fixture must take its snapshots along."""
    inputs = {path.with_suffix("") for path in INPUTS + NOTEBOOKS}
    snapshots = [*FIXTURES.rglob("*.findings.txt"), *FIXTURES.rglob("*.expected.py"), *FIXTURES.rglob("*.expected.ipynb")]
    for snapshot in sorted(snapshots):
        assert snapshot.with_name(snapshot.name.split(".")[0]) in inputs, snapshot
