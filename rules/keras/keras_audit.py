"""IPU190: the last check of a Keras port. A port may be partial, never falsely complete."""

from typing import Dict, Iterator, List, Optional, Set, Tuple

import libcst as cst

from porter.context import FileContext, bound_names, code_of, walk
from porter.cstutil import is_name, keyword
from porter.rule import ERROR, KERAS, WARN, WARNING, Example, Rule, is_selected
from porter.rules.keras._analysis.custom_loop import CALLER_DEPTH, covered, loop_plans, rewrites_loops
from porter.rules.keras._analysis.fit import METHODS as KERAS_METHODS, ONE_BATCH_METHODS
from porter.rules.keras._analysis.held_models import ADDERS, model_item
from porter.rules.keras._analysis.inline_step import inline_steps, moved
from porter.rules.keras._analysis.model_plan import (DISTRIBUTION_STRATEGIES, IPU_STRATEGIES, MODEL_BASES, Plan,
                                                    calls_by_name, in_regions, made_distribution_strategy, calls_of_method,
                                                    model_plan, project_trained_arguments, runs_model, without_compat)
from porter.rules.keras._analysis.project_trainers import kept_attributes
from porter.rules.keras._analysis.steps import made_with_variables, module_stateful_objects, trains
from porter.rules.keras._analysis.util import (SKLEARN_WRAPPERS, handed_to_callback, is_callback_method,
                                              mapped_node_ids, run_by_keras, subclasses_of, tuners)
from porter.rules.keras.custom_loop import RULE as CUSTOM_LOOP_RULE
from porter.rules.keras.ipu_config import RULE as CONFIG_RULE
from porter.rules.keras.strategy_scope import RULE as SCOPE_RULE, ScopeBlock, scope_receiver
from porter.scopes import (called_in_callers_scope, instance_class, is_module_function, loads, owner, owner_body,
                           project_callee, project_name, untraced_method, values_of)

# Builtins that give a lazy iterator calling their function on each item, and builtins that read
# such an iterator in the call that is given it.
_LAZY_MAPPERS = frozenset({"map", "filter"})
_CONSUMING_BUILTINS = frozenset({"list", "tuple", "set", "dict", "sorted", "sum", "min", "max", "any", "all"})

# What Keras does with a model of its own weights: compile it, train or run it.
_KERAS_RUNS = frozenset(KERAS_METHODS) | ONE_BATCH_METHODS

# How far up the chain of callers a training call may be covered (train() called by main() ...).
_DEPTH = 4



_DISTILLED_BY_MAP = """\
import tensorflow as tf
from tensorflow.python import ipu


def main(x, y):
    ipu_config = ipu.config.IPUConfig()
    ipu_config.auto_select_ipus = 1
    ipu_config.configure_ipu_system()
    strategy = ipu.ipu_strategy.IPUStrategy()
    with strategy.scope():
        teacher = tf.keras.Sequential([tf.keras.layers.Dense(10)])
        teacher.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
        teacher.fit(x, y, batch_size=32)
        soft = tf.data.Dataset.from_tensor_slices(x).batch(32, drop_remainder=True).map(
            lambda batch: (batch, tf.nn.softmax(teacher(batch, training=False))))
        student = tf.keras.Sequential([tf.keras.layers.Dense(10)])
        student.compile(optimizer="adam", loss="categorical_crossentropy")
        student.fit(soft, epochs=2)
"""


