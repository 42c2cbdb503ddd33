"""What the Keras and TF1 rules share: tf.data pipelines."""
