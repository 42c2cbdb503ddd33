import libcst as cst

from porter.cstutil import append_args, argument, is_false, is_true, keyword_arg, replace_arg
from porter.rule import FIX, KERAS, Example, Rule
from porter.tfdata import dataset_method_calls

# Where drop_remainder sits when passed by position.
_POSITION = {"batch": 1, "padded_batch": 3}


class DropRemainder(Rule):
    code = "IPU105"
    name = "drop-remainder"
    kind = FIX
    frameworks = frozenset({KERAS})
    summary = "Batch tf.data pipelines with `drop_remainder=True`."
    rationale = (
        "The IPU compiles for fixed tensor shapes: every dataset element must have a fully defined "
        "shape, so a final partial batch is an error (`... not fully defined ... If using batch() make "
        "sure to set drop_remainder=True`, reference 1.4 and 1.8). `.batch(n)` and `.padded_batch(...)` "
        "get `drop_remainder=True`; an explicit `drop_remainder=False` is changed and reported, and a "
        "value the porter cannot read is reported for a person to check."
    )
    examples = (
        Example(
            "import tensorflow as tf\n\nds = tf.data.Dataset.range(100).batch(32)\n",
            "import tensorflow as tf\n\nds = tf.data.Dataset.range(100).batch(32, drop_remainder=True)\n",
        ),
        Example(
            "import tensorflow as tf\n\n\ndef pipeline(x):\n    ds = tf.data.Dataset.from_tensor_slices(x)\n"
            "    ds = ds.shuffle(1000)\n    return ds.batch(64, drop_remainder=False)\n",
            "import tensorflow as tf\n\n\ndef pipeline(x):\n    ds = tf.data.Dataset.from_tensor_slices(x)\n"
            "    ds = ds.shuffle(1000)\n    return ds.batch(64, drop_remainder=True)\n",
        ),
        Example(
            "import tensorflow as tf\n\nds = tf.data.Dataset.range(100).batch(32, drop_remainder=True)\n",
            reported=False,
        ),
        Example(
            "import tensorflow as tf\n\nbatch = [1, 2]\nnames = frame.batch(4)\n",
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        for call, method in dataset_method_calls(ctx, "batch", "padded_batch"):
            current = argument(call, "drop_remainder", _POSITION[method])
            if current is None:
                ctx.replace(call, lambda node: append_args(node, keyword_arg("drop_remainder", cst.Name("True"))))
                ctx.report(self.code, call.func.attr, f"`.{method}()` gets `drop_remainder=True`", fixed=True)
            elif is_false(current.value):
                new = current.with_changes(value=cst.Name("True"))
                ctx.replace(call, lambda node, at=call.args.index(current), new=new: replace_arg(node, at, new))
                ctx.report(self.code, current, f"`.{method}()`: `drop_remainder=False` becomes `True`: "
                           "the last partial batch is now dropped", fixed=True)
            elif not is_true(current.value):
                ctx.report(self.code, current, f"`.{method}()`: `drop_remainder` must be True on the IPU; "
                           "make sure this value is True", fixed=False)


RULE = DropRemainder()
