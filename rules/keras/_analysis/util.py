"""Helpers shared by the Keras rules: where data enters a model, which functions are generators,
which classes subclass Keras ones. All of it is static and local to one file."""

from __future__ import annotations

from typing import AbstractSet, Callable, Dict, Iterator, List, Optional, Set, Tuple

import libcst as cst

from porter.context import FileContext, SharedKey, code_of, walk
from porter.cstutil import argument, is_name, keyword
from porter.scopes import assignments, called_returns, local_function, owner, returns_of, values_of

# Functions that run Python (NumPy) code on the host, inside a TensorFlow graph: a compiled IPU
# program cannot call them (IPU156), and a step that does cannot be compiled (IPU111).
HOST_FUNCTIONS = (
    "tensorflow.py_function", "tensorflow.numpy_function", "tensorflow.py_func",
    "tensorflow.compat.v1.py_func", "tensorflow.compat.v1.py_function", "tensorflow.compat.v1.numpy_function",
)

# The Keras classes whose subclasses' compiled methods run in the model the IPU compiles, and
# those methods (Keras, or a custom loop, traces them into the program).
KERAS_LAYER_CLASSES = ("keras.layers.Layer", "keras.engine.base_layer.Layer")
KERAS_MODEL_CLASSES = ("keras.Model", "keras.models.Model")
COMPILED_METHODS = frozenset({"call", "train_step", "test_step", "predict_step"})

# Model methods that take data, and where their x / y arguments sit.
DATA_METHODS = ("fit", "evaluate", "predict", "train_on_batch", "test_on_batch", "predict_on_batch")
GENERATOR_METHODS = ("fit_generator", "evaluate_generator", "predict_generator")
# Keras functions that make a dataset in batches (a partial last one, an unknown batch dimension),
# and their default batch size.
KERAS_BATCHED_SOURCES = {
    "keras.utils.image_dataset_from_directory": 32,
    "keras.utils.text_dataset_from_directory": 32,
    "keras.utils.audio_dataset_from_directory": 32,
    "keras.utils.timeseries_dataset_from_array": 128,
    "keras.preprocessing.image_dataset_from_directory": 32,
    "keras.preprocessing.text_dataset_from_directory": 32,
    "keras.preprocessing.timeseries_dataset_from_array": 128,
}
# Wrappers that hand a Keras model to scikit-learn, which builds and trains it in its own calls
# (with the batch size the wrapper is given).
SKLEARN_WRAPPERS = ("tensorflow.keras.wrappers.scikit_learn.KerasClassifier",
                    "tensorflow.keras.wrappers.scikit_learn.KerasRegressor",
                    "keras.wrappers.scikit_learn.KerasClassifier", "keras.wrappers.scikit_learn.KerasRegressor",
                    "scikeras.wrappers.KerasClassifier", "scikeras.wrappers.KerasRegressor")
# `ImageDataGenerator`'s methods that give an iterator of NumPy batches read from arrays or files.
IMAGE_FLOWS = frozenset({"flow", "flow_from_directory", "flow_from_dataframe"})

# The strategy methods that run a function on each replica: `run`, and the name it had before
# TensorFlow 2.2, which the IPU strategy raises on (IPU111 renames it); a step handed to either is
# code written for a strategy.
RUN_METHODS = ("run", "experimental_run_v2")

_GENERATORS: SharedKey[Dict[str, cst.FunctionDef]] = SharedKey("keras-generators")


def is_run_call(call: cst.Call) -> bool:
    """``<strategy>.run(...)`` or ``<strategy>.experimental_run_v2(...)`` (a session's ``run`` looks
    the same: callers check what it is given)."""
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in RUN_METHODS


def last_name(node: cst.CSTNode) -> Optional[str]:
    """``LSTM`` for ``LSTM`` or ``tf.keras.layers.LSTM``: a cheap test before resolving a name."""
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Name):
        return node.value
    return None


def method_calls(ctx: FileContext, *methods: str) -> Iterator[Tuple[cst.Call, str]]:
    """Calls ``<anything>.method(...)`` for the given method names, in source order."""
    for call in ctx.nodes(cst.Call):
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in methods:
            yield call, func.attr.value


# Libraries whose estimators have their own `fit`/`predict`: a variable one of them makes is not a
# Keras model (`probe = LogisticRegression(); probe.fit(features, labels)`).
_ESTIMATOR_LIBRARIES = frozenset({"sklearn", "xgboost", "lightgbm", "catboost", "statsmodels", "scipy", "umap",
                                  "imblearn"})


