"""--shards (validated with the IPUs selected), --format markdown (checked byte for byte against a
checked-in report), and IPU112 composing with IPU104 on the imports both swaps leave unused."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from porter.cli import main
from porter.config import Config
from porter.engine import port

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "tests" / "data" / "text_models_report.md"
TEXT_MODELS = ["fixtures/keras/text_embedding_lstm.py", "fixtures/keras/text_masked_embedding.py"]


def test_markdown_report_is_the_checked_in_one(monkeypatch):
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["--format", "markdown", *TEXT_MODELS])
    assert result.exit_code == 0
    assert result.stdout == REPORT.read_text(encoding="utf-8")


def test_markdown_report_fences_a_diff_that_holds_a_fence(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(
        'import tensorflow as tf\n\nDOC = """\n```\n"""\nwith tf.device("/gpu:0"):\n'
        '    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n')
    result = CliRunner().invoke(main, ["--format", "markdown", "train.py"])
    assert result.exit_code == 0
    assert "````diff\n" in result.stdout and result.stdout.rstrip().endswith("````")


@pytest.mark.parametrize("options, message", [
    (["--shards", "3", "--ipus", "4"], "--shards: must be a power of two (1, 2, 4, 8...), got 3"),
    (["--shards", "4", "--ipus", "2"], "--shards: 4 shards need at least 4 IPUs, but ipus is 2"),
])
def test_bad_shards_is_a_one_line_error(tmp_path, monkeypatch, options, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text("import tensorflow as tf\n")
    result = CliRunner().invoke(main, [*options, "train.py"])
    assert result.exit_code == 2
    assert result.stderr == f"ipu-port: error: {message}\n"


def test_shards_in_the_settings_are_checked_against_ipus(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.ipu-port]\nshards = 2\nipus = 1\n")
    (tmp_path / "train.py").write_text("import tensorflow as tf\n")
    result = CliRunner().invoke(main, ["train.py"])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "shards: 2 shards need at least 2 IPUs" in result.stderr
    assert CliRunner().invoke(main, ["--ipus", "2", "train.py"]).exit_code == 0


def test_shards_in_the_settings_without_ipus_select_the_ipus_they_need(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.ipu-port]\nshards = 2\n")
    (tmp_path / "train.py").write_text("import tensorflow as tf\n")
    assert CliRunner().invoke(main, ["train.py"]).exit_code == 0


def test_embedding_and_lstm_swaps_remove_their_shared_import_once():
    source = ('import tensorflow as tf\nfrom tensorflow.keras.layers import LSTM, Embedding\n\n'
              'tokens = tf.keras.Input(shape=(20,), dtype="int32")\nx = LSTM(8)(Embedding(100, 8)(tokens))\n')
    result = port(source, Config())
    assert result.source == ('import tensorflow as tf\nfrom ipu_tensorflow_addons.keras import layers as ipu_layers\n\n'
                             'tokens = tf.keras.Input(shape=(20,), dtype="int32")\n'
                             'x = ipu_layers.LSTM(8)(ipu_layers.Embedding(100, 8)(tokens))\n')
    assert port(result.source, Config()).source == result.source
