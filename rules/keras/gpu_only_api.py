"""IPU160: APIs that exist only for NVIDIA GPUs, or to spread training over them, left in a port."""

from typing import Optional

import libcst as cst

from porter.cstutil import string_value
from porter.rule import KERAS, WARN, Example, Rule
from porter.rules.keras._analysis.addons import is_bidirectional_layer

# What each GPU-only API is, by its last name, and what to do instead on the IPU.
_CUDNN_LAYERS = {
    "CuDNNLSTM": ("LSTM", "`recurrent_activation=\"sigmoid\"`"),
    "CuDNNGRU": ("GRU", "`recurrent_activation=\"sigmoid\"`, `reset_after=True`"),
}
# The automatic mixed-precision graph rewrite, a Grappler pass for NVIDIA GPUs: without one it leaves
# the model in float32. Its `tf.train.experimental` name is gone from TensorFlow 2.4 on.
_GRAPH_REWRITES = frozenset({
    "tensorflow.train.experimental.enable_mixed_precision_graph_rewrite",
    "tensorflow.compat.v1.train.experimental.enable_mixed_precision_graph_rewrite",
    "tensorflow.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite",
})
_POLICY_ADVICE = (
    "For float16, drop {what} and set the Keras policy before the model is built (`tf.keras.mixed_precision."
    "set_global_policy(\"mixed_float16\")`): `compile` then scales the loss, and a custom loop wraps its "
    "optimizer in `tf.keras.mixed_precision.LossScaleOptimizer`")
_GRAPH_REWRITE_MESSAGE = (
    "`enable_mixed_precision_graph_rewrite` makes float16 operations only on NVIDIA GPUs (its "
    "`tf.train.experimental` name is gone from TensorFlow 2.4 on): on the IPU the model trains in float32. "
    + _POLICY_ADVICE.format(what="the call"))
# The same Grappler pass, switched on as an option of TensorFlow's graph optimizer.
_GRAPPLER_OPTIONS = frozenset({"tensorflow.config.optimizer.set_experimental_options"})
_AUTO_MIXED_PRECISION = "auto_mixed_precision"
_GRAPPLER_MESSAGE = (
    "the `auto_mixed_precision` option of TensorFlow's graph optimizer (Grappler) makes float16 operations only "
    "on NVIDIA GPUs: on the IPU the model trains in float32. " + _POLICY_ADVICE.format(what="the option"))