def is_estimator(ctx: FileContext, receiver: cst.BaseExpression) -> bool:
    """Whether ``receiver`` (of ``receiver.fit(...)``) names a variable that a call of an
    estimator library makes, in the same function (or at module level)."""
    if not isinstance(receiver, cst.Name):
        return False
    return any(isinstance(value, cst.Call) and (ctx.qualified_name(value.func) or "").split(".")[0]
               in _ESTIMATOR_LIBRARIES
               for _, name, value in assignments(ctx, owner(ctx, receiver)) if name == receiver.value)


def data_arguments(call: cst.Call, method: str) -> List[Tuple[str, cst.BaseExpression]]:
    """The data a model method gets: ``("x", expr)``, ``("y", expr)`` and, for ``fit``, the parts
    of ``validation_data`` (``("x", ...)``, ``("y", ...)`` for a tuple or a list, else ``("validation", ...)``).
    Keras 2's ``fit_generator`` gets a generator first (IPU151 reports it), and only its
    ``validation_data`` (sixth) may be arrays, which it hands on to ``fit``."""
    found: List[Tuple[str, cst.BaseExpression]] = []
    if method == "fit_generator":
        validation = argument(call, "validation_data", 5)
    else:
        x = argument(call, "x", 0)
        if x is not None:
            found.append(("x", x.value))
        if not method.startswith("predict"):
            y = argument(call, "y", 1)
            if y is not None:
                found.append(("y", y.value))
        validation = keyword(call, "validation_data")
    if validation is not None:
        value = validation.value
        if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) in (2, 3) and not any(
            isinstance(element, cst.StarredElement) for element in value.elements
        ):
            found.append(("x", value.elements[0].value))
            found.append(("y", value.elements[1].value))
        else:
            found.append(("validation", value))
    return found


def generator_functions(ctx: FileContext) -> Dict[str, cst.FunctionDef]:
    """Functions (and methods) of the file that contain ``yield``, by name."""
    def find() -> Dict[str, cst.FunctionDef]:
        found = {}
        for node in ctx.nodes(cst.Yield):
            function = ctx.enclosing(node, (cst.FunctionDef, cst.Lambda))  # type: ignore[arg-type]
            if isinstance(function, cst.FunctionDef):
                found[function.name.value] = function
        return found

    return ctx.shared(_GENERATORS, find)


def subclasses_of(ctx: FileContext, *bases: str) -> Dict[str, cst.ClassDef]:
    """Classes of the file deriving (directly or through other classes of the file) from one
    of the Keras-canonical ``bases`` (e.g. ``keras.utils.Sequence``)."""
    return _deriving(ctx, lambda name: name in bases)


_KERAS_SUBCLASSES: SharedKey[Dict[str, cst.ClassDef]] = SharedKey("keras-subclasses")


def keras_subclasses(ctx: FileContext) -> Dict[str, cst.ClassDef]:
    """Classes of the file deriving (directly or through other classes of the file) from any
    Keras class: layers, models, callbacks, losses..."""
    return ctx.shared(_KERAS_SUBCLASSES, lambda: _deriving(
        ctx, lambda name: name is not None and name.startswith("keras.")))


def subclass_definitions(ctx: FileContext, *bases: str) -> List[cst.ClassDef]:
    """Every class statement of the file deriving from one of ``bases`` (like ``subclasses_of``):
    a notebook that defines a class of one name again (each version of ``MyModel``) gives each."""
    return _deriving_all(ctx, lambda name: name in bases)


def _deriving(ctx: FileContext, is_base) -> Dict[str, cst.ClassDef]:
    found: Dict[str, cst.ClassDef] = {}
    for node in _deriving_all(ctx, is_base):
        found.setdefault(node.name.value, node)
    return found


def library_subclass_definitions(ctx: FileContext, *bases: str) -> List[cst.ClassDef]:
    """Every class statement of the file deriving from one of the fully qualified ``bases`` of a
    library other than Keras (``tensorflow_recommenders.Model``), directly or through a class of the file."""
    return _deriving_all(ctx, lambda name: name in bases, ctx.qualified_name)


def _deriving_all(ctx: FileContext, is_base, name_of=None) -> List[cst.ClassDef]:
    """The class statements deriving from a base ``is_base`` accepts (given its Keras name, or the
    name ``name_of`` gives), directly or through a class of the file (by name), in the order they are found."""
    name_of = name_of or ctx.keras_name
    found: Dict[int, cst.ClassDef] = {}
    names: Set[str] = set()
    classes = ctx.nodes(cst.ClassDef)
    changed = True
    while changed:
        changed = False
        for node in classes:
            if id(node) in found:
                continue
            for base in node.bases:
                if is_base(name_of(base.value)) or (
                    isinstance(base.value, cst.Name) and base.value.value in names
                ):
                    found[id(node)] = node
                    names.add(node.name.value)
                    changed = True
                    break
    return list(found.values())


