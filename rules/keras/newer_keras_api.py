"""IPU163: Keras and tf.data APIs newer than the IPU's TensorFlow 2.6 / Keras 2.6."""

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from porter.context import canonical_keras, dotted_name
from porter.cstutil import keyword, string_value
from porter.rule import ERROR, KERAS, WARN, Example, Rule
from porter.rules._tf.tfdata import dataset_like
from porter.rules.keras._analysis.keras26 import (LEGACY_OPTIMIZERS, MOVED_IMPORTS, PUBLIC_UTILS, REWRITTEN,
                                                  TOP_LEVEL_CLASSES, head_name)
from porter.rules.keras._analysis.model_plan import model_plan
from porter.rules.keras._analysis.util import is_estimator, keras_subclasses, method_calls, self_attribute_values
from porter.scopes import values_of

_NONE = "Keras 2.6 has no counterpart: write it with TensorFlow ops (a custom layer or function)"

# TensorFlow Addons' decoupled weight decay subtracts `weight_decay * w` each step, newer Keras'
# `weight_decay * learning_rate * w`: the same number decays the weights 1/learning_rate times faster.
_TFA_DECAY = ("whose `weight_decay` (pass it by keyword) is not multiplied by the learning rate as newer Keras' "
              "is: give it the decay times the learning rate (`weight_decay=decay * lr`; with a learning-rate "
              "schedule, a callable: `weight_decay=lambda: decay * schedule(optimizer.iterations)`)")

# Keras 3 namespaces Keras 2.6 does not have (any name under them), and what to use instead.
_MODULES: Dict[str, str] = {
    "keras.ops": "use the TensorFlow ops (`tf.matmul`, `tf.nn.relu`, `tf.reduce_sum`, `tf.shape`...)",
    "keras.random": "use `tf.random` (`tf.random.normal`, `tf.random.uniform`; a `tf.random.Generator` "
                    "for a seeded stream)",
    "keras.config": "use `keras.backend` (`set_floatx`, `set_image_data_format`) and "
                    "`keras.mixed_precision.set_global_policy`",
    "keras.tree": "use `tf.nest`",
    "keras.distribution": "spread training over IPUs with replication: port with `--ipus N` (a model on one "
                          "IPU is replicated over the IPUs selected)",
}

# Keras 3's image augmentation and audio layers, and its layers that wrap another backend's code.
_AUGMENT = ("augment the images in the `tf.data` pipeline (`tf.image`), or with Keras 2.6's preprocessing layers "
            "(`RandomFlip`, `RandomRotation`, `RandomZoom`, `RandomContrast`, `RandomTranslation`...)")
_MIX = ("mix the batches, images and labels alike, in the `tf.data` pipeline after `.batch(n, drop_remainder=True)` "
        "(a `map` that draws the mixing weights with `tf.random`)")
_SPECTROGRAM = ("compute the spectrogram in the `tf.data` pipeline (`tf.signal.stft`, "
                "`tf.signal.linear_to_mel_weight_matrix`)")
_OTHER_BACKEND = "Keras 2.6 runs TensorFlow code only: write the module with Keras layers"

_NO_OPTIMIZER = ("Keras 2.6 has no counterpart: train with one of its optimizers (`Adam`, `SGD`...), or write "
                 "the update rule as a `tf.keras.optimizers.Optimizer` subclass")

_SAVE = ("use `keras.models.save_model` / `keras.models.load_model` (a path ending in `.h5` is an HDF5 "
         "file, any other a SavedModel folder)")
_SERIALIZE = "use the same name under `tensorflow.keras.utils`"

