import libcst as cst

from porter.context import code_of
from porter import throughput
from porter.rules.keras._analysis.fit import KERAS_DEFAULT_BATCH, int_value, training_calls
from porter.rule import KERAS, NOTE, WARN, WARNING, Example, Rule
from porter.rules.keras._analysis.model_plan import keras_extensions_off
from porter.rules.keras.divisible_dataset import helper_name
from porter.rules.keras.ipu_config import ipus_option_overridden


class Replication(Rule):
    code = "IPU109"
    name = "replication"
    kind = WARN
    frameworks = frozenset({KERAS})
    # It explains the arithmetic: nothing to do unless the numbers matter to the user.
    severity = NOTE
    summary = "`--ipus N` with replication: say how the batch arithmetic changes for each `fit`, and that compiled metrics are the last replica's."
    rationale = (
        "With N IPUs and a model that takes one (or S pipeline stages rounded up to a power of two), "
        "Keras replicates the model: replicas = IPUs / IPUs per model copy (Targeting the IPU from TensorFlow "
        "2, \"Selecting the number of replicas\"; Graphcore's Keras tutorial, \"Replication\"). "
        "`batch_size` stays the batch of one replica, so every step trains replicas x batch samples and a "
        "weight update sees batch x replicas x accumulation samples: a learning rate tuned for the "
        "single-device batch may need scaling. A `tf.data` dataset is split between the replicas, each "
        "taking batches per epoch / replicas (the remainder is dropped with a warning, Targeting the IPU from "
        "TensorFlow 2, \"Keras with IPUs\"), and `steps_per_execution` counts batches of one replica. NumPy "
        "inputs are trimmed by "
        "IPU107 and the execution length is set by IPU108; `strategy.num_replicas_in_sync`, which is always "
        "1 on the IPU, is reported by IPU154. A model trained in `IPUStrategy(enable_keras_extensions=False)` "
        "(a `train_step` override, IPU103) has none of this: its `fit` hands each batch to `strategy.run` as "
        "a custom loop does, whose scaling under replication is not documented, and that is what is said. "
        "The metrics `fit` and `evaluate` report are not reduced across the replicas by default: each is the "
        "value of the last replica, computed on its share of the batches (IPU Keras API, "
        "`set_replication_options`, `replicated_metric_reduction_method` \"NONE\"); a model compiled with "
        "`metrics` is told how to average them over the replicas."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(optimizer="sgd", loss="mse")
            model.fit(x, y, batch_size=32, epochs=5)
            """,
            options={"ipus": 4},
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            train = tf.data.Dataset.from_tensor_slices((x, y)).batch(32, drop_remainder=True)
            model.fit(train, epochs=5)
            """,
            options={"ipus": 2, "steps_per_execution": 8},
        ),
        # Metrics: `evaluate` reports the last replica's accuracy unless told to average it.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(optimizer="sgd", loss="mse", metrics=["accuracy"])
            model.evaluate(test_dataset)
            """,
            options={"ipus": 2},
        ),
        # The script chose how its metrics are reduced.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(optimizer="sgd", loss="mse", metrics=["accuracy"])
            model.set_replication_options(replicated_metric_reduction_method="MEAN")
            model.evaluate(test_dataset)
            """,
            reported=False, options={"ipus": 2},
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.fit(x, y, batch_size=32, epochs=5)
            """,
            reported=False,
        ),
        # A model class overrides `train_step`: the strategy runs without the Keras extensions, and
        # `fit` replicates as a custom loop does, which is not documented (a warning, not the arithmetic).
        Example(
            """\
            import tensorflow as tf


            class Contrastive(tf.keras.Model):
                def train_step(self, data):
                    return {}


            model = Contrastive()
            model.compile(optimizer="sgd")
            model.fit(x, batch_size=32, epochs=5)
            """,
            options={"ipus": 2},
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.fit(x, y, batch_size=32, epochs=5)
            """,
            reported=False, options={"ipus": 2, "pipeline_stages": 2, "gradient_accumulation": 4},
        ),
        # The script selects its own IPUs, not the 4 asked for: its number runs (IPU102 says so).
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            cfg = ipu.config.IPUConfig()
            cfg.auto_select_ipus = 1
            cfg.configure_ipu_system()
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.fit(x, y, batch_size=32, epochs=5)
            """,
            reported=False, options={"ipus": 4},
        ),
    )

    def run(self, ctx) -> None:
        config = ctx.config
        replicas = throughput.config_replicas(config)
        if replicas <= 1 or ipus_option_overridden(ctx):  # the script's own IPUs run (IPU102 says so)
            return
        accumulation = throughput.config_accumulation(config)
        steps = throughput.config_steps(config)
        without_extensions = keras_extensions_off(ctx)
        entries = training_calls(ctx, helper_name(ctx))
        if without_extensions is None:
            self._report_unreduced_metrics(ctx, entries, replicas)
        for entry in entries:
            if entry.method != "fit":
                continue
            anchor = entry.call.func.attr
            if without_extensions is not None:
                # Keras' own `fit` runs its step through `strategy.run`, as a custom loop does.
                ctx.report(self.code, anchor, f"`{entry.model}` trains in `IPUStrategy(enable_keras_extensions=False)`, "
                           f"since {without_extensions}: Keras' own `fit` then hands each batch to `strategy.run`, "
                           f"as a custom loop does, and how its batches, losses and gradients scale over {replicas} "
                           "replicas is not documented (the IPU Keras extensions, which replicate `fit`, are off); "
                           "check its losses against a run with `--ipus 1`", fixed=False, severity=WARNING)
                continue
            if entry.has_arrays:
                batch_value = int_value(entry.batch) if entry.batch is not None else KERAS_DEFAULT_BATCH
                batch = str(batch_value) if batch_value is not None else f"`{code_of(ctx, entry.batch)}`"
                update = f"{batch} x {replicas}" + (f" x {accumulation}" if accumulation > 1 else "")
                if batch_value is not None:
                    update += f" = {batch_value * replicas * accumulation}"
                ctx.report(self.code, anchor, f"{replicas} replicas each train batches of {batch}: a weight update "
                           f"now sees {update} samples; scale the learning rate if it was tuned for one device",
                           fixed=False)
            elif entry.dataset_input:
                per_replica = steps or accumulation
                per_execution = replicas * per_replica
                why = (f"replicas x {'steps per execution' if steps else 'accumulated batches'}" if per_replica > 1
                       else "one batch per replica")
                ctx.report(self.code, anchor, f"the dataset's batches are split between {replicas} replicas: make "
                           f"the batches per epoch a multiple of {per_execution} ({why}), or the remainder is "
                           "dropped; the learning rate may need scaling for the larger global batch", fixed=False)

    def _report_unreduced_metrics(self, ctx, entries, replicas: int) -> None:
        """Each `compile(metrics=...)` of a model that runs `fit` or `evaluate`: Keras on the IPU reports
        the metrics of the last replica unless `set_replication_options` says how to reduce them."""
        if not any(entry.method in ("fit", "evaluate") for entry in entries):
            return
        if any(isinstance(call.func, cst.Attribute) and call.func.attr.value == "set_replication_options"
               for call in ctx.nodes(cst.Call)):
            return  # the script chose its reduction
        for entry in entries:
            if entry.method != "compile":
                continue
            metrics = next((arg for arg in entry.call.args if arg.keyword is not None
                            and arg.keyword.value in METRIC_KEYWORDS and not _empty(arg.value)), None)
            if metrics is None:
                continue
            ctx.report(self.code, metrics, f"`{entry.model}`'s metrics are not reduced across its {replicas} "
                       "replicas: `fit` and `evaluate` report each metric of the last replica only, computed on "
                       f"1/{replicas} of the batches; call `{entry.model}.set_replication_options("
                       "replicated_metric_reduction_method=\"MEAN\")` after this `compile` to average them over "
                       "the replicas (for metrics such as `AUC` or `Precision`, the mean of the replicas' values "
                       "approximates the value over all batches)", fixed=False, severity=WARNING)


# The `compile` arguments whose metrics `fit` and `evaluate` report.
METRIC_KEYWORDS = frozenset({"metrics", "weighted_metrics"})


def _empty(value: cst.BaseExpression) -> bool:
    """Whether `value` is `None` or an empty list, tuple or dict literal: no metric to reduce."""
    if isinstance(value, cst.Name):
        return value.value == "None"
    return isinstance(value, (cst.List, cst.Tuple, cst.Dict)) and not value.elements


RULE = Replication()
