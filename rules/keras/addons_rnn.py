from typing import Optional

import libcst as cst

from porter.context import canonical_keras
from porter.rules.keras._analysis.addons import (OlderLayer, Unsafe, bound_arguments, check_no_mask, dtype_name,
                                                 is_bidirectional_layer, swap_layers)
from porter.cstutil import string_value
from porter.rules.keras._analysis.util import is_literal_false, number_value
from porter.rule import FIX, KERAS, NOTE, Example, Rule

# The positional order of the stock Keras (TF 2.6) constructors.
_SHARED = ("units", "activation", "recurrent_activation", "use_bias", "kernel_initializer",
           "recurrent_initializer", "bias_initializer")
_REGULARIZED = ("kernel_regularizer", "recurrent_regularizer", "bias_regularizer", "activity_regularizer",
                "kernel_constraint", "recurrent_constraint", "bias_constraint")
_ORDER = {
    "LSTM": _SHARED + ("unit_forget_bias",) + _REGULARIZED + (
        "dropout", "recurrent_dropout", "return_sequences", "return_state", "go_backwards", "stateful",
        "time_major", "unroll"),
    "GRU": _SHARED + _REGULARIZED + (
        "dropout", "recurrent_dropout", "return_sequences", "return_state", "go_backwards", "stateful",
        "unroll", "time_major", "reset_after"),
}
# Keras' v1 layers (`tf.compat.v1.keras.layers.LSTM`, `keras.layers.recurrent.LSTM` of Keras 2.6):
# their positional order, and the defaults in which they differ from the IPU layers (and v2).
_V1_ORDER = {
    "LSTM": _SHARED + ("unit_forget_bias",) + _REGULARIZED + (
        "dropout", "recurrent_dropout", "return_sequences", "return_state", "go_backwards", "stateful", "unroll"),
    "GRU": _SHARED + _REGULARIZED + (
        "dropout", "recurrent_dropout", "return_sequences", "return_state", "go_backwards", "stateful", "unroll",
        "reset_after"),
}
_V1_DEFAULTS = {
    "LSTM": {"recurrent_activation": '"hard_sigmoid"'},
    "GRU": {"recurrent_activation": '"hard_sigmoid"', "reset_after": "False"},
}
_V1_PREFIXES = ("tensorflow.compat.v1.keras.layers.",)
_V1_MODULE = "keras.layers.recurrent."
_ACTIVATIONS = ("tanh", "relu", "softmax", "sigmoid", "hard_sigmoid")
_RECURRENT_ACTIVATIONS = ("tanh", "softmax", "sigmoid", "hard_sigmoid")


