import libcst as cst

from porter.rule import KERAS, WARN, Example, Rule
from porter.rules._tf.tfdata import is_dataset
from porter.rules.keras._analysis.steps import functions_called_from, plain_functions
from porter.rules.keras._analysis.util import HOST_FUNCTIONS, in_outside_compilation


class PyFunction(Rule):
    code = "IPU156"
    name = "py-function"
    kind = WARN
    frameworks = frozenset({KERAS})
    summary = "Warn about `tf.py_function` / `tf.numpy_function` outside the `tf.data` pipeline."
    rationale = (
        "Python callbacks cannot run inside a compiled IPU program: `tf.py_function` and "
        "`tf.numpy_function` in a model, a loss or a training step make compilation fail (Targeting the IPU "
        "from TensorFlow 2, \"Unsupported operations\"). Move them into the `tf.data` pipeline "
        "(`dataset.map`), where they run on "
        "the host, or into `ipu.scopes.outside_compilation_scope()`. Calls already in a dataset `map` "
        "function (or in a function of the file that it calls) or an outside-compilation scope are not "
        "reported."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf


            class Augment(tf.keras.layers.Layer):
                def call(self, x):
                    return tf.py_function(random_crop, [x], tf.float32)
            """,
        ),
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            def metric(y_true, y_pred):
                return tf.numpy_function(np_f1, [y_true, y_pred], tf.float32)


            model.compile("adam", "mse", metrics=[metric])
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def decode(path, label):
                image = tf.py_function(read_image, [path], tf.float32)
                return image, label


            ds = tf.data.Dataset.from_tensor_slices((paths, labels)).map(decode)
            ds = ds.map(lambda x, y: (tf.numpy_function(jitter, [x], tf.float32), y))
            """,
            reported=False,
        ),
        Example(
            """\
            import numpy as np
            import tensorflow as tf
            from scipy import ndimage


            def tilt(volume):
                def host_tilt(volume):
                    return ndimage.rotate(volume, np.random.choice([-10, 10]), reshape=False).astype("float32")

                return tf.numpy_function(host_tilt, [volume], tf.float32)


            def augment(volume, label):
                return tf.expand_dims(tilt(volume), axis=3), label


            train = tf.data.Dataset.from_tensor_slices((volumes, labels)).map(augment).batch(2)
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def body(x):
                with ipu.scopes.outside_compilation_scope():
                    y = tf.py_function(host_side, [x], tf.float32)
                return y
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        calls = list(ctx.calls_to(*HOST_FUNCTIONS))
        if not calls:
            return
        mapped = self._mapped_functions(ctx)
        for call, name in calls:
            if self._on_host(ctx, call, mapped):
                continue
            short = name.rsplit(".", 1)[-1]
            ctx.report(self.code, call, f"`{short}` cannot run in a compiled IPU program: move it into the "
                       "`tf.data` pipeline (`dataset.map`) or `ipu.scopes.outside_compilation_scope()`",
                       fixed=False)

    @staticmethod
    def _mapped_functions(ctx):
        """Functions and lambdas passed to ``<dataset>.map(...)``, and the functions of the file they
        call (a `rotate` helper that an `augment` map function calls runs in the pipeline too)."""
        names, lambdas, roots = set(), set(), []
        for call in ctx.nodes(cst.Call):
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == "map" and call.args):
                continue
            if not is_dataset(ctx, func.value):
                continue
            fn = call.args[0].value
            if isinstance(fn, cst.Name):
                names.add(fn.value)
                function = plain_functions(ctx).get(fn.value)
                if function is not None:
                    roots.append(function)
            elif isinstance(fn, cst.Lambda):
                lambdas.add(id(fn))
                roots.append(fn)
        names.update(function.name.value for function in functions_called_from(ctx, roots))
        return names, lambdas

    @staticmethod
    def _on_host(ctx, call, mapped) -> bool:
        names, lambdas = mapped
        if in_outside_compilation(ctx, call):
            return True
        for ancestor in ctx.ancestors(call):
            if isinstance(ancestor, cst.Lambda) and id(ancestor) in lambdas:
                return True
            if isinstance(ancestor, cst.FunctionDef) and ancestor.name.value in names:
                return True
        return False


RULE = PyFunction()
