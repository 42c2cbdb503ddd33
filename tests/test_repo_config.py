"""[tool.ipu-port] in pyproject.toml: found upward from each file or given with --config; every
key checked; CLI options win."""

from __future__ import annotations

import pytest
from repo_util import KERAS_SCRIPT, PIPELINE_SCRIPT, PLAIN_SCRIPT, cli, run, write

from porter.config import Config, config_keys, known_keys


def _codes(result):
    return [line.split(": ")[1].split()[0] for line in result.stdout.splitlines()]


def test_select_and_ignore_come_from_the_nearest_pyproject(tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.ipu-port]\nselect = ["IPU105"]\n')
    write(tmp_path, "train.py", KERAS_SCRIPT)
    # A nested project with its own settings wins below it.
    write(tmp_path, "other/pyproject.toml", '[tool.ipu-port]\nignore = ["IPU105", "IPU101"]\n')
    write(tmp_path, "other/train.py", KERAS_SCRIPT)
    # A pyproject.toml without the table is skipped on the way up.
    write(tmp_path, "third/pyproject.toml", '[project]\nname = "third"\n')
    write(tmp_path, "third/train.py", KERAS_SCRIPT)
    result = cli(["."], cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    by_file = {}
    for line in result.stdout.splitlines():
        by_file.setdefault(line.split(":")[0], set()).add(line.split(": ")[1].split()[0])
    assert by_file["./train.py"] == {"IPU105"}
    assert by_file["./third/train.py"] == {"IPU105"}
    # the import is still needed; IPU106 casts the uint8 MNIST labels
    assert by_file["./other/train.py"] == {"IPU101", "IPU102", "IPU103", "IPU106"}


def test_cli_options_override_the_file(tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.ipu-port]\nselect = ["IPU105"]\nipus = 4\n')
    write(tmp_path, "train.py", KERAS_SCRIPT)
    assert set(_codes(cli(["train.py", "--select", "IPU102"], cwd=tmp_path))) == {"IPU102", "IPU101"}
    written = cli(["train.py", "--select", "IPU102", "--diff"], cwd=tmp_path).stdout
    assert "ipu_config.auto_select_ipus = 4" in written
    written = cli(["train.py", "--select", "IPU102", "--ipus", "2", "--diff"], cwd=tmp_path).stdout
    assert "ipu_config.auto_select_ipus = 2" in written


def test_config_option_names_the_settings_file(tmp_path):
    write(tmp_path, "settings/ci.toml", '[tool.ipu-port]\nselect = ["IPU105"]\n')
    write(tmp_path, "pyproject.toml", '[tool.ipu-port]\nselect = ["IPU102"]\n')
    write(tmp_path, "train.py", KERAS_SCRIPT)
    assert _codes(cli(["train.py", "--config", "settings/ci.toml"], cwd=tmp_path)) == ["IPU105"]
    missing = cli(["train.py", "--config", "nowhere.toml"], cwd=tmp_path)
    assert missing.exit_code == 2 and "no such settings file" in missing.stderr


def test_per_file_ignores(tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.ipu-port]\n[tool.ipu-port.per-file-ignores]\n'
          '"tests/*" = ["IPU1"]\n"scripts/" = ["IPU105"]\n"*_old.py" = "IPU105,IPU102"\n')
    for name in ("tests/test_pipeline.py", "pipeline.py", "scripts/deep/run.py", "tests/deep/x.py", "a_old.py"):
        write(tmp_path, name, PIPELINE_SCRIPT)
    result = cli(["."], cwd=tmp_path)
    # gitignore semantics: a pattern that matches a folder covers everything below it.
    assert [line.split(":")[0] for line in result.stdout.splitlines()] == ["./pipeline.py"]


@pytest.mark.parametrize("table, message", [
    ('selct = ["IPU1"]', "unknown key 'selct' (did you mean 'select'?)"),
    ("ipus = 0", "ipus: must be at least 1, got 0"),
    ('ipus = "two"', "ipus: expected an integer, got 'two'"),
    ('select = ["E501"]', "'E501' is not a rule code or prefix"),
    ("annotate = 1", "annotate: expected true or false, got 1"),
    ('exclude = "build"', "exclude: expected a list of patterns"),
    ('per-file-ignores = ["x"]', "per-file-ignores: expected a table"),
    ("select = [", "invalid TOML"),
])
def test_bad_settings_are_one_line_errors_with_exit_2(tmp_path, table, message):
    write(tmp_path, "pyproject.toml", f"[tool.ipu-port]\n{table}\n")
    write(tmp_path, "train.py", KERAS_SCRIPT)
    result = run(["train.py", "--write"], tmp_path)
    assert result.returncode == 2
    assert message in result.stderr
    assert result.stderr.count("\n") == 1
    assert (tmp_path / "train.py").read_text() == KERAS_SCRIPT


def test_unknown_rule_code_in_the_settings_is_an_error(tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.ipu-port]\nselect = ["IPU999"]\n')
    write(tmp_path, "train.py", KERAS_SCRIPT)
    result = cli(["train.py"], cwd=tmp_path)
    assert result.exit_code == 2
    assert "unknown rule code or prefix 'IPU999'" in result.stderr


def test_every_config_field_is_a_settings_key():
    assert {"select", "ignore", "ipus", "annotate", "show-unused-suppressions", "per-file-ignores", "exclude",
            "extend-exclude", "force-exclude"} <= set(known_keys())
    assert set(config_keys()) == {name.replace("_", "-") for name in Config.__dataclass_fields__}


def test_settings_keys_for_every_porting_option(tmp_path):
    write(tmp_path, "pyproject.toml",
          "[tool.ipu-port]\nannotate = true\nshow-unused-suppressions = true\nipus = 2\n")
    write(tmp_path, "plain.py", PLAIN_SCRIPT + "import tensorflow as tf\nx = 1  # ipu-port: ignore\n")
    result = cli(["plain.py"], cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    assert "IPU802" in result.stdout
