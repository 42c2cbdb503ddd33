"""A tiny digit classifier: trains on MNIST for three epochs and reports its test accuracy."""
import tensorflow as tf

(train_images, train_labels), (test_images, test_labels) = tf.keras.datasets.mnist.load_data()
train_images = train_images.astype("float32") / 255.0
test_images = test_images.astype("float32") / 255.0

model = tf.keras.Sequential([
    tf.keras.layers.Flatten(input_shape=(28, 28)),
    tf.keras.layers.Dense(16, activation="relu"),
    tf.keras.layers.Dense(10),
])
model.compile(optimizer="adam",
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
# 16 divides both 60000 and 10000, the rows of the real MNIST: no partial batch on the IPU
model.fit(train_images, train_labels, batch_size=16, epochs=3)
loss, accuracy = model.evaluate(test_images[:256], test_labels[:256], batch_size=16)
print("test accuracy", accuracy)
