import libcst as cst

from porter.cstutil import expression, statement
from porter.rules.keras._analysis.model_plan import model_plan
from porter.rule import FIX, KERAS, Example, Rule
from porter.rules.keras.ipu_import import IpuImport


def _strategy_code(plan) -> str:
    if plan.overridden_hooks:
        return "ipu.ipu_strategy.IPUStrategy(enable_keras_extensions=False)"
    return "ipu.ipu_strategy.IPUStrategy()"


def _scope(name: str):
    def build(statements):
        return cst.With(
            items=[cst.WithItem(cst.Call(cst.Attribute(cst.Name(name), cst.Name("scope"))))],
            body=cst.IndentedBlock(body=statements),
        )

    return build


class StrategyScope(Rule):
    code = "IPU103"
    name = "strategy-scope"
    kind = FIX
    frameworks = frozenset({KERAS})
    # The strategy is created after the IPU system is configured: both go in front of the same statement.
    after = ("IPU102",)
    summary = "Build, compile, train and save the Keras model inside an `IPUStrategy` scope."
    rationale = (
        "Code targets the IPU inside `with strategy.scope():` of an `ipu.ipu_strategy.IPUStrategy()`, "
        "instead of `tf.device` blocks or other distribution strategies, and the Keras model must be "
        "constructed inside the scope (Graphcore's Keras tutorial, \"Wrap the model within the IPU strategy "
        "scope\"). `tf.device('/gpu:N')` scopes "
        "are replaced, `MirroredStrategy`/`OneDeviceStrategy`/`MultiWorkerMirroredStrategy`/"
        "`get_strategy()` become the `IPUStrategy` (the variable name is kept) and the model code after "
        "their scope moves into it. A model that overrides `train_step` (or another `make_*_function`) "
        "gets `IPUStrategy(enable_keras_extensions=False)`, since the IPU Keras extensions refuse such "
        "models (Targeting the IPU from TensorFlow 2, \"Keras with IPUs\")."
    )
    examples = (
        # A model from an imported builder under an existing strategy scope: the scope is kept
        # (as the IPU strategy's) and grows to the training call.
        Example(
            """\
import tensorflow as tf
from zoo import make_net

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    net = make_net()
    net.compile(optimizer="adam", loss="mse")
net.fit(x, y, batch_size=16)
""",
            """\
import tensorflow as tf
from zoo import make_net
from tensorflow.python import ipu

strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    net = make_net()
    net.compile(optimizer="adam", loss="mse")
    net.fit(x, y, batch_size=16)
""",
        ),
        # Any callable whose result is compiled is a model: keras.applications here.
        Example(
            """\
import tensorflow as tf

net = tf.keras.applications.ResNet50(weights=None, classes=10)
net.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
net.fit(images, labels, batch_size=32)
""",
            """\
import tensorflow as tf
from tensorflow.python import ipu

strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    net = tf.keras.applications.ResNet50(weights=None, classes=10)
    net.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    net.fit(images, labels, batch_size=32)
""",
        ),
        # A GPU scope around a model the porter cannot see is still the IPU strategy's scope.
        Example(
            """\
import tensorflow as tf
from zoo import restore

with tf.device("/GPU:0"):
    net = restore("checkpoints/best")
run_experiment(net)
""",
            """\
import tensorflow as tf
from zoo import restore
from tensorflow.python import ipu

strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    net = restore("checkpoints/best")
run_experiment(net)
""",
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse")
            model.fit(x, y, epochs=2)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.compile(loss="mse")
                model.fit(x, y, epochs=2)
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def main():
                data = load()
                with tf.device("/GPU:0"):
                    model = tf.keras.models.load_model("net.h5")
                    model.evaluate(data)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def main():
                data = load()
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    model = tf.keras.models.load_model("net.h5")
                    model.evaluate(data)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            mirrored = tf.distribute.MirroredStrategy()
            with mirrored.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(loss="mse")
            model.fit(x, y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            mirrored = ipu.ipu_strategy.IPUStrategy()
            with mirrored.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(loss="mse")
                model.fit(x, y)
            """,
        ),
        Example(
            """\
            from tensorflow import keras


            def main():
                data = load()
                inputs = keras.Input(shape=(8,))
                outputs = keras.layers.Dense(1)(inputs)
                model = keras.Model(inputs, outputs)
                model.fit(data)
            """,
            """\
            from tensorflow import keras
            from tensorflow.python import ipu


            def main():
                data = load()
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    inputs = keras.Input(shape=(8,))
                    outputs = keras.layers.Dense(1)(inputs)
                    model = keras.Model(inputs, outputs)
                    model.fit(data)
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.fit(x, y)
            """,
            reported=False,
        ),
        Example(
            """\
            from tensorflow import keras


            def build_model():
                return keras.Sequential([keras.layers.Dense(10)])
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        plan = model_plan(ctx)
        for hook in plan.overridden_hooks:
            ctx.report(self.code, hook, f"`{hook.name.value}` is overridden: the port uses "
                       "`IPUStrategy(enable_keras_extensions=False)`, which loses IPU Keras features "
                       "(pipelining, infeeds); remove the override to keep them", fixed=False)
        for with_node in plan.unsafe_withs:
            ctx.report(self.code, with_node, "GPU device scope with several items or `as`: replace it "
                       "with `with strategy.scope():` by hand", fixed=False)
        if plan.has_ipu_strategy:
            return
        changed = False
        for call in plan.replaced_strategies:
            ctx.replace(call, expression(_strategy_code(plan)))
            ctx.report(self.code, call, "distribution strategy replaced by `IPUStrategy`", fixed=True)
            changed = True
        for with_node in plan.transparent:
            ctx.unwrap(with_node)
            ctx.report(self.code, with_node, "device/strategy scope replaced by the IPU strategy scope",
                       fixed=True)
            changed = True
        created = set()
        for region in plan.regions:
            if plan.strategy_statement is None and id(region.anchor) not in created:
                created.add(id(region.anchor))
                ctx.insert_before(region.anchor, [statement(
                    f"{plan.strategy_name} = {_strategy_code(plan)}")])
            if ctx.wrap(region.first, region.last, _scope(plan.strategy_name)):
                ctx.report(self.code, region.first, f"model code runs in `with {plan.strategy_name}.scope():`",
                           fixed=True)
                changed = True
        if changed:
            ctx.add_import("tensorflow.python", "ipu", code=IpuImport.code)


RULE = StrategyScope()
