import libcst as cst

from porter.cstutil import expression, statement
from porter.rules.keras._analysis.model_plan import model_plan
from porter.rule import FIX, KERAS, Example, Rule


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
        "constructed inside the scope (reference 1.3, seeds 000 and 003). `tf.device('/gpu:N')` scopes "
        "are replaced, `MirroredStrategy`/`OneDeviceStrategy`/`MultiWorkerMirroredStrategy`/"
        "`get_strategy()` become the `IPUStrategy` (the variable name is kept) and the model code after "
        "their scope moves into it. A model that overrides `train_step` (or another `make_*_function`) "
        "gets `IPUStrategy(enable_keras_extensions=False)`, since the IPU Keras extensions refuse such "
        "models (reference 1.4, rule 6)."
    )
    examples = (
        Example(
            "import tensorflow as tf\n\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(10)])\n"
            "model.compile(loss=\"mse\")\nmodel.fit(x, y, epochs=2)\n",
            "import tensorflow as tf\nfrom tensorflow.python import ipu\n\n"
            "strategy = ipu.ipu_strategy.IPUStrategy()\nwith strategy.scope():\n"
            "    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])\n"
            "    model.compile(loss=\"mse\")\n    model.fit(x, y, epochs=2)\n",
        ),
        Example(
            "import tensorflow as tf\n\n\ndef main():\n    data = load()\n    with tf.device(\"/GPU:0\"):\n"
            "        model = tf.keras.models.load_model(\"net.h5\")\n        model.evaluate(data)\n",
            "import tensorflow as tf\nfrom tensorflow.python import ipu\n\n\ndef main():\n    data = load()\n"
            "    strategy = ipu.ipu_strategy.IPUStrategy()\n    with strategy.scope():\n"
            "        model = tf.keras.models.load_model(\"net.h5\")\n        model.evaluate(data)\n",
        ),
        Example(
            "import tensorflow as tf\n\nmirrored = tf.distribute.MirroredStrategy()\nwith mirrored.scope():\n"
            "    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n    model.compile(loss=\"mse\")\n"
            "model.fit(x, y)\n",
            "import tensorflow as tf\nfrom tensorflow.python import ipu\n\n"
            "mirrored = ipu.ipu_strategy.IPUStrategy()\nwith mirrored.scope():\n"
            "    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n    model.compile(loss=\"mse\")\n"
            "    model.fit(x, y)\n",
        ),
        Example(
            "from tensorflow import keras\n\n\ndef main():\n    data = load()\n"
            "    inputs = keras.Input(shape=(8,))\n    outputs = keras.layers.Dense(1)(inputs)\n"
            "    model = keras.Model(inputs, outputs)\n    model.fit(data)\n",
            "from tensorflow import keras\nfrom tensorflow.python import ipu\n\n\ndef main():\n    data = load()\n"
            "    strategy = ipu.ipu_strategy.IPUStrategy()\n    with strategy.scope():\n"
            "        inputs = keras.Input(shape=(8,))\n        outputs = keras.layers.Dense(1)(inputs)\n"
            "        model = keras.Model(inputs, outputs)\n        model.fit(data)\n",
        ),
        Example(
            "import tensorflow as tf\nfrom tensorflow.python import ipu\n\n"
            "strategy = ipu.ipu_strategy.IPUStrategy()\nwith strategy.scope():\n"
            "    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])\n    model.fit(x, y)\n",
            reported=False,
        ),
        Example(
            "from tensorflow import keras\n\n\ndef build_model():\n"
            "    return keras.Sequential([keras.layers.Dense(10)])\n",
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
            ctx.add_import("tensorflow.python", "ipu")


RULE = StrategyScope()
