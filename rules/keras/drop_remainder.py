from typing import Collection, Dict, List, NamedTuple, Optional, Set, Tuple, Union

import libcst as cst

from porter.context import bound_names, code_of, walk
from porter.cstutil import (alternatives, append_args, argument, as_receiver, is_false, is_main_guard, is_name, is_true, keyword,
                            keyword_arg, name_of, positional)
from porter.rule import FIX, KERAS, Example, Rule, is_selected
from porter.scopes import (assignments, called_method_returns, called_returns, instance_class, is_module_function, loads,
                           local_calls, local_function, module_globals, owner, owner_body, parameter_names,
                           project_name, returns_of, ruled_out_by_call, values_of)
from porter.rules._tf.tfdata import (DROP_REMAINDER_POSITION, dataset_like, dataset_method_calls, fix_batch_call,
                                     fix_drop_remainder, is_dataset, methods_after, outermost_chain, read_into_python,
                                     reads_global, sliced_arrays)
from porter.rules.keras._analysis.fit import (call_columns, floor_operand, last_binding_before, last_value_before, layout, rounded_up, same_size,
                                               single_sample, training_calls)
from porter.rules.keras._analysis.custom_loop import fed_loops, loop_plans, rewrites_loops, tensorflow_alias
from porter.rules.keras._analysis.predict_datasets import padded_predictions, unpadded_reasons
from porter.rules.keras._analysis.project_batches import given_whole_by_callers
from porter.rules.keras.custom_loop import RULE as CUSTOM_LOOP_RULE
from porter.rules.keras.divisible_dataset import DivisibleDataset, pad_helper_names
from porter.rules.keras._analysis.model_plan import calls_of_method, model_plan
from porter.rules.keras._analysis.python_data import python_data_kind
from porter.rules.keras._analysis.steps import evaluation_calls, loop_trains, runs_models, step_calls, trains
from porter.rules.keras._analysis.util import (HOST_FUNCTIONS, IMAGE_FLOWS, STRING_LAYERS, assigned_layers, last_name,
                                              mapped_nodes, number_value,
                                              ragged_or_sparse, saved_graph_names, self_attribute_values,
                                              string_layer_names, to_tensor_length)
from porter.rules.keras._analysis.datasets import (BATCHING_METHODS, KERAS_BATCHED_SOURCES, TFDS_LOAD, zipped_keras_sources, batched_source_name, chain, feeds_training,
                                                   given_batches, keras_batched_source, made_datasets, makes_both,
                                                   parameter_input, returned_batches, training_batches,
                                                   training_inputs, uneven_batchings, uneven_batches)


_FOLDER_LOOP = """\
import tensorflow as tf

folders = tf.keras.utils.image_dataset_from_directory("photos", batch_size=16)


@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, model(images, training=True))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


for step, (images, labels) in enumerate({folders}):
    train_step(images, labels)
"""
_ANSWERS_KEPT = """\
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Embedding(1000, 16), tf.keras.layers.Dense(1)])
sentences = tf.data.Dataset.from_generator(read_pairs, output_signature=pair_spec)
sentences = sentences.padded_batch(32, padded_shapes=([None], []){drop})
held_out = tf.data.Dataset.from_tensor_slices(features).batch(32{drop})


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


@tf.function
def predict_step(x):
    return model(x, training=False)


for epoch in range(3):
    for x, y in sentences:
        train_step(x, y)
    scores = []
    for x in held_out:
        scores.append(predict_step(x))
"""

# Answers kept by a loop of the module, through a `tf.function` that only runs the model.
_ANSWERED_AT_TOP = """\
import numpy as np
import tensorflow as tf

model = tf.keras.models.load_model("scorer.keras")


@tf.function
def infer(batch):
    return tf.nn.softmax(model(batch, training=False))


rows = tf.data.Dataset.from_tensor_slices(features).batch(64)
scores = []
for batch in rows:
    scores.append(infer(batch).numpy())
"""

# The same folder, given to a training function that counts its batches (`len`) to report progress.
_FOLDER_EPOCH = _FOLDER_LOOP[:_FOLDER_LOOP.index("for step")] + """\
def run_epoch(dataset):
    for step, (images, labels) in enumerate(dataset):
        train_step(images, labels)
        print(f"batch {step + 1} of {len(dataset)}")


for epoch in range(3):
    run_epoch(folders)
"""

# The same folder, given to a training function that shows a progress bar over its batches.
_FOLDER_PROGRESS = "from tqdm import tqdm\n" + _FOLDER_LOOP[:_FOLDER_LOOP.index("for step")] + """\
def run_epoch(dataset):
    for step, (images, labels) in enumerate(tqdm(dataset, unit="batch")):
        train_step(images, labels)


for epoch in range(3):
    run_epoch({folders})
"""

# A helper's folder dataset whose batches the caller counts (`len`) for a learning-rate schedule.
_COUNTED_BY_LEN = """\
import tensorflow as tf

BATCH_SIZE = 16


def folder_dataset(path):
    return tf.keras.utils.image_dataset_from_directory(path, image_size=(64, 64), batch_size=BATCH_SIZE)


train_ds = folder_dataset("train")
schedule = tf.keras.optimizers.schedules.CosineDecay(0.01, len(train_ds) * 5)
model = tf.keras.models.load_model("net.keras")
model.compile(optimizer=tf.keras.optimizers.SGD(schedule), loss="sparse_categorical_crossentropy")
model.fit({train}, epochs=5)
"""
_LOSSES_KEPT = """\
import numpy as np
import tensorflow as tf

batches = tf.data.Dataset.from_tensor_slices((features, targets)).batch(64{drop})
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.01)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return loss


for epoch in range(5):
    print(epoch, np.mean([train_step(x, y).numpy() for x, y in batches]))
"""


