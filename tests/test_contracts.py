"""The contracts between rules: the typed keys of the state they share through the
``FileContext``, the order a rule declares it needs, and the one helper for new names."""

import importlib
import pkgutil
from pathlib import Path
from typing import Callable

import libcst as cst
import numpy
import pytest

from porter.config import Config
from porter.context import FileContext, SharedKey
from porter import rule as rule_module
from porter.engine import port
from porter.rule import Rule, all_rules, check_order, rule_by_code
from porter.scopes import fresh_name


def _context(source: str = "x = 1\n") -> FileContext:
    return FileContext(cst.parse_module(source), Config())


# ------------------------------------------------------------------------------ shared state
def test_shared_builds_the_value_once_with_the_keys_make():
    key: SharedKey[set] = SharedKey("seen", set)
    ctx = _context()
    first = ctx.shared(key)
    first.add(3)
    assert ctx.shared(key) is first
    assert ctx.shared(key) == {3}


def test_shared_prefers_the_make_it_is_given():
    key: SharedKey[list] = SharedKey("computed")
    ctx = _context()
    calls = []
    assert ctx.shared(key, lambda: calls.append(1) or ["made"]) == ["made"]
    assert ctx.shared(key, lambda: calls.append(2) or ["again"]) == ["made"]
    assert calls == [1]


def test_shared_keeps_one_value_per_part():
    key: SharedKey[str] = SharedKey("per-node")
    ctx = _context()
    assert ctx.shared(key, lambda: "a", per=1) == "a"
    assert ctx.shared(key, lambda: "b", per=2) == "b"
    assert ctx.shared(key, lambda: "c", per=1) == "a"
    assert ctx.shared(key, lambda: "whole") == "whole"
    assert ctx.shared(key, lambda: "none", per=None) == "none"


def test_keys_of_one_name_never_meet():
    ctx = _context()
    one, other = SharedKey("same", list), SharedKey("same", list)
    ctx.shared(one).append("one")
    assert ctx.shared(other) == []
    assert repr(one) == "SharedKey('same')"


def test_each_file_has_its_own_state():
    key: SharedKey[set] = SharedKey("seen", set)
    ctx, other = _context(), _context()
    ctx.shared(key).add(1)
    assert other.shared(key) == set()


def test_the_keys_of_the_porter_have_distinct_names():
    """Names only label keys in messages, but two keys of one name would read as one state."""
    import porter
    import porter.rules

    modules = [importlib.import_module(info.name) for package in (porter, porter.rules)
               for info in pkgutil.walk_packages(package.__path__, prefix=package.__name__ + ".")]
    keys = {id(value): value for module in modules for value in vars(module).values() if isinstance(value, SharedKey)}
    names = sorted(key.name for key in keys.values())
    assert len(names) > 30
    assert len(names) == len(set(names)), names


def test_shared_refuses_string_keys_and_keys_without_make():
    ctx = _context()
    with pytest.raises(TypeError, match="takes a SharedKey"):
        ctx.shared("_old_string_key", set)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="has no make"):
        ctx.shared(SharedKey("bare"))


# ---------------------------------------------------------------------------------- rule order
def test_every_rule_runs_after_the_rules_it_names():
    rules = all_rules()
    codes = [rule.code for rule in rules]
    for index, rule in enumerate(rules):
        for code in rule.after:
            assert code in codes, f"{rule.code} names {code}, which is no rule"
            assert codes.index(code) < index, f"{rule.code} must run after {code}"


def _rule(code: str, after=()) -> Rule:
    return type(f"Rule{code}", (Rule,), {"code": code, "after": tuple(after)})()


def test_check_order_refuses_a_late_or_unknown_rule():
    check_order([_rule("IPU001"), _rule("IPU002", after=["IPU001"])])
    with pytest.raises(RuntimeError, match="IPU001 runs after IPU002, but rules run in code order"):
        check_order([_rule("IPU001", after=["IPU002"]), _rule("IPU002")])
    with pytest.raises(RuntimeError, match="IPU002 runs after IPU009, which is no rule"):
        check_order([_rule("IPU001"), _rule("IPU002", after=["IPU009"])])


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _fixture(name: str) -> Callable[[], str]:
    return lambda: (FIXTURES / name).read_text(encoding="utf-8")


def _amp_loop() -> str:
    return rule_by_code("IPU309").examples[0].before