# Single names added after Keras 2.6 (Keras 2.7 to 3), by their Keras-canonical name.
_NAMES: Dict[str, str] = {
    "keras.saving.save_model": _SAVE,
    "keras.saving.load_model": _SAVE,
    "keras.saving.register_keras_serializable": _SERIALIZE,
    "keras.saving.get_custom_objects": _SERIALIZE,
    "keras.saving.custom_object_scope": _SERIALIZE,
    "keras.saving.serialize_keras_object": _SERIALIZE,
    "keras.saving.deserialize_keras_object": _SERIALIZE,
    "keras.saving.get_registered_name": _SERIALIZE,
    "keras.saving.get_registered_object": _SERIALIZE,
    "keras.utils.PyDataset": "give `fit` a `tf.data.Dataset` (Keras on the IPU rejects a "
                             "`keras.utils.Sequence` too, IPU151)",
    "keras.utils.split_dataset": "split the dataset with `take` and `skip` (its size from `cardinality()`)",
    "keras.utils.set_random_seed": "use `tf.random.set_seed` (with `random.seed` and `np.random.seed`)",
    "keras.utils.pad_sequences": "use `keras.preprocessing.sequence.pad_sequences`",
    "keras.utils.audio_dataset_from_directory": "read the files with `tf.data` (`list_files`, `tf.audio.decode_wav`)",
    "keras.utils.FeatureSpace": "preprocess each feature with its Keras 2.6 layer (`Normalization`, "
                                "`StringLookup`, `IntegerLookup`...)",
    "keras.optimizers.AdamW": "use `tensorflow_addons.optimizers.AdamW` (a TensorFlow Addons release for "
                              "TensorFlow 2.6; newer Keras' `AdamW` decays by 0.004 by default), " + _TFA_DECAY + ", or `Adam`",
    "keras.optimizers.Lion": _NO_OPTIMIZER,
    "keras.optimizers.Adafactor": _NO_OPTIMIZER,
    "keras.layers.EinsumDense": "use `keras.layers.experimental.EinsumDense`",
    "keras.layers.Identity": "leave the layer out, or use `keras.layers.Lambda(lambda x: x)`",
    "keras.layers.UnitNormalization": "use `keras.layers.Lambda(lambda x: tf.math.l2_normalize(x, axis=-1))`",
    "keras.layers.GroupNormalization": _NONE,
    "keras.layers.RMSNormalization": _NONE,
    "keras.layers.SpectralNormalization": _NONE,
    "keras.layers.RandomBrightness": "adjust the images in the `tf.data` pipeline (`tf.image.random_brightness`)",
    "keras.layers.RandomGrayscale": _NONE,
    **{f"keras.layers.{layer}": _AUGMENT for layer in (
        "RandAugment", "AugMix", "Solarization", "Equalization", "AutoContrast",
        "RandomColorJitter", "RandomColorDegeneration", "RandomHue", "RandomSaturation", "RandomSharpness",
        "RandomShear", "RandomPosterization", "RandomInvert", "RandomErasing", "RandomGaussianBlur",
        "RandomPerspective", "RandomElasticTransform")},
    "keras.layers.MixUp": _MIX,
    "keras.layers.CutMix": _MIX,
    "keras.layers.Pipeline": "apply the layers one after the other (a `keras.Sequential` of them)",
    "keras.layers.MelSpectrogram": _SPECTROGRAM,
    "keras.layers.STFTSpectrogram": _SPECTROGRAM,
    "keras.layers.GroupQueryAttention": _NONE,
    "keras.layers.TorchModuleWrapper": _OTHER_BACKEND,
    "keras.layers.JaxLayer": _OTHER_BACKEND,
    "keras.layers.FlaxLayer": _OTHER_BACKEND,
    "keras.layers.HashedCrossing": _NONE,
    "keras.layers.TFSMLayer": "load the SavedModel with `keras.models.load_model`",
    # TensorFlow 2.6 filters no traceback, and Keras 2.6 loads `Lambda` layers without being asked.
    "keras.config.disable_traceback_filtering": "delete the call: TensorFlow 2.6 filters no traceback",
    "keras.config.enable_unsafe_deserialization": "delete the call: Keras 2.6 loads a model's `Lambda` "
                                                  "layers without it",
    # Keras 3's top-level names with no Keras 2.6 counterpart there (its base classes IPU114 rewrites).
    "keras.Variable": ("use `tf.Variable(value, trainable=..., name=...)`, whose first argument is the initial "
                       "value (not an initializer with `shape=`: give it `tf.zeros(shape)`, or the initializer "
                       "called on the shape), or `self.add_weight(...)` inside a layer"),
    "keras.Optimizer": ("Keras 2.6's optimizer base class, `tf.keras.optimizers.Optimizer`, has another interface "
                        "(`_create_slots`, `_resource_apply_dense`, not `build` and `update_step`): write the "
                        "optimizer for it, or use one of Keras 2.6's optimizers"),
    "keras.KerasTensor": _NONE,
    "keras.DTypePolicy": "use `keras.mixed_precision.Policy`",
    "keras.FloatDTypePolicy": "use `keras.mixed_precision.Policy`",
    "keras.name_scope": "use `tf.name_scope`",
    "keras.device": "use `tf.device`",
    "keras.version": "read `tf.keras.__version__`",
    "keras.StatelessScope": _NONE,
    "keras.SymbolicScope": _NONE,
    "keras.Function": _NONE,
    "keras.Operation": _NONE,
    "keras.Quantizer": _NONE,
    "keras.RematScope": _NONE,
    "keras.remat": "use `tf.recompute_grad`",
    **{f"keras.{name}": f"use `keras.{module}.{name}`" for name, module in TOP_LEVEL_CLASSES.items()},
    "keras.callbacks.SwapEMAWeights": ("Keras 2.6's optimizers keep no moving average of the weights "
                                       "(`use_ema=`): remove the callback"),
    "keras.losses.BinaryFocalCrossentropy": _NONE,
    "keras.losses.CategoricalFocalCrossentropy": _NONE,
    "keras.metrics.F1Score": _NONE,
    "keras.metrics.FBetaScore": _NONE,
    "keras.metrics.R2Score": _NONE,
}

# Newer Keras spells optimizers under two more namespaces: `legacy` for the optimizers Keras 2.6
# has, `experimental` for a later rewrite of them, whose extra arguments Keras 2.6 lacks.
_OPTIMIZER_NAMESPACES: Dict[str, str] = {
    "keras.optimizers.legacy": "it is Keras 2.6's `{plain}`: drop `.legacy`",
    "keras.optimizers.experimental": "use Keras 2.6's `{plain}`, which has none of the arguments the newer "
                                     "optimizers add (`weight_decay`, `use_ema`, `jit_compile`...)",
}

