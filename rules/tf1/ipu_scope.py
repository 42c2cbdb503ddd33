import libcst as cst

from porter.rule import FIX, TF1, Example, Rule
from porter.rules.tf1._analysis.graph import IPU_DEVICE, device_of, device_scopes, hoist_to_cpu, hoistable


class IpuScope(Rule):
    code = "IPU201"
    name = "ipu-scope"
    kind = FIX
    frameworks = frozenset({TF1})
    summary = "Build the graph in `ipu.scopes.ipu_scope(\"/device:IPU:0\")` instead of a GPU device scope."
    rationale = (
        "In a TF1 graph the IPU is the device `/device:IPU:0`, entered with `ipu.scopes.ipu_scope`, "
        "which also opens a resource-variable scope and an XLA scope (Targeting the IPU from TensorFlow 1, "
        "\"A basic graph\"). "
        "`with tf.device(\"/gpu:0\")` (or `/device:GPU:0`) becomes that scope. Placeholders, dataset "
        "iterators and the global step are graph inputs and counters that stay on the host: they move "
        "into a `tf.device(\"cpu\")` scope in front of the IPU scope (Targeting the IPU from TensorFlow 1, "
        "\"A basic graph\"). Scopes for other "
        "GPUs (multi-GPU towers) are reported: they need sharding or replication instead."
    )
    examples = (
        Example(
            """\
            import tensorflow.compat.v1 as tf

            x = tf.placeholder(tf.float32, [16, 4])
            with tf.device("/gpu:0"):
                y = tf.layers.dense(x, 2)
            """,
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu

            x = tf.placeholder(tf.float32, [16, 4])
            with ipu.scopes.ipu_scope("/device:IPU:0"):
                y = tf.layers.dense(x, 2)
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf


            def build(batch_size):
                # the whole graph on the GPU
                with tf.device("/device:GPU:0"):
                    images = tf.placeholder(tf.float32, [batch_size, 784])
                    step = tf.train.get_or_create_global_step()
                    logits = tf.layers.dense(images, 10)
                return images, logits
            """,
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu


            def build(batch_size):
                # the whole graph on the GPU
                with tf.device("cpu"):
                    images = tf.placeholder(tf.float32, [batch_size, 784])
                    step = tf.train.get_or_create_global_step()
                with ipu.scopes.ipu_scope("/device:IPU:0"):
                    logits = tf.layers.dense(images, 10)
                return images, logits
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf

            for i in range(2):
                with tf.device("/gpu:%d" % i):
                    tower(i)
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf

            with tf.device("/gpu:1"):
                tower(1)
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu

            with tf.device("cpu"):
                x = tf.placeholder(tf.float32, [16, 4])
            with ipu.scopes.ipu_scope("/device:IPU:0"):
                y = tf.layers.dense(x, 2)
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        for scope in ctx.nodes(cst.With):
            devices = [device_of(ctx, item.item) for item in scope.items] if len(scope.items) > 1 else []
            if any(found is not None and found[0].startswith("gpu") for found in devices):
                ctx.report(self.code, scope, "a GPU device scope combined with other context managers: put "
                           "the graph in its own `with ipu.scopes.ipu_scope(\"/device:IPU:0\"):`", fixed=False)
        for scope, kind, device in device_scopes(ctx):
            call = scope.items[0].item
            if kind == "gpu":
                ctx.report(self.code, call, f"`{device}` is not the first GPU: the IPU port does not place "
                           "towers by hand; use `ipu.scopes.ipu_shard` or replication instead", fixed=False)
                continue
            if kind == "other" and call.args and "gpu" in cst.Module(body=[]).code_for_node(call.args[0].value).lower():
                ctx.report(self.code, call, "a GPU device chosen at run time: build the graph in "
                           "`ipu.scopes.ipu_scope(\"/device:IPU:0\")` (several GPUs: use sharding or "
                           "replication instead)", fixed=False)
            if kind != "gpu0":
                continue
            body = list(scope.body.body) if isinstance(scope.body, cst.IndentedBlock) else []
            hoisted, kinds = hoistable(ctx, body)
            new_call = cst.parse_expression(f'ipu.scopes.ipu_scope("{IPU_DEVICE}")')
            if hoisted and len(hoisted) == len(body):
                ctx.replace(call.args[0].value, cst.SimpleString('"cpu"'))
                ctx.report(self.code, call, f"this scope only creates {' and '.join(kinds)}: "
                           f"`{device}` becomes `cpu`", fixed=True)
                continue
            ctx.replace(call, new_call)
            ctx.add_import("tensorflow.python", "ipu", code=self.code)
            ctx.report(self.code, call, f"`tf.device(\"{device}\")` becomes "
                       f"`ipu.scopes.ipu_scope(\"{IPU_DEVICE}\")`", fixed=True)
            if hoisted and hoist_to_cpu(ctx, scope, hoisted):
                ctx.report(self.code, hoisted[0], f"{' and '.join(kinds)} created on the CPU, in front of "
                           "the IPU scope", fixed=True)


RULE = IpuScope()