# Layers that look strings up or split them: ops on strings and hash tables, which the IPU has no
# kernels for, and whose output on a batch has no static batch size.
STRING_LAYERS = frozenset({
    "keras.layers.TextVectorization", "keras.layers.StringLookup",
    "keras.layers.experimental.preprocessing.TextVectorization",
    "keras.layers.experimental.preprocessing.StringLookup",
})
# Layers that look values up in a hash table or hash them (string ops): no IPU kernels either.
LOOKUP_LAYERS = STRING_LAYERS | {
    "keras.layers.IntegerLookup", "keras.layers.Hashing", "keras.layers.HashedCrossing",
    "keras.layers.experimental.preprocessing.IntegerLookup", "keras.layers.experimental.preprocessing.Hashing",
}
INPUTS = ("keras.Input", "keras.layers.Input")
_ASSIGNED_LAYERS: SharedKey[Dict[str, str]] = SharedKey("keras-assigned-layers")


def assigned_layers(ctx: FileContext, kinds: AbstractSet[str]) -> Dict[str, str]:
    """{name: layer} for the names assigned one of the Keras layers ``kinds``
    (``vectorizer = layers.TextVectorization(...)``), also through a class chosen by a condition
    (``lookup = (StringLookup if text else IntegerLookup)(...)``, or a variable holding it)."""
    def find() -> Dict[str, str]:
        names = {}
        for assign in ctx.nodes(cst.Assign):
            kind = layer_made(ctx, assign.value, kinds)
            if kind is not None:
                names.update((target.target.value, kind) for target in assign.targets
                             if isinstance(target.target, cst.Name))
        return names

    return ctx.shared(_ASSIGNED_LAYERS, find, per=frozenset(kinds))


def string_layer_names(ctx: FileContext) -> set:
    """Names assigned a string layer (``vectorizer = layers.TextVectorization(...)``)."""
    return set(assigned_layers(ctx, STRING_LAYERS))


# Loaders of a whole saved model as a Python object (not a Keras model): calling it runs the graph it
# holds, with the output shapes recorded when it was saved.
SAVED_MODEL_LOADERS = frozenset({"tensorflow.saved_model.load", "tensorflow.compat.v2.saved_model.load",
                                 "tensorflow_hub.load"})
HUB_LAYER = "tensorflow_hub.KerasLayer"


def saved_graph_names(ctx: FileContext) -> Dict[str, str]:
    """{name: what it holds} for the names assigned a loaded saved model, one of its signatures
    (``serve = tf.saved_model.load(d).signatures["serving_default"]``) or a TF Hub layer: a call
    of it gives the shapes its graph was saved with, a batch dimension of ``None``."""
    names = {}
    for assign in ctx.nodes(cst.Assign):
        value = assign.value
        while isinstance(value, (cst.Subscript, cst.Attribute)):
            value = value.value
        qualified = ctx.qualified_name(value.func) if isinstance(value, cst.Call) else None
        if qualified in SAVED_MODEL_LOADERS or qualified == HUB_LAYER:
            what = ("a TF Hub layer" if qualified == HUB_LAYER
                    else f"a saved model loaded with `{code_of(ctx, value.func)}`")
            names.update((target.target.value, what) for target in assign.targets if isinstance(target.target, cst.Name))
    return names


def layer_made(ctx: FileContext, value: cst.BaseExpression, kinds: AbstractSet[str]) -> Optional[str]:
    """The layer of ``kinds`` that ``value`` makes: ``StringLookup(...)``, one of the branches of a
    conditional, or a call of a class held by a variable of the same function."""
    if isinstance(value, cst.IfExp):
        return layer_made(ctx, value.body, kinds) or layer_made(ctx, value.orelse, kinds)
    if not isinstance(value, cst.Call):
        return None
    return _layer_class(ctx, value.func, kinds, follow=True)


def _layer_class(ctx: FileContext, node: cst.BaseExpression, kinds: AbstractSet[str], follow: bool) -> Optional[str]:
    name = ctx.keras_name(node)
    if name in kinds:
        return name
    if isinstance(node, cst.IfExp):
        return _layer_class(ctx, node.body, kinds, follow) or _layer_class(ctx, node.orelse, kinds, follow)
    if follow and isinstance(node, cst.Name) and ctx.qualified_name(node) is None:
        return next((kind for value in values_of(ctx, node) if value is not None
                     for kind in [_layer_class(ctx, value, kinds, follow=False)] if kind is not None), None)
    return None