class DropRemainder(Rule):
    code = "IPU105"
    name = "drop-remainder"
    kind = FIX
    frameworks = frozenset({KERAS})
    summary = ("Batch tf.data pipelines with `drop_remainder=True`; rebatch Keras-made datasets "
               "(`image_dataset_from_directory`...) without their partial last batch.")
    rationale = (
        "The IPU compiles for fixed tensor shapes: every dataset element must have a fully defined "
        "shape, so a final partial batch is an error (`... not fully defined ... If using batch() make "
        "sure to set drop_remainder=True`: Targeting the IPU from TensorFlow 2, \"Keras with IPUs\"). "
        "`.batch(n)` and `.padded_batch(...)` "
        "get `drop_remainder=True`; an explicit `drop_remainder=False` is changed and reported; a "
        "parameter of a function that is only its `drop_remainder` gets True in each call of the function "
        "whose dataset Keras trains or evaluates on, and a flag that does more (`drop_remainder=training`) becomes "
        "True when every call gives what the function returns to training or evaluation; any other value the porter cannot read is reported for a "
        "person to check. Datasets are followed from "
        "`tf.data` and `tfds.load` (also `tfds.load(...)[\"train\"]` and its unpacked splits), and into "
        "`train, val = (make(part) for part in (a, b))`, where each item is made by the same call; a function "
        "that batches a dataset it is given and returns it is fixed there when every call of it feeds "
        "`fit`/`evaluate`/`predict`, also through a training function's parameter or a module dataset a "
        "training function reads (`def run_experiment(model): model.fit(train_ds)`), or the loop that feeds a "
        "custom step (`for x, y in prepare(ds, 32)`, or a variable it is assigned to). "
        "`image_dataset_from_directory`, `text_dataset_from_directory`, "
        "`audio_dataset_from_directory`, `timeseries_dataset_from_array` and `tfds.load(..., batch_size=n)` "
        "batch internally with a partial last batch: where such a dataset reaches training (a `fit`, or the "
        "loop that feeds a custom step, also through `enumerate`, `tqdm` or `zip`; "
        "both of a `subset=\"both\"` pair) it gets `.unbatch().batch(n, "
        "drop_remainder=True)` with its own batch size (the dataset itself keeps `class_names`; a helper that "
        "reads them rebatches it where it returns it, or where it is used when the caller counts its batches, "
        "by `cardinality` to split it or by `len`, which a rebatched dataset no longer knows); the windows "
        "`timeseries_dataset_from_array` cuts with a range have no static length, so they get `.map()` "
        "that sets it to their `sequence_length` (`tf.ensure_shape`; `import tensorflow as tf` is added to a file "
        "that imports only `from tensorflow import keras`). Such datasets joined by `Dataset.zip` "
        "(windows and their targets made apart) are reported where training gets the zip, as the port does not "
        "rebatch the parts of a zip. A dataset a "
        "training function gets as a parameter from callers the porter cannot follow is reported, and so is "
        "one it cannot look into: an object's attribute (`window.train`, unless the methods of its class assign "
        "it only `tf.data` batches), what another module's function or "
        "an object's method returns. Both branches of a conditional expression (`ds.shuffle(n).batch(b) if "
        "training else ds.batch(b)`) are followed. "
        "A dataset only `predict` reads, made from arrays (`from_tensor_slices(x)`, then `map`s) and batched in "
        "the same function, keeps every answer: IPU107 pads `x` to whole batches and cuts the answers back; a "
        "dataset a caller gives a function that predicts on it loses the answers for its dropped last batch, "
        "which is reported, and so is a function whose batches go to Keras and, from another call, to host reads "
        "(`next(iter(make_dataset(sample)))`), which lose the dropped samples too. "
        "Datasets used only on the host (`TextVectorization.adapt`, say, a retrieval index's `index_from_dataset`, or read into Python with "
        "`next(iter(ds.batch(n)))`) are left alone. Batches of more "
        "than one shape, given to Keras or by a loop to a custom step, are reported: `ragged_batch`, buckets of "
        "sequence lengths, windows grouped by a key (`group_by_window`, whose last window of each key is partial), "
        "and `padded_batch` "
        "without `padded_shapes` (each batch padded to its own longest element); the sliding-window idiom "
        "(`window(n).flat_map(lambda w: w.batch(n))`, or a function of the file that batches each window, or "
        "zips the batched parts of windows of pairs) gets `drop_remainder=True` on its inner batches. A `map` "
        "whose elements have no static shape (what `tf.numpy_function` gives back, `.to_tensor()` of a ragged "
        "batch, the pieces of `tf.strings.split` or the characters of `tf.strings.unicode_split` on the way to "
        "training (not one piece picked, `parts[-2]`, nor pieces a `padded_batch` pads after), "
        "the `VarLenFeature` lists of parsed records, WAV files decoded without `desired_samples`, images "
        "decoded from files with no resize after, or without `channels`, for `fit` or a custom step) is reported, "
        "unless it sets one "
        "(`tf.ensure_shape`; a shape set with `None` in it, `set_shape([None, 112, 112, 3])`, is none, unless a "
        "`padded_batch` pads it after), and so is a `TextVectorization` without "
        "`output_sequence_length` run by a `map` after the `.batch()` (each batch padded to its longest text), "
        "also over the batches of a Keras-made text dataset, which is then not rebatched: its rows would not stack; "
        "so is a `TextVectorization` run by a `map` before the `.batch()`, on each sample's text, whose ids "
        "for an unbatched text have a dimension of unknown size unless a map states it (`tf.ensure_shape`). "
        "A string layer, a TF Hub layer or a loaded saved model run by a `map` after the `.batch()` gives "
        "batches of no static size: what training reads is batched again after it. "
        "A step count that rounds up the batches "
        "of a finite dataset that now drops its last one (`validation_steps=math.ceil(n / B)`, `steps=n // B + "
        "1`) would ask for one more than there are: it becomes `n // B`, or is reported when the porter cannot "
        "rewrite it (counted in a variable, or by another batch size). A count of the batches of a Keras-made "
        "dataset as made (`steps_per_epoch=len(train_ds)`, `cardinality`), which includes the partial last "
        "one the rebatched dataset drops, is reported. So is a count made of a whole split's size "
        "(`info.splits[\"train\"].num_examples // B`) for a dataset `tfds.load` reads from a part of that split "
        "(`split=\"train[:80%]\"`) and nothing repeats: it asks for more batches than the part holds. Hugging Face `to_tf_dataset`/`prepare_tf_dataset` get "
        "`drop_remainder=True`; a collator, or the padding collator `prepare_tf_dataset` makes for a "
        "`tokenizer`, pads each batch to its own longest sequence, which is reported unless the file pads to "
        "a fixed length (`padding=\"max_length\"`)."
    )
    examples = (
        # The method is also handed on (`map(agent.act, ...)`): some of its callers are out of sight,
        # so the one sample its visible call gives does not say how the rest are batched.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            class Agent:
                def __init__(self):
                    self.q_net = tf.keras.models.load_model("q.keras")

                def act(self, state):
                    return self.q_net.predict(state, verbose=0)


            agent = Agent()
            first = agent.act(np.reshape(start, [1, 4]))
            actions = list(map(agent.act, batches))
            """,
            reported=True,
        ),
        # A trainer's method trains on the dataset it is given: rebatched where the object of its
        # class is given a Keras-made one, as for a function's parameter.
        Example(
            """\
            import tensorflow as tf


            class Trainer:
                def __init__(self, model):
                    self.model = model

                def fit(self, train_ds, epochs):
                    return self.model.fit(train_ds, epochs=epochs)


            train_ds = tf.keras.utils.image_dataset_from_directory("photos", batch_size=32)
            trainer = Trainer(tf.keras.models.load_model("classifier.keras"))
            trainer.fit(train_ds, 3)
            """,
            """\
            import tensorflow as tf


            class Trainer:
                def __init__(self, model):
                    self.model = model

                def fit(self, train_ds, epochs):
                    return self.model.fit(train_ds, epochs=epochs)


            train_ds = tf.keras.utils.image_dataset_from_directory("photos", batch_size=32)
            trainer = Trainer(tf.keras.models.load_model("classifier.keras"))
            trainer.fit(train_ds.unbatch().batch(32, drop_remainder=True), 3)
            """,
        ),
        # Both subsets in one call, and a folder a custom loop iterates over: each rebatched where used.
        Example(
            """\
            import tensorflow as tf

            train, val = tf.keras.utils.image_dataset_from_directory(
                "photos", validation_split=0.2, subset="both", seed=7, batch_size=64)
            model = tf.keras.models.load_model("classifier.keras")
            model.fit(train, validation_data=val, epochs=3)
            """,
            """\
            import tensorflow as tf

            train, val = tf.keras.utils.image_dataset_from_directory(
                "photos", validation_split=0.2, subset="both", seed=7, batch_size=64)
            model = tf.keras.models.load_model("classifier.keras")
            model.fit(train.unbatch().batch(64, drop_remainder=True),
                      validation_data=val.unbatch().batch(64, drop_remainder=True), epochs=3)
            """,
        ),
        # The name is given another dataset after the training that reads the folder (a notebook that
        # reuses `train_ds`): that later binding does not reach `fit`, which still gets it rebatched.
        Example(
            """\
            import tensorflow as tf

            train_ds = tf.keras.utils.image_dataset_from_directory("photos", batch_size=32)
            train_ds = train_ds.cache().prefetch(tf.data.AUTOTUNE)
            model = tf.keras.models.load_model("classifier.keras")
            model.fit(train_ds, epochs=3)

            train_ds = tf.data.Dataset.list_files("photos/*/*").map(load_image)
            for image, label in train_ds.take(1):
                print(image.shape, label)
            """,
            """\
            import tensorflow as tf

            train_ds = tf.keras.utils.image_dataset_from_directory("photos", batch_size=32)
            train_ds = train_ds.cache().prefetch(tf.data.AUTOTUNE)
            model = tf.keras.models.load_model("classifier.keras")
            model.fit(train_ds.unbatch().batch(32, drop_remainder=True), epochs=3)

            train_ds = tf.data.Dataset.list_files("photos/*/*").map(load_image)
            for image, label in train_ds.take(1):
                print(image.shape, label)
            """,
        ),
        # A helper rebatches the folder it reads for `fit`, and its other call reads a whole test folder
        # in one batch on the host: rebatched there too, which may empty it, so it is said, not [fixed].
        Example(
            """\
            import tensorflow as tf


            def load_folder(path, batch_size):
                return tf.keras.utils.image_dataset_from_directory(path, image_size=(64, 64), batch_size=batch_size)


            model = tf.keras.models.load_model("classifier.keras")
            model.fit(load_folder("photos/train", 64), epochs=3)
            test_ds = load_folder("photos/test", 1000)
            images, labels = next(iter(test_ds))
            """,
            """\
            import tensorflow as tf


            def load_folder(path, batch_size):
                return tf.keras.utils.image_dataset_from_directory(path, image_size=(64, 64), batch_size=batch_size).unbatch().batch(batch_size, drop_remainder=True)


            model = tf.keras.models.load_model("classifier.keras")
            model.fit(load_folder("photos/train", 64), epochs=3)
            test_ds = load_folder("photos/test", 1000)
            images, labels = next(iter(test_ds))
            """,
        ),
        # A method of the trainer class makes the batches `fit` gets (`self.batches(...)`): batched
        # whole where the method makes them, with no report that how they are batched is unseen.
        Example(
            """\
            import tensorflow as tf


            class Trainer:
                def __init__(self, model, batch_size):
                    self.model = model
                    self.batch_size = batch_size

                def batches(self, features, labels):
                    return tf.data.Dataset.from_tensor_slices((features, labels)).batch(self.batch_size)

                def train(self, features, labels):
                    self.model.fit(self.batches(features, labels), epochs=2)
            """,
            """\
            import tensorflow as tf


            class Trainer:
                def __init__(self, model, batch_size):
                    self.model = model
                    self.batch_size = batch_size

                def batches(self, features, labels):
                    return tf.data.Dataset.from_tensor_slices((features, labels)).batch(self.batch_size, drop_remainder=True)

                def train(self, features, labels):
                    self.model.fit(self.batches(features, labels), epochs=2)
            """,
        ),
        Example(*(_FOLDER_LOOP.format(folders=folders) for folders in (
            "folders", "folders.unbatch().batch(16, drop_remainder=True)"))),
        # Windows of an array: Keras cuts them with a range, so whole batches still leave their
        # length unknown; a `.map()` gives it (with targets or without, where the windows are cut).
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            readings = np.load("meter.npy").astype("float32")
            hours = 36
            train = tf.keras.utils.timeseries_dataset_from_array(
                readings[:-hours], readings[hours:, 0], sequence_length=hours, batch_size=16)
            model = tf.keras.models.load_model("forecaster.h5")
            model.fit(train, epochs=2)
            """,
            """\
            import numpy as np
            import tensorflow as tf

            readings = np.load("meter.npy").astype("float32")
            hours = 36
            train = tf.keras.utils.timeseries_dataset_from_array(
                readings[:-hours], readings[hours:, 0], sequence_length=hours, batch_size=16)
            model = tf.keras.models.load_model("forecaster.h5")
            model.fit(train.unbatch().batch(16, drop_remainder=True).map(lambda windows, targets: (tf.ensure_shape(windows, [None, hours] + windows.shape[2:]), targets)),
                      epochs=2)
            """,
        ),
        # A file that imports only `from tensorflow import keras`: `tf` is imported for `ensure_shape`.
        Example(
            """\
            import numpy as np
            from tensorflow import keras

            readings = np.load("meter.npy")
            train = keras.preprocessing.timeseries_dataset_from_array(
                readings[:-24], readings[24:, 0], sequence_length=24, sampling_rate=2, batch_size=16)
            model = keras.models.load_model("forecaster.h5")
            model.fit(train, epochs=2)
            """,
            """\
            import numpy as np
            from tensorflow import keras
            import tensorflow as tf

            readings = np.load("meter.npy")
            train = keras.preprocessing.timeseries_dataset_from_array(
                readings[:-24], readings[24:, 0], sequence_length=24, sampling_rate=2, batch_size=16)
            model = keras.models.load_model("forecaster.h5")
            model.fit(train.unbatch().batch(16, drop_remainder=True).map(lambda windows, targets: (tf.ensure_shape(windows, [None, 24] + windows.shape[2:]), targets)),
                      epochs=2)
            """,
        ),
        # Windows and targets made apart and zipped: each part keeps its partial last batch, and
        # the port, which does not rebatch the parts of a zip, says so.
        Example(
            """\
            import tensorflow as tf

            inputs = tf.keras.utils.timeseries_dataset_from_array(series[:-1], None, sequence_length=6, batch_size=32)
            targets = tf.keras.utils.timeseries_dataset_from_array(series[6:], None, sequence_length=1, batch_size=32)
            model = tf.keras.models.load_model("forecaster.h5")
            model.fit(tf.data.Dataset.zip((inputs, targets)), epochs=2)
            """,
        ),
        # Both datasets made by one generator over the parts: each is the helper's, rebatched there.
        Example(
            """\
            import tensorflow as tf


            def windows(values, batch_size):
                return tf.keras.utils.timeseries_dataset_from_array(
                    values[:-1], values[8:], sequence_length=8, batch_size=batch_size)


            train, val = (windows(part, 16) for part in [series[:400], series[400:]])
            model = tf.keras.models.load_model("forecaster.h5")
            model.fit(train, validation_data=val, epochs=2)
            """,
            """\
            import tensorflow as tf


            def windows(values, batch_size):
                return tf.keras.utils.timeseries_dataset_from_array(
                    values[:-1], values[8:], sequence_length=8, batch_size=batch_size).unbatch().batch(batch_size, drop_remainder=True).map(lambda windows, targets: (tf.ensure_shape(windows, [None, 8] + windows.shape[2:]), targets))


            train, val = (windows(part, 16) for part in [series[:400], series[400:]])
            model = tf.keras.models.load_model("forecaster.h5")
            model.fit(train, validation_data=val, epochs=2)
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def sliding(values, width, batch_size):
                pieces = tf.keras.preprocessing.timeseries_dataset_from_array(
                    values, None, sequence_length=width + 1, batch_size=batch_size)
                return pieces.map(lambda piece: (piece[:, :-1], piece[:, -1]))


            model = tf.keras.models.load_model("forecaster.h5")
            model.fit(sliding(tf.random.normal([500, 3]), 20, 32), epochs=2)
            """,
            """\
            import tensorflow as tf


            def sliding(values, width, batch_size):
                pieces = tf.keras.preprocessing.timeseries_dataset_from_array(
                    values, None, sequence_length=width + 1, batch_size=batch_size).unbatch().batch(batch_size, drop_remainder=True).map(lambda windows: tf.ensure_shape(windows, [None, width + 1] + windows.shape[2:]))
                return pieces.map(lambda piece: (piece[:, :-1], piece[:, -1]))


            model = tf.keras.models.load_model("forecaster.h5")
            model.fit(sliding(tf.random.normal([500, 3]), 20, 32), epochs=2)
            """,
        ),
        # Windows split into inputs and labels by a `.map()` after Keras makes them: the map that
        # sets their length fits them only as made, so they are rebatched there, before the split.
        Example(
            """\
            import tensorflow as tf


            def split(window):
                return window[:, :-1], window[:, -1:, :1]


            windows = tf.keras.utils.timeseries_dataset_from_array(series, None, sequence_length=13, batch_size=32)
            windows = windows.map(split)
            model = tf.keras.models.load_model("forecaster.h5")
            model.fit(windows, epochs=2)
            """,
            """\
            import tensorflow as tf


            def split(window):
                return window[:, :-1], window[:, -1:, :1]


            windows = tf.keras.utils.timeseries_dataset_from_array(series, None, sequence_length=13, batch_size=32).unbatch().batch(32, drop_remainder=True).map(lambda windows: tf.ensure_shape(windows, [None, 13] + windows.shape[2:]))
            windows = windows.map(split)
            model = tf.keras.models.load_model("forecaster.h5")
            model.fit(windows, epochs=2)
            """,
        ),
        # The same made by a method of a class of the file and read through a property of an
        # instance (`window.train`): rebatched in the method.
        Example(
            """\
            import tensorflow as tf


            class Windows:
                def __init__(self, frame, width):
                    self.frame = frame
                    self.width = width

                def make_dataset(self, data):
                    ds = tf.keras.utils.timeseries_dataset_from_array(data, None, sequence_length=self.width + 1,
                                                                      batch_size=32)
                    return ds.map(lambda w: (w[:, :-1], w[:, -1:]))

                @property
                def train(self):
                    return self.make_dataset(self.frame)


            window = Windows(series, 12)
            model = tf.keras.models.load_model("forecaster.h5")
            model.fit(window.train, epochs=2)
            """,
            """\
            import tensorflow as tf


            class Windows:
                def __init__(self, frame, width):
                    self.frame = frame
                    self.width = width

                def make_dataset(self, data):
                    ds = tf.keras.utils.timeseries_dataset_from_array(data, None, sequence_length=self.width + 1,
                                                                      batch_size=32).unbatch().batch(32, drop_remainder=True).map(lambda windows: tf.ensure_shape(windows, [None, self.width + 1] + windows.shape[2:]))
                    return ds.map(lambda w: (w[:, :-1], w[:, -1:]))

                @property
                def train(self):
                    return self.make_dataset(self.frame)


            window = Windows(series, 12)
            model = tf.keras.models.load_model("forecaster.h5")
            model.fit(window.train, epochs=2)
            """,
        ),
        # The same given to a training function, whose loop reads it through a progress bar.
        Example(*(_FOLDER_PROGRESS.format(folders=folders) for folders in (
            "folders", "folders.unbatch().batch(16, drop_remainder=True)"))),
        # A folder dataset a helper of the file maps: still batched by Keras, rebatched where trained on.
        Example(
            """\
            import tensorflow as tf


            def to_spectrograms(ds):
                return ds.map(lambda audio, label: (tf.abs(tf.signal.stft(audio, 255, 128)), label))


            clips = tf.keras.utils.audio_dataset_from_directory("clips", batch_size=64)
            model = tf.keras.models.load_model("words.keras")
            model.fit(to_spectrograms(clips), epochs=10)
            """,
            """\
            import tensorflow as tf


            def to_spectrograms(ds):
                return ds.map(lambda audio, label: (tf.abs(tf.signal.stft(audio, 255, 128)), label))


            clips = tf.keras.utils.audio_dataset_from_directory("clips", batch_size=64)
            model = tf.keras.models.load_model("words.keras")
            model.fit(to_spectrograms(clips).unbatch().batch(64, drop_remainder=True), epochs=10)
            """,
        ),
        # Elements of no static shape: Python through `tf.numpy_function`, or ragged batches made dense.
        Example(
            """\
            import tensorflow as tf

            pairs = tf.data.Dataset.from_tensor_slices((paths, captions))
            pairs = pairs.map(lambda path, caption: (tf.numpy_function(load_features, [path], tf.float32), caption))
            model = tf.keras.models.load_model("captioner.keras")
            model.fit(pairs.batch(64, drop_remainder=True), epochs=5)
            """,
        ),
        # A shape set with `None` in it (the number of frames of a clip) is no static shape either;
        # with a size for every dimension, or padded to fixed lengths after, it is.
        Example(
            """\
            import tensorflow as tf


            def read_clip(path, label):
                frames = tf.py_function(sample_frames, [path], tf.float32)
                frames.set_shape([None, 112, 112, 3])
                return frames, label


            clips = tf.data.Dataset.from_tensor_slices((paths, labels)).map(read_clip)
            model = tf.keras.models.load_model("clips.keras")
            model.fit(clips.batch(4, drop_remainder=True), epochs=5)
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def read_clip(path, label):
                frames = tf.py_function(sample_frames, [path], tf.float32)
                frames.set_shape([16, 112, 112, 3])
                return frames, label


            def read_long_clip(path, label):
                frames = tf.py_function(all_frames, [path], tf.float32)
                frames.set_shape([None, 112, 112, 3])
                return frames, label


            clips = tf.data.Dataset.from_tensor_slices((paths, labels)).map(read_clip)
            long_clips = tf.data.Dataset.from_tensor_slices((paths, labels)).map(read_long_clip)
            long_clips = long_clips.padded_batch(4, padded_shapes=([64, 112, 112, 3], []), drop_remainder=True)
            model = tf.keras.models.load_model("clips.keras")
            model.fit(clips.batch(4, drop_remainder=True), epochs=5)
            model.fit(long_clips, epochs=5)
            """,
            reported=False,
        ),
        # A helper that maps the folder's dataset, reassigning its parameter: still the folder's batches.
        Example(
            """\
            import tensorflow as tf


            def prepare(ds, augment=False):
                ds = ds.map(lambda x, y: (x / 255.0, y))
                if augment:
                    ds = ds.map(lambda x, y: (tf.image.random_flip_left_right(x), y))
                return ds.prefetch(tf.data.AUTOTUNE)


            photos = tf.keras.utils.image_dataset_from_directory("photos", image_size=(64, 64))
            model = tf.keras.models.load_model("photos.keras")
            model.fit(prepare(photos, augment=True), epochs=2)
            """,
            """\
            import tensorflow as tf


            def prepare(ds, augment=False):
                ds = ds.map(lambda x, y: (x / 255.0, y))
                if augment:
                    ds = ds.map(lambda x, y: (tf.image.random_flip_left_right(x), y))
                return ds.prefetch(tf.data.AUTOTUNE)


            photos = tf.keras.utils.image_dataset_from_directory("photos", image_size=(64, 64))
            model = tf.keras.models.load_model("photos.keras")
            model.fit(prepare(photos, augment=True).unbatch().batch(32, drop_remainder=True), epochs=2)
            """,
        ),
        # The variable given back what the helper makes of it (`texts = prepare(texts)`): still the
        # folder's batches, followed through its earlier value.
        Example(
            """\
            import tensorflow as tf


            def prepare(ds):
                ds = ds.map(lambda text, label: (tf.strings.length(text), label))
                return ds.cache().prefetch(8)


            texts = tf.keras.utils.text_dataset_from_directory("reviews", batch_size=64)
            texts = prepare(texts)
            model = tf.keras.models.load_model("reviews.keras")
            model.fit(texts, epochs=2)
            """,
            """\
            import tensorflow as tf


            def prepare(ds):
                ds = ds.map(lambda text, label: (tf.strings.length(text), label))
                return ds.cache().prefetch(8)


            texts = tf.keras.utils.text_dataset_from_directory("reviews", batch_size=64)
            texts = prepare(texts)
            model = tf.keras.models.load_model("reviews.keras")
            model.fit(texts.unbatch().batch(64, drop_remainder=True), epochs=2)
            """,
        ),
        # Images decoded from their files are as large as each file: no static shape unless resized.
        Example(
            """\
            import tensorflow as tf


            def load(path, label):
                return tf.io.decode_jpeg(tf.io.read_file(path), channels=3), label


            photos = tf.data.Dataset.from_tensor_slices((paths, labels)).map(load).batch(16, drop_remainder=True)
            model = tf.keras.models.load_model("photos.keras")
            model.fit(photos, epochs=2)
            """,
        ),
        # The same for the batches a loop feeds to a custom training step, compiled for one shape too.
        Example(
            """\
            import tensorflow as tf


            def load(path, label):
                return tf.io.decode_jpeg(tf.io.read_file(path), channels=3), label


            @tf.function
            def train_step(images, labels):
                with tf.GradientTape() as tape:
                    loss = loss_fn(labels, model(images, training=True))
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


            photos = tf.data.Dataset.from_tensor_slices((paths, labels)).map(load).batch(16, drop_remainder=True)
            for images, labels in photos:
                train_step(images, labels)
            """,
        ),
        # Resized in a map after the one that decodes them to three channels: one static shape.
        Example(
            """\
            import tensorflow as tf

            photos = tf.data.Dataset.from_tensor_slices((paths, labels))
            photos = photos.map(lambda path, label: (tf.io.decode_png(tf.io.read_file(path), channels=3), label))
            photos = photos.map(lambda image, label: (tf.image.resize(image, (96, 96)), label))
            model = tf.keras.models.load_model("photos.keras")
            model.fit(photos.batch(16, drop_remainder=True), epochs=2)
            """,
            reported=False,
        ),
        # Resized, but decoded with the channels of each file (no `channels`): the last dimension is
        # unknown, for anchors and positives zipped into the pairs that train.
        Example(
            """\
            import tensorflow as tf


            def load(path):
                return tf.image.resize(tf.io.decode_jpeg(tf.io.read_file(path)), (96, 96))


            anchors = tf.data.Dataset.from_tensor_slices(anchor_paths).map(load)
            positives = tf.data.Dataset.from_tensor_slices(positive_paths).map(load)
            pairs = tf.data.Dataset.zip(((anchors, positives), same)).batch(16, drop_remainder=True)
            model = tf.keras.models.load_model("siamese.keras")
            model.fit(pairs, epochs=2)
            """,
        ),
        # Rows sliced from padded arrays all have one length already: `padded_batch` pads nothing.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras.preprocessing.sequence import pad_sequences

            tokens = pad_sequences(token_lists, maxlen=64)
            train = tf.data.Dataset.from_tensor_slices((tokens, labels)).shuffle(1000).padded_batch(32, drop_remainder=True)
            model = tf.keras.models.load_model("reviews.keras")
            model.fit(train, epochs=2)
            """,
            reported=False,
        ),
        # A text layer without `output_sequence_length` pads each batch to its longest text: batched
        # again, the rows would not stack; reported, for a person to pick the length.
        Example(
            """\
            import tensorflow as tf

            vectorize = tf.keras.layers.TextVectorization(max_tokens=5000)
            vectorize.adapt(texts)
            train = tf.data.Dataset.from_tensor_slices((texts, labels)).batch(32, drop_remainder=True)
            train = train.map(lambda text, label: (vectorize(text), label))
            model = tf.keras.models.load_model("reviews.keras")
            model.fit(train, epochs=2)
            """,
        ),
        # A text layer run on one caption at a time, before the batching (a dual encoder's
        # captions zipped with its images): the row of one text has no static length; reported.
        Example(
            """\
            import tensorflow as tf

            vectorize = tf.keras.layers.TextVectorization(max_tokens=5000, output_sequence_length=16)
            vectorize.adapt(captions)
            tokens = tf.data.Dataset.from_tensor_slices(captions).map(vectorize)
            pairs = tf.data.Dataset.zip((tf.data.Dataset.from_tensor_slices(images), tokens))
            model = tf.keras.models.load_model("dual_encoder.keras")
            model.fit(pairs.batch(32, drop_remainder=True), epochs=2)
            """,
        ),
        # The same with the length stated in the map (`tf.ensure_shape`): nothing to report.
        Example(
            """\
            import tensorflow as tf

            vectorize = tf.keras.layers.TextVectorization(max_tokens=5000, output_sequence_length=16)
            vectorize.adapt(captions)
            tokens = tf.data.Dataset.from_tensor_slices(captions).map(lambda text: tf.ensure_shape(vectorize(text), [16]))
            pairs = tf.data.Dataset.zip((tf.data.Dataset.from_tensor_slices(images), tokens))
            model = tf.keras.models.load_model("dual_encoder.keras")
            model.fit(pairs.batch(32, drop_remainder=True), epochs=2)
            """,
            reported=False,
        ),
        # The same layer mapped over the batches of a folder of texts: Keras made the batches, and
        # the port cannot batch them again into one shape; reported, for a person to pick the length.
        Example(
            """\
            import tensorflow as tf

            raw_train = tf.keras.utils.text_dataset_from_directory("reviews/train", batch_size=32)
            vectorize = tf.keras.layers.TextVectorization(max_tokens=5000)
            vectorize.adapt(raw_train.map(lambda text, label: text))
            train = raw_train.map(lambda text, label: (vectorize(text), label)).cache()
            model = tf.keras.models.load_model("reviews.keras")
            model.fit(train, epochs=2)
            """,
        ),
        # The same layer with one length, run after the `.batch()` of a function of the file: its
        # batches have no static size, and the batch size is that function's name: reported.
        Example(
            """\
            import tensorflow as tf


            def pipeline(texts, labels, vectorize, batch_size):
                dataset = tf.data.Dataset.from_tensor_slices((texts, labels)).batch(batch_size, drop_remainder=True)
                return dataset.map(lambda text, label: (vectorize(text), label))


            vectorize = tf.keras.layers.TextVectorization(max_tokens=5000, output_sequence_length=40)
            vectorize.adapt(texts)
            model = tf.keras.models.load_model("reviews.keras")
            model.fit(pipeline(texts, labels, vectorize, 32), epochs=2)
            """,
        ),
        # Records whose token lists are parsed as sparse tensors, batch by batch: as long as each
        # batch's longest list. A map that parses fixed-length features is not reported.
        Example(
            """\
            import tensorflow as tf

            SPEC = {"tokens": tf.io.VarLenFeature(tf.int64), "label": tf.io.FixedLenFeature([], tf.int64)}
            FIXED = {"tokens": tf.io.FixedLenFeature([64], tf.int64), "label": tf.io.FixedLenFeature([], tf.int64)}


            def parse(records):
                parsed = tf.io.parse_example(records, SPEC)
                return parsed["tokens"], parsed["label"]


            def parse_fixed(records):
                parsed = tf.io.parse_example(records, FIXED)
                return parsed["tokens"], parsed["label"]


            train = tf.data.TFRecordDataset(["train.tfrecord"]).batch(32, drop_remainder=True)
            train = train.map(parse)
            val = tf.data.TFRecordDataset(["val.tfrecord"]).batch(32, drop_remainder=True)
            val = val.map(parse_fixed)
            model = tf.keras.models.load_model("tagger.keras")
            model.fit(train, validation_data=val, epochs=2)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            SPEC = {"tokens": tf.io.FixedLenFeature([64], tf.int64), "label": tf.io.FixedLenFeature([], tf.int64)}


            def parse(records):
                parsed = tf.io.parse_example(records, SPEC)
                return parsed["tokens"], parsed["label"]


            train = tf.data.TFRecordDataset(["train.tfrecord"]).batch(32, drop_remainder=True).map(parse)
            model = tf.keras.models.load_model("tagger.keras")
            model.fit(train, epochs=2)
            """,
            reported=False,
        ),
        # CSV lines split into pieces on the way to training: as many as each line holds. A map that
        # gives them one length (`tf.reshape`) is not reported, nor is a map of another dataset.
        Example(
            """\
            import tensorflow as tf


            def parse_line(line):
                values = tf.strings.to_number(tf.strings.split(line, ","))
                return values[:-1], values[-1:]


            def parse_fixed(line):
                values = tf.reshape(tf.strings.to_number(tf.strings.split(line, ",")), [9])
                return values[:-1], values[-1:]


            train = tf.data.TextLineDataset("train.csv").map(parse_line).batch(32, drop_remainder=True)
            val = tf.data.TextLineDataset("val.csv").map(parse_fixed).batch(32, drop_remainder=True)
            model = tf.keras.models.load_model("prices.keras")
            model.fit(train, validation_data=val, epochs=2)
            """,
        ),
        # OCR labels split into characters and looked up: as many ids as each label has characters, even
        # when every label has five (the graph does not know it).
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras import layers

            char_to_num = layers.StringLookup(vocabulary=list("abcdefgh"), mask_token=None)


            def encode(path, text):
                image = tf.image.resize(tf.io.decode_png(tf.io.read_file(path), channels=1), (50, 200))
                return image, char_to_num(tf.strings.unicode_split(text, input_encoding="UTF-8"))


            train = tf.data.Dataset.from_tensor_slices((paths, texts)).map(encode).batch(16, drop_remainder=True)
            model = tf.keras.models.load_model("reader.keras")
            model.fit(train, epochs=2)
            """,
        ),
        # The same labels given their length in the map, or padded to fixed lengths by the batch.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras import layers

            char_to_num = layers.StringLookup(vocabulary=list("abcdefgh"), mask_token=None)


            def encode(path, text):
                image = tf.image.resize(tf.io.decode_png(tf.io.read_file(path), channels=1), (50, 200))
                return image, tf.ensure_shape(char_to_num(tf.strings.unicode_split(text, "UTF-8")), (5,))


            def encode_any(path, text):
                image = tf.image.resize(tf.io.decode_png(tf.io.read_file(path), channels=1), (50, 200))
                return image, char_to_num(tf.strings.unicode_split(text, "UTF-8"))


            train = tf.data.Dataset.from_tensor_slices((paths, texts)).map(encode).batch(16, drop_remainder=True)
            val = tf.data.Dataset.from_tensor_slices((paths, texts)).map(encode_any)
            val = val.padded_batch(16, padded_shapes=((50, 200, 1), (12,)), drop_remainder=True)
            model = tf.keras.models.load_model("reader.keras")
            model.fit(train, validation_data=val, epochs=2)
            """,
            reported=False,
        ),
        # A folder name picked from a file's path (`parts[-2]`) is one string, a scalar: its shape is
        # static however many pieces the path holds.
        Example(
            """\
            import tensorflow as tf


            def load(path):
                parts = tf.strings.split(path, "/")
                label = tf.cast(parts[-2] == "yes", tf.int32)
                image = tf.image.resize(tf.io.decode_png(tf.io.read_file(path), channels=1), (64, 64))
                return image, label


            train = tf.data.Dataset.list_files("clips/*/*.png").map(load).batch(32, drop_remainder=True)
            model = tf.keras.models.load_model("clips.keras")
            model.fit(train, epochs=2)
            """,
            reported=False,
        ),
        # WAV files decoded without `desired_samples`: each clip as long as its file, even when padded
        # with `tf.concat` after; a map that decodes them to one length is not reported.
        Example(
            """\
            import tensorflow as tf


            def waveform(path, label):
                audio, _ = tf.audio.decode_wav(tf.io.read_file(path))
                audio = tf.squeeze(audio, axis=-1)[:16000]
                return tf.concat([audio, tf.zeros([16000] - tf.shape(audio))], 0), label


            def fixed_waveform(path, label):
                audio, _ = tf.audio.decode_wav(tf.io.read_file(path), desired_channels=1, desired_samples=16000)
                return tf.squeeze(audio, axis=-1), label


            train = tf.data.Dataset.from_tensor_slices((train_paths, train_labels)).map(waveform)
            val = tf.data.Dataset.from_tensor_slices((val_paths, val_labels)).map(fixed_waveform)
            model = tf.keras.models.load_model("keywords.keras")
            model.fit(train.batch(32, drop_remainder=True), validation_data=val.batch(32, drop_remainder=True))
            """,
        ),
        # A ragged batch padded with a default value but no `shape`: still as long as its longest row.
        Example(
            """\
            import tensorflow as tf

            reviews = tf.data.Dataset.from_tensor_slices((tf.ragged.constant(token_lists), labels))
            reviews = reviews.batch(32, drop_remainder=True).map(lambda s, y: (s.to_tensor(default_value=0), y))
            model = tf.keras.models.load_model("reviews.keras")
            model.fit(reviews, epochs=5)
            """,
        ),
        # `drop_remainder` held in a parameter that says nothing else: True in each call whose dataset
        # trains or evaluates; a call read only on the host keeps its last batch.
        Example(
            """\
            import tensorflow as tf


            def make_batches(x, y, batch_size, drop_remainder=False):
                return tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size, drop_remainder=drop_remainder)


            model = tf.keras.models.load_model("scorer.keras")
            model.fit(make_batches(x_train, y_train, 64), epochs=3)
            model.evaluate(make_batches(x_val, y_val, 64, False))
            for features, labels in make_batches(x_val, y_val, 64):
                print(features.shape)
            """,
            """\
            import tensorflow as tf


            def make_batches(x, y, batch_size, drop_remainder=False):
                return tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size, drop_remainder=drop_remainder)


            model = tf.keras.models.load_model("scorer.keras")
            model.fit(make_batches(x_train, y_train, 64, drop_remainder=True), epochs=3)
            model.evaluate(make_batches(x_val, y_val, 64, True))
            for features, labels in make_batches(x_val, y_val, 64):
                print(features.shape)
            """,
        ),
        # A dataset a helper returns, handed to a function whose parameter reaches `fit`: the helper's
        # batch drops its partial last one, as when `fit` is given the helper's call directly.
        Example(
            """\
            import tensorflow as tf


            def make_dataset(ds, training):
                if training:
                    ds = ds.shuffle(1024)
                return ds.batch(128).prefetch(tf.data.AUTOTUNE)


            def train_and_evaluate(model, train_ds, val_ds):
                model.fit(train_ds, validation_data=val_ds, epochs=3)


            model = tf.keras.models.load_model("scorer.keras")
            train_and_evaluate(model, make_dataset(train, True), make_dataset(val, False))
            """,
            """\
            import tensorflow as tf


            def make_dataset(ds, training):
                if training:
                    ds = ds.shuffle(1024)
                return ds.batch(128, drop_remainder=True).prefetch(tf.data.AUTOTUNE)


            def train_and_evaluate(model, train_ds, val_ds):
                model.fit(train_ds, validation_data=val_ds, epochs=3)


            model = tf.keras.models.load_model("scorer.keras")
            train_and_evaluate(model, make_dataset(train, True), make_dataset(val, False))
            """,
        ),
        # The same for the module's dataset that a function trains on without binding it.
        Example(
            """\
            import tensorflow as tf


            def make_dataset(ds):
                return ds.shuffle(1024).batch(128)


            train_dataset = make_dataset(tf.data.TFRecordDataset("train.tfrecord").map(parse))


            def run_experiment(model):
                model.fit(train_dataset, epochs=3)


            run_experiment(tf.keras.models.load_model("scorer.keras"))
            """,
            """\
            import tensorflow as tf


            def make_dataset(ds):
                return ds.shuffle(1024).batch(128, drop_remainder=True)


            train_dataset = make_dataset(tf.data.TFRecordDataset("train.tfrecord").map(parse))


            def run_experiment(model):
                model.fit(train_dataset, epochs=3)


            run_experiment(tf.keras.models.load_model("scorer.keras"))
            """,
        ),
        # A Keras-made dataset of the module that a function trains on: rebatched where the function
        # reads it, with the module's batch size.
        Example(
            """\
            import tensorflow as tf

            BATCH_SIZE = 32
            train_ds = tf.keras.utils.image_dataset_from_directory("photos", batch_size=BATCH_SIZE)


            def run_experiment(model):
                model.fit(train_ds, epochs=3)


            run_experiment(tf.keras.models.load_model("scorer.keras"))
            """,
            """\
            import tensorflow as tf

            BATCH_SIZE = 32
            train_ds = tf.keras.utils.image_dataset_from_directory("photos", batch_size=BATCH_SIZE)


            def run_experiment(model):
                model.fit(train_ds.unbatch().batch(BATCH_SIZE, drop_remainder=True), epochs=3)


            run_experiment(tf.keras.models.load_model("scorer.keras"))
            """,
        ),
        # A call in the braces of an f-string stays on one line, however long: the SDK's Python
        # (before 3.12) ends such an f-string at a line break.
        Example(
            """\
            import tensorflow as tf

            test_ds = tf.keras.utils.image_dataset_from_directory("photos/test", image_size=(128, 128), batch_size=64)
            model = tf.keras.models.load_model("scorer.keras")
            print(f"test loss and accuracy: {model.evaluate(test_ds, verbose=0)}")
            """,
            """\
            import tensorflow as tf

            test_ds = tf.keras.utils.image_dataset_from_directory("photos/test", image_size=(128, 128), batch_size=64)
            model = tf.keras.models.load_model("scorer.keras")
            print(f"test loss and accuracy: {model.evaluate(test_ds.unbatch().batch(64, drop_remainder=True), verbose=0)}")
            """,
        ),
        # ... and reported when the function names that size otherwise.
        Example(
            """\
            import tensorflow as tf

            BATCH_SIZE = 32
            train_ds = tf.keras.utils.image_dataset_from_directory("photos", batch_size=BATCH_SIZE)


            def run_experiment(model, BATCH_SIZE=8):
                model.fit(train_ds, epochs=3)


            run_experiment(tf.keras.models.load_model("scorer.keras"))
            """,
        ),
        # A flag that also shuffles: turning it on for the validation data would shuffle it too, so
        # the batch itself drops when every call trains or evaluates on what the function returns...
        Example(
            """\
            import tensorflow as tf


            def make_batches(x, y, training):
                ds = tf.data.Dataset.from_tensor_slices((x, y))
                if training:
                    ds = ds.shuffle(4096)
                return ds.batch(64, drop_remainder=training)


            model = tf.keras.models.load_model("scorer.keras")
            model.fit(make_batches(x_train, y_train, True), validation_data=make_batches(x_val, y_val, False))
            """,
            """\
            import tensorflow as tf


            def make_batches(x, y, training):
                ds = tf.data.Dataset.from_tensor_slices((x, y))
                if training:
                    ds = ds.shuffle(4096)
                return ds.batch(64, drop_remainder=True)


            model = tf.keras.models.load_model("scorer.keras")
            model.fit(make_batches(x_train, y_train, True), validation_data=make_batches(x_val, y_val, False))
            """,
        ),
        # ... and is reported when one call's dataset is for `predict`, which would lose answers.
        Example(
            """\
            import tensorflow as tf


            def make_batches(x, y, training):
                ds = tf.data.Dataset.from_tensor_slices((x, y))
                if training:
                    ds = ds.shuffle(4096)
                return ds.batch(64, drop_remainder=training)


            model = tf.keras.models.load_model("scorer.keras")
            model.fit(make_batches(x_train, y_train, True), epochs=2)
            scores = model.predict(make_batches(x_test, y_test, False))
            """,
        ),
        # Step counts rounded up for the partial last batch that is now dropped: counted down to the
        # whole batches; a count made elsewhere is reported.
        Example(
            """\
            import math
            import tensorflow as tf

            val_ds = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(BATCH_SIZE)
            model = tf.keras.models.load_model("scorer.keras")
            model.fit(train_ds, epochs=3, validation_data=val_ds, validation_steps=math.ceil(len(x_val) / BATCH_SIZE))
            model.evaluate(val_ds, steps=len(x_val) // BATCH_SIZE + 1)
            """,
            """\
            import math
            import tensorflow as tf

            val_ds = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(BATCH_SIZE, drop_remainder=True)
            model = tf.keras.models.load_model("scorer.keras")
            model.fit(train_ds, epochs=3, validation_data=val_ds, validation_steps=len(x_val) // BATCH_SIZE)
            model.evaluate(val_ds, steps=len(x_val) // BATCH_SIZE)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            test_ds = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(64)
            test_steps = -(-len(x_test) // 64)
            model = tf.keras.models.load_model("scorer.keras")
            model.evaluate(test_ds, steps=test_steps)
            print(f"{test_steps} batches")
            """,
            """\
            import tensorflow as tf

            test_ds = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(64, drop_remainder=True)
            test_steps = -(-len(x_test) // 64)
            model = tf.keras.models.load_model("scorer.keras")
            model.evaluate(test_ds, steps=test_steps)
            print(f"{test_steps} batches")
            """,
        ),
        # A helper that repeats only its training branch: the other branch's batches run out, so
        # the step count of what it makes for evaluation is counted down too.
        Example(
            """\
            import tensorflow as tf


            def make(x, y, training):
                ds = tf.data.Dataset.from_tensor_slices((x, y))
                if training:
                    ds = ds.shuffle(1024).repeat().batch(32)
                else:
                    ds = ds.batch(32).cache()
                return ds


            model = tf.keras.models.load_model("scorer.keras")
            model.evaluate(make(x_val, y_val, False), steps=-(-len(x_val) // 32))
            """,
            """\
            import tensorflow as tf


            def make(x, y, training):
                ds = tf.data.Dataset.from_tensor_slices((x, y))
                if training:
                    ds = ds.shuffle(1024).repeat().batch(32, drop_remainder=True)
                else:
                    ds = ds.batch(32, drop_remainder=True).cache()
                return ds


            model = tf.keras.models.load_model("scorer.keras")
            model.evaluate(make(x_val, y_val, False), steps=len(x_val) // 32)
            """,
        ),
        # The same when only the repeat is under the flag and the batching follows: a call that
        # leaves the flag at its False default gets a dataset that is not repeated.
        Example(
            """\
            import math
            import tensorflow as tf


            def make(x, y, shuffle=False):
                ds = tf.data.Dataset.from_tensor_slices((x, y))
                if shuffle:
                    ds = ds.shuffle(1024).repeat()
                return ds.batch(32)


            model = tf.keras.models.load_model("scorer.keras")
            model.fit(make(x, y, shuffle=True), epochs=2, steps_per_epoch=math.ceil(len(x) / 32),
                      validation_data=make(x_val, y_val), validation_steps=math.ceil(len(x_val) / 32))
            """,
            """\
            import math
            import tensorflow as tf


            def make(x, y, shuffle=False):
                ds = tf.data.Dataset.from_tensor_slices((x, y))
                if shuffle:
                    ds = ds.shuffle(1024).repeat()
                return ds.batch(32, drop_remainder=True)


            model = tf.keras.models.load_model("scorer.keras")
            model.fit(make(x, y, shuffle=True), epochs=2, steps_per_epoch=math.ceil(len(x) / 32),
                      validation_data=make(x_val, y_val), validation_steps=len(x_val) // 32)
            """,
        ),
        # The same for a Keras-made dataset the port rebatches.
        Example(
            """\
            import math
            import tensorflow as tf

            val_ds = tf.keras.utils.image_dataset_from_directory("val", image_size=(64, 64), batch_size=32)
            model = tf.keras.models.load_model("scorer.keras")
            model.evaluate(val_ds, steps=math.ceil(val_count / 32))
            """,
            """\
            import math
            import tensorflow as tf

            val_ds = tf.keras.utils.image_dataset_from_directory("val", image_size=(64, 64), batch_size=32)
            model = tf.keras.models.load_model("scorer.keras")
            model.evaluate(val_ds.unbatch().batch(32, drop_remainder=True), steps=val_count // 32)
            """,
        ),
        # Its batches counted as made (`len`, `cardinality`), partial last one included: said, as
        # the count of whole batches is not known there.
        Example(
            """\
            import tensorflow as tf

            train_ds = tf.keras.utils.image_dataset_from_directory("train", image_size=(64, 64), batch_size=8)
            steps = tf.data.experimental.cardinality(train_ds).numpy()
            model = tf.keras.models.load_model("scorer.keras")
            model.fit(train_ds, steps_per_epoch=len(train_ds), epochs=3)
            model.evaluate(train_ds, steps=steps)
            """,
            """\
            import tensorflow as tf

            train_ds = tf.keras.utils.image_dataset_from_directory("train", image_size=(64, 64), batch_size=8)
            steps = tf.data.experimental.cardinality(train_ds).numpy()
            model = tf.keras.models.load_model("scorer.keras")
            model.fit(train_ds.unbatch().batch(8, drop_remainder=True), steps_per_epoch=len(train_ds),
                      epochs=3)
            model.evaluate(train_ds.unbatch().batch(8, drop_remainder=True), steps=steps)
            """,
        ),
        # Batches a layer is adapted on are read on the host: each line counts, none is dropped.
        Example(
            """\
            import tensorflow as tf

            lines = tf.data.TextLineDataset("corpus.txt")
            vectorize = tf.keras.layers.TextVectorization(max_tokens=5000)
            vectorize.adapt(lines.batch(1024))
            """,
            reported=False,
        ),
        # The same through a variable, the way scripts name the text they adapt on: left alone.
        Example(
            """\
            import tensorflow as tf

            texts = tf.data.Dataset.from_tensor_slices(sentences).batch(64)
            vectorize = tf.keras.layers.TextVectorization(max_tokens=5000)
            vectorize.adapt(texts)
            """,
            reported=False,
        ),
        # `predict` reads a dataset `evaluate` reads too: it lacks answers for the dropped last batch.
        Example(
            """\
            import tensorflow as tf

            test = tf.data.Dataset.from_tensor_slices((images, labels)).batch(64)
            model = tf.keras.models.load_model("digits.keras")
            model.evaluate(test)
            predicted = model.predict(test).argmax(axis=1)
            """,
            """\
            import tensorflow as tf

            test = tf.data.Dataset.from_tensor_slices((images, labels)).batch(64, drop_remainder=True)
            model = tf.keras.models.load_model("digits.keras")
            model.evaluate(test)
            predicted = model.predict(test).argmax(axis=1)
            """,
        ),
        # The padded shapes held in a variable, with a `None` (each batch padded to its longest element).
        Example(
            """\
            import tensorflow as tf

            SHAPES = ([None], [])
            pairs = tf.data.Dataset.from_generator(read_pairs, output_signature=pair_spec)
            model = tf.keras.models.load_model("tagger.keras")
            model.fit(pairs.padded_batch(32, padded_shapes=SHAPES, drop_remainder=True), epochs=2)
            """,
        ),
        # A custom loop keeps what its predict step answers: the dropped last batch is said, not hidden.
        # Padded to the longest element of each batch (`None` in `padded_shapes`): reported.
        Example(_ANSWERS_KEPT.format(drop=""), _ANSWERS_KEPT.format(drop=", drop_remainder=True")),
        # A loop of the module that only answers, through a `tf.function`: when IPU111 runs it through
        # `strategy.run`, its compiled step takes batches of one shape and the dropped last batch is
        # said (the `keras/infer_answers_kept_at_top` fixture); alone, the loop stays on the host, as it is.
        Example(_ANSWERED_AT_TOP, reported=False),
        # Data from where the porter cannot look: an object's attribute, another module's loader.
        Example(
            """\
            import tensorflow as tf
            from readings import load_split

            windows = WindowMaker(width=24)
            model = tf.keras.models.load_model("forecaster.keras")
            model.fit(windows.train, epochs=5)
            model.evaluate(load_split("test"))
            """,
        ),
        # Batched only to parse many rows at once, then split back into rows: left alone; the
        # batches the model gets are whole.
        Example(
            """\
            import tensorflow as tf

            rows = tf.data.experimental.CsvDataset("table.csv", [0.0] * 9)
            rows = rows.batch(4096).map(split_features).unbatch()
            model.fit(rows.shuffle(512).batch(64), epochs=2)
            """,
            """\
            import tensorflow as tf

            rows = tf.data.experimental.CsvDataset("table.csv", [0.0] * 9)
            rows = rows.batch(4096).map(split_features).unbatch()
            model.fit(rows.shuffle(512).batch(64, drop_remainder=True), epochs=2)
            """,
        ),
        # The same over several lines (`ds = ds.batch(n)`, `ds = ds.map(...)`, `ds = ds.unbatch()`).
        Example(
            """\
            import tensorflow as tf


            def rows(images, labels, batch_size):
                ds = tf.data.Dataset.from_tensor_slices((images, labels))
                ds = ds.batch(1024)
                ds = ds.map(lambda x, y: (tf.cast(x, tf.float32) / 255.0, y))
                ds = ds.unbatch()
                return ds.shuffle(4096).batch(batch_size)


            model.fit(rows(images, labels, 64), epochs=2)
            """,
            """\
            import tensorflow as tf


            def rows(images, labels, batch_size):
                ds = tf.data.Dataset.from_tensor_slices((images, labels))
                ds = ds.batch(1024)
                ds = ds.map(lambda x, y: (tf.cast(x, tf.float32) / 255.0, y))
                ds = ds.unbatch()
                return ds.shuffle(4096).batch(batch_size, drop_remainder=True)


            model.fit(rows(images, labels, 64), epochs=2)
            """,
        ),
        # Batched rows read twice (`parsed` feeds `fit` as batches too): the batching reaches the model.
        Example(
            """\
            import tensorflow as tf

            parsed = tf.data.TFRecordDataset("rows.tfrecord").batch(512)
            rows = parsed.map(parse_rows).unbatch()
            model.fit(parsed.map(parse_rows), epochs=2)
            """,
            """\
            import tensorflow as tf

            parsed = tf.data.TFRecordDataset("rows.tfrecord").batch(512, drop_remainder=True)
            rows = parsed.map(parse_rows).unbatch()
            model.fit(parsed.map(parse_rows), epochs=2)
            """,
        ),
        # Split in one line (`train, val = full.take(n), full.skip(n)`): each part is a dataset.
        Example(
            """\
            import tensorflow as tf

            full = tf.data.Dataset.from_tensor_slices((features, targets)).shuffle(2048)
            train, val = full.take(1800), full.skip(1800)
            model.fit(train.batch(64), validation_data=val.batch(64), epochs=2)
            """,
            """\
            import tensorflow as tf

            full = tf.data.Dataset.from_tensor_slices((features, targets)).shuffle(2048)
            train, val = full.take(1800), full.skip(1800)
            model.fit(train.batch(64, drop_remainder=True), validation_data=val.batch(64, drop_remainder=True), epochs=2)
            """,
        ),
        # Batched in a helper, then zipped into what `fit` gets: the helper's batches reach training.
        Example(
            """\
            import tensorflow as tf


            def batched(stream, size):
                return stream.shuffle(512).batch(size)


            images = batched(tf.data.Dataset.from_tensor_slices(x), 64)
            labels = batched(tf.data.Dataset.from_tensor_slices(y), 64)
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.fit(tf.data.Dataset.zip((images, labels)), epochs=2)
            """,
            """\
            import tensorflow as tf


            def batched(stream, size):
                return stream.shuffle(512).batch(size, drop_remainder=True)


            images = batched(tf.data.Dataset.from_tensor_slices(x), 64)
            labels = batched(tf.data.Dataset.from_tensor_slices(y), 64)
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.fit(tf.data.Dataset.zip((images, labels)), epochs=2)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            ds = tf.data.Dataset.range(100).batch(32)
            """,
            """\
            import tensorflow as tf

            ds = tf.data.Dataset.range(100).batch(32, drop_remainder=True)
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def pipeline(x):
                ds = tf.data.Dataset.from_tensor_slices(x)
                ds = ds.shuffle(1000)
                return ds.batch(64, drop_remainder=False)
            """,
            """\
            import tensorflow as tf


            def pipeline(x):
                ds = tf.data.Dataset.from_tensor_slices(x)
                ds = ds.shuffle(1000)
                return ds.batch(64, drop_remainder=True)
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def prepare(ds, batch_size):
                ds = ds.shuffle(1000).batch(batch_size)
                return ds.prefetch(tf.data.AUTOTUNE)


            def main(raw):
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                train = prepare(raw, 64)
                model.fit(train, epochs=3)
            """,
            """\
            import tensorflow as tf


            def prepare(ds, batch_size):
                ds = ds.shuffle(1000).batch(batch_size, drop_remainder=True)
                return ds.prefetch(tf.data.AUTOTUNE)


            def main(raw):
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                train = prepare(raw, 64)
                model.fit(train, epochs=3)
            """,
        ),
        # A dataset that comes from where the porter does not look (a loader of the file, a builder)
        # is batched in sight of `fit`: that batch gets it.
        Example(
            """\
            import tensorflow as tf
            import tensorflow_datasets as tfds

            train_split, test_split = tfds.builder("digits").as_dataset(split=("train", "test"))
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
            model.fit(train_split.shuffle(512).batch(64), epochs=2)
            """,
            """\
            import tensorflow as tf
            import tensorflow_datasets as tfds

            train_split, test_split = tfds.builder("digits").as_dataset(split=("train", "test"))
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
            model.fit(train_split.shuffle(512).batch(64, drop_remainder=True), epochs=2)
            """,
        ),
        # Only `predict` reads it: without IPU107, which pads the arrays it is made from (`--select IPU105`),
        # the last answers are lost, which the port says.
        Example(
            """\
            import tensorflow as tf

            encoder = tf.keras.models.load_model("encoder.keras")
            vectors = encoder.predict(tf.data.Dataset.from_tensor_slices(rows).batch(128))
            """,
            """\
            import tensorflow as tf

            encoder = tf.keras.models.load_model("encoder.keras")
            vectors = encoder.predict(tf.data.Dataset.from_tensor_slices(rows).batch(128, drop_remainder=True))
            """,
        ),
        # A string layer mapped over whole batches gives batches of no static size: batched again
        # where `fit` reads them.
        Example(
            """\
            import tensorflow as tf

            vectorizer = tf.keras.layers.TextVectorization(max_tokens=5000, output_sequence_length=64)
            train_ds = raw_train.batch(32, drop_remainder=True).map(lambda text, label: (vectorizer(text), label))
            model = tf.keras.Sequential([tf.keras.layers.Embedding(5000, 16), tf.keras.layers.Dense(1)])
            model.fit(train_ds, epochs=2)
            """,
            """\
            import tensorflow as tf

            vectorizer = tf.keras.layers.TextVectorization(max_tokens=5000, output_sequence_length=64)
            train_ds = raw_train.batch(32, drop_remainder=True).map(lambda text, label: (vectorizer(text), label))
            model = tf.keras.Sequential([tf.keras.layers.Embedding(5000, 16), tf.keras.layers.Dense(1)])
            model.fit(train_ds.unbatch().batch(32, drop_remainder=True), epochs=2)
            """,
        ),
        # So does a TF Hub layer (or a loaded saved model): its graph gives the shapes it was saved with.
        Example(
            """\
            import tensorflow as tf
            import tensorflow_hub as hub

            preprocess = hub.KerasLayer("https://tfhub.dev/tensorflow/some-preprocess/3")
            train_ds = raw_train.batch(32).map(lambda text, label: (preprocess(text), label))
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.fit(train_ds, epochs=2)
            """,
            """\
            import tensorflow as tf
            import tensorflow_hub as hub

            preprocess = hub.KerasLayer("https://tfhub.dev/tensorflow/some-preprocess/3")
            train_ds = raw_train.batch(32, drop_remainder=True).map(lambda text, label: (preprocess(text), label))
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.fit(train_ds.unbatch().batch(32, drop_remainder=True), epochs=2)
            """,
        ),
        # A Keras-made dataset a helper returns is rebatched where `fit` reads it; when the helper
        # picks the batch size from its own parameter, where the helper makes it.
        Example(
            """\
            import tensorflow as tf


            def folder_dataset(path):
                return tf.keras.utils.image_dataset_from_directory(path, image_size=(64, 64), batch_size=16)


            train_ds = folder_dataset("train")
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(3)])
            model.fit(train_ds, epochs=2)
            """,
            """\
            import tensorflow as tf


            def folder_dataset(path):
                return tf.keras.utils.image_dataset_from_directory(path, image_size=(64, 64), batch_size=16)


            train_ds = folder_dataset("train")
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(3)])
            model.fit(train_ds.unbatch().batch(16, drop_remainder=True), epochs=2)
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def folder_dataset(path, batch_size):
                return tf.keras.utils.image_dataset_from_directory(path, image_size=(64, 64), batch_size=batch_size)


            train_ds = folder_dataset("train", 16)
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(3)])
            model.fit(train_ds, epochs=2)
            """,
            """\
            import tensorflow as tf


            def folder_dataset(path, batch_size):
                return tf.keras.utils.image_dataset_from_directory(path, image_size=(64, 64), batch_size=batch_size).unbatch().batch(batch_size, drop_remainder=True)


            train_ds = folder_dataset("train", 16)
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(3)])
            model.fit(train_ds, epochs=2)
            """,
        ),
        # The helper reads the class names, which a rebatched dataset no longer has: rebatched where
        # it is returned, after the read; read by the caller, it is said instead.
        Example(
            """\
            import tensorflow as tf


            def folder_dataset(path, batch_size):
                images = tf.keras.utils.image_dataset_from_directory(path, image_size=(64, 64), batch_size=batch_size)
                return images.prefetch(2), len(images.class_names)


            train_ds, classes = folder_dataset("train", 16)
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(classes)])
            model.fit(train_ds, epochs=2)
            """,
            """\
            import tensorflow as tf


            def folder_dataset(path, batch_size):
                images = tf.keras.utils.image_dataset_from_directory(path, image_size=(64, 64), batch_size=batch_size)
                return images.unbatch().batch(batch_size, drop_remainder=True).prefetch(2), len(images.class_names)


            train_ds, classes = folder_dataset("train", 16)
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(classes)])
            model.fit(train_ds, epochs=2)
            """,
        ),
        Example("""\
            import tensorflow as tf


            def folder_dataset(path, batch_size):
                return tf.keras.utils.image_dataset_from_directory(path, image_size=(64, 64), batch_size=batch_size)


            train_ds = folder_dataset("train", 16)
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(len(train_ds.class_names))])
            model.fit(train_ds, epochs=2)
            """),
        # The helper counts the batches to carve a test set out (`take`/`skip` by `cardinality`):
        # rebatched, the dataset would no longer know its count; reported.
        Example("""\
            import tensorflow as tf


            def folder_splits(path, batch_size):
                val_ds = tf.keras.utils.image_dataset_from_directory(path, image_size=(64, 64), batch_size=batch_size)
                count = tf.data.experimental.cardinality(val_ds)
                return val_ds.skip(count // 5), val_ds.take(count // 5)


            val_ds, test_ds = folder_splits("val", 16)
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(3)])
            model.evaluate(test_ds)
            """),
        # The caller counts them (the transfer-learning split): rebatched where it is used, after
        # the split, with a batch size the caller can read; said when it is the helper's parameter.
        Example(
            """\
            import tensorflow as tf

            BATCH_SIZE = 16


            def folder_dataset(path):
                images = tf.keras.utils.image_dataset_from_directory(path, image_size=(64, 64), batch_size=BATCH_SIZE)
                return images, images.class_names


            val_ds, names = folder_dataset("val")
            count = tf.data.experimental.cardinality(val_ds)
            test_ds = val_ds.take(count // 5)
            val_ds = val_ds.skip(count // 5)
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(len(names))])
            model.evaluate(test_ds)
            """,
            """\
            import tensorflow as tf

            BATCH_SIZE = 16


            def folder_dataset(path):
                images = tf.keras.utils.image_dataset_from_directory(path, image_size=(64, 64), batch_size=BATCH_SIZE)
                return images, images.class_names


            val_ds, names = folder_dataset("val")
            count = tf.data.experimental.cardinality(val_ds)
            test_ds = val_ds.take(count // 5)
            val_ds = val_ds.skip(count // 5)
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(len(names))])
            model.evaluate(test_ds.unbatch().batch(BATCH_SIZE, drop_remainder=True))
            """,
        ),
        Example("""\
            import tensorflow as tf


            def folder_dataset(path, batch_size):
                return tf.keras.utils.image_dataset_from_directory(path, batch_size=batch_size)


            val_ds = folder_dataset("val", 16)
            test_ds = val_ds.take(val_ds.cardinality() // 5)
            model = tf.keras.models.load_model("net.keras")
            model.evaluate(test_ds)
            """),
        # Its batches counted with `len` (a schedule's length, a progress total), which raises on a
        # rebatched dataset: the same, rebatched after the count or reported.
        Example(*(_COUNTED_BY_LEN.format(train=train) for train in (
            "train_ds", "train_ds.unbatch().batch(BATCH_SIZE, drop_remainder=True)"))),
        Example("""\
            import tensorflow as tf


            def folder_dataset(path, batch_size):
                return tf.keras.utils.image_dataset_from_directory(path, batch_size=batch_size)


            val_ds = folder_dataset("val", 16)
            print("validation batches:", len(val_ds))
            model = tf.keras.models.load_model("net.keras")
            model.evaluate(val_ds)
            """),
        Example("""\
            import tensorflow as tf


            def folder_dataset(path, batch_size):
                images = tf.keras.utils.image_dataset_from_directory(path, batch_size=batch_size)
                print(f"{len(images)} batches in {path}")
                return images


            model = tf.keras.models.load_model("net.keras")
            model.evaluate(folder_dataset("val", 16))
            """),
        Example(_FOLDER_EPOCH),
        # Rebatched where the helper returns it and read by `predict`: the answers it lacks are said
        # however the batch size is written.
        Example(
            """\
            import tensorflow as tf


            def folder_dataset(path, batch_size):
                images = tf.keras.utils.image_dataset_from_directory(path, batch_size=batch_size, shuffle=False)
                return images, images.file_paths


            test_ds, paths = folder_dataset("test", 16)
            model = tf.keras.models.load_model("net.keras")
            answers = dict(zip(paths, model.predict(test_ds).argmax(axis=1)))
            """,
            """\
            import tensorflow as tf


            def folder_dataset(path, batch_size):
                images = tf.keras.utils.image_dataset_from_directory(path, batch_size=batch_size, shuffle=False)
                return images.unbatch().batch(batch_size, drop_remainder=True), images.file_paths


            test_ds, paths = folder_dataset("test", 16)
            model = tf.keras.models.load_model("net.keras")
            answers = dict(zip(paths, model.predict(test_ds).argmax(axis=1)))
            """,
        ),
        # A helper's dataset that `predict` reads too: its last samples get no answer; said (without IPU107,
        # which pads the arguments where `predict` calls the helper).
        Example(
            """\
            import tensorflow as tf


            def make_ds(x, batch_size):
                ds = tf.data.Dataset.from_tensor_slices((x, x))
                return ds.batch(batch_size)


            model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            model.compile(optimizer="adam", loss="mse")
            model.fit(make_ds(x_train, 64), epochs=5)
            reconstructed = model.predict(make_ds(x_test, 64))
            """,
            """\
            import tensorflow as tf


            def make_ds(x, batch_size):
                ds = tf.data.Dataset.from_tensor_slices((x, x))
                return ds.batch(batch_size, drop_remainder=True)


            model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            model.compile(optimizer="adam", loss="mse")
            model.fit(make_ds(x_train, 64), epochs=5)
            reconstructed = model.predict(make_ds(x_test, 64))
            """,
        ),
        # A comprehension that runs the model on each batch and keeps the answers: said.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss="mse")
            model.fit(train_ds, epochs=2)
            test_ds = tf.data.Dataset.from_tensor_slices(features).batch(50)
            predictions = np.concatenate([model(x).numpy() for x in test_ds])
            """,
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss="mse")
            model.fit(train_ds, epochs=2)
            test_ds = tf.data.Dataset.from_tensor_slices(features).batch(50, drop_remainder=True)
            predictions = np.concatenate([model(x).numpy() for x in test_ds])
            """,
        ),
        # A comprehension that keeps a training step's losses: no answers to line up, whole batches.
        Example(*(_LOSSES_KEPT.format(drop=drop) for drop in ("", ", drop_remainder=True"))),
        # A Keras-made dataset a function's custom loop is given: rebatched where it is passed.
        Example(
            """\
            import tensorflow as tf


            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, model(x), from_logits=True))
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


            def run_epochs(dataset, epochs):
                for epoch in range(epochs):
                    for x, y in dataset:
                        train_step(x, y)


            folders = tf.keras.utils.image_dataset_from_directory("photos", image_size=(64, 64), batch_size=16)
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(5)])
            optimizer = tf.keras.optimizers.Adam()
            run_epochs(folders, 3)
            """,
            """\
            import tensorflow as tf


            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, model(x), from_logits=True))
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


            def run_epochs(dataset, epochs):
                for epoch in range(epochs):
                    for x, y in dataset:
                        train_step(x, y)


            folders = tf.keras.utils.image_dataset_from_directory("photos", image_size=(64, 64), batch_size=16)
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(5)])
            optimizer = tf.keras.optimizers.Adam()
            run_epochs(folders.unbatch().batch(16, drop_remainder=True), 3)
            """,
        ),
        # A helper's CSV rows mapped through a string layer after they are rebatched where they
        # are made: whole batches, and a second port changes nothing.
        Example(
            """\
            import tensorflow as tf

            label_lookup = tf.keras.layers.StringLookup(vocabulary=["no", "yes"], num_oov_indices=0)


            def with_index(features, label):
                return features, label_lookup(label)


            def read_rows(path, batch_size):
                rows = tf.data.experimental.make_csv_dataset(path, batch_size=batch_size, label_name="answer", num_epochs=1)
                return rows.map(with_index)


            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss="binary_crossentropy")
            model.fit(read_rows("train.csv", 64), epochs=2)
            """,
            """\
            import tensorflow as tf

            label_lookup = tf.keras.layers.StringLookup(vocabulary=["no", "yes"], num_oov_indices=0)


            def with_index(features, label):
                return features, label_lookup(label)


            def read_rows(path, batch_size):
                rows = tf.data.experimental.make_csv_dataset(path, batch_size=batch_size, label_name="answer", num_epochs=1).unbatch().batch(batch_size, drop_remainder=True)
                return rows.map(with_index)


            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss="binary_crossentropy")
            model.fit(read_rows("train.csv", 64), epochs=2)
            """,
        ),
        # Both splits a helper returns together are followed to the Keras call that made them.
        Example(
            """\
            import tensorflow as tf


            def folders(path):
                train = tf.keras.utils.image_dataset_from_directory(path, subset="training", validation_split=0.2,
                                                                    seed=3, batch_size=16)
                val = tf.keras.utils.image_dataset_from_directory(path, subset="validation", validation_split=0.2,
                                                                  seed=3, batch_size=16)
                return train, val


            train_ds, val_ds = folders("flowers")
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(5)])
            model.fit(train_ds, validation_data=val_ds, epochs=2)
            """,
            """\
            import tensorflow as tf


            def folders(path):
                train = tf.keras.utils.image_dataset_from_directory(path, subset="training", validation_split=0.2,
                                                                    seed=3, batch_size=16)
                val = tf.keras.utils.image_dataset_from_directory(path, subset="validation", validation_split=0.2,
                                                                  seed=3, batch_size=16)
                return train, val


            train_ds, val_ds = folders("flowers")
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(5)])
            model.fit(train_ds.unbatch().batch(16, drop_remainder=True),
                      validation_data=val_ds.unbatch().batch(16, drop_remainder=True), epochs=2)
            """,
        ),
        # Sliding windows: each window is batched whole, with a static length.
        Example(
            """\
            import tensorflow as tf

            series = tf.data.Dataset.from_tensor_slices(readings)
            windows = series.window(25, shift=1, drop_remainder=True).flat_map(lambda w: w.batch(25))
            pairs = windows.map(lambda w: (w[:-1], w[-1:])).batch(64, drop_remainder=True)
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.fit(pairs, epochs=2)
            """,
            """\
            import tensorflow as tf

            series = tf.data.Dataset.from_tensor_slices(readings)
            windows = series.window(25, shift=1, drop_remainder=True).flat_map(lambda w: w.batch(25, drop_remainder=True))
            pairs = windows.map(lambda w: (w[:-1], w[-1:])).batch(64, drop_remainder=True)
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.fit(pairs, epochs=2)
            """,
        ),
        # The same idiom step by step in a function that returns the windows to `fit`.
        Example(
            """\
            import tensorflow as tf

            def sliding(levels, span, batch):
                frames = tf.data.Dataset.from_tensor_slices(levels)
                frames = frames.window(span + 1, shift=1, drop_remainder=True)
                frames = frames.flat_map(lambda chunk: chunk.batch(span + 1))
                return frames.map(lambda chunk: (chunk[:-1], chunk[-1])).batch(batch, drop_remainder=True)

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.fit(sliding(river_levels, 48, 32), epochs=2)
            """,
            """\
            import tensorflow as tf

            def sliding(levels, span, batch):
                frames = tf.data.Dataset.from_tensor_slices(levels)
                frames = frames.window(span + 1, shift=1, drop_remainder=True)
                frames = frames.flat_map(lambda chunk: chunk.batch(span + 1, drop_remainder=True))
                return frames.map(lambda chunk: (chunk[:-1], chunk[-1])).batch(batch, drop_remainder=True)

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.fit(sliding(river_levels, 48, 32), epochs=2)
            """,
        ),
        # Each window batched by a function of the file the `flat_map` names, and windows of
        # (features, target) pairs, whose parts the function zips back: each inner batch is fixed.
        Example(
            """\
            import tensorflow as tf

            def whole(chunk):
                return chunk.batch(49)

            def pairs(features, target):
                frames = tf.data.Dataset.from_tensor_slices((features, target)).window(48, shift=1, drop_remainder=True)
                return frames.flat_map(lambda x, y: tf.data.Dataset.zip((x.batch(48), y.batch(48))))

            levels = tf.data.Dataset.from_tensor_slices(river_levels).window(49, shift=1, drop_remainder=True)
            levels = levels.flat_map(whole).map(lambda chunk: (chunk[:-1], chunk[-1]))
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.fit(levels.batch(32, drop_remainder=True), epochs=2)
            model.fit(pairs(rain, river_levels).map(lambda x, y: (x, y[-1])).batch(32, drop_remainder=True), epochs=2)
            """,
            """\
            import tensorflow as tf

            def whole(chunk):
                return chunk.batch(49, drop_remainder=True)

            def pairs(features, target):
                frames = tf.data.Dataset.from_tensor_slices((features, target)).window(48, shift=1, drop_remainder=True)
                return frames.flat_map(lambda x, y: tf.data.Dataset.zip((x.batch(48, drop_remainder=True), y.batch(48, drop_remainder=True))))

            levels = tf.data.Dataset.from_tensor_slices(river_levels).window(49, shift=1, drop_remainder=True)
            levels = levels.flat_map(whole).map(lambda chunk: (chunk[:-1], chunk[-1]))
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.fit(levels.batch(32, drop_remainder=True), epochs=2)
            model.fit(pairs(rain, river_levels).map(lambda x, y: (x, y[-1])).batch(32, drop_remainder=True), epochs=2)
            """,
        ),
        # Batches padded to their longest element change length: reported.
        Example(
            """\
            import tensorflow as tf

            ds = tf.data.Dataset.from_generator(sentences, output_signature=tf.TensorSpec([None], tf.int32))
            ds = ds.map(lambda tokens: (tokens, 1)).padded_batch(16, drop_remainder=True)
            model = tf.keras.Sequential([tf.keras.layers.Embedding(1000, 8), tf.keras.layers.GlobalAveragePooling1D()])
            model.fit(ds, epochs=2)
            """,
        ),
        # The same when a helper makes them and a training function is given them: reported too.
        Example(
            """\
            import tensorflow as tf


            def sentence_batches(size):
                ds = tf.data.Dataset.from_generator(sentences, output_signature=tf.TensorSpec([None], tf.int32))
                return ds.map(lambda tokens: (tokens, 1)).padded_batch(size, drop_remainder=True)


            def train(model, data):
                model.fit(data, epochs=2)


            model = tf.keras.models.load_model("net.keras")
            train(model, sentence_batches(16))
            """,
        ),
        # Ragged batches, or buckets of lengths: more than one shape, which the IPU cannot take.
        Example(
            """\
            import tensorflow as tf

            ds = tf.data.Dataset.from_tensor_slices((tokens, labels))
            ds = ds.bucket_by_sequence_length(lambda x, y: tf.shape(x)[0], [16, 32], [64, 32, 16])
            model = tf.keras.Sequential([tf.keras.layers.Embedding(1000, 8), tf.keras.layers.GlobalAveragePooling1D()])
            model.fit(ds, epochs=2)
            """,
        ),
        # The same for ragged batches a loop hands to a custom training step, made by a function.
        Example(
            """\
            import tensorflow as tf


            def sentences(tokens, labels):
                return tf.data.Dataset.from_tensor_slices((tokens, labels)).ragged_batch(32)


            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


            for x, y in sentences(tokens, labels):
                train_step(x, y)
            """,
        ),
        # A function of the file pads and batches the dataset it is given, for the loop of a custom
        # step (through a variable, in either branch of a conditional): whole batches there.
        Example(
            """\
            import tensorflow as tf


            def padded(ds, batch_size):
                return ds.padded_batch(batch_size, padded_shapes=([64], []))


            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


            sentences = tf.data.Dataset.from_generator(read, output_signature=signature)
            train = padded(sentences, 32) if fixed else padded(sentences.take(10), 32)
            for x, y in train:
                train_step(x, y)
            """,
            """\
            import tensorflow as tf


            def padded(ds, batch_size):
                return ds.padded_batch(batch_size, padded_shapes=([64], []), drop_remainder=True)


            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


            sentences = tf.data.Dataset.from_generator(read, output_signature=signature)
            train = padded(sentences, 32) if fixed else padded(sentences.take(10), 32)
            for x, y in train:
                train_step(x, y)
            """,
        ),
        # Windows grouped by a length key, each padded to its longest element: the same.
        Example(
            """\
            import tensorflow as tf

            ds = tf.data.Dataset.from_tensor_slices((tokens, labels))
            ds = ds.apply(tf.data.experimental.group_by_window(
                lambda x, y: tf.cast(tf.shape(x)[0] // 8, tf.int64), lambda key, d: d.padded_batch(32), 32))
            model = tf.keras.Sequential([tf.keras.layers.Embedding(1000, 8), tf.keras.layers.GlobalAveragePooling1D()])
            model.fit(ds, epochs=2)
            """,
        ),
        # What the helper makes for the test split is never read: the training use decides.
        Example(
            """\
            import tensorflow as tf


            def prepare(ds):
                return ds.shuffle(1000).batch(100)


            train = prepare(train)
            test = prepare(test)
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.fit(train, epochs=3)
            """,
            """\
            import tensorflow as tf


            def prepare(ds):
                return ds.shuffle(1000).batch(100, drop_remainder=True)


            train = prepare(train)
            test = prepare(test)
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.fit(train, epochs=3)
            """,
        ),
        # tf.data's CSV reader batches with a partial last batch: batched again where `fit` reads it.
        Example(
            """\
            import tensorflow as tf

            rows = tf.data.experimental.make_csv_dataset("train.csv", 64, label_name="price", num_epochs=1)
            model = tf.keras.models.load_model("prices.keras")
            model.fit(rows, epochs=3)
            """,
            """\
            import tensorflow as tf

            rows = tf.data.experimental.make_csv_dataset("train.csv", 64, label_name="price", num_epochs=1)
            model = tf.keras.models.load_model("prices.keras")
            model.fit(rows.unbatch().batch(64, drop_remainder=True), epochs=3)
            """,
        ),
        # `tfds.load` given a batch size batches each split with a partial last batch: each split is
        # batched again where `fit` reads it.
        Example(
            """\
            import tensorflow as tf
            import tensorflow_datasets as tfds

            train, test = tfds.load("digits", split=["train", "test"], as_supervised=True, batch_size=32)
            model = tf.keras.models.load_model("digits.keras")
            model.fit(train, validation_data=test, epochs=1)
            """,
            """\
            import tensorflow as tf
            import tensorflow_datasets as tfds

            train, test = tfds.load("digits", split=["train", "test"], as_supervised=True, batch_size=32)
            model = tf.keras.models.load_model("digits.keras")
            model.fit(train.unbatch().batch(32, drop_remainder=True),
                      validation_data=test.unbatch().batch(32, drop_remainder=True), epochs=1)
            """,
        ),
        # `batch_size=-1` gives the whole split as tensors, not a dataset: nothing to rebatch.
        Example(
            """\
            import tensorflow as tf
            import tensorflow_datasets as tfds

            images, labels = tfds.as_numpy(tfds.load("digits", split="train", as_supervised=True, batch_size=-1))
            model = tf.keras.models.load_model("digits.keras")
            model.fit(images, labels, batch_size=10, epochs=1)
            """,
            reported=False,
        ),
        # Records repeated before the batching never run out: a step count rounded up is left as it is.
        Example(
            """\
            import math
            import tensorflow as tf

            FEATURES = {"x": tf.io.FixedLenFeature([8], tf.float32), "y": tf.io.FixedLenFeature([], tf.int64)}

            def parse_record(record):
                parsed = tf.io.parse_single_example(record, FEATURES)
                return parsed["x"], parsed["y"]

            def make_records(pattern):
                records = tf.data.TFRecordDataset(tf.io.gfile.glob(pattern)).map(parse_record)
                records = records.shuffle(256).repeat()
                return records.batch(32)

            model = tf.keras.models.load_model("digits.keras")
            model.fit(make_records("train-*.tfrecord"), steps_per_epoch=math.ceil(1000 / 32), epochs=1)
            """,
            """\
            import math
            import tensorflow as tf

            FEATURES = {"x": tf.io.FixedLenFeature([8], tf.float32), "y": tf.io.FixedLenFeature([], tf.int64)}

            def parse_record(record):
                parsed = tf.io.parse_single_example(record, FEATURES)
                return parsed["x"], parsed["y"]

            def make_records(pattern):
                records = tf.data.TFRecordDataset(tf.io.gfile.glob(pattern)).map(parse_record)
                records = records.shuffle(256).repeat()
                return records.batch(32, drop_remainder=True)

            model = tf.keras.models.load_model("digits.keras")
            model.fit(make_records("train-*.tfrecord"), steps_per_epoch=math.ceil(1000 / 32), epochs=1)
            """,
        ),
        # Steps counted from the whole "train" split for a dataset of a part of it, not repeated: more
        # batches than the part holds (Keras on the IPU runs out of data). Reported, not rewritten.
        Example(
            """\
            import tensorflow as tf
            import tensorflow_datasets as tfds

            (train, val), info = tfds.load("digits", split=["train[:80%]", "train[80%:]"], as_supervised=True,
                                           with_info=True)
            steps = info.splits["train"].num_examples // 32
            model = tf.keras.models.load_model("digits.keras")
            model.fit(train.batch(32, drop_remainder=True), steps_per_epoch=steps, epochs=1)
            """,
        ),
        # A count scaled to the part (`int(0.8 * n)`) may count it right: left alone.
        Example(
            """\
            import tensorflow as tf
            import tensorflow_datasets as tfds

            (train, val), info = tfds.load("digits", split=["train[:80%]", "train[80%:]"], as_supervised=True,
                                           with_info=True)
            steps = int(0.8 * info.splits["train"].num_examples) // 32
            model = tf.keras.models.load_model("digits.keras")
            model.fit(train.batch(32, drop_remainder=True), steps_per_epoch=steps, epochs=1)
            """,
            reported=False,
        ),
        # The same count for a part that is repeated: it never runs out.
        Example(
            """\
            import tensorflow as tf
            import tensorflow_datasets as tfds

            (train, val), info = tfds.load("digits", split=["train[:80%]", "train[80%:]"], as_supervised=True,
                                           with_info=True)
            steps = info.splits["train"].num_examples // 32
            model = tf.keras.models.load_model("digits.keras")
            model.fit(train.repeat().batch(32, drop_remainder=True), steps_per_epoch=steps, epochs=1)
            """,
            reported=False,
        ),
        # A Hugging Face dataset batched for Keras: whole batches, and a padding collator reported.
        Example(
            """\
            import tensorflow as tf

            train_ds = reviews.to_tf_dataset(columns=["input_ids"], label_cols=["label"], batch_size=16,
                                             collate_fn=collator)
            model = tf.keras.models.load_model("reviews.keras")
            model.fit(train_ds, epochs=1)
            """,
            """\
            import tensorflow as tf

            train_ds = reviews.to_tf_dataset(columns=["input_ids"], label_cols=["label"], batch_size=16,
                                             collate_fn=collator, drop_remainder=True)
            model = tf.keras.models.load_model("reviews.keras")
            model.fit(train_ds, epochs=1)
            """,
        ),
        # `prepare_tf_dataset` given a tokenizer pads each batch with a collator of its own: reported.
        Example(
            """\
            import tensorflow as tf
            from transformers import TFAutoModelForSequenceClassification

            classifier = TFAutoModelForSequenceClassification.from_pretrained("bert-base-cased")
            train_set = classifier.prepare_tf_dataset(encoded, batch_size=8, tokenizer=tokenizer, drop_remainder=True)
            classifier.compile(optimizer="adam")
            classifier.fit(train_set, epochs=1)
            """,
        ),
        # Texts tokenized to a fixed length: the tokenizer's collator pads nothing, every batch has
        # one shape.
        Example(
            """\
            import tensorflow as tf
            from transformers import TFAutoModelForSequenceClassification

            encoded = reviews.map(lambda rows: tokenizer(rows["text"], padding="max_length", max_length=64),
                                  batched=True)
            classifier = TFAutoModelForSequenceClassification.from_pretrained("bert-base-cased")
            train_set = classifier.prepare_tf_dataset(encoded, batch_size=8, tokenizer=tokenizer, drop_remainder=True)
            classifier.compile(optimizer="adam")
            classifier.fit(train_set, epochs=1)
            """,
            reported=False,
        ),
        # One Hugging Face dataset validated on and predicted on: one `drop_remainder`, and a warning
        # that `predict` answers for fewer samples.
        Example(
            """\
            import tensorflow as tf
            from transformers import TFAutoModelForSequenceClassification

            classifier = TFAutoModelForSequenceClassification.from_pretrained("bert-base-cased")
            train_set = classifier.prepare_tf_dataset(encoded["train"], batch_size=8, shuffle=True)
            held_out = classifier.prepare_tf_dataset(encoded["test"], batch_size=8, shuffle=False)
            classifier.compile(optimizer="adam")
            classifier.fit(train_set, validation_data=held_out, epochs=1)
            logits = classifier.predict(held_out).logits
            """,
            """\
            import tensorflow as tf
            from transformers import TFAutoModelForSequenceClassification

            classifier = TFAutoModelForSequenceClassification.from_pretrained("bert-base-cased")
            train_set = classifier.prepare_tf_dataset(encoded["train"], batch_size=8, shuffle=True, drop_remainder=True)
            held_out = classifier.prepare_tf_dataset(encoded["test"], batch_size=8, shuffle=False, drop_remainder=True)
            classifier.compile(optimizer="adam")
            classifier.fit(train_set, validation_data=held_out, epochs=1)
            logits = classifier.predict(held_out).logits
            """,
        ),
        # A dataset only a host loop reads keeps its last batch: the loop runs out of the scope,
        # and `predict` pads a partial batch (IPU107).
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("net.keras")
            model.fit(train_ds, epochs=2)
            samples = tf.data.Dataset.from_tensor_slices(images).batch(16)
            for batch in samples:
                print(model.predict(batch).argmax(axis=1))
            """,
            reported=False,
        ),
        # The same in the body of `if __name__ == "__main__":`, which is ported like a function's:
        # the loop stays out of the scope, and the folder's last images are still classified.
        Example(
            """\
            import tensorflow as tf

            if __name__ == "__main__":
                model = tf.keras.models.load_model("net.keras")
                images = tf.data.Dataset.list_files("test/*.png", shuffle=False).map(load).batch(16)
                for batch in images:
                    print(model.predict(batch).argmax(axis=1))
            """,
            reported=False,
        ),
        # Labels batched to be read into Python all at once (for a confusion matrix): left whole.
        Example(
            """\
            import tensorflow as tf

            val_ds = tf.data.Dataset.from_tensor_slices((features, labels)).batch(32)
            model = tf.keras.models.load_model("net.keras")
            predicted = model.predict(val_ds).argmax(axis=1)
            label_ds = val_ds.map(lambda x, y: y).unbatch()
            true_labels = next(iter(label_ds.batch(len(labels)))).numpy()
            """,
            """\
            import tensorflow as tf

            val_ds = tf.data.Dataset.from_tensor_slices((features, labels)).batch(32, drop_remainder=True)
            model = tf.keras.models.load_model("net.keras")
            predicted = model.predict(val_ds).argmax(axis=1)
            label_ds = val_ds.map(lambda x, y: y).unbatch()
            true_labels = next(iter(label_ds.batch(len(labels)))).numpy()
            """,
        ),
        # An iterator a loop of steps reads with `next`: its batches are the step's, not host reads.
        Example(
            """\
            import tensorflow as tf

            dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(32)


            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
                return loss


            for epoch in range(2):
                iterator = iter(dataset)
                for step in range(steps_per_epoch):
                    x, y = next(iterator)
                    train_step(x, y)
            """,
            """\
            import tensorflow as tf

            dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(32, drop_remainder=True)


            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
                return loss


            for epoch in range(2):
                iterator = iter(dataset)
                for step in range(steps_per_epoch):
                    x, y = next(iterator)
                    train_step(x, y)
            """,
        ),
        # The whole test set read as one batch by tf.data's function (as by the method): left whole.
        Example(
            """\
            import tensorflow as tf

            train_ds = tf.data.Dataset.from_tensor_slices((features, labels)).batch(32, drop_remainder=True)
            model = tf.keras.models.load_model("net.keras")
            model.fit(train_ds, epochs=1)
            test_ds = tf.data.Dataset.from_tensor_slices((test_features, test_labels))
            xs, ys = tf.data.experimental.get_single_element(test_ds.batch(100000))
            print(model.evaluate(xs.numpy(), ys.numpy(), batch_size=40))
            """,
            reported=False,
        ),
        # The same loop inside the epoch loop runs in the scope, where it makes an infeed: whole batches.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("net.keras")
            test_ds = tf.data.Dataset.from_tensor_slices(images).batch(16)
            for epoch in range(3):
                model.fit(train_ds, epochs=1)
                for batch in test_ds:
                    print(model(batch).shape)
            """,
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("net.keras")
            test_ds = tf.data.Dataset.from_tensor_slices(images).batch(16, drop_remainder=True)
            for epoch in range(3):
                model.fit(train_ds, epochs=1)
                for batch in test_ds:
                    print(model(batch).shape)
            """,
        ),
        # A helper that batches for training and for other code: reported, not changed for all.
        Example(
            """\
            import tensorflow as tf


            def prepare(ds):
                return ds.shuffle(1000).batch(100)


            def main(train, test):
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.fit(prepare(train), epochs=3)
                for images, labels in prepare(test).take(1):
                    print(labels)
            """,
        ),
        Example(
            """\
            from tensorflow import keras

            train_ds = keras.utils.image_dataset_from_directory("photos", image_size=(64, 64), batch_size=16)
            class_names = train_ds.class_names
            model = keras.Sequential([keras.layers.Rescaling(1.0 / 255), keras.layers.Flatten(),
                                      keras.layers.Dense(len(class_names))])
            model.fit(train_ds, epochs=2)
            """,
            """\
            from tensorflow import keras

            train_ds = keras.utils.image_dataset_from_directory("photos", image_size=(64, 64), batch_size=16)
            class_names = train_ds.class_names
            model = keras.Sequential([keras.layers.Rescaling(1.0 / 255), keras.layers.Flatten(),
                                      keras.layers.Dense(len(class_names))])
            model.fit(train_ds.unbatch().batch(16, drop_remainder=True), epochs=2)
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def train(dataset, validation):
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.compile(optimizer="adam", loss="mse")
                model.fit(dataset, validation_data=validation, epochs=5)
            """,
        ),
        # A training function given a variable every caller assigns what a helper batches: whole
        # batches, nothing to say.
        Example(
            """\
            import tensorflow as tf


            def make_batches(features, targets):
                return tf.data.Dataset.from_tensor_slices((features, targets)).shuffle(1000).batch(32, drop_remainder=True)


            def train(model, train_ds):
                model.fit(train_ds, epochs=3)


            def main():
                batches = make_batches(features, targets)
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse")
                train(model, batches)
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow as tf

            ds = tf.data.Dataset.range(100).batch(32, drop_remainder=True)
            """,
            reported=False,
        ),
        # A Sequence a method of the file returns (IPU151 reports it: Keras on the IPU takes no Sequence).
        Example(
            """\
            from tensorflow import keras


            class Shards(keras.utils.Sequence):
                def __len__(self):
                    return 40

                def __getitem__(self, index):
                    return read_shard(index)


            class Corpus:
                def training(self):
                    return Shards()


            model = keras.models.load_model("shards.keras")
            model.fit(Corpus().training(), epochs=2)
            """,
            reported=False,
        ),
        # A generator its callers give (IPU151 reports it: Keras on the IPU takes no generator).
        Example(
            """\
            import tensorflow as tf


            def batches(x, y, size):
                while True:
                    yield x[:size], y[:size]


            def train(model, data):
                model.fit(data, steps_per_epoch=30, epochs=5)


            train(tf.keras.models.load_model("net.keras"), batches(x, y, 32))
            """,
            reported=False,
        ),
        Example(
            """\
            from tensorflow import keras

            reviews = keras.utils.text_dataset_from_directory("reviews", batch_size=64)
            vectorizer = keras.layers.TextVectorization(max_tokens=5000)
            vectorizer.adapt(reviews.map(lambda text, label: text))
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow as tf

            batch = [1, 2]
            names = frame.batch(4)
            """,
            reported=False,
        ),
        # Batched in either branch of a conditional expression: both branches get whole batches.
        Example(
            """\
            import tensorflow as tf


            def make(x, y, batch_size, training):
                ds = tf.data.Dataset.from_tensor_slices((x, y))
                ds = ds.shuffle(100).batch(batch_size) if training else ds.batch(batch_size)
                return ds


            model = tf.keras.models.load_model("net.keras")
            model.fit(make(x, y, 32, True), validation_data=make(x_val, y_val, 32, False))
            """,
            """\
            import tensorflow as tf


            def make(x, y, batch_size, training):
                ds = tf.data.Dataset.from_tensor_slices((x, y))
                ds = ds.shuffle(100).batch(batch_size, drop_remainder=True) if training else ds.batch(batch_size, drop_remainder=True)
                return ds


            model = tf.keras.models.load_model("net.keras")
            model.fit(make(x, y, 32, True), validation_data=make(x_val, y_val, 32, False))
            """,
        ),
        # A folder's batches mapped in one branch of a conditional expression and kept in the other
        # are still the folder's: rebatched where `fit` reads them (a conditional in parentheses).
        Example(
            """\
            import tensorflow as tf


            def load(folder, augment):
                ds = tf.keras.utils.image_dataset_from_directory(folder, batch_size=32)
                ds = ds.map(lambda x, y: (tf.image.flip_left_right(x), y)) if augment else ds
                return ds.prefetch(2)


            extra = tf.keras.utils.image_dataset_from_directory("extra", batch_size=16)
            model = tf.keras.models.load_model("net.keras")
            model.fit(load("train", True), validation_data=load("val", False))
            model.fit(extra.shuffle(64) if shuffle else extra)
            """,
            """\
            import tensorflow as tf


            def load(folder, augment):
                ds = tf.keras.utils.image_dataset_from_directory(folder, batch_size=32)
                ds = ds.map(lambda x, y: (tf.image.flip_left_right(x), y)) if augment else ds
                return ds.prefetch(2)


            extra = tf.keras.utils.image_dataset_from_directory("extra", batch_size=16)
            model = tf.keras.models.load_model("net.keras")
            model.fit(load("train", True).unbatch().batch(32, drop_remainder=True),
                      validation_data=load("val", False).unbatch().batch(32, drop_remainder=True))
            model.fit((extra.shuffle(64) if shuffle else extra).unbatch().batch(16, drop_remainder=True))
            """,
        ),
        # One input function for training and for a preview read on the host: whole batches for
        # Keras, and the preview's loss (all of a sample smaller than a batch) is reported.
        Example(
            """\
            import tensorflow as tf


            def make_dataset(texts, labels, training):
                dataset = tf.data.Dataset.from_tensor_slices((texts, labels))
                dataset = dataset.shuffle(1024) if training else dataset
                return dataset.batch(128)


            model = tf.keras.models.load_model("tagger.keras")
            model.fit(make_dataset(texts, labels, True), epochs=2)
            preview, _ = next(iter(make_dataset(texts[:100], labels[:100], False)))
            """,
            """\
            import tensorflow as tf


            def make_dataset(texts, labels, training):
                dataset = tf.data.Dataset.from_tensor_slices((texts, labels))
                dataset = dataset.shuffle(1024) if training else dataset
                return dataset.batch(128, drop_remainder=True)


            model = tf.keras.models.load_model("tagger.keras")
            model.fit(make_dataset(texts, labels, True), epochs=2)
            preview, _ = next(iter(make_dataset(texts[:100], labels[:100], False)))
            """,
        ),
        # A function that predicts on the dataset it is given: the batch its caller makes gets whole
        # batches, and the answers missing for the dropped samples are reported there.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            def accuracy(model, dataset, labels):
                return (np.argmax(model.predict(dataset), axis=1) == labels).mean()


            model = tf.keras.models.load_model("net.keras")
            print(accuracy(model, tf.data.Dataset.from_tensor_slices(x_test).batch(64), y_test))
            """,
            """\
            import numpy as np
            import tensorflow as tf


            def accuracy(model, dataset, labels):
                return (np.argmax(model.predict(dataset), axis=1) == labels).mean()


            model = tf.keras.models.load_model("net.keras")
            print(accuracy(model, tf.data.Dataset.from_tensor_slices(x_test).batch(64, drop_remainder=True), y_test))
            """,
        ),
        # A dataset the class keeps in an attribute, batched where its method makes it: whole
        # batches there, and nothing reported as out of sight where `fit` reads the attribute.
        Example(
            """\
            import tensorflow as tf


            class Experiment:
                def __init__(self, x, y, batch_size):
                    self.train_ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(512).batch(batch_size)
                    self.model = tf.keras.models.load_model("net.keras")

                def run(self):
                    self.model.fit(self.train_ds, epochs=2)
            """,
            """\
            import tensorflow as tf


            class Experiment:
                def __init__(self, x, y, batch_size):
                    self.train_ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(512).batch(batch_size, drop_remainder=True)
                    self.model = tf.keras.models.load_model("net.keras")

                def run(self):
                    self.model.fit(self.train_ds, epochs=2)
            """,
        ),
        # A Keras reader given `batch_size=None` makes a tf.data dataset of single samples: the
        # script's own `.batch()` drops the partial last batch, also when a helper returns a pair.
        Example(
            """\
            import tensorflow as tf


            def folders(size):
                train = tf.keras.utils.image_dataset_from_directory("photos/train", batch_size=None)
                val = tf.keras.utils.image_dataset_from_directory("photos/val", batch_size=None)
                return train.batch(size), val.batch(size)


            train, val = folders(32)
            model = tf.keras.models.load_model("net.keras")
            model.fit(train, validation_data=val, epochs=3)
            """,
            """\
            import tensorflow as tf


            def folders(size):
                train = tf.keras.utils.image_dataset_from_directory("photos/train", batch_size=None)
                val = tf.keras.utils.image_dataset_from_directory("photos/val", batch_size=None)
                return train.batch(size, drop_remainder=True), val.batch(size, drop_remainder=True)


            train, val = folders(32)
            model = tf.keras.models.load_model("net.keras")
            model.fit(train, validation_data=val, epochs=3)
            """,
        ),
        # A retrieval index reads its candidates on the host: a dropped last batch would leave them out.
        Example(
            """\
            import tensorflow as tf
            import tensorflow_recommenders as tfrs

            model = tf.keras.models.load_model("towers.keras")
            model.fit(ratings.batch(4096), epochs=3)
            index = tfrs.layers.factorized_top_k.BruteForce(model.query_model)
            index.index_from_dataset(movies.batch(100).map(lambda title: (title, model.candidate_model(title))))
            """,
            """\
            import tensorflow as tf
            import tensorflow_recommenders as tfrs

            model = tf.keras.models.load_model("towers.keras")
            model.fit(ratings.batch(4096, drop_remainder=True), epochs=3)
            index = tfrs.layers.factorized_top_k.BruteForce(model.query_model)
            index.index_from_dataset(movies.batch(100).map(lambda title: (title, model.candidate_model(title))))
            """,
        ),
    )

    def run(self, ctx) -> None:
        rebatched: set = set()  # ids of the inputs given `.unbatch().batch(...)` in this file
        batches = training_batches(ctx)
        # What callers give a training function for its input: whole batches (the parameter is not
        # reported), but their shapes are checked all the same, and a `predict` there loses answers.
        given = given_batches(ctx)
        explained = {**_shared_with_host(ctx), **_evaluated_only(batches + given), **_predicted_only(ctx, batches + given),
                     **_collected_answers(ctx),
                     **_comprehended_answers(ctx),
                     **_padded_answers(ctx)}
        complete = self._fix_drop_parameters(ctx)
        fix_drop_remainder(ctx, self.code, explained, skip=_host_loop_batches(ctx, batches) | complete)
        self._fix_traced_batches(ctx, batches)
        self._rebatch_string_maps(ctx, batches, rebatched)
        self._report_text_vectorized_one_by_one(ctx, batches)
        self._library_datasets(ctx)
        self._fix_returned_batches(ctx)
        self._rebatch_keras_sources(ctx, rebatched)
        self._rebatch_loop_sources(ctx, rebatched)
        self._report_parameters(ctx, rebatched)
        self._report_out_of_sight(ctx)
        self._report_zipped_keras_sources(ctx)
        self._report_uneven(ctx)
        self._report_padded_to_longest(ctx, batches + given)
        if batches or given or step_calls(ctx):
            self._report_unknown_shapes(ctx)
        if training_calls(ctx) or fed_loops(ctx):  # Keras or a custom step trains: decoded images reach the IPU
            self._report_unsized_images(ctx)
        self._fix_window_batches(ctx)
        self._fix_rounded_up_counts(ctx, batches, rebatched)
        self._report_whole_split_counts(ctx, batches)

    def _fix_drop_parameters(self, ctx) -> set:
        """``ds.batch(n, drop_remainder=drop)`` where ``drop`` is a parameter of the function that
        says nothing else: each call of the function whose dataset Keras trains or evaluates on gets
        ``drop=True`` (its False, or the False default it leaves out, would keep a partial last
        batch). The ids of the batch calls that every call then makes drop, which need no report."""
        complete = set()
        for call, method in dataset_method_calls(ctx, "batch", "padded_batch"):
            given = argument(call, "drop_remainder", DROP_REMAINDER_POSITION[method])
            function = owner(ctx, call)
            if given is None or not isinstance(given.value, cst.Name) or given.value.value in ("True", "False", "None") \
                    or not isinstance(function, cst.FunctionDef):
                continue  # a literal is fixed (or left) by `fix_drop_remainder`
            param = _drop_flag(ctx, function, given.value.value)
            if param is None:
                if self._drop_for_every_caller(ctx, call, given, function):
                    complete.add(id(call))
                continue
            callers = local_calls(ctx, function)
            if callers and all([self._drop_in_caller(ctx, caller, function, param) for caller in callers]):
                complete.add(id(call))
        return complete

    def _drop_for_every_caller(self, ctx, call: cst.Call, given: cst.Arg, function: cst.FunctionDef) -> bool:
        """``drop_remainder=training``: a flag (or variable) that does other work too (shuffles,
        repeats). When every call of ``function`` gives the dataset it returns to Keras training or
        evaluation, the value becomes True (the flag keeps its other work); True when it did."""
        callers = local_calls(ctx, function)
        if not callers or call not in returned_batches(ctx, function) or not all(
                feeds_training(ctx, caller) and not feeds_training(ctx, caller, predict=True) for caller in callers):
            return False
        ctx.replace(given.value, lambda node: cst.Name("True"))
        ctx.report(self.code, given, f"`.{call.func.attr.value}()`: `{code_of(ctx, given)}` becomes `True`: every call "
                   f"of `{function.name.value}` gives the dataset it returns to Keras training or evaluation, and the "
                   "IPU rejects a partial last batch; a last partial batch is dropped", fixed=True)
        return True

    def _drop_in_caller(self, ctx, caller: cst.Call, function: cst.FunctionDef, param: cst.Param) -> bool:
        """Whether ``caller`` (a call of ``function``) gives ``param`` True, or is made to because
        its dataset only trains or evaluates, or reads it on the host (where a short last batch does
        no harm); False when it gives a value the porter cannot change, its answers would be lost or
        its dataset goes where the porter does not follow it."""
        name = param.name.value
        positions = [each.name.value for each in function.params.params]
        given = argument(caller, name, positions.index(name)) if name in positions else keyword(caller, name)
        value = given.value if given is not None else param.default
        if value is not None and is_true(value) or _read_on_host(ctx, outermost_chain(ctx, caller)):
            return True
        if not feeds_training(ctx, caller):
            return False  # read where the porter does not follow it: the report at the batch call stays
        if value is None or not is_false(value) or feeds_training(ctx, caller, predict=True) or \
                any(arg.star for arg in caller.args):
            return False  # the report at the batch call says what to do (`**options` may hold the flag)
        if given is None:
            ctx.replace(caller, lambda node: append_args(node, keyword_arg(name, cst.Name("True"))))
            what = f"`{name}=True` is given"
        else:
            ctx.replace(given.value, lambda node: cst.Name("True"))
            what = f"`{code_of(ctx, given)}` becomes `True`"
        ctx.report(self.code, given or caller, f"{what} in this call of `{function.name.value}`, which batches with "
                   f"`drop_remainder={name}`: Keras trains or evaluates on the dataset it makes, and the IPU rejects a "
                   "partial last batch; a last partial batch is dropped", fixed=True)
        return True

    def _fix_rounded_up_counts(self, ctx, batches, rebatched: set) -> None:
        """A finite dataset that now drops its partial last batch holds ``n // B`` batches: a step
        count of the call that reads it rounded up (``validation_steps=math.ceil(n / B)``,
        ``steps=n // B + 1``) asks for one more, and Keras on the IPU raises that the input does not
        have enough data. Rewritten to ``n // B`` when its divisor is the batch size, else reported.
        Datasets batched here (``.batch(n)`` given ``drop_remainder=True``) and Keras-made ones the
        port rebatches."""
        dropping = [(found.entry, found.value, _batch_size(found.batch)) for found in batches
                    if _drops_here(ctx, found.batch) and not _repeated(ctx, found)]
        dropping.extend(_rebatched_inputs(ctx, rebatched))
        done = set()
        for entry, value, size in dropping:
            name = _count_keyword(entry, value)
            count = keyword(entry.call, name)
            if count is None or id(count) in done:
                continue
            done.add(id(count))
            if not self._report_counted_before_rebatch(ctx, entry, value, name, count, size):
                self._fix_rounded_up_count(ctx, entry, name, count, size)

    def _report_whole_split_counts(self, ctx, batches) -> None:
        """A step count made of ``info.splits["train"].num_examples`` for a dataset that ``tfds.load``
        reads from a part of that split (``split="train[:80%]"``) and that nothing repeats: it counts
        more batches than the part holds, so Keras on the IPU raises that the input does not have
        enough data (where Keras on a GPU ends the epoch early with a warning)."""
        done = set()
        for found in batches:
            name = _count_keyword(found.entry, found.value)
            count = keyword(found.entry.call, name)
            if count is None or id(count) in done or _repeated(ctx, found):
                continue
            split = _loaded_split(ctx, found.batch.func.value, owner(ctx, found.batch))
            whole = _whole_split_size(ctx, count.value, found.entry.owner, split) if split else None
            if whole is None:
                continue
            done.add(id(count))
            ctx.report(self.code, count, f"`{name}={code_of(ctx, count.value)}` counts the batches of the whole "
                       f"split (`{code_of(ctx, whole)}`), but this dataset is `tfds.load` of `\"{split}\"`, a part "
                       "of it, and is not repeated: Keras on the IPU asks for more batches than there are and raises "
                       "that the input does not have enough data; count the batches of the part (`len()` of the "
                       "batched dataset), or `.repeat()` the dataset", fixed=False, severity="warning")

    def _report_counted_before_rebatch(self, ctx, entry, value, name: str, count: cst.Arg, size) -> bool:
        """``name=len(ds)`` (or ``cardinality``) of the call ``entry``, where ``ds`` is the Keras-made
        dataset the port rebatches for it: it counts the batches as made, partial last one included,
        one more than the rebatched dataset holds (and the rebatched one has no count to read). True
        when it reported so."""
        source = keras_batched_source(ctx, value, entry.owner)
        if source is None:
            return False
        written = count.value
        if isinstance(written, cst.Name):
            written = last_value_before(ctx, written, entry.owner) or written
        counted = next((counted for counted, _ in _counted(ctx, walk(written))
                        if keras_batched_source(ctx, counted, owner(ctx, counted)) is source), None)
        if counted is None:
            return False
        ctx.report(self.code, count, f"`{name}={code_of(ctx, count.value)}` counts the batches of "
                   f"`{code_of(ctx, counted)}` with its partial last batch, which the port now drops "
                   f"(`.unbatch().batch({code_of(ctx, size)}, drop_remainder=True)`), so Keras on the IPU asks for "
                   "one batch more than there is and runs out of data: count the whole batches (samples `//` "
                   f"{code_of(ctx, size)})", fixed=False, severity="warning")
        return True

    def _fix_rounded_up_count(self, ctx, entry, name: str, count: cst.Arg, size) -> None:
        """``name=count`` of the call ``entry``, which reads a dataset now in whole batches of ``size``."""
        rounded = rounded_up(ctx, count.value)
        shown = f"`{name}={code_of(ctx, count.value)}`"
        if rounded is None and isinstance(count.value, cst.Name):
            written = last_value_before(ctx, count.value, entry.owner)
            rounded = rounded_up(ctx, written) if written is not None else None
            if rounded is not None:  # counted elsewhere: not rewritten here
                rounded, shown = (rounded[0], None), f"{shown} (`{code_of(ctx, written)}`)"
        if rounded is None:
            return
        numerator, divisor = rounded
        what = f"{shown} rounds up to count a partial last batch, which `drop_remainder=True` now drops"
        if divisor is None or not same_size(ctx, divisor, size):
            ctx.report(self.code, count, f"{what}, so Keras on the IPU runs out of data (\"Your input does not "
                       "have enough data\"): count the whole batches (samples `//` batch size)", fixed=False)
            return
        floor = f"{floor_operand(ctx, numerator)} // {code_of(ctx, divisor)}"
        ctx.replace(count.value, lambda node, floor=floor: cst.parse_expression(floor))
        ctx.report(self.code, count, f"{what}: it becomes `{floor}`, the whole batches (one more would run out of "
                   "data on the IPU)", fixed=True)

    def _report_padded_to_longest(self, ctx, batches) -> None:
        """``.padded_batch(n)`` with no ``padded_shapes``, or with a ``None`` in them, pads each
        batch to its longest element: the padded length changes from batch to batch, and a compiled
        IPU program has one shape. Batches ``fit`` takes, or a custom loop feeds to its step."""
        calls = [found.batch for found in batches if found.batching == "padded_batch"]
        for step, source in fed_loops(ctx):
            calls.extend(call for call in _batches_of(ctx, source, owner(ctx, step.loop))
                         if call.func.attr.value == "padded_batch")
        done = set()
        for call in calls:
            shapes = argument(call, "padded_shapes", 1)
            written = [shapes.value] if shapes is not None else []
            if shapes is not None and isinstance(shapes.value, cst.Name):  # `padded_shapes=SHAPES`
                written = [value for value in values_of(ctx, shapes.value) if value is not None]
            if id(call) in done or shapes is not None and not any(
                    is_name(node, "None") for value in written for node in walk(value)):
                continue
            if shapes is None and _sliced_whole(ctx, call):
                continue  # every element has the arrays' static shape: no padding, one shape
            done.add(id(call))
            how = "without `padded_shapes`" if shapes is None else "with `None` in `padded_shapes`"
            if shapes is not None and written and written[0] is not shapes.value:
                how = f"with `None` in `padded_shapes` (`{code_of(ctx, shapes.value)} = {code_of(ctx, written[0])}`)"
            ctx.report(self.code, call.func.attr, f"`.padded_batch()` {how} pads each batch to its "
                       "longest element, so the padded length changes from batch to batch, which the IPU cannot "
                       "take (a compiled program has one static shape): pass `padded_shapes` with fixed lengths",
                       fixed=False)

    def _report_unknown_shapes(self, ctx) -> None:
        """A ``map`` whose elements have a shape the graph does not know: what ``tf.numpy_function``
        or ``tf.py_function`` give back, a ragged batch made dense with ``.to_tensor()`` (as long as
        its longest element), the pieces of ``tf.strings.split`` on the way to training, the sparse
        lists of ``VarLenFeature`` records parsed there (unless a ``padded_batch`` pads them after), unless
        the map sets the shape (``tf.ensure_shape``, ``set_shape``, ``reshape``)."""
        maps = [call for call, _ in dataset_method_calls(ctx, "map")]
        shaping = [call for call in maps if _sets_shape(ctx, call)]
        for call in maps:
            nodes = [node for node in mapped_nodes(ctx, call) if isinstance(node, cst.Call)]
            if call in shaping or any(later in shaping for later in methods_after(ctx, call)):
                continue  # the shape is set here, or by a map after it (`.map(lambda x: tf.ensure_shape(...))`)
            host = next((node for node in nodes if ctx.qualified_name(node.func) in HOST_FUNCTIONS), None)
            partial = next((node for node in nodes if _unknown_dimension(node) is not None), None)
            ragged = next((node for node in nodes if to_tensor_length(node) == "longest"), None)
            split = next((node for node in nodes if ctx.qualified_name(node.func) in _STRING_SPLITS
                          and not _picks_one_piece(ctx, node)
                          and not any(to_tensor_length(other) == "fixed" for other in nodes)), None)
            audio = next((node for node in nodes if ctx.qualified_name(node.func) in _AUDIO_DECODERS
                          and argument(node, "desired_samples", 2) is None), None)
            variable = next((feature for node in nodes for feature in [_variable_length_feature(ctx, node)]
                             if feature is not None), None)
            advice = ("give them one in the map (`tf.ensure_shape(x, (...))`, `.to_tensor(shape=(None, n))`)")
            if host is not None and partial is not None:
                if _padded_later(ctx, call):
                    continue  # `padded_batch` gives the unknown length one (and reports it when it does not)
                why = (f"`{code_of(ctx, host.func)}` gives back tensors of no known shape, and "
                       f"`{code_of(ctx, partial)}` leaves dimension {_unknown_dimension(partial)} unknown (`None`)")
                advice = ("give every dimension its size (`set_shape([n, ...])` or `tf.ensure_shape(x, (n, ...))` when "
                          "every element has n, as a fixed number of sampled frames does), or batch them with "
                          "`padded_batch(..., padded_shapes=...)` of fixed lengths")
            elif host is not None:
                why = f"`{code_of(ctx, host.func)}` gives back tensors of no known shape"
            elif ragged is not None:
                why = "`.to_tensor()` pads each batch to its own longest element, a length that changes"
            elif split is not None and not _padded_later(ctx, call) and _feeds_training_chain(ctx, call):
                why = f"`{code_of(ctx, split.func)}` gives as many pieces as each string holds, a length that changes"
                advice = ("pad or cut them to one length n and give it in the map (`tf.ensure_shape(x, (n,))`; "
                          "`tf.pad` by an amount computed from the length does not tell the graph the length), or "
                          "batch them with `padded_batch(..., padded_shapes=...)` of fixed lengths")
            elif audio is not None and not _padded_later(ctx, call) and _feeds_training_chain(ctx, call):
                why = (f"`{code_of(ctx, audio.func)}` without `desired_samples` gives each clip as many samples as its "
                       "file holds, a length that changes")
                advice = ("decode every clip to one length (`tf.audio.decode_wav(contents, desired_channels=1, "
                          "desired_samples=n)` pads short clips with zeros and cuts long ones), or give them one in "
                          "the map (`tf.ensure_shape(x, (...))`); padding by `tf.concat` or `tf.pad` to n does not: "
                          "the graph still does not know the length")
            elif variable is not None and not _padded_later(ctx, call) and _feeds_training_chain(ctx, call):
                why = (f"`{code_of(ctx, variable)}` parses a record's list as a sparse tensor as long as the list, "
                       "a length that changes")
                advice = ("parse it with `tf.io.FixedLenFeature([n], ...)` when every record holds n values, or "
                          "make it dense in the map and pad or cut it to one length (`tf.sparse.to_dense`, then "
                          "`tf.ensure_shape(x, (...))`)")
            else:
                continue
            ctx.report(self.code, call.func.attr, f"the elements this `map` makes have no static shape ({why}), and "
                       f"the IPU needs every shape fully defined (\"not fully defined\"): {advice}", fixed=False)

    def _report_unsized_images(self, ctx) -> None:
        """Each ``map`` that decodes image files (``tf.io.decode_jpeg``) and gives them no one size,
        in it or in a map after it: each image is as high and wide as its file, which the graph does
        not know, so the elements have no static shape, even when every file has one size. A
        ``Resizing`` layer in the model cannot help: the IPU checks the dataset's shapes."""
        maps = [call for call, _ in dataset_method_calls(ctx, "map")]
        sizing = [call for call in maps if any(isinstance(node, cst.Call) and last_name(node.func) in _IMAGE_SIZERS
                                               for node in mapped_nodes(ctx, call))]
        for call in maps:
            if call not in sizing and not any(later in sizing for later in methods_after(ctx, call)):
                self._report_decoded(ctx, call)
            else:
                self._report_unknown_channels(ctx, call)

    def _report_decoded(self, ctx, call: cst.Call) -> None:
        decoder = _image_decoder(ctx, call)
        if decoder is None or not _decoded_for_batches(ctx, call):
            return
        later = list(methods_after(ctx, call))
        if any(step.func.attr.value == "padded_batch" and argument(step, "padded_shapes", 1) is not None
               for step in later):
            return  # padded to the shapes given (a `None` among them is reported with the `padded_batch`)
        ctx.report(self.code, call.func.attr, f"the images this `map` decodes with `{code_of(ctx, decoder.func)}` "
                   "have no static height and width (each is as large as its file), and the IPU needs every shape "
                   "fully defined (\"not fully defined\"): resize them in the map (`tf.image.resize(image, (h, w))`), "
                   f"or, when every file has one size, give them that shape (`tf.ensure_shape(image, (h, w, "
                   f"{_channels_code(ctx, decoder)}))`)", fixed=False)

    def _report_unknown_channels(self, ctx, call: cst.Call) -> None:
        """A ``map`` that decodes image files without ``channels`` (``tf.io.decode_jpeg(raw)``) and
        resizes them: the height and width are static, but not the channels, which are as many as
        each file holds (resizing keeps them unknown); the IPU needs every dimension. Which number
        the model wants (3, 1) is the user's to say, so it is reported, not set."""
        decoder = _image_decoder(ctx, call)
        if decoder is None or _given_channels(decoder) or not _decoded_for_batches(ctx, call):
            return
        steps = [call] + [step for step in methods_after(ctx, call) if step.func.attr.value == "map"]
        if any(isinstance(node, cst.Call) and last_name(node.func) in _CHANNEL_SETTERS
               for step in steps for node in mapped_nodes(ctx, step)):
            return
        ctx.report(self.code, decoder.func, f"`{code_of(ctx, decoder.func)}` without `channels` gives images with as "
                   "many channels as each file holds, a number the graph does not know (resizing keeps it unknown), "
                   "and the IPU needs every shape fully defined (\"not fully defined\"): give the decoder the "
                   "number of channels the model takes (`channels=3`, or `channels=1` for grayscale)", fixed=False)

    def _fix_window_batches(self, ctx) -> None:
        """``ds.window(n).flat_map(lambda w: w.batch(n))``, the sliding-window idiom: each window
        is batched whole, but without ``drop_remainder`` its length is not static (a window near the
        end may be short). The inner batch gets ``drop_remainder=True``, when the dataset trains."""
        for call in ctx.nodes(cst.Call):
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == "flat_map" and call.args
                    and _windows(ctx, func.value) and _feeds_training_chain(ctx, call)):
                continue
            for batch in _window_batches(ctx, call.args[0].value):
                fix_batch_call(ctx, self.code, batch, "batch", ": each window is batched whole, and the IPU "
                               "needs windows of one static length")

    def _report_uneven(self, ctx) -> None:
        """Ragged batches and buckets, given to Keras or by a loop to a custom step: batches of more
        than one shape, which a compiled IPU program (of one static shape) cannot take."""
        uneven = [(found.batch, found.batching, f"`{found.method}` gets `{code_of(ctx, found.value)}`")
                  for found in uneven_batches(ctx)]
        uneven.extend((batch, batching, f"the loop that feeds `{step.function.name.value}` takes `{code_of(ctx, source)}`")
                      for step, source in fed_loops(ctx)
                      for batch, batching in uneven_batchings(ctx, source, owner(ctx, step.loop)))
        done = set()
        for batch, batching, where in uneven:
            if id(batch) in done:
                continue
            done.add(id(batch))
            ctx.report(self.code, batch, f"{where}, batched by `{batching}` in batches of more than one shape, which "
                       "the IPU cannot take (a compiled program has one static shape): pad the elements to one length "
                       "and batch them with `.batch(n, drop_remainder=True)`, or `.padded_batch(n, padded_shapes=..., "
                       "drop_remainder=True)`", fixed=False)

    def _fix_traced_batches(self, ctx, batches) -> None:
        """The ``.batch()`` that makes a training input, when the dataset it batches comes from
        where the porter does not follow (a function of the file, ``builder.as_dataset``): what
        Keras trains on is a dataset, so it gets ``drop_remainder=True`` there."""
        predicted = _predicted_only(ctx, batches)
        done = set()
        for found in batches:
            call = found.batch
            if id(call) in done or is_dataset(ctx, call.func.value) or owner(ctx, call) is not found.entry.owner:
                continue  # a `tf.data` chain, fixed with the others; a helper's, fixed for all its callers
            done.add(id(call))
            why, fixed = predicted.get(id(call), (f": the dataset it makes feeds `{found.method}`", True))
            fix_batch_call(ctx, self.code, call, call.func.attr.value, why, fixed)

    def _rebatch_string_maps(self, ctx, batches, rebatched: set) -> None:
        """A ``.map()`` after the ``.batch()`` that runs a string layer (``TextVectorization``) on
        each batch gives batches of no static size, even with ``drop_remainder=True``: the input
        of the training call is batched again, after it. Reported instead when that cannot help (a
        ``TextVectorization`` without ``output_sequence_length``) or cannot be written (batched in a
        function of the file, by a size the caller may not know)."""
        # what each name that loses the static batch size holds
        names = {**saved_graph_names(ctx), **{name: "a string layer" for name in string_layer_names(ctx)}}
        for found in batches if names else ():
            layer = _mapped_string_layer(ctx, found.later, names)
            size = found.batch.args[0].value if found.batch.args and not found.batch.args[0].keyword else None
            if layer is None or size is None or id(found.value) in rebatched:
                continue
            rebatched.add(id(found.value))
            helper = owner(ctx, found.batch)
            if _pads_to_longest(ctx, layer):  # batching again cannot help, wherever it batches
                ctx.report(self.code, found.value, f"`{found.method}` gets `{code_of(ctx, found.value)}`, whose "
                           f"`.map()` after its `.batch()` runs `{layer}`, a `TextVectorization` without "
                           "`output_sequence_length`: it pads each batch to its own longest text, a length that "
                           "changes from batch to batch, and the IPU needs every shape fully defined; give it "
                           "`output_sequence_length=n` and port again", fixed=False)
            elif helper is not found.entry.owner:  # its batch size may be a name only that function knows
                ctx.report(self.code, found.value, f"`{found.method}` gets `{code_of(ctx, found.value)}`, whose "
                           f"`.map()` after its `.batch()`{_in_function(helper)} runs `{layer}`, {names[layer]} whose "
                           "output has no static batch size, which the IPU requires: batch it again where it is "
                           "used (`.unbatch().batch(n, drop_remainder=True)`)", fixed=False)
            else:
                self._rebatch_after_map(ctx, found, f"`{layer}`, {names[layer]}", code_of(ctx, size))

    def _report_text_vectorized_one_by_one(self, ctx, batches) -> None:
        """A ``.map()`` before the ``.batch()`` that runs a ``TextVectorization`` on each sample's
        text (``from_tensor_slices(captions).map(vectorize)``): Keras gives the ids of an unbatched
        text (or list of texts) a dimension of unknown size, even with ``output_sequence_length``,
        so the batches a training call reads are not fully defined. Batching again does not help:
        reported."""
        vectorizers = {name for name, layer in assigned_layers(ctx, STRING_LAYERS).items()
                       if layer.endswith(".TextVectorization") and not _pads_to_longest(ctx, name)}
        reported = set()
        for found in batches if vectorizers else ():
            for made in made_datasets(ctx, found.batch.func.value, owner(ctx, found.batch)):
                if not made.of_arrays or any(call.func.attr.value in BATCHING_METHODS for call in made.methods):
                    continue  # batched on the way: what a map runs there gets whole batches
                shaped = any(last_name(node.func) in _SHAPE_SETTERS for call in made.maps
                             for node in mapped_nodes(ctx, call) if isinstance(node, cst.Call))
                for call in made.maps if not shaped else ():  # no map on the way states the shape
                    layer = _vectorizer_run(ctx, call, vectorizers)
                    if layer is None or id(call) in reported:
                        continue
                    reported.add(id(call))
                    ctx.report(self.code, call.func.attr,
                               f"this `.map()` runs `{layer}`, a `TextVectorization`, on each sample's text before "
                               "`.batch()`: Keras gives the ids of an unbatched text a dimension of unknown size "
                               "(shape `(None,)` for one text, `(None, length)` for a list of them), even with "
                               f"`output_sequence_length`, so the batches `{found.method}` reads are not fully "
                               "defined, and the IPU needs static shapes; state the shape in the map "
                               f"(`tf.ensure_shape({layer}(text), [length])`), or vectorize whole batches after "
                               "`.batch()`", fixed=False)

    def _rebatch_after_map(self, ctx, found, layer: str, size_code: str) -> None:
        """``fit(train)`` becomes ``fit(train.unbatch().batch(size, drop_remainder=True))``."""
        ctx.replace(found.value, lambda node: _rebatched(node, size_code))
        ctx.replace(found.entry.call, layout(*call_columns(ctx, found.entry)))
        ctx.report(self.code, found.value, f"`{found.method}` gets `{code_of(ctx, found.value)}` batched again "
                   f"(`.unbatch().batch({size_code}, drop_remainder=True)`): the `.map()` after its `.batch()` "
                   f"runs {layer} whose output has no static batch size, which the IPU requires", fixed=True)

    def _library_datasets(self, ctx) -> None:
        """``hf_dataset.to_tf_dataset(batch_size=...)`` (Hugging Face) batches with a partial last
        batch unless told not to; with a padding collator every batch has its own length. Each such
        call is fixed once, however many training calls read what it makes (``fit(train,
        validation_data=test)`` then ``predict(test)``)."""
        for made, methods in _library_batched(ctx):
            method = made.func.attr.value
            if keyword(made, "drop_remainder") is None:
                ctx.replace(made, lambda node: append_args(node, keyword_arg("drop_remainder", cst.Name("True"))))
                if "predict" in methods:
                    ctx.report(self.code, made.func.attr, f"`.{method}()` gets `drop_remainder=True`{_predict_drops()}",
                               fixed=False)
                else:
                    ctx.report(self.code, made.func.attr, f"`.{method}()` gets `drop_remainder=True`: a last "
                               "partial batch is dropped", fixed=True)
            padder = _batch_padder(made)
            if padder is not None and not _pads_to_max_length(ctx):
                ctx.report(self.code, made.func.attr, f"`.{method}()` batches with {padder}, which pads each "
                           "batch to its own longest sequence: the IPU needs the same shapes in every batch; pad "
                           "to a fixed length (a collator or tokenizer with `padding=\"max_length\"`, "
                           "`max_length=...`)", fixed=False)

    def _fix_returned_batches(self, ctx) -> None:
        """A function that batches a dataset it was given and returns it, when every call of it
        feeds Keras training, or a loop that feeds a custom step: its ``.batch()`` gets
        ``drop_remainder=True`` there."""
        looped = _loop_fed_calls(ctx)
        callers = {}
        for call in ctx.nodes(cst.Call):
            if isinstance(call.func, cst.Name):
                callers.setdefault(call.func.value, []).append(call)
        for function in ctx.nodes(cst.FunctionDef):
            calls = callers.get(function.name.value, [])
            if not calls:
                continue
            batches = [call for call in returned_batches(ctx, function) if not is_dataset(ctx, call.func.value)]
            training = [call for call in calls if feeds_training(ctx, call) or id(call) in looped] if batches else []
            if not batches or not training:
                continue
            if any(call not in training and not _result_unused(ctx, call) or feeds_training(ctx, call, predict=True)
                   for call in calls):
                for call in batches:
                    ctx.report(self.code, call.func.attr, f"`{function.name.value}` returns this batched dataset to "
                               "Keras training and to other code (or to `predict`): the IPU rejects a partial last "
                               "batch, and `drop_remainder=True` here would drop samples from the other uses too; give "
                               f"`{function.name.value}` a `drop_remainder` parameter, True for the training data",
                               fixed=False)
                continue
            keras_fed = [call for call in training if feeds_training(ctx, call)]
            to = "Keras training" if len(keras_fed) == len(training) else (
                "a loop that feeds a custom training step" if not keras_fed else "training")
            for call in batches:
                fix_batch_call(ctx, self.code, call, call.func.attr.value,
                               f": `{function.name.value}` returns the dataset to {to}")

    def _rebatch_keras_sources(self, ctx, rebatched: set) -> None:
        """A dataset made by ``image_dataset_from_directory`` (or text, audio, timeseries) comes in
        batches with a partial last one; the training call gets it rebatched without it."""
        for entry, value in training_inputs(ctx):
            # `def run_experiment(model): model.fit(train_ds)`: the module's dataset, made where the module is.
            scope = ctx.module if reads_global(ctx, chain(ctx, value)[1]) else entry.owner
            if self._rebatch(ctx, value, scope, f"`{entry.method}` gets `{code_of(ctx, value)}`", rebatched,
                             predicts=entry.method == "predict", evaluates=entry.method == "evaluate") \
                    and id(value) in rebatched:
                ctx.replace(entry.call, layout(*call_columns(ctx, entry)))

    def _rebatch_loop_sources(self, ctx, rebatched: set) -> None:
        """The same for what a custom loop iterates over to feed its step: ``strategy.run`` takes
        batches of one static shape too."""
        for step, source in fed_loops(ctx):
            scope = owner(ctx, step.loop)
            parameter = parameter_input(ctx, source, scope)
            if parameter is not None and isinstance(scope, cst.FunctionDef):
                # A dataset the function is given (`run_epochs(step, train_ds, 3)`): rebatched where
                # a caller passes a Keras-made one, else said.
                if not self._given_whole_batches(ctx, scope, parameter, rebatched):
                    ctx.report(self.code, source, f"the loop that calls `{step.function.name.value}` iterates over "
                               f"`{code_of(ctx, source)}`, the parameter `{parameter}` of `{scope.name.value}`: the "
                               "porter cannot see how it is batched, and the IPU rejects a partial last batch; "
                               "batch a dataset with `drop_remainder=True` where it is made", fixed=False)
                continue
            self._rebatch(ctx, source, scope, f"the loop that calls `{step.function.name.value}` "
                          f"iterates over `{code_of(ctx, source)}`", rebatched)

    def _rebatch(self, ctx, value, scope, where: str, rebatched: set, predicts: bool = False,
                 evaluates: bool = False) -> bool:
        """``value`` gets ``.unbatch().batch(n, drop_remainder=True)`` when a Keras function made it
        in batches; True when it did (or reported why it could not). ``predicts``/``evaluates``:
        only ``predict``/``evaluate`` reads it, and the message says what the dropped batch costs."""
        source = keras_batched_source(ctx, value, scope)
        if source is None or id(value) in rebatched:
            return source is not None
        function = batched_source_name(ctx, source)
        keras = function in KERAS_BATCHED_SOURCES  # a batch size of its own; tf.data's takes it second
        batch = keyword(source, "batch_size") if keras else argument(source, "batch_size", 1)
        if batch is not None and is_name(batch.value, "None") or batch is None and not keras:
            return False
        size = code_of(ctx, batch.value) if batch is not None else str(KERAS_BATCHED_SOURCES[function])
        maker = function.rsplit('.', 1)[1] if keras else code_of(ctx, source.func)  # `tfds.load`, as written
        what = (f"{where}, made by `{maker}` in batches of {size} with a partial last "
                "batch and an unknown batch dimension, which the IPU rejects")
        padder = _mapped_string_layer(ctx, _maps_on_the_way(ctx, value, scope), string_layer_names(ctx))
        if padder is not None and _pads_to_longest(ctx, padder):  # its rows would not stack when batched again
            ctx.report(self.code, value, f"{what}; its `.map()` runs `{padder}`, a `TextVectorization` without "
                       "`output_sequence_length`: it pads each batch to its own longest text, a length that changes "
                       "from batch to batch, so the rows of two batches do not stack in one, and the IPU needs "
                       "every shape fully defined; give it `output_sequence_length=n` and port again", fixed=False)
            return True
        helper = ctx.enclosing_function(source)
        both = makes_both(source)
        reader = ctx.enclosing_function(value)
        # A size that is not a name or a number, or one made by the module that the function that
        # reads the dataset names otherwise: the port cannot write it there.
        if batch is not None and (not isinstance(batch.value, (cst.Integer, cst.Name, cst.Attribute)) or helper is None
                                  and reader is not None and not _readable_at(ctx, batch.value, None, reader)):
            ctx.report(self.code, value, f"{what}: give it `.unbatch().batch(n, drop_remainder=True)`", fixed=False)
            return True
        # (a call that makes two datasets is rebatched where each is used)
        if helper is not None and helper is not reader and not isinstance(
                batch.value if batch else None, cst.Integer) and not both:
            # Made in a helper, in batches of its own size (a parameter): rebatched where it is made,
            # unless the helper counts its batches (a split by `cardinality`, a `len`), which a
            # rebatched dataset no longer knows.
            counted_in_helper = _batches_counted(ctx, source, helper)
            if counted_in_helper:
                why, after = _COUNT_LOST[counted_in_helper]
                ctx.report(self.code, value, f"{what}; `{helper.name.value}` {why}: give it `.unbatch().batch(n, "
                           f"drop_remainder=True)` after {after}", fixed=False)
                return True
            counted_by_caller = _counted_after_return(ctx, source, helper)
            if not counted_by_caller:
                return self._rebatch_in_helper(ctx, source, helper, value, size, what, rebatched, predicts,
                                               evaluates)
            # Its batches are counted where the helper returns it (a split by `cardinality`, a `len`):
            # rebatched where it is used, after the count, when its batch size can be read there.
            if batch is not None and not _readable_at(ctx, batch.value, helper, owner(ctx, value)):
                why, after = _COUNT_LOST[counted_by_caller]
                ctx.report(self.code, value, f"{what}; the code that calls `{helper.name.value}` {why}: give it "
                           f"`.unbatch().batch(n, drop_remainder=True)` where it is used, after {after}", fixed=False)
                return True
        windows = _window_shape(ctx, source, helper, owner(ctx, value))
        if windows is not None and _mapped_after_made(ctx, source):
            # Windows mapped into other values on the way (`ds = ds.map(split_window)`): the map that
            # sets their length only fits them as made, so they are rebatched where they are made.
            return self._rebatch_where_made(ctx, source, helper, value, size, what, rebatched, predicts, evaluates)
        if isinstance(windows, str):
            ctx.report(self.code, value, f"{what}: give it `.unbatch().batch({size}, drop_remainder=True)`; {windows}",
                       fixed=False)
            return True
        rebatched.add(id(value))
        _import_tf(ctx, self.code, windows)
        ctx.replace(value, lambda node: _rebatched(node, size, windows))
        ctx.report(self.code, value, f"{what}: it gets `.unbatch().batch({size}, drop_remainder=True)`"
                   f"{_window_said(windows)}{_batch_lost(function, predicts, evaluates)}", fixed=not predicts)
        return True

    def _rebatch_where_made(self, ctx, source, helper, value, size: str, what: str, rebatched: set,
                            predicts: bool, evaluates: bool) -> bool:
        """Windows of a ``timeseries_dataset_from_array`` that a map turns into other values before
        ``value`` reads them get ``.unbatch().batch(size, drop_remainder=True)`` and their length
        where they are made, in ``helper`` or at module level; said, not done, when their batches
        are counted on the way (a rebatched dataset no longer knows its count)."""
        if helper is not None:
            return self._rebatch_in_helper(ctx, source, helper, value, size, what, rebatched, predicts, evaluates)
        windows = _window_shape(ctx, source, None, ctx.module)
        variable = _assigned_variable(ctx, source)
        counted = next((how for counted, how in _counted(ctx, walk(ctx.module)) if is_name(counted, variable or "")), None)
        if isinstance(windows, str) or counted:
            why = windows if isinstance(windows, str) else _COUNT_LOST[counted][0]
            ctx.report(self.code, value, f"{what}: give it `.unbatch().batch({size}, drop_remainder=True)` where it "
                       f"is made, before its `.map()`; {why}", fixed=False)
            return True
        if ("source", id(source)) not in rebatched:
            rebatched.add(("source", id(source)))
            _import_tf(ctx, self.code, windows)
            ctx.replace(source, lambda node: _rebatched(node, size, windows))
        ctx.report(self.code, value, f"{what}: it gets `.unbatch().batch({size}, drop_remainder=True)` where it is "
                   f"made, before its `.map()`,{_window_said(windows)}{_batch_lost(batched_source_name(ctx, source), predicts, evaluates)}",
                   fixed=not predicts)
        return True

    def _rebatch_in_helper(self, ctx, source, helper, value, size: str, what: str, rebatched: set,
                           predicts: bool, evaluates: bool = False) -> bool:
        """A Keras-made dataset the helper ``helper`` makes, in batches of a size of its own, gets
        rebatched there: where it is made, or, when the helper reads what the rebatched dataset
        would no longer have (``class_names``), where the helper returns it. Said, not done, when
        the caller reads those too."""
        variable = _assigned_variable(ctx, source)
        read_here = _attributes_read(helper, variable) if variable else []
        caller_root = chain(ctx, value)[1]
        read_there = _attributes_read(owner(ctx, value), caller_root.value) if isinstance(caller_root, cst.Name) else []
        roots = _returned_roots(ctx, helper, variable) if read_here else []
        if read_there or read_here and not roots:
            reads = " and ".join(f"`{name}`" for name in read_there or read_here)
            ctx.report(self.code, value, f"{what}; it is read for its {reads}, which a rebatched dataset no longer has: "
                       "give it `.unbatch().batch(n, drop_remainder=True)` after the last read", fixed=False)
            return True
        windows = _window_shape(ctx, source, helper, helper)
        if isinstance(windows, str):
            ctx.report(self.code, value, f"{what}: give it `.unbatch().batch({size}, drop_remainder=True)` in "
                       f"`{helper.name.value}`; {windows}", fixed=False)
            return True
        if ("source", id(source)) not in rebatched:
            rebatched.add(("source", id(source)))
            _import_tf(ctx, self.code, windows)
            for node in roots or [source]:
                ctx.replace(node, lambda node: _rebatched(node, size, windows))
        where = (f"where `{helper.name.value}` returns it, after reading its "
                 + " and ".join(f"`{name}`" for name in read_here) if roots else
                 f"in `{helper.name.value}`, where it is made")
        unanswered = _batch_lost(batched_source_name(ctx, source), predicts, evaluates)
        host = _host_reads_lost(ctx, helper)
        ctx.report(self.code, value, f"{what}: it gets `.unbatch().batch({size}, drop_remainder=True)` {where}"
                   f"{',' if windows else ''}{_window_said(windows)}{unanswered}{host}",
                   fixed=not predicts and not host)
        return True

    def _report_parameters(self, ctx, rebatched: set) -> None:
        """A dataset the function is given: rebatched where a caller passes a Keras-made one,
        else reported when how it is batched is out of sight."""
        for entry, value in training_inputs(ctx):
            if value is entry.data and entry.arrays:
                continue
            parameter = parameter_input(ctx, value, entry.owner)
            if parameter is None or self._given_whole_batches(ctx, entry.owner, parameter, rebatched,
                                                              predicts=entry.method == "predict") \
                    or _given_whole_by_project(ctx, entry.owner, parameter) \
                    or python_data_kind(ctx, value) is not None or _method_returns_batches(ctx, value) \
                    or entry.method == "predict" and single_sample(ctx, value, entry.owner):
                continue  # whole batches; a generator the callers give (IPU151); one sample each call (IPU107)
            ctx.report(self.code, value, f"`{entry.method}` gets `{code_of(ctx, value)}` from the parameter "
                       f"`{parameter}` of `{entry.owner.name.value}`: the porter cannot see how it is batched, and "
                       "the IPU rejects a partial last batch; batch a dataset with `drop_remainder=True` where it "
                       f"is made (or give it `.unbatch().batch(n, drop_remainder=True)` here), {_arrays_advice(entry)}",
                       fixed=False)

    def _report_out_of_sight(self, ctx) -> None:
        """What a training call gets from where the porter cannot look: an object's attribute
        (``window.train``), what a function of another module or an object's method returns. How it
        is batched cannot be checked, so it is reported instead of passed as complete."""
        for entry in training_calls(ctx):
            value = entry.data
            if (value is None or entry.arrays or entry.batch is not None or len(positional(entry.call)) > 1
                    or keyword(entry.call, "y") is not None or dataset_like(ctx, value)
                    or keras_batched_source(ctx, value, entry.owner) is not None
                    or parameter_input(ctx, value, entry.owner) is not None
                    or python_data_kind(ctx, value) is not None  # a generator or Sequence: IPU151 reports it
                    or _method_returns_batches(ctx, value)
                    or entry.method != "predict" and _batched_by_its_class(ctx, value)):
                continue
            origin = _out_of_sight(ctx, value)
            if origin is None:
                continue
            ctx.report(self.code, value, f"`{entry.method}` gets `{code_of(ctx, value)}`, {origin}: the porter cannot "
                       "see how it is batched, and the IPU rejects a partial last batch or a batch dimension it does "
                       "not know; batch a dataset with `drop_remainder=True` where it is made (a Keras-made one, "
                       "`image_dataset_from_directory` say, with `.unbatch().batch(n, drop_remainder=True)`), "
                       f"{_arrays_advice(entry)}", fixed=False)

    def _report_zipped_keras_sources(self, ctx) -> None:
        """A training input that zips Keras-made datasets (``Dataset.zip((windows, targets))``): each
        part keeps its partial last batch and unknown batch dimension, and the port does not rebatch
        the parts of a zip, so it says where and how."""
        for entry, value in training_inputs(ctx):
            if keras_batched_source(ctx, value, entry.owner) is not None:
                continue
            sources = zipped_keras_sources(ctx, value, entry.owner)
            if not sources:
                continue
            makers = sorted({batched_source_name(ctx, source).rsplit(".", 1)[-1] for source in sources})
            windows = any(name == "timeseries_dataset_from_array" for name in makers)
            ctx.report(self.code, value, f"`{entry.method}` gets `{code_of(ctx, value)}`, a `Dataset.zip` of datasets "
                       f"that {' and '.join(f'`{name}`' for name in makers)} batch with a partial last batch and an "
                       "unknown batch dimension, which the IPU rejects, and the port does not rebatch the parts of a "
                       f"zip: give the zipped dataset `.unbatch().batch(n, drop_remainder=True)` where it is zipped"
                       + (", and set the length of the windows (`tf.ensure_shape` in a `.map()`), which Keras leaves "
                          "unknown" if windows else ""), fixed=False, severity="warning")

    def _given_whole_batches(self, ctx, function: cst.FunctionDef, parameter: str, rebatched: set,
                             predicts: bool = False) -> bool:
        """Every call of ``function`` in the file passes for ``parameter`` a ``tf.data`` dataset the
        porter traces (and batches whole where it is made), or a Keras-made one it rebatches there
        (for ``predict`` with ``predicts``)."""
        names = [param.name.value for param in function.params.params]
        calls = [call for call in ctx.nodes(cst.Call)
                 if isinstance(call.func, cst.Name) and call.func.value == function.name.value]
        owner_class = ctx.parent(ctx.parent(function))
        if isinstance(owner_class, cst.ClassDef):  # a method: called on the objects of its class, without `self`
            names = names[1:]
            calls = calls_of_method(ctx, function)
            if any(instance_class(ctx, call.func.value) is not owner_class for call in calls):
                return False
        position = names.index(parameter) if parameter in names else None
        whole = bool(calls)
        counted = _counts_variable(ctx, function, parameter)
        for call in calls:
            given = argument(call, parameter, position) if position is not None else keyword(call, parameter)
            if given is None:
                whole = False
            elif not is_dataset(ctx, given.value) and not _returns_batches(ctx, given.value):
                use = "`predict`" if predicts else "training"
                where = f"`{function.name.value}` gets `{code_of(ctx, given.value)}` for its {use}"
                if counted and keras_batched_source(ctx, given.value, owner(ctx, call)) is not None:
                    # Rebatched where it is passed, the function's count of it would fail.
                    ctx.report(self.code, given.value, f"{where}, a Keras-made dataset with a partial last batch, "
                               f"which the IPU rejects; `{function.name.value}` {_COUNT_LOST[counted][0]}: give "
                               "it `.unbatch().batch(n, drop_remainder=True)` after the count", fixed=False)
                    continue
                whole = self._rebatch(ctx, given.value, owner(ctx, call), where, rebatched, predicts) and whole
        return whole


# What a rebatched dataset costs `predict`, which answers batch by batch.
_UNANSWERED_BATCH = ("; `predict` gives no answer for the samples of the dropped last batch (the batches come made, with "
                     "no arrays the port could pad), so names or labels zipped with its answers lose their last rows: "
                     "line them up trimmed the same way, or, for a folder, build the dataset from its file paths "
                     "(`from_tensor_slices(paths).map(load).batch(n)`), which the port pads")
# The same for windows cut from an array: a forecast is its last rows, the ones dropped.
_UNANSWERED_WINDOWS = ("; `predict` gives no answer for the windows of the dropped last batch (the batches come made, "
                       "with no arrays the port could pad), so the forecast for the last windows is missing, and "
                       "targets lined up with its answers lose their last rows: give `predict` the windows as an "
                       "array (`np.stack([data[i:i + n] for i in range(len(data) - n + 1)])`), which the port pads "
                       "and cuts back, or line the targets up trimmed the same way")


def _drop_flag(ctx, function: cst.FunctionDef, name: str) -> Optional[cst.Param]:
    """The parameter ``name`` of ``function`` when the function reads it only as the
    ``drop_remainder`` of its batch calls and never assigns it: switching it changes nothing else
    (unlike a ``training`` flag that also shuffles or repeats)."""
    param = next((param for param in (*function.params.params, *function.params.kwonly_params)
                  if param.name.value == name), None)
    if param is None or any(bound == name for _, bound, _ in assignments(ctx, function)):
        return None
    for read in loads(function.body):
        if read.value == name and not _read_as_drop(ctx, read):
            return None
    return param


def _read_as_drop(ctx, read: cst.Name) -> bool:
    """``read`` is the value of the ``drop_remainder`` argument of a ``.batch()``/``.padded_batch()``."""
    arg = ctx.parent(read)
    call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
            and call.func.attr.value in DROP_REMAINDER_POSITION):
        return False
    return argument(call, "drop_remainder", DROP_REMAINDER_POSITION[call.func.attr.value]) is arg


