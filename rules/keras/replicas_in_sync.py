import libcst as cst

from porter.rule import KERAS, WARN, Example, Rule
from porter.scopes import assignments, owner

_MESSAGE = ("`num_replicas_in_sync` is always 1 under `IPUStrategy`, even with replication: compute "
            "the global batch from the number of IPUs (replicas = IPUs / IPUs per model copy)")
_MATH = (cst.BinaryOperation, cst.AugAssign)


class ReplicasInSync(Rule):
    code = "IPU154"
    name = "replicas-in-sync"
    kind = WARN
    frameworks = frozenset({KERAS})
    summary = "Warn about batch arithmetic with `strategy.num_replicas_in_sync`."
    rationale = (
        "`IPUStrategy.num_replicas_in_sync` always returns 1, even when the graph is replicated over "
        "several IPUs, so a global batch size or learning-rate "
        "scale computed from it is wrong under replication. Printing it is harmless and not reported."
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
