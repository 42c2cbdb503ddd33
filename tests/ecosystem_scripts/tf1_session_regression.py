"""Least-squares line fit with a TensorFlow 1 graph, fed batch by batch through placeholders."""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

BATCH = 32
rng = np.random.RandomState(3)
xs = rng.uniform(-1, 1, size=(BATCH * 8, 1)).astype("float32")
ys = 3.0 * xs + 0.5 + rng.normal(scale=0.1, size=xs.shape).astype("float32")

x = tf.placeholder(tf.float32, [BATCH, 1])
y = tf.placeholder(tf.float32, [BATCH, 1])
weight = tf.Variable(tf.zeros([1, 1]))
bias = tf.Variable(tf.zeros([1]))
prediction = tf.matmul(x, weight) + bias
loss = tf.reduce_mean(tf.square(prediction - y))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for epoch in range(3):
        for start in range(0, len(xs), BATCH):
            _, value = sess.run([train_op, loss], feed_dict={x: xs[start:start + BATCH], y: ys[start:start + BATCH]})
        print("epoch", epoch, "loss", value)
