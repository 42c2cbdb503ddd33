"""IPU161: ragged and sparse tensors given to a Keras model or a custom loop's step."""

import libcst as cst

from porter.context import code_of, walk
from porter.cstutil import is_true, keyword
from porter.rule import KERAS, NOTE, WARN, Example, Rule
from porter.rules._tf.tfdata import sliced_arrays
from porter.rules.keras._analysis.custom_loop import read_in_training
from porter.rules.keras._analysis.datasets import made_datasets, training_inputs
from porter.rules.keras._analysis.util import INPUTS, RAGGED, SPARSE, densified_to_fixed_length, ragged_or_sparse
from porter.rules.keras.data_dependent_shape import model_functions

_RAGGED_ADVICE = ("its shape is not fully defined, and the IPU needs every shape fully defined (a ValueError: "
                  "\"not fully defined\"): pad the data to a fixed length (`.to_tensor(shape=(None, n))` of the "
                  "ragged data, in the `tf.data` pipeline) and give the model a dense input of that length")
_SPARSE_UNDOCUMENTED = ("the IPU documentation does not say that sparse tensors run on the IPU (it confirms the "
                        "support of few ops)")
_SPARSE_ADVICE = (f"{_SPARSE_UNDOCUMENTED}: if compiling fails, give the model dense data (`tf.sparse.to_dense`, in "
                  "the `tf.data` pipeline)")
# Sparse ops in a model's code (a graph layer multiplying by a `tf.SparseTensor` adjacency).
_SPARSE_OPS = ("tensorflow.sparse.", "tensorflow.SparseTensor")
_SPARSE_MODEL_ADVICE = ("if compiling fails, keep the graph dense (`tf.sparse.to_dense` of the adjacency, once, on "
                        "the host, and `tf.matmul`) or as an edge list (`tf.gather` of the neighbours, summed with "
                        "`tf.math.unsorted_segment_sum` and a fixed `num_segments`)")
_UNTRIMMED = ("the port does not trim it to whole batches, as it does arrays (it has no length to cut by), and "
              "Keras on the IPU rejects a partial batch: trim it to a multiple of the batch size; and ")


