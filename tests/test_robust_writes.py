"""Writes that survive a kill, and a porter that never runs the code it ports.

Atomic writes: ``ipu-port --write`` over a tree of 200 files is killed (SIGKILL) at random moments
(seeded, so the same moments every run), several times over the same tree; after each kill every
file holds either its original bytes or its complete port, never a mix. A normal run then finishes
the job, and a normal run leaves no temporary file behind. The pool workers of a killed run end
with it.

Static only: files whose import would write a marker file (a module of the project, and modules
named like the frameworks themselves, first on the import path) are ported, and no marker appears.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from porter.engine import port

TEMPLATES = [
    '''"""Trains a small classifier ({index})."""
import argparse

import tensorflow as tf


def build_model(units):
    return tf.keras.Sequential([
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(units, activation="relu"),
        tf.keras.layers.Dense(10),
    ])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default={index})
    args = parser.parse_args()
    (x, y), _ = tf.keras.datasets.mnist.load_data()
    dataset = tf.data.Dataset.from_tensor_slices((x / 255.0, y)).shuffle(1024).batch({batch})
    model = build_model({units})
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(dataset, epochs=args.epochs)


if __name__ == "__main__":
    main()
''',
    '''import numpy as np
import tensorflow as tf

# dataset {index}
features = np.random.rand({units}, 8).astype("float32")
labels = np.random.randint(0, 2, size=({units},))
train_ds = tf.data.Dataset.from_tensor_slices((features, labels)).batch({batch})
with tf.device("/GPU:0"):
    model = tf.keras.Sequential([tf.keras.layers.Dense(16), tf.keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    model.fit(train_ds, epochs={index})
''',
    '''"""Helpers without any ML code ({index})."""
import os


def list_files(folder):
    return sorted(name for name in os.listdir(folder) if name.endswith(".csv"))


BATCH = {batch}
''',
]


def make_tree(root: Path, count: int = 200):
    originals = {}
    for index in range(count):
        folder = root / f"pkg{index % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"script_{index:03d}.py"
        text = TEMPLATES[index % len(TEMPLATES)].format(index=index, batch=16 + index % 5, units=32 + index)
        path.write_text(text)
        originals[path.relative_to(root)] = text.encode()
    return originals


def ipu_port(*args, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "porter", *map(str, args)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs)


def temporary_files(root: Path):
    return sorted(str(path) for path in root.rglob(".ipu-port-*"))


def test_killed_writes_leave_each_file_whole(tmp_path):
    tree = tmp_path / "tree"
    originals = make_tree(tree)
    # a normal run on a copy, timed: the kills below land anywhere inside such a run
    reference = tmp_path / "reference"
    shutil.copytree(tree, reference)
    started = time.monotonic()
    assert ipu_port("--write", reference).wait(timeout=600) == 0
    duration = time.monotonic() - started
    assert temporary_files(reference) == [], "a normal run leaves no temporary file"
    ported = {relative: (reference / relative).read_bytes() for relative in originals}
    assert sum(ported[relative] != originals[relative] for relative in originals) > 100
    for relative in list(originals)[::20]:  # what was written is the engine's port
        assert ported[relative].decode() == port(originals[relative].decode()).source

    rng = random.Random(20261126)
    kills = 0
    for attempt in range(6):
        process = ipu_port("--write", tree)
        time.sleep(rng.uniform(0.0, duration * 0.9))
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            kills += 1
        process.wait(timeout=600)
        for relative, original in originals.items():
            data = (tree / relative).read_bytes()
            assert data in (original, ported[relative]), f"{relative} is partial after kill {attempt}"
    assert kills >= 3, "the run was too quick to be killed; make the tree bigger"
    assert left_running(tree) == [], "the pool workers of a killed run outlive it"

    assert ipu_port("--write", tree).wait(timeout=600) == 0
    for relative, data in ported.items():
        assert (tree / relative).read_bytes() == data, relative
    # only a killed run can leave its temporary file (a hidden .tmp, never a .py)
    assert all(name.endswith(".tmp") for name in temporary_files(tree))


def left_running(tree: Path, patience: float = 15.0) -> list:
    """The processes still working on ``tree`` (their command line names it) once ``patience``
    seconds have passed: a killed run's pool workers, which watch their parent once a second.
    Read from /proc; where there is none, nothing is seen."""
    deadline = time.monotonic() + patience
    while True:
        running = []
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                if str(tree).encode() in cmdline.read_bytes():
                    running.append(cmdline.parent.name)
            except OSError:  # it ended while it was read
                continue
        if not running or time.monotonic() > deadline:
            return running
        time.sleep(0.5)


MARKER_CODE = '''import pathlib
pathlib.Path({marker!r}).write_text("imported {name}")
'''


def test_porting_never_imports_or_runs_the_code(tmp_path):
    marker_dir = tmp_path / "markers"
    marker_dir.mkdir()
    project = tmp_path / "project"
    project.mkdir()

    def module(name, extra=""):
        marker = str(marker_dir / name)
        (project / f"{name}.py").write_text(MARKER_CODE.format(marker=marker, name=name) + extra)

    # the user's own module with an import-time side effect, imported by the training script
    module("data_setup", "import tensorflow as tf\n\nDATASET = tf.data.Dataset.range(10).batch(2)\n")
    # modules shadowing the frameworks and the porter's own dependencies on the import path
    for name in ("tensorflow", "torch", "keras", "poptorch", "numpy"):
        module(name)
    train = project / "train.py"
    train_text = (
        "import data_setup\nimport tensorflow as tf\n"
        + MARKER_CODE.format(marker=str(marker_dir / "train"), name="train")
        + "\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
        "model.compile(loss='mse')\nmodel.fit(data_setup.DATASET.batch(4), epochs=1)\n"
    )
    train.write_text(train_text)
    environment = dict(os.environ, PYTHONPATH=str(project))
    script = Path(sys.executable).with_name("ipu-port")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "porter"]
    for mode in ("--check", "--diff", "--write"):
        subprocess.run(command + [mode, str(project)], cwd=project, env=environment,
                       capture_output=True, timeout=300)
    assert sorted(os.listdir(marker_dir)) == []
    assert train.read_text() == port(train_text).source != train_text
