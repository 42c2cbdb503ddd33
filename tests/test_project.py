"""What the files ported together tell about each other (porter.project, porter.api.projects): which functions of a
module return a strategy its port makes an IPUStrategy, and how another file names them."""

from __future__ import annotations

import libcst as cst
import pytest
from repo_util import CUSTOM_LOOP_TRAINER
from repo_util import TRAINER_CLASS as LIBRARY_TRAINER_CLASS  # (this file's adds a method, `tune`)

from porter.config import Config
from porter.context import FileContext
from porter.files import Source, read
from porter.api import imported_neighbours, projects, with_callers
from porter.engine import port
from porter.project import ALONE, Project
from porter.rules.keras._analysis.project_batches import whole_batch_makers
from porter.rules.keras._analysis.project_trainers import trained_parameters
from porter.rules.keras.strategy_scope import project_names, strategy_factories

TPU_OR_MIRRORED = """\
import tensorflow as tf


def detect_strategy():
    try:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver()
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
        strategy = tf.distribute.TPUStrategy(resolver)
    except ValueError:
        strategy = tf.distribute.MirroredStrategy()
    return strategy


def replicas_or_default(many):
    return tf.distribute.MirroredStrategy() if many else tf.distribute.get_strategy()


def given_or_mirrored(strategy=None):
    if strategy is None:
        strategy = tf.distribute.MirroredStrategy()
    return strategy


def maybe_mirrored(many):
    if many:
        return tf.distribute.MirroredStrategy()
    return None


def describe(strategy):
    return strategy.num_replicas_in_sync
"""


def test_functions_that_return_a_strategy_they_make_on_every_path():
    # A parameter's strategy is the caller's, and None is no strategy: neither function counts.
    assert strategy_factories(TPU_OR_MIRRORED, Config()) == {"detect_strategy", "replicas_or_default"}


def test_no_strategy_function_when_its_strategies_are_left_as_they_are():
    assert strategy_factories(TPU_OR_MIRRORED, Config(ignore=("IPU103",))) == set()
    suppressed = TPU_OR_MIRRORED.replace("        strategy = tf.distribute.MirroredStrategy()\n",
                                         "        strategy = tf.distribute.MirroredStrategy()  # ipu-port: ignore[IPU103]\n", 1)
    assert strategy_factories(suppressed, Config()) == {"replicas_or_default"}
    assert strategy_factories("def pick():\n    return 1\n", Config()) == set()
    assert strategy_factories("import tensorflow as tf\ndef pick(:\n", Config()) == set()


def test_an_ipu_strategy_already_made_counts():
    ported = "from tensorflow.python import ipu\n\n\ndef pick():\n    return ipu.ipu_strategy.IPUStrategy()\n"
    assert strategy_factories(ported, Config()) == {"pick"}


@pytest.mark.parametrize("imports, call", [
    ("from common import pick", "pick()"),
    ("from .common import pick", "pick()"),
    ("from .common import pick as choose", "choose()"),
    ("from . import common", "common.pick()"),
    ("from .. import common as C", "C.pick()"),
    ("from pkg import common", "common.pick()"),
    ("import pkg.common", "pkg.common.pick()"),
    ("import common as C", "C.pick()"),
])
def test_a_call_names_a_function_of_a_module_of_the_project(imports, call):
    ctx = FileContext(cst.parse_module(f"{imports}\nstrategy = {call}\n"), Config())
    assert ctx.project_function(ctx.nodes(cst.Call)[0].func) == "common.pick"


def test_a_rebound_name_is_not_the_imported_function():
    ctx = FileContext(cst.parse_module("from .common import pick\npick = make_picker()\nstrategy = pick()\n"), Config())
    assert ctx.project_function(ctx.nodes(cst.Call)[1].func) is None


