"""`ipu_tensorflow_addons` emulated (Targeting the IPU from TensorFlow 2, "IPU TensorFlow Addons").

The layers take the IPU constructor signatures (positional order included), raise what the
reference says they raise, and otherwise compute exactly what the stock Keras layer computes, so a
correct swap trains to the same losses on the CPU."""

import types

from .state import STATE

RNN_ACTIVATIONS = ("tanh", "relu", "softmax", "sigmoid", "hard_sigmoid")
RNN_RECURRENT_ACTIVATIONS = ("tanh", "softmax", "sigmoid", "hard_sigmoid")


def _activation_name(activation):
    if isinstance(activation, str):
        return activation
    return getattr(activation, "__name__", repr(activation))


def _check_rnn(kind, values):
    if not values["use_bias"]:
        raise STATE.error(ValueError("%s does not support use_bias=False." % kind))
    for name in ("kernel_regularizer", "recurrent_regularizer", "bias_regularizer",
                 "activity_regularizer", "kernel_constraint", "recurrent_constraint", "bias_constraint"):
        if values.get(name) is not None:
            raise STATE.error(ValueError("%s does not support %s." % (kind, name)))
    if values["recurrent_dropout"] != 0:
        raise STATE.error(ValueError("%s does not support recurrent_dropout != 0." % kind))
    if values["implementation"] not in (1, 2):
        raise STATE.error(ValueError("%s: implementation must be 1 or 2." % kind))
    if values["go_backwards"]:
        raise STATE.error(ValueError("%s does not support go_backwards=True." % kind))
    if values["unroll"]:
        raise STATE.error(ValueError("%s does not support unroll=True." % kind))
    if _activation_name(values["activation"]) not in RNN_ACTIVATIONS:
        raise STATE.error(ValueError("%s: activation %r is not supported." % (kind, values["activation"])))
    if _activation_name(values["recurrent_activation"]) not in RNN_RECURRENT_ACTIVATIONS:
        raise STATE.error(ValueError(
            "%s: recurrent_activation %r is not supported." % (kind, values["recurrent_activation"])))


def _check_rnn_call(kind, inputs, mask):
    if mask is not None:
        raise STATE.error(NotImplementedError(
            "%s does not support masking: the `mask` argument must be None." % kind))
    if len(inputs.shape) != 3:
        raise STATE.error(ValueError("%s expects 3-D inputs, got shape %s." % (kind, inputs.shape)))


