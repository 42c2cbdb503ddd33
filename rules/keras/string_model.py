from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from porter.context import code_of, walk
from porter.cstutil import is_name, keyword
from porter.rule import KERAS, WARN, Example, Rule
from porter.rules.keras._analysis.functional import keras_inputs_of
from porter.rules.keras._analysis.steps import step_functions
from porter.rules.keras._analysis.util import (COMPILED_METHODS, HUB_LAYER, INPUTS, KERAS_LAYER_CLASSES,
                                               KERAS_MODEL_CLASSES, LOOKUP_LAYERS, assigned_layers, host_only, layer_made,
                                               model_holders, subclasses_of)
from porter.scopes import returns_of

_STRING_DTYPES = frozenset({"tensorflow.string", "tensorflow.dtypes.string"})
_SEQUENTIAL = frozenset({"keras.Sequential", "keras.models.Sequential"})
_MODELS = _SEQUENTIAL | {"keras.Model", "keras.models.Model"}
_UNSUPPORTED = "(Targeting the IPU from TensorFlow 2, \"Unsupported operations\")"
_ADVICE = (f"string ops do not run on the IPU {_UNSUPPORTED}; do the text processing in the `tf.data` pipeline "
           "(`dataset.map`) and give the model integer ids")
_LOOKUP_ADVICE = (f"lookup layers work on strings or int64 values, and string ops do not run on the IPU "
                  f"{_UNSUPPORTED} while int64 values are narrowed to int32 on the device; do the lookup in the "
                  "`tf.data` pipeline on the host (`dataset.map`) and give the model the integer indices it makes")
_COLUMNS_ADVICE = (f"categorical feature columns look values up and hash them with string ops, which do not run on "
                   f"the IPU {_UNSUPPORTED}; do the lookups in the `tf.data` pipeline on the host with "
                   "preprocessing layers (`StringLookup`, `IntegerLookup`, `Hashing`) in `dataset.map` and give "
                   "the model the integer indices they make")
# Keras layers that read feature columns, and the feature columns that look values up or hash them.
_FEATURE_LAYERS = frozenset({"keras.layers.DenseFeatures", "keras.experimental.SequenceFeatures"})
_CATEGORICAL_COLUMNS = ("categorical_column_with_", "crossed_column", "sequence_categorical_column_with_")


# TensorFlow functions that work on strings, beyond the `tf.strings` module (any spelling of it).
_STRING_FUNCTIONS = frozenset({"tensorflow.as_string", "tensorflow.string_split", "tensorflow.io.decode_raw",
                               "tensorflow.io.decode_csv", "tensorflow.io.decode_json_example"})
_STRINGS_MODULES = ("tensorflow.strings.", "tensorflow.compat.v1.strings.", "tensorflow.compat.v2.strings.")


@dataclass
class _Lookups:
    """The layers of a file that the IPU cannot run: their classes (``DenseFeatures`` only when the
    file makes categorical feature columns), the names assigned one, and those feature columns."""

    kinds: frozenset
    names: Dict[str, str]
    columns: List[str]

    def of(self, ctx, layer: cst.BaseExpression) -> Optional[str]:
        """The class of ``layer``: a name assigned one (not an import), or a construction."""
        if isinstance(layer, cst.Name):
            return self.names.get(layer.value) if ctx.qualified_name(layer) is None else None
        return layer_made(ctx, layer, self.kinds)

    def what(self, kind: str) -> Tuple[str, str]:
        """What a layer of ``kind`` does, and what to do instead."""
        if kind in _FEATURE_LAYERS:
            columns = ", ".join(f"`{column}`" for column in self.columns)
            return f"reads categorical feature columns ({columns})", _COLUMNS_ADVICE
        if kind.endswith("TextVectorization"):
            return "works on strings", _ADVICE
        if kind.endswith("Lookup"):
            return "looks values up", _LOOKUP_ADVICE
        return "hashes values", _LOOKUP_ADVICE