_TF1_GRAPH_IN_IPU_SCOPE = '''\
import tensorflow.compat.v1 as tf
from tensorflow.python import ipu

x = tf.placeholder(tf.float32, [16, 4])
with ipu.scopes.ipu_scope("/device:IPU:0"):
    hidden = tf.layers.dense(x, 8)
    logits = tf.layers.dense(hidden, 2)
    loss = tf.reduce_mean(logits)
with tf.Session() as session:
    print(session.run(loss, {x: [[0.0] * 4] * 16}))
'''
_KERAS_FUNCTIONAL_IN_MAIN = '''\
from tensorflow import keras


def main():
    inputs = keras.Input(shape=(32,))
    hidden = keras.layers.Dense(64)(inputs)
    outputs = keras.layers.Dense(10)(hidden)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, y, epochs=1)
'''


@pytest.mark.parametrize("code, needed, script, options", [
    ("IPU103", "IPU102", lambda: "import tensorflow as tf\n\nmodel = tf.keras.Sequential()\nmodel.fit(x, y)\n", {}),
    ("IPU110", "IPU103", lambda: _KERAS_FUNCTIONAL_IN_MAIN,
     {"pipeline_stages": 2, "gradient_accumulation": 4, "ipus": 2}),
    ("IPU207", "IPU202", lambda: _TF1_GRAPH_IN_IPU_SCOPE, {"shards": 2, "ipus": 2}),
    ("IPU305", "IPU302", _amp_loop, {}),
    ("IPU309", "IPU302", _amp_loop, {}),
    ("IPU306", "IPU305", _fixture("torch/mnist_cnn.py"), {}),
    ("IPU307", "IPU305", _fixture("torch/tensor_classifier.py"), {}),
], ids=lambda value: value if isinstance(value, str) and value.startswith("IPU") else "")
def test_a_declared_order_is_one_the_port_needs(monkeypatch, code, needed, script, options):
    """Running the rule just before the one it names gives another port of a script it touches:
    a worse one (options used before they exist, no strategy scope, an unstable port...)."""
    assert needed in rule_by_code(code).after
    source, config = script(), Config(**options)
    in_order = port(source, config)
    assert in_order.error is None
    rules = all_rules()
    moved = rule_by_code(code)
    others = [rule for rule in rules if rule is not moved]
    at = others.index(rule_by_code(needed))
    monkeypatch.setattr(rule_module, "_registry", [*others[:at], moved, *others[at:]])
    out_of_order = port(source, config)
    assert (out_of_order.source, out_of_order.error) != (in_order.source, in_order.error)


# --------------------------------------------------------------------------------- new names
def test_fresh_name_takes_the_first_candidate_the_file_does_not_spell():
    ctx = _context("ipu_config = 1\nprint(obj.ipu_configuration, f(ipu_system=2))\n")
    assert fresh_name(ctx, "ipu_config", "ipu_configuration", "ipu_system", "spare") == "spare"
    assert fresh_name(ctx, "strategy") == "strategy"


def test_fresh_name_numbers_the_first_candidate_when_every_one_is_spelled():
    ctx = _context("opts = opts2 = 1\nlabel = 'opts3'\n")
    assert fresh_name(ctx, "opts") == "opts3"  # a string is no name
    assert fresh_name(ctx, "opts", "label") == "opts3"


def test_fresh_name_skips_the_names_the_caller_already_chose():
    ctx = _context("model = 1\n")
    assert fresh_name(ctx, "training_model", taken={"training_model"}) == "training_model2"
    assert fresh_name(ctx, "a", "b", taken={"a"}) == "b"
    with pytest.raises(ValueError):
        fresh_name(ctx)


def _port_twice(source: str, **options) -> str:
    """The port of ``source``, checked to be clean and stable (a second port changes nothing)."""
    result = port(source, Config(**options))
    assert result.error is None
    again = port(result.source, Config(**options))
    assert again.error is None
    assert again.source == result.source
    return result.source


_KERAS_MODEL = '''\
model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
model.compile(optimizer="sgd", loss="mse")
model.fit(dataset, epochs=2)
'''


