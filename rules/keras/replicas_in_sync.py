import libcst as cst

from porter.rule import KERAS, WARN, Example, Rule
from porter.scopes import assignments, owner

# Under replication each replica reads whole batches of its own, so the per-replica batch a product
# with 1 gives is what the dataset must hold; what stands for the global batch is not.
_MESSAGE = ("`num_replicas_in_sync` is always 1 under `IPUStrategy`, even with replication, where each replica "
            "reads whole batches of its own: a batch size made from it is the batch of one replica, right for the "
            "dataset, but a learning rate or a loss averaged over the global batch (`global_batch_size=`) needs the "
            "number of replicas instead (IPUs / IPUs per model copy)")
_MATH = (cst.BinaryOperation, cst.AugAssign)


class ReplicasInSync(Rule):
    code = "IPU154"
    name = "replicas-in-sync"
    kind = WARN
    frameworks = frozenset({KERAS})
    summary = "Warn about batch arithmetic with `strategy.num_replicas_in_sync`."
    rationale = (
        "`IPUStrategy.num_replicas_in_sync` always returns 1, even when the graph is replicated over "
        "several IPUs, and each replica reads whole batches of the dataset (Targeting the IPU from TensorFlow "
        "2, \"Keras with IPUs\"; Graphcore's Keras tutorial, \"Replication\"): the effective batch is the "
        "dataset's batch times the replicas. A batch size computed from it is the batch of one replica, "
        "which the dataset needs; a global batch size or learning-rate scale computed from it is wrong under "
        "replication. Printing it is harmless and not reported."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf

            strategy = tf.distribute.MirroredStrategy()
            global_batch = 64 * strategy.num_replicas_in_sync
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def main(args):
                replicas = strategy.num_replicas_in_sync
                batch_size = args.batch_size * replicas
                lr = 0.1 * replicas
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            batch = 32
            batch *= strategy.num_replicas_in_sync
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            print("replicas:", strategy.num_replicas_in_sync)
            n = strategy.num_replicas_in_sync
            logging.info("running on %d replicas", n)
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        for attribute in ctx.nodes(cst.Attribute):
            if attribute.attr.value != "num_replicas_in_sync":
                continue
            if self._in_math(ctx, attribute):
                ctx.report(self.code, attribute, _MESSAGE, fixed=False)
                continue
            parent = ctx.parent(attribute)
            if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
                name = parent.targets[0].target.value
                if self._name_in_math(ctx, owner(ctx, attribute), name):
                    ctx.report(self.code, attribute, _MESSAGE, fixed=False)

    @staticmethod
    def _in_math(ctx, node) -> bool:
        parent = ctx.parent(node)
        return isinstance(parent, _MATH)

    def _name_in_math(self, ctx, scope, name) -> bool:
        if sum(1 for _, bound, _ in assignments(ctx, scope) if bound == name) != 1:
            return False
        return any(node.value == name and owner(ctx, node) is scope and self._in_math(ctx, node)
                   for node in ctx.nodes(cst.Name))


RULE = ReplicasInSync()