def test_each_file_learns_the_strategy_functions_of_the_modules_it_imports():
    sources = {
        "proj/common.py": Source(TPU_OR_MIRRORED, "utf-8"),
        "proj/train.py": Source("import tensorflow as tf\nfrom common import detect_strategy\n", "utf-8"),
        "proj/other.py": Source("import tensorflow as tf\nimport helpers\n", "utf-8"),
    }
    told = projects(sources, {path: Config() for path in sources})
    assert told == {"proj/train.py": Project(strategy_factories=frozenset(
        {"common.detect_strategy", "common.replicas_or_default"}))}
    assert told.get("proj/other.py", ALONE) == ALONE


OVERRIDING_MODELS = """\
from tensorflow import keras


class Critic(keras.Model):
    def call(self, x):
        return x


class PairGAN(keras.Model):
    def train_step(self, data):
        return {}
"""


def test_each_file_learns_the_model_classes_of_its_imports_that_override_train_step():
    sources = {
        "proj/gans.py": Source(OVERRIDING_MODELS, "utf-8"),
        "proj/train.py": Source("import tensorflow as tf\nfrom gans import PairGAN\n", "utf-8"),
    }
    told = projects(sources, {path: Config() for path in sources})
    assert told == {"proj/train.py": Project(keras_import=True, overriding_classes=frozenset({"gans.PairGAN"}))}


BATCH_LOADERS = """\
import math

from tensorflow import keras


class BatchLoader(keras.utils.Sequence):
    def __len__(self):
        return math.ceil(len(self.rows) / 16)

    def __getitem__(self, index):
        return self.rows[index * 16:(index + 1) * 16]


def windows(rows, size):
    while True:
        yield rows[:size]


class Reader:
    def rows(self):
        yield from self.lines
"""

TRAIN_ON_LOADERS = """\
from tensorflow import keras

from loaders import BatchLoader, windows

model = keras.models.load_model("rows.keras")
train = BatchLoader()
model.fit(train, epochs=2)
model.fit(windows(rows, 16), steps_per_epoch=10)
"""


def test_each_file_learns_the_sequences_and_generators_of_its_imports():
    sources = {"proj/loaders.py": Source(BATCH_LOADERS, "utf-8"), "proj/train.py": Source(TRAIN_ON_LOADERS, "utf-8")}
    told = projects(sources, {path: Config() for path in sources})
    assert told == {"proj/train.py": Project(keras_import=True, sequence_classes=frozenset({"loaders.BatchLoader"}),
                                             generator_functions=frozenset({"loaders.windows"}))}


def test_a_sequence_or_generator_of_the_project_given_to_fit_is_reported_as_such():
    project = Project(keras_import=True, sequence_classes=frozenset({"loaders.BatchLoader"}),
                      generator_functions=frozenset({"loaders.windows"}))
    result = port(TRAIN_ON_LOADERS, Config(), project=project)
    found = [(finding.code, finding.line, finding.message.split(":")[0]) for finding in result.findings
             if finding.code in ("IPU105", "IPU151")]
    assert found == [("IPU151", 7, "`fit()` gets a `keras.utils.Sequence`"),
                     ("IPU151", 8, "`fit()` gets a Python generator")]


IPU_SETUP = """\
from tensorflow.python import ipu


def make_strategy(num_ipus=1):
    cfg = ipu.config.IPUConfig()
    cfg.auto_select_ipus = num_ipus
    cfg.configure_ipu_system()
    return ipu.ipu_strategy.IPUStrategy()


def plain_strategy():
    return ipu.ipu_strategy.IPUStrategy()
"""

TRAIN_IN_SETUP_STRATEGY = """\
import tensorflow as tf
from ipu_setup import {factory}


def main(x, y):
    strategy = {factory}()
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
        model.compile(optimizer="adam", loss="mse")
        model.fit(x, y, batch_size=16, epochs=2)
"""


