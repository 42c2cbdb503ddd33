from typing import List, Optional, Set, Tuple

import libcst as cst

from porter.rule import FIX, KERAS, Example, Rule
from porter.context import code_of, walk
from porter.cstutil import argument
from porter.rules._tf.tfdata import cast_uint8, cast_uint8_datasets, dataset_method_calls, tensorflow_alias
from porter.rules.keras._analysis.datasets import argument_sources
from porter.rules.keras._analysis.model_plan import model_plan
from porter.rules.keras._analysis.python_data import image_generator
from porter.rules.keras._analysis.util import DATA_METHODS, data_arguments, is_estimator, method_calls
from porter.scopes import local_function, owner

_ROLES = ("x", "y", "features", "labels")


_BRANCH = """\
import tensorflow as tf


def load(augment):
    (x, y), _ = tf.keras.datasets.fashion_mnist.load_data()
    if augment:
        x = flip(x)
    model.fit(x.astype("float32"), y.astype("int32"))
    ds = tf.data.Dataset.from_tensor_slices((x, {labels})).map(normalize).batch(32)
"""


# The dataset is made, or the model trained, by a function of the file from its parameters.
_HELPER = """\
import tensorflow as tf


def make_batches(x, y):
    return tf.data.Dataset.from_tensor_slices((x, y)).shuffle(10000).batch(64)


def train(model, x, y):
    model.fit(x, y, batch_size=64, epochs=2)


(x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
x_train = x_train.astype("float32") / 255.0
batches = make_batches(x_train, {y_train})
train(model, {x_test}, {y_test})
"""


_LOADER = """\
import tensorflow as tf


def load():
    (images, labels), _ = tf.keras.datasets.cifar10.load_data()
    return images.astype("float32") / 255.0, labels


images, labels = load()
ds = tf.data.Dataset.from_tensor_slices((images, {labels})).shuffle(1000).batch(50)
"""


