from typing import List, Optional, Set

import libcst as cst

from porter.context import SharedKey, bound_names, code_of, walk
from porter.cstutil import argument, is_name, keyword, keyword_arg, simple_assign, string_value, with_args
from porter.rules._tf.arrays import FLOAT64, FLOAT64_TENSOR, MAYBE_FLOAT64, TABLE
from porter.rules._tf.tfdata import astype, float64_data, is_dataset, sliced_arrays, table_data, tensorflow_alias
from porter.rules.keras._analysis.custom_loop import fed_loops, loop_plans
from porter.rules.keras._analysis.datasets import argument_sources, made_datasets, training_inputs
from porter.rules.keras._analysis.fit import training_calls
from porter.rules.keras._analysis.model_plan import keras_extensions_off
from porter.rules.keras._analysis.schedules import float64_arrays_in_steps, numpy_float64
from porter.rules.keras._analysis.util import last_name
from porter.rules.keras._analysis.util import HOST_FUNCTIONS
from porter.rule import FIX, KERAS, Example, Rule, snippet
from porter.scopes import local_function, owner, returns_of, values_of

_DTYPES = frozenset({
    "tensorflow.float64", "tensorflow.double", "tensorflow.dtypes.float64", "tensorflow.dtypes.double",
    "tensorflow.experimental.numpy.float64", "numpy.float64", "numpy.double", "numpy.longdouble",
})
_NAMES = frozenset({"float64", "double"})
_LAST_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in _DTYPES)
# Calls whose (first or ``dtype``) string argument is a dtype.
_DTYPE_CALLS = ("astype", "set_floatx", "cast", "Variable", "constant", "zeros", "ones", "array", "asarray")
# The TensorFlow calls that make a tensor or variable of a value, with the dtype of the value unless
# told otherwise, and how many positional arguments they take before `dtype`.
_TENSOR_MAKERS = {"tensorflow.constant": 1, "tensorflow.convert_to_tensor": 1, "tensorflow.Variable": 6}
_INSPECTIONS = frozenset({"finfo", "iinfo", "isinstance", "issubdtype", "can_cast", "issubclass"})
# Host-side data code: NumPy, pandas and SciPy arrays, and the array methods that convert them. A
# float64 array made there is cast by Keras `fit`, or by the code that feeds it to the model.
_HOST_MODULES = ("numpy.", "pandas.", "scipy.")
_HOST_METHODS = frozenset({"astype", "to_numpy"})
_MESSAGE = ("float64 is not supported on the IPU: a float64 input or constant in a compiled function "
            "raises TypeError; use float32 (or float16)")


_NOT_COMPUTED = "which the IPU does not compute with (a float64 constant or weight read in a compiled function fails)"
_FLOATX_MESSAGE = ("`set_floatx(\"float64\")` makes the weights and computations of every Keras layer float64, "
                   "which the IPU does not support (the device has no float64 type): the model does not compile "
                   "for it; use float32 (`set_floatx(\"float32\")`, the default) and check that training "
                   "keeps the precision it needs")


# A custom training loop over `batches`; the examples make `batches` of NumPy arrays.
_LOOP = """

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.01)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


for epoch in range(5):
    for x, y in batches:
        train_step(x, y)
"""
_DIVIDED_IMAGES = """\
import tensorflow as tf

(images, labels), _ = tf.keras.datasets.mnist.load_data()
images = {scaled}
batches = tf.data.Dataset.from_tensor_slices(({sliced}, labels)).batch(64, drop_remainder=True)
""" + _LOOP
_REGRESSION = """\
import numpy as np
import tensorflow as tf

features = np.random.randn(1024, 8)
targets = features @ np.linspace(-1.0, 1.0, 8)[:, None] + 0.1 * np.random.randn(1024, 1)
batches = tf.data.Dataset.from_tensor_slices(({features}, {targets})).batch(32, drop_remainder=True)
""" + _LOOP
_GENERATED_ROWS = """\
import tensorflow as tf

batches = tf.data.Dataset.from_generator(read_rows, output_types=(tf.float64, tf.float64),
                                         output_shapes=((8,), (1,))).batch(32, drop_remainder=True)
""" + _LOOP
# Point clouds jittered with float64 noise in a map, on the host.
_JITTERED = """\
import tensorflow as tf


def jitter(points, label):
    points += tf.random.uniform(points.shape, -0.005, 0.005, dtype=tf.float64)
    return tf.random.shuffle(points), label


batches = tf.data.Dataset.from_tensor_slices((clouds, labels)).map(jitter).batch(32, drop_remainder=True)
"""
_HELPER = """\
import numpy as np
import tensorflow as tf


def make_batches(x, y):
    return tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1024).batch(32, drop_remainder=True)


rng = np.random.default_rng(0)
features = rng.normal(size=(1024, 8))
features = (features - features.mean(axis=0)) / features.std(axis=0)
targets = features.sum(axis=1, keepdims=True)
batches = make_batches({features}, {targets})
""" + _LOOP
# The arrays come from a function of the file that makes them.
_MADE_BY_HELPER = """\
import numpy as np
import tensorflow as tf


def make_data(n):
    features = {features}
    return features, (features.sum(axis=1, keepdims=True) > 0).astype(np.int32)


features, targets = make_data(1024)
batches = tf.data.Dataset.from_tensor_slices(({sliced}, targets)).batch(32, drop_remainder=True)
""" + _LOOP
_TABLE = """\
import pandas as pd
import tensorflow as tf

table = pd.read_csv("houses.csv").dropna()
features = table.drop(columns=["price"]).values
prices = table["price"].to_numpy()
batches = tf.data.Dataset.from_tensor_slices(({features}, prices)).batch(32, drop_remainder=True)
""" + _LOOP
# The same table scaled by its own statistics first (arithmetic on a pandas table is a table), its
# values taken by `{values}`.
_SCALED_TABLE = """\
import numpy as np
import pandas as pd
import tensorflow as tf

table = pd.read_csv("houses.csv").dropna()
columns = table.drop(columns=["price"])
columns = (columns - columns.mean()) / columns.std()
features = {values}
prices = table["price"].to_numpy()
batches = tf.data.Dataset.from_tensor_slices(({features}, prices)).batch(32, drop_remainder=True)
""" + _LOOP
# Named inputs: a dict of arrays, or the columns of a pandas table (`dict(table)`), each column of
# its own dtype.
_NAMED_INPUTS = """\
import numpy as np
import pandas as pd
import tensorflow as tf

rng = np.random.default_rng(0)
ages = rng.uniform(20, 80, size=(1024, 1))
table = pd.read_csv("passengers.csv")
fares = table.pop("fare").to_numpy(dtype="float32")
batches = tf.data.Dataset.from_tensor_slices(({{"age": {ages}, "fare": fares}}, fares)).batch(32, drop_remainder=True)
held_out = tf.data.Dataset.from_tensor_slices(({table}, fares)).batch(32, drop_remainder=True)
""" + _LOOP.replace("batches:", "batches.concatenate(held_out):")
# Inputs and labels zipped from datasets of their own, the inputs nested in a tuple.
_ZIPPED = """\
import numpy as np
import tensorflow as tf

images = np.random.rand(1024, 8, 8, 1)
extras = np.random.rand(1024, 3)
inputs = tf.data.Dataset.zip((tf.data.Dataset.from_tensor_slices({images}), tf.data.Dataset.from_tensor_slices({extras})))
labels = tf.data.Dataset.from_tensor_slices(np.random.randint(0, 10, size=1024))
batches = tf.data.Dataset.zip((inputs, labels)).batch(32, drop_remainder=True)
held_out = tf.data.Dataset.zip(((tf.data.Dataset.from_tensor_slices({images}), tf.data.Dataset.from_tensor_slices({extras})), labels)).batch(32, drop_remainder=True)
""" + _LOOP.replace("batches:", "batches.concatenate(held_out):")