def _lookups(ctx) -> _Lookups:
    """The lookup layers of the file, and its categorical feature columns (by function name)."""
    columns = sorted({qualified.rsplit(".", 1)[-1] for call in ctx.nodes(cst.Call)
                      for qualified in [ctx.qualified_name(call.func) or ""] if ".feature_column." in qualified
                      and qualified.rsplit(".", 1)[-1].startswith(_CATEGORICAL_COLUMNS)})
    kinds = (LOOKUP_LAYERS | _FEATURE_LAYERS) if columns else LOOKUP_LAYERS
    return _Lookups(kinds, assigned_layers(ctx, kinds), columns)


def _parameters_run(model: cst.ClassDef) -> dict:
    """{position: name} of the constructor's parameters that the model keeps (``self.words =
    words``) and calls in ``call``/``train_step`` (``self.words(text)``)."""
    methods = {node.name.value: node for node in model.body.body if isinstance(node, cst.FunctionDef)}
    init = methods.get("__init__")
    if init is None:
        return {}
    names = [param.name.value for param in init.params.params][1:]
    kept = {node.targets[0].target.attr.value: node.value.value for node in walk(init)
            if isinstance(node, cst.Assign) and isinstance(node.targets[0].target, cst.Attribute)
            and is_name(node.targets[0].target.value, "self") and isinstance(node.value, cst.Name)}
    called = {node.func.attr.value for name in COMPILED_METHODS if name in methods for node in walk(methods[name])
              if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and is_name(node.func.value, "self")}
    run = {kept[attribute] for attribute in called if attribute in kept}
    return {index: name for index, name in enumerate(names) if name in run}


def _held_layer(ctx, func: cst.BaseExpression, kinds) -> Optional[str]:
    """The class of ``self.vectorize`` where the class assigns ``self.vectorize = TextVectorization(...)``."""
    if not (isinstance(func, cst.Attribute) and is_name(func.value, "self")):
        return None
    owner = ctx.enclosing(func, cst.ClassDef)
    if owner is None:
        return None
    for node in walk(owner):
        if isinstance(node, cst.Assign) and any(
                isinstance(target.target, cst.Attribute) and target.target.attr.value == func.attr.value
                and is_name(target.target.value, "self") for target in node.targets):
            kind = layer_made(ctx, node.value, kinds)
            if kind is not None:
                return kind
    return None


def _holder(ctx, value: cst.BaseExpression) -> Optional[str]:
    """The variable that holds ``value``: ``x = value``, or the container of ``inputs[name] = value``,
    ``inputs = {"name": value}`` and ``inputs.append(value)``."""
    parent = ctx.parent(value)
    while isinstance(parent, (cst.Element, cst.DictElement, cst.List, cst.Tuple, cst.Dict)):
        parent = ctx.parent(parent)
    if isinstance(parent, cst.Assign):
        target = parent.targets[0].target
        target = target.value if isinstance(target, cst.Subscript) else target
        return target.value if isinstance(target, cst.Name) else None
    call = ctx.parent(parent) if isinstance(parent, cst.Arg) else None
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "append" \
            and isinstance(call.func.value, cst.Name):
        return call.func.value.value
    return None


def _hub_advice(ctx, layer: cst.Call) -> str:
    """What to do with a TF Hub layer that takes strings: its tokenizer is inside the saved module,
    so the whole layer moves to the host pipeline, and a ``trainable=True`` one is no longer trained."""
    advice = (f"string ops do not run on the IPU {_UNSUPPORTED}, and its text processing is inside the saved "
              "module: run the layer in the `tf.data` pipeline (`dataset.map(lambda text, label: "
              "(hub_layer(text), label))`) and give the model the vectors it makes")
    trainable = keyword(layer, "trainable")
    if trainable is not None and not is_name(trainable.value, "False"):
        advice += f"; the layer is then not fine-tuned (`{code_of(ctx, trainable)}` no longer trains it)"
    return advice


def _model_names(ctx, model_call: cst.Call) -> Set[str]:
    """The names the model ``model_call`` makes is held by (``model_holders``: its variable, or the
    names the callers of a function of the file that returns it assign it to). Empty when that
    function also compiles, fits or summarises the local it returns, so that the model is taken for
    one the IPU runs."""
    holders = model_holders(ctx, model_call)
    parent = ctx.parent(model_call)
    function = ctx.enclosing_function(model_call)
    local = parent.targets[0].target.value if isinstance(parent, cst.Assign) and len(parent.targets) == 1 \
        and isinstance(parent.targets[0].target, cst.Name) else None
    if function is not None and local is not None and holders != {local} and not _only_returned(function, parent):
        return set()
    return holders


