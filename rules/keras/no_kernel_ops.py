from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from porter.context import code_of, walk
from porter.cstutil import is_name
from porter.rule import ERROR, KERAS, WARN, WARNING, Example, Rule
from porter.rules._tf.ops import COMPLEX_MAKERS, IMAGE_DECODING, NO_KERNEL, OTHER_DECODING
from porter.rules.keras._analysis.functional import keras_inputs_of
from porter.rules.keras._analysis.steps import (host_output, is_jit_compiled, method_named, plain_functions,
                                               step_functions)
from porter.rules.keras._analysis.util import (COMPILED_METHODS, KERAS_LAYER_CLASSES, KERAS_MODEL_CLASSES,
                                               host_only, in_outside_compilation, is_run_call, mapped_node_ids,
                                               run_by_keras, subclasses_of)

_PREFIXES = ("tensorflow.compat.v1.", "tensorflow.compat.v2.", "tensorflow.")
_DECODING = {**IMAGE_DECODING, **OTHER_DECODING}
_UNSUPPORTED = "(Targeting the IPU from TensorFlow 2, \"Unsupported operations\")"
_ADVICE = ("compute it in the `tf.data` pipeline (`dataset.map`) or on the host before the model is given the "
           "data, or in `ipu.scopes.outside_compilation_scope()`")


# Layers of libraries whose `call` runs an op the IPU device has no kernel for, and the op:
# KerasNLP's FNet encoder mixes its tokens with the real part of `tf.signal.fft2d`.
_LIBRARY_LAYERS = {"keras_nlp.layers.FNetEncoder": "signal.fft2d"}


def _op_of(ctx, func: cst.BaseExpression) -> Optional[str]:
    """``signal.fft2d`` for any spelling of ``tf.signal.fft2d``: a TensorFlow function the IPU
    device has no kernel for, or one that makes or reads complex values."""
    qualified = ctx.qualified_name(func) or ""
    for prefix in _PREFIXES:
        if qualified.startswith(prefix):
            name = qualified[len(prefix):]
            return name if name in NO_KERNEL or name in _DECODING or name in COMPLEX_MAKERS else None
    return None


def _why(name: str) -> str:
    """Why the op ``name`` does not run on the IPU, in the reference's words."""
    if name in _DECODING:
        return f"`{_DECODING[name]}` decodes strings, and ops on strings are unsupported (e.g. `JpegDecode`)"
    return (f"`{COMPLEX_MAKERS[name]}` works on complex values, which only ops filtered out of the IPU device "
            "make or read (`Complex`, `ComplexAbs` for `tf.abs`, `Real`, `Imag`)")


def _reasons(names: List[str]) -> str:
    """Why the ops ``names`` do not run on the IPU: the filtered ones together, then the others."""
    filtered = list(dict.fromkeys(f"`{NO_KERNEL[name]}`" for name in names if name in NO_KERNEL))
    reasons = list(dict.fromkeys(_why(name) for name in names if name not in NO_KERNEL))
    if len(filtered) > 1:
        reasons.insert(0, f"{', '.join(filtered[:-1])} and {filtered[-1]} are filtered out of the IPU device "
                          "(no kernel)")
    elif filtered:
        reasons.insert(0, f"{filtered[0]} is filtered out of the IPU device (no kernel)")
    return "; ".join(reasons)


def _compiled_methods(ctx) -> List[Tuple[cst.FunctionDef, str]]:
    """The methods of Keras layer and model subclasses that a model runs (``call``, ``train_step``...,
    and the methods these call through ``self``), unless every instance of the class is made for the
    ``tf.data`` pipeline only (a preprocessing layer that ``dataset.map`` runs)."""
    found = []
    for name, owner in subclasses_of(ctx, *KERAS_MODEL_CLASSES, *KERAS_LAYER_CLASSES).items():
        if _host_class(ctx, name):
            continue
        found.extend((method, f"`{name}.{method.name.value}`") for method in owner.body.body
                     if isinstance(method, cst.FunctionDef) and run_by_keras(method, owner, tuple(COMPILED_METHODS)))
    return found