@pytest.mark.parametrize("users_names, config, strategy", [
    # Every name the Keras rules would like for the IPU configuration and the strategy is the user's.
    ('ipu_config = {"epochs": 2}\nipu_configuration, ipu_system_config = "local", None\n'
     'strategy = ipu_strategy = "fallback"\n', "ipu_config2", "strategy2"),
    # Only the strategy's: the second choice, `ipu_strategy`, is the user's too and stays theirs.
    ('strategy, ipu_strategy = "mirrored", "fallback"\n', "ipu_config", "strategy2"),
], ids=["every-name", "strategy-names"])
def test_keras_port_never_reuses_a_users_name(users_names, config, strategy):
    source = "import tensorflow as tf\n\n" + users_names + _KERAS_MODEL
    assert _port_twice(source) == "import tensorflow as tf\nfrom tensorflow.python import ipu\n\n" + users_names + f'''\
{config} = ipu.config.IPUConfig()
{config}.auto_select_ipus = 1
{config}.configure_ipu_system()
{strategy} = ipu.ipu_strategy.IPUStrategy()
with {strategy}.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(dataset, epochs=2)
'''


def test_legacy_ipu_keras_model_gets_a_fresh_strategy_name():
    source = '''\
from tensorflow import keras
from tensorflow.python import ipu

strategy = ipu_strategy = None
net = ipu.keras.Sequential([keras.layers.Flatten(), keras.layers.Dense(10)])
net.build((None, 28, 28))
net.summary()
'''
    assert _port_twice(source) == '''\
from tensorflow import keras
from tensorflow.python import ipu

strategy = ipu_strategy = None
strategy2 = ipu.ipu_strategy.IPUStrategy()
with strategy2.scope():
    net = keras.Sequential([keras.layers.Flatten(), keras.layers.Dense(10)])
    net.build((None, 28, 28))
    net.summary()
'''


def test_tf1_compiled_function_gets_a_fresh_name_when_the_usual_ones_are_taken():
    source = '''\
import tensorflow.compat.v1 as tf
from tensorflow.python import ipu

model_fn = ipu_model_fn = ipu_graph_fn = None

x = tf.placeholder(tf.float32, [16, 4])
with ipu.scopes.ipu_scope("/device:IPU:0"):
    logits = tf.layers.dense(x, 2)
    loss = tf.reduce_mean(logits)
with tf.Session() as session:
    print(session.run(loss, {x: [[0.0] * 4] * 16}))
'''
    assert _port_twice(source) == '''\
import tensorflow.compat.v1 as tf
from tensorflow.python import ipu

model_fn = ipu_model_fn = ipu_graph_fn = None

x = tf.placeholder(tf.float32, [16, 4])
with ipu.scopes.ipu_scope("/device:IPU:0"):
    def model_fn2(x):
        logits = tf.layers.dense(x, 2)
        loss = tf.reduce_mean(logits)
        return loss

    [loss] = ipu.ipu_compiler.compile(model_fn2, inputs=[x])
ipu_config = ipu.config.IPUConfig()
ipu_config.auto_select_ipus = 1
ipu_config.configure_ipu_system()
with tf.Session() as session:
    print(session.run(loss, {x: [[0.0] * 4] * 16}))
'''


def test_trimming_helper_gets_a_fresh_name_when_the_usual_ones_are_taken():
    source = '''\
import tensorflow as tf

trim_to_multiple = ipu_trim_to_multiple = trim_to_ipu_multiple = len


def main():
    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
    model.fit(x_train, y_train, batch_size=64, epochs=3)
'''
    ported = _port_twice(source, select=("IPU107",), steps_per_execution=8, ipus=2)
    assert ported.startswith('import tensorflow as tf\n\n\ndef trim_to_multiple2(data, multiple, smallest=None):\n')
    assert ported.endswith('''\
trim_to_multiple = ipu_trim_to_multiple = trim_to_ipu_multiple = len


def main():
    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
    model.fit(trim_to_multiple2(x_train, 1024, 128), trim_to_multiple2(y_train, 1024, 128),
              batch_size=64, epochs=3)
''')


def _helpers_of(ported: str) -> dict:
    """The helpers a port wrote into ``ported`` (its functions with ``(ipu-port)`` in their
    docstring), run: their names to the functions."""
    import ast

    tree = ast.parse(ported)
    helpers = [node for node in tree.body if isinstance(node, ast.FunctionDef)
               and "(ipu-port)" in (ast.get_docstring(node) or "")]
    namespace = {}
    exec(compile(ast.Module(body=helpers, type_ignores=[]), "<helpers>", "exec"), namespace)
    return namespace


