from porter.rule import FIX, KERAS, Example, Rule
from porter.rules._tf.tfdata import fix_drop_remainder


class DropRemainder(Rule):
    code = "IPU105"
    name = "drop-remainder"
    kind = FIX
    frameworks = frozenset({KERAS})
    summary = "Batch tf.data pipelines with `drop_remainder=True`."
    rationale = (
        "The IPU compiles for fixed tensor shapes: every dataset element must have a fully defined "
        "shape, so a final partial batch is an error (`... not fully defined ... If using batch() make "
        "sure to set drop_remainder=True`: Targeting the IPU from TensorFlow 2, \"Keras with IPUs\"). "
        "`.batch(n)` and `.padded_batch(...)` "
        "get `drop_remainder=True`; an explicit `drop_remainder=False` is changed and reported, and a "
        "value the porter cannot read is reported for a person to check."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf

            ds = tf.data.Dataset.range(100).batch(32)
            """,
            """\
            import tensorflow as tf

            ds = tf.data.Dataset.range(100).batch(32, drop_remainder=True)
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def pipeline(x):
                ds = tf.data.Dataset.from_tensor_slices(x)
                ds = ds.shuffle(1000)
                return ds.batch(64, drop_remainder=False)
            """,
            """\
            import tensorflow as tf


            def pipeline(x):
                ds = tf.data.Dataset.from_tensor_slices(x)
                ds = ds.shuffle(1000)
                return ds.batch(64, drop_remainder=True)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            ds = tf.data.Dataset.range(100).batch(32, drop_remainder=True)
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow as tf

            batch = [1, 2]
            names = frame.batch(4)
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        fix_drop_remainder(ctx, self.code)


RULE = DropRemainder()