# Keras models wrapped for scikit-learn, which builds and fits them itself.
class KerasAudit(Rule):
    code = "IPU190"
    name = "keras-audit"
    kind = WARN
    frameworks = frozenset({KERAS})
    # What it reports makes the port incomplete.
    severity = ERROR
    # It judges what the other rules made of the file.
    after = ("IPU102", "IPU103", "IPU111")
    summary = "Report Keras model code the port leaves outside the IPU strategy: the port is not complete."
    rationale = (
        "A Keras program runs on the IPU only when the IPU system is configured first and the model is "
        "created, compiled and trained (`fit`, `evaluate`, `predict`) inside `IPUStrategy().scope()` "
        "(Graphcore, *Targeting the IPU from TensorFlow 2*, \"Keras with IPUs\"). Code outside the scope "
        "runs on the CPU, silently. After the other rules, this check looks at what the port will be: "
        "every training or prediction call must be inside the strategy's scope, directly or through the "
        "functions that call it, and every custom training loop must run its step through `strategy.run` "
        "(IPU111). The first call or loop that does not is reported (in a script ported by hand, with its own "
        "`IPUStrategy`, every such call), with what is missing (and, when "
        "a function that trains is called with a model the porter cannot see created, that call), so that a "
        "partial port is never taken for a complete one. A Keras model wrapped for scikit-learn "
        "(`KerasClassifier`) is built and trained by scikit-learn's calls, out of sight: it is reported too. So "
        "is a network that a function's model is built on (`keras.Model(backbone.input, head(backbone.output))`) "
        "made by a call out of that function and out of the scope: its weights would be made out of the scope. "
        "So is a metric object or a mixed-precision `LossScaleOptimizer` made at module level that such a "
        "function compiles its model with: its variables are made with it, out of the scope (Keras' `compile` "
        "refuses such a metric). "
        "So is a model made in the scope and trained or run there (a distillation's teacher) that a "
        "`dataset.map(...)` also runs (`lambda x: (x, teacher(x))`): tf.data runs the map on the host, out of "
        "the programs the IPU compiles, while the scope places the model's variables on the IPU; its answers "
        "belong in `predict`, before the dataset is made. "
        "A method the file never calls by name (`getattr(experiment, args.command)()`) runs where the objects "
        "of its class are made and used; when an object leaves the function that makes it (returned, kept "
        "elsewhere, put in a container), its methods are reported."
    )
    examples = (
        # A hand port whose IPU scope is in the function that builds the model, which its caller
        # trains and evaluates out of any scope: both calls are reported, not only the first.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def build():
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(loss="mse")
                return model


            def main(x, y):
                config = ipu.config.IPUConfig()
                config.configure_ipu_system()
                model = build()
                model.fit(x, y, batch_size=8)
                model.evaluate(x, y, batch_size=8)
            """,
        ),
        # A trainer of a library module, given its model by the scripts that import it and never
        # called here: reported, with what those scripts must do (the porter configures no IPU in
        # a helper). Ported with a project whose scripts call it in their IPU strategy's scope
        # (``Project.called_in_scope``), it is not.
        Example(
            """\
            import tensorflow as tf


            def train(model, dataset, epochs):
                model.compile(optimizer="sgd", loss="mse")
                return model.fit(dataset, epochs=epochs)
            """,
        ),
        # The same as a method of a library class, given its model when the scripts make its
        # objects (``Trainer(model).fit(ds, 2)``): reported; not when the project's scripts make
        # them and call ``fit`` in their IPU strategy's scope (``called_in_scope`` holds
        # ``Trainer`` and ``Trainer.fit``).
        Example(
            """\
            import tensorflow as tf


            class Trainer:
                def __init__(self, model):
                    self.model = model

                def fit(self, dataset, epochs):
                    self.model.compile(optimizer="sgd", loss="mse")
                    return self.model.fit(dataset, epochs=epochs)
            """,
        ),
        # A trainer class that makes its own strategy, with a model trained in main() before the
        # trainer is made: that model gets a second IPU strategy, and the trainer's is entered in
        # its scope. Reported.
        Example(
            """\
            import tensorflow as tf


            class Trainer:
                def __init__(self, strategy=None):
                    self.strategy = strategy or tf.distribute.MirroredStrategy()
                    with self.strategy.scope():
                        self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                        self.model.compile(loss="mse")


            def main(x, y):
                baseline = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                baseline.compile(loss="mse")
                baseline.fit(x, y, batch_size=32)
                trainer = Trainer()
                trainer.model.fit(x, y, batch_size=32)
            """,
        ),
        # The model of a trainer that keeps the strategy, taken out of it and run in main(): out of
        # any scope there. Reported, with the scope to enter: the trainer's, `trainer.strategy`.
        Example(
            """\
            import tensorflow as tf


            class Trainer:
                def __init__(self):
                    self.strategy = tf.distribute.MirroredStrategy()
                    with self.strategy.scope():
                        self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                        self.model.compile(loss="mse")


            def main(x, y):
                trainer = Trainer()
                model = trainer.model
                print(model.evaluate(x, y, batch_size=32))
            """,
        ),
        # A trainer's method called by `__init__` before it makes the strategy: no strategy is bound
        # when it runs (the port scopes only the methods that run once it is), and its `fit` trains
        # out of any scope. Reported.
        Example(
            """\
            import tensorflow as tf


            class Trainer:
                def __init__(self, x, y):
                    self.train(x, y)
                    self.strategy = tf.distribute.MirroredStrategy()
                    with self.strategy.scope():
                        self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                        self.model.compile(optimizer="sgd", loss="mse")

                def train(self, x, y):
                    self.model.fit(x, y, batch_size=32)
            """,
        ),
        # A strategy looked up in a table of strategy classes, entered around the model code the
        # port puts in a strategy of its own: the two would nest. Reported.
        Example(
            """\
            import tensorflow as tf

            STRATEGIES = {"mirrored": tf.distribute.MirroredStrategy, "default": tf.distribute.get_strategy}


            def main(kind, x, y):
                strategy = STRATEGIES[kind]()
                with strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(loss="mse")
                model.fit(x, y, batch_size=32)
            """,
        ),
        # A model scikit-learn builds and fits through a wrapper: out of the port's reach, reported.
        Example(
            """\
            import tensorflow as tf
            from sklearn.model_selection import cross_val_score
            from tensorflow.keras.wrappers.scikit_learn import KerasClassifier

            classifier = KerasClassifier(build_fn=make_net, epochs=10, batch_size=16)
            print(cross_val_score(classifier, features, labels, cv=5).mean())
            """,
        ),
        # The wrapper and scikit-learn's call in the scope a later model pulls them into: the samples
        # of each fold are still scikit-learn's choice.
        Example(
            """\
            import numpy as np
            import tensorflow as tf
            from sklearn.model_selection import cross_val_score
            from tensorflow.keras.wrappers.scikit_learn import KerasRegressor


            def make_net():
                net = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(1)])
                net.compile(optimizer="adam", loss="mse")
                return net


            features, prices = np.random.rand(640, 6), np.random.rand(640)
            regressor = KerasRegressor(build_fn=make_net, epochs=4, batch_size=32)
            print(cross_val_score(regressor, features, prices, cv=4).mean())
            final = make_net()
            final.fit(features, prices, epochs=4, batch_size=32)
            """,
        ),
        # A backbone made at module level for a model a function builds on it: the port scopes the
        # function, and cannot move the backbone into it.
        Example(
            """\
            import tensorflow as tf
            from backbones import make_backbone

            backbone = make_backbone("resnet50")


            def train(images, labels):
                scores = tf.keras.layers.Dense(5)(backbone.output)
                model = tf.keras.Model(backbone.input, scores)
                model.compile(optimizer="sgd", loss="mse")
                model.fit(images, labels, batch_size=32)
            """,
        ),
        Example(
            """\
import tensorflow as tf
from zoo import train


def main():
    train(epochs=3)
""",
            reported=False,
        ),
        Example(
            """\
import tensorflow as tf


def fit_model(model, x, y):
    model.fit(x, y, epochs=3, batch_size=32)
""",
        ),
        Example(
            """\
import tensorflow as tf


from tensorflow.python import ipu


def fit_model(model, x, y):
    model.fit(x, y, epochs=3, batch_size=32)


def main():
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.configure_ipu_system()
    strategy = ipu.ipu_strategy.IPUStrategy()
    with strategy.scope():
        net = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        net.compile(loss="mse")
        fit_model(net, x, y)
