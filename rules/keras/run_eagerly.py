import libcst as cst

from porter.cstutil import argument, is_false, is_true, keyword
from porter.rules.keras._analysis.util import method_calls
from porter.rule import KERAS, WARN, Example, Rule

_EAGER_SWITCHES = ("tensorflow.config.run_functions_eagerly", "tensorflow.config.experimental_run_functions_eagerly")
_WHY = "Keras models cannot run eagerly under `IPUStrategy` (RuntimeError)"


class RunEagerly(Rule):
    code = "IPU152"
    name = "run-eagerly"
    kind = WARN
    frameworks = frozenset({KERAS})
    summary = "Warn about `compile(run_eagerly=True)` and other switches to eager execution."
    rationale = (
        "The IPU runs compiled graphs only: `model.compile(run_eagerly=True)` makes IPU Keras raise "
        "`RuntimeError(\"Keras models cannot run eagerly when using IPUStrategy...\")` (Targeting the IPU "
        "from TensorFlow 2, \"Keras with IPUs\"). `model.run_eagerly = True` and "
        "`tf.config.run_functions_eagerly(True)` "
        "do the same. Remove them (they are a debugging aid); a value the porter cannot read is "
        "reported too, to be checked."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf

            model.compile(optimizer="adam", loss="mse", run_eagerly=True)
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def main(args):
                model = build()
                model.compile("sgd", "mse", run_eagerly=args.debug)
            """,
        ),
        Example("""\
            import tensorflow as tf

            tf.config.run_functions_eagerly(True)
            model.run_eagerly = True
            """),
        Example(
            """\
            import tensorflow as tf

            model.compile(optimizer="adam", loss="mse", run_eagerly=False)
            tf.config.run_functions_eagerly(False)
            model.compile("adam", "mse", steps_per_execution=8)
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        for call, _ in method_calls(ctx, "compile"):
            self._check(ctx, keyword(call, "run_eagerly"), "`compile(run_eagerly=...)`")
        for call, name in ctx.calls_to(*_EAGER_SWITCHES):
            self._check(ctx, argument(call, "run_eagerly", 0), f"`{name.replace('tensorflow', 'tf')}()`")
        for assign in ctx.nodes(cst.Assign):
            for target in assign.targets:
                if isinstance(target.target, cst.Attribute) and target.target.attr.value == "run_eagerly":
                    self._check(ctx, assign, "`.run_eagerly = ...`", value=assign.value)

    def _check(self, ctx, arg, what, value=None):
        if arg is None:
            return
        value = value if value is not None else arg.value
        if is_false(value):
            return
        if is_true(value):
            ctx.report(self.code, arg, f"{what}: {_WHY}; remove it", fixed=False)
        else:
            ctx.report(self.code, arg, f"{what}: {_WHY}; make sure this value is False", fixed=False)


RULE = RunEagerly()
