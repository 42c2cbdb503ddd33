from textwrap import indent
from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from porter.context import bound_names, canonical_keras, code_of, dotted_name, walk
from porter.cstutil import append_args, argument, is_name, keyword, keyword_arg, positional, single_small
from porter.rules.keras._analysis.custom_loop import (CALLER_DEPTH, LoopPlan, covered, device_loop_fits,
                                                      handed_modules, loop_plans, out_of_reach, run_targets,
                                                      strategy_scope_name, tensorflow_alias)
from porter.rules.keras._analysis.fit import class_model_attributes
from porter.rules.keras._analysis.inline_step import InlineStep, inline_steps, moved, python_numbers
from porter.rules.keras._analysis.sampling import eager_callback_loops, eager_sampling_loops
from porter.rules.keras._analysis.losses import (HandedLoss, attribute_functions, attribute_lambdas, attribute_losses,
                                                 handed_losses, is_self, step_methods)
from porter.rules.keras._analysis.model_plan import (DISTRIBUTION_STRATEGIES, IPU_STRATEGIES, MODEL_BASES, Plan,
                                                     calls_by_name, in_regions, model_plan)
from porter.rules.keras._analysis.steps import (TAPES, StepCall, compiled_function, definition_before, functions_called_from, is_jit_compiled,
                                                is_tf_function, loop_trains, method_named, module_objects, runs_models,
                                                step_functions, wrapped_methods)
from porter.rules.keras._analysis.util import (KERAS_LAYER_CLASSES, KERAS_MODEL_CLASSES, RUN_METHODS,
                                              auto_loss_objects, is_auto_loss, method_calls, subclass_definitions)
from porter.rule import ERROR, FIX, KERAS, NOTE, Example, Rule
from porter.scopes import (assignments, called_method_returns, fresh_name, local_function, owner, ruled_out_by_call,
                           values_of)
from porter.throughput import config_replicas, config_steps

_BEFORE = '''import tensorflow as tf


def main():
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(32, drop_remainder=True)
    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
    optimizer = tf.keras.optimizers.SGD(0.01)

    def train_step(images, labels):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(images) - labels))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

    for epoch in range(3):
        for images, labels in dataset:
            train_step(images, labels)
'''
_AFTER_DEVICE = _BEFORE.replace('''
    for epoch in range(3):
        for images, labels in dataset:
            train_step(images, labels)
''', '''
    @tf.function(jit_compile=True)
    def train_step_loop(iterator, steps):
        for _ in tf.range(steps):
            images, labels = next(iterator)
            train_step(images, labels)

    for epoch in range(3):
        dataset_iterator = iter(dataset)
        for _ in range(len(dataset) // 16):
            strategy.run(train_step_loop, args=(dataset_iterator, 16))
        if len(dataset) % 16:
            strategy.run(train_step_loop, args=(dataset_iterator, len(dataset) % 16))
''')
_AFTER_STEP = _BEFORE.replace("    def train_step", "    @tf.function(jit_compile=True)\n    def train_step").replace(
    "            train_step(images, labels)", "            strategy.run(train_step, args=(images, labels))")
# A loop function trained once with a `tf.Module` made before the scope, then with a Keras model.
_TF_MODULE_LOOP = '''import tensorflow as tf


class Line(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(1.0)

    def __call__(self, x):
        return self.w * x


def train(model, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    for grad, variable in zip(grads, model.trainable_variables):
        variable.assign_sub(0.1 * grad)


def fit_loop(model, x, y):
    for epoch in range(10):
        train(model, x, y)


def main(x, y):
    line = Line()
    fit_loop(line, x, y)
    dense = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    fit_loop(dense, x, y)
'''
# The body of a small step on `model` and `optimizer`, indented as each example needs it.
_TAPE_STEP = """with tf.GradientTape() as tape:
    loss = tf.reduce_mean((model(x) - y) ** 2)
grads = tape.gradient(loss, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""
_MODEL = """import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.01)
"""
_PORTED = ("import tensorflow as tf\nfrom tensorflow.python import ipu\n\nstrategy = ipu.ipu_strategy.IPUStrategy()\n"
           "with strategy.scope():\n" + indent(_MODEL.partition("\n\n")[2], "    ")
           + "\n    @tf.function(jit_compile=True)\n    def train_step(x, y):\n" + indent(_TAPE_STEP, " " * 8)
           + "\n    for x, y in dataset:\n        strategy.run(train_step, args=(x, y))\n")
_TWO_STEPS_BEFORE = '''import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.01)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


for x, y in dataset:
    train_step(x, y)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.abs(model(x) - y))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


for x, y in dataset:
    train_step(x, y)
'''
_PER_STEP_BEFORE = '''import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam()


@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return loss


for x, y in batches:
    loss = step(x, y)
    history.append(loss)
'''
# An optimizer step that takes its own gradients (no tape), written in a loop.
_MINIMIZE = "    optimizer.minimize(lambda: tf.reduce_mean((model(x) - y) ** 2), var_list=model.trainable_variables)\n"
_MINIMIZE_LOOP = "\nfor epoch in range(3):\n    for x, y in dataset:\n" + indent(_MINIMIZE, "    ")
# A step traced for sequences of any length: its `input_signature` leaves the time dimension `None`.
_SIGNATURE = "@tf.function(input_signature=[tf.TensorSpec([32, None]), tf.TensorSpec([32, 1])]{})\n"
_INLINE_BEFORE = (_MODEL + "for epoch in range(3):\n    for x, y in dataset:\n" + indent(_TAPE_STEP, " " * 8)
                  + "        print(float(loss))\n")
_INLINE_AFTER = (_MODEL + "\n@tf.function(jit_compile=True)\ndef train_step(x, y):\n" + indent(_TAPE_STEP, "    ")
                 + "    return loss\n\nfor epoch in range(3):\n    for x, y in dataset:\n"
                 "        loss = strategy.run(train_step, args=(x, y))\n        print(float(loss))\n")
# Penalty terms a step adds in a Python loop of its own, which ends at the first zero weight.
_PENALTIES = """for weight in (0.1, 0.0):
    if weight == 0.0:
        break
    loss += weight * tf.add_n([tf.nn.l2_loss(v) for v in model.trainable_variables])
"""
# A helper of the step whose parameter has the name of one of the step's variables.
_CLIPPED = ("optimizer = tf.keras.optimizers.SGD(0.01)\n\n\ndef clipped(grads):\n"
            "    return [tf.clip_by_norm(grad, 1.0) for grad in grads]\n\n\n")
# A step made by a factory that closes over the model and optimizer, called through the name that holds it.
_FACTORY = """import tensorflow as tf


def make_step(net, opt):
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((net(x) - y) ** 2)
        opt.apply_gradients(zip(tape.gradient(loss, net.trainable_variables), net.trainable_variables))
        return loss

    return step


model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
step_fn = make_step(model, tf.keras.optimizers.SGD(0.01))
for x, y in dataset:
    step_fn(x, y)
"""
_FACTORY_AFTER = _FACTORY.replace("@tf.function\n", "@tf.function(jit_compile=True)\n").replace(
    "    step_fn(x, y)", "    strategy.run(step_fn, args=(x, y))")
_LOOP_IN_FUNCTION = """import tensorflow as tf


@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return loss


def fit_epochs(dataset, epochs):
    for epoch in range(epochs):
        for x, y in dataset:
            loss = step(x, y)
        print(epoch, float(loss))


model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.01)
fit_epochs(train_ds, 3)
"""
_INLINE_IN_FUNCTION = """import tensorflow as tf


def fit_epochs(model, optimizer, dataset, epochs):
    for epoch in range(epochs):
        for x, y in dataset:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
        print(epoch, float(loss))


def main():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.01)
    fit_epochs(model, optimizer, train_ds, 3)
"""
_INLINE_IN_FUNCTION_AFTER = _INLINE_IN_FUNCTION.replace("""    for epoch in range(epochs):
        for x, y in dataset:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
""", """    @tf.function(jit_compile=True)
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    for epoch in range(epochs):
        for x, y in dataset:
            loss = tf.distribute.get_strategy().run(train_step, args=(x, y))
""")
_EPOCH_FUNCTION = """import tensorflow as tf


def run_epoch(model, optimizer, dataset):
    for x, y in dataset:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def main():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.01)
    for epoch in range(3):
        print(epoch, float(run_epoch(model, optimizer, train_ds)))
"""
_EPOCH_FUNCTION_AFTER = """import tensorflow as tf


def run_epoch(model, optimizer, dataset):
    @tf.function(jit_compile=True)
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    for x, y in dataset:
        loss = tf.distribute.get_strategy().run(train_step, args=(x, y))
    return loss


def main():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.01)
    for epoch in range(3):
        print(epoch, float(run_epoch(model, optimizer, train_ds)))
"""
_ENSEMBLE_STEP = """import tensorflow as tf

models = [tf.keras.Sequential([tf.keras.layers.Dense(1)]) for _ in range(3)]
optimizers = [tf.keras.optimizers.SGD(0.01) for _ in models]


def train_step(x, y):
    losses = []
    for model, optimizer in zip(models, optimizers):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        losses.append(loss)
    return tf.add_n(losses)


for x, y in dataset:
    total = train_step(x, y)
"""
_HANDED_LOSS = """import tensorflow as tf


def train(model, loss_fn, optimizer, dataset, epochs):
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    for epoch in range(epochs):
        for x, y in dataset:
            loss = step(x, y)
        print(epoch, float(loss))


model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
train(model, tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), tf.keras.optimizers.Adam(), train_ds, 3)
"""
_HANDED_LOSS_COMPILED = _HANDED_LOSS.replace("@tf.function\n", "@tf.function(jit_compile=True)\n").replace(
    "loss = step(x, y)", "loss = strategy.run(step, args=(x, y))")
_HANDED_LOSS_AFTER = _HANDED_LOSS_COMPILED.replace(
    "loss = loss_fn(y, model(x, training=True))", "loss = tf.reduce_mean(loss_fn(y, model(x, training=True)))").replace(
    "(from_logits=True)", "(from_logits=True, reduction=tf.keras.losses.Reduction.NONE)")
_TO_INPUT = "model.trainable_variables)\n        optimizer.apply_gradients(zip(grads, model.trainable_variables))"
_INPUT_GRADS = "images)\n        return grads"
_SALIENCY = """import tensorflow as tf

classifier = tf.keras.models.load_model("classifier.keras")


def saliency(image):
    with tf.GradientTape() as tape:
        tape.watch(image)
        score = tf.reduce_max(classifier(image), axis=-1)
    return tf.abs(tape.gradient(score, image))


def explain(images):
    maps = []
    for image in images:
        maps.append(saliency(image))
    return maps


heatmaps = explain(test_images)
"""
_GRAD_HELPER_BEFORE = _MODEL + """

def grad(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    return loss, tape.gradient(loss, model.trainable_variables)


for x, y in dataset:
    loss, grads = grad(x, y)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(float(loss))
"""
_GRAD_HELPER_STEP = """


@tf.function(jit_compile=True)
def train_step(x, y):
    loss, grads = grad(x, y)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for x, y in dataset:
"""
# A MirroredStrategy loop that passes its step to `strategy.run` eagerly.
_EAGER_RUN_BEFORE = _PER_STEP_BEFORE.replace("@tf.function\n", "").replace(
    "for x, y in batches:\n    loss = step(x, y)\n    history.append(loss)\n",
    "for x, y in dist_dataset:\n    strategy.run(step, args=(x, y))\n")
_ACCUMULATE = _MODEL + """accumulated = [tf.Variable(tf.zeros_like(v)) for v in model.trainable_variables]


@tf.function
def accumulate(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    for total, grad in zip(accumulated, tape.gradient(loss, model.trainable_variables)):
        total.assign_add(grad)


@tf.function
def apply():
    optimizer.apply_gradients(zip(accumulated, model.trainable_variables))


for i, (x, y) in enumerate(dataset):
    accumulate(x, y)
    if i % 4 == 3:
        apply()
"""
_TEST_STEP = """

@tf.function
def test_step(x, y):
    test_error.update_state(tf.reduce_mean(tf.abs(model(x) - y)))


for x, y in test_batches:
    test_step(x, y)
"""
_DISTRIBUTED = """@tf.function
def distributed_step(x, y):
    losses = strategy.run(step, args=(x, y))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)


for x, y in dist_dataset:
    distributed_step(x, y)
"""
_PLAIN_TEST_STEP = """

def test_step(x, y):
    test_error.update_state(tf.reduce_mean(tf.abs(model(x) - y)))
"""
_EPOCHS_WITH_TEST = _PER_STEP_BEFORE.replace(
    "for x, y in batches:\n    loss = step(x, y)\n    history.append(loss)\n",
    _PLAIN_TEST_STEP.lstrip("\n") + "\n\nfor epoch in range(3):\n    for x, y in batches:\n        step(x, y)\n"
    "    for x, y in test_batches:\n        test_step(x, y)\n")
_EPOCHS_WITH_TEST_AFTER = _EPOCHS_WITH_TEST.replace("@tf.function\n", "@tf.function(jit_compile=True)\n").replace(
    "\n\ndef test_step", "\n\n@tf.function(jit_compile=True)\ndef test_step").replace(
    "        step(x, y)", "        strategy.run(step, args=(x, y))").replace(
    "        test_step(x, y)", "        strategy.run(test_step, args=(x, y))")
_EAGER_LAMBDA = """import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])

for x in dist_dataset:
    print(strategy.run(lambda batch: model(batch, training=False), args=(x,)))
"""
_NESTED_STEP = """import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.1)


@tf.function
def distributed_step(batch):
    def step_fn(inputs):
        x, y = inputs
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    losses = strategy.run(step_fn, args=(batch,))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)


for batch in dist_dataset:
    distributed_step(batch)
"""
_OWN_STRATEGY_TRAINER = """import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()


class Trainer:
    def __init__(self):
        self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        self.optimizer = tf.keras.optimizers.SGD(0.1)

    {compiled}def replica_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x) - y))
        variables = self.model.trainable_variables
        self.optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))

    @tf.function
    def train_step(self, x, y):
        strategy.run(self.replica_step, args=(x, y))


trainer = Trainer()
for x, y in dist_dataset:
    trainer.train_step(x, y)
"""
# The same steps in a trainer class: defined in its distributed step, or a method of its own.
_TRAINER = """import tensorflow as tf


class Trainer:
    def __init__(self, model):
        self.strategy = tf.distribute.MirroredStrategy()
        with self.strategy.scope():
            self.model = model
            self.optimizer = tf.keras.optimizers.SGD(0.1)
"""
_TRAINER_STEP = _TRAINER + """
    @tf.function
    def distributed_step(self, x, y):
        def step_fn(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self.model(x) - y))
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
            return loss

        return self.strategy.run(step_fn, args=(x, y))
"""
_TRAINER_METHOD_STEP = _TRAINER + """
    def step_fn(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x) - y))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss

    @tf.function
    def distributed_step(self, x, y):
        return self.strategy.run(self.step_fn, args=(x, y))
"""
_TRAINER_TEST_METHOD = """
    {compiled}def test_fn(self, x, y):
        self.test_loss.update_state(tf.reduce_mean(tf.square(self.model(x) - y)))

    @tf.function
    def distributed_test_step(self, x, y):
        self.strategy.run(self.test_fn, args=(x, y))
"""
# A step that updates an optimizer made at module level, for a model made in a function called from another.
_MODULE_OPTIMIZER = ("import tensorflow as tf\n\noptimizer = tf.keras.optimizers.SGD(0.01)\n\n\n@tf.function\n"
                     "def train_step(model, x, y):\n" + indent(_TAPE_STEP, "    ") + "\n\ndef main():\n"
                     "    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n    for x, y in dataset:\n"
                     "        train_step(model, x, y)\n\n\ndef cli():\n    main()\n\n\ncli()\n")
# A trainer class of its own that holds the model, the optimizer and the loss, and runs its epochs.
_TRAINER_CLASS = """import tensorflow as tf
from tensorflow.python import ipu


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = tf.keras.optimizers.SGD(0.1)
        self.loss_fn = tf.keras.losses.MeanSquaredError({loss})

    {compiled}def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = {mean}
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss

    def fit(self, dataset, epochs):
        for epoch in range(epochs):
            for x, y in dataset:
                {call}


def main(dataset):
    strategy = ipu.ipu_strategy.IPUStrategy()
    with strategy.scope():
        trainer = Trainer(tf.keras.Sequential([tf.keras.layers.Dense(1)]))
        trainer.fit(dataset, 2)
"""
# The parts of `_TRAINER_CLASS` for a step that is a `tf.function` already, before and after the port.
_COMPILED_TRAINER_PARTS = (
    {"loss": "", "compiled": "@tf.function\n    ", "mean": "self.loss_fn(y, self.model(x))",
     "call": "self.train_step(x, y)"},
    {"loss": "reduction=tf.keras.losses.Reduction.NONE", "compiled": "@tf.function(jit_compile=True)\n    ",
     "mean": "tf.reduce_mean(self.loss_fn(y, self.model(x)))",
     "call": "tf.distribute.get_strategy().run(self.train_step, args=(x, y))"},
)
# A training loop that saves samples after each epoch through a helper that runs the model it is given.
_SAMPLES_HELPER = """\
import numpy as np
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.layers.Dense(4)])
optimizer = tf.keras.optimizers.Adam()
seed = tf.random.normal([16, 8])


@tf.function
def train_step(noise, target):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((generator(noise) - target) ** 2)
    optimizer.apply_gradients(zip(tape.gradient(loss, generator.trainable_variables), generator.trainable_variables))


def save_samples(model, epoch, noise):
    samples = model(noise, training=False)
    np.save(f"samples_{epoch}.npy", samples.numpy())


for epoch in range(3):
    for noise, target in batches:
        train_step(noise, target)
    save_samples(generator, epoch, seed)
"""
_PER_STEP_AFTER = _PER_STEP_BEFORE.replace("@tf.function\n", "@tf.function(jit_compile=True)\n").replace(
    "    loss = step(x, y)", "    loss = strategy.run(step, args=(x, y))")


def _stops_a_batch_early(ctx, stop: cst.BaseExpression, stride: cst.BaseExpression) -> bool:
    """``len(x) - bs + 1`` (or ``len(x) - bs``) as the end of ``range(0, ..., bs)``: no slice starts
    less than a whole batch before the end of the data, so the loop drops a last partial batch
    itself."""
    if isinstance(stop, cst.BinaryOperation) and isinstance(stop.operator, cst.Add) and code_of(ctx, stop.right) == "1":
        stop = stop.left
    return (isinstance(stop, cst.BinaryOperation) and isinstance(stop.operator, cst.Subtract)
            and code_of(ctx, stop.right) == code_of(ctx, stride))


def _slices_from(subscript: cst.Subscript, index: str) -> bool:
    """``x[i:i + bs]``: a slice that starts at the loop's index."""
    piece = subscript.slice[0].slice if subscript.slice else None
    return isinstance(piece, cst.Slice) and is_name(piece.lower, index) and piece.upper is not None


# The rule that casts uint8 data for the IPU, which runs before this one.
_UINT8_CAST = "IPU106"
# `tf.function` options that say the step gets inputs of changing shapes.
_RELAXED_SHAPES = frozenset({"reduce_retracing", "experimental_relax_shapes"})
_TENSOR_SPECS = frozenset({"tensorflow.TensorSpec", "tensorflow.python.framework.tensor_spec.TensorSpec"})


