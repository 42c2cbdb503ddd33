"""IPU162: ops whose output shape depends on tensor values, in a step compiled for the IPU."""

from typing import Iterator, List, Optional, Set, Tuple, Union

import libcst as cst

from porter.context import canonical_keras, code_of, walk
from porter.cstutil import argument, is_name, is_true
from porter.rule import KERAS, WARN, Example, Rule
from porter.rules.keras._analysis.custom_loop import loop_plans
from porter.rules.keras._analysis.steps import (functions_called_from, functions_run_by, is_jit_compiled, plain_functions,
                                                step_functions)
from porter.rules.keras._analysis.util import (COMPILED_METHODS, HOST_FUNCTIONS, KERAS_LAYER_CLASSES, KERAS_MODEL_CLASSES,
                                               host_only, self_attribute_values, subclass_definitions)

# Ops that give as many values as the data selects: the size of their output is known only at run time.
_SELECTING_OPS = {
    "tensorflow.boolean_mask": "keeps the values the mask selects",
    "tensorflow.ragged.boolean_mask": "keeps the values the mask selects",
    "tensorflow.unique": "gives one value per distinct value",
    "tensorflow.unique_with_counts": "gives one value per distinct value",
    "tensorflow.dynamic_partition": "splits the values by the partition each is given",
    "tensorflow.image.non_max_suppression": "keeps the boxes that overlap less than the threshold",
    "tensorflow.image.non_max_suppression_with_scores": "keeps the boxes that overlap less than the threshold",
    "tensorflow.image.non_max_suppression_overlaps": "keeps the boxes that overlap less than the threshold",
    "tensorflow.experimental.numpy.nonzero": "gives the indices of the nonzero values",
    "tensorflow.sparse.from_dense": "keeps the nonzero values (a sparse tensor of as many values as the data holds)",
}
# Suppression that gives `max_output_size` boxes, padded, only when asked to (`pad_to_max_output_size=True`).
_PADDED_NMS = "tensorflow.image.non_max_suppression_padded"
# Segment ops of sorted ids give one value per id up to the largest: a size read from the data.
_SORTED_SEGMENT_OPS = frozenset(f"tensorflow.math.segment_{kind}" for kind in ("sum", "mean", "max", "min", "prod"))
# Unsorted ones give `num_segments` values: data-dependent only when that count is read from the data.
_UNSORTED_SEGMENT_OPS = frozenset(f"tensorflow.math.unsorted_segment_{kind}"
                                  for kind in ("sum", "mean", "max", "min", "prod", "sqrt_n"))
_BINCOUNTS = frozenset({"tensorflow.math.bincount", "tensorflow.bincount"})
# A confusion matrix without `num_classes` is as wide as the largest label or prediction, plus one.
_CONFUSION_MATRICES = frozenset({"tensorflow.math.confusion_matrix", "tensorflow.compat.v1.confusion_matrix",
                                 "tensorflow.compat.v1.math.confusion_matrix"})
# Ops whose result, used as a count, is read from tensor values.
_VALUE_COUNTS = frozenset({"tensorflow.reduce_max", "tensorflow.math.reduce_max", "tensorflow.reduce_sum",
                           "tensorflow.math.reduce_sum", "tensorflow.math.count_nonzero", *_BINCOUNTS})
# `tf.where(condition)` alone gives the indices of the true values; with `x` and `y` it selects per element.
_WHERE = ("tensorflow.where", "tensorflow.compat.v1.where", "tensorflow.where_v2")
# TensorFlow functions that read what is known when the step is compiled, not tensor values.
_STATIC_QUERIES = ("tensorflow.is_tensor", "tensorflow.executing_eagerly", "tensorflow.shape", "tensorflow.rank",
                   "tensorflow.size", "tensorflow.config.", "tensorflow.distribute.", "tensorflow.test.")
_NOT_DEFINED = "the IPU compiles the step for static shapes (\"not fully defined\")"
# CTC losses that take the labels as a sparse tensor, whose number of values is the labels' total length:
# Keras' `ctc_batch_cost` makes it from dense labels with `tf.boolean_mask`.
_SPARSE_CTC_LOSSES = {
    "keras.backend.ctc_batch_cost": "turns the labels into a sparse tensor with `tf.boolean_mask`",
    "keras.backend.ctc_label_dense_to_sparse": "turns the labels into a sparse tensor with `tf.boolean_mask`",
    "tensorflow.compat.v1.nn.ctc_loss": "takes the labels as a sparse tensor",
}
# CTC decoders: the decoded sequences are as long as the longest one decoded, a length read from the data.
_CTC_DECODERS = frozenset({"keras.backend.ctc_decode", "tensorflow.nn.ctc_greedy_decoder",
                           "tensorflow.nn.ctc_beam_search_decoder", "tensorflow.compat.v1.nn.ctc_greedy_decoder",
                           "tensorflow.compat.v1.nn.ctc_beam_search_decoder"})