# The same loop with the steps methods of a trainer, the one `strategy.run` runs a method too.
_TRAINER = """\
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()


class Trainer:
    def __init__(self):
        with strategy.scope():
            self.model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
            self.optimizer = tf.keras.optimizers.Adam()

    def replica_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, self.model(x), from_logits=True))
        variables = self.model.trainable_variables
        self.optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))

    @tf.function
    def train_step(self, x, y):
        strategy.run(self.replica_step, args=(x, y))

    def fit(self, dataset, epochs):
        for epoch in range(epochs):
            for x, y in strategy.experimental_distribute_dataset(dataset):
                self.train_step(x, y)


(images, labels), _ = tf.keras.datasets.mnist.load_data()
{run}
"""
# The trainer's own loop over what it is given, or a loop of the script over a dataset it makes.
_TRAINER_FIT = """\
trainer = Trainer()
trainer.fit(tf.data.Dataset.from_tensor_slices(({images}, labels)).batch(64, drop_remainder=True), 2)"""
_SCRIPT_LOOP = """\
batches = tf.data.Dataset.from_tensor_slices(({images}, labels)).batch(64, drop_remainder=True)
trainer = Trainer()
for epoch in range(2):
    for x, y in strategy.experimental_distribute_dataset(batches):
        trainer.train_step(x, y)"""


# A GAN loop that hands its step NumPy arrays itself, sliced from a float64 table of samples and
# drawn from `np.random`, with a Python number beside them.
_HANDED_ARRAYS = """\
import numpy as np
import tensorflow as tf

samples = np.random.uniform(-1.0, 1.0, size=(1024, 2))
generator = tf.keras.Sequential([tf.keras.layers.Dense(2)])
critic = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-3)


@tf.function
def train_step(real, noise, weight):
    with tf.GradientTape() as tape:
        loss = weight * tf.reduce_mean(critic(generator(noise))) - tf.reduce_mean(critic(real))
    variables = generator.trainable_variables + critic.trainable_variables
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))


for epoch in range(5):
    for i in range(0, len(samples) - 32 + 1, 32):
        real = samples[i:i + 32]
        noise = {noise}
        train_step({real}, {noise_arg}, 0.5)
"""

# A loop over a dataset's batches that hands the step a float64 array of class weights too.
_WEIGHTED_LOOP = """\
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
optimizer = tf.keras.optimizers.SGD(0.1)
class_weights = np.array([1.0, 2.0, 0.5])
dataset = tf.data.Dataset.from_tensor_slices((np.zeros((64, 4), "float32"), np.zeros((64, 3), "float32"))).batch(8)


@tf.function
def train_step(x, y, weights):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y) * weights)
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


for epoch in range(2):
    for x, y in dataset:
        train_step(x, y, {weights})
"""
# A full-batch loop (no dataset) that hands the step the whole domain as tensors made of NumPy
# arrays: `tf.convert_to_tensor` and `tf.constant` keep the arrays' float64 unless given a dtype.
_WHOLE_DOMAIN = """\
import numpy as np
import tensorflow as tf

t = np.linspace(0.0, 1.0, 256)[:, None]
points = {points}
values = {values}
model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="tanh"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-3)


@tf.function
def train_step(x, u):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.keras.losses.mean_squared_error(u, model(x)))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


for epoch in range(100):
    train_step({points_arg}, {values_arg})
"""
# The targets from the file's own exact solution, NumPy arithmetic on the float64 points it is given.
_EXACT_SOLUTION = _WHOLE_DOMAIN.replace("t = np.linspace", "def exact(x):\n    return np.exp(-x) * np.sin(4 * x)\n\n\nt = np.linspace")
# The noise drawn on some passes only: float32 zeros on the first.
_SOMETIMES_DRAWN = _HANDED_ARRAYS.replace("        noise = {noise}\n", "        if epoch:\n            noise = {noise}\n").replace(
    "for epoch", "noise = np.zeros((32, 4), dtype=np.float32)\nfor epoch").replace("{noise}", "np.random.normal(size=(32, 4))").replace(
    "{noise_arg}", "noise")


# A model class overrides `train_step`: the strategy runs without the IPU Keras extensions, and the
# dataset `fit` reads reaches `strategy.run` as it is made.
_OVERRIDING_FIT = """\
import numpy as np
import tensorflow as tf


class Contrastive(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.encoder = tf.keras.Sequential([tf.keras.layers.Dense(8)])

    def train_step(self, data):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.encoder(data) - self.encoder(data + 0.1)))
        variables = self.encoder.trainable_variables
        self.optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return {{"loss": loss}}


features = np.random.rand(1024, 16)
model = Contrastive()
model.compile(optimizer="sgd")
model.fit(tf.data.Dataset.from_tensor_slices({features}).batch(32, drop_remainder=True), epochs=2)
model.encoder.predict(features, batch_size=32)
"""


# A diffusion model that gathers the values of a NumPy noise schedule, made a tensor by `{made}`,
# at random timesteps in `train_step`.
_SCHEDULE = """\
import numpy as np
import tensorflow as tf


class Diffusion(tf.keras.Model):
    def __init__(self, network, timesteps):
        super().__init__()
        self.network = network
        alphas_bar = np.cumprod(1.0 - np.linspace(1e-4, 0.02, timesteps))
        self.signal = {made}

    def train_step(self, images):
        t = tf.random.uniform((tf.shape(images)[0],), 0, 100, dtype=tf.int32)
        noise = tf.random.normal(tf.shape(images))
        with tf.GradientTape() as tape:
            noisy = tf.gather(self.signal, t)[:, None] * images + noise
            loss = tf.reduce_mean((self.network(noisy) - noise) ** 2)
        grads = tape.gradient(loss, self.network.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.network.trainable_weights))
        return {{"loss": loss}}
"""

# The same model with a cosine schedule: integers from `np.arange` divided, which NumPy makes float64.
_COSINE_SCHEDULE = _SCHEDULE.replace("\n\nclass Diffusion", """

def cosine_schedule(timesteps, s=0.008):
    steps = np.arange(timesteps + 1) / timesteps
    f = np.cos((steps + s) / (1 + s) * np.pi / 2) ** 2
    return f[1:] / f[0]


class Diffusion""")


# A latent vector optimised by a function of the file, whose variable is made of what it is given.
_LATENT_SEARCH = """\
import numpy as np
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.layers.Dense(8)])
optimizer = tf.keras.optimizers.Adam(0.01)


def search(initial, steps):
    vector = tf.Variable(initial)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.abs(generator(vector)))
        optimizer.apply_gradients(zip(tape.gradient(loss, [vector]), [vector]))

    for _ in range(steps):
        step()


search({initial}, 100)
"""


