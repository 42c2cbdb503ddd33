"""The per-file context index (porter.context.FileContext), directly: the node index, parent and
owner lookups, qualified names through import aliases and scopes, and ``shared``."""

import textwrap

import libcst as cst
import pytest

from porter.config import Config
from porter.context import FileContext, SharedKey, code_of
from porter.rule import KERAS, TF1, TORCH


def context(source: str) -> FileContext:
    return FileContext(cst.parse_module(textwrap.dedent(source)), Config())


def call_named(ctx: FileContext, text: str) -> cst.Call:
    """The one call whose code is ``text``."""
    found = [call for call in ctx.nodes(cst.Call) if code_of(ctx, call) == text]
    assert len(found) == 1, found
    return found[0]


NESTED = """\
import os


def train(model, data):
    for batch in data:
        loss = model(batch)
        loss.backward()
    print(len(data))


class Runner:
    def run(self):
        return train(self.model, load(os.getcwd()))
"""


def test_nodes_of_a_type_in_source_order():
    ctx = context(NESTED)
    assert [code_of(ctx, call) for call in ctx.nodes(cst.Call)] == [
        "model(batch)", "loss.backward()", "print(len(data))", "len(data)",
        "train(self.model, load(os.getcwd()))", "load(os.getcwd())", "os.getcwd()",
    ]
    assert [function.name.value for function in ctx.nodes(cst.FunctionDef)] == ["train", "run"]
    assert ctx.nodes(cst.While) == []


def test_every_node_but_the_module_has_its_parent():
    ctx = context(NESTED)
    assert ctx.parent(ctx.module) is None
    backward = call_named(ctx, "loss.backward()")
    assert isinstance(ctx.parent(backward), cst.Expr)
    assert ctx.parent(ctx.parent(backward)) is ctx.statement_of(backward)
    kinds = [type(node).__name__ for node in ctx.ancestors(backward)]
    assert kinds == ["Expr", "SimpleStatementLine", "IndentedBlock", "For", "IndentedBlock", "FunctionDef",
                     "Module"]


def test_statement_block_and_siblings_of_a_node():
    ctx = context(NESTED)
    backward = call_named(ctx, "loss.backward()")
    statement = ctx.statement_of(backward)
    assert code_of(ctx, statement).strip() == "loss.backward()"
    assert ctx.statement_of(statement) is statement
    loop = ctx.nodes(cst.For)[0]
    assert ctx.block_of(statement) is loop.body
    assert [code_of(ctx, sibling).strip() for sibling in ctx.siblings(statement)] == [
        "loss = model(batch)", "loss.backward()"]
    # a statement of the module: its block is the module itself
    first = ctx.module.body[0]
    assert ctx.block_of(first) is ctx.module
    assert ctx.siblings(first) is ctx.module.body


def test_enclosing_function_and_owner_of_a_node():
    ctx = context(NESTED)
    train, run = ctx.nodes(cst.FunctionDef)
    runner = ctx.nodes(cst.ClassDef)[0]
    assert ctx.enclosing_function(call_named(ctx, "loss.backward()")) is train
    assert ctx.enclosing_function(call_named(ctx, "os.getcwd()")) is run
    assert ctx.enclosing(call_named(ctx, "os.getcwd()"), cst.ClassDef) is runner
    assert ctx.enclosing(call_named(ctx, "loss.backward()"), cst.For) is ctx.nodes(cst.For)[0]
    assert ctx.enclosing(call_named(ctx, "print(len(data))"), cst.For) is None
    assert ctx.enclosing_function(ctx.module.body[0]) is None


ALIASES = """\
import tensorflow as tf
import torch.nn as nn
from tensorflow.keras import layers as L
from tensorflow.keras.optimizers import Adam


def build(tf):
    return tf.keras.Sequential()


def head():
    from tensorflow import keras as tf
    return tf.layers.Dense(1)


def body():
    Adam = make_optimizer()
    return L.LSTM(8), nn.Linear(2, 2), Adam(), tf.keras.layers.GRU(4)
"""


