"""Swapping Keras layers for the IPU layers of ``ipu_tensorflow_addons.keras.layers`` (Targeting
the IPU from TensorFlow 2, "IPU TensorFlow Addons"), shared by IPU104 (LSTM, GRU) and IPU112
(Embedding, Dropout): finding the layer calls under any import spelling, reading their arguments,
passing positional arguments by keyword, the ``ipu_layers`` import, whether a mask reaches a layer,
and dropping imports the swaps leave unused.
"""

from __future__ import annotations

from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import libcst as cst

from porter.context import FileContext, SharedKey, canonical_keras, code_of, dotted_name, import_bindings, walk
from porter.cstutil import append_args, argument, is_name, keyword, keyword_arg, method_of, string_value
from porter.rules.keras._analysis.keras1 import CHANGED_KEYWORDS, LAYER_KEYWORDS
from porter.rules.keras._analysis.util import (INPUTS, is_literal_false, keras_subclasses, last_name,
                                               self_attribute_values)
from porter.rules.keras._analysis.fit import last_value_before
from porter.scopes import called_returns, is_module_function, local_calls, owner, parameter_names, values_of

ADDONS = "ipu_tensorflow_addons.keras"
ADDONS_LAYERS = ADDONS + ".layers"
ALIAS = "ipu_layers"

MASKING = "keras.layers.Masking"
EMBEDDING = "keras.layers.Embedding"
SEQUENTIAL = ("keras.Sequential", "keras.models.Sequential")

_MASKS: SharedKey[List[cst.Call]] = SharedKey("keras-masks")
# The path of the file's first `load_weights` from a path it does not save to (pretrained weights).
_UNSAVED_WEIGHTS: SharedKey[Optional[str]] = SharedKey("unsaved-weights")
# The names each ``from ... import`` lost to the swaps so far, by the import's id: IPU104 and IPU112
# drop names from the same import, and whichever drops the last removes it whole.
ADDONS_DROPPED: SharedKey[Dict[int, List[str]]] = SharedKey("addons-dropped", dict)


class Unsafe(Exception):
    """Why a layer cannot be swapped (the message completes "not swapped: ...")."""


# An older class of a layer (Keras' v1 `LSTM`): its positional order, the defaults it differs in
# from the IPU layer (parameter -> code), and how the report names it.
OlderLayer = Tuple[Sequence[str], Dict[str, str], str]


# The modules of Keras 2 that define the layers, under which old scripts import them
# (`from keras.layers.core import Dropout`, `from keras.layers.recurrent import GRU`): the same
# classes as `keras.layers`' (the recurrent module's are their v1 forms).
_LAYER_MODULES = {"LSTM": ("recurrent", "recurrent_v2"), "GRU": ("recurrent", "recurrent_v2"),
                  "Dropout": ("core",), "Embedding": ("embeddings",)}


def layer_names(layers: Sequence[str]) -> Dict[str, str]:
    """Canonical Keras name -> layer, for the layers named in ``layers`` and their module paths."""
    names = {f"keras.layers.{layer}": layer for layer in layers}
    names.update({f"keras.layers.{module}.{layer}": layer for layer in layers
                  for module in _LAYER_MODULES.get(layer, ())})
    return names


def layer_calls(ctx: FileContext, layers: Sequence[str]) -> Iterator[Tuple[cst.Call, str]]:
    """``(call, layer)`` for the calls of the Keras layers named in ``layers`` (``"LSTM"``...),
    under any import spelling."""
    wanted = layer_names(layers)
    spellings = set(layers)
    for node_type in (cst.Import, cst.ImportFrom):
        for node in ctx.nodes(node_type):
            spellings.update(local for local, full in import_bindings(node) if canonical_keras(full) in wanted)
    for call in ctx.nodes(cst.Call):
        if last_name(call.func) in spellings:
            name = ctx.keras_name(call.func)
            if name in wanted:
                yield call, wanted[name]


def bound_arguments(call: cst.Call, order: Sequence[str], layer: str = "") -> Dict[str, cst.BaseExpression]:
    """Parameter name -> value for a constructor call of the Keras ``layer`` whose positional order
    is ``order``, a Keras 1 keyword under its Keras 2 name (``LSTM(dropout_W=0.2)`` gives
    ``dropout``: IPU115 renames it); raises ``Unsafe`` when the arguments cannot be read."""
    if any(arg.star for arg in call.args):
        raise Unsafe("its `*args`/`**kwargs` cannot be read")
    positional = [arg for arg in call.args if arg.keyword is None]
    if len(positional) > len(order):
        raise Unsafe("it has more positional arguments than Keras takes")
    renames = LAYER_KEYWORDS.get(layer, {})
    values = {order[index]: arg.value for index, arg in enumerate(positional)}
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in CHANGED_KEYWORDS:
            raise Unsafe(f"it takes the Keras 1 keyword `{arg.keyword.value}`, which Keras 2 does not (IPU115)")
        if arg.keyword is not None:
            values[renames.get(arg.keyword.value, arg.keyword.value)] = arg.value
    return values


