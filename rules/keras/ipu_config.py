from typing import List, Tuple

import libcst as cst

from porter.context import code_of
from porter.cstutil import argument, statement
from porter.rules.keras._analysis.fit import int_value
from porter.rules.keras._analysis.model_plan import config_anchors, model_plan
from porter.rule import FIX, KERAS, NOTE, Example, Rule
from porter.rules.keras.ipu_import import IpuImport
from porter.scopes import fresh_name


def config_statements(name: str, ipus: int):
    """The IPU system configuration (Targeting the IPU from TensorFlow 2, "Configuring system
    options"), shared with the TF1 rules."""
    return [
        statement(f"{name} = ipu.config.IPUConfig()"),
        statement(f"{name}.auto_select_ipus = {ipus}"),
        statement(f"{name}.configure_ipu_system()"),
    ]


# The SDK 2.0 function that selected the IPUs (IPU010 upgrades it to the attribute).
LEGACY_AUTO_SELECT = "tensorflow.python.ipu.utils.auto_select_ipus"


def script_ipu_selections(ctx) -> List[Tuple[cst.CSTNode, cst.BaseExpression]]:
    """Where the script selects its IPUs itself, with the count: ``cfg.auto_select_ipus = 2``, or
    the SDK 2.0 ``ipu.utils.auto_select_ipus(cfg, 2)``."""
    found: List[Tuple[cst.CSTNode, cst.BaseExpression]] = []
    for node in ctx.nodes(cst.Assign):
        if any(isinstance(target.target, cst.Attribute) and target.target.attr.value == "auto_select_ipus"
               for target in node.targets):
            found.append((node, node.value))
    for call in ctx.nodes(cst.Call):
        count = argument(call, "num_ipus", 1) if ctx.qualified_name(call.func) == LEGACY_AUTO_SELECT else None
        if count is not None:
            found.append((call, count.value))
    return found


def ipus_option_overridden(ctx) -> List[Tuple[cst.CSTNode, cst.BaseExpression]]:
    """The script's own selections of IPUs when more IPUs are asked for (``--ipus N``, or the IPUs
    a pipeline needs) and none of them selects that many: the script's number is the one that
    runs. Empty when they agree, or when no more than one IPU is asked for (the default, which
    does not say that the user asked)."""
    ipus = ctx.config.ipus
    selections = script_ipu_selections(ctx) if ipus > 1 else []
    return [] if any(int_value(value) == ipus for _, value in selections) else selections


def config_name(ctx) -> str:
    return fresh_name(ctx, "ipu_config", "ipu_configuration", "ipu_system_config")


