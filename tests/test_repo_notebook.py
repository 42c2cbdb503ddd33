"""Notebooks (.ipynb) through the CLI: the code cells ported as one program, IPython syntax masked
and restored, everything else in the file kept byte for byte."""

from __future__ import annotations

import json

import pytest
from repo_util import cli, code_cell, markdown_cell, notebook, write, write_notebook

from porter.notebook import mask, unmask

OUTPUT = {"name": "stdout", "output_type": "stream", "text": ["Epoch 1/2\n", "loss: 0.31\n"]}

# The model code spread over cells as people write it: imports, data, model, training.
CELLS = [
    markdown_cell("# MNIST on the IPU\n"),
    code_cell(["%matplotlib inline\n", "!pip install -q tensorflow-datasets\n", "import tensorflow as tf"], count=1),
    code_cell(["(x, y), _ = tf.keras.datasets.mnist.load_data()\n",
               "dataset = tf.data.Dataset.from_tensor_slices((x / 255.0, y)).batch(32)"], count=2),
    code_cell(["model = tf.keras.Sequential([\n", "    tf.keras.layers.Flatten(),\n",
               "    tf.keras.layers.Dense(10),\n", "])\n",
               "model.compile(optimizer=\"sgd\", loss=\"sparse_categorical_crossentropy\")"], count=3),
    code_cell("%%time\nhistory = model.fit(dataset, epochs=2)\nfiles = !ls\ntf.data.Dataset?", [OUTPUT], count=4),
    code_cell(["%%bash\n", "nvidia-smi"], count=5),
]

EXPECTED_SOURCES = [
    ["%matplotlib inline\n", "!pip install -q tensorflow-datasets\n", "import tensorflow as tf\n",
     "from tensorflow.python import ipu"],
    ["(x, y), _ = tf.keras.datasets.mnist.load_data()\n",
     'dataset = tf.data.Dataset.from_tensor_slices((x / 255.0, y.astype("int32"))).batch(32, drop_remainder=True)'],
    ["ipu_config = ipu.config.IPUConfig()\n", "ipu_config.auto_select_ipus = 1\n",
     "ipu_config.configure_ipu_system()\n", "strategy = ipu.ipu_strategy.IPUStrategy()\n",
     "with strategy.scope():\n", "    model = tf.keras.Sequential([\n", "        tf.keras.layers.Flatten(),\n",
     "        tf.keras.layers.Dense(10),\n", "    ])\n",
     "    model.compile(optimizer=\"sgd\", loss=\"sparse_categorical_crossentropy\")"],
    "%%time\nwith strategy.scope():\n    history = model.fit(dataset, epochs=2)\nfiles = !ls\ntf.data.Dataset?",
    ["%%bash\n", "nvidia-smi"],
]


