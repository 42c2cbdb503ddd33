"""Small deterministic stand-ins for downloadable datasets (there is no network in the tests).

Keras `load_data()` functions and torchvision datasets return arrays of the real dtypes and
layouts (uint8 images, uint8/int64 labels), with sizes taken from the fixture's `.run.json`."""

import sys
import types

import numpy as np

IMAGE_SETS = {  # name: (image shape, classes, label shape suffix)
    "mnist": ((28, 28), 10, ()),
    "fashion_mnist": ((28, 28), 10, ()),
    "cifar10": ((32, 32, 3), 10, (1,)),
    "cifar100": ((32, 32, 3), 100, (1,)),
}
SEQUENCE_SETS = ("imdb", "reuters")


def _rng(name, split):
    return np.random.RandomState(sum(map(ord, name)) * 7 + (0 if split == "train" else 1))


def images(name, split, size):
    shape, classes, label_suffix = IMAGE_SETS[name]
    rng = _rng(name, split)
    x = rng.randint(0, 256, size=(size,) + shape).astype("uint8")
    y = rng.randint(0, classes, size=(size,) + label_suffix).astype("uint8")
    return x, y


def sequences(name, split, size, num_words=None, maxlen=None, **kwargs):
    rng = _rng(name, split)
    vocabulary = num_words or 1000
    length = min(maxlen or 80, 80)
    x = np.empty(size, dtype=object)
    for i in range(size):
        x[i] = list(rng.randint(1, vocabulary, size=rng.randint(length // 2, length + 1)))
    classes = 2 if name == "imdb" else 46
    y = rng.randint(0, classes, size=size).astype("int64")
    return x, y


def boston(split, size):
    rng = _rng("boston_housing", split)
    return rng.rand(size, 13).astype("float64") * 10, (rng.rand(size) * 50).astype("float64")


def keras_loaders(sizes):
    """name -> replacement load_data(...) for keras.datasets.<name>."""
    train, test = sizes.get("train", 256), sizes.get("test", 64)
    loaders = {}
    for name in IMAGE_SETS:
        loaders[name] = (lambda name: lambda *args, **kwargs: (images(name, "train", train),
                                                               images(name, "test", test)))(name)
    for name in SEQUENCE_SETS:
        loaders[name] = (lambda name: lambda *args, **kwargs: (sequences(name, "train", train, **_seq(kwargs)),
                                                               sequences(name, "test", test, **_seq(kwargs))))(name)
    loaders["boston_housing"] = lambda *args, **kwargs: (boston("train", train), boston("test", test))
    return loaders


def _seq(kwargs):
    return {key: kwargs[key] for key in ("num_words", "maxlen") if key in kwargs}


def fake_torchvision(sizes):
    """A minimal `torchvision` (datasets + transforms) for scripts that use it; torchvision itself
    is not a test dependency."""
    import torch

    train_size, test_size = sizes.get("train", 256), sizes.get("test", 64)

    class ToTensor:
        def __call__(self, picture):
            array = np.asarray(picture)
            if array.ndim == 2:
                array = array[:, :, None]
            tensor = torch.from_numpy(np.ascontiguousarray(array.transpose(2, 0, 1)))
            return tensor.float().div(255) if array.dtype == np.uint8 else tensor.float()

    class Normalize:
        def __init__(self, mean, std, inplace=False):
            self.mean = torch.tensor(mean).view(-1, 1, 1)
            self.std = torch.tensor(std).view(-1, 1, 1)

        def __call__(self, tensor):
            return (tensor - self.mean) / self.std

    class Compose:
        def __init__(self, transforms):
            self.transforms = transforms

        def __call__(self, value):
            for transform in self.transforms:
                value = transform(value)
            return value

    class Lambda:
        def __init__(self, function):
            self.function = function

        def __call__(self, value):
            return self.function(value)

    class RandomHorizontalFlip:
        def __init__(self, p=0.5):
            self.p = p

        def __call__(self, tensor):
            if torch.rand(1) < self.p:
                return tensor.flip(-1) if isinstance(tensor, torch.Tensor) else np.asarray(tensor)[:, ::-1]
            return tensor

    def dataset_class(name):
        class ImageSet(torch.utils.data.Dataset):
            def __init__(self, root=None, train=True, download=False, transform=None,
                         target_transform=None, **kwargs):
                split = "train" if train else "test"
                self.data, targets = images(name, split, train_size if train else test_size)
                self.targets = [int(t) for t in targets.reshape(len(targets))]
                self.transform = transform
                self.target_transform = target_transform

            def __len__(self):
                return len(self.data)

            def __getitem__(self, index):
                image, target = self.data[index], self.targets[index]
                if self.transform is not None:
                    image = self.transform(image)
                if self.target_transform is not None:
                    target = self.target_transform(target)
                return image, target

        ImageSet.__name__ = {"mnist": "MNIST", "fashion_mnist": "FashionMNIST", "cifar10": "CIFAR10",
                             "cifar100": "CIFAR100"}[name]
        return ImageSet

    transforms = types.ModuleType("torchvision.transforms")
    for item in (ToTensor, Normalize, Compose, Lambda, RandomHorizontalFlip):
        setattr(transforms, item.__name__, item)
    datasets = types.ModuleType("torchvision.datasets")
    for name in IMAGE_SETS:
        klass = dataset_class(name)
        setattr(datasets, klass.__name__, klass)
    package = types.ModuleType("torchvision")
    package.__path__ = []
    package.datasets = datasets
    package.transforms = transforms
    return {"torchvision": package, "torchvision.datasets": datasets, "torchvision.transforms": transforms}


def torchvision_available():
    if "torchvision" in sys.modules:
        return True
    try:
        import torchvision  # noqa: F401
    except ImportError:
        return False
    return True


def write_files(files, folder):
    """Create the data files a script reads, as `.run.json` describes them:
    {"data/train.npz": {"images": {"dtype": "uint8", "shape": [256, 28, 28, 1], "high": 256}, ...},
     "table.csv": {"csv": {"rows": 640, "columns": 9}}, "corpus.txt": "literal text",
     "train.tfrecord": {"tfrecord": {"rows": 128, "features": {"tokens": {"shape": [48], "high": 8000}}}},
     "photos": {"images": {"classes": ["cats", "dogs"], "per_class": 20, "size": [24, 24]}}}
    (tfrecord features are int64 lists; "x.npy": {"dtype": ..., "shape": ...} is one array; "images"
    with "classes" is a folder of PNG files, one subfolder per class, as `image_dataset_from_directory`
    reads; an npz may still hold an array named "images")"""
    import os
    import zlib

    for name, content in files.items():
        path = os.path.join(folder, name)
        os.makedirs(os.path.dirname(path) or folder, exist_ok=True)
        if isinstance(content, str):
            with open(path, "w") as handle:
                handle.write(content)
            continue
        if "csv" in content:
            rows, columns = content["csv"]["rows"], content["csv"]["columns"]
            rng = np.random.RandomState(zlib.crc32(name.encode()))
            table = rng.rand(rows, columns).astype("float32")
            header = ",".join("c%d" % i for i in range(columns))
            np.savetxt(path, table, delimiter=",", header=header, comments="", fmt="%.6f")
            continue
        if name.endswith(".npy"):
            np.save(path, _array(name, content))
            continue
        if "tfrecord" in content:
            _write_tfrecord(path, name, content["tfrecord"])
            continue
        if "classes" in content.get("images", {}):  # a folder of class images, not an array named images
            _write_images(path, name, content["images"])
            continue
        np.savez(path, **{key: _array(name + "/" + key, array) for key, array in content.items()})


def _write_images(folder, name, spec):
    import os
    import zlib

    import tensorflow as tf

    rng = np.random.RandomState(zlib.crc32(name.encode()))
    height, width = spec["size"]
    for label in spec["classes"]:
        os.makedirs(os.path.join(folder, label), exist_ok=True)
        for index in range(spec["per_class"]):
            pixels = rng.randint(0, 256, size=(height, width, 3)).astype("uint8")
            tf.io.write_file(os.path.join(folder, label, "%03d.png" % index), tf.io.encode_png(pixels))


def _array(name, spec):
    import zlib

    rng = np.random.RandomState(zlib.crc32(name.encode()))
    dtype = np.dtype(spec.get("dtype", "float32"))
    high = spec.get("high", 1)
    if dtype.kind in "iu":
        return rng.randint(spec.get("low", 0), high, size=spec["shape"]).astype(dtype)
    return (rng.rand(*spec["shape"]) * high).astype(dtype)


def _write_tfrecord(path, name, spec):
    import zlib

    import tensorflow as tf

    rng = np.random.RandomState(zlib.crc32(name.encode()))
    with tf.io.TFRecordWriter(path) as writer:
        for _ in range(spec["rows"]):
            features = {}
            for key, feature in spec["features"].items():
                values = rng.randint(0, feature.get("high", 2), size=feature.get("shape", [])).reshape(-1)
                features[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=values.tolist()))
            example = tf.train.Example(features=tf.train.Features(feature=features))
            writer.write(example.SerializeToString())