def test_trimming_helper_keeps_a_missing_target():
    """``validation_data=(x_val, None)`` (an autoencoder's): the port trims the arrays and keeps
    the ``None``, as Keras takes it, and the helper keeps a ``None`` among inputs too."""
    ported = _port_twice('''\
import numpy as np
import tensorflow as tf

x_train = np.zeros((1000, 8), dtype="float32")
x_val = np.zeros((300, 8), dtype="float32")
model = tf.keras.Sequential([tf.keras.layers.Dense(8)])
model.compile(optimizer="adam", loss="mse")
model.fit(x_train, x_train, batch_size=128, validation_data=(x_val, None))
''', select=("IPU107",))
    assert "validation_data=(trim_to_multiple(x_val, 128), None))" in ported
    images, targets = _helpers_of(ported)["trim_to_multiple"]((numpy.zeros((300, 8)), None), 128)
    assert images.shape == (256, 8) and targets is None


_LISTS_PORTED = _port_twice('''\
import tensorflow as tf

model = tf.keras.models.load_model("reviews.keras")
model.fit(texts, labels, batch_size=4, validation_split=0.25)
print(model.predict(new_texts[:100]))
''', select=("IPU107",), steps_per_execution=2)
# Inputs as Keras takes them: lists of numbers or strings (the samples of one input, also nested
# and in tuples), and lists, tuples and dicts of inputs.
_SAMPLE_LISTS = ([1, 0, 1], ["good", "bad"], [[0.5, 1.0], [2.0, 3.0]], (7, 8), [(1, 2), (3, 4)], [b"raw"])
_INPUT_LISTS = ([numpy.zeros(3), numpy.zeros(3)], (numpy.zeros(3), [1, 2, 3]), [], [[]], [None])


@pytest.mark.parametrize("data", _SAMPLE_LISTS + _INPUT_LISTS, ids=repr)
def test_helpers_tell_samples_from_inputs_as_keras_does(data):
    """A list whose first item (and its first item...) is a number or a string holds samples,
    as Keras 2's data adapter decides (``ListsOfScalarsDataAdapter``)."""
    adapter = pytest.importorskip("tf_keras.src.engine.data_adapter").ListsOfScalarsDataAdapter
    assert _helpers_of(_LISTS_PORTED)["is_list_of_samples"](data) == adapter._is_list_of_scalars(data)


def test_helpers_trim_and_pad_lists_of_samples():
    """Labels kept as a Python list, texts as a list of strings: trimmed and padded as samples,
    and the predictions for the padding cut back by the number of samples."""
    helpers = _helpers_of(_LISTS_PORTED)
    trim, pad, cut = helpers["trim_to_multiple"], helpers["pad_to_multiple"], helpers["cut_to_samples"]
    assert trim(list(range(11)), 8, 4) == list(range(8))
    assert trim(["a", "bb", "ccc", "d", "e"], 4) == ["a", "bb", "ccc", "d"]
    assert trim([[0.5, 1.0]] * 6, 4) == [[0.5, 1.0]] * 4
    images, labels = trim((numpy.zeros((10, 2)), [0, 1] * 5), 4)
    assert images.shape == (8, 2) and labels == [0, 1] * 4
    assert list(pad(["a", "b", "c"], 4)) == ["a", "b", "c", "c"]
    assert len(cut(numpy.zeros((4, 1)), ["a", "b", "c"])) == 3
    assert len(cut(numpy.zeros((8, 1)), {"text": ["a", "b", "c"]})) == 3
    (texts_fit, labels_fit), (texts_val, labels_val) = helpers["split_validation_to_multiple"](
        (["t"] * 20, [1] * 20), 0.25, 8, 4)
    assert (len(texts_fit), len(labels_fit), len(texts_val), len(labels_val)) == (8, 8, 4, 4)


def test_split_helper_counts_samples_in_the_first_input():
    """Several inputs in one variable (a dict of named inputs, a list of inputs): the samples are
    counted on the first input, not the inputs, and every input is cut at the same sample (then
    trimmed: 20 validation samples keep 16, two executions of 8)."""
    split = _helpers_of(_LISTS_PORTED)["split_validation_to_multiple"]
    named = {"a": numpy.zeros((100, 4)), "b": numpy.zeros((100, 6))}
    (fit_named, fit_y), (val_named, val_y) = split((named, numpy.zeros((100, 1))), 0.2, 8, 4)
    assert [len(fit_named[key]) for key in "ab"] == [80, 80] and len(fit_y) == 80
    assert [len(val_named[key]) for key in "ab"] == [16, 16] and len(val_y) == 16
    (fit_pair, _), (val_pair, _) = split(([numpy.zeros((100, 4)), numpy.zeros((100, 6))], [1] * 100), 0.2, 8, 4)
    assert type(fit_pair) is list and [len(part) for part in fit_pair + val_pair] == [80, 80, 16, 16]


