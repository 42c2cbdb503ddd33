from porter.rule import FIX, TF1, Example, Rule
from porter.rules._tf.tfdata import cast_uint8_datasets, fix_drop_remainder


class Tf1Dataset(Rule):
    code = "IPU206"
    name = "tf1-dataset"
    kind = FIX
    frameworks = frozenset({TF1})
    summary = "Batch TF1 datasets with `drop_remainder=True` and cast uint8 arrays on the host."
    rationale = (
        "Everything the IPU computation receives must have a fully defined shape, so `.batch(n)` "
        "needs `drop_remainder=True` (Graphcore's TensorFlow 1 tutorial \"Porting a simple example\"); this "
        "is the same logic as the Keras rule IPU105. Batches read straight into Python "
        "(`tf.data.experimental.get_single_element(ds.batch(n))`, `next(iter(ds.batch(n)))`, "
        "`as_numpy_iterator()`) never reach the IPU and are left alone: dropping their remainder could "
        "empty them. The IPU does not compute on uint8 (Targeting the IPU "
        "from TensorFlow 1, \"Supported types\"; the tutorial casts on the host): uint8 arrays (a Keras "
        "dataset loader's images, arrays made as uint8) that "
        "reach `from_tensor_slices` unchanged are cast to float32 there, a Keras dataset's labels to "
        "int32, and a `tfds.load` of a uint8 image set gets a `tf.cast` map; the same data flow as the "
        "Keras rule IPU106. The values are not rescaled."
    )
    examples = (
        Example(
            """\
            import tensorflow.compat.v1 as tf

            (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
            dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train))
            dataset = dataset.shuffle(1000).batch(32)
            images, labels = tf.data.make_one_shot_iterator(dataset.repeat()).get_next()
            """,
            """\
            import tensorflow.compat.v1 as tf

            (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
            dataset = tf.data.Dataset.from_tensor_slices((x_train.astype("float32"), y_train.astype("int32")))
            dataset = dataset.shuffle(1000).batch(32, drop_remainder=True)
            images, labels = tf.data.make_one_shot_iterator(dataset.repeat()).get_next()
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf

            (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
            x_train = x_train / 255.0
            dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train.astype("int32")))
            dataset = dataset.batch(32, drop_remainder=True)
            """,
            reported=False,
        ),
        # The whole test set read as one batch on the host: left whole, not emptied.
        Example(
            """\
            import tensorflow.compat.v1 as tf

            test = tf.data.Dataset.from_tensor_slices((x_test, y_test))
            test_images, test_labels = tf.data.experimental.get_single_element(test.batch(len(x_test)))
            first_images, first_labels = next(iter(test.batch(1000)))
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        fix_drop_remainder(ctx, self.code)
        cast_uint8_datasets(ctx, self.code)


RULE = Tf1Dataset()
