"""The TensorFlow 1 graph analysis (porter.rules.tf1._analysis.graph), directly: what it finds for
placeholders and iterators, a training op, the device scopes and the functions they run, and the
session that runs the graph."""

import textwrap

import libcst as cst

from porter.config import Config
from porter.context import FileContext, code_of
from porter.rules.tf1._analysis import graph
from porter.scopes import local_function


def context(source: str) -> FileContext:
    return FileContext(cst.parse_module(textwrap.dedent(source)), Config())


def statement(ctx: FileContext, text: str) -> cst.BaseStatement:
    """The one simple statement whose code is ``text``."""
    found = [line for line in ctx.nodes(cst.SimpleStatementLine) if code_of(ctx, line).strip() == text]
    assert len(found) == 1, found
    return found[0]


def function(ctx: FileContext, name: str) -> cst.FunctionDef:
    return next(node for node in ctx.nodes(cst.FunctionDef) if node.name.value == name)


TRAINING = """\
import tensorflow.compat.v1 as tf

x = tf.placeholder(tf.float32, [32, 784])
iterator = tf.data.make_one_shot_iterator(dataset)


def model_fn(images, labels):
    logits = tf.layers.dense(images, 10)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.train.AdamOptimizer(0.01).minimize(loss)
    return loss, train_op


def main():
    y = tf.placeholder(tf.int32, [32])
    images, labels = iterator.get_next()
    step = tf.train.get_or_create_global_step()
    with tf.device("/gpu:0"):
        loss, train_op = model_fn(x, y)
    with tf.device("/cpu:0"):
        summary = tf.summary.scalar("loss", loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(10):
            sess.run(train_op, feed_dict={x: batch, y: labels_batch})
"""


def test_placeholders_iterators_and_the_global_step_belong_on_the_cpu():
    ctx = context(TRAINING)
    kinds = {code_of(ctx, line).strip(): graph.cpu_bound_kind(ctx, line) for line in ctx.nodes(cst.SimpleStatementLine)
             if graph.cpu_bound_kind(ctx, line) is not None}
    assert kinds == {
        "x = tf.placeholder(tf.float32, [32, 784])": "placeholder",
        "iterator = tf.data.make_one_shot_iterator(dataset)": "iterator",
        "y = tf.placeholder(tf.int32, [32])": "placeholder",
        "images, labels = iterator.get_next()": "iterator",
        "step = tf.train.get_or_create_global_step()": "global step",
    }


def test_graph_inputs_of_a_function_include_the_module_level_ones():
    ctx = context(TRAINING)
    assert graph.graph_inputs(ctx, ctx.module) == {"x"}
    assert graph.graph_inputs(ctx, function(ctx, "main")) == {"x", "y", "images", "labels"}
    assert graph.graph_inputs(ctx, function(ctx, "model_fn")) == {"x"}


def test_hoistable_takes_the_inputs_that_depend_on_nothing_defined_before_them():
    ctx = context("""\
        import tensorflow.compat.v1 as tf

        with tf.device("/gpu:0"):
            x = tf.placeholder(tf.float32, [8, 4])
            size = x.shape[0]
            y = tf.placeholder(tf.float32, [size])
            it = tf.data.make_initializable_iterator(data)
            out = tf.layers.dense(x, 4)
        """)
    body = list(ctx.nodes(cst.With)[0].body.body)
    hoisted, kinds = graph.hoistable(ctx, body)
    assert [code_of(ctx, line).strip() for line in hoisted] == [
        "x = tf.placeholder(tf.float32, [8, 4])", "it = tf.data.make_initializable_iterator(data)"]
    assert kinds == ["placeholders", "iterators"]


def test_a_training_op_is_an_operation_and_a_loss_is_a_tensor():
    ctx = context(TRAINING)
    model_fn = function(ctx, "model_fn")
    loss, train_op = graph.returned_values(model_fn)
    assert (code_of(ctx, loss), code_of(ctx, train_op)) == ("loss", "train_op")
    assert graph.is_operation(ctx, train_op, model_fn)
    assert not graph.is_operation(ctx, loss, model_fn)
    minimize = next(call for call in ctx.nodes(cst.Call) if code_of(ctx, call).endswith(".minimize(loss)"))
    assert graph.is_operation(ctx, minimize, None)
    group = cst.parse_expression("tf.group(a, b)")
    assert graph.is_operation(ctx, group, None)
    assert not graph.is_operation(ctx, cst.parse_expression("tf.reduce_mean(a)"), None)