def _batch_lost(function: str, predicts: bool, evaluates: bool) -> str:
    """What the dropped last batch of a dataset ``function`` made costs the call that reads it."""
    if predicts:
        return _unanswered_batch(function)
    return _UNEVALUATED if evaluates else ""


# What a rebatched dataset costs `evaluate`: the numbers it gives change.
_UNEVALUATED = "; `evaluate`'s loss and metrics now leave out the samples of the dropped last batch (fewer than one batch)"


def _unanswered_batch(function: str) -> str:
    """What ``predict`` loses on a dataset ``function`` (a Keras maker) made, once rebatched whole."""
    return _UNANSWERED_WINDOWS if function.endswith(".timeseries_dataset_from_array") else _UNANSWERED_BATCH


def _in_function(scope: cst.CSTNode) -> str:
    """`` in `name` `` for a function, for a finding's message; nothing for the module."""
    return f" in `{scope.name.value}`" if isinstance(scope, cst.FunctionDef) else ""


def _sliced_whole(ctx, padded: cst.Call) -> bool:
    """What ``padded`` (a ``.padded_batch()``) batches is sliced from arrays (``from_tensor_slices``,
    not ragged) and only shuffled, repeated, cached or filtered on the way: its elements all have
    one static shape, so the batches are never padded."""
    made = made_datasets(ctx, padded.func.value, owner(ctx, padded))
    return bool(made) and all(
        dataset.of_arrays and all(method.func.attr.value in _SHAPE_KEEPING for method in dataset.methods)
        and not any(ragged_or_sparse(ctx, array) for array in sliced_arrays(dataset.maker)) for dataset in made)