# Dataset methods TensorFlow 2.6 does not have, and what to write instead on the IPU.
_DATASET_METHODS: Dict[str, str] = {
    "rebatch": "write `.unbatch().batch(n, drop_remainder=True)`",
    "ragged_batch": "pad the elements to one length and use `.padded_batch(n, padded_shapes=..., "
                    "drop_remainder=True)`: the IPU needs one static shape",
    "sparse_batch": "make the elements dense and use `.batch(n, drop_remainder=True)`",
    "save": "use `tf.data.experimental.save(dataset, path)`",
}

# TensorFlow functions added after TensorFlow 2.6, and what to write instead on the IPU: those
# `tf.data.Dataset` took over from `tf.data.experimental` (2.7 and 2.10), under their 2.6 names, and
# the switch to deterministic ops (2.8) of reproducibility recipes, whose IPU counterparts are its seed
# and a Poplar option.
_TF_FUNCTIONS: Dict[str, str] = {
    "tensorflow.data.Dataset.sample_from_datasets": "use `tf.data.experimental.sample_from_datasets`",
    "tensorflow.data.Dataset.choose_from_datasets": "use `tf.data.experimental.choose_from_datasets`",
    "tensorflow.data.Dataset.load": "use `tf.data.experimental.load(path, element_spec)`",
    "tensorflow.config.experimental.enable_op_determinism": (
        "delete the call; for repeatable runs on the IPU, seed its random generators with "
        "`ipu.utils.reset_ipu_seed(seed)` once the IPU system is configured, and set "
        "`ipu_config.compilation_poplar_options = {\"target.deterministicWorkers\": \"portable\"}` before "
        "`configure_ipu_system()`"),
}

# Keywords newer Keras gives to what Keras 2.6 has (a TypeError there), and what to do instead.
_KEYWORDS: Dict[str, Tuple[Tuple[str, ...], str]] = {
    "keras.optimizers.schedules.CosineDecay": (
        ("warmup_target", "warmup_steps"),
        "Keras 2.6's `CosineDecay` has no warmup: write the warmup as a `LearningRateSchedule` subclass",
    ),
    "keras.layers.BatchNormalization": (
        ("synchronized",),
        "remove it; with replicas, give `ipu_config.norms.experimental.distributed_batch_norm_replica_group_size` "
        "the number of replicas whose batches the statistics cover",
    ),
    "keras.metrics.MeanIoU": (
        ("sparse_y_pred", "sparse_y_true", "ignore_class"),
        "Keras 2.6's `MeanIoU` takes class ids for labels and predictions alike and ignores no class: drop "
        "`sparse_y_true=True` and `sparse_y_pred=True`; for scores (`False`), subclass it with an `update_state` "
        "that passes `tf.argmax(..., axis=-1)` on; for `ignore_class`, give those pixels a `sample_weight` of 0",
    ),
    "keras.losses.SparseCategoricalCrossentropy": (
        ("ignore_class",),
        "give the labels of that class weight 0 instead (a third element of the dataset, `tf.cast(labels != "
        "ignored, tf.float32)`, the sample weights of each pixel), and map them to a class the model has",
    ),
}

# Keywords the optimizers of Keras 2.11 and later take, under the names of Keras 2.6's optimizers,
# whose `__init__` rejects them (TypeError: Unexpected keyword argument passed to optimizer).
_NEWER_OPTIMIZER_KEYWORDS = ("weight_decay", "use_ema", "ema_momentum", "ema_overwrite_frequency", "jit_compile",
                             "is_legacy_optimizer")
# Where Keras 2.6's TensorFlow keeps decoupled weight decay: TensorFlow Addons.
_WEIGHT_DECAY: Dict[str, str] = {"Adam": "`tensorflow_addons.optimizers.AdamW`",
                                 "SGD": "`tensorflow_addons.optimizers.SGDW`"}

# Keras 2.6's folder loaders make one subset per call ("training" or "validation"); "both" (a
# ValueError there) came later.
_FOLDER_LOADERS = ("keras.utils.image_dataset_from_directory", "keras.utils.text_dataset_from_directory",
                   "keras.preprocessing.image_dataset_from_directory",
                   "keras.preprocessing.text_dataset_from_directory")

# Packages that exist only for Keras 3, and what the IPU's Keras 2.6 code uses instead.
_KERAS3_PACKAGES: Dict[str, str] = {
    "keras_core": ("`keras_core`, the preview of Keras 3, does not exist for the IPU's TensorFlow (Poplar SDK 2.6 to "
                   "3.4), whose Keras is 2.6: import Keras with `from tensorflow import keras` and write the code "
                   "with Keras 2.6"),
    "keras_hub": ("`keras_hub` is built on Keras 3 (it requires `keras>=3`), which the IPU's TensorFlow (Poplar "
                  "SDK 2.6 to 3.4, Keras 2.6) does not have: its models, layers and presets do not load there, "
                  "and the port cannot rewrite them; build the model from Keras 2.6 layers, or take "
                  "the pretrained network from a library that supports TensorFlow 2.6 (a TF Hub `hub.KerasLayer`)"),
}

# Methods Keras 3 gives a model for its training step, and the Keras 2.6 way to write them.
_MODEL_METHODS: Dict[str, str] = {
    "compute_loss": "write `self.compiled_loss(y, y_pred, regularization_losses=self.losses)`",
    "compute_metrics": "write `self.compiled_metrics.update_state(y, y_pred)` and return "
                       "`{m.name: m.result() for m in self.metrics}`",
}