def test_a_notebook_is_ported_as_one_program_cell_by_cell(tmp_path):
    path = write_notebook(tmp_path, "train.ipynb", notebook(CELLS))
    before = json.loads(path.read_text())
    result = cli(["train.ipynb", "--write"], cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    text = path.read_text()
    after = json.loads(text)
    assert [cell["source"] for cell in after["cells"][1:]] == EXPECTED_SOURCES
    # Everything but the sources is kept: outputs, counts, metadata, key order, indentation.
    for old, new in zip(before["cells"], after["cells"]):
        assert list(old) == list(new)
        assert {key: value for key, value in old.items() if key != "source"} == {
            key: value for key, value in new.items() if key != "source"}
    assert after["metadata"] == before["metadata"]
    assert text == json.dumps(after, indent=1, ensure_ascii=False) + "\n"
    # A second run changes nothing.
    again = cli(["train.ipynb", "--check"], cwd=tmp_path)
    assert again.exit_code == 0, again.stdout
    assert again.stdout == ""


def test_findings_name_the_cell_and_the_line_in_it(tmp_path):
    write_notebook(tmp_path, "train.ipynb", notebook(CELLS))
    lines = cli(["train.ipynb"], cwd=tmp_path).stdout.splitlines()
    assert "train.ipynb:cell 3:2:62: IPU105 `.batch()` gets `drop_remainder=True`: a last partial batch is dropped [fixed]" in lines
    assert "train.ipynb:cell 4:1:1: IPU103 model code runs in `with strategy.scope():` [fixed]" in lines
    assert "train.ipynb:cell 2:3:1: IPU101 added `from tensorflow.python import ipu` [fixed]" in lines


def test_diff_shows_the_code_cells(tmp_path):
    write_notebook(tmp_path, "train.ipynb", notebook(CELLS))
    result = cli(["train.ipynb", "--diff"], cwd=tmp_path)
    assert result.exit_code == 1
    assert "--- a/train.ipynb:cell 5\n+++ b/train.ipynb:cell 5\n" in result.stdout
    assert " %%time\n-history = model.fit(dataset, epochs=2)\n+with strategy.scope():\n" \
           "+    history = model.fit(dataset, epochs=2)\n files = !ls\n" in result.stdout
    assert "cell 6" not in result.stdout and '"cells"' not in result.stdout


def test_a_scope_never_spans_cells_each_cell_gets_its_own(tmp_path):
    cells = [
        code_cell("import tensorflow as tf"),
        code_cell("model = tf.keras.Sequential([tf.keras.layers.Dense(1)])"),
        code_cell("model.compile(loss=\"mse\")"),
        code_cell("model.fit(dataset)"),
    ]
    path = write_notebook(tmp_path, "nb.ipynb", notebook(cells))
    assert cli(["nb.ipynb", "--write"], cwd=tmp_path).exit_code == 0
    sources = [cell["source"] for cell in json.loads(path.read_text())["cells"]]
    assert sources[1].endswith("strategy = ipu.ipu_strategy.IPUStrategy()\nwith strategy.scope():\n"
                               "    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])")
    assert sources[2] == "with strategy.scope():\n    model.compile(loss=\"mse\")"
    assert sources[3] == "with strategy.scope():\n    model.fit(dataset)"
    assert cli(["nb.ipynb", "--check"], cwd=tmp_path).exit_code == 0


def test_what_a_cell_shows_at_its_end_stays_after_the_scope(tmp_path):
    cells = [
        code_cell("import os\nimport tensorflow as tf"),
        code_cell("model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\nmodel.compile(loss=\"mse\")\n"
                  "model.summary()"),
        code_cell("model.fit(dataset)\nmodel.save_weights(\"ckpt/weights\")\nsorted(os.listdir(\"ckpt\"))"),
        code_cell("model.evaluate(dataset)"),
    ]
    path = write_notebook(tmp_path, "nb.ipynb", notebook(cells))
    assert cli(["nb.ipynb", "--write"], cwd=tmp_path).exit_code == 0
    sources = [cell["source"] for cell in json.loads(path.read_text())["cells"]]
    assert sources[1].endswith("with strategy.scope():\n    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
                               "    model.compile(loss=\"mse\")\nmodel.summary()")
    # A look at the files the training wrote touches neither the model nor TensorFlow.
    assert sources[2] == ("with strategy.scope():\n    model.fit(dataset)\n    model.save_weights(\"ckpt/weights\")\n"
                          "sorted(os.listdir(\"ckpt\"))")
    # Evaluating runs the model: it needs the scope, and the scores it gives are shown after it.
    assert sources[3] == "with strategy.scope():\n    result = model.evaluate(dataset)\nresult"
    assert cli(["nb.ipynb", "--check"], cwd=tmp_path).exit_code == 0


def test_shell_escapes_stay_at_the_margin_between_two_scopes(tmp_path):
    cells = [
        code_cell("import tensorflow as tf"),
        code_cell("model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\nmodel.compile(loss=\"mse\")\n"
                  "model.fit(dataset)\n# keep a copy\n!mkdir -p saved\nmodel.save(\"saved/net.keras\")"),
        code_cell("%time history = model.fit(dataset)\nmodel.evaluate(dataset)"),
    ]
    path = write_notebook(tmp_path, "nb.ipynb", notebook(cells))
    assert cli(["nb.ipynb", "--write"], cwd=tmp_path).exit_code == 0
    sources = [cell["source"] for cell in json.loads(path.read_text())["cells"]]
    # A shell escape runs no Python: it stays where it was, and the scope is entered again after it.
    assert sources[1].endswith("with strategy.scope():\n    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
                               "    model.compile(loss=\"mse\")\n    model.fit(dataset)\n# keep a copy\n"
                               "!mkdir -p saved\nwith strategy.scope():\n    model.save(\"saved/net.keras\")")
    # `%time` runs the Python after it: in the scope with the rest.
    assert sources[2] == ("with strategy.scope():\n    %time history = model.fit(dataset)\n"
                          "    result = model.evaluate(dataset)\nresult")
    assert cli(["nb.ipynb", "--check"], cwd=tmp_path).exit_code == 0


def test_model_code_a_line_magic_runs_is_reported(tmp_path):
    cells = [
        code_cell("import tensorflow as tf\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
                  "model.compile(loss=\"mse\")"),
        code_cell("%matplotlib inline\n%time history = model.fit(x, y, batch_size=64)"),
    ]
    write_notebook(tmp_path, "nb.ipynb", notebook(cells))
    result = cli(["nb.ipynb", "--check"], cwd=tmp_path)
    assert result.exit_code == 1
    reported = [line for line in result.output.splitlines() if "IPU803" in line]
    assert reported == ["nb.ipynb:cell 2:2:1: IPU803 `%time history = model.fit(x, y, batch_size=64)` runs model "
                        "code inside a line magic, which the port cannot see: it is not checked for the IPU (the "
                        "strategy's scope, whole batches); write it as Python (time the cell with `%%time`), or "
                        "check it by hand [warning]"]
    assert "IPU803" not in cli(["nb.ipynb", "--ignore", "IPU803"], cwd=tmp_path).output


def test_a_line_magic_at_the_margin_of_a_ported_notebook_is_still_reported(tmp_path):
    # The port leaves the notebook as it is, but the magic runs the model out of any scope.
    cells = [
        code_cell("import tensorflow as tf\nfrom tensorflow.python import ipu\nstrategy = ipu.ipu_strategy.IPUStrategy()\n"
                  "with strategy.scope():\n    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
                  "    model.compile(loss=\"mse\")"),
        code_cell("with strategy.scope():\n    %time model.fit(x, y, batch_size=64)"),
        code_cell("%timeit model.predict(x[:100])"),
    ]
    write_notebook(tmp_path, "nb.ipynb", notebook(cells))
    result = cli(["nb.ipynb", "--check"], cwd=tmp_path)
    assert result.exit_code == 1
    assert [line.split(" `")[0] for line in result.output.splitlines() if "IPU803" in line] == [
        "nb.ipynb:cell 3:1:1: IPU803"]


def test_the_ipu_configuration_never_goes_in_a_timeit_cell(tmp_path):
    # `%%timeit` runs its cell as a function body: a strategy made there is gone in the next cell.
    cells = [
        code_cell("import tensorflow as tf\nimport numpy as np\nx = np.ones((64, 2), \"float32\")"),
        code_cell("%%timeit -n 1 -r 1\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
                  "model.compile(loss=\"mse\")\nmodel.fit(x, x[:, :1], batch_size=32)"),
        code_cell("%%time\nnet = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
                  "net.compile(loss=\"mse\")\nnet.fit(x, x[:, :1], batch_size=32)"),
    ]
    path = write_notebook(tmp_path, "nb.ipynb", notebook(cells))
    assert cli(["nb.ipynb", "--write"], cwd=tmp_path).exit_code == 0
    sources = [cell["source"] for cell in json.loads(path.read_text())["cells"]]
    assert sources[0].endswith("ipu_config.configure_ipu_system()\nstrategy = ipu.ipu_strategy.IPUStrategy()")
    assert sources[1].startswith("%%timeit -n 1 -r 1\nwith strategy.scope():\n    model = ")
    assert sources[2].startswith("%%time\nwith strategy.scope():\n    net = ")
    assert cli(["nb.ipynb", "--diff"], cwd=tmp_path).output.count("\n+") == 0


def test_a_script_a_cell_writes_is_ported_as_a_file_of_its_own(tmp_path):
    # `%%writefile train.py` then `!python train.py`: the training runs in the script. A cell that
    # appends (`-a`) holds a piece of a file, which is not a program: it is left alone.
    script = ("import tensorflow as tf\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
              "model.compile(loss=\"mse\")\nmodel.fit(dataset, epochs=1)\n")
    cells = [code_cell("%%writefile train.py\n" + script), code_cell("!python train.py"),
             code_cell("%%writefile -a train.py\n" + script)]
    path = write_notebook(tmp_path, "nb.ipynb", notebook(cells))
    result = cli(["nb.ipynb", "--write"], cwd=tmp_path)
    assert "nb.ipynb:cell 1:3:1: IPU103 model code runs in `with strategy.scope():` [fixed]" in result.output
    sources = [cell["source"] for cell in json.loads(path.read_text())["cells"]]
    assert sources[0].startswith("%%writefile train.py\nimport tensorflow as tf\nfrom tensorflow.python import ipu\n")
    assert "with strategy.scope():\n    model = tf.keras.Sequential" in sources[0]
    assert sources[1:] == ["!python train.py", "%%writefile -a train.py\n" + script]
    assert cli(["nb.ipynb", "--check"], cwd=tmp_path).exit_code == 0


def test_a_script_that_imports_a_builder_another_cell_writes_is_keras_code(tmp_path):
    cells = [
        code_cell("%%writefile nets.py\nimport tensorflow as tf\n\n\ndef build():\n"
                  "    return tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"),
        code_cell("%%writefile train.py\nfrom nets import build\n\nmodel = build()\nmodel.compile(loss=\"mse\")\n"
                  "model.fit(dataset, epochs=1)\n"),
    ]
    path = write_notebook(tmp_path, "nb.ipynb", notebook(cells))
    assert cli(["nb.ipynb", "--write"], cwd=tmp_path).exit_code == 0
    sources = [cell["source"] for cell in json.loads(path.read_text())["cells"]]
    assert sources[0] == cells[0]["source"]
    assert "with strategy.scope():\n    model = build()\n" in sources[1]


def test_a_model_a_line_magic_makes_is_reported(tmp_path):
    # `%time model = ...`: the model is made out of the port's sight, so out of any scope.
    cells = [
        code_cell("import tensorflow as tf\n%time model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
                  "%time rows = len(features)"),
        code_cell("model.compile(loss=\"mse\")\nmodel.fit(features, targets, batch_size=8)"),
    ]
    write_notebook(tmp_path, "nb.ipynb", notebook(cells))
    reported = [line for line in cli(["nb.ipynb"], cwd=tmp_path).output.splitlines() if "IPU803" in line]
    assert len(reported) == 1 and reported[0].startswith(
        "nb.ipynb:cell 1:2:1: IPU803 `%time model = tf.keras.Sequential([tf.keras.layers.Dense(1)])` makes `model`, "
        "which the notebook compiles or runs as a model")


def test_a_cell_that_does_not_parse_is_reported_and_kept(tmp_path):
    cells = [code_cell(["import tensorflow as tf\n", "ds = tf.data.Dataset.range(8).batch(2)"]),
             code_cell(["for i in range(3)\n", "    print(i)"])]
    path = write_notebook(tmp_path, "nb.ipynb", notebook(cells))
    result = cli(["nb.ipynb", "--write"], cwd=tmp_path)
    assert result.exit_code == 0
    # Python's own message (it depends on the version: "expected ':'", "invalid syntax").
    reported = result.stdout.splitlines()[-1]
    assert reported.startswith("nb.ipynb:cell 2:1:18: IPU801 cell not ported, it does not parse: ")
    assert reported.endswith(" [warning]")
    sources = [cell["source"] for cell in json.loads(path.read_text())["cells"]]
    assert sources == [["import tensorflow as tf\n", "ds = tf.data.Dataset.range(8).batch(2, drop_remainder=True)"],
                       ["for i in range(3)\n", "    print(i)"]]
    assert cli(["nb.ipynb", "--check"], cwd=tmp_path).exit_code == 1  # a person must fix the cell


def test_a_shell_command_ipython_runs_without_a_bang_is_kept_and_the_cell_ported(tmp_path):
    # IPython's automagic runs `ls ./data` and `pip install ...` as shell commands.
    cells = [code_cell(["import tensorflow as tf\n", "pip install -q tensorflow-datasets"]),
             code_cell(["ls ./data\n", "ds = tf.data.Dataset.range(8).batch(2)"])]
    path = write_notebook(tmp_path, "nb.ipynb", notebook(cells))
    result = cli(["nb.ipynb", "--write"], cwd=tmp_path)
    assert result.exit_code == 0
    assert "IPU801" not in result.stdout
    sources = [cell["source"] for cell in json.loads(path.read_text())["cells"]]
    assert sources[1] == ["ls ./data\n", "ds = tf.data.Dataset.range(8).batch(2, drop_remainder=True)"]
    assert sources[0] == ["import tensorflow as tf\n", "pip install -q tensorflow-datasets"]


def test_a_cell_indented_as_a_whole_is_ported_and_keeps_its_indentation(tmp_path):
    # IPython runs such a cell with the indentation of its first line removed from every line.
    cells = [code_cell(["import tensorflow as tf\n", "ds = tf.data.Dataset.range(8).batch(2)"]),
             code_cell([" model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n",
                        " model.compile(optimizer='sgd', loss='mse')\n", "\n", " model.fit(ds, epochs=1)"]),
             code_cell(["  for x in ds.take(2):\n", "    print(x)"])]
    path = write_notebook(tmp_path, "nb.ipynb", notebook(cells))
    result = cli(["nb.ipynb", "--write"], cwd=tmp_path)
    assert result.exit_code == 0
    assert "IPU801" not in result.stdout
    assert "nb.ipynb:cell 2:1:2: IPU103 model code runs in `with strategy.scope():` [fixed]" in result.stdout
    sources = [cell["source"] for cell in json.loads(path.read_text())["cells"]]
    assert sources[1][4:] == [" with strategy.scope():\n",
                              "   model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n",
                              "   model.compile(optimizer='sgd', loss='mse')\n", "\n",
                              "   model.fit(ds, epochs=1)"]
    assert sources[2] == ["  for x in ds.take(2):\n", "    print(x)"]
    assert cli(["nb.ipynb", "--check"], cwd=tmp_path).exit_code == 0


def test_an_indented_cell_that_does_not_parse_is_reported_at_its_own_column(tmp_path):
    cells = [code_cell(["import tensorflow as tf\n", "ds = tf.data.Dataset.range(8).batch(2)"]),
             code_cell(["    x = (1,\n"])]
    write_notebook(tmp_path, "nb.ipynb", notebook(cells))
    result = cli(["nb.ipynb"], cwd=tmp_path)
    reported = next(line for line in result.stdout.splitlines() if "IPU801" in line)
    assert reported.startswith("nb.ipynb:cell 2:1:9: IPU801 cell not ported, it does not parse: ")


@pytest.mark.parametrize("indent, ensure_ascii", [(1, False), (2, True), (4, False), ("\t", False)])
def test_the_json_style_is_kept(tmp_path, indent, ensure_ascii):
    cells = [code_cell(["# Données d'entraînement\n", "import tensorflow as tf\n",
                        "ds = tf.data.Dataset.range(8).batch(2)"])]
    data = notebook(cells)
    data["metadata"]["zeta"] = "ü"
    path = write_notebook(tmp_path, "nb.ipynb", data, indent=indent, ensure_ascii=ensure_ascii)
    assert cli(["nb.ipynb", "--write"], cwd=tmp_path).exit_code == 0
    data["cells"][0]["source"][-1] = "ds = tf.data.Dataset.range(8).batch(2, drop_remainder=True)"
    assert path.read_text() == json.dumps(data, indent=indent, ensure_ascii=ensure_ascii) + "\n"


def test_invalid_json_is_a_one_line_error_and_left_alone(tmp_path):
    path = write(tmp_path, "broken.ipynb", '{"cells": [\n  {"cell_type": "code",,}\n]}\n')
    result = cli(["broken.ipynb", "--write"], cwd=tmp_path)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == (
        "broken.ipynb: invalid notebook JSON: Expecting property name enclosed in double quotes at line 2, column 24")
    assert path.read_text() == '{"cells": [\n  {"cell_type": "code",,}\n]}\n'


def test_other_kernels_and_folders(tmp_path):
    write_notebook(tmp_path, "nbs/r.ipynb", notebook([code_cell("import tensorflow as tf\nx.batch(2)")], language="R"))
    write_notebook(tmp_path, "nbs/py.ipynb", notebook([code_cell("import tensorflow as tf\nd = tf.data.Dataset.range(8).batch(2)")]))
    write_notebook(tmp_path, "nbs/.ipynb_checkpoints/py-checkpoint.ipynb",
                   notebook([code_cell("import tensorflow as tf\nd = tf.data.Dataset.range(8).batch(2)")]))
    result = cli(["nbs"], cwd=tmp_path)
    assert [line.split(":")[0] for line in result.stdout.splitlines()] == ["nbs/py.ipynb"]


def test_masking_round_trips_and_keeps_line_counts():
    source = ("%load_ext autoreload\n!ls -l \\\n    data/\nfiles = !ls\nfor f in files:\n    %time load(f)\n"
              "model.fit??\n?tf.data\nx = 1  # what?\nprint('a?')\n")
    masked, magics = mask(source)
    assert masked.count("\n") == source.count("\n")
    assert "x = 1  # what?\nprint('a?')\n" in masked
    assert len(magics) == 7
    assert unmask(masked, magics) == source
    # Indented by a port (wrapped into a block): the restored lines follow.
    shifted = "".join("    " + line for line in masked.splitlines(keepends=True))
    assert unmask(shifted, magics) == "".join("    " + line for line in source.splitlines(keepends=True))
    assert mask("%%bash\nls\n") is None
    assert mask("%%writefile x.py\nimport os\n") is None


def test_lines_that_continue_python_are_never_masked():
    """IPython reads its syntax only at the start of a logical line: a line inside brackets, a
    triple-quoted string or after a backslash is Python (`% 2` and `!= y` as black breaks a long
    expression), and the magics after them are still masked."""
    source = ("x = (\n    a\n    % 2\n    != b\n)\ntext = \"\"\"\n!not a shell line\n%d items\n\"\"\"\n"
              "y = 1 + \\\n    2\nz = \")(\"  # (\n%time fit(x)\n!ls\n")
    masked, magics = mask(source)
    assert masked.splitlines()[:12] == source.splitlines()[:12]
    assert [line for line, _ in magics.values()] == ["%time fit(x)", "!ls"]
    assert unmask(masked, magics) == source


@pytest.mark.parametrize("indent", [1, 2, None])
def test_findings_map_to_the_lines_of_the_notebook_file(tmp_path, indent):
    from porter.notebook import file_line, json_lines

    source = ["import os\n", "x = {\"a\": [1, 2]}\n", "y = 'q\\\\\"'"]
    data = notebook([markdown_cell("# t\n"), code_cell(source), code_cell("a = 1\nb = 2")])
    text = json.dumps(data, indent=indent)
    lines = json_lines(text)
    if indent is None:  # everything on one line
        assert set(line for found in lines.values() for line in found) == {1}
        return
    rows = text.splitlines()
    assert [rows[line - 1].strip() for line in lines[2]] == [json.dumps(line) + "," for line in source[:-1]] + [
        json.dumps(source[-1])]
    assert file_line(lines, 3, 2) == file_line(lines, 3, 1) and '"a = 1\\nb = 2"' in rows[file_line(lines, 3, 1) - 1]
    assert json_lines("{not json") == {}


def test_looks_at_host_values_and_the_model_stay_after_the_scope(tmp_path):
    cells = [
        code_cell("import numpy as np\nimport pandas as pd\nimport tensorflow as tf"),
        code_cell("labels = np.zeros(64)\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
                  "model.compile(loss=\"mse\")\nlen(model.trainable_variables)"),
        code_cell("history = model.fit(features, labels, batch_size=32)\nhistory.history.keys()"),
        code_cell("frame = pd.DataFrame(history.history)\nframe.tail()"),
        code_cell("scores = model.predict(features, batch_size=32)\nclasses = scores.ravel().round()\n"
                  "(classes == labels).mean()"),
        code_cell("model(features[:4])"),
        code_cell("np.argmax(model.predict(features, batch_size=32), axis=1)"),
        code_cell("print(model.evaluate(features, labels, batch_size=32))"),
        code_cell("tf.nn.sigmoid(scores).numpy()"),
        code_cell("model.fit(features, labels, batch_size=32)"),
        code_cell("def report(data):\n    print(model.evaluate(data, labels, batch_size=32))"),
        code_cell("report(features)"),
    ]
    path = write_notebook(tmp_path, "nb.ipynb", notebook(cells))
    assert cli(["nb.ipynb", "--write", "--select", "IPU103"], cwd=tmp_path).exit_code == 0
    sources = [cell["source"] for cell in json.loads(path.read_text())["cells"]]
    # Reading the model's variables, the History, a pandas table or NumPy arrays runs nothing on
    # the IPU: the cell ends with it, after the scope, and still shows it.
    assert sources[1].endswith("    model.compile(loss=\"mse\")\nlen(model.trainable_variables)")
    assert sources[2] == "with strategy.scope():\n    history = model.fit(features, labels, batch_size=32)\n" \
                         "history.history.keys()"
    # NumPy work on the predictions, after them, runs on the host: after the scope too.
    assert sources[4] == ("with strategy.scope():\n    scores = model.predict(features, batch_size=32)\n"
                          "classes = scores.ravel().round()\n(classes == labels).mean()")
    # The model's answer needs the scope: kept there under a name, and shown after it.
    assert sources[5] == "with strategy.scope():\n    result = model(features[:4])\nresult"
    assert sources[6] == ("with strategy.scope():\n    result = np.argmax(model.predict(features, batch_size=32), "
                          "axis=1)\nresult")
    # A `print` shows what it gives by itself: nothing to keep.
    assert sources[7] == "with strategy.scope():\n    print(model.evaluate(features, labels, batch_size=32))"
    # A cell of pandas work on the History needs no scope at all: it is left as it is.
    assert sources[3] == "frame = pd.DataFrame(history.history)\nframe.tail()"
    # Any other value a cell ends with is shown after the scope too; what `fit` gives is no answer.
    assert sources[8] == "with strategy.scope():\n    result = tf.nn.sigmoid(scores).numpy()\nresult"
    assert sources[9] == "with strategy.scope():\n    model.fit(features, labels, batch_size=32)"
    assert sources[11] == "with strategy.scope():\n    report(features)"  # a function that returns nothing
    assert cli(["nb.ipynb", "--check", "--select", "IPU103"], cwd=tmp_path).exit_code == 0


def test_a_semicolon_that_hides_a_cells_value_keeps_it_hidden(tmp_path):
    cells = [
        code_cell("import tensorflow as tf\nimport matplotlib.pyplot as plt\n"
                  "model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\nmodel.compile(loss=\"mse\")"),
        code_cell("model.evaluate(features, labels, batch_size=32);"),
        code_cell("plt.plot(model.predict(features, batch_size=32));"),
    ]
    path = write_notebook(tmp_path, "nb.ipynb", notebook(cells))
    assert cli(["nb.ipynb", "--write", "--select", "IPU103"], cwd=tmp_path).exit_code == 0
    sources = [cell["source"] for cell in json.loads(path.read_text())["cells"]]
    # Jupyter shows nothing for a last line that ends with `;`: no value is kept to show after the scope.
    assert sources[1] == "with strategy.scope():\n    model.evaluate(features, labels, batch_size=32);"
    assert sources[2] == "with strategy.scope():\n    plt.plot(model.predict(features, batch_size=32));"
    assert cli(["nb.ipynb", "--check", "--select", "IPU103"], cwd=tmp_path).exit_code == 0


def test_cells_that_make_nothing_on_a_device_are_left_alone(tmp_path):
    cells = [
        code_cell("import numpy as np\nimport tensorflow as tf"),
        code_cell("model = tf.keras.Sequential([tf.keras.layers.Dense(1)])"),
        code_cell("tf.random.set_seed(0)\nx = np.ones((64, 4), \"float32\")\n"
                  "ds = tf.data.Dataset.from_tensor_slices((x, x[:, :1])).map(lambda a, b: (tf.cast(a, tf.float32), b))"),
        code_cell("@tf.keras.utils.register_keras_serializable()\nclass Twice(tf.keras.layers.Layer):\n"
                  "    def call(self, x):\n        return 2 * x"),
        code_cell("optimizer = tf.keras.optimizers.SGD(0.1)"),
        code_cell("with open(\"names.txt\") as lines:\n    names = lines.read().split()"),
        code_cell("model.compile(optimizer=optimizer, loss=\"mse\")"),
        code_cell("rows = np.ones((32, 4), \"float32\")\nscores = model.predict(rows, batch_size=32)\n"
                  "best = scores.argmax()"),
    ]
    path = write_notebook(tmp_path, "nb.ipynb", notebook(cells))
    assert cli(["nb.ipynb", "--write", "--select", "IPU103"], cwd=tmp_path).exit_code == 0
    sources = [cell["source"] for cell in json.loads(path.read_text())["cells"]]
    # Host data, a seed and a class definition run nothing the IPU strategy places: left as they are.
    assert sources[2] == cells[2]["source"]
    assert sources[3] == cells[3]["source"]
    assert sources[5] == cells[5]["source"]  # a file read in a `with` block
    # An optimizer makes variables: in the scope, like the model.
    assert sources[4] == "with strategy.scope():\n    optimizer = tf.keras.optimizers.SGD(0.1)"
    # Host work before and after the model code of a cell stays before and after its scope.
    assert sources[7] == ("rows = np.ones((32, 4), \"float32\")\nwith strategy.scope():\n"
                          "    scores = model.predict(rows, batch_size=32)\nbest = scores.argmax()")
    assert cli(["nb.ipynb", "--check", "--select", "IPU103"], cwd=tmp_path).exit_code == 0


def test_a_name_bound_to_host_data_is_host_work_whatever_else_it_names(tmp_path):
    cells = [
        code_cell("import numpy as np\nimport tensorflow as tf"),
        code_cell("model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\nmodel.compile(loss=\"mse\")"),
        code_cell("history = model.fit(np.ones((32, 4)), np.ones((32, 1)), batch_size=32)"),
        code_cell("loss = history.history[\"loss\"]\nprint(loss)"),
        code_cell("loss = tf.keras.losses.MeanSquaredError()"),
        code_cell("scores = model.predict(np.ones((32, 4)), batch_size=32)"),
    ]
    path = write_notebook(tmp_path, "nb.ipynb", notebook(cells))
    assert cli(["nb.ipynb", "--write", "--select", "IPU103"], cwd=tmp_path).exit_code == 0
    sources = [cell["source"] for cell in json.loads(path.read_text())["cells"]]
    # `loss` names a loss object in another cell; here it is bound to the history's numbers.
    assert sources[3] == cells[3]["source"]


def test_arithmetic_on_a_keras_input_is_model_code(tmp_path):
    cells = [
        code_cell("import tensorflow as tf"),
        code_cell("inputs = tf.keras.Input(shape=(4,))\nhidden = tf.keras.layers.Dense(8)(inputs)"),
        code_cell("scaled = 2 * hidden + 1"),
        code_cell("model = tf.keras.Model(inputs, scaled)\nmodel.compile(loss=\"mse\")"),
        code_cell("def show():\n    print(model.predict(rows, batch_size=32))"),
        code_cell("class Show(tf.keras.callbacks.Callback):\n    def on_epoch_end(self, epoch, logs=None):\n"
                  "        show()"),
        code_cell("model.fit(rows, rows, batch_size=32, callbacks=[Show()])"),
    ]
    path = write_notebook(tmp_path, "nb.ipynb", notebook(cells))
    assert cli(["nb.ipynb", "--write", "--select", "IPU103"], cwd=tmp_path).exit_code == 0
    sources = [cell["source"] for cell in json.loads(path.read_text())["cells"]]
    # `2 * hidden + 1` on a symbolic Keras tensor makes Keras layers: in the scope, like the model.
    assert sources[2] == "with strategy.scope():\n    scaled = 2 * hidden + 1"
    # A function that predicts runs where it is called; a callback that calls it stays with the model
    # code, as Keras calls its methods.
    assert sources[4] == cells[4]["source"]
    assert sources[5].startswith("with strategy.scope():\n    class Show(")
    assert cli(["nb.ipynb", "--check", "--select", "IPU103"], cwd=tmp_path).exit_code == 0


def test_a_cell_run_before_the_imports_cell_imports_the_ipu_module_before_using_it(tmp_path):
    # Cells out of order (a training cell first): the IPU import goes ahead of the configuration
    # the port puts at the top of that cell, never after it.
    cells = [
        code_cell("model.fit(dataset, epochs=1)"),
        code_cell("import tensorflow as tf"),
        code_cell("model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\nmodel.compile(loss=\"mse\")"),
    ]
    path = write_notebook(tmp_path, "nb.ipynb", notebook(cells))
    assert cli(["nb.ipynb", "--write"], cwd=tmp_path).exit_code == 0
    first = json.loads(path.read_text())["cells"][0]["source"]
    assert first.startswith("from tensorflow.python import ipu\nipu_config = ipu.config.IPUConfig()\n")