def addons_alias(ctx: FileContext) -> Optional[str]:
    """The name under which the addons layers module is (or will be) imported; None when the
    usual name is taken by something else."""
    for local, full in ctx.aliases.items():
        if full == ADDONS_LAYERS:
            return local
    if any(node.value == ALIAS for node in ctx.nodes(cst.Name)):
        return None
    return ALIAS


def swap_layers(ctx: FileContext, code: str, layers: Sequence[str],
                unsafe_reason: Callable[[FileContext, cst.Call, str], Optional[str]],
                orders: Dict[str, Sequence[str]], keep_positional: Optional[int] = 1,
                older: Optional[Callable[[FileContext, cst.Call, str], Optional[OlderLayer]]] = None) -> None:
    """Swap each call of the Keras ``layers`` for the IPU layer, or report why not (the reason
    ``unsafe_reason`` gives); then drop the imports the swaps leave unused. ``keep_positional``:
    how many positional arguments stay positional (None: all, the orders being the same).
    ``older``: for a call of an older class of the layer, its positional order and the defaults
    it differs in, which the IPU layer is given when the call does not set them."""
    swapped_funcs = set()
    local = addons_alias(ctx)
    for call, layer in layer_calls(ctx, layers):
        reason = unsafe_reason(ctx, call, layer)
        if reason is None and local is None:
            reason = f"the name `{ALIAS}` is taken in this file"
        if reason is None:
            reason = _file_problem(ctx, layer)
        if reason is not None:
            ctx.report(code, call, f"`{layer}` not swapped for `ipu_tensorflow_addons.keras.layers."
                       f"{layer}`: {reason} "
                       "(Targeting the IPU from TensorFlow 2, \"IPU TensorFlow Addons\")", fixed=False)
            continue
        order, defaults, older_class = orders[layer], {}, None
        found = older(ctx, call, layer) if older is not None else None
        if found is not None:
            order, defaults, older_class = found
            given = bound_arguments(call, order, layer)
            defaults = {name: value for name, value in defaults.items() if name not in given}
        keywords = swap(ctx, code, call, layer, local, order, _kept(order, keep_positional), defaults)
        extra = f", with {', '.join(f'`{name}`' for name in keywords)} passed by keyword" if keywords else ""
        extra += _defaults_note(defaults, older_class, "given")
        ctx.report(code, call, f"`{layer}` becomes `ipu_tensorflow_addons.keras.layers.{layer}`{extra}", fixed=True)
        swapped_funcs.add(id(call.func))
    for held, layer, calls in held_classes(ctx, layers):
        swapped_funcs.update(_swap_held_class(ctx, code, held, layer, calls, unsafe_reason, local, orders[layer],
                                              keep_positional, older))
    drop_unused_imports(ctx, code, swapped_funcs, layers)
    # Only the recurrent layers are saved under a class name of their own, which a loader must be given.
    swapped = [layer for call, layer in layer_calls(ctx, layers) if id(call.func) in swapped_funcs
               and layer in _SAVED_CLASS]
    if swapped:
        _note_saves(ctx, code, local, sorted(set(swapped)))


# Calls that save a whole model (`tf.saved_model.save(model, path)`) or its weights, given the model first.
_MODEL_SAVERS = ("keras.models.save_model", "tensorflow.saved_model.save")


def _note_saves(ctx: FileContext, code: str, local: str, layers: List[str]) -> None:
    """A model the port swapped IPU ``layers`` into is saved by this file (which does not reload it,
    or the swap would not be made): whatever loads the file or the weights it writes needs those
    classes and an IPU, which the script that loads them does not say by itself."""
    trained = {code_of(ctx, receiver) for call in ctx.nodes(cst.Call)
               for receiver in [method_of(call, "fit", "compile")] if receiver is not None}
    classes = ", ".join(f"`{local}.{layer}` (saved as `{_SAVED_CLASS[layer]}`)" for layer in layers)
    for call in ctx.nodes(cst.Call):
        receiver = method_of(call, "save", "save_weights")
        saved = (receiver if receiver is not None and ctx.qualified_name(call.func) is None
                 else call.args[0].value if ctx.keras_name(call.func) in _MODEL_SAVERS and call.args else None)
        checkpoint = ctx.keras_name(call.func) == "keras.callbacks.ModelCheckpoint"
        if not checkpoint and (saved is None or code_of(ctx, saved) not in trained):
            continue
        ctx.report(code, call, f"the model this saves holds {classes} in place of Keras' layer: a script that "
                   "loads the file it writes must build the model with the same IPU layer, or load it with "
                   "`custom_objects` that name its class, and run on an IPU", fixed=False, severity="note")


def _kept(order: Sequence[str], keep_positional: Optional[int]) -> int:
    """How many positional arguments stay positional (``keep_positional`` None: all)."""
    return len(order) if keep_positional is None else keep_positional


def _defaults_note(defaults: Dict[str, str], older_class: Optional[str], how: str) -> str:
    """``, and `reset_after=False` given, the default of ...``: what the report says of the
    defaults of an older class that the IPU layer was given."""
    if not defaults:
        return ""
    return (f", and {', '.join(f'`{name}={value}`' for name, value in defaults.items())} {how}, "
            f"the default{'s' if len(defaults) > 1 else ''} of {older_class}, not of the IPU layer")