_WHERE = "not in Keras 2.6, the Keras of the IPU's TensorFlow (Poplar SDK 2.6 to 3.4)"

# Methods of older Keras models that Keras 2.6 does not have: (since when, what to write instead).
# `predict`, which IPU107 then pads to whole batches (these ran `predict` on data of any length).
_PADDED = "; the port of that `predict` pads its data to whole batches, as the IPU needs"
_REMOVED_MODEL_METHODS: Dict[str, Tuple[str, str]] = {
    "predict_classes": ("was removed in Keras 2.6", "write `np.argmax(model.predict(x), axis=-1)` for a softmax "
                        "output, or `(model.predict(x) > 0.5).astype(\"int32\")` for a sigmoid one" + _PADDED),
    "predict_proba": ("was removed in Keras 2.6", "write `model.predict(x)`, which gives the same probabilities" + _PADDED),
    # Keras 2.3 and older (graph mode): built the graph's function before threads shared the model.
    "_make_predict_function": ("is not in Keras 2.6", "it built the prediction function of a TensorFlow 1 "
                               "graph ahead of time (for a server's threads); delete the call: Keras 2.6 "
                               "builds it at the first `predict`"),
    "_make_train_function": ("is not in Keras 2.6", "it built the training function of a TensorFlow 1 graph "
                             "ahead of time; delete the call: Keras 2.6 builds it at the first `fit`"),
}

# Methods newer Keras (2.13 and 3) gives every model, called on the model from outside.
_EXPORT_METHODS: Dict[str, str] = {
    "export": "save the model for serving as a SavedModel folder with `model.save(path, save_format=\"tf\")` "
              "or `tf.saved_model.save(model, path)`",
}

# Layers whose call takes `use_causal_mask=` only after Keras 2.6.
_ATTENTION_LAYERS = ("keras.layers.MultiHeadAttention", "keras.layers.Attention", "keras.layers.AdditiveAttention")


def _attention_layer(ctx, func: cst.BaseExpression) -> Optional[str]:
    """The class name of the Keras attention layer ``func`` applies: made in place
    (``MultiHeadAttention(4, 32)(x, x)``), or held by a variable or a ``self`` attribute every
    assignment of which makes one."""
    if isinstance(func, cst.Call):
        values = [func]
    elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        values = self_attribute_values(ctx, func)
    elif isinstance(func, cst.Name):
        values = values_of(ctx, func)
    else:
        return None
    names = {ctx.keras_name(value.func) if isinstance(value, cst.Call) else None for value in values}
    if not values or len(names) != 1 or not names <= set(_ATTENTION_LAYERS):
        return None
    return next(iter(names)).rpartition(".")[2]


