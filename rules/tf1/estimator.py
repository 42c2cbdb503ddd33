import libcst as cst

from porter.context import walk
from porter.rule import KERAS, TF1, WARN, Example, Rule
from porter.rules.tf1._analysis.graph import IPU_COMPILE, calls_named, find_calls
from porter.scopes import local_function

IPU_ESTIMATORS = ("tensorflow.python.ipu.ipu_estimator.IPUEstimator",
                  "tensorflow.python.ipu.ipu_pipeline_estimator.IPUPipelineEstimator")
# Pre-made estimators (`tf.estimator.DNNClassifier`, `BoostedTreesRegressor`, the `tf.contrib` ones):
# their model is built inside TensorFlow, out of reach of a `model_fn` for `IPUEstimator`.
_PREMADE_SUFFIXES = ("Classifier", "Regressor", "Estimator")
_PREMADE_MODULES = ("tensorflow.estimator.", "tensorflow.compat.v1.estimator.", "tensorflow.contrib.")
_TO_ESTIMATOR = ("keras.estimator.model_to_estimator",)
_ESTIMATOR_MESSAGE = ("use `ipu.ipu_estimator.IPUEstimator` with an `ipu.ipu_run_config.RunConfig(ipu_run_config="
                      "IPURunConfig(iterations_per_loop=..., ipu_options=...))`, and `drop_remainder=True` in "
                      "`input_fn` (see the IPUEstimator example of Targeting the IPU from TensorFlow 1)")


def _premade_estimator(ctx, call: cst.Call):
    """The class name of a pre-made (or TPU) estimator that ``call`` creates, or None."""
    func = call.func
    last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    if not last.endswith(_PREMADE_SUFFIXES) or last == "Estimator":
        return None
    qualified = ctx.qualified_name(func) or ""
    return last if qualified.startswith(_PREMADE_MODULES) else None


class Estimator(Rule):
    code = "IPU211"
    name = "estimator"
    kind = WARN
    frameworks = frozenset({TF1, KERAS})
    summary = ("`tf.estimator.Estimator` runs on the IPU as `ipu.ipu_estimator.IPUEstimator`; pre-made and TPU "
               "estimators are reported.")
    rationale = (
        "Estimators run on the IPU through `ipu.ipu_estimator.IPUEstimator(model_fn, config="
        "ipu.ipu_run_config.RunConfig(ipu_run_config=ipu.ipu_run_config.IPURunConfig("
        "iterations_per_loop=..., ipu_options=ipu_config)))`, whose `input_fn` returns a dataset batched "
        "with `drop_remainder=True` (the IPUEstimator example of Targeting the IPU from TensorFlow 1). The "
        "change touches the model function, the run "
        "configuration and the input function, so it is reported, not made. A `model_fn` given to "
        "`IPUEstimator` must not call `ipu.ipu_compiler.compile`: the estimator compiles it itself and "
        "raises a `ValueError` saying so. Pre-made estimators (`DNNClassifier`, `BoostedTreesRegressor`, "
        "the `tf.contrib` ones) build their model inside TensorFlow and have no IPU version: the model must "
        "be written as a `model_fn` for `IPUEstimator`, or in Keras; `TPUEstimator` takes a `model_fn` "
        "that `IPUEstimator` can take instead. An estimator made from a Keras model (`model_to_estimator`) "
        "runs on the CPU: the Keras model trains on the IPU with `fit` instead."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
            model.compile(loss="mse", optimizer="sgd")
            estimator = tf.keras.estimator.model_to_estimator(keras_model=model)
            estimator.train(input_fn=input_fn, steps=100)
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf

            estimator = tf.estimator.Estimator(model_fn=model_fn, model_dir="/tmp/model")
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu


            def model_fn(features, labels, mode):
                return ipu.ipu_compiler.compile(body, inputs=[features, labels])


            estimator = ipu.ipu_estimator.IPUEstimator(model_fn=model_fn, config=config)
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu

            estimator = ipu.ipu_estimator.IPUEstimator(model_fn=model_fn, config=config)
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow as tf

            classifier = tf.estimator.DNNClassifier(hidden_units=[64, 32], feature_columns=columns, n_classes=3)
            classifier.train(input_fn=train_input_fn, steps=1000)
            """,
        ),
    )

    def run(self, ctx) -> None:
        for call in calls_named(ctx, {"estimator.Estimator"}):
            # Its `model_fn` returns the `EstimatorSpec` that `IPUEstimator` takes too: it can stay.
            ctx.report(self.code, call, "`Estimator` runs its `model_fn` on the CPU, not the IPU; the same "
                       f"`model_fn` runs on the IPU in an `IPUEstimator`: {_ESTIMATOR_MESSAGE}", fixed=False)
        for call in ctx.nodes(cst.Call):
            name = _premade_estimator(ctx, call)
            if name == "TPUEstimator":
                ctx.report(self.code, call, f"`TPUEstimator` runs on TPUs only: {_ESTIMATOR_MESSAGE}", fixed=False)
            elif name is not None:
                ctx.report(self.code, call, f"`{name}` is a pre-made estimator, which has no IPU version: write "
                           f"its model as a `model_fn` and {_ESTIMATOR_MESSAGE}; or build the model with Keras",
                           fixed=False)
        for call in ctx.nodes(cst.Call):
            if ctx.keras_name(call.func) in _TO_ESTIMATOR:
                ctx.report(self.code, call, "an estimator made from a Keras model (`model_to_estimator`) runs on the "
                           "CPU, not the IPU: train the Keras model with `fit` in the `IPUStrategy` scope, or write "
                           f"its model as a `model_fn` and {_ESTIMATOR_MESSAGE}", fixed=False)
        for call in find_calls(ctx, *IPU_ESTIMATORS):
            self._compiled_model_fn(ctx, call)

    def _compiled_model_fn(self, ctx, call: cst.Call) -> None:
        model_fn = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "model_fn"),
                        call.args[0].value if call.args and call.args[0].keyword is None else None)
        if not isinstance(model_fn, cst.Name):
            return
        function = local_function(ctx, model_fn.value, call)
        if function is None:
            return
        for node in walk(function.body):
            if isinstance(node, cst.Call) and ctx.qualified_name(node.func) == IPU_COMPILE:
                ctx.report(self.code, node, f"`{model_fn.value}` is the model_fn of an IPU estimator, which "
                           "compiles it: call the computation directly, without `ipu.ipu_compiler.compile`",
                           fixed=False)


RULE = Estimator()
