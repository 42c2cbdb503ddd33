"""The README's pre-commit recipes, run by the real pre-commit against a temporary repository, and
its CI job's commands.

Each recipe is the YAML block the README shows, extracted from README.md and written as the
project's ``.pre-commit-config.yaml``, so the README cannot drift from what works.

The local hook runs the ``ipu-port`` of this environment. The hosted hooks are served from a
temporary git repository holding a copy of this checkout (the working tree as it is, committed),
which stands in for the reader's copy: pre-commit clones it at a revision and runs ``pip install .``
in a fresh virtual environment. The copy and its commit are made deterministic, and pre-commit's
cache lives in pytest's cache folder: the environment is built once per version of the code, not on
every run.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from repo_util import KERAS_SCRIPT, PIPELINE_SCRIPT, code_cell, git, notebook, run, write, write_notebook

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
FIXED_DATE = "2024-01-01T00:00:00+00:00"
# The placeholders of the hosted recipe, which the reader replaces with their copy of ipu-port.
HOST_PLACEHOLDER = "https://<your-git-host>/<path>/ipu-port"
REV_PLACEHOLDER = "<tag-or-commit>"
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def readme_yaml(after: str) -> str:
    """The first YAML block of the README after the text ``after``."""
    return README.split(after, 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]


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


def _pre_commit(project: Path, home: Path, *args: str, path: str = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("VIRTUAL_ENV", None)
    if path is not None:
        env["PATH"] = path
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=project, capture_output=True,
                          text=True, env=env)


def _project(folder: Path, config: str) -> Path:
    """A git repository with the given pre-commit config, a Keras script and a notebook to port,
    and an excluded script that the hooks must leave alone although pre-commit names it."""
    folder.mkdir()
    git(folder, "init", "-q", ".")
    write(folder, ".pre-commit-config.yaml", config)
    write(folder, "pyproject.toml", '[tool.ipu-port]\nextend-exclude = ["vendor/"]\n')
    write(folder, "train.py", KERAS_SCRIPT)
    write(folder, "vendor/pipeline.py", PIPELINE_SCRIPT)
    write(folder, "README.md", "# a project\n")
    write_notebook(folder, "explore.ipynb", notebook([
        code_cell("import tensorflow as tf"), code_cell("ds = tf.data.Dataset.range(8).batch(2)")]))
    git(folder, "add", "-A")
    return folder


def _assert_ported_by_the_first_run(project: Path, first: subprocess.CompletedProcess) -> None:
    assert first.returncode == 1, first.stdout + first.stderr
    assert "files were modified by this hook" in first.stdout
    assert "strategy.scope()" in (project / "train.py").read_text()
    assert "drop_remainder=True" in (project / "explore.ipynb").read_text()
    # --force-exclude: the excluded file pre-commit passed by name is left alone.
    assert (project / "vendor/pipeline.py").read_text() == PIPELINE_SCRIPT


@needs_git
def test_the_readme_local_hook_ports_and_checks_a_repository(tmp_path):
    pytest.importorskip("pre_commit")
    config = readme_yaml("With [pre-commit]")
    assert "repo: local" in config and "language: system" in config
    # `language: system` runs the ipu-port installed beside this Python, as in the reader's environment.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    assert shutil.which("ipu-port", path=path), "ipu-port is not installed in this environment"
    home = tmp_path / "home"

    project = _project(tmp_path / "project", config)
    first = _pre_commit(project, home, "run", "--all-files", path=path)
    _assert_ported_by_the_first_run(project, first)
    git(project, "add", "-A")
    second = _pre_commit(project, home, "run", "--all-files", path=path)
    assert second.returncode == 0, second.stdout + second.stderr
    assert second.stdout.count("Passed") == 1

    # The README's check variant: `--check` for `--write` fails on an un-ported file and changes
    # nothing, then passes once the file is ported.
    check = config.replace("--write", "--check")
    assert check != config
    write(project, ".pre-commit-config.yaml", check)
    ported = (project / "train.py").read_text()
    write(project, "train.py", KERAS_SCRIPT)
    git(project, "add", "-A")
    failed = _pre_commit(project, home, "run", "--all-files", path=path)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "Failed" in failed.stdout and "files were modified" not in failed.stdout
    assert (project / "train.py").read_text() == KERAS_SCRIPT
    write(project, "train.py", ported)
    git(project, "add", "-A")
    passed = _pre_commit(project, home, "run", "--all-files", path=path)
    assert passed.returncode == 0, passed.stdout + passed.stderr


@needs_git
def test_the_readme_hosted_hooks_port_and_check_a_repository(tmp_path, request):
    pytest.importorskip("pre_commit")
    pytest_cache = getattr(request.config, "cache", None)  # None with -p no:cacheprovider
    cache = Path(pytest_cache.mkdir("ipu-port-pre-commit")) if pytest_cache is not None else tmp_path / "cache"
    hooks = cache / "hooks"
    revision = _hook_repository(hooks)

    recipe = readme_yaml("A repository that hosts a copy of ipu-port")
    assert HOST_PLACEHOLDER in recipe and REV_PLACEHOLDER in recipe
    config = recipe.replace(HOST_PLACEHOLDER, str(hooks)).replace(REV_PLACEHOLDER, revision)
    project = _project(tmp_path / "project", config)
    first = _pre_commit(project, cache / "home", "run", "--all-files")
    assert "ipu-port (port to IPUs)" in first.stdout
    _assert_ported_by_the_first_run(project, first)

    # Both hooks on the ported project: the one the recipe names, and the check it offers instead.
    check = config.replace("- id: ipu-port ", "- id: ipu-port-check ")
    assert check != config
    write(project, ".pre-commit-config.yaml", config + check.split("hooks:\n", 1)[1])
    git(project, "add", "-A")
    second = _pre_commit(project, cache / "home", "run", "--all-files")
    assert second.returncode == 0, second.stdout + second.stderr
    assert second.stdout.count("Passed") == 2


def test_the_readme_ci_job_installs_this_project_and_fails_while_code_needs_porting(tmp_path):
    yaml = pytest.importorskip("yaml")
    packaging_requirements = pytest.importorskip("packaging.requirements")
    steps = yaml.safe_load(readme_yaml("A GitHub Actions job"))["jobs"]["ipu-port"]["steps"]
    commands = [step["run"] for step in steps if "run" in step]
    assert len(commands) == 2
    install, check = commands
    # Not a PyPI name (the package is not published): this project, from the placeholder git URL.
    assert install.startswith("pip install ")
    requirement = packaging_requirements.Requirement(shlex.split(install)[2])
    assert f'\nname = "{requirement.name}"\n' in (ROOT / "pyproject.toml").read_text()
    assert requirement.url == "git+" + HOST_PLACEHOLDER
    # The check step, run on a folder with a script to port: exit 1 and one annotation per finding.
    write(tmp_path, "train.py", KERAS_SCRIPT)
    args = shlex.split(check)
    assert args[0] == "ipu-port"
    result = run(args[1:], cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::")]
    assert annotations and all("file=train.py" in line for line in annotations)


def test_the_hooks_file_declares_both_hooks():
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "- id: ipu-port\n" in text and "- id: ipu-port-check\n" in text
    assert text.count("types_or: [python, jupyter]") == 2
    assert "entry: ipu-port --write --force-exclude" in text
    assert "entry: ipu-port --check --force-exclude" in text
