from porter.cstutil import string_value, with_args
from porter.rule import FIX, KERAS, TF1, Example, Rule
from porter.rules.tf1._analysis.graph import find_calls

INFEED = "tensorflow.python.ipu.ipu_infeed_queue.IPUInfeedQueue"
OUTFEED = "tensorflow.python.ipu.ipu_outfeed_queue.IPUOutfeedQueue"
_REMOVED = ("feed_name", "replication_factor", "data_to_prefetch", "io_batch_size")
# Where the old signatures took the feed name by position.
_FEED_NAME_POSITION = {INFEED: 1, OUTFEED: 0}


class LegacyFeeds(Rule):
    code = "IPU014"
    name = "legacy-feeds"
    kind = FIX
    frameworks = frozenset({KERAS, TF1})
    summary = "Drop the infeed/outfeed arguments SDK 2.4 removed (`feed_name`, `replication_factor`, ...)."
    rationale = (
        "SDK 2.0/2.1 queues took a feed name: `IPUInfeedQueue(dataset, feed_name, device_ordinal=0, "
        "replication_factor=1, data_to_prefetch=1, ...)`. `feed_name`, `replication_factor`, "
        "`data_to_prefetch` and `io_batch_size` were removed in SDK 2.4 (Targeting the IPU from TensorFlow 2, "
        "API changes, \"Release 2.4\"); the replication factor now follows the configured IPUs. These "
        "arguments are dropped, including a feed name "
        "given by position as a string."
    )
    examples = (
        Example(
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu

            infeed = ipu.ipu_infeed_queue.IPUInfeedQueue(dataset, "infeed", replication_factor=2)
            outfeed = ipu.ipu_outfeed_queue.IPUOutfeedQueue(feed_name="outfeed")
            """,
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu

            infeed = ipu.ipu_infeed_queue.IPUInfeedQueue(dataset)
            outfeed = ipu.ipu_outfeed_queue.IPUOutfeedQueue()
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu

            infeed = ipu.ipu_infeed_queue.IPUInfeedQueue(dataset, prefetch_depth=4)
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        for call in find_calls(ctx, INFEED, OUTFEED):
            name = ctx.qualified_name(call.func)
            position = _FEED_NAME_POSITION[name]
            positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
            dropped = [arg for arg in call.args if arg.keyword is not None and arg.keyword.value in _REMOVED]
            if len(positional) > position and string_value(positional[position].value) is not None:
                dropped.append(positional[position])
            if not dropped:
                continue
            keep = [index for index, arg in enumerate(call.args) if arg not in dropped]
            ctx.replace(call, lambda node, keep=keep: with_args(node, [node.args[index] for index in keep]))
            names = ", ".join(f"`{arg.keyword.value if arg.keyword else 'feed_name'}`" for arg in dropped)
            ctx.report(self.code, call, f"{names} removed from `{name.rsplit('.', 1)[1]}` (gone since SDK 2.4)",
                       fixed=True)


RULE = LegacyFeeds()