""",
            reported=False,
        ),
        # A method the file calls only through `getattr` (a command picked on the command line): it
        # runs on the objects of its class, all made and used in the scope. Not reported.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            class Experiment:
                def train(self):
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(loss="mse")
                    model.fit(x, y, batch_size=32)


            def main(command):
                config = ipu.config.IPUConfig()
                config.auto_select_ipus = 1
                config.configure_ipu_system()
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    experiment = Experiment()
                    getattr(experiment, command)()
            """,
            reported=False,
        ),
        # The same method when the object is returned from the scope: where it is used is out of
        # sight. Reported.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            class Experiment:
                def train(self):
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(loss="mse")
                    model.fit(x, y, batch_size=32)


            def make():
                config = ipu.config.IPUConfig()
                config.auto_select_ipus = 1
                config.configure_ipu_system()
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    return Experiment()


            getattr(make(), command)()
            """,
        ),
        # The same method when the object is put in a list made in the scope: the list's items are
        # used out of sight. Reported.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            class Experiment:
                def train(self):
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(loss="mse")
                    model.fit(x, y, batch_size=32)


            config = ipu.config.IPUConfig()
            config.auto_select_ipus = 1
            config.configure_ipu_system()
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                experiments = [Experiment()]
            for experiment in experiments:
                getattr(experiment, command)()
            """,
        ),
        # A helper named like the Keras method it calls: `model.evaluate(...)` is not a call of it,
        # and its one caller runs in the scope.
        Example(
            """\
import tensorflow as tf
from tensorflow.python import ipu


def evaluate(model, x, y):
    return model.evaluate(x, y, batch_size=32)


def main():
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.configure_ipu_system()
    strategy = ipu.ipu_strategy.IPUStrategy()
    with strategy.scope():
        net = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        net.compile(loss="mse")
        print(evaluate(net, x, y))
""",
            reported=False,
        ),
        # A lambda given to `LambdaCallback` runs inside `fit`, which is in the scope.
        Example(
            """\
import tensorflow as tf
from tensorflow.python import ipu

config = ipu.config.IPUConfig()
config.auto_select_ipus = 1
config.configure_ipu_system()
strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    net = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    net.compile(loss="mse")
    show = tf.keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: print(net.predict(probe)))
    net.fit(x, y, batch_size=32, callbacks=[show])
""",
            reported=False,
        ),
        # A lambda that `map` runs in the statement that reads the map (`list(...)`, a loop) runs
        # in the scope that holds that statement.
        Example(
            """\
import tensorflow as tf
from tensorflow.python import ipu


def train(model):
    model.compile(loss="mse")
    return model.fit(x, y, batch_size=32)


config = ipu.config.IPUConfig()
config.auto_select_ipus = 1
config.configure_ipu_system()
strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    nets = [tf.keras.Sequential([tf.keras.layers.Dense(1)]), tf.keras.Sequential([tf.keras.layers.Dense(2)])]
    histories = list(map(lambda net: train(net), nets))
""",
            reported=False,
        ),
        # A `map` read later, out of the scope, runs its lambda there.
        Example(
            """\
import tensorflow as tf
from tensorflow.python import ipu


def train(model):
    model.compile(loss="mse")
    return model.fit(x, y, batch_size=32)


config = ipu.config.IPUConfig()
config.auto_select_ipus = 1
config.configure_ipu_system()
strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    nets = [tf.keras.Sequential([tf.keras.layers.Dense(1)]), tf.keras.Sequential([tf.keras.layers.Dense(2)])]
    histories = map(lambda net: train(net), nets)
print(list(histories))
""",
        ),
        # So does a function given to a callback by name, and a method of a callback class derived
        # from one of the file's (text generated at the end of each epoch).
        Example(
            """\
import tensorflow as tf
from tensorflow.python import ipu

config = ipu.config.IPUConfig()
config.auto_select_ipus = 1
config.configure_ipu_system()
strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    net = tf.keras.Sequential([tf.keras.layers.Dense(4)])
    net.compile(loss="mse")


def generate(epoch, logs):
    print(net.predict(seed, verbose=0).argmax(-1))


class Base(tf.keras.callbacks.Callback):
    pass


class Sampler(Base):
    def on_epoch_end(self, epoch, logs=None):
        print(net.predict(seed, verbose=0).argmax(-1))


with strategy.scope():
    net.fit(x, y, batch_size=32, callbacks=[tf.keras.callbacks.LambdaCallback(on_epoch_end=generate), Sampler()])
""",
            reported=False,
        ),
        # A helper that a model class's `train_step` calls runs inside `fit`, where Keras runs it.
        Example(
            """\
import tensorflow as tf
from tensorflow.python import ipu


def shade(net, rays, training=True):
    return net(rays) if training else net.predict(rays, batch_size=64)


class Renderer(tf.keras.Model):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def train_step(self, data):
        rays, colours = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(colours, shade(self.net, rays))
        grads = tape.gradient(loss, self.net.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.net.trainable_variables))
        return {"loss": loss}


config = ipu.config.IPUConfig()
config.auto_select_ipus = 1
config.configure_ipu_system()
strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    renderer = Renderer(tf.keras.Sequential([tf.keras.layers.Dense(3)]))
    renderer.compile(optimizer="adam", loss="mse")
    renderer.fit(ray_batches, epochs=2)
    image = shade(renderer.net, test_rays, training=False)
""",
            reported=False,
        ),
        # The training function is also called with a model the porter cannot see created: the
        # call in main() is ported, the other is reported.
        Example(
            """\
import tensorflow as tf


def train(model, data):
    model.compile(optimizer="adam", loss="mse")
    model.fit(data, epochs=3)


def main():
    train(tf.keras.Sequential([tf.keras.layers.Dense(1)]), load())


def resume(trainer):
    train(trainer.model, load())
""",
        ),
        # A member of an ensemble (an item of a list of models) evaluated after the scope.
        Example(
            """\
import tensorflow as tf
from tensorflow.python import ipu

config = ipu.config.IPUConfig()
config.auto_select_ipus = 1
config.configure_ipu_system()
strategy = ipu.ipu_strategy.IPUStrategy()
members = []
with strategy.scope():
    for seed in range(3):
        member = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        member.compile(loss="mse")
        member.fit(x, y, batch_size=32)
        members.append(member)
print(members[0].evaluate(x, y))
""",
        ),
        # Models compared in a loop after the scope: the loop variable runs each of them.
        Example(
            """\
import tensorflow as tf
from tensorflow.python import ipu


def build(width):
    net = tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)])
    net.compile(loss="mse")
    return net


config = ipu.config.IPUConfig()
config.auto_select_ipus = 1
config.configure_ipu_system()
strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    baseline = build(8)
    baseline.fit(x, y, batch_size=32)
    wide = build(64)
    wide.fit(x, y, batch_size=32)
for name, candidate in [("baseline", baseline), ("wide", wide)]:
    print(name, candidate.evaluate(x, y))
""",
        ),
        # A tuner given the IPU strategy builds and trains its models in that strategy's scope
        # itself: its `search` and the look at what it found run out of the scope (a ported file).
        Example(
            """\
import keras_tuner as kt
import tensorflow as tf
from tensorflow.python import ipu


def build(hp):
    model = tf.keras.Sequential([tf.keras.layers.Dense(hp.Int("units", 8, 32, step=8)), tf.keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    return model


config = ipu.config.IPUConfig()
config.auto_select_ipus = 1
config.configure_ipu_system()
strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    tuner = kt.RandomSearch(build, objective="val_loss", max_trials=2, distribution_strategy=strategy)
tuner.search(x, y, batch_size=32, validation_data=(x_val, y_val))
best = tuner.get_best_hyperparameters(num_trials=1)[0]
""",
            reported=False,
        ),
        # Without the strategy, the tuner builds and trains its models out of the scope, on the CPU.
        Example(
            """\
import keras_tuner as kt
import tensorflow as tf
from tensorflow.python import ipu


def build(hp):
    model = tf.keras.Sequential([tf.keras.layers.Dense(hp.Int("units", 8, 32, step=8)), tf.keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    return model


config = ipu.config.IPUConfig()
config.auto_select_ipus = 1
config.configure_ipu_system()
strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    tuner = kt.RandomSearch(build, objective="val_loss", max_trials=2)
tuner.search(x, y, batch_size=32, validation_data=(x_val, y_val))
""",
        ),
        # A step that prints while it runs cannot be compiled (IPU111): the loop stays on the CPU.
        Example(
            """\
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.1)


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    print(loss.numpy())


for x, y in dataset:
    train_step(x, y)
""",
        ),
        # A metric made at module level, the model compiled with it in `train()`, which `main()`
        # calls: the port scopes `train()`, the metric's variables are made out of the scope.
        Example(
            """\
import tensorflow as tf

auc = tf.keras.metrics.AUC()


def train(x, y):
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=[auc])
    model.fit(x, y, batch_size=32)


def main():
    train(x, y)


main()
""",
        ),
        # A teacher trained in the scope, then run by the map that makes the student's soft targets:
        # tf.data runs it on the host, while its variables are on the IPU. Reported.
        Example(_DISTILLED_BY_MAP),
        # The soft targets computed by the teacher's `predict`, in the scope: nothing runs on the host.
        Example(_DISTILLED_BY_MAP.replace(
            """soft = tf.data.Dataset.from_tensor_slices(x).batch(32, drop_remainder=True).map(
            lambda batch: (batch, tf.nn.softmax(teacher(batch, training=False))))
        student = tf.keras.Sequential([tf.keras.layers.Dense(10)])
        student.compile(optimizer="adam", loss="categorical_crossentropy")
        student.fit(soft, epochs=2)""",
            """soft = tf.nn.softmax(teacher.predict(x, batch_size=32))
        student = tf.keras.Sequential([tf.keras.layers.Dense(10)])
        student.compile(optimizer="adam", loss="categorical_crossentropy")
        student.fit(x, soft, batch_size=32, epochs=2)"""), reported=False),
        Example(
            """\
from sklearn.linear_model import LogisticRegression
import tensorflow as tf

classifier = LogisticRegression().fit(features, labels)
""",
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        if self._wrapped_models(ctx):
            return  # scikit-learn builds and trains the model: that is what is missing
        self._outer_networks(ctx)
        self._compiled_objects(ctx)
        self._models_run_by_maps(ctx)
        if self._second_strategies(ctx) or self._foreign_scopes(ctx):
            return
        calls = _training_calls(ctx)
        if calls:
            plan = model_plan(ctx)
            coverage = _Coverage(ctx, plan)
            reported = False
            for call in calls:
                missing = coverage.missing(call)
                if missing is not None:
                    ctx.report(self.code, call, missing, fixed=False)
                    reported = True
                    # A program not ported has all its calls out: the first says so. A hand port
                    # with its own IPU strategy is complete but for these calls: each is named.
                    if not plan.has_ipu_strategy:
                        return
            if reported:
                return
        self._custom_loops(ctx)

    def _outer_networks(self, ctx) -> None:
        """``backbone = make_backbone()`` at module level, with the model built on it
        (``keras.Model(backbone.input, head(backbone.output))``) in a function the port scopes:
        the backbone's weights are made out of the IPU strategy's scope, and compiling the model
        fails. The port cannot move the statement into that function: reported."""
        plan = model_plan(ctx)
        for assign in plan.outer_networks:
            if in_regions(ctx, plan.regions, assign):
                continue
            names = ", ".join(f"`{code_of(ctx, target.target)}`" for target in assign.targets)
            ctx.report(self.code, assign, f"{names}, which the model is built on, is made outside the IPU strategy's "
                       "scope, so its weights are too (compiling the model fails): the port is not complete; make "
                       "it in the scope, where the model is built", fixed=False)

    def _models_run_by_maps(self, ctx) -> None:
        """``ds.map(lambda x, y: (x, teacher(x)))`` (a distillation's soft targets) with ``teacher``
        a model made in the IPU strategy's scope, and also compiled, trained or run by Keras there
        (not an augmentation or preprocessing stack, which no one fits): tf.data runs the map on
        the host, out of the programs the IPU compiles, while the scope places the model's
        variables on the IPU. The port cannot move the model's work: reported once per model, at
        the map's call of it."""
        plan = model_plan(ctx)
        coverage = _Coverage(ctx, plan)
        mapped = mapped_node_ids(ctx)
        # `teacher.fit(...)`, `teacher.predict(...)`: a model with weights of its own, not an augmentation stack.
        trained_or_run = {call.func.value.value for call in ctx.nodes(cst.Call) if isinstance(call.func, cst.Attribute)
                          and isinstance(call.func.value, cst.Name) and call.func.attr.value in _KERAS_RUNS}
        reported: Set[str] = set()
        for call in ctx.nodes(cst.Call):
            name = call.func.value if isinstance(call.func, cst.Name) else None
            if (id(call) not in mapped or name not in plan.model_like or name in reported
                    or name not in trained_or_run or not _made_in_scope(ctx, coverage, name)):
                continue
            reported.add(name)
            ctx.report(self.code, call, f"this `dataset.map(...)` runs `{name}`, a model made in the IPU strategy's "
                       "scope: tf.data runs the map on the host, out of the programs the IPU compiles, while the "
                       "scope places the model's variables on the IPU: the port is not complete; compute what the "
                       f"map needs before, with `{name}.predict(...)` (whole batches), and build the dataset from "
                       "its answers", fixed=False)

    def _compiled_objects(self, ctx) -> None:
        """``auc = keras.metrics.AUC()`` at module level, compiled with a model in a function the
        port scopes that runs out of the module's scope (called from another function): Keras'
        ``compile`` refuses a metric whose variables were made out of the model's strategy, and the
        loss scale of a ``LossScaleOptimizer`` made there is a variable of the host. The port cannot
        move the statement into that function: reported."""
        plan = model_plan(ctx)
        out_of_scope = {id(statement): (name, statement) for name, statement in _compiled_module_objects(ctx, plan)
                        if not in_regions(ctx, plan.regions, statement)}
        for name, statement in out_of_scope.values():
            ctx.report(self.code, statement, f"`{name}` is made outside the IPU strategy's scope, and the model "
                       "compiled with it in the scope: its variables are made with it, out of the model's strategy "
                       "(Keras' `compile` refuses a metric's; a loss-scale optimizer's stay on the host): the port is "
                       "not complete; make it in the scope, where the model is compiled", fixed=False)

    def _second_strategies(self, ctx) -> bool:
        """A class that makes its own strategy (``self.strategy = strategy or MirroredStrategy()``)
        while model code out of it, which the port cannot put in that strategy's scope, gets a
        second IPU strategy: entered one inside the other, they fail ("Mixing different
        tf.distribute.Strategy objects")."""
        plan = model_plan(ctx)
        for statement in plan.second_strategies:
            owner = code_of(ctx, ctx.enclosing(statement, cst.ClassDef).name)
            ctx.report(self.code, statement, f"`{owner}` makes its own strategy, and the model code out of it runs "
                       "in a second IPU strategy, which cannot be entered with it: the port is not complete; make "
                       f"one strategy before the model code and give it to `{owner}`, or use the scope of "
                       f"`{owner}`'s strategy after it is made", fixed=False)
        return bool(plan.second_strategies)

    def _foreign_scopes(self, ctx) -> bool:
        """``with trainer.strategy.scope():`` (a strategy made where the porter does not see it:
        a method, a table of strategy classes) kept by the port, and run inside the scope of the
        strategy the port makes for the model code around it. No code of the file names the port's
        new strategy, so the scope kept is another strategy's, and entering it inside the port's
        fails ("Mixing different tf.distribute.Strategy objects"). The first is reported."""
        plan = model_plan(ctx)
        if plan.has_ipu_strategy or plan.strategy_statement is not None or not plan.regions \
                or _may_be_current_strategy(ctx):
            return False
        coverage = _Coverage(ctx, plan)
        transparent = {id(with_node) for with_node in plan.transparent}
        replaced = {id(call) for call in plan.replaced_strategies}
        for with_node in ctx.nodes(cst.With):
            receiver = scope_receiver(with_node)
            made = receiver.value if isinstance(receiver, cst.NamedExpr) else receiver  # `(strategy := ...)`
            if receiver is None or id(with_node) in transparent or id(made) in replaced:
                continue
            if coverage.runs_in_scope(with_node):
                entered = code_of(ctx, receiver)
                ctx.report(self.code, with_node, f"`with {entered}.scope():` runs inside the scope of the IPU strategy "
                           f"the port makes for the model code around it (`{plan.strategy_name}`), and `{entered}` is "
                           "another strategy object: strategy scopes do not nest (a RuntimeError when it is entered), "
                           "so the port is not complete; make the strategy of "
                           f"`{entered}` the IPU strategy (`ipu.ipu_strategy.IPUStrategy()`, after the IPU "
                           "configuration) and run the model code in its scope only", fixed=False)
                return True
        return False

    def _wrapped_models(self, ctx) -> bool:
        """``KerasClassifier(build_fn=...)`` handed to scikit-learn: its ``fit`` builds and trains the
        model inside scikit-learn's calls (``cross_val_score``, ``GridSearchCV``). Out of the IPU
        strategy's scope it trains on the CPU; in it (a later model of the file can pull it in), the
        model is the IPU's, but scikit-learn chooses the samples of each fit and predict."""
        coverage = _Coverage(ctx, model_plan(ctx))
        for call, qualified in ctx.calls_to(*SKLEARN_WRAPPERS):
            wrapper = qualified.rsplit(".", 1)[1]
            if all(coverage.runs_in_scope(use) for use in _wrapper_uses(ctx, call)):
                ctx.report(self.code, call, f"`{wrapper}` builds and trains its Keras model inside scikit-learn's "
                           "calls, which run in the IPU strategy's scope, but scikit-learn chooses the samples of each "
                           "`fit` and `predict` (its folds and splits) and the IPU rejects a partial batch: make "
                           "every split a whole number of batches", fixed=False, severity=WARNING)
            else:
                ctx.report(self.code, call, f"`{wrapper}` builds and trains its Keras model inside scikit-learn's "
                           "calls, out of the IPU strategy's scope (it trains on the CPU): the port is not complete; "
                           "make those calls inside `with strategy.scope():`, with inputs of whole batches",
                           fixed=False)
            return True
        return False

    def _custom_loops(self, ctx) -> None:
        """A custom training loop the port leaves as it is (IPU111 reports why, or is not selected)
        trains on the CPU: the first one is reported."""
        rewritten = rewrites_loops(ctx, CUSTOM_LOOP_RULE.code)
        regions = model_plan(ctx).regions
        for inline in inline_steps(ctx):
            if inline.problem is not None or not rewritten:
                ctx.report(self.code, inline.statements[0], "the training step written inline in this loop "
                           f"{_not_run(ctx, regions, inline.statements[0])}: the port is not complete; run it as a "
                           "`@tf.function(jit_compile=True)` through `strategy.run(...)` inside `strategy.scope()`",
                           fixed=False)
                return
        for loop in loop_plans(ctx):
            if (loop.problem is not None or not rewritten) and trains(ctx, loop.step.function) and not (
                    rewritten and moved(ctx, loop.step.call)):
                name = loop.step.function.name.value
                ctx.report(self.code, loop.step.call, f"the custom training loop that calls `{name}` "
                           f"{_not_run(ctx, regions, loop.step.call)}: the port is not complete; run `{name}` as a "
                           "`@tf.function(jit_compile=True)` through `strategy.run(...)` inside `strategy.scope()`",
                           fixed=False)
                return


def _compiled_module_objects(ctx, plan: Plan) -> Iterator[Tuple[str, cst.BaseStatement]]:
    """``(name, statement)`` for the metrics and loss-scale optimizers made at module level that a
    ``compile(...)`` in the port's scope reads by that name."""
    made = module_stateful_objects(ctx)
    for call in ctx.nodes(cst.Call) if made else ():
        if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "compile"
                and in_regions(ctx, plan.regions, call)):
            continue
        for node in (node for arg in call.args for node in walk(arg.value) if type(node) is cst.Name):
            values = values_of(ctx, node) if node.value in made else []
            for statement, value in made.get(node.value, ()):
                if made_with_variables(ctx, value) and any(found is value for found in values):
                    yield node.value, statement


