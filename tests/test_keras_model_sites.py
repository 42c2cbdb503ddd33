"""Where a Keras port puts the IPU strategy when the model is created in one place and trained in
another: the call that both creates and trains it, the statement around an ``if``/``else`` that
chooses it, and the precise report when no such place can be found."""

from porter.config import Config
from porter.engine import port
from porter.report import finding_line

TRAINER = '''\
import tensorflow as tf


def train(model, data):
    model.compile(optimizer="adam", loss="mse")
    model.fit(data, epochs=3)

'''

# The IPU set-up the port puts at the top of main(), once.
SETUP = """\
    ipu_config = ipu.config.IPUConfig()
    ipu_config.auto_select_ipus = 1
    ipu_config.configure_ipu_system()
    strategy = ipu.ipu_strategy.IPUStrategy()
"""


def report(source):
    result = port(source, Config())
    assert result.error is None
    return result.source, [finding_line("train.py", finding) for finding in result.findings]


def test_a_training_function_called_with_a_model_it_cannot_see_is_reported_at_that_call():
    source = TRAINER + '''
def main():
    train(tf.keras.Sequential([tf.keras.layers.Dense(1)]), load())


def resume(trainer):
    train(trainer.model, load())
'''
    ported, findings = report(source)
    assert "    with strategy.scope():\n        train(tf.keras.Sequential(" in ported
    assert "    train(trainer.model, load())\n" in ported
    assert findings == [
        "train.py:1:1: IPU101 added `from tensorflow.python import ipu` [fixed]",
        "train.py:6:5: IPU190 `model.fit()` runs outside the IPU strategy's scope (on the CPU) when called "
        "through `train(trainer.model, load())`: the port is not complete; create, compile and train the "
        "model inside `with strategy.scope():`, directly or through the functions that call this code [error]",
        "train.py:6:15: IPU105 `fit` gets `data` from the parameter `data` of `train`: the porter cannot see how "
        "it is batched, and the IPU rejects a partial last batch; batch a dataset with `drop_remainder=True` where "
        "it is made (or give it `.unbatch().batch(n, drop_remainder=True)` here), trim arrays to a multiple of the "
        "batch size [warning]",
        "train.py:10:5: IPU102 IPU system configured with 1 IPU before the model code [fixed]",
        "train.py:10:5: IPU103 model code runs in `with strategy.scope():` [fixed]",
    ]


def test_a_model_from_an_unknown_builder_handed_to_a_training_function_is_a_model():
    source = TRAINER + '''
def main():
    model = make_model()
    train(model, load())
'''
    ported, findings = report(source)
    assert ported.endswith('''
def main():
''' + SETUP + '''    with strategy.scope():
        model = make_model()
        train(model, load())
''')
    assert not any("IPU190" in line for line in findings)


def test_a_trainer_reached_through_another_function_and_by_keyword():
    source = TRAINER + '''
def run(net, data):
    train(net, data)


def main():
    for width in (8, 16):
        run(tf.keras.Sequential([tf.keras.layers.Dense(width)]), load())
    train(data=load(), model=tf.keras.Sequential([tf.keras.layers.Dense(1)]))
'''
    ported, findings = report(source)
    # One configuration and one strategy, before the loop; each call that creates a model is scoped.
    assert ported.count("configure_ipu_system()") == 1
    assert ported.count("IPUStrategy()") == 1
    assert ported.endswith('''
def main():
''' + SETUP + '''    for width in (8, 16):
        with strategy.scope():
            run(tf.keras.Sequential([tf.keras.layers.Dense(width)]), load())
    with strategy.scope():
        train(data=load(), model=tf.keras.Sequential([tf.keras.layers.Dense(1)]))
''')
    assert not any("IPU190" in line for line in findings)


def test_an_estimator_of_another_library_is_not_a_keras_model():
    source = '''\
import tensorflow as tf
from sklearn.linear_model import LogisticRegression


def train(classifier, features, labels):
    classifier.fit(features, labels)


train(LogisticRegression(), features, labels)
'''
    ported, findings = report(source)
    assert ported == source
    assert findings == []


def test_a_device_scope_the_port_deletes_is_reported_as_removed_not_replaced():
    source = '''\
import tensorflow as tf


class TwoTower(tf.keras.Model):
    def call(self, inputs):
        with tf.device("/gpu:1"):
            return self.head(inputs)


def build():
    with tf.device("/gpu:0"):
        model = TwoTower()
        model.compile(optimizer="sgd", loss="mse")
    return model


with tf.device("/gpu:0"):
    model = build()
model.fit(x, y, epochs=1)
'''
    ported, findings = report(source)
    assert "tf.device" not in ported
    assert [line for line in findings if "scope re" in line] == [
        "train.py:6:9: IPU103 device/strategy scope removed: `call` is a method of the model, and it runs where "
        "the model is called, in the IPU strategy's scope [fixed]",
        "train.py:11:5: IPU103 device/strategy scope removed: `build()` builds the model, and it is created in "
        "the IPU strategy's scope where it is called [fixed]",
        "train.py:17:1: IPU103 device/strategy scope replaced by the IPU strategy scope [fixed]",
    ]


