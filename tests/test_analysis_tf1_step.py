"""The analysis of a TF1 training step built line by line (porter.rules.tf1._analysis.step),
directly: which statements form the block, what stays in front of the compiled function, what it
takes and gives, which session runs only evaluate, and what prevents the move."""

import textwrap

import libcst as cst

from porter.config import Config
from porter.context import FileContext, code_of
from porter.rules.tf1._analysis import step as analysis


def context(source: str) -> FileContext:
    return FileContext(cst.parse_module(textwrap.dedent(source)), Config())


def lines(ctx, statements):
    return [code_of(ctx, statement).strip().splitlines()[0] for statement in statements]


GAN = """\
import tensorflow.compat.v1 as tf

data = load()
weights = {"g": tf.Variable(tf.zeros([4, 2])), "d": tf.Variable(tf.zeros([2, 1]))}


def generator(z):
    return tf.matmul(z, weights["g"])


noise = tf.placeholder(tf.float32, [8, 4])
fake = generator(noise)
real = tf.placeholder(tf.float32, [8, 2])
d_loss = tf.reduce_mean(tf.matmul(real, weights["d"]) - tf.matmul(fake, weights["d"]))
g_loss = -tf.reduce_mean(tf.matmul(fake, weights["d"]))
d_opt = tf.train.AdamOptimizer(0.1)
train_d = d_opt.minimize(d_loss)
train_g = tf.train.AdamOptimizer(0.1).minimize(g_loss)
init = tf.global_variables_initializer()

with tf.Session() as sess:
    sess.run(init)
    for _ in range(10):
        sess.run([train_d, train_g, d_loss], {noise: z(), real: data})
    print(sess.run(fake, {noise: z()}))
    print(fake.eval({noise: z()}))
"""


def test_the_block_runs_from_the_first_graph_input_to_the_last_training_op():
    ctx = context(GAN)
    step = analysis.analyse_step(ctx, ctx.module)
    assert lines(ctx, step.statements) == [
        "fake = generator(noise)", "d_loss = tf.reduce_mean(tf.matmul(real, weights[\"d\"]) - "
        "tf.matmul(fake, weights[\"d\"]))", "g_loss = -tf.reduce_mean(tf.matmul(fake, weights[\"d\"]))",
        "d_opt = tf.train.AdamOptimizer(0.1)", "train_d = d_opt.minimize(d_loss)",
        "train_g = tf.train.AdamOptimizer(0.1).minimize(g_loss)"]
    assert lines(ctx, step.front) == ["real = tf.placeholder(tf.float32, [8, 2])"]
    assert lines(ctx, step.hoisted) == ["d_opt = tf.train.AdamOptimizer(0.1)"]
    assert lines(ctx, step.early) == ['weights = {"g": tf.Variable(tf.zeros([4, 2])), "d": tf.Variable(tf.zeros([2, 1]))}']
    assert step.inputs == ["noise", "real"]
    assert (step.tensors, step.ops) == (["fake", "d_loss"], ["train_d", "train_g"])


def test_runs_without_the_training_op_only_evaluate():
    ctx = context(GAN)
    step = analysis.analyse_step(ctx, ctx.module)
    assert [code_of(ctx, run) for run in step.eval_runs] == ["sess.run(fake, {noise: z()})"]
    assert step.eval_outputs == ["fake"]
    assert len(step.eval_names) == 2  # the run's fetch and `fake.eval(...)`
    assert step.other_uses == []
    assert lines(ctx, analysis.forward_slice(ctx, step.moved, ["fake"])) == ["fake = generator(noise)"]


def test_training_ops_run_apart_cannot_share_one_compile():
    ctx = context(GAN.replace("sess.run([train_d, train_g, d_loss], {noise: z(), real: data})",
                              "sess.run([train_d, d_loss], {noise: z(), real: data})\n"
                              "        sess.run(train_g, {noise: z()})"))
    blocked = analysis.analyse_step(ctx, ctx.module)
    assert isinstance(blocked, analysis.Blocked)
    assert "does not always run together" in blocked.reason
    assert code_of(ctx, blocked.anchor).strip() == "train_g = tf.train.AdamOptimizer(0.1).minimize(g_loss)"


def test_a_summary_between_the_inputs_and_the_training_op_is_named():
    ctx = context("""\
        import tensorflow.compat.v1 as tf

        x = tf.placeholder(tf.float32, [8, 4])
        loss = tf.reduce_sum(tf.layers.dense(x, 1, name="out"))
        tf.summary.scalar("loss", loss)
        train_op = tf.train.AdamOptimizer().minimize(loss)
        with tf.Session() as sess:
            sess.run(train_op, {x: batch})
        """)
    blocked = analysis.analyse_step(ctx, ctx.module)
    assert code_of(ctx, blocked.anchor).strip() == 'tf.summary.scalar("loss", loss)'
    assert blocked.reason.startswith("`tf.summary.scalar` splits the graph")


def test_a_function_that_returns_the_step_is_compiled_where_it_is_called():
    ctx = context("""\
        import tensorflow.compat.v1 as tf


        def build(x):
            loss = tf.reduce_sum(tf.layers.dense(x, 1))
            train_op = tf.train.AdamOptimizer().minimize(loss)
            return loss, train_op


        x = tf.placeholder(tf.float32, [8, 4])
        loss, train_op = build(x)
        with tf.Session() as sess:
            sess.run([loss, train_op], {x: batch})
        """)
    builder = next(node for node in ctx.nodes(cst.FunctionDef) if node.name.value == "build")
    assert analysis.analyse_step(ctx, builder) is None
    step = analysis.analyse_step(ctx, ctx.module)
    assert code_of(ctx, step.call) == "build(x)"
    assert (step.tensors, step.ops) == (["loss"], ["train_op"])


def test_how_a_second_build_finds_the_variables():
    ctx = context("""\
        import tensorflow.compat.v1 as tf

        a = tf.layers.dense(x, 4, name="hidden")
        b = tf.layers.dense(x, 4)
        with tf.variable_scope("gen"):
            c = tf.layers.dense(x, 4)
        d = tf.get_variable("w", [4])
        e = tf.Variable(tf.zeros([4]))
        f = tf.keras.layers.Dense(4)(x)
        """)
    statements = {code_of(ctx, line).strip()[0]: line for line in ctx.module.body[1:]}
    assert analysis.variables_by_name(ctx, [statements["a"]]) == "named"
    assert analysis.variables_by_name(ctx, [statements["b"]]) == "unnamed"
    assert analysis.variables_by_name(ctx, [statements["w"]]) == "named"
    assert analysis.variables_by_name(ctx, [statements["e"]]) is None
    assert analysis.private_variables(ctx, [statements["e"]])[1].startswith("`tf.Variable` makes a new variable")
    assert "`Dense` layer" in analysis.private_variables(ctx, [statements["f"]])[1]
    assert analysis.private_variables(ctx, [statements["a"], statements["d"]]) is None