def test_a_strategy_from_a_function_of_the_project_that_configures_the_ipu_is_not_configured_again():
    train = TRAIN_IN_SETUP_STRATEGY.format(factory="make_strategy")
    sources = {"proj/ipu_setup.py": Source(IPU_SETUP, "utf-8"), "proj/train.py": Source(train, "utf-8")}
    project = projects(sources, {path: Config() for path in sources})["proj/train.py"]
    assert project.configuring_factories == frozenset({"ipu_setup.make_strategy"})
    result = port(train, Config(), project=project)
    assert "IPUConfig" not in result.source and "ipu_strategy.scope()" not in result.source
    assert [finding.code for finding in result.findings if finding.code in ("IPU102", "IPU103")] == []


def test_a_strategy_from_a_function_of_the_project_that_does_not_configure_the_ipu_is_configured_first():
    train = TRAIN_IN_SETUP_STRATEGY.format(factory="plain_strategy")
    sources = {"proj/ipu_setup.py": Source(IPU_SETUP, "utf-8"), "proj/train.py": Source(train, "utf-8")}
    project = projects(sources, {path: Config() for path in sources})["proj/train.py"]
    result = port(train, Config(), project=project)
    assert "    ipu_config.configure_ipu_system()\n    strategy = plain_strategy()\n" in result.source
    assert "ipu_strategy.scope()" not in result.source


def test_a_script_ported_alone_reads_the_modules_it_imports_from_beside_it(tmp_path):
    # As pre-commit passes it: the script alone, its project's modules beside it, read as they are.
    (tmp_path / "ipu_setup.py").write_text(IPU_SETUP)
    (tmp_path / "plots.py").write_text("import matplotlib\n")
    train = tmp_path / "train.py"
    train.write_text(TRAIN_IN_SETUP_STRATEGY.format(factory="make_strategy") + "import plots\nimport numpy\n")
    sources = {str(train): read(str(train))}
    neighbours, configs = imported_neighbours(sources, {str(train): Config()})
    assert sorted(neighbours) == [str(tmp_path / "ipu_setup.py"), str(tmp_path / "plots.py")]
    told = projects({**sources, **neighbours}, {str(train): Config(), **configs}, read_only=neighbours.keys())
    assert list(told) == [str(train)]  # the modules read are not ported
    assert told[str(train)].configuring_factories == frozenset({"ipu_setup.make_strategy"})


def test_a_module_read_as_it_is_gives_only_the_ipu_strategies_it_already_returns():
    # Not ported with the script, its MirroredStrategy stays one: the script cannot take it for
    # the IPU strategy.
    sources = {"proj/common.py": Source(TPU_OR_MIRRORED, "utf-8"),
               "proj/train.py": Source("from common import detect_strategy\nimport tensorflow\n", "utf-8")}
    configs = {path: Config() for path in sources}
    assert projects(sources, configs)["proj/train.py"].strategy_factories
    assert projects(sources, configs, read_only={"proj/common.py"}).get("proj/train.py", ALONE).strategy_factories \
        == frozenset()


TRAINER = """\
import tensorflow as tf


def train_model(model, dataset, epochs=2):
    model.compile(optimizer="adam", loss="mse")
    return model.fit(dataset, epochs=epochs)


def score(net, dataset):
    return net.evaluate(dataset)


def run_all(model, dataset):
    train_model(model, dataset)
    return score(model, dataset)


def describe(model):
    return model.name
"""

HAND_PORTED_TRAIN = """\
import tensorflow as tf
from tensorflow.python import ipu

import trainer
from trainer import train_model

cfg = ipu.config.IPUConfig()
cfg.configure_ipu_system()


def main(ds):
    strategy = ipu.ipu_strategy.IPUStrategy()
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    train_model(model, ds, epochs=3)
    print(trainer.score(net=model, dataset=ds))
"""


def test_each_file_learns_the_functions_of_its_imports_that_train_a_model_they_are_given():
    sources = {"proj/trainer.py": Source(TRAINER, "utf-8"), "proj/train.py": Source(HAND_PORTED_TRAIN, "utf-8")}
    told = projects(sources, {path: Config() for path in sources})
    # (`score` only evaluates what it is given: a model for a model of the file, not what says one is)
    assert told["proj/train.py"].trainers == frozenset({
        ("trainer.train_model", "model", 0, True), ("trainer.score", "net", 0, False),
        ("trainer.run_all", "model", 0, True)})


