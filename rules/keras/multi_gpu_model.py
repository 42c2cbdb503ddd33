"""IPU117: `multi_gpu_model`, which TensorFlow 2.4 removed, ported as the model it copied."""

import libcst as cst

from porter.context import canonical_keras, code_of, dotted_name
from porter.cstutil import argument
from porter.rule import FIX, KERAS, Example, Rule
from porter.statements import unwrap_call

_MULTI_GPU = frozenset({"keras.utils.multi_gpu_model", "keras.utils.training_utils.multi_gpu_model",
                        "keras.utils.multi_gpu_utils.multi_gpu_model"})


class MultiGpuModel(Rule):
    code = "IPU117"
    name = "multi-gpu-model"
    kind = FIX
    frameworks = frozenset({KERAS})
    summary = "Train the model itself where `multi_gpu_model` copied it onto GPUs (removed in TensorFlow 2.4)."
    rationale = (
        "`keras.utils.multi_gpu_model(model, gpus=G)` split each batch of `batch_size` samples between G GPU "
        "copies of `model`, which share its weights; it was removed in TensorFlow 2.4, so the IPU's TensorFlow "
        "2.6 has none and its import fails. One device that takes the whole batch trains the same steps, so "
        "the call becomes `model` itself (a statement `model = multi_gpu_model(model, ...)` goes) and the name "
        "leaves its import. To spread training over IPUs, port with `--ipus N`: the "
        "model is replicated over the IPUs, and each replica then takes a whole `batch_size` (Targeting the "
        "IPU from TensorFlow 2, \"Selecting the number of replicas\"), so divide it by N to keep the samples "
        "of a step."
    )
    examples = (
        Example(
            """\
            from keras.utils import multi_gpu_model
            from keras.models import Sequential
            from keras.layers import Dense

            model = Sequential([Dense(16, input_shape=(8,)), Dense(1)])
            parallel_model = multi_gpu_model(model, gpus=4)
            parallel_model.compile(loss="mse", optimizer="rmsprop")
            parallel_model.fit(x, y, batch_size=256)
            """,
            """\
            from keras.models import Sequential
            from keras.layers import Dense

            model = Sequential([Dense(16, input_shape=(8,)), Dense(1)])
            parallel_model = model
            parallel_model.compile(loss="mse", optimizer="rmsprop")
            parallel_model.fit(x, y, batch_size=256)
            """,
        ),
        # The copy bound to the model's own name: the statement goes.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model = tf.keras.utils.multi_gpu_model(model, 2)
            model.compile(loss="mse", optimizer="sgd")
            """,
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(loss="mse", optimizer="sgd")
            """,
        ),
        # An import of other names too: the name leaves it.
        Example(
            """\
            from keras.utils import multi_gpu_model, to_categorical

            parallel = multi_gpu_model(model, gpus=2)
            """,
            """\
            from keras.utils import to_categorical

            parallel = model
            """,
        ),
        # Imported through TensorFlow's compat.v1 Keras: the import goes too.
        Example(
            """\
            import numpy as np
            from tensorflow.compat.v1.keras.utils import multi_gpu_model

            parallel = multi_gpu_model(model, gpus=2)
            """,
            """\
            import numpy as np

            parallel = model
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        every_call_ported = True
        for call in ctx.nodes(cst.Call):
            if ctx.keras_name(call.func) in _MULTI_GPU:
                every_call_ported = self._port(ctx, call) and every_call_ported
        for alias in ctx.nodes(cst.ImportAlias):
            if _imports_multi_gpu_model(ctx, alias):
                self._drop_import(ctx, alias, every_call_ported)

    def _port(self, ctx, call: cst.Call) -> bool:
        model = argument(call, "model", 0)
        if model is None or model.star:
            ctx.report(self.code, call, "`multi_gpu_model` was removed in TensorFlow 2.4 (the IPU's TensorFlow is "
                       "2.6): train the model it copies itself, and replicate it over IPUs with `--ipus N`",
                       fixed=False)
            return False
        unwrap_call(ctx, call, "model")
        ctx.report(self.code, call, f"`multi_gpu_model` removed (TensorFlow 2.4 has none): `{code_of(ctx, model.value)}` "
                   "is trained itself, a whole batch at a time, as the GPU copies together trained it; port with "
                   "`--ipus N` to replicate it over IPUs, each replica then taking a whole `batch_size`", fixed=True)
        return True

    def _drop_import(self, ctx, alias: cst.ImportAlias, every_call_ported: bool) -> None:
        """The name leaves its import (the import goes with it when it brings nothing else) once no
        call of it is left."""
        if every_call_ported and ctx.drop_import(alias):
            ctx.report(self.code, alias, "`multi_gpu_model` taken out of the import: TensorFlow 2.4 removed it, and "
                       "importing it fails on the IPU's TensorFlow 2.6", fixed=True)
            return
        ctx.report(self.code, alias, "`multi_gpu_model` was removed in TensorFlow 2.4, so this import fails on the "
                   "IPU's TensorFlow 2.6: take the name out of it", fixed=False)


def _imports_multi_gpu_model(ctx, alias: cst.ImportAlias) -> bool:
    """``from keras.utils import multi_gpu_model`` (also from ``tensorflow.keras.utils`` or the
    modules that defined it), at module level or in a function."""
    owner = ctx.parent(alias)
    if not isinstance(owner, cst.ImportFrom) or not isinstance(alias.name, cst.Name) or (
            alias.name.value != "multi_gpu_model") or owner.module is None or owner.relative:
        return False
    module = dotted_name(owner.module)
    if module is None:
        return False
    qualified = f"{module}.multi_gpu_model"
    return (canonical_keras(qualified) or qualified) in _MULTI_GPU


RULE = MultiGpuModel()
