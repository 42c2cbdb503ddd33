from typing import Dict, List, Optional

import libcst as cst

from porter.rules.keras._analysis.addons import (Unsafe, bound_arguments, check_no_mask, dtype_name,
                                                layer_applications, sequential_prefix, swap_layers)
from porter.cstutil import argument, is_name, is_true, keyword
from porter.rules.keras._analysis.util import INPUTS, is_literal_false, last_name, self_attribute_values
from porter.rule import FIX, KERAS, NOTE, Example, Rule
from porter.scopes import values_of

# The positional order of the stock Keras (TF 2.6) constructors; the IPU layers take the same
# order (Embedding adds `serialization_factor` at the end): Targeting the IPU from TensorFlow 2,
# "IPU TensorFlow Addons".
_ORDER = {
    "Embedding": ("input_dim", "output_dim", "embeddings_initializer", "embeddings_regularizer",
                  "activity_regularizer", "embeddings_constraint", "mask_zero", "input_length"),
    "Dropout": ("rate", "noise_shape", "seed"),
}
_INTEGER_DTYPES = ("int32", "int64", "int16", "int8", "uint8", "uint16")

# Layers with an IPU version that is not a drop-in: never swapped, pointed out once per file. (The
# addons `Dense` is an FP8 layer, never a replacement: it is not pointed out, or every Keras model
# would keep a finding after its port.)
_NOT_DROP_IN = {
    "keras.layers.LayerNormalization": (
        "`LayerNormalization` is kept: `ipu_tensorflow_addons.keras.layers.LayerNormalization` is the IPU "
        "version, but it needs every dimension except the normalised ones static when called (the batch "
        "too: `keras.Input(..., batch_size=N)`) and takes no regularizers or constraints; swap it by "
        "hand where that holds (Targeting the IPU from TensorFlow 2, \"IPU TensorFlow Addons\")"),
    "keras.layers.GroupNormalization": (
        "`GroupNormalization` is kept: `ipu_tensorflow_addons.keras.layers.GroupNormalization` takes "
        "`channels_axis` instead of `axis` and by default groups channels with a stride "
        "(`strided_channel_grouping=True`), a different computation; to swap it by hand, map `axis` "
        "to `channels_axis` and pass `strided_channel_grouping=False` (Targeting the IPU from TensorFlow 2, "
        "\"IPU TensorFlow Addons\")"),
}
_TFA_GROUP_NORM = "tensorflow_addons.layers.GroupNormalization"


