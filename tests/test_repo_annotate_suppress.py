"""--annotate (TODO comments for manual work, never duplicated) and `# ipu-port: ignore` comments
(the rules' edits and findings skipped there, unused ones listed on request)."""

from __future__ import annotations

import json

from repo_util import KERAS_SCRIPT, cli, code_cell, notebook, write, write_notebook

PIPELINE = '''\
import tensorflow as tf


def pipeline(size, drop):
    dataset = tf.data.Dataset.range(100)
    # the last batch may be smaller
    dataset = dataset.batch(size, drop_remainder=drop)
    for epoch in range(2):
        train = tf.data.Dataset.range(10).padded_batch(
            size, drop_remainder=drop)
    return dataset.batch(8)
'''

ANNOTATED = '''\
import tensorflow as tf


def pipeline(size, drop):
    dataset = tf.data.Dataset.range(100)
    # the last batch may be smaller
    # TODO(ipu-port IPU105): `.batch()`: `drop_remainder` must be True on the IPU; make sure this value is True
    dataset = dataset.batch(size, drop_remainder=drop)
    for epoch in range(2):
        # TODO(ipu-port IPU105): `.padded_batch()`: `drop_remainder` must be True on the IPU; make sure this value is True
        train = tf.data.Dataset.range(10).padded_batch(
            size, drop_remainder=drop)
    return dataset.batch(8, drop_remainder=True)
'''


