import libcst as cst

from porter.cstutil import keyword, positional
from porter.rules.keras._analysis.model_plan import MODEL_BASES
from porter.rules.keras._analysis.util import method_calls, subclasses_of
from porter.rule import KERAS, WARN, Example, Rule

_TAPES = ("tensorflow.GradientTape", "tensorflow.autodiff.GradientTape")
_FUNCTIONS = ("tensorflow.function", "tensorflow.compat.v2.function")


class GradientTape(Rule):
    code = "IPU153"
    name = "gradient-tape"
    kind = WARN
    frameworks = frozenset({KERAS})
    summary = "Warn about `tf.GradientTape` custom training loops that do not run through `strategy.run`."
    rationale = (
        "A custom training loop runs on the IPU only when its step is a `@tf.function(jit_compile=True)` "
        "called through `strategy.run(...)` inside `strategy.scope()` (Targeting the IPU from TensorFlow 2, "
        "\"On-device loops\"; in eager mode `strategy.run` needs a `tf.function`). The porter does not "
        "rewrite "
        "training loops yet: it reports each `GradientTape` whose step is not compiled and run that way "
        "(a Keras `train_step` override is compiled by `fit`, and left to IPU103)."
    )
    examples = (
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


            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = compute_loss(x, y)
                return tape.gradient(loss, weights)


            for x, y in dataset:
                train_step(x, y)
            """,
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
        Example("""\
            import tensorflow as tf

            with tf.device("/cpu:0"):
                x = tf.constant(1.0)
            """, reported=False),
    )

    def run(self, ctx) -> None:
        tapes = list(ctx.calls_to(*_TAPES))
        if not tapes:
            return
        run_targets = self._run_targets(ctx)
        from porter.rules.keras._analysis.custom_loop import loop_plans

        handled = {plan.step.function.name.value for plan in loop_plans(ctx)}  # IPU111 rewrites or reports them
        compiled = {function.name.value: function for function in ctx.nodes(cst.FunctionDef)
                    if self._is_compiled(ctx, function)}
        keras_models = subclasses_of(ctx, *MODEL_BASES)
        for call, _ in tapes:
            function = ctx.enclosing_function(call)
            name = function.name.value if function is not None else None
            if name in handled:
                continue
            if name in ("train_step", "test_step") and self._method_of(ctx, function, keras_models):
                continue  # a Keras `train_step` override: `fit` compiles it (IPU103 reports the override)
            if name is not None and name in compiled and name in run_targets:
                continue
            if name is not None and any(caller in run_targets and self._calls(ctx, compiled[caller], name)
                                        for caller in compiled):
                continue
            if name is not None and name in compiled:
                message = (f"`{name}` is compiled but not called through `strategy.run`: call it as "
                           f"`strategy.run({name}, args=(...))` inside `strategy.scope()`")
            else:
                message = ("custom training loop: the step must be a `@tf.function(jit_compile=True)` "
                           "called through `strategy.run(...)` inside `strategy.scope()` (Targeting the IPU "
                           "from TensorFlow 2, \"On-device loops\")")
            ctx.report(self.code, call, message, fixed=False)

    @staticmethod
    def _method_of(ctx, function, classes) -> bool:
        """Whether ``function`` is defined in the body of one of ``classes`` (a plain trainer
        class's ``train_step`` is an ordinary method, not a Keras override)."""
        owner = ctx.parent(ctx.parent(function))
        return isinstance(owner, cst.ClassDef) and any(owner is cls for cls in classes.values())

    @staticmethod
    def _run_targets(ctx):
        targets = set()
        for call, _ in method_calls(ctx, "run"):
            args = positional(call)
            fn = args[0].value if args else (keyword(call, "fn").value if keyword(call, "fn") else None)
            if isinstance(fn, cst.Name):
                targets.add(fn.value)
        return targets

    @staticmethod
    def _is_compiled(ctx, function) -> bool:
        for decorator in function.decorators:
            node = decorator.decorator
            if not isinstance(node, cst.Call) or ctx.qualified_name(node.func) not in _FUNCTIONS:
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