class IpuConfig(Rule):
    code = "IPU102"
    name = "ipu-config"
    kind = FIX
    frameworks = frozenset({KERAS})
    summary = "Configure the IPU system once, before the model code: `IPUConfig`, `auto_select_ipus`."
    rationale = (
        "Nothing runs on an IPU until an `ipu.config.IPUConfig()` that selects IPUs is applied with "
        "`configure_ipu_system()` (Graphcore's Keras tutorial, \"Add IPU configuration\"). The configuration "
        "goes once "
        "where the model code starts, before the strategy is created, outside loops; `--ipus N` sets "
        "`auto_select_ipus` (ask for a power of two)."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.fit(x, y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            ipu_config = ipu.config.IPUConfig()
            ipu_config.auto_select_ipus = 1
            ipu_config.configure_ipu_system()
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.fit(x, y)
            """,
        ),
        # Each function with model code binds its strategy from the same helper: the IPU system is
        # configured before each binding, which makes that function's IPU strategy.
        Example(
            """\
            import tensorflow as tf


            def make_strategy():
                return tf.distribute.MirroredStrategy()


            def train(model_fn, x, y):
                strategy = make_strategy()
                with strategy.scope():
                    model = model_fn()
                model.fit(x, y, batch_size=16)
                model.save_weights("weights.h5")


            def evaluate(model_fn, x, y):
                strategy = make_strategy()
                with strategy.scope():
                    model = model_fn()
                    model.load_weights("weights.h5")
                return model.evaluate(x, y, batch_size=16)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def make_strategy():
                return tf.distribute.MirroredStrategy()


            def train(model_fn, x, y):
                ipu_config = ipu.config.IPUConfig()
                ipu_config.auto_select_ipus = 1
                ipu_config.configure_ipu_system()
                strategy = make_strategy()
                with strategy.scope():
                    model = model_fn()
                model.fit(x, y, batch_size=16)
                model.save_weights("weights.h5")


            def evaluate(model_fn, x, y):
                ipu_config = ipu.config.IPUConfig()
                ipu_config.auto_select_ipus = 1
                ipu_config.configure_ipu_system()
                strategy = make_strategy()
                with strategy.scope():
                    model = model_fn()
                    model.load_weights("weights.h5")
                return model.evaluate(x, y, batch_size=16)
            """,
        ),
        # The same two functions, both run by `main()`: configured once, in `main()` before the
        # first of them, not again in each (each keeps its strategy and scope).
        Example(
            """\
            import tensorflow as tf


            def train(x, y):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(loss="mse")
                model.fit(x, y, batch_size=16)
                model.save_weights("weights.h5")


            def evaluate(x, y):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(loss="mse")
                model.load_weights("weights.h5")
                return model.evaluate(x, y, batch_size=16)


            def main(args, x, y):
                if args.mode in ("train", "both"):
                    train(x, y)
                if args.mode in ("eval", "both"):
                    print(evaluate(x, y))
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def train(x, y):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(loss="mse")
                model.fit(x, y, batch_size=16)
                model.save_weights("weights.h5")


            def evaluate(x, y):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(loss="mse")
                model.load_weights("weights.h5")
                return model.evaluate(x, y, batch_size=16)


            def main(args, x, y):
                ipu_config = ipu.config.IPUConfig()
                ipu_config.auto_select_ipus = 1
                ipu_config.configure_ipu_system()
                if args.mode in ("train", "both"):
                    train(x, y)
                if args.mode in ("eval", "both"):
                    print(evaluate(x, y))
            """,
        ),
        # Models trained in a loop, then another one after it: configured once, before the loop.
        Example(
            """\
            import tensorflow as tf

            for width in (8, 16):
                probe = tf.keras.Sequential([tf.keras.layers.Dense(width)])
                probe.fit(x, y)
            final = tf.keras.Sequential([tf.keras.layers.Dense(32)])
            final.fit(x, y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            ipu_config = ipu.config.IPUConfig()
            ipu_config.auto_select_ipus = 1
            ipu_config.configure_ipu_system()
            for width in (8, 16):
                probe = tf.keras.Sequential([tf.keras.layers.Dense(width)])
                probe.fit(x, y)
            final = tf.keras.Sequential([tf.keras.layers.Dense(32)])
            final.fit(x, y)
            """,
        ),
        # A model chosen in an `if`/`else` is configured for once, before the choice.
        Example(
            """\
            import tensorflow as tf


            def main(args):
                if args.small:
                    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                else:
                    model = tf.keras.applications.ResNet50(weights=None, classes=10)
                model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
                model.fit(x, y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def main(args):
                ipu_config = ipu.config.IPUConfig()
                ipu_config.auto_select_ipus = 1
                ipu_config.configure_ipu_system()
                if args.small:
                    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                else:
                    model = tf.keras.applications.ResNet50(weights=None, classes=10)
                model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
                model.fit(x, y)
            """,
        ),
        # A function that trains a fresh model per fold (it clears the session, so it keeps its own
        # scope) called in a loop: configured once, before the loop, not on every call.
        Example(
            """\
            import tensorflow as tf


            def train_fold(fold):
                tf.keras.backend.clear_session()
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse")
                model.fit(x[fold], y[fold], epochs=2)
                return model.evaluate(x_val, y_val)


            def main():
                scores = []
                for fold in range(5):
                    scores.append(train_fold(fold))
                print(sum(scores) / len(scores))
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def train_fold(fold):
                tf.keras.backend.clear_session()
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse")
                model.fit(x[fold], y[fold], epochs=2)
                return model.evaluate(x_val, y_val)


            def main():
                scores = []
                ipu_config = ipu.config.IPUConfig()
                ipu_config.auto_select_ipus = 1
                ipu_config.configure_ipu_system()
                for fold in range(5):
                    scores.append(train_fold(fold))
                print(sum(scores) / len(scores))
            """,
        ),
        # An Optuna objective that trains a fresh model per trial, run by `study.optimize` (also
        # through a lambda): configured once, before the search, not on every trial.
        Example(
            """\
            import optuna
            import tensorflow as tf


            def objective(trial, x, y):
                tf.keras.backend.clear_session()
                model = tf.keras.Sequential([tf.keras.layers.Dense(trial.suggest_int("units", 4, 32)),
                                             tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse")
                return model.fit(x, y, epochs=2).history["loss"][-1]


            if __name__ == "__main__":
                study = optuna.create_study()
                study.optimize(lambda trial: objective(trial, x, y), n_trials=10)
            """,
            """\
            import optuna
            import tensorflow as tf
            from tensorflow.python import ipu


            def objective(trial, x, y):
                tf.keras.backend.clear_session()
                model = tf.keras.Sequential([tf.keras.layers.Dense(trial.suggest_int("units", 4, 32)),
                                             tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse")
                return model.fit(x, y, epochs=2).history["loss"][-1]


            if __name__ == "__main__":
                study = optuna.create_study()
                ipu_config = ipu.config.IPUConfig()
                ipu_config.auto_select_ipus = 1
                ipu_config.configure_ipu_system()
                study.optimize(lambda trial: objective(trial, x, y), n_trials=10)
            """,
        ),
        # A trainer class given the strategy a function of the file makes: configured before the
        # statement that calls that function, in the main block.
        Example(
            """\
            import tensorflow as tf


            def get_strategy():
                return tf.distribute.MirroredStrategy()


            class Trainer:
                def __init__(self, strategy):
                    self.strategy = strategy
                    with strategy.scope():
                        self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])


            if __name__ == "__main__":
                trainer = Trainer(get_strategy())
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def get_strategy():
                return tf.distribute.MirroredStrategy()


            class Trainer:
                def __init__(self, strategy):
                    self.strategy = strategy
                    with strategy.scope():
                        self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])


            if __name__ == "__main__":
                ipu_config = ipu.config.IPUConfig()
                ipu_config.auto_select_ipus = 1
                ipu_config.configure_ipu_system()
                trainer = Trainer(get_strategy())
            """,
        ),
        # A function given the program's strategy as a parameter: configured once, before the
        # strategy is made where it is called, not again in the function.
        Example(
            """\
            import tensorflow as tf


            def predict(strategy, model, x):
                with strategy.scope():
                    return model.predict(x)


            def main():
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    model = tf.keras.models.load_model("model.keras")
                print(predict(strategy, model, x))
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def predict(strategy, model, x):
                with strategy.scope():
                    return model.predict(x)


            def main():
                ipu_config = ipu.config.IPUConfig()
                ipu_config.auto_select_ipus = 1
                ipu_config.configure_ipu_system()
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    model = tf.keras.models.load_model("model.keras")
                print(predict(strategy, model, x))
            """,
        ),
        # A trainer class that makes its strategy when it is given none (`strategy or ...`):
        # configured where the class makes it, before the strategy.
        Example(
            """\
            import tensorflow as tf


            class Trainer:
                def __init__(self, strategy=None):
                    self.strategy = strategy or tf.distribute.OneDeviceStrategy("/gpu:0")
                    with self.strategy.scope():
                        self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])


            trainer = Trainer()
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            class Trainer:
                def __init__(self, strategy=None):
                    ipu_config = ipu.config.IPUConfig()
                    ipu_config.auto_select_ipus = 1
                    ipu_config.configure_ipu_system()
                    self.strategy = strategy or tf.distribute.OneDeviceStrategy("/gpu:0")
                    with self.strategy.scope():
                        self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])


            trainer = Trainer()
            """,
        ),
        # The same trainer with model code out of the class after it (a baseline model made in the
        # trainer's scope): configured once, before the trainer (and its strategy) is made.
        Example(
            """\
            import tensorflow as tf


            class Trainer:
                def __init__(self, strategy=None):
                    self.strategy = strategy or tf.distribute.OneDeviceStrategy("/gpu:0")
                    with self.strategy.scope():
                        self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                        self.model.compile(loss="mse")

                def train(self, x, y):
                    self.model.fit(x, y, batch_size=32)


            def main(x, y):
                trainer = Trainer()
                trainer.train(x, y)
                with trainer.strategy.scope():
                    baseline = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    baseline.compile(loss="mse")
                baseline.fit(x, y, batch_size=32)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            class Trainer:
                def __init__(self, strategy=None):
                    self.strategy = strategy or tf.distribute.OneDeviceStrategy("/gpu:0")
                    with self.strategy.scope():
                        self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                        self.model.compile(loss="mse")

                def train(self, x, y):
                    self.model.fit(x, y, batch_size=32)


            def main(x, y):
                ipu_config = ipu.config.IPUConfig()
                ipu_config.auto_select_ipus = 1
                ipu_config.configure_ipu_system()
                trainer = Trainer()
                trainer.train(x, y)
                with trainer.strategy.scope():
                    baseline = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    baseline.compile(loss="mse")
                baseline.fit(x, y, batch_size=32)
            """,
        ),
        # `main()` binds the helper's strategy (an IPU strategy in the port) only to print its replicas,
        # then calls `train()`, which gets a strategy and scope of its own: the IPU system is configured
        # before that first IPU strategy is made, not in `train()`.
        Example(
            """\
            import tensorflow as tf


            def get_strategy():
                return tf.distribute.MirroredStrategy()


            def train(x, y):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.fit(x, y, batch_size=32)


            def main():
                strategy = get_strategy()
                print("replicas:", strategy.num_replicas_in_sync)
                train(x, y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def get_strategy():
                return tf.distribute.MirroredStrategy()


            def train(x, y):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.fit(x, y, batch_size=32)


            def main():
                ipu_config = ipu.config.IPUConfig()
                ipu_config.auto_select_ipus = 1
                ipu_config.configure_ipu_system()
                strategy = get_strategy()
                print("replicas:", strategy.num_replicas_in_sync)
                train(x, y)
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            cfg = ipu.config.IPUConfig()
            cfg.auto_select_ipus = 2
            cfg.configure_ipu_system()
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.fit(x, y)
            """,
            reported=False,
        ),
        # The script selects its own IPUs, another number than `--ipus`: its configuration is kept
        # (a second one would reset it) and the option is said not to be applied.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            cfg = ipu.config.IPUConfig()
            cfg.auto_select_ipus = 2
            cfg.configure_ipu_system()
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.compile(optimizer="sgd", loss="mse")
                model.fit(dataset, epochs=2)
            """,
            options={"ipus": 4},
        ),
        # The same in SDK 2.0's form, which IPU010 upgrades.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            cfg = ipu.utils.create_ipu_config()
            cfg = ipu.utils.auto_select_ipus(cfg, num_ipus=args.ipus)
            ipu.utils.configure_ipu_system(cfg)
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            """,
            options={"ipus": 2},
        ),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            cfg = ipu.config.IPUConfig()
            cfg.auto_select_ipus = 4
            cfg.configure_ipu_system()
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            """,
            reported=False, options={"ipus": 4},
        ),
        # Model code in the branches of a choice of modes: the IPU system is configured once, before
        # the choice.
        Example(
            """\
            import tensorflow as tf


            def main(args):
                if args.mode == "train":
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile("sgd", "mse")
                    model.fit(x, y)
                else:
                    model = tf.keras.models.load_model(args.path)
                    model.evaluate(x, y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def main(args):
                ipu_config = ipu.config.IPUConfig()
                ipu_config.auto_select_ipus = 1
                ipu_config.configure_ipu_system()
                if args.mode == "train":
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile("sgd", "mse")
                    model.fit(x, y)
                else:
                    model = tf.keras.models.load_model(args.path)
                    model.evaluate(x, y)
            """,
        ),
        # A fold function that makes its own strategy, called per fold: the IPU system is configured
        # once, before the loop, not on every call.
        Example(
            """\
            import tensorflow as tf


            def run_fold(train_x, train_y):
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(optimizer="adam", loss="mse")
                return model.fit(train_x, train_y, epochs=2)


            for fold_x, fold_y in folds:
                run_fold(fold_x, fold_y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def run_fold(train_x, train_y):
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(optimizer="adam", loss="mse")
                return model.fit(train_x, train_y, epochs=2)


            ipu_config = ipu.config.IPUConfig()
            ipu_config.auto_select_ipus = 1
            ipu_config.configure_ipu_system()
            for fold_x, fold_y in folds:
                run_fold(fold_x, fold_y)
            """,
        ),
    )

    def run(self, ctx) -> None:
        plan = model_plan(ctx)
        if plan.configured or plan.has_ipu_strategy:
            self._report_overridden_ipus(ctx)
            return
        anchors = []
        if plan.strategy_statement is not None:
            anchors.extend(plan.strategy_config_anchors.get(id(statement), statement)
                           for statement in [plan.strategy_statement, *plan.more_strategy_statements])
        else:
            anchors.extend(config_anchors(ctx, plan))
        name = config_name(ctx)
        done = set()
        for anchor in anchors:
            if id(anchor) in done:
                continue
            done.add(id(anchor))
            if ctx.insert_before(anchor, config_statements(name, ctx.config.ipus)):
                ctx.report(self.code, anchor, f"IPU system configured with {ctx.config.ipus} IPU"
                           f"{'s' if ctx.config.ipus != 1 else ''} before the model code", fixed=True)
                ctx.add_import("tensorflow.python", "ipu", code=IpuImport.code)

    def _report_overridden_ipus(self, ctx) -> None:
        """The script already selects its IPUs, another number than the one asked for: the port
        keeps the script's configuration (a second one would reset it), and says so."""
        ipus = ctx.config.ipus
        for node, _ in ipus_option_overridden(ctx):
            ctx.report(self.code, node, f"the script selects its own IPUs (`{code_of(ctx, node)}`): the {ipus} IPUs "
                       "the port was asked for (`--ipus`) are not selected, and the replication they imply is "
                       "not applied; change the script's value to use them", fixed=False, severity=NOTE)


RULE = IpuConfig()
