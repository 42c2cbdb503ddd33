from typing import List, Optional, Tuple

import libcst as cst

from porter.context import code_of
from porter.cstutil import argument, is_name, keyword
from porter.rules.keras._analysis.custom_loop import read_in_training
from porter.rules.keras._analysis.datasets import MadeDataset, made_datasets
from porter.rules.keras._analysis.python_data import BATCH_KINDS, NUMPY_ITERATOR, python_data_kind
from porter.rules._tf.tfdata import is_dataset
from porter.rules.keras._analysis.util import DATA_METHODS, GENERATOR_METHODS, data_arguments, last_name, mapped_nodes, method_calls
from porter.rule import KERAS, WARN, Example, Rule
from porter.scopes import local_function, values_of

_FROM_GENERATOR = ("tensorflow.data.Dataset.from_generator", "tensorflow.compat.v1.data.Dataset.from_generator")
_NOT_DEFINED = "the IPU needs every shape fully defined (a ValueError: \"not fully defined\")"
# Dataset methods after which the elements may have other shapes than the generator declares.
_RESHAPING_METHODS = frozenset({"padded_batch", "flat_map", "interleave", "apply", "window", "rebatch",
                                "ragged_batch", "bucket_by_sequence_length", "scan", "group_by_window"})
# Functions that give a `map`'s elements a shape of their own (resized images, padded or cut sequences).
_RESHAPING_FUNCTIONS = frozenset({"ensure_shape", "set_shape", "reshape", "resize", "resize_with_pad",
                                  "resize_with_crop_or_pad", "pad", "pad_to_bounding_box", "crop_to_bounding_box",
                                  "random_crop", "to_tensor", "pad_sequences"})
_REJECTED = "the IPU must know data shapes ahead of time and rejects it (ValueError)"
# A generator may yield samples or whole batches (`yield x[i:i + size], y[i:i + size]`): batching
# whole batches again would give the model inputs of one more dimension.
_ADVICE = (f"{_REJECTED}; wrap it in `tf.data.Dataset.from_generator(..., output_signature=...)` with static "
           "shapes, then `.batch(n, drop_remainder=True)` if it yields one sample at a time; if it yields whole "
           "batches, put the batch size first in each shape, batch no further, and yield full batches only (a "
           "last partial batch has another shape)")
# A Sequence (and what derives from it) gives whole batches, by index, up to its `len()`.
_BATCHES_ADVICE = (f"{_REJECTED}; its items are whole batches: read them with `tf.data.Dataset.from_generator("
                   "lambda: ({name}[i] for i in range(len({name}))), output_signature=...)`{held}, the batch size "
                   "first in each `tf.TensorSpec` shape and no `.batch()` after it, and count full batches only in "
                   "the `range` (a last partial batch has another shape)")
_ITERATOR_ADVICE = (f"{_REJECTED}; give `{{method}}` the `tf.data` dataset itself, without `.as_numpy_iterator()` "
                    "(batched with `drop_remainder=True`)")
# `predict` must answer for every sample (a submission has a row per test id): a dropped last batch
# would lose answers, so the advice is to pad the samples to whole batches and cut the answers back.
_PREDICT_ADVICE = (f"{_REJECTED}; give `predict` the samples as an array, or a "
                   "`tf.data.Dataset.from_generator(..., output_signature=...)` with static shapes, padded to a "
                   "multiple of the batch size, and keep the answers for the real samples only: dropping the last "
                   "partial batch (`drop_remainder=True`) would leave samples without an answer")


