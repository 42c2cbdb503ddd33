"""IPU158: a SavedModel (or TensorFlow Hub module) loaded and called outside the IPU strategy."""

from typing import Dict, Optional

import libcst as cst

from porter.context import code_of
from porter.rule import KERAS, NOTE, WARN, Example, Rule
from porter.rules.keras._analysis.custom_loop import run_targets
from porter.scopes import assignments, owner

# Loaders of a whole saved model as a Python object (not a Keras model, which the strategy rules
# place): calling it runs the graph it holds.
LOADERS = frozenset({"tensorflow.saved_model.load", "tensorflow.compat.v2.saved_model.load",
                     "tensorflow_hub.load"})


class SavedModelCall(Rule):
    code = "IPU158"
    name = "saved-model-call"
    kind = WARN
    severity = NOTE  # the graph runs on the CPU as before: correct, only not on the IPU
    frameworks = frozenset({KERAS})
    summary = "Note a loaded SavedModel or TensorFlow Hub module that is called on the host."
    rationale = (
        "`tf.saved_model.load` and `hub.load` give back the graph of a saved model as a Python object, not "
        "a Keras model: the strategy scope does not place it, and calling it (or one of its `signatures`) "
        "runs the whole graph on the CPU, so a port that only configures the IPU would claim work it does "
        "not do. To run it on the IPU, call it in a `@tf.function(jit_compile=True)` through "
        "`strategy.run(...)` inside `strategy.scope()` (Targeting the IPU from TensorFlow 2); every "
        "operation of the saved graph must then compile for the IPU, which detection models with "
        "non-maximum suppression often do not. Calls inside a function already run by `strategy.run` are "
        "not reported, nor models loaded with `keras.models.load_model` or `hub.KerasLayer`. A note: the "
        "graph runs on the CPU as it did, so `--check` passes (`--strict` fails on it)."
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
    )

    def run(self, ctx) -> None:
        loaded = _loaded_names(ctx)
        if not loaded:
            return
        on_device = run_targets(ctx)
        reported = set()
        for call in ctx.nodes(cst.Call):
            name = _called_model(ctx, call, loaded)
            if name is None or name in reported:
                continue
            function = ctx.enclosing_function(call)
            if function is not None and function.name.value in on_device:
                continue
            reported.add(name)
            ctx.report(self.code, call, f"`{code_of(ctx, call.func)}` runs a saved model loaded with "
                       f"`{loaded[name]}` on the CPU: the IPU strategy does not place it; to run it on the IPU, "
                       "call it in a `@tf.function(jit_compile=True)` through `strategy.run(...)` inside "
                       "`strategy.scope()` (every operation of the saved graph must compile for the IPU)",
                       fixed=False)


def _loaded_names(ctx) -> Dict[str, str]:
    """Names assigned a loaded saved model (or one of its signatures), with the loader's short name."""
    found: Dict[str, str] = {}
    for assign in ctx.nodes(cst.Assign):
        loader = _loader_of(ctx, assign.value)
        if loader is None:
            continue
        for target in assign.targets:
            if isinstance(target.target, cst.Name):
                found[target.target.value] = loader
    return found


def _loader_of(ctx, value: cst.BaseExpression) -> Optional[str]:
    """``hub.load`` for ``hub.load(url)``, ``hub.load(url).signatures["default"]``..."""
    while isinstance(value, (cst.Subscript, cst.Attribute)) and not (
            isinstance(value, cst.Attribute) and ctx.qualified_name(value) is not None):
        value = value.value
    if not isinstance(value, cst.Call):
        return None
    qualified = ctx.qualified_name(value.func)
    return code_of(ctx, value.func) if qualified in LOADERS else None


def _called_model(ctx, call: cst.Call, loaded: Dict[str, str]) -> Optional[str]:
    """The loaded name ``call`` runs: ``detector(x)``, ``module.signatures["default"](x)``, when the
    name holds the loaded model where the call is (its last assignment there)."""
    func = call.func
    while isinstance(func, (cst.Subscript, cst.Attribute)):
        func = func.value
    if not isinstance(func, cst.Name) or func.value not in loaded or ctx.qualified_name(func) is not None:
        return None
    if func is not call.func and not _through_signatures(call.func):
        return None  # `model.summary()`, `model.signatures.keys()`: not a run of the graph
    values = [value for _, name, value in assignments(ctx, owner(ctx, call)) if name == func.value]
    if values and not all(value is not None and _loader_of(ctx, value) is not None for value in values):
        return None
    return func.value


def _through_signatures(func: cst.BaseExpression) -> bool:
    """``m.signatures["serving_default"]``, or a callable attribute of a loaded module (``m.encode``)."""
    if isinstance(func, cst.Subscript):
        return isinstance(func.value, cst.Attribute) and func.value.attr.value == "signatures"
    return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.attr.value not in (
        "summary", "keys", "items", "values", "get", "save", "variables", "trainable_variables")


RULE = SavedModelCall()
