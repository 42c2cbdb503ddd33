import libcst as cst

from porter.cstutil import keyword, positional
from porter.rules.keras._analysis.util import method_calls
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
            "import tensorflow as tf\n\n\ndef train_step(model, optimizer, x, y):\n"
            "    with tf.GradientTape() as tape:\n        loss = loss_fn(y, model(x, training=True))\n"
            "    grads = tape.gradient(loss, model.trainable_variables)\n"
            "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n    return loss\n",
        ),
        Example(
            "import tensorflow as tf\n\n\n@tf.function\ndef train_step(x, y):\n"
            "    with tf.GradientTape() as tape:\n        loss = compute_loss(x, y)\n"
            "    return tape.gradient(loss, weights)\n\n\nfor x, y in dataset:\n    train_step(x, y)\n",
        ),
        Example(
            "from tensorflow import GradientTape, function\n\n\n@function(jit_compile=True)\ndef step(x):\n"
            "    with GradientTape() as tape:\n        loss = model(x)\n    return tape.gradient(loss, model.weights)\n\n\n"
            "step(batch)\n",
        ),
        Example(
            "import tensorflow as tf\n\n\n@tf.function(jit_compile=True)\ndef train_step(x, y):\n"
            "    with tf.GradientTape() as tape:\n        loss = compute_loss(x, y)\n"
            "    grads = tape.gradient(loss, model.trainable_variables)\n"
            "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n    return loss\n\n\n"
            "with strategy.scope():\n    for x, y in dataset:\n        strategy.run(train_step, args=(x, y))\n",
            reported=False,
        ),
        Example(
            "import tensorflow as tf\n\n\ndef step(x, y):\n    with tf.GradientTape() as tape:\n"
            "        loss = compute_loss(x, y)\n    return tape.gradient(loss, weights)\n\n\n"
            "@tf.function(experimental_compile=True)\ndef loop(iterator):\n    for _ in tf.range(10):\n"
            "        step(*next(iterator))\n\n\nstrategy.run(loop, args=(it,))\n",
            reported=False,
        ),
        Example(
            "import tensorflow as tf\n\n\nclass Trainer(tf.keras.Model):\n    def train_step(self, data):\n"
            "        x, y = data\n        with tf.GradientTape() as tape:\n"
            "            loss = self.compiled_loss(y, self(x, training=True))\n"
            "        self.optimizer.minimize(loss, self.trainable_variables, tape=tape)\n        return {}\n",
            reported=False,
        ),
        Example("import tensorflow as tf\n\nwith tf.device(\"/cpu:0\"):\n    x = tf.constant(1.0)\n", reported=False),
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
        for call, _ in tapes:
            function = ctx.enclosing_function(call)
            name = function.name.value if function is not None else None
            if name in handled:
                continue
            if name in ("train_step", "test_step") and isinstance(ctx.parent(ctx.parent(function)), cst.ClassDef):
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
