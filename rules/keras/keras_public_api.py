"""IPU113: imports of the bare `keras` package that Keras 2.6 serves only through `tensorflow.keras`."""

from typing import Dict, FrozenSet, List, Optional

import libcst as cst

from porter.context import bound_name, dotted_name

from porter.rule import ERROR, FIX, KERAS, Example, Rule
from porter.rules.keras._analysis.keras26 import (BARE_ONLY, MOVED_IMPORTS, PUBLIC_TOP, PUBLIC_UTILS, RENAMED,
                                                  TOP_LEVEL_CLASSES, attribute_path, module_aliases, uses_of)

_LAYERS = "tensorflow.keras.layers"
_UTILS = "tensorflow.keras.utils"

# `from <module> import <name>` of standalone Keras (2.0 to 2.5) that fails with Keras 2.6's own
# package, where its public API (`tensorflow.keras`) has the same object, and why it fails.
_MOVED_FROM: Dict[str, Dict[str, str]] = {
    # (`print_summary`, exported by Keras 2.2, is still in a module of Keras 2.6's `keras.utils`)
    "keras.utils": {**{name: _UTILS for name in PUBLIC_UTILS}, "print_summary": "keras.utils.layer_utils"},
    "keras.layers.normalization": {"BatchNormalization": _LAYERS, "LayerNormalization": _LAYERS},
    "keras.engine.topology": {"Layer": _LAYERS, "InputSpec": _LAYERS, "Input": _LAYERS, "InputLayer": _LAYERS,
                              "get_source_inputs": _UTILS},
}
_WHY_MOVED = {
    "keras.utils": "its own `keras.utils` is a folder of modules that exports none of their names",
    "keras.layers.normalization": "its `keras.layers.normalization` is a package that exports nothing",
    "keras.engine.topology": "it has no `keras.engine.topology`",
}

# What Keras 2.6 keeps of those modules besides the names above (its submodules; `multi_gpu_model`
# is IPU160's): any other name they import is gone.
_KEPT_OF: Dict[str, FrozenSet[str]] = {
    "keras.utils": BARE_ONLY["utils"] | {"multi_gpu_model"},
    "keras.layers.normalization": frozenset({"batch_normalization", "batch_normalization_v1", "layer_normalization"}),
    "keras.engine.topology": frozenset(),
}

# Package imports (`import keras`, `from keras import utils`) a file reaches public utilities
# through, and the module that imports the same name from the public API.
_PACKAGES = {"keras": "tensorflow", "keras.utils": "tensorflow.keras"}


