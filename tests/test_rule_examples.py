"""Every example a rule carries is a test: the port of ``before`` is ``after`` (or ``before``
unchanged), the rule reports exactly when the example says so, and a second port changes nothing."""

import pytest

from porter.config import Config
from porter.engine import port
from porter.rule import WARN, Example, all_rules, snippet

CASES = [(rule, index, example) for rule in all_rules() for index, example in enumerate(rule.examples)]


@pytest.mark.parametrize(
    "rule, index, example", CASES, ids=[f"{rule.code}-{rule.name}-{index}" for rule, index, _ in CASES]
)
def test_rule_example(rule, index, example):
    config = Config(select=(rule.code,), **(example.options or {}))
    result = port(example.before, config)
    assert result.error is None
    expected = example.after if example.after is not None else example.before
    assert result.source == expected
    assert (rule.code in {finding.code for finding in result.findings}) == example.reported
    assert port(result.source, config).source == result.source


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_rule_contract(rule):
    assert rule.code.startswith("IPU") and len(rule.code) == 6
    assert rule.name and rule.name == rule.name.lower() and " " not in rule.name
    assert rule.summary and rule.rationale and rule.frameworks
    assert any(example.reported for example in rule.examples), "needs an example that is reported"
    assert any(not example.reported for example in rule.examples), "needs an example that is not reported"
    if rule.kind == WARN:
        assert all(example.after is None for example in rule.examples), "warn rules never edit"
    else:
        assert any(example.after is not None for example in rule.examples), "fix rules show a fix"


def test_codes_and_names_are_unique():
    rules = all_rules()
    assert len({rule.code for rule in rules}) == len(rules)
    assert len({rule.name for rule in rules}) == len(rules)


def test_example_written_indented_is_the_code_at_column_zero():
    example = Example(
        """\
        def f(x):
            return x

        """,
        """\
        def f(x):
            return 2 * x
        """,
    )
    assert example.before == "def f(x):\n    return x\n\n"
    assert example.after == "def f(x):\n    return 2 * x\n"


def test_example_at_column_zero_and_no_after_are_kept():
    example = Example("import torch\n\n\ndef f():\n    pass\n", reported=False)
    assert example.before == "import torch\n\n\ndef f():\n    pass\n"
    assert example.after is None


def test_snippet_dedents_a_piece_joined_to_column_zero_code():
    head = "import tensorflow as tf\n\n"
    assert head + snippet("""\
        x = tf.constant(1)
        if x:
            y = x
        """) == "import tensorflow as tf\n\nx = tf.constant(1)\nif x:\n    y = x\n"