def held_classes(ctx: FileContext, layers: Sequence[str]) -> Iterator[Tuple[cst.Assign, str, List[cst.Call]]]:
    """``RNN = layers.LSTM`` (a class of ``layers`` held in a variable, for scripts to try another
    one): the assignment, the layer, and the calls ``RNN(...)`` of that variable, when they read
    only that value."""
    wanted = layer_names(layers)
    for assign in ctx.nodes(cst.Assign):
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
            continue
        layer = wanted.get(ctx.keras_name(assign.value) or "")
        if layer is None:
            continue
        held = assign.targets[0].target.value
        calls = [call for call in ctx.nodes(cst.Call) if is_name(call.func, held)]
        if calls and all(values_of(ctx, call.func) == [assign.value] for call in calls):
            yield assign, layer, calls


def _swap_held_class(ctx: FileContext, code: str, assign: cst.Assign, layer: str, calls: List[cst.Call],
                     unsafe_reason, local: Optional[str], order: Sequence[str], keep_positional: Optional[int],
                     older) -> List[int]:
    """Hold the IPU class in the variable instead, its calls' positional arguments after the first
    ``keep_positional`` passed by keyword, when every call of it may be swapped; else report why
    not, at the calls that cannot be. Returns the ids of the names the assignment read, once swapped."""
    name = assign.targets[0].target.value
    reasons = [(call, unsafe_reason(ctx, call, layer)) for call in calls]
    unsafe = [(call, reason) for call, reason in reasons if reason is not None]
    if not unsafe and local is None:
        unsafe = [(calls[0], f"the name `{ALIAS}` is taken in this file")]
    elif not unsafe:
        unsafe = [(calls[0], _file_problem(ctx, layer))]
    unsafe = [(call, reason) for call, reason in unsafe if reason is not None]
    for call, reason in unsafe:
        ctx.report(code, call, f"`{layer}` (the class `{name}` holds, for all its calls) not swapped for "
                   f"`ipu_tensorflow_addons.keras.layers.{layer}`: {reason} "
                   "(Targeting the IPU from TensorFlow 2, \"IPU TensorFlow Addons\")", fixed=False)
    if unsafe:
        return []
    found = older(ctx, calls[0], layer) if older is not None else None
    order, defaults, older_class = found if found is not None else (order, {}, None)
    kept, keywords = _kept(order, keep_positional), set()
    for call in calls:
        given = bound_arguments(call, order, layer)
        added = [keyword_arg(key, cst.parse_expression(value)) for key, value in defaults.items() if key not in given]
        keywords.update(order[kept:len([arg for arg in call.args if arg.keyword is None])])
        ctx.replace(call, lambda node, added=added: append_args(keywordize(node, order, kept), *added))
    ctx.replace(assign.value, cst.Attribute(value=cst.Name(local), attr=cst.Name(layer)))
    if local == ALIAS:
        ctx.add_import(ADDONS, "layers", ALIAS, code=code)
    extra = f", its calls passing {', '.join(f'`{key}`' for key in order if key in keywords)} by keyword" \
        if keywords else ""
    extra += _defaults_note(defaults, older_class, f"given where they do not set {'them' if len(defaults) > 1 else 'it'}")
    ctx.report(code, assign, f"`{name}` holds `ipu_tensorflow_addons.keras.layers.{layer}` instead of "
               f"Keras' `{layer}`{extra}", fixed=True)
    return [id(node) for node in walk(assign.value) if isinstance(node, cst.Name)]


# Keras' loaders of a saved model: they rebuild each layer from its class name, so a layer class that
# is not Keras' own must be given to them (`custom_objects`).
_LOADERS = ("keras.models.load_model", "keras.saving.load_model", "keras.models.model_from_json",
            "keras.models.model_from_config")


# The class name a model saved with the IPU layer records (`LSTM` is an alias of `PopnnLSTM`).
_SAVED_CLASS = {"LSTM": "PopnnLSTM", "GRU": "PopnnGRU"}


# TensorFlow Lite's converters: they have no kernels for the IPU's own ops, which the IPU layers run.
_TFLITE_CONVERTERS = ("tensorflow.lite.TFLiteConverter", "tensorflow.compat.v1.lite.TFLiteConverter")


def _file_problem(ctx: FileContext, layer: str) -> Optional[str]:
    """Why the IPU ``layer`` must not replace Keras' one in this file, for what the file does with
    the model after training (reloads it, loads weights into it, converts it), if so."""
    return _reload_problem(ctx, layer) or _weights_problem(ctx, layer) or _conversion_problem(ctx)


def _conversion_problem(ctx: FileContext) -> Optional[str]:
    """A file that converts a model to TensorFlow Lite: a model built with an IPU layer holds ops
    that only the IPU runs, and the conversion fails on them."""
    for call in ctx.nodes(cst.Call):
        name = ctx.qualified_name(call.func) or ""
        if name.startswith(_TFLITE_CONVERTERS):
            return (f"this file converts a model to TensorFlow Lite (`{code_of(ctx, call.func)}`), which has no "
                    "kernels for the IPU's own ops that the IPU layer runs, so the model would no longer convert")
    return None


