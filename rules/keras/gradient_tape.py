from typing import List, Set

import libcst as cst

from porter.context import code_of, walk
from porter.cstutil import is_name, keyword, positional
from porter.rules.keras._analysis.custom_loop import covered, loop_plans, rewrites_loops, tensorflow_alias
from porter.rules._tf.tfdata import float64_data
from porter.rules.keras._analysis.inline_step import inline_steps
from porter.rules.keras._analysis.schedules import float64_instance_array
from porter.rules.keras._analysis.losses import step_methods
from porter.rules.keras._analysis.model_plan import MODEL_BASES, calls_by_name, model_plan
from porter.rules.keras._analysis.steps import (FUNCTIONS, TAPES, functions_run_by, is_tf_function, made_steps,
                                                method_of_attribute, plain_functions, updates_weights)
from porter.rules.keras._analysis.util import (RUN_METHODS, called_by_keras_steps, estimator_model_fns, method_calls,
                                              run_by_keras, subclass_definitions, subclasses_of)
from porter.rule import KERAS, TF1, WARN, Example, Rule, is_selected
from porter.scopes import single_value

# What makes TensorFlow 1 code graph code: without them, a `compat.v1` file with a tape runs eagerly.
_GRAPH_CALLS = frozenset({"Session", "InteractiveSession", "MonitoredTrainingSession", "placeholder"})
_CUSTOM_LOOP = "IPU111"  # the rule that rewrites (or reports) the loops it plans
_SCOPE = "IPU103"  # the rule that puts the model code in the IPU strategy's scope
_CALLER_DEPTH = 3  # callers followed up to find the strategy scope a call runs in


