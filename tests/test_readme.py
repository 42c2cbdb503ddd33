"""The README's first lines are the two commands a newcomer types, .ci/run runs exactly them, and
the rule table and option list in the README are the ones the rules and the CLI produce."""

from pathlib import Path

from porter.docs import render

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
SETUP = 'python3 -m venv .venv && .venv/bin/pip install -e ".[test]"'
TEST = ".venv/bin/python -m pytest"


def test_readme_starts_with_setup_and_test_commands():
    block = README.split("```", 2)[1]
    assert block.strip().splitlines() == ["sh", SETUP, TEST]


def test_ci_runs_exactly_the_readme_commands():
    commands = [
        line for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line and not line.startswith(("#", "set ", "cd ", "rm "))
    ]
    assert commands == [SETUP, TEST]


def test_generated_sections_are_current():
    assert render(README) == README, "run: python -m porter.docs README.md"


def test_rule_table_lists_every_rule():
    from porter.rule import all_rules

    table = README.split("<!-- rules:start -->")[1].split("<!-- rules:end -->")[0]
    for rule in all_rules():
        assert f"| {rule.code} | `{rule.name}` |" in table


def test_option_list_is_the_help_output():
    options = README.split("<!-- options:start -->")[1].split("<!-- options:end -->")[0]
    assert "--diff" in options and "--list-rules" in options


def _block(after: str, language: str) -> str:
    return README.split(after, 1)[1].split(f"```{language}\n", 1)[1].split("```", 1)[0]


def test_usage_example_is_what_the_tool_prints():
    from porter.api import port_text
    from porter.config import Config
    from porter.report import finding_line, unified_diff

    script = _block("A GPU Keras script", "python")
    outcome = port_text("train.py", script, Config())
    assert unified_diff(outcome) == _block("--diff` prints", "diff")
    findings = "".join(finding_line("train.py", finding) + "\n" for finding in outcome.findings)
    assert findings == _block("lists the same changes as findings", "text")


def test_python_example_ports_and_saves(tmp_path, monkeypatch, capsys):
    from porter.api import port_text
    from porter.config import Config

    script = _block("A GPU Keras script", "python")
    (tmp_path / "train.py").write_text(script)
    monkeypatch.chdir(tmp_path)
    exec(compile(_block("## From Python", "python"), "README.md", "exec"), {})
    expected = port_text("train.py", script, Config(ipus=1))
    assert (tmp_path / "train_ipu.py").read_text() == expected.ported != script
    printed = capsys.readouterr().out.splitlines()
    assert printed == [f"{finding.code} {finding.line} {finding.message} {'fixed' if finding.fixed else 'manual'}"
                       for finding in expected.findings] and printed