class Float64(Rule):
    code = "IPU155"
    name = "float64"
    kind = FIX
    frameworks = frozenset({KERAS})
    summary = ("Warn about float64 dtypes that reach the IPU (`tf.float64`, `dtype=\"float64\"` in model code); cast "
               "the float64 NumPy arrays a custom loop's dataset is made of, or its step is given, to float32.")
    rationale = (
        "The IPU computes in float32, float16, int32 and bool; the device accepts no DT_DOUBLE "
        "(Targeting the IPU from TensorFlow 2, \"Supported types\"). Keras `fit` casts float64 arrays to "
        "float32 itself, but float64 inputs to a "
        "function run through `strategy.run` raise `TypeError(\"Unsupported data type for input: "
        "float64\")` and float64 weights or constants fail to compile. "
        "Each float64 dtype that reaches the device is reported, to be changed to float32: in TensorFlow "
        "and Keras code (layers' `dtype`, `tf.cast`, `tf.constant`, `set_floatx`). A tensor or variable made "
        "of float64 NumPy data with no dtype (`tf.constant(betas)` of a noise schedule from `np.linspace`, "
        "`tf.Variable(np.zeros(...))`, `tf.constant(cosine_schedule(T))` of a function of the file) is float64 "
        "too: it gets `dtype=\"float32\"` (reported when the data is float64 on some paths only); one made of a "
        "float64 tensor (`tf.Variable(tf.reshape(x, ...))`), which a dtype does not convert, gets "
        "`tf.cast(..., tf.float32)` of it; one made in a function of the file of its parameter "
        "(`def search(initial): tf.Variable(initial)`) gets the cast in each call that gives it float64 data. "
        "A module constant `DTYPE = \"float64\"` given to several calls is reported once, at the constant, "
        "with the calls it reaches; a float64 NumPy array a Keras class keeps on its instance and hands to "
        "TensorFlow in the steps Keras compiles (`tf.gather(self.alphas_bar, t)` in `train_step`) gets "
        "`.astype(\"float32\")` there. Host-side data code is "
        "not: NumPy and pandas arrays (`np.float64`, `.astype(\"float64\")`) and the Python functions a "
        "`tf.data` pipeline runs through `tf.py_function`/`tf.numpy_function`; nor the float64 a "
        "`Dataset.from_generator` declares for its elements when only Keras's `fit`/`evaluate`/`predict` "
        "read that dataset (Keras casts them). But NumPy makes float64 unless "
        "told otherwise (`np.random.randn`, `np.linspace`, `np.zeros`, arrays of Python floats, `np.loadtxt`, "
        "uint8 images divided by 255.0, integers divided (`np.arange(T + 1) / T`) or times a float, a pandas "
        "table's float columns), and arithmetic, slicing, reshaping, "
        "`train_test_split` and the `return` of a function of the file keep it: where a custom loop's dataset (`Dataset.from_tensor_slices`) is made of "
        "such arrays, they get `.astype(\"float32\")` there, or where the function that makes it from its "
        "parameters is called; where the loop hands the step such arrays itself (`noise = "
        "np.random.normal(size=(batch, latent))`, a slice of a float64 array, the targets a function of the file "
        "computes from float64 points), they get it in the call, and a float64 tensor an op makes of such arrays "
        "(`tf.reshape(x, ...)`, `tf.expand_dims`, which keep the dtype), in the call or the dataset, gets "
        "`tf.cast(..., tf.float32)` instead (one `tf.constant`/`tf.convert_to_tensor` makes gets its dtype where "
        "it is made, above); named inputs (a dict of arrays) are cast one by one, and of the columns of a "
        "pandas table (`dict(table)`) the float64 ones only. A pandas table's labels (they may be class ids), arrays that are float64 on "
        "some paths only and arrays given to another module's function that makes the dataset are reported. "
        "Arrays cast already, a `map` that casts, and data that only Keras `fit` gets are left as they are, "
        "except in a strategy without the IPU Keras extensions (a model class overrides `train_step`, "
        "IPU103): the extensions' float64 cast goes with them, and Keras' own `fit`/`evaluate`/`predict` hands "
        "a dataset's batches to `strategy.run` as they are (it still casts NumPy arrays given to it directly), "
        "so the arrays a dataset they read is made of are cast the same way, and a pandas table given to "
        "them as it is (not cast, unlike a NumPy array) is reported."
    )
    examples = (
        Example("""\
            import tensorflow as tf

            scale = tf.constant(0.5, dtype=tf.float64)
            """),
        Example("""\
            import tensorflow as tf


            def train_step(x, y):
                logits = model(tf.cast(x, tf.float64))
            """),
        Example("""\
            import tensorflow as tf

            tf.keras.backend.set_floatx("float64")
            """),
        # The dtype's name held in a variable.
        Example("""\
            import tensorflow as tf

            PRECISION = "float64"
            tf.keras.backend.set_floatx(PRECISION)
            head = tf.keras.layers.Dense(1, dtype=PRECISION)
            """),
        # The constant given to several calls: one finding at the constant, naming them.
        Example("""\
            import tensorflow as tf

            DTYPE = "float64"
            inputs = tf.keras.Input(shape=(2,), dtype=DTYPE)
            outputs = tf.keras.layers.Dense(1, dtype=DTYPE)(tf.keras.layers.Dense(8, dtype=DTYPE)(inputs))
            """),
        Example(
            """\
            from tensorflow import keras


            def build():
                inputs = keras.Input(shape=(10,), dtype="float64")
                return keras.Model(inputs, keras.layers.Dense(1)(inputs))
            """,
        ),
        Example("""\
            import tensorflow as tf
            from tensorflow import float64

            w = tf.Variable(init, dtype=float64)
            """),
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x = tf.constant(0.5, dtype=tf.float32)
            x_train = x_train.astype("float32")
            label = "float64 is not used"
            eps = np.finfo(np.float64).eps
            if isinstance(value, np.float64):
                value = float(value)
            """,
            reported=False,
        ),
        # uint8 images divided in NumPy are float64, and the custom loop feeds them to `strategy.run`:
        # cast where the dataset is made of them. Cast before the division, they are float32.
        Example(_DIVIDED_IMAGES.format(scaled="images / 255.0", sliced="images"),
                _DIVIDED_IMAGES.format(scaled="images / 255.0", sliced="images.astype(\"float32\")")),
        Example(_DIVIDED_IMAGES.format(scaled="images.astype(\"float32\") / 255.0", sliced="images"), reported=False),
        # The dtype follows a chain of array methods and arithmetic: reshaped uint8 images divided
        # in one expression are float64, and so are images cast to float64 and reshaped; reshaped
        # and cast to float32 before the division, they are float32.
        *(Example(_DIVIDED_IMAGES.format(scaled=scaled, sliced="images"),
                  _DIVIDED_IMAGES.format(scaled=scaled, sliced="images.astype(\"float32\")"))
          for scaled in ("images.reshape(-1, 28 * 28) / 255.", "images.astype(\"float64\").reshape(-1, 784)")),
        Example(_DIVIDED_IMAGES.format(scaled="images.reshape(-1, 784).astype(\"float32\") / 255.", sliced="images"),
                reported=False),
        # The step a strategy runs is a method, called through another method of a trainer.
        *(Example(_TRAINER.format(run=run.format(images="images / 255.0")),
                  _TRAINER.format(run=run.format(images="(images / 255.0).astype(\"float32\")")))
          for run in (_SCRIPT_LOOP, _TRAINER_FIT)),
        # NumPy makes float64 (`np.random.randn`, `np.linspace`), and arithmetic of float64 is float64.
        Example(_REGRESSION.format(features="features", targets="targets"),
                _REGRESSION.format(features="features.astype(\"float32\")", targets="targets.astype(\"float32\")")),
        # The dataset is made from the parameters of a function: cast where it is called.
        Example(_HELPER.format(features="features", targets="targets"),
                _HELPER.format(features="features.astype(\"float32\")", targets="targets.astype(\"float32\")")),
        # What a function of the file returns is what it holds at its `return`.
        Example(_MADE_BY_HELPER.format(features="np.random.randn(n, 8)", sliced="features"),
                _MADE_BY_HELPER.format(features="np.random.randn(n, 8)", sliced="features.astype(\"float32\")")),
        Example(_MADE_BY_HELPER.format(features="np.random.randn(n, 8).astype(np.float32)", sliced="features"),
                reported=False),
        # A pandas table's values are float64 for float columns: the features are cast (integer
        # columns make float32 features too); the labels may be class ids, which must stay integers:
        # reported.
        Example(_TABLE.format(features="features"), _TABLE.format(features="features.astype(\"float32\")")),
        *(Example(_SCALED_TABLE.format(values=values, features="features"),
                  _SCALED_TABLE.format(values=values, features="features.astype(\"float32\")"))
          for values in ("columns.to_numpy()", "np.array(columns)", "np.asarray(columns.fillna(0.0))",
                         "((columns - columns.mean()) / columns.std()).values")),
        # Windows cut by hand from float64 data (`np.array([x[i:i + w] for i in ...])`) are float64.
        # A dataset made of tensors converted from float64 arrays without a dtype: they get the dtype
        # where they are made; a tensor an op keeps float64 gets `tf.cast` (it has no `.astype`).
        Example(_REGRESSION.format(features="tf.convert_to_tensor(features)", targets="tf.constant(targets)"),
                _REGRESSION.format(features="tf.convert_to_tensor(features, dtype=\"float32\")",
                                   targets="tf.constant(targets, dtype=\"float32\")")),
        Example(_REGRESSION.format(features="tf.reshape(features, (-1, 8))", targets="targets.astype(\"float32\")"),
                _REGRESSION.format(features="tf.cast(tf.reshape(features, (-1, 8)), tf.float32)",
                                   targets="targets.astype(\"float32\")")),
        Example(_REGRESSION.format(features="np.stack([features[i:i + 8] for i in range(1016)])",
                                   targets="targets[8:]"),
                _REGRESSION.format(features="np.stack([features[i:i + 8] for i in range(1016)]).astype(\"float32\")",
                                   targets="targets[8:].astype(\"float32\")")),
        # Named inputs are cast one by one, and of a table's columns the float64 ones only (an id or
        # a string column keeps its dtype).
        Example(_NAMED_INPUTS.format(ages="ages", table="dict(table)"),
                _NAMED_INPUTS.format(ages="ages.astype(\"float32\")", table=(
                    "dict(table.astype({column: \"float32\" for column in table.select_dtypes(\"float64\")}))"))),
        # Datasets zipped together, nested in tuples, are followed to the arrays each is made of.
        Example(_ZIPPED.format(images="images", extras="extras"),
                _ZIPPED.format(images="images.astype(\"float32\")", extras="extras.astype(\"float32\")")),
        # A loop that hands the step float64 arrays itself: each gets `.astype("float32")` in the call
        # (what the step gets only; the arrays may serve the host too). Drawn as float32, or float64
        # on some passes only (reported), they are left as they are.
        Example(_HANDED_ARRAYS.format(noise="np.random.normal(size=(32, 4))", real="real", noise_arg="noise"),
                _HANDED_ARRAYS.format(noise="np.random.normal(size=(32, 4))", real="real.astype(\"float32\")",
                                      noise_arg="noise.astype(\"float32\")")),
        Example(_HANDED_ARRAYS.format(noise="np.random.normal(size=(32, 4)).astype(np.float32)",
                                      real="real.astype(np.float32)", noise_arg="noise"), reported=False),
        Example(_SOMETIMES_DRAWN.format(real="real"), _SOMETIMES_DRAWN.format(real="real.astype(\"float32\")")),
        # The whole domain as float64 tensors: converted with no dtype, they get it where they are
        # made; one an op keeps float64 gets `tf.cast` in the call (a tensor has no `.astype`).
        # Converted with a dtype (by keyword or second), they are float32 already.
        Example(_WHOLE_DOMAIN.format(points="tf.convert_to_tensor(t)", values="tf.constant(np.sin(2 * np.pi * t))",
                                     points_arg="points", values_arg="values"),
                _WHOLE_DOMAIN.format(points="tf.convert_to_tensor(t, dtype=\"float32\")",
                                     values="tf.constant(np.sin(2 * np.pi * t), dtype=\"float32\")",
                                     points_arg="points", values_arg="values")),
        Example(_WHOLE_DOMAIN.format(points="tf.reshape(t, (-1, 1))",
                                     values="tf.constant(np.sin(2 * np.pi * t), tf.float32)",
                                     points_arg="points", values_arg="values"),
                _WHOLE_DOMAIN.format(points="tf.reshape(t, (-1, 1))",
                                     values="tf.constant(np.sin(2 * np.pi * t), tf.float32)",
                                     points_arg="tf.cast(points, tf.float32)", values_arg="values")),
        Example(_WHOLE_DOMAIN.format(points="tf.convert_to_tensor(t, dtype=tf.float32)",
                                     values="tf.constant(np.sin(2 * np.pi * t), tf.float32)",
                                     points_arg="points", values_arg="values"), reported=False),
        # Targets that the file's function computes from the float64 points are float64 too; from
        # float32 points, float32.
        Example(_EXACT_SOLUTION.format(points="t", values="exact(t)", points_arg="points", values_arg="values"),
                _EXACT_SOLUTION.format(points="t", values="exact(t)", points_arg="points.astype(\"float32\")",
                                       values_arg="values.astype(\"float32\")")),
        Example(_EXACT_SOLUTION.format(points="t.astype(np.float32)", values="exact(points)", points_arg="points",
                                       values_arg="values"), reported=False),
        # A float64 array the loop hands the step beside a dataset's batches, with steps per execution:
        # the loop keeps one step per execution, where the call casts it.
        Example(_WEIGHTED_LOOP.format(weights="class_weights"),
                _WEIGHTED_LOOP.format(weights="class_weights.astype(\"float32\")"), options={"steps_per_execution": 4}),
        # Already float32, integer labels, a map that casts, data that only `fit` gets (it casts
        # float64 itself): nothing to do.
        Example(
            snippet("""\
            import numpy as np
            import tensorflow as tf

            features = np.random.randn(1024, 8).astype(np.float32)
            codes = np.random.randint(0, 4, size=(1024, 1))
            noise = np.random.normal(size=(1024, 1))
            targets = np.zeros((1024, 1), dtype=np.float32)
            batches = tf.data.Dataset.from_tensor_slices((features, targets)).batch(32, drop_remainder=True)
            coded = tf.data.Dataset.from_tensor_slices((codes, noise)).map(
                lambda x, y: (tf.cast(x, tf.float32), tf.cast(y, tf.float32))).batch(32, drop_remainder=True)
            """) + _LOOP.replace("batches:", "batches.concatenate(coded):") + snippet("""\
            model.compile(optimizer="sgd", loss="mse")
            model.fit(np.random.randn(1024, 8), noise, batch_size=32)
            """),
            reported=False,
        ),
        # Keras' own `fit` of a `train_step` override casts no dataset (NumPy arrays given to
        # `predict` it still casts); the same data for a plain model is the extensions' to cast.
        Example(_OVERRIDING_FIT.format(features="features"),
                _OVERRIDING_FIT.format(features="features.astype(\"float32\")")),
        Example(_OVERRIDING_FIT.replace("    def train_step(self, data):", "    def call(self, data):").format(
            features="features"), reported=False),
        # A pandas table given to that `fit` as it is: Keras casts NumPy arrays, not tables (reported;
        # a table may hold class ids).
        Example(
            _OVERRIDING_FIT.format(features="features").replace(
                "features = np.random.rand(1024, 16)", "features = pd.read_csv(\"rows.csv\")").replace(
                "import numpy as np", "import pandas as pd").replace(
                "model.fit(tf.data.Dataset.from_tensor_slices(features).batch(32, drop_remainder=True), epochs=2)",
                "model.fit(features, batch_size=32, epochs=2)")),
        # The dataset is made by another module, or the array is float64 only on some paths: the
        # port cannot cast it where it is made.
        Example(
            snippet("""\
            import numpy as np
            import tensorflow as tf

            import pipelines

            if synthetic:
                features = np.random.randn(1024, 8)
            else:
                features = np.load("features.npy")
            batches = pipelines.batched(np.random.rand(1024, 8), batch_size=32)
            held_out = tf.data.Dataset.from_tensor_slices(features).batch(32, drop_remainder=True)
            """) + _LOOP.replace("batches:", "batches.concatenate(held_out):"),
        ),
        # A noise schedule computed in NumPy (float64) made a tensor that `train_step` gathers from.
        Example(_SCHEDULE.format(made="tf.constant(np.sqrt(alphas_bar))"),
                _SCHEDULE.format(made="tf.constant(np.sqrt(alphas_bar), dtype=\"float32\")")),
        Example(_SCHEDULE.format(made="tf.constant(np.sqrt(alphas_bar), dtype=tf.float32)"), reported=False),
        # Integers of `np.arange` divided, or times a float, are float64 in NumPy; as they are, int64.
        # A schedule a function of the file returns is what it holds at its `return`.
        *(Example(_SCHEDULE.format(made=f"tf.constant({made})"),
                  _SCHEDULE.format(made=f"tf.constant({made}, dtype=\"float32\")"))
          for made in ("np.arange(timesteps) / timesteps", "np.arange(timesteps) * 0.5")),
        Example(_SCHEDULE.format(made="tf.constant(np.arange(timesteps) + 1)"), reported=False),
        Example(_COSINE_SCHEDULE.format(made="tf.convert_to_tensor(cosine_schedule(timesteps))"),
                _COSINE_SCHEDULE.format(made="tf.convert_to_tensor(cosine_schedule(timesteps), dtype=\"float32\")")),
        # A variable made in a function of what it is given: the call gets the cast (a `dtype` there
        # would break a call that gives a float64 tensor).
        Example(_LATENT_SEARCH.format(initial="np.random.normal(size=(1, 4))"),
                _LATENT_SEARCH.format(initial="np.random.normal(size=(1, 4)).astype(\"float32\")")),
        Example(_LATENT_SEARCH.format(initial="tf.random.normal((1, 4))"), reported=False),
        # A variable of a float64 tensor an op made of NumPy data: a `dtype` would not convert it
        # (TensorFlow raises), a cast does.
        Example(_LATENT_SEARCH.format(initial="tf.reshape(np.random.normal(size=4), (1, 4))"),
                _LATENT_SEARCH.format(initial="tf.reshape(np.random.normal(size=4), (1, 4))").replace(
                    "search(tf.reshape(np.random.normal(size=4), (1, 4)), 100)",
                    "search(tf.cast(tf.reshape(np.random.normal(size=4), (1, 4)), tf.float32), 100)")),
        Example(_SCHEDULE.format(made="tf.Variable(tf.expand_dims(alphas_bar, -1), trainable=False)"),
                _SCHEDULE.format(made="tf.Variable(tf.cast(tf.expand_dims(alphas_bar, -1), tf.float32), "
                                      "trainable=False)")),
        # The schedule kept as a NumPy array: the step reads a float32 copy, the host keeps the array.
        Example(_SCHEDULE.format(made="np.sqrt(alphas_bar)"),
                _SCHEDULE.format(made="np.sqrt(alphas_bar)").replace(
                    "tf.gather(self.signal, t)", "tf.gather(self.signal.astype(\"float32\"), t)")),
        # Host-side data code: NumPy and pandas arrays, and the Python function of a tf.data map.
        Example(
            """\
            import numpy as np
            import pandas as pd
            import tensorflow as tf

            table = pd.read_csv("prices.csv", dtype={"close": np.float64})
            features = table.to_numpy(dtype="float64")
            weights = np.ones(len(features), dtype=np.float64)


            def normalise(row):
                return ((row - row.mean()) / row.std()).astype(np.float32)


            dataset = tf.data.Dataset.from_tensor_slices(features.astype("float64"))
            dataset = dataset.map(lambda row: tf.numpy_function(normalise, [row], tf.float32))
            """,
            reported=False,
        ),
        # A generator's float64 elements that only Keras's `fit` and `predict` read: Keras casts them to float32.
        Example(
            """\
            import tensorflow as tf

            SIGNATURE = (tf.TensorSpec(shape=(16,), dtype=tf.float64), tf.TensorSpec(shape=(), dtype=tf.int32))
            rows = tf.data.Dataset.from_generator(read_rows, output_signature=SIGNATURE)
            model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            model.compile(optimizer="sgd", loss="mse")
            model.fit(rows.batch(32, drop_remainder=True), epochs=2)
            model.predict(tf.data.Dataset.from_generator(read_rows, output_types=tf.float64, output_shapes=(16,)))
            """,
            reported=False,
        ),
        # The same elements handed to a custom loop's step as they are.
        Example(_GENERATED_ROWS, reported=True),
        # A map's float64 noise: `fit` casts the elements to float32, a custom loop's step does not.
        Example(_JITTERED + snippet("""\
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
            model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
            model.fit(batches, epochs=2)
            """), reported=False),
        Example(_JITTERED + _LOOP, reported=True),
    )

    def run(self, ctx) -> None:
        found = []  # (node, whether it is a NumPy dtype)
        for node_type in (cst.Attribute, cst.Name):
            for node in ctx.nodes(node_type):
                last = node.attr.value if isinstance(node, cst.Attribute) else node.value
                if last not in _LAST_NAMES:
                    continue
                if isinstance(node, cst.Name) and isinstance(ctx.parent(node), (cst.Attribute, cst.ImportAlias)):
                    continue
                qualified = ctx.qualified_name(node)
                if qualified in _DTYPES and not self._only_inspected(ctx, node):
                    found.append((node, qualified.startswith(_HOST_MODULES)))
        for node in ctx.nodes(cst.SimpleString):
            if string_value(node) in _NAMES and self._is_dtype_argument(ctx, node):
                found.append((node, False))
        for node in ctx.nodes(cst.Name):  # PRECISION = "float64", then set_floatx(PRECISION)
            arg = ctx.parent(node)
            if isinstance(arg, cst.Arg) and arg.value is node and self._is_dtype_argument(ctx, node) and any(
                    string_value(value) in _NAMES for value in values_of(ctx, node) if value is not None):
                found.append((node, False))
        cast_by_keras = _declared_for_keras(ctx) if found else set()
        by_constant = {}  # the uses of each module constant that holds "float64", by the id of its value
        for node, numpy_dtype in found:
            if any(id(ancestor) in cast_by_keras for ancestor in ctx.ancestors(node)):
                continue  # the dtype a generator's elements are declared with, cast to float32 by Keras
            if not _reaches_device(ctx, node, numpy_dtype):
                continue
            constant = _dtype_constant(ctx, node) if not _sets_floatx(ctx, node) else None
            if constant is not None:
                by_constant.setdefault(id(constant), (constant, []))[1].append(node)
            else:
                ctx.report(self.code, node, _FLOATX_MESSAGE if _sets_floatx(ctx, node) else _MESSAGE, fixed=False)
        for constant, uses in by_constant.values():
            self._report_constant(ctx, constant, uses)
        done: Set[int] = set()  # the arguments cast or reported already (by id)
        self._cast_step_inputs(ctx, done)
        self._type_tensors_of_float64(ctx, done)
        self._cast_arrays_read_in_steps(ctx)

    def _report_constant(self, ctx, constant: cst.SimpleString, uses: List[cst.Name]) -> None:
        """``DTYPE = "float64"`` given as the dtype of several calls (``dtype=DTYPE``): one finding
        at the constant, which names the calls (a change there changes them all); one use alone is
        reported where it is."""
        if len(uses) == 1:
            ctx.report(self.code, uses[0], _MESSAGE, fixed=False)
            return
        counts = {}
        for use in uses:
            call = ctx.parent(ctx.parent(use))
            called = code_of(ctx, call.func) if isinstance(call, cst.Call) else "a class"
            counts[called] = counts.get(called, 0) + 1
        calls = [f"`{called}`" + (f" ({count} times)" if count > 1 else "") for called, count in counts.items()]
        name = uses[0].value
        ctx.report(self.code, constant, f"`{name}` holds \"float64\", the dtype given as `{name}` to "
                   f"{', '.join(calls[:-1]) + ' and ' if len(calls) > 1 else ''}{calls[-1]} ({len(uses)} uses): "
                   f"{_MESSAGE}, by setting `{name}` to \"float32\"", fixed=False)

    def _cast_arrays_read_in_steps(self, ctx) -> None:
        """A NumPy array a Keras class keeps (``self.alphas_bar = np.cumprod(1.0 - self.betas)``)
        and hands to TensorFlow in a step Keras compiles (``tf.gather(self.alphas_bar, t)`` in
        ``train_step``) becomes a float64 constant of the compiled function: it gets
        ``.astype("float32")`` there, which changes only what the step reads (NumPy casts it
        when the step is traced)."""
        for read in float64_arrays_in_steps(ctx):
            code = code_of(ctx, read.attribute)
            ctx.replace(read.attribute, lambda node: astype(node, "float32"))
            ctx.report(self.code, read.attribute, f"{_holds(code, read.data)}, and `{code_of(ctx, read.call.func)}` "
                       f"in `{read.method.name.value}`, which Keras compiles, makes a float64 constant of it, which "
                       f"the IPU does not compute with: it gets `{code}.astype(\"float32\")`", fixed=True)

    def _type_tensors_of_float64(self, ctx, done: Set[int]) -> None:
        """``tf.constant(betas)`` of a NumPy schedule (``np.linspace``, ``np.cumprod``: float64)
        makes a float64 tensor, which fails where the model or a step reads it on the device
        (``tf.gather(self.betas, t)`` in ``train_step``). With no dtype given, it gets
        ``dtype="float32"``, the dtype the IPU computes in; one float64 on some paths only is
        reported. The Python functions ``tf.py_function`` runs are host code and keep theirs."""
        for call, qualified in ctx.calls_to(*_TENSOR_MAKERS):
            given = _undtyped_value(call, qualified)
            if given is None or _in_host_function(ctx, call):
                continue
            data = _float64_made(ctx, call, qualified)
            tensor = float64_data(ctx, given.value, tensors=True) if data is None else None
            if tensor is not None and tensor.kind == FLOAT64_TENSOR:
                # A `dtype` does not convert a float64 tensor (TensorFlow raises): a cast does.
                self._cast_tensor(ctx, given.value, f"{_holds(code_of(ctx, given.value), tensor)}, and "
                                  f"`{code_of(ctx, call.func)}` makes a float64 {_made_kind(qualified)} of it, "
                                  f"{_NOT_COMPUTED}", f"`{code_of(ctx, call.func)}` gets")
                continue
            if data is None:
                self._cast_given_to_maker(ctx, call, qualified, given.value, done)
                continue
            made = (f"{_holds(code_of(ctx, given.value), data)}, and `{code_of(ctx, call.func)}` makes a float64 "
                    f"{_made_kind(qualified)} of it, {_NOT_COMPUTED}")
            if data.kind == FLOAT64:
                ctx.replace(call, lambda node: with_args(node, [*node.args, keyword_arg("dtype", cst.SimpleString(
                    '"float32"'))]))
                ctx.report(self.code, call, f"{made}: it gets `dtype=\"float32\"`", fixed=True)
            else:
                ctx.report(self.code, call, f"{made}: give it `dtype=\"float32\"`", fixed=False)

    def _cast_given_to_maker(self, ctx, call: cst.Call, qualified: str, value: cst.BaseExpression,
                             done: Set[int]) -> None:
        """``def find_latent(initial): vector = tf.Variable(initial)``, called ``find_latent(np.random.normal(
        size=(1, 512)))``: the parameter holds what each call gives it, float64 NumPy data there. The
        call gets ``.astype("float32")`` (``tf.cast`` for a float64 tensor), which the variable or
        tensor then takes; a ``dtype`` in the function would break a call that gives a float64 tensor."""
        function = owner(ctx, call)
        if not isinstance(function, cst.FunctionDef):
            return
        made = f"`{code_of(ctx, call.func)}` in `{function.name.value}`"
        for expr, called in argument_sources(ctx, value, function, ()):
            data = float64_data(ctx, expr, tensors=True) if called is not None and id(expr) not in done else None
            if data is None or data.kind == TABLE:
                continue
            done.add(id(expr))
            code = code_of(ctx, expr)
            reached = f"{_holds(code, data)}, and {made} makes a float64 {_made_kind(qualified)} of it, {_NOT_COMPUTED}"
            if data.kind == FLOAT64_TENSOR:
                self._cast_tensor(ctx, expr, reached, f"the call of `{called}` gets")
            elif data.kind == FLOAT64:
                ctx.replace(expr, lambda node: astype(node, "float32"))
                ctx.report(self.code, expr, f"{reached}: the call of `{called}` gets "
                           f"`{code_of(ctx, astype(expr, 'float32'))}`", fixed=True)
            else:
                ctx.report(self.code, expr, f"{reached}: cast it to float32 (`.astype(\"float32\")`) before the "
                           f"call of `{called}`", fixed=False)

    def _cast_step_inputs(self, ctx, done: Set[int]) -> None:
        """NumPy makes float64 unless told otherwise (``np.random.randn``, ``x / 255.0`` of uint8
        data). Keras' ``fit`` casts it, but a custom loop hands its dataset's batches to
        ``strategy.run``, which does not: the arrays a loop's dataset is made of get
        ``.astype("float32")`` where it is made, or are reported when that is out of reach. So does
        Keras' own ``fit``/``evaluate``/``predict`` of a strategy without the IPU Keras extensions
        (a ``train_step`` override), whose float64 cast is one of the extensions."""
        for step, source in fed_loops(ctx, runs=True):
            self._cast_dataset(ctx, source, owner(ctx, step.loop), _StepReader(step.function.name.value), done)
        for plan in loop_plans(ctx):
            if plan.problem is None and plan.mode != "device":  # (an on-device loop reads a dataset)
                self._cast_step_arguments(ctx, plan.step, done)
        why = keras_extensions_off(ctx)
        if why is None:
            return
        for entry in training_calls(ctx):
            if entry.method not in ("fit", "evaluate", "predict"):
                continue
            reader = _KerasReader(f"{entry.model}.{entry.method}", why)
            if entry.dataset_input:
                self._cast_dataset(ctx, entry.data, entry.owner, reader, done)
            validation = keyword(entry.call, "validation_data") if entry.method == "fit" else None
            if validation is not None and is_dataset(ctx, validation.value):
                self._cast_dataset(ctx, validation.value, entry.owner, reader, done)
            if not entry.dataset_input:
                self._report_tables(ctx, entry, reader, done)

    def _cast_step_arguments(self, ctx, step, done: Set[int]) -> None:
        """A loop that hands the step NumPy arrays itself, not a dataset's batches (``noise =
        np.random.normal(size=(BATCH, LATENT))``, ``real = data[i:i + BATCH]``, then ``step(real,
        noise)``): each float64 one gets ``.astype("float32")`` in the call, which only changes what
        the step is given (the arrays may serve the host too); one float64 on some paths only is
        reported."""
        reader = _StepReader(step.function.name.value)
        for arg in step.call.args:
            if arg.star or id(arg.value) in done:
                continue
            assigned = _assigned_just_before(ctx, arg.value, step.statement)
            data = float64_data(ctx, assigned if assigned is not None else arg.value, tensors=True)
            if data is None:
                continue
            done.add(id(arg.value))
            code = code_of(ctx, arg.value)
            rejected = f"{_holds(code, data)}, {reader.rejects(plural=False)} ({reader.because})"
            if data.kind == FLOAT64_TENSOR:
                self._cast_tensor(ctx, arg.value, rejected, "the call gets")
            elif data.kind == FLOAT64:
                ctx.replace(arg.value, lambda node: astype(node, "float32"))
                ctx.report(self.code, arg.value, f"{rejected}: the call gets `{code_of(ctx, astype(arg.value, 'float32'))}`",
                           fixed=True)
            else:
                ctx.report(self.code, arg.value, f"{rejected}: cast it to float32 (`.astype(\"float32\")`) before "
                           "the call", fixed=False)

    def _cast_tensor(self, ctx, value: cst.BaseExpression, rejected: str, where: str) -> None:
        """A float64 tensor (``tf.convert_to_tensor(x)`` of a NumPy array made float64) that the
        step is given, or a dataset is made of, has no ``.astype``: it gets ``tf.cast(value,
        tf.float32)`` there (``where``: "the call gets")."""
        if _typed_where_made(ctx, value):
            return
        tf = tensorflow_alias(ctx)
        code = code_of(ctx, value)
        if tf is None:
            ctx.report(self.code, value, f"{rejected}: cast it to float32 with `tf.cast({code}, tf.float32)`",
                       fixed=False)
            return
        cast = f"{tf}.cast({code}, {tf}.float32)"
        ctx.replace(value, lambda node: cst.Call(func=cst.parse_expression(f"{tf}.cast"), args=[
            cst.Arg(node), cst.Arg(cst.parse_expression(f"{tf}.float32"))]))
        ctx.report(self.code, value, f"{rejected}: {where} `{cast}`", fixed=True)

    def _report_tables(self, ctx, entry, reader: "_KerasReader", done: Set[int]) -> None:
        """Keras' own ``fit`` casts NumPy arrays to float32, but not a pandas table given as it is
        (``fit(features, prices)``): its float columns reach ``strategy.run`` as float64. Where the
        arrays go through the port's trimming helpers, a person casts them (the table may hold class
        ids, which must stay integers)."""
        for value in [arg.value for arg in entry.arrays] + list(entry.validation):
            table = table_data(ctx, value) if id(value) not in done else None
            if table is None:
                continue
            done.add(id(value))
            ctx.report(self.code, value, f"`{code_of(ctx, value)}` is a pandas table ({table.origin}), float64 where "
                       f"its columns are floats, {reader.rejects(plural=False)} ({reader.because}; Keras casts NumPy "
                       "arrays, not tables): cast its float columns to float32 before the call", fixed=False)

    def _cast_dataset(self, ctx, source: cst.BaseExpression, scope: cst.CSTNode, reader: "_Reader",
                      done: Set[int]) -> None:
        """The float64 arrays the dataset ``source`` (read in ``scope``) is made of, cast to float32
        where it is made (or reported)."""
        for made in made_datasets(ctx, source, scope):
            if made.of_generator:
                continue  # the generator's elements are converted to the dtypes its signature declares
            if not made.of_arrays:
                self._report_given_away(ctx, made.maker, reader, done)
                continue
            arrays = sliced_arrays(made.maker)
            for index, array in enumerate(arrays):
                if not all(_passes_on(ctx, mapped, index, len(arrays)) for mapped in made.maps):
                    continue
                for part in _named_inputs(array):
                    for expr, called in argument_sources(ctx, part, owner(ctx, made.maker), made.callers):
                        where = f"the call of `{called}` gets" if called else "the dataset gets"
                        table = _columns_of(ctx, expr)
                        if table is not None:
                            self._cast_columns(ctx, expr, table, reader=reader, where=where, done=done)
                        else:
                            self._cast(ctx, expr, features=index == 0, reader=reader, where=where, done=done)

    def _cast(self, ctx, expr, features: bool, reader: "_Reader", where: str, done: Set[int]) -> None:
        """``expr`` gets ``.astype("float32")`` when it holds float64 data (the values of a pandas
        table too, as features: integer columns make float32 features as well); reported when it
        may not, or holds a table's labels (class ids must stay integers)."""
        data = float64_data(ctx, expr, tensors=True) if id(expr) not in done else None
        if data is None:
            return
        done.add(id(expr))
        code = code_of(ctx, expr)
        rejected = f"{_holds(code, data)}, {reader.rejects(plural=False)}"
        if data.kind == FLOAT64_TENSOR:
            self._cast_tensor(ctx, expr, f"{rejected} ({reader.because})", where)
        elif data.kind == FLOAT64 or data.kind == TABLE and features:
            ctx.replace(expr, lambda node: astype(node, "float32"))
            ctx.report(self.code, expr, f"{rejected} ({reader.because}): "
                       f"{where} `{code_of(ctx, astype(expr, 'float32'))}`", fixed=True)
        elif data.kind == TABLE:
            ctx.report(self.code, expr, f"{rejected}: if they are floats, cast them to float32 "
                       "(`.astype(\"float32\")`) where the dataset is made", fixed=False)
        else:
            ctx.report(self.code, expr, f"{rejected}: cast it to float32 (`.astype(\"float32\")`) before the "
                       "dataset is made", fixed=False)

    def _cast_columns(self, ctx, expr: cst.Call, table: cst.BaseExpression, reader: "_Reader", where: str,
                      done: Set[int]) -> None:
        """``dict(table)`` holds a pandas table's columns, each of its own dtype: float64 for the
        float ones. Only those are cast (an integer or string column keeps its dtype), when the
        table is a variable that can be read twice; reported otherwise."""
        if id(expr) in done:
            return
        done.add(id(expr))
        code = code_of(ctx, expr)
        rejected = (f"`{code}` holds the columns of a pandas table ({table_data(ctx, table).origin}), float64 "
                    f"where they are floats, {reader.rejects(plural=True)} ({reader.because})")
        if not isinstance(table, cst.Name):
            ctx.report(self.code, expr, f"{rejected}: cast its float64 columns to float32 "
                       "(`table.astype({...: \"float32\"})`) where the dataset is made", fixed=False)
            return
        column = "name" if table.value == "column" else "column"
        cast = cst.parse_expression(
            f'{table.value}.astype({{{column}: "float32" for {column} in {table.value}.select_dtypes("float64")}})')
        ctx.replace(table, lambda node: cast)
        ctx.report(self.code, expr, f"{rejected}: {where} `dict({code_of(ctx, cast)})`, its float64 columns "
                   "cast to float32", fixed=True)

    def _report_given_away(self, ctx, maker: cst.Call, reader: "_Reader", done: Set[int]) -> None:
        """Float64 arrays given to another module's function that makes a custom loop's dataset:
        what it does with them is out of sight."""
        function = code_of(ctx, maker.func)
        for arg in maker.args:
            values = [element.value for element in arg.value.elements] if isinstance(
                arg.value, (cst.Tuple, cst.List)) else [arg.value]
            for value in values:
                data = float64_data(ctx, value) if id(value) not in done else None
                if data is None:
                    continue
                done.add(id(value))
                ctx.report(self.code, value, f"{_holds(code_of(ctx, value), data)}, {reader.rejects(plural=False)}, "
                           f"and `{function}` of another module, which the port does not "
                           f"change, makes the dataset of it: cast it to float32 (`.astype(\"float32\")`) before "
                           f"`{function}` gets it", fixed=False)

    @staticmethod
    def _only_inspected(ctx, node) -> bool:
        """``np.finfo(np.float64)``, ``isinstance(x, np.float64)``: the dtype is looked at, not used."""
        arg = ctx.parent(node)
        call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
        if not isinstance(call, cst.Call):
            return False
        return last_name(call.func) in _INSPECTIONS

    @staticmethod
    def _is_dtype_argument(ctx, node) -> bool:
        arg = ctx.parent(node)
        if not isinstance(arg, cst.Arg):
            return False
        if arg.keyword is not None:
            return arg.keyword.value in ("dtype", "compute_dtype", "variable_dtype")
        call = ctx.parent(arg)
        if not isinstance(call, cst.Call):
            return False
        return last_name(call.func) in _DTYPE_CALLS