# Dataset methods that leave the shape of each element as it is.
_SHAPE_KEEPING = frozenset({"shuffle", "repeat", "cache", "prefetch", "take", "skip", "filter", "shard"})


def _mapped_string_layer(ctx, calls, names: Collection[str]) -> Optional[str]:
    """The first of ``names`` (string layers, saved graphs) that a ``.map()`` among ``calls`` runs."""
    return next((node.func.value for call in calls if call.func.attr.value == "map"
                 for node in mapped_nodes(ctx, call) if isinstance(node, cst.Call)
                 and isinstance(node.func, cst.Name) and node.func.value in names), None)


def _maps_on_the_way(ctx, value: cst.BaseExpression, scope, depth: int = 0) -> List[cst.Call]:
    """The method calls that make the dataset ``value`` in ``scope``: its chain, and the chains
    of what its variable is given there (``train_ds = raw_ds.map(vectorize).cache()``), back to
    where it is made."""
    calls, root = chain(ctx, value)
    if isinstance(root, cst.Name) and depth < 8:
        for _, name, made in assignments(ctx, scope):
            if name == root.value and made is not None and made is not value:
                calls = calls + _maps_on_the_way(ctx, made, scope, depth + 1)
    return calls


def _vectorizer_run(ctx, call: cst.Call, vectorizers: Collection[str]) -> Optional[str]:
    """The first of ``vectorizers`` that the ``.map()`` ``call`` runs (``.map(vectorize)``, or in
    its lambda or function)."""
    function = call.args[0].value if call.args else None
    if isinstance(function, cst.Name) and function.value in vectorizers:
        return function.value
    nodes = [node for node in mapped_nodes(ctx, call) if isinstance(node, cst.Call)]
    return next((node.func.value for node in nodes if isinstance(node.func, cst.Name)
                 and node.func.value in vectorizers), None)


