import libcst as cst

from porter.rule import KERAS, WARN, Example, Rule

_V1_TRAIN = ("tensorflow.train.", "tensorflow.compat.v1.train.")
# The Keras optimizer that runs the same algorithm, and what to check when switching: the v1
# names of some arguments and defaults differ.
_KERAS_EQUIVALENT = {
    "AdamOptimizer": ("Adam", "`beta1`/`beta2` become `beta_1`/`beta_2`; `epsilon` defaults to 1e-8 there, "
                              "1e-7 here"),
    "GradientDescentOptimizer": ("SGD", ""),
    "MomentumOptimizer": ("SGD", "pass `momentum=...`; `use_nesterov` becomes `nesterov`"),
    "RMSPropOptimizer": ("RMSprop", "`decay` becomes `rho`; `epsilon` defaults to 1e-10 there, 1e-7 here"),
    "AdagradOptimizer": ("Adagrad", ""),
    "AdadeltaOptimizer": ("Adadelta", ""),
    "FtrlOptimizer": ("Ftrl", ""),
}


def _v1_optimizer(qualified: str):
    """The class name of a TensorFlow 1 optimizer (``tf.train.AdamOptimizer``), or None."""
    for prefix in _V1_TRAIN:
        if qualified.startswith(prefix) and qualified.endswith("Optimizer"):
            name = qualified[len(prefix):]
            return name if "." not in name else None
    return None


class V1Optimizer(Rule):
    code = "IPU159"
    name = "v1-optimizer"
    kind = WARN
    frameworks = frozenset({KERAS})
    summary = "Warn about TensorFlow 1 optimizers (`tf.train.AdamOptimizer`) in Keras and custom-loop code."
    rationale = (
        "Keras on the IPU trains with Keras optimizers (`OptimizerV2`): the IPU's Keras extensions check "
        "the optimizer for gradient accumulation and pipelining, and only Keras optimizers all-reduce "
        "their gradients across replicas by themselves, TF1-style optimizers need "
        "`ipu.optimizers.CrossReplicaOptimizer` (Targeting the IPU from TensorFlow 2, \"Keras with IPUs\"). "
        "TensorFlow 2, on which the IPU's Keras runs, has no `tf.train.AdamOptimizer` "
        "at all, only `tf.compat.v1.train.AdamOptimizer`. The Keras optimizer of the same algorithm is "
        "named in the finding, with the arguments whose names or defaults differ; the switch changes the "
        "training, so it is reported, not made."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(optimizer=tf.train.AdamOptimizer(0.001), loss="mse")
            model.fit(features, labels, epochs=5)
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf

            tf.enable_eager_execution()
            optimizer = tf.train.RMSPropOptimizer(0.01)


            def train_step(model, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            model.compile(optimizer=tf.keras.optimizers.Adam(0.001), loss="mse")
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        for call in ctx.nodes(cst.Call):
            qualified = ctx.qualified_name(call.func)
            name = _v1_optimizer(qualified) if qualified is not None else None
            if name is None:
                continue
            keras_name, differences = _KERAS_EQUIVALENT.get(name, (None, ""))
            instead = (f"use `tf.keras.optimizers.{keras_name}`" + (f" ({differences})" if differences else "")
                       if keras_name else "use the Keras optimizer of the same algorithm (`tf.keras.optimizers`)")
            ctx.report(self.code, call, f"`{name}` is a TensorFlow 1 optimizer: Keras on the IPU trains with "
                       f"Keras optimizers, and TensorFlow 2 has it only as `tf.compat.v1.train.{name}`; "
                       f"{instead}", fixed=False)


RULE = V1Optimizer()