def mapped_nodes(ctx: FileContext, call: cst.Call) -> Iterator[cst.CSTNode]:
    """The nodes of what ``dataset.map(fn)`` runs on the host: its lambda, or the function of the
    file it names, and the functions of the file these call (``lambda x, y: (augment(x), y)``)."""
    if not call.args:
        return
    function = call.args[0].value
    functions: dict = {}
    for node in ctx.nodes(cst.FunctionDef):
        functions.setdefault(node.name.value, []).append(node)
    roots = [function] if not isinstance(function, cst.Name) else list(functions.get(function.value, ()))
    seen = {id(root) for root in roots}
    while roots:
        root = roots.pop()
        for node in walk(root):
            yield node
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
                for called in functions.get(node.func.value, ()):
                    if id(called) not in seen:
                        seen.add(id(called))
                        roots.append(called)


# What a host pipeline's layers are asked besides being run: fitted to data, their vocabulary read.
# What a host layer or preprocessing model is asked besides being run: fitting it to data, and reading
# what it makes (``preprocessor.output_shape[-1]`` to size the model that takes its output).
HOST_LAYER_METHODS = frozenset({"adapt", "get_vocabulary", "vocabulary_size", "set_vocabulary", "get_config",
                                "update_state", "output_shape", "summary"})
_MAPPED: SharedKey[Set[int]] = SharedKey("keras-mapped-nodes")


def mapped_node_ids(ctx: FileContext) -> Set[int]:
    """The ids of the nodes of what the file's ``dataset.map(...)`` calls run on the host."""
    return ctx.shared(_MAPPED, lambda: {id(node) for call in ctx.nodes(cst.Call) if isinstance(call.func, cst.Attribute)
                                        and call.func.attr.value == "map" for node in mapped_nodes(ctx, call)})


def host_only(ctx: FileContext, names: Set[str],
              host_call: Optional[Callable[[cst.Call], bool]] = None) -> Set[str]:
    """Those of ``names`` that only ``dataset.map(...)`` runs: read there, and elsewhere only
    assigned, adapted or asked their vocabulary (a preprocessing layer or model of the host
    pipeline, whose variables belong on the host). With ``host_call``, the names may also be
    called where ``host_call`` says the call runs on the host, and need not be read in a map."""
    mapped = mapped_node_ids(ctx)
    in_maps, elsewhere = set(), set()
    for node in ctx.nodes(cst.Name):
        if node.value not in names:
            continue
        parent = ctx.parent(node)
        if id(node) in mapped or _run_by_map(ctx, node):
            in_maps.add(node.value)
        elif not (isinstance(parent, (cst.AssignTarget, cst.Param)) or _unpacked_into(ctx, node)
                  or isinstance(parent, cst.Attribute) and parent.value is node
                  and parent.attr.value in HOST_LAYER_METHODS or _on_text(ctx, parent, node)
                  or _handed_to_maps(ctx, node, mapped) or host_call is not None and isinstance(parent, cst.Call)
                  and parent.func is node and host_call(parent)):
            elsewhere.add(node.value)
    return (names if host_call is not None else in_maps) - elsewhere


def _run_by_map(ctx: FileContext, node: cst.Name) -> bool:
    """``dataset.map(vectorize)``: ``node`` is the function the map runs, given by its name."""
    arg = ctx.parent(node)
    call = ctx.parent(arg) if isinstance(arg, cst.Arg) and arg.value is node else None
    return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "map" \
        and call.args[0] is arg


def _unpacked_into(ctx: FileContext, node: cst.Name) -> bool:
    """``inputs, preprocessor = build_preprocessing(frame)``: ``node`` is bound by unpacking, not read."""
    parent = ctx.parent(node)
    while isinstance(parent, (cst.Element, cst.StarredElement, cst.Tuple, cst.List)):
        parent = ctx.parent(parent)
    return isinstance(parent, cst.AssignTarget)


