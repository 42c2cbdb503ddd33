"""TF1 rules working together: statements moved out of a GPU scope keep the edits other rules make
inside them, and the CPU scope in front of an IPU scope is shared."""

from porter.engine import port

SOURCE = '''import tensorflow.compat.v1 as tf


def model(images):
    return tf.reduce_mean(tf.layers.dense(images, 1))


def main():
    with tf.device("/gpu:0"):
        iterator = tf.data.make_one_shot_iterator(tf.data.Dataset.range(64).map(to_float).batch(8))
        images = iterator.get_next()
        loss = model(images)
    step = tf.train.get_or_create_global_step()
    with tf.Session() as sess:
        print(sess.run(loss))
'''

EXPECTED = '''import tensorflow.compat.v1 as tf
from tensorflow.python import ipu


def model(images):
    return tf.reduce_mean(tf.layers.dense(images, 1))


def main():
    with tf.device("cpu"):
        iterator = tf.data.make_one_shot_iterator(tf.data.Dataset.range(64).map(to_float).batch(8, drop_remainder=True))
        images = iterator.get_next()
        step = tf.train.get_or_create_global_step()
    with ipu.scopes.ipu_scope("/device:IPU:0"):
        [loss] = ipu.ipu_compiler.compile(model, inputs=[images])
    ipu_config = ipu.config.IPUConfig()
    ipu_config.auto_select_ipus = 1
    ipu_config.configure_ipu_system()
    with tf.Session() as sess:
        print(sess.run(loss))
'''


def test_moved_statements_keep_edits_and_share_one_cpu_scope():
    result = port(SOURCE)
    assert result.error is None
    assert result.source == EXPECTED
    codes = [finding.code for finding in result.findings]
    assert {"IPU201", "IPU202", "IPU203", "IPU205", "IPU206"} <= set(codes)
    assert port(result.source).source == result.source


def test_non_tf1_files_get_no_tf1_rules():
    source = "import tensorflow as tf\n\nwith tf.device('/gpu:0'):\n    y = model(x)\n"
    result = port(source)
    assert not any(finding.code.startswith("IPU2") for finding in result.findings)


EVALUATED_IN_A_DEVICE_SCOPE = '''import tensorflow.compat.v1 as tf


def model_fn(x, y):
    loss = tf.losses.mean_squared_error(y, tf.layers.dense(x, 1))
    return loss, tf.train.AdamOptimizer().minimize(loss)


x = tf.placeholder(tf.float32, [8, 4])
y = tf.placeholder(tf.float32, [8, 1])
with tf.device("/gpu:0"):
    loss, train_op = model_fn(x, y)
with tf.Session() as sess:
    sess.run([loss, train_op], {x: train_x, y: train_y})
    print(sess.run(loss, {x: test_x, y: test_y}))
'''


def test_a_run_that_fetches_a_compiled_step_without_its_training_op_is_reported():
    result = port(EVALUATED_IN_A_DEVICE_SCOPE)
    warnings = [(finding.line, finding.message) for finding in result.findings
                if finding.code == "IPU202" and not finding.fixed]
    assert warnings == [(15, "this run fetches outputs of the compiled `model_fn` without `train_op`, and fetching "
                             "them trains: compile the forward part apart (a function without the optimizer, under "
                             "`tf.variable_scope(..., reuse=True)`) and fetch that here")]


STEP_FUNCTION_EVALUATED = '''import tensorflow.compat.v1 as tf


def training_loop_body(x, y):
    loss = tf.reduce_sum(tf.layers.dense(x, 1, name="out") - y)
    return loss, tf.train.AdamOptimizer().minimize(loss)


x = tf.placeholder(tf.float32, [8, 4])
y = tf.placeholder(tf.float32, [8, 1])
loss, train_op = training_loop_body(x, y)
with tf.Session() as sess:
    sess.run([loss, train_op], {x: train_x, y: train_y})
    print(sess.run(loss, {x: test_x, y: test_y}))
'''


def test_a_step_function_is_compiled_and_its_evaluation_reported_when_it_cannot_be_split():
    result = port(STEP_FUNCTION_EVALUATED)
    assert "    [loss] = ipu.ipu_compiler.compile(training_loop_body, inputs=[x, y])\n" in result.source
    assert [(finding.line, finding.fixed) for finding in result.findings if finding.code == "IPU208"] == [
        (11, True), (14, False)]
    assert [finding.message for finding in result.findings if finding.code == "IPU208"][1].endswith(
        "(`training_loop_body` builds the forward pass and the training op together: give the forward pass a "
        "function of its own)")
    assert port(result.source).source == result.source