class RaggedSparseInput(Rule):
    code = "IPU161"
    name = "ragged-sparse-input"
    kind = WARN
    frameworks = frozenset({KERAS})
    summary = "Report ragged and sparse tensors given to a Keras model or a custom loop's step."
    rationale = (
        "The IPU needs every shape fully defined (Targeting the IPU from TensorFlow 2, \"Keras with IPUs\"), "
        "and a ragged tensor's is not: a model that takes one (`keras.Input(..., ragged=True)`), and data "
        "made by `tf.ragged` or `tf.RaggedTensor.from_...` that reaches `fit`/`evaluate`/`predict` or a "
        "custom loop, are reported with a warning (not a dataset whose `map` makes them dense with a fixed length, "
        "`.to_tensor(shape=[None, n])`); the data is not trimmed or padded to whole batches, as "
        "arrays are (it has no length to cut by). The documentation says nothing of sparse tensors "
        "(`keras.Input(..., sparse=True)`, `tf.SparseTensor`): they are reported with a note, since they may "
        "not compile, and with a warning where `fit`/`evaluate`/`predict` gets them as arrays, which the port "
        "does not trim to whole batches either. A sparse op in the code Keras compiles into a model (a graph "
        "layer's `call` multiplying by a `tf.SparseTensor` adjacency it holds, `tf.sparse.sparse_dense_matmul`) is "
        "noted too: the sparse tensor reaches the IPU though the model's inputs are dense."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf

            words = tf.keras.Input(shape=(None,), dtype=tf.int32, ragged=True)
            vectors = tf.keras.layers.Embedding(5000, 16)(words)
            model = tf.keras.Model(words, tf.keras.layers.Dense(2)(tf.reduce_mean(vectors, axis=1)))
            model.fit(sentences, labels, batch_size=32, epochs=2)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            sentences = tf.ragged.constant(token_lists)
            model = tf.keras.models.load_model("reviews.keras")
            model.fit(sentences, labels, batch_size=32, epochs=2)
            """,
        ),
        # Made by a function of the file.
        Example(
            """\
            import tensorflow as tf


            def tokenize(texts, vocabulary):
                return tf.ragged.constant([[vocabulary.get(word, 1) for word in text.split()] for text in texts])


            model = tf.keras.models.load_model("reviews.keras")
            model.fit(tokenize(texts, vocabulary), labels, batch_size=32, epochs=2)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            counts = tf.SparseTensor(indices, values, dense_shape=(4096, 20000))
            model = tf.keras.models.load_model("bag_of_words.keras")
            train_ds = tf.data.Dataset.from_tensor_slices((counts, labels)).batch(256, drop_remainder=True)
            model.fit(train_ds, epochs=3)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            clicks = tf.sparse.reorder(tf.SparseTensor(indices, values, dense_shape=(n_users, n_items)))
            model = tf.keras.models.load_model("recommender.keras")
            model.fit(clicks, ratings, batch_size=128, epochs=3)
            """,
        ),
        # A graph convolution over a sparse adjacency the layer holds: the model's inputs are dense.
        Example(
            """\
            import tensorflow as tf
            from tensorflow import keras


            class GraphConv(keras.layers.Layer):
                def __init__(self, adjacency, units):
                    super().__init__()
                    self.adjacency = adjacency
                    self.dense = keras.layers.Dense(units)

                def call(self, nodes):
                    return tf.sparse.sparse_dense_matmul(self.adjacency, self.dense(nodes))


            adjacency = tf.SparseTensor(edge_list, weights, dense_shape=(num_nodes, num_nodes))
            nodes = keras.Input(shape=(16,), batch_size=num_nodes)
            model = keras.Model(nodes, GraphConv(adjacency, 7)(nodes))
            model.fit(features, labels, batch_size=num_nodes, epochs=100)
            """,
        ),
        # The same graph as an edge list: dense gathers and segment sums.
        Example(
            """\
            import tensorflow as tf
            from tensorflow import keras


            class GraphConv(keras.layers.Layer):
                def __init__(self, edges, units):
                    super().__init__()
                    self.edges = edges
                    self.dense = keras.layers.Dense(units)

                def call(self, nodes):
                    messages = tf.gather(self.dense(nodes), self.edges[1])
                    return tf.math.unsorted_segment_sum(messages, self.edges[0], num_segments=nodes.shape[0])


            nodes = keras.Input(shape=(16,), batch_size=num_nodes)
            model = keras.Model(nodes, GraphConv(edges, 7)(nodes))
            model.fit(features, labels, batch_size=num_nodes, epochs=100)
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow as tf

            sentences = tf.ragged.constant(token_lists).to_tensor(shape=(None, 64))
            model = tf.keras.models.load_model("reviews.keras")
            model.fit(sentences, labels, batch_size=32, epochs=2)
            """,
            reported=False,
        ),
        # Ragged rows a dataset's `map` makes dense with a fixed length: the model gets dense batches.
        Example(
            """\
            import tensorflow as tf

            reviews = tf.data.Dataset.from_tensor_slices((tf.ragged.constant(token_lists), labels))
            reviews = reviews.batch(32, drop_remainder=True).map(lambda s, y: (s.to_tensor(0, shape=[None, 64]), y))
            model = tf.keras.models.load_model("reviews.keras")
            model.fit(reviews, epochs=5)
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        reported = set()  # the kinds reported at a model's input: the data given it is not reported again
        for call in ctx.nodes(cst.Call):
            if ctx.keras_name(call.func) not in INPUTS:
                continue
            for kind in (RAGGED, SPARSE):
                given = keyword(call, kind)
                if given is not None and is_true(given.value):
                    reported.add(kind)
                    self._report(ctx, call, kind, f"the model's input `{code_of(ctx, call)}` is {kind}")
        for entry, value in training_inputs(ctx):
            kind = entry.ragged_or_sparse if value is entry.data else ragged_or_sparse(ctx, value)
            if kind == RAGGED and kind not in reported:
                self._report(ctx, value, kind, f"`{entry.method}` gets ragged data (`{code_of(ctx, value)}`)")
            elif kind == SPARSE and value is entry.data:
                ctx.report(self.code, value, f"`{entry.method}` gets sparse data (`{code_of(ctx, value)}`): "
                           f"{_UNTRIMMED}{_SPARSE_ADVICE}", fixed=False)
        self._report_datasets(ctx, reported)
        if SPARSE not in reported:
            self._report_sparse_ops(ctx)

    def _report_sparse_ops(self, ctx) -> None:
        """The first sparse op of each function Keras compiles into a model: a sparse tensor then
        reaches the IPU, even when the model's inputs are dense (an adjacency the layer holds)."""
        done = set()
        for code, where in model_functions(ctx):
            if id(code) in done:
                continue
            done.add(id(code))
            op = next((node for node in walk(code.body) if isinstance(node, cst.Call)
                       and (ctx.qualified_name(node.func) or "").startswith(_SPARSE_OPS)), None)
            if op is not None:
                ctx.report(self.code, op.func, f"{where} (code of the model) computes with a sparse tensor "
                           f"(`{code_of(ctx, op.func)}`), which so reaches the IPU: {_SPARSE_UNDOCUMENTED}: "
                           f"{_SPARSE_MODEL_ADVICE}", fixed=False, severity=NOTE)

    def _report_datasets(self, ctx, reported: set) -> None:
        """The ``from_tensor_slices`` datasets of ragged or sparse data that training reads."""
        done = set()
        for source, scope in read_in_training(ctx):
            for made in made_datasets(ctx, source, scope):
                if not made.of_arrays or id(made.maker) in done:
                    continue
                if densified_to_fixed_length(ctx, made.maps):
                    continue  # dense with a fixed length before the model sees it
                done.add(id(made.maker))
                for array in sliced_arrays(made.maker):
                    kind = ragged_or_sparse(ctx, array)
                    if kind is not None and kind not in reported:
                        self._report(ctx, array, kind, f"the dataset training reads is made of {kind} data "
                                     f"(`{code_of(ctx, array)}`)")

    def _report(self, ctx, node, kind: str, what: str) -> None:
        if kind == RAGGED:
            ctx.report(self.code, node, f"{what}: {_RAGGED_ADVICE}", fixed=False)
        else:
            ctx.report(self.code, node, f"{what}: {_SPARSE_ADVICE}", fixed=False, severity=NOTE)


RULE = RaggedSparseInput()
