"""IPU158: a SavedModel (or TensorFlow Hub module) loaded and called outside the IPU strategy, or held by a
Keras model whose compiled code calls it."""

from typing import Dict, Optional

import libcst as cst

from porter.context import code_of, walk
from porter.cstutil import is_name
from porter.rule import KERAS, NOTE, WARN, WARNING, Example, Rule
from porter.rules.keras._analysis.custom_loop import run_targets
from porter.rules.keras._analysis.datasets import given_arguments
from porter.rules.keras._analysis.util import (COMPILED_METHODS, KERAS_LAYER_CLASSES, KERAS_MODEL_CLASSES,
                                               SAVED_MODEL_LOADERS, called_on_text, mapped_node_ids, subclasses_of)
from porter.scopes import assignments, owner



class SavedModelCall(Rule):
    code = "IPU158"
    name = "saved-model-call"
    kind = WARN
    severity = NOTE  # the graph runs on the CPU as before: correct, only not on the IPU
    frameworks = frozenset({KERAS})
    summary = ("Note a loaded SavedModel or TensorFlow Hub module that is called on the host; warn when a Keras "
               "model calls it in code the IPU compiles.")
    rationale = (
        "`tf.saved_model.load` and `hub.load` give back the graph of a saved model as a Python object, not "
        "a Keras model: the strategy scope does not place it, and calling it (or one of its `signatures`) "
        "runs the whole graph on the CPU, so a port that only configures the IPU would claim work it does "
        "not do. To run it on the IPU, call it in a `@tf.function(jit_compile=True)` through "
        "`strategy.run(...)` inside `strategy.scope()` (Targeting the IPU from TensorFlow 2); every "
        "operation of the saved graph must then compile for the IPU, which detection models with "
        "non-maximum suppression often do not. Calls inside a function already run by `strategy.run` are "
        "not reported, nor calls in what a `dataset.map(...)` runs (the host's input pipeline, where a "
        "featurizer belongs), nor calls on strings written in the code (`encoder([\"a fine film\"])`: a text module's "
        "string ops do not run on the IPU, so the host is where they belong), nor models loaded with "
        "`keras.models.load_model` or `hub.KerasLayer`. A note: the "
        "graph runs on the CPU as it did, so `--check` passes (`--strict` fails on it). A saved model that a "
        "Keras model or layer holds (`self.embed = hub.load(url)`) and calls in `call` or `train_step` is "
        "compiled for the IPU with the model: a warning, since a text module's string ops or a detector's "
        "non-maximum suppression make the compilation fail."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf
            import tensorflow_hub as hub

            detector = hub.load("https://tfhub.dev/google/some-detector/1").signatures["default"]
            boxes = detector(tf.image.convert_image_dtype(image, tf.float32)[tf.newaxis, ...])["detection_boxes"]
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            reloaded = tf.saved_model.load("exported/scorer")
            print(reloaded.signatures["serving_default"](tf.constant(rows)))
            """,
        ),
        # Handed to a function, which runs one of its signatures through an alias.
        Example(
            """\
            import tensorflow as tf


            def embed(encoder, rows):
                serve = encoder.signatures["serving_default"]
                return serve(tf.constant(rows))


            vectors = embed(tf.saved_model.load("exported/encoder"), rows)
            """,
        ),
        # Loaded and only looked at, or loaded as a Keras model: nothing runs on the host.
        Example(
            """\
            import tensorflow as tf

            reloaded = tf.saved_model.load("exported/scorer")
            print(list(reloaded.signatures.keys()))
            model = tf.keras.models.load_model("exported/classifier")
            model.predict(rows)
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow as tf
            import tensorflow_hub as hub

            encoder = hub.load("https://tfhub.dev/google/some-encoder/1")


            @tf.function(jit_compile=True)
            def embed(batch):
                return encoder(batch)


            vectors = strategy.run(embed, args=(sentences,))
            """,
            reported=False,
        ),
        # A text module, or a reloaded text classifier, tried on sentences written in the code: strings
        # only run on the host, where the call already is.
        Example(
            """\
            import tensorflow as tf
            import tensorflow_hub as hub

            encoder = hub.load("https://tfhub.dev/google/some-sentence-encoder/4")
            print(encoder(["a fine film", "a dull film"]))
            reloaded = tf.saved_model.load("exported/text_classifier")
            reviews = tf.constant(["a fine film", "a dull film"])
            print(tf.sigmoid(reloaded.signatures["serving_default"](reviews)["classifier"]))
            """,
            reported=False,
        ),
        # Run by the tf.data pipeline, on the host, before the model gets the batches.
        Example(
            """\
            import tensorflow as tf

            featurize = tf.saved_model.load("exported/featurizer")
            train_ds = raw_train_ds.map(lambda text, label: (featurize(text), label))
            """,
            reported=False,
        ),
        # Held by a Keras model and called in `call`: compiled for the IPU with the model.
        Example(
            """\
            import tensorflow as tf
            import tensorflow_hub as hub


            class Classifier(tf.keras.Model):
                def __init__(self, url):
                    super().__init__()
                    self.embed = hub.load(url).signatures["default"]
                    self.head = tf.keras.layers.Dense(5)

                def call(self, phrases):
                    return self.head(self.embed(phrases)["default"])
            """,
        ),
        # Held, and only called by a method Keras does not compile (a host-side look at it).
        Example(
            """\
            import tensorflow as tf


            class Classifier(tf.keras.Model):
                def __init__(self, folder):
                    super().__init__()
                    self.scale = tf.saved_model.load(folder)
                    self.head = tf.keras.layers.Dense(5)

                def call(self, features):
                    return self.head(features)

                def describe(self):
                    return list(self.scale.signatures.keys())
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        if not any(ctx.qualified_name(call.func) in SAVED_MODEL_LOADERS for call in ctx.nodes(cst.Call)):
            return
        self._report_held(ctx)
        on_device = run_targets(ctx)
        reported = set()
        for call in ctx.nodes(cst.Call):
            root = _graph_root(call.func)
            if root is None or ctx.qualified_name(root) is not None or root.value in reported:
                continue
            loader = _loaded_into(ctx, root, owner(ctx, call), 0)
            if loader is None:
                continue
            function = ctx.enclosing_function(call)
            if function is not None and function.name.value in on_device or called_on_text(ctx, call) \
                    or id(call) in mapped_node_ids(ctx):
                continue  # on the IPU already, given strings only the host can run, or in the host's tf.data pipeline
            reported.add(root.value)
            ctx.report(self.code, call, f"`{code_of(ctx, call.func)}` runs a saved model loaded with "
                       f"`{loader}` on the CPU: the IPU strategy does not place it; to run it on the IPU, "
                       "call it in a `@tf.function(jit_compile=True)` through `strategy.run(...)` inside "
                       "`strategy.scope()` (every operation of the saved graph must compile for the IPU)",
                       fixed=False)

    def _report_held(self, ctx) -> None:
        """A saved model held by a Keras model or layer of the file (``self.embed =
        hub.load(url).signatures["default"]``) and called in its ``call`` or ``train_step``: Keras
        compiles that method for the IPU, the saved graph with it. One finding per held model."""
        for model in subclasses_of(ctx, *KERAS_MODEL_CLASSES, *KERAS_LAYER_CLASSES).values():
            held = _held_loaders(ctx, model)
            for call in (node for node in walk(model) if isinstance(node, cst.Call) and held):
                function = ctx.enclosing_function(call)
                attribute = _self_attribute(call.func)
                if function is None or function.name.value not in COMPILED_METHODS or attribute not in held:
                    continue
                loader = held.pop(attribute)
                ctx.report(self.code, call, f"`{code_of(ctx, call.func)}` runs a saved model loaded with `{loader}` "
                           f"in `{model.name.value}.{function.name.value}`, which Keras compiles for the IPU with "
                           "the model: every operation of the saved graph must compile for the IPU, and string "
                           "ops (a text module's tokenizer) or non-maximum suppression do not; check that it "
                           "compiles, or run it in the `tf.data` pipeline (`dataset.map`) and give the model "
                           "what it returns", fixed=False, severity=WARNING)


def _held_loaders(ctx, model: cst.ClassDef) -> Dict[str, str]:
    """The attributes of ``self`` that the methods of ``model`` assign a loaded saved model (or one
    of its signatures), with the loader's short name."""
    held = {}
    for assign in (node for node in walk(model) if isinstance(node, cst.Assign)):
        loader = _loader_of(ctx, assign.value)
        for target in assign.targets:
            attribute = _self_attribute(target.target)
            if loader is not None and attribute is not None:
                held[attribute] = loader
    return held


def _self_attribute(func: cst.BaseExpression) -> Optional[str]:
    """``embed`` for ``self.embed`` and ``self.embed.signatures["default"]``."""
    if isinstance(func, cst.Subscript) and _through_signatures(func):
        func = func.value.value
    if isinstance(func, cst.Attribute) and is_name(func.value, "self"):
        return func.attr.value
    return None


_DEPTH = 4  # how many aliases and callers a loaded model is followed through


def _graph_root(func: cst.BaseExpression) -> Optional[cst.Name]:
    """The name a call runs the graph of: ``detector`` in ``detector(x)`` and in
    ``module.signatures["default"](x)``; None for ``model.summary()``, ``model.signatures.keys()``."""
    root = func
    while isinstance(root, (cst.Subscript, cst.Attribute)):
        root = root.value
    if not isinstance(root, cst.Name) or (root is not func and not _through_signatures(func)):
        return None
    return root


def _loaded_into(ctx, name: cst.Name, scope, depth: int) -> Optional[str]:
    """The loader's short name when ``name`` (read in ``scope``) holds a loaded saved model or one of
    its signatures on every assignment of it there: directly, through an alias
    (``serve = module.signatures["default"]``), or as a parameter of a function that a call gives
    one to; None otherwise."""
    if depth > _DEPTH:
        return None
    values = [value for _, bound, value in assignments(ctx, scope) if bound == name.value]
    if values:
        loaders = [_value_loader(ctx, value, scope, depth) if value is not None else None for value in values]
        return loaders[0] if all(loaders) else None
    for given, given_scope, _ in given_arguments(ctx, name, scope, ()):
        loader = _value_loader(ctx, given, given_scope, depth)
        if loader is not None:
            return loader
    if isinstance(scope, cst.FunctionDef):  # a module variable the function reads
        return _loaded_into(ctx, name, ctx.module, depth + 1)
    return None


def _value_loader(ctx, value: cst.BaseExpression, scope, depth: int) -> Optional[str]:
    """The loader's short name when ``value`` is a loader's result (``hub.load(url)``,
    ``tf.saved_model.load(d).signatures["x"]``) or a name that holds one."""
    loader = _loader_of(ctx, value)
    if loader is not None:
        return loader
    root = value if isinstance(value, cst.Name) else _graph_root(value)
    if root is None or ctx.qualified_name(root) is not None:
        return None
    return _loaded_into(ctx, root, scope, depth + 1)


def _loader_of(ctx, value: cst.BaseExpression) -> Optional[str]:
    """``hub.load`` for ``hub.load(url)``, ``hub.load(url).signatures["default"]``..."""
    while isinstance(value, (cst.Subscript, cst.Attribute)) and not (
            isinstance(value, cst.Attribute) and ctx.qualified_name(value) is not None):
        value = value.value
    if not isinstance(value, cst.Call):
        return None
    qualified = ctx.qualified_name(value.func)
    return code_of(ctx, value.func) if qualified in SAVED_MODEL_LOADERS else None


def _through_signatures(func: cst.BaseExpression) -> bool:
    """``m.signatures["serving_default"]``, or a callable attribute of a loaded module (``m.encode``)."""
    if isinstance(func, cst.Subscript):
        return isinstance(func.value, cst.Attribute) and func.value.attr.value == "signatures"
    return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.attr.value not in (
        "summary", "keys", "items", "values", "get", "save", "variables", "trainable_variables")


RULE = SavedModelCall()