def _made_in_scope(ctx, coverage: "_Coverage", name: str) -> bool:
    """Whether an assignment of ``name`` runs in the IPU strategy's scope, directly or through its callers."""
    return any(isinstance(target.target, cst.Name) and target.target.value == name
               and coverage.runs_in_scope(assign)
               for assign in ctx.nodes(cst.Assign) for target in assign.targets)


def _wrapper_uses(ctx, wrapper: cst.Call) -> List[cst.CSTNode]:
    """The wrapper's construction and every use, in its function, of the names that hold it: the
    name it is assigned to (``estimator = KerasClassifier(...)``) or the list it is put in
    (``steps.append(("mlp", KerasRegressor(...)))``), and in turn the names given those
    (``pipeline = Pipeline(steps)``, ``search = GridSearchCV(estimator, ...)``): the calls of
    scikit-learn that fit it are among them."""
    scope = ctx.enclosing_function(wrapper)
    names = [name for name in ctx.nodes(cst.Name) if ctx.enclosing_function(name) is scope]
    named = wrapper.func.attr if isinstance(wrapper.func, cst.Attribute) else wrapper.func
    names = names[next((index for index, name in enumerate(names) if name is named), 0):]  # from it on
    uses: List[cst.CSTNode] = [wrapper]
    holders = set(_holders(ctx, wrapper))
    pending = list(holders)
    while pending:
        holder = pending.pop()
        for name in names:
            if name.value != holder or holder in _holders(ctx, name):
                continue  # (a name a statement assigns is where it is held, not a use)
            uses.append(name)
            for given in _holders(ctx, name) - holders:
                holders.add(given)
                pending.append(given)
    return uses