def test_device_scopes_and_what_they_run_on_the_ipu():
    ctx = context(TRAINING)
    scopes = [(code_of(ctx, node.items[0].item), kind, device) for node, kind, device in graph.device_scopes(ctx)]
    assert scopes == [('tf.device("/gpu:0")', "gpu0", "/gpu:0"), ('tf.device("/cpu:0")', "cpu", "/cpu:0")]
    assert graph.ipu_bound_scopes(ctx) == [ctx.nodes(cst.With)[0]]
    assert graph.ipu_functions(ctx) == {"model_fn"}
    logits = statement(ctx, "logits = tf.layers.dense(images, 10)")
    summary = statement(ctx, 'summary = tf.summary.scalar("loss", loss)')
    assert graph.runs_on_ipu(ctx, logits)  # in the function the GPU scope calls
    assert graph.enclosing_device(ctx, summary) == "cpu"
    assert not graph.runs_on_ipu(ctx, summary)
    assert not graph.runs_on_ipu(ctx, statement(ctx, "y = tf.placeholder(tf.int32, [32])"))


def test_device_strings_are_classified():
    ctx = context("import tensorflow as tf\n")
    kinds = [graph.device_of(ctx, cst.parse_expression(f"tf.device({device})"))
             for device in ('"/device:GPU:0"', '"gpu"', '"/job:localhost/replica:0/task:0/device:GPU:1"',
                            '"/CPU:0"', '"/device:XLA_CPU:0"', "name")]
    assert kinds == [("gpu0", "/device:GPU:0"), ("gpu0", "gpu"), ("gpu", "/job:localhost/replica:0/task:0/device:GPU:1"),
                     ("cpu", "/CPU:0"), ("other", "/device:XLA_CPU:0"), ("other", "")]
    assert graph.device_of(ctx, cst.parse_expression("tf.name_scope('a')")) is None


def test_the_session_that_runs_the_graph():
    ctx = context(TRAINING)
    assert [code_of(ctx, call) for call in graph.session_calls(ctx)] == ["tf.Session()"]
    runs = [code_of(ctx, call) for call in graph.calls_by_last_name(ctx, "run")]
    assert runs == ["sess.run(tf.global_variables_initializer())",
                    "sess.run(train_op, feed_dict={x: batch, y: labels_batch})"]
    assert [code_of(ctx, call) for call in graph.calls_named(ctx, ["train.get_or_create_global_step"])] == [
        "tf.train.get_or_create_global_step()"]


def test_monitored_session_through_another_import_spelling():
    ctx = context("""\
        import tensorflow as tf
        from tensorflow.compat.v1.train import MonitoredTrainingSession as Session

        with Session(checkpoint_dir="ckpt") as sess:
            sess.run(step)
        """)
    assert [code_of(ctx, call) for call in graph.session_calls(ctx)] == ['Session(checkpoint_dir="ckpt")']
    # the compat module comes in by a `from` import: the file itself spells TensorFlow `tf`
    assert graph.tf_module(ctx) == "tf"


def test_the_file_spelling_of_the_tf1_module():
    assert graph.tf_module(context("import tensorflow.compat.v1 as v1\n")) == "v1"
    assert graph.tf_module(context("import tensorflow as tf\nx = tf.placeholder(tf.float32)\n")) == "tf"
    assert graph.tf_module(context("import tensorflow as tf\nx = tf.compat.v1.placeholder(tf.float32)\n")) == (
        "tf.compat.v1")


def test_local_function_is_the_one_the_name_refers_to_there():
    ctx = context("""\
        def step(x):
            return x


        def main():
            def step(x):
                return 2 * x
            return step(1)


        def other():
            step = make()
            return step(1)
        """)
    outer, _, inner = ctx.nodes(cst.FunctionDef)[:3]
    main_call, other_call = [call for call in ctx.nodes(cst.Call) if code_of(ctx, call) == "step(1)"]
    assert local_function(ctx, "step", main_call) is inner
    assert local_function(ctx, "step", other_call) is None  # rebound by an assignment there
    assert local_function(ctx, "step", ctx.module.body[0]) is outer
