import libcst as cst

from porter.cstutil import keyword
from porter.rules.keras._analysis.util import DATA_METHODS, GENERATOR_METHODS, IMAGE_FLOWS, data_arguments, generator_functions, method_calls
from porter.rules.keras._analysis.util import subclasses_of
from porter.rule import KERAS, WARN, Example, Rule
from porter.scopes import values_of

_SEQUENCES = ("keras.utils.Sequence", "keras.utils.data_utils.Sequence")
_IMAGE_GENERATOR = "keras.preprocessing.image.ImageDataGenerator"
_FROM_GENERATOR = ("tensorflow.data.Dataset.from_generator", "tensorflow.compat.v1.data.Dataset.from_generator")
_ADVICE = ("the IPU must know data shapes ahead of time and rejects it (ValueError); wrap it in "
           "`tf.data.Dataset.from_generator(..., output_signature=...)` with static shapes and "
           "`.batch(..., drop_remainder=True)`")


class GeneratorInput(Rule):
    code = "IPU151"
    name = "generator-input"
    kind = WARN
    frameworks = frozenset({KERAS})
    summary = "Warn about Python generators and `keras.utils.Sequence` data passed to `fit`/`evaluate`/`predict`."
    rationale = (
        "Keras on the IPU accepts arrays, tensors and `tf.data.Dataset`s only: Python generators, "
        "iterators and `keras.utils.Sequence` objects (including `ImageDataGenerator.flow...`) are "
        "rejected with a ValueError because the data shape must be known ahead of time (Targeting the IPU "
        "from TensorFlow 2, \"Keras with IPUs\"). The fix is a `tf.data.Dataset.from_generator` with an "
        "`output_signature` of static shapes, which the porter cannot write for you; a `from_generator` "
        "given `output_types` only (elements of no known shape) is reported for the same reason."
    )
    examples = (
        # A dataset from a generator whose elements have no declared shape.
        Example(
            """\
            import tensorflow as tf

            readings = tf.data.Dataset.from_generator(read_rows, output_types=(tf.float32, tf.int32))
            model = tf.keras.models.load_model("sensor.keras")
            model.fit(readings.batch(64, drop_remainder=True), epochs=2)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            readings = tf.data.Dataset.from_generator(read_rows, output_signature=(
                tf.TensorSpec(shape=(12,), dtype=tf.float32), tf.TensorSpec(shape=(), dtype=tf.int32)))
            model = tf.keras.models.load_model("sensor.keras")
            model.fit(readings.batch(64, drop_remainder=True), epochs=2)
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow as tf


            def batches(x, y, size):
                for i in range(0, len(x), size):
                    yield x[i:i + size], y[i:i + size]


            def train(model, x, y):
                model.fit(batches(x, y, 32), epochs=3, steps_per_epoch=100)
            """,
        ),
        Example(
            """\
            from tensorflow import keras


            class Frames(keras.utils.Sequence):
                def __len__(self):
                    return 10

                def __getitem__(self, index):
                    return load_batch(index)


            def main():
                train_data = Frames()
                model = build()
                model.fit(train_data, epochs=2)
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras.preprocessing.image import ImageDataGenerator

            augment = ImageDataGenerator(rotation_range=10)
            model.fit(augment.flow(x_train, y_train, batch_size=32), epochs=5)
            """,
        ),
        Example(
            """\
            import keras

            model.fit(x, y, validation_data=(v for v in val_batches), epochs=1)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            model.evaluate(test_ds.as_numpy_iterator())
            model.predict(iter(batches))
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            history = model.fit_generator(train_gen, steps_per_epoch=50)
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def batches(x, y):
                for i in range(len(x)):
                    yield x[i], y[i]


            def train(model, x, y):
                ds = tf.data.Dataset.from_generator(lambda: batches(x, y), output_signature=SPEC)
                model.fit(ds.batch(32, drop_remainder=True), epochs=3)
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow as tf

            model.fit(x_train, y_train, validation_data=(x_val, y_val), epochs=3)
            model.predict(tf.data.Dataset.from_tensor_slices(x_test).batch(8))
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        generators = generator_functions(ctx)
        sequences = subclasses_of(ctx, *_SEQUENCES)
        for call, method in method_calls(ctx, *GENERATOR_METHODS):
            ctx.report(self.code, call.func.attr, f"`{method}()` takes a Python generator or Sequence: "
                       f"{_ADVICE}", fixed=False)
        for call, method in method_calls(ctx, *DATA_METHODS):
            for _, value in data_arguments(call, method):
                what = self._kind(ctx, value, generators, sequences, depth=0)
                if what is not None:
                    ctx.report(self.code, value, f"`{method}()` gets {what}: {_ADVICE}", fixed=False)
        for call, _ in ctx.calls_to(*_FROM_GENERATOR):
            if keyword(call, "output_signature") is None and keyword(call, "output_shapes") is None \
                    and len(call.args) < 3:
                ctx.report(self.code, call, "`from_generator` is given `output_types` only: its elements have no "
                           "known shape, and the IPU needs every shape fully defined (a ValueError: \"not fully "
                           "defined\"); give `output_signature=(tf.TensorSpec(shape=..., dtype=...), ...)` with "
                           "the static shape of one element", fixed=False)

    def _kind(self, ctx, value, generators, sequences, depth):
        if isinstance(value, cst.GeneratorExp):
            return "a generator expression"
        if isinstance(value, cst.Call):
            func = value.func
            if isinstance(func, cst.Name) and func.value in generators:
                return "a Python generator"
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" \
                    and func.attr.value in generators:
                return "a Python generator"
            if isinstance(func, cst.Name) and func.value in sequences:
                return "a `keras.utils.Sequence`"
            if ctx.keras_name(func) in _SEQUENCES:
                return "a `keras.utils.Sequence`"
            if isinstance(func, cst.Attribute) and func.attr.value == "as_numpy_iterator":
                return "a NumPy iterator"
            if isinstance(func, cst.Name) and func.value == "iter" and ctx.qualified_name(func) is None:
                return "a Python iterator"
            if isinstance(func, cst.Attribute) and func.attr.value in IMAGE_FLOWS and self._image_generator(ctx, func.value):
                return "an `ImageDataGenerator` iterator (a `keras.utils.Sequence`)"
            return None
        if isinstance(value, cst.Name) and depth < 3:
            values = values_of(ctx, value)
            kinds = [self._kind(ctx, v, generators, sequences, depth + 1) if v is not None else None for v in values]
            if kinds and all(kinds):
                return kinds[-1]
        return None

    def _image_generator(self, ctx, node) -> bool:
        if isinstance(node, cst.Call):
            return ctx.keras_name(node.func) == _IMAGE_GENERATOR
        if isinstance(node, cst.Name):
            values = values_of(ctx, node)
            return bool(values) and all(isinstance(v, cst.Call) and ctx.keras_name(v.func) == _IMAGE_GENERATOR
                                        for v in values)
        return False


RULE = GeneratorInput()