class Uint8Cast(Rule):
    code = "IPU106"
    name = "uint8-cast"
    kind = FIX
    frameworks = frozenset({KERAS})
    summary = "Cast uint8 images to float32 and uint8 labels to int32 before they reach the model."
    rationale = (
        "The IPU computes in float32, float16, int32 and bool; uint8 is only moved, not computed with "
        "(Targeting the IPU from TensorFlow 2, \"Supported types\"), and Graphcore's TensorFlow 1 tutorial "
        "\"Porting a simple example\" casts uint8 features to float32 on the host. "
        "Arrays from `keras.datasets.{mnist,fashion_mnist,cifar10,cifar100}.load_data()` and arrays "
        "made with `dtype=uint8` (also joined: `np.concatenate([x_train, x_test])`, or in arithmetic with a "
        "Python int from 0 to 255, which NumPy keeps uint8: `labels % 2`, `255 - images`) that reach `fit`/`evaluate`/`predict` (or the `search` of a tuner given a "
        "builder of the file, which hands them to `fit`) or `Dataset.from_tensor_slices` "
        "still uint8 (alone, or as the values of a dict or list of inputs) get `.astype(\"float32\")`, or "
        "`.astype(\"int32\")` for a Keras dataset's labels (they reach the loss as class ids); a tensor TensorFlow "
        "makes of such data with an op that keeps its dtype (`tf.expand_dims`, `tf.convert_to_tensor`, `tf.reshape`) "
        "gets `tf.cast` there. A `tfds.load` of "
        "such an image set gets a `map` with `tf.cast`. Data already cast or normalised (`/ 255.0`, "
        "`.astype(...)`, `to_categorical`) is left "
        "alone, and so is data whose flow is not clear (a branch; what a function of the file returns is followed "
        "into it, and a parameter of a function of the file that the function does not assign is cast where its "
        "callers give it, and a module variable a function reads without binding it is taken as the module "
        "leaves it), and the "
        "images of a dataset with its own `map` (its labels, which a map passes through, are cast, also from a "
        "dict of columns the map picks them out of, to int32, as the map may index with them); other uint8 labels "
        "(masks) of a mapped dataset are cast when every map only hands them on or gives them to `tf.cast`. "
        "Masks a `map` function decodes from image files (`tf.io.decode_png`) and returns still uint8 (resized "
        "with `method=\"nearest\"`, shifted with `-= 1`) as the second of (image, mask) are returned as "
        "`tf.cast(mask, tf.int32)`."
    )
    examples = (
        # A function that trains on the module's arrays without binding them (`run_experiment(model)`)
        # reads them as the module leaves them: uint8, cast where the function reads them.
        Example(
            """\
            import tensorflow as tf

            (x_train, y_train), (x_test, y_test) = tf.keras.datasets.cifar10.load_data()


            def run_experiment(model):
                model.fit(x_train, y_train, batch_size=50, epochs=3)
                return model.evaluate(x_test, y_test, batch_size=50)


            run_experiment(tf.keras.models.load_model("objects.keras"))
            """,
            """\
            import tensorflow as tf

            (x_train, y_train), (x_test, y_test) = tf.keras.datasets.cifar10.load_data()


            def run_experiment(model):
                model.fit(x_train.astype("float32"), y_train.astype("int32"), batch_size=50, epochs=3)
                return model.evaluate(x_test.astype("float32"), y_test.astype("int32"), batch_size=50)


            run_experiment(tf.keras.models.load_model("objects.keras"))
            """,
        ),
        # In the braces of an f-string delimited by `"`, the dtype is written in `'`: the SDK's Python
        # (before 3.12) would take `"` for the end of the f-string.
        Example(
            """\
            import tensorflow as tf

            _, (x_test, y_test) = tf.keras.datasets.mnist.load_data()
            model = tf.keras.models.load_model("digits.keras")
            print(f"test loss: {model.evaluate(x_test, y_test, batch_size=50)}")
            """,
            """\
            import tensorflow as tf

            _, (x_test, y_test) = tf.keras.datasets.mnist.load_data()
            model = tf.keras.models.load_model("digits.keras")
            print(f"test loss: {model.evaluate(x_test.astype('float32'), y_test.astype('int32'), batch_size=50)}")
            """,
        ),
        # A tensor TensorFlow makes of uint8 images keeps their dtype: cast with `tf.cast` (a tensor
        # has no `.astype`).
        Example(
            """\
            import tensorflow as tf

            (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
            images = tf.expand_dims(x_train, -1)
            model = tf.keras.models.load_model("digits.h5")
            model.fit(images, y_train, batch_size=32)
            """,
            """\
            import tensorflow as tf

            (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
            images = tf.expand_dims(x_train, -1)
            model = tf.keras.models.load_model("digits.h5")
            model.fit(tf.cast(images, tf.float32), y_train.astype("int32"), batch_size=32)
            """,
        ),
        # An `ImageDataGenerator` computes its statistics on the host (as floats): only the model's data is cast.
        Example(
            """\
            import tensorflow as tf

            (x_train, y_train), _ = tf.keras.datasets.cifar10.load_data()
            augment = tf.keras.preprocessing.image.ImageDataGenerator(featurewise_center=True)
            augment.fit(x_train)
            """,
            reported=False,
        ),
        # The tensor is made with a float dtype: nothing to cast.
        Example(
            """\
            import tensorflow as tf

            (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
            images = tf.convert_to_tensor(x_train, dtype=tf.float32)
            model = tf.keras.models.load_model("digits.h5")
            model.fit(images, y_train.astype("int32"), batch_size=32)
            """,
            reported=False,
        ),
        # Named inputs (a dict) and several inputs (a list): each array is cast as it would be alone.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
            thumbnails = np.zeros((60000, 8, 8), dtype=np.uint8)
            model = tf.keras.models.load_model("two_views.keras")
            model.fit({"digit": x_train, "thumbnail": thumbnails}, {"label": y_train}, batch_size=100)
            model.predict([x_train, thumbnails], batch_size=100)
            pairs = tf.data.Dataset.from_tensor_slices(({"digit": x_train}, y_train)).batch(100)
            """,
            """\
            import numpy as np
            import tensorflow as tf

            (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
            thumbnails = np.zeros((60000, 8, 8), dtype=np.uint8)
            model = tf.keras.models.load_model("two_views.keras")
            model.fit({"digit": x_train.astype("float32"), "thumbnail": thumbnails.astype("float32")}, {"label": y_train.astype("int32")}, batch_size=100)
            model.predict([x_train.astype("float32"), thumbnails.astype("float32")], batch_size=100)
            pairs = tf.data.Dataset.from_tensor_slices(({"digit": x_train.astype("float32")}, y_train.astype("int32"))).batch(100)
            """,
        ),
        # A dict of columns that a map splits into (image, label): the labels are cast, to int32 (the map
        # may index with them); the images are left to the map.
        Example(
            """\
            import tensorflow as tf

            (pictures, classes), _ = tf.keras.datasets.fashion_mnist.load_data()
            rows = tf.data.Dataset.from_tensor_slices({"picture": pictures, "class": classes})
            pairs = rows.map(lambda row: (tf.image.convert_image_dtype(row["picture"], tf.float32), tf.one_hot(row["class"], 10)))
            model = tf.keras.models.load_model("wardrobe.keras")
            model.fit(pairs.batch(60, drop_remainder=True), epochs=2)
            """,
            """\
            import tensorflow as tf

            (pictures, classes), _ = tf.keras.datasets.fashion_mnist.load_data()
            rows = tf.data.Dataset.from_tensor_slices({"picture": pictures, "class": classes.astype("int32")})
            pairs = rows.map(lambda row: (tf.image.convert_image_dtype(row["picture"], tf.float32), tf.one_hot(row["class"], 10)))
            model = tf.keras.models.load_model("wardrobe.keras")
            model.fit(pairs.batch(60, drop_remainder=True), epochs=2)
            """,
        ),
        # A tuner given a builder of the file trains with what `search` gets.
        # Keras 2's `fit_generator` hands its validation arrays on to `fit`: cast as `fit`'s are (the
        # generator's own batches are reported by IPU151).
        Example(
            """\
            from keras.datasets import cifar10

            (x_train, y_train), (x_test, y_test) = cifar10.load_data()
            model.fit_generator(datagen.flow(x_train, y_train, batch_size=32), steps_per_epoch=1562,
                                validation_data=(x_test, y_test))
            """,
            """\
            from keras.datasets import cifar10

            (x_train, y_train), (x_test, y_test) = cifar10.load_data()
            model.fit_generator(datagen.flow(x_train, y_train, batch_size=32), steps_per_epoch=1562,
                                validation_data=(x_test.astype("float32"), y_test.astype("int32")))
            """,
        ),
        # Split again by nested unpacking: every part still holds the uint8 data.
        Example(
            """\
            import tensorflow as tf

            (x_train, y_train), _ = tf.keras.datasets.cifar10.load_data()
            (x_fit, y_fit), (x_val, y_val) = (x_train[:40000], y_train[:40000]), (x_train[40000:], y_train[40000:])
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
            model.fit(x_fit, y_fit, validation_data=(x_val, y_val), batch_size=100)
            """,
            """\
            import tensorflow as tf

            (x_train, y_train), _ = tf.keras.datasets.cifar10.load_data()
            (x_fit, y_fit), (x_val, y_val) = (x_train[:40000], y_train[:40000]), (x_train[40000:], y_train[40000:])
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
            model.fit(x_fit.astype("float32"), y_fit.astype("int32"), validation_data=(x_val.astype("float32"), y_val.astype("int32")), batch_size=100)
            """,
        ),
        Example(
            """\
            import keras_tuner
            import tensorflow as tf

            (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()


            def build(hp):
                model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(hp.Int("units", 16, 64))])
                model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
                return model


            tuner = keras_tuner.RandomSearch(build, objective="loss", max_trials=3)
            tuner.search(x_train, y_train, epochs=2)
            """,
            """\
            import keras_tuner
            import tensorflow as tf

            (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()


            def build(hp):
                model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(hp.Int("units", 16, 64))])
                model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
                return model


            tuner = keras_tuner.RandomSearch(build, objective="loss", max_trials=3)
            tuner.search(x_train.astype("float32"), y_train.astype("int32"), epochs=2)
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def main():
                (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
                x_train = x_train.reshape(-1, 28, 28, 1)
                model = build()
                model.fit(x_train, y_train, epochs=2, validation_data=(x_test, y_test))
                model.evaluate(x_test, y_test)
            """,
            """\
            import tensorflow as tf


            def main():
                (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
                x_train = x_train.reshape(-1, 28, 28, 1)
                model = build()
                model.fit(x_train.astype("float32"), y_train.astype("int32"), epochs=2, validation_data=(x_test.astype("float32"), y_test.astype("int32")))
                model.evaluate(x_test.astype("float32"), y_test.astype("int32"))
            """,
        ),
        # A parameter is cast where the caller gives it (images cast there already are left alone).
        Example(_HELPER.format(y_train="y_train", x_test="x_test", y_test="y_test"),
                _HELPER.format(y_train='y_train.astype("int32")', x_test='x_test.astype("float32")',
                               y_test='y_test.astype("int32")')),
        # What a loader function of the file returns holds what it held at its `return`; labels that
        # are uint8 at one `return` only are left alone.
        Example(*(_LOADER.format(labels=labels) for labels in ("labels", 'labels.astype("int32")'))),
        Example(
            """\
            import tensorflow as tf


            def load(one_hot):
                (x, y), _ = tf.keras.datasets.mnist.load_data()
                if one_hot:
                    return x / 255.0, tf.keras.utils.to_categorical(y)
                return x / 255.0, y


            images, labels = load(False)
            model.fit(images, labels, batch_size=64)
            """,
            reported=False,
        ),
        # uint8 arrays joined (train and test images together) stay uint8; joined with float data, not.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            (x_train, y_train), (x_test, y_test) = tf.keras.datasets.cifar10.load_data()
            images = np.concatenate([x_train, x_test])
            model.fit(images, np.vstack((y_train, y_test)), batch_size=100)
            model.predict(np.concatenate([x_test, np.random.rand(10, 32, 32, 3)]))
            """,
            """\
            import numpy as np
            import tensorflow as tf

            (x_train, y_train), (x_test, y_test) = tf.keras.datasets.cifar10.load_data()
            images = np.concatenate([x_train, x_test])
            model.fit(images.astype("float32"), np.vstack((y_train, y_test)).astype("int32"), batch_size=100)
            model.predict(np.concatenate([x_test, np.random.rand(10, 32, 32, 3)]))
            """,
        ),
        # Arithmetic with a Python int uint8 holds keeps uint8 in NumPy; with a larger int or a name, not known.
        Example(
            """\
            import tensorflow as tf

            (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
            model.fit(255 - x_train, {"digit": y_train, "odd": y_train % 2, "shifted": y_train + offset}, batch_size=100)
            """,
            """\
            import tensorflow as tf

            (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
            model.fit((255 - x_train).astype("float32"), {"digit": y_train.astype("int32"), "odd": (y_train % 2).astype("int32"), "shifted": y_train + offset}, batch_size=100)
            """,
        ),
        # NumPy's reshaping functions keep the dtype, as the array methods do.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
            x_train = np.reshape(x_train, (-1, 784))
            ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(64)
            model.evaluate(np.expand_dims(x_test, -1), y_test)
            """,
            """\
            import numpy as np
            import tensorflow as tf

            (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
            x_train = np.reshape(x_train, (-1, 784))
            ds = tf.data.Dataset.from_tensor_slices((x_train.astype("float32"), y_train.astype("int32"))).batch(64)
            model.evaluate(np.expand_dims(x_test, -1).astype("float32"), y_test.astype("int32"))
            """,
        ),
        Example(
            """\
            from tensorflow import keras
            import tensorflow as tf

            cifar = keras.datasets.cifar10
            (images, labels), _ = cifar.load_data()
            ds = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(1000).batch(64)
            """,
            """\
            from tensorflow import keras
            import tensorflow as tf

            cifar = keras.datasets.cifar10
            (images, labels), _ = cifar.load_data()
            ds = tf.data.Dataset.from_tensor_slices((images.astype("float32"), labels.astype("int32"))).shuffle(1000).batch(64)
            """,
        ),
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            frames = np.zeros((64, 32, 32, 3), dtype=np.uint8)
            predictions = model.predict(frames)
            """,
            """\
            import numpy as np
            import tensorflow as tf

            frames = np.zeros((64, 32, 32, 3), dtype=np.uint8)
            predictions = model.predict(frames.astype("float32"))
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            mnist = tf.keras.datasets.mnist
            (x_train, y_train), (x_test, y_test) = mnist.load_data()
            x_train, x_test = x_train / 255.0, x_test / 255.0
            model.fit(x_train, y_train.astype("int32"), epochs=5)
            model.evaluate(x_test, tf.keras.utils.to_categorical(y_test))
            """,
            reported=False,
        ),
        Example(
            """\
            import keras
            from keras.datasets import cifar100


            def train(model):
                (x, y), _ = cifar100.load_data(label_mode="fine")
                model.fit(x, y, batch_size=50)
            """,
            """\
            import keras
            from keras.datasets import cifar100


            def train(model):
                (x, y), _ = cifar100.load_data(label_mode="fine")
                model.fit(x.astype("float32"), y.astype("int32"), batch_size=50)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            (x_train, _), (x_test, _) = tf.keras.datasets.mnist.load_data()
            autoencoder.fit(x_train, x_train, epochs=10, validation_data=(x_test, x_test))
            """,
            """\
            import tensorflow as tf

            (x_train, _), (x_test, _) = tf.keras.datasets.mnist.load_data()
            autoencoder.fit(x_train.astype("float32"), x_train.astype("float32"), epochs=10, validation_data=(x_test.astype("float32"), x_test.astype("float32")))
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            if __name__ == "__main__":
                (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
                model.fit(x_train, y_train)
            """,
            """\
            import tensorflow as tf

            if __name__ == "__main__":
                (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
                model.fit(x_train.astype("float32"), y_train.astype("int32"))
            """,
        ),
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            def run(model, pixels, classes):
                images = pixels.astype(np.uint8)
                model.fit(images, classes)
            """,
            """\
            import numpy as np
            import tensorflow as tf


            def run(model, pixels, classes):
                images = pixels.astype(np.uint8)
                model.fit(images.astype("float32"), classes)
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def main():
                (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
                model.fit(x_train.astype("float32"), y_train.astype("int32"), epochs=2)
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow as tf
            import tensorflow_datasets as tfds

            train = tfds.load("mnist", split="train", as_supervised=True)
            model.fit(train.shuffle(1024).batch(128), epochs=3)
            """,
            """\
            import tensorflow as tf
            import tensorflow_datasets as tfds

            train = tfds.load("mnist", split="train", as_supervised=True).map(lambda image, label: (tf.cast(image, tf.float32), label))
            model.fit(train.shuffle(1024).batch(128), epochs=3)
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            import tensorflow_datasets as tfds


            def normalize(image, label):
                return tf.cast(image, tf.float32) / 255.0, label


            def main():
                train = tfds.load("cifar10", split="train", as_supervised=True)
                train = train.map(normalize).batch(64)
                model.fit(train, epochs=3)
            """,
            reported=False,
        ),
        # Images changed in a branch: left alone; the labels, which a map passes through, are cast.
        Example(*(_BRANCH.format(labels=labels) for labels in ("y", 'y.astype("int32")'))),
        # A dataset with its own map: the map passes the labels through, so they are cast; what it
        # does to the images is its own (`convert_image_dtype` scales uint8 images, not float ones).
        Example(
            """\
            import tensorflow as tf

            (images, labels), _ = tf.keras.datasets.cifar10.load_data()
            train = tf.data.Dataset.from_tensor_slices((images, labels)).map(augment).batch(64)
            """,
            """\
            import tensorflow as tf

            (images, labels), _ = tf.keras.datasets.cifar10.load_data()
            train = tf.data.Dataset.from_tensor_slices((images, labels.astype("int32"))).map(augment).batch(64)
            """,
        ),
        # uint8 masks that every map hands on as they are, or only casts: cast before the maps.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            masks = np.load("masks.npy").astype(np.uint8)


            def weigh(image, mask):
                return image, mask, tf.gather(class_weights, tf.cast(mask, tf.int32))


            pairs = tf.data.Dataset.from_tensor_slices((images, masks)).map(lambda x, y: (augment(x), y))
            model.fit(pairs.map(weigh).batch(8))
            """,
            """\
            import numpy as np
            import tensorflow as tf

            masks = np.load("masks.npy").astype(np.uint8)


            def weigh(image, mask):
                return image, mask, tf.gather(class_weights, tf.cast(mask, tf.int32))


            pairs = tf.data.Dataset.from_tensor_slices((images, masks.astype("float32"))).map(lambda x, y: (augment(x), y))
            model.fit(pairs.map(weigh).batch(8))
            """,
        ),
        # Masks a map decodes from PNG files and keeps uint8 (nearest resize, `-= 1`): returned cast.
        Example(
            """\
            import tensorflow as tf


            def load(image_path, mask_path):
                image = tf.image.resize(tf.io.decode_jpeg(tf.io.read_file(image_path), channels=3), (128, 128))
                mask = tf.io.decode_png(tf.io.read_file(mask_path), channels=1)
                mask = tf.image.resize(mask, (128, 128), method="nearest")
                mask -= 1
                return image / 255.0, mask


            pairs = tf.data.Dataset.from_tensor_slices((images, masks)).map(load).batch(8)
            """,
            """\
            import tensorflow as tf


            def load(image_path, mask_path):
                image = tf.image.resize(tf.io.decode_jpeg(tf.io.read_file(image_path), channels=3), (128, 128))
                mask = tf.io.decode_png(tf.io.read_file(mask_path), channels=1)
                mask = tf.image.resize(mask, (128, 128), method="nearest")
                mask -= 1
                return image / 255.0, tf.cast(mask, tf.int32)


            pairs = tf.data.Dataset.from_tensor_slices((images, masks)).map(load).batch(8)
            """,
        ),
        # The same from TensorFlow's modules alone (`tf_io`): the cast brings its own import.
        Example(
            """\
            from tensorflow import data as tf_data
            from tensorflow import io as tf_io


            def dataset(paths, mask_paths):
                def load(path, mask_path):
                    mask = tf_io.read_file(mask_path)
                    mask = tf_io.decode_png(mask, channels=1)
                    return tf_io.decode_png(tf_io.read_file(path)) / 255, mask

                return tf_data.Dataset.from_tensor_slices((paths, mask_paths)).map(load).batch(4)
            """,
            """\
            from tensorflow import data as tf_data
            from tensorflow import io as tf_io
            import tensorflow as tf


            def dataset(paths, mask_paths):
                def load(path, mask_path):
                    mask = tf_io.read_file(mask_path)
                    mask = tf_io.decode_png(mask, channels=1)
                    return tf_io.decode_png(tf_io.read_file(path)) / 255, tf.cast(mask, tf.int32)

                return tf_data.Dataset.from_tensor_slices((paths, mask_paths)).map(load).batch(4)
            """,
        ),
        # A mask resized with the default (bilinear) method is float32 already: left alone.
        Example(
            """\
            import tensorflow as tf


            def load(image_path, mask_path):
                mask = tf.io.decode_png(tf.io.read_file(mask_path), channels=1)
                mask = tf.image.resize(mask, (128, 128))
                return image_path, mask


            pairs = tf.data.Dataset.from_tensor_slices((images, masks)).map(load)
            """,
            reported=False,
        ),
        # A mask bound in a branch: its dtype at the return is not clear, so it is left alone.
        Example(
            """\
            import tensorflow as tf


            def load(image, mask_path):
                mask = tf.io.decode_png(tf.io.read_file(mask_path), channels=1)
                if tf.random.uniform(()) > 0.5:
                    mask = tf.image.flip_left_right(mask) / 255
                return image, mask


            pairs = tf.data.Dataset.from_tensor_slices((images, masks)).map(load)
            """,
            reported=False,
        ),
        # A map that computes with the masks (`tf.one_hot` takes integers): left as they are.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            masks = np.load("masks.npy").astype(np.uint8)
            pairs = tf.data.Dataset.from_tensor_slices((images, masks)).map(lambda x, y: (x, tf.one_hot(y, 3)))
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow as tf

            (x_train, y_train), _ = tf.keras.datasets.imdb.load_data(num_words=10000)
            model.fit(x_train, y_train)
            """,
            reported=False,
        ),
        # Labels drawn in a training loop, batch by batch, and given to `train_on_batch` in the same
        # pass: known uint8 there, cast.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            def train(discriminator, steps, batch_size):
                (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
                x_train = x_train.astype("float32") / 127.5 - 1.0
                for step in range(steps):
                    idx = np.random.randint(0, x_train.shape[0], batch_size)
                    images, labels = x_train[idx], y_train[idx]
                    discriminator.train_on_batch([images, labels], np.ones((batch_size, 1)))
            """,
            """\
            import numpy as np
            import tensorflow as tf


            def train(discriminator, steps, batch_size):
                (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
                x_train = x_train.astype("float32") / 127.5 - 1.0
                for step in range(steps):
                    idx = np.random.randint(0, x_train.shape[0], batch_size)
                    images, labels = x_train[idx], y_train[idx]
                    discriminator.train_on_batch([images, labels.astype("float32")], np.ones((batch_size, 1)))
            """,
        ),
        # A scikit-learn estimator fitted on the labels computes on the host: left as it is.
        Example(
            """\
            import tensorflow as tf
            from sklearn.neighbors import KNeighborsClassifier

            (x_train, y_train), _ = tf.keras.datasets.fashion_mnist.load_data()
            neighbours = KNeighborsClassifier(n_neighbors=5)
            neighbours.fit(x_train.reshape(len(x_train), -1), y_train)
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        sources = _argument_sources(ctx)
        holders = model_plan(ctx).holders
        for call, method in method_calls(ctx, *DATA_METHODS, "search", "fit_generator"):
            if method == "search" and not (isinstance(call.func.value, cst.Name) and call.func.value.value in holders):
                continue  # `search` trains only on a tuner given a builder of the file (it passes its data to `fit`)
            if is_estimator(ctx, call.func.value) or image_generator(ctx, call.func.value):
                continue  # scikit-learn's `fit`, and an `ImageDataGenerator`'s statistics, compute on the host
            for role, value in data_arguments(call, method):
                if role in _ROLES:
                    cast_uint8(ctx, self.code, value, role, f"`{method}()`", sources)
        cast_uint8_datasets(ctx, self.code, sources)
        cast_decoded_masks(ctx, self.code)


def _argument_sources(ctx):
    """Where the data read at an expression can be cast: the expression itself, or, for a parameter
    of a function of the file, the argument each call of it gives, each place once (a parameter may
    be read at several places)."""
    done: Set[int] = set()

    def sources(value: cst.BaseExpression, where: str) -> List[Tuple[cst.BaseExpression, str]]:
        found = []
        for source, called in argument_sources(ctx, value, owner(ctx, value), ()):
            if id(source) not in done:
                done.add(id(source))
                found.append((source, f"the call of `{called}`" if called else where))
        return found
    return sources


RULE = Uint8Cast()


# Ops that decode an image file into uint8 unless given another `dtype`.
_DECODERS = frozenset(f"tensorflow.{module}.decode_{kind}" for module in ("io", "image")
                      for kind in ("png", "jpeg", "image", "bmp", "gif"))
# Ops that keep the dtype of the tensor they are given first.
_DTYPE_KEEPING = frozenset(f"tensorflow.{op}" for op in (
    "squeeze", "reshape", "expand_dims", "ensure_shape", "image.flip_left_right", "image.flip_up_down",
    "image.rot90", "image.crop_to_bounding_box", "image.resize_with_crop_or_pad", "image.central_crop"))
_UINT8_SPELLINGS = ('"uint8"', "'uint8'", "tensorflow.uint8", "tensorflow.dtypes.uint8")


def cast_decoded_masks(ctx, code: str) -> None:
    """The masks a `map` function of the file decodes from image files (`tf.io.decode_png`) and
    returns still uint8, as the second of what it returns (image, mask), are returned as
    `tf.cast(mask, tf.int32)`: they reach the loss as class ids, which the IPU computes with in
    int32, not uint8 (casting them on the host is the safe rule of the reference)."""
    tf = tensorflow_alias(ctx)
    if tf is None and any(isinstance(node, cst.Name) and node.value == "tf" for node in walk(ctx.module)):
        return  # `tf` names something else, and TensorFlow is imported only by its modules
    done: Set[int] = set()
    for call, _ in dataset_method_calls(ctx, "map"):
        given = call.args[0].value if call.args else None
        function = local_function(ctx, given.value, call) if isinstance(given, cst.Name) else None
        if function is None or id(function) in done or not isinstance(function.body, cst.IndentedBlock):
            continue
        done.add(id(function))
        mask = _returned_uint8_mask(ctx, function)
        if mask is None:
            continue
        if tf is None:  # `from tensorflow import io as tf_io`: `tf.cast` needs its own import
            tf = "tf"
            ctx.add_import("tensorflow", None, tf, code=code)
        ctx.replace(mask, lambda node, tf=tf: cst.parse_expression(f"{tf}.cast({node.value}, {tf}.int32)"))
        ctx.report(code, mask, f"`{mask.value}`, the labels the map `{function.name.value}` returns, is uint8 "
                   "decoded from an image file, which the IPU does not compute with: it is returned as "
                   f"`{tf}.cast({mask.value}, {tf}.int32)` (class ids; Keras losses cast labels to the "
                   "model's output dtype)", fixed=True)


def _returned_uint8_mask(ctx, function: cst.FunctionDef) -> Optional[cst.Name]:
    """The name returned second by the last statement of `function` (`return image, mask`) when
    the statements before it, at the top of its body, make it uint8 from an image file and keep
    it so; None when not (or when a branch or a loop binds it after, whose flow is not clear)."""
    statements = list(function.body.body)
    last = statements[-1] if statements else None
    returned = last.body[0] if isinstance(last, cst.SimpleStatementLine) and last.body else None
    if not (isinstance(returned, cst.Return) and isinstance(returned.value, cst.Tuple)
            and len(returned.value.elements) == 2 and isinstance(returned.value.elements[1].value, cst.Name)):
        return None
    mask = returned.value.elements[1].value
    uint8 = False
    for statement in statements[:-1]:
        if mask.value not in _targets(statement):
            continue
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
        # A statement whose dtype is not known (`tf.io.read_file`, a branch) leaves it not known to
        # be uint8, until a decoder makes it so again.
        uint8 = bool(_keeps_uint8(ctx, small, mask.value, uint8))
    return mask if uint8 else None


def _targets(statement: cst.CSTNode) -> Set[str]:
    """Every name a statement (or a block in it) binds."""
    names = set()
    for node in walk(statement):
        targets = []
        if isinstance(node, cst.Assign):
            targets = [target.target for target in node.targets]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, (cst.For, cst.CompFor)):
            targets = [node.target]
        elif isinstance(node, cst.NamedExpr):
            targets = [node.target]
        for target in targets:
            names |= {name.value for name in walk(target) if isinstance(name, cst.Name)}
    return names


def _keeps_uint8(ctx, statement, name: str, uint8: bool) -> Optional[bool]:
    """Whether `name` is uint8 after `statement` binds it (`uint8`: whether it was before); None
    when the statement is not one whose dtype is known (a tuple target, a branch, another op)."""
    if isinstance(statement, cst.AugAssign):
        # `mask -= 1`: NumPy and TensorFlow keep uint8 with a Python int.
        return uint8 if isinstance(statement.value, cst.Integer) else None
    if not (isinstance(statement, cst.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0].target, cst.Name) and isinstance(statement.value, cst.Call)):
        return None
    call = statement.value
    op = ctx.qualified_name(call.func) or ""
    dtype = _argument(call, 1, "dtype")
    if op in _DECODERS:
        return dtype is None
    if op in ("tensorflow.image.convert_image_dtype", "tensorflow.cast", "tensorflow.dtypes.cast"):
        return dtype is not None and _spelling(ctx, dtype) in _UINT8_SPELLINGS
    first = _argument(call, 0, "image" if op.startswith("tensorflow.image.") else "tensor")
    from_itself = isinstance(first, cst.Name) and first.value == name and uint8
    if op == "tensorflow.image.resize":
        method = _argument(call, 2, "method")
        nearest = method is not None and ("NEAREST" in _spelling(ctx, method) or "nearest" in _spelling(ctx, method))
        return from_itself and nearest
    if op in _DTYPE_KEEPING:
        return from_itself
    return None


def _argument(call: cst.Call, position: int, keyword: str) -> Optional[cst.BaseExpression]:
    found = argument(call, keyword, position)
    return found.value if found is not None else None


def _spelling(ctx, node: cst.BaseExpression) -> str:
    return ctx.qualified_name(node) or code_of(ctx, node)