def model_holders(ctx: FileContext, model: cst.Call) -> Set[str]:
    """The names that hold the model ``model`` builds: ``model = keras.Model(...)``; or, where a function
    of the file returns it (``return keras.Model(...)``, ``return inputs, model``), the names its callers
    assign that result to (``inputs, preprocessor = build_preprocessing(...)``), so that a builder's
    model is followed to where it is compiled or run."""
    parent = ctx.parent(model)
    local = parent.targets[0].target.value if isinstance(parent, cst.Assign) and len(parent.targets) == 1 \
        and isinstance(parent.targets[0].target, cst.Name) else None
    function = ctx.enclosing_function(model)
    positions = {position for ret in (returns_of(function) if function is not None else [])
                 for position in [_returned_at(ret.value, model, local)] if position != _NOT_RETURNED}
    if not positions:
        return {local} if local is not None else set()
    names = set()
    for call in ctx.nodes(cst.Call):
        holder = ctx.parent(call)
        if not (isinstance(call.func, cst.Name) and isinstance(holder, cst.Assign) and len(holder.targets) == 1
                and local_function(ctx, call.func.value, call) is function):
            continue
        target = holder.targets[0].target
        for position in positions:
            if position is None and isinstance(target, cst.Name):
                names.add(target.value)
            elif position is not None and isinstance(target, (cst.Tuple, cst.List)) \
                    and position < len(target.elements) and isinstance(target.elements[position].value, cst.Name):
                names.add(target.elements[position].value.value)
    return names


_NOT_RETURNED = -1


def _returned_at(value: cst.BaseExpression, model: cst.Call, local: Optional[str]):
    """Where ``return value`` gives the model: None for the whole value, the index of a tuple's
    item, or ``_NOT_RETURNED``."""
    def is_model(node: cst.BaseExpression) -> bool:
        return node is model or local is not None and is_name(node, local)

    if is_model(value):
        return None
    if isinstance(value, cst.Tuple):
        return next((index for index, element in enumerate(value.elements) if is_model(element.value)), _NOT_RETURNED)
    return _NOT_RETURNED


def _handed_to_maps(ctx: FileContext, node: cst.Name, mapped: Set[int]) -> bool:
    """``make_pipeline(texts, labels, vectorize, 32)``: ``node`` is given to a function of the file
    whose parameter for it is read only in what its ``dataset.map(...)`` runs, or is the function
    the map runs (``dataset.map(layer)``)."""
    arg = ctx.parent(node)
    call = ctx.parent(arg) if isinstance(arg, cst.Arg) and arg.value is node and not arg.star else None
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name)):
        return False
    function = local_function(ctx, call.func.value, call)
    if function is None:
        return False
    positional = [param.name.value for param in (*function.params.posonly_params, *function.params.params)]
    index = list(call.args).index(arg)
    if arg.keyword is not None:
        parameter = arg.keyword.value
    elif index < len(positional) and all(not given.keyword and not given.star for given in call.args[:index]):
        parameter = positional[index]
    else:
        return False
    reads = [name for name in walk(function) if isinstance(name, cst.Name) and name.value == parameter
             and not isinstance(ctx.parent(name), cst.Param)]
    return bool(reads) and all(id(name) in mapped or _run_by_map(ctx, name) for name in reads)


def _on_text(ctx: FileContext, call: cst.CSTNode, func: cst.Name) -> bool:
    """``vectorize(["a wonderful film"])``: a layer called on strings written in the code (a try of
    the trained model on new text), which runs on the host."""
    return isinstance(call, cst.Call) and call.func is func and called_on_text(ctx, call)


def called_on_text(ctx: FileContext, call: cst.Call) -> bool:
    """``embed(["a wonderful film"])``: ``call`` is given, first, strings written in the code, also
    through a variable every value of which is such text (``sentences = tf.constant(["a wonderful
    film", ...])``)."""
    if not call.args:
        return False
    text = call.args[0].value
    if isinstance(text, cst.Name):
        values = values_of(ctx, text)
        return bool(values) and all(value is not None and _written_text(ctx, value) for value in values)
    return _written_text(ctx, text)


def _written_text(ctx: FileContext, text: cst.BaseExpression) -> bool:
    """Strings written in the code: a literal, a list or tuple of them, or a tensor or array made
    of one (``tf.constant([...])``, ``np.array([...])``, also through a variable that holds the list)."""
    if isinstance(text, cst.Call) and text.args and (ctx.qualified_name(text.func) or "") in _TEXT_TENSOR_MAKERS:
        text = text.args[0].value
    if isinstance(text, cst.Name) and not _string(ctx, text):  # `tf.constant(examples)`, a list of them
        values = values_of(ctx, text)
        return bool(values) and all(isinstance(value, (cst.List, cst.Tuple)) and _written_text(ctx, value)
                                    for value in values)
    items = [element.value for element in text.elements] if isinstance(text, (cst.List, cst.Tuple)) else [text]
    return bool(items) and all(_string(ctx, item) for item in items)