def _host_class(ctx, name: str) -> bool:
    """Every instance of the class ``name`` is made in, or assigned to a name only read in, what
    ``dataset.map`` runs."""
    mapped = mapped_node_ids(ctx)
    made = [call for call in ctx.nodes(cst.Call) if isinstance(call.func, cst.Name) and call.func.value == name]
    holders = set()
    for call in made:
        if id(call) in mapped:
            continue
        parent = ctx.parent(call)
        if not (isinstance(parent, cst.Assign) and isinstance(parent.targets[0].target, cst.Name)):
            return False
        holders.add(parent.targets[0].target.value)
    return bool(made) and host_only(ctx, holders) == holders


def _in_host_model(ctx, layer: cst.Call) -> bool:
    """A layer made in what ``dataset.map`` runs, or in the value of a name only that reads
    (``preprocess = Sequential([Lambda(spectrogram)])`` used in ``dataset.map``)."""
    if id(layer) in mapped_node_ids(ctx):
        return True
    assign = ctx.enclosing(layer, cst.Assign)
    target = assign.targets[0].target if assign is not None else None
    return isinstance(target, cst.Name) and bool(host_only(ctx, {target.value}))


def _device_roots(ctx) -> List[Tuple[cst.CSTNode, str]]:
    """The code a model or a training step runs on the IPU, and how to name it: compiled methods of
    Keras subclasses, `Lambda` layers' functions, custom training steps, functions handed to
    ``strategy.run`` or compiled with ``jit_compile=True``."""
    functions = plain_functions(ctx)
    roots: List[Tuple[cst.CSTNode, str]] = list(_compiled_methods(ctx))
    for call, _ in ctx.calls_to("keras.layers.Lambda"):
        if _in_host_model(ctx, call):
            continue
        given = call.args[0].value if call.args else None
        if isinstance(given, cst.Lambda):
            roots.append((given, "a `Lambda` layer"))
        elif isinstance(given, cst.Name) and given.value in functions:
            roots.append((functions[given.value], f"`{given.value}`, a `Lambda` layer's function"))
    for same_name in step_functions(ctx).values():
        roots.extend((function, f"the training step `{function.name.value}`") for function in same_name)
    for function in ctx.nodes(cst.FunctionDef):
        if is_jit_compiled(ctx, function):
            roots.append((function, f"`{function.name.value}`, compiled with `jit_compile=True`"))
    for call in ctx.nodes(cst.Call):
        step = _run_step(ctx, call)
        if step is not None:
            roots.append((step, f"`{code_of(ctx, call.args[0].value)}`, run by `{code_of(ctx, call.func)}`"))
    mapped = mapped_node_ids(ctx)
    # a jit-compiled function or a Lambda's function that `dataset.map` runs is host code
    return [(root, name) for root, name in roots if id(root) not in mapped]


def _run_step(ctx, call: cst.Call) -> Optional[cst.FunctionDef]:
    """The function of the file, or the method of the class around, that ``strategy.run(step, ...)``
    runs."""
    if not (is_run_call(call) and call.args):
        return None
    step = call.args[0].value
    if isinstance(step, cst.Name):
        return plain_functions(ctx).get(step.value)
    return _self_method(ctx, step)


def _self_method(ctx, func: cst.BaseExpression) -> Optional[cst.FunctionDef]:
    """The method ``self.name`` names, in the class around it."""
    owner = ctx.enclosing(func, cst.ClassDef) if isinstance(func, cst.Attribute) and is_name(
        func.value, "self") else None
    return method_named(owner, func.attr.value) if owner is not None else None