def _innermost_loop(ctx, node: cst.CSTNode):
    """The ``for`` or ``while`` loop of ``node``'s own function (or module) closest around it."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
        if isinstance(ancestor, (cst.For, cst.While)):
            return ancestor
    return None


# The most items a look at samples goes over (an 8 x 8 grid of plots); a loop counted to more
# (``range(600)`` test episodes of a few-shot evaluation) is the script's own evaluation.
_PREVIEW_ITEMS = 64


def _preview(loop: cst.For) -> bool:
    """A loop over a few items, counted in the code: ``ds.take(3)``, ``range(5)``, ``x_test[:4]``."""
    source = loop.iter
    while isinstance(source, cst.Call) and source.args and isinstance(source.func, cst.Name) and source.func.value in (
            "enumerate", "zip", "list"):
        source = source.args[0].value
    if isinstance(source, cst.Call) and len(source.args) == 1 and isinstance(source.args[0].value, cst.Integer):
        return (is_name(source.func, "range") or isinstance(source.func, cst.Attribute) and source.func.attr.value in (
            "take", "head")) and _few(source.args[0].value)
    return (isinstance(source, cst.Subscript) and len(source.slice) == 1 and isinstance(source.slice[0].slice, cst.Slice)
            and source.slice[0].slice.lower is None and isinstance(source.slice[0].slice.upper, cst.Integer)
            and _few(source.slice[0].slice.upper))


def _few(count: cst.Integer) -> bool:
    return int(count.value.replace("_", ""), 0) <= _PREVIEW_ITEMS


def _layer_attributes(ctx) -> Set[str]:
    """The attributes the classes of the file give layers or models in their methods (``self.decoder
    = Decoder(vocab, units)``), and those a Keras model or layer subclass is given by its caller and
    calls (``self.decoder = decoder`` in ``__init__``, ``self.decoder(tokens, context)`` in ``call``:
    a captioning model's parts)."""
    found = set()
    keras_classes = {id(node) for node in subclass_definitions(ctx, *KERAS_LAYER_CLASSES, *KERAS_MODEL_CLASSES)}
    for assign in ctx.nodes(cst.Assign):
        owner_class = ctx.enclosing(assign, cst.ClassDef)
        if owner_class is None:
            continue
        for target in assign.targets:
            if not (isinstance(target.target, cst.Attribute) and is_self(target.target.value)):
                continue
            if isinstance(assign.value, cst.Call) or (
                    id(owner_class) in keras_classes and _given_parameter(ctx, assign)
                    and _calls_attribute(owner_class, target.target.attr.value)):
                found.add(target.target.attr.value)
    return found


def _given_parameter(ctx, assign: cst.Assign) -> bool:
    """``self.x = x`` where ``x`` is a parameter of the method that assigns it."""
    function = ctx.enclosing_function(assign)
    return function is not None and isinstance(assign.value, cst.Name) and any(
        param.name.value == assign.value.value for param in function.params.params)


def _calls_attribute(owner_class: cst.ClassDef, attribute: str) -> bool:
    """Whether the class calls ``self.<attribute>(...)`` somewhere: it holds something it runs."""
    return any(isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and is_self(node.func.value)
               and node.func.attr.value == attribute for node in walk(owner_class))


def _model_or_part(ctx, func: cst.BaseExpression, model_like: Set[str], parts: Set[str]) -> bool:
    """``model(...)``, or ``model.decoder(...)`` for a layer the model's class holds."""
    if isinstance(func, cst.Attribute) and func.attr.value in parts:
        func = func.value
    return isinstance(func, cst.Name) and func.value in model_like and ctx.qualified_name(func) is None


def _eager_model_call(ctx, helper: cst.FunctionDef, call: cst.Call, model_like: Set[str],
                      parts: Set[str]) -> Optional[cst.Call]:
    """The first call in the body of ``helper`` (out of its loops, which are looked at as loops)
    that runs a model: one of the file's (not a parameter's name), or the parameter that ``call``
    gives a model (``model(test_input)`` in a helper called as ``helper(generator, ...)``)."""
    params = helper.params.params
    given = set()
    for position, param in enumerate(params):
        arg = argument(call, param.name.value, position)
        if arg is not None and isinstance(arg.value, cst.Name) and arg.value.value in model_like:
            given.add(param.name.value)
    shadowed = {param.name.value for param in params} - given
    runs = (model_like - shadowed) | given
    for node in walk(helper.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.For, cst.While)):
        # `if train: model(x) else: model.predict(x)` called with `train=False`: the eager branch never runs.
        if isinstance(node, cst.Call) and _model_or_part(ctx, node.func, runs, parts) \
                and not ruled_out_by_call(ctx, node, helper, call):
            return node
    return None


def _eager_callee(ctx, call: cst.Call, plan: Plan, parts: Set[str]
                  ) -> Tuple[Optional[cst.FunctionDef], Optional[cst.Call]]:
    """For ``call`` of a function of the file (``greedy(model, state)``) or of a method of a class
    of the file (``agent.act(state)``): that function, and the first call in its body (out of its
    loops, looked at as loops) that runs a model, the one it is given or the file holds, or one
    its instance keeps (``self.model(...)``); ``(None, None)`` for a call of anything else."""
    if isinstance(call.func, cst.Name) and ctx.qualified_name(call.func) is None:
        helper = local_function(ctx, call.func.value, call)
        return helper, _eager_model_call(ctx, helper, call, plan.model_like, parts) if helper is not None else None
    method, _ = called_method_returns(ctx, call)
    if method is None:
        return None, None
    models = class_model_attributes(ctx, plan).get(ctx.enclosing(method, cst.ClassDef).name.value, set())
    return method, next((node for node in walk(method.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda,
                                                                  cst.For, cst.While))
                         if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                         and is_self(node.func.value) and node.func.attr.value in models), None)


def _step_ids(ctx, plans: List[LoopPlan]) -> Set[int]:
    """The ids of the file's training steps: the functions that open a tape, and those the port
    rewrites; a loop that calls one runs it as a step, not as eager model code."""
    return {id(function) for functions in step_functions(ctx).values() for function in functions} | {
        id(plan.step.function) for plan in plans}


def _traced_only(ctx, function: Optional[cst.FunctionDef], depth: int = CALLER_DEPTH) -> bool:
    """Whether ``function`` runs only traced into a ``tf.function``: it is one, or every call of it
    is in one (``depth`` callers up at most), as an episode helper its ``@tf.function`` step calls.
    Its loops run in that graph, not eagerly; the step itself is what the report is about."""
    if function is None:
        return False
    if is_tf_function(ctx, function):
        return True
    callers = calls_by_name(ctx).get(function.name.value, []) if depth > 0 else []
    return bool(callers) and all(_traced_only(ctx, ctx.enclosing_function(call), depth - 1) for call in callers)


def _feeds_back(loop: cst.BaseCompoundStatement, calls: List[cst.Call]) -> bool:
    """The loop makes the model's next input from its answer (``last = np.concatenate([last[:, 1:],
    step], axis=1)`` after ``step = model(last)``): it generates, one call after another, however
    few its steps; it is no look at a few samples (which may rescale each sample it reads)."""
    read = {node.value for call in calls for arg in call.args for node in walk(arg.value) if isinstance(node, cst.Name)}
    called = {id(call) for call in calls}
    bindings = _writes(loop)
    # What the answers flow into, assignment after assignment.
    answers: Set[str] = set()
    grown = True
    while grown:
        grown = False
        for name, value in bindings:
            if name not in answers and any(id(node) in called or isinstance(node, cst.Name) and node.value in answers
                                           for node in walk(value)):
                answers.add(name)
                grown = True
    return bool(read & answers)


def _writes(loop: cst.BaseCompoundStatement) -> List[Tuple[str, cst.CSTNode]]:
    """What the statements of ``loop`` write into each name: what they bind to it (``window =
    ...``), store in it (``window[-1, 0] = step``, ``total += step``) or add to it
    (``history.append(step)``)."""
    writes: List[Tuple[str, cst.CSTNode]] = []
    for node in walk(loop.body):
        if isinstance(node, cst.Assign):
            writes.extend((name, node.value) for target in node.targets for name in _written_names(target.target))
        elif isinstance(node, cst.AugAssign):
            writes.extend((name, node.value) for name in _written_names(node.target))
        elif (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name)
              and node.func.attr.value in ("append", "extend", "insert")):
            writes.extend((node.func.value.value, arg.value) for arg in node.args)
    return writes


def _written_names(target: cst.BaseExpression) -> List[str]:
    """The names an assignment target binds, or the name it stores into (``window[-1]``)."""
    while isinstance(target, cst.Subscript):
        target = target.value
    return bound_names(target)


def _unknown_dimensions(ctx, signature: cst.BaseExpression) -> List[cst.CSTNode]:
    """The ``None`` dimensions past the batch dimension of the ``tf.TensorSpec`` shapes in an
    ``input_signature`` (``[64, None]``: sequences of any length; ``shape=None``: any rank). A ``None``
    batch dimension is left out: the port's batches have one size (IPU105 drops a last partial batch,
    and the loop's sliced arrays are reported)."""
    found: List[cst.CSTNode] = []
    for spec in walk(signature):
        if not (isinstance(spec, cst.Call) and ctx.qualified_name(spec.func) in _TENSOR_SPECS):
            continue
        shape = argument(spec, "shape", 0)
        if shape is None:
            continue
        if is_name(shape.value, "None"):
            found.append(shape.value)
        elif isinstance(shape.value, (cst.List, cst.Tuple)):
            found += [element.value for element in shape.value.elements[1:] if is_name(element.value, "None")]
    return found


def _decorated(tf: str):
    """``@tf.function(jit_compile=True)`` on a step function, keeping an existing decorator's options."""

    def build(function: cst.FunctionDef) -> cst.FunctionDef:
        decorators = list(function.decorators)
        for index, decorator in enumerate(decorators):
            node = decorator.decorator
            target = node.func if isinstance(node, cst.Call) else node
            if dotted_name(target) != f"{tf}.function":
                continue
            if isinstance(node, cst.Call):
                if _jit_compiled(node) is node:
                    return function
                node = _jit_compiled(node)
            else:
                node = cst.parse_expression(f"{tf}.function(jit_compile=True)")
            decorators[index] = decorator.with_changes(decorator=node)
            return function.with_changes(decorators=decorators)
        new = cst.Decorator(cst.parse_expression(f"{tf}.function(jit_compile=True)"))
        return function.with_changes(decorators=[new, *decorators])

    return build


def _jit_compiled(call: cst.Call) -> cst.Call:
    """A call of ``tf.function`` (a decorator's, or ``tf.function(self._train_step)``) with
    ``jit_compile=True``: the same call when it has it already."""
    given = keyword(call, "jit_compile") or keyword(call, "experimental_compile")
    if given is not None and is_name(given.value, "True"):
        return call
    if given is not None:  # `jit_compile=False`, or a flag: the IPU runs compiled code only
        return call.with_changes(args=[arg.with_changes(value=cst.Name("True")) if arg is given else arg
                                       for arg in call.args])
    return append_args(call, keyword_arg("jit_compile", cst.Name("True")))


def _compiling_calls(ctx, function: cst.FunctionDef, tf: str) -> List[cst.Call]:
    """The calls of ``tf.function`` with options that compile ``function``: its decorator
    (``@tf.function(input_signature=...)``), or the call that compiles a method into an attribute
    (``self.train_step = tf.function(self._train_step, input_signature=...)``)."""
    found = [decorator.decorator for decorator in function.decorators if isinstance(decorator.decorator, cst.Call)
             and dotted_name(decorator.decorator.func) == f"{tf}.function"]
    owner_class = ctx.enclosing(function, cst.ClassDef)
    wrappers = wrapped_methods(ctx, owner_class).values() if owner_class is not None else ()
    return found + [compiling for method, compiling in wrappers if method is function]


def _holds_jit_function(ctx, target: Optional[cst.BaseExpression]) -> bool:
    """``target`` is a name that always holds a function compiled for the IPU by a call
    (``train_step = tf.function(train_step, jit_compile=True)``): what ``strategy.run`` needs."""
    compiling = _held_compiling_call(ctx, target) if isinstance(target, cst.Name) else None
    return compiling is not None and _jit_compiled(compiling) is compiling


def _held_compiling_call(ctx, name: cst.Name) -> Optional[cst.Call]:
    """The call of ``tf.function`` (``tf.function(train_step)``) that is the one value ``name``
    is ever assigned, where it always runs: not under an ``if``, where the other path would leave
    the name holding something else, or nothing."""
    held = values_of(ctx, name)
    if not (len(held) == 1 and isinstance(held[0], cst.Call) and compiled_function(ctx, held[0]) is not None):
        return None
    block = ctx.parent(ctx.statement_of(held[0]))
    always = isinstance(block, cst.Module) or isinstance(ctx.parent(block), (cst.FunctionDef, cst.With))
    return held[0] if always else None


def _compiling_call(ctx, step: StepCall) -> Optional[cst.Call]:
    """The call of ``tf.function`` that compiles the step into what its loop calls: a trainer's
    method into an attribute (``self.train_step = tf.function(self._train_step)``), or a function
    into a name (``train_fn = tf.function(train_step)``, ``train_step = tf.function(train_step)``),
    if the loop calls one. Compiling it there (not with a decorator as well) keeps one
    ``tf.function``, the one ``strategy.run`` is given."""
    owner_class = ctx.enclosing(step.function, cst.ClassDef)
    func = step.call.func
    if isinstance(func, cst.Name):
        compiling = _held_compiling_call(ctx, func)
        return compiling if compiling is not None and is_name(
            compiled_function(ctx, compiling), step.function.name.value) else None
    if owner_class is None or not isinstance(func, cst.Attribute) or func.attr.value == step.function.name.value:
        return None
    method, compiling = wrapped_methods(ctx, owner_class).get(func.attr.value, (None, None))
    return compiling if method is step.function else None


def _run_call(strategy: str, step: str):
    def build(call: cst.Call) -> cst.Call:
        # `step(*batch)` and `step(**features)` keep their unpacking: `args=(*batch,)`, `kwargs={**features}`.
        positional = [arg for arg in call.args if arg.keyword is None and arg.star != "**"]
        named = [arg for arg in call.args if arg.keyword is not None or arg.star == "**"]
        parts = [step]
        if positional:
            values = ", ".join(arg.star + _rendered(arg.value) for arg in positional)
            parts.append(f"args=({values},)" if len(positional) == 1 else f"args=({values})")
        if named:
            values = ", ".join(f"**{_rendered(arg.value)}" if arg.keyword is None else
                               f"{arg.keyword.value!r}: {_rendered(arg.value)}" for arg in named)
            parts.append(f"kwargs={{{values}}}")
        return cst.parse_expression(f"{strategy}.run({', '.join(parts)})")

    return build


def _names_a_strategy(ctx, receiver: cst.BaseExpression, plan: Plan) -> bool:
    """``strategy`` in ``strategy.run(...)``: the program's strategy, or a variable a distribution
    strategy (the IPU's or one it replaces) is assigned to (a notebook's ``strat2``)."""
    if not isinstance(receiver, cst.Name):
        return False
    if receiver.value == plan.strategy_name:
        return True
    return any(isinstance(value, cst.Call) and ctx.qualified_name(value.func) in DISTRIBUTION_STRATEGIES | IPU_STRATEGIES
               for value in values_of(ctx, receiver))


