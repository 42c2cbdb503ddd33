import libcst as cst

from porter.rule import FIX, TF1, Example, Rule
from porter.rules.tf1._analysis.graph import (GLOBAL_STEP_FACTORIES, cpu_bound_kind, cpu_device_scope, enclosing_device,
                            hoist_to_cpu, ipu_bound_scopes, runs_on_ipu, calls_named)


class GlobalStepOnCpu(Rule):
    code = "IPU205"
    name = "global-step-on-cpu"
    kind = FIX
    frameworks = frozenset({TF1})
    summary = "Create the global step on the CPU, before the IPU scope."
    rationale = (
        "If `global_step` lives on the IPU, its increment runs as a separate IPU engine after every "
        "step, swapping the training engine out each time: very slow. The TF1 guide creates it first, "
        "in `with tf.device(\"cpu\"): tf.train.get_or_create_global_step()` (Targeting the IPU from "
        "TensorFlow 1, \"Note on the global_step counter\"). A creation statement outside any device scope is "
        "put in a CPU scope, in front "
        "of the IPU scope when it came after it; one inside an `ipu_scope` moves out in front of it "
        "(for GPU scopes IPU201 does this). A creation inside the compiled model is reported."
    )
    examples = (
        Example(
            """\
            import tensorflow.compat.v1 as tf

            global_step = tf.train.get_or_create_global_step()
            loss, train_op = build(global_step)
            """,
            """\
            import tensorflow.compat.v1 as tf

            with tf.device("cpu"):
                global_step = tf.train.get_or_create_global_step()
            loss, train_op = build(global_step)
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu

            with ipu.scopes.ipu_scope("/device:IPU:0"):
                out = ipu.ipu_compiler.compile(step, inputs=[x])
            step_counter = tf.train.create_global_step()
            """,
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu

            with tf.device("cpu"):
                step_counter = tf.train.create_global_step()
            with ipu.scopes.ipu_scope("/device:IPU:0"):
                out = ipu.ipu_compiler.compile(step, inputs=[x])
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu


            def step(x):
                loss = tf.reduce_sum(x)
                opt = tf.train.AdamOptimizer()
                return opt.minimize(loss, global_step=tf.train.get_or_create_global_step())


            with ipu.scopes.ipu_scope("/device:IPU:0"):
                train = ipu.ipu_compiler.compile(step, inputs=[x])
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf

            with tf.device("cpu"):
                tf.train.get_or_create_global_step()
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        for call in calls_named(ctx, GLOBAL_STEP_FACTORIES):
            device = enclosing_device(ctx, call)
            statement = ctx.statement_of(call)
            whole = cpu_bound_kind(ctx, statement) == "global step" and ctx.block_of(statement) is not None
            if device == "cpu" or (device == "gpu0" and whole and self._directly_in_scope(ctx, statement)):
                continue  # on the CPU already, or moved out of the GPU scope by IPU201
            if device == "ipu" and whole and self._directly_in_scope(ctx, statement):
                scope = ctx.parent(ctx.block_of(statement))
                self._move(ctx, call, statement, scope)
            elif runs_on_ipu(ctx, call):
                ctx.report(self.code, call, "the global step is created in the IPU computation: create it "
                           "before the IPU scope, in `with tf.device(\"cpu\"): "
                           "tf.train.get_or_create_global_step()`, and only get it here", fixed=False)
            elif device is None and whole:
                earlier = [scope for scope in ipu_bound_scopes(ctx)
                           if ctx.block_of(scope) is ctx.block_of(statement)
                           and ctx.siblings(scope).index(scope) < ctx.siblings(statement).index(statement)]
                if earlier:
                    self._move(ctx, call, statement, earlier[0])
                elif ctx.wrap(statement, statement, lambda body: cpu_device_scope(ctx, body)):
                    ctx.report(self.code, call, "the global step is created on the CPU", fixed=True)

    def _move(self, ctx, call, statement, scope) -> None:
        if hoist_to_cpu(ctx, scope, [statement]):
            ctx.report(self.code, call, "the global step is created on the CPU, before the IPU scope", fixed=True)

    @staticmethod
    def _directly_in_scope(ctx, statement) -> bool:
        block = ctx.block_of(statement)
        return isinstance(block, cst.IndentedBlock) and isinstance(ctx.parent(block), cst.With)


RULE = GlobalStepOnCpu()
