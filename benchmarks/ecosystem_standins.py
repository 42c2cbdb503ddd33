"""The stand-ins of the ecosystem run (installed by ecosystem_runner.py before a script runs).

- data: `keras.datasets.<name>.load_data` and TensorFlow 1's MNIST `input_data.read_data_sets`
  return random arrays of the real dtypes and shapes (the generators of tests/emulation/data.py),
  with row counts that keep the real data set's remainder modulo every power of two up to 1024, so a
  batch size that leaves a partial batch on the real data leaves one here too;
- packages that only fetch data (`tensorflow_datasets`, `tensorflow_hub`, the Hugging Face hubs), when
  they are not installed: any use raises NeedsData, the run's one recognisable "needs data" error;
- packages that only display (matplotlib, IPython, seaborn, tqdm), when they are not installed:
  modules that draw nothing (tqdm's bar gives back what it wraps);
- Keras 2: `import keras` imports tf_keras, the Keras 2 of the IPU's TensorFlow and of the emulation.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

import numpy as np

REAL_ROWS = {  # data set: (train rows, test rows) of the real download
    "mnist": (60000, 10000), "fashion_mnist": (60000, 10000), "cifar10": (50000, 10000),
    "cifar100": (50000, 10000), "imdb": (25000, 25000), "reuters": (8982, 2246),
    "boston_housing": (404, 102),
}
DOWNLOADS = []  # what the script tried to fetch, in order


class NeedsData(OSError):
    """A download (or any network access) was attempted: the script needs data this run lacks."""


def refuse(what):
    def refused(*args, **kwargs):
        DOWNLOADS.append(what)
        raise NeedsData("needs data: %s refused (no network in the ecosystem run)" % what)
    return refused


def stand_in_rows(real):
    """Few rows, with the real count's remainder modulo 1024 (and so modulo 2, 4, ..., 1024)."""
    return real if real <= 1024 else 1024 + real % 1024


def keras_loaders():
    """data set name -> stand-in `load_data(...)`."""
    from emulation import data

    def loader(name):
        train, test = (stand_in_rows(rows) for rows in REAL_ROWS[name])

        def load_data(*args, **kwargs):
            if name in data.IMAGE_SETS:
                return data.images(name, "train", train), data.images(name, "test", test)
            if name in data.SEQUENCE_SETS:
                options = {key: kwargs[key] for key in ("num_words", "maxlen") if key in kwargs}
                return (data.sequences(name, "train", train, **options),
                        data.sequences(name, "test", test, **options))
            return data.boston("train", train), data.boston("test", test)
        return load_data

    return {name: loader(name) for name in REAL_ROWS}


# TensorFlow 1's tutorial MNIST --------------------------------------------------------------------

class MnistSplit:
    """One split of `input_data.read_data_sets`: images float32 [rows, 784] in [0, 1] (or
    [rows, 28, 28, 1] with reshape=False), labels uint8 or one-hot float32."""

    def __init__(self, split, rows, one_hot, reshape):
        from emulation import data
        images, labels = data.images("mnist", split, rows)
        images = images.astype("float32") / 255.0
        self.images = images.reshape(rows, 784) if reshape else images.reshape(rows, 28, 28, 1)
        self.labels = np.eye(10, dtype="float32")[labels] if one_hot else labels
        self.num_examples = rows
        self._next = 0

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        rows = [(self._next + offset) % self.num_examples for offset in range(batch_size)]
        self._next = (self._next + batch_size) % self.num_examples
        return self.images[rows], self.labels[rows]


def read_data_sets(train_dir=None, fake_data=False, one_hot=False, dtype=None, reshape=True,
                   validation_size=5000, seed=None, source_url=None):
    splits = {"train": 60000 - validation_size, "validation": validation_size, "test": 10000}
    made = {name: MnistSplit("train" if name != "test" else "test", stand_in_rows(rows), one_hot, reshape)
            for name, rows in splits.items()}
    return types.SimpleNamespace(**made)


# modules that stand in for packages this machine does not have -------------------------------------

class Drawing:
    """Whatever a display call returns: calls, attributes, items and context managers all give
    another Drawing; iterating gives two (`fig, ax = plt.subplots()`)."""

    def __call__(self, *args, **kwargs):
        return Drawing()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Drawing()

    def __getitem__(self, key):
        return Drawing()

    def __setitem__(self, key, value):  # `mpl.rcParams["figure.figsize"] = ...`
        pass

    def __iter__(self):
        return iter((Drawing(), Drawing()))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class Progress(Drawing):
    """tqdm's bar: iterates over what it wraps, draws nothing."""

    def __init__(self, iterable=(), *args, **kwargs):
        self.iterable = iterable if iterable is not None else ()

    def __iter__(self):
        return iter(self.iterable)

    def __len__(self):
        return len(self.iterable)


def _drawing_attribute(name):
    return Drawing()


def _progress_attribute(name):
    if name in ("tqdm", "tqdm_notebook"):
        return Progress
    if name == "trange":
        return lambda *args, **kwargs: Progress(range(*args))
    return Drawing()


def _refusing_attribute(package):
    return lambda name: refuse("%s.%s" % (package, name))


def _input_data_attribute(name):
    if name == "read_data_sets":
        return read_data_sets
    raise AttributeError(name)


STAND_INS = {  # top-level package (or module prefix) -> module __getattr__ of its stand-in
    "matplotlib": _drawing_attribute, "mpl_toolkits": _drawing_attribute, "IPython": _drawing_attribute,
    "seaborn": _drawing_attribute, "tqdm": _progress_attribute,
    "tensorflow_datasets": _refusing_attribute("tensorflow_datasets"),
    "tensorflow_hub": _refusing_attribute("tensorflow_hub"),
    "transformers": _refusing_attribute("transformers"),
    "huggingface_hub": _refusing_attribute("huggingface_hub"),
    "tensorflow.examples": _input_data_attribute,
}


def _public_only(getattr_):
    """Module attributes like `__file__` or `__version__` stay missing: libraries that probe for
    optional packages must see a stand-in as nothing they can use."""
    def module_getattr(name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr_(name)
    return module_getattr


class MissingPackages(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on sys.meta_path: only what no installed package provides gets a stand-in."""

    def find_spec(self, name, path=None, target=None):
        if self._getattr(name) is None:
            return None
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    @staticmethod
    def _getattr(name):
        for prefix, getattr_ in STAND_INS.items():
            if name == prefix or name.startswith(prefix + "."):
                return getattr_
        return None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []
        module.__getattr__ = _public_only(self._getattr(spec.name))
        return module

    def exec_module(self, module):
        pass


class KerasTwo(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`import keras` gives tf_keras (Keras 2, as the IPU's TensorFlow 2.6 ships it, and as the
    emulation patches it) instead of the Keras 3 that TensorFlow installs beside it."""

    def find_spec(self, name, path=None, target=None):
        if name == "keras" or name.startswith("keras."):
            if importlib.util.find_spec("tf_keras" + name[len("keras"):]) is not None:
                return importlib.machinery.ModuleSpec(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("tf_keras" + spec.name[len("keras"):])

    def exec_module(self, module):
        pass


def install_finders(tensorflow):
    sys.meta_path.append(MissingPackages())
    if tensorflow:
        sys.meta_path.insert(0, KerasTwo())