def test_a_hand_port_brings_the_calls_that_train_its_model_in_another_module_into_its_scope():
    sources = {"proj/trainer.py": Source(TRAINER, "utf-8"), "proj/train.py": Source(HAND_PORTED_TRAIN, "utf-8")}
    project = projects(sources, {path: Config() for path in sources})["proj/train.py"]
    result = port(HAND_PORTED_TRAIN, Config(), project=project)
    assert ("    with strategy.scope():\n        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
            "        train_model(model, ds, epochs=3)\n        print(trainer.score(net=model, dataset=ds))\n"
            ) in result.source
    assert [(finding.code, finding.message.split(" ran ")[0]) for finding in result.findings] == [
        ("IPU103", "`train_model()`, `trainer.score()` after `with strategy.scope():`")]


def test_calls_that_train_a_model_in_another_module_out_of_the_scope_are_reported_by_name():
    built_apart = HAND_PORTED_TRAIN.replace("def main(ds):\n", "def build():\n").replace(
        "    train_model(model, ds", "    return model\n\n\ndef main(ds):\n    model = build()\n    train_model(model, ds")
    project = Project(keras_import=True, trainers=frozenset({("trainer.train_model", "model", 0, True),
                                                             ("trainer.score", "net", 0, False)}))
    result = port(built_apart, Config(), project=project)
    assert result.source == built_apart
    assert [(finding.code, finding.line, finding.message.split(" outside ")[0]) for finding in result.findings] == [
        ("IPU190", 20, "`train_model()`, which runs `model`, runs"),
        ("IPU190", 21, "`trainer.score()`, which runs `model`, runs")]


def test_a_script_that_trains_its_model_in_another_module_gets_the_scope_around_those_calls():
    script = "import tensorflow as tf\nfrom trainer import train_model\n\n\ndef main(ds):\n" \
             "    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n    train_model(model, ds)\n"
    project = Project(keras_import=True, trainers=frozenset({("trainer.train_model", "model", 0, True)}))
    result = port(script, Config(), project=project)
    assert "    with strategy.scope():\n        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n" \
           "        train_model(model, ds)\n" in result.source


LIBRARY = """\
import tensorflow as tf


def train(model, dataset):
    model.compile(optimizer="sgd", loss="mse")
    return model.fit(dataset, epochs=2)


def score(model, dataset):
    return model.evaluate(dataset)
"""

SCOPED_CALLER = """\
import tensorflow as tf
from tensorflow.python import ipu

import lib


def main(dataset):
    config = ipu.config.IPUConfig()
    config.configure_ipu_system()
    strategy = ipu.ipu_strategy.IPUStrategy()
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        run(model, dataset)
    print(lib.score(model, dataset))


def run(model, dataset):
    lib.train(model, dataset)
"""


def test_a_library_learns_which_of_its_functions_its_callers_run_in_the_ipu_scope():
    # `train` through a function called in the scope; `score` after it; an unported script
    # (no IPU strategy of its own) calls out of any scope, whatever its port would do.
    unported = "import tensorflow as tf\nfrom lib import train\n\n\ndef main(model, ds):\n    train(model, ds)\n"
    project = with_callers(ALONE, "proj/lib.py", {"proj/main.py": (SCOPED_CALLER, Config())})
    assert (project.called_in_scope, project.called_outside) == ({"train"}, {("score", "proj/main.py")})
    project = with_callers(ALONE, "proj/lib.py", {"proj/main.py": (SCOPED_CALLER, Config()),
                                                  "proj/other.py": (unported, Config())})
    assert (project.called_in_scope, project.called_outside) == (
        frozenset(), {("score", "proj/main.py"), ("train", "proj/other.py")})