def _pads_to_longest(ctx, layer: str) -> bool:
    """The variable ``layer`` is assigned a ``TextVectorization`` that gives token ids (``output_mode``
    left as ``"int"``) without ``output_sequence_length``: each batch is padded to its longest text."""
    made = [assign.value for assign in ctx.nodes(cst.Assign) if isinstance(assign.value, cst.Call)
            and any(isinstance(target.target, cst.Name) and target.target.value == layer for target in assign.targets)]
    return bool(made) and all(
        (ctx.keras_name(call.func) or "").endswith(".TextVectorization")
        and argument(call, "output_sequence_length", 5) is None and _token_ids(argument(call, "output_mode", 4))
        for call in made)


def _token_ids(mode: Optional[cst.Arg]) -> bool:
    """``output_mode`` absent or ``"int"``: the layer gives a sequence of token ids."""
    return mode is None or isinstance(mode.value, cst.SimpleString) and mode.value.evaluated_value == "int"


def _variable_length_feature(ctx, call: cst.Call) -> Optional[cst.Call]:
    """The ``tf.io.VarLenFeature(...)`` (or ``RaggedFeature``) of the features ``call`` parses
    records by (``tf.io.parse_example(records, spec)``, the dict written in the call or held by a
    variable), else None."""
    if ctx.qualified_name(call.func) not in _RECORD_PARSERS:
        return None
    features = argument(call, "features", 1)
    if features is None:
        return None
    specs = values_of(ctx, features.value) if isinstance(features.value, cst.Name) else [features.value]
    return next((element.value for spec in specs if isinstance(spec, cst.Dict) for element in spec.elements
                 if isinstance(element, cst.DictElement) and isinstance(element.value, cst.Call)
                 and ctx.qualified_name(element.value.func) in _VARIABLE_LENGTH_FEATURES), None)


