"""Findings left for a person have a severity: error (the port is not a complete IPU program),
warning (likely to fail on the IPU) or note (an optional improvement). ``--check`` fails on errors
and warnings, ``--check --strict`` on notes too; every output format carries the severity."""

import json

import pytest
from click.testing import CliRunner

from porter.cli import main

# Fully ported but for advice: the LayerNormalization has an IPU version that is not a drop-in.
NOTE_ONLY = '''\
import tensorflow as tf
from tensorflow.python import ipu

config = ipu.config.IPUConfig()
config.auto_select_ipus = 1
config.configure_ipu_system()
strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(8), tf.keras.layers.LayerNormalization()])
    model.compile(loss="mse")
    model.fit(features, targets, batch_size=16, epochs=2)
'''

# Trained in a function nobody calls inside a scope: the audit reports an incomplete port.
INCOMPLETE = '''\
import tensorflow as tf


def fit_model(model, features, targets):
    model.fit(features, targets, batch_size=16, epochs=2)
'''


def run(tmp_path, source, *options):
    (tmp_path / "train.py").write_text(source)
    return CliRunner().invoke(main, [*options, str(tmp_path / "train.py")])


def test_a_note_passes_check_and_fails_strict(tmp_path):
    check = run(tmp_path, NOTE_ONLY, "--check")
    assert check.exit_code == 0
    assert check.stdout.rstrip().endswith("[note]")
    assert "IPU112" in check.stdout
    assert run(tmp_path, NOTE_ONLY, "--check", "--strict").exit_code == 1


def test_an_incomplete_port_is_an_error(tmp_path):
    check = run(tmp_path, INCOMPLETE, "--check")
    assert check.exit_code == 1
    assert check.stdout.splitlines() == [
        f"{tmp_path / 'train.py'}:5:5: IPU190 `model.fit()` runs where `fit_model` is called, and no file of "
        "its project is seen to call `fit_model` inside an IPU strategy's scope (on the CPU): the port is not "
        "complete; call `fit_model` inside `with strategy.scope():` for an `ipu.ipu_strategy.IPUStrategy()`, in "
        "the script that calls it, after it configures the IPU system and with the model created in that scope "
        "(not in this function, which may run more than once) [error]"]


# A model scikit-learn fits through a wrapper, all in the scope a later model pulls it into.
WRAPPED_IN_SCOPE = '''\
import numpy as np
import tensorflow as tf
from sklearn.model_selection import cross_val_score
from tensorflow.keras.wrappers.scikit_learn import KerasClassifier


def make_net():
    net = tf.keras.Sequential([tf.keras.layers.Dense(8), tf.keras.layers.Dense(1, activation="sigmoid")])
    net.compile(optimizer="adam", loss="binary_crossentropy")
    return net


features, labels = np.random.rand(600, 4).astype("float32"), np.random.randint(0, 2, 600)
classifier = KerasClassifier(build_fn=make_net, epochs=3, batch_size=20)
print(cross_val_score(classifier, features, labels, cv=3).mean())
final = make_net()
final.fit(features, labels, epochs=3, batch_size=20)
'''


def test_a_wrapped_model_in_the_scope_is_a_warning_about_its_splits(tmp_path):
    check = run(tmp_path, WRAPPED_IN_SCOPE, "--check")
    assert check.exit_code == 1
    audit = [line for line in check.stdout.splitlines() if " IPU190 " in line]
    assert audit == [
        f"{tmp_path / 'train.py'}:14:14: IPU190 `KerasClassifier` builds and trains its Keras model inside "
        "scikit-learn's calls, which run in the IPU strategy's scope, but scikit-learn chooses the samples of each "
        "`fit` and `predict` (its folds and splits) and the IPU rejects a partial batch: make every split a whole "
        "number of batches [warning]"]


def test_a_wrapped_model_in_a_function_called_in_the_scope_is_a_warning_too(tmp_path):
    in_function = WRAPPED_IN_SCOPE.replace(
        "classifier = KerasClassifier(build_fn=make_net, epochs=3, batch_size=20)\n"
        "print(cross_val_score(classifier, features, labels, cv=3).mean())\n",
        "def validate():\n"
        "    classifier = KerasClassifier(build_fn=make_net, epochs=3, batch_size=20)\n"
        "    return cross_val_score(classifier, features, labels, cv=3).mean()\n\n\n"
        "print(validate())\n")
    assert "def validate" in in_function
    check = run(tmp_path, in_function, "--check")
    audit = [line for line in check.stdout.splitlines() if " IPU190 " in line]
    assert len(audit) == 1 and audit[0].endswith("make every split a whole number of batches [warning]")


# The wrapper put in the steps of a pipeline, which scikit-learn fits out of the scope.
WRAPPED_IN_PIPELINE = '''\
import numpy as np
import tensorflow as tf
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from tensorflow.keras.wrappers.scikit_learn import KerasRegressor


def make_net():
    net = tf.keras.Sequential([tf.keras.layers.Dense(8), tf.keras.layers.Dense(1)])
    net.compile(optimizer="adam", loss="mse")
    return net


features, prices = np.random.rand(600, 4).astype("float32"), np.random.rand(600)
steps = [("scale", StandardScaler())]
steps.append(("net", KerasRegressor(build_fn=make_net, epochs=3, batch_size=20)))
pipeline = Pipeline(steps)
print(cross_val_score(pipeline, features, prices, cv=3).mean())
'''


def test_a_wrapped_model_fitted_through_a_pipeline_out_of_the_scope_is_an_error(tmp_path):
    check = run(tmp_path, WRAPPED_IN_PIPELINE, "--check")
    audit = [line for line in check.stdout.splitlines() if " IPU190 " in line]
    assert len(audit) == 1 and "out of the IPU strategy's scope" in audit[0] and audit[0].endswith("[error]")


def test_a_wrapped_model_fitted_through_a_pipeline_in_the_scope_is_a_warning(tmp_path):
    pulled_in = WRAPPED_IN_PIPELINE + "final = make_net()\nfinal.fit(features, prices, epochs=3, batch_size=20)\n"
    check = run(tmp_path, pulled_in, "--check")
    audit = [line for line in check.stdout.splitlines() if " IPU190 " in line]
    assert len(audit) == 1 and audit[0].endswith("make every split a whole number of batches [warning]")


def test_notes_are_not_counted_as_left_for_a_person(tmp_path):
    result = run(tmp_path, NOTE_ONLY)
    assert result.exit_code == 0
    assert "1 note: optional improvements, not counted." in result.stderr
    assert "left for a person" not in result.stderr  # nothing was fixed or left: no coverage line


@pytest.mark.parametrize("source, severity, sarif, github", [
    (NOTE_ONLY, "note", "note", "notice"),
    (INCOMPLETE, "error", "error", "error"),
])
def test_every_format_carries_the_severity(tmp_path, source, severity, sarif, github):
    report = json.loads(run(tmp_path, source, "--format", "json").stdout)
    assert [finding["severity"] for finding in report["files"][0]["findings"]] == [severity]
    results = json.loads(run(tmp_path, source, "--format", "sarif").stdout)["runs"][0]["results"]
    assert [result["level"] for result in results] == [sarif]
    assert run(tmp_path, source, "--format", "github").stdout.startswith(f"::{github} ")
    assert f"({severity}):" in run(tmp_path, source, "--format", "markdown").stdout


def test_strict_goes_with_check(tmp_path):
    result = run(tmp_path, NOTE_ONLY, "--strict")
    assert result.exit_code == 2
    assert "--strict goes with --check" in result.output
