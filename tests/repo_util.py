"""Shared pieces for the repository-scale tests (tests/test_repo_*.py): small training scripts and
notebooks written to disk, and a way to run the real command on them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Sequence

from click.testing import CliRunner

from porter.cli import main

KERAS_SCRIPT = '''\
import argparse

import tensorflow as tf


def load_dataset(batch_size):
    (images, labels), _ = tf.keras.datasets.mnist.load_data()
    dataset = tf.data.Dataset.from_tensor_slices((images / 255.0, labels))
    return dataset.shuffle(10000).batch(batch_size)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    dataset = load_dataset(64)
    model = tf.keras.Sequential([
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(10),
    ])
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    model.fit(dataset, epochs=args.epochs)


if __name__ == "__main__":
    main()
'''

# Only a dataset pipeline: one automatic edit (IPU105), nothing else.
PIPELINE_SCRIPT = '''\
import tensorflow as tf


def batches(features, labels, size):
    dataset = tf.data.Dataset.from_tensor_slices((features, labels))
    return dataset.batch(size)
'''

PLAIN_SCRIPT = '''\
import csv


def rows(path):
    with open(path) as handle:
        return list(csv.reader(handle))
'''


# A project whose strategy comes from a function of another of its modules.
STRATEGY_MODULE = '''\
import tensorflow as tf


def pick_strategy():
    """Mirrored over every GPU there is, else the default strategy."""
    gpus = tf.config.list_logical_devices("GPU")
    if len(gpus) > 1:
        return tf.distribute.MirroredStrategy()
    return tf.distribute.get_strategy()
'''

STRATEGY_SCRIPT = '''\
import argparse

import numpy as np
import tensorflow as tf

from common import pick_strategy


def make_regressor(width):
    return tf.keras.Sequential([tf.keras.layers.Dense(width, activation="relu"), tf.keras.layers.Dense(1)])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--width", type=int, default=16)
    args = parser.parse_args()
    features = np.random.rand(256, 8).astype("float32")
    targets = features.sum(axis=1, keepdims=True)
    strategy = pick_strategy()
    with strategy.scope():
        model = make_regressor(args.width)
        model.compile(optimizer="sgd", loss="mse")
    model.fit(features, targets, batch_size=32, epochs=1)
    print("mse", model.evaluate(features, targets, batch_size=32))


if __name__ == "__main__":
    main()
'''


def write(root: Path, relative: str, text: str, mode: int = None) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mode is not None:
        path.chmod(mode)
    return path


def _runner() -> CliRunner:
    """A runner that keeps stderr apart (click < 8.2 mixes it into stdout unless told not to)."""
    import inspect

    if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters:
        return CliRunner(mix_stderr=False)
    return CliRunner()


def cli(args: Sequence[str], cwd: Path = None, stdin: str = None):
    """Run ``ipu-port`` in-process (click's runner), optionally from another folder."""
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return _runner().invoke(main, list(args), input=stdin, catch_exceptions=False)
    finally:
        os.chdir(old)


def run(args: Sequence[str], cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    """Run the real ``ipu-port`` command in a subprocess."""
    return subprocess.run([sys.executable, "-m", "porter", *args], cwd=cwd, capture_output=True,
                          text=True, **kwargs)


def code_cell(source, outputs=(), count=None) -> dict:
    return {"cell_type": "code", "execution_count": count, "metadata": {}, "outputs": list(outputs),
            "source": source}


def markdown_cell(text: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": [text]}


def notebook(cells, language: str = "python") -> dict:
    return {
        "cells": list(cells),
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": language, "name": "python3"},
            "language_info": {"name": language},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def write_notebook(root: Path, relative: str, data: dict, indent=1, ensure_ascii=False) -> Path:
    return write(root, relative, json.dumps(data, indent=indent, ensure_ascii=ensure_ascii) + "\n")


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True, env=env).stdout


# A library module's custom training loop, given its model by the scripts that import it.
CUSTOM_LOOP_TRAINER = """\
import tensorflow as tf


def fit_custom(model, dataset, epochs):
    optimizer = tf.keras.optimizers.SGD(0.1)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    for _ in range(epochs):
        for x, y in dataset:
            step(x, y)
"""


# A library's trainer class: it keeps the model it is given and compiles and trains it in `fit`.
TRAINER_CLASS = """\
import tensorflow as tf


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def fit(self, train_ds, val_ds, epochs):
        self.model.compile(optimizer=self.optimizer, loss="mse")
        return self.model.fit(train_ds, validation_data=val_ds, epochs=epochs)
"""
