"""A port never uses a name before it is bound: pyflakes finds no undefined name in a port that
the original did not have, for every fixture and for the whole port (every rule) of every rule
example."""

import ast

import pytest
from pyflakes import checker, messages

from porter.config import Config
from porter.engine import port
from porter.rule import all_rules
from test_fixtures import INPUTS, expected_path

_UNDEFINED = (messages.UndefinedName, messages.UndefinedLocal)


def undefined_names(source: str):
    """``(message class, name)`` for each use of an unbound name pyflakes reports."""
    found = checker.Checker(ast.parse(source), withDoctest=False).messages
    return {(type(message).__name__, message.message_args[0]) for message in found if isinstance(message, _UNDEFINED)}


@pytest.mark.parametrize("path", INPUTS, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_fixture_ports_bind_every_name_they_use(path):
    original = undefined_names(path.read_text(encoding="utf-8"))
    assert undefined_names(expected_path(path).read_text(encoding="utf-8")) - original == set()


EXAMPLES = [(rule, index, example) for rule in all_rules() for index, example in enumerate(rule.examples)]


@pytest.mark.parametrize("rule, index, example", EXAMPLES, ids=[f"{rule.code}-{index}" for rule, index, _ in EXAMPLES])
def test_rule_example_ports_bind_every_name_they_use(rule, index, example):
    result = port(example.before, Config(**(example.options or {})))
    assert result.error is None
    assert undefined_names(result.source) - undefined_names(example.before) == set()


def test_the_check_sees_a_use_before_the_import():
    late = "strategy = ipu.ipu_strategy.IPUStrategy()\nfrom tensorflow.python import ipu\n"
    assert undefined_names(late) == {("UndefinedName", "ipu")}