def _string(ctx: FileContext, item: cst.BaseExpression) -> bool:
    """A string literal, or a variable only ever assigned one (``sample_text = ("The film...")``)."""
    if isinstance(item, cst.Name):
        values = values_of(ctx, item)
        return bool(values) and all(isinstance(value, _STRINGS) for value in values)
    return isinstance(item, _STRINGS)


_STRINGS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
# What makes a tensor or an array of the strings it is given.
_TEXT_TENSOR_MAKERS = frozenset({"tensorflow.constant", "tensorflow.convert_to_tensor", "numpy.array",
                                 "numpy.asarray"})


def estimator_model_fns(ctx: FileContext) -> Set[str]:
    """Names of the functions the file hands to an Estimator as its ``model_fn``: the Estimator
    builds its graph there (IPU211 reports it); they are not Keras programs or training steps."""
    found = set()
    for call in ctx.nodes(cst.Call):
        if (ctx.qualified_name(call.func) or "").endswith("Estimator"):
            given = argument(call, "model_fn", 0)
            if given is not None and isinstance(given.value, cst.Name):
                found.add(given.value.value)
    return found


def is_callback_method(ctx: FileContext, function: cst.FunctionDef) -> bool:
    """A method of a Keras callback class (``on_epoch_end`` of a ``keras.callbacks.Callback``):
    Keras calls it from ``fit``/``evaluate``/``predict``, where ``self.model`` is the model."""
    owner = ctx.enclosing(function, cst.ClassDef)
    return owner is not None and ctx.enclosing_function(function) is None and (any(
        (ctx.keras_name(base.value) or "").startswith("keras.callbacks.") for base in owner.bases)
        or subclasses_of(ctx, "keras.callbacks.Callback").get(owner.name.value) is owner)


def callback_model(receiver: cst.BaseExpression) -> bool:
    """``self.model`` in a callback's method, or a part of it (``self.model.generator``)."""
    while isinstance(receiver, cst.Attribute) and not (receiver.attr.value == "model" and is_name(receiver.value, "self")):
        receiver = receiver.value
    return isinstance(receiver, cst.Attribute)


def handed_to_callback(ctx: FileContext, function: cst.FunctionDef) -> bool:
    """Whether ``function`` is given by name to a Keras callback (``LambdaCallback(on_epoch_end=
    sample)``): Keras calls it from ``fit``/``evaluate``/``predict``."""
    for node in ctx.nodes(cst.Name):
        arg = ctx.parent(node)
        if node.value == function.name.value and isinstance(arg, cst.Arg) and arg.value is node:
            call = ctx.parent(arg)
            if isinstance(call, cst.Call) and (ctx.keras_name(call.func) or "").startswith("keras.callbacks."):
                return True
    return False


def run_by_keras(method: cst.FunctionDef, owner: cst.ClassDef, entries=("train_step", "test_step")) -> bool:
    """Whether ``method`` of the Keras model class ``owner`` is one of ``entries`` (the steps Keras
    runs), or a method that one of them calls through ``self`` (a gradient penalty, say), directly
    or not."""
    return reached_methods(owner, entries).get(method.name.value) is method


def reached_methods(owner: cst.ClassDef, entries) -> Dict[str, cst.FunctionDef]:
    """The methods of the class ``owner`` named in ``entries`` and those they call through
    ``self``, directly or not, by name."""
    methods = {node.name.value: node for node in owner.body.body if isinstance(node, cst.FunctionDef)}
    reached, pending = {}, [name for name in entries if name in methods]
    while pending:
        name = pending.pop()
        if name in reached:
            continue
        reached[name] = methods[name]
        pending.extend(node.func.attr.value for node in walk(methods[name].body)
                       if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                       and isinstance(node.func.value, cst.Name) and node.func.value.value == "self"
                       and node.func.attr.value in methods)
    return reached


def called_by_keras_steps(ctx: FileContext, models: Dict[str, cst.ClassDef]) -> set:
    """Names of the methods that the steps Keras runs (a model class's ``train_step``, ``test_step``
    and what they call through ``self``) call on other objects: ``self.block.local_update(x)``
    runs inside ``fit`` too."""
    names = set()
    for model_class in models.values():
        for method in model_class.body.body:
            if isinstance(method, cst.FunctionDef) and run_by_keras(method, model_class):
                names.update(node.func.attr.value for node in walk(method.body)
                             if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute))
    return names


_OUTSIDE_COMPILATION = ("tensorflow.python.ipu.scopes.outside_compilation_scope",
                        "tensorflow.python.ipu.outside_compilation_scope")


