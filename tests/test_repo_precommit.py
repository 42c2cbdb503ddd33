"""The pre-commit hooks of this checkout, run by the real pre-commit against a temporary repository.

pre-commit installs a hook repository by cloning it at a revision and running ``pip install .`` in
a fresh virtual environment, so the hooks are served from a temporary git repository holding a
copy of this checkout (the working tree as it is, committed). The copy and its commit are made
deterministic, and pre-commit's cache lives in pytest's cache folder: the environment is built
once per version of the code, not on every run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from repo_util import KERAS_SCRIPT, PIPELINE_SCRIPT, code_cell, git, notebook, write, write_notebook

ROOT = Path(__file__).resolve().parent.parent
FIXED_DATE = "2024-01-01T00:00:00+00:00"


def _hook_repository(folder: Path) -> str:
    """A git repository with this checkout's package and hooks; returns its HEAD."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package in ("porter", "rules"):
        shutil.copytree(ROOT / package, folder / package, ignore=skip)
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy2(ROOT / name, folder / name)
    git(folder, "init", "-q", ".")
    git(folder, "add", "-A")
    env_dates = {"GIT_AUTHOR_DATE": FIXED_DATE, "GIT_COMMITTER_DATE": FIXED_DATE}
    subprocess.run(["git", "-c", "user.name=ipu-port", "-c", "user.email=tests@ipu-port", "commit", "-q",
                    "-m", "hooks under test"], cwd=folder, check=True, env={**os.environ, **env_dates})
    return git(folder, "rev-parse", "HEAD").strip()


def _pre_commit(project: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=project, capture_output=True,
                          text=True, env=env)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_hooks_port_and_check_a_repository(tmp_path, request):
    pytest.importorskip("pre_commit")
    pytest_cache = getattr(request.config, "cache", None)  # None with -p no:cacheprovider
    cache = Path(pytest_cache.mkdir("ipu-port-pre-commit")) if pytest_cache is not None else tmp_path / "cache"
    hooks = cache / "hooks"
    revision = _hook_repository(hooks)

    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q", ".")
    write(project, ".pre-commit-config.yaml", f"""\
repos:
- repo: {hooks}
  rev: {revision}
  hooks:
  - id: ipu-port
  - id: ipu-port-check
""")
    write(project, "pyproject.toml", '[tool.ipu-port]\nextend-exclude = ["vendor/"]\n')
    write(project, "train.py", KERAS_SCRIPT)
    write(project, "vendor/pipeline.py", PIPELINE_SCRIPT)
    write(project, "README.md", "# a project\n")
    write_notebook(project, "explore.ipynb", notebook([
        code_cell("import tensorflow as tf"), code_cell("ds = tf.data.Dataset.range(8).batch(2)")]))
    git(project, "add", "-A")

    first = _pre_commit(project, cache / "home", "run", "--all-files")
    assert first.returncode == 1, first.stdout + first.stderr
    assert "ipu-port (port to IPUs)" in first.stdout and "files were modified by this hook" in first.stdout
    assert "strategy.scope()" in (project / "train.py").read_text()
    assert "drop_remainder=True" in (project / "explore.ipynb").read_text()
    # --force-exclude: the excluded file pre-commit passed by name is left alone.
    assert (project / "vendor/pipeline.py").read_text() == PIPELINE_SCRIPT

    git(project, "add", "-A")
    second = _pre_commit(project, cache / "home", "run", "--all-files")
    assert second.returncode == 0, second.stdout + second.stderr
    assert second.stdout.count("Passed") == 2


def test_the_hooks_file_declares_both_hooks():
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "- id: ipu-port\n" in text and "- id: ipu-port-check\n" in text
    assert text.count("types_or: [python, jupyter]") == 2
    assert "entry: ipu-port --write --force-exclude" in text
    assert "entry: ipu-port --check --force-exclude" in text