class GradientTape(Rule):
    code = "IPU153"
    name = "gradient-tape"
    kind = WARN
    # TF1 too: a TensorFlow 1.x eager tutorial (`compat.v1`, a tape, no session) is no graph to compile.
    frameworks = frozenset({KERAS, TF1})
    summary = ("Report `tf.GradientTape` code the custom-loop rewrite (IPU111) cannot express, and what stops "
               "it.")
    rationale = (
        "A custom training loop runs on the IPU only when its step is a `@tf.function(jit_compile=True)` "
        "called through `strategy.run(...)` inside `strategy.scope()` (Targeting the IPU from TensorFlow 2, "
        "\"On-device loops\"; in eager mode `strategy.run` needs a `tf.function`). IPU111 rewrites a step "
        "function called in the body of a `for` loop, and a step written inline in a loop's body (or an `if` in it); "
        "this rule reports each other `GradientTape` with what stops the rewrite: a training step written "
        "inline elsewhere (in a `with` or a `try`, outside any loop), a step that "
        "is a method IPU111 does not take (a trainer made or run out of the scope), a step called elsewhere than in a loop (where its calls give it float64 NumPy "
        "data, a replay buffer's `np.zeros` with no dtype, the report asks for the float32 cast too: `strategy.run` "
        "rejects float64 inputs), TensorFlow 1.x code run "
        "eagerly, and code that only takes gradients (no optimizer step: saliency maps, "
        "guides), which runs on the CPU as it is, or uncompiled when the port runs it in the IPU strategy's "
        "scope. Gradients that a SciPy optimizer takes on the host (`scipy.optimize.minimize(objective, ...)`, "
        "the second-order phase after Adam, which sets the weights itself) have no optimizer step to move into "
        "the compiled function: the loss and gradients are computed through `strategy.run` and handed to SciPy. "
        "A step already run through `strategy.run` from a "
        "`tf.function` (a `MirroredStrategy` loop) is the documented pattern and is not reported, and a "
        "Keras `train_step` override is compiled by `fit` (IPU103 reports the override)."
    )
    examples = (
        # The tape of a `tf.while_loop` body inside a compiled function run through `strategy.run`:
        # the body is traced into that function's graph, so it runs on the IPU and is not reported.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                optimizer = tf.keras.optimizers.SGD(0.01)

                @tf.function(jit_compile=True)
                def train_loop(iterator, steps):
                    def body(i, total):
                        x, y = next(iterator)
                        with tf.GradientTape() as tape:
                            loss = tf.reduce_mean((model(x) - y) ** 2)
                        grads = tape.gradient(loss, model.trainable_variables)
                        optimizer.apply_gradients(zip(grads, model.trainable_variables))
                        return i + 1, total + loss

                    return tf.while_loop(lambda i, total: i < steps, body, (tf.constant(0), tf.constant(0.0)))

                iterator = iter(dataset)
                for epoch in range(3):
                    strategy.run(train_loop, args=(iterator, 32))
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow as tf


            def train_step(model, optimizer, x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            optimizer = tf.keras.optimizers.SGD(0.1)
            for x, y in dataset:
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
        ),
        # A gradient guide: gradients of a prediction with respect to an image, no optimizer step.
        Example(
            """\
            import tensorflow as tf

            image = tf.Variable(tf.zeros((1, 28, 28, 1)))
            with tf.GradientTape() as tape:
                score = model(image)[0, 3]
            saliency = tf.abs(tape.gradient(score, image))
            """,
        ),
        # A saliency map of a model trained in the IPU strategy's scope, taken by a function called
        # there: the port runs it in the scope uncompiled (eagerly), which the report says.
        Example(
            """\
            import tensorflow as tf


            def saliency(model, image):
                with tf.GradientTape() as tape:
                    tape.watch(image)
                    top = tf.reduce_max(model(image))
                return tf.abs(tape.gradient(top, image))


            model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            model.compile(optimizer="adam", loss="mse")
            model.fit(x, y, batch_size=8)
            heat = saliency(model, x[:1])
            """,
        ),
        # The same in a `tf.function` called directly in the scope: not through `strategy.run`.
        Example(
            """\
            import tensorflow as tf


            @tf.function
            def input_gradient(model, images):
                with tf.GradientTape() as tape:
                    tape.watch(images)
                    total = tf.reduce_sum(model(images))
                return tape.gradient(total, images)


            model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            model.compile(optimizer="adam", loss="mse")
            model.fit(x, y, batch_size=8)
            grads = input_gradient(model, x[:8])
            """,
        ),
        # A derivative function handed to a descent by hand (`grad_fn=grad`), which applies what it
        # returns: reported as gradients that the caller applies, not as gradients nobody applies.
        Example(
            """\
            import tensorflow as tf


            def grad(f, x):
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    y = f(x)
                return tape.gradient(y, x)


            def descend(f, start, grad_fn=grad, steps=50):
                x = tf.Variable(start)
                for _ in range(steps):
                    x.assign_sub(0.1 * grad_fn(f, x))
                return x
            """,
        ),
        # The loss and gradients of a second-order phase after Adam: a SciPy optimizer takes them on
        # the host and sets the weights itself (reported with what to do, not as an optimizer step to
        # move into the compiled function).
        Example(
            """\
            import numpy as np
            import scipy.optimize
            import tensorflow as tf

            x = np.linspace(-1.0, 1.0, 64, dtype="float32")[:, None]
            model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="tanh"), tf.keras.layers.Dense(1)])
            model.build((None, 1))


            @tf.function
            def loss_and_grads():
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - tf.sin(3.0 * x)))
                return loss, tape.gradient(loss, model.trainable_variables)


            def objective(flat):
                start = 0
                for variable in model.trainable_variables:
                    size = int(np.prod(variable.shape))
                    variable.assign(flat[start:start + size].reshape(variable.shape))
                    start += size
                loss, grads = loss_and_grads()
                return float(loss), np.concatenate([g.numpy().ravel() for g in grads]).astype("float64")


            start = np.concatenate([v.numpy().ravel() for v in model.trainable_variables]).astype("float64")
            scipy.optimize.minimize(objective, start, jac=True, method="L-BFGS-B")
            """,
        ),
        # The tape in SciPy's objective itself, after `set_weights` from SciPy's vector.
        Example(
            """\
            import numpy as np
            import scipy.optimize
            import tensorflow as tf

            x = np.linspace(-1.0, 1.0, 64, dtype="float32")[:, None]
            model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="tanh"), tf.keras.layers.Dense(1)])
            model.build((None, 1))
            shapes = [w.shape for w in model.get_weights()]


            def objective(flat):
                sizes = [int(np.prod(shape)) for shape in shapes]
                parts = np.split(flat, np.cumsum(sizes)[:-1])
                model.set_weights([part.reshape(shape) for part, shape in zip(parts, shapes)])
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - tf.sin(3.0 * x)))
                grads = tape.gradient(loss, model.trainable_variables)
                return float(loss), np.concatenate([g.numpy().ravel() for g in grads]).astype("float64")


            start = np.concatenate([w.ravel() for w in model.get_weights()]).astype("float64")
            scipy.optimize.minimize(objective, start, jac=True, method="L-BFGS-B")
            """,
        ),
        # The optimizer step is left to the loop: it must run in the compiled step too.
        Example(
            """\
            import tensorflow as tf


            def grad(model, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                return loss, tape.gradient(loss, model.trainable_variables)


            def train(model, optimizer, batches):
                for x, y in batches:
                    loss, grads = grad(model, x, y)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
        ),
        # TensorFlow 1.x run eagerly: no graph for the TF1 rules, no TF2 loop for IPU111 (even with it
        # selected: it ports TensorFlow 2 files only).
        Example(
            """\
            import tensorflow.compat.v1 as tf

            tf.enable_eager_execution()
            optimizer = tf.train.GradientDescentOptimizer(0.01)
            for x, y in dataset:
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
        ),
        # A MirroredStrategy loop already runs its step through `strategy.run` from a `tf.function`.
        Example(
            """\
            import tensorflow as tf


            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = compute_loss(x, y)
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss


            @tf.function
            def distributed_step(x, y):
                losses = strategy.run(train_step, args=(x, y))
                return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)
            """,
            reported=False,
        ),
        Example(
            """\
            from tensorflow import GradientTape, function


            @function(jit_compile=True)
            def step(x):
                with GradientTape() as tape:
                    loss = model(x)
                return tape.gradient(loss, model.weights)


            step(batch)
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            @tf.function(jit_compile=True)
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = compute_loss(x, y)
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss


            with strategy.scope():
                for x, y in dataset:
                    strategy.run(train_step, args=(x, y))
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow as tf


            def step(x, y):
                with tf.GradientTape() as tape:
                    loss = compute_loss(x, y)
                return tape.gradient(loss, weights)


            @tf.function(experimental_compile=True)
            def loop(iterator):
                for _ in tf.range(10):
                    step(*next(iterator))


            strategy.run(loop, args=(it,))
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow as tf


            class Trainer(tf.keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.compiled_loss(y, self(x, training=True))
                    self.optimizer.minimize(loss, self.trainable_variables, tape=tape)
                    return {}
            """,
            reported=False,
        ),
        # A plain trainer class: its `train_step` is an ordinary method, not a Keras override.
        Example(
            """\
            import tensorflow as tf


            class Trainer:
                def train_step(self, x, y):
                    with tf.GradientTape() as tape:
                        loss = self.loss_fn(y, self.model(x, training=True))
                    grads = tape.gradient(loss, self.model.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
                    return loss
            """,
        ),
        # A tape in a method that a Keras `train_step` override calls (a gradient penalty): `fit`
        # compiles it with the step.
        Example("""\
            import tensorflow as tf


            class Critic(tf.keras.Model):
                def penalty(self, real):
                    with tf.GradientTape() as tape:
                        tape.watch(real)
                        score = self(real, training=True)
                    return tf.reduce_mean(tape.gradient(score, real) ** 2)

                def train_step(self, real):
                    with tf.GradientTape() as tape:
                        loss = self.penalty(real)
                    self.optimizer.minimize(loss, self.trainable_variables, tape=tape)
                    return {"loss": loss}
            """, reported=False),
        Example("""\
            import tensorflow as tf

            with tf.device("/cpu:0"):
                x = tf.constant(1.0)
            """, reported=False),
        # A GAN step opening two tapes in one `with`, in a method: one finding for the step.
        Example("""\
            import tensorflow as tf


            class Trainer:
                @tf.function
                def step(self, real, noise):
                    with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
                        fake = self.generator(noise)
                        d_loss = tf.reduce_mean(self.critic(fake)) - tf.reduce_mean(self.critic(real))
                        g_loss = -tf.reduce_mean(self.critic(fake))
                    self.d_opt.apply_gradients(zip(d_tape.gradient(d_loss, self.critic.trainable_variables),
                                                   self.critic.trainable_variables))
                    self.g_opt.apply_gradients(zip(g_tape.gradient(g_loss, self.generator.trainable_variables),
                                                   self.generator.trainable_variables))
            """),
        # A gradient penalty's tape in a method the class's training step calls: one finding, for the step.
        Example("""\
            import tensorflow as tf


            class WGAN:
                def penalty(self, real):
                    with tf.GradientTape() as tape:
                        tape.watch(real)
                        score = self.critic(real)
                    return tf.reduce_mean((tf.norm(tape.gradient(score, real), axis=1) - 1.0) ** 2)

                @tf.function
                def train_step(self, real):
                    with tf.GradientTape() as tape:
                        loss = -tf.reduce_mean(self.critic(real)) + 10.0 * self.penalty(real)
                    grads = tape.gradient(loss, self.critic.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.critic.trainable_variables))
            """),
        # A notebook that defines its Keras model class again, step after step: each version's
        # `train_step` is an override that `fit` compiles (IPU103 reports each).
        Example("""\
            import tensorflow as tf


            class Probe(tf.keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.compiled_loss(y, self(x, training=True))
                    self.optimizer.minimize(loss, self.trainable_variables, tape=tape)
                    return {"loss": loss}


            class Probe(tf.keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.compiled_loss(y, self(x, training=True))
                    grads = tape.gradient(loss, self.trainable_variables)
                    tf.print(tf.linalg.global_norm(grads))
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}
            """, reported=False),
        # A layer trained locally by a method that the model's `train_step` calls: inside `fit`.
        Example("""\
            import tensorflow as tf


            class LocalBlock(tf.keras.layers.Layer):
                def local_update(self, x):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(self.dense(x) ** 2)
                    grads = tape.gradient(loss, self.dense.trainable_weights)
                    self.optimizer.apply_gradients(zip(grads, self.dense.trainable_weights))
                    return loss


            class Stack(tf.keras.Model):
                def train_step(self, data):
                    return {"loss": self.block.local_update(data[0])}
            """, reported=False),
        # A plain class's step method, called (in a comprehension) in the strategy's scope: the report
        # asks for the compilation and `strategy.run`, not for a scope the calls are already in.
        Example("""\
            import tensorflow as tf


            class Trainer:
                def __init__(self, model):
                    self.model = model
                    self.optimizer = tf.keras.optimizers.SGD(0.1)

                def step(self, x, y):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean((self.model(x) - y) ** 2)
                    grads = tape.gradient(loss, self.model.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
                    return loss


            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                trainer = Trainer(tf.keras.Sequential([tf.keras.layers.Dense(1)]))
                losses = [trainer.step(x, y) for x, y in dataset]
            """),
        # A replay buffer's compiled update method, given tensors of its float64 arrays (`np.zeros`
        # with no dtype): reported, asking for the float32 cast `strategy.run` needs too.
        Example("""\
            import numpy as np
            import tensorflow as tf


            class Buffer:
                def __init__(self, model, size):
                    self.model = model
                    self.optimizer = tf.keras.optimizers.SGD(0.1)
                    self.states = np.zeros((size, 4))
                    self.targets = np.zeros((size, 1))

                @tf.function
                def update(self, x, y):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean((self.model(x) - y) ** 2)
                    grads = tape.gradient(loss, self.model.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))

                def learn(self, batch):
                    x = tf.convert_to_tensor(self.states[batch])
                    self.update(x, tf.cast(self.targets[batch], tf.float32))


            buffer = Buffer(tf.keras.Sequential([tf.keras.layers.Dense(1)]), 64)
            for episode in range(10):
                buffer.learn(np.arange(32))
            """),
        # A subclass's compiled step that its base class's training loop calls (`BaseTrainer.fit`),
        # where another subclass has a step of its own: the loop may run either, and the porter
        # rewrites it for neither. Reported, naming that loop's method, and asking for
        # `jit_compile=True` on the `@tf.function` the step has.
        Example("""\
            import tensorflow as tf


            class BaseTrainer:
                def fit(self, dataset):
                    for x, y in dataset:
                        self.train_step(x, y)


            class Baseline(BaseTrainer):
                def train_step(self, x, y):
                    return 0.0


            class Trainer(BaseTrainer):
                def __init__(self):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    self.optimizer = tf.keras.optimizers.SGD(0.1)

                @tf.function
                def train_step(self, x, y):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean((self.model(x) - y) ** 2)
                    grads = tape.gradient(loss, self.model.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))


            Trainer().fit(dataset)
            """),
    )

    def run(self, ctx) -> None:
        tapes = list(ctx.calls_to(*TAPES))
        if not tapes or (KERAS not in ctx.frameworks and self._graph_code(ctx)):
            return  # TF1 graph code: the tape is part of the graph the TF1 rules compile
        run_calls = self._run_calls(ctx)
        # IPU111 rewrites (or reports) the loops it plans, in TensorFlow 2 files.
        rewritten = rewrites_loops(ctx, _CUSTOM_LOOP)
        steps = [plan.step.function for plan in loop_plans(ctx)] if rewritten else []  # IPU111 rewrites or reports them
        # ... with the helpers they call (a gradient penalty's own tape): they run inside the step.
        handled = {function.name.value for step in steps for function in functions_run_by(ctx, step)}
        inline = {id(node) for step in inline_steps(ctx) if rewritten for statement in step.statements
                  for node in walk(statement)}
        compiled = {function.name.value: function for function in ctx.nodes(cst.FunctionDef)
                    if self._is_compiled(ctx, function)}
        keras_models = subclasses_of(ctx, *MODEL_BASES)
        model_definitions = subclass_definitions(ctx, *MODEL_BASES)  # each, when a notebook defines one again
        in_keras_steps = called_by_keras_steps(ctx, keras_models)
        model_fns = estimator_model_fns(ctx)
        reported = set()
        taping = {id(ctx.enclosing_function(call)) for call, _ in tapes}
        for call, _ in tapes:
            function = ctx.enclosing_function(call)
            name = function.name.value if function is not None else None
            if name in handled or id(call) in inline or name in model_fns:
                continue  # (an Estimator's `model_fn`: IPU211 reports the Estimator)
            if self._nested_in_step(ctx, function, handled, run_calls):
                continue  # (a `tf.while_loop` body): traced into the step's graph, which is reported
            if self._helper_of_method_step(ctx, function, taping):
                continue  # (a gradient penalty): part of that step, which is reported
            if self._method_of(ctx, function, model_definitions) and run_by_keras(
                    function, ctx.parent(ctx.parent(function))):
                continue  # a Keras `train_step` override, or a method it calls: `fit` compiles them (IPU103)
            if ctx.enclosing(function, cst.ClassDef) is not None and name in in_keras_steps:
                continue  # a layer's method that a Keras `train_step` calls: it runs in the compiled step
            if name in run_calls:
                if is_tf_function(ctx, function) or any(
                        is_tf_function(ctx, ctx.enclosing_function(run)) for run in run_calls[name]):
                    continue  # run through `strategy.run` from a `tf.function`: the documented pattern
                if rewritten:
                    continue  # IPU111 compiles it
                message = (f"`{name}` is passed to `strategy.run` eagerly, which the IPU strategy refuses for "
                           f"a plain Python function: decorate `{name}` with `@tf.function(jit_compile=True)`")
            elif name is not None and any(caller in run_calls and self._calls(ctx, compiled[caller], name)
                                          for caller in compiled):
                continue
            elif name is not None and name in compiled:
                message = (f"`{name}` is compiled but not called through `strategy.run`: call it as "
                           f"`strategy.run({name}, args=(...))` inside `strategy.scope()`")
            else:
                message = self._why_not_rewritten(ctx, call, function)
            # Two tapes of one step (a GAN's) give one finding.
            said = (id(function if function is not None else ctx.statement_of(call)), message)
            if said not in reported:
                reported.add(said)
                ctx.report(self.code, call, message, fixed=False)

    def _nested_in_step(self, ctx, function, handled: Set[str], run_calls) -> bool:
        """Whether ``function`` is defined inside a step that IPU111 handles or that runs through
        `strategy.run` from a `tf.function` (a ``tf.while_loop`` body, a ``loss_fn`` closure):
        tracing the step traces it, so it runs in the step's compiled graph."""
        outer = [node for node in ctx.ancestors(function) if isinstance(node, cst.FunctionDef)] if function else []
        return any(node.name.value in handled or node.name.value in run_calls and is_tf_function(ctx, node)
                   for node in outer)

    def _why_not_rewritten(self, ctx, tape: cst.Call, function) -> str:
        """What stops IPU111 from rewriting the loop around ``tape``, and what to do instead."""
        owner = ctx.parent(ctx.parent(function)) if function is not None else None
        loop = self._enclosing_loop(ctx, tape)
        code = [loop] if loop is not None else [function] if function is not None else self._cell(ctx, tape)
        applied_by_caller = not any(updates_weights(node) for root in code for node in walk(root)) and (
            function is not None and self._applied_by_callers(ctx, function))
        if not applied_by_caller and not any(updates_weights(node) for root in code for node in walk(root)):
            taken = self._scipy_taker(ctx, {function.name.value}) if function is not None else None
            if taken is not None:  # `set_weights` from SciPy's vector, then the tape, in SciPy's objective
                return (f"`{function.name.value}` computes the loss and gradients that `{taken[1]}` takes on the host "
                        "(SciPy is the optimizer here, and the weights are set on the host): the port runs this tape "
                        "in the IPU strategy's scope eagerly, op by op; move the tape and the loss into a "
                        "`@tf.function(jit_compile=True)` and call it through `strategy.run(...)` in "
                        f"`{function.name.value}`")
            return self._gradients_only(ctx, tape, function)
        if KERAS not in ctx.frameworks or tensorflow_alias(ctx) is None:
            return ("TensorFlow 1 code run eagerly (the `compat.v1` API and TF1 optimizers, no session) trains with "
                    "this tape: the porter compiles TF1 graphs and TF2 loops, not this; port it to TensorFlow 2 "
                    "(`import tensorflow as tf`, Keras optimizers), then the step can be compiled and run through "
                    "`strategy.run` inside an `IPUStrategy` scope")
        host_optimizer = self._host_optimizer(ctx, function) if applied_by_caller else None
        if host_optimizer is not None:
            return self._host_optimized(ctx, function, *host_optimizer)
        if applied_by_caller:
            return (f"`{function.name.value}` returns gradients that its caller applies: under `strategy.run` the "
                    f"optimizer step must run in the same compiled step; move it into `{function.name.value}`, then "
                    "call that through `strategy.run` inside `strategy.scope()`")
        if isinstance(owner, cst.ClassDef):
            # Where every call of the method runs in the IPU strategy's scope, so do the model and
            # optimizer it reaches through `self`: only the compilation and `strategy.run` are missing.
            scope = ("(its calls already run in `strategy.scope()`)" if self._called_in_scope(ctx, function)
                     else "and create the model and optimizer inside `strategy.scope()`")
            # An existing `@tf.function` only lacks `jit_compile=True`: a second decorator would wrap it twice.
            compile_it = ("give its `@tf.function` `jit_compile=True`" if is_tf_function(ctx, function)
                          else "decorate it with `@tf.function(jit_compile=True)`")
            return (f"the training step `{owner.name.value}.{function.name.value}` is a method, which the porter "
                    f"does not rewrite{self._called_from_other_classes(ctx, function, owner)}: {compile_it}, call it "
                    f"through `strategy.run(...)` {scope}{self._float64_arguments(ctx, function)} (Targeting the IPU "
                    "from TensorFlow 2, \"On-device loops\")")
        if loop is not None or function is None:
            return ("the training step is written inline where the porter cannot move it into a function (it "
                    "moves a step written in the body of a loop or of an `if` in it, not in a `with`, a `try` or outside a "
                    "loop): move the tape, the gradients and the "
                    "optimizer step into a function; the porter then compiles it (`@tf.function(jit_compile=True)`) "
                    "and calls it through `strategy.run` inside `strategy.scope()`")
        return (f"`{function.name.value}` is not called in the body of a `for` loop (nor under a statement of it), "
                "the loop the porter rewrites: decorate it with `@tf.function(jit_compile=True)` and call it as "
                f"`strategy.run({function.name.value}, args=(...))` inside `strategy.scope()`"
                f"{self._float64_arguments(ctx, function)}")

    @staticmethod
    def _float64_arguments(ctx, function: cst.FunctionDef) -> str:
        """What the message adds when the calls of ``function`` give it float64 NumPy data, or a
        tensor made of it (``tf.convert_to_tensor(self.states[batch])`` of a replay buffer's
        ``np.zeros``): ``strategy.run`` rejects float64 inputs, which Keras' ``fit`` would cast."""
        named = []
        for call in ctx.nodes(cst.Call):
            func = call.func
            if not (is_name(func, function.name.value) or isinstance(func, cst.Attribute)
                    and is_name(func.value, "self") and func.attr.value == function.name.value):
                continue
            for arg in call.args:
                value = single_value(ctx, arg.value)
                if isinstance(value, cst.Call) and len(value.args) == 1 and value.args[0].keyword is None and \
                        ctx.qualified_name(value.func) in ("tensorflow.convert_to_tensor", "tensorflow.constant"):
                    value = value.args[0].value  # a tensor made with no dtype keeps the array's float64
                if float64_data(ctx, arg.value, tensors=True) or float64_instance_array(ctx, value):
                    named.append(f"`{code_of(ctx, arg.value)}`")
        if not named:
            return ""
        return (f"; cast the float64 data its calls give it ({', '.join(dict.fromkeys(named))}) to float32 first: "
                "`strategy.run` rejects float64 inputs")

    @staticmethod
    def _gradients_only(ctx, tape: cst.Call, function) -> str:
        """What to do with a tape whose gradients no optimizer applies (a saliency map, a guide):
        out of the port's IPU strategy scope it runs on the CPU as it is; in it (the port wraps
        the code, or every call of its function), it runs there uncompiled, which is no IPU program."""
        what = "`tf.GradientTape` takes gradients here but no optimizer applies them (no training step)"
        plan = model_plan(ctx)
        scoped = is_selected(_SCOPE, ctx.config.select, ctx.config.ignore)
        if not scoped or not covered(ctx, plan.regions, tape, _CALLER_DEPTH):
            # A gradient guide has no model code: the port makes no strategy to run it through.
            strategy = ("" if plan.regions or plan.has_ipu_strategy or plan.strategy_statement is not None else
                        "configure the IPU system and make an `ipu.ipu_strategy.IPUStrategy()` (the port makes "
                        "none here, with no model code), then ")
            return (f"{what}: this code runs on the CPU as it is; to run it on the IPU, {strategy}put it in a "
                    "`@tf.function(jit_compile=True)` called through `strategy.run(...)` inside `strategy.scope()`")
        if is_tf_function(ctx, function):
            name, owner = function.name.value, ctx.enclosing(function, cst.ClassDef)
            # A method (a `tf.Module`'s `__call__`) is run through its instance, which has no name here.
            run = "through `strategy.run(...)`" if owner is not None else f"as `strategy.run({name}, args=(...))`"
            name = f"{owner.name.value}.{name}" if owner is not None else name
            return (f"{what}: the port runs this code in the IPU strategy's scope, but `{name}` is a `tf.function` "
                    f"called directly, not through `strategy.run`, so it does not run as an IPU program: give it "
                    f"`jit_compile=True` and call it {run}")
        return (f"{what}: the port runs this code in the IPU strategy's scope eagerly, op by op, while the IPU "
                "runs compiled programs: put it in a `@tf.function(jit_compile=True)` called through "
                "`strategy.run(...)`")

    @staticmethod
    def _host_optimizer(ctx, function: cst.FunctionDef):
        """``(caller, optimizer)`` when a function of the file that calls ``function`` is handed to
        a SciPy optimizer (``scipy.optimize.minimize(objective, w0, jac=True)``, the second-order
        phase after Adam): the weights are set on the host from the optimizer's vector, so the
        gradients' caller is no optimizer step to move into the compiled function; else None."""
        callers = {ctx.enclosing_function(call) for call in calls_by_name(ctx).get(function.name.value, ())
                   if isinstance(call.func, cst.Name)}
        return GradientTape._scipy_taker(
            ctx, {caller.name.value for caller in callers if caller is not None and caller is not function})

    @staticmethod
    def _scipy_taker(ctx, names: Set[str]):
        """``(name, optimizer)`` for the first of the file's functions ``names`` handed to a SciPy
        optimizer (``scipy.optimize.minimize(objective, ...)``); else None."""
        for call in ctx.nodes(cst.Call):
            if not (ctx.qualified_name(call.func) or "").startswith("scipy.optimize."):
                continue
            taken = next((arg.value.value for arg in call.args if isinstance(arg.value, cst.Name)
                          and arg.value.value in names), None)
            if taken is not None:
                return taken, ctx.module.code_for_node(call.func)
        return None

    @staticmethod
    def _host_optimized(ctx, function: cst.FunctionDef, caller: str, optimizer: str) -> str:
        """What to do with a function whose loss and gradients a SciPy optimizer takes on the host."""
        name = function.name.value
        compile_it = ("give its `@tf.function` `jit_compile=True`" if is_tf_function(ctx, function)
                      else "decorate it with `@tf.function(jit_compile=True)`")
        return (f"`{name}` returns gradients to `{caller}`, which `{optimizer}` calls on the host: SciPy is the "
                f"optimizer here, and the weights are set on the host, so there is no optimizer step to move into "
                f"`{name}`; {compile_it} and call it as `strategy.run({name}, args=(...))` in `{caller}`, inside "
                "`strategy.scope()`, so that the loss and the gradients are computed on the IPU")

    @staticmethod
    def _called_in_scope(ctx, method: cst.FunctionDef) -> bool:
        """Whether ``method`` is called, and each call (through any receiver, in a comprehension
        too) runs in the IPU strategy's scope of the port, or in a function only called there."""
        calls = [call for call in calls_by_name(ctx).get(method.name.value, ())
                 if isinstance(call.func, cst.Attribute) and ctx.enclosing_function(call) is not method]
        regions = model_plan(ctx).regions
        return bool(calls) and all(covered(ctx, regions, call, _CALLER_DEPTH) for call in calls)

    @staticmethod
    def _helper_of_method_step(ctx, function, taping) -> bool:
        """Whether ``function`` is a method that a training step of its class calls through
        ``self`` (a WGAN's ``gradient_penalty``, called from its ``train_step``): a method of the
        class, with a tape of its own (one of ``taping``, by id), that updates weights."""
        owner = ctx.parent(ctx.parent(function)) if function is not None else None
        if not isinstance(owner, cst.ClassDef):
            return False
        return any(isinstance(step, cst.FunctionDef) and step is not function and id(step) in taping
                   and any(updates_weights(node) for node in walk(step.body))
                   and any(method is function for method in step_methods(ctx, step)[1:])
                   for step in owner.body.body)

    def _applied_by_callers(self, ctx, function: cst.FunctionDef) -> bool:
        """Whether the code around a call of ``function`` (its loop, else its function) updates
        weights, or a function of the file that updates weights is handed ``function`` (a
        ``grad_fn=grad`` default or argument, which it calls in its optimization loop)."""
        name = function.name.value
        for call in ctx.nodes(cst.Call):
            if isinstance(call.func, cst.Name) and call.func.value == name:
                around = self._enclosing_loop(ctx, call) or ctx.enclosing_function(call)
                if around is not None and around is not function and any(
                        updates_weights(node) for node in walk(around)):
                    return True
        return any(updates_weights(node) for taker in self._takers(ctx, name) for node in walk(taker.body))

    @staticmethod
    def _takers(ctx, name: str) -> List[cst.FunctionDef]:
        """The functions of the file handed the function ``name`` as a value: as a parameter's
        default, or as an argument of a call of them by name."""
        functions = plain_functions(ctx)
        takers = [node for node in ctx.nodes(cst.FunctionDef) if any(
            is_name(param.default, name) for param in node.params.params + node.params.kwonly_params
            if param.default is not None)]
        takers += [functions[call.func.value] for call in ctx.nodes(cst.Call)
                   if isinstance(call.func, cst.Name) and call.func.value in functions
                   and any(is_name(arg.value, name) for arg in call.args)]
        return takers

    @staticmethod
    def _graph_code(ctx) -> bool:
        """Sessions, placeholders or an Estimator (which builds the graph from a `model_fn`)."""
        for call in ctx.nodes(cst.Call):
            last = (ctx.qualified_name(call.func) or "").rpartition(".")[2]
            if last in _GRAPH_CALLS or last.endswith("Estimator"):
                return True
        return False

    @staticmethod
    def _cell(ctx, tape: cst.Call):
        """The statements of a module-level tape: its ``with`` and what follows, up to the next tape
        (a guide opens one tape after another, each with its own example)."""
        statement = ctx.statement_of(tape)
        for candidate in (statement, *ctx.ancestors(statement)):
            if ctx.parent(candidate) is ctx.module:
                statement = candidate
                break
        body = list(ctx.module.body)
        cell = [statement]
        for following in body[body.index(statement) + 1:] if statement in body else ():
            if any(isinstance(node, cst.With) for node in walk(following)):
                break
            cell.append(following)
        return cell

    @staticmethod
    def _enclosing_loop(ctx, node):
        """The outermost ``for``/``while`` loop around ``node`` in its function (or module)."""
        found = None
        for ancestor in ctx.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                break
            if isinstance(ancestor, (cst.For, cst.While)):
                found = ancestor
        return found

    @staticmethod
    def _called_from_other_classes(ctx, method: cst.FunctionDef, owner: cst.ClassDef) -> str:
        """`` where ... `` naming the methods of other classes (a base class's training loop,
        ``BaseTrainer.fit``) that call ``method`` through ``self``, when every call is in one: the
        porter rewrites the loops of the step's own class only."""
        callers = [ctx.enclosing_function(call) for call in ctx.nodes(cst.Call) if isinstance(call.func, cst.Attribute)
                   and is_name(call.func.value, "self") and call.func.attr.value == method.name.value]
        classes = [ctx.enclosing(caller, cst.ClassDef) if caller is not None else None for caller in callers]
        if not callers or any(cls is None or cls is owner for cls in classes):
            return ""
        names = sorted({f"`{cls.name.value}.{caller.name.value}`" for cls, caller in zip(classes, callers)})
        return f" where a method of another class calls it ({', '.join(names)})"

    @staticmethod
    def _run_calls(ctx):
        """Per function name, the ``<strategy>.run(name, ...)`` calls that run it (a method of the
        class the call is in for ``self.strategy.run(self.train_step, ...)``)."""
        found = {}
        for call, _ in method_calls(ctx, *RUN_METHODS):
            args = positional(call)
            fn = args[0].value if args else (keyword(call, "fn").value if keyword(call, "fn") else None)
            if isinstance(fn, cst.Attribute) and is_name(fn.value, "self"):
                owner_class = ctx.enclosing(call, cst.ClassDef)
                method = method_of_attribute(ctx, owner_class, fn.attr.value) if owner_class is not None else None
                fn = method.name if method is not None else fn.attr  # `self.train_step = tf.function(self._step)`
            if isinstance(fn, cst.Name):
                found.setdefault(fn.value, []).append(call)
        for name, steps in made_steps(ctx).items():  # `strategy.run(step_fn, ...)` runs the step it holds
            for step in steps if name in found else ():
                found.setdefault(step.name.value, []).extend(found[name])
        return found

    @staticmethod
    def _method_of(ctx, function, classes) -> bool:
        """Whether ``function`` is defined in the body of one of ``classes`` (a plain trainer
        class's ``train_step`` is an ordinary method, not a Keras override)."""
        owner = ctx.parent(ctx.parent(function))
        return isinstance(owner, cst.ClassDef) and any(owner is cls for cls in classes)

    @staticmethod
    def _is_compiled(ctx, function) -> bool:
        for decorator in function.decorators:
            node = decorator.decorator
            if not isinstance(node, cst.Call) or ctx.qualified_name(node.func) not in FUNCTIONS:
                continue
            for name in ("jit_compile", "experimental_compile"):
                arg = keyword(node, name)
                if arg is not None and isinstance(arg.value, cst.Name) and arg.value.value == "True":
                    return True
        return False

    @staticmethod
    def _calls(ctx, function, name) -> bool:
        return any(isinstance(call.func, cst.Name) and call.func.value == name
                   and ctx.enclosing_function(call) is function for call in ctx.nodes(cst.Call))


RULE = GradientTape()