class GeneratorInput(Rule):
    code = "IPU151"
    name = "generator-input"
    kind = WARN
    frameworks = frozenset({KERAS})
    summary = "Warn about Python generators and `keras.utils.Sequence` data passed to `fit`/`evaluate`/`predict`."
    rationale = (
        "Keras on the IPU accepts arrays, tensors and `tf.data.Dataset`s only: Python generators, iterators and "
        "`keras.utils.Sequence` objects (including `ImageDataGenerator.flow...` and `TimeseriesGenerator`) are "
        "rejected with a ValueError because the data shape must be known ahead of time (Targeting the IPU from "
        "TensorFlow 2, \"Keras with IPUs\"). The fix is a `tf.data.Dataset.from_generator` with an "
        "`output_signature` of static shapes, which the porter cannot write for you: a Sequence (a `PyDataset`, "
        "an `ImageDataGenerator` flow) gives whole batches, read by index with the batch size declared first in "
        "each shape and not batched again, and a dataset's `as_numpy_iterator()` is replaced by the dataset "
        "itself; the data of `predict` is padded to whole batches, never cut: a submission needs an answer for "
        "every sample. Such data is followed through variables (also unpacked from a returned tuple), what the file's "
        "functions and methods return and what the callers of a function give for its parameter, and it is "
        "recognised when a Sequence class or a generator function of a module ported with the file makes it. A "
        "`from_generator` given `output_types` only (elements of no known shape) is reported for the same reason,"
        " and so is one whose declared shapes keep a `None` on the way to training (Targeting the IPU from "
        "TensorFlow 2, \"Keras with IPUs\" and the infeed queue): a first `None` of a generator of whole batches "
        "(the batch size, fixed by `.unbatch().batch(n, drop_remainder=True)`), or a length that changes from "
        "element to element, unless a `map` on the way sets the shapes. `fit_generator`, `evaluate_generator` and"
        " `predict_generator` are reported unless given a `tf.data` dataset, which TensorFlow 2 hands on to "
        "`fit`, `evaluate` and `predict`."
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
        # A generator of whole batches: the batch size is `None` in the shapes it declares.
        Example(
            """\
            import tensorflow as tf

            pages = tf.data.Dataset.from_generator(scanned_batches, output_signature=(
                tf.TensorSpec(shape=(None, 128, 128, 1), dtype=tf.float32), tf.TensorSpec(shape=(None,), dtype=tf.int32)))
            model = tf.keras.models.load_model("pages.keras")
            model.fit(pages, epochs=2)
            """,
        ),
        # The same, the shape spelled as a batch dimension put before a constant of the file.
        Example(
            """\
            import tensorflow as tf

            FRAME = (96, 96, 3)
            frames = tf.data.Dataset.from_generator(frame_batches, output_signature=(
                tf.TensorSpec(shape=(None,) + FRAME, dtype=tf.float32), tf.TensorSpec(shape=(None,), dtype=tf.int32)))
            model = tf.keras.models.load_model("frames.keras")
            model.fit(frames, epochs=2)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            FRAME = (96, 96, 3)
            frames = tf.data.Dataset.from_generator(frame_batches, output_signature=(
                tf.TensorSpec(shape=(None, *FRAME), dtype=tf.float32), tf.TensorSpec(shape=(None,), dtype=tf.int32)))
            model = tf.keras.models.load_model("frames.keras")
            model.fit(frames.unbatch().batch(16, drop_remainder=True), epochs=2)
            """,
            reported=False,
        ),
        # Batched again after `unbatch()`: the batch size is fixed, and nothing else is unknown.
        Example(
            """\
            import tensorflow as tf

            pages = tf.data.Dataset.from_generator(scanned_batches, output_signature=(
                tf.TensorSpec(shape=(None, 128, 128, 1), dtype=tf.float32), tf.TensorSpec(shape=(None,), dtype=tf.int32)))
            model = tf.keras.models.load_model("pages.keras")
            model.fit(pages.unbatch().batch(32, drop_remainder=True), epochs=2)
            """,
            reported=False,
        ),
        # Elements of varying length, batched one by one for a custom loop's step.
        Example(
            """\
            import tensorflow as tf

            clips = tf.data.Dataset.from_generator(
                read_clips, output_shapes=((None, 40), ()), output_types=(tf.float32, tf.int32)).batch(1)


            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


            for x, y in clips:
                train_step(x, y)
            """,
        ),
        # Elements of varying length, batched one by one where the variable is assigned again.
        Example(
            """\
            import tensorflow as tf

            notes = tf.data.Dataset.from_generator(read_melodies, output_signature=(
                tf.TensorSpec(shape=(None, 88), dtype=tf.float32), tf.TensorSpec(shape=(4,), dtype=tf.float32)))
            notes = notes.shuffle(500)
            notes = notes.batch(1)
            model = tf.keras.models.load_model("melodies.keras")
            model.fit(notes, epochs=2)
            """,
        ),
        # Resized in a `map`: the image sizes are set before the IPU sees them.
        Example(
            """\
            import tensorflow as tf

            photos = tf.data.Dataset.from_generator(read_photos, output_signature=(
                tf.TensorSpec(shape=(None, None, 3), dtype=tf.uint8), tf.TensorSpec(shape=(), dtype=tf.int32)))
            photos = photos.map(lambda image, label: (tf.image.resize(image, (224, 224)), label))
            model = tf.keras.models.load_model("photos.keras")
            model.fit(photos.batch(16, drop_remainder=True), epochs=2)
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
        # Keras's own Sequence of time-series windows.
        Example(
            """\
            from tensorflow import keras
            from tensorflow.keras.preprocessing.sequence import TimeseriesGenerator

            windows = TimeseriesGenerator(readings, readings, length=24, batch_size=32)
            model = keras.models.load_model("load.keras")
            model.fit(windows, epochs=3)
            """,
        ),
        # A generator method of a class of the file, called on an instance given as a parameter.
        Example(
            """\
            import tensorflow as tf


            class Loader:
                def __init__(self, rows):
                    self.rows = rows

                def batches(self, size):
                    while True:
                        yield read_batch(self.rows, size)


            def train(model, loader):
                model.fit(loader.batches(16), steps_per_epoch=50, epochs=2)


            train(tf.keras.models.load_model("rows.keras"), Loader(rows))
            """,
        ),
        # Keras 3's `PyDataset`, the successor of `Sequence`, through a class of the file.
        Example(
            """\
            import keras


            class Batches(keras.utils.PyDataset):
                def __len__(self):
                    return 8

                def __getitem__(self, index):
                    return load_batch(index)


            class ShuffledBatches(Batches):
                pass


            model.fit(ShuffledBatches(workers=2), epochs=2)
            """,
        ),
        # A Sequence made by a helper function, and a generator given through a parameter.
        Example(
            """\
            from tensorflow import keras


            class Scans(keras.utils.Sequence):
                def __init__(self, folder):
                    self.files = sorted(os.listdir(folder))

                def __len__(self):
                    return len(self.files) // 8

                def __getitem__(self, index):
                    return read_scans(self.files[index * 8:(index + 1) * 8])


            def test_scans(folder):
                return Scans(folder)


            model = keras.models.load_model("scans.keras")
            scans = test_scans("scans/test")
            model.evaluate(scans)
            """,
        ),
        # Iterators a helper returns together, unpacked into one name each.
        Example(
            """\
            from tensorflow import keras


            def leaf_images(folder):
                augment = keras.preprocessing.image.ImageDataGenerator(rescale=1 / 255, zoom_range=0.1)
                train = augment.flow_from_directory(f"{folder}/train", target_size=(96, 96), batch_size=16)
                test = keras.preprocessing.image.ImageDataGenerator(rescale=1 / 255).flow_from_directory(
                    f"{folder}/test", target_size=(96, 96), batch_size=16)
                return train, test


            train_images, test_images = leaf_images("leaves")
            model = keras.models.load_model("leaves.keras")
            model.fit(train_images, validation_data=test_images, epochs=4)
            """,
        ),
        # Sequences a method returns, alone or in a tuple.
        Example(
            """\
            from tensorflow import keras


            class Windows(keras.utils.Sequence):
                def __init__(self, rows):
                    self.rows = rows

                def __len__(self):
                    return len(self.rows) // 64

                def __getitem__(self, index):
                    return cut_windows(self.rows[index * 64:(index + 1) * 64])


            class Recording:
                def __init__(self, path):
                    self.rows = read_rows(path)

                def split(self):
                    return Windows(self.rows[:9000]), Windows(self.rows[9000:])

                def everything(self):
                    return Windows(self.rows)


            recording = Recording("ecg.csv")
            fitting, checking = recording.split()
            model = keras.models.load_model("ecg.keras")
            model.fit(fitting, validation_data=checking, epochs=3)
            model.predict(recording.everything())
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def batches(x, y, size):
                while True:
                    yield x[:size], y[:size]


            def train(model, data, steps):
                model.fit(data, steps_per_epoch=steps, epochs=5)


            train(tf.keras.models.load_model("net.keras"), batches(x, y, 32), 30)
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
        # Keras 2's `fit_generator` passes its `validation_data` on to `fit`, which rejects a generator there too.
        Example(
            """\
            import tensorflow as tf


            def windows(rows, size):
                while True:
                    yield cut_windows(rows, size)


            train = tf.data.Dataset.from_tensor_slices((x, y)).batch(32, drop_remainder=True).repeat()
            model.fit_generator(train, steps_per_epoch=25, validation_data=windows(rows, 32), validation_steps=5)
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
        # TensorFlow 2's `fit_generator` passes a `tf.data` dataset on to `fit`: nothing to say.
        Example(
            """\
            import tensorflow as tf

            train = tf.data.Dataset.from_tensor_slices((x, y)).batch(32, drop_remainder=True).repeat()
            model.fit_generator(train, steps_per_epoch=25, epochs=2)
            print(model.evaluate_generator(train, steps=5))
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
        for call, method in method_calls(ctx, *GENERATOR_METHODS):
            # Its `validation_data` goes to `fit` as well, where a generator or Sequence is rejected the same way.
            validation = argument(call, "validation_data", 5) if method == "fit_generator" else None
            if validation is not None and not validation.star:
                self._report_python_data(ctx, validation.value, method)
            # TensorFlow 2's `fit_generator` hands its input to `fit`: a `tf.data` dataset is fine.
            given = argument(call, "generator", 0)
            if given is not None and not given.star and is_dataset(ctx, given.value):
                continue
            what = python_data_kind(ctx, given.value) if given is not None and not given.star else None
            advice = _advice(ctx, given.value if given is not None else None, what, method)
            ctx.report(self.code, call.func.attr, f"`{method}()` takes a Python generator or Sequence: "
                       f"{advice}", fixed=False)
        for call, method in method_calls(ctx, *DATA_METHODS):
            for _, value in data_arguments(call, method):
                self._report_python_data(ctx, value, method)
        for call, _ in ctx.calls_to(*_FROM_GENERATOR):
            if keyword(call, "output_signature") is None and keyword(call, "output_shapes") is None \
                    and len(call.args) < 3:
                ctx.report(self.code, call, "`from_generator` is given `output_types` only: its elements have no "
                           "known shape, and the IPU needs every shape fully defined (a ValueError: \"not fully "
                           "defined\"); give `output_signature=(tf.TensorSpec(shape=..., dtype=...), ...)` with "
                           "the static shape of one element", fixed=False)
        self._report_unknown_dimensions(ctx)

    def _report_python_data(self, ctx, value: cst.BaseExpression, method: str) -> None:
        """Report ``value``, data that ``method`` gets, when it surely is a generator, an iterator or a Sequence."""
        what = python_data_kind(ctx, value)
        if what is not None:
            ctx.report(self.code, value, f"`{method}()` gets {what}: {_advice(ctx, value, what, method)}", fixed=False)

    def _report_unknown_dimensions(self, ctx) -> None:
        """A ``from_generator`` whose declared shapes have ``None`` in them, when its dataset feeds
        ``fit``/``evaluate``/``predict`` or a custom loop's step: a ``None`` the pipeline does not
        fix on the way (a first dimension batched again after ``unbatch()``, a ``map`` that sets
        shapes) reaches the IPU, which needs every shape fully defined."""
        done = set()
        for source, scope in read_in_training(ctx):
            for made in made_datasets(ctx, source, scope):
                batching = _batching_after(ctx, made) if made.of_generator and id(made.maker) not in done else None
                if batching is None:
                    continue
                message = _unknown_dimensions_message(ctx, _declared_shapes(ctx, made.maker), *batching)
                if message is not None:
                    done.add(id(made.maker))
                    ctx.report(self.code, made.maker, message, fixed=False)


def _advice(ctx, value: Optional[cst.BaseExpression], what: Optional[str], method: str) -> str:
    """What to do with the Python data ``value`` (``what`` it is, when known) that ``method`` is given."""
    if method.startswith("predict"):
        return _PREDICT_ADVICE
    if what in BATCH_KINDS and value is not None:
        if isinstance(value, cst.Name):
            return _BATCHES_ADVICE.format(name=value.value, held="")
        return _BATCHES_ADVICE.format(name="sequence", held=f" (`sequence = {code_of(ctx, value)}`)")
    if what == NUMPY_ITERATOR:
        return _ITERATOR_ADVICE.format(method=method)
    return _ADVICE


def _batching_after(ctx, made: MadeDataset) -> Optional[Tuple[bool, bool]]:
    """(unbatched, batched): whether the generator's elements are unbatched and batched on their
    way to be read; None when a method there may give them other shapes."""
    unbatched = batched = False
    for call in reversed(made.methods):  # in the order they apply
        method = call.func.attr.value
        if method in _RESHAPING_METHODS or method == "map" and _reshapes(ctx, call):
            return None
        unbatched = unbatched or method == "unbatch" and not batched
        batched = batched or method == "batch"
    return unbatched, batched


def _reshapes(ctx, call: cst.Call) -> bool:
    """A ``.map(fn)`` that may give its elements new shapes: ``fn`` calls a function that sets them
    (``tf.ensure_shape``, ``tf.image.resize``...), or is out of sight."""
    function = call.args[0].value if call.args else None
    if not (isinstance(function, cst.Lambda) or isinstance(function, cst.Name)
            and local_function(ctx, function.value, call) is not None):
        return True
    return any(isinstance(node, cst.Call) and last_name(node.func) in _RESHAPING_FUNCTIONS
               for node in mapped_nodes(ctx, call))


def _declared_shapes(ctx, call: cst.Call) -> List[cst.BaseExpression]:
    """The shapes a ``from_generator`` call declares: of each ``tf.TensorSpec`` of its
    ``output_signature``, or in its ``output_shapes``."""
    signature = keyword(call, "output_signature")
    if signature is not None:
        specs = [node for node in _nodes_of(ctx, signature.value)
                 if isinstance(node, cst.Call) and last_name(node.func) == "TensorSpec"]
        shapes = [argument(spec, "shape", 0) for spec in specs]
        return [_resolved(ctx, shape.value) for shape in shapes if shape is not None]
    shapes = argument(call, "output_shapes", 2)
    return _shapes_in(ctx, shapes.value) if shapes is not None else []


def _nodes_of(ctx, node: cst.BaseExpression):
    """The nodes of ``node``, and of what the names in it hold (``output_signature=pair_spec``)."""
    pending = [node]
    while pending:
        current = _resolved(ctx, pending.pop())
        yield current
        if isinstance(current, (cst.Tuple, cst.List)):
            pending.extend(reversed([element.value for element in current.elements]))
        elif isinstance(current, cst.Dict):
            pending.extend(reversed([element.value for element in current.elements
                                     if isinstance(element, cst.DictElement)]))


def _shapes_in(ctx, node: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The shapes of an ``output_shapes`` structure: a ``(None, 10)`` or ``tf.TensorShape([...])``
    of each element."""
    node = _resolved(ctx, node)
    if isinstance(node, cst.Call) and last_name(node.func) == "TensorShape":
        return [_resolved(ctx, node.args[0].value)] if node.args else []
    if isinstance(node, cst.Dict):
        return [shape for element in node.elements if isinstance(element, cst.DictElement)
                for shape in _shapes_in(ctx, element.value)]
    if not isinstance(node, (cst.Tuple, cst.List)):
        return []
    parts = [_resolved(ctx, element.value) for element in node.elements]
    if any(isinstance(part, (cst.Tuple, cst.List, cst.Dict)) or isinstance(part, cst.Call)
           and last_name(part.func) == "TensorShape" for part in parts):
        return [shape for element in node.elements for shape in _shapes_in(ctx, element.value)]
    return [node]


def _resolved(ctx, node: cst.BaseExpression) -> cst.BaseExpression:
    """What the variable ``node`` holds when it is assigned once (``IMAGE_SHAPE = (64, 64, 3)``)."""
    if isinstance(node, cst.Name) and node.value != "None":
        values = values_of(ctx, node)
        if len(values) == 1 and values[0] is not None:
            return values[0]
    return node


def _dimensions(ctx, shape: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The dimensions of a declared ``shape`` as far as they can be read from its start: a tuple or
    list, also spelled ``(None,) + IMAGE_SHAPE`` or ``(None, *IMAGE_SHAPE)`` with a constant of the
    file. What follows a part that cannot be read is left out (its dimensions have no known place)."""
    shape = _resolved(ctx, shape)
    if isinstance(shape, cst.BinaryOperation) and isinstance(shape.operator, cst.Add):
        left = _dimensions(ctx, shape.left)
        return left + _dimensions(ctx, shape.right) if _readable(ctx, shape.left) else left
    if not isinstance(shape, (cst.Tuple, cst.List)):
        return []
    dimensions: List[cst.BaseExpression] = []
    for element in shape.elements:
        if isinstance(element, cst.StarredElement):
            dimensions.extend(_dimensions(ctx, element.value))
            if not _readable(ctx, element.value):
                break
        else:
            dimensions.append(element.value)
    return dimensions


def _readable(ctx, shape: cst.BaseExpression) -> bool:
    """Whether every dimension of ``shape`` has a known place (see ``_dimensions``)."""
    shape = _resolved(ctx, shape)
    if isinstance(shape, cst.BinaryOperation) and isinstance(shape.operator, cst.Add):
        return _readable(ctx, shape.left) and _readable(ctx, shape.right)
    return isinstance(shape, (cst.Tuple, cst.List)) and all(
        not isinstance(element, cst.StarredElement) or _readable(ctx, element.value) for element in shape.elements)


def _unknown_dimensions_message(ctx, shapes: List[cst.BaseExpression], unbatched: bool,
                                batched: bool) -> Optional[str]:
    """What to say of the declared ``shapes`` of one ``from_generator`` with ``None`` in them, or
    None when the IPU gets them whole: a first ``None`` is the batch size when nothing batches the
    elements again (fixed by ``unbatch().batch(n, drop_remainder=True)``), any other a length to make
    fixed."""
    if any(is_name(shape, "None") for shape in shapes):
        return (f"`from_generator` declares an element of no known shape (`shape=None`), and {_NOT_DEFINED}: "
                "declare the static shape of each element")
    batches, lengths = [], []
    for shape in shapes:
        unknown = [index for index, dimension in enumerate(_dimensions(ctx, shape)) if is_name(dimension, "None")]
        if unknown and unknown[0] == 0 and (unbatched or not batched):
            unknown = unknown[1:]
            if not unbatched:  # the batch size, unless the batching after `unbatch()` fixes it
                batches.append(f"`{code_of(ctx, shape)}`")
        if unknown:
            where = ", ".join(str(index) for index in unknown)
            lengths.append(f"`{code_of(ctx, shape)}` at dimension {where}")
    problems, advice = [], []
    if batches:
        problems.append(f"elements that are batches of no known size (`None` first in {', '.join(batches)})")
        advice.append("batch them again with `.unbatch().batch(batch_size, drop_remainder=True)`")
    if lengths:
        problems.append(f"a length that can change from element to element (`None` in {'; '.join(lengths)})")
        advice.append("give each such dimension one length (pad or cut in the generator, or "
                      "`.padded_batch(n, padded_shapes=..., drop_remainder=True)`) and declare it")
    if not problems:
        return None
    return f"the shapes `from_generator` declares give {' and '.join(problems)}, and {_NOT_DEFINED}: {'; '.join(advice)}"


RULE = GeneratorInput()