def _rendered(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


# A denoising model whose `sample` method loops over the steps of its sampler, calling the network
# it holds at each; made and trained in `main`.
_DENOISER = """\
import numpy as np
import tensorflow as tf


class Denoiser(tf.keras.Model):
    def __init__(self, network, steps):
        super().__init__()
        self.network = network
        self.steps = steps

    def train_step(self, x):
        with tf.GradientTape() as tape:
            noise = tf.random.normal(tf.shape(x))
            loss = tf.reduce_mean((self.network([x + noise, tf.ones((tf.shape(x)[0], 1))]) - noise) ** 2)
        grads = tape.gradient(loss, self.network.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.network.trainable_weights))
        return {{"loss": loss}}

    def test_step(self, x):
        return {{}}

    def sample(self, x):
        for t in reversed(range(self.steps)):
            x = x - {sample}
        return x


def main(x_train):
    images = tf.keras.Input(shape=(8,))
    times = tf.keras.Input(shape=(1,))
    network = tf.keras.Model([images, times], tf.keras.layers.Dense(8)(tf.keras.layers.Concatenate()([images, times])))
    model = Denoiser(network, 10)
    model.compile(optimizer="adam")
    model.fit(x_train, batch_size=32, epochs=1)
    print(model.sample(np.zeros((4, 8), "float32")))
"""


class CustomLoop(Rule):
    code = "IPU111"
    name = "custom-loop"
    kind = FIX
    frameworks = frozenset({KERAS})
    after = (_UINT8_CAST,)  # its casts decide whether a uint8 `input_signature` is reported
    summary = ("Run `tf.GradientTape` training steps compiled, through `strategy.run`; with "
               "`--steps-per-execution`, K steps per execution in an on-device loop.")
    rationale = (
        "A custom training loop runs on the IPU when its step is a `@tf.function(jit_compile=True)` called "
        "through `strategy.run` inside `strategy.scope()`, with the model, optimizer, metrics and dataset "
        "iterator created in the scope (Targeting the IPU from TensorFlow 2, \"On-device loops\"). Every "
        "port does this for a step function (one that opens the tape and applies the optimizer) called in "
        "the body of a `for` loop, and for the `tf.function`s beside it that run the model without a tape "
        "(a test step) or apply accumulated gradients: the step gets `@tf.function(jit_compile=True)` (an existing "
        "`tf.function` keeps its options), each call goes through `strategy.run`, and the loop joins the "
        "model's scope with the optimizer and metrics; what the step returns is the per-replica value, "
        "the tensor itself on one replica. A step written inline in a loop's body, or in an `if` in it (the "
        "tape, the gradients, the optimizer step, after whatever host code comes first; or an optimizer's "
        "`minimize(loss_fn, var_list=...)`, which takes the gradients itself) moves into such a "
        "function, defined before the loops, "
        "with the loop's variables it reads as parameters and the names the code after it reads returned. "
        "A trainer class of its own (no base class) whose loop, in one of its methods, calls its step "
        "method (`self.train_step(x, y)`) gets the same: the method is compiled and called through "
        "`tf.distribute.get_strategy().run`, when the trainer is made and that loop's method called in the "
        "scope, and a loss object it holds (`self.loss_fn`) gets `reduction=NONE`. "
        "A loop that already calls `strategy.run` (a `MirroredStrategy` "
        "loop, whose strategy IPU103 replaces) keeps it; the step it passes (a function, or a method of the "
        "class, `self.step_fn`) is compiled, as the IPU runs compiled code and the IPU strategy refuses a "
        "Python function in eager mode; `experimental_run_v2`, the name `run` had before TensorFlow 2.2, which "
        "the IPU strategy raises on, becomes `run`; a lambda run eagerly, which has no definition to "
        "compile, or a plain function that is no step, whose code may not compile, is reported. With `--steps-per-execution K` "
        "a loop that only calls the step on each batch of a dataset becomes the documented on-device loop: "
        "a compiled function runs K steps with `for _ in tf.range(K)` on `next(iterator)` (taking, after the "
        "iterator, what the step is given that the loop never changes: a model, an optimizer), and the Python "
        "loop calls it `len(dataset) // K` times per epoch (the dataset needs a known length, so one read from "
        "files or a generator, or filtered, keeps one step per execution; batches that do not fill an "
        "execution run in one more, shorter execution, compiled once more). Other loops keep their shape with the step called through "
        "`strategy.run`. Steps that need Python while they run (`.numpy()`, `print`, list appends, global "
        "state), inline steps whose helper reads the batch the loop sets as a global (`loss_fn()` reading `x`), inline steps with a `return`, or a `break` of the loop they run in (one of a Python loop inside the step is kept), or names they share with the code around them, steps "
        "that take gradients of no model of the file (guides to tapes) or leave the optimizer step to the "
        "loop, and loops away from the model's code are reported instead, with what stops the rewrite, as is "
        "a loop beside them that calls the model itself (or a layer its class holds, `model.decoder(...)`), eagerly "
        "(an evaluation loop), or a training loop that calls a function of the file that does (a helper that "
        "saves generated samples after each epoch, `model(seed, training=False)`), or, in a script "
        "that only predicts, a loop that calls the model itself over files or batches (a look at a few "
        "samples, `test.take(3)` or `range(5)`, at most 64 items, is left alone, unless it feeds the model's answer "
        "back into its next input: a forecast or a generation a few steps long). So is a loop of a Keras model class's method run on "
        "the host (a diffusion model's sampler, called from a callback or after `fit`, not only from the steps "
        "Keras compiles) that calls a network the model holds at each of its steps (`self.ema_network([x, t])`, "
        "or a method of the class that does). A step that trains a model or "
        "optimizer made anew on each pass of a loop around it (a task's `clone_model` copy, an optimizer per "
        "task) is reported: compiled, it would be compiled again for each, and the optimizer could not make "
        "its variables in a later call; clone once and reset the copy with `set_weights`. Lists and dicts the "
        "loop fills as it goes (the weights kept after each task for a consolidation penalty) that an inline "
        "step reads become its parameters, as a compiled step keeps what a name it closes over held when "
        "traced. A step that takes gradients through a model without training it (a saliency map, deep dream, an "
        "adversarial image, the Fisher information the loop keeps after each task) is compiled and run through "
        "`strategy.run` like a training step. A step traced for "
        "inputs of changing shapes (`reduce_retracing=True`, an `input_signature` with a `None` dimension past "
        "the batch) "
        "is compiled again for each shape it is given, which is said in a note. A loop may sit "
        "in a function that every caller runs in the scope: it runs the step through the module's strategy, "
        "or, when the strategy is a local of another function, through `tf.distribute.get_strategy()`, "
        "which in the scope is the IPU strategy. Keras refuses a loss object's automatic reduction inside "
        "`strategy.run` outside its compiled losses (a ValueError): a loss object that the steps call (a "
        "training step, a test step, or both), or that a Keras model's own `train_step`/`test_step` calls "
        "(run by `fit` through the strategy), whether a module variable, one made in the step, or one held as "
        "`self.loss_fn` from what its `compile` is given, or called by a function of the file held that way "
        "(a GAN's `gen_loss_fn`), gets `reduction=NONE`, and each call in the steps is averaged with `tf.reduce_mean`, which is "
        "what the automatic reduction computed; one that cannot be followed, or is called out of the steps "
        "too, is reported."
    )
    examples = (
        # A `train_step` loss given to `compile` as a Keras loss object in one call and as a lambda in
        # another: the lambda cannot be followed, so neither is rewritten; reported, naming the lambda.
        Example(
            """\
            import tensorflow as tf
            from tensorflow import keras


            class Trainer(keras.Model):
                def compile(self, optimizer, loss_fn):
                    super().compile(optimizer=optimizer)
                    self.loss_fn = loss_fn

                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.loss_fn(y, self(x, training=True))
                    grads = tape.gradient(loss, self.trainable_weights)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
                    return {"loss": loss}


            def make_trainer(smoothing):
                trainer = Trainer()
                if smoothing:
                    trainer.compile("adam", loss_fn=lambda y, p: keras.losses.binary_crossentropy(y, p, label_smoothing=0.1))
                else:
                    trainer.compile("adam", loss_fn=keras.losses.BinaryCrossentropy())
                return trainer
            """,
        ),
        # A step given a task's copy of the model and an optimizer, both made anew for each task (a
        # few-shot learner adapted per task): compiled, it would be compiled again per task and its
        # optimizer could not make its variables; reported, not rewritten.
        Example(
            """\
            import tensorflow as tf


            def adapt(net, opt, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(net(x) - y))
                grads = tape.gradient(loss, net.trainable_variables)
                opt.apply_gradients(zip(grads, net.trainable_variables))
                return loss


            base = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            for task in tasks:
                learner = tf.keras.models.clone_model(base)
                learner.set_weights(base.get_weights())
                opt = tf.keras.optimizers.SGD(0.1)
                for x, y in task:
                    adapt(learner, opt, x, y)
            """,
        ),
        # The same written inline (a MAML inner loop on a clone): reported, not moved.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            for task in tasks:
                fast = tf.keras.models.clone_model(model)
                inner = tf.keras.optimizers.SGD(0.1)
                for x, y in task:
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(fast(x) - y))
                    grads = tape.gradient(loss, fast.trainable_weights)
                    inner.apply_gradients(zip(grads, fast.trainable_weights))
            """,
        ),
        # An elastic weight consolidation penalty over the weights kept after each task: the list the
        # task loop appends to is a parameter of the step, so each task's step sees the anchors so far
        # (closed over, the compiled step would keep the empty list it was first traced with).
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            optimizer = tf.keras.optimizers.Adam()
            anchors = []
            for task in tasks:
                for x, y in task:
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, model(x), from_logits=True))
                        for anchor in anchors:
                            loss += tf.add_n([tf.reduce_sum((w - a) ** 2) for w, a in zip(model.trainable_weights, anchor)])
                    grads = tape.gradient(loss, model.trainable_weights)
                    optimizer.apply_gradients(zip(grads, model.trainable_weights))
                anchors.append(model.get_weights())
            """,
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            optimizer = tf.keras.optimizers.Adam()
            anchors = []

            @tf.function(jit_compile=True)
            def train_step(x, y, anchors):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, model(x), from_logits=True))
                    for anchor in anchors:
                        loss += tf.add_n([tf.reduce_sum((w - a) ** 2) for w, a in zip(model.trainable_weights, anchor)])
                grads = tape.gradient(loss, model.trainable_weights)
                optimizer.apply_gradients(zip(grads, model.trainable_weights))

            for task in tasks:
                for x, y in task:
                    strategy.run(train_step, args=(x, y, anchors))
                anchors.append(model.get_weights())
            """,
        ),
        # The Fisher information of elastic weight consolidation, taken by a helper after each task: its
        # gradients are kept, never applied by the loop (whose optimizer step is the inline step's), so
        # it is compiled like any step that takes gradients through the model without training it.
        Example(
            """\
            import tensorflow as tf


            def fisher_diagonal(model, x):
                with tf.GradientTape() as tape:
                    log_p = tf.reduce_max(tf.nn.log_softmax(model(x)), axis=1)
                return [tf.square(g) for g in tape.gradient(log_p, model.trainable_weights)]


            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            optimizer = tf.keras.optimizers.Adam()
            fishers = []
            for task in tasks:
                for x, y in task:
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, model(x), from_logits=True))
                    grads = tape.gradient(loss, model.trainable_weights)
                    optimizer.apply_gradients(zip(grads, model.trainable_weights))
                fishers.append(fisher_diagonal(model, x))
            """,
            """\
            import tensorflow as tf


            @tf.function(jit_compile=True)
            def fisher_diagonal(model, x):
                with tf.GradientTape() as tape:
                    log_p = tf.reduce_max(tf.nn.log_softmax(model(x)), axis=1)
                return [tf.square(g) for g in tape.gradient(log_p, model.trainable_weights)]


            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            optimizer = tf.keras.optimizers.Adam()
            fishers = []

            @tf.function(jit_compile=True)
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, model(x), from_logits=True))
                grads = tape.gradient(loss, model.trainable_weights)
                optimizer.apply_gradients(zip(grads, model.trainable_weights))

            for task in tasks:
                for x, y in task:
                    strategy.run(train_step, args=(x, y))
                fishers.append(strategy.run(fisher_diagonal, args=(model, x)))
            """,
        ),
        # Prototypical networks: the episode loss is compiled in the training step, and the evaluation
        # over 600 test episodes (no look at a few samples) runs the encoder eagerly: reported there.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            def episode_loss(encoder, support, query):
                prototypes = tf.reduce_mean(tf.reshape(encoder(support), [5, 5, -1]), axis=1)
                distances = tf.reduce_sum(tf.square(encoder(query)[:, None] - prototypes[None]), axis=-1)
                return tf.reduce_mean(tf.reduce_logsumexp(-distances, axis=-1))


            encoder = tf.keras.Sequential([tf.keras.layers.Dense(16)])
            optimizer = tf.keras.optimizers.Adam()
            for episode in range(1000):
                support, query = sample_episode()
                with tf.GradientTape() as tape:
                    loss = episode_loss(encoder, support, query)
                grads = tape.gradient(loss, encoder.trainable_variables)
                optimizer.apply_gradients(zip(grads, encoder.trainable_variables))
            losses = []
            for episode in range(600):
                support, query = sample_episode()
                losses.append(float(episode_loss(encoder, support, query)))
            print(np.mean(losses))
            """,
            """\
            import numpy as np
            import tensorflow as tf


            def episode_loss(encoder, support, query):
                prototypes = tf.reduce_mean(tf.reshape(encoder(support), [5, 5, -1]), axis=1)
                distances = tf.reduce_sum(tf.square(encoder(query)[:, None] - prototypes[None]), axis=-1)
                return tf.reduce_mean(tf.reduce_logsumexp(-distances, axis=-1))


            encoder = tf.keras.Sequential([tf.keras.layers.Dense(16)])
            optimizer = tf.keras.optimizers.Adam()

            @tf.function(jit_compile=True)
            def train_step(support, query):
                with tf.GradientTape() as tape:
                    loss = episode_loss(encoder, support, query)
                grads = tape.gradient(loss, encoder.trainable_variables)
                optimizer.apply_gradients(zip(grads, encoder.trainable_variables))

            for episode in range(1000):
                support, query = sample_episode()
                strategy.run(train_step, args=(support, query))
            losses = []
            for episode in range(600):
                support, query = sample_episode()
                losses.append(float(episode_loss(encoder, support, query)))
            print(np.mean(losses))
            """,
        ),
        # A rollout helper with a loop over the model, called only by the `tf.function` step: traced
        # into the compiled step, its loop does not run eagerly and is not reported (only the step's
        # rewrite is; IPU102/IPU103, not selected here, add the configuration and the scope).
        Example(
            """\
import tensorflow as tf


def rollout(model, state, steps):
    total = tf.constant(0.0)
    for t in tf.range(steps):
        total += tf.reduce_sum(model(state))
    return total


@tf.function
def train_step(model, optimizer, state):
    with tf.GradientTape() as tape:
        loss = -rollout(model, state, 10)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
optimizer = tf.keras.optimizers.Adam()
for episode in range(100):
    train_step(model, optimizer, state)
""",
            """\
import tensorflow as tf


def rollout(model, state, steps):
    total = tf.constant(0.0)
    for t in tf.range(steps):
        total += tf.reduce_sum(model(state))
    return total


@tf.function(jit_compile=True)
def train_step(model, optimizer, state):
    with tf.GradientTape() as tape:
        loss = -rollout(model, state, 10)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
optimizer = tf.keras.optimizers.Adam()
for episode in range(100):
    strategy.run(train_step, args=(model, optimizer, state))
""",
        ),
        # A function of the script already compiled with XLA, run on each batch by a comprehension:
        # called directly, not through `strategy.run`; reported.
        Example(
            """\
import tensorflow as tf

model = tf.keras.models.load_model("classifier.keras")


@tf.function(jit_compile=True)
def answer(x):
    return tf.argmax(model(x, training=False), axis=-1)


labels = [answer(batch) for batch in batches]
""",
        ),
        # A script that only predicts, image by image, with the model called eagerly in the scope:
        # reported; a look at a few batches beside `evaluate` is not.
        Example(
            """\
import os

import tensorflow as tf


def main(folder):
    model = tf.keras.models.load_model("classifier.keras")
    for name in sorted(os.listdir(folder)):
        image = tf.image.decode_png(tf.io.read_file(os.path.join(folder, name)), channels=3)
        logits = model(tf.expand_dims(tf.cast(image, tf.float32) / 255.0, 0), training=False)
        print(name, int(tf.argmax(logits, axis=-1)[0]))
""",
        ),
        # A forecast a few steps ahead, each step's answer fed back into the next input: the model
        # runs eagerly at every step, however few they are (reported).
        Example(
            """\
import numpy as np
import tensorflow as tf


def main(series):
    model = tf.keras.models.load_model("forecaster.keras")
    window = series[-24:][np.newaxis]
    for _ in range(6):
        step = model(window, training=False).numpy()
        window = np.concatenate([window[:, 1:], step[:, np.newaxis]], axis=1)
""",
        ),
        # The answer stored into the window (`window[-1, 0] = step`) or added to the history the
        # next window is cut from (`history.append(step)`): it feeds back too.
        *(Example(f"""\
import numpy as np
import tensorflow as tf


def main(series):
    model = tf.keras.models.load_model("forecaster.keras")
    window = series[-24:].copy()
    history = list(series)
    for _ in range(6):
        step = model(window[np.newaxis], training=False).numpy()[0, 0]
{write}
""") for write in ("        window = np.roll(window, -1, axis=0)\n        window[-1, 0] = step",
                   "        history.append(step)\n        window = np.array(history[-24:])")),
        # An agent whose `act` method runs the model it keeps eagerly, called at each step of an
        # episode: reported at the loop's call of the method ...
        Example(
            """\
import numpy as np
import tensorflow as tf


class Agent:
    def __init__(self):
        self.q_net = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(4,))])
        self.q_net.compile(optimizer="adam", loss="mse")

    def act(self, state):
        return int(tf.argmax(self.q_net(state[None], training=False)[0]))


def main(steps):
    agent = Agent()
    state = np.zeros(4, "float32")
    for _ in range(steps):
        state = np.roll(state, agent.act(state))
    agent.q_net.fit(state[None], np.zeros((1, 2)), verbose=0)
""",
        ),
        # ... but not when it runs the model with `predict`, which Keras compiles for the IPU.
        Example(
            """\
import numpy as np
import tensorflow as tf


class Agent:
    def __init__(self):
        self.q_net = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(4,))])
        self.q_net.compile(optimizer="adam", loss="mse")

    def act(self, state):
        return int(np.argmax(self.q_net.predict(state[None], batch_size=1)[0]))


def main(steps):
    agent = Agent()
    state = np.zeros(4, "float32")
    for _ in range(steps):
        state = np.roll(state, agent.act(state))
    agent.q_net.fit(state[None], np.zeros((1, 2)), verbose=0)
""",
            reported=False,
        ),
        # A decoding loop (a `while`) that runs a layer the trained model holds, token by token.
        Example(
            """\
import tensorflow as tf


class Translator(tf.keras.Model):
    def __init__(self, vocab):
        super().__init__()
        self.encoder = tf.keras.layers.GRU(32, return_sequences=True)
        self.decoder = tf.keras.layers.Dense(vocab)

    def call(self, inputs):
        return self.decoder(self.encoder(inputs))


def main(pairs, source):
    model = Translator(300)
    model.compile("adam", "mse")
    model.fit(pairs, epochs=1)
    tokens = []
    while len(tokens) < 8:
        tokens.append(int(tf.argmax(model.decoder(source)[0, -1])))
""",
        ),
        # The same with parts the caller builds and gives the model (a captioning model's encoder and
        # decoder), run by a greedy decoding helper.
        Example(
            """\
import tensorflow as tf


class Captioner(tf.keras.Model):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    def call(self, inputs):
        images, tokens = inputs
        return self.decoder([tokens, self.encoder(images)])


def greedy(model, image):
    context = model.encoder(image[None])
    tokens = [1]
    for _ in range(8):
        tokens.append(int(tf.argmax(model.decoder([tf.constant([tokens]), context])[0, -1])))
    return tokens


def main(pairs, image):
    model = Captioner(make_encoder(), make_decoder())
    model.compile("adam", "mse")
    model.fit(pairs, epochs=1)
    print(greedy(model, image))
""",
        ),
        Example(
            """\
import tensorflow as tf


def main(test):
    model = tf.keras.models.load_model("classifier.keras")
    print(model.evaluate(test))
    for images, labels in test.take(2):
        print(tf.argmax(model(images, training=False), axis=-1).numpy(), labels.numpy())
""",
            reported=False,
        ),
        # A diffusion model's sampler, a method run on the host after `fit`, calls the network its
        # instance holds at each of its steps, eagerly.
        Example(_DENOISER.format(sample="self.network([x, tf.fill((len(x), 1), t / self.steps)], training=False)")),
        # A callback that samples at the end of each epoch, calling the model's network at each step.
        Example(_DENOISER.format(sample="self.network([x, tf.fill((len(x), 1), t / self.steps)], training=False)")
                .replace("\n\ndef main(x_train):", """

class Monitor(tf.keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        x = tf.random.normal((4, 8))
        for t in range(self.model.steps):
            x = x - self.model.network([x, tf.fill((4, 1), t / 10)], training=False)


def main(x_train):""").replace("epochs=1)", "epochs=1, callbacks=[Monitor()])").replace(
                    "    print(model.sample(np.zeros((4, 8), \"float32\")))\n", "")),
        # The same step through `predict`, which runs compiled, or a loop traced into `test_step` only.
        Example(_DENOISER.format(sample="self.network.predict([x, np.full((len(x), 1), t / self.steps)], "
                                        "batch_size=len(x))"), reported=False),
        Example(_DENOISER.format(sample="self.network([x, tf.fill((len(x), 1), t / self.steps)], training=False)")
                .replace("def test_step(self, x):\n        return {}", "def test_step(self, x):\n        "
                         "return {\"mean\": tf.reduce_mean(self.sample(x))}").replace(
                    "model.sample(np.zeros((4, 8), \"float32\"))", "model.evaluate(x_train, batch_size=32)"),
                reported=False),
        # A step that calls back into Python (here through a helper made with `tf.numpy_function`)
        # cannot be compiled: reported, left as it is.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            optimizer = tf.keras.optimizers.Adam(0.01)


            @tf.numpy_function(Tout=tf.float32)
            def simulate(action):
                return environment.step(action)


            def train_step(state):
                with tf.GradientTape() as tape:
                    reward = simulate(tf.argmax(model(state), axis=-1))
                    loss = -tf.reduce_mean(reward)
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))


            for state in states:
                train_step(state)
            """,
        ),
        # A step in an `if` of a `while` loop (an agent that learns every 4 frames) moves too.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                agent = tf.keras.Sequential([tf.keras.layers.Dense(4)])
                optimizer = tf.keras.optimizers.Adam(1e-3)
                frame = 0
                while frame < 1000:
                    frame += 1
                    if frame % 4 == 0:
                        states, targets = replay.sample(32)
                        with tf.GradientTape() as tape:
                            loss = tf.reduce_mean(tf.square(agent(states) - targets))
                        grads = tape.gradient(loss, agent.trainable_variables)
                        optimizer.apply_gradients(zip(grads, agent.trainable_variables))
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                agent = tf.keras.Sequential([tf.keras.layers.Dense(4)])
                optimizer = tf.keras.optimizers.Adam(1e-3)
                frame = 0

                @tf.function(jit_compile=True)
                def train_step(states, targets):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(agent(states) - targets))
                    grads = tape.gradient(loss, agent.trainable_variables)
                    optimizer.apply_gradients(zip(grads, agent.trainable_variables))

                while frame < 1000:
                    frame += 1
                    if frame % 4 == 0:
                        states, targets = replay.sample(32)
                        strategy.run(train_step, args=(states, targets))
            """,
        ),
        # Host code before the tape (augmenting the batch) stays in the loop; the step from the
        # tape to the optimizer step moves.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                optimizer = tf.keras.optimizers.SGD(0.01)
                for images, labels in dataset:
                    images = tf.image.random_flip_left_right(images)
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(model(images) - labels))
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                optimizer = tf.keras.optimizers.SGD(0.01)

                @tf.function(jit_compile=True)
                def train_step(images, labels):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(model(images) - labels))
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))

                for images, labels in dataset:
                    images = tf.image.random_flip_left_right(images)
                    strategy.run(train_step, args=(images, labels))
            """,
        ),
        Example(_BEFORE, _AFTER_DEVICE,
                options={"steps_per_execution": 16}),
        Example(_PER_STEP_BEFORE, _PER_STEP_AFTER, options={"steps_per_execution": 16}),
        # A helper the training loop calls after each epoch runs the model eagerly: reported, at the call.
        Example(_SAMPLES_HELPER, _SAMPLES_HELPER.replace("@tf.function\n", "@tf.function(jit_compile=True)\n").replace(
            "        train_step(noise, target)", "        strategy.run(train_step, args=(noise, target))")),
        # A step given the model and the optimizer beside the batch, which the loop never changes: the
        # on-device loop takes them after the iterator, as the documented loop does.
        Example(*(code.replace("def train_step(images, labels):", "def train_step(model, images, labels, optimizer):").replace(
            "train_step(images, labels)\n", "train_step(model, images, labels, optimizer)\n").replace(
            "def train_step_loop(iterator, steps):", "def train_step_loop(iterator, steps, model, optimizer):").replace(
            "args=(dataset_iterator, 16)", "args=(dataset_iterator, 16, model, optimizer)").replace(
            "args=(dataset_iterator, len(dataset) % 16)", "args=(dataset_iterator, len(dataset) % 16, model, optimizer)")
          for code in (_BEFORE, _AFTER_DEVICE)),
                options={"steps_per_execution": 16}),
        # The loop assigns what the step returns to names nothing reads: dropped, the on-device loop
        # fits. Read after the loop (the last batch's loss printed), the loop keeps one step per execution.
        Example(*(code.replace("optimizer.apply_gradients(zip(grads, model.trainable_variables))\n",
                               "optimizer.apply_gradients(zip(grads, model.trainable_variables))\n        return loss\n").replace(
            "        for images, labels in dataset:\n            train_step(images, labels)\n",
            "        for images, labels in dataset:\n            loss = train_step(images, labels)\n")
            for code in (_BEFORE, _AFTER_DEVICE)), options={"steps_per_execution": 16}),
        Example(*(code.replace("optimizer.apply_gradients(zip(grads, model.trainable_variables))\n",
                               "optimizer.apply_gradients(zip(grads, model.trainable_variables))\n        return loss\n").replace(
            "            train_step(images, labels)\n", "            loss = train_step(images, labels)\n        print(float(loss))\n").replace(
            "strategy.run(train_step, args=(images, labels))\n", "loss = strategy.run(train_step, args=(images, labels))\n"
            "        print(float(loss))\n") for code in (_BEFORE, _AFTER_STEP)), options={"steps_per_execution": 16}),
        # A step given the epoch beside the batch: an on-device loop (a function that reads only the
        # iterator) would read a stale epoch, so the loop keeps one step per execution, and the epoch,
        # a new Python number on every pass (a new program each), is reported.
        Example(*(code.replace("def step(x, y):", "def step(x, y, epoch):").replace(
            "for x, y in batches:\n    loss = step(x, y)\n    history.append(loss)\n",
            f"for epoch in range(3):\n    for x, y in batches:\n        {call}\n")
            for code, call in ((_PER_STEP_BEFORE, "step(x, y, epoch)"), (_PER_STEP_BEFORE.replace(
                "@tf.function\n", "@tf.function(jit_compile=True)\n"), "strategy.run(step, args=(x, y, epoch))"))),
                options={"steps_per_execution": 16}),
        Example(_BEFORE.replace("optimizer.apply_gradients", "print(loss.numpy())\n        optimizer.apply_gradients"),
                options={"steps_per_execution": 4}),
        Example(_BEFORE, _AFTER_STEP),
        # A step called under a statement of the loop (every few batches) runs through `strategy.run` there.
        Example(*(code.replace("for images, labels in dataset:\n", "for step, (images, labels) in enumerate(dataset):\n"
                               "            if step % 5 == 0:\n").replace("            train_step(", "                train_step(")
                  .replace("            strategy.run(", "                strategy.run(") for code in (_BEFORE, _AFTER_STEP))),
        # A step compiled by a call, into a name of its own or its own name: the call gets
        # `jit_compile=True` (one `tf.function`, no decorator besides it), and `strategy.run` the name.
        *(Example(_BEFORE.replace("\n    for epoch", f"\n    {held} = tf.function(train_step)\n\n    for epoch").replace(
            "            train_step(images", f"            {held}(images"),
                  _BEFORE.replace("\n    for epoch", f"\n    {held} = tf.function(train_step, jit_compile=True)\n\n"
                                  "    for epoch").replace("            train_step(images, labels)",
                                                         f"            strategy.run({held}, args=(images, labels))"))
          for held in ("train_fn", "train_step")),
        # Compiled on one path only: the decorator compiles the step on both.
        Example(*(code.replace("\n    for epoch", "\n    if tf.executing_eagerly():\n"
                               "        train_step = tf.function(train_step)\n\n    for epoch")
                  for code in (_BEFORE, _AFTER_STEP))),
        # Batches unpacked into the step keep their unpacking in `strategy.run`.
        Example(_BEFORE.replace("for images, labels in dataset:\n            train_step(images, labels)",
                                "for batch in dataset:\n            train_step(*batch)"),
                _AFTER_STEP.replace("for images, labels in dataset:\n            strategy.run(train_step, args=(images, labels))",
                                    "for batch in dataset:\n            strategy.run(train_step, args=(*batch,))")),
        Example(_BEFORE.replace("for images, labels in dataset:\n            train_step(images, labels)",
                                "for features in dataset:\n            train_step(**features)"),
                _AFTER_STEP.replace("for images, labels in dataset:\n            strategy.run(train_step, args=(images, labels))",
                                    "for features in dataset:\n            strategy.run(train_step, kwargs={**features})")),
        # A step compiled by TensorFlow but kept off XLA: the IPU runs compiled code only.
        Example(_BEFORE.replace("    def train_step", "    @tf.function(jit_compile=False)\n    def train_step"), _AFTER_STEP),
        # Batches from a Python generator: the IPU streams a `tf.data.Dataset` of static shapes.
        Example(_BEFORE.replace("    for epoch in range(3):\n        for images, labels in dataset:",
                                "    def batches():\n        while True:\n            yield next_batch()\n\n"
                                "    for epoch in range(3):\n        for images, labels in batches():")),
        # A warm-up call outside the loop, in the scope too, runs the compiled step through `strategy.run`.
        Example(_BEFORE.replace("    for epoch in range(3):", "    train_step(*first_batch)\n    for epoch in range(3):"),
                _AFTER_STEP.replace("    for epoch in range(3):",
                                    "    strategy.run(train_step, args=(*first_batch,))\n    for epoch in range(3):")),
        # ... also a single step at module level whose answer is kept, given by keyword.
        Example(_MODEL + "\n\ndef train_step(x, y):\n" + indent(_TAPE_STEP, "    ") + "    return loss\n\n\n"
                "first_loss = train_step(x0, y=y0)\nfor x, y in dataset:\n    train_step(x, y)\n",
                _MODEL + "\n\n@tf.function(jit_compile=True)\ndef train_step(x, y):\n" + indent(_TAPE_STEP, "    ")
                + "    return loss\n\n\nfirst_loss = strategy.run(train_step, args=(x0,), kwargs={'y': y0})\n"
                "for x, y in dataset:\n    strategy.run(train_step, args=(x, y))\n"),
        # A `tf.Module` made out of the scope, trained by a loop function that a Keras model also goes
        # through (the scope is opened for that one): its variables stay on the CPU; reported. (One
        # holding only Keras layers makes its variables when first called, in the step: not reported.)
        Example(_TF_MODULE_LOOP, _TF_MODULE_LOOP.replace("\ndef train(", "\n@tf.function(jit_compile=True)\ndef train(")
                .replace("        train(model, x, y)", "        tf.distribute.get_strategy().run(train, args=(model, x, y))")),
        # A notebook defines `train_step` again for its second loop: each loop runs the one before it.
        Example(_TWO_STEPS_BEFORE, _TWO_STEPS_BEFORE.replace("@tf.function\n", "@tf.function(jit_compile=True)\n").replace(
            "    train_step(x, y)", "    strategy.run(train_step, args=(x, y))")),
        # A MirroredStrategy loop keeps its `strategy.run`; the step it passes eagerly gets compiled.
        Example(_EAGER_RUN_BEFORE, _EAGER_RUN_BEFORE.replace("\n\ndef step", "\n\n@tf.function(jit_compile=True)\ndef step")),
        # A test step beside the training step: a `tf.function` that only runs the model, in a loop.
        Example(_PER_STEP_BEFORE + _TEST_STEP, _PER_STEP_AFTER + _TEST_STEP.replace(
            "@tf.function\n", "@tf.function(jit_compile=True)\n").replace(
            "    test_step(x, y)", "    strategy.run(test_step, args=(x, y))")),
        # `int()` of a static dimension, `float()` of a module constant: numbers known when the step
        # is traced, which a compiled step may convert.
        Example(*(code.replace("import tensorflow as tf\n", "import tensorflow as tf\n\nSCALE = 2\n").replace(
            "    return loss\n", "    return loss / int(y.shape[1]) * float(SCALE)\n")
            for code in (_PER_STEP_BEFORE, _PER_STEP_AFTER))),
        # A string lookup in a step: no compiled program holds its hash table, so it is reported.
        Example(_PER_STEP_BEFORE.replace("model = tf.keras", "to_ids = tf.keras.layers.StringLookup(vocabulary=words)\n"
                                         "model = tf.keras", 1).replace(
            "    return loss\n", "    start = to_ids(\"<start>\")\n    return loss\n")),
        # `tf.print` in a step prints from the graph, which no compiled program holds: reported. A
        # Python `print` in a `tf.function` runs once, while it is traced: the step is compiled.
        Example(_PER_STEP_BEFORE.replace("    return loss\n", "    tf.print(\"loss\", loss)\n    return loss\n")),
        Example(*(code.replace("    return loss\n", "    print(\"tracing step\")\n    return loss\n")
                  for code in (_PER_STEP_BEFORE, _PER_STEP_AFTER))),
        # Batches sliced from arrays by the loop: the last may be shorter, which is said.
        Example(_PER_STEP_BEFORE.replace("for x, y in batches:\n    loss = step(x, y)\n",
                                         "for i in range(0, len(features), 64):\n"
                                         "    loss = step(features[i:i + 64], targets[i:i + 64])\n"),
                _PER_STEP_AFTER.replace("for x, y in batches:\n    loss = strategy.run(step, args=(x, y))\n",
                                        "for i in range(0, len(features), 64):\n"
                                        "    loss = strategy.run(step, args=(features[i:i + 64], targets[i:i + 64]))\n")),
        # A loop that ends a batch early (`len(features) - 64 + 1`) slices whole batches only: nothing said.
        Example(*(code.replace(loop, "for i in range(0, len(features) - 64 + 1, 64):\n" + call)
                  for code, loop, call in (
                      (_PER_STEP_BEFORE, "for x, y in batches:\n    loss = step(x, y)\n",
                       "    loss = step(features[i:i + 64], targets[i:i + 64])\n"),
                      (_PER_STEP_AFTER, "for x, y in batches:\n    loss = strategy.run(step, args=(x, y))\n",
                       "    loss = strategy.run(step, args=(features[i:i + 64], targets[i:i + 64]))\n")))),
        # The same with the slices assigned first, also for a step written inline in the loop.
        Example(*(code.replace("for x, y in batches:\n", "for i in range(0, len(features), 64):\n"
                               "    x, y = features[i:i + 64], targets[i:i + 64]\n")
                  for code in (_PER_STEP_BEFORE, _PER_STEP_AFTER))),
        Example(*(code.replace("for x, y in dataset:\n", "for i in range(0, len(features), 64):\n"
                               "        x = features[i:i + 64]\n        y = targets[i:i + 64]\n")
                  for code in (_INLINE_BEFORE, _INLINE_AFTER))),
        # The same slices taken inside the inline step: they become its arguments, so that the compiled
        # step gets batches, not the loop's index (a new Python number, a new program, on every pass).
        Example(*(code.replace("for x, y in dataset:\n", "for i in range(0, len(features), 64):\n").replace(
            "model(x) - y", "model(features[i:i + 64]) - targets[i:i + 64]") for code in (_INLINE_BEFORE, _INLINE_AFTER.replace(
                "def train_step(x, y):", "def train_step(features_batch, targets_batch):").replace(
                "model(x) - y", "model(features_batch) - targets_batch").replace(
                "args=(x, y)", "args=(features[i:i + 64], targets[i:i + 64])")))),
        # The step reads the index itself too (a schedule): each new value would compile it again; reported.
        Example(_INLINE_BEFORE.replace("for x, y in dataset:\n", "for i in range(0, len(features), 64):\n").replace(
            "model(x) - y) ** 2)", "model(features[i:i + 64]) - targets[i:i + 64]) ** 2) * 0.5 ** (i // 6400)")),
        # The step defined inside the distributed step that hands it to `strategy.run` (the
        # tf.distribute guides' shape): the inner step is compiled, the outer stays the host's.
        Example(_NESTED_STEP, _NESTED_STEP.replace("    def step_fn", "    @tf.function(jit_compile=True)\n    def step_fn")),
        # A lambda run eagerly: the IPU strategy refuses it, and it has no definition to compile, so it
        # is reported, and so is a plain function that is no step; in a `tf.function` a lambda is traced
        # with it, and nothing is said.
        Example(_EAGER_LAMBDA),
        Example(_EAGER_LAMBDA.replace("for x in dist_dataset:", "def double(batch):\n    return 2 * batch\n\n\n"
                                      "for x in dist_dataset:").replace("lambda batch: model(batch, training=False)",
                                                                        "double")),
        Example(_EAGER_LAMBDA.replace("for x in dist_dataset:\n    print(strategy.run(",
                                      "@tf.function\ndef predict(x):\n    return strategy.run(").replace(
                                          "args=(x,)))", "args=(x,))"), reported=False),
        # The same written for TensorFlow 2.0/2.1 (`experimental_run_v2`, which the IPU strategy raises on):
        # renamed `run`, and the inner step compiled as above.
        Example(_NESTED_STEP.replace("strategy.run(", "strategy.experimental_run_v2("),
                _NESTED_STEP.replace("    def step_fn", "    @tf.function(jit_compile=True)\n    def step_fn")),
        # The same in a trainer class, the step defined in its distributed step or a method of its own.
        Example(_TRAINER_STEP, _TRAINER_STEP.replace("        def step_fn", "        @tf.function(jit_compile=True)\n"
                                                                        "        def step_fn")),
        Example(_TRAINER_METHOD_STEP, _TRAINER_METHOD_STEP.replace("    def step_fn", "    @tf.function(jit_compile=True)\n"
                                                                                  "    def step_fn")),
        # The trainer's test step beside it, which runs the model it trains without a tape: compiled too.
        Example(*(code + _TRAINER_TEST_METHOD.format(compiled=compiled) for code, compiled in (
            (_TRAINER_METHOD_STEP, ""),
            (_TRAINER_METHOD_STEP.replace("    def step_fn", "    @tf.function(jit_compile=True)\n    def step_fn"),
             "@tf.function(jit_compile=True)\n    ")))),
        # A step traced for inputs of changing shapes: compiled, and the cost of each new shape said.
        Example(_PER_STEP_BEFORE.replace("@tf.function\n", "@tf.function(reduce_retracing=True)\n"),
                _PER_STEP_AFTER.replace("@tf.function(jit_compile=True)\n",
                                        "@tf.function(reduce_retracing=True, jit_compile=True)\n")),
        # A step whose `input_signature` leaves the time dimension `None`: compiled, and the cost of
        # each new sequence length said.
        Example(_PER_STEP_BEFORE.replace("@tf.function\n", _SIGNATURE.format("")),
                _PER_STEP_AFTER.replace("@tf.function(jit_compile=True)\n", _SIGNATURE.format(", jit_compile=True"))),
        # A step that writes TensorBoard summaries: XLA compiles no summary op, so it is reported.
        Example(_PER_STEP_BEFORE.replace("    return loss\n", "    tf.summary.scalar(\"loss\", loss, step=optimizer.iterations)\n"
                                         "    return loss\n")),
        # A plain test step the epoch loop runs beside the training step: compiled and run the same way.
        Example(_EPOCHS_WITH_TEST, _EPOCHS_WITH_TEST.replace("@tf.function\n", "@tf.function(jit_compile=True)\n").replace(
            "\n\ndef test_step", "\n\n@tf.function(jit_compile=True)\ndef test_step").replace(
            "        step(x, y)", "        strategy.run(step, args=(x, y))").replace(
            "        test_step(x, y)", "        strategy.run(test_step, args=(x, y))")),
        # A MirroredStrategy loop hands its test step to `strategy.run` too: it is compiled like the step.
        Example(*(code.replace("\nmodel = ", "\nstrategy = tf.distribute.MirroredStrategy()\nmodel = ") for code in (
            _EAGER_RUN_BEFORE + _PLAIN_TEST_STEP + "\n\nfor x, y in dist_test:\n    strategy.run(test_step, args=(x, y))\n",
            (_EAGER_RUN_BEFORE + _PLAIN_TEST_STEP + "\n\nfor x, y in dist_test:\n    strategy.run(test_step, args=(x, y))\n"
             ).replace("\n\ndef ", "\n\n@tf.function(jit_compile=True)\ndef ")))),
        # The loss a training step calls, also the epoch loop's test step: compiled, and run inside the
        # step as it was.
        Example(*(code.replace("loss = tf.reduce_mean(tf.abs(model(x) - y))", "loss = error(x, y)") for code in (
            _EPOCHS_WITH_TEST.replace("def test_step(x, y):\n    test_error.update_state(tf.reduce_mean(tf.abs(model(x) - y)))",
                                      "def error(x, y):\n    return tf.reduce_mean(tf.abs(model(x) - y))").replace(
                "        test_step(x, y)", "        test_error(error(x, y))").replace(
                "loss = tf.reduce_mean((model(x) - y) ** 2)", "loss = error(x, y)"),
            _EPOCHS_WITH_TEST.replace("def test_step(x, y):\n    test_error.update_state(tf.reduce_mean(tf.abs(model(x) - y)))",
                                      "def error(x, y):\n    return tf.reduce_mean(tf.abs(model(x) - y))").replace(
                "        test_step(x, y)", "        test_error(strategy.run(error, args=(x, y)))").replace(
                "loss = tf.reduce_mean((model(x) - y) ** 2)", "loss = error(x, y)").replace(
                "@tf.function\n", "@tf.function(jit_compile=True)\n").replace(
                "\n\ndef error", "\n\n@tf.function(jit_compile=True)\ndef error").replace(
                "        step(x, y)", "        strategy.run(step, args=(x, y))")))),
        # The loss object a training step and a test step both call (the TensorFlow quickstart):
        # rewritten for both; also called on the host, it is reported there, where it must stay.
        Example(*(code.replace("optimizer = tf.keras.optimizers.Adam()\n", "optimizer = tf.keras.optimizers.Adam()\n"
                               f"loss_fn = tf.keras.losses.MeanSquaredError({reduction})\n").replace(
            "tf.reduce_mean((model(x) - y) ** 2)", loss).replace(
            "tf.reduce_mean(tf.abs(model(x) - y))", loss) for code, reduction, loss in (
            (_EPOCHS_WITH_TEST, "", "loss_fn(y, model(x))"),
            (_EPOCHS_WITH_TEST_AFTER, "reduction=tf.keras.losses.Reduction.NONE", "tf.reduce_mean(loss_fn(y, model(x)))")))),
        Example(*(code.replace("optimizer = tf.keras.optimizers.Adam()\n", "optimizer = tf.keras.optimizers.Adam()\n"
                               "loss_fn = tf.keras.losses.MeanSquaredError()\n").replace(
            "tf.reduce_mean((model(x) - y) ** 2)", "loss_fn(y, model(x))") + "print(float(loss_fn(y, model(x))))\n"
            for code in (_EPOCHS_WITH_TEST, _EPOCHS_WITH_TEST_AFTER))),
        # The loss object handed to the function whose step calls it: made with `reduction=NONE` where
        # it is given, inline or through a variable, and its calls in the step averaged.
        Example(_HANDED_LOSS, _HANDED_LOSS_AFTER),
        Example(*(code.replace("train(model, tf.keras.losses", "criterion = tf.keras.losses").replace(
            ", tf.keras.optimizers.Adam(), train_ds, 3)", "\ntrain(model, criterion, tf.keras.optimizers.Adam(), train_ds, 3)")
            for code in (_HANDED_LOSS, _HANDED_LOSS_AFTER))),
        # Also called on the host, or used elsewhere, where the reduced loss is what it gives: reported.
        Example(*(code.replace("        print(epoch, float(loss))\n", "        print(epoch, float(loss_fn(y, model(x))))\n")
                  for code in (_HANDED_LOSS, _HANDED_LOSS_COMPILED))),
        Example(*(code.replace("train(model, tf.keras.losses", "criterion = tf.keras.losses").replace(
            ", tf.keras.optimizers.Adam(), train_ds, 3)", "\ntrain(model, criterion, tf.keras.optimizers.Adam(), train_ds, 3)"
            "\nprint(criterion([0], [[1.0, 0.0, 0.0]]))") for code in (_HANDED_LOSS, _HANDED_LOSS_COMPILED))),
        # An evaluation loop beside the training loop that calls the model itself, eagerly: reported,
        # also the model's call in the epoch loop, and in a function called in the scope.
        Example(*(code + f"\nfor epoch in range(3):\n    for x, y in batches:\n        {call}\n"
                  "    print(float(tf.reduce_mean(tf.abs(model(x_val) - y_val))))\n"
                  for code, call in ((_PER_STEP_BEFORE, "step(x, y)"),
                                     (_PER_STEP_AFTER, "strategy.run(step, args=(x, y))")))),
        Example(*(code.replace("        print(epoch, float(loss))\n", "        print(epoch, float(loss))\n"
                               "        for x, y in test_batches:\n"
                               "            print(float(tf.reduce_mean(tf.abs(model(x) - y))))\n")
                  for code in (_LOOP_IN_FUNCTION, _LOOP_IN_FUNCTION.replace(
                      "@tf.function\n", "@tf.function(jit_compile=True)\n").replace(
                      "loss = step(x, y)", "loss = strategy.run(step, args=(x, y))")))),
        # An evaluation loop beside the training loop that calls the model itself, eagerly: reported.
        Example(*(code + "\nfor x, y in test_batches:\n    test_error.update_state(tf.reduce_mean(tf.abs(model(x) - y)))\n"
                  for code in (_PER_STEP_BEFORE, _PER_STEP_AFTER))),
        # A plain function the loop calls that plots what the model makes is host code: left alone.
        Example(*(code.replace("for x, y in batches:", "def show(x):\n    plt.imshow(model(x)[0])\n\n\n"
                               "for x, y in batches:\n    show(x)").replace(
            "import tensorflow as tf\n", "import matplotlib.pyplot as plt\nimport tensorflow as tf\n")
            for code in (_PER_STEP_BEFORE, _PER_STEP_AFTER))),
        # Gradients accumulated over four batches, then applied by a step of its own (no tape): both
        # are compiled and run through `strategy.run`, also the one called in an `if`.
        Example(_ACCUMULATE, _ACCUMULATE.replace("@tf.function\n", "@tf.function(jit_compile=True)\n").replace(
            "    accumulate(x, y)", "    strategy.run(accumulate, args=(x, y))").replace(
            "        apply()", "        strategy.run(apply)")),
        # A MirroredStrategy loop's step, run by `strategy.run` in a `tf.function` that reduces the
        # replicas' losses: the step is what runs on the IPU, and it must be compiled.
        Example(_EAGER_RUN_BEFORE.replace("for x, y in dist_dataset:\n    strategy.run(step, args=(x, y))\n", _DISTRIBUTED),
                _EAGER_RUN_BEFORE.replace("\n\ndef step", "\n\n@tf.function(jit_compile=True)\ndef step").replace(
                    "for x, y in dist_dataset:\n    strategy.run(step, args=(x, y))\n", _DISTRIBUTED)),
        # The same step as a trainer's method: compiled where the class defines it.
        Example(_OWN_STRATEGY_TRAINER.format(compiled=""), _OWN_STRATEGY_TRAINER.format(compiled="@tf.function(jit_compile=True)\n    ")),
        # A step that trains a `tf.Module`'s variables, in a file that also trains a Keras model: the
        # variables are made out of the IPU strategy's scope, so the loop is reported, as on its own.
        Example("""\
            import tensorflow as tf


            class Line(tf.Module):
                def __init__(self):
                    self.w = tf.Variable(5.0)

                def __call__(self, x):
                    return self.w * x


            def train(line, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(line(x) - y))
                line.w.assign_sub(0.1 * tape.gradient(loss, line.w))


            line = Line()
            for epoch in range(10):
                train(line, x, y)
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(optimizer="sgd", loss="mse")
            model.fit(x, y, epochs=5, batch_size=32)
            """),
        # A step written inline in the loop moves into a compiled function; what the loop reads after it
        # (the loss) is returned.
        Example(_INLINE_BEFORE, _INLINE_AFTER),
        # A helper's parameter named like a variable of the step is the helper's own: it reads no
        # output of the step, which returns the loss alone.
        Example(*(code.replace("optimizer = tf.keras.optimizers.SGD(0.01)\n", _CLIPPED).replace(
            "zip(grads, model", "zip(clipped(grads), model") for code in (
            _INLINE_BEFORE, _INLINE_AFTER.replace("\n\n@tf.function", "\n@tf.function").replace(
                "loss\n\nfor", "loss\n\n\nfor")))),
        # A step a factory returns, called through the name that holds it: that name goes to
        # `strategy.run`, one step per execution (the on-device loop would go beside the step, in
        # the factory, where the name is not bound).
        Example(_FACTORY, _FACTORY_AFTER),
        Example(_FACTORY, _FACTORY_AFTER, options={"steps_per_execution": 16}),
        # Two loops, two step functions, each with a name of its own.
        Example(_MODEL + "for x, y in dataset:\n" + indent(_TAPE_STEP, "    ") + "for x, y in finetune:\n"
                + indent(_TAPE_STEP, "    "),
                _MODEL + "\n@tf.function(jit_compile=True)\ndef train_step(x, y):\n" + indent(_TAPE_STEP, "    ")
                + "\nfor x, y in dataset:\n    strategy.run(train_step, args=(x, y))\n\n@tf.function(jit_compile=True)\n"
                "def ipu_train_step(x, y):\n" + indent(_TAPE_STEP, "    ")
                + "\nfor x, y in finetune:\n    strategy.run(ipu_train_step, args=(x, y))\n"),
        # The step reads a counter the loop moves on every pass: each new Python number would compile
        # the step again; reported.
        Example(_INLINE_BEFORE.replace("for epoch in range(3):", "seen = 0\nfor epoch in range(3):").replace(
            "loss = tf.reduce_mean((model(x) - y) ** 2)", "loss = tf.reduce_mean((model(x) - y) ** 2) / (1 + seen)").replace(
            "        print(float(loss))", "        print(float(loss))\n        seen += 1")),
        # The step reads `running` from the pass before: a function of its own cannot; reported.
        Example(_INLINE_BEFORE.replace("for epoch in range(3):", "running = 0.0\nfor epoch in range(3):").replace(
            "        optimizer.apply_gradients", "        running = 0.9 * running + 0.1 * loss\n        optimizer.apply_gradients")),
        # A `break` of a Python loop written in the step (terms of a penalty, up to the first zero
        # weight) stays in the function the step moves into; one of the loop the step runs in cannot.
        Example(*(code.replace("- y) ** 2)\n", "- y) ** 2)\n" + indent(_PENALTIES, " " * indent_by)) for code, indent_by in (
            (_INLINE_BEFORE, 12), (_INLINE_AFTER, 8)))),
        Example(_INLINE_BEFORE.replace("- y) ** 2)\n", "- y) ** 2)\n            if tf.math.is_nan(loss):\n"
                                       "                break\n")),
        # A helper that only takes gradients, and the loop applies them: both move into the step.
        Example(_GRAD_HELPER_BEFORE, _GRAD_HELPER_BEFORE.replace("\n\n\nfor x, y in dataset:\n    loss, grads = grad(x, y)\n"
                "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n", _GRAD_HELPER_STEP).replace(
                "    print(float(loss))", "    loss = strategy.run(train_step, args=(x, y))\n    print(float(loss))")),
        # A step that takes gradients through a model without training it (a saliency map, deep
        # dream) is compiled and run on the IPU the same way, also from a function called in the scope.
        Example(_SALIENCY, _SALIENCY.replace("\n\ndef saliency", "\n\n@tf.function(jit_compile=True)\ndef saliency")
                .replace("maps.append(saliency(image))", "maps.append(strategy.run(saliency, args=(image,)))")),
        # The loop sits in a function the module calls in the scope: the module's strategy runs it.
        Example(_LOOP_IN_FUNCTION, _LOOP_IN_FUNCTION.replace("@tf.function\n", "@tf.function(jit_compile=True)\n")
                .replace("loss = step(x, y)", "loss = strategy.run(step, args=(x, y))")),
        # The same function called from `main()`, where the strategy is made, a local out of its
        # reach: in the scope, TensorFlow's current strategy is the IPU strategy, and it runs the step.
        Example(*(code.replace("\n\nmodel = ", "\n\ndef main():\n    model = ").replace(
            "\nfit_epochs(", "\n    fit_epochs(").replace("\noptimizer = ", "\n    optimizer = ") for code in (
            _LOOP_IN_FUNCTION, _LOOP_IN_FUNCTION.replace("@tf.function\n", "@tf.function(jit_compile=True)\n").replace(
                "loss = step(x, y)", "loss = tf.distribute.get_strategy().run(step, args=(x, y))")))),
        # A step written inline in a function that `main()` calls in the scope: the step moves into a
        # function at the top of it, run by TensorFlow's current strategy (the IPU strategy there).
        Example(_INLINE_IN_FUNCTION, _INLINE_IN_FUNCTION_AFTER),
        # ... and in an epoch function called in the epoch loop: a function of its own, not a step
        # (its tape is in its loop); the step made on each call is compiled again each time (a note).
        Example(_EPOCH_FUNCTION, _EPOCH_FUNCTION_AFTER),
        # A function called per batch that trains several models in a loop of its own is a step, not
        # an epoch function; it needs Python (a list append) while it runs: reported.
        Example(_ENSEMBLE_STEP),
        # A trainer class of its own (no base class) whose loop calls its step method: the method is
        # compiled and run through the current strategy (the trainer is made, and its loop called, in
        # the scope); the loss object it holds gets `reduction=NONE`.
        Example(*(_TRAINER_CLASS.format(**parts) for parts in (
            {"loss": "", "compiled": "", "mean": "self.loss_fn(y, self.model(x))", "call": "self.train_step(x, y)"},
            {"loss": "reduction=tf.keras.losses.Reduction.NONE", "compiled": "@tf.function(jit_compile=True)\n    ",
             "mean": "tf.reduce_mean(self.loss_fn(y, self.model(x)))",
             "call": "tf.distribute.get_strategy().run(self.train_step, args=(x, y))"}))),
        # ... and its `tf.function` test step beside it, which runs the model the tape's code runs.
        Example(*(_TRAINER_CLASS.format(**parts).replace("    def fit(self, dataset, epochs):\n", (
            "    {0}def test_step(self, x, y):\n        self.error.update_state(y, self.model(x))\n\n"
            "    def fit(self, dataset, epochs):\n").format(parts["test"])).replace(
            "                " + parts["call"] + "\n", "                " + parts["call"] + "\n                "
            + parts["call"].replace("train_step", "test_step") + "\n") for parts in (
            {"loss": "", "compiled": "", "mean": "self.loss_fn(y, self.model(x))", "call": "self.train_step(x, y)",
             "test": "@tf.function\n    "},
            {"loss": "reduction=tf.keras.losses.Reduction.NONE", "compiled": "@tf.function(jit_compile=True)\n    ",
             "mean": "tf.reduce_mean(self.loss_fn(y, self.model(x)))",
             "call": "tf.distribute.get_strategy().run(self.train_step, args=(x, y))",
             "test": "@tf.function(jit_compile=True)\n    "}))),
        # ... and the step compiled where the trainer is made (`self.step = tf.function(self.train_step)`),
        # the loop calling that attribute: `jit_compile=True` goes on that call, the loop runs it
        # through the current strategy.
        Example(*(_TRAINER_CLASS.format(**parts).replace(
            "        self.loss_fn", f"        self.step = tf.function(self.train_step{parts['jit']})\n        self.loss_fn")
            for parts in (
            {"loss": "", "compiled": "", "mean": "self.loss_fn(y, self.model(x))", "call": "self.step(x, y)",
             "jit": ""},
            {"loss": "reduction=tf.keras.losses.Reduction.NONE", "compiled": "",
             "mean": "tf.reduce_mean(self.loss_fn(y, self.model(x)))",
             "call": "tf.distribute.get_strategy().run(self.step, args=(x, y))", "jit": ", jit_compile=True"}))),
        # ... and the trainer deriving from a plain class of the file (`class Trainer(Base):`): a trainer
        # all the same, rewritten alike.
        Example(*(_TRAINER_CLASS.format(**parts).replace(
            "class Trainer:\n", "class Base:\n    def log(self, text):\n        print(text)\n\n\nclass Trainer(Base):\n")
            for parts in _COMPILED_TRAINER_PARTS)),
        # ... and the trainer's epoch loop in its base class, which leaves the step to it (`raise
        # NotImplementedError`): the loop runs the subclass's step, rewritten alike.
        Example(*(_TRAINER_CLASS.format(**parts).replace(
            "class Trainer:\n", "class Base:\n    def train_step(self, x, y):\n        raise NotImplementedError\n\n"
            "    def fit(self, dataset, epochs):\n        for epoch in range(epochs):\n            for x, y in dataset:\n"
            f"                {parts['call']}\n\n\nclass Trainer(Base):\n").replace(
            "\n    def fit(self, dataset, epochs):\n        for epoch in range(epochs):\n            for x, y in dataset:\n"
            f"                {parts['call']}\n\n\ndef main", "\n\ndef main")
            for parts in _COMPILED_TRAINER_PARTS)),
        # ... and an evaluation loop of the trainer that calls its model itself, eagerly: reported.
        Example(*(_TRAINER_CLASS.format(**parts).replace("    def fit(self, dataset, epochs):\n", (
            "    def score(self, dataset):\n        for x, y in dataset:\n"
            "            self.error.update_state(y, self.model(x))\n\n    def fit(self, dataset, epochs):\n"))
            for parts in (
            {"loss": "", "compiled": "", "mean": "self.loss_fn(y, self.model(x))", "call": "self.train_step(x, y)"},
            {"loss": "reduction=tf.keras.losses.Reduction.NONE", "compiled": "@tf.function(jit_compile=True)\n    ",
             "mean": "tf.reduce_mean(self.loss_fn(y, self.model(x)))",
             "call": "tf.distribute.get_strategy().run(self.train_step, args=(x, y))"}))),
        # The same step reading a loss as a Python number while it runs: reported, left as it is.
        Example(_TRAINER_CLASS.format(loss="", compiled="", mean="self.loss_fn(y, self.model(x))",
                                      call="self.train_step(x, y)").replace(
            "        return loss\n", "        return loss.numpy()\n")),
        # A loop in a Keras `train_step` override: `fit` compiles the method, nothing to move.
        Example("""\
            import tensorflow as tf


            class Captioner(tf.keras.Model):
                def train_step(self, data):
                    images, captions = data
                    for i in range(3):
                        with tf.GradientTape() as tape:
                            loss = self.compiled_loss(captions[:, i], self(images, training=True))
                        grads = tape.gradient(loss, self.trainable_variables)
                        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}
            """, reported=False),
        # A Keras model's own `train_step`, which `fit` runs through the strategy: the loss object
        # its `compile` is given gets `reduction=NONE`, and the step averages what it gives.
        Example(
            """\
            import tensorflow as tf


            class Critic(tf.keras.Model):
                def compile(self, optimizer, loss_fn):
                    super().compile()
                    self.optimizer = optimizer
                    self.loss_fn = loss_fn

                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.loss_fn(y, self(x, training=True))
                    grads = tape.gradient(loss, self.trainable_weights)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
                    return {"loss": loss}


            critic = Critic()
            critic.compile(optimizer=tf.keras.optimizers.Adam(), loss_fn=tf.keras.losses.MeanSquaredError())
            critic.fit(x, y, epochs=2)
            """,
            """\
            import tensorflow as tf


            class Critic(tf.keras.Model):
                def compile(self, optimizer, loss_fn):
                    super().compile()
                    self.optimizer = optimizer
                    self.loss_fn = loss_fn

                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(self.loss_fn(y, self(x, training=True)))
                    grads = tape.gradient(loss, self.trainable_weights)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
                    return {"loss": loss}


            critic = Critic()
            critic.compile(optimizer=tf.keras.optimizers.Adam(), loss_fn=tf.keras.losses.MeanSquaredError(reduction=tf.keras.losses.Reduction.NONE))
            critic.fit(x, y, epochs=2)
            """,
        ),
        # Loss functions of the file given to the model's `compile` (a CycleGAN's adversarial
        # losses), which call a module's loss object: the step runs them, so that object changes too.
        Example(
            """\
            import tensorflow as tf

            adversarial = tf.keras.losses.MeanSquaredError()


            def critic_loss(real, fake):
                return (adversarial(tf.ones_like(real), real) + adversarial(tf.zeros_like(fake), fake)) * 0.5


            class Translator(tf.keras.Model):
                def compile(self, optimizer, disc_loss_fn):
                    super().compile()
                    self.optimizer = optimizer
                    self.disc_loss_fn = disc_loss_fn

                def train_step(self, data):
                    real, fake = data
                    with tf.GradientTape() as tape:
                        loss = self.disc_loss_fn(self(real, training=True), self(fake, training=True))
                    grads = tape.gradient(loss, self.trainable_weights)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
                    return {"loss": loss}


            translator = Translator()
            translator.compile(optimizer=tf.keras.optimizers.Adam(), disc_loss_fn=critic_loss)
            translator.fit(pairs, epochs=2)
            """,
            """\
            import tensorflow as tf

            adversarial = tf.keras.losses.MeanSquaredError(reduction=tf.keras.losses.Reduction.NONE)


            def critic_loss(real, fake):
                return (tf.reduce_mean(adversarial(tf.ones_like(real), real)) + tf.reduce_mean(adversarial(tf.zeros_like(fake), fake))) * 0.5


            class Translator(tf.keras.Model):
                def compile(self, optimizer, disc_loss_fn):
                    super().compile()
                    self.optimizer = optimizer
                    self.disc_loss_fn = disc_loss_fn

                def train_step(self, data):
                    real, fake = data
                    with tf.GradientTape() as tape:
                        loss = self.disc_loss_fn(self(real, training=True), self(fake, training=True))
                    grads = tape.gradient(loss, self.trainable_weights)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
                    return {"loss": loss}


            translator = Translator()
            translator.compile(optimizer=tf.keras.optimizers.Adam(), disc_loss_fn=critic_loss)
            translator.fit(pairs, epochs=2)
            """,
        ),
        # The same for a loss object the model makes for itself.
        Example(
            """\
            import tensorflow as tf


            class Probe(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.head = tf.keras.layers.Dense(10)
                    self.probe_loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.probe_loss(y, self.head(x))
                    grads = tape.gradient(loss, self.trainable_weights)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
                    return {"loss": loss}
            """,
            """\
            import tensorflow as tf


            class Probe(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.head = tf.keras.layers.Dense(10)
                    self.probe_loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=tf.keras.losses.Reduction.NONE)

                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(self.probe_loss(y, self.head(x)))
                    grads = tape.gradient(loss, self.trainable_weights)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
                    return {"loss": loss}
            """,
        ),
        # The loss object is also called out of the steps, where its reduction must stay: reported.
        Example("""\
            import tensorflow as tf


            class Critic(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.loss_fn = tf.keras.losses.MeanSquaredError()

                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.loss_fn(y, self(x, training=True))
                    grads = tape.gradient(loss, self.trainable_weights)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
                    return {"loss": loss}

                def score(self, x, y):
                    return self.loss_fn(y, self(x))
            """),
        # A loss object made and called at once in a custom step.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            optimizer = tf.keras.optimizers.SGD(0.01)


            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.keras.losses.MeanSquaredError()(y, model(x, training=True))
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
                return loss


            for x, y in dataset:
                train_step(x, y)
            """,
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            optimizer = tf.keras.optimizers.SGD(0.01)


            @tf.function(jit_compile=True)
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.keras.losses.MeanSquaredError(reduction=tf.keras.losses.Reduction.NONE)(y, model(x, training=True)))
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
                return loss


            for x, y in dataset:
                strategy.run(train_step, args=(x, y))
            """,
        ),
        # An inline step that adds the model's regularization losses to its loss (`+=`) moves too.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1, kernel_regularizer="l2")])
            optimizer = tf.keras.optimizers.SGD(0.01)

            for epoch in range(3):
                for x, y in dataset:
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                        loss += sum(model.losses)
                    grads = tape.gradient(loss, model.trainable_weights)
                    optimizer.apply_gradients(zip(grads, model.trainable_weights))
                print(epoch, float(loss))
            """,
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1, kernel_regularizer="l2")])
            optimizer = tf.keras.optimizers.SGD(0.01)

            @tf.function(jit_compile=True)
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                    loss += sum(model.losses)
                grads = tape.gradient(loss, model.trainable_weights)
                optimizer.apply_gradients(zip(grads, model.trainable_weights))
                return loss

            for epoch in range(3):
                for x, y in dataset:
                    loss = strategy.run(train_step, args=(x, y))
                print(epoch, float(loss))
            """,
        ),
        # An on-device loop written by hand (K steps in a `tf.function` on `next(iterator)`): the
        # loop function runs through `strategy.run`, the step inside it is called as it is.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            optimizer = tf.keras.optimizers.SGD(0.01)


            def step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
                return loss


            @tf.function
            def train_loop(iterator):
                for _ in tf.range(10):
                    x, y = next(iterator)
                    loss = step(x, y)
                return loss


            iterator = iter(dataset)
            for i in range(100):
                train_loop(iterator)
            """,
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            optimizer = tf.keras.optimizers.SGD(0.01)


            def step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
                return loss


            @tf.function(jit_compile=True)
            def train_loop(iterator):
                for _ in tf.range(10):
                    x, y = next(iterator)
                    loss = step(x, y)
                return loss


            iterator = iter(dataset)
            for i in range(100):
                strategy.run(train_loop, args=(iterator,))
            """,
        ),
        # With steps per execution, a dataset of unknown length (records read from files) keeps one
        # step per execution: the on-device loop counts its executions with `len()`, which raises.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            optimizer = tf.keras.optimizers.SGD(0.01)
            records = tf.data.TFRecordDataset(files).map(parse).batch(32, drop_remainder=True)


            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


            for epoch in range(3):
                for x, y in records:
                    train_step(x, y)
            """,
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            optimizer = tf.keras.optimizers.SGD(0.01)
            records = tf.data.TFRecordDataset(files).map(parse).batch(32, drop_remainder=True)


            @tf.function(jit_compile=True)
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


            for epoch in range(3):
                for x, y in records:
                    strategy.run(train_step, args=(x, y))
            """,
            options={"steps_per_execution": 4},
        ),
        # The optimizer the step updates is made at module level, the model and the loop in `main()`,
        # which `cli()` calls: no scope reaches the optimizer, which is reported.
        Example(_MODULE_OPTIMIZER, _MODULE_OPTIMIZER.replace("@tf.function\n", "@tf.function(jit_compile=True)\n").replace(
            "        train_step(model, x, y)", "        strategy.run(train_step, args=(model, x, y))")),
        # Already ported: the step runs through `strategy.run` in the IPU strategy's scope.
        Example(_PORTED, reported=False),
        # Gradients of the loss with respect to the input (an adversarial example): no optimizer
        # step, but the model runs in it: compiled and run through `strategy.run` all the same.
        Example(_BEFORE.replace(_TO_INPUT, _INPUT_GRADS), _AFTER_STEP.replace(_TO_INPUT, _INPUT_GRADS)),
        # Gradients of plain variables, no model (a guide to tapes): nothing for the IPU, reported.
        Example(_BEFORE.replace("model(images)", "images * scale").replace(_TO_INPUT, _INPUT_GRADS)),
        # A metric made anew in each epoch of the loop: reported, to be made once in the scope.
        Example(
            """\
            import tensorflow as tf


            @tf.function(jit_compile=True)
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss


            for epoch in range(3):
                epoch_loss = tf.keras.metrics.Mean()
                for x, y in dataset:
                    epoch_loss.update_state(strategy.run(train_step, args=(x, y)))
            """,
        ),
        # A metric handed to `compile` with a model made in the same loop (a k-fold loop) is Keras'.
        Example(
            """\
            import tensorflow as tf

            for fold in range(5):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1, activation="sigmoid")])
                model.compile(loss="binary_crossentropy", metrics=[tf.keras.metrics.AUC()])
                for x, y in folds[fold]:
                    model.train_on_batch(x, y)
            """,
            reported=False,
        ),
        # An optimizer's `minimize` written in the loop, with no tape: it is the step, moved into a
        # compiled function run through `strategy.run`.
        Example(_MODEL + _MINIMIZE_LOOP, _MODEL + "\n@tf.function(jit_compile=True)\ndef train_step(x, y):\n"
                + _MINIMIZE + "\nfor epoch in range(3):\n    for x, y in dataset:\n"
                "        strategy.run(train_step, args=(x, y))\n"),
        # An inline step whose loss helper reads the loop's batch as a global: a compiled step would
        # keep the batch it was traced with, so it is reported, and the helper is not a step of its own.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            optimizer = tf.keras.optimizers.SGD(0.01)


            def compute_loss():
                return tf.reduce_mean((model(x) - y) ** 2)


            for epoch in range(3):
                for x, y in dataset:
                    with tf.GradientTape() as tape:
                        loss = compute_loss()
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
        ),
        # A compiled step run through `strategy.run` that loops over `tf.range` in its graph: the whole
        # function is the step, and the tape in its loop is not a second step to move out of it.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                optimizer = tf.keras.optimizers.SGD(0.01)

                @tf.function(jit_compile=True)
                def train_steps(n):
                    for _ in tf.range(n):
                        with tf.GradientTape() as tape:
                            loss = tf.reduce_mean((model(x) - y) ** 2)
                        grads = tape.gradient(loss, model.trainable_variables)
                        optimizer.apply_gradients(zip(grads, model.trainable_variables))
                    return loss

                for epoch in range(3):
                    strategy.run(train_steps, args=(tf.constant(20),))
            """,
            reported=False,
        ),
    )

    def _metrics_made_in_loops(self, ctx) -> None:
        """Report a Keras metric object (``tf.keras.metrics.Mean()``) assigned inside a loop that
        trains (an epoch loop around the steps): a metric holds variables, made once in the
        strategy's scope; a new one each epoch makes new variables, outside the scope of the port.
        (One handed to ``compile`` with a model made in the same loop, a k-fold loop, is Keras'.)"""
        for call in ctx.nodes(cst.Call):
            keras = canonical_keras(ctx.qualified_name(call.func))
            metric = keras.rsplit(".", 1)[1] if keras is not None and keras.startswith("keras.metrics.") else ""
            loop = _innermost_loop(ctx, call)
            assigned = isinstance(ctx.parent(call), cst.Assign)
            if not metric[:1].isupper() or not assigned or loop is None or not loop_trains(ctx, loop):
                continue
            header = (f"for {code_of(ctx, loop.target)} in {code_of(ctx, loop.iter)}" if isinstance(loop, cst.For)
                      else f"while {code_of(ctx, loop.test)}")
            ctx.report(self.code, call, f"the Keras metric `{metric}` is made in the training loop "
                       f"(`{header}`), a new one on each pass: a metric holds variables, which the IPU "
                       "strategy needs made in `strategy.scope()`, once; make it before the loop, in the scope "
                       "with the model, and call its `reset_state()` where a new one was made", fixed=False)

    def run(self, ctx) -> None:
        tf = tensorflow_alias(ctx)
        if tf is None:
            return
        self._eager_runs(ctx, tf)
        self._renamed_runs(ctx)
        self._metrics_made_in_loops(ctx)
        losses: Set[str] = set()  # loss objects given an explicit reduction
        named: Set[str] = set()  # the step functions made so far, each with a name of its own
        plans = [plan for plan in loop_plans(ctx) if not moved(ctx, plan.step.call)]
        self._explicit_loss_reduction(ctx, _run_steps(plans, inline_steps(ctx)), tf, losses)
        for inline in inline_steps(ctx):
            self._inline_step(ctx, inline, tf, named)
        rewritten = [plan.step.function for plan in plans if plan.problem is None] + [
            inline.statements[0] for inline in inline_steps(ctx) if inline.problem is None]
        replicas = config_replicas(ctx.config)
        if replicas > 1 and rewritten:
            ctx.report(self.code, rewritten[0], f"{replicas} replicas run this custom loop: Keras "
                       "optimizers sum the gradients of the replicas, but how losses and metrics scale under "
                       "replication in custom loops is not documented; check the loss "
                       "reduction and the learning rate", fixed=False)
        decorated = set()
        compiled: Set[str] = set()  # names of the steps decorated
        loops = {}
        for plan in plans:
            step = plan.step
            name = step.function.name.value
            if plan.problem is not None:
                ctx.report(self.code, step.call, plan.problem, fixed=False)
                continue
            if plan.mode == "step":
                compiling = _compiling_call(ctx, step)
                if compiling is not None:
                    if id(compiling) not in decorated:  # compiled where it is made: `jit_compile=True` there
                        decorated.add(id(compiling))
                        # What is compiled is what the name the loop calls holds (`train_fn =
                        # tf.function(train_step)`), not the function itself, which stays plain Python.
                        compiled.add(step.call.func.value if isinstance(step.call.func, cst.Name) else name)
                        ctx.replace(compiling, _jit_compiled)
                        self._report_changing_shapes(ctx, step.function, tf)
                        self._report_uint8_signature(ctx, step.function, tf)
                elif id(step.function) not in decorated:
                    decorated.add(id(step.function))
                    compiled.add(name)
                    ctx.replace(step.function, _decorated(tf))
                    self._report_changing_shapes(ctx, step.function, tf)
                    self._report_uint8_signature(ctx, step.function, tf)
                # The name the loop calls: the step's own, or one that holds it (`step_fn = make_step(...)`).
                held = code_of(ctx, step.call.func)
                ctx.replace(step.call, _run_call(plan.strategy, held))
                self._report_sliced_batches(ctx, step.loop, [arg.value for arg in step.call.args])
                steps = config_steps(ctx.config)
                # A trainer's own step method, called through `self` (the on-device loop would be a method too).
                method = isinstance(step.call.func, cst.Attribute)
                detail = (f"; it is a method, called through `self`, so it stays one step per execution instead of "
                          f"{steps}" if steps and method
                          else f"; the loop calls it as `{held}`, which holds "
                          f"{'it compiled' if compiling is not None else 'what a function returns'}, so it stays one "
                          f"step per execution instead of {steps}" if steps and held != name
                          else f"; the length of `{code_of(ctx, step.loop.iter)}` is not known (it is read from files or "
                          "a generator, or filtered), and the on-device loop counts its executions with `len()`, so "
                          f"it stays one step per execution instead of {steps}" if steps and plan.unknown_length
                          else f"; it is given {_listed(plan.beside_batch)} besides the batch, which an on-device loop "
                          f"(a function that reads only the iterator) cannot take, so it stays one step per execution "
                          f"instead of {steps}" if steps and plan.beside_batch
                          else f"; the loop keeps what the step returns ({_listed(_kept(step))}), which the on-device "
                          f"loop does not give back, so it stays one step per execution instead of {steps}"
                          if steps and _kept(step) and device_loop_fits(ctx, step, keeping=True)
                          else f"; the loop does more than call the step on each batch, so it stays one step per "
                          f"execution instead of {steps}" if steps else "")
                called = f" (which `{held}` holds)" if held != name and not method else ""
                how = (f"`{code_of(ctx, compiling.func)}({code_of(ctx, compiling.args[0].value)}, jit_compile=True)`"
                       if compiling is not None
                       else f"`@{tf}.function(jit_compile=True)`")
                ctx.report(self.code, step.call, f"`{held if method else name}`{called} is compiled ({how}) "
                           f"and called through `{plan.strategy}.run`{detail}", fixed=True)
                self._report_changing_numbers(ctx, step, name)
                continue
            # One on-device loop per step, and per list of what it is handed besides the iterator.
            key = (id(step.function), tuple(plan.handed_on))
            loop_name = loops.get(key)
            if loop_name is None:
                loop_name = loops[key] = self._loop_function(ctx, plan, tf)
            self._device_loop(ctx, plan, loop_name)
        self._direct_calls(ctx, plans, compiled)
        self._keras_step_losses(ctx, tf, losses)
        self._trainer_step_losses(ctx, plans, tf, losses)
        self._report_objects_out_of_scope(ctx, plans)
        self._report_eager_model_loops(ctx, plans, beside_steps=bool(rewritten))
        self._report_eager_trainer_loops(ctx, plans)
        self._report_eager_sampling_loops(ctx)

    def _report_eager_sampling_loops(self, ctx) -> None:
        """A method of a Keras model class run on the host (a diffusion model's
        ``generate_images`` from a callback or after ``fit``) that loops over the steps of a
        sampler and calls a network the model holds at each of them: in the IPU strategy's scope,
        where the model is made, each call runs the network eagerly, op by op, hundreds of
        times; said once per loop."""
        plan = model_plan(ctx)
        for found in [*eager_sampling_loops(ctx), *eager_callback_loops(ctx)]:
            made = [call for call in calls_by_name(ctx).get(found.owner.name.value, [])
                    if covered(ctx, plan.regions, call, CALLER_DEPTH) or strategy_scope_name(ctx, call)]
            if not made:
                continue
            network = code_of(ctx, found.network.func)
            calls = (f"calls `{code_of(ctx, found.call.func)}`, which runs `{network}`," if found.call is not found.network
                     else f"calls `{network}`")
            where = ("Keras calls it on the host" if found.method.name.value.startswith("on_")
                     else "it runs on the host (out of the steps Keras compiles)")
            ctx.report(self.code, found.call, f"`{found.method.name.value}`: {where}, and this loop of it {calls} "
                       "at each step: eagerly, op by op, in the IPU strategy's scope, while the IPU runs compiled "
                       "programs; move the loop's step into a method "
                       "decorated with `@tf.function(jit_compile=True)` called through `strategy.run`, or run the "
                       "network with `predict(...)` on the step's inputs (`batch_size` their number of samples)",
                       fixed=False)

    def _report_eager_model_loops(self, ctx, plans: List[LoopPlan], beside_steps: bool) -> None:
        """A loop in the scope that calls the model itself, with no step around it (an evaluation
        loop beside the rewritten training loop, ``val_acc.update_state(y, model(x, training=False))``,
        or the epoch loop around it, ``val_pred = model(x_val)``; an inference loop over files or
        batches in a script that only predicts): it runs the model eagerly, op by op, where the IPU
        runs compiled programs; said once per loop, at the model's call. The scope is the port's,
        or the strategy's that runs a rewritten step in the same function. ``beside_steps``: the
        port runs steps of the file through ``strategy.run``, which the advice points to; the loop
        runs in a region, or in a function called there.
        """
        plan = model_plan(ctx)
        inline = [step for step in inline_steps(ctx) if step.problem is None]
        homes = {id(ctx.enclosing_function(loop)) for loop in [
            plan_.step.loop for plan_ in plans if plan_.problem is None] + [step.loop for step in inline]} - {id(None)}
        in_steps = {id(statement) for step in inline_steps(ctx) for statement in step.statements}
        reported: Set[int] = set()  # calls said already, for a loop in a loop
        parts = _layer_attributes(ctx)
        for loop in [*ctx.nodes(cst.For), *ctx.nodes(cst.While)]:
            function = ctx.enclosing_function(loop)
            if _traced_only(ctx, function) or not (in_regions(ctx, plan.regions, loop) or id(function) in homes
                                                     or strategy_scope_name(ctx, loop) is not None
                                                     or covered(ctx, plan.regions, loop, CALLER_DEPTH)):
                continue
            # A loop that trains: its own statements only, out of the step it holds and of its inner loops.
            skipped = (cst.FunctionDef, cst.ClassDef, cst.Lambda) + (
                (cst.For, cst.While) if loop_trains(ctx, loop) else ())
            # The model, or a layer it holds (`model.decoder(context, token)`: a decoding loop's step).
            calls = [node for node in walk(loop.body, skip=skipped)
                     if isinstance(node, cst.Call) and _model_or_part(ctx, node.func, plan.model_like, parts)
                     and id(node) not in reported and not any(id(up) in in_steps for up in ctx.ancestors(node))]
            if not beside_steps and isinstance(loop, cst.For) and _preview(loop) and not _feeds_back(loop, calls):
                continue  # a look at a few samples (`for x, y in test.take(3):`), not the script's inference
            if calls:
                reported.update(id(call) for call in calls)
                name = code_of(ctx, calls[0].func)
                # A layer the model holds has no `predict`: only a step can run it compiled.
                advice = (" called through `strategy.run`, like the training step" if beside_steps else
                          " called through `strategy.run`" if isinstance(calls[0].func, cst.Attribute) else
                          f" called through `strategy.run`, or give `{name}.predict(...)` the inputs (one shape, "
                          "whole batches)")
                ctx.report(self.code, calls[0], f"this loop calls `{name}` eagerly, op by op, in the IPU strategy's "
                           "scope, while the IPU runs compiled programs: move what the loop does with it into a "
                           f"`@tf.function(jit_compile=True)` step{advice}", fixed=False)
            elif beside_steps and isinstance(loop, cst.For) and loop_trains(ctx, loop):
                self._report_eager_helpers(ctx, loop, skipped, plan.model_like, parts, reported, plans, in_steps)
            elif not (isinstance(loop, cst.For) and _preview(loop)):
                self._report_eager_callees(ctx, loop, skipped, plan, parts, reported, plans)

    def _report_eager_helpers(self, ctx, loop: cst.For, skipped: Tuple[type, ...], model_like: Set[str],
                              parts: Set[str], reported: Set[int], plans: List[LoopPlan], in_steps: Set[int]) -> None:
        """A training loop that calls a plain function of the file which runs the model itself
        (``generate_and_save_images(generator, epoch, seed)`` after each epoch, whose ``model(seed,
        training=False)`` runs the model it is given): the model runs eagerly, op by op, in the
        scope, as if the loop called it; said once per helper call, naming the model's call. Not
        a step (one that opens a tape, or one the port runs through the strategy), nor a call in a
        step written inline in the loop (``in_steps``: its statements), which the port compiles."""
        steps = _step_ids(ctx, plans)
        for call in walk(loop.body, skip=skipped):
            helper = local_function(ctx, call.func.value, call) if isinstance(call, cst.Call) and isinstance(
                call.func, cst.Name) and ctx.qualified_name(call.func) is None else None
            if helper is None or id(helper) in steps or is_tf_function(ctx, helper) or id(call) in reported:
                continue
            if any(id(up) in in_steps for up in ctx.ancestors(call)):
                continue
            inner = _eager_model_call(ctx, helper, call, model_like, parts)
            if inner is None:
                continue
            reported.add(id(call))
            ctx.report(self.code, call, f"this loop calls `{helper.name.value}`, which runs `{code_of(ctx, inner.func)}` "
                       f"eagerly (`{code_of(ctx, inner)}`), op by op, in the IPU "
                       "strategy's scope, while the IPU runs compiled programs: move that call into a "
                       "`@tf.function(jit_compile=True)` function called through `strategy.run`, like the training "
                       "step", fixed=False)

    def _report_eager_callees(self, ctx, loop: cst.BaseCompoundStatement, skipped: Tuple[type, ...], plan: Plan,
                              parts: Set[str], reported: Set[int], plans: List[LoopPlan]) -> None:
        """A loop that calls a function of the file which runs a model it is given or the file
        holds (``greedy(model, state)``), or a method of a class of the file which runs a model its
        instance keeps (an agent's ``agent.act(state)`` at each step of an episode, whose
        ``self.model(state[None], training=False)`` picks the action): the model runs eagerly, op
        by op, in the scope, as if the loop called it; said once per loop, at that call. Not a
        step, nor a function compiled with ``tf.function``."""
        steps = _step_ids(ctx, plans)
        for call in walk(loop.body, skip=skipped):
            if not isinstance(call, cst.Call) or id(call) in reported:
                continue
            callee, inner = _eager_callee(ctx, call, plan, parts)
            if callee is None or inner is None or id(callee) in steps or is_tf_function(ctx, callee):
                continue
            reported.add(id(call))
            ctx.report(self.code, call, f"this loop calls `{code_of(ctx, call.func)}`, which runs "
                       f"`{code_of(ctx, inner.func)}` eagerly (`{code_of(ctx, inner)}`), op by op, in the IPU "
                       "strategy's scope, while the IPU runs compiled programs: call "
                       f"`{code_of(ctx, inner.func)}.predict(...)` there instead (one shape, whole batches: "
                       "`batch_size=1` for one sample), or move that call into a `@tf.function(jit_compile=True)` "
                       "function called through `strategy.run`", fixed=False)
            return

    def _report_eager_trainer_loops(self, ctx, plans: List[LoopPlan]) -> None:
        """A loop in a method of a trainer class whose step method the port rewrites, that calls
        the trainer's model itself (``self.model(x)``, an evaluation loop): it runs the model
        eagerly in the scope, where the IPU runs compiled programs; said once per loop."""
        reported: Set[int] = set()  # loops said already (a class may hold two steps)
        for plan in plans:
            step = plan.step.function
            if plan.problem is not None or not isinstance(plan.step.call.func, cst.Attribute):
                continue
            # The models the step trains: `self.model` of `self.model.trainable_variables`.
            models = {node.value.attr.value for node in walk(step.body) if isinstance(node, cst.Attribute)
                      and node.attr.value in ("trainable_variables", "trainable_weights")
                      and isinstance(node.value, cst.Attribute) and is_self(node.value.value)}
            for loop in walk(ctx.enclosing(step, cst.ClassDef)):
                if not isinstance(loop, cst.For) or id(loop) in reported or is_tf_function(
                        ctx, ctx.enclosing_function(loop)):
                    continue
                calls = [node for node in walk(loop.body, skip=(cst.FunctionDef, cst.For)) if isinstance(node, cst.Call)
                         and isinstance(node.func, cst.Attribute) and is_self(node.func.value)
                         and node.func.attr.value in models]
                if calls:
                    reported.add(id(loop))
                    ctx.report(self.code, calls[0], f"this loop calls `self.{calls[0].func.attr.value}` eagerly, op by "
                               "op, in the IPU strategy's scope, while the IPU runs compiled programs: move what the "
                               "loop does with it into a `@tf.function(jit_compile=True)` method called through "
                               f"`strategy.run`, like `{step.name.value}`", fixed=False)

    def _report_objects_out_of_scope(self, ctx, plans: List[LoopPlan]) -> None:
        """An optimizer or metric made at module level that a rewritten step updates, where the
        port's scope does not reach (the loop runs in a function called from another function):
        its variables are made out of the IPU strategy, the compiled step updates them on the IPU."""
        regions = model_plan(ctx).regions
        seen = set()
        for plan in plans:
            if plan.problem is not None:
                continue
            step = plan.step.function.name.value
            for name, statement in module_objects(ctx, plan.step.function):
                if id(statement) in seen or in_regions(ctx, regions, statement) or strategy_scope_name(ctx, statement):
                    continue
                seen.add(id(statement))
                ctx.report(self.code, statement, f"`{name}` is made out of the IPU strategy's scope, while `{step}` "
                           "updates it on the IPU: Keras optimizers and metrics must be made inside "
                           "`with strategy.scope():`; make it there, where the model is made, and hand it to the "
                           "step", fixed=False)
            for name, statement in handed_modules(ctx, plan.step.call):
                if (id(statement) in seen or covered(ctx, regions, statement, CALLER_DEPTH)
                        or strategy_scope_name(ctx, statement)):
                    continue
                seen.add(id(statement))
                ctx.report(self.code, statement, f"`{name}` is a `tf.Module` made out of the IPU strategy's scope, "
                           f"and `{step}` trains it on the IPU through `strategy.run`: its `tf.Variable`s are made "
                           "on the CPU, where the compiled step cannot update them; make it inside "
                           "`with strategy.scope():`, before the loop", fixed=False, severity=ERROR)

    def _keras_step_losses(self, ctx, tf: str, done: Set[str]) -> None:
        """Overridden ``train_step``/``test_step``, which ``fit`` runs through the strategy's ``run``,
        calling a loss object of automatic reduction (a GAN's ``self.loss_fn`` given to its
        ``compile``, a module's ``mse``): the loss object gets ``reduction=NONE`` and each call in
        the steps is averaged with ``reduce_mean``, which is what the automatic reduction computed."""
        for model_class in subclass_definitions(ctx, *MODEL_BASES):  # each, when a notebook defines one again
            hooks = [statement for statement in model_class.body.body
                     if isinstance(statement, cst.FunctionDef) and statement.name.value in _KERAS_STEPS]
            if hooks:
                self._held_losses(ctx, model_class, hooks, tf, done)

    def _held_losses(self, ctx, model_class: cst.ClassDef, hooks: List[cst.FunctionDef], tf: str,
                     done: Set[str]) -> None:
        """The loss objects that ``hooks`` (methods of ``model_class`` run through the strategy's
        ``run``), or the methods they call, call through ``self`` or by name: made with
        ``reduction=NONE``, each call in the steps averaged."""
        run_by = {id(hook): step_methods(ctx, hook) for hook in hooks}
        methods = [method for hook in hooks for method in run_by[id(hook)]]
        methods = [method for index, method in enumerate(methods) if method not in methods[:index]]
        where = " and ".join(f"`{hook.name.value}`" for hook in hooks)
        in_steps = _self_calls(methods)
        held = [function for attribute in in_steps for function in attribute_functions(ctx, model_class, attribute)]
        self._explicit_loss_reduction(ctx, [(where, [method.body for method in methods])], tf, done, held)
        everywhere = _self_calls([node for node in model_class.body.body if isinstance(node, cst.FunctionDef)])
        called_by = {id(hook): _self_calls(run_by[id(hook)]) for hook in hooks}
        for attribute, calls in in_steps.items():
            callers = [hook for hook in hooks if attribute in called_by[id(hook)]]
            where = " and ".join(f"`{hook.name.value}`" for hook in callers)
            sources = attribute_losses(ctx, model_class, attribute)
            if not sources:
                if sources is None:
                    self._report_held_loss(ctx, calls[0], attribute, where, tf,
                                           attribute_lambdas(ctx, model_class, attribute))
                continue
            if len(everywhere[attribute]) != len(calls):  # called out of the steps too
                self._report_held_loss(ctx, calls[0], attribute, where, tf)
                continue
            for constructor in sources:
                ctx.replace(constructor, lambda node: append_args(node, _no_reduction(node)))
            for call in calls:
                ctx.replace(call, _averaged(tf))
            ctx.report(self.code, sources[0], f"the loss object that {where} {'calls' if len(callers) == 1 else 'call'} as `self.{attribute}` gets "
                       f"`reduction=NONE`, and its calls there are averaged with `{tf}.reduce_mean`: under a "
                       "distribution strategy Keras refuses the automatic reduction outside its compiled "
                       "losses", fixed=True)

    def _trainer_step_losses(self, ctx, plans: List[LoopPlan], tf: str, done: Set[str]) -> None:
        """The same for a trainer class whose step method (``self.train_step``) the port runs
        through `strategy.run`: its ``self.loss_fn`` gets ``reduction=NONE`` and its calls in the
        step are averaged."""
        steps: Dict[int, List[cst.FunctionDef]] = {}
        classes: Dict[int, cst.ClassDef] = {}
        for plan in plans:
            owner_class = ctx.enclosing(plan.step.function, cst.ClassDef)
            if plan.problem is None and owner_class is not None and is_name(plan.step.call.func.value, "self"):
                classes[id(owner_class)] = owner_class
                hooks = steps.setdefault(id(owner_class), [])
                if plan.step.function not in hooks:
                    hooks.append(plan.step.function)
        for key, hooks in steps.items():
            self._held_losses(ctx, classes[key], hooks, tf, done)

    def _report_held_loss(self, ctx, call: cst.Call, attribute: str, where: str, tf: str,
                          lambdas: Sequence[cst.Lambda] = ()) -> None:
        if lambdas:  # why the port stopped: it cannot tell what the lambda's caller gets
            text = code_of(ctx, lambdas[0])
            if len(text) > 60:
                text = code_of(ctx, lambdas[0].with_changes(body=cst.Ellipsis()))
            ctx.report(self.code, call, f"`self.{attribute}` holds a Keras loss object that reduces its loss "
                       f"automatically, which Keras refuses in {where} under a distribution strategy (a ValueError), "
                       f"and is also given `{text}`, which the port does not rewrite: create the loss "
                       f"object with `reduction=...Reduction.NONE`, average its result with `{tf}.reduce_mean`, "
                       "and do the same for any loss object the lambda calls", fixed=False, severity=ERROR)
            return
        ctx.report(self.code, call, f"`self.{attribute}` holds a Keras loss object that reduces its loss "
                   f"automatically, which Keras refuses in {where} under a distribution strategy (a ValueError): "
                   f"create it with `reduction=...Reduction.NONE` and average its result with `{tf}.reduce_mean`",
                   fixed=False, severity=ERROR)

    def _renamed_runs(self, ctx) -> None:
        """`strategy.experimental_run_v2(step, ...)`, the name `run` had before TensorFlow 2.2,
        becomes `run`: the IPU strategy raises on the old name, and the arguments are the same."""
        for call, _ in method_calls(ctx, "experimental_run_v2"):
            ctx.replace(call.func.attr, cst.Name("run"))
            ctx.report(self.code, call, "`experimental_run_v2` becomes `run`, which takes the same arguments: the IPU "
                       "strategy raises RuntimeError on the old name", fixed=True)

    def _report_eager_python(self, ctx, call: cst.Call, target, plan: Plan, tf: str) -> None:
        """`strategy.run(lambda x: model(x), args=(x,))`, or `strategy.run(f)` with a plain function
        of the file that is no step or model runner, run eagerly: the IPU strategy refuses a Python
        function outside a `tf.function`. A lambda has no definition to decorate (wrapped where it
        is, it would be traced again on every call), and what such a function does may not compile."""
        if not _names_a_strategy(ctx, call.func.value, plan) or _traced_only(ctx, ctx.enclosing_function(call)):
            return
        if isinstance(target, cst.Lambda):
            given = "a lambda"
            advice = f"define it as a function decorated with `@{tf}.function(jit_compile=True)`, once, and pass that"
        elif isinstance(target, cst.Name):
            same_name = [node for node in ctx.nodes(cst.FunctionDef)
                         if node.name.value == target.value and ctx.enclosing(node, cst.ClassDef) is None]
            if not same_name or is_tf_function(ctx, definition_before(ctx, call, same_name)):
                return
            given = f"`{target.value}`, a Python function,"
            advice = (f"decorate it with `@{tf}.function(jit_compile=True)` once what it does can run compiled (the "
                      "port cannot tell: it trains no model of the file)")
        else:
            return
        ctx.report(self.code, call, f"`strategy.run` is given {given} outside a `tf.function`, which the IPU strategy "
                   f"refuses (ValueError: no eager execution): {advice}", fixed=False, severity=ERROR)

    def _eager_runs(self, ctx, tf: str) -> None:
        """A step the code already passes to `strategy.run` (a `MirroredStrategy` loop), a function
        or a method of the class that passes it, gets compiled: in eager mode the IPU strategy refuses
        a plain Python function, and the IPU runs compiled code only."""
        steps = step_functions(ctx)
        plan = model_plan(ctx)
        done = set()
        for call, _ in method_calls(ctx, *RUN_METHODS):
            args = positional(call)
            target = args[0].value if args else None
            if is_jit_compiled(ctx, ctx.enclosing_function(call)) or _holds_jit_function(ctx, target):
                continue
            if not isinstance(target, cst.Name):
                candidates = _method_step(ctx, call, target, plan)
            else:
                candidates = steps.get(target.value) or _method_step(ctx, call, target, plan) or (
                    _model_runners(ctx, target.value, plan.model_like) if is_name(call.func.value, plan.strategy_name)
                    else [])
            if not candidates:
                self._report_eager_python(ctx, call, target, plan, tf)
                continue
            function = definition_before(ctx, call, candidates)
            if is_jit_compiled(ctx, function) or id(function) in done:
                continue
            done.add(id(function))
            ctx.replace(function, _decorated(tf))
            if is_tf_function(ctx, function) or is_tf_function(ctx, ctx.enclosing_function(call)):
                why = "the IPU runs compiled code only"  # `strategy.run` in a `tf.function` step
            else:
                why = "outside a `tf.function`, which the IPU strategy refuses for a Python function"
            ctx.report(self.code, call, f"`{code_of(ctx, target)}` is passed to `strategy.run` ({why}): it is compiled "
                       f"(`@{tf}.function(jit_compile=True)`)", fixed=True)

    def _report_sliced_batches(self, ctx, loop: cst.For, values: List[cst.BaseExpression]) -> None:
        """``for i in range(0, len(x), bs): step(x[i:i + bs], ...)``, or the slice assigned first
        (``xb = x[i:i + bs]``, then ``step(xb, ...)``): the last slice is shorter when ``len(x)`` is
        not a multiple of ``bs``, a shape the compiled step has not seen. ``values``: what the loop
        gives the step."""
        if not (isinstance(loop.iter, cst.Call) and is_name(loop.iter.func, "range") and len(loop.iter.args) == 3
                and isinstance(loop.target, cst.Name)):
            return
        index, stride = loop.target.value, loop.iter.args[2].value
        if _stops_a_batch_early(ctx, loop.iter.args[1].value, stride):
            return  # `range(0, len(x) - bs + 1, bs)`: every slice is whole
        assigned = {name: value for statement, name, value in assignments(ctx, owner(ctx, loop))
                    if isinstance(value, cst.Subscript) and _slices_from(value, index)
                    and any(ancestor is loop for ancestor in ctx.ancestors(statement))}
        sliced = [value if isinstance(value, cst.Subscript) else assigned.get(value.value) for value in values
                  if isinstance(value, cst.Subscript) and _slices_from(value, index)
                  or isinstance(value, cst.Name) and value.value in assigned]
        if sliced:
            ctx.report(self.code, sliced[0], f"the loop slices batches of `{code_of(ctx, stride)}` samples: the last "
                       f"one is shorter unless the data holds a multiple of `{code_of(ctx, stride)}`, and `strategy.run` "
                       "compiles the step again for it (static shapes only); trim the arrays to a multiple of the batch "
                       "size before the loop", fixed=False)

    def _report_changing_numbers(self, ctx, step: StepCall, name: str) -> None:
        """A step given a Python number that its loop, or a loop around it, changes on every pass
        (``train_step(x, y, epoch)``, an ``enumerate`` index, a counter): `strategy.run` hands it to
        the compiled step as a constant, so each new value compiles the step again for the IPU."""
        changing: Set[str] = set()
        for loop in (step.loop, *ctx.ancestors(step.loop)):
            if isinstance(loop, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                break
            if isinstance(loop, (cst.For, cst.While)):
                changing |= python_numbers(ctx, loop, set())
        given = [arg.value for arg in step.call.args if isinstance(arg.value, cst.Name) and arg.value.value in changing]
        if given:
            ctx.report(self.code, given[0], f"`{given[0].value}` is a Python number that the loop changes on every "
                       f"pass: `strategy.run` gives it to the compiled `{name}` as a constant, so each new value "
                       "compiles the step again for the IPU (minutes each); give it as a tensor "
                       f"(`tf.constant({given[0].value})`) or in a `tf.Variable` the step reads, or drop it",
                       fixed=False)

    def _report_uint8_signature(self, ctx, function: cst.FunctionDef, tf: str) -> None:
        """A step whose ``input_signature`` declares uint8 inputs, in a file whose uint8 data the
        port casts (IPU106, before this rule): the step is then given float32 images or int32
        labels, which the signature refuses with a TypeError."""
        if not any(report.code == _UINT8_CAST and report.fixed for report in ctx.reports):
            return
        for node in _compiling_calls(ctx, function, tf):
            signature = keyword(node, "input_signature")
            uint8 = [part for part in walk(signature.value) if isinstance(part, cst.Attribute) and part.attr.value ==
                     "uint8" or isinstance(part, cst.SimpleString) and part.evaluated_value == "uint8"] if signature else []
            if uint8:
                ctx.report(self.code, uint8[0], f"the `input_signature` of `{function.name.value}` declares uint8 "
                           f"inputs, but the port casts the script's uint8 data before it reaches the model ({_UINT8_CAST}: "
                           "images to float32, labels to int32), and the signature refuses the cast tensors with a "
                           f"TypeError: declare the dtypes they have after the casts (`{tf}.float32` for images, "
                           f"`{tf}.int32` for labels)", fixed=False, severity=ERROR)

    def _report_changing_shapes(self, ctx, function: cst.FunctionDef, tf: str) -> None:
        """A step the script traces for inputs of changing shapes (``reduce_retracing=True``,
        ``experimental_relax_shapes=True``, an ``input_signature`` with a ``None`` dimension): compiled
        for the IPU, each new shape is a new program."""
        for node in _compiling_calls(ctx, function, tf):
            relaxed = [arg for arg in node.args if arg.keyword is not None and arg.keyword.value in _RELAXED_SHAPES
                       and is_name(arg.value, "True")]
            if relaxed:
                ctx.report(self.code, relaxed[0], f"`{function.name.value}` is traced for inputs of changing shapes "
                           f"(`{relaxed[0].keyword.value}=True`): if they change, each new shape is compiled again "
                           "for the IPU, which takes minutes; pad or bucket its inputs to a few fixed shapes",
                           fixed=False, severity=NOTE)
            signature = keyword(node, "input_signature")
            unknown = _unknown_dimensions(ctx, signature.value) if signature is not None else []
            if unknown:
                ctx.report(self.code, unknown[0], f"the `input_signature` of `{function.name.value}` leaves a "
                           "dimension past the batch `None`: the step accepts inputs of any size there (sequences of "
                           "any length), and each size it is given is compiled again for the IPU, which takes "
                           "minutes; pad its inputs to a fixed size (or a few) and give the dimension that size",
                           fixed=False, severity=NOTE)

    def _direct_calls(self, ctx, plans: List[LoopPlan], compiled: Set[str]) -> None:
        """A compiled step runs on the IPU only through `strategy.run`: its other calls (a warm-up
        call, a loop the rewrite does not take) are reported."""
        rewritten = {id(plan.step.call) for plan in plans}
        # Functions that run through `strategy.run`: the script's, and the steps of the rewritten loops.
        run_steps = {plan.step.function.name.value for plan in plans if plan.problem is None}
        runners = run_targets(ctx) | run_steps
        # ... and the script's own compiled functions that run the model (`@tf.function(jit_compile=True)
        # def answer(x): return model(x)`) and no loop plan takes: called directly, they are not run
        # by the IPU strategy either.
        planned = {id(plan.step.function) for plan in plans}
        models = model_plan(ctx).model_like
        compiled = compiled | {function.name.value for function in ctx.nodes(cst.FunctionDef)
                               if id(function) not in planned and is_jit_compiled(ctx, function)
                               and ctx.enclosing(function, cst.ClassDef) is None and runs_models(ctx, function, models)}
        for call in ctx.nodes(cst.Call):
            func = call.func
            if (not isinstance(func, cst.Name) or func.value not in compiled or id(call) in rewritten
                    or ctx.qualified_name(func) is not None):
                continue
            caller = ctx.enclosing_function(call)
            if caller is not None and caller.name.value in runners:
                continue  # inside a function that runs through `strategy.run`
            strategy = self._scope_strategy(ctx, call)
            # A step of a rewritten loop (its losses reduced as `strategy.run` needs) runs there too.
            if func.value in run_steps and strategy is not None and not is_tf_function(ctx, caller):
                ctx.replace(call, _run_call(strategy, func.value))
                ctx.report(self.code, call, f"`{func.value}` is compiled for the IPU and this call of it in the "
                           f"IPU strategy's scope (a warm-up step, a single step) runs through `{strategy}.run`",
                           fixed=True)
                continue
            ctx.report(self.code, call, f"`{func.value}` is compiled for the IPU but called directly here: call it "
                       f"as `strategy.run({func.value}, args=(...))` inside `strategy.scope()`", fixed=False)

    @staticmethod
    def _scope_strategy(ctx, call: cst.Call) -> Optional[str]:
        """How ``call`` reaches the IPU strategy, when it runs in its scope after the port (in the
        script's own `with strategy.scope():`, in a region of the port's, or in a function every
        call of which is): the strategy's name, or TensorFlow's current strategy where the
        strategy is a local of another function; None when it does not run there."""
        model = model_plan(ctx)
        existing = strategy_scope_name(ctx, call)
        if model.has_ipu_strategy:
            return existing
        if existing is None and not covered(ctx, model.regions, call, CALLER_DEPTH):
            return None
        if out_of_reach(ctx, call, model, existing):
            return f"{tensorflow_alias(ctx)}.distribute.get_strategy()"
        return existing or model.strategy_name

    def _explicit_loss_reduction(self, ctx, steps: List[Tuple[str, List[cst.CSTNode]]], tf: str,
                                 done: Set[str], held: Sequence[cst.FunctionDef] = ()) -> None:
        """Keras refuses a loss object's automatic reduction inside `strategy.run` ("Please use
        `tf.keras.losses.Reduction.SUM` or `NONE` ... outside of the built-in training loops"): the
        loss object gets `reduction=NONE` and each call in the steps (the code under each step's
        roots, and the functions it calls) is averaged over the batch, which is what the automatic
        reduction computed. ``steps``: ``(how the report names the step, its roots)``, every step
        that runs through the strategy, so that a loss object the training and the test step share
        is rewritten in both; ``held``: the functions of the file the steps call through what the
        model holds (``self.gen_loss_fn``), helpers of the steps too."""
        roots = [root for _, step in steps for root in step]
        reached = functions_called_from(ctx, roots + [function.body for function in held])
        helpers = [*held, *(helper for helper in reached if all(helper is not function for function in held))]
        own_code = [{id(node) for root in step for node in walk(root)} for _, step in steps]
        step_code = set().union(*own_code, *({id(node) for node in walk(helper)} for helper in helpers))
        handed = handed_losses(ctx, [node for node in ctx.nodes(cst.Call) if id(node) in step_code])
        through_parameters = {id(call) for loss in handed for call in loss.calls}
        for loss in handed:
            self._reduce_handed_loss(ctx, loss, tf, done)
        for name, assign in auto_loss_objects(ctx).items():
            if name in done:
                continue  # a helper shared by two steps: rewritten once
            calls = [node for node in ctx.nodes(cst.Call) if isinstance(node.func, cst.Name)
                     and node.func.value == name and id(node) not in through_parameters]
            inside = [call for call in calls if id(call) in step_code]
            if not inside:
                continue
            done.add(name)
            if self._loss_kept(ctx, name, assign, calls, step_code, tf):
                continue
            ctx.replace(assign.value, lambda node: append_args(node, _no_reduction(node)))
            for call in inside:
                ctx.replace(call, _averaged(tf))
            callers = [where for (where, _), code in zip(steps, own_code) if any(id(call) in code for call in inside)]
            where = " and ".join(dict.fromkeys(callers)) or steps[0][0]  # two steps of one name (a notebook) named once
            in_helpers = any(not any(id(call) in code for code in own_code) for call in inside)
            ctx.report(self.code, assign.value, f"`{name}` gets `reduction=NONE` and its calls in "
                       f"{where}{' and the functions they call' if in_helpers else ''} are averaged with "
                       f"`{tf}.reduce_mean`: Keras refuses the automatic reduction inside `strategy.run`", fixed=True)
        for where, step in steps:
            for root in step:
                for call in walk(root):
                    if isinstance(call, cst.Call) and is_auto_loss(ctx, call.func):
                        self._reduce_inline_loss(ctx, call, where, tf)
        for helper in helpers:
            for call in walk(helper):
                if isinstance(call, cst.Call) and is_auto_loss(ctx, call.func):
                    self._reduce_inline_loss(ctx, call, steps[0][0], tf)

    def _reduce_handed_loss(self, ctx, loss: HandedLoss, tf: str, done: Set[str]) -> None:
        """``train(model, keras.losses.MeanSquaredError(), ...)`` where a step in ``train`` calls
        its ``loss_fn``: the loss object gets `reduction=NONE` where it is made and the step's calls
        are averaged, unless it is also used where its reduced loss is what the code needs."""
        key = f"{loss.function.name.value}.{loss.name}@{id(loss.function)}"
        if key in done:
            return  # a step shared by two loops: rewritten once
        done.add(key)
        where = f"`{loss.function.name.value}`"
        if loss.blocking is not None:
            inside = any(ancestor is loss.function for ancestor in ctx.ancestors(loss.blocking))
            what = (f"`{loss.name}`, given to {where}, holds a Keras loss object that reduces its loss automatically, "
                    "which Keras refuses inside `strategy.run`, and it is also used here, out of the steps" if inside
                    else f"the loss object given to {where} here reduces its loss automatically, which Keras refuses "
                    "inside `strategy.run`, and it is also used elsewhere")
            ctx.report(self.code, loss.blocking, f"{what}: give the steps a loss object of their own made with "
                       f"`reduction=...Reduction.NONE`, and average its result with `{tf}.reduce_mean`",
                       fixed=False, severity=ERROR)
            return
        for constructor in loss.made:
            ctx.replace(constructor, lambda node: append_args(node, _no_reduction(node)))
        for call in loss.calls:
            ctx.replace(call, _averaged(tf))
        ctx.report(self.code, loss.made[0], f"the loss object given to {where} as `{loss.name}` gets "
                   f"`reduction=NONE`, and its calls in the steps are averaged with `{tf}.reduce_mean`: Keras "
                   "refuses the automatic reduction inside `strategy.run`", fixed=True)

    def _loss_kept(self, ctx, name: str, assign: cst.Assign, calls: List[cst.Call], step_code: Set[int],
                   tf: str) -> bool:
        """Whether the loss object ``name`` must keep its automatic reduction, reported where that
        is decided: a call out of the steps (on the host, where the reduced loss is what it gives),
        or a use that is not a call (handed on, the port cannot follow where it is called)."""
        outside = [call for call in calls if id(call) not in step_code]
        called = {id(call.func) for call in calls}
        other = [node for node in ctx.nodes(cst.Name) if node.value == name and id(node) not in called
                 and node is not assign.targets[0].target]
        if not (dotted_name(assign.value.func) or "").rpartition(".")[0]:
            blocking, why = assign.value, "its class is not named through its module here"
        elif outside:
            blocking, why = outside[0], "it is also called here, out of the steps, where its reduced loss is used"
        elif other:
            blocking, why = other[0], "it is also used here, and the port cannot follow where that calls it"
        else:
            return False
        ctx.report(self.code, blocking, f"`{name}` reduces its loss automatically, which Keras refuses inside "
                   f"`strategy.run`, and {why}: give the steps a loss object of their own made with "
                   f"`reduction=...Reduction.NONE`, and average its result with `{tf}.reduce_mean`", fixed=False,
                   severity=ERROR)
        return True

    def _reduce_inline_loss(self, ctx, call: cst.Call, where: str, tf: str) -> None:
        """``tf.keras.losses.BinaryCrossentropy()(labels, logits)``: a loss object made and called at
        once in the step: made with `reduction=NONE`, its result averaged."""
        average = _averaged(tf)
        ctx.replace(call, lambda node: average(
            node.with_changes(func=append_args(node.func, _no_reduction(node.func)))))
        ctx.report(self.code, call, f"the loss object made and called here in {where} gets `reduction=NONE`, and "
                   f"its result is averaged with `{tf}.reduce_mean`: Keras refuses the automatic reduction "
                   "inside `strategy.run`", fixed=True)

    def _inline_step(self, ctx, step: InlineStep, tf: str, named: Set[str]) -> None:
        """The statements of an inline step move into a step function before the loops, compiled
        and called through `strategy.run` where they were."""
        if step.problem is not None:
            ctx.report(self.code, step.statements[0], step.problem, fixed=False)
            return
        name = fresh_name(ctx, "train_step", "ipu_train_step", "inline_train_step", taken=named)
        named.add(name)
        parameters = ", ".join(step.inputs)
        given = ", ".join(step.batches[name][0] if name in step.batches else name for name in step.inputs)
        arguments = "" if not step.inputs else f", args=({given},)" if len(step.inputs) == 1 else f", args=({given})"
        for parameter, (_, subscripts) in step.batches.items():
            for subscript in subscripts:
                ctx.replace(subscript, lambda node, parameter=parameter: cst.Name(parameter))
        call = f"{step.strategy}.run({name}{arguments})"
        ctx.insert_after(step.statements[-1], [cst.parse_statement(
            f"{', '.join(step.outputs)} = {call}" if step.outputs else call)])
        returned = [cst.parse_statement(f"return {', '.join(step.outputs)}")] if step.outputs else []

        # As many blank lines before the new function as before the loop it goes in front of (one if
        # none, except at the top of a block: a function's body starts with the new function).
        block = ctx.parent(step.anchor)
        at_top = isinstance(block, cst.IndentedBlock) and block.body[0] is step.anchor
        blanks = [line for line in step.anchor.leading_lines if line.comment is None] or (
            [] if at_top else [cst.EmptyLine(indent=False)])

        def build(statements: List[cst.BaseStatement]) -> List[cst.BaseStatement]:
            function = cst.parse_statement(f"@{tf}.function(jit_compile=True)\ndef {name}({parameters}):\n    pass\n")
            first = statements[0].with_changes(leading_lines=[
                line for line in statements[0].leading_lines if line.comment is not None])
            return [function.with_changes(body=function.body.with_changes(body=[first, *statements[1:], *returned]),
                                          leading_lines=blanks)]

        ctx.move_before(step.anchor, step.statements, build)
        if all(line.comment is not None for line in step.anchor.leading_lines):
            # A blank line between the new function and the loop after it.
            ctx.replace(step.anchor, lambda node: node.with_changes(
                leading_lines=[cst.EmptyLine(indent=False), *node.leading_lines]))
        if isinstance(step.loop, cst.For):
            self._report_sliced_batches(ctx, step.loop, [
                step.batches[name][1][0] if name in step.batches else cst.Name(name) for name in step.inputs])
        steps = config_steps(ctx.config)
        detail = f"; it stays one step per execution instead of {steps}" if steps else ""
        ctx.report(self.code, step.statements[0], f"the training step written inline in this loop moves into "
                   f"`{name}` (`@{tf}.function(jit_compile=True)`), called through `{step.strategy}.run`{detail}",
                   fixed=True)
        self._report_step_made_per_call(ctx, step.anchor, name)

    def _report_step_made_per_call(self, ctx, anchor: cst.BaseStatement, name: str) -> None:
        """The step function goes into the function that holds the loop: when that function is
        called in a loop (an epoch function), each call makes a new step, traced and compiled again."""
        holder = ctx.enclosing_function(anchor)
        if holder is None:
            return
        looped = [call for call in calls_by_name(ctx).get(holder.name.value, []) if not any(
            ancestor is holder for ancestor in ctx.ancestors(call)) and any(
            isinstance(ancestor, (cst.For, cst.While)) for ancestor in ctx.ancestors(call))]
        if looped:
            ctx.report(self.code, looped[0], f"`{holder.name.value}` is called in a loop and the port defines `{name}` "
                       f"in it: each call traces and compiles the step for the IPU again; define `{name}` once, out "
                       f"of `{holder.name.value}` (given the model and the optimizer), to compile it once",
                       fixed=False, severity=NOTE)

    def _loop_function(self, ctx, plan: LoopPlan, tf: str) -> str:
        step = plan.step
        name = step.function.name.value
        loop_name = fresh_name(ctx, f"{name}_loop", f"{name}_on_device", f"ipu_{name}_loop")
        target = code_of(ctx, step.loop.target)
        # The count is a parameter: the last execution of a pass runs the batches left over, not K.
        count = fresh_name(ctx, "steps", "steps_per_execution", taken=set(plan.handed_on))
        parameters = ", ".join(["iterator", count, *plan.handed_on])
        text = (f"@{tf}.function(jit_compile=True)\ndef {loop_name}({parameters}):\n"
                f"    for _ in {tf}.range({count}):\n        {target} = next(iterator)\n"
                f"        {code_of(ctx, step.call)}\n")
        function = cst.parse_module(text).body[0]
        blanks = [line for line in step.function.leading_lines if line.comment is None] or [
            cst.EmptyLine(indent=False)]
        function = function.with_changes(leading_lines=blanks)
        ctx.insert_after(step.function, [function])
        return loop_name

    def _device_loop(self, ctx, plan: LoopPlan, loop_name: str) -> None:
        step = plan.step
        loop = step.loop
        steps = config_steps(ctx.config)
        dataset = code_of(ctx, loop.iter)
        base = dataset.replace(".", "_")
        iterator = fresh_name(ctx, f"{base}_iterator", f"{base}_ipu_iterator")
        first = cst.parse_statement(f"{iterator} = iter({dataset})").with_changes(leading_lines=loop.leading_lines)
        handed_on = "".join(", " + name for name in plan.handed_on)
        new_loop = cst.parse_statement(
            f"for _ in range(len({dataset}) // {steps}):\n"
            f"    {plan.strategy}.run({loop_name}, args=({iterator}, {steps}{handed_on}))\n")
        # Batches that do not fill an execution still run (a test set of fewer than K batches would
        # otherwise measure nothing): one shorter execution, which compiles once more.
        rest = cst.parse_statement(
            f"if len({dataset}) % {steps}:\n"
            f"    {plan.strategy}.run({loop_name}, args=({iterator}, len({dataset}) % {steps}{handed_on}))\n")
        ctx.insert_before(loop, [first])
        ctx.replace(loop, lambda node: new_loop.with_changes(leading_lines=()))
        ctx.insert_after(loop, [rest])
        ctx.report(self.code, loop, f"the loop over `{dataset}` runs `{step.function.name.value}` on the IPU: "
                   f"{steps} steps per execution in `{loop_name}` (`@tf.function(jit_compile=True)`, on-device "
                   f"loop) through `{plan.strategy}.run`, `len({dataset}) // {steps}` executions per pass and one "
                   f"more for the last `len({dataset}) % {steps}` batches, if any", fixed=True)



def _run_steps(plans: List[LoopPlan], inline: List[InlineStep]) -> List[Tuple[str, List[cst.CSTNode]]]:
    """Every step that runs through the strategy once rewritten: the step functions of the loops
    and the steps written inline in loops, each ``(how a report names it, its roots)``."""
    functions = []
    for plan in plans:
        if plan.problem is None and all(plan.step.function is not known for known in functions):
            functions.append(plan.step.function)
    return [(f"`{function.name.value}`", [function]) for function in functions] + [
        ("the inline training step", list(step.statements)) for step in inline if step.problem is None]


def _kept(step: StepCall) -> List[str]:
    """The names the loop's statement assigns what the step returns (``g_loss, d_loss =
    train_step(images)``), when that statement is the call's."""
    small = single_small(step.statement)
    if not (isinstance(small, cst.Assign) and small.value is step.call):
        return []
    return [name for target in small.targets for name in bound_names(target.target)]


def _listed(arguments: List[str]) -> str:
    """``epoch`` and ``scale`` as a report names them: ```epoch`, `scale```."""
    return ", ".join(f"`{argument}`" for argument in arguments)


def _no_reduction(constructor: cst.Call) -> cst.Arg:
    """``reduction=keras.losses.Reduction.NONE`` for a loss object made by ``constructor``, spelt
    from the module it is made from."""
    prefix = (dotted_name(constructor.func) or "").rpartition(".")[0]
    return keyword_arg("reduction", cst.parse_expression(f"{prefix}.Reduction.NONE"))


def _averaged(tf: str):
    """A replacement of a loss object's call by ``tf.reduce_mean(call)``: what the automatic
    reduction computed, from the losses per sample that ``reduction=NONE`` gives."""
    return lambda node: cst.parse_expression(f"{tf}.reduce_mean(x)").with_changes(args=[cst.Arg(node)])


# The methods of a Keras model that `fit`, `evaluate` and `predict` run through the strategy's `run`.
_KERAS_STEPS = ("train_step", "test_step", "predict_step")


def _self_calls(methods: List[cst.FunctionDef]) -> Dict[str, List[cst.Call]]:
    """The calls ``self.<attribute>(...)`` in ``methods``, by attribute (methods of the class too)."""
    found: Dict[str, List[cst.Call]] = {}
    for method in methods:
        for node in walk(method.body):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and is_self(node.func.value):
                found.setdefault(node.func.attr.value, []).append(node)
    return found


def _method_step(ctx, call: cst.Call, target, plan: Plan) -> List[cst.FunctionDef]:
    """What a method of a class hands to its strategy's ``run`` (a trainer class's ``train_step``)
    when it opens a ``GradientTape`` or runs one of the file's models (a test step beside the
    training step): a function the method defines (``def step(x, y): ...``), or a method of the
    class (``self._step_fn``). A step, like a function of the file."""
    if isinstance(target, cst.Name):
        function = local_function(ctx, target.value, call)
    elif isinstance(target, cst.Attribute) and is_name(target.value, "self"):
        owner_class = ctx.enclosing(call, cst.ClassDef)
        function = method_named(owner_class, target.attr.value) if owner_class is not None else None
    else:
        return []
    owner_class = ctx.enclosing(function, cst.ClassDef) if function is not None else None
    if owner_class is None:
        return []
    opens_tape = any(ctx.enclosing_function(tape) is function for tape, _ in ctx.calls_to(*TAPES))
    return [function] if opens_tape or _runs_class_models(ctx, owner_class, function, plan) else []


def _runs_class_models(ctx, owner_class: cst.ClassDef, function: cst.FunctionDef, plan: Plan) -> bool:
    """Whether ``function`` (a method of ``owner_class``, or a function one defines), or a method
    of the class it calls on ``self``, calls a model of the file or an attribute of ``self`` that
    holds one (``self.model(x)``, ``self.model.predict(x)``)."""
    models = _model_attributes(ctx, owner_class, plan)
    methods = {node.name.value: node for node in owner_class.body.body if isinstance(node, cst.FunctionDef)}
    pending, seen = [function], set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        for node in walk(current.body):
            if not isinstance(node, cst.Call):
                continue
            func = node.func.value if isinstance(node.func, cst.Attribute) and isinstance(
                node.func.value, cst.Attribute) else node.func
            if isinstance(func, cst.Name) and func.value in plan.model_like and ctx.qualified_name(func) is None:
                return True
            if isinstance(func, cst.Attribute) and is_self(func.value):
                if func.attr.value in models:
                    return True
                if func.attr.value in methods:
                    pending.append(methods[func.attr.value])
    return False


def _model_attributes(ctx, owner_class: cst.ClassDef, plan: Plan) -> Set[str]:
    """The attributes of ``self`` that hold a model in ``owner_class``: assigned a model the file
    makes or holds (``self.model = keras.Sequential(...)``, ``self.model = model``), or called
    under a ``GradientTape`` in one of its methods (what its training step trains)."""
    made = {id(assign) for assign in plan.model_assignments}
    found = set()
    for node in walk(owner_class):
        if isinstance(node, cst.Assign) and (id(node) in made or isinstance(node.value, cst.Name)
                                             and node.value.value in plan.model_like):
            found |= {target.target.attr.value for target in node.targets
                      if isinstance(target.target, cst.Attribute) and is_self(target.target.value)}
    for tape, _ in ctx.calls_to(*TAPES):
        with_node = ctx.enclosing(tape, cst.With)
        if with_node is None or ctx.enclosing(with_node, cst.ClassDef) is not owner_class:
            continue
        found |= {node.func.attr.value for node in walk(with_node.body) if isinstance(node, cst.Call)
                  and isinstance(node.func, cst.Attribute) and is_self(node.func.value)}
    return found


def _model_runners(ctx, name: str, models: Set[str]) -> List[cst.FunctionDef]:
    """Functions of the file (not methods) named ``name`` that run one of ``models``: a test step
    the script hands to its strategy's ``run`` beside the training step."""
    return [function for function in ctx.nodes(cst.FunctionDef) if function.name.value == name
            and ctx.enclosing(function, cst.ClassDef) is None and runs_models(ctx, function, models)]

RULE = CustomLoop()
