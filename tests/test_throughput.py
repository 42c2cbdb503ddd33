"""The speed arithmetic against the figures of Graphcore's Keras tutorial, and every check on the
speed options, through porter.throughput and through the command line (one-line error, exit 2)."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from porter.cli import main
from porter.config import Config
from porter import throughput as t

MNIST_TRAIN, MNIST_TEST, BATCH = 60000, 10000, 64


def test_one_ipu_trains_937_steps_and_drops_32_images():
    assert t.steps_per_epoch(MNIST_TRAIN, BATCH) == 937
    assert t.usable_samples(MNIST_TRAIN, t.trim_multiple(BATCH)) == 59968
    assert MNIST_TRAIN - 59968 == 32
    # the tutorial says 48 test images, but 10000 = 156 x 64 + 16
    assert MNIST_TEST - t.usable_samples(MNIST_TEST, BATCH) == 16


def test_two_replicas_train_936_steps():
    replica_count = t.replicas(2)
    assert replica_count == 2
    assert t.steps_per_epoch(MNIST_TRAIN, BATCH, replica_count) == 936
    assert t.batches_per_replica(MNIST_TRAIN, BATCH, replica_count) == 468
    assert t.usable_samples(MNIST_TRAIN, t.trim_multiple(BATCH, replica_count)) == 59904


def test_auto_steps_per_execution_is_the_whole_epoch_of_one_replica():
    assert t.auto_steps_per_execution(MNIST_TRAIN, BATCH) == 937
    assert t.auto_steps_per_execution(MNIST_TRAIN, BATCH, 2) == 468
    assert t.auto_steps_per_execution(MNIST_TEST, BATCH) == 156
    # with accumulation it stays a multiple of the accumulation count, and divides the trimmed data
    spe = t.auto_steps_per_execution(MNIST_TRAIN, BATCH, 1, 8)
    assert spe == 936 and spe % 8 == 0
    trimmed = t.usable_samples(MNIST_TRAIN, t.trim_multiple(BATCH, 1, 1, 8))
    assert t.batches_per_replica(trimmed, BATCH) % spe == 0
    assert t.auto_steps_per_execution(100, BATCH) == 1
    assert t.auto_steps_per_execution(10, BATCH) == 0


def test_pipelined_replicas_follow_the_keras_formula():
    # a 2-stage pipeline on 4 IPUs: 2 replicas (completed_demo_pipelining); 3 stages take 4 IPUs
    assert t.replicas(4, 2) == 2
    assert t.replicas(2, 2) == 1
    assert t.ipus_per_replica(3) == 4
    assert t.replicas(8, 3) == 2
    # tutorial: pipeline of 2 stages on 2 IPUs, accumulation 8: 64 * 1 * 8 samples per weight update
    assert t.trim_multiple(BATCH, t.replicas(2, 2), 1, 8) == 512


def test_trim_multiple_counts_accumulated_batches_once():
    assert t.trim_multiple(64, 2, 16, 8) == 64 * 2 * 16
    assert t.trim_multiple(64, 2, 1, 8) == 64 * 2 * 8
    assert t.trim_multiple(64, 4, 3) == 64 * 4 * 3


def _config(**values):
    return Config(**values)


@pytest.mark.parametrize("values, option, words", [
    ({"ipus": 3}, "--ipus", "power of two"),
    ({"ipus": 0}, "--ipus", "positive"),
    ({"steps_per_execution": "fast"}, "--steps-per-execution", "auto or a positive integer"),
    ({"steps_per_execution": 0}, "--steps-per-execution", "auto or a positive integer"),
    ({"device_iterations": 0}, "--device-iterations", "positive"),
    ({"pipeline_stages": 1, "gradient_accumulation": 4}, "--pipeline-stages", "at least 2"),
    ({"ipus": 2, "pipeline_stages": 4, "gradient_accumulation": 8}, "--ipus", "multiple of the stages"),
    ({"ipus": 4, "pipeline_stages": 3, "gradient_accumulation": 6, "pipeline_schedule": "interleaved"},
     None, None),
    ({"ipus": 2, "pipeline_stages": 2}, "--pipeline-stages", "--gradient-accumulation"),
    ({"ipus": 2, "pipeline_stages": 2, "gradient_accumulation": 6}, "--gradient-accumulation", "multiple of 4"),
    ({"ipus": 2, "pipeline_stages": 2, "gradient_accumulation": 6, "pipeline_schedule": "interleaved"}, None, None),
    ({"ipus": 4, "pipeline_stages": 4, "gradient_accumulation": 6, "pipeline_schedule": "interleaved"},
     "--gradient-accumulation", "multiple of 4"),
    ({"ipus": 2, "pipeline_stages": 2, "gradient_accumulation": 3, "pipeline_schedule": "sequential"}, None, None),
    ({"pipeline_schedule": "zigzag"}, "--pipeline-schedule", "grouped"),
    ({"steps_per_execution": 12, "gradient_accumulation": 8}, "--steps-per-execution", "multiple"),
    ({"steps_per_execution": 16, "gradient_accumulation": 8}, None, None),
    ({"executable_cache": "my cache"}, "--executable-cache", "without spaces"),
    ({"executable_cache": ""}, "--executable-cache", "without spaces"),
])
def test_validation(values, option, words):
    if option is None:
        t.validate(_config(**values))
        return
    with pytest.raises(t.OptionError) as raised:
        t.validate(_config(**values))
    assert raised.value.option == option
    assert words in raised.value.message
    assert "\n" not in raised.value.message


def test_steps_per_execution_is_parsed():
    assert t.validate(_config(steps_per_execution="auto")).steps_per_execution == "auto"
    assert t.validate(_config(steps_per_execution="AUTO")).steps_per_execution == "auto"
    assert t.validate(_config(steps_per_execution="16")).steps_per_execution == 16
    assert t.validate(_config()).steps_per_execution is None


@pytest.mark.parametrize("args, words", [
    (["--ipus", "6"], "power of two"),
    (["--steps-per-execution", "x"], "auto or a positive integer"),
    (["--ipus", "2", "--pipeline-stages", "4", "--gradient-accumulation", "8"], "multiple of the stages"),
    (["--ipus", "2", "--pipeline-stages", "2", "--gradient-accumulation", "2"], "multiple of 4"),
    (["--ipus", "2", "--pipeline-stages", "2"], "--gradient-accumulation"),
    (["--pipeline-schedule", "zigzag"], "zigzag"),
    (["--executable-cache", "a b"], "without spaces"),
    (["--device-iterations", "0"], "positive"),
])
def test_cli_errors_are_usage_errors(args, words, tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import tensorflow as tf\n")
    result = CliRunner().invoke(main, [*args, str(script)])
    assert result.exit_code == 2
    error_lines = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert len(error_lines) == 1 and words in error_lines[0]


def test_cli_accepts_good_speed_options(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import os\n")
    result = CliRunner().invoke(main, [
        "--ipus", "4", "--pipeline-stages", "2", "--gradient-accumulation", "8", "--steps-per-execution", "auto",
        "--executable-cache", "/tmp/cache", "--ipu-model", "--device-iterations", "4", str(script)])
    assert result.exit_code == 0, result.output


PIPELINED = (
    "import tensorflow as tf\n\n"
    "model = tf.keras.Sequential([tf.keras.layers.Dense(8), tf.keras.layers.Dense(8), tf.keras.layers.Dense(2)])\n"
    "model.compile(loss='mse')\n"
    "model.fit(tf.data.Dataset.from_tensor_slices(([[1.0] * 4] * 64, [[0.0] * 2] * 64)).batch(8), epochs=1)\n"
)


@pytest.mark.parametrize("args, ipus", [
    (["--pipeline-stages", "2", "--gradient-accumulation", "4"], 2),
    (["--pipeline-stages", "3", "--gradient-accumulation", "6"], 4),  # 3 stages take 4 IPUs
    (["--ipus", "8", "--pipeline-stages", "2", "--gradient-accumulation", "4"], 8),  # given: kept
])
def test_pipeline_stages_without_ipus_select_the_ipus_they_need(args, ipus, tmp_path):
    script = tmp_path / "train.py"
    script.write_text(PIPELINED)
    result = CliRunner().invoke(main, ["--diff", *args, str(script)])
    assert result.exit_code == 1, result.output
    assert f"+ipu_config.auto_select_ipus = {ipus}\n" in result.output


def test_pipeline_stages_in_the_settings_without_ipus_select_the_ipus_they_need(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.ipu-port]\npipeline-stages = 2\ngradient-accumulation = 4\n")
    script = tmp_path / "train.py"
    script.write_text(PIPELINED)
    result = CliRunner().invoke(main, ["--diff", str(script)])
    assert result.exit_code == 1, result.output
    assert "+ipu_config.auto_select_ipus = 2\n" in result.output


def test_implied_ipus_never_override_a_given_count():
    assert t.implied_ipus({"pipeline_stages": 3}) == {"pipeline_stages": 3, "ipus": 4}
    assert t.implied_ipus({"shards": 4}) == {"shards": 4, "ipus": 4}
    assert t.implied_ipus({"ipus": 1, "shards": 4}) == {"ipus": 1, "shards": 4}
    assert t.implied_ipus({}) == {}


def test_settings_file_values_are_checked_together(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.ipu-port]\nipus = 2\npipeline-stages = 2\ngradient-accumulation = 6\n")
    script = tmp_path / "train.py"
    script.write_text("import tensorflow as tf\n")
    result = CliRunner().invoke(main, [str(script)])
    assert result.exit_code == 2
    assert "pyproject.toml" in result.output and "multiple of 4" in result.output


def test_settings_file_steps_per_execution(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.ipu-port]\nsteps-per-execution = \"auto\"\n")
    script = tmp_path / "train.py"
    script.write_text("import tensorflow as tf\n\nx, y = load()\nmodel = tf.keras.Sequential()\n"
                      "model.compile(loss=\"mse\")\nmodel.fit(x, y, batch_size=32)\n")
    result = CliRunner().invoke(main, ["--diff", str(script)])
    assert result.exit_code == 1, result.output
    assert "steps_per_execution=len(x) // 32" in result.output


SPEED_FIXTURES = sorted((Path(__file__).resolve().parent.parent / "fixtures" / "speed").glob("*.expected.py"))


@pytest.mark.parametrize("path", SPEED_FIXTURES, ids=lambda path: path.stem)
def test_speed_ports_parse_as_python_36(path):
    """The Poplar SDKs run Python 3.6 to 3.8: the generated code must parse there."""
    import libcst as cst

    cst.parse_module(path.read_text(encoding="utf-8"), config=cst.PartialParserConfig(python_version="3.6"))