class AddonsLayers(Rule):
    code = "IPU112"
    name = "addons-layers"
    kind = FIX
    frameworks = frozenset({KERAS})
    # What it leaves is advice: the Keras layer runs on the IPU, the IPU layer is faster.
    severity = NOTE
    summary = ("Swap Keras `Embedding`/`Dropout` for the IPU layers of `ipu_tensorflow_addons` when it is "
               "safe; point out `LayerNormalization`/`GroupNormalization`.")
    rationale = (
        "`ipu_tensorflow_addons.keras.layers.Embedding` and `Dropout` are the IPU versions of the Keras "
        "layers (Targeting the IPU from TensorFlow 2, \"IPU TensorFlow Addons\"), imported as Graphcore does, "
        "`from ipu_tensorflow_addons.keras "
        "import layers as ipu_layers`. The IPU `Embedding` raises for `mask_zero=True`, `input_length`, "
        "regularizers and constraints, and takes only 2-D integer input `[batch, length]`: it is swapped "
        "only when none of these is passed and its input is visibly 2-D integer ids (a `keras.Input(shape="
        "(length,), dtype=\"int32\")`); a position embedding called on a 1-D `tf.range` is kept, and its "
        "finding says the Keras layer runs on the IPU as it is. The IPU `Dropout` raises for an integer `seed` (it takes a "
        "2-element int32 seed) and for a `noise_shape` with unknown dimensions: it is swapped only with "
        "no seed and no or a fully static `noise_shape`, and only where no mask reaches it (the Keras "
        "`Dropout` passes a mask on; Graphcore's documentation does not say the IPU one does); a recurrent "
        "layer that returns its last output only, or a `GlobalAveragePooling1D`, ends a mask. Layers left as "
        "they "
        "are get a finding saying why, as do those of a file that reloads saved models with `load_model` "
        "and no `custom_objects`, or a dict of them that does not name the IPU layer's class (Keras needs "
        "it to rebuild the layer), or that converts a model to TensorFlow Lite, which has no kernels for the "
        "IPU's own ops. `LayerNormalization` and `GroupNormalization` are never swapped "
        "silently: their IPU "
        "versions differ (all shapes but the normalised axes static; strided channel grouping), so a "
        "finding points them out, once per file, with what to do to swap them by hand. `Dense` is never "
        "swapped: the addons `Dense` (SDK 3.1+) is an FP8 layer fed by `ConvertToF8`, not a replacement."
    )
    examples = (
        # The modules of Keras 2 that old scripts import the layers from (`keras.layers.core`,
        # `keras.layers.embeddings`) hold the same classes.
        Example(
            """\
            from keras.models import Sequential
            from keras.layers.core import Dense, Dropout

            model = Sequential([Dense(64, activation="relu", input_shape=(20,)), Dropout(0.5), Dense(1)])
            """,
            """\
            from keras.models import Sequential
            from keras.layers.core import Dense
            from ipu_tensorflow_addons.keras import layers as ipu_layers

            model = Sequential([Dense(64, activation="relu", input_shape=(20,)), ipu_layers.Dropout(0.5), Dense(1)])
            """,
        ),
        # A file that reloads its saved model without `custom_objects`: the IPU Dropout is not swapped in.
        Example(
            """\
            import tensorflow as tf

            net = tf.keras.Sequential([tf.keras.layers.Dense(64), tf.keras.layers.Dropout(0.3), tf.keras.layers.Dense(1)])
            net.save("net.keras")
            restored = tf.keras.models.load_model("net.keras")
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def build_model(vocab_size, length):
                tokens = tf.keras.Input(shape=(length,), dtype="int32")
                x = tf.keras.layers.Embedding(vocab_size, 128)(tokens)
                x = tf.keras.layers.Dropout(0.2)(x)
                x = tf.keras.layers.GlobalAveragePooling1D()(x)
                return tf.keras.Model(tokens, x)
            """,
            """\
            import tensorflow as tf
            from ipu_tensorflow_addons.keras import layers as ipu_layers


            def build_model(vocab_size, length):
                tokens = tf.keras.Input(shape=(length,), dtype="int32")
                x = ipu_layers.Embedding(vocab_size, 128)(tokens)
                x = ipu_layers.Dropout(0.2)(x)
                x = tf.keras.layers.GlobalAveragePooling1D()(x)
                return tf.keras.Model(tokens, x)
            """,
        ),
        # A recurrent layer that returns its last output only (or the average over the steps) ends the
        # mask of `Embedding(mask_zero=True)`: the Dropout after it gets none, and is swapped.
        Example(
            """\
            import tensorflow as tf


            def build_tagger(vocab, length):
                ids = tf.keras.Input(shape=(length,), dtype="int32")
                h = tf.keras.layers.Embedding(vocab, 64, mask_zero=True)(ids)
                h = tf.keras.layers.GRU(64)(h)
                h = tf.keras.layers.Dropout(0.3)(h)
                return tf.keras.Model(ids, tf.keras.layers.Dense(4)(h))


            scorer = tf.keras.Sequential([
                tf.keras.layers.Embedding(2000, 32, mask_zero=True),
                tf.keras.layers.GlobalAveragePooling1D(),
                tf.keras.layers.Dropout(0.2),
                tf.keras.layers.Dense(1),
            ])
            """,
            """\
            import tensorflow as tf
            from ipu_tensorflow_addons.keras import layers as ipu_layers


            def build_tagger(vocab, length):
                ids = tf.keras.Input(shape=(length,), dtype="int32")
                h = tf.keras.layers.Embedding(vocab, 64, mask_zero=True)(ids)
                h = tf.keras.layers.GRU(64)(h)
                h = ipu_layers.Dropout(0.3)(h)
                return tf.keras.Model(ids, tf.keras.layers.Dense(4)(h))


            scorer = tf.keras.Sequential([
                tf.keras.layers.Embedding(2000, 32, mask_zero=True),
                tf.keras.layers.GlobalAveragePooling1D(),
                ipu_layers.Dropout(0.2),
                tf.keras.layers.Dense(1),
            ])
            """,
        ),
        Example(
            """\
            from tensorflow import keras
            from tensorflow.keras.layers import Dropout, Embedding, Flatten

            model = keras.Sequential([
                keras.Input(shape=(40,), dtype="int64"),
                Embedding(5000, 16, "uniform"),
                Dropout(rate=0.1, noise_shape=(32, 1, 16)),
                Flatten(),
            ])
            """,
            """\
            from tensorflow import keras
            from tensorflow.keras.layers import Flatten
            from ipu_tensorflow_addons.keras import layers as ipu_layers

            model = keras.Sequential([
                keras.Input(shape=(40,), dtype="int64"),
                ipu_layers.Embedding(5000, 16, "uniform"),
                ipu_layers.Dropout(rate=0.1, noise_shape=(32, 1, 16)),
                Flatten(),
            ])
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            SEED = 7
            tokens = tf.keras.Input(shape=(64,), dtype=tf.int32)
            a = tf.keras.layers.Embedding(1000, 32, mask_zero=True)(tokens)
            b = tf.keras.layers.Embedding(1000, 32, input_length=64)(tokens)
            c = tf.keras.layers.Embedding(1000, 32, embeddings_regularizer="l2")(tokens)
            d = tf.keras.layers.Dropout(0.5, seed=1234)(a)
            d2 = tf.keras.layers.Dropout(0.5, seed=SEED)(b)
            e = tf.keras.layers.Dropout(0.5, noise_shape=(None, 1, 32))(a)
            """,
        ),
        # A transformer's learned position embedding, called on the 1-D `tf.range` of the patch or
        # token positions: the IPU layer takes 2-D ids only, so it stays, and the note says so.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras import layers


            class PatchEncoder(layers.Layer):
                def __init__(self, num_patches, dim):
                    super().__init__()
                    self.num_patches = num_patches
                    self.position_embedding = layers.Embedding(input_dim=num_patches, output_dim=dim)

                def call(self, patches):
                    positions = tf.range(start=0, limit=self.num_patches, delta=1)
                    return patches + self.position_embedding(positions)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([
                tf.keras.layers.Embedding(10000, 64, input_shape=(100,)),
                tf.keras.layers.LayerNormalization(),
                tf.keras.layers.Dense(1),
            ])
            """,
        ),
        # One layer class makes a mask, another holds a Dropout: put together in a model, the mask
        # reaches the Dropout, which the IPU one would drop.
        Example(
            """\
            import tensorflow as tf


            class TokenEmbedding(tf.keras.layers.Layer):
                def __init__(self, vocab, width):
                    super().__init__()
                    self.embed = tf.keras.layers.Embedding(vocab, width, mask_zero=True)

                def call(self, tokens):
                    return self.embed(tokens)


            class Block(tf.keras.layers.Layer):
                def __init__(self, rate):
                    super().__init__()
                    self.drop = tf.keras.layers.Dropout(rate)

                def call(self, x):
                    return self.drop(x)
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from ipu_tensorflow_addons.keras import layers as ipu_layers

            tokens = tf.keras.Input(shape=(64,), dtype="int32")
            x = ipu_layers.Embedding(1000, 32)(tokens)
            x = ipu_layers.Dropout(0.1)(x)
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow as tf

            x = tf.keras.layers.SpatialDropout1D(0.2)(x)
            cell = tf.keras.layers.LSTMCell(8)
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        swap_layers(ctx, self.code, ("Embedding", "Dropout"), self._unsafe_reason, _ORDER, keep_positional=None)
        self._point_out(ctx)

    def _point_out(self, ctx) -> None:
        """One finding per file for each layer whose IPU version is not a drop-in."""
        found: Dict[str, List[cst.Call]] = {}
        for call in ctx.nodes(cst.Call):
            if last_name(call.func) not in ("LayerNormalization", "GroupNormalization"):
                continue
            name = ctx.keras_name(call.func)
            if name is None and ctx.qualified_name(call.func) == _TFA_GROUP_NORM:
                name = "keras.layers.GroupNormalization"
            if name in _NOT_DROP_IN:
                found.setdefault(name, []).append(call)
        for name, calls in found.items():
            more = f" ({len(calls)} in this file)" if len(calls) > 1 else ""
            ctx.report(self.code, calls[0], _NOT_DROP_IN[name] + more, fixed=False)

    # ------------------------------------------------------------------------------ safety
    def _unsafe_reason(self, ctx, call: cst.Call, layer: str) -> Optional[str]:
        try:
            values = bound_arguments(call, _ORDER[layer], layer)
            if layer == "Embedding":
                self._check_embedding(ctx, call, values)
            else:
                self._check_dropout(ctx, values)
                check_no_mask(ctx, call)
        except Unsafe as error:
            return str(error)
        return None

    def _check_embedding(self, ctx, call: cst.Call, values) -> None:
        for name in ("embeddings_regularizer", "activity_regularizer", "embeddings_constraint", "input_length"):
            if name in values and not is_name(values[name], "None"):
                raise Unsafe(f"`{name}` is not supported")
        if "mask_zero" in values and not is_literal_false(values["mask_zero"]):
            raise Unsafe("`mask_zero=True` is not supported" if is_true(values["mask_zero"])
                         else "`mask_zero` cannot be read (it must be False)")
        if not self._integer_ids(ctx, call) and self._embeds_positions(ctx, call):
            raise Unsafe("it is called on a 1-D `tf.range` (positions), and the IPU layer takes only 2-D ids "
                         "`[batch, length]`; the Keras layer runs on the IPU as it is")
        if not self._integer_ids(ctx, call):
            raise Unsafe("its input is not visibly 2-D integer ids `[batch, length]`; feed it from "
                         "`keras.Input(shape=(length,), dtype=\"int32\")` and port again")

    def _integer_ids(self, ctx, call: cst.Call) -> bool:
        """True when the input of the ``Embedding`` ``call`` is a ``keras.Input`` (or ``InputLayer``)
        of shape ``(length,)`` and an integer dtype: first in its ``Sequential`` list, or the
        tensor it is called on in a functional model."""
        prefix = sequential_prefix(ctx, call)
        if prefix is not None:
            return len(prefix) == 1 and self._is_id_input(ctx, prefix[0])
        parent = ctx.parent(call)
        if not (isinstance(parent, cst.Call) and parent.func is call and parent.args):
            return False
        source = parent.args[0].value
        if isinstance(source, cst.Name):
            sources = values_of(ctx, source)
            return bool(sources) and all(self._is_id_input(ctx, value) for value in sources)
        return self._is_id_input(ctx, source)

    @staticmethod
    def _embeds_positions(ctx, call: cst.Call) -> bool:
        """True when every application of the ``Embedding`` ``call`` is given ``tf.range(...)``
        (the position embedding of a transformer): directly, or through a variable or a
        ``self.`` attribute that holds it."""
        applied = layer_applications(ctx, call)
        return bool(applied) and all(
            application.args and _is_range(ctx, application.args[0].value) for application in applied)

    @staticmethod
    def _is_id_input(ctx, node) -> bool:
        if not isinstance(node, cst.Call):
            return False
        name = ctx.keras_name(node.func)
        if name in INPUTS:
            shape = argument(node, "shape", 0)
        elif name == "keras.layers.InputLayer":
            shape = argument(node, "input_shape", 0)
        else:
            return False
        if shape is None or not isinstance(shape.value, (cst.Tuple, cst.List)) or len(shape.value.elements) != 1:
            return False
        dtype = keyword(node, "dtype")
        if dtype is None:
            return False
        return dtype_name(ctx, dtype.value) in _INTEGER_DTYPES

    @staticmethod
    def _check_dropout(ctx, values) -> None:
        seed = values.get("seed")
        if seed is not None and not is_name(seed, "None"):
            # SEED = 42, then Dropout(0.5, seed=SEED): an integer all the same
            given = values_of(ctx, seed) if isinstance(seed, cst.Name) else [seed]
            integer = bool(given) and all(isinstance(value, cst.Integer) for value in given)
            raise Unsafe("an integer `seed` raises on the IPU layer (it takes a 2-element int32 seed)"
                         if integer else "`seed` cannot be read (the IPU layer takes no seed or a 2-element int32 one)")
        shape = values.get("noise_shape")
        if shape is not None and not is_name(shape, "None"):
            if not (isinstance(shape, (cst.Tuple, cst.List)) and all(
                    isinstance(element.value, cst.Integer) for element in shape.elements)):
                raise Unsafe("`noise_shape` is not fully static (the IPU layer needs every dimension known)")


RULE = AddonsLayers()


def _is_range(ctx, node: cst.BaseExpression) -> bool:
    """True when ``node`` is ``tf.range(...)``, or a name or ``self.`` attribute only ever assigned one."""
    if isinstance(node, cst.Name):
        values = values_of(ctx, node)
    elif isinstance(node, cst.Attribute) and is_name(node.value, "self"):
        values = self_attribute_values(ctx, node)
    else:
        values = [node]
    return bool(values) and all(isinstance(value, cst.Call) and ctx.qualified_name(value.func) == "tensorflow.range"
                                for value in values)