def test_a_step_with_two_tapes_in_one_with_is_reported_once():
    source = '''\
import tensorflow as tf


class Trainer:
    @tf.function
    def step(self, real, noise):
        with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
            d_loss = tf.reduce_mean(self.critic(self.generator(noise))) - tf.reduce_mean(self.critic(real))
            g_loss = -tf.reduce_mean(self.critic(self.generator(noise)))
        self.d_opt.apply_gradients(zip(d_tape.gradient(d_loss, self.critic.trainable_variables),
                                       self.critic.trainable_variables))
        self.g_opt.apply_gradients(zip(g_tape.gradient(g_loss, self.generator.trainable_variables),
                                       self.generator.trainable_variables))
'''
    _, findings = report(source)
    assert [line.split(": ", 1)[0] for line in findings if " IPU153 " in line] == ["train.py:7:14"]


def test_a_cpu_block_that_only_runs_the_trained_model_is_no_baseline():
    source = '''\
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
model.compile(optimizer="sgd", loss="mse")
model.fit(features, targets, epochs=1, batch_size=32)
with tf.device("/CPU:0"):
    predictions = model.predict(test_features, batch_size=32)
with tf.device("/CPU:0"):
    baseline = tf.keras.Sequential([tf.keras.layers.Dense(10)])
    baseline.compile(optimizer="sgd", loss="mse")
    baseline.fit(features, targets, epochs=1, batch_size=32)
'''
    _, findings = report(source)
    cpu = [line for line in findings if "asks for the CPU" in line]
    assert len(cpu) == 2
    assert "train.py:6:6:" in cpu[0] and "to run a model made in the IPU strategy's scope" in cpu[0]
    assert "drop the `with tf.device` block" in cpu[0] and "baseline" not in cpu[0]
    assert "train.py:8:6:" in cpu[1] and "a CPU baseline measures nothing" in cpu[1]


def test_a_network_made_out_of_the_function_that_builds_the_model_on_it_is_reported():
    source = '''\
import tensorflow as tf
from backbones import make_backbone

backbone = make_backbone("resnet50")


def train(images, labels):
    scores = tf.keras.layers.Dense(5)(backbone.output)
    model = tf.keras.Model(backbone.input, scores)
    model.compile(optimizer="sgd", loss="mse")
    model.fit(images, labels, batch_size=32)
'''
    ported, findings = report(source)
    assert "with strategy.scope():\n        scores = " in ported
    assert findings[1] == (
        "train.py:4:1: IPU190 `backbone`, which the model is built on, is made outside the IPU strategy's scope, "
        "so its weights are too (compiling the model fails): the port is not complete; make it in the scope, "
        "where the model is built [error]")


def test_a_network_made_in_the_block_of_the_model_code_is_taken_into_the_scope():
    source = '''\
import tensorflow as tf
from backbones import make_backbone


def train(images, labels):
    backbone = make_backbone("resnet50")
    scores = tf.keras.layers.Dense(5)(backbone.output)
    model = tf.keras.Model(backbone.input, scores)
    model.compile(optimizer="sgd", loss="mse")
    model.fit(images, labels, batch_size=32)
'''
    ported, findings = report(source)
    assert "with strategy.scope():\n        backbone = make_backbone(" in ported
    assert not any("IPU190" in finding for finding in findings)


def test_training_in_a_statement_kept_out_of_the_scope_is_reported():
    # The `with` clears the Keras session, so it stays out of the scope, and `fit` with it: the port
    # is partial, and says so.
    source = '''\
import tensorflow as tf


def main(x, y):
    for width in (8, 16):
        model = tf.keras.Sequential([tf.keras.layers.Dense(width)])
        model.compile("sgd", "mse")
        with open("log.txt", "a") as log:
            model.fit(x, y)
            tf.keras.backend.clear_session()
'''
    _, findings = report(source)
    assert "train.py:9:13: IPU190 `model.fit()` runs outside the IPU strategy's scope (on the CPU): the port is " \
           "not complete; create, compile and train the model inside `with strategy.scope():`, directly or " \
           "through the functions that call this code [error]" in findings