class DataDependentShape(Rule):
    code = "IPU162"
    name = "data-dependent-shape"
    kind = WARN
    frameworks = frozenset({KERAS})
    summary = ("Warn about ops whose output shape depends on tensor values in a custom step compiled for the IPU "
               "or in the code of a model (a layer's `call`, a `Lambda` layer, a loss or metric it is compiled with).")
    rationale = (
        "A custom training step runs on the IPU compiled (`tf.function(jit_compile=True)`, through "
        "`strategy.run`), and the compiled program has one static shape for every tensor (Targeting the IPU "
        "from TensorFlow 2: shapes must be fully defined; the graph is static). Ops that give as many values "
        "as the data selects (`tf.boolean_mask`, `tf.where` of a condition alone, `tf.unique`, "
        "`tf.dynamic_partition`, `tf.image.non_max_suppression`, `tf.image.non_max_suppression_padded` without "
        "`pad_to_max_output_size=True`, `tf.sparse.from_dense`, and in graph layers "
        "the segment ops of sorted ids, `tf.math.bincount` without a fixed length, `tf.math.confusion_matrix` "
        "without `num_classes`, `tf.math.unsorted_segment_*` "
        "and `tf.repeat` given counts read from the data, such as `num_segments=tf.reduce_max(ids) + 1`) cannot "
        "be compiled so, and Python control flow on a tensor value becomes a compiled conditional or loop whose "
        "branches must give one shape (a loop whose trip count depends on values is run up to a fixed maximum "
        "of iterations). The port compiles the step all the same: these are reported where they are, for a "
        "person to rewrite with fixed shapes "
        "(a mask multiplied in, `tf.where(condition, x, y)`, padded outputs). The same holds for the code Keras "
        "compiles into a model that `fit`, `evaluate` or `predict` run on the IPU: the `call` (or `train_step`) of a "
        "layer or model subclass, with the methods it calls on `self` (a `_compute_loss`), and the function of a "
        "`Lambda` layer (with the functions they hand to `tf.map_fn`), e.g. "
        "`tf.image.non_max_suppression` in a detection head; there only the ops are reported (layers branch on "
        "Python arguments such as `training`), and not in a layer that only `dataset.map` runs, on the host, "
        "or in a function handed to `tf.py_function`. Suppressing boxes on what `predict` returns, on the host, "
        "is not reported. Keras compiles the losses and metrics given to `compile` into the same steps (loss and "
        "metric functions of the file, and the `call`, `update_state` and `result` of `Loss` and `Metric` "
        "subclasses): a masked loss that selects the valid values with `tf.boolean_mask` is reported there, to "
        "be weighted by the mask instead. CTC losses that take the labels as a sparse tensor (Keras' "
        "`ctc_batch_cost`, which makes it with `tf.boolean_mask`, also held by a layer as `self.loss_fn`; "
        "`tf.compat.v1.nn.ctc_loss`) and CTC decoders (`ctc_decode`, `tf.nn.ctc_greedy_decoder`, "
        "`tf.nn.ctc_beam_search_decoder`, whose output is as long as the longest sequence decoded) are reported "
        "there too, naming the IPU's own CTC layers of IPU TensorFlow Addons (`CTCLoss`, `CTCInferenceLayer`, "
        "`CTCPredictionsLayer`), which take arguments of their own and are not swapped in; decoding what "
        "`predict` returns, on the host, is not reported."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            optimizer = tf.keras.optimizers.Adam()


            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    losses = loss_fn(y, model(x, training=True))
                    hard = tf.boolean_mask(losses, losses > tf.reduce_mean(losses))
                    loss = tf.reduce_mean(hard)
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


            for x, y in train_ds:
                train_step(x, y)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("tagger.keras")
            optimizer = tf.keras.optimizers.SGD(0.01)


            def masked_loss(y, logits):
                kept = tf.where(y >= 0)
                return loss_fn(tf.gather_nd(y, kept), tf.gather_nd(logits, kept))


            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = masked_loss(y, model(x, training=True))
                    if tf.reduce_max(loss) > 2.0:
                        loss = loss * 0.5
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


            for x, y in train_ds:
                train_step(x, y)
            """,
        ),
        # Fixed shapes: the mask is multiplied in, and `tf.where` selects per element.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            optimizer = tf.keras.optimizers.Adam()


            @tf.function
            def train_step(x, y, training):
                with tf.GradientTape() as tape:
                    losses = loss_fn(y, model(x, training=training))
                    weights = tf.cast(losses > tf.reduce_mean(losses), tf.float32)
                    losses = tf.where(tf.math.is_nan(losses), tf.zeros_like(losses), losses)
                    if training:
                        losses = losses * weights
                    loss = tf.reduce_sum(losses) / tf.reduce_sum(weights)
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


            for x, y in train_ds:
                train_step(x, y, True)
            """,
            reported=False,
        ),
        # Non-maximum suppression in a layer of the model that `predict` runs on the IPU.
        Example(
            """\
            import tensorflow as tf


            class KeepBest(tf.keras.layers.Layer):
                def call(self, inputs):
                    boxes, scores = inputs

                    def per_image(pair):
                        kept = tf.image.non_max_suppression(pair[0], pair[1], max_output_size=10)
                        return tf.gather(pair[0], kept)

                    return tf.map_fn(per_image, (boxes, scores), fn_output_signature=tf.float32)


            detector = tf.keras.Model(image, KeepBest()([boxes, scores]))
            found = detector.predict(images)
            """,
        ),
        # Padded suppression keeps a fixed number of boxes only with `pad_to_max_output_size=True`.
        Example(
            """\
            import tensorflow as tf


            class TopBoxes(tf.keras.layers.Layer):
                def call(self, boxes, scores):
                    kept, count = tf.image.non_max_suppression_padded(boxes, scores, 20, iou_threshold=0.5)
                    return tf.gather(boxes, kept)


            detector = tf.keras.Model([boxes, scores], TopBoxes()(boxes, scores))
            found = detector.predict([all_boxes, all_scores])
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            class TopBoxes(tf.keras.layers.Layer):
                def call(self, boxes, scores):
                    kept, count = tf.image.non_max_suppression_padded(boxes, scores, 20, pad_to_max_output_size=True)
                    return tf.gather(boxes, kept, batch_dims=1), count


            detector = tf.keras.Model([boxes, scores], TopBoxes()(boxes, scores))
            found = detector.predict([all_boxes, all_scores])
            """,
            reported=False,
        ),
        # The same in the function of a `Lambda` layer, through a helper `tf.map_fn` runs per image.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras import layers


            def strongest(pair):
                kept = tf.image.non_max_suppression_with_scores(pair[0], pair[1], 5)[0]
                return tf.reduce_sum(tf.gather(pair[1], kept))


            total = layers.Lambda(lambda t: tf.map_fn(strongest, t, fn_output_signature=tf.float32))([boxes, scores])
            model = tf.keras.Model([boxes, scores], total)
            """,
        ),
        # A masked loss and a metric that select values: Keras compiles them into the model's steps.
        Example(
            """\
            import tensorflow as tf


            def masked_mae(y_true, y_pred):
                valid = y_true >= 0
                return tf.reduce_mean(tf.abs(tf.boolean_mask(y_true - y_pred, valid)))


            class HitCount(tf.keras.metrics.Metric):
                def __init__(self):
                    super().__init__(name="hits")
                    self.hits = self.add_weight("hits", initializer="zeros")

                def update_state(self, y_true, y_pred, sample_weight=None):
                    self.hits.assign_add(tf.cast(tf.shape(tf.where(y_pred > 0.5))[0], tf.float32))

                def result(self):
                    return self.hits


            model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
            model.compile(optimizer="adam", loss={"depth": masked_mae}, metrics=[HitCount()])
            """,
        ),
        # A triplet loss a model's own steps compute in a method of theirs (`self._compute_loss(data)`):
        # traced into the same compiled steps.
        Example(
            """\
            import tensorflow as tf
            from tensorflow import keras


            class SiameseModel(keras.Model):
                def __init__(self, network, margin=0.5):
                    super().__init__()
                    self.network = network
                    self.margin = margin

                def call(self, inputs):
                    return self.network(inputs)

                def train_step(self, data):
                    with tf.GradientTape() as tape:
                        loss = self._compute_loss(data)
                    grads = tape.gradient(loss, self.network.trainable_weights)
                    self.optimizer.apply_gradients(zip(grads, self.network.trainable_weights))
                    return {"loss": loss}

                def _compute_loss(self, data):
                    ap_distance, an_distance = self.network(data)
                    gaps = ap_distance - an_distance + self.margin
                    return tf.reduce_mean(tf.boolean_mask(gaps, gaps > 0))


            model = SiameseModel(network)
            model.compile(optimizer="adam")
            model.fit(triplets, epochs=1)
            """,
        ),
        # A CTC loss layer held as an attribute (`self.loss_fn = keras.backend.ctc_batch_cost`): Keras turns
        # the labels into a sparse tensor with `tf.boolean_mask` in the model's steps.
        Example(
            """\
            import tensorflow as tf
            from tensorflow import keras


            class CTCLayer(keras.layers.Layer):
                def __init__(self, name=None):
                    super().__init__(name=name)
                    self.loss_fn = keras.backend.ctc_batch_cost

                def call(self, y_true, y_pred):
                    batch = tf.shape(y_true)[0]
                    input_length = tf.fill((batch, 1), tf.shape(y_pred)[1])
                    label_length = tf.fill((batch, 1), tf.shape(y_true)[1])
                    self.add_loss(self.loss_fn(y_true, y_pred, input_length, label_length))
                    return y_pred


            output = CTCLayer(name="ctc_loss")(labels, probabilities)
            model = keras.Model([image, labels], output)
            model.compile(optimizer="adam")
            """,
        ),
        # A custom step with a CTC loss given labels made sparse from dense ones.
        Example(
            """\
            import tensorflow as tf

            reader = tf.keras.Sequential([tf.keras.layers.Dense(11)])
            optimizer = tf.keras.optimizers.Adam()


            @tf.function
            def train_step(strips, labels):
                with tf.GradientTape() as tape:
                    logits = reader(strips, training=True)
                    lengths = tf.fill(tf.shape(logits)[:1], tf.shape(logits)[1])
                    loss = tf.reduce_mean(tf.nn.ctc_loss(tf.sparse.from_dense(labels), logits, None, lengths,
                                                         logits_time_major=False))
                grads = tape.gradient(loss, reader.trainable_variables)
                optimizer.apply_gradients(zip(grads, reader.trainable_variables))


            for strips, labels in train_ds:
                train_step(strips, labels)
            """,
        ),
        # A CTC decoder in a layer of the model: the decoded length is read from the data.
        Example(
            """\
            import tensorflow as tf
            from tensorflow import keras


            class GreedyDecode(keras.layers.Layer):
                def call(self, probabilities):
                    lengths = tf.fill(tf.shape(probabilities)[:1], tf.shape(probabilities)[1])
                    return keras.backend.ctc_decode(probabilities, lengths, greedy=True)[0][0]


            reader = keras.Model(image, GreedyDecode()(probabilities))
            texts = reader.predict(images)
            """,
        ),
        # Decoding on the host what `predict` returns is no problem.
        Example(
            """\
            import numpy as np
            from tensorflow import keras


            def decode_batch(probabilities):
                lengths = np.ones(probabilities.shape[0]) * probabilities.shape[1]
                return keras.backend.ctc_decode(probabilities, input_length=lengths, greedy=True)[0][0]


            reader = keras.Model(image, probabilities)
            texts = decode_batch(reader.predict(images))
            """,
            reported=False,
        ),
        # Weighted by the mask, the shapes stay fixed.
        Example(
            """\
            import tensorflow as tf


            def masked_mae(y_true, y_pred):
                valid = tf.cast(y_true >= 0, y_pred.dtype)
                return tf.reduce_sum(tf.abs(y_true - y_pred) * valid) / tf.maximum(tf.reduce_sum(valid), 1.0)


            model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
            model.compile("adam", masked_mae)
            """,
            reported=False,
        ),
        # Graph attention normalized per node with counts read from the edges: sizes known only at run time.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras import layers


            class EdgeSoftmax(layers.Layer):
                def call(self, inputs):
                    scores, edges = inputs
                    totals = tf.math.unsorted_segment_sum(scores, edges[:, 0], num_segments=tf.reduce_max(edges[:, 0]) + 1)
                    totals = tf.repeat(totals, tf.math.bincount(edges[:, 0]))
                    pooled = tf.math.segment_mean(scores, edges[:, 0])
                    return scores / totals, pooled


            model = tf.keras.Model([scores, edges], EdgeSoftmax()([scores, edges]))
            """,
        ),
        # Counts from shapes, static when compiled: one value per node, gathered back per edge.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras import layers


            class MessagePassing(layers.Layer):
                def call(self, inputs):
                    nodes, edges = inputs
                    messages = tf.gather(nodes, edges[:, 1])
                    summed = tf.math.unsorted_segment_sum(messages, edges[:, 0], num_segments=tf.shape(nodes)[0])
                    averaged = tf.math.unsorted_segment_mean(messages, edges[:, 0], nodes.shape[0])
                    degrees = tf.math.bincount(edges[:, 0], minlength=nodes.shape[0], maxlength=nodes.shape[0])
                    return summed + averaged + tf.gather(tf.repeat(summed, 2, axis=1), edges[:, 0]), degrees


            model = tf.keras.Model([nodes, edges], MessagePassing()([nodes, edges]))
            """,
            reported=False,
        ),
        # A confusion-matrix metric without `num_classes`, compiled into the model's steps.
        Example(
            """\
            import tensorflow as tf


            class ConfusionMetric(tf.keras.metrics.Metric):
                def __init__(self, classes):
                    super().__init__(name="confusion")
                    self.total = self.add_weight("total", shape=(classes, classes), initializer="zeros")

                def update_state(self, y_true, y_pred, sample_weight=None):
                    matrix = tf.math.confusion_matrix(y_true, tf.argmax(y_pred, axis=-1), dtype=tf.float32)
                    self.total.assign_add(matrix)

                def result(self):
                    return tf.linalg.trace(self.total) / tf.reduce_sum(self.total)


            model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
            model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=[ConfusionMetric(3)])
            model.fit(x, y, epochs=1)
            """,
        ),
        # With `num_classes` in a compiled step, and without it on the host after `predict`.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            optimizer = tf.keras.optimizers.Adam()


            @tf.function(jit_compile=True)
            def eval_step(x, y):
                logits = model(x, training=False)
                return tf.math.confusion_matrix(y, tf.argmax(logits, axis=-1), num_classes=4)


            for x, y in dataset:
                matrix = eval_step(x, y)
            predicted = model.predict(images).argmax(axis=-1)
            print(tf.math.confusion_matrix(labels, predicted))
            """,
            reported=False,
        ),
        # On the host: after `predict`, in a layer only `dataset.map` runs, in a `tf.py_function` callback.
        Example(
            """\
            import tensorflow as tf


            class DropEmpty(tf.keras.layers.Layer):
                def call(self, x):
                    return tf.boolean_mask(x, tf.reduce_any(x > 0, axis=-1))


            class HostBoxes(tf.keras.layers.Layer):
                def call(self, boxes, scores):
                    def suppress(b, s):
                        return tf.image.non_max_suppression(b, s, 10).numpy()

                    return tf.py_function(suppress, [boxes, scores], tf.int32)


            drop_empty = DropEmpty()
            ds = ds.map(lambda x, y: (drop_empty(x), y))
            model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            model.fit(ds, epochs=1)
            predicted = model.predict(images)
            for boxes, scores in zip(predicted, predicted):
                keep = tf.image.non_max_suppression(boxes, scores, max_output_size=5)
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        done = set()
        for step in _compiled_steps(ctx):
            for function in functions_run_by(ctx, step):
                if id(function) in done:
                    continue
                done.add(id(function))
                self._report_function(ctx, function, step.name.value)
        for code, where, advice in _model_code(ctx):
            self._report_model_code(ctx, code, where, advice, done)

    def _report_function(self, ctx, function: cst.FunctionDef, step: str) -> None:
        for node in walk(function.body, skip=(cst.FunctionDef, cst.ClassDef)):
            if isinstance(node, cst.Call):
                what = _selects(ctx, node)
                ctc = _ctc_problem(ctx, node, "step")
                if ctc is not None:
                    ctx.report(self.code, node.func, f"{ctc}: in `{step}`, {_ctc_advice(ctx, node)}", fixed=False)
                elif what is not None:
                    advice = _own_advice(ctx, node) or ("keep the shapes fixed (multiply by a mask, "
                                                        "`tf.where(condition, x, y)`, or pad to a maximum size)")
                    ctx.report(self.code, node.func, f"`{code_of(ctx, node.func)}` {what}, so the size of its output "
                               f"depends on the data, and {_NOT_DEFINED}: in `{step}`, {advice}", fixed=False)
            elif isinstance(node, (cst.If, cst.While)) and _reads_tensor_values(ctx, node.test):
                keyword = "if" if isinstance(node, cst.If) else "while"
                ctx.report(self.code, node, f"the Python `{keyword}` on a tensor value (`{code_of(ctx, node.test)}`) "
                           f"in `{step}` is compiled into the step as a conditional or a loop, and {_NOT_DEFINED}: "
                           "its branches must give tensors of the same shapes (a loop runs up to a fixed number of "
                           "iterations); compute both results and select with `tf.where`, or keep the shapes the "
                           "same", fixed=False)

    def _report_model_code(self, ctx, code: Union[cst.FunctionDef, cst.Lambda], where: str, advice: str,
                           done: Set[int]) -> None:
        """Selecting ops in code that Keras compiles into the model (a layer's ``call``, a ``Lambda``
        layer's function) and in the functions of the file it runs: nested functions too, as
        ``tf.map_fn`` runs them per image. Python control flow is left alone there: Keras layers
        branch on Python arguments (``training``) as a rule."""
        callbacks = _host_callbacks(ctx, code)
        methods = _own_methods_run_by(ctx, code)
        roots = [code] + methods + [function for function in functions_called_from(
            ctx, [code.body] + [method.body for method in methods], exclude=code)
            + _functions_handed_on(ctx, code) if function.name.value not in callbacks]
        for root in roots:
            if id(root) in done:
                continue
            done.add(id(root))
            place = f"in {where}" if root is code else f"in `{_function_name(ctx, root)}`, which {where} runs"
            for node in walk(root.body, skip=(cst.ClassDef,)):
                if isinstance(node, cst.FunctionDef) and node.name.value in callbacks:
                    continue
                what = _selects(ctx, node) if isinstance(node, cst.Call) else None
                ctc = _ctc_problem(ctx, node, "model") if isinstance(node, cst.Call) else None
                if (ctc is not None or what is not None) and _inside_callback(ctx, node, callbacks):
                    continue
                if ctc is not None:
                    ctx.report(self.code, node.func, f"{ctc}: {place} (compiled into the model's steps), "
                               f"{_ctc_advice(ctx, node)}", fixed=False)
                elif what is not None:
                    own = _own_advice(ctx, node)
                    ctx.report(self.code, node.func, f"`{code_of(ctx, node.func)}` {what}, so the size of its output "
                               f"depends on the data, and the IPU compiles the model for static shapes (\"not fully "
                               f"defined\"): {place}{', ' + own if own else ' ' + advice}", fixed=False)


def model_functions(ctx) -> Iterator[Tuple[Union[cst.FunctionDef, cst.Lambda], str]]:
    """The code Keras compiles into a model (see ``_model_code``), with the methods of its class it
    calls on ``self``, and where each is said to be."""
    for code, where, _ in _model_code(ctx):
        yield code, where
        for method in _own_methods_run_by(ctx, code):
            yield method, f"`{_function_name(ctx, method)}`, which {where} runs"


def _own_methods_run_by(ctx, code: Union[cst.FunctionDef, cst.Lambda]) -> List[cst.FunctionDef]:
    """The methods of the class of ``code`` (a method) that it calls on ``self``
    (``self._compute_loss(data)`` in a ``train_step``), and those they call so, transitively: Keras
    traces them into the same compiled step."""
    owner_class = ctx.enclosing(code, cst.ClassDef) if isinstance(code, cst.FunctionDef) else None
    if owner_class is None or not isinstance(owner_class.body, cst.IndentedBlock):
        return []
    methods = {node.name.value: node for node in owner_class.body.body if isinstance(node, cst.FunctionDef)}
    found: List[cst.FunctionDef] = []
    pending = [code]
    while pending:
        for node in walk(pending.pop().body):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and is_name(node.func.value, "self"):
                callee = methods.get(node.func.attr.value)
                if callee is not None and callee is not code and all(callee is not seen for seen in found):
                    found.append(callee)
                    pending.append(callee)
    return found


def _function_name(ctx, function: cst.FunctionDef) -> str:
    """``name`` for a function, ``Class.name`` for a method."""
    owner_class = ctx.enclosing(function, cst.ClassDef)
    return f"{owner_class.name.value}.{function.name.value}" if owner_class is not None else function.name.value


def _model_code(ctx) -> Iterator[Tuple[Union[cst.FunctionDef, cst.Lambda], str, str]]:
    """The code of the file that Keras compiles into a model, where it is said to be, and what to do
    there: the compiled methods of layer and model subclasses (not a layer that only ``dataset.map``
    runs, on the host), the function of each ``Lambda`` layer, and the losses and metrics given to
    ``compile`` (functions, or subclasses of Keras' ``Loss`` and ``Metric``)."""
    classes = subclass_definitions(ctx, *KERAS_LAYER_CLASSES, *KERAS_MODEL_CLASSES)
    on_host = host_only(ctx, _instances(ctx, {node.name.value for node in classes}))
    for node in classes:
        if _only_on_host(ctx, node.name.value, on_host):
            continue
        for statement in node.body.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value in COMPILED_METHODS:
                advice = _STEP_ADVICE if statement.name.value in _STEP_METHODS else _MODEL_ADVICE
                yield statement, f"`{node.name.value}.{statement.name.value}`", advice
    for node in subclass_definitions(ctx, *_LOSS_CLASSES, *_METRIC_CLASSES):
        for statement in node.body.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value in _LOSS_METRIC_METHODS:
                yield statement, f"`{node.name.value}.{statement.name.value}`", _LOSS_ADVICE
    functions = plain_functions(ctx)
    for name in _compiled_functions(ctx, functions):
        yield functions[name], f"`{name}`, a loss or metric `compile` gives the model", _LOSS_ADVICE
    for call, _ in ctx.calls_to("keras.layers.Lambda"):
        given_arg = argument(call, "function", 0)
        given = given_arg.value if given_arg is not None else None
        if isinstance(given, cst.Lambda):
            yield given, "the function of a `Lambda` layer", _MODEL_ADVICE
        elif isinstance(given, cst.Name) and given.value in functions:
            yield functions[given.value], f"`{given.value}`, the function of a `Lambda` layer", _MODEL_ADVICE


# Losses and metrics are compiled into the model's training and evaluation steps with it.
_LOSS_CLASSES = ("keras.losses.Loss",)
_METRIC_CLASSES = ("keras.metrics.Metric",)
_LOSS_METRIC_METHODS = frozenset({"call", "update_state", "result"})
# `model.compile(optimizer, loss, metrics, loss_weights, weighted_metrics)`: where losses and metrics are given.
_COMPILE_SLOTS = (("loss", 1), ("metrics", 2), ("weighted_metrics", 4))


# What to do about a selecting op: in a layer or model, and in a loss or metric.
_MODEL_ADVICE = ("(code of the model), keep the shapes fixed (a mask multiplied in, or outputs padded to a maximum "
                 "size), or do it on the host on what `predict` returns")
# A model's own training or evaluation step computes its losses there: `predict` is no way out.
_STEP_METHODS = frozenset({"train_step", "test_step"})
_STEP_ADVICE = ("(the model's own step, compiled for the IPU), keep the shapes fixed: weight each value by the mask "
                "(`tf.cast(mask, dtype)`) and divide by the mask's sum instead of selecting values")
_LOSS_ADVICE = ("(compiled into the model's training and evaluation steps), keep the shapes fixed: weight each "
                "value by the mask (`tf.cast(mask, dtype)`) and divide by the mask's sum instead of selecting values")


def _compiled_functions(ctx, functions) -> List[str]:
    """The functions of the file given to a ``compile`` as a loss or a metric (``loss=masked_mse``,
    ``metrics=[recall]``, ``loss={"tags": masked_mse}``)."""
    names: List[str] = []
    for call in ctx.nodes(cst.Call):
        if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "compile"
                and ctx.qualified_name(call.func) is None):
            continue
        for slot, position in _COMPILE_SLOTS:
            given = argument(call, slot, position)
            for node in walk(given.value) if given is not None else ():
                if isinstance(node, cst.Name) and node.value in functions and node.value not in names:
                    names.append(node.value)
    return names


def _instances(ctx, classes: Set[str]) -> Set[str]:
    """Names assigned an instance of one of ``classes`` (``crop = RandomCrop(64)``)."""
    return {target.target.value for assign in ctx.nodes(cst.Assign)
            if isinstance(assign.value, cst.Call) and isinstance(assign.value.func, cst.Name)
            and assign.value.func.value in classes for target in assign.targets if isinstance(target.target, cst.Name)}


def _only_on_host(ctx, class_name: str, on_host: Set[str]) -> bool:
    """Whether every instance of the class is assigned to a name that only ``dataset.map`` runs."""
    made = [call for call in ctx.nodes(cst.Call) if isinstance(call.func, cst.Name) and call.func.value == class_name]
    if not made:
        return False
    for call in made:
        assign = ctx.parent(call)
        if not (isinstance(assign, cst.Assign) and all(isinstance(target.target, cst.Name)
                                                       and target.target.value in on_host for target in assign.targets)):
            return False
    return True


def _functions_handed_on(ctx, code: Union[cst.FunctionDef, cst.Lambda]) -> List[cst.FunctionDef]:
    """Functions of the file that ``code`` hands by name to a TensorFlow call (``tf.map_fn(one_image,
    ...)``): they are traced into the same program."""
    functions = plain_functions(ctx)
    handed = []
    for node in walk(code.body):
        if isinstance(node, cst.Call) and (ctx.qualified_name(node.func) or "").startswith("tensorflow."):
            handed += [functions[arg.value.value] for arg in node.args
                       if isinstance(arg.value, cst.Name) and arg.value.value in functions]
    return handed


def _host_callbacks(ctx, code: Union[cst.FunctionDef, cst.Lambda]) -> Set[str]:
    """Names of the functions ``code`` hands to ``tf.py_function`` / ``tf.numpy_function``: they
    run on the host, where a selecting op is no problem."""
    names = set()
    for node in walk(code.body):
        if isinstance(node, cst.Call) and ctx.qualified_name(node.func) in HOST_FUNCTIONS and node.args \
                and isinstance(node.args[0].value, cst.Name):
            names.add(node.args[0].value.value)
    return names


def _inside_callback(ctx, node: cst.CSTNode, callbacks: Set[str]) -> bool:
    """Whether ``node`` sits in a nested function that runs on the host, or in a lambda handed to
    ``tf.py_function``."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.FunctionDef) and ancestor.name.value in callbacks:
            return True
        if isinstance(ancestor, cst.Call) and ctx.qualified_name(ancestor.func) in HOST_FUNCTIONS:
            return True
    return False


def _compiled_steps(ctx) -> List[cst.FunctionDef]:
    """The custom steps compiled for the IPU: those the port compiles, and those compiled already."""
    found = [plan.step.function for plan in loop_plans(ctx) if plan.problem is None]
    found += [function for functions in step_functions(ctx).values() for function in functions
              if is_jit_compiled(ctx, function) and function not in found]
    return found


def _selects(ctx, call: cst.Call) -> Optional[str]:
    """What ``call`` does when it gives as many values as the data selects, else None."""
    qualified = ctx.qualified_name(call.func) or ""
    if qualified in _WHERE and len(call.args) == 1 and argument(call, "x", 1) is None:
        return "gives the indices where the condition holds"
    if qualified in _SORTED_SEGMENT_OPS:
        return ("gives one value per segment up to the largest segment id, read from the data (use "
                f"`tf.math.unsorted_{qualified.rsplit('.', 1)[1]}` with `num_segments` the number of segments, a "
                "static shape such as `x.shape[0]`)")
    if qualified in _BINCOUNTS and (argument(call, "minlength", 2) is None or argument(call, "maxlength", 3) is None):
        return "gives one count per value up to the largest value (unless `minlength` and `maxlength` fix it)"
    classes = argument(call, "num_classes", 2) if qualified in _CONFUSION_MATRICES else None
    if qualified in _CONFUSION_MATRICES and (classes is None or is_name(classes.value, "None")):
        return "has one row and column per class up to the largest label or prediction, read from the data"
    counted = argument(call, "num_segments", 2) if qualified in _UNSORTED_SEGMENT_OPS else None
    if counted is not None and _counts_values(ctx, counted.value):
        return (f"gives `num_segments={code_of(ctx, counted.value)}` values, a count read from the data (give the "
                "number of nodes, a static shape such as `tf.shape(x)[0]` or `x.shape[0]`)")
    if qualified == _PADDED_NMS:
        padded = argument(call, "pad_to_max_output_size", 5)
        return None if padded is not None and is_true(padded.value) else (
            "keeps the boxes that overlap less than the threshold (unless `pad_to_max_output_size=True` pads them "
            "to `max_output_size`)")
    repeats = argument(call, "repeats", 1) if qualified == "tensorflow.repeat" else None
    if repeats is not None and _counts_values(ctx, repeats.value):
        return (f"repeats each value as many times as `{code_of(ctx, repeats.value)}` counts in the data (to give "
                "each item the value of its segment, `tf.gather(values, segment_ids)` keeps the shape)")
    return _SELECTING_OPS.get(qualified)


def _own_advice(ctx, call: cst.Call) -> Optional[str]:
    """What keeps the shape of ``call``'s output fixed when an argument of its own does, else None
    (the general advice, masks and padding, applies)."""
    if (ctx.qualified_name(call.func) or "") in _CONFUSION_MATRICES:
        return "give `num_classes`, the number of classes the model predicts, for a matrix of one fixed shape"
    return None


def _ctc_op(ctx, call: cst.Call) -> Optional[str]:
    """The Keras-canonical name of the CTC loss or decoder ``call`` runs, also through an attribute
    the layer holds it in (``self.loss_fn = keras.backend.ctc_batch_cost``, then ``self.loss_fn(...)``)."""
    func = call.func
    held = self_attribute_values(ctx, func) if isinstance(func, cst.Attribute) and is_name(func.value, "self") else []
    for target in [func] + held:
        qualified = ctx.qualified_name(target)
        name = canonical_keras(qualified) or qualified
        if name in _SPARSE_CTC_LOSSES or name in _CTC_DECODERS:
            return name
    return None


def _ctc_problem(ctx, call: cst.Call, compiled: str) -> Optional[str]:
    """What a CTC loss or decoder ``call`` does that the IPU cannot compile into the ``compiled``
    code (the model, or a custom step), else None."""
    name = _ctc_op(ctx, call)
    if name is None:
        return None
    called = code_of(ctx, call.func)
    called = f"`{called}`" if called.endswith(name.rsplit(".", 1)[1]) else f"`{called}` (`{name}`)"
    if name in _SPARSE_CTC_LOSSES:
        return (f"{called} {_SPARSE_CTC_LOSSES[name]}, whose number of values is the labels' total length, read "
                f"from the data, and the IPU compiles the {compiled} for static shapes (\"not fully defined\")")
    return (f"{called} gives the decoded sequences as long as the longest one it decodes, a length read from the "
            f"data, and the IPU compiles the {compiled} for static shapes (\"not fully defined\")")


def _ctc_advice(ctx, call: cst.Call) -> str:
    """What to do about a CTC loss or decoder in compiled code. The IPU's CTC layers take arguments
    of their own (no stock Keras layer is like them): they are named, not swapped in."""
    if _ctc_op(ctx, call) in _SPARSE_CTC_LOSSES:
        return ("compute the loss with the IPU's own CTC loss, the `CTCLoss` layer of "
                "`ipu_tensorflow_addons.keras.layers` (its arguments are its own: the port does not swap it in)")
    return ("decode on the host what `predict` returns, or use the IPU's own decoders, the `CTCInferenceLayer` or "
            "`CTCPredictionsLayer` of `ipu_tensorflow_addons.keras.layers` (their arguments are their own: the port "
            "does not swap them in)")


def _counts_values(ctx, node: cst.BaseExpression) -> bool:
    """A count computed from tensor values (``tf.reduce_max(ids) + 1``, ``tf.math.bincount(ids)``),
    not from shapes (``tf.shape(x)[0]``, ``x.shape[0]``), which are static when compiled."""
    return any(isinstance(inner, cst.Call) and (ctx.qualified_name(inner.func) or "") in _VALUE_COUNTS
               for inner in walk(node))


def _reads_tensor_values(ctx, test: cst.BaseExpression) -> bool:
    """A condition that calls a TensorFlow op on tensors (``tf.reduce_max(loss) > 2.0``)."""
    return any(isinstance(node, cst.Call) and (ctx.qualified_name(node.func) or "").startswith("tensorflow.")
               and not (ctx.qualified_name(node.func) or "").startswith(_STATIC_QUERIES) for node in walk(test))


RULE = DataDependentShape()