def _reload_problem(ctx: FileContext, layer: str) -> Optional[str]:
    """Why a model saved with the IPU ``layer`` could not be reloaded by this file's loaders, if so:
    a loader given no ``custom_objects``, or a dict of them that does not name the layer's class."""
    saved = _SAVED_CLASS.get(layer, layer)
    for call in ctx.nodes(cst.Call):
        name = ctx.keras_name(call.func)
        if name not in _LOADERS:
            continue
        loader = name.rsplit(".", 1)[-1]
        objects = keyword(call, "custom_objects")
        if objects is None:
            return (f"this file reloads a saved model with `{loader}` and no `custom_objects`, "
                    "which a model saved with the IPU layer would need to name its class")
        keys = _literal_keys(ctx, objects.value)
        if keys is not None and not {saved, layer} & keys:
            return (f"this file reloads a saved model with `{loader}` and `custom_objects` that do not map "
                    f"`{saved}`, the class name a model saved with the IPU layer records, to the IPU class; to "
                    "swap it by hand, add "
                    f"`\"{saved}\": ipu_layers.{layer}` to them")
    return None


def _weights_problem(ctx: FileContext, layer: str) -> Optional[str]:
    """Why the IPU ``layer`` must not replace a Keras one that gets saved weights: a file that loads
    weights (``model.load_weights(path)``) from a path it does not save to itself loads weights a
    Keras layer wrote (a pretrained network), and the IPU layer is another class, named otherwise."""
    saved = _SAVED_CLASS.get(layer)
    path = ctx.shared(_UNSAVED_WEIGHTS, lambda: _unsaved_weights(ctx)) if saved is not None else None
    if path is None:
        return None
    return (f"this file loads weights it does not save, with `load_weights({path})`, "
            f"weights saved from Keras' `{layer}` (pretrained): the IPU layer is another class (`{saved}`), "
            "with a layer name of its own (`by_name=True` skips it) and its own variables, which those "
            "weights are not known to fit; keep it, or swap it by hand and convert the weights")


def _unsaved_weights(ctx: FileContext) -> Optional[str]:
    """The path, as written, of the file's first ``load_weights(path)`` from a path it does not save
    weights to itself (the same for every layer: worked out once per file), if any."""
    loads = [call for call in ctx.nodes(cst.Call) if method_of(call, "load_weights") is not None]
    if not loads:
        return None
    written = {code_of(ctx, arg.value) for call in ctx.nodes(cst.Call) for arg in _saved_paths(ctx, call)}
    for call in loads:
        path = argument(call, "filepath", 0)
        if path is not None and code_of(ctx, path.value) not in written and not (
                written and _latest_checkpoint(ctx, path.value)):
            return code_of(ctx, path.value)
    return None


def _latest_checkpoint(ctx: FileContext, path: cst.BaseExpression) -> bool:
    """``tf.train.latest_checkpoint(folder)``: the newest of the checkpoints a file that saves weights
    writes there."""
    return isinstance(path, cst.Call) and ctx.qualified_name(path.func) == "tensorflow.train.latest_checkpoint"


def _saved_paths(ctx: FileContext, call: cst.Call) -> List[cst.Arg]:
    """The path argument of a call that saves weights: ``model.save_weights(path)``,
    ``keras.callbacks.ModelCheckpoint(path)``."""
    if method_of(call, "save_weights") is not None or ctx.keras_name(call.func) == "keras.callbacks.ModelCheckpoint":
        found = argument(call, "filepath", 0)
        return [found] if found is not None else []
    return []


def _literal_keys(ctx: FileContext, value: cst.BaseExpression) -> Optional[set]:
    """The keys of ``{"f1": f1}`` (or of a variable assigned only that), when every key is a
    string literal and nothing is unpacked into the dict; else None."""
    if isinstance(value, cst.Name):
        value = _only_value(ctx, value)
    if not isinstance(value, cst.Dict):
        return None
    keys = [string_value(element.key) if isinstance(element, cst.DictElement) else None
            for element in value.elements]
    return None if None in keys else set(keys)


def swap(ctx: FileContext, code: str, call: cst.Call, layer: str, local: str, order: Sequence[str],
         keep_positional: int = 1, defaults: Optional[Dict[str, str]] = None) -> List[str]:
    """Make ``call`` a call of ``<local>.<layer>``, the positional arguments after the first
    ``keep_positional`` passed by keyword, and the keyword arguments ``defaults`` (name -> code)
    added; returns the names of the arguments passed by keyword."""
    positional = [arg for arg in call.args if arg.keyword is None]
    keywords = list(order[keep_positional:len(positional)])
    new_func = cst.Attribute(value=cst.Name(local), attr=cst.Name(layer))
    added = [keyword_arg(name, cst.parse_expression(value)) for name, value in (defaults or {}).items()]
    ctx.replace(call, lambda node: append_args(keywordize(node, order, keep_positional), *added)
                .with_changes(func=new_func))
    if local == ALIAS:
        ctx.add_import(ADDONS, "layers", ALIAS, code=code)
    return keywords