class AddonsRnn(Rule):
    code = "IPU104"
    name = "addons-rnn"
    kind = FIX
    frameworks = frozenset({KERAS})
    # What it leaves is advice: the Keras layer runs on the IPU, the IPU layer is faster.
    severity = NOTE
    summary = "Swap Keras `LSTM`/`GRU` for the IPU layers of `ipu_tensorflow_addons`, or say why not."
    rationale = (
        "`ipu_tensorflow_addons.keras.layers.LSTM` and `GRU` (PopnnLSTM/PopnnGRU) are the IPU-optimised "
        "recurrent layers (Targeting the IPU from TensorFlow 2, \"IPU TensorFlow Addons\"); imported as "
        "Graphcore does, `from "
        "ipu_tensorflow_addons.keras import layers as ipu_layers`. Their positional order differs after "
        "`dropout`, so every argument after `units` becomes a keyword. Keras' v1 classes "
        "(`tf.compat.v1.keras.layers.LSTM`, those of the module `keras.layers.recurrent`) default to "
        "`recurrent_activation=\"hard_sigmoid\"` (and GRU to `reset_after=False`), which the IPU layer is then "
        "given. A class held in a variable (`RNN = layers.LSTM`) is swapped there when every call of it may be. "
        "They raise for `use_bias=False`, "
        "regularizers, constraints, `recurrent_dropout`, `go_backwards`, `unroll`, an `implementation` "
        "other than 1/2, activations they lack, and any mask (an upstream `Masking` layer, "
        "`Embedding(mask_zero=True)`, or a layer class of the file that holds one or has a `compute_mask`, "
        "followed through the file's helper functions and layers held in variables); such layers, layers "
        "a `Bidirectional` wrapper gets (directly, through a variable or from a helper function: it "
        "rebuilds them with `go_backwards=True`), and layers whose "
        "deciding arguments the porter cannot read (`**kwargs`, a variable `use_bias`...) are left as "
        "they are and reported, and so are the layers of a file that reloads saved models with "
        "`load_model` and no `custom_objects`, or with a dict of them that does not name the IPU layer's "
        "class (`PopnnLSTM`, `PopnnGRU`), which Keras needs to rebuild it, and so are the layers of a file "
        "that loads weights with `load_weights` from a path it does not save to itself (`save_weights`, "
        "`ModelCheckpoint`, or `tf.train.latest_checkpoint` in a file that saves weights): weights saved from Keras' layer, pretrained, which the IPU class, with its own "
        "layer name and variables, is not known to take; and so are the layers of a file that converts a model "
        "to TensorFlow Lite (`tf.lite.TFLiteConverter`), which has no kernels for the IPU's own ops. A file that "
        "saves a model the port swapped the IPU layer into (`model.save`, `save_weights`, `tf.saved_model.save`, "
        "`ModelCheckpoint`) gets a note at the save: what loads it must build the model with the same IPU layer, "
        "or load it with `custom_objects` naming its class, and run on an IPU."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([
                tf.keras.layers.Embedding(10000, 64),
                tf.keras.layers.LSTM(64, return_sequences=True),
                tf.keras.layers.GRU(32),
                tf.keras.layers.Dense(1),
            ])
            """,
            """\
            import tensorflow as tf
            from ipu_tensorflow_addons.keras import layers as ipu_layers

            model = tf.keras.Sequential([
                tf.keras.layers.Embedding(10000, 64),
                ipu_layers.LSTM(64, return_sequences=True),
                ipu_layers.GRU(32),
                tf.keras.layers.Dense(1),
            ])
            """,
        ),
        Example(
            """\
            from tensorflow.keras import layers


            def build(inputs):
                x = layers.LSTM(128, "tanh", "sigmoid", True)(inputs)
                return layers.Dense(1)(x)
            """,
            """\
            from tensorflow.keras import layers
            from ipu_tensorflow_addons.keras import layers as ipu_layers


            def build(inputs):
                x = ipu_layers.LSTM(128, activation="tanh", recurrent_activation="sigmoid", use_bias=True)(inputs)
                return layers.Dense(1)(x)
            """,
        ),
        Example(
            """\
            import keras
            from keras.layers import LSTM, Dense

            model = keras.Sequential([LSTM(32, input_shape=(10, 8)), Dense(1)])
            """,
            """\
            import keras
            from keras.layers import Dense
            from ipu_tensorflow_addons.keras import layers as ipu_layers

            model = keras.Sequential([ipu_layers.LSTM(32, input_shape=(10, 8)), Dense(1)])
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras.layers import GRU as RNNLayer

            encoder = RNNLayer(units=256, dropout=0.1, return_state=True)
            """,
            """\
            import tensorflow as tf
            from ipu_tensorflow_addons.keras import layers as ipu_layers

            encoder = ipu_layers.GRU(units=256, dropout=0.1, return_state=True)
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from ipu_tensorflow_addons.keras import layers as ipu_layers

            model = tf.keras.Sequential([ipu_layers.LSTM(64), tf.keras.layers.Dense(1)])
            """,
            reported=False,
        ),
        # Keras' v1 classes (`tf.compat.v1.keras.layers`, the module `keras.layers.recurrent`) default
        # to `hard_sigmoid` (and GRU to `reset_after=False`): the IPU layer is given those defaults.
        Example(
            """\
            import tensorflow as tf
            from keras.layers.recurrent import GRU

            encoder = tf.compat.v1.keras.layers.LSTM(64, return_sequences=True)
            decoder = GRU(32, "tanh", "sigmoid")
            """,
            """\
            import tensorflow as tf
            from ipu_tensorflow_addons.keras import layers as ipu_layers

            encoder = ipu_layers.LSTM(64, return_sequences=True, recurrent_activation="hard_sigmoid")
            decoder = ipu_layers.GRU(32, activation="tanh", recurrent_activation="sigmoid", reset_after=False)
            """,
        ),
        # The class held in a variable, for the script to try another: the variable holds the IPU
        # class, and its calls pass their arguments after `units` by keyword.
        Example(
            """\
            from tensorflow import keras
            from tensorflow.keras import layers

            RNN = layers.LSTM
            model = keras.Sequential([RNN(128, "tanh", input_shape=(7, 12)), layers.RepeatVector(4), RNN(128, return_sequences=True)])
            """,
            """\
            from tensorflow import keras
            from tensorflow.keras import layers
            from ipu_tensorflow_addons.keras import layers as ipu_layers

            RNN = ipu_layers.LSTM
            model = keras.Sequential([RNN(128, activation="tanh", input_shape=(7, 12)), layers.RepeatVector(4), RNN(128, return_sequences=True)])
            """,
        ),
        # One of its calls cannot take the IPU class (here, a `Bidirectional` wrapper): the variable
        # keeps Keras' class, and the call says why.
        Example(
            """\
            from tensorflow.keras import layers

            RNN = layers.GRU


            def encode(x):
                x = layers.Bidirectional(RNN(32, return_sequences=True))(x)
                return RNN(16)(x)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([
                tf.keras.layers.Embedding(5000, 32, mask_zero=True),
                tf.keras.layers.LSTM(32),
            ])
            """,
        ),
        Example(
            """\
            from tensorflow import keras


            def build():
                inputs = keras.Input(shape=(None, 4))
                x = keras.layers.Masking(mask_value=0.0)(inputs)
                x = keras.layers.GRU(16)(x)
                return keras.Model(inputs, x)
            """,
        ),
        Example(
            """\
            from tensorflow import keras


            def build(vocab):
                words = keras.Input(shape=(None,), dtype="int32")
                signal = keras.Input(shape=(50, 3))
                text = keras.layers.Embedding(vocab, 32, mask_zero=True)(words)
                text = keras.layers.GlobalAveragePooling1D()(text)
                series = keras.layers.LSTM(16)(signal)
                joined = keras.layers.concatenate([text, series])
                return keras.Model([words, signal], keras.layers.Dense(1)(joined))
            """,
            """\
            from tensorflow import keras
            from ipu_tensorflow_addons.keras import layers as ipu_layers


            def build(vocab):
                words = keras.Input(shape=(None,), dtype="int32")
                signal = keras.Input(shape=(50, 3))
                text = keras.layers.Embedding(vocab, 32, mask_zero=True)(words)
                text = keras.layers.GlobalAveragePooling1D()(text)
                series = ipu_layers.LSTM(16)(signal)
                joined = keras.layers.concatenate([text, series])
                return keras.Model([words, signal], keras.layers.Dense(1)(joined))
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras import layers

            a = layers.LSTM(8, recurrent_dropout=0.2)
            b = layers.LSTM(8, go_backwards=True)
            c = layers.GRU(8, use_bias=False)
            d = layers.LSTM(8, kernel_regularizer=tf.keras.regularizers.l2(1e-4))
            e = layers.LSTM(8, activation="elu")
            f = layers.GRU(8, unroll=True)
            g = layers.LSTM(8, implementation=3)
            h = layers.GRU(8, dtype=tf.float64)
            i = layers.LSTM(8, activation=None)
            """,
        ),
        # A float16 layer, its dtype given as a TensorFlow dtype: the IPU layer computes in it.
        Example(
            """\
            import tensorflow as tf

            encoder = tf.keras.layers.LSTM(64, return_sequences=True, dtype=tf.float16)
            """,
            """\
            import tensorflow as tf
            from ipu_tensorflow_addons.keras import layers as ipu_layers

            encoder = ipu_layers.LSTM(64, return_sequences=True, dtype=tf.float16)
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras import layers

            x = layers.Bidirectional(layers.LSTM(64, return_sequences=True))(x)
            y = layers.LSTM(units, dropout=args.dropout, **extra)(x)
            z = layers.GRU(8, recurrent_dropout=rate)(x)
            """,
        ),
        # The layer reaches the wrapper through a variable or a helper's return: the wrapper still
        # rebuilds it with `go_backwards=True`, which the IPU layer raises for.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras import layers
            from tensorflow.keras.layers import Bidirectional as BiRNN


            def recurrent(units):
                return layers.GRU(units, return_sequences=True)


            def build(x):
                forward = layers.LSTM(32, return_sequences=True)
                x = layers.Bidirectional(forward)(x)
                x = BiRNN(layers.LSTM(16, return_sequences=True))(x)
                return layers.Bidirectional(recurrent(16))(x)
            """,
        ),
        Example(
            """\
            import keras


            class Tagger(keras.Model):
                def __init__(self):
                    super().__init__()
                    self.embed = keras.layers.Embedding(20000, 128, mask_zero=True)
                    self.rnn = keras.layers.LSTM(128, return_sequences=True)

                def call(self, tokens):
                    return self.rnn(self.embed(tokens))
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras import layers

            model = tf.keras.Sequential()
            model.add(layers.Masking(mask_value=0.0, input_shape=(20, 3)))
            model.add(layers.LSTM(8))
            """,
        ),
        # The mask reaches the layers through helper functions: what one returns, and what its
        # callers give another's parameter.
        Example(
            """\
            from tensorflow import keras


            def embed(ids, vocab):
                return keras.layers.Embedding(vocab, 32, mask_zero=True)(ids)


            def encode(x, units):
                return keras.layers.LSTM(units, return_sequences=True)(x)


            def build(vocab):
                ids = keras.Input(shape=(20,), dtype="int32")
                h = encode(embed(ids, vocab), 32)
                return keras.Model(ids, keras.layers.GRU(8)(h))
            """,
        ),
        # Followed the same way, the helper's input is a plain `keras.Input`: no mask, the swap is made.
        Example(
            """\
            from tensorflow import keras


            def encode(x, units):
                return keras.layers.LSTM(units, return_sequences=True)(x)


            def build(steps):
                signal = keras.Input(shape=(steps, 3))
                return keras.Model(signal, keras.layers.GRU(8)(encode(signal, 16)))
            """,
            """\
            from tensorflow import keras
            from ipu_tensorflow_addons.keras import layers as ipu_layers


            def encode(x, units):
                return ipu_layers.LSTM(units, return_sequences=True)(x)


            def build(steps):
                signal = keras.Input(shape=(steps, 3))
                return keras.Model(signal, ipu_layers.GRU(8)(encode(signal, 16)))
            """,
        ),
        # Layers held in variables: a mask-making layer made once and applied in each model, and a
        # recurrent layer applied where it is assigned.
        Example(
            """\
            from tensorflow import keras

            shared_words = keras.layers.Embedding(3000, 32, mask_zero=True)


            def encoder(length):
                ids = keras.Input(shape=(length,), dtype="int32")
                rnn = keras.layers.GRU(16)
                return keras.Model(ids, rnn(shared_words(ids)))
            """,
        ),
        # A model subclass applies its recurrent layer to what a mask-making layer of the module gives.
        Example(
            """\
            import tensorflow as tf

            words = tf.keras.layers.Embedding(5000, 64, mask_zero=True)


            class Encoder(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.rnn = tf.keras.layers.LSTM(32)

                def call(self, tokens):
                    return self.rnn(words(tokens))
            """,
        ),
        # A token embedding layer of the file that hands on its inner embedding's mask
        # (`compute_mask`): the recurrent layer it feeds gets that mask.
        Example(
            """\
            import tensorflow as tf
            from tensorflow import keras


            class TokenEmbedding(keras.layers.Layer):
                def __init__(self, vocab, width):
                    super().__init__()
                    self.tokens = keras.layers.Embedding(vocab, width, mask_zero=True)

                def compute_mask(self, inputs, mask=None):
                    return self.tokens.compute_mask(inputs)

                def call(self, ids):
                    return self.tokens(ids) * tf.math.sqrt(8.0)


            def build(length):
                ids = keras.Input(shape=(length,), dtype="int32")
                x = TokenEmbedding(5000, 64)(ids)
                return keras.Model(ids, keras.layers.LSTM(32)(x))
            """,
        ),
        # A layer class of the file that returns its inner embedding's output as it is: the output
        # keeps that embedding's mask.
        Example(
            """\
            from tensorflow import keras


            class TokenEmbedding(keras.layers.Layer):
                def __init__(self, vocab, width):
                    super().__init__()
                    self.embed = keras.layers.Embedding(vocab, width, mask_zero=True)

                def call(self, ids):
                    return self.embed(ids)


            def build(length):
                ids = keras.Input(shape=(length,), dtype="int32")
                return keras.Model(ids, keras.layers.GRU(16)(TokenEmbedding(5000, 64)(ids)))
            """,
        ),
        # Applied to a plain input, but also added to a model after a `Masking` layer.
        Example(
            """\
            from tensorflow import keras


            def build(steps):
                rnn = keras.layers.LSTM(16)
                model = keras.Sequential([keras.layers.Masking(input_shape=(steps, 3))])
                model.add(rnn)
                features = rnn(keras.Input(shape=(steps, 3)))
                return model, features
            """,
        ),
        Example(
            """\
            from tensorflow import keras


            def build(vocab, steps):
                words = keras.Input(shape=(steps,), dtype="int32")
                signal = keras.Input(shape=(steps, 3))
                text = keras.layers.Embedding(vocab, 16, mask_zero=True)(words)
                text = keras.layers.GlobalAveragePooling1D()(text)
                rnn = keras.layers.GRU(8)
                joined = keras.layers.concatenate([text, rnn(signal)])
                return keras.Model([words, signal], joined)
            """,
            """\
            from tensorflow import keras
            from ipu_tensorflow_addons.keras import layers as ipu_layers


            def build(vocab, steps):
                words = keras.Input(shape=(steps,), dtype="int32")
                signal = keras.Input(shape=(steps, 3))
                text = keras.layers.Embedding(vocab, 16, mask_zero=True)(words)
                text = keras.layers.GlobalAveragePooling1D()(text)
                rnn = ipu_layers.GRU(8)
                joined = keras.layers.concatenate([text, rnn(signal)])
                return keras.Model([words, signal], joined)
            """,
        ),
        # A mask given by hand: to the layer itself, to the one before it (which passes it on), or to
        # the layer a model subclass holds.
        Example(
            """\
            from tensorflow import keras


            def build(frames, steps):
                features = keras.Input((steps, frames))
                valid = keras.Input((steps,), dtype="bool")
                x = keras.layers.GRU(16, return_sequences=True)(features, mask=valid)
                x = keras.layers.GRU(8)(x)
                return keras.Model([features, valid], keras.layers.Dense(5)(x))


            class Clips(keras.Model):
                def __init__(self):
                    super().__init__()
                    self.rnn = keras.layers.LSTM(32)

                def call(self, inputs):
                    frames, valid = inputs
                    return self.rnn(frames, mask=valid)
            """,
        ),
        # A model saved and loaded again by Keras without `custom_objects`: loading would have to
        # rebuild the IPU layer from its class name, which it is not given.
        Example(
            """\
            from tensorflow import keras

            forecaster = keras.Sequential([keras.layers.LSTM(32, input_shape=(24, 1)), keras.layers.Dense(1)])
            forecaster.save("forecaster.h5")
            best = keras.models.load_model("forecaster.h5")
            """,
        ),
        # The trained model is saved with the IPU layer, under its own class name: swapped, and noted at the save.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.GRU(32, input_shape=(24, 1)), tf.keras.layers.Dense(1)])
            model.compile("adam", "mse")
            model.fit(windows, targets, epochs=5)
            model.save("forecaster.h5")
            """,
            """\
            import tensorflow as tf
            from ipu_tensorflow_addons.keras import layers as ipu_layers

            model = tf.keras.Sequential([ipu_layers.GRU(32, input_shape=(24, 1)), tf.keras.layers.Dense(1)])
            model.compile("adam", "mse")
            model.fit(windows, targets, epochs=5)
            model.save("forecaster.h5")
            """,
        ),
        # A model converted to TensorFlow Lite after training: the IPU layer's ops have no TFLite kernels.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.LSTM(32, input_shape=(24, 1)), tf.keras.layers.Dense(1)])
            model.compile("adam", "mse")
            model.fit(windows, targets, epochs=5)
            tflite_model = tf.lite.TFLiteConverter.from_keras_model(model).convert()
            """,
        ),
        # `custom_objects` that name other classes only: the reloaded model could not rebuild the IPU GRU.
        Example(
            """\
            from tensorflow import keras


            def f1(y_true, y_pred):
                return keras.backend.mean(y_pred)


            CUSTOM = {"f1": f1}
            scorer = keras.Sequential([keras.layers.GRU(16, input_shape=(8, 2)), keras.layers.Dense(1)])
            scorer.save("scorer.h5")
            best = keras.models.load_model("scorer.h5", custom_objects=CUSTOM)
            """,
        ),
        # Pretrained weights loaded into the model: they were saved from Keras' LSTM, which the IPU
        # layer (another class, named otherwise, with its own variables) is not known to take.
        Example(
            """\
            from tensorflow import keras

            encoder = keras.Sequential([keras.layers.Embedding(5000, 64), keras.layers.LSTM(64), keras.layers.Dense(1)])
            encoder.load_weights("pretrained_encoder.h5", by_name=True)
            encoder.layers[0].trainable = False
            """,
        ),
        # Weights the file saves itself and loads back (the best epoch): the IPU layer wrote them.
        Example(
            """\
            from tensorflow import keras

            tagger = keras.Sequential([keras.layers.GRU(16, input_shape=(8, 2)), keras.layers.Dense(1)])
            best = keras.callbacks.ModelCheckpoint("tagger.h5", save_weights_only=True, save_best_only=True)
            tagger.load_weights("tagger.h5")
            """,
            """\
            from tensorflow import keras
            from ipu_tensorflow_addons.keras import layers as ipu_layers

            tagger = keras.Sequential([ipu_layers.GRU(16, input_shape=(8, 2)), keras.layers.Dense(1)])
            best = keras.callbacks.ModelCheckpoint("tagger.h5", save_weights_only=True, save_best_only=True)
            tagger.load_weights("tagger.h5")
            """,
        ),
        # The newest checkpoint of those the file's `ModelCheckpoint` writes: the IPU layer wrote it too.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Embedding(100, 16), tf.keras.layers.GRU(32), tf.keras.layers.Dense(100)])
            ckpt = tf.keras.callbacks.ModelCheckpoint(filepath="ckpts/ckpt_{epoch}", save_weights_only=True)
            model.load_weights(tf.train.latest_checkpoint("ckpts"))
            """,
            """\
            import tensorflow as tf
            from ipu_tensorflow_addons.keras import layers as ipu_layers

            model = tf.keras.Sequential([tf.keras.layers.Embedding(100, 16), ipu_layers.GRU(32), tf.keras.layers.Dense(100)])
            ckpt = tf.keras.callbacks.ModelCheckpoint(filepath="ckpts/ckpt_{epoch}", save_weights_only=True)
            model.load_weights(tf.train.latest_checkpoint("ckpts"))
            """,
        ),
        # Given the IPU class by the name the saved model records, the reload works: the swap is made.
        Example(
            """\
            import tensorflow as tf
            from ipu_tensorflow_addons.keras.layers import PopnnGRU

            scorer = tf.keras.Sequential([tf.keras.layers.GRU(16, input_shape=(8, 2)), tf.keras.layers.Dense(1)])
            scorer.save("scorer.h5")
            best = tf.keras.models.load_model("scorer.h5", custom_objects={"PopnnGRU": PopnnGRU})
            """,
            """\
            import tensorflow as tf
            from ipu_tensorflow_addons.keras.layers import PopnnGRU
            from ipu_tensorflow_addons.keras import layers as ipu_layers

            scorer = tf.keras.Sequential([ipu_layers.GRU(16, input_shape=(8, 2)), tf.keras.layers.Dense(1)])
            scorer.save("scorer.h5")
            best = tf.keras.models.load_model("scorer.h5", custom_objects={"PopnnGRU": PopnnGRU})
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from ipu_tensorflow_addons.keras.layers import GRU, LSTM

            model = tf.keras.Sequential([LSTM(64, return_sequences=True), GRU(32), tf.keras.layers.Dense(1)])
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow as tf

            model = build(tf.keras.layers.Dense(4))
            cell = tf.keras.layers.LSTMCell(8)
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        swap_layers(ctx, self.code, ("LSTM", "GRU"), self._unsafe_reason, _ORDER, older=_v1_layer)

    # ------------------------------------------------------------------------------ safety
    def _unsafe_reason(self, ctx, call: cst.Call, layer: str) -> Optional[str]:
        try:
            v1 = _v1_layer(ctx, call, layer)
            values = bound_arguments(call, v1[0] if v1 is not None else _ORDER[layer], layer)
            self._check_values(values)
            if "dtype" in values and dtype_name(ctx, values["dtype"]) not in ("float32", "float16"):
                raise Unsafe("the layer dtype must be float32 or float16")
            self._check_context(ctx, call)
        except Unsafe as error:
            return str(error)
        return None

    @staticmethod
    def _check_values(values) -> None:
        use_bias = values.get("use_bias")
        if use_bias is not None and not (isinstance(use_bias, cst.Name) and use_bias.value == "True"):
            raise Unsafe("`use_bias=False` is not supported" if is_literal_false(use_bias)
                          else "`use_bias` cannot be read (it must be True)")
        for name in _REGULARIZED:
            if name in values and not (isinstance(values[name], cst.Name) and values[name].value == "None"):
                raise Unsafe(f"`{name}` is not supported")
        for name in ("go_backwards", "unroll"):
            if name in values and not is_literal_false(values[name]):
                if isinstance(values[name], cst.Name) and values[name].value == "True":
                    raise Unsafe(f"`{name}=True` is not supported")
                raise Unsafe(f"`{name}` cannot be read (it must be False)")
        if "recurrent_dropout" in values:
            rate = number_value(values["recurrent_dropout"])
            if rate is None:
                raise Unsafe("`recurrent_dropout` cannot be read (it must be 0)")
            if rate != 0:
                raise Unsafe("`recurrent_dropout` is not supported")
        if "implementation" in values:
            mode = number_value(values["implementation"])
            if mode not in (1.0, 2.0):
                raise Unsafe("`implementation` must be 1 or 2" if mode is not None else "`implementation` cannot be read")
        for name, allowed in (("activation", _ACTIVATIONS), ("recurrent_activation", _RECURRENT_ACTIVATIONS)):
            if name in values:
                value = string_value(values[name])
                if isinstance(values[name], cst.Name) and values[name].value == "None":
                    # Keras reads `None` as the linear activation, which the IPU layer lacks.
                    raise Unsafe(f"`{name}=None` (linear) is not supported (only {', '.join(allowed)})")
                if value is None:
                    raise Unsafe(f"`{name}` cannot be read (the IPU layer takes {', '.join(allowed)})")
                if value not in allowed:
                    raise Unsafe(f"`{name}=\"{value}\"` is not supported (only {', '.join(allowed)})")

    @staticmethod
    def _check_context(ctx, call: cst.Call) -> None:
        if is_bidirectional_layer(ctx, call):
            raise Unsafe("the IPU layers do not support the `Bidirectional` wrapper (no `go_backwards`)")
        check_no_mask(ctx, call)


def _v1_layer(ctx, call: cst.Call, layer: str) -> Optional[OlderLayer]:
    """For a call of Keras' v1 ``layer`` (``tf.compat.v1.keras.layers.LSTM``, or the class of the
    module ``keras.layers.recurrent``, v1 in Keras 2.6): its positional order, its defaults that the
    IPU layer lacks (`hard_sigmoid`, GRU's `reset_after=False`), and how the report names it."""
    qualified = ctx.qualified_name(call.func) or ""
    if qualified.startswith(_V1_PREFIXES) or (canonical_keras(qualified) or "").startswith(_V1_MODULE):
        return _V1_ORDER[layer], _V1_DEFAULTS[layer], f"Keras' v1 `{layer}`"
    return None


RULE = AddonsRnn()