class _Reader:
    """What hands a dataset's batches to ``strategy.run``, which rejects float64 inputs: the
    wording of the findings about it."""
    because = ""

    def rejects(self, plural: bool) -> str:
        raise NotImplementedError


class _StepReader(_Reader):
    """A custom loop's step, ``strategy.run(step, ...)``."""
    because = "Keras' `fit` casts float64, `strategy.run` does not"

    def __init__(self, step: str) -> None:
        self.step = step

    def rejects(self, plural: bool) -> str:
        return f"which `strategy.run` rejects as {'inputs' if plural else 'an input'} of `{self.step}`"


class _KerasReader(_Reader):
    """Keras' own ``fit``/``evaluate``/``predict`` (``model.fit``) under a strategy without the IPU
    Keras extensions (``why``): it hands each batch to ``strategy.run`` as it is."""

    def __init__(self, call: str, why: str) -> None:
        self.call = call
        self.because = (f"the port's strategy runs without the IPU Keras extensions, since {why}, and their "
                        "cast of float64 data goes with them")

    def rejects(self, plural: bool) -> str:
        return f"which `{self.call}` hands to `strategy.run`, which rejects float64 {'inputs' if plural else 'input'}"


def _assigned_just_before(ctx, expr: cst.BaseExpression, statement: cst.BaseStatement
                          ) -> Optional[cst.BaseExpression]:
    """What ``expr``, a name, holds where ``statement`` reads it, when the statements before it in
    its block assign it last (``noise = np.random.normal(...)`` in the loop's body, then
    ``step(noise)``): that value, whatever the variable held on the loop's earlier passes."""
    if not isinstance(expr, cst.Name):
        return None
    value = None
    for before in ctx.siblings(statement):
        if before is statement:
            return value
        if any(expr.value in bound_names(node.target) for node in walk(before) if isinstance(node, cst.AssignTarget)):
            value = None  # assigned in a way not followed here (several targets, a compound statement)
            found = simple_assign(before)
            if found is not None and is_name(found[0], expr.value):
                value = found[1]
    return None