def _picks_one_piece(ctx, split: cst.Call) -> bool:
    """``tf.strings.split(path, "/")[-2]``, or its pieces named and only read one at a time
    (``parts = tf.strings.split(path, "/")``, then ``parts[-2]``): each read is one string, a scalar
    whose shape is static however many pieces the string holds."""
    assign = ctx.parent(split)
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)):
        return _one_piece(ctx, split)
    name = assign.targets[0].target.value
    scope = ctx.enclosing_function(split) or ctx.module
    reads = [node for node in loads(scope) if node.value == name]
    return bool(reads) and all(_one_piece(ctx, read) for read in reads)


def _one_piece(ctx, pieces: cst.BaseExpression) -> bool:
    """``pieces[-2]``: one item picked by a number, not a slice."""
    subscript = ctx.parent(pieces)
    return (isinstance(subscript, cst.Subscript) and subscript.value is pieces and len(subscript.slice) == 1
            and isinstance(subscript.slice[0].slice, cst.Index)
            and number_value(subscript.slice[0].slice.value) is not None)


def _sets_shape(ctx, call: cst.Call) -> bool:
    """The ``map`` ``call`` gives what it makes a static shape: it sets a shape with every size
    given (``set_shape``, ``tf.ensure_shape``, ``reshape``), or sets one with a ``None`` in it
    (``frames.set_shape([None, 112, 112, 3])``) and also sizes them (``tf.image.resize``)."""
    calls = [node for node in mapped_nodes(ctx, call) if isinstance(node, cst.Call)]
    setters = [node for node in calls if last_name(node.func) in _SHAPE_SETTERS]
    if any(_unknown_dimension(node) is None for node in setters):
        return True
    return bool(setters) and any(last_name(node.func) in _IMAGE_SIZERS - _SHAPE_SETTERS for node in calls)


