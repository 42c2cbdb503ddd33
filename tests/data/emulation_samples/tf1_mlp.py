"""A two-layer perceptron on MNIST in TensorFlow 1 graph mode (GPU version)."""
import argparse

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


def model_fn(images, labels, learning_rate):
    w1 = tf.get_variable("w1", [784, 64], initializer=tf.glorot_uniform_initializer())
    b1 = tf.get_variable("b1", [64], initializer=tf.zeros_initializer())
    w2 = tf.get_variable("w2", [64, 10], initializer=tf.glorot_uniform_initializer())
    b2 = tf.get_variable("b2", [10], initializer=tf.zeros_initializer())
    hidden = tf.nn.relu(tf.matmul(images, w1) + b1)
    logits = tf.matmul(hidden, w2) + b2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    train_op = tf.train.GradientDescentOptimizer(learning_rate).minimize(loss)
    return loss, train_op


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()

    (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
    x_train = x_train.reshape(-1, 784).astype(np.float32) / 255.0
    y_train = y_train.astype(np.int32)

    with tf.device("/gpu:0"):
        images = tf.placeholder(tf.float32, [None, 784])
        labels = tf.placeholder(tf.int32, [None])
        loss, train_op = model_fn(images, labels, args.lr)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(args.steps):
            start = (step * args.batch_size) % len(x_train)
            feed = {images: x_train[start:start + args.batch_size],
                    labels: y_train[start:start + args.batch_size]}
            _, loss_value = sess.run([train_op, loss], feed_dict=feed)
            if step % 10 == 0:
                print("step", step, "loss", loss_value)


if __name__ == "__main__":
    main()