def keywordize(call: cst.Call, order: Sequence[str], keep_positional: int = 1) -> cst.Call:
    """Every positional argument after the first ``keep_positional`` passed by keyword, keeping
    commas and spacing."""
    args = list(call.args)
    position = 0
    for index, arg in enumerate(args):
        if arg.keyword is not None or arg.star:
            continue
        if position >= keep_positional:
            args[index] = arg.with_changes(
                keyword=cst.Name(order[position]),
                equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                      whitespace_after=cst.SimpleWhitespace("")),
            )
        position += 1
    return call.with_changes(args=args)


def dtype_name(ctx: FileContext, value: cst.BaseExpression) -> Optional[str]:
    """``"int32"`` for ``"int32"``, ``tf.int32`` or ``np.int32``; None when it cannot be read."""
    spelled = string_value(value)
    if spelled is None and isinstance(value, cst.Attribute):
        qualified = ctx.qualified_name(value) or ""
        spelled = qualified.rsplit(".", 1)[-1] if qualified.startswith(("tensorflow.", "numpy.")) else None
    return spelled


# ------------------------------------------------------------------------------ masks
def makes_mask(ctx: FileContext, node) -> bool:
    """True for a ``Masking`` layer, an ``Embedding`` whose ``mask_zero`` is not False, or a layer
    class of the file that computes a mask of its own."""
    return isinstance(node, cst.Call) and (_keras_mask_layer(ctx, node) or _computes_mask(ctx, node))


def _keras_mask_layer(ctx: FileContext, call: cst.Call) -> bool:
    name = ctx.keras_name(call.func)
    if name == MASKING:
        return True
    if name == EMBEDDING:
        mask_zero = argument(call, "mask_zero", 6)
        return mask_zero is not None and not is_literal_false(mask_zero.value)
    return False


def _computes_mask(ctx: FileContext, call: cst.Call) -> bool:
    """``TokenEmbedding(vocab, 64)``, a Keras layer class of the file that holds a mask-making
    layer (whose output, returned as it is, keeps its mask) or defines ``compute_mask`` (a token
    embedding that hands on its inner embedding's mask after adding positions): Keras gives the
    class's output a mask, unless ``compute_mask`` only returns None."""
    layer_class = keras_subclasses(ctx).get(call.func.value) if isinstance(call.func, cst.Name) else None
    if layer_class is None or not isinstance(layer_class.body, cst.IndentedBlock):
        return False
    method = next((statement for statement in layer_class.body.body if isinstance(statement, cst.FunctionDef)
                   and statement.name.value == "compute_mask"), None)
    if method is None:
        return any(isinstance(node, cst.Call) and _keras_mask_layer(ctx, node) for node in walk(layer_class))
    returned = [node.value for node in walk(method) if isinstance(node, cst.Return)]
    return not all(value is None or is_name(value, "None") for value in returned)


# Layers that take a mask and give none on (Keras' `compute_mask`): a recurrent layer that returns
# its last output only, and the average over the masked steps.
_RECURRENT = frozenset({"keras.layers.LSTM", "keras.layers.GRU", "keras.layers.SimpleRNN"})
_MASK_ENDS = frozenset({"keras.layers.GlobalAveragePooling1D", "keras.layers.GlobalAvgPool1D"})


def ends_mask(ctx: FileContext, layer: cst.Call) -> bool:
    """Whether the layer ``layer`` makes consumes the mask it gets: ``LSTM(32)`` (no
    ``return_sequences=True``; also in a ``Bidirectional``), ``GlobalAveragePooling1D()``."""
    name = ctx.keras_name(layer.func)
    if name in _MASK_ENDS:
        return True
    if name == "keras.layers.Bidirectional":
        wrapped = argument(layer, "layer", 0)
        return wrapped is not None and isinstance(wrapped.value, cst.Call) and ends_mask(ctx, wrapped.value)
    if name not in _RECURRENT:
        return False
    sequences = keyword(layer, "return_sequences")
    return sequences is None or is_literal_false(sequences.value)


def sequential_prefix(ctx: FileContext, call: cst.Call) -> Optional[List[cst.Call]]:
    """The layers before ``call`` in a ``Sequential([...])`` list when they are all layer
    constructors (so the data flow is clear), else None."""
    element = ctx.parent(call)
    container = ctx.parent(element) if isinstance(element, cst.Element) else None
    arg = ctx.parent(container) if isinstance(container, cst.List) else None
    outer = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    if not isinstance(outer, cst.Call) or ctx.keras_name(outer.func) not in SEQUENTIAL:
        return None
    before = []
    for item in container.elements:
        if item is element:
            break
        if not isinstance(item.value, cst.Call):
            return None
        before.append(item.value)
    return before


def _masks(ctx: FileContext) -> List[cst.Call]:
    """Every call that makes a mask (cached per file)."""
    return ctx.shared(_MASKS, lambda: [
        node for node in ctx.nodes(cst.Call)
        if (last_name(node.func) in ("Masking", "Embedding") or isinstance(node.func, cst.Name))
        and makes_mask(ctx, node)])


