"""porter.positions: the render, the line count of top-level statements, and anchors placed with
statements counted instead of rendered."""

import libcst as cst
import pytest

from porter.engine import port
from porter.positions import positions, render, render_counting_lines

SOURCE = '''"""Doc."""
import tensorflow as tf  # the framework


def helper(values):
    total = 0
    for value in values:
        total += value
    return total

# a comment above
@tf.function
def step(x):
    return x * 2
x = helper([1, 2,
            3])
if x:
    print(step(x))
'''

VARIANTS = {
    "lf": SOURCE,
    "crlf": SOURCE.replace("\n", "\r\n"),
    "no final newline": SOURCE.rstrip("\n"),
    "tabs": SOURCE.replace("    ", "\t"),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_render_gives_the_source_back(name):
    source = VARIANTS[name]
    module = cst.parse_module(source)
    assert render(module) == source == module.code


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_statement_lines_count_each_top_level_statement(name):
    source = VARIANTS[name]
    module = cst.parse_module(source)
    code, lines = render_counting_lines(module)
    assert code == source
    expected = [1, 1, 7, 5, 2, 2]  # the comment and blank lines above count with their statement
    if name == "no final newline":
        expected[-1] = None  # its line break is gone: not counted
    assert [lines.get(id(statement)) for statement in module.body] == expected


def _anchors(module):
    """A few nodes at different depths: statements, a call inside a block, a name on a
    continuation line."""
    step, assign, branch = module.body[3], module.body[4], module.body[5]
    call = assign.body[0].value
    return [step, call.args[0].value.elements[2].value, branch.body.body[0].body[0].value]


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_counted_statements_place_anchors_as_a_full_render_does(name):
    module = cst.parse_module(VARIANTS[name])
    anchors = _anchors(module)
    _, lines = render_counting_lines(module)
    holders = {id(module.body[3]), id(module.body[4]), id(module.body[5])}
    skipped = {key: count for key, count in lines.items() if key not in holders}
    assert len(skipped) == 3
    full = positions(module, anchors)
    columns = (4, 2) if name == "tabs" else (13, 5)
    assert [full[id(anchor)] for anchor in anchors] == [(12, 1), (16, columns[0]), (18, columns[1])]
    assert positions(module, anchors, skipped) == full


def test_findings_of_an_edited_file_keep_their_lines():
    source = ("import tensorflow as tf\n\n\ndef unused():\n    return 1\n\n\n"
              "model = tf.keras.Sequential([tf.keras.layers.Dense(10)])\n"
              "model.compile(loss='mse')\nmodel.fit(x, y)\n")
    result = port(source)
    assert result.changed and result.error is None
    lines = sorted({finding.line for finding in result.findings if finding.code == "IPU103"})
    assert lines == [8]  # the first model line, past the function that was not rendered again