def _holders(ctx, node: cst.CSTNode) -> Set[str]:
    """The names the statement of ``node`` puts it (or what is made of it) in: the targets of an
    assignment whose value holds it, or the list of ``steps.append(...)`` given it."""
    for ancestor in (node, *ctx.ancestors(node)):
        parent = ctx.parent(ancestor)
        if isinstance(parent, cst.Assign) and ancestor is parent.value:
            return {name for target in parent.targets for name in bound_names(target.target)}
        if isinstance(parent, cst.Arg) and isinstance(ctx.parent(parent), cst.Call):
            func = ctx.parent(parent).func
            if isinstance(func, cst.Attribute) and func.attr.value in ADDERS and isinstance(func.value, cst.Name):
                return {func.value.value}
        if isinstance(parent, (cst.BaseStatement, cst.BaseSmallStatement)) or parent is None:
            break
    return set()


def _not_run(ctx, regions, node: cst.CSTNode) -> str:
    """How a training step the port leaves is run: in the scope the port puts around it (or
    around every call of the function that holds it), op by op; else out of the IPU strategy, on
    the CPU."""
    if covered(ctx, regions, node, CALLER_DEPTH):
        return ("is in the IPU strategy's scope but not compiled for the IPU and run through `strategy.run`, so it "
                "does not run as an IPU program")
    return "is left outside the IPU strategy (it trains on the CPU)"