def _named_inputs(array: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The arrays of one element of a dataset: each value of a dict of named inputs
    (``{"age": age, "fare": fare}``, through nesting), else ``array`` itself."""
    if not isinstance(array, cst.Dict):
        return [array]
    return [part for element in array.elements if isinstance(element, cst.DictElement)
            for part in _named_inputs(element.value)]


def _columns_of(ctx, expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The pandas table of ``dict(table)``, the named inputs Keras tutorials make of a table's
    columns; None for anything else."""
    if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "dict"
            and len(expr.args) == 1 and expr.args[0].keyword is None and not expr.args[0].star):
        return None
    table = expr.args[0].value
    return table if table_data(ctx, table) is not None else None


def _dtype_constant(ctx, node: cst.CSTNode) -> Optional[cst.SimpleString]:
    """The string a module constant holds, when ``node`` is a read of one assigned once
    (``DTYPE = "float64"``, then ``dtype=DTYPE``); else None."""
    if not isinstance(node, cst.Name):
        return None
    values = values_of(ctx, node)
    if len(values) != 1 or not isinstance(values[0], cst.SimpleString) or ctx.enclosing_function(
            values[0]) is not None:
        return None
    return values[0]


def _sets_floatx(ctx, node: cst.CSTNode) -> bool:
    """``tf.keras.backend.set_floatx("float64")``: ``node`` is the dtype it is given."""
    arg = ctx.parent(node)
    call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    return isinstance(call, cst.Call) and last_name(call.func) == "set_floatx"


