"""--format text|json|sarif|github, and the coverage line of the text summary."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from repo_util import KERAS_SCRIPT, PIPELINE_SCRIPT, cli, code_cell, notebook, write, write_notebook

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))

# A PyTorch-free Keras script with something a person must do is rule-dependent; the manual finding
# here is the porter's own: an unparsable notebook cell (IPU801).
BROKEN_CELL = ["def broken(:\n", "    pass"]


def _tree(root):
    write(root, "src/train.py", KERAS_SCRIPT)
    write(root, "src/pipeline.py", PIPELINE_SCRIPT)
    write(root, "src/bad.py", "import tensorflow as tf\nx = (\n")
    write_notebook(root, "notebooks/explore.ipynb", notebook([
        code_cell(["import tensorflow as tf\n", "ds = tf.data.Dataset.range(10).batch(4)"]),
        code_cell(BROKEN_CELL),
    ]))


def test_json_lists_findings_per_file_and_a_summary(tmp_path):
    _tree(tmp_path)
    result = cli(["src", "notebooks", "--format", "json"], cwd=tmp_path)
    assert result.exit_code == 2  # src/bad.py does not parse
    report = json.loads(result.stdout)
    files = {entry["path"]: entry for entry in report["files"]}
    assert set(files) == {"src/train.py", "src/pipeline.py", "src/bad.py", "notebooks/explore.ipynb"}
    assert files["src/bad.py"]["error"].startswith("syntax error")
    finding = files["src/pipeline.py"]["findings"][-1]
    assert finding == {"code": "IPU105", "name": "drop-remainder", "line": 6, "column": 20, "cell": None,
                       "message": "`.batch()` gets `drop_remainder=True`: a last partial batch is dropped", "fixed": True,
                       "severity": None}
    cells = files["notebooks/explore.ipynb"]["findings"]
    assert {(entry["code"], entry["cell"], entry["fixed"]) for entry in cells} >= {
        ("IPU105", 1, True), ("IPU801", 2, False)}
    summary = report["summary"]
    assert summary["files"] == 4 and summary["errors"] == 1 and summary["changed"] == 3
    every = [entry for file in report["files"] for entry in file["findings"]]
    assert summary["manual"] == 1 == sum(not entry["fixed"] for entry in every)
    assert summary["fixed"] == sum(entry["fixed"] for entry in every) > 4


def test_sarif_validates_against_the_official_schema(tmp_path):
    _tree(tmp_path)
    result = cli(["src", "notebooks", "--format", "sarif"], cwd=tmp_path)
    document = json.loads(result.stdout)
    jsonschema.validate(document, SCHEMA)
    run = document["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == sorted(rule["id"] for rule in rules)
    for rule in rules:
        assert rule["name"] and rule["shortDescription"]["text"] and rule["help"]["text"]
    by_id = {rule["id"]: rule for rule in rules}
    assert by_id["IPU105"]["name"] == "drop-remainder"
    assert by_id["IPU801"]["name"] == "unparsable-cell"
    result_rules = {entry["ruleId"] for entry in run["results"]}
    assert result_rules == set(by_id)
    for entry in run["results"]:
        assert rules[entry["ruleIndex"]]["id"] == entry["ruleId"]
    pipeline = [entry for entry in run["results"]
                if entry["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/pipeline.py"]
    assert pipeline[-1]["locations"][0]["physicalLocation"]["region"] == {"startLine": 6, "startColumn": 20}
    cell = [entry for entry in run["results"] if entry["ruleId"] == "IPU801"][0]
    assert cell["message"]["text"].startswith("cell 2, line 1: ")
    # The region is the line of the notebook file that holds that line of the cell.
    notebook_lines = (tmp_path / "notebooks/explore.ipynb").read_text().splitlines()
    line = cell["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert notebook_lines[line - 1].strip() == '"def broken(:\\n",'
    assert run["invocations"][0]["executionSuccessful"] is False
    assert "src/bad.py" in run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]


def test_sarif_of_a_clean_tree_is_valid_and_empty(tmp_path):
    write(tmp_path, "clean.py", "import os\n")
    document = json.loads(cli(["clean.py", "--format", "sarif"], cwd=tmp_path).stdout)
    jsonschema.validate(document, SCHEMA)
    assert document["runs"][0]["results"] == [] and document["runs"][0]["tool"]["driver"]["rules"] == []


def test_github_prints_workflow_annotations(tmp_path):
    _tree(tmp_path)
    result = cli(["src", "notebooks", "--check", "--format", "github"], cwd=tmp_path)
    lines = result.stdout.splitlines()
    assert "::warning file=src/pipeline.py,line=6,col=20,title=IPU105::`.batch()` gets " \
           "`drop_remainder=True`: a last partial batch is dropped (fixed by ipu-port --write)" in lines
    assert "::warning file=notebooks/explore.ipynb,line=19,title=IPU801::cell 2, line 1: cell not ported, it does not " \
           "parse: invalid syntax (needs a person)" in lines
    assert any(line.startswith("::error file=src/bad.py,title=ipu-port::syntax error") for line in lines)
    assert all(line.startswith("::") for line in lines)


def test_github_escapes_what_would_break_a_command(tmp_path):
    from porter.outcome import FileOutcome
    from porter.report import github_lines
    from porter.rule import Finding

    outcome = FileOutcome("a,b:c.py", findings=(Finding("IPU105", 1, 2, "100% of\nit", False),))
    assert github_lines([outcome]) == [
        "::warning file=a%2Cb%3Ac.py,line=1,col=2,title=IPU105::100%25 of%0Ait (needs a person)"]


def test_text_summary_ends_with_coverage(tmp_path):
    _tree(tmp_path)
    result = cli(["notebooks", "src/pipeline.py"], cwd=tmp_path)
    last = result.stderr.splitlines()[-1]
    assert last == "Coverage: 2 sites ported automatically, 1 left for a person (67% automatic)."
