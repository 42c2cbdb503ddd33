from porter.rules.keras._analysis.util import DATA_METHODS, data_arguments, method_calls
from porter.rule import FIX, KERAS, Example, Rule
from porter.rules._tf.tfdata import cast_uint8, cast_uint8_datasets

_ROLES = ("x", "y", "features", "labels")


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
        "made with `dtype=uint8` that reach `fit`/`evaluate`/`predict` or `Dataset.from_tensor_slices` "
        "still uint8 get `.astype(\"float32\")`, or `.astype(\"int32\")` for a Keras dataset's labels (they "
        "reach the loss as class ids). A `tfds.load` of such an image set gets a `map` with `tf.cast`. Data already cast or normalised (`/ 255.0`, `.astype(...)`, `to_categorical`) is left "
        "alone, and so is data whose flow is not clear within one function (a branch, a helper, a "
        "dataset with its own `map`)."
    )
    examples = (
        Example(
            "import tensorflow as tf\n\n\ndef main():\n"
            "    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()\n"
            "    x_train = x_train.reshape(-1, 28, 28, 1)\n    model = build()\n"
            "    model.fit(x_train, y_train, epochs=2, validation_data=(x_test, y_test))\n"
            "    model.evaluate(x_test, y_test)\n",
            "import tensorflow as tf\n\n\ndef main():\n"
            "    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()\n"
            "    x_train = x_train.reshape(-1, 28, 28, 1)\n    model = build()\n"
            "    model.fit(x_train.astype(\"float32\"), y_train.astype(\"int32\"), epochs=2, "
            "validation_data=(x_test.astype(\"float32\"), y_test.astype(\"int32\")))\n"
            "    model.evaluate(x_test.astype(\"float32\"), y_test.astype(\"int32\"))\n",
        ),
        Example(
            "from tensorflow import keras\nimport tensorflow as tf\n\ncifar = keras.datasets.cifar10\n"
            "(images, labels), _ = cifar.load_data()\n"
            "ds = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(1000).batch(64)\n",
            "from tensorflow import keras\nimport tensorflow as tf\n\ncifar = keras.datasets.cifar10\n"
            "(images, labels), _ = cifar.load_data()\n"
            "ds = tf.data.Dataset.from_tensor_slices((images.astype(\"float32\"), labels.astype(\"int32\")))"
            ".shuffle(1000).batch(64)\n",
        ),
        Example(
            "import numpy as np\nimport tensorflow as tf\n\nframes = np.zeros((64, 32, 32, 3), dtype=np.uint8)\n"
            "predictions = model.predict(frames)\n",
            "import numpy as np\nimport tensorflow as tf\n\nframes = np.zeros((64, 32, 32, 3), dtype=np.uint8)\n"
            "predictions = model.predict(frames.astype(\"float32\"))\n",
        ),
        Example(
            "import tensorflow as tf\n\nmnist = tf.keras.datasets.mnist\n"
            "(x_train, y_train), (x_test, y_test) = mnist.load_data()\n"
            "x_train, x_test = x_train / 255.0, x_test / 255.0\n"
            "model.fit(x_train, y_train.astype(\"int32\"), epochs=5)\n"
            "model.evaluate(x_test, tf.keras.utils.to_categorical(y_test))\n",
            reported=False,
        ),
        Example(
            "import keras\nfrom keras.datasets import cifar100\n\n\ndef train(model):\n"
            "    (x, y), _ = cifar100.load_data(label_mode=\"fine\")\n    model.fit(x, y, batch_size=50)\n",
            "import keras\nfrom keras.datasets import cifar100\n\n\ndef train(model):\n"
            "    (x, y), _ = cifar100.load_data(label_mode=\"fine\")\n"
            "    model.fit(x.astype(\"float32\"), y.astype(\"int32\"), batch_size=50)\n",
        ),
        Example(
            "import tensorflow as tf\n\n(x_train, _), (x_test, _) = tf.keras.datasets.mnist.load_data()\n"
            "autoencoder.fit(x_train, x_train, epochs=10, validation_data=(x_test, x_test))\n",
            "import tensorflow as tf\n\n(x_train, _), (x_test, _) = tf.keras.datasets.mnist.load_data()\n"
            "autoencoder.fit(x_train.astype(\"float32\"), x_train.astype(\"float32\"), epochs=10, "
            "validation_data=(x_test.astype(\"float32\"), x_test.astype(\"float32\")))\n",
        ),
        Example(
            "import tensorflow as tf\n\nif __name__ == \"__main__\":\n"
            "    (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()\n    model.fit(x_train, y_train)\n",
            "import tensorflow as tf\n\nif __name__ == \"__main__\":\n"
            "    (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()\n"
            "    model.fit(x_train.astype(\"float32\"), y_train.astype(\"int32\"))\n",
        ),
        Example(
            "import numpy as np\nimport tensorflow as tf\n\n\ndef run(model, pixels, classes):\n"
            "    images = pixels.astype(np.uint8)\n    model.fit(images, classes)\n",
            "import numpy as np\nimport tensorflow as tf\n\n\ndef run(model, pixels, classes):\n"
            "    images = pixels.astype(np.uint8)\n    model.fit(images.astype(\"float32\"), classes)\n",
        ),
        Example(
            "import tensorflow as tf\n\n\ndef main():\n"
            "    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()\n"
            "    model.fit(x_train.astype(\"float32\"), y_train.astype(\"int32\"), epochs=2)\n",
            reported=False,
        ),
        Example(
            "import tensorflow as tf\n\n(x_train, y_train), _ = tf.keras.datasets.mnist.load_data()\n\n\n"
            "def fit(model):\n    model.fit(x_train, y_train)\n",
            reported=False,
        ),
        Example(
            "import tensorflow as tf\nimport tensorflow_datasets as tfds\n\n"
            "train = tfds.load(\"mnist\", split=\"train\", as_supervised=True)\n"
            "model.fit(train.shuffle(1024).batch(128), epochs=3)\n",
            "import tensorflow as tf\nimport tensorflow_datasets as tfds\n\n"
            "train = tfds.load(\"mnist\", split=\"train\", as_supervised=True).map(lambda image, label: "
            "(tf.cast(image, tf.float32), label))\n"
            "model.fit(train.shuffle(1024).batch(128), epochs=3)\n",
        ),
        Example(
            "import tensorflow as tf\nimport tensorflow_datasets as tfds\n\n\ndef normalize(image, label):\n"
            "    return tf.cast(image, tf.float32) / 255.0, label\n\n\n"
            "def main():\n    train = tfds.load(\"cifar10\", split=\"train\", as_supervised=True)\n"
            "    train = train.map(normalize).batch(64)\n    model.fit(train, epochs=3)\n",
            reported=False,
        ),
        Example(
            "import tensorflow as tf\n\n\ndef load(augment):\n"
            "    (x, y), _ = tf.keras.datasets.fashion_mnist.load_data()\n    if augment:\n        x = flip(x)\n"
            "    model.fit(x.astype(\"float32\"), y.astype(\"int32\"))\n"
            "    ds = tf.data.Dataset.from_tensor_slices((x, y)).map(normalize).batch(32)\n",
            reported=False,
        ),
        Example(
            "import tensorflow as tf\n\n(x_train, y_train), _ = tf.keras.datasets.imdb.load_data(num_words=10000)\n"
            "model.fit(x_train, y_train)\n",
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        for call, method in method_calls(ctx, *DATA_METHODS):
            for role, value in data_arguments(call, method):
                if role in _ROLES:
                    cast_uint8(ctx, self.code, value, role, f"`{method}()`")
        cast_uint8_datasets(ctx, self.code)


RULE = Uint8Cast()