def test_split_helper_gives_no_validation_data_for_a_split_of_zero():
    """``validation_split=0`` (a default read from the command line): Keras validates on nothing,
    so the validation part is None (``fit(validation_data=None)``), not an empty input that the
    trimming refuses; a ``None`` input stays ``None``."""
    split = _helpers_of(_LISTS_PORTED)["split_validation_to_multiple"]
    (images, labels), validation = split((numpy.zeros((100, 4)), numpy.zeros(100)), 0.0, 8, 4)
    assert (len(images), len(labels), validation) == (96, 96, None)
    (images, targets), (held, held_targets) = split((numpy.zeros((100, 4)), None), 0.2, 8, 4)
    assert (len(images), targets, len(held), held_targets) == (80, None, 16, None)


def test_trimming_helper_refuses_to_leave_no_sample():
    """Fewer samples than one execution: a ValueError that says how many and what to do, not an
    empty input for Keras to fail on."""
    trim = _helpers_of(_LISTS_PORTED)["trim_to_multiple"]
    with pytest.raises(ValueError, match=r"^30 samples cannot fill one IPU execution of 32 .* smaller batch size"):
        trim(numpy.zeros((30, 4)), 256, 32)
    with pytest.raises(ValueError, match="^3 samples"):
        trim([1, 0, 1], 4)
    assert len(trim(numpy.zeros((40, 4)), 256, 32)) == 32


def test_predictions_come_back_in_their_own_structure():
    """What ``predict`` gives for padded inputs is cut back to one answer per sample in the same
    structure: a tuple, a list, a dict, a namedtuple (detections of a model that ends in a
    layer giving one, read by field afterwards) and a dict class read by attribute (what a Hugging
    Face model's `predict` gives: `.logits`)."""
    import collections

    cut = _helpers_of(_LISTS_PORTED)["cut_to_samples"]
    detections = collections.namedtuple("Detections", ["boxes", "scores"])
    answer = cut(detections(numpy.zeros((32, 4)), numpy.zeros((32,))), numpy.zeros((1, 8)))
    assert type(answer) is detections and answer.boxes.shape == (1, 4) and answer.scores.shape == (1,)
    pair = cut((numpy.zeros((8, 2)), numpy.zeros((8,))), numpy.zeros((5, 3)))
    assert type(pair) is tuple and [len(part) for part in pair] == [5, 5]
    assert [len(part) for part in cut([numpy.zeros((8, 2))], numpy.zeros((6, 3)))] == [6]
    assert len(cut({"logits": numpy.zeros((8, 2))}, numpy.zeros((7, 3)))["logits"]) == 7

    class Output(collections.OrderedDict):  # a Hugging Face `ModelOutput`: a dict read by attribute
        def __init__(self, **fields):
            super().__init__(**fields)
            self.__dict__.update(fields)

    output = cut(Output(logits=numpy.zeros((8, 2))), {"input_ids": numpy.zeros((3, 5))})
    assert type(output) is Output and output.logits.shape == (3, 2)


# --------------------------------------------------------------------- what rules tell users
def test_every_option_a_rule_names_is_an_option_of_the_cli():
    """A finding or an explanation that says "port with `--replicas N`" sends the user to an option
    the CLI does not have: every `--option` a rule or the core names in backticks is one of the CLI's."""
    import re

    from porter.cli import main as cli

    options = {name for parameter in cli.params for name in parameter.opts + parameter.secondary_opts}
    root = Path(__file__).resolve().parents[1]
    named = {(path.relative_to(root).as_posix(), match.group(1))
             for folder in ("rules", "porter") for path in sorted((root / folder).rglob("*.py"))
             for match in re.finditer(r"`(--[a-z][a-z0-9-]*)[ `=]", path.read_text(encoding="utf-8"))}
    assert sorted((path, option) for path, option in named if option not in options) == []