class KerasPublicApi(Rule):
    code = "IPU113"
    name = "keras-public-api"
    kind = FIX
    frameworks = frozenset({KERAS})
    summary = "Import from `tensorflow.keras` what Keras 2.6's own `keras` package does not export."
    rationale = (
        "The IPU's TensorFlow (Poplar SDK 2.6 to 3.4) is Graphcore's port of TensorFlow 2.6, whose Keras is "
        "the separate Keras 2.6 package (Targeting the IPU from TensorFlow 2, \"API changes\", release 2.6). "
        "`tensorflow.keras` is that package's public API; `import keras` gives the package itself, which "
        "differs from the standalone Keras 2.0 to 2.5 that older scripts were written for: its `keras.utils` "
        "is a folder of modules that exports none of the public utilities (`to_categorical`, `Sequence`, "
        "`get_file`...), `keras.layers.normalization` is a package that exports nothing and "
        "`keras.engine.topology` is gone. Such imports fail (ImportError, AttributeError) before any "
        "training. The port imports the same objects from `tensorflow.keras`, in the same place and under "
        "the same names (`print_summary`, which Keras 2.2 exported, from `keras.utils.layer_utils`, where Keras "
        "2.6 has it); a name those modules no longer have anywhere is reported. `import keras` becomes `from tensorflow import keras` only when every name the file "
        "reads through it is in the public API; otherwise IPU163 reports the utility."
    )
    examples = (
        Example(
            """\
            import numpy as np
            from keras.utils import to_categorical, Sequence as Batches
            from keras.models import Sequential

            labels = to_categorical(np.arange(10) % 3, 3)
            """,
            """\
            import numpy as np
            from tensorflow.keras.utils import to_categorical, Sequence as Batches
            from keras.models import Sequential

            labels = to_categorical(np.arange(10) % 3, 3)
            """,
        ),
        # Only the public utilities move: `np_utils` is a module of the package.
        Example(
            """\
            from keras.utils import np_utils, plot_model, print_summary
            from keras.layers.normalization import BatchNormalization

            onehot = np_utils.to_categorical(y, 10)
            """,
            """\
            from keras.utils import np_utils
            from tensorflow.keras.utils import plot_model
            from keras.utils.layer_utils import print_summary
            from tensorflow.keras.layers import BatchNormalization

            onehot = np_utils.to_categorical(y, 10)
            """,
        ),
        # Gone from Keras 2.6: reported.
        Example(
            """\
            from keras.utils import HDF5Matrix
            from keras.engine.topology import Node
            """,
        ),
        Example(
            """\
            import keras as K
            from keras import utils

            model = K.models.Sequential([K.layers.Dense(10, activation="softmax")])
            y_train = K.utils.to_categorical(y_train, 10)
            y_test = utils.to_categorical(y_test, 10)
            """,
            """\
            from tensorflow import keras as K
            from tensorflow.keras import utils

            model = K.models.Sequential([K.layers.Dense(10, activation="softmax")])
            y_train = K.utils.to_categorical(y_train, 10)
            y_test = utils.to_categorical(y_test, 10)
            """,
        ),
        # Keras 3's spellings that IPU114 writes as Keras 2.6's public names (`keras.layers.Layer`,
        # `keras.backend.set_floatx`) do not keep the package's import.
        Example(
            """\
            import keras

            keras.config.set_floatx("float32")


            class Scale(keras.Layer):
                def call(self, x):
                    return x * 2.0


            labels = keras.utils.to_categorical(labels, 10)
            """,
            """\
            from tensorflow import keras

            keras.config.set_floatx("float32")


            class Scale(keras.Layer):
                def call(self, x):
                    return x * 2.0


            labels = keras.utils.to_categorical(labels, 10)
            """,
        ),
        # `keras.layers.merge` is not in the public API: `import keras` stays (IPU163 reports the utility).
        Example(
            """\
            import keras

            joined = keras.layers.merge.concatenate([left, right])
            labels = keras.utils.to_categorical(labels, 10)
            """,
            reported=False,
        ),
        # What Keras 2.6's package exports itself: nothing to change.
        Example(
            """\
            import keras
            from keras.utils.np_utils import to_categorical
            from keras import backend as K

            model = keras.Sequential([keras.layers.Dense(1)])
            labels = to_categorical(labels, 10)
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        moved = ctx.shared(MOVED_IMPORTS)
        for alias, qualified, module in module_aliases(ctx):
            if module is not None and module in _MOVED_FROM:
                target = _MOVED_FROM[module].get(qualified.rsplit(".", 1)[1])
                why = (f"in Keras 2.6, the Keras of the IPU's TensorFlow, {_WHY_MOVED[module]} (ImportError "
                       f"there); `{target}` has the same object")
            else:
                target = self._package_target(ctx, alias, qualified)
                why = ("in Keras 2.6, the Keras of the IPU's TensorFlow, the package's own `keras.utils` exports "
                       "none of the public utilities the file reads through it (AttributeError there); "
                       "`tensorflow.keras`, the public API of the same package, has every name the file reads")
            if target is None and module in _KEPT_OF:
                self._report_missing(ctx, alias, qualified, module)
            if target is None or not ctx.move_import(alias, target):
                continue
            moved.add(id(alias))
            moved.update(id(name) for name in uses_of(ctx, bound_name(alias), qualified))
            ctx.report(self.code, alias, f"`{_spelled(alias, module)}` becomes "
                       f"`{_spelled(alias, target)}`: {why}", fixed=True)

    def _report_missing(self, ctx, alias: cst.ImportAlias, qualified: str, module: str) -> None:
        name = qualified.rsplit(".", 1)[1]
        if name in _KEPT_OF[module]:
            return
        ctx.report(self.code, alias, f"`{name}` of `{module}`: Keras 2.6, the Keras of the IPU's TensorFlow, does "
                   f"not have it there (ImportError): import it from where Keras 2.6 has it, or write it with "
                   f"Keras 2.6's public API (`tensorflow.keras`)", fixed=False, severity=ERROR)

    def _package_target(self, ctx, alias: cst.ImportAlias, qualified: str) -> Optional[str]:
        """``tensorflow`` for ``import keras``, ``tensorflow.keras`` for ``from keras import utils``,
        when the file reads a public utility through it and nothing the public API lacks; else None."""
        if qualified not in _PACKAGES:
            return None
        prefix = qualified.split(".")[1:]  # `from keras import utils`: its names are under `utils`
        paths = [prefix + attribute_path(ctx, name) for name in uses_of(ctx, bound_name(alias), qualified)]
        if any(_reads_public_utility(path) for path in paths) and all(_public(path) for path in paths):
            return _PACKAGES[qualified]
        return None


def _spelled(alias: cst.ImportAlias, module: Optional[str]) -> str:
    """The import of ``alias`` alone, from ``module`` (None: ``import ...``)."""
    name = dotted_name(alias.name) or ""
    local = bound_name(alias)
    named = name if local == name else f"{name} as {local}"
    return f"import {named}" if module is None else f"from {module} import {named}"


def _reads_public_utility(path: List[str]) -> bool:
    return len(path) > 1 and path[0] == "utils" and path[1] in PUBLIC_UTILS


def _public(path: List[str]) -> bool:
    """Whether ``keras.<path>`` is in Keras 2.6's public API (as far as its first two names say)."""
    if not path:
        return False  # the package itself, handed on: what is read from it is not known
    if path[0] in TOP_LEVEL_CLASSES:  # `keras.Layer`, which IPU114 writes `keras.layers.Layer`
        path = [TOP_LEVEL_CLASSES[path[0]], *path]
    renamed = RENAMED.get(".".join(["keras", *path[:2]]))
    if renamed is not None:  # `keras.config.floatx`, which IPU114 writes `keras.backend.floatx`
        path = renamed.split(".")[1:] + path[2:]
    if path[0] not in PUBLIC_TOP:
        return False
    if len(path) == 1:
        return True
    if path[0] == "utils":
        return path[1] in PUBLIC_UTILS
    return path[1] not in BARE_ONLY.get(path[0], ())


RULE = KerasPublicApi()