def test_a_library_whose_callers_run_it_in_the_ipu_scope_gets_no_audit_error():
    project = Project(called_in_scope=frozenset({"train"}), called_outside=frozenset({("score", "proj/main.py")}))
    found = [(finding.code, finding.line, finding.message.split(" (on the CPU)")[0])
             for finding in port(LIBRARY, Config(), project=project).findings if finding.code == "IPU190"]
    assert found == [("IPU190", 10, "`model.evaluate()` runs where `score` is called, and `proj/main.py` calls "
                                    "`score` outside the IPU strategy's scope")]
    assert [finding for finding in port(LIBRARY, Config(), project=Project(called_in_scope=frozenset(
        {"train", "score"}))).findings if finding.code == "IPU190"] == []


CUSTOM_LOOP_LIBRARY = CUSTOM_LOOP_TRAINER + """

def run_twice(net, dataset):
    fit_custom(net, dataset, 1)
    fit_custom(net, dataset, 1)
"""


def test_a_function_whose_custom_loop_differentiates_a_model_it_is_given_trains_it():
    assert trained_parameters(CUSTOM_LOOP_LIBRARY, Config()) == [
        ("fit_custom", "model", 0, True), ("run_twice", "net", 0, True)]


OWNING_LIBRARY = """\
import tensorflow as tf


def compile_and_fit(build_fn, dataset):
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        model = build_fn()
        model.compile(optimizer="sgd", loss="mse")
    return model.fit(dataset, epochs=2)
"""

BUILDER_HANDED_OVER = """\
import tensorflow as tf

from train_lib import compile_and_fit


def build():
    return tf.keras.Sequential([tf.keras.layers.Dense(1)])


def main(dataset):
    history = compile_and_fit(build, dataset)
    print(history.history["loss"])
"""


def test_a_library_function_that_enters_a_strategy_it_makes_owns_it():
    # Read as it is (not ported with its callers), its MirroredStrategy stays: it owns no IPU strategy.
    assert project_names(OWNING_LIBRARY, Config())[3] == {"compile_and_fit"}
    assert project_names(OWNING_LIBRARY, Config(), as_is=True)[3] == set()


def test_a_builder_handed_to_a_library_function_with_a_strategy_of_its_own_gets_no_second_scope():
    owners = Project(keras_import=True, strategy_owners=frozenset({"train_lib.compile_and_fit"}))
    assert port(BUILDER_HANDED_OVER, Config(), project=owners).source == BUILDER_HANDED_OVER
    assert "    with strategy.scope():\n        history = compile_and_fit(build, dataset)\n" in port(
        BUILDER_HANDED_OVER, Config(), project=Project(keras_import=True)).source


def test_the_model_a_strategy_owning_function_returns_is_run_only_in_its_scope():
    # `summary()` does not run the model; `evaluate` outside the scope it was built in would, on the CPU.
    owners = Project(keras_import=True, strategy_owners=frozenset({"train_lib.compile_and_fit"}))
    returned = BUILDER_HANDED_OVER.replace("    history = compile_and_fit(build, dataset)\n",
                                           "    model, history = compile_and_fit(build, dataset)\n    model.summary()\n")
    assert port(returned, Config(), project=owners).findings == ()
    evaluated = returned + "    model.evaluate(dataset, steps=4)\n"
    result = port(evaluated, Config(), project=owners)
    assert result.source == evaluated
    assert [(finding.code, finding.line, finding.message.split(": ")[-1]) for finding in result.findings
            if finding.code == "IPU190"] == [
        ("IPU190", 14, "run this call in that scope (in `compile_and_fit`, or return its strategy with the model "
                       "and call `with strategy.scope():` here)")]


DATASET_TRAINER = """\
import tensorflow as tf


def train(model, train_ds, val_ds, epochs=2):
    model.compile(optimizer="sgd", loss="mse")
    model.fit(train_ds, validation_data=val_ds, epochs=epochs)
"""

WHOLE_BATCHES_CALLER = """\
import tensorflow as tf

from data import load
from trainer import train


def batches(x, y):
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(8, drop_remainder=True).prefetch(2)


def main(model, x, y):
    train_ds = load("train")
    train(model, train_ds, val_ds=batches(x, y))
"""