def in_outside_compilation(ctx: FileContext, node: cst.CSTNode) -> bool:
    """``node`` is inside ``with ipu.scopes.outside_compilation_scope():``, which runs it on the host."""
    return any(isinstance(ancestor, cst.With) and any(
        isinstance(item.item, cst.Call) and ctx.qualified_name(item.item.func) in _OUTSIDE_COMPILATION
        for item in ancestor.items) for ancestor in ctx.ancestors(node))


def is_literal_false(node: Optional[cst.CSTNode]) -> bool:
    return isinstance(node, cst.Name) and node.value in ("False", "None")


def number_value(node: Optional[cst.CSTNode]) -> Optional[float]:
    """The value of an int/float literal (with an optional sign), else None."""
    sign = 1.0
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        sign = -1.0 if isinstance(node.operator, cst.Minus) else 1.0
        node = node.expression
    if isinstance(node, (cst.Integer, cst.Float)):
        try:
            return sign * float(node.evaluated_value)
        except (TypeError, ValueError):
            return None
    return None


def auto_loss_objects(ctx: FileContext) -> Dict[str, cst.Assign]:
    """Variables assigned a Keras loss object without an explicit reduction (``AUTO``), which
    Keras refuses to compute in a distribution strategy's scope outside ``fit``."""
    return {assign.targets[0].target.value: assign for assign in ctx.nodes(cst.Assign)
            if len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)
            and is_auto_loss(ctx, assign.value)}


def is_auto_loss(ctx: FileContext, node: cst.BaseExpression) -> bool:
    """``keras.losses.BinaryCrossentropy(from_logits=True)``: a Keras loss object made without a
    ``reduction``, which reduces automatically."""
    if not isinstance(node, cst.Call) or keyword(node, "reduction") is not None:
        return False
    name = ctx.keras_name(node.func) or ""
    return name.startswith("keras.losses.") and name.rpartition(".")[2][:1].isupper()


# Keras Tuner's tuners, and their methods that build models: each build is preceded by
# `keras.backend.clear_session()`, which drops the graph that holds a strategy's scope.
_TUNER_MODULES = ("keras_tuner.", "kerastuner.")
_TUNER_CLASSES = frozenset({"RandomSearch", "Hyperband", "BayesianOptimization", "GridSearch", "Tuner"})
TUNER_BUILDS = frozenset({"search", "get_best_models", "load_model"})
_TUNERS: SharedKey[Dict[str, List[cst.Call]]] = SharedKey("keras-tuners")


def tuners(ctx: FileContext) -> Dict[str, List[cst.Call]]:
    """Names bound to a Keras Tuner tuner (``kt.Hyperband(build_model, ...)``, or a class of the
    file derived from one, or a function of the file whose every ``return`` makes one:
    ``tuner = make_tuner(args)``), with the calls that make them."""
    def is_tuner_class(node: cst.BaseExpression, derived: Set[str]) -> bool:
        if isinstance(node, cst.Name) and node.value in derived:
            return True
        qualified = ctx.qualified_name(node) or ""
        return qualified.startswith(_TUNER_MODULES) and qualified.rpartition(".")[2] in _TUNER_CLASSES

    def find() -> Dict[str, List[cst.Call]]:
        derived: Set[str] = set()
        for _ in range(3):  # a tuner class of the file derived from another one of the file
            derived |= {node.name.value for node in ctx.nodes(cst.ClassDef)
                        if any(is_tuner_class(base.value, derived) for base in node.bases)}
        def made_tuners(value: cst.BaseExpression) -> List[cst.Call]:
            if isinstance(value, cst.Call) and is_tuner_class(value.func, derived):
                return [value]
            _, returned = called_returns(ctx, value)
            made = [node for node in returned if isinstance(node, cst.Call) and is_tuner_class(node.func, derived)]
            return made if returned and len(made) == len(returned) else []

        found: Dict[str, List[cst.Call]] = {}
        for assign in ctx.nodes(cst.Assign):
            if len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name):
                for call in made_tuners(assign.value):
                    if all(call is not seen for seen in found.get(assign.targets[0].target.value, [])):
                        found.setdefault(assign.targets[0].target.value, []).append(call)
        return found

    return ctx.shared(_TUNERS, find)