def _only_returned(function: cst.FunctionDef, assign: cst.Assign) -> bool:
    """The local ``assign`` binds is read by ``function`` only where it returns it (not compiled,
    fitted or summarised there)."""
    local = assign.targets[0].target.value
    mentions = [node for node in walk(function.body) if isinstance(node, cst.Name) and node.value == local]
    return len(mentions) == 1 + len(returns_of(function))  # its assignment, and the returns


def _layer_key(ctx, layer: cst.BaseExpression):
    """One finding per layer: a name (or ``self.name``) by its text, a construction by itself."""
    return code_of(ctx, layer) if isinstance(layer, (cst.Name, cst.Attribute)) else id(layer)


class StringModel(Rule):
    code = "IPU157"
    name = "string-model"
    kind = WARN
    frameworks = frozenset({KERAS})
    summary = "Warn about Keras models that take strings, hold lookup layers or read categorical feature columns."
    rationale = (
        "Ops on strings do not run on the IPU (Targeting the IPU from TensorFlow 2, \"Unsupported "
        "operations\"), and int64 values are narrowed to int32 on the device: a model that takes strings "
        "(`keras.Input(dtype=\"string\")`, a TF Hub layer given `dtype=tf.string`) or holds a lookup layer "
        "(`TextVectorization`, `StringLookup`, `IntegerLookup`, `Hashing`, `HashedCrossing`, under any "
        "spelling), whose tables hold strings or int64 keys, or runs string ops (`tf.strings.*`) in the `call` "
        "of a model or layer subclass or in a custom training step, is not a program for the IPU. A lookup layer is in the model when a `Sequential` lists it or `add` "
        "adds it, when it is called on the tensors of a functional model's `keras.Input`s (followed through "
        "variables, dicts and lists of inputs, loops over them and the parameters of the file's functions), "
        "when a custom training step runs it, or when a model subclass holds (or is given) it and calls it. "
        "A `DenseFeatures` layer given categorical feature columns (`categorical_column_with_*`, "
        "`crossed_column`) does the same lookups, and hashing, into sparse tensors. Such layers belong in the "
        "`tf.data` pipeline, where they run on the host (`dataset.map(lambda text, label: (vectorize(text), "
        "label))`), and the model takes the integer indices they make; feature columns are replaced by "
        "preprocessing layers in the `map`. This is reported, not changed: where the model ends and the "
        "pipeline starts is a choice for the author. The same layers used in a `map` function, on host data "
        "(arrays, eager tensors, a model's predictions) or for `adapt` are not reported, nor a preprocessing "
        "model that only the `map` runs."
    )
    examples = (
        # A string layer a custom step runs, or that a model subclass holds and calls: compiled code.
        Example(
            """\
            import tensorflow as tf

            to_ids = tf.keras.layers.StringLookup(vocabulary=["<start>", "a", "b"])


            @tf.function
            def train_step(images, captions):
                start = to_ids("<start>")
                with tf.GradientTape() as tape:
                    loss = loss_fn(captions, model([images, start]))
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
            """,
        ),
        # Given to a model that only keeps it for a host-side method: not compiled, not reported.
        Example(
            """\
            import tensorflow as tf

            to_chars = tf.keras.layers.StringLookup(vocabulary=letters, invert=True)


            class Sampler(tf.keras.Model):
                def __init__(self, net, to_chars):
                    super().__init__()
                    self.net = net
                    self.to_chars = to_chars

                def call(self, ids):
                    return self.net(ids)

                @tf.function
                def generate(self, ids):
                    return self.to_chars(tf.argmax(self.net(ids), -1))


            sampler = Sampler(net, to_chars)
            """,
            reported=False,
        ),
        # String ops in a model subclass's `call`: the model takes strings.
        Example(
            """\
            import tensorflow as tf


            class HashedWords(tf.keras.Model):
                def __init__(self, buckets):
                    super().__init__()
                    self.buckets = buckets
                    self.embed = tf.keras.layers.Embedding(buckets, 32)

                def call(self, text):
                    words = tf.strings.split(tf.strings.lower(text))
                    return self.embed(tf.strings.to_hash_bucket_fast(words, self.buckets).to_tensor())
            """,
        ),
        # The same ops in a standardize function of the tf.data pipeline: host code.
        Example(
            """\
            import tensorflow as tf


            def clean(text):
                return tf.strings.regex_replace(tf.strings.lower(text), "<br />", " ")


            class Encoder(tf.keras.layers.Layer):
                def call(self, ids):
                    return tf.one_hot(ids, 100)


            train_ds = raw_ds.map(lambda text, label: (clean(text), label))
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow as tf


            class Tagger(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.words = tf.keras.layers.TextVectorization(max_tokens=2000)
                    self.scores = tf.keras.layers.Dense(3)

                def call(self, text):
                    return self.scores(tf.cast(self.words(text), tf.float32))
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            text = tf.keras.Input(shape=(1,), dtype="string")
            ids = vectorizer(text)
            logits = tf.keras.layers.Dense(2)(tf.keras.layers.Embedding(20000, 64)(ids))
            model = tf.keras.Model(text, logits)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            vectorizer = tf.keras.layers.TextVectorization(max_tokens=20000, output_sequence_length=200)
            vectorizer.adapt(train_text)
            export = tf.keras.Sequential([vectorizer, classifier, tf.keras.layers.Activation("sigmoid")])
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            vectorizer = tf.keras.layers.TextVectorization(max_tokens=20000, output_sequence_length=200)
            vectorizer.adapt(train_text)
            train_ds = raw_train_ds.map(lambda text, label: (vectorizer(text), label))
            model = tf.keras.Sequential([tf.keras.layers.Embedding(20000, 64), tf.keras.layers.Dense(1)])
            """,
            reported=False,
        ),
        # A preprocessing model that a builder returns with its inputs, run by the tf.data pipeline only:
        # the model trained in the scope takes the numbers it makes.
        Example(
            """\
            from tensorflow import keras


            def build_preprocessing(vocabulary):
                inputs = {"city": keras.Input(shape=(1,), name="city", dtype="string")}
                lookup = keras.layers.StringLookup(vocabulary=vocabulary, output_mode="one_hot")
                return inputs, keras.Model(inputs, lookup(inputs["city"]))


            inputs, preprocessor = build_preprocessing(cities)
            train_ds = raw_ds.map(lambda row, label: (preprocessor(row), label))
            classifier = keras.Sequential([keras.layers.Dense(1, input_shape=(preprocessor.output_shape[-1],))])
            classifier.fit(train_ds, epochs=5)
            """,
            reported=False,
        ),
        # A preprocessing model of the pipeline wrapped with the classifier into an end-to-end model
        # that predicts on raw rows: that model runs the lookups on the IPU.
        Example(
            """\
            from tensorflow import keras

            city = keras.Input(shape=(1,), name="city", dtype="string")
            preprocessor = keras.Model(city, keras.layers.StringLookup(vocabulary=cities, output_mode="one_hot")(city))
            train_ds = raw_ds.map(lambda row, label: (preprocessor(row), label))
            classifier.fit(train_ds, epochs=5)
            end_to_end = keras.Model(city, classifier(preprocessor(city)))
            print(end_to_end.predict({"city": tf.constant([["Paris"]])}))
            """,
        ),
        # Lookup layers called on a functional model's inputs: the dtype of each input is chosen per
        # column, and the layers are called in a loop over a dict of inputs.
        Example(
            """\
            import tensorflow as tf

            inputs = {}
            for name, column in columns.items():
                dtype = tf.string if column.dtype == object else tf.float32
                inputs[name] = tf.keras.Input(shape=(1,), name=name, dtype=dtype)
            encoded = []
            for name, tensor in inputs.items():
                if tensor.dtype == tf.string:
                    lookup = tf.keras.layers.StringLookup(vocabulary=vocabularies[name], output_mode="one_hot")
                    encoded.append(lookup(tensor))
                else:
                    encoded.append(tensor)
            model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(tf.keras.layers.Concatenate()(encoded)))
            """,
        ),
        Example(
            """\
            from tensorflow import keras

            chest_pain = keras.Input(shape=(1,), name="cp", dtype="int64")
            lookup = keras.layers.IntegerLookup(output_mode="one_hot")
            lookup.adapt(train_features["cp"])
            model = keras.Model(chest_pain, keras.layers.Dense(1)(lookup(chest_pain)))
            """,
        ),
        # Called in a helper that the model's input is given to, with a class chosen by a condition.
        Example(
            """\
            from tensorflow import keras
            from tensorflow.keras.layers import IntegerLookup, StringLookup


            def encode(feature, values, is_string):
                lookup_class = StringLookup if is_string else IntegerLookup
                lookup = lookup_class(output_mode="binary")
                lookup.adapt(values)
                return lookup(feature)


            sex = keras.Input(shape=(1,), name="sex", dtype="int64")
            model = keras.Model(sex, keras.layers.Dense(1)(encode(sex, train_sex, False)))
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras.layers.experimental import preprocessing

            model = tf.keras.Sequential([preprocessing.Hashing(num_bins=64), tf.keras.layers.Embedding(64, 8)])
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            class Recommender(tf.keras.Model):
                def __init__(self, user_ids):
                    super().__init__()
                    self.users = tf.keras.layers.IntegerLookup(vocabulary=user_ids)
                    self.embed = tf.keras.layers.Embedding(len(user_ids) + 1, 16)

                def call(self, users):
                    return self.embed(self.users(users))
            """,
        ),
        # Categorical feature columns read by the model.
        Example(
            """\
            import tensorflow as tf

            animal = tf.feature_column.categorical_column_with_vocabulary_list("Type", ["Cat", "Dog"])
            breed = tf.feature_column.categorical_column_with_hash_bucket("Breed1", hash_bucket_size=100)
            columns = [tf.feature_column.indicator_column(animal), tf.feature_column.embedding_column(breed, 8)]
            model = tf.keras.Sequential([tf.keras.layers.DenseFeatures(columns), tf.keras.layers.Dense(1)])
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            rooms = tf.feature_column.categorical_column_with_identity("rooms", num_buckets=8)
            inputs = {"rooms": tf.keras.Input(shape=(1,), name="rooms", dtype=tf.int64)}
            dense = tf.compat.v1.keras.layers.DenseFeatures([tf.feature_column.indicator_column(rooms)])(inputs)
            model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(dense))
            model.fit(train_ds, epochs=5)
            """,
        ),
        # A TF Hub text embedding fine-tuned in the model: its tokenizer is in the saved module.
        Example(
            """\
            import tensorflow as tf
            import tensorflow_hub as hub

            embed = hub.KerasLayer("https://tfhub.dev/google/some-text-embedding/2", input_shape=[], dtype=tf.string,
                                   trainable=True)
            model = tf.keras.Sequential([embed, tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(1)])
            """,
        ),
        # The same layer run only by the tf.data pipeline, and on sentences written in the code: host code.
        Example(
            """\
            import tensorflow as tf
            import tensorflow_hub as hub

            embed = hub.KerasLayer("https://tfhub.dev/google/some-text-embedding/2", input_shape=[], dtype=tf.string)
            train_ds = raw_train_ds.map(lambda text, label: (embed(text), label))
            print(embed(["a fine film"]))
            model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(1)])
            """,
            reported=False,
        ),
        # A text preprocessing model made and returned by a function, which only the tf.data pipeline
        # runs (through a parameter of another function): host code.
        Example(
            """\
            import tensorflow as tf
            import tensorflow_hub as hub


            def make_preprocess_model():
                sentence = tf.keras.layers.Input(shape=(), dtype=tf.string)
                packed = hub.KerasLayer("https://tfhub.dev/tensorflow/some-preprocess/3")(sentence)
                return tf.keras.Model(sentence, packed)


            def load_split(name, preprocess):
                return tf.data.experimental.load(name).map(lambda text, label: (preprocess(text), label))


            preprocess = make_preprocess_model()
            train_ds = load_split("train", preprocess)
            """,
            reported=False,
        ),
        # The same function's model kept as a local that is also compiled there: a model the IPU runs.
        Example(
            """\
            import tensorflow as tf
            import tensorflow_hub as hub


            def make_classifier():
                sentence = tf.keras.layers.Input(shape=(), dtype=tf.string)
                pooled = hub.KerasLayer("https://tfhub.dev/tensorflow/some-encoder/3")(sentence)["pooled_output"]
                model = tf.keras.Model(sentence, tf.keras.layers.Dense(1)(pooled))
                model.compile(optimizer="adam", loss="mse")
                return model


            classifier = make_classifier()
            train_ds = raw_train_ds.map(lambda text, label: (classifier(text), label))
            """,
        ),
        # Numeric columns only: no lookups.
        Example(
            """\
            import tensorflow as tf

            columns = [tf.feature_column.numeric_column("age"), tf.feature_column.numeric_column("fare")]
            model = tf.keras.Sequential([tf.keras.layers.DenseFeatures(columns), tf.keras.layers.Dense(1)])
            """,
            reported=False,
        ),
        # Lookups in the tf.data pipeline, on host data, and on a model's predictions: host code.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            lookup = tf.keras.layers.IntegerLookup(output_mode="one_hot")
            lookup.adapt(train_codes)
            print(lookup(np.array([[1], [2]])))
            train_ds = train_ds.map(lambda codes, label: (lookup(codes), label))
            codes = tf.keras.Input(shape=(lookup.vocabulary_size(),))
            model = tf.keras.Model(codes, tf.keras.layers.Dense(3)(codes))
            model.fit(train_ds, epochs=2)
            to_names = tf.keras.layers.StringLookup(vocabulary=["cat", "dog", "bird"], invert=True)
            print(to_names(tf.argmax(model(test_codes), -1)))
            """,
            reported=False,
        ),
        # A preprocessing model of lookups, and feature columns, that only the tf.data pipeline runs.
        Example(
            """\
            import tensorflow as tf

            inputs = {"city": tf.keras.Input(shape=(1,), name="city", dtype=tf.string)}
            preprocess = tf.keras.Model(inputs, tf.keras.layers.StringLookup(vocabulary=cities)(inputs["city"]))
            city = tf.feature_column.categorical_column_with_vocabulary_list("city", cities)
            features = tf.keras.layers.DenseFeatures([tf.feature_column.indicator_column(city)])
            train_ds = raw_ds.map(lambda x, y: (preprocess(x), y))
            dense_ds = raw_ds.map(lambda x, y: (features(x), y))
            model = tf.keras.Sequential([tf.keras.layers.Embedding(100, 8), tf.keras.layers.Dense(1)])
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        lookups = _lookups(ctx)
        reported: Set[object] = set()  # the layers reported already (_layer_key): one finding each
        self._report_compiled_uses(ctx, lookups, reported)
        self._report_string_ops(ctx)
        models_reported: Set[str] = set()  # one finding per model that takes strings
        string_inputs: Set[int] = set()  # the string inputs of the models reported
        for call in ctx.nodes(cst.Call):
            name = ctx.keras_name(call.func)
            if name in INPUTS and self._takes_strings(ctx, call):
                models = self._models_of(ctx, call)
                on_host = host_only(ctx, models)
                if models and on_host == models:
                    continue  # a preprocessing model the tf.data pipeline runs
                string_inputs.add(id(call))
                if models and models <= models_reported:
                    continue
                models_reported |= models
                mapped = {name for name in models if self._mapped_model(ctx, name)}
                ctx.report(self.code, call, self._strings_message(ctx, call, models - mapped, mapped), fixed=False)
            elif ctx.qualified_name(call.func) == HUB_LAYER and self._takes_strings(ctx, call):
                holder = _holder(ctx, call)
                if holder is not None and host_only(ctx, {holder}):
                    continue  # run by the tf.data pipeline, on the host already
                ctx.report(self.code, call, f"this TF Hub layer takes strings: {_hub_advice(ctx, call)}", fixed=False)
            elif name in _SEQUENTIAL or self._is_add(call):
                if self._assigned_only_to_maps(ctx, call):
                    continue
                for layer in self._layers_given(call):
                    kind = lookups.of(ctx, layer)
                    if kind is not None and _layer_key(ctx, layer) not in reported:
                        reported.add(_layer_key(ctx, layer))
                        doing, advice = lookups.what(kind)
                        ctx.report(self.code, layer, f"`{code_of(ctx, layer)}` in the model {doing}: {advice}",
                                   fixed=False)
        self._report_functional_calls(ctx, lookups, reported, string_inputs)

    def _report_functional_calls(self, ctx, lookups: _Lookups, reported: set, string_inputs: Set[int]) -> None:
        """A lookup layer called on the symbolic tensors of a functional model (``lookup(inputs["sex"])``),
        unless the model is one the tf.data pipeline runs or the layer only reads string inputs
        reported already."""
        for call in ctx.nodes(cst.Call):
            kind = lookups.of(ctx, call.func) if call.args and not call.args[0].keyword else None
            if kind is None or _layer_key(ctx, call.func) in reported:
                continue
            inputs = keras_inputs_of(ctx, call.args[0].value)
            models = {model for found in inputs for model in self._models_of(ctx, found)}
            if not inputs or all(id(found) in string_inputs for found in inputs) or (
                    models and host_only(ctx, models) == models):
                continue
            reported.add(_layer_key(ctx, call.func))
            # the call as written, with a construction's arguments left out: `StringLookup(...)(inputs["city"])`
            layer = code_of(ctx, call.func) if isinstance(call.func, cst.Name) else f"{kind.rsplit('.', 1)[-1]}(...)"
            doing, advice = lookups.what(kind)
            ctx.report(self.code, call, f"`{layer}({code_of(ctx, call.args[0].value)})` in the model {doing}: {advice}",
                       fixed=False)

    def _report_compiled_uses(self, ctx, lookups: _Lookups, reported: set) -> None:
        """A lookup layer called in a training step of a custom loop, or in the ``call`` or
        ``train_step`` of a model subclass (``self.vectorize = TextVectorization(...)``): that code is
        compiled for the IPU."""
        steps = {id(function) for same_name in step_functions(ctx).values() for function in same_name}
        for call in ctx.nodes(cst.Call):
            # the enclosing function first: finding a held layer walks the whole class
            function = ctx.enclosing_function(call)
            if function is None or not (id(function) in steps or function.name.value in COMPILED_METHODS):
                continue
            func = call.func
            held = _held_layer(ctx, func, lookups.kinds)
            kind = held or (lookups.names.get(func.value) if isinstance(func, cst.Name) else None)
            if kind is None or not (id(function) in steps or held):
                continue
            if _layer_key(ctx, func) not in reported:
                reported.add(_layer_key(ctx, func))
                doing, advice = lookups.what(kind)
                ctx.report(self.code, call, f"`{code_of(ctx, func)}` {doing} in `{function.name.value}`, code the "
                           f"IPU must compile: {advice}", fixed=False)
        models = subclasses_of(ctx, *KERAS_MODEL_CLASSES)
        for call in ctx.nodes(cst.Call):
            if not (isinstance(call.func, cst.Name) and call.func.value in models):
                continue
            run = _parameters_run(models[call.func.value])
            for index, arg in enumerate(call.args):
                parameter = arg.keyword.value if arg.keyword is not None else run.get(index)
                if not (isinstance(arg.value, cst.Name) and arg.value.value in lookups.names
                        and parameter in run.values() and arg.value.value not in reported):
                    continue
                reported.add(arg.value.value)
                doing, advice = lookups.what(lookups.names[arg.value.value])
                ctx.report(self.code, arg, f"`{arg.value.value}`, which {doing}, is given to the model "
                           f"`{call.func.value}`, whose `call` or `train_step` runs it: {advice}", fixed=False)

    def _report_string_ops(self, ctx) -> None:
        """String ops (``tf.strings.split``, ``tf.strings.to_hash_bucket_fast``) in the ``call`` or
        ``train_step`` of a model or layer subclass, or in a custom loop's training step: code the
        IPU compiles. One finding per function, at its first string op."""
        steps = {id(function) for same_name in step_functions(ctx).values() for function in same_name}
        classes = {id(node) for node in subclasses_of(ctx, *KERAS_MODEL_CLASSES, *KERAS_LAYER_CLASSES).values()}
        done: Set[int] = set()
        for call in ctx.nodes(cst.Call):
            qualified = ctx.qualified_name(call.func) or ""
            if not (qualified.startswith(_STRINGS_MODULES) or qualified in _STRING_FUNCTIONS):
                continue
            function = ctx.enclosing_function(call)
            if function is None or id(function) in done:
                continue
            owner_class = ctx.enclosing(function, cst.ClassDef)
            compiled = id(function) in steps or (function.name.value in COMPILED_METHODS and owner_class is not None
                                                  and id(owner_class) in classes)
            if not compiled:
                continue
            done.add(id(function))
            where = f"{owner_class.name.value}.{function.name.value}" if owner_class is not None \
                else function.name.value
            ctx.report(self.code, call, f"`{code_of(ctx, call.func)}` works on strings in `{where}`, code the IPU "
                       f"must compile: {_ADVICE}", fixed=False)

    @staticmethod
    def _mapped_model(ctx, name: str) -> bool:
        """Whether the tf.data pipeline runs the model ``name`` (``preprocessor``), which may also be
        built into another model (``keras.Model(inputs, classifier(preprocessor(inputs)))``)."""
        def in_model_built(call: cst.Call) -> bool:
            return any(isinstance(node, cst.Call) and ctx.keras_name(node.func) in _MODELS for node in ctx.ancestors(call))
        return bool(host_only(ctx, {name})) or bool(host_only(ctx, {name}, in_model_built)) and any(
            isinstance(node, cst.Call) and is_name(node.func, name) and not in_model_built(node)
            for node in ctx.nodes(cst.Call))

    @staticmethod
    def _strings_message(ctx, input_call: cst.Call, on_device: Set[str], on_host: Set[str]) -> str:
        """What a model that takes strings must change; where the same inputs also make a preprocessing
        model that the tf.data pipeline runs (``preprocessor``), the models that wrap it (an end-to-end
        model for raw rows) are named, with the split that already works: the pipeline's output fed to
        the trained model."""
        if not (on_device and on_host):
            return f"the model takes strings (`{code_of(ctx, input_call)}`): {_ADVICE}"
        wrapping = ", ".join(f"`{name}`" for name in sorted(on_device))
        host = ", ".join(f"`{name}`" for name in sorted(on_host))
        subject = f"the model {wrapping} takes" if len(on_device) == 1 else f"the models {wrapping} take"
        return (f"{subject} strings (`{code_of(ctx, input_call)}`) and runs on the IPU what the `tf.data` "
                f"pipeline runs on the host with {host}: string ops do not run on the IPU {_UNSUPPORTED}; give the "
                f"trained model what {host} makes in the `tf.data` pipeline (`dataset.map`), also for the rows to "
                f"predict, instead of running {wrapping} on the raw columns")

    @staticmethod
    def _models_of(ctx, input_call: cst.Call) -> set:
        """The names of the models built on an ``Input``: ``keras.Model(...)`` or ``Sequential([...])``
        calls assigned to a name that mention the input (or the variable or container that holds it)."""
        variable = _holder(ctx, input_call)
        models = set()
        for call in ctx.nodes(cst.Call):
            if ctx.keras_name(call.func) in _MODELS and any(
                    node is input_call or isinstance(node, cst.Name) and node.value == variable
                    for arg in call.args for node in walk(arg.value)):
                models |= _model_names(ctx, call)
        return models

    @staticmethod
    def _assigned_only_to_maps(ctx, call: cst.Call) -> bool:
        """``preprocess = Sequential([lookup, ...])`` that only the tf.data pipeline runs."""
        parent = ctx.parent(call)
        return isinstance(parent, cst.Assign) and isinstance(parent.targets[0].target, cst.Name) and bool(
            host_only(ctx, {parent.targets[0].target.value}))

    @staticmethod
    def _takes_strings(ctx, call: cst.Call) -> bool:
        dtype = keyword(call, "dtype")
        if dtype is None:
            return False
        value = dtype.value
        if isinstance(value, cst.SimpleString):
            return value.evaluated_value == "string"
        return ctx.qualified_name(value) in _STRING_DTYPES

    @staticmethod
    def _is_add(call: cst.Call) -> bool:
        return isinstance(call.func, cst.Attribute) and call.func.attr.value == "add" and len(call.args) == 1

    @staticmethod
    def _layers_given(call: cst.Call):
        """The layers of ``Sequential([...])``, or the one of ``model.add(layer)``."""
        if not call.args:
            return []
        first = call.args[0].value
        if isinstance(first, (cst.List, cst.Tuple)):
            return [element.value for element in first.elements if isinstance(element, cst.Element)]
        return [first] if isinstance(call.func, cst.Attribute) else []


RULE = StringModel()
