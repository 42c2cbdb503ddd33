"""The engine's own checks on a port: it must parse, and a second port must change nothing.

Each test plugs a deliberately faulty rule into the engine (in place of the real ones) and asserts
what a user gets: the source back unchanged and a one-line internal error, or a clean port.
"""

import libcst as cst
import pytest

from porter import engine
from porter.config import Config
from porter.rule import Rule

SCRIPT = "import torch\n\nmodel = build(width)\n"


class _TestRule(Rule):
    code = "IPU999"
    name = "test-rule"
    kind = "fix"
    frameworks = frozenset({"torch"})
    summary = rationale = "a rule written for the engine's tests"

    def __init__(self, rewrite):
        self.rewrite = rewrite

    def run(self, ctx):
        for call in ctx.nodes(cst.Call):
            replacement = self.rewrite(call)
            if replacement is not None:
                ctx.replace(call, replacement)
                ctx.report(self.code, call, "rewritten", fixed=True)


@pytest.fixture
def only_rule(monkeypatch):
    """Make the engine run the given rule alone; returns how many times libcst parsed."""
    parses = []
    real_parse = engine._parse

    def counting_parse(source):
        parses.append(source)
        return real_parse(source)

    def install(rewrite):
        monkeypatch.setattr(engine, "rules_for", lambda frameworks, config: [_TestRule(rewrite)])
        monkeypatch.setattr(engine, "_parse", counting_parse)
        return parses

    return install


def _rename_build(call):
    # build(width) -> built(width): nothing left to rename, a second port changes nothing
    if call.func.value != "build":
        return None
    return call.with_changes(func=cst.Name("built"))


def test_a_stable_port_is_verified_without_a_second_libcst_parse(only_rule):
    parses = only_rule(_rename_build)
    result = engine.port(SCRIPT, Config())
    assert result.error is None
    assert result.source == "import torch\n\nmodel = built(width)\n"
    assert parses == [SCRIPT]


def test_a_port_that_changes_again_is_refused(only_rule):
    only_rule(lambda call: cst.Call(func=cst.Name("again"), args=[cst.Arg(call)]))
    result = engine.port(SCRIPT, Config())
    assert result.source == SCRIPT
    assert result.changed is False
    assert result.error == "internal error: the port is not stable, a second port changes it again (IPU999)"


def test_a_port_that_does_not_parse_is_refused(only_rule):
    def broken(call):
        if call.func.value == "broken":
            return None
        name = cst.Name("valid")
        object.__setattr__(name, "value", "in valid")  # past libcst's validation, as a rule bug could
        return cst.Call(func=cst.Name("broken"), args=[cst.Arg(name)])

    only_rule(broken)
    result = engine.port(SCRIPT, Config())
    assert result.source == SCRIPT
    assert result.error.startswith("internal error: the ported code does not check out (syntax error at line 3")


def test_a_node_used_twice_is_verified_on_a_fresh_parse(only_rule):
    def pair(call):
        if call.func.value != "build":
            return None
        twice = cst.Name("width")  # one object in two places of the new tree
        return cst.Call(func=cst.Name("pair"), args=[cst.Arg(twice), cst.Arg(twice)])

    parses = only_rule(pair)
    result = engine.port(SCRIPT, Config())
    assert result.error is None
    assert result.source == "import torch\n\nmodel = pair(width, width)\n"
    assert parses == [SCRIPT, result.source]


def _keyword_twice(call):
    # build(width) -> built(width, size=1, size=2): parses, but Python's compiler refuses it
    if call.func.value != "build":
        return None
    size = [cst.Arg(cst.Integer(str(n)), keyword=cst.Name("size")) for n in (1, 2)]
    return call.with_changes(func=cst.Name("built"), args=[*call.args, *size])


def test_a_port_that_does_not_compile_is_refused(only_rule):
    only_rule(_keyword_twice)
    result = engine.port(SCRIPT, Config())
    assert result.source == SCRIPT
    assert result.changed is False
    assert result.error == ("internal error: the ported code does not compile "
                            "(keyword argument repeated: size, line 3)")


def test_code_the_compiler_refused_before_the_port_is_still_ported(only_rule):
    only_rule(_rename_build)
    source = "import torch\n\nmodel = build(width, size=1, size=2)\n"
    result = engine.port(source, Config())
    assert result.error is None
    assert result.source == "import torch\n\nmodel = built(width, size=1, size=2)\n"
