"""A CPU emulation of the Graphcore IPU Python APIs, for tests only (never shipped).

    with emulated_ipu() as state:
        from tensorflow.python import ipu      # the emulation
        import poptorch                         # the emulation
        ...
    state.configured, state.errors, ...         # what the run did

Inside the block `tensorflow.python.ipu`, `ipu_tensorflow_addons` and `poptorch` import as the
emulated modules, Keras models gain the IPU extension methods and `keras.ipu`, and every emulated
constraint raises the error that Graphcore's documentation (Targeting the IPU from TensorFlow 2
and 1, the PopTorch User Guide) describes. Leaving the block removes all of it."""

import contextlib
import os
import sys

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from .state import STATE  # noqa: E402

_MISSING = object()


def import_tensorflow():
    """TensorFlow with `tf.keras` = tf_keras (Keras 2, as in the IPU's TF 2.6), and tf_keras."""
    import tensorflow as tf
    import tf_keras
    return tf, tf_keras


class Patcher:
    """Set module entries and attributes; undo everything in reverse order."""

    def __init__(self):
        self._undo = []

    def module(self, name, module):
        self._undo.append(("module", name, sys.modules.get(name, _MISSING)))
        sys.modules[name] = module

    def attr(self, owner, name, value):
        self._undo.append(("attr", (owner, name), owner.__dict__.get(name, _MISSING)
                           if hasattr(owner, "__dict__") else getattr(owner, name, _MISSING)))
        setattr(owner, name, value)

    def on_undo(self, function):
        self._undo.append(("call", function, None))

    def undo(self):
        while self._undo:
            kind, key, previous = self._undo.pop()
            if kind == "call":
                key()
            elif kind == "module":
                if previous is _MISSING:
                    sys.modules.pop(key, None)
                else:
                    sys.modules[key] = previous
            else:
                owner, name = key
                if previous is _MISSING:
                    try:
                        delattr(owner, name)
                    except AttributeError:
                        pass
                else:
                    setattr(owner, name, previous)


@contextlib.contextmanager
def emulated_ipu(tensorflow=True, torch=True):
    """Install the emulated IPU modules; yields the EmulationState of this run."""
    from . import addons, keras_emu, poptorch_emu, tf_ipu

    STATE.reset()
    patcher = Patcher()
    try:
        if tensorflow:
            tf, keras = import_tensorflow()
            import tensorflow.python as tf_python
            modules = tf_ipu.build(tf)
            modules.update(addons.build(tf, keras))
            for name, module in modules.items():
                patcher.module(name, module)
            patcher.attr(tf_python, "ipu", modules["tensorflow.python.ipu"])
            for owner, name, value in (keras_emu.patches(tf, keras) + tf_ipu.session_patches(tf)
                    + tf_ipu.iterator_patches(tf)):
                patcher.attr(owner, name, value)
        if torch:
            for name, module in poptorch_emu.build().items():
                patcher.module(name, module)
            patcher.on_undo(poptorch_emu.count_cpu_steps().remove)
        yield STATE
    finally:
        patcher.undo()
