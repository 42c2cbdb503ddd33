"""Trees: --out-dir, discovery (.gitignore, exclude/extend-exclude, --force-exclude), sorted output
whatever -j. Real files in temporary folders, the real command."""

from __future__ import annotations

import json
import os
import stat
import subprocess

import pytest
from repo_util import (CUSTOM_LOOP_TRAINER, KERAS_SCRIPT, PIPELINE_SCRIPT, PLAIN_SCRIPT, STRATEGY_MODULE,
                       STRATEGY_SCRIPT, TRAINER_CLASS, cli, code_cell, git, notebook, run, write, write_notebook)

from porter import ignore
from porter.engine import port


def _project(root):
    write(root, "src/train.py", KERAS_SCRIPT, mode=0o755)
    write(root, "src/data/pipeline.py", PIPELINE_SCRIPT)
    write(root, "src/util.py", PLAIN_SCRIPT, mode=0o600)
    write(root, "src/config.yaml", "epochs: 2\n")
    write(root, "src/weights.bin", "\x00\x01binary")
    write(root, "README.md", "# project\n")


def test_out_dir_writes_the_ported_tree_and_copies_every_other_file(tmp_path):
    _project(tmp_path / "repo")
    # Environments and caches are neither ported nor copied.
    write(tmp_path / "repo", ".venv/lib/site.py", KERAS_SCRIPT)
    write(tmp_path / "repo", "src/__pycache__/train.cpython-311.pyc", "cached")
    result = cli(["repo", "--out-dir", "ported"], cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    source, target = tmp_path / "repo", tmp_path / "ported"
    files = sorted(str(path.relative_to(target)) for path in target.rglob("*") if path.is_file())
    assert files == ["README.md", "src/config.yaml", "src/data/pipeline.py", "src/train.py", "src/util.py",
                     "src/weights.bin"]
    assert (target / "src/train.py").read_text() == port(KERAS_SCRIPT).source != KERAS_SCRIPT
    assert (target / "src/data/pipeline.py").read_text() == port(PIPELINE_SCRIPT).source
    for unchanged in ("src/util.py", "src/config.yaml", "src/weights.bin", "README.md"):
        assert (target / unchanged).read_bytes() == (source / unchanged).read_bytes()
    for name in ("src/train.py", "src/util.py", "src/config.yaml"):
        assert stat.S_IMODE((target / name).stat().st_mode) == stat.S_IMODE((source / name).stat().st_mode)
    assert stat.S_IMODE((target / "src/train.py").stat().st_mode) == 0o755
    # The input is untouched.
    assert (source / "src/train.py").read_text() == KERAS_SCRIPT
    assert "2 files ported" in result.stderr


def test_out_dir_inside_the_input_tree_is_refused(tmp_path):
    _project(tmp_path)
    for target in ("src/ported", "src", "src/data/../out"):
        result = cli(["src", "--out-dir", target], cwd=tmp_path)
        assert result.exit_code == 2
        assert "inside the input tree" in result.stderr
        assert result.stderr.count("\n") == 1
    assert not (tmp_path / "src/ported").exists()
    assert (tmp_path / "src/train.py").read_text() == KERAS_SCRIPT


def test_out_dir_for_a_single_file(tmp_path):
    write(tmp_path, "train.py", KERAS_SCRIPT)
    assert cli(["train.py", "--out-dir", "out"], cwd=tmp_path).exit_code == 0
    assert (tmp_path / "out/train.py").read_text() == port(KERAS_SCRIPT).source
    assert cli(["train.py", "--out-dir", "."], cwd=tmp_path).exit_code == 2


def test_out_dir_copies_a_file_that_fails_unchanged_and_exits_2(tmp_path):
    write(tmp_path, "src/bad.py", "import tensorflow as tf\ndef broken(:\n")
    write(tmp_path, "src/train.py", KERAS_SCRIPT)
    result = cli(["src", "--out-dir", "out"], cwd=tmp_path)
    assert result.exit_code == 2
    assert "src/bad.py: syntax error" in result.stderr
    assert (tmp_path / "out/bad.py").read_text() == "import tensorflow as tf\ndef broken(:\n"
    assert (tmp_path / "out/train.py").read_text() == port(KERAS_SCRIPT).source


def _listed(result):
    return sorted({line.split(":")[0] for line in result.stdout.splitlines()})


def test_folder_discovery_honours_gitignore_inside_a_repository(tmp_path):
    git(tmp_path, "init", "-q", ".")
    write(tmp_path, ".gitignore", "generated/\n*_backup.py\n!keep_backup.py\n/top.py\n")
    for name in ("a.py", "generated/gen.py", "old_backup.py", "keep_backup.py", "top.py", "sub/top.py",
                 "sub/deeper/x.py", "sub/local.py"):
        write(tmp_path, name, PIPELINE_SCRIPT)
    write(tmp_path, "sub/.gitignore", "local.py\n")
    write(tmp_path, ".git/info/exclude", "deeper/\n")
    result = cli(["."], cwd=tmp_path)
    assert _listed(result) == ["./a.py", "./keep_backup.py", "./sub/top.py"]
    # What git itself would list agrees.
    listed = git(tmp_path, "ls-files", "--others", "--exclude-standard").split()
    assert sorted(path for path in listed if path.endswith(".py")) == ["a.py", "keep_backup.py", "sub/top.py"]


def test_the_users_git_ignore_file_counts_too(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    write(tmp_path, "config/git/ignore", "scratch_*.py\n")
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q", ".")
    write(project, "scratch_try.py", PIPELINE_SCRIPT)
    write(project, "train.py", PIPELINE_SCRIPT)
    assert _listed(cli(["."], cwd=project)) == ["./train.py"]
    assert git(project, "ls-files", "--others", "--exclude-standard").split() == ["train.py"]


def test_gitignore_is_not_used_outside_a_repository(tmp_path):
    write(tmp_path, ".gitignore", "*.py\n")
    write(tmp_path, "a.py", PIPELINE_SCRIPT)
    assert _listed(cli(["."], cwd=tmp_path)) == ["./a.py"]


GITIGNORE = """\
# comment
*.log
!keep.log
/build
docs/*.txt
data/
**/cache
a/**/z
x/**
\\#hash
[abc].py
f?o.py
ex*.md
!ex[!0-9].md
sub/deep/
trailing\\ 
  spaced.txt
"""

PATHS = ["a.log", "keep.log", "build", "src/build", "docs/x.txt", "docs/inner/x.txt", "data", "src/data",
         "cache", "q/cache", "a/z", "a/b/c/z", "x/y", "#hash", "a.py", "d.py", "foo.py", "fo.py", "exa.md",
         "ex1.md", "sub/deep", "sub", "src/a.log", "trailing ", "spaced.txt", "  spaced.txt"]


def test_gitignore_matching_agrees_with_git(tmp_path):
    git(tmp_path, "init", "-q", ".")
    write(tmp_path, ".gitignore", GITIGNORE)
    for directory in ("build", "src/build", "data", "src/data", "cache", "q/cache", "a/b/c/z", "sub/deep",
                      "docs/inner", "x"):
        (tmp_path / directory).mkdir(parents=True, exist_ok=True)
    sets = ignore.gitignores_above(str(tmp_path))
    for path in PATHS:
        full = os.path.join(str(tmp_path), path)
        is_dir = os.path.isdir(full)
        mine = ignore.is_ignored(sets, full, is_dir)
        checked = subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=tmp_path)
        assert mine == (checked.returncode == 0), path


def test_configured_exclude_and_extend_exclude(tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.ipu-port]\nextend-exclude = ["legacy/", "*_gen.py"]\n')
    for name in ("a.py", "legacy/old.py", "model_gen.py", "venv/lib.py", "pkg/b.py"):
        write(tmp_path, name, PIPELINE_SCRIPT)
    assert _listed(cli(["."], cwd=tmp_path)) == ["./a.py", "./pkg/b.py"]
    # exclude replaces the default list (which skips venv/).
    write(tmp_path, "pyproject.toml", '[tool.ipu-port]\nexclude = ["legacy/"]\n')
    assert _listed(cli(["."], cwd=tmp_path)) == ["./a.py", "./model_gen.py", "./pkg/b.py", "./venv/lib.py"]


def test_force_exclude_applies_excludes_to_given_files(tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.ipu-port]\nextend-exclude = ["legacy/"]\n')
    write(tmp_path, "legacy/old.py", PIPELINE_SCRIPT)
    write(tmp_path, "new.py", PIPELINE_SCRIPT)
    assert _listed(cli(["legacy/old.py", "new.py"], cwd=tmp_path)) == ["legacy/old.py", "new.py"]
    assert _listed(cli(["--force-exclude", "legacy/old.py", "new.py"], cwd=tmp_path)) == ["new.py"]
    write(tmp_path, "pyproject.toml", '[tool.ipu-port]\nextend-exclude = ["legacy/"]\nforce-exclude = true\n')
    assert _listed(cli(["legacy/old.py", "new.py"], cwd=tmp_path)) == ["new.py"]


@pytest.mark.parametrize("jobs", ["1", "2", "4"])
def test_output_order_is_fixed_whatever_the_jobs(tmp_path, jobs):
    names = [f"{letter}{number}.py" for letter in "zyxw" for number in range(4)]
    for size, name in enumerate(names):
        # sizes differ: a pool hands out the largest files first, the report keeps the order
        write(tmp_path, f"pkg/{name}", PIPELINE_SCRIPT + "# notes\n" * size)
    write(tmp_path, "b.py", PIPELINE_SCRIPT)
    write(tmp_path, "a.py", PIPELINE_SCRIPT)
    # Given paths in the order given (each once), each folder's files sorted.
    result = run(["b.py", "pkg", "a.py", "pkg/z0.py", "--jobs", jobs], tmp_path)
    assert result.returncode == 0, result.stderr
    paths = [line.split(":")[0] for line in result.stdout.splitlines()]
    assert paths == ["b.py", *sorted(f"pkg/{name}" for name in names), "a.py"]
    assert "18 files would be ported" in result.stderr
    assert "━" not in result.stderr  # no progress bar when stderr is not a terminal


def test_a_process_pool_gives_the_same_bytes(tmp_path):
    for number in range(12):
        write(tmp_path, f"one/m{number:02}.py", KERAS_SCRIPT)
        write(tmp_path, f"two/m{number:02}.py", KERAS_SCRIPT)
    assert run(["one", "--write", "-j", "1"], tmp_path).returncode == 0
    assert run(["two", "--write", "-j", "3"], tmp_path).returncode == 0
    for number in range(12):
        assert (tmp_path / f"one/m{number:02}.py").read_bytes() == (tmp_path / f"two/m{number:02}.py").read_bytes()


BUILDER_MODULE = """\
from tensorflow import keras


def build_model():
    return keras.Sequential([keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
"""

TRAINING_SCRIPT = """\
import numpy as np

from models import build_model

model = build_model()
model.compile(optimizer="adam", loss="mse")
model.fit(np.zeros((64, 4)), np.zeros((64, 1)), batch_size=16)
"""


def test_a_script_that_trains_the_model_of_a_keras_module_of_its_project_is_ported(tmp_path):
    # The script imports no framework itself: its model comes from the project's Keras module.
    write(tmp_path / "repo", "models.py", BUILDER_MODULE)
    write(tmp_path / "repo", "train.py", TRAINING_SCRIPT)
    result = cli(["repo", "--out-dir", "ported"], cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    ported = (tmp_path / "ported/train.py").read_text()
    assert "ipu_config.configure_ipu_system()" in ported and "with strategy.scope():\n    model = build_model()" in ported
    assert (tmp_path / "ported/models.py").read_text() == BUILDER_MODULE  # built in the script's scope
    # Alone, as pre-commit passes it, the script reads the module it imports from beside it (and
    # leaves it as it is): ported as in the folder.
    alone = cli(["repo/train.py", "--out-dir", "alone"], cwd=tmp_path)
    assert alone.exit_code == 0, alone.stderr
    assert (tmp_path / "alone/train.py").read_text() == ported
    assert sorted(path.name for path in (tmp_path / "alone").iterdir()) == ["train.py"]
    assert cli(["repo/train.py", "--check"], cwd=tmp_path).exit_code == 1


def test_a_notebook_that_trains_the_model_of_a_keras_module_beside_it_is_ported(tmp_path):
    # Its cells import no framework: the model comes from the module beside the notebook, read
    # from there when the notebook is ported alone, and ported with it in the folder.
    cells = [code_cell("import numpy as np\nfrom models import build_model"),
             code_cell("model = build_model()\nmodel.compile(optimizer=\"adam\", loss=\"mse\")"),
             code_cell("model.fit(np.zeros((64, 4)), np.zeros((64, 1)), batch_size=16)")]
    write_notebook(tmp_path / "repo", "train.ipynb", notebook(cells))
    write(tmp_path / "repo", "models.py", BUILDER_MODULE)
    alone = cli(["repo/train.ipynb", "--out-dir", "alone"], cwd=tmp_path)
    assert alone.exit_code == 0, alone.stderr
    sources = ["".join(cell["source"]) for cell in json.loads((tmp_path / "alone/train.ipynb").read_text())["cells"]]
    assert sources[0] == "import numpy as np\nfrom models import build_model\nfrom tensorflow.python import ipu"
    assert sources[1] == ("ipu_config = ipu.config.IPUConfig()\nipu_config.auto_select_ipus = 1\n"
                          "ipu_config.configure_ipu_system()\nstrategy = ipu.ipu_strategy.IPUStrategy()\n"
                          "with strategy.scope():\n    model = build_model()\n"
                          "    model.compile(optimizer=\"adam\", loss=\"mse\")")
    assert sources[2] == "with strategy.scope():\n    model.fit(np.zeros((64, 4)), np.zeros((64, 1)), batch_size=16)"
    together = cli(["repo", "--out-dir", "ported"], cwd=tmp_path)
    assert together.exit_code == 0, together.stderr
    assert (tmp_path / "ported/train.ipynb").read_bytes() == (tmp_path / "alone/train.ipynb").read_bytes()
    assert cli(["repo/train.ipynb", "--check"], cwd=tmp_path).exit_code == 1


PORTED_STRATEGY_MODULE = STRATEGY_MODULE.replace("import tensorflow as tf\n", "import tensorflow as tf\n"
                                                 "from tensorflow.python import ipu\n").replace(
    "tf.distribute.MirroredStrategy()", "ipu.ipu_strategy.IPUStrategy()").replace(
    "tf.distribute.get_strategy()", "ipu.ipu_strategy.IPUStrategy()")

PORTED_STRATEGY_SCRIPT = STRATEGY_SCRIPT.replace(
    "from common import pick_strategy\n", "from common import pick_strategy\nfrom tensorflow.python import ipu\n").replace(
    """    strategy = pick_strategy()
    with strategy.scope():
        model = make_regressor(args.width)
        model.compile(optimizer="sgd", loss="mse")
    model.fit(features, targets, batch_size=32, epochs=1)
    print("mse", model.evaluate(features, targets, batch_size=32))
""", """    ipu_config = ipu.config.IPUConfig()
    ipu_config.auto_select_ipus = 1
    ipu_config.configure_ipu_system()
    strategy = pick_strategy()
    with strategy.scope():
        model = make_regressor(args.width)
        model.compile(optimizer="sgd", loss="mse")
        model.fit(features, targets, batch_size=32, epochs=1)
        print("mse", model.evaluate(features, targets, batch_size=32))
""")


def test_a_strategy_from_a_function_of_another_module_of_the_project_is_the_ipu_strategy(tmp_path):
    # Ported together, the module's function returns an IPUStrategy: the script configures the
    # IPU before calling it and runs its model code in that strategy's scope, the one it enters.
    write(tmp_path / "repo", "common.py", STRATEGY_MODULE)
    write(tmp_path / "repo", "train.py", STRATEGY_SCRIPT)
    result = cli(["repo", "--out-dir", "ported"], cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "ported/common.py").read_text() == PORTED_STRATEGY_MODULE
    assert (tmp_path / "ported/train.py").read_text() == PORTED_STRATEGY_SCRIPT
    assert "IPU190" not in result.stdout
    again = cli(["ported", "--diff"], cwd=tmp_path)
    assert (again.exit_code, again.stdout) == (0, ""), again.stdout
    # Alone, the script reads the module beside it as it is, unported: its function still returns
    # a MirroredStrategy, so the script makes a strategy of its own, and the nesting is reported.
    alone = cli(["repo/train.py"], cwd=tmp_path)
    assert "repo/train.py:20:5: IPU190 `with strategy.scope():` runs inside the scope of the IPU strategy" in alone.stdout
    # Once the module is ported, the script ported alone takes its strategy from it, as together.
    write(tmp_path / "repo", "common.py", PORTED_STRATEGY_MODULE)
    alone = cli(["repo/train.py", "--out-dir", "alone"], cwd=tmp_path)
    assert alone.exit_code == 0, alone.stderr
    assert (tmp_path / "alone/train.py").read_text() == PORTED_STRATEGY_SCRIPT


TRAINING_HELPERS = """\
import tensorflow as tf


def train_model(model, dataset, epochs):
    model.compile(optimizer="adam", loss="mse")
    return model.fit(dataset, epochs=epochs)


def report(model, dataset):
    print("mse", model.evaluate(dataset))
"""

HAND_PORTED_SCRIPT = """\
import numpy as np
import tensorflow as tf
from tensorflow.python import ipu

from helpers import report, train_model


def main():
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.configure_ipu_system()
    points = np.random.rand(64, 4).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices((points, points[:, :1])).batch(8, drop_remainder=True)
    strategy = ipu.ipu_strategy.IPUStrategy()
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    train_model(model, dataset, epochs=2)
    report(model, dataset)
"""


def test_a_hand_port_whose_model_is_trained_by_another_module_of_the_project_gets_those_calls_in_its_scope(tmp_path):
    write(tmp_path / "repo", "helpers.py", TRAINING_HELPERS)
    write(tmp_path / "repo", "train.py", HAND_PORTED_SCRIPT)
    scoped = HAND_PORTED_SCRIPT.replace("    train_model(model, dataset, epochs=2)\n    report(model, dataset)\n",
                                        "        train_model(model, dataset, epochs=2)\n        report(model, dataset)\n")
    # Alone, as pre-commit passes it, the script reads the module beside it: the same port.
    for given, out in (("repo", "ported"), ("repo/train.py", "alone")):
        result = cli([given, "--out-dir", out], cwd=tmp_path)
        assert result.exit_code == 0, result.stderr
        assert (tmp_path / out / "train.py").read_text() == scoped
    found = cli(["repo/train.py"], cwd=tmp_path).stdout
    assert "repo/train.py:17:5: IPU103 `train_model()`, `report()` after `with strategy.scope():` ran outside" in found
    write(tmp_path / "repo", "train.py", scoped)
    again = cli(["repo/train.py", "--diff"], cwd=tmp_path)
    assert (again.exit_code, again.stdout) == (0, ""), again.stdout


LIBRARY_TRAINER = """\
import tensorflow as tf


def train(model, dataset, epochs):
    model.compile(optimizer="sgd", loss="mse")
    return model.fit(dataset, epochs=epochs)


def evaluate(model, dataset):
    return model.evaluate(dataset)
"""

LIBRARY_SCRIPT = """\
import numpy as np
import tensorflow as tf

import trainer


def main():
    strategy = tf.distribute.MirroredStrategy()
    points = np.random.rand(64, 4).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices((points, points[:, :1])).batch(8, drop_remainder=True)
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    trainer.train(model, dataset, epochs=2)
    print(trainer.evaluate(model, dataset))
"""


def _audit_lines(result, path):
    return [line for line in result.stdout.splitlines() if line.startswith(path) and " IPU190 " in line]


def test_a_library_module_whose_callers_run_it_in_the_ipu_scope_is_complete(tmp_path):
    write(tmp_path / "repo", "trainer.py", LIBRARY_TRAINER)
    write(tmp_path / "repo", "train.py", LIBRARY_SCRIPT)
    # Ported with its project, the module learns that the script's port calls it in the IPU scope.
    together = cli(["repo", "--out-dir", "ported"], cwd=tmp_path)
    assert together.exit_code == 0, together.stderr
    assert _audit_lines(together, "repo/trainer.py") == []
    assert (tmp_path / "ported/trainer.py").read_text() == LIBRARY_TRAINER  # no IPU set-up in a helper
    assert "        trainer.train(model, dataset, epochs=2)\n" in (tmp_path / "ported/train.py").read_text()
    # Alone, as pre-commit passes it, beside the script not yet ported: the script is named.
    alone = cli(["repo/trainer.py"], cwd=tmp_path)
    assert _audit_lines(alone, "repo/trainer.py") == [
        "repo/trainer.py:6:12: IPU190 `model.fit()` runs where `train` is called, and `repo/train.py` calls `train` "
        "outside the IPU strategy's scope (on the CPU): the port is not complete; call `train` inside "
        "`with strategy.scope():` for an `ipu.ipu_strategy.IPUStrategy()`, in the script that calls it, after it "
        "configures the IPU system and with the model created in that scope (not in this function, which may run "
        "more than once) [error]"]
    # Once the script is ported, the module alone is complete too.
    write(tmp_path / "repo", "train.py", (tmp_path / "ported/train.py").read_text())
    assert _audit_lines(cli(["repo/trainer.py"], cwd=tmp_path), "repo/trainer.py") == []


DATA_MODULE = """\
import tensorflow as tf


def load(points, batch_size=8):
    dataset = tf.data.Dataset.from_tensor_slices((points, points[:, :1]))
    return dataset.batch(batch_size, drop_remainder=True)
"""


def _batch_lines(result, path):
    return [line for line in result.stdout.splitlines() if line.startswith(path) and " IPU105 " in line]


def test_a_library_given_whole_batches_by_every_caller_is_not_told_to_batch_them(tmp_path):
    write(tmp_path / "repo", "trainer.py", LIBRARY_TRAINER)
    write(tmp_path / "repo", "data.py", DATA_MODULE)
    write(tmp_path / "repo", "train.py", LIBRARY_SCRIPT.replace("import trainer\n", "import trainer\nfrom data import load\n")
          .replace("tf.data.Dataset.from_tensor_slices((points, points[:, :1])).batch(8, drop_remainder=True)",
                   "load(points)"))
    assert _batch_lines(cli(["repo"], cwd=tmp_path), "repo/trainer.py") == []
    assert _batch_lines(cli(["repo/trainer.py"], cwd=tmp_path), "repo/trainer.py") == []  # data.py read beside
    # A second script gives a dataset of its own, batched where the porter cannot see: reported.
    write(tmp_path / "repo", "tune.py", "import trainer\n\n\ndef tune(model, dataset):\n"
          "    trainer.train(model, dataset, epochs=1)\n")
    assert [line.split(": the porter")[0] for line in _batch_lines(cli(["repo"], cwd=tmp_path), "repo/trainer.py")] == [
        "repo/trainer.py:6:22: IPU105 `fit` gets `dataset` from the parameter `dataset` of `train`"]


def test_a_library_module_with_no_caller_in_sight_says_what_its_callers_must_do(tmp_path):
    write(tmp_path / "repo", "trainer.py", LIBRARY_TRAINER)
    alone = cli(["repo/trainer.py"], cwd=tmp_path)
    assert [line.split(" (on the CPU)")[0] for line in _audit_lines(alone, "repo/trainer.py")] == [
        "repo/trainer.py:6:12: IPU190 `model.fit()` runs where `train` is called, and no file of its project is "
        "seen to call `train` inside an IPU strategy's scope"]


TRAINER_CLASS_SCRIPT = """\
import numpy as np
import tensorflow as tf

from trainer import Trainer


def main():
    strategy = tf.distribute.MirroredStrategy()
    points = np.random.rand(64, 4).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices((points, points[:, :1])).batch(8)
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        trainer = Trainer(model, tf.keras.optimizers.Adam())
        trainer.fit(dataset, dataset, epochs=2)
"""


def test_a_library_class_whose_objects_its_callers_run_in_the_ipu_scope_is_complete(tmp_path):
    write(tmp_path / "repo", "trainer.py", TRAINER_CLASS)
    write(tmp_path / "repo", "train.py", TRAINER_CLASS_SCRIPT)
    # The script's port makes the trainer and calls `fit` in the IPU scope, with whole batches.
    together = cli(["repo", "--out-dir", "ported"], cwd=tmp_path)
    assert together.exit_code == 0, together.stderr
    assert [line for line in together.stdout.splitlines() if line.startswith("repo/trainer.py")] == []
    assert (tmp_path / "ported/trainer.py").read_text() == TRAINER_CLASS
    # Alone, beside the script not yet ported: the script and the method are named.
    alone = cli(["repo/trainer.py"], cwd=tmp_path)
    assert [line.split(" (on the CPU)")[0] for line in _audit_lines(alone, "repo/trainer.py")] == [
        "repo/trainer.py:11:16: IPU190 `.fit()` runs where `Trainer.fit` is called, and `repo/train.py` calls "
        "`Trainer.fit` outside the IPU strategy's scope"]
    # Once the script is ported, the module alone is complete too.
    write(tmp_path / "repo", "train.py", (tmp_path / "ported/train.py").read_text())
    assert [line for line in cli(["repo/trainer.py"], cwd=tmp_path).stdout.splitlines()
            if line.startswith("repo/trainer.py:")] == []


CUSTOM_LOOP_SCRIPT = """\
import numpy as np
import tensorflow as tf

from loops import fit_custom


def main():
    points = np.random.rand(64, 4).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices((points, points[:, :1])).batch(8, drop_remainder=True)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    fit_custom(model, dataset, epochs=2)
"""


def test_a_script_whose_model_a_custom_loop_of_its_project_trains_gets_the_ipu_scope(tmp_path):
    write(tmp_path / "repo", "loops.py", CUSTOM_LOOP_TRAINER)
    write(tmp_path / "repo", "train.py", CUSTOM_LOOP_SCRIPT)
    for given, out in (("repo", "ported"), ("repo/train.py", "alone")):
        assert cli([given, "--out-dir", out], cwd=tmp_path).exit_code == 0
        assert ("    with strategy.scope():\n        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
                "        fit_custom(model, dataset, epochs=2)\n") in (tmp_path / out / "train.py").read_text()
    # The loop itself is the library's to run through `strategy.run`: still reported there.
    found = cli(["repo"], cwd=tmp_path).stdout
    assert "repo/loops.py:17:13: IPU190 the custom training loop that calls `step` is left outside" in found