def build(tf, keras):
    layers_api = keras.layers

    class PopnnLSTM(layers_api.LSTM):
        def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                     kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                     bias_initializer="zeros", unit_forget_bias=True, kernel_regularizer=None,
                     recurrent_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                     kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                     dropout=0., dropout_seed=None, recurrent_dropout=0., implementation=2,
                     return_sequences=False, return_state=False, go_backwards=False, stateful=False,
                     unroll=False, partials_dtype=tf.float32, seed=None, time_major=False, options=None,
                     options_bwd=None, **kwargs):
            values = dict(locals())
            _check_rnn("PopnnLSTM", values)
            super().__init__(
                units, activation=activation, recurrent_activation=recurrent_activation,
                use_bias=use_bias, kernel_initializer=kernel_initializer,
                recurrent_initializer=recurrent_initializer, bias_initializer=bias_initializer,
                unit_forget_bias=unit_forget_bias, dropout=dropout, return_sequences=return_sequences,
                return_state=return_state, stateful=stateful, time_major=time_major, **kwargs)

        def call(self, inputs, mask=None, training=None, initial_state=None):
            _check_rnn_call("PopnnLSTM", inputs, mask)
            return super().call(inputs, training=training, initial_state=initial_state)

    class PopnnGRU(layers_api.GRU):
        def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                     kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                     bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                     recurrent_constraint=None, bias_constraint=None, dropout=0., dropout_seed=None,
                     recurrent_dropout=0., implementation=2, return_sequences=False,
                     return_state=False, go_backwards=False, stateful=False, unroll=False,
                     reset_after=True, seed=None, partials_dtype=tf.float32, time_major=False,
                     options=None, options_bwd=None, **kwargs):
            values = dict(locals())
            _check_rnn("PopnnGRU", values)
            super().__init__(
                units, activation=activation, recurrent_activation=recurrent_activation,
                use_bias=use_bias, kernel_initializer=kernel_initializer,
                recurrent_initializer=recurrent_initializer, bias_initializer=bias_initializer,
                dropout=dropout, return_sequences=return_sequences, return_state=return_state,
                stateful=stateful, time_major=time_major, reset_after=reset_after, **kwargs)

        def call(self, inputs, mask=None, training=None, initial_state=None):
            _check_rnn_call("PopnnGRU", inputs, mask)
            return super().call(inputs, training=training, initial_state=initial_state)

    class Dropout(layers_api.Dropout):
        def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
            if seed is not None:
                try:
                    shape = list(tf.convert_to_tensor(seed).shape)
                except Exception:
                    shape = None
                if shape != [2]:
                    raise STATE.error(ValueError(
                        "Expected the seed to have a shape [2] (two int32 values), got %r." % (seed,)))
            if noise_shape is not None and any(dim is None for dim in noise_shape):
                raise STATE.error(ValueError("Dimension mismatch: noise_shape %r contains None; every "
                                             "entry must equal the input dimension or be 1." % (noise_shape,)))
            super().__init__(rate, noise_shape=noise_shape, **kwargs)

    class Embedding(layers_api.Embedding):
        def __init__(self, input_dim, output_dim, embeddings_initializer="uniform",
                     embeddings_regularizer=None, activity_regularizer=None, embeddings_constraint=None,
                     mask_zero=False, input_length=None, serialization_factor=1, **kwargs):
            for name, value in (("embeddings_regularizer", embeddings_regularizer),
                                ("activity_regularizer", activity_regularizer),
                                ("embeddings_constraint", embeddings_constraint)):
                if value is not None:
                    raise STATE.error(NotImplementedError("Embedding does not support %s." % name))
            if mask_zero:
                raise STATE.error(NotImplementedError("Embedding does not support mask_zero=True."))
            if input_length is not None:
                raise STATE.error(NotImplementedError("Embedding does not support input_length."))
            super().__init__(input_dim, output_dim, embeddings_initializer=embeddings_initializer, **kwargs)
            self.serialization_factor = serialization_factor

        def call(self, inputs, inputs_are_sorted=False, training=None):
            if len(inputs.shape) != 2:
                raise STATE.error(ValueError(
                    "The inputs to the Embedding layer must be 2-D [batch, length], got shape %s."
                    % (inputs.shape,)))
            return super().call(inputs)

    class LayerNormalization(layers_api.LayerNormalization):
        def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                     gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None,
                     beta_constraint=None, gamma_constraint=None, trainable=True, **kwargs):
            for name, value in (("beta_regularizer", beta_regularizer), ("gamma_regularizer", gamma_regularizer),
                                ("beta_constraint", beta_constraint), ("gamma_constraint", gamma_constraint)):
                if value is not None:
                    raise STATE.error(NotImplementedError("LayerNormalization does not support %s." % name))
            super().__init__(axis=axis, epsilon=epsilon, center=center, scale=scale,
                             beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                             trainable=trainable, **kwargs)

        def call(self, inputs):
            axes = [axis % len(inputs.shape) for axis in (self.axis if isinstance(self.axis, (list, tuple))
                                                           else [self.axis])]
            for index, dim in enumerate(inputs.shape):
                if index not in axes and dim is None:
                    raise STATE.error(ValueError(
                        "Input shape %s has unknown dimensions - all dimensions need to be fully "
                        "specified." % (inputs.shape,)))
            return super().call(inputs)

    class RecomputationCheckpoint(layers_api.Layer):
        def call(self, inputs):
            return tf.nest.map_structure(tf.identity, inputs)

    layers = types.ModuleType("ipu_tensorflow_addons.keras.layers")
    for name, value in (("PopnnLSTM", PopnnLSTM), ("LSTM", PopnnLSTM), ("PopnnGRU", PopnnGRU),
                        ("GRU", PopnnGRU), ("Dropout", Dropout), ("Embedding", Embedding),
                        ("LayerNormalization", LayerNormalization), ("LayerNorm", LayerNormalization),
                        ("RecomputationCheckpoint", RecomputationCheckpoint)):
        setattr(layers, name, value)

    class AdamIpuOptimizer(keras.optimizers.Adam):
        def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False,
                     name="Adam", m_dtype=None, v_dtype=None, vhat_dtype=None, debiasing=True,
                     optimizer_compute_precisions=None, outline_apply_gradients=False,
                     outline_apply_gradients_kwargs=None, **kwargs):
            super().__init__(learning_rate=learning_rate, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon,
                             amsgrad=amsgrad, name=name, **kwargs)

    class SGDIpuOptimizer(keras.optimizers.SGD):
        def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD",
                     momentum_accum_dtype=None, optimizer_compute_precisions=None,
                     outline_apply_gradients=False, outline_apply_gradients_kwargs=None, **kwargs):
            super().__init__(learning_rate=learning_rate, momentum=momentum, nesterov=nesterov, name=name,
                             **kwargs)

    optimizers = types.ModuleType("ipu_tensorflow_addons.keras.optimizers")
    optimizers.AdamIpuOptimizer = AdamIpuOptimizer
    optimizers.SGDIpuOptimizer = SGDIpuOptimizer

    package = types.ModuleType("ipu_tensorflow_addons")
    package.__path__ = []
    keras_package = types.ModuleType("ipu_tensorflow_addons.keras")
    keras_package.__path__ = []
    keras_package.layers = layers
    keras_package.optimizers = optimizers
    package.keras = keras_package
    return {"ipu_tensorflow_addons": package, "ipu_tensorflow_addons.keras": keras_package,
            "ipu_tensorflow_addons.keras.layers": layers,
            "ipu_tensorflow_addons.keras.optimizers": optimizers}