def test_qualified_names_through_import_aliases():
    ctx = context(ALIASES)
    names = {code_of(ctx, call.func): ctx.qualified_name(call.func) for call in ctx.nodes(cst.Call)
             if ctx.enclosing_function(call).name.value == "body"}
    assert names == {
        "make_optimizer": None,  # never imported
        "L.LSTM": "tensorflow.keras.layers.LSTM",
        "nn.Linear": "torch.nn.Linear",
        "Adam": None,  # rebound in this function
        "tf.keras.layers.GRU": "tensorflow.keras.layers.GRU",
    }
    assert ctx.aliases == {"tf": "tensorflow", "nn": "torch.nn", "L": "tensorflow.keras.layers",
                           "Adam": "tensorflow.keras.optimizers.Adam"}


def test_a_parameter_or_a_local_import_shadows_the_module_import():
    ctx = context(ALIASES)
    sequential = call_named(ctx, "tf.keras.Sequential()")
    assert ctx.qualified_name(sequential.func) is None  # `tf` is build()'s parameter here
    dense = call_named(ctx, "tf.layers.Dense(1)")
    assert ctx.qualified_name(dense.func) == "tensorflow.keras.layers.Dense"  # the import in head()
    assert ctx.keras_name(dense.func) == "keras.layers.Dense"


def test_a_name_bound_once_at_module_level_to_an_imported_name_is_an_alias():
    ctx = context("""\
        import tensorflow as tf
        from tensorflow import keras

        Net = keras.applications.ResNet50
        Head = Net
        Layer = tf.keras.layers.Dense
        Layer = tf.keras.layers.Conv2D
        if fast:
            Opt = tf.keras.optimizers.SGD


        def build(weights):
            return Net(weights=weights), Head(), Layer(1), Opt(0.1)
        """)
    assert {code_of(ctx, call.func): ctx.qualified_name(call.func) for call in ctx.nodes(cst.Call)} == {
        "Net": "tensorflow.keras.applications.ResNet50",
        "Head": "tensorflow.keras.applications.ResNet50",
        "Layer": None,  # bound twice: which one is not known
        "Opt": None,  # bound in an `if`
    }


def test_calls_to_finds_qualified_and_keras_spellings():
    ctx = context(ALIASES)
    found = [(code_of(ctx, call), name) for call, name in ctx.calls_to("keras.layers.LSTM", "torch.nn.Linear")]
    assert found == [("L.LSTM(8)", "keras.layers.LSTM"), ("nn.Linear(2, 2)", "torch.nn.Linear")]


def test_frameworks_are_detected_from_the_imports():
    assert context(ALIASES).frameworks == frozenset({KERAS, TORCH})
    assert context("import tensorflow.compat.v1 as tf\n").frameworks == frozenset({TF1})
    assert context("import tensorflow as tf\nx = tf.placeholder(tf.float32)\n").frameworks == frozenset({TF1})
    assert context("import os\nimport numpy\n").frameworks == frozenset()


def test_shared_makes_a_value_once_per_key():
    ctx = context(NESTED)
    made = []

    def make():
        made.append(1)
        return {"calls": len(ctx.nodes(cst.Call))}

    calls = SharedKey("calls")
    first = ctx.shared(calls, make)
    assert first == {"calls": 7}
    assert ctx.shared(calls, make) is first
    assert made == [1]
    train, run = ctx.nodes(cst.FunctionDef)
    names = SharedKey("name")
    per_node = [ctx.shared(names, lambda function=function: function.name.value, per=id(function))
                for function in (train, run, train)]
    assert per_node == ["train", "run", "train"]
    # another file's context shares nothing with this one
    assert context(NESTED).shared(calls, lambda: "fresh") == "fresh"


def test_a_report_with_an_unknown_severity_is_refused():
    ctx = context(NESTED)
    call = ctx.nodes(cst.Call)[0]
    with pytest.raises(ValueError, match="IPU190: unknown severity 'warn'"):
        ctx.report("IPU190", call, "a finding", fixed=False, severity="warn")
    ctx.report("IPU190", call, "a finding", fixed=False, severity="warning")
    assert len(ctx.reports) == 1


def test_appended_keyword_arguments_are_not_repeated():
    # Two rules may ask for the same keyword on one call; Python rejects a call that repeats one.
    from porter.cstutil import append_args, keyword_arg

    call = cst.parse_expression("ds.batch(8, drop_remainder=True)")
    again = append_args(call, keyword_arg("drop_remainder", cst.Name("True")), keyword_arg("name", cst.Name("x")))
    assert cst.Module(body=[]).code_for_node(again) == "ds.batch(8, drop_remainder=True, name=x)"


