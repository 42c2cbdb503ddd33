"""Which framework's rules a file gets: decided from its imports and what it calls, whatever the
aliases. A file that trains a Keras model is a Keras file even when TensorFlow is imported as
``tensorflow.compat.v1``; sessions and placeholders make a TF1 file."""

import textwrap

import libcst as cst
import pytest

from porter.config import Config
from porter.context import FileContext
from porter.detect import uses_framework
from porter.rule import KERAS, TF1, TORCH


def frameworks(source: str) -> frozenset:
    return FileContext(cst.parse_module(textwrap.dedent(source)), Config()).frameworks


@pytest.mark.parametrize("source, expected", [
    # Layers of `compat.v1.keras` in a module that only builds the model: Keras, not graph mode.
    ("""\
     import tensorflow as tf
     from tensorflow.compat.v1.keras.layers import CuDNNLSTM
     model = tf.keras.Sequential([CuDNNLSTM(8), tf.compat.v1.keras.layers.Dense(1)])
     model.compile(loss="mse")
     """, {KERAS}),
    ("""\
     import tensorflow.compat.v1 as tf
     from tensorflow import keras
     model = keras.Sequential([keras.layers.Dense(2)])
     model.compile(loss="mse")
     model.fit(x, y, batch_size=8)
     """, {KERAS}),
    ("""\
     import tensorflow.compat.v1 as tf
     model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
     model.compile(loss="mse")
     model.fit_generator(batches(), steps_per_epoch=10)
     """, {KERAS}),
    ("""\
     import tensorflow as tf
     tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
     model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
     model.compile(loss="mse")
     model.fit(x, y, batch_size=8)
     """, {KERAS}),
    ("""\
     import tensorflow.compat.v1 as tf
     from tensorflow import keras
     x = tf.placeholder(tf.float32, [None, 4])
     logits = keras.layers.Dense(2)(x)
     with tf.Session() as sess:
         sess.run(tf.global_variables_initializer())
     """, {TF1}),
    ("""\
     import tensorflow as tf
     loss = build()
     train_op = tf.compat.v1.train.AdamOptimizer(0.01).minimize(loss)
     model.fit(x, y)
     """, {TF1}),
    ("""\
     import tensorflow.compat.v1 as tf
     tf.enable_eager_execution()
     with tf.GradientTape() as tape:
         loss = tf.reduce_mean(tf.square(model(x) - y))
     grads = tape.gradient(loss, model.variables)
     """, {KERAS}),
    ("""\
     import tensorflow as tf
     model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
     model.compile(optimizer=tf.train.AdamOptimizer(0.01), loss="mse")
     model.fit(x, y, batch_size=8)
     """, {KERAS}),
    ("""\
     import tensorflow.compat.v1 as tf
     tf.enable_eager_execution()
     optimizer = tf.train.GradientDescentOptimizer(0.01)
     with tf.GradientTape() as tape:
         loss = tf.reduce_mean(tf.square(w * x - y))
     optimizer.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
     """, {KERAS}),
    ("""\
     import tensorflow as tf
     from tensorflow.compat.v1 import estimator as v1_estimator
     step = tf.Variable(0, dtype=tf.int64)
     print(step.numpy())
     """, {KERAS}),
    ("""\
     import tensorflow.compat.v1 as tf
     tf.disable_v2_behavior()
     """, {TF1}),
    ("""\
     import tensorflow.compat.v1 as tf
     graph = tf.get_default_graph()
     """, {TF1}),
    # Eager execution switched off (by a function imported by name too) in a Keras script that needs
    # graph mode nowhere else: Keras, whose rules remove the switch.
    ("""\
     import tensorflow as tf
     from tensorflow.compat.v1 import disable_eager_execution
     disable_eager_execution()
     model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
     model.fit(x, y, batch_size=8)
     """, {KERAS}),
    ("""\
     from tensorflow import keras
     import tensorflow as tf
     tf.compat.v1.disable_eager_execution()
     model = keras.models.load_model("classifier.h5")
     print(model.predict(images, batch_size=16))
     """, {KERAS}),
    # ... and one that needs graph mode elsewhere (`K.gradients`, a TF1 summary writer): TF1.
    ("""\
     import tensorflow as tf
     from tensorflow.keras import backend as K
     tf.compat.v1.disable_eager_execution()
     model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
     model.fit(x, y, batch_size=8)
     grads = K.gradients(K.sum(model.output), model.input)
     """, {TF1}),
    ("""\
     import tensorflow as tf
     tf.compat.v1.disable_eager_execution()
     model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
     writer = tf.compat.v1.summary.FileWriter("logs")
     model.fit(x, y, batch_size=8)
     """, {TF1}),
    # A session made only to set Keras' GPU options: a Keras script, directly or through a name.
    ("""\
     import tensorflow as tf
     from keras.models import Sequential
     config = tf.compat.v1.ConfigProto()
     tf.compat.v1.keras.backend.set_session(tf.compat.v1.Session(config=config))
     model = Sequential()
     model.fit(x, y, batch_size=8)
     """, {KERAS}),
    ("""\
     import tensorflow as tf
     from keras import backend as K
     session = tf.compat.v1.Session(config=config)
     K.set_session(session)
     model.fit(x, y, batch_size=8)
     """, {KERAS}),
    # The session also runs the graph: TF1, even with Keras' `fit` in the file.
    ("""\
     import tensorflow as tf
     from keras import backend as K
     session = tf.compat.v1.Session()
     K.set_session(session)
     session.run(init)
     model.fit(x, y, batch_size=8)
     """, {TF1}),
    ("""\
     import torch
     import tensorflow.compat.v1 as tf
     from tensorflow import keras
     keras.Sequential().fit(x, y)
     """, {TORCH, KERAS}),
    # Keras Core, the preview of Keras 3, is Keras (IPU163 reports that the IPU has none).
    ("""\
     import keras_core as keras
     keras.Sequential([keras.layers.Dense(1)]).fit(x, y)
     """, {KERAS}),
])
def test_frameworks_follow_what_the_file_does(source, expected):
    assert frameworks(source) == frozenset(expected)


def test_a_keras_core_file_is_parsed():
    assert uses_framework("import numpy as np\nimport keras_core as keras\n")
    assert uses_framework("from keras_core import layers\n")
    assert not uses_framework("import keras_corelike\n")
