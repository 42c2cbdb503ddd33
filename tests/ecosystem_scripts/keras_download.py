"""Regression on a table fetched from the web: cannot run without the network."""
import numpy as np
import tensorflow as tf

path = tf.keras.utils.get_file("prices.csv", "https://example.org/data/prices.csv")
table = np.loadtxt(path, delimiter=",", skiprows=1, dtype="float32")
features, target = table[:, :-1], table[:, -1]

model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
model.fit(features, target, batch_size=16, epochs=2)