def _moved(source: str, moves) -> str:
    """``source`` after ``move_import`` of each (local name, new module) and the import pass."""
    from porter.edits import apply_edits
    from porter.imports import resolve_imports
    from porter.context import bound_name

    ctx = context(source)
    aliases = {bound_name(alias): alias for alias in ctx.nodes(cst.ImportAlias)}
    for local, module in moves:
        assert ctx.move_import(aliases[local], module)
    resolve_imports(ctx)
    return apply_edits(ctx).code


def test_move_import_keeps_the_place_the_names_and_the_layout():
    source = """\
        import keras, numpy as np  # libraries
        from keras.utils import (
            to_categorical,  # labels
            Sequence as Batches,
        )
        from keras.utils import np_utils, get_file; import os
        """
    moved = _moved(source, [("keras", "tensorflow"), ("to_categorical", "tensorflow.keras.utils"),
                            ("Batches", "tensorflow.keras.utils"), ("get_file", "tensorflow.keras.utils")])
    assert moved == textwrap.dedent("""\
        import numpy as np  # libraries
        from tensorflow import keras
        from tensorflow.keras.utils import (
            to_categorical,  # labels
            Sequence as Batches,
        )
        from keras.utils import np_utils; import os
        from tensorflow.keras.utils import get_file
        """)


def test_move_import_refuses_what_is_not_a_module_level_name():
    ctx = context("""\
        import keras.utils


        def main():
            import keras
        """)
    dotted, nested = ctx.nodes(cst.ImportAlias)
    assert not ctx.move_import(dotted, "tensorflow")
    assert not ctx.move_import(nested, "tensorflow")
    assert ctx.moved_imports == []


def test_a_new_def_above_removed_code_keeps_two_blank_lines():
    # The removed statement's blank line moves up to the insertions; the def already brings two.
    from porter.edits import apply_edits
    from porter.statements import remove_statement

    ctx = context("""\
        import os

        probe = os.cpu_count()
        run(os.getcwd())
        """)
    probe, run = ctx.module.body[1:]
    helper = cst.parse_statement("def helper():\n    return 1\n")
    blank = cst.EmptyLine(indent=False, whitespace=cst.SimpleWhitespace(""))
    helper = helper.with_changes(leading_lines=[blank, blank],
                                 body=helper.body.with_changes(footer=[blank, blank]))
    remove_statement(ctx, probe)
    ctx.insert_before(probe, [helper], first=True)
    ctx.insert_before(run, [cst.parse_statement("setup()\n")])
    assert apply_edits(ctx).code == textwrap.dedent("""\
        import os


        def helper():
            return 1


        setup()
        run(os.getcwd())
        """)


def test_a_star_import_of_a_keras_module_binds_the_names_the_file_uses_from_it():
    ctx = context("""\
        from keras.backend import *
        from tensorflow.keras.layers import *
        from tensorflow.keras.models import *
        from tensorflow.keras.utils import *

        Dense = Dense if fast else None
        inputs = Input(shape=(4,))
        model = Model(inputs, Flatten()(inputs))
        print(Concatenate, Dense, epsilon, unknown, [item for item in model.layers])
        """)
    names = {name: ctx.qualified_name(cst.Name(name)) for name in
             ("Input", "Model", "Flatten", "Concatenate", "Dense", "epsilon", "unknown", "print", "item")}
    assert names == {
        "Input": "tensorflow.keras.layers.Input",
        "Model": "tensorflow.keras.models.Model",  # the last module that defines it
        "Flatten": "tensorflow.keras.layers.Flatten",
        "Concatenate": "tensorflow.keras.layers.Concatenate",
        "Dense": None,  # the file binds it itself
        "epsilon": "keras.backend.epsilon",  # in no later module of known contents
        "unknown": "keras.backend.unknown",  # only a module of unknown contents may define it
        "print": None,  # a builtin
        "item": None,
    }
    assert ctx.keras_name(cst.Name("Model")) == "keras.models.Model"
    after_unknown = context("from tensorflow.keras.layers import *\nfrom keras.backend import *\nprint(Dense)\n")
    assert after_unknown.qualified_name(cst.Name("Dense")) is None  # keras.backend may define it