def check_no_mask(ctx: FileContext, call: cst.Call) -> None:
    """Raise ``Unsafe`` when a mask (a ``mask=`` argument, an upstream ``Masking`` layer or
    ``Embedding(mask_zero=True)``) may reach the layer ``call`` makes."""
    parent = ctx.parent(call)
    if isinstance(parent, cst.Call) and parent.func is call and keyword(parent, "mask") is not None \
            or _held_and_called_with_mask(ctx, call):
        raise Unsafe("it is called with a `mask`, which the IPU layer does not support")
    sequence = sequential_prefix(ctx, call)
    if sequence is not None:
        masked = False
        for element in sequence:
            masked = makes_mask(ctx, element) or masked and not ends_mask(ctx, element)
        if masked:
            raise Unsafe("a `Masking` layer or `Embedding(mask_zero=True)` feeds it a mask")
        return
    applied = layer_applications(ctx, call)
    if applied:  # functional: LSTM(...)(inputs), or rnn = LSTM(...) then rnn(inputs)
        masked = Tracer(ctx).any_masked([arg.value for application in applied for arg in application.args])
        if masked:
            raise Unsafe("a mask reaches it (from a `Masking` layer, `Embedding(mask_zero=True)`, a layer class of "
                         "the file that holds one or has a `compute_mask`, or a layer given `mask=`)")
        if masked is False:
            return
    region = _region(ctx, call)
    if any(_region(ctx, mask) is region if region is None else
           any(ancestor is region for ancestor in ctx.ancestors(mask)) for mask in _masks(ctx)):
        raise Unsafe("a `Masking` layer or `Embedding(mask_zero=True)` in the same model may feed it a mask")
    if isinstance(region, cst.ClassDef) and any(isinstance(_region(ctx, mask), cst.ClassDef) for mask in _masks(ctx)):
        # Layer classes are put together in other classes: a mask one makes reaches the next.
        raise Unsafe("a layer class of the file makes a mask (`Embedding(mask_zero=True)`, `Masking`), which may "
                     "reach this one through the model that puts them together")


def layer_applications(ctx: FileContext, call: cst.Call) -> List[cst.Call]:
    """The calls that apply the layer ``call`` makes: ``LSTM(8)(x)`` itself, or ``rnn(x)`` and
    ``self.rnn(x)`` for a layer held in a variable or attribute; empty when out of sight."""
    parent = ctx.parent(call)
    return [parent] if isinstance(parent, cst.Call) and parent.func is call else _applications(ctx, call)


def _applications(ctx: FileContext, call: cst.Call) -> List[cst.Call]:
    """``rnn = layers.GRU(8)`` in a function (or the module): the calls ``rnn(x)`` there that apply
    the layer ``call`` makes; empty when the variable may hold something else or is not applied."""
    assign = ctx.parent(call)
    if not (isinstance(assign, cst.Assign) and assign.value is call and len(assign.targets) == 1):
        return []
    if _is_self_attribute(assign.targets[0].target):
        return _attribute_applications(ctx, call, assign.targets[0].target.attr.value)
    if not isinstance(assign.targets[0].target, cst.Name):
        return []
    held = assign.targets[0].target.value
    scope = owner(ctx, call)
    applied = [node for node in walk(scope) if isinstance(node, cst.Call) and is_name(node.func, held)
               and owner(ctx, node) is scope]
    if not applied or not all(_only_value(ctx, node.func) is call for node in applied):
        return []
    # Used otherwise too (`model.add(rnn)`, `TimeDistributed(rnn)`, `return rnn`): its input is out of sight.
    uses = [node for node in walk(scope) if isinstance(node, cst.Name) and node.value == held and _is_use(ctx, node)
            and not isinstance(ctx.parent(node), cst.AssignTarget)]
    if len(uses) != len(applied):
        return []
    return applied


def _is_self_attribute(node: cst.BaseExpression, attribute: Optional[str] = None) -> bool:
    return isinstance(node, cst.Attribute) and is_name(node.value, "self") and (
        attribute is None or node.attr.value == attribute)


def _attribute_applications(ctx: FileContext, call: cst.Call, attribute: str) -> List[cst.Call]:
    """``self.rnn = layers.GRU(8)`` in a class: the calls ``self.rnn(x)`` of its methods, when
    ``self.rnn`` is assigned once and used for nothing else."""
    owner_class = ctx.enclosing(call, cst.ClassDef)
    if owner_class is None:
        return []
    nodes = [node for node in walk(owner_class) if _is_self_attribute(node, attribute)]
    assigned = [node for node in nodes if isinstance(ctx.parent(node), cst.AssignTarget)]
    applied = [ctx.parent(node) for node in nodes
               if isinstance(ctx.parent(node), cst.Call) and ctx.parent(node).func is node]
    if len(assigned) != 1 or len(applied) + 1 != len(nodes):
        return []
    return applied


def _only_value(ctx: FileContext, name: cst.Name) -> Optional[cst.BaseExpression]:
    values = values_of(ctx, name)
    return values[0] if len(values) == 1 else None