class NewerApi(Rule):
    code = "IPU163"
    name = "newer-keras-api"
    kind = WARN
    severity = ERROR
    frameworks = frozenset({KERAS})
    summary = ("Report Keras 3 and post-2.6 Keras / tf.data APIs, which the IPU's TensorFlow 2.6 does not have, "
               "and the `predict_classes`/`predict_proba`/`_make_predict_function` it removed.")
    rationale = (
        "Every TensorFlow 2 release of the Poplar SDK from 2.6 to 3.4 is Graphcore's port of TensorFlow "
        "2.6, whose Keras is the separate Keras 2.6 package (Targeting the IPU from TensorFlow 2, \"API changes\", "
        "release 2.6). "
        "Code written for Keras 3 or a later `tf.keras` calls what that Keras does not have: the "
        "backend-neutral `keras.ops`, `keras.random` and `keras.config`, `keras.Variable`, `keras.saving.load_model`, "
        "`keras.utils.PyDataset`, `split_dataset`, `set_random_seed`, `AdamW`, newer layers, losses and "
        "metrics, `optimizer.apply(grads, variables)`, the optimizers' `weight_decay=` and `use_ema=`, "
        "`BatchNormalization(synchronized=...)`, `MeanIoU(sparse_y_pred=...)`, the `SwapEMAWeights` callback, "
        "`compile(jit_compile=...)`, the warmup of "
        "`CosineDecay`, `use_causal_mask=` in the call of `MultiHeadAttention` and `Attention`, the datasets' `rebatch`, `ragged_batch` and `save`, and `tf.data.Dataset.sample_from_datasets`, "
        "`choose_from_datasets` and `load` (`tf.data.experimental`'s in 2.6), `tf.config.experimental.enable_op_determinism` (the IPU repeats its random numbers from `ipu.utils.reset_ipu_seed` and the Poplar option `target.deterministicWorkers`, Targeting the IPU from TensorFlow 2, \"Random number generation\"), a model's `export` for serving, "
        "and the packages built on Keras 3 (`keras_core`, `keras_hub`). On the IPU each one fails "
        "(AttributeError, ImportError or TypeError) before or while training. The port cannot choose "
        "the Keras 2.6 code that computes the same, so each API is reported once, where the file first "
        "uses it, with the Keras 2.6 way to write it (for `AdamW` and `weight_decay=`, TensorFlow Addons' optimizers, "
        "whose decay is not scaled by the learning rate as newer Keras' is, so the number must change); what has an exact Keras 2.6 spelling is rewritten "
        "instead (IPU114: `optimizers.legacy.Adam` with Keras 2.6's arguments, a constant `jit_compile=`). "
        "Keras 2.6's `keras` package itself also differs from "
        "`tf.keras`: its `keras.utils` exports no public utility, so `import keras` then "
        "`keras.utils.to_categorical` fails there; `from tensorflow import keras` reaches the public API "
        "(IPU113 moves such imports when every name the file reads through them is public; the rest is "
        "reported here). `os.environ[\"KERAS_BACKEND\"]` is harmless: "
        "Keras 2.6 has the TensorFlow backend only. Older code fails too where it calls what Keras 2.6 "
        "removed: a model's `predict_classes` and `predict_proba` (use `predict`, with `np.argmax` or a "
        "threshold for classes), and the `_make_predict_function()` of Keras 2.3 and older, which servers "
        "called before sharing a model between threads (delete it); a scikit-learn estimator's "
        "`predict_proba` is not a Keras model's."
    )
    examples = (
        # Keras 2.5's class prediction of a Sequential model; the estimator's own `predict_proba` stays.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("churn.h5")
            churned = model.predict_classes(customers)
            """,
        ),
        # A Keras 2.2 server's model, made ready for its request threads.
        Example(
            """\
            from keras.models import load_model

            model = load_model("classifier.h5")
            model._make_predict_function()
            """,
        ),
        Example(
            """\
            import numpy as np
            from sklearn.linear_model import LogisticRegression
            import tensorflow as tf

            probe = LogisticRegression().fit(features, labels)
            scores = probe.predict_proba(features)
            model = tf.keras.models.load_model("churn.h5")
            churned = np.argmax(model.predict(customers), axis=-1)
            """,
            reported=False,
        ),
        # The causal mask the attention layers' call makes itself since Keras 2.10; a layer of the file
        # whose own call takes the same keyword is not reported.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras import layers


            class CausalSelfAttention(layers.Layer):
                def __init__(self, **kwargs):
                    super().__init__()
                    self.mha = layers.MultiHeadAttention(**kwargs)

                def call(self, x):
                    return x + self.mha(query=x, value=x, use_causal_mask=True)


            class Blend(layers.Layer):
                def call(self, x, use_causal_mask=False):
                    return x


            def block(x):
                y = layers.Attention()([x, x], use_causal_mask=True)
                return Blend()(y, use_causal_mask=True)
            """,
        ),
        Example(
            """\
            import os

            os.environ["KERAS_BACKEND"] = "tensorflow"
            import keras
            from keras import ops


            class Scale(keras.layers.Layer):
                def call(self, inputs):
                    return ops.relu(ops.matmul(inputs, self.kernel))
            """,
        ),
        # Keras 3's variable, made outside a layer's `add_weight`.
        Example(
            """\
            import keras


            class Counter(keras.layers.Layer):
                def build(self, input_shape):
                    self.seen = keras.Variable(0, trainable=False, dtype="int64")
            """,
        ),
        Example(
            """\
            import keras

            model.save("classifier.keras")
            restored = keras.saving.load_model("classifier.keras")
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            train, val = tf.keras.utils.split_dataset(dataset, left_size=0.8)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            dataset = tf.data.Dataset.range(1024).batch(32).rebatch(64)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            balanced = tf.data.Dataset.sample_from_datasets([positives, negatives], weights=[0.5, 0.5])
            """,
        ),
        # The reproducibility recipe of TensorFlow 2.8 and later.
        Example(
            """\
            import random

            import numpy as np
            import tensorflow as tf

            random.seed(7)
            np.random.seed(7)
            tf.random.set_seed(7)
            tf.config.experimental.enable_op_determinism()
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            """,
        ),
        Example(
            """\
            import keras

            model.compile(optimizer=keras.optimizers.AdamW(1e-3), loss="mse", jit_compile=True)
            """,
        ),
        Example(
            """\
            import keras

            train_ds, val_ds = keras.utils.image_dataset_from_directory(
                "photos", validation_split=0.2, subset="both", seed=1, batch_size=32
            )
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            schedule = tf.keras.optimizers.schedules.CosineDecay(0.0, 1000, warmup_target=1e-3, warmup_steps=100)
            """,
        ),
        # Keras 3's arguments of layers and metrics Keras 2.6 has, and its callback for moving averages.
        Example(
            """\
            import keras
            from keras import layers

            x = layers.BatchNormalization(synchronized=True)(x)
            iou = keras.metrics.MeanIoU(num_classes=3, sparse_y_pred=False)
            callbacks = [keras.callbacks.SwapEMAWeights(swap_on_epoch=True)]
            """,
        ),
        # A segmentation loss that skips the pixels of the border class (Keras 2.10 and later).
        Example(
            """\
            import keras

            model.compile(optimizer="adam",
                          loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=255))
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            optimizer = tf.keras.optimizers.SGD(0.01)


            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply(grads, model.trainable_variables)
            """,
        ),
        Example(
            """\
            from tensorflow import keras

            optimizer = keras.optimizers.legacy.Adam(1e-3)
            """,
        ),
        # Newer Keras' optimizers take decoupled weight decay and an exponential moving average.
        Example(
            """\
            import tensorflow as tf

            optimizer = tf.keras.optimizers.Adam(learning_rate=1e-3, weight_decay=0.004, global_clipnorm=1.0)
            """,
        ),
        Example(
            """\
            from tensorflow import keras

            optimizer = keras.optimizers.SGD(0.1, momentum=0.9, use_ema=True)
            """,
        ),
        # Keras 2.6's own arguments: clipping by norm or value, the time-based `decay`.
        Example(
            """\
            import tensorflow as tf

            optimizer = tf.keras.optimizers.Adam(1e-3, clipnorm=1.0, decay=1e-6)
            """,
            reported=False,
        ),
        # Keras 3's training-step helpers of a model.
        Example(
            """\
            import keras


            class Trainer(keras.Model):
                def train_step(self, data):
                    x, y = data
                    y_pred = self(x, training=True)
                    loss = self.compute_loss(y=y, y_pred=y_pred)
                    return {"loss": loss}
            """,
        ),
        # Keras Core, the preview of Keras 3: the file is still wired for the IPU.
        Example(
            """\
            import keras_core as keras

            model = keras.Sequential([keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss="mse")
            """,
        ),
        # KerasHub, built on Keras 3: reported once, where it is first imported.
        Example(
            """\
            import keras
            from keras_hub.models import BertClassifier

            classifier = BertClassifier.from_preset("bert_tiny_en_uncased", num_classes=2)
            classifier.compile(optimizer=keras.optimizers.Adam(5e-5), loss="sparse_categorical_crossentropy")
            """,
        ),
        # A public utility of Keras 2.6 that its `keras` package does not export.
        Example(
            """\
            import keras

            labels = keras.utils.to_categorical(labels, 10)
            """,
        ),
        # Keras 3's augmentation and audio layers.
        Example(
            """\
            import keras
            from keras import layers

            augment = keras.Sequential([layers.RandomFlip("horizontal"), layers.RandAugment(value_range=(0, 255))])
            spectrogram = layers.MelSpectrogram(num_mel_bins=64)
            """,
        ),
        # A model exported for serving, as Keras 2.13+ does it.
        Example(
            """\
            import keras

            model = keras.Sequential([keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss="mse")
            model.fit(x, y, epochs=2)
            model.export("serving/1")
            """,
        ),
        # What Keras 2.6 has: nothing to say.
        Example(
            """\
            import os

            os.environ["KERAS_BACKEND"] = "tensorflow"
            import keras
            import tensorflow as tf

            norm = keras.layers.Normalization()
            schedule = keras.optimizers.schedules.CosineDecay(1e-3, 1000)
            model.compile(optimizer=keras.optimizers.Adam(schedule), loss="mse", steps_per_execution=8)
            model.save("model.h5")
            restored = keras.models.load_model("model.h5")
            dataset = tf.data.Dataset.range(1024).batch(32, drop_remainder=True)
            train_ds = tf.keras.utils.image_dataset_from_directory("photos", validation_split=0.2, subset="training", seed=1)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            pool.apply(work, args)
            table.export("results.csv")
            labels = tf.keras.utils.to_categorical(labels, 10)


            class Critic:
                def score(self, batch):
                    return self.compute_loss(batch)


            class Weighted(keras.Model):
                def compute_loss(self, x, y, y_pred):
                    return tf.reduce_mean(tf.square(y - y_pred))

                def train_step(self, data):
                    return {"loss": self.compute_loss(*data)}
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        reported: Set[str] = set()  # each API is reported once, where it is first used
        for node, qualified in _keras_uses(ctx):
            self._report_name(ctx, node, qualified, reported)
        for call, method in method_calls(ctx, *_DATASET_METHODS):
            if method not in reported and dataset_like(ctx, call.func.value):
                reported.add(method)
                ctx.report(self.code, call.func.attr, f"`Dataset.{method}` is not in TensorFlow 2.6, the "
                           f"TensorFlow of the IPU's Poplar SDK (AttributeError): {_DATASET_METHODS[method]}",
                           fixed=False)
        for call, qualified in ctx.calls_to(*_TF_FUNCTIONS):
            if qualified not in reported:
                reported.add(qualified)
                name = "tf." + qualified.partition(".")[2]
                ctx.report(self.code, call.func, f"`{name}` is not in TensorFlow 2.6, the TensorFlow "
                           f"of the IPU's Poplar SDK (AttributeError): {_TF_FUNCTIONS[qualified]}", fixed=False)
        self._report_keywords(ctx)
        self._report_causal_masks(ctx)
        self._report_optimizer_apply(ctx)
        self._report_model_methods(ctx)
        self._report_removed_methods(ctx)
        self._report_export(ctx)

    def _report_name(self, ctx, node: cst.CSTNode, qualified: str, reported: Set[str]) -> None:
        package = qualified.split(".")[0]
        if package in _KERAS3_PACKAGES and package not in reported:
            reported.add(package)
            ctx.report(self.code, node, _KERAS3_PACKAGES[package], fixed=False)
        if id(node) in ctx.shared(REWRITTEN) or id(head_name(node)) in ctx.shared(REWRITTEN):
            return  # IPU114 wrote Keras 2.6's name
        found = _newer(canonical_keras(qualified) or "")
        if found is None:
            self._report_package_utility(ctx, node, qualified, reported)
            return
        api, instead = found
        if api in reported:
            return
        reported.add(api)
        ctx.report(self.code, node, f"`{api}` is {_WHERE}: {instead}", fixed=False)

    def _report_package_utility(self, ctx, node: cst.CSTNode, qualified: str, reported: Set[str]) -> None:
        """``keras.utils.to_categorical`` reached through the ``keras`` package itself, once per file."""
        head, _, rest = qualified.partition("keras.utils.")
        utility = rest.split(".")[0]
        if head or utility not in PUBLIC_UTILS or "keras.utils" in reported:
            return
        if id(node) in ctx.shared(MOVED_IMPORTS) or id(head_name(node)) in ctx.shared(MOVED_IMPORTS):
            return  # IPU113 imported it from the public API
        reported.add("keras.utils")
        ctx.report(self.code, node, f"`keras.utils.{utility}` through the `keras` package: in Keras 2.6, the "
                   "Keras of the IPU's TensorFlow, `keras.utils` is a folder of modules that exports none of "
                   "the public utilities (AttributeError, or ImportError for `from keras.utils import ...`): "
                   "import Keras as `from tensorflow import keras` (the public API of the same package), or "
                   f"use `tensorflow.keras.utils.{utility}`", fixed=False)

    def _report_causal_masks(self, ctx) -> None:
        """``mha(query=x, value=x, use_causal_mask=True)``: Keras 2.7+ gives the attention layers'
        call a causal mask of their own; Keras 2.6's call has no such keyword."""
        for call in ctx.nodes(cst.Call):
            arg = keyword(call, "use_causal_mask")
            layer = _attention_layer(ctx, call.func) if arg is not None else None
            if layer is None:
                continue
            # Keras 2.6's dot-product attention layers take `causal=True` where they are made.
            instead = ("make the layer with `causal=True` instead" if layer != "MultiHeadAttention" else
                       "pass `attention_mask=` a lower-triangular mask instead, `tf.linalg.band_part(tf.ones("
                       "(length, length), tf.bool), -1, 0)` for `length` steps (True where a step may attend), "
                       "combined with the padding mask if the inputs are padded")
            ctx.report(self.code, arg, f"`use_causal_mask=` of the `{layer}` call is {_WHERE} (TypeError): "
                       f"{instead}", fixed=False)

    def _report_keywords(self, ctx) -> None:
        for function, (words, instead) in _KEYWORDS.items():
            for call, _ in ctx.calls_to(function):
                arg = next((keyword(call, word) for word in words if keyword(call, word) is not None), None)
                if arg is not None:  # the first such keyword of the call: the others say the same
                    ctx.report(self.code, arg, f"`{arg.keyword.value}=` of `{function}` is {_WHERE} "
                               f"(TypeError): {instead}", fixed=False)
        for call, _ in ctx.calls_to(*_FOLDER_LOADERS):
            arg = keyword(call, "subset")
            if arg is not None and string_value(arg.value) == "both":
                ctx.report(self.code, arg, f"`subset=\"both\"` is {_WHERE} (ValueError): call the loader "
                           "twice, with `subset=\"training\"` and `subset=\"validation\"` and the same `seed`",
                           fixed=False)
        self._report_optimizer_keywords(ctx)
        for call, _ in method_calls(ctx, "compile"):
            arg = keyword(call, "jit_compile")
            if arg is not None and id(arg) not in ctx.shared(REWRITTEN):  # else IPU114 removed it
                ctx.report(self.code, arg, "`compile(jit_compile=...)` is " + _WHERE + " (TypeError: Invalid "
                           "keyword argument(s) in `compile`): remove it; the IPU compiles the whole step "
                           "with XLA anyway", fixed=False)

    def _report_optimizer_keywords(self, ctx) -> None:
        """``keras.optimizers.Adam(1e-3, weight_decay=1e-4)``: newer Keras' optimizers under the names
        of Keras 2.6's, with a keyword only the newer ones take (``optimizers.legacy`` and
        ``optimizers.experimental`` are reported as names)."""
        for optimizer in LEGACY_OPTIMIZERS:
            for call, _ in ctx.calls_to(f"keras.optimizers.{optimizer}"):
                arg = next((keyword(call, word) for word in _NEWER_OPTIMIZER_KEYWORDS
                            if keyword(call, word) is not None), None)
                if arg is None:
                    continue
                word = arg.keyword.value
                instead = "remove it"
                if word == "weight_decay":
                    instead = (f"for decoupled weight decay use {_WEIGHT_DECAY[optimizer]} (a TensorFlow Addons release "
                               f"for TensorFlow 2.6), {_TFA_DECAY}" if optimizer in _WEIGHT_DECAY else
                               "for decoupled weight decay wrap the optimizer class with "
                               f"`tensorflow_addons.optimizers.extend_with_decoupled_weight_decay`, {_TFA_DECAY}")
                ctx.report(self.code, arg, f"`{word}=` of `keras.optimizers.{optimizer}` is {_WHERE} (TypeError: "
                           f"Unexpected keyword argument passed to optimizer): {instead}", fixed=False)

    def _report_optimizer_apply(self, ctx) -> None:
        for call, _ in method_calls(ctx, "apply"):
            if _is_keras_optimizer(ctx, call.func.value):
                ctx.report(self.code, call.func.attr, "`optimizer.apply(gradients, variables)` is Keras 3, "
                           f"{_WHERE} (AttributeError): write "
                           "`optimizer.apply_gradients(zip(gradients, variables))`", fixed=False)
                return

    def _report_model_methods(self, ctx) -> None:
        """``self.compute_loss(...)`` in a Keras class: Keras 3's training-step helpers."""
        keras_classes = set(keras_subclasses(ctx).values())
        # A class of the file may write its own `compute_loss`: then `self.compute_loss` is that one.
        written = {statement.name.value for keras_class in keras_classes for statement in keras_class.body.body
                   if isinstance(statement, cst.FunctionDef)}
        for call, method in method_calls(ctx, *_MODEL_METHODS):
            receiver = call.func.value
            if isinstance(receiver, cst.Name) and receiver.value == "self" and method not in written \
                    and ctx.enclosing(call, cst.ClassDef) in keras_classes:
                ctx.report(self.code, call.func.attr, f"`Model.{method}` is {_WHERE} (AttributeError): "
                           f"{_MODEL_METHODS[method]}", fixed=False)

    def _report_removed_methods(self, ctx) -> None:
        """``model.predict_classes(x_test)`` on a Keras model of the file: Keras 2.6 removed it (a
        scikit-learn estimator's ``predict_proba`` is not reported)."""
        models = model_plan(ctx).model_like
        for call, method in method_calls(ctx, *_REMOVED_MODEL_METHODS):
            receiver = call.func.value
            if isinstance(receiver, cst.Name) and receiver.value in models and not is_estimator(ctx, receiver):
                since, instead = _REMOVED_MODEL_METHODS[method]
                ctx.report(self.code, call.func.attr, f"`Model.{method}` {since}, the Keras of the IPU's "
                           f"TensorFlow (AttributeError): {instead}", fixed=False)

    def _report_export(self, ctx) -> None:
        """``model.export("serving")`` on a Keras model of the file, once per method: Keras 2.13+'s."""
        plan = model_plan(ctx)
        models = plan.model_names | plan.compiled_names
        reported: Set[str] = set()
        for call, method in method_calls(ctx, *_EXPORT_METHODS):
            receiver = call.func.value
            if method not in reported and isinstance(receiver, cst.Name) and receiver.value in models \
                    and ctx.qualified_name(receiver) is None:
                reported.add(method)
                ctx.report(self.code, call.func.attr, f"`Model.{method}` is {_WHERE} (AttributeError): "
                           f"{_EXPORT_METHODS[method]}", fixed=False)


def _newer(name: str) -> Optional[Tuple[str, str]]:
    """(the API reported, what to use instead) when the Keras-canonical ``name`` is newer than
    Keras 2.6; else None."""
    for api, instead in _NAMES.items():  # before the modules: a name of `keras.config` says more
        if name == api or name.startswith(api + "."):
            return api, instead
    for module, instead in _MODULES.items():
        if name == module or name.startswith(module + "."):
            return module, instead
    for namespace, instead in _OPTIMIZER_NAMESPACES.items():
        if name.startswith(namespace + "."):
            optimizer = name[len(namespace) + 1:].split(".")[0]
            plain = f"keras.optimizers.{optimizer}"
            newer = _newer(plain)  # `experimental.AdamW`: Keras 2.6 has no AdamW under any name
            return f"{namespace}.{optimizer}", newer[1] if newer else instead.format(plain=plain)
    return None


def _keras_uses(ctx):
    """(node, qualified name) for each Keras name the file imports or uses, in source order:
    an import (``from keras import ops``, ``from keras.ops import matmul``) and each outermost
    dotted name (``keras.ops.matmul``, ``layers.EinsumDense``)."""
    finder = _NameFinder(ctx)
    ctx.module.visit(finder)
    return finder.found


class _NameFinder(cst.CSTVisitor):
    def __init__(self, ctx) -> None:
        super().__init__()
        self.ctx = ctx
        self.found: List[Tuple[cst.CSTNode, str]] = []

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            self._add(alias, dotted_name(alias.name))
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if node.relative or node.module is None:
            return False
        module = dotted_name(node.module)
        self._add(node.module, module)
        if module is not None and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                name = dotted_name(alias.name)
                if name is not None:
                    self._add(alias, f"{module}.{name}")
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self._add(node, self.ctx.qualified_name(node))
        return False  # the outermost name of the chain says it all

    def visit_Name(self, node: cst.Name) -> bool:
        self._add(node, self.ctx.qualified_name(node))
        return False

    def _add(self, node: cst.CSTNode, qualified: Optional[str]) -> None:
        if canonical_keras(qualified) is not None or (qualified or "").split(".")[0] in _KERAS3_PACKAGES:
            self.found.append((node, qualified))


def _is_keras_optimizer(ctx, receiver: cst.BaseExpression) -> bool:
    """``self.optimizer`` of a Keras model, or a variable assigned a Keras optimizer."""
    if isinstance(receiver, cst.Attribute) and receiver.attr.value == "optimizer" \
            and isinstance(receiver.value, cst.Name) and receiver.value.value == "self":
        return True
    if not isinstance(receiver, cst.Name):
        return False
    values = values_of(ctx, receiver)
    return bool(values) and all(
        isinstance(value, cst.Call) and (ctx.keras_name(value.func) or "").startswith("keras.optimizers.")
        for value in values
    )


RULE = NewerApi()
