"""Classify Fashion-MNIST with a small dense network (GPU version)."""
import argparse

import tensorflow as tf
from tensorflow.python import ipu


def make_dataset(images, labels, batch_size, shuffle=True):
    dataset = tf.data.Dataset.from_tensor_slices((images, labels))
    if shuffle:
        dataset = dataset.shuffle(len(images), seed=7)
    return dataset.batch(batch_size, drop_remainder=True)


def build_model(hidden):
    return tf.keras.Sequential([
        tf.keras.layers.Flatten(input_shape=(28, 28)),
        tf.keras.layers.Dense(hidden, activation="relu"),
        tf.keras.layers.Dropout(0.2),
        tf.keras.layers.Dense(10),
    ])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=128)
    args = parser.parse_args()

    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.fashion_mnist.load_data()
    x_train = (x_train / 255.0).astype("float32")
    x_test = (x_test / 255.0).astype("float32")
    y_train, y_test = y_train.astype("int32"), y_test.astype("int32")
    train_ds = make_dataset(x_train, y_train, args.batch_size)
    test_ds = make_dataset(x_test, y_test, args.batch_size, shuffle=False)

    ipu_config = ipu.config.IPUConfig()
    ipu_config.auto_select_ipus = 1
    ipu_config.configure_ipu_system()
    strategy = ipu.ipu_strategy.IPUStrategy()
    with strategy.scope():
        model = build_model(args.hidden)
        model.compile(
            optimizer=tf.keras.optimizers.Adam(1e-3),
            loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"],
        )
        model.fit(train_ds, epochs=args.epochs)
        model.evaluate(test_ds)


if __name__ == "__main__":
    main()