def test_a_library_learns_which_datasets_its_callers_give_in_whole_batches():
    makers = whole_batch_makers("import tensorflow as tf\n\n\ndef load(split):\n    ds = tf.data.Dataset.range(64)\n"
                                "    return ds.batch(32, drop_remainder=True)\n\n\ndef raw():\n"
                                "    return tf.data.Dataset.range(64).batch(32)\n", Config())
    assert makers == {"load"}
    project = with_callers(ALONE, "proj/trainer.py", {"proj/main.py": (WHOLE_BATCHES_CALLER, Config())},
                           {"data.load"})
    assert project.batched_calls == {("train", (False, True), frozenset({("val_ds", True)}))}
    assert [finding.code for finding in port(DATASET_TRAINER, Config(), project=project).findings
            if finding.code == "IPU105"] == []


def test_a_dataset_parameter_stays_reported_when_a_caller_gives_one_of_unknown_batches():
    unknown = WHOLE_BATCHES_CALLER.replace('val_ds=batches(x, y)', 'val_ds=make_val()')
    project = with_callers(ALONE, "proj/trainer.py", {"proj/main.py": (WHOLE_BATCHES_CALLER, Config()),
                                                      "proj/other.py": (unknown, Config())}, {"data.load"})
    reported = [finding.message.split(":")[0] for finding in port(DATASET_TRAINER, Config(), project=project).findings
                if finding.code == "IPU105"]
    assert reported == ["`fit` gets `val_ds` from the parameter `val_ds` of `train`"]
    # `data.load` not known to batch whole: its dataset is of unknown batches too.
    project = with_callers(ALONE, "proj/trainer.py", {"proj/main.py": (WHOLE_BATCHES_CALLER, Config())})
    assert len([finding for finding in port(DATASET_TRAINER, Config(), project=project).findings
                if finding.code == "IPU105"]) == 1


TRAINER_CLASS = LIBRARY_TRAINER_CLASS + """
    def tune(self, dataset):
        return self.model.fit(dataset, epochs=1)
"""

CLASS_CALLER = """\
import tensorflow as tf
from tensorflow.python import ipu

from data import load
from trainer import Trainer


def main():
    config = ipu.config.IPUConfig()
    config.configure_ipu_system()
    strategy = ipu.ipu_strategy.IPUStrategy()
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        trainer = Trainer(model, tf.keras.optimizers.Adam())
        trainer.fit(load("train"), load("val"), 2)
    trainer.tune(load("extra"))
"""


def test_a_library_learns_which_methods_of_its_classes_its_callers_run_in_the_ipu_scope():
    # The objects the caller makes of the class, and the methods it calls on them: `fit` in the
    # scope, `tune` after it; making the object (`Trainer(...)`) runs `__init__`.
    project = with_callers(ALONE, "proj/trainer.py", {"proj/main.py": (CLASS_CALLER, Config())}, {"data.load"})
    assert (project.called_in_scope, project.called_outside) == (
        {"Trainer", "Trainer.fit"}, {("Trainer.tune", "proj/main.py")})
    assert ("Trainer.fit", (True, True, False), frozenset()) in project.batched_calls
    found = [(finding.code, finding.line, finding.message.split(" (on the CPU)")[0].split(": the porter")[0])
             for finding in port(TRAINER_CLASS, Config(), project=project).findings]
    # `fit` is complete, with the whole batches its caller gives (`self.model.fit` in `tune` is the
    # model's method, not a call of `Trainer.fit`); `tune` names its caller.
    assert found == [("IPU190", 14, "`.fit()` runs where `Trainer.tune` is called, and "
                                    "`proj/main.py` calls `Trainer.tune` outside the IPU strategy's scope")]