def _held_and_called_with_mask(ctx: FileContext, call: cst.Call) -> bool:
    """``self.gru = layers.GRU(16)`` in a class whose methods call ``self.gru(x, mask=mask)``."""
    assign = ctx.parent(call)
    if not (isinstance(assign, cst.Assign) and assign.value is call):
        return False
    held = [target.target.attr.value for target in assign.targets if isinstance(target.target, cst.Attribute)
            and is_name(target.target.value, "self")]
    owner = ctx.enclosing(call, cst.ClassDef)
    return bool(held) and owner is not None and any(
        isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in held
        and is_name(node.func.value, "self") and keyword(node, "mask") is not None for node in walk(owner))


def _region(ctx: FileContext, node):
    return ctx.enclosing(node, cst.ClassDef) or ctx.enclosing_function(node)


class Tracer:
    """Follows a functional model's tensors back to where they come from, within a function and
    through the file's helper functions (into what a helper returns, and from a helper's parameter
    to the arguments its callers give): True when a mask-making layer is upstream, False when every
    path ends at a `keras.Input` or a constant, None when a path is lost (a loop, a method...)."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.seen: set = set()
        # The calls of the helpers being followed, innermost last: a parameter of the helper is
        # what the call gives it.
        self.calls: List[Tuple[cst.FunctionDef, cst.Call]] = []

    def any_masked(self, nodes) -> Optional[bool]:
        results = [self.masked(node) for node in nodes]
        if any(result is True for result in results):
            return True
        return None if any(result is None for result in results) else False

    def masked(self, node) -> Optional[bool]:
        ctx = self.ctx
        # A helper's code is followed once per call of it being followed (its parameters differ).
        key = (id(node), tuple(id(call) for _, call in self.calls))
        if key in self.seen:
            return False  # already followed: whatever is upstream of it is found there
        if len(self.seen) > 200 or len(self.calls) > 8:
            return None
        self.seen.add(key)
        if isinstance(node, cst.Call):
            if makes_mask(ctx, node):
                return True
            if isinstance(node.func, cst.Call):  # Layer(...)(inputs): masks pass through layers
                return self._through_layers([node.func], node)
            name = ctx.keras_name(node.func)
            if name in INPUTS:
                return False
            if name is not None and name.startswith("keras.layers."):  # layers.concatenate([a, b])
                return self.any_masked([arg.value for arg in node.args])
            held = self._held_layers(node.func)
            if held:  # embed = layers.Embedding(...), then embed(ids)
                return self._through_layers(held, node)
            return self._helper_result(node)
        if isinstance(node, cst.Name):
            # `h = layers.LSTM(32)(h)`: the value `h` has where it is read, in straight-line code
            scope = owner(ctx, node)
            latest = last_value_before(ctx, node, scope)
            if latest is not None:
                return self.masked(latest)
            values = values_of(ctx, node)
            if isinstance(scope, cst.FunctionDef) and node.value in parameter_names(scope):
                # `x = layers.LSTM(8)(x)` in a helper: `x` is the parameter first, then what it is assigned
                results = [self._parameter(scope, node.value)]
                results += [None if value is None else self.masked(value) for value in values]
                return True if True in results else None if None in results else False
            if not values or any(value is None for value in values):
                return None
            return self.any_masked(values)
        if isinstance(node, (cst.List, cst.Tuple)):
            return self.any_masked([element.value for element in node.elements])
        if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
            return False
        return None


    def _through_layers(self, layers: List[cst.Call], call: cst.Call) -> Optional[bool]:
        """``call`` applies a layer that one of the constructor calls ``layers`` makes."""
        ctx = self.ctx
        if any(makes_mask(ctx, layer) for layer in layers):
            return True
        if all(ends_mask(ctx, layer) for layer in layers):
            return False  # whatever mask reaches it ends there
        if keyword(call, "mask") is not None:
            return True  # a layer given a mask passes it on
        return self.any_masked([arg.value for arg in call.args])

    def _held_layers(self, func: cst.BaseExpression) -> List[cst.Call]:
        """The layer constructor calls a variable ``func`` is assigned, when it is assigned nothing else."""
        if _is_self_attribute(func):  # self.rnn = layers.LSTM(8) in the class, then self.rnn(x)
            values = self_attribute_values(self.ctx, func)
        elif isinstance(func, cst.Name):
            values = values_of(self.ctx, func)
        else:
            return []
        layers = [value for value in values if isinstance(value, cst.Call)
                  and (self.ctx.keras_name(value.func) or "").startswith("keras.layers.")]
        return layers if layers and len(layers) == len(values) else []

    def _helper_result(self, call: cst.Call) -> Optional[bool]:
        """``embed(tokens)``, a helper function of the file: what its ``return``s give."""
        function, returns = called_returns(self.ctx, call)
        if function is None or not returns:
            return None
        self.calls.append((function, call))
        try:
            return self.any_masked(returns)
        finally:
            self.calls.pop()

    def _parameter(self, function: cst.FunctionDef, name: str) -> Optional[bool]:
        """The parameter ``name`` of the helper ``function``: the argument of the call being
        followed, or else the arguments of every call of it in the file."""
        followed = [call for helper, call in self.calls if helper is function]
        calls = followed[-1:] or (local_calls(self.ctx, function) if is_module_function(self.ctx, function) else [])
        positional = [param.name.value for param in (*function.params.posonly_params, *function.params.params)]
        if not calls or name not in positional or any(arg.star for call in calls for arg in call.args):
            return None  # `*args`, a keyword-only parameter, or arguments the porter cannot match
        given = [argument(call, name, positional.index(name)) for call in calls]
        if any(arg is None for arg in given):
            return None  # a default value, or a parameter the porter cannot match
        return self.any_masked([arg.value for arg in given])


# ------------------------------------------------------------------------------ imports
def drop_unused_imports(ctx: FileContext, code: str, swapped_funcs: set, layers: Sequence[str]) -> None:
    """``from keras.layers import LSTM``: once every use of a name of ``layers`` is swapped (by
    this rule; ``swapped_funcs`` holds the ids of the swapped calls' functions), the name goes.
    The names other rules dropped from the same import count, so the last one removes it whole."""
    dropped_before = ctx.shared(ADDONS_DROPPED)
    wanted = layer_names(layers)
    for node in ctx.nodes(cst.ImportFrom):
        if isinstance(node.names, cst.ImportStar) or node.relative or node.module is None:
            continue
        base = dotted_name(node.module)
        unused = []
        for alias in node.names:
            local = alias.asname.name if alias.asname is not None else alias.name
            if not isinstance(local, cst.Name) or not isinstance(alias.name, cst.Name):
                continue
            if canonical_keras(f"{base}.{alias.name.value}") not in wanted:
                continue
            uses = [name for name in ctx.nodes(cst.Name) if name.value == local.value and _is_use(ctx, name)]
            if uses and all(id(name) in swapped_funcs for name in uses):
                unused.append(alias)
        if unused:
            _remove_aliases(ctx, code, node, unused, dropped_before.setdefault(id(node), []))


def _is_use(ctx: FileContext, name: cst.Name) -> bool:
    parent = ctx.parent(name)
    if isinstance(parent, (cst.ImportAlias, cst.AsName)):
        return False
    if isinstance(parent, cst.Attribute) and parent.attr is name:
        return False
    if isinstance(parent, cst.Arg) and parent.keyword is name:
        return False
    return True


def _remove_aliases(ctx: FileContext, code: str, node: cst.ImportFrom, unused, dropped: List[str]) -> None:
    names = [alias.name.value for alias in unused]
    if len(unused) + len(dropped) == len(node.names):
        statement = ctx.statement_of(node)
        if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
            ctx.remove(statement)
            dropped.extend(names)
            ctx.report(code, node, f"removed the unused import of {', '.join(names)}", fixed=True)
        return
    gone = set(names)

    def without(updated: cst.ImportFrom) -> cst.ImportFrom:
        kept = [alias for alias in updated.names if not (isinstance(alias.name, cst.Name) and alias.name.value in gone)]
        if not kept:
            return updated
        if kept[-1] is not updated.names[-1]:  # the last name went: the new last takes its comma
            kept[-1] = kept[-1].with_changes(comma=updated.names[-1].comma)
        return updated.with_changes(names=kept)

    ctx.replace(node, without)
    dropped.extend(names)
    ctx.report(code, node, f"removed the unused import of {', '.join(names)}", fixed=True)


_BIDIRECTIONAL = "keras.layers.Bidirectional"
_WRAPPED: SharedKey[set] = SharedKey("bidirectional-layers")  # ids of the layers the wrappers get


def is_bidirectional_layer(ctx: FileContext, call: cst.Call) -> bool:
    """Whether the layer constructor ``call`` reaches a ``Bidirectional`` wrapper (see ``_bidirectional_layers``)."""
    return id(call) in ctx.shared(_WRAPPED, lambda: {id(layer) for layer in _bidirectional_layers(ctx)})


def _bidirectional_layers(ctx) -> List[cst.BaseExpression]:
    """The layer constructors the file's ``Bidirectional`` wrappers get: given directly, through a
    variable (``forward = LSTM(8)``, ``Bidirectional(forward)``) or returned by a helper function
    (``Bidirectional(rnn_block(8))``). The wrapper rebuilds the layer from its config with
    ``go_backwards`` flipped, which the IPU layer raises for, however the layer reached it."""
    found: List[cst.BaseExpression] = []
    for wrapper, _ in ctx.calls_to(_BIDIRECTIONAL):
        for arg in wrapper.args:
            found.extend(_layer_sources(ctx, arg.value))
    return found


def _layer_sources(ctx, value: cst.BaseExpression, depth: int = 0) -> List[cst.BaseExpression]:
    """``value`` itself, the values a variable ``value`` is assigned, or what the helper function
    ``value`` calls returns (followed a few steps)."""
    if depth > 3:
        return []
    if isinstance(value, cst.Name):
        sources = [source for source in values_of(ctx, value) if source is not None]
    else:
        sources = called_returns(ctx, value)[1]
    return [value] + [found for source in sources for found in _layer_sources(ctx, source, depth + 1)]
