"""porter.api, used directly as another program would: port a text, port files into a copy of
their tree, and the bytes that land on disk."""

from __future__ import annotations

import os

import pytest

from porter.api import OutDirError, copy_tree, out_tree, port_all, port_file, port_text, save
from porter.config import Config

KERAS = '''\
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
model.compile(optimizer="sgd", loss="mse")
model.fit(dataset, epochs=2)
'''
KERAS_ON_IPU = '''\
import tensorflow as tf
from tensorflow.python import ipu

ipu_config = ipu.config.IPUConfig()
ipu_config.auto_select_ipus = 1
ipu_config.configure_ipu_system()
strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(dataset, epochs=2)
'''


def test_port_text_returns_the_port_and_its_findings():
    outcome = port_text("train.py", KERAS, Config())
    assert outcome.error is None and outcome.changed
    assert outcome.original == KERAS
    assert outcome.ported == KERAS_ON_IPU
    assert [(finding.code, finding.line, finding.fixed) for finding in outcome.findings] == [
        ("IPU101", 1, True), ("IPU102", 3, True), ("IPU103", 3, True)]


def test_port_text_leaves_code_without_a_framework_and_reports_a_bad_file():
    plain = port_text("util.py", "import os\n\nprint(os.getcwd())\n")
    assert (plain.changed, plain.ported, plain.findings, plain.error) == (
        False, "import os\n\nprint(os.getcwd())\n", (), None)
    broken = port_text("broken.py", "import tensorflow as tf\nmodel = (\n")
    assert broken.error is not None and not broken.changed and broken.ported == broken.original


def test_port_file_into_an_out_dir_writes_the_bytes_and_copies_the_rest(tmp_path):
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    script = project / "train.py"
    script.write_bytes(KERAS.replace("\n", "\r\n").encode())  # CRLF is kept
    script.chmod(0o755)
    (project / "data" / "labels.csv").write_bytes(b"a,b\r\n1,2\n")
    out = tmp_path / "out"

    tree = out_tree([str(project)], str(out))
    outcome, source = port_file(str(script), Config())
    saved = save(outcome, source, tree.destination(str(script)), copy_from=str(script))
    failures = copy_tree(tree, [str(script)])

    assert saved is outcome and failures == []
    assert (out / "train.py").read_bytes() == KERAS_ON_IPU.replace("\n", "\r\n").encode()
    assert (out / "train.py").stat().st_mode & 0o777 == 0o755
    assert (out / "data" / "labels.csv").read_bytes() == b"a,b\r\n1,2\n"
    assert script.read_bytes() == KERAS.replace("\n", "\r\n").encode()  # the input is untouched
    assert sorted(path.relative_to(out).as_posix() for path in out.rglob("*")) == [
        "data", "data/labels.csv", "train.py"]


def test_save_in_place_rewrites_only_a_changed_file_and_reports_a_failed_write(tmp_path):
    plain = tmp_path / "util.py"
    plain.write_text("x = 1\n")
    os.utime(plain, (1_000_000, 1_000_000))
    outcome, source = port_file(str(plain))
    assert save(outcome, source, str(plain)) is outcome
    assert plain.stat().st_mtime == 1_000_000

    script = tmp_path / "train.py"
    script.write_text(KERAS)
    outcome, source = port_file(str(script), Config())
    blocked = tmp_path / "file" / "train.py"  # its folder is a file: the write must fail
    (tmp_path / "file").write_text("")
    failed = save(outcome, source, str(blocked))
    assert failed.error is not None and failed.error.startswith(f"{blocked}: ")
    assert failed.ported == KERAS and not failed.changed


def test_port_file_of_a_missing_file_is_an_error_without_a_source(tmp_path):
    outcome, source = port_file(str(tmp_path / "gone.py"))
    assert source is None and outcome.error is not None and outcome.ported == ""


def test_out_dir_inside_the_input_is_refused(tmp_path):
    with pytest.raises(OutDirError, match="is inside the input tree"):
        out_tree([str(tmp_path)], str(tmp_path / "out"))


@pytest.mark.parametrize("workers", [1, 2])
def test_port_all_keeps_the_order_and_reports_each_job_done(workers):
    texts = [f"x = {'1' * number}\n" for number in range(9)]  # different sizes: the pool reorders them
    jobs = [(f"m{number}.py", text, Config()) for number, text in enumerate(texts)]
    done = []
    outcomes = port_all(jobs, workers, on_done=lambda: done.append(len(done)))
    assert [(outcome.path, outcome.ported) for outcome in outcomes] == [(path, text) for path, text, _ in jobs]
    assert len(done) == len(jobs)