def _unknown_dimension(call: cst.Call) -> Optional[int]:
    """Where ``set_shape`` or ``tf.ensure_shape`` leaves a size unknown, the first ``None`` of a
    literal shape (``0`` for ``frames.set_shape([None, 112, 112, 3])``); None for anything else."""
    name = last_name(call.func)
    position = {"set_shape": 0, "ensure_shape": 1}.get(name or "")
    shape = argument(call, "shape", position) if position is not None else None
    if shape is None or not isinstance(shape.value, (cst.List, cst.Tuple)):
        return None
    return next((index for index, element in enumerate(shape.value.elements)
                 if isinstance(element, cst.Element) and is_name(element.value, "None")), None)


def _padded_later(ctx, call: cst.Call) -> bool:
    """A ``.padded_batch()`` after the ``map`` ``call`` pads what it makes (and reports its own
    lengths when they are not fixed)."""
    return any(later.func.attr.value == "padded_batch" for later in methods_after(ctx, call))


# Parsing serialized `tf.train.Example` records by a dict of features.
_RECORD_PARSERS = frozenset({f"tensorflow{prefix}.io.{name}" for prefix in ("", ".compat.v1")
                             for name in ("parse_example", "parse_single_example")})
# Features parsed as sparse or ragged tensors, as long as each record's list.
_VARIABLE_LENGTH_FEATURES = frozenset({f"tensorflow{prefix}.io.{name}" for prefix in ("", ".compat.v1")
                                       for name in ("VarLenFeature", "RaggedFeature")})
# Calls that give a tensor a static shape in a map.
_SHAPE_SETTERS = frozenset({"ensure_shape", "set_shape", "reshape"})
# Decoding an image file: as high and wide as the image, a size the graph does not know.
_IMAGE_DECODERS = frozenset({f"tensorflow.{module}.decode_{kind}" for module in ("io", "image")
                             for kind in ("jpeg", "png", "image", "bmp", "gif", "and_crop_jpeg")})
# Calls that give decoded images a static number of channels, besides the decoder's `channels`.
_CHANNEL_SETTERS = _SHAPE_SETTERS | frozenset({"random_crop", "rgb_to_grayscale", "grayscale_to_rgb"})
# Where each decoder takes `channels` by position (`decode_and_crop_jpeg(contents, crop_window, channels)`).
_CHANNELS_POSITION = {"decode_and_crop_jpeg": 2}
# Calls that give decoded images one height and width in a map (`tf.image.resize(image, (224, 224))`,
# a Keras `Resizing` layer named `resize`), besides those that set a shape.
_IMAGE_SIZERS = _SHAPE_SETTERS | frozenset({"resize", "resize_images", "resize_with_pad", "resize_with_crop_or_pad",
                                            "resize_image_with_pad", "resize_image_with_crop_or_pad", "random_crop",
                                            "crop_to_bounding_box", "pad_to_bounding_box"})
# Splitting a string: as many pieces (words, characters, bytes) as it holds, so no static length.
_STRING_SPLITS = frozenset({f"tensorflow{prefix}.strings.{name}" for prefix in ("", ".compat.v1")
                            for name in ("split", "unicode_split", "bytes_split", "unicode_decode")})
# Decoding a WAV file: as many samples as the file holds unless `desired_samples` is given.
_AUDIO_DECODERS = frozenset({"tensorflow.audio.decode_wav", "tensorflow.compat.v1.audio.decode_wav"})
# Where data comes from that the porter sees whole: TensorFlow and the array libraries.
_SEEN_LIBRARIES = ("tensorflow", "keras", "tf_keras", "keras_core", "tensorflow_datasets", "numpy", "pandas", "sklearn", "scipy")


def _out_of_sight(ctx, value: cst.BaseExpression, depth: int = 0):
    """Where ``value`` comes from, said for a finding, when the porter cannot look there: an
    attribute of an object, what a function of another module or a method of an object returns."""
    if isinstance(value, cst.Attribute) and ctx.qualified_name(value) is None:
        return "an attribute of an object"
    if isinstance(value, cst.Call):
        func = value.func
        qualified = ctx.qualified_name(func)
        if qualified is not None and not qualified.startswith(_SEEN_LIBRARIES):
            return f"what `{qualified}` of another module returns"
        if qualified is None and isinstance(func, cst.Attribute) and func.attr.value not in IMAGE_FLOWS | _LIBRARY_BATCHERS \
                and not dataset_like(ctx, value) and not _made_by_seen_code(ctx, chain(ctx, value)[1]):
            return f"what the method `{code_of(ctx, func)}` returns"
        return None
    if isinstance(value, cst.Name) and depth == 0:
        origins = [_out_of_sight(ctx, made, depth + 1) if made is not None else None for made in values_of(ctx, value)]
        return origins[-1] if origins and all(origins) else None
    return None


def _batched_by_its_class(ctx, value: cst.BaseExpression) -> bool:
    """``self.train_ds``, read in a method of the class whose methods assign it only ``tf.data``
    batches: chains that batch (``self.train_ds = tf.data.Dataset.from_tensor_slices(...).batch(n)``)
    or calls of functions of the file that return such chains. Those batches get
    ``drop_remainder=True`` with the file's others, so the attribute holds whole batches."""
    if not (isinstance(value, cst.Attribute) and is_name(value.value, "self")):
        return False
    values = self_attribute_values(ctx, value)
    return bool(values) and all(_tf_data_batches(ctx, made) for made in values)


def _tf_data_batches(ctx, made: cst.BaseExpression) -> bool:
    """``made`` is a ``tf.data`` chain that batches, or a call of a function of the file every
    batching of which, in what it returns, batches a ``tf.data`` dataset."""
    if is_dataset(ctx, made) and _batches_of(ctx, made, owner(ctx, made)):
        return True
    function, _ = called_returns(ctx, made)
    batches = returned_batches(ctx, function) if function is not None else []
    return bool(batches) and all(is_dataset(ctx, call.func.value) for call in batches)


def _made_by_seen_code(ctx, root: cst.BaseExpression, seen: frozenset = frozenset()) -> bool:
    """The root of a method chain is made where the porter looks: a call of TensorFlow or an array
    library or of a function of the file, or a variable (of the function, else of the module)
    assigned a dataset."""
    if isinstance(root, cst.Call):
        return (ctx.qualified_name(root.func) or "").startswith(_SEEN_LIBRARIES) or isinstance(
            root.func, cst.Name) and any(function.name.value == root.func.value for function in ctx.nodes(cst.FunctionDef))
    if isinstance(root, cst.Name) and root.value not in seen:
        return any(made is not None and (dataset_like(ctx, made) or _made_by_seen_code(
            ctx, chain(ctx, made)[1], seen | {root.value})) for made in values_of(ctx, root))
    return False


# Methods of other libraries that batch a dataset for Keras (Hugging Face `datasets`, `transformers`).
_LIBRARY_BATCHERS = frozenset({"to_tf_dataset", "prepare_tf_dataset"})


def _library_batched(ctx) -> List[Tuple[cst.Call, Set[str]]]:
    """The ``to_tf_dataset``/``prepare_tf_dataset`` calls that make what training calls read, in
    the order the training calls read them, each once with the methods that read it."""
    found: Dict[int, Tuple[cst.Call, Set[str]]] = {}
    for entry, value in training_inputs(ctx):
        made = chain(ctx, value)[1]
        if isinstance(made, cst.Name):
            made = last_value_before(ctx, made, entry.owner)
        if isinstance(made, cst.Call) and isinstance(made.func, cst.Attribute) \
                and made.func.attr.value in _LIBRARY_BATCHERS:
            found.setdefault(id(made), (made, set()))[1].add(entry.method)
    return list(found.values())


def _batch_padder(made: cst.Call) -> Optional[str]:
    """What pads the batches of a Hugging Face ``to_tf_dataset``/``prepare_tf_dataset`` call to their
    own longest sequence, for a message: its collator, or the padding collator ``prepare_tf_dataset``
    makes when it is given a tokenizer and no collator; None when nothing does."""
    if keyword(made, "collate_fn") is not None:
        return "a collator"
    if made.func.attr.value == "prepare_tf_dataset" and keyword(made, "tokenizer") is not None:
        return "the padding collator it makes for its `tokenizer`"
    return None


def _pads_to_max_length(ctx) -> bool:
    """A call of the file pads to a fixed length (``tokenizer(texts, padding="max_length", ...)`` or a
    collator given it): every sequence then has that length, and a batch padder changes nothing."""
    for call in ctx.nodes(cst.Call):
        padding = keyword(call, "padding")
        if padding is not None and isinstance(padding.value, cst.SimpleString) \
                and padding.value.evaluated_value == "max_length":
            return True
    return False


def _result_unused(ctx, call: cst.Call) -> bool:
    """``test_ds = prepare(test_ds)`` and ``test_ds`` never read after it: what it makes is not used."""
    parent = ctx.parent(call)
    if not (isinstance(parent, cst.Assign) and parent.value is call and len(parent.targets) == 1
            and isinstance(parent.targets[0].target, cst.Name)):
        return False
    name = parent.targets[0].target.value
    statement = ctx.statement_of(call)
    block = ctx.block_of(statement)
    if block is None:
        return False
    later = list(block.body)[list(block.body).index(statement) + 1:]
    return not any(isinstance(node, cst.Name) and node.value == name for top in later for node in walk(top))


def _shared_with_host(ctx) -> dict:
    """Per id of a ``tf.data`` ``.batch()`` call a function of the file returns, when one call of
    the function feeds Keras and another gives what it makes to host reads only (``next(iter(...))``,
    loops that run no step, ``adapt``): the message that says the host reads lose the samples of the
    dropped last batch too (a dataset of their own, which it empties when smaller than a batch)."""
    found = {}
    for function in ctx.nodes(cst.FunctionDef):
        batches = [call for call in returned_batches(ctx, function) if is_dataset(ctx, call.func.value)]
        callers = local_calls(ctx, function) if batches else []
        read = _host_readers(ctx, function) if batches else []
        if read and any(feeds_training(ctx, caller) or feeds_training(ctx, caller, predict=True) for caller in callers):
            name = function.name.value
            why = (f": `{name}` returns it to Keras, and also to {_lost_on_host(ctx, read[0])}; give `{name}` a "
                   "`drop_remainder` parameter, False for the host reads")
            found.update((id(call), (why, False)) for call in batches)
    return found


def _host_reads_lost(ctx, helper: cst.FunctionDef) -> str:
    """What the message of a dataset rebatched whole in ``helper`` adds when a call of ``helper``
    gives what it makes to host reads only (``x, y = next(iter(make_windows(test, len(test))))``):
    they lose the samples of the dropped last batch too, all of them when it holds less than a
    batch (one batch of a whole test set). Nothing when no call does."""
    read = _host_readers(ctx, helper)
    if not read:
        return ""
    return (f"; it also reaches {_lost_on_host(ctx, read[0])}; give `{helper.name.value}` a parameter that "
            "rebatches for Keras only, not for the host reads")


def _host_readers(ctx, function: cst.FunctionDef) -> list:
    """The calls of ``function`` whose datasets are read on the host (``next(iter(make(...)))``)."""
    return [caller for caller in local_calls(ctx, function) if _read_on_host(ctx, outermost_chain(ctx, caller))]


def _lost_on_host(ctx, read: cst.Call) -> str:
    """What a host read of a rebatched dataset loses, for the messages."""
    return (f"code that reads it on the host (`{code_of(ctx, read)}`), which loses the samples of the dropped last "
            "batch too, all of them when it holds less than a batch")


def _host_loop_batches(ctx, batches) -> set:
    """Ids of the ``.batch()`` calls whose datasets only host loops read (``for images, labels in
    ds.take(1): show(model.predict(images))``), or that a layer's ``adapt`` is given: they stay out
    of the scope, where a partial last batch is no error (and ``predict`` pads it), so no sample is
    dropped there."""
    training = {id(found.batch) for found in batches}
    found = set()
    for call, _ in dataset_method_calls(ctx, "batch", "padded_batch"):
        if id(call) in training:
            continue
        if _read_on_host(ctx, outermost_chain(ctx, call)):
            found.add(id(call))
    return found


def _read_on_host(ctx, outer: cst.BaseExpression) -> bool:
    """The dataset ``outer`` (a whole chain, or a call that makes one) is only read on the host:
    iterated by host loops, given to a layer's ``adapt``, read into Python."""
    parent = ctx.parent(outer)
    if isinstance(parent, cst.For) and parent.iter is outer:
        return _host_loop(ctx, parent)
    if _adapted_on(ctx, outer) or read_into_python(ctx, outer) and not _iterated_for_steps(ctx, outer):
        return True  # `layer.adapt(ds.batch(1024))`, `next(iter(ds.batch(n)))`: read on the host
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
        return _read_by_host_loops(ctx, parent.targets[0].target.value)
    return False


# Methods that read the whole dataset they are given on the host, where a partial last batch is no
# error: a preprocessing layer's `adapt`, and a retrieval index's `index_from_dataset` (TensorFlow
# Recommenders), whose index would lack the candidates of a dropped last batch.
_HOST_READERS = frozenset({"adapt", "index_from_dataset"})


def _adapted_on(ctx, node: cst.BaseExpression) -> bool:
    """``node`` is what a preprocessing layer's ``adapt`` (or a retrieval index's
    ``index_from_dataset``) is given."""
    arg = ctx.parent(node)
    call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    return (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
            and call.func.attr.value in _HOST_READERS and arg is call.args[0])


def _host_loop(ctx, loop: cst.For) -> bool:
    """A loop of a function's body (or the module's) that does not train (``loop_trains``) nor
    calls a step that IPU111 compiles and runs through ``strategy.run`` (``infer(batch)``, a
    ``tf.function`` that only answers): the port iterates it on the host, with only its body in
    the strategy's scope. (A loop nested in another statement may run in the scope; the body of
    ``if __name__ == "__main__":`` is ported like a function's.)"""
    block = ctx.block_of(loop)
    return (isinstance(block, cst.Module) or isinstance(ctx.parent(block), cst.FunctionDef)
            or _main_guard_body(ctx, block)) and not loop_trains(ctx, loop) and id(loop) not in _compiled_step_loops(ctx)


def _iterated_for_steps(ctx, dataset: cst.BaseExpression) -> bool:
    """``dataset`` is made an iterator (``it = iter(ds)``) that a loop calling a custom step reads
    with ``next(it)`` (``for step in range(steps): x, y = next(it); train_step(x, y)``): its batches
    are the step's, not host reads, and the infeed the iterator becomes in the strategy's scope
    takes only batches of one static shape."""
    arg = ctx.parent(dataset)
    made = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    assign = ctx.parent(made) if isinstance(made, cst.Call) and is_name(made.func, "iter") else None
    if not (isinstance(assign, cst.Assign) and assign.value is made and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)):
        return False
    iterator = assign.targets[0].target.value
    return any(isinstance(node, cst.Call) and is_name(node.func, "next") and node.args
               and is_name(node.args[0].value, iterator)
               for step in step_calls(ctx) for node in walk(step.loop.body))


def _main_guard_body(ctx, block) -> bool:
    guard = ctx.parent(block)
    return is_main_guard(guard) and isinstance(ctx.parent(guard), cst.Module)


def _compiled_step_loops(ctx) -> Set[int]:
    """Ids of the loops whose step IPU111 rewrites into a ``strategy.run`` call: the compiled step
    takes batches of one static shape, as the rewritten loop shows the next port."""
    if not rewrites_loops(ctx, CUSTOM_LOOP_RULE.code):
        return set()
    return {id(plan.step.loop) for plan in loop_plans(ctx) if plan.problem is None}


def _read_by_host_loops(ctx, name: str) -> bool:
    """Every read of the variable ``name`` is a host loop's iteration over it (``for x in
    name.take(3):``), what a layer's ``adapt`` is given (``vectorize.adapt(texts)``: a vocabulary
    missing the texts of a dropped batch), or its own next version (``name = name.prefetch(2)``)."""
    reads = [node for node in ctx.nodes(cst.Name) if node.value == name
             and not isinstance(ctx.parent(node), cst.AssignTarget)]
    for node in reads:
        outer = outermost_chain(ctx, node) if isinstance(ctx.parent(node), cst.Attribute) else node
        parent = ctx.parent(outer)
        if isinstance(parent, cst.For) and parent.iter is outer and _host_loop(ctx, parent) \
                or read_into_python(ctx, outer) and not _iterated_for_steps(ctx, outer) or _adapted_on(ctx, outer):
            continue
        if isinstance(parent, cst.Assign) and any(name in bound_names(target.target) for target in parent.targets):
            continue
        return False
    return bool(reads)


def _predicted_only(ctx, batches) -> dict:
    """Per ``.batch()`` call id that ``predict`` reads (alone, or besides ``fit``/``evaluate``):
    the message that says what ``drop_remainder`` costs there, why the port does not pad the data
    (when it can say), and that the port is not complete with it."""
    reasons = unpadded_reasons(ctx)
    return {key: (_predict_drops(reasons.get(key)) + (_UNEVALUATED if "evaluate" in used else ""), False)
            for key, used in _methods_by_batch(batches).items() if "predict" in used}


def _predict_drops(reason: Optional[str] = None) -> str:
    """What `drop_remainder=True` costs a dataset that `predict` reads, and why the port does not
    pad its data, when it can say."""
    return (": `predict` reads this dataset, and gives no answer for the last samples that do not fill a "
            f"batch{_not_padded(reason)}; line its answers up with labels trimmed the same way, or pad the data to "
            "a multiple of the batch size before batching")


def _evaluated_only(batches) -> dict:
    """Per ``.batch()`` call id that only ``evaluate`` reads: its loss and metrics are computed
    without the samples of the dropped last batch, which the message says (the numbers change)."""
    return {key: (": `evaluate` reads this dataset, and its loss and metrics now leave out the samples of the dropped "
                  "last batch (fewer than one batch)", True, False)
            for key, used in _methods_by_batch(batches).items() if used == {"evaluate"}}


def _methods_by_batch(batches) -> dict:
    """Per ``.batch()`` call id, the training methods (``fit``, ``predict``...) that read it."""
    methods: dict = {}
    for found in batches:
        methods.setdefault(id(found.batch), set()).add(found.method)
    return methods


def _not_padded(reason) -> str:
    return f" (the port does not pad its data: {reason})" if reason else ""


def _padded_answers(ctx) -> dict:
    """Per ``.batch()`` call id of a ``predict`` dataset whose arrays IPU107 pads to whole batches
    before slicing: no sample is dropped, and its answers are cut back to one per sample. Empty
    when IPU107 does not run (``--select IPU105``): the data stays as it is."""
    if not is_selected(DivisibleDataset.code, ctx.config.select, ctx.config.ignore):
        return {}
    pad, cut = pad_helper_names(ctx)
    explained = {}
    for found in padded_predictions(ctx):
        padded = (f"padded to whole batches (`{pad}`, IPU107) and the answers cut back (`{cut}`), so every sample is "
                  "still answered")
        if found.helper is None:
            why = f": only `predict` reads this dataset, and its data `{code_of(ctx, found.arrays)}` is {padded}"
        else:
            why = (f": `{found.helper.name.value}` makes this dataset from `{code_of(ctx, found.arrays)}`, which its "
                   f"`predict` callers give {padded}")
            if found.trains:
                why += "; for its `fit`/`evaluate` callers a last partial batch is dropped"
        explained[id(found.batch)] = (why, True, False)
    return explained


def _arrays_advice(entry) -> str:
    """What to do with arrays a call gets from out of sight: trimmed for training, padded for
    ``predict``, which must answer for every sample."""
    if entry.method == "predict":
        return "pad arrays to a multiple of the batch size and keep the answers for the real samples only"
    return "trim arrays to a multiple of the batch size"


def _collected_answers(ctx) -> dict:
    """The same for a dataset a custom loop feeds to a step that only answers (a test or predict
    step, no training) and keeps what it answers (``probs.append(predict_step(x))``): the answers
    for the samples of the dropped last batch are missing where they are lined up with labels."""
    found = {}
    for step in evaluation_calls(ctx, model_plan(ctx).model_like):
        if not _answer_kept(ctx, step.call) or trains(ctx, step.function):
            continue  # its answer is not kept (a metric updated with it), or it trains
        for batch in _batches_of(ctx, step.loop.iter, owner(ctx, step.loop)):
            found[id(batch)] = (f": `{step.function.name.value}` answers for this dataset and the loop keeps the "
                                f"answers{_UNANSWERED}", False)
    return found


# What a dropped last batch costs answers kept batch by batch (labels taken from the same batches
# line up, but lack those samples too).
_UNANSWERED = (", which lack the samples of the dropped last batch (so do labels taken from the same batches): to "
               "answer for every sample, pad the data to a multiple of the batch size before batching; to line the "
               "answers up with labels kept elsewhere, trim those the same way")


def _comprehended_answers(ctx) -> dict:
    """The same for a dataset a comprehension runs a model on, batch by batch, to keep the answers
    (``np.concatenate([model(x).numpy() for x in test_ds])``, ``[infer(x) for x, _ in val_ds]``)."""
    models = model_plan(ctx).model_like
    found = {}
    for comprehension in ctx.nodes(cst.CompFor) if models else ():
        element = ctx.parent(comprehension)
        if not any(_runs_model(ctx, node, models) for node in walk(getattr(element, "elt", element))):
            continue
        for batch in _batches_of(ctx, comprehension.iter, owner(ctx, comprehension)):
            found[id(batch)] = (f": a comprehension runs the model on its batches and keeps the answers{_UNANSWERED}",
                                False)
    return found