def test_a_class_that_keeps_the_model_it_is_given_and_runs_it_is_a_trainer():
    # `model` is kept as `self.model` and trained by `fit` (position 0: `self` not counted); the
    # optimizer is kept too but never run.
    assert trained_parameters(TRAINER_CLASS, Config()) == [("Trainer", "model", 0, True)]
    keras_model = "from tensorflow import keras\n\n\nclass Net(keras.Model):\n    def __init__(self, units):\n" \
                  "        super().__init__()\n        self.dense = keras.layers.Dense(units)\n\n" \
                  "    def call(self, x):\n        return self.dense(x)\n"
    assert trained_parameters(keras_model, Config()) == []


def test_a_script_that_gives_its_model_to_a_trainer_object_runs_its_methods_in_the_scope():
    script = ("import tensorflow as tf\nfrom trainer import Trainer\n\n\ndef main(ds):\n"
              "    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
              "    trainer = Trainer(model, tf.keras.optimizers.Adam())\n    trainer.fit(ds, ds, 2)\n")
    project = Project(keras_import=True, trainers=frozenset({("trainer.Trainer", "model", 0, True)}))
    assert ("    with strategy.scope():\n        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
            "        trainer = Trainer(model, tf.keras.optimizers.Adam())\n        trainer.fit(ds, ds, 2)\n"
            ) in port(script, Config(), project=project).source


LOOP_TRAINER_CLASS = """\
import tensorflow as tf


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = tf.keras.optimizers.Adam()

    @tf.function
    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x, training=True) - y))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))

    def train(self, dataset):
        for x, y in dataset:
            self.train_step(x, y)
"""


def test_a_library_trainer_loop_run_in_its_callers_scope_is_told_only_what_is_left():
    assert trained_parameters(LOOP_TRAINER_CLASS, Config()) == [("Trainer", "model", 0, True)]
    alone = [finding.message for finding in port(LOOP_TRAINER_CLASS, Config()).findings if finding.code == "IPU111"]
    assert alone[0].startswith("the training step `Trainer.train_step` is a method whose class is not made")
    project = Project(called_in_scope=frozenset({"Trainer", "Trainer.train"}))
    found = [finding.message for finding in port(LOOP_TRAINER_CLASS, Config(), project=project).findings
             if finding.code == "IPU111"]
    assert found[0].startswith("the training step `Trainer.train_step` is a method of a class that the files of its "
                               "project make, and whose `train` they call, in the IPU strategy's scope")


def test_a_library_class_with_no_caller_in_sight_says_what_its_callers_must_do():
    found = [finding.message.split(" (on the CPU)")[0] for finding in port(TRAINER_CLASS, Config()).findings
             if finding.code == "IPU190"]
    assert found[0] == ("`.fit()` runs where `Trainer.fit` is called, and no file of its project is seen to call "
                        "`Trainer.fit` inside an IPU strategy's scope")


def test_a_method_called_outside_the_scope_on_an_object_the_caller_cannot_trace_keeps_the_library_reported():
    # `make_trainer` hands back a Trainer the caller cannot trace: its `fit` after the scope may be
    # `Trainer.fit`, so the class is not complete, though the traced call is in the scope.
    untraced = CLASS_CALLER.replace('    trainer.tune(load("extra"))\n',
                                    '    other = make_trainer(model)\n    other.fit(load("train"), load("val"), 1)\n')
    project = with_callers(ALONE, "proj/trainer.py", {"proj/main.py": (untraced, Config())}, {"data.load"})
    assert "Trainer.fit" in project.called_in_scope and ("?.fit", "proj/main.py") in project.called_outside
    found = [(finding.code, finding.line) for finding in port(TRAINER_CLASS, Config(), project=project).findings]
    # (and its datasets may come from that call, of batches out of sight)
    assert found == [("IPU190", 11), ("IPU105", 11), ("IPU105", 11), ("IPU105", 14)]
    message = next(finding.message for finding in port(TRAINER_CLASS, Config(), project=project).findings)
    assert message.split(" (on the CPU)")[0] == (
        "`.fit()` runs where `Trainer.fit` is called, and `proj/main.py` calls `.fit(...)` outside the IPU "
        "strategy's scope on an object it cannot trace, which may be a `Trainer`")