def _holds(code: str, data) -> str:
    """What the message says ``code`` holds."""
    if data.kind == TABLE:
        return f"`{code}` holds the values of a pandas table ({data.origin}), float64 where its columns are floats"
    if data.kind == MAYBE_FLOAT64:
        return f"`{code}` may hold float64 data (from {data.origin}, assigned in a branch or a loop)"
    if data.kind == FLOAT64_TENSOR:
        return f"`{code}` is a float64 tensor (TensorFlow keeps the dtype of the float64 data from {data.origin})"
    return f"`{code}` holds float64 data (from {data.origin})"


def _passes_on(ctx, mapped: cst.Call, index: int, size: int) -> bool:
    """Whether a ``.map(...)`` on the way gives element ``index`` (of ``size``) on as it is, or by
    arithmetic alone (still float64): ``lambda x, y: ((x - mean) / std, y)``. A cast, or any other
    call, there may change its dtype, and a function out of sight may do anything."""
    function = mapped.args[0].value if mapped.args else None
    if isinstance(function, cst.Lambda):
        result = function.body
    elif isinstance(function, cst.Name):
        defined = local_function(ctx, function.value, mapped)
        returned = [node.value for node in returns_of(defined)] if defined is not None else []
        if len(returned) != 1:
            return False
        result = returned[0]
    else:
        return False
    if size > 1:
        if not (isinstance(result, (cst.Tuple, cst.List)) and len(result.elements) == size):
            return False
        result = result.elements[index].value
    return not any(isinstance(node, cst.Call) for node in walk(result))