def _training_calls(ctx) -> List[cst.Call]:
    """Calls that train or run a Keras model: ``fit``/``evaluate``/``predict``... on a
    model the file creates or compiles (or a part of one), what a tuner given a builder of the file
    runs, or calls with arguments only Keras takes."""
    plan = model_plan(ctx)
    return [call for call in ctx.nodes(cst.Call) if runs_model(call, plan) and call.func.attr.value != "compile"
            or _given_to_project_trainer(ctx, plan, call) is not None]


def _given_to_project_trainer(ctx, plan: Plan, call: cst.Call) -> Optional[str]:
    """The model that ``call`` hands to a function of another module of the project that trains it
    (``model`` of ``train_model(model, ds)``, after ``from trainer import train_model``), or None."""
    given = (arg.value.value for arg in project_trained_arguments(ctx, call) if isinstance(arg.value, cst.Name))
    return next((name for name in given if name in plan.model_like | plan.model_names), None)


class _Coverage:
    """Whether the port puts a call inside the IPU strategy's scope, and what is missing if not."""

    def __init__(self, ctx, plan: Plan) -> None:
        self.ctx = ctx
        self.plan = plan
        config = ctx.config
        self.scoped = is_selected(SCOPE_RULE.code, config.select, config.ignore)
        configures = is_selected(CONFIG_RULE.code, config.select, config.ignore) and (
            plan.regions or plan.strategy_statement is not None)
        self.configured = plan.configured or plan.has_ipu_strategy or bool(configures)
        self.models = subclasses_of(ctx, *MODEL_BASES)
        self.regions: Dict[int, List[range]] = {}
        for region in plan.regions:
            body = list(region.block.body)
            self.regions.setdefault(id(region.block), []).append(
                range(body.index(region.first), body.index(region.last) + 1))

    def missing(self, call: cst.Call) -> Optional[str]:
        what = _describe(self.ctx, call)
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        maker = self.plan.own_scope_models.get(receiver.value) if isinstance(receiver, cst.Name) else None
        if maker is not None and self._outside(call, _DEPTH, set()) is not None:
            return (f"{what} runs outside the IPU strategy's scope (on the CPU): the port is not complete; the model "
                    f"is built in the IPU strategy that `{maker}()` makes and enters: run this call in that scope "
                    f"(in `{maker}`, or return its strategy with the model and call `with strategy.scope():` here)")
        if not self.configured:
            outside = self._outside(call, _DEPTH, set())
            if outside is None:  # only through functions its project's files call in their IPU scope
                return None
            library = self._library_function(call, outside)
            if library is not None:
                return _library_message(self.ctx, what, library)
            return (f"{what} runs with no IPU system configured and outside an IPU strategy (on the CPU): "
                    "the port is not complete; configure the IPU system (`ipu.config.IPUConfig()`, "
                    "`configure_ipu_system()`) and create, compile and train the model inside "
                    "`with strategy.scope():` for an `ipu.ipu_strategy.IPUStrategy()`")
        outside = self._outside(call, _DEPTH, set())
        if outside is None:
            return None
        through = ""
        if outside is not call:
            through = f" when called through `{_short(self.ctx.module.code_for_node(outside))}`"
        kept = self._kept_strategy(call)
        if kept is not None:
            owner = self.ctx.enclosing(self.plan.strategy_statement, cst.ClassDef).name.value
            return (f"{what} runs outside the IPU strategy's scope (on the CPU){through}: the port is not complete; "
                    f"the model is `{owner}`'s, built in the IPU strategy it keeps in `{self.plan.strategy_name}`: "
                    f"run this call, and every other use of the model out of that scope, inside "
                    f"`with {kept}.scope():`")
        return (f"{what} runs outside the IPU strategy's scope (on the CPU){through}: the port is not complete; "
                "create, compile and train the model inside `with strategy.scope():`, directly or through the "
                "functions that call this code")

    def _kept_strategy(self, call: cst.Call) -> Optional[str]:
        """``trainer.strategy`` when the port's IPU strategy is kept by the objects of a class of the
        file (``self.strategy = ...``) and ``call`` runs the model of such an object, in its own
        function: ``trainer.model.evaluate(...)``, or ``model.evaluate(...)`` after ``model =
        trainer.model``. Entered around the call, that scope is the one the model was built in."""
        statement, kept = self.plan.strategy_statement, self.plan.strategy_name
        owner = self.ctx.enclosing(statement, cst.ClassDef) if statement is not None else None
        if owner is None or not kept.startswith("self.") or not isinstance(call.func, cst.Attribute):
            return None
        held = call.func.value
        if isinstance(held, cst.Name):
            values = values_of(self.ctx, held)
            held = values[0] if len(values) == 1 else None
        if not (isinstance(held, cst.Attribute) and isinstance(held.value, cst.Name)
                and held.value.value != "self" and instance_class(self.ctx, held.value) is owner):
            return None
        return f"{held.value.value}.{kept[len('self.'):]}"

    def runs_in_scope(self, node: cst.CSTNode) -> bool:
        """Whether the port runs ``node`` in the IPU strategy's scope, directly or through every
        call of its function."""
        return self.configured and (self.scoped or self.plan.has_ipu_strategy) and self._outside(
            node, _DEPTH, set()) is None

    def _outside(self, node: cst.CSTNode, depth: int, seen: Set[int]) -> Optional[cst.CSTNode]:
        """None when ``node`` runs in the scope, directly or through every call of its function;
        else where it does not: ``node`` itself or the first call of it that runs outside."""
        if self._in_scope(node) or self._in_lambda_callback(node) or self._tuner_enters_strategy(node):
            return None
        function = self.ctx.enclosing_function(node)
        if function is not None and (is_callback_method(self.ctx, function) or self._keras_step(function)):
            return None  # Keras calls it from `fit`/`evaluate`/`predict`, which are checked themselves
        if function is None or depth == 0 or id(function) in seen:
            return node
        seen.add(id(function))
        callers = self._callers(function)
        if not callers and called_in_callers_scope(self.ctx, function):
            return None  # the files of the project that import it call it in their IPU strategy's scope
        if not callers:
            # Given to a callback, it runs in `fit`/`evaluate`/`predict`, which are checked themselves.
            if handed_to_callback(self.ctx, function):
                return None
            # A method the file never calls by name (``getattr(Experiment(8), args.command)()``)
            # runs on the objects of its class, wherever they are used.
            uses = self._object_uses(function)
            return None if uses and all(self._outside(use, depth - 1, seen) is None for use in uses) else node
        for caller in callers:
            outside = self._outside(caller, depth - 1, seen)
            if outside is not None:
                return outside
        return None

    def _library_function(self, call: cst.Call, outside: cst.CSTNode) -> Optional[cst.FunctionDef]:
        """The module-level function that holds ``outside`` (where the file's port leaves ``call``
        out of any scope) when the file never calls it and it is a library function, which runs where
        the script importing it calls it: files of the project call it, or it is given the model
        ``call`` runs (``def train(model, ds): model.fit(ds)``). None otherwise."""
        function = self.ctx.enclosing_function(outside)
        while function is not None and project_name(self.ctx, function) is None:
            function = self.ctx.enclosing_function(function)
        if function is None or self._callers(function):
            return None
        project = self.ctx.project
        called = project.called_in_scope | {name for name, _ in project.called_outside}
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        given = isinstance(receiver, cst.Name) and is_module_function(self.ctx, function) and receiver.value in {
            param.name.value for param in function.params.params}
        return function if project_name(self.ctx, function) in called or given or self._kept_model_run(
            function, receiver) else None

    def _kept_model_run(self, method: cst.FunctionDef, receiver: Optional[cst.BaseExpression]) -> bool:
        """``self.model.fit(...)`` in a method of a class of the module that keeps the model its
        ``__init__`` is given and runs it (``Trainer(model)``): its objects are made elsewhere."""
        owner_class = self.ctx.parent(self.ctx.parent(method))
        return (isinstance(owner_class, cst.ClassDef) and isinstance(receiver, cst.Attribute)
                and is_name(receiver.value, "self") and receiver.attr.value in kept_attributes(self.ctx, owner_class))

    def _tuner_enters_strategy(self, node: cst.CSTNode) -> bool:
        """``tuner.search(...)``, ``tuner.get_best_models()``: a method of a tuner made with
        ``distribution_strategy=`` the IPU strategy. Keras Tuner builds and trains each model in
        that strategy's scope itself (a scope around ``search`` would end, as the tuner clears the
        Keras session), and its other methods build nothing."""
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                and isinstance(node.func.value, cst.Name)):
            return False
        made = tuners(self.ctx).get(node.func.value.value, [])
        return bool(made) and all(self._given_ipu_strategy(call) for call in made)

    def _given_ipu_strategy(self, tuner: cst.Call) -> bool:
        """The tuner made by ``tuner`` is given the IPU strategy: by the file, or by the port (in
        the model code it wraps, IPU103 adds ``distribution_strategy=``, or puts it in place of a
        strategy of ``tf.distribute`` made there)."""
        given = keyword(tuner, "distribution_strategy")
        if given is None or made_distribution_strategy(self.ctx, given.value):
            return self.scoped and in_regions(self.ctx, self.plan.regions, tuner)
        return self._ipu_strategy(given.value)

    def _ipu_strategy(self, node: cst.BaseExpression) -> bool:
        """The strategy the port makes, or a name bound only to an ``IPUStrategy()`` (a port's own)."""
        if not isinstance(node, cst.Name):
            return False
        values = values_of(self.ctx, node)
        return node.value == self.plan.strategy_name or bool(values) and all(
            isinstance(value, cst.Call) and self.ctx.qualified_name(value.func) in IPU_STRATEGIES for value in values)

    def _in_scope(self, node: cst.CSTNode) -> bool:
        """Inside an existing ``with ....scope():`` of an IPU program, or in a region the port wraps."""
        for ancestor in (node, *self.ctx.ancestors(node)):
            if isinstance(ancestor, cst.FunctionDef) or isinstance(ancestor, cst.Lambda) and not self._mapped_at_once(
                    ancestor):
                return False
            if self.plan.has_ipu_strategy and isinstance(ancestor, cst.With) and _is_scope(ancestor):
                return True
            if isinstance(ancestor, cst.With) and self._enters_owned_strategy(ancestor):
                return True
            block = self.ctx.block_of(ancestor) if isinstance(ancestor, cst.BaseStatement) else None
            if block is None or not self.scoped:
                continue
            index = block.body.index(ancestor)
            wrapped = [wrap for wrap in self.ctx.wraps.get(id(block), ()) if isinstance(wrap.build, ScopeBlock)]
            if any(wrap.start <= index <= wrap.end for wrap in wrapped):
                return True
            # A region's statement the scope's blocks leave out (a `try` that clears the Keras
            # session) runs out of the scope, unless a block inside it is wrapped (seen above).
            if not wrapped and any(index in extent for extent in self.regions.get(id(block), ())):
                return True
        return False

    def _mapped_at_once(self, lambda_node: cst.Lambda) -> bool:
        """``list(map(lambda m: train(m, x, y), models))``, ``for h in map(lambda m: ..., models):``:
        a lambda that ``map`` (or ``filter``) runs in the statement that holds it, as that statement
        consumes the lazy ``map`` there (given to a builtin that reads it all, or iterated)."""
        arg = self.ctx.parent(lambda_node)
        mapper = self.ctx.parent(arg) if isinstance(arg, cst.Arg) and arg.keyword is None else None
        if not (isinstance(mapper, cst.Call) and mapper.args and mapper.args[0] is arg
                and self._builtin(mapper.func, _LAZY_MAPPERS)):
            return False
        consumer = self.ctx.parent(mapper)
        if isinstance(consumer, (cst.For, cst.CompFor)):
            return consumer.iter is mapper
        reader = self.ctx.parent(consumer) if isinstance(consumer, cst.Arg) else None
        return isinstance(reader, cst.Call) and self._builtin(reader.func, _CONSUMING_BUILTINS)

    def _builtin(self, func: cst.BaseExpression, names: frozenset) -> bool:
        return isinstance(func, cst.Name) and func.value in names and self.ctx.qualified_name(func) is None

    def _enters_owned_strategy(self, with_node: cst.With) -> bool:
        """``with trainer.strategy.scope():`` (or ``self.strategy`` in its class) when the port made
        the strategy that an object of a class of the file keeps in that attribute the IPU
        strategy (``self.strategy = ...`` in ``__init__``, the program's one)."""
        statement = self.plan.strategy_statement
        receiver = scope_receiver(with_node)
        if statement is None or not isinstance(receiver, cst.Attribute) or not self.plan.strategy_name.startswith(
                "self."):
            return False
        owner = self.ctx.enclosing(statement, cst.ClassDef)
        return (owner is not None and receiver.attr.value == self.plan.strategy_name[len("self."):]
                and instance_class(self.ctx, receiver.value) is owner)

    def _in_lambda_callback(self, node: cst.CSTNode) -> bool:
        """In a lambda given to ``keras.callbacks.LambdaCallback``: Keras runs it from ``fit``, which
        is checked itself."""
        lambda_node = self.ctx.enclosing(node, cst.Lambda)
        arg = self.ctx.parent(lambda_node) if lambda_node is not None else None
        call = self.ctx.parent(arg) if isinstance(arg, cst.Arg) else None
        return isinstance(call, cst.Call) and self.ctx.keras_name(call.func) == "keras.callbacks.LambdaCallback"

    def _keras_step(self, function: cst.FunctionDef) -> bool:
        """A step of a Keras model class (``train_step``, ``call``...), or a method one calls:
        Keras runs it inside ``fit``/``evaluate``/``predict``."""
        owner = self.ctx.parent(self.ctx.parent(function))
        return isinstance(owner, cst.ClassDef) and owner.name.value in self.models and run_by_keras(
            function, owner, ("train_step", "test_step", "predict_step", "call"))

    def _object_uses(self, method: cst.FunctionDef) -> List[cst.CSTNode]:
        """Where the objects of the class ``method`` is a method of are made and used: each call
        that makes one, and each read of the name it is assigned to in that function (or module).
        Empty for a function, or when an object leaves the function that makes it where its uses
        cannot be followed: returned (made in a ``return``, or its name read in one), or assigned to
        anything but a name (``self.experiment = Experiment()``), or put in a container
        (``[Experiment()]``), which is not followed."""
        owner_class = self.ctx.parent(self.ctx.parent(method))
        if not isinstance(owner_class, cst.ClassDef):
            return []
        uses: List[cst.CSTNode] = []
        for call in calls_by_name(self.ctx).get(owner_class.name.value, []):
            if not isinstance(call.func, cst.Name):
                continue
            parent = self.ctx.parent(call)
            if isinstance(parent, (cst.Return, cst.Yield, cst.Element, cst.DictElement)):
                return []  # it leaves the function, or goes into a container its uses are not followed out of
            if isinstance(parent, cst.Assign):
                if len(parent.targets) != 1 or not isinstance(parent.targets[0].target, cst.Name):
                    return []
                name = parent.targets[0].target.value
                body = owner_body(owner(self.ctx, call))
                reads = [node for node in loads(body) if node.value == name
                         and self.ctx.enclosing_function(node) is self.ctx.enclosing_function(call)]
                if any(self.ctx.enclosing(read, cst.Return) is not None for read in reads):
                    return []
                uses.extend(reads)
            uses.append(call)
        return uses

    def _callers(self, function: cst.FunctionDef) -> List[cst.Call]:
        """The calls of ``function`` by its name: ``f(...)``, or ``x.f(...)`` for a method. Calls in
        the function itself are not its callers: in ``def evaluate(model, x)`` (a function, or a
        trainer's method), ``model.evaluate(x)`` is the Keras method of the same name; so is
        ``self.model.fit(...)`` in any method of a trainer class (``calls_of_method``)."""
        if isinstance(self.ctx.parent(self.ctx.parent(function)), cst.ClassDef):
            return calls_of_method(self.ctx, function)
        return [call for call in calls_by_name(self.ctx).get(function.name.value, []) if isinstance(call.func, cst.Name)
                and not any(ancestor is function for ancestor in self.ctx.ancestors(call))]