def _device_code(ctx) -> Dict[int, str]:
    """{id(node): where} for every node of the device code and of the functions of the file it
    calls, transitively (a helper that a layer's ``call`` uses runs in the model too)."""
    functions = plain_functions(ctx)
    where: Dict[int, str] = {}
    pending = _device_roots(ctx)
    while pending:
        root, name = pending.pop(0)
        if id(root) in where:
            continue
        for node in walk(root):
            where.setdefault(id(node), name)
            if not isinstance(node, cst.Call):
                continue
            callee = functions.get(node.func.value) if isinstance(node.func, cst.Name) else \
                _self_method(ctx, node.func)
            if callee is not None and id(callee) not in where:
                pending.append((callee, f"`{callee.name.value}`, which {name} calls"))
    return where


class NoKernelOps(Rule):
    code = "IPU166"
    name = "no-kernel-ops"
    kind = WARN
    severity = ERROR
    frameworks = frozenset({KERAS})
    summary = ("Report FFTs, complex numbers, image decoding, `tf.print` and summaries in Keras model code and "
               "training steps.")
    rationale = (
        "The IPU device has no kernel for `Angle, Complex, ComplexAbs, Conj, FFT, FFT2D, FFT3D, IFFT, IFFT2D, "
        "IFFT3D, Imag, NonMaxSuppressionV4, Real` (ops filtered out of the IPU device), nor for ops on strings "
        "such as decoding images (`JpegDecode`), and an unsupported op makes compilation fail "
        f"{_UNSUPPORTED}. `tf.signal.fft2d` in a layer's `call` (an FNet mixing layer), `tf.math.real` or "
        "`tf.complex` in a custom layer, `tf.io.decode_jpeg` in a layer, on a functional model's `Input`s, "
        "in a `Lambda` layer's function, in a custom training step (a `tf.GradientTape` function, a function "
        "run by `strategy.run` or compiled with `jit_compile=True`, `train_step`), or in a function of the "
        "file these call (or a method of the class, through `self`), or given to `Lambda` itself, is "
        "reported (an error: the model does not compile). `tf.signal.stft` and "
        "`tf.signal.rfft` make complex values, which only ops of that list read (`ComplexAbs` for `tf.abs`, "
        "`Real`), and are reported as warnings: RFFT itself is not in the list. Compute them in the `tf.data` "
        "pipeline (`dataset.map`) or on the host, or in `ipu.scopes.outside_compilation_scope()`. Functions "
        "that `dataset.map` runs, a layer class only the pipeline uses, NumPy code and code outside any model "
        "run on the host and are not reported. A library layer whose own `call` runs such an op (KerasNLP's "
        "`FNetEncoder`, an FFT of its tokens) is reported where the file makes it. `tf.print` and `tf.summary` "
        "writes in a method Keras compiles (`train_step`, a layer's `call`) print and write on the host, with "
        "strings: reported as warnings, with `ipu.internal_ops.print_tensor` to print a tensor on the IPU, the "
        "step's logs or `outside_compilation_scope()` as the ways out. Strings in models are IPU157's, Python calls IPU156's."
    )
    examples = (
        # `tf.print` and a summary in an overridden `train_step`, which Keras compiles for the IPU.
        Example(
            """\
            import tensorflow as tf


            class LoggedModel(tf.keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.compiled_loss(y, self(x, training=True))
                    tf.print("loss", loss)
                    tf.summary.scalar("loss", loss, step=self.optimizer.iterations)
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}
            """,
        ),
        # The same in the host's scope (out of compilation), or in a callback: not reported.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            class LoggedModel(tf.keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.compiled_loss(y, self(x, training=True))
                    with ipu.scopes.outside_compilation_scope():
                        tf.print("loss", loss)
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}


            class Printer(tf.keras.callbacks.Callback):
                def on_epoch_end(self, epoch, logs=None):
                    tf.print("epoch", epoch, logs["loss"])
            """,
            reported=False,
        ),
        # A library layer whose own `call` runs an FFT: reported where the model makes it.
        Example(
            """\
            import keras_nlp
            from tensorflow import keras

            tokens = keras.Input(shape=(64,), dtype="int32")
            x = keras.layers.Embedding(5000, 32)(tokens)
            x = keras_nlp.layers.FNetEncoder(intermediate_dim=64)(x)
            model = keras.Model(tokens, keras.layers.Dense(2)(keras.layers.GlobalAveragePooling1D()(x)))
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            class FourierMixing(tf.keras.layers.Layer):
                def call(self, x):
                    return tf.math.real(tf.signal.fft2d(tf.cast(x, tf.complex64)))
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def spectrogram(wave):
                return tf.abs(tf.signal.stft(wave, frame_length=255, frame_step=128))


            inputs = tf.keras.Input(shape=(16000,))
            x = tf.keras.layers.Lambda(spectrogram)(inputs)
            """,
        ),
        Example(
            """\
            from tensorflow import keras
            import tensorflow as tf

            images = keras.Input(shape=(32, 32))
            magnitude = tf.abs(tf.signal.fft2d(tf.cast(images, tf.complex64)))
            model = keras.Model(images, keras.layers.Dense(1)(keras.layers.Flatten()(magnitude)))
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def features(x):
                return tf.abs(tf.signal.rfft(x))


            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(features(x)) - y) ** 2)
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                              model.trainable_variables))
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            class Decode(tf.keras.layers.Layer):
                def call(self, data):
                    return tf.map_fn(lambda b: tf.io.decode_jpeg(b, channels=3), data, fn_output_signature=tf.uint8)
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def step(x, y):
                x = tf.math.real(tf.signal.ifft(tf.complex(x, 0.0)))
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                              model.trainable_variables))


            @tf.function
            def distributed_step(x, y):
                strategy.run(step, args=(x, y))
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            class Wav(tf.keras.layers.Layer):
                def call(self, data):
                    return tf.audio.decode_wav(data).audio
            """,
        ),
        # A step method of a plain trainer class that `strategy.run` runs, and ops given to `Lambda` themselves.
        Example(
            """\
            import tensorflow as tf


            class Trainer:
                def replica_step(self, x, y):
                    with tf.GradientTape() as tape:
                        loss = self.loss(y, self.model(tf.abs(tf.signal.rfft(x))))
                    return loss

                @tf.function
                def train_step(self, x, y):
                    return self.strategy.run(self.replica_step, args=(x, y))
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Lambda(tf.signal.fft), tf.keras.layers.Lambda(tf.math.real)])
            """,
        ),
        # Already placed on the host inside the compiled code.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            class FourierMixing(tf.keras.layers.Layer):
                def call(self, x):
                    with ipu.scopes.outside_compilation_scope():
                        mixed = tf.math.real(tf.signal.fft2d(tf.cast(x, tf.complex64)))
                    return mixed
            """,
            reported=False,
        ),
        # Host code: the tf.data pipeline, NumPy, code outside any model, a layer only the pipeline runs.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            class Spectrogram(tf.keras.layers.Layer):
                def call(self, wave):
                    return tf.abs(tf.signal.stft(wave, frame_length=255, frame_step=128))


            @tf.function(jit_compile=True)
            def to_spectrogram(wave, label):
                return tf.abs(tf.signal.stft(wave, frame_length=255, frame_step=128)), label


            spectrogram = Spectrogram()
            train_ds = train_ds.map(to_spectrogram)
            val_ds = val_ds.map(lambda wave, label: (spectrogram(wave), label))
            images = raw_ds.map(lambda path: tf.io.decode_png(tf.io.read_file(path)))
            print(np.fft.fft(signal), tf.signal.fft(tf.complex(signal, 0.0)))
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        self._report_host_output(ctx)
        calls = [(call, name) for call in ctx.nodes(cst.Call) for name in [_op_of(ctx, call.func)] if name]
        calls += self._lambda_ops(ctx)
        self._report_library_layers(ctx)
        if not calls:
            return
        device = _device_code(ctx)
        mapped = mapped_node_ids(ctx)
        by_statement: Dict[int, List[Tuple[cst.Call, str, str]]] = {}
        for call, name in calls:
            where = self._where(ctx, call, device, mapped)
            if where is not None:
                by_statement.setdefault(id(ctx.statement_of(call)), []).append((call, name, where))
        for found in by_statement.values():
            call, _, where = found[0]
            spelled = [f"`{code_of(ctx, op.func if isinstance(op, cst.Call) else op)}`" for op, _, _ in found]
            ops = spelled[0] if len(spelled) == 1 else f"{', '.join(spelled[:-1])} and {spelled[-1]}"
            reasons = _reasons([name for _, name, _ in found])
            certain = any(name not in COMPLEX_MAKERS for _, name, _ in found)
            ctx.report(self.code, call, f"{ops} in {where}, code the IPU compiles: {reasons}; an unsupported op "
                       f"makes compilation fail {_UNSUPPORTED}: {_ADVICE}", fixed=False,
                       severity=ERROR if certain else WARNING)

    def _report_host_output(self, ctx) -> None:
        """``tf.print`` and ``tf.summary.scalar`` in a method of a Keras class that Keras compiles
        (``train_step``, a layer's ``call``): the IPU program cannot print or write summaries, and
        nothing else reports them there (a custom loop's step is IPU111's)."""
        for method, name in _compiled_methods(ctx):
            for call in walk(method):
                what = host_output(ctx, call) if isinstance(call, cst.Call) else None
                if what is None or in_outside_compilation(ctx, call):
                    continue
                advice = ("print it with `ipu.internal_ops.print_tensor`" if what == "prints" else
                          "return the value in the step's logs, which callbacks such as `TensorBoard` write")
                ctx.report(self.code, call, f"`{code_of(ctx, call.func)}()` in {name}, code the IPU compiles, "
                           f"{what} on the host through ops on strings, which the IPU does not support "
                           f"{_UNSUPPORTED}: {advice}, or move it into `ipu.scopes.outside_compilation_scope()`",
                           fixed=False, severity=WARNING)

    def _report_library_layers(self, ctx) -> None:
        """Each library layer of the model whose own code runs an op with no IPU kernel (KerasNLP's
        `FNetEncoder`, an FFT): nothing in the file shows the op, but the model does not compile."""
        for library_layer, op in _LIBRARY_LAYERS.items():
            layers = [call for call, _ in ctx.calls_to(library_layer) if not _in_host_model(ctx, call)]
            if not layers:
                continue
            count = f" ({len(layers)} in this file)" if len(layers) > 1 else ""
            ctx.report(self.code, layers[0], f"`{code_of(ctx, layers[0].func)}` computes `tf.{op}` in its `call`, code "
                       f"the IPU compiles: {_reasons([op])}; an unsupported op makes compilation fail {_UNSUPPORTED}: "
                       f"use a layer that mixes its tokens without an FFT (attention, `TransformerEncoder`){count}",
                       fixed=False, severity=ERROR)

    @staticmethod
    def _lambda_ops(ctx) -> List[Tuple[cst.CSTNode, str]]:
        """Ops given as a `Lambda` layer's function themselves: ``Lambda(tf.signal.fft)``."""
        found = []
        for call, _ in ctx.calls_to("keras.layers.Lambda"):
            given = call.args[0].value if call.args and not call.args[0].keyword else None
            name = _op_of(ctx, given) if isinstance(given, (cst.Name, cst.Attribute)) else None
            if name is not None and not _in_host_model(ctx, call):
                found.append((given, name))
        return found

    @staticmethod
    def _where(ctx, call: cst.Call, device: Dict[int, str], mapped: Set[int]) -> Optional[str]:
        """Where ``call`` runs on the IPU (how to name the code), or None for host code."""
        if in_outside_compilation(ctx, call):
            return None
        if id(call) in device:
            return device[id(call)]
        if not isinstance(call, cst.Call):
            return "a `Lambda` layer"
        if id(call) not in mapped and any(keras_inputs_of(ctx, arg.value) for arg in call.args[:1]):
            function = ctx.enclosing_function(call)
            return f"`{function.name.value}`, on the model's `keras.Input` tensors" if function is not None \
                else "the model, on its `keras.Input` tensors"
        return None


RULE = NoKernelOps()
