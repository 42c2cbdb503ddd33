"""IPU114: newer Keras spellings of what Keras 2.6 has under its own name."""

from typing import Optional, Set, Tuple

import libcst as cst

from porter.context import bound_name, canonical_keras
from porter.cstutil import keyword, with_args
from porter.rule import FIX, KERAS, Example, Rule
from porter.rules.keras._analysis.keras26 import (LEGACY_OPTIMIZERS, RENAMED, REWRITTEN, TOP_LEVEL_CLASSES,
                                                  head_name, module_aliases, uses_of, valid_legacy_call)
from porter.rules.keras._analysis.util import keras_subclasses, method_calls

_LEGACY = "keras.optimizers.legacy"


class NewerKerasSpelling(Rule):
    code = "IPU114"
    name = "newer-keras-spelling"
    kind = FIX
    frameworks = frozenset({KERAS})
    summary = ("Write Keras 2.6's names for what newer Keras renamed: `optimizers.legacy.Adam` is "
               "`optimizers.Adam`, `LeakyReLU(negative_slope=...)` is `LeakyReLU(alpha=...)`, `keras.Layer` is "
               "`keras.layers.Layer`, `keras.config.set_floatx` is `keras.backend.set_floatx`, and "
               "`compile(jit_compile=...)` goes.")
    rationale = (
        "The IPU's TensorFlow (Poplar SDK 2.6 to 3.4) is Graphcore's port of TensorFlow 2.6, with Keras 2.6 "
        "(Targeting the IPU from TensorFlow 2, \"API changes\", release 2.6). Keras 2.11 and later keep the "
        "optimizers of Keras 2.6 under `keras.optimizers.legacy`, a namespace Keras 2.6 does not have "
        "(AttributeError, ImportError): there they are `keras.optimizers.Adam`, `SGD`... with the same "
        "arguments, so the port drops `.legacy` where the call passes only arguments Keras 2.6's optimizer "
        "takes. `Model.compile(jit_compile=...)` (Keras 2.8 and later) is a TypeError in Keras 2.6; on the "
        "IPU, Keras compiles the whole training step with XLA for the device in any case (\"Keras with "
        "IPUs\"), so the port removes the argument when its value is a constant or a name. Keras 3 "
        "renamed the slope of `LeakyReLU` from `alpha` to `negative_slope` (a TypeError in Keras 2.6), with the "
        "same meaning and default (0.3): the port writes `alpha=`. Keras 3 also exports its base classes "
        "at its top (`keras.Layer`, `keras.Loss`, `keras.Metric`, `keras.Initializer`, `keras.Regularizer`, "
        "`keras.InputSpec`), which Keras 2.6 has only in their modules: the port writes `keras.layers.Layer`... "
        "(and imports them from there), the same classes. Keras 3's `keras.config` settings are Keras "
        "2.6's `keras.backend` functions (`floatx`, `set_floatx`, `epsilon`, `image_data_format`...), and its "
        "`set_dtype_policy`, `dtype_policy` and `DTypePolicy` are Keras 2.6's `mixed_precision.set_global_policy`, "
        "`global_policy` and `Policy`, with the same arguments: the port writes those, as it writes a layer's "
        "`add_weight(autocast=...)` as Keras 2.6's `add_weight(experimental_autocast=...)`. What it cannot rewrite exactly IPU163 reports."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf
            from keras.optimizers.legacy import SGD

            model.compile(optimizer=tf.keras.optimizers.legacy.Adam(learning_rate=1e-3, clipnorm=1.0),
                          loss="mse", jit_compile=True)
            fallback = SGD(0.01, momentum=0.9)
            """,
            """\
            import tensorflow as tf
            from keras.optimizers import SGD

            model.compile(optimizer=tf.keras.optimizers.Adam(learning_rate=1e-3, clipnorm=1.0),
                          loss="mse")
            fallback = SGD(0.01, momentum=0.9)
            """,
        ),
        # Keras 3's name of the leaky ReLU's slope, written as a keyword: Keras 2.6 calls it `alpha`.
        Example(
            """\
            import keras
            from keras import layers

            discriminator = keras.Sequential([
                layers.Conv2D(64, 3, strides=2, padding="same"),
                layers.LeakyReLU(negative_slope=0.2),
                layers.Conv2D(128, 3, strides=2, padding="same"),
                layers.LeakyReLU(0.2),
            ])
            """,
            """\
            import keras
            from keras import layers

            discriminator = keras.Sequential([
                layers.Conv2D(64, 3, strides=2, padding="same"),
                layers.LeakyReLU(alpha=0.2),
                layers.Conv2D(128, 3, strides=2, padding="same"),
                layers.LeakyReLU(0.2),
            ])
            """,
        ),
        # Keras 3's top-level names of the base classes, read from the package or imported from it.
        Example(
            """\
            import keras
            from keras import Metric, layers


            class Scale(keras.Layer):
                def call(self, x):
                    return x * 2.0


            class Huber(keras.Loss):
                def call(self, y_true, y_pred):
                    return keras.losses.huber(y_true, y_pred)


            class Seen(Metric):
                def update_state(self, y_true, y_pred, sample_weight=None):
                    pass
            """,
            """\
            import keras
            from keras import layers
            from keras.metrics import Metric


            class Scale(keras.layers.Layer):
                def call(self, x):
                    return x * 2.0


            class Huber(keras.losses.Loss):
                def call(self, y_true, y_pred):
                    return keras.losses.huber(y_true, y_pred)


            class Seen(Metric):
                def update_state(self, y_true, y_pred, sample_weight=None):
                    pass
            """,
        ),
        # Keras 3's global settings, read through `keras` and through `tf.keras`.
        Example(
            """\
            import keras
            import tensorflow as tf

            keras.config.set_dtype_policy("mixed_float16")
            tf.keras.config.set_image_data_format("channels_last")
            print(keras.config.floatx(), keras.config.backend())
            """,
            """\
            import keras
            import tensorflow as tf

            keras.mixed_precision.set_global_policy("mixed_float16")
            tf.keras.backend.set_image_data_format("channels_last")
            print(keras.backend.floatx(), keras.backend.backend())
            """,
        ),
        # Keras 3's name of a layer weight's mixed-precision switch.
        Example(
            """\
            from tensorflow import keras


            class Temperature(keras.layers.Layer):
                def build(self, input_shape):
                    self.t = self.add_weight(shape=(), initializer="ones", autocast=False)
            """,
            """\
            from tensorflow import keras


            class Temperature(keras.layers.Layer):
                def build(self, input_shape):
                    self.t = self.add_weight(shape=(), initializer="ones", experimental_autocast=False)
            """,
        ),
        # Arguments Keras 2.6's Adam does not take, and a value computed in the call: reported by IPU163.
        Example(
            """\
            from tensorflow import keras

            optimizer = keras.optimizers.legacy.Adam(1e-3, weight_decay=1e-4)
            model.compile(optimizer, "mse", jit_compile=choose_jit())
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        rewritten = ctx.shared(REWRITTEN)
        self._legacy_attributes(ctx, rewritten)
        self._legacy_imports(ctx, rewritten)
        self._leaky_relu_slopes(ctx)
        self._top_level_attributes(ctx, rewritten)
        self._top_level_imports(ctx, rewritten)
        self._renamed_functions(ctx, rewritten)
        self._autocast_keywords(ctx)
        for call, _ in method_calls(ctx, "compile"):
            arg = keyword(call, "jit_compile")
            if arg is None or not isinstance(arg.value, (cst.Name, cst.Attribute)) or not ctx.replace(call, _without_jit):
                continue
            rewritten.add(id(arg))
            ctx.report(self.code, arg, "`compile(jit_compile=...)` removed: it is not in Keras 2.6, the Keras of the "
                       "IPU's TensorFlow (TypeError there), and on the IPU Keras compiles the whole step with XLA "
                       "anyway", fixed=True)

    def _leaky_relu_slopes(self, ctx) -> None:
        """``LeakyReLU(negative_slope=0.2)`` -> ``LeakyReLU(alpha=0.2)``: Keras 3's name of the slope.
        A slope given by position is the first argument in both."""
        for call, _ in ctx.calls_to("keras.layers.LeakyReLU"):
            arg = keyword(call, "negative_slope")
            if arg is None or keyword(call, "alpha") is not None:
                continue
            if ctx.replace(arg, lambda updated: updated.with_changes(keyword=cst.Name("alpha"))):
                ctx.report(self.code, arg, "`LeakyReLU(negative_slope=...)` becomes `LeakyReLU(alpha=...)`: Keras 2.6, "
                           "the Keras of the IPU's TensorFlow, names the slope `alpha` (`negative_slope` is a "
                           "TypeError there), with the same meaning and default", fixed=True)

    def _top_level_attributes(self, ctx, rewritten: Set[int]) -> None:
        """``keras.Layer`` -> ``keras.layers.Layer``: Keras 3's top-level name of a base class."""
        for node in ctx.nodes(cst.Attribute):
            found = _top_level_class(ctx.keras_name(node))
            if found is None or not isinstance(node.value, (cst.Name, cst.Attribute)):
                continue
            module, name = found
            if ctx.replace(node, lambda updated, module=module: updated.with_changes(
                    value=cst.Attribute(value=updated.value, attr=cst.Name(module)))):
                rewritten.update([id(node), id(head_name(node))])
                ctx.report(self.code, node, _top_level_message(name, f"`keras.{name}` becomes `keras.{module}.{name}`"),
                           fixed=True)

    def _renamed_functions(self, ctx, rewritten: Set[int]) -> None:
        """``keras.config.set_floatx`` -> ``keras.backend.set_floatx``, read through the package
        (``keras``, ``tf.keras``); an imported name is left to IPU163."""
        for node in ctx.nodes(cst.Attribute):
            old = ctx.keras_name(node)
            new = RENAMED.get(old or "")
            if new is None or _keras_package(ctx, node, len(old.split(".")) - 1) is None:
                continue
            if ctx.replace(node, lambda updated, old=old, new=new: _respelled(updated, old, new)):
                rewritten.update([id(node), id(head_name(node))])
                ctx.report(self.code, node, f"`{old}` becomes `{new}`: Keras 2.6, the Keras of the IPU's TensorFlow, "
                           f"has no `{old}` (AttributeError), and its "
                           f"`{new}` takes the same arguments and does the same", fixed=True)

    def _autocast_keywords(self, ctx) -> None:
        """``self.add_weight(..., autocast=False)`` -> ``experimental_autocast=False`` in a Keras class
        of the file: Keras 3's name of the same switch."""
        keras_classes = set(keras_subclasses(ctx).values())
        for call, _ in method_calls(ctx, "add_weight"):
            arg = keyword(call, "autocast")
            receiver = call.func.value
            if arg is None or keyword(call, "experimental_autocast") is not None or not (
                    isinstance(receiver, cst.Name) and receiver.value == "self"
                    and ctx.enclosing(call, cst.ClassDef) in keras_classes):
                continue
            if ctx.replace(arg, lambda updated: updated.with_changes(keyword=cst.Name("experimental_autocast"))):
                ctx.report(self.code, arg, "`add_weight(autocast=...)` becomes `add_weight(experimental_autocast=...)`: "
                           "Keras 2.6, the Keras of the IPU's TensorFlow, names the switch so (`autocast` is a "
                           "TypeError there), with the same meaning and default", fixed=True)

    def _top_level_imports(self, ctx, rewritten: Set[int]) -> None:
        """``from keras import Layer`` -> ``from keras.layers import Layer``."""
        for alias, qualified, module in module_aliases(ctx):
            found = _top_level_class(qualified)
            if found is None or module is None:
                continue
            submodule, name = found
            target = f"{module}.{submodule}"
            if ctx.move_import(alias, target):
                rewritten.update([id(alias), *map(id, uses_of(ctx, bound_name(alias), qualified))])
                ctx.report(self.code, alias, _top_level_message(name, f"`{name}` imported from `{target}`, not "
                                                                      f"`{module}`"), fixed=True)

    def _legacy_attributes(self, ctx, rewritten: Set[int]) -> None:
        """``tf.keras.optimizers.legacy.Adam(...)`` -> ``tf.keras.optimizers.Adam(...)``."""
        for node in ctx.nodes(cst.Attribute):
            optimizer = _legacy_optimizer(ctx.keras_name(node))
            if optimizer is None or not isinstance(node.value, cst.Attribute) or node.value.attr.value != "legacy":
                continue
            call = ctx.parent(node)
            if isinstance(call, cst.Call) and call.func is node and not valid_legacy_call(call, optimizer):
                continue
            if ctx.replace(node, lambda updated: updated.with_changes(value=updated.value.value)):
                rewritten.add(id(head_name(node)))
                ctx.report(self.code, node, _message(optimizer, f"`.legacy` dropped from `optimizers.legacy.{optimizer}`"),
                           fixed=True)

    def _legacy_imports(self, ctx, rewritten: Set[int]) -> None:
        """``from keras.optimizers.legacy import Adam`` -> ``from keras.optimizers import Adam``,
        when every call of it takes Keras 2.6's arguments."""
        for alias, qualified, module in module_aliases(ctx):
            optimizer = _legacy_optimizer(qualified)
            if optimizer is None or module is None or not module.endswith(".legacy"):
                continue
            uses = list(uses_of(ctx, bound_name(alias), qualified))
            if any(isinstance(ctx.parent(use), cst.Call) and ctx.parent(use).func is use
                   and not valid_legacy_call(ctx.parent(use), optimizer) for use in uses):
                continue
            target = module[:-len(".legacy")]
            if ctx.move_import(alias, target):
                rewritten.update([id(alias), *map(id, uses)])
                ctx.report(self.code, alias, _message(optimizer, f"`{optimizer}` imported from `{target}`, not `{module}`"),
                           fixed=True)


def _legacy_optimizer(qualified: Optional[str]) -> Optional[str]:
    """``Adam`` for ``tensorflow.keras.optimizers.legacy.Adam`` and its other spellings."""
    name = canonical_keras(qualified) or ""
    optimizer = name[len(_LEGACY) + 1:] if name.startswith(_LEGACY + ".") else None
    return optimizer if optimizer in LEGACY_OPTIMIZERS else None


def _top_level_class(qualified: Optional[str]) -> Optional[Tuple[str, str]]:
    """(its Keras 2.6 module, the class) for Keras 3's top-level name of a base class: ``("layers",
    "Layer")`` for ``keras.Layer``, ``tensorflow.keras.Layer``..."""
    name = canonical_keras(qualified) or ""
    head, _, rest = name.partition(".")
    return (TOP_LEVEL_CLASSES[rest], rest) if head == "keras" and rest in TOP_LEVEL_CLASSES else None


def _keras_package(ctx, node: cst.CSTNode, depth: int) -> Optional[cst.BaseExpression]:
    """The Keras package ``node`` reads ``depth`` names below (``tf.keras`` of
    ``tf.keras.config.floatx`` for 2); None when the chain starts elsewhere (an imported module)."""
    for _ in range(depth):
        if not isinstance(node, cst.Attribute):
            return None
        node = node.value
    qualified = ctx.qualified_name(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
    return node if qualified is not None and canonical_keras(qualified + ".x") == "keras.x" else None


def _respelled(node: cst.BaseExpression, old: str, new: str) -> cst.BaseExpression:
    """``tf.keras.config.floatx`` -> ``tf.keras.backend.floatx``: the package as the file spells it,
    the names after it those of ``new``."""
    for _ in old.split(".")[1:]:
        node = node.value
    for part in new.split(".")[1:]:
        node = cst.Attribute(value=node, attr=cst.Name(part))
    return node


def _top_level_message(name: str, what: str) -> str:
    return (f"{what}: Keras 2.6, the Keras of the IPU's TensorFlow, has `{name}` only there (AttributeError or "
            f"ImportError at the top), and Keras 3's top-level `{name}` is the same class")


def _without_jit(call: cst.Call) -> cst.Call:
    return with_args(call, [arg for arg in call.args if not (arg.keyword is not None and arg.keyword.value == "jit_compile")])


def _message(optimizer: str, what: str) -> str:
    return (f"{what}: Keras 2.6, the Keras of the IPU's TensorFlow, has no `optimizers.legacy`; its "
            f"`optimizers.{optimizer}` is the optimizer newer Keras keeps there, with the same arguments")


RULE = NewerKerasSpelling()