def test_annotate_inserts_a_todo_above_each_manual_finding(tmp_path):
    path = write(tmp_path, "pipeline.py", PIPELINE)
    result = cli(["pipeline.py", "--annotate", "--write"], cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    assert path.read_text() == ANNOTATED
    # The findings still point at the lines of the file as it was.
    assert "pipeline.py:7:35: IPU105 `.batch()`: `drop_remainder` must be True" in result.stdout


def test_annotate_is_idempotent_and_check_sees_no_change(tmp_path):
    path = write(tmp_path, "pipeline.py", ANNOTATED)
    again = cli(["pipeline.py", "--annotate", "--write"], cwd=tmp_path)
    assert again.exit_code == 0 and path.read_text() == ANNOTATED
    assert "0 files ported, 1 unchanged." in again.stderr
    for options in (["--annotate", "--diff"], ["--diff"]):
        assert cli(["pipeline.py", *options], cwd=tmp_path).stdout == ""
    check = cli(["pipeline.py", "--annotate", "--check"], cwd=tmp_path)
    assert check.exit_code == 1  # manual work is still there; the file itself needs no change
    assert all(line.endswith(("[error]", "[warning]")) for line in check.stdout.splitlines())


def test_annotate_from_the_settings_and_in_a_notebook(tmp_path):
    write(tmp_path, "pyproject.toml", "[tool.ipu-port]\nannotate = true\n")
    path = write_notebook(tmp_path, "nb.ipynb", notebook([
        code_cell("import tensorflow as tf"),
        code_cell(["for drop in (True, False):\n", "    ds = tf.data.Dataset.range(9).batch(3, drop_remainder=drop)"]),
    ]))
    assert cli(["nb.ipynb", "--write"], cwd=tmp_path).exit_code == 0
    assert json.loads(path.read_text())["cells"][1]["source"] == [
        "for drop in (True, False):\n",
        "    # TODO(ipu-port IPU105): `.batch()`: `drop_remainder` must be True on the IPU; make sure this value is True\n",
        "    ds = tf.data.Dataset.range(9).batch(3, drop_remainder=drop)"]
    assert cli(["nb.ipynb", "--diff"], cwd=tmp_path).stdout == ""


SUPPRESSED = '''\
import tensorflow as tf


def pipeline(features, labels):
    dataset = tf.data.Dataset.from_tensor_slices((features, labels))
    train = dataset.batch(32)  # ipu-port: ignore[IPU105]
    valid = dataset.batch(  # ipu-port: ignore[IPU1]
        64)
    test = dataset.batch(16)
    return train, valid, test
'''


def test_a_line_suppression_skips_the_edit_and_the_finding(tmp_path):
    path = write(tmp_path, "pipeline.py", SUPPRESSED)
    result = cli(["pipeline.py", "--write"], cwd=tmp_path)
    assert result.exit_code == 0
    assert path.read_text() == SUPPRESSED.replace("batch(16)", "batch(16, drop_remainder=True)")
    assert [line.split(": ")[0] for line in result.stdout.splitlines()] == ["pipeline.py:9:20"]


BLOCK = '''\
import tensorflow as tf


def main(dataset):
    with tf.device("/GPU:0"):  # ipu-port: ignore
        model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
        model.compile(loss="mse")
        model.fit(tf.data.Dataset.range(8).batch(4), epochs=1)
'''


def test_a_block_suppression_covers_the_whole_block_and_adds_no_import(tmp_path):
    path = write(tmp_path, "train.py", BLOCK)
    result = cli(["train.py", "--check"], cwd=tmp_path)
    assert result.exit_code == 0 and result.stdout == ""
    assert cli(["train.py", "--write"], cwd=tmp_path).exit_code == 0
    assert path.read_text() == BLOCK


def test_a_suppression_names_only_some_rules(tmp_path):
    source = BLOCK.replace("# ipu-port: ignore", "# ipu-port: ignore[IPU102,IPU103]")
    write(tmp_path, "train.py", source)
    diff = cli(["train.py", "--diff"], cwd=tmp_path).stdout
    assert "+        model.fit(tf.data.Dataset.range(8).batch(4, drop_remainder=True), epochs=1)" in diff
    assert "strategy" not in diff and "IPUConfig" not in diff


def test_a_suppression_on_a_function_covers_its_body(tmp_path):
    source = "import tensorflow as tf\n\n\ndef make(d):  # ipu-port: ignore[IPU105]\n    return d.batch(2)\n"
    source = source.replace("d.batch(2)", "tf.data.Dataset.range(4).batch(2)")
    write(tmp_path, "make.py", source)
    assert cli(["make.py", "--check"], cwd=tmp_path).exit_code == 0


def test_a_suppression_on_an_else_line_covers_that_clause_only(tmp_path):
    source = ("import tensorflow as tf\n\n\ndef make(small):\n    if small:\n"
              "        return tf.data.Dataset.range(4).batch(2)\n"
              "    else:  # ipu-port: ignore\n        return tf.data.Dataset.range(8).batch(4)\n")
    path = write(tmp_path, "make.py", source)
    assert cli(["make.py", "--write"], cwd=tmp_path).exit_code == 0
    assert path.read_text() == source.replace("batch(2)", "batch(2, drop_remainder=True)")


def test_unused_suppressions_can_be_listed(tmp_path):
    source = SUPPRESSED.replace("    test = dataset.batch(16)\n",
                                "    # ipu-port: ignore\n    test = dataset.batch(16)  # ipu-port: ignore[IPU3]\n")
    source = source.replace("return train, valid, test", "return train, valid, test  # ipu-port: ignore")
    write(tmp_path, "pipeline.py", source)
    plain = cli(["pipeline.py"], cwd=tmp_path)
    assert "IPU802" not in plain.stdout
    result = cli(["pipeline.py", "--show-unused-suppressions", "--check"], cwd=tmp_path)
    assert result.exit_code == 1
    unused = [line for line in result.stdout.splitlines() if "IPU802" in line]
    assert unused == [
        "pipeline.py:10:5: IPU802 `# ipu-port: ignore[IPU3]` suppresses nothing here; remove it [warning]",
        "pipeline.py:10:5: IPU802 `# ipu-port: ignore` on a line of its own covers nothing; remove it [warning]",
        "pipeline.py:11:5: IPU802 `# ipu-port: ignore` suppresses nothing here; remove it [warning]",
    ]
    ignored = cli(["pipeline.py", "--show-unused-suppressions", "--ignore", "IPU802"], cwd=tmp_path)
    assert ignored.exit_code == 0 and ignored.stdout and "IPU802" not in ignored.stdout
    explained = cli(["--explain", "IPU802"], cwd=tmp_path)
    assert explained.stdout.startswith("IPU802 unused-suppression")


def test_suppressions_do_not_touch_a_file_without_them(tmp_path):
    path = write(tmp_path, "train.py", KERAS_SCRIPT)
    result = cli(["train.py", "--show-unused-suppressions", "--check"], cwd=tmp_path)
    assert "IPU802" not in result.stdout
    assert path.read_text() == KERAS_SCRIPT