def _runs_model(ctx, node: cst.CSTNode, models: set) -> bool:
    """``model(x)``, ``model.predict(x)``, or a call of a function of the file that runs one and
    does not train (a training step's answers are its losses, not predictions)."""
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if isinstance(func, cst.Attribute):
        return func.attr.value in ("predict", "predict_on_batch") and last_name(func.value) in models
    if not isinstance(func, cst.Name):
        return False
    function = local_function(ctx, func.value, node)
    return func.value in models or function is not None and runs_models(ctx, function, models) and not trains(
        ctx, function)


def _answer_kept(ctx, call: cst.Call) -> bool:
    """What ``call`` answers is kept to be lined up with something later: assigned to a name, or
    appended to a list (``probs.append(predict_step(x))``); not when a metric takes it."""
    node = ctx.parent(call)
    while isinstance(node, (cst.Arg, cst.Call, cst.Attribute, cst.Subscript, cst.BinaryOperation)):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in (
                "append", "extend"):
            return True
        if isinstance(node, cst.Call) and node.func is not call and not isinstance(node.func, cst.Attribute) \
                or isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "update_state":
            return False  # handed to a metric (`test_loss(step(x))`, `metric.update_state(...)`)
        node = ctx.parent(node)
    return isinstance(node, (cst.Assign, cst.AugAssign))


def _batches_of(ctx, source: cst.BaseExpression, scope) -> list:
    """The ``.batch()`` calls of the chains that make ``source`` (a dataset variable of ``scope``)."""
    calls, root = chain(ctx, source)
    found = [call for call in calls if call.func.attr.value in ("batch", "padded_batch")]
    if not found and isinstance(root, cst.Name):
        for _, name, made in assignments(ctx, scope):
            if name == root.value and made is not None and not (isinstance(made, cst.Name) and made.value == name):
                found.extend(call for call in chain(ctx, made)[0] if call.func.attr.value in ("batch", "padded_batch"))
    return found


def _windows(ctx, node: cst.BaseExpression) -> bool:
    """``ds.window(...)``, the receiver of a ``flat_map`` that batches each window: in the same
    chain, or what the variable was last given in the same block (``ds = ds.window(n)``, then
    ``ds = ds.flat_map(...)``, as step-by-step pipelines write it)."""
    if isinstance(node, cst.Name):
        node = last_value_before(ctx, node, owner(ctx, node))
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "window"


def _window_batches(ctx, mapper: cst.BaseExpression) -> List[cst.Call]:
    """The ``.batch()`` calls by which the function a ``flat_map`` of windows runs makes each window
    a tensor: what its lambda, or the function of the file it names (``flat_map(to_batch)``),
    returns (``w.batch(n)``), or each part of the ``Dataset.zip`` it returns for windows of pairs
    (``tf.data.Dataset.zip((x.batch(n), y.batch(n)))``)."""
    if isinstance(mapper, cst.Lambda):
        made = [mapper.body]
    else:
        function = local_function(ctx, mapper.value, mapper) if isinstance(mapper, cst.Name) else None
        made = [found.value for found in returns_of(function) if found.value is not None] if function else []
    batches = []
    for value in made:
        if isinstance(value, cst.Call) and last_name(value.func) == "zip" and value.args \
                and isinstance(value.args[0].value, (cst.Tuple, cst.List)):
            parts = [element.value for element in value.args[0].value.elements]
        else:
            parts = [value]
        batches.extend(part for part in parts if isinstance(part, cst.Call) and isinstance(part.func, cst.Attribute)
                       and part.func.attr.value == "batch")
    return batches


def _chain_end(ctx, call: cst.Call) -> cst.Call:
    """The last call of the method chain ``call`` is part of (``call.shuffle(8).batch(4)``)."""
    outer = call
    while isinstance(ctx.parent(outer), cst.Attribute) and isinstance(ctx.parent(ctx.parent(outer)), cst.Call):
        outer = ctx.parent(ctx.parent(outer))
    return outer


def _feeds_training_chain(ctx, call: cst.Call) -> bool:
    """The dataset ``call`` makes (through the rest of its chain) feeds a training call."""
    outer = _chain_end(ctx, call)
    return feeds_training(ctx, outer) or feeds_training(ctx, outer, predict=True) or _returned_to_training(ctx, outer)


def _loop_fed_calls(ctx) -> Set[int]:
    """The ids of the calls whose value a loop that feeds a custom step iterates over: the loop's
    source (``for x, y in prepare(ds, 32)``), or what the variable it names is assigned in the
    loop's scope (``train = prepare(ds, 32)``, each branch of ``a if bucket else b``)."""
    found: Set[int] = set()
    for step, source in fed_loops(ctx):
        made = [source]
        if isinstance(source, cst.Name):
            made = [value for _, name, value in assignments(ctx, owner(ctx, step.loop))
                    if name == source.value and value is not None]
        found.update(id(each) for value in made for each in alternatives(value) if isinstance(each, cst.Call))
    return found


def _returned_to_training(ctx, made: cst.Call) -> bool:
    """The dataset ``made`` makes is what a function of the file returns, directly or through the
    variable it is assigned to (``ds = ds.flat_map(...)``, then ``return ds.batch(n)``), and a call of
    that function feeds a training call."""
    function = owner(ctx, made)
    if not isinstance(function, cst.FunctionDef):
        return False
    parent = ctx.parent(made)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
        variable = parent.targets[0].target.value
        if not any(is_name(chain(ctx, node.value)[1], variable) for node in returns_of(function)):
            return False
    elif not isinstance(parent, cst.Return):
        return False
    return any(is_name(call.func, function.name.value) and (feeds_training(ctx, call) or feeds_training(
        ctx, call, predict=True)) for call in ctx.nodes(cst.Call))


def _given_whole_by_project(ctx, function: cst.FunctionDef, parameter: str) -> bool:
    """Whether ``function``, a module function (or a method of a module class, ``Trainer.fit``) the
    file never calls itself, is given for ``parameter`` a dataset batched whole by every call the
    other files of its project make of it (``def train(model, train_ds): model.fit(train_ds)`` in a
    library, ``train(model, load("train"))`` in each script, ``load`` batching with
    ``drop_remainder=True``)."""
    name = project_name(ctx, function)
    if name is None or local_calls(ctx, function) or (not is_module_function(ctx, function) and calls_of_method(
            ctx, function)):  # (its datasets come from those calls too)
        return False
    names = [param.name.value for param in function.params.params]
    if not is_module_function(ctx, function):  # a method: its callers do not pass `self`
        names = names[1:]
        # A call of its name on an object a caller cannot trace (``?.fit``) may give it any dataset.
        untraced = f"?.{function.name.value}"
        project = ctx.project
        if untraced in project.called_in_scope or any(called == untraced for called, _ in project.called_outside):
            return False
    return parameter in names and given_whole_by_callers(ctx.project.batched_calls, name, parameter,
                                                         names.index(parameter))


def _method_returns_batches(ctx, value: cst.BaseExpression) -> bool:
    """``self.data(1000)``: a call of a method of a class of the file that returns a dataset it
    batches (``_fix_returned_batches`` makes those batches whole, as for a function's)."""
    method, _ = called_method_returns(ctx, value)
    return method is not None and bool(returned_batches(ctx, method))


def _returns_batches(ctx, value: cst.BaseExpression, follow: bool = True) -> bool:
    """``make_batches(x, y)``: a call of a function of the file that returns a dataset it batches
    (``_fix_returned_batches`` makes those batches whole); with ``follow``, also a variable every
    assignment of which is one, or a ``tf.data`` dataset (``ds = make_batches(x, y)``)."""
    function, _ = called_returns(ctx, value)
    if function is not None:
        return bool(returned_batches(ctx, function))
    root = chain(ctx, value)[1]
    if not (follow and isinstance(root, cst.Name)):
        return False
    values = [made for made in values_of(ctx, root) if not (made is not None and is_name(chain(ctx, made)[1], root.value))]
    return bool(values) and all(made is not None and (is_dataset(ctx, made) or _returns_batches(ctx, made, follow=False))
                              for made in values)


def _batches_counted(ctx, source: cst.Call, function: cst.FunctionDef) -> Optional[str]:
    """How ``function`` counts the batches of the dataset ``source`` makes and assigns
    (``tf.data.experimental.cardinality(val_ds)``, ``val_ds.cardinality()``, ``len(val_ds)``):
    ``"cardinality"`` or ``"len"``; None when it does not."""
    assign = ctx.parent(source)
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)):
        return None
    return _counts_variable(ctx, function, assign.targets[0].target.value)


def _counts_variable(ctx, function: cst.FunctionDef, name: str) -> Optional[str]:
    """How ``function`` counts the batches of its variable ``name``: ``"cardinality"``, ``"len"``, or None."""
    return next((how for counted, how in _counted(ctx, walk(function.body)) if is_name(counted, name)), None)


def _counted(ctx, nodes) -> list:
    """(dataset expression, how) for what the calls among ``nodes`` count the batches of:
    ``tf.data.experimental.cardinality(val_ds)`` and ``val_ds.cardinality()`` (``"cardinality"``),
    the builtin ``len(val_ds)`` (``"len"``, which raises on a dataset whose count is unknown)."""
    found = []
    for call in nodes:
        if not isinstance(call, cst.Call):
            continue
        if last_name(call.func) == "cardinality":
            counted = call.func.value if isinstance(call.func, cst.Attribute) and not call.args else (
                call.args[0].value if call.args else None)
            if counted is not None:
                found.append((counted, "cardinality"))
        elif is_name(call.func, "len") and len(call.args) == 1 and ctx.qualified_name(call.func) is None \
                and local_function(ctx, "len", call) is None:
            found.append((call.args[0].value, "len"))
    return found


def _counted_after_return(ctx, source: cst.Call, helper: cst.FunctionDef) -> Optional[str]:
    """How code outside ``helper`` counts the batches of the dataset ``source`` makes, as the
    helper returns it (``val_ds, names = load(path)`` then ``tf.data.experimental.cardinality(val_ds)``
    or ``len(val_ds)``): rebatched in the helper, its count would be unknown (-2, or a TypeError
    from ``len``), and a split by it wrong. None when nothing there counts them."""
    return next((how for counted, how in _counted(ctx, ctx.nodes(cst.Call))
                 if ctx.enclosing_function(counted) is not helper
                 and keras_batched_source(ctx, counted, owner(ctx, counted)) is source), None)


# Why each way of counting batches fails on a rebatched dataset, whose count is unknown, and after
# what it is to be rebatched instead.
_COUNT_LOST = {
    "cardinality": ("counts its batches (`cardinality`) to split it, which a rebatched dataset no longer knows",
                    "the split"),
    "len": ("counts its batches (`len`), which raises a TypeError on a rebatched dataset, whose length is unknown",
            "the count"),
}


def _readable_at(ctx, size: cst.BaseExpression, helper: cst.FunctionDef, scope) -> bool:
    """Whether the batch size ``size``, written in ``helper``, means the same in ``scope``: a
    literal, or names of the module that neither binds (``BATCH_SIZE``, not a parameter). ``helper``
    None: written at module level."""
    bound = set(parameter_names(helper)) | {name for _, name, _ in assignments(ctx, helper)} if helper else set()
    if isinstance(scope, cst.FunctionDef):
        bound |= set(parameter_names(scope)) | {name for _, name, _ in assignments(ctx, scope)}
    names = [node.value for node in loads(size)]
    return all(name not in bound and name in module_globals(ctx) for name in names)


# What a Keras-made dataset has besides its batches, which a rebatched one (a plain tf.data
# dataset) no longer has.
_KERAS_DATASET_ATTRIBUTES = frozenset({"class_names", "file_paths"})


def _assigned_variable(ctx, source: cst.Call) -> Optional[str]:
    """``train`` for ``train = image_dataset_from_directory(...)`` (through a method chain after it)."""
    parent = ctx.parent(outermost_chain(ctx, source))
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
        return name_of(parent.targets[0].target)
    return None


def _attributes_read(scope, name: str) -> list:
    """The Keras dataset attributes read of the variable ``name`` in ``scope`` (``train.class_names``)."""
    return sorted({node.attr.value for node in walk(owner_body(scope)) if isinstance(node, cst.Attribute)
                   and node.attr.value in _KERAS_DATASET_ATTRIBUTES and is_name(node.value, name)})


def _returned_roots(ctx, function: cst.FunctionDef, name: str) -> list:
    """The variable ``name`` where ``function`` returns it, alone, as an element of a tuple, or at
    the start of a method chain (``return train.prefetch(2), len(train.class_names)``)."""
    found = []
    for statement in returns_of(function):
        value = statement.value
        elements = [element.value for element in value.elements] if isinstance(value, cst.Tuple) else [value]
        found.extend(root for root in (chain(ctx, element)[1] for element in elements) if is_name(root, name))
    return found


def _count_keyword(entry, value: cst.BaseExpression) -> str:
    """The keyword that counts the batches the call ``entry`` reads of its input ``value``: its
    ``validation_steps``, ``steps_per_epoch`` (``fit``) or ``steps``."""
    if value is not entry.data:
        return "validation_steps"
    return "steps_per_epoch" if entry.method == "fit" else "steps"


def _rebatched_inputs(ctx, rebatched: set) -> list:
    """(training call, input, batch size) for each input the port rebatches, where it is used or
    where it is made (a Keras-made dataset given ``.unbatch().batch(n, drop_remainder=True)``), when
    nothing repeats it on the way."""
    found = []
    for entry, value in training_inputs(ctx):
        source = keras_batched_source(ctx, value, entry.owner)
        if source is None or not (id(value) in rebatched or ("source", id(source)) in rebatched) \
                or _repeats(ctx, value):
            continue
        function = batched_source_name(ctx, source)
        batch = keyword(source, "batch_size") if function in KERAS_BATCHED_SOURCES else argument(source, "batch_size", 1)
        found.append((entry, value, batch.value if batch is not None else cst.Integer(
            str(KERAS_BATCHED_SOURCES.get(function, 0)))))
    return found


def _repeats(ctx, value: cst.BaseExpression) -> bool:
    """``value`` is repeated on its way to the call: ``ds.repeat()``, or a variable assigned one."""
    calls, root = chain(ctx, value)
    made = [made for made in values_of(ctx, root) if made is not None] if isinstance(root, cst.Name) else []
    calls = calls + [call for one in made for call in chain(ctx, one)[0]]
    return any(call.func.attr.value == "repeat" for call in calls)


def _drops_here(ctx, call: cst.Call) -> bool:
    """The port gives ``call`` (a ``.batch()``) ``drop_remainder=True``: it had none, or False."""
    method = call.func.attr.value
    current = argument(call, "drop_remainder", 1 if method == "batch" else 3)
    return id(call) in ctx.replacements and (current is None or is_name(current.value, "False"))


def _loaded_split(ctx, expr: cst.BaseExpression, scope: cst.CSTNode, depth: int = 0) -> Optional[str]:
    """The split string ``tfds.load`` reads for the dataset ``expr`` when it is a part of a split
    (``"train[:80%]"``): loaded there, or bound by ``ds = tfds.load(..., split=...)`` or unpacked by
    ``(train, val), info = tfds.load(..., split=[...], with_info=True)``."""
    root = chain(ctx, expr)[1]
    if isinstance(root, cst.Call):
        return _part_split(ctx, root, None)
    if not isinstance(root, cst.Name) or depth > 4:
        return None
    statement, value = last_binding_before(ctx, root, scope)
    if statement is None:
        return None
    if value is not None:
        return _loaded_split(ctx, value, scope, depth + 1)
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Call)):
        return None
    path = _unpacked_path(small.targets[0].target, root.value)
    if not path:
        return None
    if is_true(getattr(keyword(small.value, "with_info"), "value", None)):
        if path[0] != 0:
            return None  # the `info` of `ds, info = tfds.load(...)`
        path = path[1:]
    return _part_split(ctx, small.value, path[0] if path else None)


def _unpacked_path(target: cst.BaseExpression, name: str) -> Optional[List[int]]:
    """The places of ``name`` in the nested tuple ``target`` (``(train, val), info`` gives ``[0, 1]``
    for ``val``)."""
    if is_name(target, name):
        return []
    if isinstance(target, (cst.Tuple, cst.List)):
        for index, element in enumerate(target.elements):
            inner = _unpacked_path(element.value, name)
            if inner is not None:
                return [index] + inner
    return None


def _part_split(ctx, call: cst.Call, index: Optional[int]) -> Optional[str]:
    """The split of ``tfds.load(..., split=...)`` (its item ``index`` of a list of splits) when it is
    a part of one split: ``"train[:80%]"``, not ``"train"`` nor ``"train+test"``."""
    if ctx.qualified_name(call.func) != TFDS_LOAD:
        return None
    split = keyword(call, "split")
    written = split.value if split is not None else None
    if index is not None:
        items = written.elements if isinstance(written, (cst.List, cst.Tuple)) else ()
        written = items[index].value if index < len(items) else None
    if not isinstance(written, cst.SimpleString):
        return None
    text = written.evaluated_value
    return text if isinstance(text, str) and "[" in text and "+" not in text else None


def _whole_split_size(ctx, count: cst.BaseExpression, scope: cst.CSTNode, split: str, depth: int = 0
                      ) -> Optional[cst.BaseExpression]:
    """The ``info.splits["train"].num_examples`` that the step count ``count`` divides into batches
    as it is (``n // B``, ``math.ceil(n / B)``, through the names it was given to), for the split
    ``split`` is a part of. None for a count that scales it (``int(0.8 * n) // B``): that one may
    count the part."""
    if isinstance(count, cst.Attribute) and count.attr.value == "num_examples":
        return count if _split_key(count.value) == split.split("[", 1)[0] else None
    if isinstance(count, cst.Name) and depth < 3:
        given = last_value_before(ctx, count, scope)
        return _whole_split_size(ctx, given, scope, split, depth + 1) if given is not None else None
    if isinstance(count, cst.BinaryOperation) and isinstance(count.operator, (cst.Divide, cst.FloorDivide)):
        return _whole_split_size(ctx, count.left, scope, split, depth)
    if isinstance(count, cst.Call) and len(count.args) == 1 and (
            is_name(count.func, "int") or ctx.qualified_name(count.func) in ("math.ceil", "math.floor", "numpy.ceil")):
        return _whole_split_size(ctx, count.args[0].value, scope, split, depth)
    return None


def _split_key(node: cst.BaseExpression) -> Optional[str]:
    """``"train"`` for ``info.splits["train"]``."""
    if not (isinstance(node, cst.Subscript) and last_name(node.value) == "splits" and len(node.slice) == 1
            and isinstance(node.slice[0].slice, cst.Index) and isinstance(node.slice[0].slice.value, cst.SimpleString)):
        return None
    return node.slice[0].slice.value.evaluated_value


def _repeated(ctx, found) -> bool:
    """The dataset is repeated on the way to the call (``.repeat()`` before or after the batching):
    it does not run out, whatever the count."""
    methods = list(found.later) + [method for made in made_datasets(ctx, found.batch.func.value, owner(
        ctx, found.batch), every_maker=True) for method in made.methods] + chain(ctx, found.batch.func.value)[0]
    repeats = [method for method in methods if method.func.attr.value == "repeat"]
    helper_calls = [call for made in made_datasets(ctx, found.value, found.entry.owner, every_maker=True)
                    for call in made.callers]
    return any(not _repeat_ruled_out(ctx, repeat, helper_calls) for repeat in repeats)


def _repeat_ruled_out(ctx, repeat: cst.Call, helper_calls: List[cst.Call]) -> bool:
    """The ``.repeat()`` of a dataset helper sits under an ``if`` on a flag that every call of the
    helper on the way to the training call rules out (``if training:`` for ``make_ds(...,
    training=False)``): that dataset is not repeated, and runs out."""
    function = ctx.enclosing_function(repeat)
    calls = [call for call in helper_calls if function is not None and is_name(call.func, function.name.value)]
    return bool(calls) and all(ruled_out_by_call(ctx, repeat, function, call) for call in calls)


def _batch_size(call: cst.Call) -> Optional[cst.BaseExpression]:
    found = argument(call, "batch_size", 0)
    return found.value if found is not None else None


def _rebatched(node: cst.BaseExpression, size: str, windows: Optional["WindowShape"] = None) -> cst.Call:
    """``node.unbatch().batch(size, drop_remainder=True)``, and for windows ``.map(...)`` that sets
    their length."""
    unbatched = cst.Call(func=cst.Attribute(value=as_receiver(node), attr=cst.Name("unbatch")))
    batched = cst.Call(func=cst.Attribute(value=unbatched, attr=cst.Name("batch")),
                       args=[cst.Arg(cst.parse_expression(size)), keyword_arg("drop_remainder", cst.Name("True"))])
    if windows is None:
        return batched
    shaped = f"{windows.tf}.ensure_shape(windows, [None, {windows.length}] + windows.shape[2:])"
    setter = (f"lambda windows, targets: ({shaped}, targets)" if windows.targets else f"lambda windows: {shaped}")
    return cst.Call(func=cst.Attribute(value=batched, attr=cst.Name("map")), args=[cst.Arg(cst.parse_expression(setter))])


class WindowShape(NamedTuple):
    """How the windows of a ``timeseries_dataset_from_array`` get their length: ``tf`` the module's
    name, ``length`` the code of the ``sequence_length``, ``targets`` whether it pairs targets."""

    tf: str
    length: str
    targets: bool
    imports_tf: bool = False  # the file imports no `tensorflow` module under a name: `tf` is imported


def _import_tf(ctx, code: str, windows: Optional[WindowShape]) -> None:
    """Ask for ``import tensorflow as tf`` when the windows' ``ensure_shape`` needs it (a file that
    imports only ``from tensorflow import keras``)."""
    if windows is not None and windows.imports_tf:
        ctx.add_import("tensorflow", None, windows.tf, code=code)


def _window_shape(ctx, source: cst.Call, maker, scope) -> Union[None, WindowShape, str]:
    """For a dataset ``timeseries_dataset_from_array`` made (``source``, in ``maker``), rebatched in
    ``scope``: how its windows get their length there, or why they cannot (None for other makers).
    Keras cuts each window with a ``tf.range`` of the start and end, so even whole batches leave
    its length unknown, which the IPU rejects."""
    if not batched_source_name(ctx, source).endswith(".timeseries_dataset_from_array"):
        return None
    length = argument(source, "sequence_length", 2)
    tf = tensorflow_alias(ctx)
    unshaped = ("set the length of its windows too (`tf.ensure_shape`), which Keras leaves unknown and the IPU "
                "rejects")
    # `from tensorflow import keras` alone: `tf` is imported for `ensure_shape`, unless it names something else.
    imports_tf = tf is None and not any(isinstance(node, cst.Name) and node.value == "tf" for node in walk(ctx.module))
    if length is None or tf is None and not imports_tf:
        return unshaped
    same_scope = scope is maker or maker is None and not isinstance(scope, cst.FunctionDef)
    if not same_scope and not isinstance(length.value, cst.Integer) and not _readable_at(
            ctx, length.value, maker, scope):
        return f"{unshaped}: its `sequence_length` cannot be read where it is rebatched"
    targets = argument(source, "targets", 1)
    return WindowShape(tf or "tf", code_of(ctx, length.value),
                       targets is not None and not is_name(targets.value, "None"), imports_tf)


def _mapped_after_made(ctx, source: cst.Call) -> bool:
    """The dataset ``source`` makes is mapped before it is used: in its chain, or through the
    variable it is assigned in its scope (``ds = ds.map(split_window)``, ``return ds.map(...)``)."""
    if any(call.func.attr.value == "map" for call in methods_after(ctx, source)):
        return True
    variable = _assigned_variable(ctx, source)
    scope = ctx.enclosing_function(source) or ctx.module
    return variable is not None and any(
        isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "map"
        and is_name(chain(ctx, node)[1], variable) for node in walk(owner_body(scope)))


def _window_said(windows: Optional[WindowShape]) -> str:
    if windows is None:
        return ""
    return (f" and `.map()` that gives its windows their length `{windows.length}` (`ensure_shape`): Keras cuts them "
            "with a range, which leaves the length unknown to the IPU")


def _image_decoder(ctx, call: cst.Call) -> Optional[cst.Call]:
    """The call that decodes image files in the function the ``map`` ``call`` runs, if any."""
    return next((node for node in mapped_nodes(ctx, call) if isinstance(node, cst.Call)
                 and ctx.qualified_name(node.func) in _IMAGE_DECODERS), None)


def _decoded_for_batches(ctx, call: cst.Call) -> bool:
    """The ``map`` ``call`` feeds training, or is batched after (in a file that trains, and maybe
    returned with other values): the batches train, as ``fix_drop_remainder`` takes them to."""
    return any(_feeds_training_chain(ctx, made) or any(step.func.attr.value in DROP_REMAINDER_POSITION
                                                       for step in methods_after(ctx, made))
               for made in [call, *_zips_taking(ctx, call)])


def _channels_code(ctx, decoder: cst.Call) -> str:
    """The number of channels the decoder is given, as written (``1``), else 3."""
    given = argument(decoder, "channels", _CHANNELS_POSITION.get(last_name(decoder.func), 1))
    return code_of(ctx, given.value) if _given_channels(decoder) and given is not None else "3"


def _zips_taking(ctx, call: cst.Call) -> List[cst.Call]:
    """The ``tf.data.Dataset.zip(...)`` calls of the same scope that take the dataset the chain of
    ``call`` is assigned to (``anchors = paths.map(load)``, then ``Dataset.zip((anchors, positives))``)."""
    outer = _chain_end(ctx, call)
    assign = ctx.parent(outer)
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)):
        return []
    name, scope = assign.targets[0].target.value, owner(ctx, outer)
    return [zipped for zipped, _ in ctx.calls_to("tensorflow.data.Dataset.zip")
            if owner(ctx, zipped) is scope and any(is_name(node, name) for node in walk(zipped))]


def _given_channels(decoder: cst.Call) -> bool:
    """The decoder is given a number of channels other than 0 or None (the file's own), or always
    gives three (``decode_gif``)."""
    name = last_name(decoder.func)
    if name == "decode_gif":
        return True
    given = argument(decoder, "channels", _CHANNELS_POSITION.get(name, 1))
    return given is not None and not (is_name(given.value, "None") or isinstance(given.value, cst.Integer)
                                      and given.value.value == "0")


RULE = DropRemainder()