def tuner_builds(ctx: FileContext, node: cst.CSTNode) -> Iterator[cst.Call]:
    """Calls in ``node`` of a tuner's methods that build models (``tuner.search(...)``)."""
    names = tuners(ctx)
    if not names:
        return
    for call in walk(node, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        if (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in TUNER_BUILDS
                and isinstance(call.func.value, cst.Name) and call.func.value.value in names):
            yield call


def clears_session(ctx: FileContext, statement_node: cst.BaseStatement) -> bool:
    """``K.clear_session()``, or a loop whose body calls it (a model per fold, per learning rate),
    or a Keras Tuner's ``search`` (which clears it before each trial): it drops the graph that
    holds the strategy's scope, so it runs out of the scope, and the loop's body after it goes in
    the scope again."""
    return any(isinstance(node, cst.Call) and ctx.keras_name(node.func) in _CLEAR_SESSION
               for node in walk(statement_node, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda))) or any(
        True for _ in tuner_builds(ctx, statement_node))


_CLEAR_SESSION = frozenset({"keras.backend.clear_session"})


# What makes ragged and sparse tensors: the shapes of ragged ones are not fully defined.
_RAGGED_MAKERS = ("tensorflow.ragged.", "tensorflow.RaggedTensor.from_")
_SPARSE_MAKERS = frozenset({
    "tensorflow.SparseTensor", "tensorflow.sparse.SparseTensor", "tensorflow.sparse.from_dense",
    "tensorflow.sparse.reorder", "tensorflow.sparse.reshape", "tensorflow.sparse.concat", "tensorflow.sparse.slice",
    "tensorflow.sparse.transpose", "tensorflow.sparse.retain", "tensorflow.sparse.expand_dims",
    "tensorflow.sparse.eye",
})


def to_tensor_length(call: cst.Call) -> Optional[str]:
    """For ``ragged.to_tensor(...)``: ``"fixed"`` when it is given a ``shape`` (the
    padded length is static), ``"longest"`` without one (each batch padded to its own longest
    element); None for any other call."""
    if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "to_tensor"):
        return None
    return "fixed" if argument(call, "shape", 2) is not None else "longest"


def densified_to_fixed_length(ctx: FileContext, maps) -> bool:
    """One of the dataset's ``.map(...)`` calls makes its ragged data dense with a fixed length
    (``lambda s, y: (s.to_tensor(shape=[None, 64]), y)``)."""
    return any(isinstance(node, cst.Call) and to_tensor_length(node) == "fixed"
               for call in maps for node in mapped_nodes(ctx, call))


RAGGED = "ragged"
SPARSE = "sparse"


def ragged_or_sparse(ctx: FileContext, node: cst.BaseExpression, depth: int = 0) -> Optional[str]:
    """``RAGGED`` or ``SPARSE`` when ``node`` is made by ``tf.ragged...``/``tf.RaggedTensor.from_...``
    or ``tf.SparseTensor(...)``/``tf.sparse...`` (also through a variable, or a call of a function of
    the file, every value of which is), or is a list, tuple or dict of inputs one of which is; else None."""
    if isinstance(node, (cst.List, cst.Tuple, cst.Dict)):
        parts = [element.value for element in node.elements if isinstance(element, (cst.Element, cst.DictElement))]
        return next((kind for kind in (ragged_or_sparse(ctx, part, depth) for part in parts) if kind), None)
    if isinstance(node, cst.Call):
        qualified = ctx.qualified_name(node.func) or ""
        if qualified.startswith(_RAGGED_MAKERS):
            return RAGGED
        if qualified in _SPARSE_MAKERS:
            return SPARSE
        # `def tokenize(texts): ... return tf.ragged.constant(token_lists)`
        return _same_kind(ctx, called_returns(ctx, node)[1], depth) if depth < 3 else None
    if isinstance(node, cst.Name) and depth < 3:
        return _same_kind(ctx, values_of(ctx, node), depth)
    return None


def _same_kind(ctx: FileContext, values: List[Optional[cst.BaseExpression]], depth: int) -> Optional[str]:
    """The kind of ragged or sparse data every one of ``values`` is, else None."""
    kinds = [ragged_or_sparse(ctx, value, depth + 1) if value is not None else None for value in values]
    return kinds[0] if kinds and all(kind == kinds[0] for kind in kinds) else None


def self_attribute_values(ctx: FileContext, node: cst.Attribute) -> List[cst.BaseExpression]:
    """The values ``self.<attr>`` is assigned in the class that holds ``node``."""
    owner_class = ctx.enclosing(node, cst.ClassDef)
    if owner_class is None:
        return []
    return [ctx.parent(ctx.parent(target)).value for target in walk(owner_class)
            if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self"
            and target.attr.value == node.attr.value and isinstance(ctx.parent(target), cst.AssignTarget)
            and isinstance(ctx.parent(ctx.parent(target)), cst.Assign)]