def _library_message(ctx, what: str, function: cst.FunctionDef) -> str:
    """What a call of a library function (one the file never calls itself) misses: the callers of
    that function must run it in the IPU strategy's scope; it must not configure the IPU itself,
    as it runs once per model, after its callers made theirs."""
    name = project_name(ctx, function)
    outside = sorted(path for called, path in ctx.project.called_outside if called == name)
    method = name.partition(".")[2]
    untraced = sorted({path for called, path in ctx.project.called_outside if method and called == f"?.{method}"})
    if outside:
        seen = f"{', '.join(f'`{path}`' for path in outside)} calls `{name}` outside the IPU strategy's scope"
    elif untraced:  # `make_trainer(cfg).fit(ds)`: an object of unknown class, which may be one of these
        seen = (f"{', '.join(f'`{path}`' for path in untraced)} calls `.{method}(...)` outside the IPU strategy's "
                f"scope on an object it cannot trace, which may be a `{name.partition('.')[0]}`")
    else:
        seen = f"no file of its project is seen to call `{name}` inside an IPU strategy's scope"
    return (f"{what} runs where `{name}` is called, and {seen} (on the CPU): the port is not complete; "
            f"call `{name}` inside `with strategy.scope():` for an `ipu.ipu_strategy.IPUStrategy()`, in the "
            "script that calls it, after it configures the IPU system and with the model created in that "
            "scope (not in this function, which may run more than once)")