class GpuOnlyApi(Rule):
    code = "IPU160"
    name = "gpu-only-api"
    kind = WARN
    frameworks = frozenset({KERAS})
    summary = ("Report CUDA-only layers (`CuDNNLSTM`, `CuDNNGRU`) and the GPU mixed-precision graph rewrite, "
               "which do not run on IPUs.")
    rationale = (
        "Some Keras code of the GPU era calls APIs that only NVIDIA GPUs have. `CuDNNLSTM` and `CuDNNGRU` "
        "build `CudnnRNN` operations, whose kernels exist for CUDA only: the compiled IPU program cannot be "
        "built. They compute what `LSTM`/`GRU` compute with a sigmoid recurrent activation (and, for the "
        "GRU, `reset_after=True`); written so, IPU104 swaps them for the IPU layers of "
        "`ipu_tensorflow_addons`, except inside `Bidirectional`, where the Keras layer stays (the IPU "
        "layers have no `go_backwards`). Each is reported where it is used: the change touches the model, and is "
        "left to a person. `enable_mixed_precision_graph_rewrite` is a Grappler pass that turns operations to "
        "float16 on NVIDIA GPUs only, so on the IPU the model would train in float32 without a word; Keras' "
        "`mixed_float16` policy runs under the IPU strategy, with the loss scaled by `compile`, and is what the "
        "finding advises. The same pass switched on as Grappler's `auto_mixed_precision` option "
        "(`tf.config.optimizer.set_experimental_options`) is reported the same way. Spreading training over GPUs is ported by other rules: `multi_gpu_model` by IPU117, "
        "Horovod by IPU116."
    )
    examples = (
        Example(
            """\
            from tensorflow.compat.v1.keras.layers import CuDNNLSTM
            from tensorflow.keras import layers, models

            model = models.Sequential([layers.Embedding(5000, 64), CuDNNLSTM(64), layers.Dense(1)])
            model.fit(reviews, labels, epochs=2)
            """,
        ),
        # Inside `Bidirectional` the plain layer stays the Keras one (IPU104), and the advice says so.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.compat.v1.keras.layers import CuDNNGRU

            inputs = tf.keras.Input(shape=(40,), dtype="int32")
            x = tf.keras.layers.Embedding(5000, 64)(inputs)
            x = tf.keras.layers.Bidirectional(CuDNNGRU(64))(x)
            model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(x))
            model.fit(reviews, labels, epochs=2)
            """,
        ),
        # The GPU graph rewrite of mixed precision: the model would stay float32.
        Example(
            """\
            import tensorflow as tf

            optimizer = tf.keras.optimizers.Adam(1e-3)
            optimizer = tf.train.experimental.enable_mixed_precision_graph_rewrite(optimizer)
            model.compile(optimizer=optimizer, loss="mse")
            """,
        ),
        # The same rewrite, switched on as a graph optimizer option.
        Example(
            """\
            import tensorflow as tf

            tf.config.optimizer.set_experimental_options({"auto_mixed_precision": True, "layout_optimizer": False})
            model.compile(optimizer="adam", loss="mse")
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            tf.config.optimizer.set_experimental_options({"auto_mixed_precision": False})
            """,
            reported=False,
        ),
        # The IPU-ready layers and plain Keras: nothing to say.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.LSTM(64, recurrent_activation="sigmoid")])
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        for call in ctx.nodes(cst.Call):
            if ctx.qualified_name(call.func) in _GRAPH_REWRITES:
                ctx.report(self.code, call, _GRAPH_REWRITE_MESSAGE, fixed=False)
                continue
            switch = _auto_mixed_precision(call) if ctx.qualified_name(call.func) in _GRAPPLER_OPTIONS else None
            if switch is not None:
                ctx.report(self.code, switch, _GRAPPLER_MESSAGE, fixed=False)
                continue
            message = _message(ctx.keras_name(call.func), is_bidirectional_layer(ctx, call))
            if message is not None:
                ctx.report(self.code, call, message, fixed=False)


def _auto_mixed_precision(call: cst.Call) -> Optional[cst.DictElement]:
    """The ``"auto_mixed_precision": True`` of ``set_experimental_options({...})`` (a dict written in
    the call), if any: the switch that turns the GPU rewrite on."""
    options = call.args[0].value if call.args and call.args[0].keyword is None else None
    if not isinstance(options, cst.Dict):
        return None
    return next((element for element in options.elements if isinstance(element, cst.DictElement)
                 and string_value(element.key) == _AUTO_MIXED_PRECISION
                 and not (isinstance(element.value, cst.Name) and element.value.value in ("False", "None"))), None)


def _message(keras: Optional[str], wrapped: bool) -> Optional[str]:
    """What to say about a call of a GPU-only API (by its Keras name; ``wrapped``: the layer reaches
    a ``Bidirectional`` wrapper), or None."""
    layer = keras.rsplit(".", 1)[-1] if keras is not None and keras.startswith("keras.layers.") else None
    if layer in _CUDNN_LAYERS:
        plain, arguments = _CUDNN_LAYERS[layer]
        # IPU104 keeps a wrapped layer the Keras one: the IPU layers have no `go_backwards`.
        swapped = (f"; inside `Bidirectional` it stays the Keras `{plain}`, which runs on the IPU (the IPU's "
                   f"`{plain}` of `ipu_tensorflow_addons` has no `go_backwards`)" if wrapped else
                   f", which IPU104 swaps for the IPU's `{plain}` of `ipu_tensorflow_addons`")
        return (f"`{layer}` builds CUDA-only `CudnnRNN` operations, which the IPU cannot compile: use "
                f"`{plain}` with {arguments} (the same computation){swapped}")
    return None


RULE = GpuOnlyApi()
