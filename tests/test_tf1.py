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
