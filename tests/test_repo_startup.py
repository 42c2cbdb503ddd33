"""Start-up stays fast: nothing heavy is imported unless a file needs a parse; the progress bar
shows on a terminal only, and never in machine-readable output."""

from __future__ import annotations

import subprocess
import sys

import pytest
from repo_util import PIPELINE_SCRIPT, PLAIN_SCRIPT, cli, write

PROBE = """
import sys
from porter.cli import main
try:
    main(sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
heavy = sorted(name for name in sys.modules if name.split(".")[0] in ("libcst", "rich", "rules", "jsonschema"))
sys.stderr.write("HEAVY=" + ",".join(heavy) + "\\n")
"""


@pytest.mark.parametrize("args", [["plain.py"], ["."], [".", "--check", "--format", "sarif"],
                                  [".", "--format", "json"], ["plain.py", "--write"], [".", "--out-dir", "../out"]])
def test_no_heavy_import_when_no_file_needs_a_parse(tmp_path, args):
    project = tmp_path / "project"
    write(project, "plain.py", PLAIN_SCRIPT)
    write(project, "pkg/data.py", "import numpy as np\n\nX = np.zeros(3)\n")
    write(project, "pyproject.toml", '[tool.ipu-port]\nselect = ["IPU1"]\nextend-exclude = ["x/"]\n')
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=project, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == "HEAVY=", done.stderr


def test_progress_bar_on_a_terminal_only_for_text(tmp_path, monkeypatch):
    import porter.cli

    for number in range(3):
        write(tmp_path, f"m{number}.py", PIPELINE_SCRIPT)
    monkeypatch.setattr(porter.cli, "_stderr_is_terminal", lambda: True)
    monkeypatch.setattr(porter.cli, "PROGRESS_AFTER", 0.0)
    shown = cli([".", "-j", "1"], cwd=tmp_path)
    assert "porting" in shown.stderr and "━" in shown.stderr
    for output_format in ("json", "sarif"):
        quiet = cli([".", "-j", "1", "--format", output_format], cwd=tmp_path)
        assert quiet.stderr == ""
    monkeypatch.setattr(porter.cli, "_stderr_is_terminal", lambda: False)
    assert "━" not in cli([".", "-j", "1"], cwd=tmp_path).stderr