def _undtyped_value(call: cst.Call, qualified: str) -> Optional[cst.Arg]:
    """The value ``call``, a TensorFlow call making a tensor or variable (``_TENSOR_MAKERS``), makes
    one of when it is given no dtype (``tf.constant(betas)``); else None."""
    given = argument(call, "value", 0) or argument(call, "initial_value", 0)
    positional = [arg for arg in call.args if arg.keyword is None]
    if (given is None or given.star or keyword(call, "dtype") is not None
            or len(positional) > _TENSOR_MAKERS[qualified]):
        return None
    return given


def _made_kind(qualified: str) -> str:
    return "variable" if qualified.endswith("Variable") else "tensor"


def _float64_made(ctx, call: cst.Call, qualified: str):
    """The float64 NumPy data (an ``ArrayData``) that ``call``, a TensorFlow call making a tensor
    or variable (``_TENSOR_MAKERS``), is given with no dtype (``tf.constant(np.linspace(...))``);
    else None."""
    given = _undtyped_value(call, qualified)
    if given is None:
        return None
    data = numpy_float64(ctx, given.value)
    return None if data is None or data.kind == TABLE else data


def _typed_where_made(ctx, value: cst.BaseExpression) -> bool:
    """Whether the float64 tensor ``value`` is made, on every path, by a call that gets
    ``dtype="float32"`` (``Float64._type_tensors_of_float64``): it is float32 then, and a cast
    of it would be a second edit for the same data."""
    made = values_of(ctx, value) if isinstance(value, cst.Name) else [value]
    for call in made:
        qualified = ctx.qualified_name(call.func) if isinstance(call, cst.Call) else None
        data = _float64_made(ctx, call, qualified) if qualified in _TENSOR_MAKERS else None
        if data is None or data.kind != FLOAT64 or _in_host_function(ctx, call):
            return False
    return bool(made)


