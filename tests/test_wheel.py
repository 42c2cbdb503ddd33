"""The wheel installs one import name, ``porter``, and every module of the rules/ folder under it:
built offline from a copy of the sources, so the explicit ``packages`` list in pyproject.toml
cannot drift from the tree (a new rules package left out of it would be missing from installs)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import List

ROOT = Path(__file__).resolve().parent.parent
# What the build reads: the metadata, the readme it embeds, and the two source folders.
SOURCES = ("pyproject.toml", "README.md", "porter", "rules")
BUILD = "import sys, setuptools.build_meta as backend; backend.build_wheel(sys.argv[1])"


def build_wheel(workspace: Path) -> List[str]:
    """The names in a wheel built from a copy of the sources (none of the worktree is written)."""
    project = workspace / "project"
    project.mkdir()
    for name in SOURCES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, project / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(source, project / name)
    dist = workspace / "dist"
    dist.mkdir()
    done = subprocess.run([sys.executable, "-c", BUILD, str(dist)], cwd=project, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    [wheel] = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def test_the_wheel_installs_porter_alone_with_every_rules_module(tmp_path):
    names = build_wheel(tmp_path)
    top = {name.split("/", 1)[0] for name in names}
    assert {name for name in top if not name.endswith(".dist-info")} == {"porter"}
    assert len(top) == 2, top
    expected = {f"porter/{path.relative_to(ROOT / 'porter').as_posix()}" for path in (ROOT / "porter").rglob("*.py")}
    # every .py of rules/, so every package folder (its __init__.py) and every module in it
    expected |= {f"porter/rules/{path.relative_to(ROOT / 'rules').as_posix()}"
                 for path in (ROOT / "rules").rglob("*.py") if "__pycache__" not in path.parts}
    assert "porter/rules/keras/_analysis/__init__.py" in expected
    missing = sorted(expected - set(names))
    assert missing == [], "not in the wheel (add the package to [tool.setuptools] packages):\n" + "\n".join(missing)