def calls_in_scope(ctx: FileContext, module: str) -> Dict[str, bool]:
    """For each function of the project's module ``module`` that the code of ``ctx`` (another
    module of the project, as ported) calls (``trainer.train(model, ds)``, ``train(model, ds)`` after
    ``from trainer import train``): whether every such call runs inside the IPU strategy's scope,
    directly or through every call of the function that holds it; the same for the methods of its
    classes called on the objects ``text`` makes of them (``Trainer.fit``), and, as ``?.fit``, for
    the calls of a method on an object it cannot trace. A file with no IPU strategy of its own (not
    ported) calls them out of any."""
    found: Dict[str, bool] = {}
    plan = coverage = None
    for call in ctx.nodes(cst.Call):
        called = project_callee(ctx, call) or untraced_method(ctx, call)
        if called is None or called.partition(".")[0] not in (module, "?"):
            continue
        plan = plan or model_plan(ctx)
        coverage = coverage or _Coverage(ctx, plan)
        function = called if called.startswith("?.") else called.partition(".")[2]
        found[function] = found.get(function, True) and plan.has_ipu_strategy and coverage.runs_in_scope(call)
    return found


def _may_be_current_strategy(ctx) -> bool:
    """Whether the strategies the file makes where the port does not see them may all be the
    strategy in scope when they are made: ``tf.distribute.get_strategy`` handed on uncalled (a
    dataclass field's ``default_factory``), and no strategy class handed on so (a table of
    choices). Made inside the port's scope, ``get_strategy()`` gives the IPU strategy."""
    handed = {without_compat(ctx.qualified_name(node)) for node_type in (cst.Attribute, cst.Name)
              for node in ctx.nodes(node_type)
              if not isinstance(ctx.parent(node), (cst.Call, cst.Attribute, cst.ImportAlias))}
    strategies = handed & DISTRIBUTION_STRATEGIES
    return strategies == {"tensorflow.distribute.get_strategy"}


def _is_scope(with_node: cst.With) -> bool:
    return any(isinstance(item.item, cst.Call) and isinstance(item.item.func, cst.Attribute)
               and item.item.func.attr.value == "scope" for item in with_node.items)


def _short(code: str, width: int = 60) -> str:
    """Code on one line, cut to ``width`` characters."""
    line = " ".join(code.split())
    return line if len(line) <= width else line[:width - 3] + "..."


def _describe(ctx, call: cst.Call) -> str:
    """``model.fit()``, ``models[0].evaluate()``: the call, by its receiver and method."""
    func = call.func
    trained = _given_to_project_trainer(ctx, model_plan(ctx), call)
    if trained is not None:  # `train_model(model, ds)`, of another module of the project
        return f"`{_short(ctx.module.code_for_node(func), 30)}()`, which runs `{trained}`,"
    receiver = func.value if isinstance(func, cst.Attribute) else None
    shown = _short(ctx.module.code_for_node(receiver), 30) if isinstance(receiver, cst.Name) or model_item(
        receiver, model_plan(ctx).model_collections) else ""
    method = func.attr.value if isinstance(func, cst.Attribute) else "call"
    return f"`{shown}.{method}()`"


RULE = KerasAudit()