_HOST_FUNCTIONS: SharedKey[Set[int]] = SharedKey("float64-host-functions")


def _in_host_function(ctx, node: cst.CSTNode) -> bool:
    """``node`` is code of a function or lambda that ``tf.py_function``/``tf.numpy_function`` run on
    the host: what it computes is NumPy code."""
    host_functions = ctx.shared(_HOST_FUNCTIONS, lambda: _host_functions(ctx))
    return any(id(ancestor) in host_functions for ancestor in ctx.ancestors(node))


def _host_functions(ctx) -> Set[int]:
    """The functions and lambdas that ``tf.py_function``/``tf.numpy_function`` run on the host
    (by id)."""
    names, found = set(), set()
    for call, _ in ctx.calls_to(*HOST_FUNCTIONS):
        function = argument(call, "func", 0)
        if function is not None and isinstance(function.value, cst.Name):
            names.add(function.value.value)
        elif function is not None and isinstance(function.value, cst.Lambda):
            found.add(id(function.value))
    found.update(id(function) for function in ctx.nodes(cst.FunctionDef) if function.name.value in names)
    return found


def _declared_for_keras(ctx) -> Set[int]:
    """The ``from_generator`` calls (by id), the values of the variables that hold their
    ``output_signature``/``output_types``, and the functions and lambdas given to ``map`` on the way,
    of the datasets that only Keras's ``fit``/``evaluate``/``predict`` read, with the IPU's Keras
    extensions on: the map runs on the host, in tf.data, and Keras casts the float64 elements to float32
    before the IPU sees them, which a custom loop's step (given the batches as they are) does not."""
    if keras_extensions_off(ctx) is not None:
        return set()

    def declared(read) -> Set[int]:
        found = set()
        for source, scope in read:
            for made in made_datasets(ctx, source, scope, every_maker=True):
                found.update(id(function) for function in _mapped_functions(ctx, made.maps))
                if made.of_generator:
                    found.add(id(made.maker))
                    found.update(id(value) for value in _declaration_values(ctx, made.maker))
        return found
    by_keras = declared((value, entry.owner) for entry, value in training_inputs(ctx)
                        if entry.method in ("fit", "evaluate", "predict"))
    return by_keras - declared((source, owner(ctx, step.loop)) for step, source in fed_loops(ctx, runs=True))


def _mapped_functions(ctx, maps) -> List[cst.CSTNode]:
    """The lambdas and the file's functions that the ``map`` calls ``maps`` apply."""
    found = []
    for mapped in maps:
        given = argument(mapped, "map_func", 0)
        function = given.value if given is not None else None
        if isinstance(function, cst.Name):
            function = local_function(ctx, function.value, mapped)
        if isinstance(function, (cst.Lambda, cst.FunctionDef)):
            found.append(function)
    return found


def _declaration_values(ctx, maker: cst.Call) -> List[cst.BaseExpression]:
    """What the variables given as a ``from_generator``'s ``output_signature``/``output_types`` hold."""
    found = []
    for declared in (keyword(maker, "output_signature"), argument(maker, "output_types", 1)):
        if declared is not None and isinstance(declared.value, cst.Name):
            found.extend(value for value in values_of(ctx, declared.value) if value is not None)
    return found


def _reaches_device(ctx, node: cst.CSTNode, numpy_dtype: bool) -> bool:
    """Whether a float64 dtype is used by TensorFlow code (the model, a step, a tensor), not by
    host-side data code: an argument of a NumPy/pandas call or of ``.astype(...)``, a NumPy dtype
    used outside TensorFlow calls, or code of a function run by ``tf.py_function``."""
    if _in_host_function(ctx, node):
        return False
    arg = ctx.parent(node)
    call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    if not isinstance(call, cst.Call):
        return not numpy_dtype
    qualified = ctx.qualified_name(call.func)
    if qualified is not None:
        return not qualified.startswith(_HOST_MODULES)
    return last_name(call.func) not in _HOST_METHODS


RULE = Float64()
