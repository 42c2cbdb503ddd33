"""The Keras training calls of a file, for the speed rules (IPU107-IPU110).

``compile``/``fit``/``evaluate``/``predict`` called on a model variable (as found by
``porter.rules.keras._analysis.model_plan``), in source order, with what the speed rules need to know about each: the
NumPy/tensor inputs (``x``, ``y``, ``sample_weight``, ``validation_data``) and the batch size.
Inputs count as arrays only when Keras would reject anything else there: ``y`` or ``batch_size``
is given (a ``tf.data`` dataset takes neither), and ``x`` is not a dataset.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Set, Tuple

import libcst as cst

from porter import throughput
from porter.context import FileContext, SharedKey, bound_names, code_of, in_loop, walk
from porter.cstutil import (LINE_LIMIT, alternatives, argument, element_at, is_name, is_true, keyword, simple_assign,
                            string_value, target_place)
from porter.rules.keras._analysis.held_models import held_items, model_item
from porter.rules.keras._analysis.model_plan import REBUILT_MODELS, calls_by_name, is_keras_run, model_plan
from porter.rules._tf.tfdata import chain, dataset_like, is_dataset, table_data
from porter.rules.keras._analysis.steps import instance_of, method_named
from porter.rules.keras._analysis.util import (IMAGE_FLOWS, INPUTS, KERAS_BATCHED_SOURCES, SKLEARN_WRAPPERS, last_name,
                                              ragged_or_sparse, self_attribute_values, string_layer_names)
from porter.scopes import (assignments, bindings_of, called_file_returns, called_returns, instance_class, local_calls, owner, parameter_names,
                           values_of)

METHODS = ("compile", "fit", "evaluate", "predict")
KERAS_DEFAULT_BATCH = 32
# Where x, y and batch_size sit when passed by position.
_POSITIONS = {"fit": (0, 1, 2), "evaluate": (0, 1, 2), "predict": (0, None, 1), "search": (0, 1, 2)}
# Where sample_weight sits when passed by position (`evaluate(x, y, 64, 0, w)`); a tuner's search
# hands its arguments on to fit.
_WEIGHT_POSITIONS = {"fit": 10, "evaluate": 4, "predict": None, "search": 10}
_ARRAY_NODES = (cst.Name, cst.Attribute, cst.Subscript)

_TRAINING_CALLS: SharedKey[List["TrainingCall"]] = SharedKey("keras-training-calls")  # per trimming helper
# (line, column) of the training calls of the file and of their statements, by node id.
_CALL_COLUMNS: SharedKey[Dict[int, Tuple[int, int]]] = SharedKey("keras-call-columns")
_COLUMN_METHODS = frozenset(METHODS) | {"search"}


@dataclass
class TrainingCall:
    call: cst.Call
    method: str
    model: str
    statement: Optional[cst.BaseStatement]
    owner: cst.CSTNode  # the function (or module) the call is in
    in_loop: bool = False
    # Arguments holding arrays to trim (x, y, sample_weight), and a ``validation_data`` tuple.
    arrays: List[cst.Arg] = field(default_factory=list)
    validation: List[cst.BaseExpression] = field(default_factory=list)
    # `validation_data=held_out`: a tuple of arrays out of the call, in a variable or returned by a
    # function of the file; trimmed part by part where the call reads it.
    held_validation: Optional[cst.BaseExpression] = None
    # Whether it may hold None instead (``(x_val, y_val) if validate else None``).
    held_validation_optional: bool = False
    # `validation_data=validation_set`: arrays (not a tuple) Keras takes as the inputs alone, for a
    # model that finds its labels in them (Hugging Face's dicts of arrays); trimmed whole.
    validation_inputs: Optional[cst.BaseExpression] = None
    data: Optional[cst.BaseExpression] = None  # x
    batch: Optional[cst.BaseExpression] = None  # the batch_size argument, None when defaulted
    dataset_input: bool = False
    # `fit(*train_data)`: what holds the inputs, unpacked in the call.
    unpacked: Optional[cst.BaseExpression] = None
    # `fit(x, y, **params)` on arrays: the `**` argument that may hold the batch size, out of sight.
    hidden_options: Optional[cst.BaseExpression] = None
    # `fit(tokenize(texts), labels)`: inputs Keras takes as arrays (`y` is given) that the port cannot
    # tell are arrays (a call of an imported function, say), so cannot trim safely.
    unfollowed: List[cst.BaseExpression] = field(default_factory=list)
    # `fit(tf.ragged.constant(...), labels)`: ragged or sparse inputs, which are not trimmed or padded
    # (they have no `len()`); IPU161 reports them.
    ragged_or_sparse: Optional[str] = None
    # The batch the model fixes (`batch_input_shape=[B, ...]`) when the call on arrays gives none: `batch`
    # is then B where the port reads it (IPU107 writes `batch_size=B` into the call), else left None.
    model_batch: Optional[FixedBatch] = None

    @property
    def has_arrays(self) -> bool:
        return bool(self.arrays)


def is_array_expression(node: cst.BaseExpression, helper: Optional[str] = None) -> bool:
    """A variable, attribute or subscript (or a list/tuple/dict of them): what a script passes as
    NumPy arrays or tensors. A call of the trimming helper counts too (already trimmed)."""
    if isinstance(node, _ARRAY_NODES):
        return True
    if isinstance(node, (cst.List, cst.Tuple)):
        return bool(node.elements) and all(is_array_expression(element.value, helper) for element in node.elements)
    if isinstance(node, cst.Dict):
        return bool(node.elements) and all(
            isinstance(element, cst.DictElement) and is_array_expression(element.value, helper)
            for element in node.elements)
    if _columns_of(node):
        return True
    return is_helper_call(node, helper)


def _columns_of(node: cst.BaseExpression) -> bool:
    """``dict(frame)``: the columns of a table, by name (a dict of arrays)."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "dict" \
        and len(node.args) == 1 and not node.args[0].star and node.args[0].keyword is None \
        and isinstance(node.args[0].value, _ARRAY_NODES)


def is_helper_call(node: cst.CSTNode, helper: Optional[str]) -> bool:
    return helper is not None and isinstance(node, cst.Call) and isinstance(node.func, cst.Name) \
        and node.func.value == helper


def training_calls(ctx: FileContext, helper: Optional[str] = None) -> List[TrainingCall]:
    return ctx.shared(_TRAINING_CALLS, lambda: _find(ctx, helper), per=helper)


# Keras' loaders of a saved model: the model they return is compiled as it was saved, without the
# `steps_per_execution` of the `compile` that made it.
MODEL_LOADERS = frozenset({"keras.models.load_model", "keras.saving.load_model"})


def loaded_uncompiled(ctx: FileContext, entry: TrainingCall, calls: List[TrainingCall],
                      through_functions: bool = False) -> bool:
    """Whether ``entry`` (a ``fit``/``evaluate``/``predict``) runs a model that its function loads
    with ``load_model`` and does not compile after loading it: no ``steps_per_execution`` the port
    gives a ``compile`` reaches that model, and the port does not compile it again (a new ``compile``
    gives ``fit`` a fresh optimizer). ``calls`` are the file's training calls. With
    ``through_functions``, a model a function of the file may load and return counts too
    (``model = load_or_build(args.resume)``)."""
    receiver = entry.call.func.value if isinstance(entry.call.func, cst.Attribute) else None
    if entry.method == "compile" or not isinstance(receiver, cst.Name) or receiver.value != entry.model:
        return False
    if loaded_member(ctx, entry, calls) is not None:
        return True
    loaded, value = last_binding_before(ctx, receiver, entry.owner)
    if not (_loads_model(ctx, value) or through_functions and loader_function(ctx, value) is not None):
        return False
    # The statements from the load to the call, in the block of the load (the call may sit deeper).
    block = list(ctx.block_of(loaded).body)
    reading = next((node for node in (entry.call, *ctx.ancestors(entry.call)) if node in block), None)
    if reading is None:
        return False
    between = {id(statement) for statement in block[block.index(loaded) + 1:block.index(reading) + 1]}
    return not any(other.method == "compile" and other.model == entry.model and other.owner is entry.owner
                   and any(id(node) in between for node in (other.call, *ctx.ancestors(other.call)))
                   for other in calls)


# Keras methods that run the compiled function of a model on one batch given to them.
ONE_BATCH_METHODS = frozenset({"train_on_batch", "test_on_batch", "predict_on_batch"})
# Keras calls that make a new model, never compiled yet.
_NEW_MODELS = frozenset({"keras.Sequential", "keras.Model", "keras.models.Sequential", "keras.models.Model"}
                        ) | REBUILT_MODELS


def one_batch_call(ctx: FileContext, model: str, scope: cst.CSTNode) -> Optional[cst.Call]:
    """The first ``model.train_on_batch(...)`` (or ``test_on_batch``/``predict_on_batch``) of the
    file that may run the model ``model`` names in ``scope`` (the function of a call on it, or the
    module): one in another function on a model that function makes itself runs another model."""
    return next((call for call in ctx.nodes(cst.Call) if isinstance(call.func, cst.Attribute)
                 and call.func.attr.value in ONE_BATCH_METHODS and is_name(call.func.value, model)
                 and not _made_elsewhere(ctx, call.func.value, scope)), None)


def _made_elsewhere(ctx: FileContext, name: cst.Name, scope: cst.CSTNode) -> bool:
    """``name`` is read in a function other than ``scope`` that makes (or loads) every model it
    assigns to it, as a local variable: another model than the one of the same name in ``scope``."""
    function = ctx.enclosing_function(name)
    if function is None or function is scope or any(
            isinstance(node, cst.Global) and any(is_name(item.name, name.value) for item in node.names)
            for node in walk(function)):
        return False
    values = [value for _, bound, value in assignments(ctx, function) if bound == name.value]
    return bool(values) and all(_new_model(ctx, value) or _loads_model(ctx, value) for value in values)


def own_method(ctx: FileContext, entry: TrainingCall) -> Optional[cst.FunctionDef]:
    """The method that the class of the model ``entry`` runs (a Keras model class of the file, or a
    class of the file it derives from) defines in place of Keras's ``fit``/``evaluate``/``predict`` of that name
    (``def predict(self, images): ...``) and that never hands on to Keras's through ``super()``: the
    call runs that method, so what Keras does with its inputs (batches of ``batch_size``) does not
    hold. None when Keras's method runs."""
    receiver = entry.call.func.value if isinstance(entry.call.func, cst.Attribute) else None
    found = instance_class(ctx, receiver) if receiver is not None and entry.method in METHODS else None
    if found is None or found.name.value not in model_plan(ctx).model_classes:
        return None  # a plain class's method of that name (a tuner's `search`) is not Keras's
    method = inherited_method(ctx, found, entry.method)
    return None if method is None or super_calls(method, entry.method) else method


def inherited_method(ctx: FileContext, found: Optional[cst.ClassDef], name: str) -> Optional[cst.FunctionDef]:
    """The method ``name`` that the class ``found`` defines, else the one the first class of the
    file among its bases (and theirs) defines: the method its instances run (``class WGAN(GAN)``
    runs ``GAN.compile``). None when no class of the file defines it (Keras's runs)."""
    seen: Set[int] = set()
    while found is not None and id(found) not in seen:
        seen.add(id(found))
        method = method_named(found, name)
        if method is not None:
            return method
        found = next((statement for base in found.bases if isinstance(base.value, cst.Name)
                      for statement in ctx.module.body if isinstance(statement, cst.ClassDef)
                      and statement.name.value == base.value.value), None)
    return None


def super_calls(method: cst.FunctionDef, name: str) -> List[cst.Call]:
    """The calls of ``super().name(...)`` (or ``super(Class, self).name(...)``: the method it
    overrides) in the body of ``method``, out of the functions and classes it defines."""
    return [node for node in walk(method.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda))
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == name
            and isinstance(node.func.value, cst.Call) and is_name(node.func.value.func, "super")]


def never_compiled(ctx: FileContext, entry: TrainingCall, calls: List[TrainingCall]) -> bool:
    """Whether ``entry`` (a ``predict``: Keras trains and evaluates compiled models only) runs a
    model that is never compiled: made once in its function by a Keras model call
    (``keras.Sequential(...)``) or by a function of the file that compiles nothing, compiled by
    no call of the file (``calls``) and given to no function (which could compile it). Such a
    model (the generator of a GAN that only predicts) runs one batch per execution: no
    ``steps_per_execution`` the port gives a ``compile`` reaches it."""
    receiver = entry.call.func.value if isinstance(entry.call.func, cst.Attribute) else None
    if entry.method != "predict" or not isinstance(receiver, cst.Name) or receiver.value != entry.model:
        return False
    if any(other.method == "compile" and other.model == entry.model for other in calls) or any(
            is_name(arg.value, entry.model) for arg in walk(entry.owner) if isinstance(arg, cst.Arg)):
        return False
    values = values_of(ctx, receiver)
    value = values[0] if len(values) == 1 else None
    if _new_model(ctx, value):
        return True
    function, returned = called_returns(ctx, value)
    if function is None or not returned or any(
            isinstance(node, cst.Attribute) and node.attr.value == "compile" for node in walk(function)):
        return False
    made = {name: bound for _, name, bound in assignments(ctx, function)}
    return all(_new_model(ctx, made.get(node.value) if isinstance(node, cst.Name) else node) for node in returned)


def _new_model(ctx: FileContext, value: Optional[cst.BaseExpression]) -> bool:
    """``value`` makes a new Keras model (``keras.Sequential([...])``, ``keras.Model(inputs, outputs)``)."""
    return isinstance(value, cst.Call) and keras_or_legacy(ctx, value.func) in _NEW_MODELS


def loaded_binding(ctx: FileContext, entry: TrainingCall, calls: List[TrainingCall]
                   ) -> Optional[Tuple[cst.BaseStatement, Optional[cst.BaseExpression], bool]]:
    """A binding of the model of ``entry`` (a ``fit``/``evaluate``/``predict``) that may reach the
    call and loads the model with ``load_model`` (itself or through a function of the file), with
    no ``compile`` of the model between the load and the call: ``(statement, value, surely)``,
    ``surely`` when that binding is the only one that reaches the call. Unlike
    ``loaded_uncompiled``, a load in one branch of an ``if`` (the model built in the other) counts:
    options given to ``compile`` reach the built model only."""
    receiver = entry.call.func.value if isinstance(entry.call.func, cst.Attribute) else None
    if entry.method == "compile" or not isinstance(receiver, cst.Name) or receiver.value != entry.model:
        return None
    member = loaded_member(ctx, entry, calls)
    if member is not None:
        return member
    reaching = reaching_bindings(ctx, receiver, entry.owner)
    for statement, value in reaching:
        if (_loads_model(ctx, value) or loader_function(ctx, value) is not None) \
                and not _compiled_between(ctx, statement, entry, calls):
            return statement, value, len(reaching) == 1 and loader_function(ctx, value) is None
    return None


# Calls that put more items in a list: a list of loaded models filled so may hold others.
_FILLING_METHODS = frozenset({"append", "extend", "insert"})


def loaded_member(ctx: FileContext, entry: TrainingCall, calls: List[TrainingCall]
                  ) -> Optional[Tuple[cst.BaseStatement, Optional[cst.BaseExpression], bool]]:
    """The loop (``for member in members:``, or a comprehension's ``for``) whose target is the
    model of ``entry``, when it goes over a list that only ever holds models read with
    ``load_model`` (``members = [keras.models.load_model(path) for path in paths]``) and the file
    compiles no model of that name in the function: an ensemble of loaded models, which keep the
    compile they were saved with. Returned as ``loaded_binding`` gives a load: ``(statement,
    load call, True)``."""
    if any(other.method == "compile" and other.model == entry.model and other.owner is entry.owner for other in calls):
        return None
    loop = next((node for node in ctx.ancestors(entry.call) if _iterates_as(node, entry.model) is not None), None)
    source = _iterates_as(loop, entry.model) if loop is not None else None
    if not isinstance(source, cst.Name) or any(
            isinstance(node.func, cst.Attribute) and node.func.attr.value in _FILLING_METHODS
            and is_name(node.func.value, source.value) for node in walk(entry.owner) if isinstance(node, cst.Call)):
        return None
    bindings = bindings_of(ctx, source)
    loads = [_loaded_items(ctx, value) for _, value in bindings]
    if not bindings or not all(loads):
        return None
    statement = loop if isinstance(loop, cst.For) else ctx.statement_of(loop)
    return statement, loads[0], True


def _iterates_as(node: cst.CSTNode, name: str) -> Optional[cst.BaseExpression]:
    """What ``node`` (a ``for`` statement or a comprehension) iterates over when it binds ``name``
    alone as its target."""
    if isinstance(node, cst.For):
        return node.iter if is_name(node.target, name) else None
    if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
        loop: Optional[cst.CompFor] = node.for_in
        while loop is not None:
            if is_name(loop.target, name):
                return loop.iter
            loop = loop.inner_for_in
    return None


def _loaded_items(ctx: FileContext, value: Optional[cst.BaseExpression]) -> Optional[cst.Call]:
    """The ``load_model`` call that makes every item of ``value``: a list comprehension of it, or a
    list or tuple of such calls (the first of them)."""
    if isinstance(value, (cst.ListComp, cst.GeneratorExp)) and _loads_model(ctx, value.elt):
        return value.elt
    if isinstance(value, (cst.List, cst.Tuple)) and value.elements and all(
            _loads_model(ctx, element.value) for element in value.elements):
        return value.elements[0].value
    return None


def loaded_source(ctx: FileContext, loaded: Tuple[cst.BaseStatement, Optional[cst.BaseExpression], bool]) -> str:
    """Where the model of a ``loaded_binding`` comes from, as a report says it."""
    _, value, surely = loaded
    loader = loader_function(ctx, value)
    if loader is not None:
        return f"may come from `load_model` (in `{loader.name.value}`)"
    if surely:
        return "comes from `load_model`"
    return "may come from `load_model` (one of the values it may hold here)"


def _compiled_between(ctx: FileContext, loaded: cst.BaseStatement, entry: TrainingCall,
                      calls: List[TrainingCall]) -> bool:
    """Whether a ``compile`` of the model of ``entry`` runs after ``loaded`` and before the call:
    after it in its block, and in each enclosing block up to the one that holds the call."""
    between = set()
    current: Optional[cst.CSTNode] = loaded
    while current is not None:
        block = ctx.block_of(current)
        if block is None:
            return True  # no path to follow: said to be compiled, so nothing is claimed
        body = list(block.body)
        reading = next((node for node in (entry.call, *ctx.ancestors(entry.call)) if node in body), None)
        end = body.index(reading) + 1 if reading is not None else len(body)
        between |= {id(statement) for statement in body[body.index(current) + 1:end]}
        if reading is not None:
            break
        current = next((node for node in ctx.ancestors(current) if isinstance(node, cst.BaseCompoundStatement)
                        and ctx.block_of(node) is not None), None)
    if current is None:
        return True
    return any(other.method == "compile" and other.model == entry.model and other.owner is entry.owner
               and any(id(node) in between for node in (other.call, *ctx.ancestors(other.call)))
               for other in calls)


def reaching_bindings(ctx: FileContext, name: cst.Name, scope: cst.CSTNode
                      ) -> List[Tuple[cst.BaseStatement, Optional[cst.BaseExpression]]]:
    """The assignments to ``name`` in ``scope`` that its read may see: the last one before the
    read in the read's block (or in the first enclosing block that binds it), and those nested in
    the compound statements after it (both branches of an ``if``/``else``, a ``try``)."""
    bindings = [(assigned, value) for assigned, bound, value in assignments(ctx, scope) if bound == name.value]
    statement: Optional[cst.CSTNode] = ctx.statement_of(name)
    while statement is not None and statement is not scope:
        block = ctx.block_of(statement)
        if block is None:
            return []
        body = list(block.body)
        found: List[Tuple[cst.BaseStatement, Optional[cst.BaseExpression]]] = []
        for assigned, value in bindings:
            top = next((node for node in (assigned, *ctx.ancestors(assigned)) if node in body), None)
            if top is None or body.index(top) >= body.index(statement):
                continue
            found = [(assigned, value)] if top is assigned else found + [(assigned, value)]
        if found:
            return found
        statement = next((node for node in ctx.ancestors(statement) if isinstance(node, cst.BaseCompoundStatement)
                          and ctx.block_of(node) is not None), None)
    return []


def _loads_model(ctx: FileContext, value: Optional[cst.BaseExpression]) -> bool:
    return isinstance(value, cst.Call) and keras_or_legacy(ctx, value.func) in MODEL_LOADERS


def loader_function(ctx: FileContext, value: Optional[cst.BaseExpression]) -> Optional[cst.FunctionDef]:
    """The function of the file that ``value`` calls when one of its ``return``s gives a model read
    with ``load_model``, directly or through a variable of that function (``return
    keras.models.load_model(path)`` in one branch, a new model in the other)."""
    function, returned = called_returns(ctx, value) if value is not None else (None, [])
    if function is None:
        return None
    loaded = {name for _, name, bound in assignments(ctx, function) if _loads_model(ctx, bound)}
    if any(_loads_model(ctx, node) or isinstance(node, cst.Name) and node.value in loaded for node in returned):
        return function
    return None


LEGACY_KERAS = "tensorflow.python.ipu.keras."
_LEGACY_MODELS = ("keras.Model", "keras.Sequential", "keras.models.Model", "keras.models.Sequential")


def keras_or_legacy(ctx: FileContext, node: cst.CSTNode) -> Optional[str]:
    """``keras.X`` for Keras names and for the IPU Keras API of SDK <= 3.0 (``ipu.keras.X``), which
    IPU011 rewrites to Keras in the same port: the speed rules see both the same way."""
    from porter.context import canonical_keras

    qualified = ctx.qualified_name(node)
    if qualified is not None and qualified.startswith(LEGACY_KERAS):
        return "keras." + qualified[len(LEGACY_KERAS):]
    return canonical_keras(qualified)


def _is_legacy_model(ctx: FileContext, node: Optional[cst.CSTNode]) -> bool:
    return isinstance(node, cst.Call) and (ctx.qualified_name(node.func) or "").startswith(
        LEGACY_KERAS) and keras_or_legacy(ctx, node.func) in _LEGACY_MODELS


def _legacy_models(ctx: FileContext) -> set:
    """Variables holding an ``ipu.keras`` model, made directly or by a function that returns one."""
    if not any((ctx.qualified_name(node) or "").startswith(LEGACY_KERAS) for node in ctx.nodes(cst.Attribute)):
        return set()
    builders = {ctx.enclosing_function(node).name.value for node in ctx.nodes(cst.Return)
                if _is_legacy_model(ctx, node.value) and ctx.enclosing_function(node) is not None}
    names = set()
    for assign in ctx.nodes(cst.Assign):
        value = assign.value
        if _is_legacy_model(ctx, value) or (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)
                                             and value.func.value in builders):
            for target in assign.targets:
                if isinstance(target.target, cst.Name):
                    names.add(target.target.value)
    return names


def _find(ctx: FileContext, helper: Optional[str]) -> List[TrainingCall]:
    plan = model_plan(ctx)
    names = plan.model_names | plan.model_like | _legacy_models(ctx)
    # Names bound to a scikit-learn wrapper (`model = KerasClassifier(build_fn=..., batch_size=10)`):
    # its `fit` trains in scikit-learn's way, in batches the wrapper is given (IPU190 reports it).
    wrappers = {(id(owner(ctx, call)), target.target.value) for call, _ in ctx.calls_to(*SKLEARN_WRAPPERS)
                if isinstance(ctx.parent(call), cst.Assign) for target in ctx.parent(call).targets
                if isinstance(target.target, cst.Name)}
    found: List[TrainingCall] = []
    for call in ctx.nodes(cst.Call):
        func = call.func
        if wrappers and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and (
                id(owner(ctx, call)), func.value.value) in wrappers:
            continue
        held = _held_model(ctx, call, names, plan)
        method = _dataset_generator_method(ctx, call) or (func.attr.value if isinstance(func, cst.Attribute) else "")
        if held is None and not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                                 and ctx.qualified_name(func.value) is None and (
                    method in METHODS and func.value.value in names
                    # a tuner given a builder of the file hands its data to `fit`
                    or method == "search" and func.value.value in plan.holders)):
            continue
        scope = owner(ctx, call)
        entry = TrainingCall(call, method, held or func.value.value, ctx.statement_of(call), scope,
                             in_loop(ctx, call, scope))
        if entry.method != "compile":
            _inputs(ctx, entry, helper)
            _model_batch(ctx, entry)
        found.append(entry)
    _arrays_by_use(found)
    return found


def _model_batch(ctx: FileContext, entry: TrainingCall) -> None:
    """A call on arrays (or on one sample) that gives no ``batch_size``, of a model that fixes its
    batch: Keras must run it with the model's batch, not its default of 32."""
    if entry.batch is not None or entry.dataset_input or entry.ragged_or_sparse is not None:
        return
    if not entry.arrays and (entry.data is None or not single_sample(ctx, entry.data, entry.owner)):
        return
    entry.model_batch = fixed_batch(ctx, entry.call, entry.owner)
    if entry.model_batch is not None and entry.model_batch.size is not None:
        entry.batch = cst.Integer(str(entry.model_batch.size))


def _dataset_generator_method(ctx: FileContext, call: cst.Call) -> Optional[str]:
    """``fit`` for ``model.fit_generator(dataset, steps_per_epoch=...)`` (and ``evaluate``/``predict``
    for theirs): TensorFlow 2 hands a ``tf.data`` dataset given alone by position on to that
    method, so its steps follow the same rules. ``fit_generator`` hands a Python generator on to
    ``fit`` as well (IPU151 reports it), with its ``validation_data``, which is then cast and
    trimmed as ``fit``'s. None for any other call."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value.endswith("_generator")):
        return None
    method = func.attr.value[:-len("_generator")]
    positional = [arg for arg in call.args if arg.keyword is None]
    if method == "fit" and positional and not positional[0].star:
        return method
    if method not in METHODS or len(positional) != 1 or positional[0].star or not is_dataset(ctx, positional[0].value):
        return None
    return method


def _arrays_by_use(entries: List[TrainingCall]) -> None:
    """``x`` alone (``model.predict(x_test)``) is taken for a dataset made elsewhere; it is an
    array when the same variable of the same function is an array input of another call
    (``evaluate(x_test, y_test)``, ``validation_data=(x_test, y_test)``)."""
    arrays = set()
    for entry in entries:
        nodes = [arg.value for arg in entry.arrays] + [element.value for tuple_ in entry.validation
                                                       for element in tuple_.elements]
        arrays.update((id(entry.owner), node.value) for node in nodes if isinstance(node, cst.Name))
    for entry in entries:
        data = entry.data
        if entry.dataset_input and isinstance(data, cst.Name) and (id(entry.owner), data.value) in arrays:
            entry.dataset_input = False
            entry.arrays = [arg for arg in entry.call.args if arg.value is data]


def _held_model(ctx: FileContext, call: cst.Call, models: set, plan) -> Optional[str]:
    """``self.model`` for ``self.model.fit(x, y, batch_size=...)`` in a method: a model an object
    holds, trained with an argument only Keras takes (not an estimator's ``fit(X, y)``), or run by
    a method of the class that owns the program's strategy (``plan.instance_runs``);
    ``gan.generator`` for ``gan.generator.predict(noise)``: a part of one of ``models``; or
    ``members[-1]`` for ``members[-1].predict(x)``: an item of a list (or dict) of models;
    ``build(4)`` for ``build(4).fit(x, y)``: a model made where it is run."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in METHODS[1:]):
        return None
    if model_item(func.value, plan.model_collections) or id(func.value) in plan.chained_models:
        return code_of(ctx, func.value)
    if not (isinstance(func.value, cst.Attribute) and isinstance(func.value.value, cst.Name)):
        return None
    holder = func.value.value.value
    if holder == "self" and (is_keras_run(call) or id(call) in plan.instance_runs) or holder in models and ctx.qualified_name(func.value.value) is None:
        return code_of(ctx, func.value)
    if _model_attribute(ctx, call, func.value, plan):
        return code_of(ctx, func.value)
    return None


def _model_attribute(ctx: FileContext, call: cst.Call, held: cst.Attribute, plan) -> bool:
    """``self.model.predict(x)`` in a method, ``clf.model.evaluate(x, y)`` on an instance: the
    attribute is one a class of the file assigns a model (``self.model = keras.Sequential(...)``
    in ``__init__``), so the call runs that model even with no argument only Keras takes."""
    holder = held.value
    attributes = class_model_attributes(ctx, plan)
    if holder.value == "self":
        owner_class = ctx.enclosing(call, cst.ClassDef)
        classes = [owner_class.name.value] if owner_class is not None else []
    else:
        made = values_of(ctx, holder)
        classes = [value.func.value for value in made if isinstance(value, cst.Call)
                   and isinstance(value.func, cst.Name)] if made else []
        if len(classes) != len(made):
            return False  # given something else too (a parameter, another object)
    return bool(classes) and all(held.attr.value in attributes.get(name, ()) for name in classes)


def class_model_attributes(ctx: FileContext, plan) -> Dict[str, Set[str]]:
    """The attributes each class of the file assigns a model to (``self.model = ...``), by class."""
    found: Dict[str, Set[str]] = {}
    for assign in ctx.nodes(cst.Assign):
        owner_class = ctx.enclosing(assign, cst.ClassDef)
        if owner_class is None or not (assign in plan.model_assignments or _built_by_method(ctx, assign, plan)):
            continue
        for target in assign.targets:
            held = target.target
            if isinstance(held, cst.Attribute) and isinstance(held.value, cst.Name) and held.value.value == "self":
                found.setdefault(owner_class.name.value, set()).add(held.attr.value)
    return found


def _built_by_method(ctx: FileContext, assign: cst.Assign, plan) -> bool:
    """``self.model = self._build()``: a method of the same class that returns a variable it
    assigns a model (``model = keras.Sequential(...)``; ``return model``)."""
    value = assign.value
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and is_name(value.func.value, "self")):
        return False
    owner_class = ctx.enclosing(assign, cst.ClassDef)
    methods = [node for node in owner_class.body.body
               if isinstance(node, cst.FunctionDef) and node.name.value == value.func.attr.value]
    if len(methods) != 1:
        return False
    models = {target.target.value for model in plan.model_assignments if ctx.enclosing_function(model) is methods[0]
              for target in model.targets if isinstance(target.target, cst.Name)}
    returns = [node for node in walk(methods[0]) if isinstance(node, cst.Return)]
    return bool(returns) and all(isinstance(node.value, cst.Name) and node.value.value in models for node in returns)


def _inputs(ctx: FileContext, entry: TrainingCall, helper: Optional[str]) -> None:
    call = entry.call
    if call.func.attr.value == "fit_generator" and not is_dataset(ctx, call.args[0].value):
        # A Python generator (IPU151 reports it), and after it the steps, not `y`: only the
        # validation arrays, the sixth argument, are data Keras batches itself.
        _validation_inputs(ctx, entry, argument(call, "validation_data", 5), helper)
        return
    options = _readable_options(ctx, call, entry.owner)
    if options is None:
        options = [arg for arg in call.args if arg.star == "**"]
        # `x` and `y` by position, or by keyword (`fit(x=x, y=y, **options)`)
        plain = [arg for arg in call.args if not arg.star and arg.keyword is None]
        x = plain[0] if plain and plain[0] is call.args[0] else keyword(call, "x")
        y = plain[1] if len(plain) > 1 and entry.method != "predict" else keyword(call, "y")
        # Keras takes `x` as arrays when `y` is given: a dataset or a generator brings its own labels.
        arrays = x is not None and (_surely_array(ctx, x.value, entry.owner) or y is not None and _followed_array(
            ctx, x.value, entry, helper) and not is_dataset(ctx, x.value))
        if options and arrays:
            # Out of sight whatever the batch size: the options may hold `sample_weight`,
            # `validation_split` or a step count that trimmed inputs would no longer match.
            entry.hidden_options = options[0].value
        elif options and x is None and "x" in (literal_options(ctx, options[0].value, entry.owner) or {}):
            entry.hidden_options = options[0].value  # `fit(**config)`: the arrays are in the dict
        elif call.args and call.args[0].star == "*":
            entry.unpacked = call.args[0].value  # `fit(*train_data)`: the inputs, out of sight
        return
    x_at, y_at, batch_at = _POSITIONS[entry.method]
    x = argument(call, "x", x_at)
    y = argument(call, "y", y_at) if y_at is not None else None
    batch = argument(call, "batch_size", batch_at)
    entry.batch = batch.value if batch is not None else options.get("batch_size")
    if is_name(entry.batch, "None"):
        entry.batch = None  # `batch_size=None`, Keras' default: 32 for arrays, a dataset's own batches
    if x is None:
        return
    entry.data = x.value
    entry.ragged_or_sparse = next((kind for arg in (x, y) if arg is not None
                                   for kind in [ragged_or_sparse(ctx, arg.value)] if kind), None)
    if entry.ragged_or_sparse is not None:
        return
    validation = keyword(call, "validation_data")
    _validation_inputs(ctx, entry, validation, helper)
    if is_dataset(ctx, x.value) or _read_by_keras(ctx, x.value):
        entry.dataset_input = True
        return
    if y is None and entry.batch is None and not _surely_array(ctx, x.value, entry.owner) \
            and python_list_loop(ctx, x.value, entry.owner) is None:
        if isinstance(x.value, cst.Name):
            entry.dataset_input = True  # most likely a dataset made elsewhere
        return
    weight_at = _WEIGHT_POSITIONS[entry.method]
    weights = argument(call, "sample_weight", weight_at) if weight_at is not None else None
    candidates = [arg for arg in (x, y, weights) if arg is not None]
    unfollowed = [arg.value for arg in candidates if not _followed_array(ctx, arg.value, entry, helper)]
    if unfollowed:
        if y is not None:
            entry.unfollowed[:0] = unfollowed
        return
    entry.arrays = candidates
    if y is None and validation is not None and entry.held_validation is None and not entry.validation \
            and _inputs_alike(ctx, validation.value, x.value, entry.owner):
        entry.validation_inputs = validation.value


def _inputs_alike(ctx: FileContext, validation: cst.BaseExpression, x: cst.BaseExpression,
                  scope: cst.CSTNode) -> bool:
    """``validation_data=validation_set`` alone (no tuple) for ``fit(train_set)`` on arrays: Keras
    takes it as the inputs, labels inside (Hugging Face's dicts). It holds arrays when it surely
    does, or when it is made as ``x`` is, by the same function of the file (``load_split(90)``
    and ``load_split(500)``); a variable made elsewhere is most likely a dataset."""
    if not isinstance(validation, cst.Name) or is_dataset(ctx, validation):
        return False
    if _surely_array(ctx, validation, scope):
        return True
    made = [last_value_before(ctx, node, scope) if isinstance(node, cst.Name) else None for node in (validation, x)]
    return all(isinstance(value, cst.Call) and isinstance(value.func, cst.Name)
               and ctx.qualified_name(value.func) is None for value in made) and made[0].func.value == made[1].func.value


# What a literal `**options` dict may hold for the port to read it in place of keywords: options
# only, none of them an input that trimming would have to change or a step count tied to the length.
_PLAIN_OPTIONS = frozenset({"batch_size", "epochs", "verbose", "callbacks", "shuffle", "class_weight",
                            "initial_epoch", "validation_freq", "max_queue_size", "workers", "use_multiprocessing"})


def _readable_options(ctx: FileContext, call: cst.Call, scope: cst.CSTNode) -> Optional[Dict[str, cst.BaseExpression]]:
    """The keywords the call gets: none when it has no ``*``/``**`` argument, those of the literal
    dict of a single ``**options`` (see ``literal_options``) when it holds plain options only, else None."""
    starred = [arg for arg in call.args if arg.star]
    if not starred:
        return {}
    if len(starred) > 1 or starred[0].star != "**":
        return None
    options = literal_options(ctx, starred[0].value, scope)
    if options is None or not set(options) <= _PLAIN_OPTIONS or any(keyword(call, key) for key in options):
        return None
    return options


def literal_options(ctx: FileContext, options: cst.BaseExpression, scope: cst.CSTNode
                    ) -> Optional[Dict[str, cst.BaseExpression]]:
    """The entries of the dict ``**options`` passes, by key: ``options`` is a variable last given, in
    the same block, a literal with string keys (``{"batch_size": 32}`` or ``dict(batch_size=32)``),
    or a module variable given one once and read in a function (``FIT_OPTIONS``), that is only ever
    read through ``**`` (no item set, no ``update``, not passed on), else None."""
    if not isinstance(options, cst.Name):
        return None
    value = last_value_before(ctx, options, scope)
    if value is None:
        value = _module_constant(ctx, options)
        scope = ctx.module  # read by functions: every use in the file counts
    entries = _dict_entries(value) if value is not None else None
    if entries is None:
        return None
    for node in walk(scope):
        if isinstance(node, cst.Name) and node.value == options.value and node is not options \
                and not _binds_or_splats(ctx, node):
            return None
    return entries


def _module_constant(ctx: FileContext, name: cst.Name) -> Optional[cst.BaseExpression]:
    """The value of ``name`` read in a function that does not bind it, when the module binds it
    once, at its top level (a constant the function reads when it runs), else None."""
    if ctx.enclosing_function(name) is None:
        return None
    found = bindings_of(ctx, name)  # the module's, when the function neither binds it nor takes it
    return found[0][1] if len(found) == 1 and found[0][0] in ctx.module.body else None


def _dict_entries(value: cst.BaseExpression) -> Optional[Dict[str, cst.BaseExpression]]:
    """``{"batch_size": 32}`` or ``dict(batch_size=32)``, by key; None for anything else."""
    entries: Dict[str, cst.BaseExpression] = {}
    if isinstance(value, cst.Dict):
        for element in value.elements:
            key = string_value(element.key) if isinstance(element, cst.DictElement) else None
            if key is None:
                return None
            entries[key] = element.value
        return entries
    if isinstance(value, cst.Call) and is_name(value.func, "dict") and all(
            arg.keyword is not None and not arg.star for arg in value.args):
        return {arg.keyword.value: arg.value for arg in value.args}
    return None


def _binds_or_splats(ctx: FileContext, name: cst.Name) -> bool:
    """``name`` is an assignment's target, a ``**`` argument, or not the variable at all (an
    attribute's or a keyword's name)."""
    parent = ctx.parent(name)
    if isinstance(parent, cst.Arg):
        return parent.keyword is name or parent.star == "**"
    if isinstance(parent, cst.Attribute):
        return parent.attr is name
    return isinstance(parent, cst.AssignTarget)


def _validation_inputs(ctx: FileContext, entry: TrainingCall, validation: Optional[cst.Arg],
                       helper: Optional[str]) -> None:
    """The arrays of ``validation_data`` the helper trims, or those it cannot follow. Validation
    arrays are batched on their own (by ``batch_size``, else 32), whatever ``x`` is: a dataset, a
    generator or arrays."""
    # Keras takes a list `[x_val, y_val]` as it takes the tuple; `(x_val, y_val) if validate else
    # None` gives one of them, or nothing to validate on.
    given = [made for made in alternatives(validation.value) if not is_name(made, "None")] if validation else []
    if given and all(isinstance(made, (cst.Tuple, cst.List)) for made in given):
        for made in given:
            # Keras takes the parts of a `(x, y[, sample_weight])` tuple as arrays: one the port cannot
            # follow (`tokenize(texts)`) is reported with the inputs, not left to reach the IPU unseen.
            parts = [element.value for element in made.elements]
            unseen = [part for part in parts if not _followed_array(ctx, part, entry, helper)]
            if not unseen:
                entry.validation.append(made)
            elif len(parts) > 1:
                entry.unfollowed.extend(unseen)
    elif validation is not None:
        held = held_values(ctx, validation.value, entry)
        if _array_tuples(ctx, held, entry, helper):
            entry.held_validation = validation.value
            entry.held_validation_optional = any(is_name(made, "None") for made, _ in held)


def held_values(ctx: FileContext, node: cst.BaseExpression,
                 entry: TrainingCall) -> List[Tuple[Optional[cst.BaseExpression], Optional[cst.CSTNode]]]:
    """What ``node``, validation data out of the call, may hold, each with where it is read: the
    value a variable was last given in the same block (``held_out = (x_val, y_val, weights)``), the
    values the methods of its class give an attribute (``self.held_out = [x_val, y_val]``), or what
    every ``return`` of a function of the file gives (``load_split("val")``); each branch of a
    conditional apart (``(x_val, y_val) if validate else None``). None where nothing is known."""
    if isinstance(node, cst.Name):
        held = [(last_value_before(ctx, node, entry.owner), entry.owner)]
    elif isinstance(node, cst.Attribute) and is_name(node.value, "self"):
        held = [(value, owner(ctx, value)) for value in self_attribute_values(ctx, node)]
    else:
        scope, tuples = called_returns(ctx, node)
        held = [(made, scope) for made in tuples]
    return [(made, scope) for value, scope in held for made in (alternatives(value) if value is not None else [None])]


def _array_tuples(ctx: FileContext, held, entry: TrainingCall, helper: Optional[str]) -> bool:
    """The values ``held`` (``held_values``) are ``(x, y[, sample_weight])`` tuples of arrays the
    port can trim, or None, which the trim keeps; at least one is such a tuple."""
    tuples = [(made, scope) for made, scope in held if not is_name(made, "None")]
    return bool(tuples) and all(
        isinstance(made, (cst.Tuple, cst.List)) and len(made.elements) > 1 and all(
            isinstance(element, cst.Element) and _followed_array(ctx, element.value, entry, helper, scope)
            for element in made.elements) for made, scope in tuples)


def _followed_array(ctx: FileContext, node: cst.BaseExpression, entry: TrainingCall, helper: Optional[str],
                    scope: Optional[cst.CSTNode] = None) -> bool:
    """``node``, an input Keras takes as an array, is one the port can trim: a variable (item,
    attribute, or a collection of them), or an array computed in the call (``np.abs(y) + 0.1``).
    ``scope`` is where ``node`` is read, the function of the call by default."""
    if isinstance(node, cst.IfExp):  # `x if full else x[:900]`: an array either way
        return all(_followed_array(ctx, made, entry, helper, scope) for made in alternatives(node))
    if _collection_of_followed(ctx, node, entry, helper, scope):
        return True
    return is_array_expression(node, helper) or isinstance(node, _DERIVED_NODES) and _surely_array(
        ctx, node, entry.owner if scope is None else scope)


def _collection_of_followed(ctx: FileContext, node: cst.BaseExpression, entry: TrainingCall, helper: Optional[str],
                            scope: Optional[cst.CSTNode]) -> bool:
    """A list, tuple or dict written in the call (without ``*`` or ``**``) whose items are each an
    input the port can trim, as a model of several outputs takes them: a variable beside labels
    encoded in the call (``[to_categorical(priority, 3), hours]``)."""
    if isinstance(node, (cst.List, cst.Tuple)):
        items = node.elements
        kind = cst.Element
    elif isinstance(node, cst.Dict):
        items = node.elements
        kind = cst.DictElement
    else:
        return False
    return bool(items) and all(isinstance(item, kind) and _followed_array(ctx, item.value, entry, helper, scope)
                               for item in items)


# Inputs computed in the call itself (`load_split(10)`, `x / 255.0`, `{k: np.array(v) for k, v in
# frame.items()}`, `[np.full(n, user), np.arange(n)]`): arrays when _surely_array says so.
_DERIVED_NODES = (cst.Call, cst.BinaryOperation, cst.UnaryOperation, cst.DictComp, cst.ListComp, cst.List, cst.Tuple,
                  cst.Dict)


# Calls that make one number or string of a value: a list of what they give holds samples,
# which Keras takes as the samples of one input.
_SAMPLE_FUNCTIONS = frozenset({"str", "float", "int"})
_SAMPLE_METHODS = frozenset({"decode", "strip", "lower", "item"})


def _one_sample(item: cst.BaseExpression) -> bool:
    """``item``, what a list comprehension makes of each element, is one number or string
    (``str(t)``, ``t.numpy().decode("utf8")``, ``float(v)``, ``f"{t}"``)."""
    if isinstance(item, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString, cst.Integer, cst.Float)):
        return True
    if not isinstance(item, cst.Call):
        return False
    func = item.func
    return (isinstance(func, cst.Name) and func.value in _SAMPLE_FUNCTIONS
            or isinstance(func, cst.Attribute) and func.attr.value in _SAMPLE_METHODS)


def _surely_array(ctx: FileContext, x: cst.BaseExpression, scope: cst.CSTNode, follow: bool = True,
                  depth: int = 0) -> bool:
    """``x`` alone is an array, not a dataset: samples picked from one (``x_test[:1000]``,
    ``x_test[picked]``: a dataset has no items, a dict may hold one), a table's values or columns
    (``frame.values``, ``dict(frame)``, ``frame["text"]`` of a table pandas made), data of a known
    Keras dataset, a NumPy array or a tensor or a list of them, or a variable last assigned (in the
    same block) one of these."""
    if table_data(ctx, x) is not None:  # a pandas table (`pd.read_csv(...)`, `test.drop(columns=...)`)
        return True
    if isinstance(x, cst.Subscript):
        first = x.slice[0].slice if x.slice else None
        return isinstance(first, cst.Slice) or isinstance(first, cst.Index) and (not isinstance(
            first.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)) or _npz(ctx, x.value, scope)
            or isinstance(x.value, cst.Name) and _batch_of_loop(ctx, x.value)  # `batch["image"]`
            or table_data(ctx, x.value) is not None  # `test["text"]`: a column of a pandas table
            or tokenizer_encoding(ctx, x.value, scope))  # `encoded["input_ids"]`
    if isinstance(x, cst.Attribute) and x.attr.value == "values" or _columns_of(x) or isinstance(
            x, cst.Call) and isinstance(x.func, cst.Attribute) and x.func.attr.value == "to_numpy":
        return True
    if _made_as_array(ctx, x) or isinstance(x, cst.Call) and isinstance(x.func, cst.Attribute) \
            and x.func.attr.value == "predict" and bool(x.args):  # what another model predicted
        return True
    if isinstance(x, cst.Call) and isinstance(x.func, cst.Attribute) and x.func.attr.value in _RESHAPING \
            and ctx.qualified_name(x.func) is None:  # `(frame.values / 255.0).reshape(-1, 28, 28, 1)`
        # `images = images.reshape(n, 28, 28, 1)`: what the variable held before, as well.
        return _surely_array(ctx, x.func.value, scope, follow or depth < 3, depth + 1)
    if isinstance(x, cst.BinaryOperation):  # `x / 255.0`, `x - mean`: arithmetic on an array
        return _scaled(x) or any(_surely_array(ctx, side, scope, follow, depth) for side in (x.left, x.right)) and all(
            isinstance(side, (cst.Integer, cst.Float)) or _surely_array(ctx, side, scope, follow, depth)
            or isinstance(side, cst.Name) for side in (x.left, x.right))
    if isinstance(x, cst.UnaryOperation):
        return _surely_array(ctx, x.expression, scope, follow, depth)
    if isinstance(x, (cst.List, cst.Tuple)):  # several inputs: `[adjacency[:800], features[:800]]`
        return bool(x.elements) and all(isinstance(element, cst.Element) and _surely_array(
            ctx, element.value, scope, follow=follow and depth < 2, depth=depth + 1) for element in x.elements)
    if isinstance(x, cst.Dict):  # named inputs: `{"a": frame["a"].values, "b": body_data}`, followed as a list's
        return bool(x.elements) and all(isinstance(element, cst.DictElement) and _surely_array(
            ctx, element.value, scope, follow=follow and depth < 2, depth=depth + 1) for element in x.elements)
    if isinstance(x, cst.ListComp) and _one_sample(x.elt):  # `[t.decode("utf8") for t in batch[0]]`: samples
        return True
    if isinstance(x, (cst.DictComp, cst.ListComp)):  # `{name: tf.constant([[v]]) for name, v in row.items()}`
        return _made_as_array(ctx, x.value if isinstance(x, cst.DictComp) else x.elt)
    if isinstance(x, cst.Call) and depth < 3 and _returns_arrays(ctx, x, depth):
        return True
    if isinstance(x, cst.Name) and follow:
        value = last_value_before(ctx, x, scope)
        # `inputs = {"title": title_data, ...}`: the variables of a literal dict or list are followed too.
        listed = isinstance(value, (cst.Dict, cst.List, cst.Tuple)) and depth < 2
        if value is not None and _surely_array(ctx, value, scope, follow=listed, depth=depth + 1 if listed else 0) \
                or _batch_of_loop(ctx, x) or _drawn_batch(ctx, x, scope) or _split_from_arrays(ctx, x, scope) \
                or depth < 3 and _unpacked_from_arrays(ctx, x, scope, depth):
            return True
        made = values_of(ctx, x) if value is None else []
        if made and all(one is not None and _surely_array(ctx, one, scope, follow=False) for one in made):
            return True  # every value the variable is given is an array (in a loop, say)
        if depth < 3 and _given_arrays(ctx, x, scope, depth):
            return True
    return static_samples(ctx, x, scope) is not None


# Operators that take a number only with numbers, arrays or tensors (not `list * 2`, not `text % 3`).
_NUMERIC_OPERATORS = (cst.Divide, cst.FloorDivide, cst.Subtract, cst.Add, cst.Power)


def _scaled(x: cst.BinaryOperation) -> bool:
    """``images / 255.0``, ``1 - mask``, ``(frames - 128) / 128``: a variable (attribute, item) and a
    number in arithmetic that only numbers, arrays and tensors take. As a model's input it is an
    array or a tensor, never a dataset (which takes no arithmetic), wherever the variable comes from."""
    sides = (x.left, x.right)
    number = [isinstance(side, (cst.Integer, cst.Float)) for side in sides]
    operand = sides[number.index(True) - 1] if any(number) else None
    numeric = isinstance(x.operator, _NUMERIC_OPERATORS) or isinstance(x.operator, cst.Multiply) and any(
        isinstance(side, cst.Float) for side in sides)
    return numeric and (isinstance(operand, _ARRAY_NODES) or isinstance(operand, cst.BinaryOperation)
                        and _scaled(operand))


def _npz(ctx: FileContext, node: cst.BaseExpression, scope: cst.CSTNode) -> bool:
    """``np.load("data.npz")`` (or a variable last assigned it): a NumPy archive, whose items are
    arrays (``data["x"]``)."""
    if isinstance(node, cst.Name):
        node = last_value_before(ctx, node, scope)
    return isinstance(node, cst.Call) and ctx.qualified_name(node.func) == "numpy.load"


# Functions that split or shuffle the arrays they get, and return arrays (one a name they bind).
_ARRAY_SPLITTERS = frozenset({"sklearn.model_selection.train_test_split", "sklearn.utils.shuffle",
                              "sklearn.utils.resample"})


def _split_from_arrays(ctx: FileContext, name: cst.Name, scope: cst.CSTNode) -> bool:
    """``x_train, x_val, y_train, y_val = train_test_split(x, y)``: ``name`` was last bound, in the
    block that reads it, by unpacking what scikit-learn's splitter returned: arrays."""
    last = last_binding_before(ctx, name, scope)[0]
    small = last.body[0] if isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 else None
    return (isinstance(small, cst.Assign) and isinstance(small.value, cst.Call)
            and ctx.qualified_name(small.value.func) in _ARRAY_SPLITTERS)


def _returns_arrays(ctx: FileContext, call: cst.Call, depth: int) -> bool:
    """``call`` runs a function or method of the file whose every ``return`` gives an array (a loader
    ending in ``return np.expand_dims(image, 0)``, ``return images[keep]``)."""
    function, returned = called_file_returns(ctx, call)
    return bool(returned) and all(_surely_array(ctx, value, function, depth=depth + 1) for value in returned)


def _unpacked_from_arrays(ctx: FileContext, name: cst.Name, scope: cst.CSTNode, depth: int) -> bool:
    """``x_train, x_test = load_data()``, ``(x, y), _ = make_windows(...)``: ``name`` was last bound,
    in the block that reads it (or else everywhere ``scope`` binds it), by unpacking what a function
    of the file returns, and every ``return`` of it gives a tuple with an array in that place."""
    last = last_binding_before(ctx, name, scope)[0]
    bindings = [last] if last is not None else [
        statement for statement, bound, _ in assignments(ctx, scope) if bound == name.value]
    return bool(bindings) and all(_unpacks_arrays(ctx, statement, name.value, depth) for statement in bindings)


def _unpacks_arrays(ctx: FileContext, statement: cst.BaseStatement, name: str, depth: int) -> bool:
    """``statement`` binds ``name`` by unpacking a call of a function or method of the file
    (``pairs, targets = loader.get_batch(32)``) whose every ``return`` gives a tuple with an array
    in that place."""
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
        return False
    target = small.targets[0].target
    place = target_place(target, name)
    function, returned = called_file_returns(ctx, small.value)
    if not place or not returned:
        return False
    parts = [element_at(value, place) for value in returned if not _never_unpacked(ctx, value, target)]
    return bool(parts) and all(
        part is not None and _surely_array(ctx, part, function, depth=depth + 1) for part in parts)


def _never_unpacked(ctx: FileContext, value: cst.BaseExpression, target: cst.BaseExpression) -> bool:
    """What a ``return`` gives cannot be what ``target`` unpacks: a tuple written out with another
    number of items, or a dataset (an episode sampler's ``return dataset`` beside its
    ``return dataset, test_images, test_labels`` when asked for a split)."""
    if isinstance(value, (cst.Tuple, cst.List)):
        return isinstance(target, (cst.Tuple, cst.List)) and len(value.elements) != len(target.elements)
    made = values_of(ctx, value) if isinstance(value, cst.Name) else [value]
    return bool(made) and all(item is not None and dataset_like(ctx, item) for item in made)


def _given_arrays(ctx: FileContext, name: cst.Name, scope: cst.CSTNode, depth: int) -> bool:
    """``name`` is a parameter of ``scope`` that every call of it in the file gives an array
    (``describe(model, rows)`` in a loop over a dataset's batches)."""
    if not isinstance(scope, cst.FunctionDef) or ctx.enclosing(scope, cst.ClassDef) is not None:
        return False
    params = [param.name.value for param in scope.params.params]
    if name.value not in params or any(
            assigned == name.value for _, assigned, _ in assignments(ctx, scope)):
        return False
    position = params.index(name.value)
    calls = local_calls(ctx, scope)
    given = [argument(call, name.value, position) for call in calls]
    # An item of a loop over a Python list of arrays (`for piece in pieces: score(piece)`) is one too.
    return bool(calls) and all(
        arg is not None and not arg.star and (_surely_array(ctx, arg.value, owner(ctx, call), depth=depth + 1)
                                              or python_list_loop(ctx, arg.value, owner(ctx, call)) is not None)
        for arg, call in zip(given, calls) if ctx.enclosing_function(call) is not scope)


def _batch_of_loop(ctx: FileContext, name: cst.Name) -> bool:
    """``images`` in ``for images, labels in val_ds.take(1):``, or in ``images, labels = batch``
    in the body of ``for batch in val_ds.take(1):``: a batch of tensors a dataset gives."""
    for ancestor in ctx.ancestors(name):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
        if isinstance(ancestor, cst.For) and (name.value in bound_names(ancestor.target) or isinstance(
                ancestor.target, cst.Name) and _unpacked_in(ancestor.body, name.value, ancestor.target.value)):
            return dataset_like(ctx, ancestor.iter) or _image_flow(ctx, ancestor.iter)
    return False


def _drawn_batch(ctx: FileContext, name: cst.Name, scope: cst.CSTNode) -> bool:
    """``images`` in ``images, labels = next(iter(val_ds))`` (or ``next(val_ds.as_numpy_iterator())``,
    ``val_ds.as_numpy_iterator().next()``), its last binding before the read: one batch of tensors
    or arrays drawn from a dataset, which ``predict`` takes as arrays (of a length the port cannot
    read), not as a dataset."""
    found = simple_assign(last_binding_before(ctx, name, scope)[0])
    if found is None or not target_place(found[0], name.value):
        return False
    source = _drawn_from(ctx, found[1])
    return source is not None and (dataset_like(ctx, source) or _image_flow(ctx, source, follow_returns=True))


def _drawn_from(ctx: FileContext, value: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The dataset that ``value`` draws its first element from: ``val_ds`` in ``next(iter(val_ds))``,
    ``next(val_ds.as_numpy_iterator())`` or ``val_ds.as_numpy_iterator().next()``; else None."""
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "next" \
            and not value.args:
        reader = value.func.value
    elif isinstance(value, cst.Call) and is_name(value.func, "next") and ctx.qualified_name(value.func) is None \
            and len(value.args) == 1:
        reader = value.args[0].value
    else:
        return None
    if isinstance(reader, cst.Call) and is_name(reader.func, "iter") and ctx.qualified_name(reader.func) is None \
            and len(reader.args) == 1:
        return reader.args[0].value
    if isinstance(reader, cst.Call) and isinstance(reader.func, cst.Attribute) \
            and reader.func.attr.value == "as_numpy_iterator":
        return reader.func.value
    return None


def _image_flow(ctx: FileContext, source: cst.BaseExpression, follow_returns: bool = False) -> bool:
    """``datagen.flow_from_directory(...)``, ``image_dataset_from_directory(...)`` (or a variable
    assigned one): batches of arrays or tensors read from files. With ``follow_returns``, also a
    call of a function of the file whose every ``return`` gives one (``make_windows(series, 64)``)."""
    if isinstance(source, cst.Name):
        made = values_of(ctx, source)
        return bool(made) and all(value is not None and _image_flow(ctx, value, follow_returns) for value in made)
    function, returned = called_returns(ctx, source) if follow_returns else (None, [])
    if function is not None:
        return bool(returned) and all(_image_flow(ctx, value) for value in returned)
    return isinstance(source, cst.Call) and (
        isinstance(source.func, cst.Attribute) and source.func.attr.value in IMAGE_FLOWS
        or (ctx.keras_name(source.func) or "").rpartition(".")[2] in _KERAS_READERS)


# Keras' readers of folders and series, which give batched datasets.
_KERAS_READERS = frozenset(name.rpartition(".")[2] for name in KERAS_BATCHED_SOURCES)


def _read_by_keras(ctx: FileContext, x: cst.BaseExpression) -> bool:
    """``test_ds``, a variable given a dataset one of Keras' readers made
    (``keras.utils.text_dataset_from_directory(...)``) and otherwise only what is made of it in
    place (``test_ds = test_ds.map(f)``, ``test_ds = prepare(test_ds)``): a dataset, even when the
    call gives it a ``batch_size`` as it would arrays (which Keras ignores for a dataset, and which
    has no items to trim)."""
    if not isinstance(x, cst.Name):
        return False
    read = False
    for value in values_of(ctx, x):
        value = chain(ctx, value)[1]  # `reader(...).map(f).cache()`: the reader's call
        if isinstance(value, cst.Call) and (ctx.keras_name(value.func) or "").rpartition(".")[2] in _KERAS_READERS:
            read = True
        elif not (is_name(value, x.value) or isinstance(value, cst.Call) and isinstance(value.func, cst.Name)
                  and ctx.qualified_name(value.func) is None and any(is_name(arg.value, x.value) for arg in value.args)):
            return False  # given something else too (`x = np.concatenate(...)`): not surely a dataset
    return read


def _unpacked_in(body: cst.BaseSuite, name: str, element: str) -> bool:
    """``name`` is bound in ``body`` by unpacking ``element`` (``images, labels = batch``)."""
    return any(isinstance(node, cst.Assign) and is_name(node.value, element) and any(
        isinstance(target.target, (cst.Tuple, cst.List)) and name in bound_names(target.target)
        for target in node.targets) for node in walk(body))


# Keras utilities that give back arrays (or a tensor of the same samples): labels one-hot encoded,
# padded sequences, an image read into an array, inputs scaled for an application model.
_KERAS_ARRAY_MAKERS = {"to_categorical", "pad_sequences", "img_to_array", "preprocess_input", "normalize"}
_DATASET_MAKERS = ("tensorflow.data.", "tensorflow.keras.", "tensorflow.compat.", "tensorflow.python.")
# Functions of other libraries that give back one NumPy array, a number for each sample they are given:
# scikit-learn's weights for balanced classes (`sample_weight=compute_sample_weight("balanced", y)`).
_LIBRARY_ARRAY_MAKERS = frozenset({"sklearn.utils.class_weight.compute_sample_weight",
                                   "sklearn.utils.compute_sample_weight"})
# Array methods that give back an array of what they are called on.
_RESHAPING = frozenset({"reshape", "astype", "copy", "ravel", "flatten", "squeeze", "transpose"})
# Methods that give back arrays whatever they are called on: scikit-learn's transformers, pandas.
_ARRAY_METHODS = frozenset({"transform", "fit_transform", "to_numpy", "inverse_transform"})


def _made_as_array(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """A NumPy or TensorFlow op (``np.asarray(...)``, ``np.stack(...).reshape(...)``,
    ``tf.cast(...)``), or a list or tuple literal of them: what Keras takes as arrays, never a
    dataset (``tf.data`` and Keras' dataset makers left out)."""
    if isinstance(value, (cst.List, cst.Tuple)):
        return bool(value.elements) and all(
            isinstance(element, cst.Element) and _made_as_array(ctx, element.value) for element in value.elements)
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
            ctx.qualified_name(value.func) is None:
        if value.func.attr.value in _ARRAY_METHODS:
            return True  # a fitted scaler's `transform(...)`, a table's `to_numpy()`
        if value.func.attr.value in _RANDOM_METHODS and _random_generator(ctx, value.func.value):
            return True  # `rng.normal(size=(n, 6))`: a draw of NumPy's random generator
        value = value.func.value  # a method of what NumPy made: `.reshape(...)`, `.astype(...)`
    if isinstance(value, cst.Attribute) and value.attr.value == "values":
        return True  # a pandas table's (or column's) values: `test.values.reshape(-1, 28, 28, 1)`
    if isinstance(value, cst.Call) and _layer_applied(ctx, value):
        return True
    made_by = (ctx.qualified_name(value.func) or "") if isinstance(value, cst.Call) else ""
    keras = ctx.keras_name(value.func) if isinstance(value, cst.Call) else None
    return made_by.startswith(("numpy.", "tensorflow.")) and not made_by.startswith(_DATASET_MAKERS) or (
        made_by in _LIBRARY_ARRAY_MAKERS) or (
        keras is not None and keras.rpartition(".")[2] in _KERAS_ARRAY_MAKERS)


# What a Hugging Face tokenizer, feature extractor or processor is asked to give back as arrays
# (`return_tensors="np"`) or TensorFlow tensors (`"tf"`), one row a sample.
_ARRAY_TENSOR_TYPES = frozenset({"np", "tf"})


def tokenizer_encoding(ctx: FileContext, value: cst.BaseExpression, scope: cst.CSTNode) -> bool:
    """``tokenizer(texts, padding=True, return_tensors="np")`` (or its ``batch_encode_plus``), or a
    variable last given one: an object the file made, not an imported class
    (``DataCollatorWithPadding(..., return_tensors="tf")`` makes a collator), called for arrays or
    tensors. What it gives is a dict class of its own (a ``BatchEncoding``), whose items
    (``encoded["input_ids"]``) are arrays, one row a sample."""
    if isinstance(value, cst.Name):
        value = last_value_before(ctx, value, scope)
    if not isinstance(value, cst.Call) or ctx.qualified_name(value.func) is not None:
        return False
    kind = keyword(value, "return_tensors")
    return kind is not None and isinstance(kind.value, cst.SimpleString) \
        and kind.value.evaluated_value in _ARRAY_TENSOR_TYPES


# NumPy's makers of a random generator, whose draws (`rng.normal(...)`) are arrays.
_RANDOM_GENERATORS = frozenset({"numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.Generator"})


def _random_generator(ctx: FileContext, node: cst.BaseExpression) -> bool:
    """``np.random.default_rng(seed)``, or a variable only ever assigned one (``rng``)."""
    made = values_of(ctx, node) if isinstance(node, cst.Name) else [node]
    return bool(made) and all(
        isinstance(value, cst.Call) and ctx.qualified_name(value.func) in _RANDOM_GENERATORS for value in made)


def _layer_applied(ctx: FileContext, call: cst.Call) -> bool:
    """``vectorize(samples)``: a call of a variable only ever assigned a Keras layer
    (``vectorize = layers.TextVectorization(...)``). A layer called on data answers a tensor."""
    if not (isinstance(call.func, cst.Name) and ctx.qualified_name(call.func) is None):
        return False
    made = values_of(ctx, call.func)
    return bool(made) and all(
        isinstance(value, cst.Call) and (ctx.keras_name(value.func) or "").startswith("keras.layers.")
        and ctx.keras_name(value.func) not in INPUTS for value in made)


# ------------------------------------------------------------------------------ arithmetic
def int_value(node: Optional[cst.BaseExpression]) -> Optional[int]:
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    return None


def samples_per_execution(config) -> int:
    """Samples of one complete execution, per batch: replicas x batches per execution. With
    ``auto`` the execution is the whole (trimmed) epoch, so the data only needs whole
    accumulation groups; otherwise the K steps of an execution (a multiple of the accumulation
    count, "Keras with IPUs") or one accumulation group when only accumulation is asked for."""
    steps = throughput.config_steps(config)
    accumulation = throughput.config_accumulation(config)
    per_replica = steps if steps is not None else accumulation
    return throughput.trim_multiple(1, throughput.config_replicas(config), per_replica, accumulation)


def smallest_per_execution(config) -> int:
    """Samples of the smallest execution, per batch: when the data holds fewer batches than
    ``steps_per_execution``, Keras shortens the execution to them (Targeting the IPU from TensorFlow 2,
    "Keras with IPUs"), which
    must still be whole accumulation groups on every replica."""
    return throughput.trim_multiple(1, throughput.config_replicas(config), throughput.config_accumulation(config))


def multiple_code(ctx: FileContext, entry: TrainingCall, config, factor: Optional[int] = None) -> str:
    """The expression of the trimming multiple: batch x replicas x steps (x accumulation)."""
    factor = samples_per_execution(config) if factor is None else factor
    batch_value = int_value(entry.batch) if entry.batch is not None else KERAS_DEFAULT_BATCH
    if batch_value is not None:
        return str(batch_value * factor)
    batch = code_of(ctx, entry.batch)
    if factor == 1:
        return batch  # an argument of its own
    if not isinstance(entry.batch, _OPERANDS):  # `(a + b) * 4`, `(a * b) * 4`
        batch = f"({batch})"
    return f"{batch} * {factor}"


# Expressions that are multiplied as they are written: `cfg["batch"] * 4`, `args.batch * 4`.
_OPERANDS = (cst.Name, cst.Attribute, cst.Subscript, cst.Call, cst.Integer)


def speed_asked(config) -> bool:
    """Whether any option that changes the batch arithmetic was given."""
    return (config.steps_per_execution is not None or throughput.config_replicas(config) > 1
            or config.gradient_accumulation is not None)


# ---------------------------------------------------------------------------------- layout
_EMPTY = cst.Module(body=[])


def _render(node: cst.CSTNode) -> str:
    return _EMPTY.code_for_node(node)


def call_columns(ctx: FileContext, entry: TrainingCall) -> Tuple[int, int]:
    """(indentation of the call's statement, column of the call relative to it), from the original
    code; both move together when a block is indented later, so the relative column stays true.
    The positions of every training call of the file are found in one pass over it."""
    where = ctx.shared(_CALL_COLUMNS, lambda: _positions_of_calls(ctx))
    call_line, call_column = where.get(id(entry.call), (1, 1))
    statement_line, statement_column = where.get(id(entry.statement), (call_line, 1)) if (
        entry.statement is not None) else (call_line, 1)
    if statement_line != call_line:
        statement_column = call_column
    if ctx.enclosing(entry.call, cst.FormattedString) is not None:
        return statement_column - 1, ONE_LINE
    return statement_column - 1, call_column - statement_column


# The column ``call_columns`` gives a call in the braces of an f-string: so far left that ``layout``
# never breaks it, as the SDK's Python (before 3.12) ends such an f-string at a line break.
ONE_LINE = -10 ** 6


def _positions_of_calls(ctx: FileContext) -> Dict[int, Tuple[int, int]]:
    """(line, column) of every call of a training method of the file (every ``TrainingCall``'s
    call is one) and of its statement: one pass over the file for all of them."""
    from porter.positions import positions

    nodes: List[cst.CSTNode] = []
    for call in ctx.nodes(cst.Call):
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in _COLUMN_METHODS:
            nodes.append(call)
            statement = ctx.statement_of(call)
            if statement is not None:
                nodes.append(statement)
    return dict(positions(ctx.module, nodes))


def layout(indent: int, offset: int, extra_indent: int = 4):
    """A replacement that breaks a call after commas when a line of it grows past the line limit;
    continuation lines line up after the opening parenthesis (a call already written on several
    lines keeps its breaks), and a keyword argument too long for its line whose value is a tuple
    (``validation_data=(...)``) is broken after the tuple's commas too. ``extra_indent`` allows for a
    ``with strategy.scope():`` block the port may add around the statement."""

    def build(call: cst.Call) -> cst.Call:
        lines = _render(call).split("\n")
        limit = LINE_LIMIT - indent - extra_indent
        if offset + len(lines[0]) <= limit and all(len(line) <= limit for line in lines[1:]) or not call.args:
            return call
        # Continuation lines line up after the parenthesis, or with the first argument when the
        # script starts it on a line of its own (a hanging indent).
        column = _broken_at(call.whitespace_before_args, offset + len(_render(call.func)) + 1)
        args = list(call.args)
        width = column
        for index, arg in enumerate(args):
            piece = len(_render(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)))
            tail = 2 if index < len(args) - 1 else 1
            if index > 0 and isinstance(getattr(args[index - 1].comma, "whitespace_after", None),
                                        cst.ParenthesizedWhitespace):
                # The script breaks the line here already: the argument starts where it puts it.
                width = _broken_at(args[index - 1].comma.whitespace_after, column)
            elif index > 0 and width + piece + tail > limit:
                args[index - 1] = args[index - 1].with_changes(comma=cst.Comma(
                    whitespace_after=cst.ParenthesizedWhitespace(
                        indent=True, last_line=cst.SimpleWhitespace(" " * column))))
                width = column
            if width + piece + tail > limit:
                args[index] = _broken_tuple(args[index], width)
            width += piece + tail
        return call.with_changes(args=args)

    return build


def _broken_at(whitespace, column: int) -> int:
    """The column (past the statement's indentation) where what follows ``whitespace`` starts:
    where a line break the script writes puts it, else ``column``."""
    if isinstance(whitespace, cst.ParenthesizedWhitespace) and whitespace.indent:
        return len(whitespace.last_line.value)
    return column


def _broken_tuple(arg: cst.Arg, column: int) -> cst.Arg:
    """``arg`` (starting at ``column``) with its value, a tuple in parentheses, written one
    element a line, lined up after the parenthesis; any other argument as it is. The tuple may be
    given by keyword (``validation_data=(...)``) or by position (the inputs the port hands to its
    split helper)."""
    value = arg.value
    if not (isinstance(value, cst.Tuple) and value.lpar and len(value.elements) > 1):
        return arg
    alone = arg.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=cst.SimpleWhitespace(""))
    inside = column + len(_render(alone)) - len(_render(value)) + 1
    comma = cst.Comma(whitespace_after=cst.ParenthesizedWhitespace(
        indent=True, last_line=cst.SimpleWhitespace(" " * inside)))
    elements = [element.with_changes(comma=comma) for element in value.elements[:-1]] + [value.elements[-1]]
    return arg.with_changes(value=value.with_changes(elements=elements))


# ------------------------------------------------------------------------- static sizes
# Samples in the (train, test) splits of the Keras datasets.
KNOWN_DATASETS = {
    "keras.datasets.mnist.load_data": (60000, 10000),
    "keras.datasets.fashion_mnist.load_data": (60000, 10000),
    "keras.datasets.cifar10.load_data": (50000, 10000),
    "keras.datasets.cifar100.load_data": (50000, 10000),
}
# Calls that keep the number of samples of their first argument.
_SAME_LENGTH_FUNCTIONS = ("numpy.expand_dims", "keras.utils.to_categorical", "tensorflow.cast",
                          "numpy.asarray", "numpy.array", "numpy.float32")
_SAME_LENGTH_METHODS = ("astype", "copy")


_INT_OPERATIONS = {cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b,
                   cst.Multiply: lambda a, b: a * b, cst.FloorDivide: lambda a, b: a // b}


def static_int(ctx: FileContext, node: Optional[cst.BaseExpression]) -> Optional[int]:
    """An int literal, or a module constant assigned an int literal once, or a sum, difference,
    product or floor division of them (``N_TRAIN + N_VAL``)."""
    value = int_value(node)
    if isinstance(node, cst.BinaryOperation) and type(node.operator) in _INT_OPERATIONS:
        left, right = static_int(ctx, node.left), static_int(ctx, node.right)
        if left is None or right is None or (isinstance(node.operator, cst.FloorDivide) and right == 0):
            return None
        return _INT_OPERATIONS[type(node.operator)](left, right)
    if value is not None or not isinstance(node, cst.Name):
        return value
    found = None
    for assign in ctx.nodes(cst.Assign):
        if any(isinstance(target.target, cst.Name) and target.target.value == node.value for target in assign.targets):
            if found is not None or ctx.enclosing_function(assign) is not None:
                return None
            found = int_value(assign.value)
    return found


def _same_length_source(ctx: FileContext, value: cst.BaseExpression, name: str) -> bool:
    """``value`` has as many samples as the variable ``name``: ``x / 255``, ``x.astype(...)``,
    ``np.expand_dims(x, -1)``, ``x[..., None]``..."""
    if isinstance(value, cst.Name):
        return value.value == name
    if isinstance(value, cst.BinaryOperation):
        return _same_length_source(ctx, value.left, name) and not _mentions(value.right, name)
    if isinstance(value, cst.Subscript):
        first = value.slice[0].slice if value.slice else None
        keeps = isinstance(first, cst.Index) and isinstance(first.value, cst.Ellipsis)
        return keeps and _same_length_source(ctx, value.value, name)
    if isinstance(value, cst.Call):
        if isinstance(value.func, cst.Attribute) and value.func.attr.value in _SAME_LENGTH_METHODS:
            return _same_length_source(ctx, value.func.value, name)
        if isinstance(value.func, cst.Attribute) and value.func.attr.value == "reshape" and _flattens_samples(value):
            return _same_length_source(ctx, value.func.value, name)
        qualified = ctx.qualified_name(value.func) or ""
        if qualified in _SAME_LENGTH_FUNCTIONS or canonical(qualified) in _SAME_LENGTH_FUNCTIONS:
            return bool(value.args) and _same_length_source(ctx, value.args[0].value, name)
    return False


def _flattens_samples(call: cst.Call) -> bool:
    """``x.reshape(-1, 784)``, ``x.reshape((-1, 28, 28, 1))``: the samples stay on the first axis,
    each one reshaped (a ``-1`` first, and the shape of one sample after it)."""
    dims = [arg.value for arg in call.args if arg.keyword is None]
    if len(dims) == 1 and isinstance(dims[0], (cst.Tuple, cst.List)):
        dims = [element.value for element in dims[0].elements]
    first = dims[0] if dims else None
    return (len(dims) >= 2 and isinstance(first, cst.UnaryOperation) and isinstance(first.operator, cst.Minus)
            and isinstance(first.expression, cst.Integer) and first.expression.value == "1")


def canonical(qualified: str) -> str:
    from porter.context import canonical_keras

    return canonical_keras(qualified) or qualified


def _mentions(node: cst.CSTNode, name: str) -> bool:
    from porter.context import walk

    return any(isinstance(child, cst.Name) and child.value == name for child in walk(node))


def static_samples(ctx: FileContext, data: cst.BaseExpression, owner: cst.CSTNode) -> Optional[int]:
    """The number of samples of ``data`` when it is a variable unpacked from a Keras dataset's
    ``load_data()`` in ``owner``, or made there by NumPy with a static first dimension
    (``np.zeros((1024, 4))``, ``rng.normal(size=(1024, 4))``), and only reassigned in ways that keep
    its length."""
    if not isinstance(data, cst.Name):
        return None
    name = data.value
    size = None
    for assign in ctx.nodes(cst.Assign):
        if (ctx.enclosing_function(assign) or ctx.module) is not owner:
            continue
        for target in assign.targets:
            position = _unpacked_position(target.target, name)
            if position is None:
                continue
            value = assign.value
            if position[0] == 99 and _pairs_up(target.target, value):
                # `x_train, x_test = x_train / 255.0, x_test / 255.0`: each name gets its own value.
                value, position = value.elements[position[1]].value, (-1, -1)
            if isinstance(value, cst.Call) and canonical(
                    ctx.qualified_name(value.func) or "") in KNOWN_DATASETS and size is None and position[0] < 2:
                size = KNOWN_DATASETS[canonical(ctx.qualified_name(value.func))][position[0]]
            elif position[0] == 99 and size is None and _split_part_length(ctx, value, position[1], owner) is not None:
                size = _split_part_length(ctx, value, position[1], owner)
            elif position == (-1, -1) and size is not None and _same_length_source(ctx, value, name):
                continue
            elif position == (-1, -1):
                # made with its length written out, or sliced from data of known length; once
                # counted, reshaped to a length written out
                if size is None:
                    size = _made_length(ctx, value)
                    if size is None:
                        size = _sliced_length(ctx, value, name, owner)
                else:
                    size = _reshaped_length(ctx, value, name)
                if size is None:
                    return None
            else:
                return None
    for node in ctx.nodes(cst.AugAssign):
        if isinstance(node.target, cst.Name) and node.target.value == name and (
                ctx.enclosing_function(node) or ctx.module) is owner and not isinstance(
                node.operator, (cst.DivideAssign, cst.MultiplyAssign, cst.AddAssign, cst.SubtractAssign)):
            return None
    return size if size is not None else _listed_length(ctx, data, owner)


def _split_part_length(ctx: FileContext, value: cst.BaseExpression, place: int,
                       owner: cst.CSTNode) -> Optional[int]:
    """The samples of the part at ``place`` of ``train_test_split(x, y, test_size=0.1)`` (training,
    test, training, test...) when ``x`` has a known length and the sizes are numbers written out,
    counted as scikit-learn counts them: a fraction of test samples rounded up, of training samples
    rounded down, the other part the rest; a quarter tests when neither is given."""
    if not isinstance(value, cst.Call) or ctx.qualified_name(value.func) != "sklearn.model_selection.train_test_split":
        return None
    arrays = [arg.value for arg in value.args if arg.keyword is None]
    assign = ctx.parent(value)
    if not arrays or any(arg.star for arg in value.args) or place >= 2 * len(arrays) \
            or not isinstance(assign, cst.Assign):
        return None
    # `x, x_val = train_test_split(x)`: the name it binds is its input, counted before the split.
    split = {leaf.value for array in arrays for leaf in walk(array) if isinstance(leaf, cst.Name)}
    if any(isinstance(node, cst.Name) and node.value in split for made in assign.targets for node in walk(made.target)):
        return None
    samples = static_length(ctx, arrays[0], owner)
    sizes = {}
    for name in ("test_size", "train_size"):
        given = keyword(value, name)
        if given is not None and not isinstance(given.value, (cst.Integer, cst.Float)):
            return None
        sizes[name] = None if given is None else (
            int(given.value.value) if isinstance(given.value, cst.Integer) else float(given.value.value))
    if samples is None:
        return None
    test, train = sizes["test_size"], sizes["train_size"]
    if test is None and train is None:
        test = 0.25
    tests = None if test is None else test if isinstance(test, int) else math.ceil(test * samples)
    trains = None if train is None else train if isinstance(train, int) else math.floor(train * samples)
    trains = samples - tests if trains is None else trains
    tests = samples - trains if tests is None else tests
    return trains if place % 2 == 0 else tests


def _listed_length(ctx: FileContext, name: cst.Name, owner: cst.CSTNode) -> Optional[int]:
    """The samples of ``name`` bound by ``for x, y in tasks:`` over a Python list written out or
    made by a comprehension (``python_list_loop``) whose every item holds, in that place, an array
    of the same static length (``[(np.random.rand(12, 4), ...) for _ in range(n)]``): 12. None when
    an item's length is unknown or the items differ."""
    loop = python_list_loop(ctx, name, owner)
    key = (id(owner), name.value)
    if loop is None or key in _COUNTING:
        return None
    source, numbered = listed(ctx, loop.iter)
    place = [] if isinstance(loop.target, cst.Name) else target_place(loop.target, name.value)
    if numbered:  # `for number, (x, y) in enumerate(tasks)`: the item is second
        place = place[1:] if place and place[0] == 1 else None
    lists = values_of(ctx, source) if isinstance(source, cst.Name) else [source]
    items = [item for made in lists for item in _written_items(made)]
    if place is None or not items or None in items:
        return None
    _COUNTING.add(key)
    try:
        lengths = {_part_length(ctx, item, place) for item in items}
    finally:
        _COUNTING.discard(key)
    return lengths.pop() if len(lengths) == 1 else None


def _written_items(made: Optional[cst.BaseExpression]) -> List[Optional[cst.BaseExpression]]:
    """The items a loop takes from a list (or tuple) written out, or a comprehension's one item
    (``held_items``); [None] for anything else, a dict included (a loop takes its keys), whose
    items cannot be read."""
    listed_items = held_items(made) if made is not None else None
    return listed_items[1] if listed_items is not None and not listed_items[0] else [None]


def _part_length(ctx: FileContext, item: cst.BaseExpression, place: List[int]) -> Optional[int]:
    """The static length of the array at ``place`` of an item written out, counted in the
    function (or module) that writes it."""
    part = element_at(item, place)
    return static_length(ctx, part, owner(ctx, item)) if part is not None else None


# NumPy functions (and Generator methods) that make an array of a given shape: where the shape is.
_SHAPE_FIRST = ("numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full", "tensorflow.zeros", "tensorflow.ones",
                "tensorflow.fill", "tensorflow.random.normal", "tensorflow.random.uniform",
                "tensorflow.random.truncated_normal")
_COUNTS = ("numpy.linspace", "tensorflow.linspace")  # (start, stop, num): num samples
_DIMENSIONS = ("numpy.random.rand", "numpy.random.randn")
# NumPy's random draws (of `numpy.random` and of a `default_rng()` generator), by the position of
# their `size` argument: `np.random.normal(0, 1, (n, 100))` draws `n` samples.
_RANDOM_METHODS = {"normal": 2, "uniform": 2, "random": 0, "integers": 2, "randint": 2, "standard_normal": 0,
                   "random_sample": 0, "binomial": 2, "poisson": 1, "choice": 1, "exponential": 1}


# Makers of an array from the values written out (a list: one sample an element).
_FROM_LITERAL = frozenset({"numpy.array", "numpy.asarray", "tensorflow.constant", "tensorflow.convert_to_tensor"})


def literal_samples(node: cst.BaseExpression) -> Optional[int]:
    """The number of items of a list or tuple literal of numbers or strings (``["great movie"]``):
    what Keras takes as that many samples of one input; None for anything else."""
    if not isinstance(node, (cst.List, cst.Tuple)) or not node.elements:
        return None
    scalars = (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)
    if all(isinstance(element, cst.Element) and (isinstance(element.value, scalars) or isinstance(
            element.value, cst.UnaryOperation) and isinstance(element.value.expression, scalars))
           for element in node.elements):
        return len(node.elements)
    return None


# Text functions that give one sample for each item of their first argument.
_PER_ITEM_FUNCTIONS = frozenset({"keras.preprocessing.sequence.pad_sequences", "keras.utils.pad_sequences"})
_PER_ITEM_METHODS = frozenset({"texts_to_sequences", "texts_to_matrix", "sequences_to_matrix"})


def _per_item_argument(ctx: FileContext, call: cst.Call) -> Optional[cst.BaseExpression]:
    """What ``call`` makes one sample of per item: the first argument of ``pad_sequences(...)``
    or of a tokenizer's ``texts_to_sequences(...)``; None for other calls."""
    first = call.args[0] if call.args and call.args[0].keyword is None and not call.args[0].star else None
    if first is None:
        return None
    if ctx.keras_name(call.func) in _PER_ITEM_FUNCTIONS:
        return first.value
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in _PER_ITEM_METHODS \
            and ctx.qualified_name(call.func) is None:
        return first.value
    return None


def _made_length(ctx: FileContext, value: cst.BaseExpression) -> Optional[int]:
    """The first dimension of an array NumPy (or TensorFlow) makes with a static shape, through
    ``.astype(...)``; the texts a tokenizer and ``pad_sequences`` make samples of, when they are a
    literal list (``pad_sequences(tokenizer.texts_to_sequences(["one text"]))``)."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "astype":
        value = value.func.value
    if not isinstance(value, cst.Call):
        return None
    per_item = _per_item_argument(ctx, value)
    if isinstance(per_item, (cst.List, cst.Tuple)):  # texts, or sequences (lists) of ids: one sample each
        return None if any(isinstance(item, cst.StarredElement) for item in per_item.elements) \
            else len(per_item.elements)
    if per_item is not None:
        return _made_length(ctx, per_item)
    qualified = ctx.qualified_name(value.func) or ""
    literal = value.args[0].value if value.args and value.args[0].keyword is None else None
    if qualified in _FROM_LITERAL and isinstance(literal, (cst.List, cst.Tuple)) and not any(
            isinstance(element, cst.StarredElement) for element in literal.elements):
        return len(literal.elements)  # `np.array([[1], [0], [1]])`, `tf.constant([...])`: one sample an element
    if qualified in _DIMENSIONS:
        return static_int(ctx, value.args[0].value) if value.args and value.args[0].keyword is None else None
    if qualified in _COUNTS:
        count = argument(value, "num", 2)
        return static_int(ctx, count.value) if count is not None else None
    shape = argument(value, "shape", 0) if qualified in _SHAPE_FIRST else None
    method = value.func.attr.value if isinstance(value.func, cst.Attribute) else None
    if shape is None and method in _RANDOM_METHODS and (qualified.startswith("numpy.random.") or not qualified):
        shape = argument(value, "size", _RANDOM_METHODS[method])
    elif shape is None and qualified.startswith("numpy.random."):
        shape = keyword(value, "size")
    if shape is None:
        return None
    first = shape.value
    if isinstance(first, (cst.Tuple, cst.List)):
        first = first.elements[0].value if first.elements else None
    return static_int(ctx, first) if first is not None else None


def _sliced_length(ctx: FileContext, value: cst.BaseExpression, name: str, owner: cst.CSTNode) -> Optional[int]:
    """The samples of ``value`` when it slices another variable of countable length with static
    bounds (``x_val = x[200:]``, ``x[:n_train]``): a split of data made in ``owner``."""
    if not (isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) and value.value.value != name):
        return None
    key = (id(owner), name)
    if key in _COUNTING:
        return None  # (`a = b[1:]` and `b = a[1:]`: no length to start from)
    _COUNTING.add(key)
    try:
        return static_length(ctx, value, owner)
    finally:
        _COUNTING.discard(key)


_COUNTING: Set[Tuple[int, str]] = set()  # the variables whose length is being counted, against cycles


def _reshaped_length(ctx: FileContext, value: cst.BaseExpression, name: str) -> Optional[int]:
    """``N`` for ``name.reshape(N, ...)`` (or ``.reshape((N, ...))``, then ``.astype(...)``, ``/ 255``):
    the first dimension written out."""
    while isinstance(value, cst.BinaryOperation) and not _mentions(value.right, name):
        value = value.left
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "astype":
        value = value.func.value
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "reshape"
            and isinstance(value.func.value, cst.Name) and value.func.value.value == name and value.args):
        return None
    first = value.args[0].value
    if isinstance(first, (cst.Tuple, cst.List)):
        first = first.elements[0].value if first.elements else None
    length = static_int(ctx, first) if first is not None else None
    return length if length is not None and length > 0 else None


def _pairs_up(target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
    """``a, b = f(a), g(b)``: a flat tuple of names given a tuple of as many values, one each."""
    return (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List))
            and len(target.elements) == len(value.elements)
            and not any(isinstance(element, cst.StarredElement) for element in (*target.elements, *value.elements)))


def _unpacked_position(target: cst.BaseExpression, name: str) -> Optional[Tuple[int, int]]:
    """(split, item) of ``name`` in ``(x_train, y_train), (x_test, y_test) = ...``; (-1, -1) for a
    plain ``name = ...``; None when the target does not bind ``name``."""
    if isinstance(target, cst.Name):
        return (-1, -1) if target.value == name else None
    if isinstance(target, (cst.Tuple, cst.List)):
        for split, element in enumerate(target.elements):
            inner = element.value
            if isinstance(inner, (cst.Tuple, cst.List)):
                for item, leaf in enumerate(inner.elements):
                    if isinstance(leaf.value, cst.Name) and leaf.value.value == name:
                        return (split, item)
            elif isinstance(inner, cst.Name) and inner.value == name:
                return (99, split)  # bound, but not as a (data, labels) split
    return None


def first_input(data: cst.BaseExpression) -> cst.BaseExpression:
    """The first of several inputs written as one list, tuple or dict (``[ids, numbers]``,
    ``{"age": age, "income": income}``), through nesting: Keras takes as many samples from each
    input, so the first one counts them all. ``data`` itself when it is one input, a list of
    samples (``[[1, 2], [3, 4]]``) included."""
    while not _holds_samples(data):
        if isinstance(data, (cst.List, cst.Tuple)) and data.elements and isinstance(data.elements[0], cst.Element):
            data = data.elements[0].value
        elif isinstance(data, cst.Dict) and data.elements and isinstance(data.elements[0], cst.DictElement):
            data = data.elements[0].value
        else:
            break
    return data


def _holds_samples(data: cst.BaseExpression) -> bool:
    """Whether a literal list or tuple is the samples of one input: its first item (or that
    item's first item, and so on) is a number or a string, as Keras tells them apart."""
    first = data
    while isinstance(first, (cst.List, cst.Tuple)) and first.elements and isinstance(first.elements[0], cst.Element):
        first = first.elements[0].value
    if isinstance(first, cst.UnaryOperation):
        first = first.expression
    return first is not data and isinstance(first, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString))


def static_length(ctx: FileContext, data: cst.BaseExpression, owner: cst.CSTNode) -> Optional[int]:
    """The number of samples of ``data`` when the porter can count them: a known dataset's
    variable (``static_samples``), or a slice of one with int bounds (``x_train[:1000]``), or an
    array made in the call itself with a static shape (``tf.constant([[1], [0]])``); for several
    inputs in one list or dict, those of the first. ``y.astype("int32")`` (IPU106 writes it) and
    ``y.copy()`` hold the samples of ``y``: a second port counts them as the first did."""
    data = first_input(data)
    while isinstance(data, cst.Call) and isinstance(data.func, cst.Attribute) \
            and data.func.attr.value in _SAME_LENGTH_METHODS:
        data = data.func.value
    if isinstance(data, cst.Call):
        return _made_length(ctx, data)
    samples = literal_samples(data)
    if samples is not None:
        return samples
    if not isinstance(data, cst.Subscript):
        return static_samples(ctx, data, owner)
    bounds = _slice_bounds(ctx, data)
    if bounds is None:
        return None
    lower, upper = bounds
    whole = static_samples(ctx, data.value, owner)
    if whole is None:
        return None
    lower = 0 if lower is None else lower if lower >= 0 else max(whole + lower, 0)
    upper = whole if upper is None else min(upper if upper >= 0 else whole + upper, whole)
    return max(upper - lower, 0)


def _slice_bounds(ctx: FileContext, data: cst.Subscript) -> Optional[Tuple[Optional[int], Optional[int]]]:
    """(lower, upper) of ``x[lower:upper]`` (or ``x[lower:upper, ...]``) with static int bounds."""
    first = data.slice[0].slice if data.slice else None
    if not isinstance(first, cst.Slice) or first.step is not None:
        return None
    bounds = []
    for bound in (first.lower, first.upper):
        value = None if bound is None else _signed_int(ctx, bound)
        if bound is not None and value is None:
            return None
        bounds.append(value)
    return bounds[0], bounds[1]


def most_samples(ctx: FileContext, data: cst.BaseExpression, owner: cst.CSTNode) -> Optional[int]:
    """The number of samples of ``data`` (``static_length``), or the most it can hold when a slice
    with static bounds is all that shows it: ``x_test[:10]`` and ``x_test[-10:]`` hold 10 at
    most, whatever ``x_test`` holds."""
    data = first_input(data)
    length = static_length(ctx, data, owner)
    bounds = _slice_bounds(ctx, data) if length is None and isinstance(data, cst.Subscript) else None
    if bounds is None:
        return length
    lower, upper = bounds
    if upper is None:  # `x[-10:]`: the last samples
        return -lower if lower is not None and lower < 0 else None
    lower = 0 if lower is None else lower
    return max(upper - lower, 0) if upper >= 0 and lower >= 0 else None


def _signed_int(ctx: FileContext, node: cst.BaseExpression) -> Optional[int]:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        value = static_int(ctx, node.expression)
        return -value if value is not None else None
    return static_int(ctx, node)


# Calls that add a leading axis of one: one sample made into a batch of one.
_ADD_AXIS_FUNCTIONS = ("numpy.expand_dims", "tensorflow.expand_dims")
_RESHAPE_FUNCTIONS = ("numpy.reshape", "tensorflow.reshape")
_WRAP_FUNCTIONS = ("numpy.array", "numpy.asarray", "numpy.stack", "tensorflow.stack", "tensorflow.convert_to_tensor",
                   "tensorflow.constant")
# Calls that make an array of a given shape (the first argument): one of shape (1, ...) is one sample.
_FILLED_ARRAY_FUNCTIONS = frozenset({"numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full", "tensorflow.zeros",
                                     "tensorflow.ones", "tensorflow.fill"})


def repeatable(ctx: FileContext, node: cst.BaseExpression) -> bool:
    """An expression that gives the same value each time it runs and changes nothing: names,
    attributes, subscripts, constants, lists and tuples of them, and the NumPy/TensorFlow calls
    that add a batch axis or stack samples (``np.expand_dims(x, 0)``, ``x.reshape(1, -1)``), and the
    columns of a table (``dict(frame)``)."""
    for part in walk(node):
        if isinstance(part, (cst.NamedExpr, cst.Lambda, cst.Await, cst.Yield, cst.BaseComp)):
            return False
        if isinstance(part, cst.Call) and not (
                (ctx.qualified_name(part.func) or "") in _ADD_AXIS_FUNCTIONS + _WRAP_FUNCTIONS
                or isinstance(part.func, cst.Attribute) and part.func.attr.value == "reshape"
                or _columns_of(part)):
            return False
    return True


def single_sample(ctx: FileContext, data: cst.BaseExpression, owner: cst.CSTNode, follow: bool = True,
                  depth: int = 0) -> bool:
    """``data`` is a batch of one sample: ``x[None]``, ``x[np.newaxis, ...]``, ``x[:1]``,
    ``x[i:i + 1]``, ``np.expand_dims(x, 0)``, ``x.reshape(1, ...)``, ``np.array([x])``,
    ``np.zeros((1, ...))``, one of these scaled by a number (``/ 255.0``) or given to an
    application's ``preprocess_input``, a call of a function of the file whose every ``return``
    gives one (``load_image(path)``, ``depth`` such calls deep), or a variable of ``owner``
    assigned one of these (and nothing else: the last value before the read, or every value when a
    loop reassigns it). Several inputs (``[x, h]``, ``[x] + states``) hold one sample when one of
    them does: Keras takes the same number of samples for each input."""
    if isinstance(data, cst.Name) and follow:
        value = last_value_before(ctx, data, owner)
        if value is not None:
            return single_sample(ctx, value, owner, follow=False, depth=depth)
        return _always_single(ctx, data, owner, depth)
    scaled = _scaled_operand(data)
    if scaled is not None:
        return single_sample(ctx, scaled, owner, follow, depth)
    if isinstance(data, cst.Call) and data.args and _keeps_samples(ctx, data):
        return single_sample(ctx, data.args[0].value, owner, follow, depth)
    if isinstance(data, cst.Call) and data.args and _text_layer_call(ctx, data):
        texts = data.args[0].value  # `vectorize([query])`: a list of one text is one sample
        return _one_element(texts) or single_sample(ctx, texts, owner, follow, depth)
    function, returned = called_file_returns(ctx, data) if isinstance(data, cst.Call) and depth < 2 else (None, [])
    if function is not None:
        return bool(returned) and all(single_sample(ctx, value, function, depth=depth + 1) for value in returned)
    if isinstance(data, cst.IfExp):  # `np.array([ids]) if short else np.array([ids[-n:]])`: one sample either way
        return all(single_sample(ctx, branch, owner, follow) for branch in (data.body, data.orelse))
    joined = joined_along_steps(ctx, data)
    if joined is not None:  # `np.concatenate([ids, [[token]]], axis=1)`: the samples of each part
        return any(_one_row(element) or single_sample(ctx, element, owner, follow) for element in joined)
    samples = literal_samples(data)
    if samples is not None:  # `["great movie"]`: the samples of one input
        return samples == 1
    if isinstance(data, cst.Call) and _per_item_argument(ctx, data) is not None:
        return _made_length(ctx, data) == 1
    if isinstance(data, (cst.List, cst.Tuple)):
        return any(not isinstance(element, cst.StarredElement) and single_sample(ctx, element.value, owner, follow)
                   for element in data.elements)
    if isinstance(data, cst.BinaryOperation) and isinstance(data.operator, cst.Add) \
            and cst.List in (type(data.left), type(data.right)):
        return any(isinstance(side, cst.List) and single_sample(ctx, side, owner, follow)
                   for side in (data.left, data.right))
    if isinstance(data, cst.Call) and (ctx.qualified_name(data.func) or "") in _FILLED_ARRAY_FUNCTIONS:
        shape = argument(data, "shape", 0)
        return shape is not None and isinstance(shape.value, (cst.Tuple, cst.List)) and bool(shape.value.elements) \
            and static_int(ctx, shape.value.elements[0].value) == 1
    if isinstance(data, cst.Subscript) and data.slice:
        first = data.slice[0].slice
        if isinstance(first, cst.Index):
            return isinstance(first.value, cst.Name) and first.value.value == "None" or \
                ctx.qualified_name(first.value) == "numpy.newaxis"
        return isinstance(first, cst.Slice) and _one_wide(ctx, first)
    if isinstance(data, cst.Call) and data.args:
        first = data.args[0].value
        qualified = ctx.qualified_name(data.func) or ""
        if qualified in _ADD_AXIS_FUNCTIONS:
            axis = argument(data, "axis", 1)
            return axis is not None and static_int(ctx, axis.value) == 0
        if qualified in _RESHAPE_FUNCTIONS:  # `np.reshape(state, [1, n])`: the shape comes second
            shape = argument(data, "newshape" if qualified.startswith("numpy.") else "shape", 1)
            return shape is not None and _leading_one(ctx, shape.value)
        if isinstance(data.func, cst.Attribute) and data.func.attr.value == "reshape":
            return static_int(ctx, first) == 1 or _leading_one(ctx, first)
        return qualified in _WRAP_FUNCTIONS and isinstance(first, cst.List) and len(first.elements) == 1 \
            and not isinstance(first.elements[0], cst.StarredElement)
    return False


def _scaled_operand(data: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The array of ``x / 255.0``, ``2 * x - 1``...: an arithmetic operation with a number, which
    keeps the samples of the array; None for anything else."""
    if not isinstance(data, cst.BinaryOperation) or isinstance(data.operator, cst.MatrixMultiply):
        return None
    numbers = [isinstance(side, (cst.Integer, cst.Float)) for side in (data.left, data.right)]
    if numbers == [False, True]:
        return data.left
    return data.right if numbers == [True, False] else None


def _text_layer_call(ctx: FileContext, call: cst.Call) -> bool:
    """A call of a variable holding a text layer (``vectorize = layers.TextVectorization(...)``,
    ``StringLookup``), which gives one row of ids for each text it is given."""
    return isinstance(call.func, cst.Name) and call.func.value in string_layer_names(ctx)


def _keeps_samples(ctx: FileContext, call: cst.Call) -> bool:
    """A Keras application's ``preprocess_input(x)``, which scales the samples it is given."""
    qualified = ctx.qualified_name(call.func) or ""
    return ".applications." in qualified and qualified.endswith(".preprocess_input")


def _leading_one(ctx: FileContext, shape: cst.BaseExpression) -> bool:
    """``shape`` is a literal tuple or list whose first dimension is 1: ``(1, -1)``, ``[1, n]``."""
    return isinstance(shape, (cst.Tuple, cst.List)) and bool(shape.elements) \
        and not isinstance(shape.elements[0], cst.StarredElement) and static_int(ctx, shape.elements[0].value) == 1


# Calls that join arrays along an axis (the second argument, or `axis=`).
_JOIN_FUNCTIONS = frozenset({"numpy.concatenate", "tensorflow.concat"})


def joined_along_steps(ctx: FileContext, data: cst.BaseExpression,
                       unbatched: bool = False) -> Optional[List[cst.BaseExpression]]:
    """The parts ``data`` joins along an axis other than the first (``np.concatenate([ids,
    [[token]]], axis=1)``, ``tf.concat([ids, next_ids], -1)``): each part has the samples of the
    whole; None for anything else. With ``unbatched`` (``data`` is one sample, its first axis the
    steps: ``np.concatenate((frames, next_frame), axis=0)``), along any axis."""
    if not (isinstance(data, cst.Call) and (ctx.qualified_name(data.func) or "") in _JOIN_FUNCTIONS and data.args):
        return None
    parts, axis = data.args[0].value, argument(data, "axis", 1)
    if not isinstance(parts, (cst.List, cst.Tuple)) or axis is None and not unbatched or any(
            isinstance(element, cst.StarredElement) for element in parts.elements):
        return None
    number = None if axis is None else _signed_int(ctx, axis.value)
    along_steps = unbatched or number is not None and number != 0
    return [element.value for element in parts.elements] if along_steps else None


def _one_element(node: cst.BaseExpression) -> bool:
    """``[text]``: a literal list (or tuple) of one element."""
    return isinstance(node, (cst.List, cst.Tuple)) and len(node.elements) == 1 \
        and isinstance(node.elements[0], cst.Element)


def _one_row(node: cst.BaseExpression) -> bool:
    """``[[token]]``: a literal list holding one row."""
    return isinstance(node, cst.List) and len(node.elements) == 1 and isinstance(node.elements[0], cst.Element) \
        and isinstance(node.elements[0].value, (cst.List, cst.Tuple))


def parameter_input(ctx: FileContext, expr: cst.BaseExpression, scope: cst.CSTNode) -> Optional[str]:
    """The name of the parameter of ``scope`` (a function) that ``expr`` is, or is a chain of,
    when the function never assigns it."""
    root = chain(ctx, expr)[1]
    if not isinstance(scope, cst.FunctionDef) or not isinstance(root, cst.Name):
        return None
    params = scope.params
    names = {param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params)}
    if root.value not in names or any(name == root.value for _, name, _ in assignments(ctx, scope)):
        return None
    return root.value



def is_method(ctx: FileContext, function: cst.FunctionDef) -> bool:
    """``function`` is a method of a class of the file (defined in its body)."""
    owner_class = ctx.enclosing(function, cst.ClassDef)
    return owner_class is not None and method_named(owner_class, function.name.value) is function


def calls_of(ctx: FileContext, function: cst.FunctionDef) -> List[cst.Call]:
    """The calls of ``function`` in the file: on an instance of its class for a method
    (``agent.act(state)``, ``self.act(state)``), by name for any other function."""
    if is_method(ctx, function):
        owner_class = ctx.enclosing(function, cst.ClassDef)
        return [call for call in ctx.nodes(cst.Call) if isinstance(call.func, cst.Attribute)
                and call.func.attr.value == function.name.value and instance_of(ctx, call.func.value, owner_class)]
    return [call for call in calls_by_name(ctx).get(function.name.value, []) if is_name(call.func, function.name.value)]


def given_arguments(ctx: FileContext, expr: cst.BaseExpression, scope: cst.CSTNode, callers: Tuple[cst.Call, ...]
                    ) -> List[Tuple[cst.BaseExpression, cst.CSTNode, Tuple[cst.Call, ...]]]:
    """When ``expr`` is a parameter of ``scope`` (a function that never assigns it): ``(argument,
    the function or module it is passed in, the callers left)`` for the call it was followed in
    through (the last of ``callers``), or for every call of the function by name."""
    parameter = parameter_input(ctx, expr, scope) if isinstance(expr, cst.Name) else None
    if parameter is None:
        return []
    names = [param.name.value for param in scope.params.params]
    through = bool(callers) and is_name(callers[-1].func, scope.name.value)
    if is_method(ctx, scope):
        # A method: called on an instance (`trainer.train(ds, 3)`), its `self` given by the receiver.
        names, through = names[1:], False
    calls = [callers[-1]] if through else calls_of(ctx, scope)
    found = []
    for call in calls:
        given = argument(call, parameter, names.index(parameter)) if parameter in names else keyword(call, parameter)
        if given is not None and not given.star:
            found.append((given.value, owner(ctx, call), callers[:-1] if through else ()))
    return found


def _always_single(ctx: FileContext, name: cst.Name, owner: cst.CSTNode, depth: int = 0) -> bool:
    """Every value ``owner`` gives the variable ``name`` is one sample (``x = np.expand_dims(start,
    0)`` before a decoding loop, ``x = np.expand_dims([token], 0)`` in it); for a parameter of
    ``owner``, every argument its callers give it is (``agent.act(np.reshape(state, [1, n]))``)."""
    if isinstance(owner, cst.FunctionDef) and name.value in parameter_names(owner):
        return depth < 2 and _callers_give_single(ctx, name, owner, depth)
    values = [value for _, bound, value in assignments(ctx, owner) if bound == name.value]
    if len(values) == 1 and values[0] is None and depth < 2:
        return _replayed_single(ctx, name, owner, depth)
    return bool(values) and all(value is not None and single_sample(ctx, value, owner, follow=False)
                                for value in values)


# Random draws of items from a list (`random.sample(memory, n)`, `random.choices(memory, k=n)`).
_DRAWS = frozenset({"random.sample", "random.choices"})
# Functions that split an array into a list of arrays along its first axis (`np.array_split(x, 7)`).
_SPLITS = frozenset({"numpy.array_split", "numpy.split", "tensorflow.split"})
# The methods that put items in a list or deque other than `append`, or take them out in place.
_OTHER_WRITES = frozenset({"extend", "insert", "appendleft", "extendleft", "__setitem__"})


def _replayed_single(ctx: FileContext, name: cst.Name, owner: cst.CSTNode, depth: int) -> bool:
    """``state`` of ``for state, action, reward, next_state, done in minibatch:`` over items drawn
    from a replay buffer (``minibatch = random.sample(self.memory, n)``): one sample when every
    item the file appends to the buffer holds one in that place (``self.memory.append((state,
    action, ...))`` in ``remember``, whose callers give it ``np.reshape(state, [1, n])``)."""
    replay = _replay_loop(ctx, name, owner)
    if replay is None:
        return False
    loop, buffer = replay
    if not isinstance(loop.target, cst.Tuple) or any(
            not isinstance(element.value, cst.Name) for element in loop.target.elements):
        return False
    place = [element.value.value for element in loop.target.elements].index(name.value)
    items = _appended_items(ctx, buffer)
    return bool(items) and all(
        isinstance(item, (cst.Tuple, cst.List)) and len(item.elements) == len(loop.target.elements)
        and not any(isinstance(element, cst.StarredElement) for element in item.elements)
        and single_sample(ctx, item.elements[place].value, scope, depth=depth + 1) for item, scope in items)


def python_list_loop(ctx: FileContext, data: cst.BaseExpression, scope: cst.CSTNode) -> Optional[cst.For]:
    """The ``for`` of ``scope`` around ``data`` that binds it, and nothing else does, to an item of a
    Python list (a list or a comprehension written out, a variable only ever assigned one, or
    items drawn at random from a replay buffer: ``for state, next_state, done in batches:``),
    not of a dataset: an array of a length the port cannot read. None for anything else."""
    if not isinstance(data, cst.Name) or last_binding_before(ctx, data, scope)[0] is not None:
        return None
    loop = next((node for node in ctx.ancestors(data) if isinstance(node, cst.For)
                 and data.value in bound_names(node.target)), None)
    if loop is None or scope not in ctx.ancestors(loop) or ctx.enclosing_function(loop) is not ctx.enclosing_function(data) \
            or any(bound == data.value and loop.body in ctx.ancestors(statement)
                   for statement, bound, _ in assignments(ctx, scope)):
        return None
    return loop if _lists_given(ctx, listed(ctx, loop.iter)[0], scope) else None


def listed(ctx: FileContext, items: cst.BaseExpression) -> Tuple[cst.BaseExpression, bool]:
    """The list a loop takes its items from, through ``enumerate(...)`` and slices (``tasks[:n]``),
    and whether each item comes numbered (``for number, item in enumerate(tasks)``)."""
    numbered = isinstance(items, cst.Call) and is_name(items.func, "enumerate") \
        and ctx.qualified_name(items.func) is None and len(items.args) == 1 \
        and items.args[0].keyword is None and not items.args[0].star
    if numbered:
        items = items.args[0].value
    while isinstance(items, cst.Subscript) and len(items.slice) == 1 and isinstance(items.slice[0].slice, cst.Slice):
        items = items.value
    return items, numbered


def _lists_given(ctx: FileContext, items: cst.BaseExpression, scope: cst.CSTNode, depth: int = 0) -> bool:
    """``items`` is a Python list of arrays: written out, or a variable only ever assigned one, or
    a parameter of ``scope`` every call of it in the file gives one (``score(model, recordings)``)."""
    given = given_arguments(ctx, items, scope, ()) if isinstance(scope, cst.FunctionDef) else []
    if given:
        return depth < 2 and all(_lists_given(ctx, value, where, depth + 1) for value, where, _ in given)
    made = values_of(ctx, items) if isinstance(items, cst.Name) else [items]
    return bool(made) and all(_python_list(ctx, value) for value in made)


def replayed_draw(ctx: FileContext, data: cst.BaseExpression, scope: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """``random.sample(self.memory, n)`` when ``data`` is an item of a loop over items drawn at random
    from a replay buffer (``for state, action, reward, next_state, done in random.sample(...)``),
    of a size the port cannot read: most likely one transition. None for anything else."""
    replay = _replay_loop(ctx, data, scope)
    if replay is None:
        return None
    loop = replay[0]
    return last_value_before(ctx, loop.iter, scope) if isinstance(loop.iter, cst.Name) else loop.iter


def _replay_loop(ctx: FileContext, data: cst.BaseExpression, scope: cst.CSTNode
                 ) -> Optional[Tuple[cst.For, cst.BaseExpression]]:
    """The ``for`` around ``data`` that binds it to an item drawn at random from a replay buffer
    (``python_list_loop``), and that buffer (``self.memory``); None for anything else."""
    loop = python_list_loop(ctx, data, scope)
    buffer = _drawn_buffer(ctx, loop.iter, scope) if loop is not None else None
    return (loop, buffer) if buffer is not None else None


def _python_list(ctx: FileContext, value: Optional[cst.BaseExpression]) -> bool:
    """``value`` is a Python list of arrays (or tuples of them), never of datasets: a list or
    tuple written out, a list comprehension, a random draw from a list (``random.sample``), or the
    parts an array is split into (``np.array_split(x, 7)``)."""
    if isinstance(value, cst.Call) and ctx.qualified_name(value.func) in _DRAWS | _SPLITS:
        return True
    if isinstance(value, cst.ListComp):
        parts = value.elt.elements if isinstance(value.elt, cst.Tuple) else [value.elt]
    elif isinstance(value, (cst.List, cst.Tuple)) and value.elements:
        parts = [part for element in value.elements for part in (
            element.value.elements if isinstance(element.value, cst.Tuple) else [element.value])]
    else:
        return False
    return all(not isinstance(part, cst.StarredElement) and not dataset_like(ctx, part.value if isinstance(
        part, cst.Element) else part) for part in parts)


def _drawn_buffer(ctx: FileContext, items: cst.BaseExpression, owner: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """The list ``items`` draws from at random (``random.sample(self.memory, n)``, itself or
    through a variable assigned it just before): ``self.memory``; else None."""
    if isinstance(items, cst.Name):
        items = last_value_before(ctx, items, owner)
    if not isinstance(items, cst.Call) or ctx.qualified_name(items.func) not in _DRAWS or not items.args:
        return None
    buffer = items.args[0].value
    return buffer if isinstance(buffer, cst.Name) or isinstance(buffer, cst.Attribute) \
        and is_name(buffer.value, "self") else None


def _appended_items(ctx: FileContext, buffer: cst.BaseExpression) -> List[Tuple[cst.BaseExpression, cst.CSTNode]]:
    """``(item, the function that appends it)`` for each ``.append(item)`` of the file to
    ``buffer`` (``self.memory`` in the methods of its class, a module's list by name); empty
    when the buffer is filled any other way too (``extend``, ``insert``, an item assigned)."""
    home = ctx.enclosing(buffer, cst.ClassDef) if isinstance(buffer, cst.Attribute) else ctx.module
    wanted = code_of(ctx, buffer)
    found = []
    for node in walk(home):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and code_of(ctx, node.func.value) == wanted:
            if node.func.attr.value in _OTHER_WRITES:
                return []
            if node.func.attr.value == "append" and len(node.args) == 1:
                found.append((node.args[0].value, owner(ctx, node)))
        elif isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Subscript) \
                and code_of(ctx, node.target.value) == wanted:
            return []
    return found


def _callers_give_single(ctx: FileContext, name: cst.Name, function: cst.FunctionDef, depth: int) -> bool:
    """Each call of ``function`` gives its parameter ``name`` one sample, and the port sees them
    all: the function is only ever called (never handed on as a callback, whose caller is out of
    sight). A variable the caller reads is one sample when each value that reaches the call is."""
    given = given_arguments(ctx, name, function, ())
    calls = calls_of(ctx, function)
    if not given or len(given) != len(calls) or _referenced_uncalled(ctx, function, calls):
        return False
    return all(_reaching_single(ctx, value, scope, depth + 1) for value, scope, _ in given)


def _reaching_single(ctx: FileContext, value: cst.BaseExpression, scope: cst.CSTNode, depth: int) -> bool:
    """``value``, read in ``scope``, is one sample: as ``single_sample`` reads it, or a variable
    whose every binding that reaches the read is one sample, before the loop around the read or
    carried back by it (``state = np.reshape(state, [1, n])`` before an episode's loop, ``state =
    next_state`` at the end of it, ``next_state`` reshaped just before)."""
    if single_sample(ctx, value, scope, depth=depth):
        return True
    if not isinstance(value, cst.Name):
        return False
    pending, seen = [value], set()
    while pending:
        read = pending.pop()
        if id(read) in seen:
            continue
        seen.add(id(read))
        values = [bound for _, bound in reaching_bindings(ctx, read, scope)] + _carried_back(ctx, read, scope)
        if not values:
            return False
        for bound in values:
            if isinstance(bound, cst.Name):
                pending.append(bound)
            elif bound is None or not single_sample(ctx, bound, scope, follow=False, depth=depth):
                return False
    return True


def _carried_back(ctx: FileContext, read: cst.Name, scope: cst.CSTNode) -> List[Optional[cst.BaseExpression]]:
    """The values the loop around ``read`` (in ``scope``) assigns its variable at or after the
    read's statement, which the next time round reach the read."""
    loop = next((node for node in ctx.ancestors(read) if isinstance(node, (cst.For, cst.While))), None)
    if loop is None or scope not in ctx.ancestors(loop):
        return []
    body = list(loop.body.body)
    position = next(body.index(node) for node in (read, *ctx.ancestors(read)) if node in body)
    return [value for assigned, bound, value in assignments(ctx, scope) if bound == read.value
            and any(node in body and body.index(node) >= position for node in (assigned, *ctx.ancestors(assigned)))]


def _referenced_uncalled(ctx: FileContext, function: cst.FunctionDef, calls: List[cst.Call]) -> bool:
    """``function``'s name is read other than as the callee of one of ``calls`` (``map(agent.act,
    states)``, ``callback=self.act``)."""
    callees = {id(call.func) for call in calls}
    wanted = function.name.value
    if is_method(ctx, function):
        return any(node.attr.value == wanted and id(node) not in callees for node in ctx.nodes(cst.Attribute))
    return any(node.value == wanted and node is not function.name and id(node) not in callees
               and not any(id(parent) in callees for parent in ctx.ancestors(node))
               for node in ctx.nodes(cst.Name))


def last_value_before(ctx: FileContext, name: cst.Name, scope: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """The value of the last assignment to ``name`` in ``scope`` before the statement that reads it,
    when that statement and the assignment are in the same block (straight-line code)."""
    return last_binding_before(ctx, name, scope)[1]


def last_binding_before(ctx: FileContext, name: cst.Name, scope: cst.CSTNode
                        ) -> Tuple[Optional[cst.BaseStatement], Optional[cst.BaseExpression]]:
    """The statement of the last assignment to ``name`` in ``scope`` before the statement that
    reads it, in the same block, and the value it gives ``name`` (None when unpacked from a call)."""
    statement = ctx.statement_of(name)
    block = ctx.block_of(statement) if statement is not None else None
    if block is None:
        return None, None
    body = list(block.body)
    found = (None, None)
    bindings = [(assigned, value) for assigned, bound, value in assignments(ctx, scope) if bound == name.value]
    for assigned, value in bindings:
        if assigned in body and body.index(assigned) < body.index(statement):
            found = (assigned, value)
    if found[0] is not None:
        # An `if` or a loop between them that binds the name too: which value the read gets depends on the run.
        between = {id(line) for line in body[body.index(found[0]) + 1:body.index(statement)]}
        if any(assigned not in body and any(id(ancestor) in between for ancestor in ctx.ancestors(assigned))
               for assigned, _ in bindings):
            return None, None
    return found


def _one_wide(ctx: FileContext, piece: cst.Slice) -> bool:
    """``:1``, ``0:1`` or ``i:i + 1``."""
    if piece.step is not None or piece.upper is None:
        return False
    lower = 0 if piece.lower is None else static_int(ctx, piece.lower)
    upper = static_int(ctx, piece.upper)
    if lower is not None and upper is not None:
        return upper - lower == 1
    upper_node = piece.upper
    return isinstance(upper_node, cst.BinaryOperation) and isinstance(upper_node.operator, cst.Add) \
        and piece.lower is not None and upper_node.left.deep_equals(piece.lower) \
        and static_int(ctx, upper_node.right) == 1


def same_size(ctx, one: cst.BaseExpression, other: Optional[cst.BaseExpression]) -> bool:
    """``one`` and ``other`` say the same batch size: the same code, or the same static int."""
    if other is None:
        return False
    if "".join(code_of(ctx, one).split()) == "".join(code_of(ctx, other).split()):
        return True
    value = static_int(ctx, one)
    return value is not None and value == static_int(ctx, other)


def fraction_value(node: cst.BaseExpression) -> Optional[float]:
    """The number a ``validation_split`` literal gives, else None."""
    try:
        return float(node.evaluated_value) if isinstance(node, (cst.Float, cst.Integer)) else None
    except ValueError:
        return None


def validation_entry(ctx, entry: TrainingCall) -> TrainingCall:
    """The call as its validation data is batched: by `validation_batch_size` when it is given
    (and not the batch size), else as the inputs (the call itself)."""
    given = keyword(entry.call, "validation_batch_size")
    if given is None or is_name(given.value, "None") or entry.batch is not None and same_size(
            ctx, given.value, entry.batch):
        return entry
    return dataclasses.replace(entry, batch=given.value)


# Functions that round a division up.
_CEILS = frozenset({"math.ceil", "numpy.ceil", "tensorflow.math.ceil"})


def rounded_up(ctx, node: cst.BaseExpression):
    """(n, B) when ``node`` counts ``n`` samples in batches of ``B`` rounded up: ``math.ceil(n /
    B)`` (also in ``int(...)``, and NumPy's), ``-(-n // B)``, ``n // B + 1``, ``(n + B - 1) // B``."""
    if isinstance(node, cst.Call) and is_name(node.func, "int") and len(node.args) == 1:
        node = node.args[0].value
    if isinstance(node, cst.Call) and ctx.qualified_name(node.func) in _CEILS and len(node.args) == 1:
        divided = node.args[0].value
        if isinstance(divided, cst.BinaryOperation) and isinstance(divided.operator, cst.Divide):
            return divided.left, divided.right
        return None
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = node.expression
        if isinstance(inner, cst.BinaryOperation) and isinstance(inner.operator, cst.FloorDivide) and isinstance(
                inner.left, cst.UnaryOperation) and isinstance(inner.left.operator, cst.Minus):
            return inner.left.expression, inner.right
        return None
    if not isinstance(node, cst.BinaryOperation):
        return None
    if isinstance(node.operator, cst.Add):
        for divided, one in ((node.left, node.right), (node.right, node.left)):
            if isinstance(divided, cst.BinaryOperation) and isinstance(divided.operator, cst.FloorDivide) \
                    and not divided.lpar and isinstance(one, cst.Integer) and one.value == "1":
                return divided.left, divided.right
        return None
    if isinstance(node.operator, cst.FloorDivide):  # (n + B - 1) // B
        summed = node.left
        if isinstance(summed, cst.BinaryOperation) and isinstance(summed.operator, cst.Subtract) and isinstance(
                summed.right, cst.Integer) and summed.right.value == "1" and isinstance(summed.left, cst.BinaryOperation) \
                and isinstance(summed.left.operator, cst.Add) and same_size(ctx, summed.left.right, node.right):
            return summed.left.left, node.right
    return None


def floor_operand(ctx, node: cst.BaseExpression) -> str:
    """The code of ``node`` as the left operand of ``//``, in parentheses when it binds less tightly."""
    code = code_of(ctx, node)
    loose = isinstance(node, (cst.BooleanOperation, cst.Comparison, cst.IfExp, cst.Lambda)) or isinstance(
        node, cst.BinaryOperation) and not isinstance(node.operator, (cst.Multiply, cst.Divide, cst.FloorDivide,
                                                                      cst.Modulo, cst.MatrixMultiply, cst.Power))
    return f"({code})" if loose and not node.lpar else code


# ---------------------------------------------------------------------------------- fixed batch
# The batch size a Keras model fixes in itself (`batch_input_shape=[B, ...]`, `Input(..., batch_size=B)`,
# `batch_shape=(B, ...)`), which the stateful RNNs need: such a model takes batches of B samples only, so
# its `fit`/`evaluate`/`predict` must run with `batch_size=B` and their arrays be trimmed or padded to B,
# never to Keras' default 32.
# Keywords whose first item is the batch a layer fixes.
_SHAPE_KEYWORDS = ("batch_input_shape", "batch_shape")
# Keywords that tell a call making a layer's input apart from a training call's `batch_size`.
_INPUT_KEYWORDS = ("shape", "input_shape", "input_dim", "batch_input_shape", "batch_shape")


@dataclass
class FixedBatch:
    size: Optional[int]  # B when the port can read it, None when it cannot
    source: Optional[cst.BaseExpression]  # the expression that fixes it (None for a stateful layer alone)
    stateful: bool  # the model holds a stateful layer (which needs a fixed batch)
    varies: bool = False  # the callers of the function holding the call give models of different batches


def fixed_batch(ctx: FileContext, call: cst.Call, scope: cst.CSTNode) -> Optional[FixedBatch]:
    """The batch fixed by the model whose method ``call`` calls (``model.fit(...)``, with ``model``
    bound once to a model made in place or returned by a builder function of the file), or None
    when the model fixes none the port can see."""
    if not (isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name)):
        return None
    model = call.func.value
    if isinstance(scope, cst.FunctionDef) and model.value in parameter_names(scope) \
            and not reaching_bindings(ctx, model, scope):
        return _given_by_callers(ctx, scope, model.value)
    return _bound_batch(ctx, model, scope)


def _given_by_callers(ctx: FileContext, function: cst.FunctionDef, parameter: str) -> Optional[FixedBatch]:
    """The batch fixed by the models the callers of ``function`` give its ``parameter``
    (``generate(sampler, seed)``): theirs when they all fix the same one, else one the port
    cannot read (a size of None) when any of them fixes a batch."""
    found = []
    for caller in local_calls(ctx, function):
        given = _arguments_of(caller, function).get(parameter)
        found.append(_bound_batch(ctx, given, owner(ctx, caller)) if isinstance(given, cst.Name) else None)
    fixed = [batch for batch in found if batch is not None]
    if not fixed:
        return None
    if len(fixed) == len(found) and len({batch.size for batch in fixed}) == 1:
        return fixed[0]
    return FixedBatch(None, fixed[0].source, any(batch.stateful for batch in fixed), varies=True)


def _bound_batch(ctx: FileContext, model: cst.Name, scope: cst.CSTNode) -> Optional[FixedBatch]:
    """The batch fixed by the model ``model`` is bound to once in ``scope``."""
    bindings = reaching_bindings(ctx, model, scope)
    if len(bindings) != 1 or not isinstance(bindings[0][1], cst.Call):
        return None
    made = bindings[0][1]
    function, _ = called_returns(ctx, made)
    if function is not None:
        return _found_in(ctx, function, _arguments_of(made, function), made)
    return _found_in(ctx, made, {}, made, follow_inputs=True)


def _arguments_of(made: cst.Call, function: cst.FunctionDef) -> Dict[str, cst.BaseExpression]:
    """{parameter: what the call gives it, or its default}."""
    names = parameter_names(function)
    given: Dict[str, cst.BaseExpression] = {}
    params = (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params)
    for param in params:
        if param.default is not None:
            given[param.name.value] = param.default
    positional = [arg for arg in made.args if arg.keyword is None and not arg.star]
    for name, arg in zip(names, positional):
        given[name] = arg.value
    for arg in made.args:
        if arg.keyword is not None:
            given[arg.keyword.value] = arg.value
    return given


def _found_in(ctx: FileContext, region: cst.CSTNode, arguments: Dict[str, cst.BaseExpression],
              made: cst.Call, follow_inputs: bool = False) -> Optional[FixedBatch]:
    stateful = False
    source = None
    for node in _calls_in(ctx, region, made, follow_inputs):
        flag = keyword(node, "stateful")
        stateful |= flag is not None and is_true(flag.value)
        if source is None:
            source = _batch_keyword(node)
    if source is None:
        return FixedBatch(None, None, True) if stateful else None
    size = static_int(ctx, source)
    if size is None and isinstance(source, cst.Name) and source.value in arguments:
        given = arguments[source.value]  # a builder's parameter: what the call gives it
        size = static_int(ctx, given)
        if size is None and isinstance(given, cst.Name):
            size = int_value(last_value_before(ctx, given, owner(ctx, made)))
    return FixedBatch(size, source, stateful)


def _calls_in(ctx: FileContext, region: cst.CSTNode, made: cst.Call, follow_inputs: bool) -> Iterator[cst.Call]:
    """The calls that make the model: those in ``region``, and for a model made in place, the
    ``Input(...)`` that ``Model(inputs, outputs)`` is given and the layers ``model.add(...)`` stacks."""
    yield from (node for node in walk(region) if isinstance(node, cst.Call))
    if not follow_inputs:
        return
    yield from _added_layers(ctx, made)
    for arg in made.args[:1]:
        value = arg.value
        if isinstance(value, cst.Name):
            value = last_value_before(ctx, value, owner(ctx, made))
        if isinstance(value, cst.Call):
            yield value


def _added_layers(ctx: FileContext, made: cst.Call) -> Iterator[cst.Call]:
    """The calls in ``model.add(...)`` statements of the function (or module) where ``model =
    Sequential()`` is made (Keras 2 scripts stack their layers so)."""
    assign = ctx.parent(made)
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)):
        return
    name = assign.targets[0].target.value
    for node in walk(owner(ctx, made)):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "add" \
                and isinstance(node.func.value, cst.Name) and node.func.value.value == name:
            yield from (inner for inner in walk(node) if isinstance(inner, cst.Call))


def _batch_keyword(node: cst.Call) -> Optional[cst.BaseExpression]:
    """B of ``batch_input_shape=[B, ...]`` or ``batch_size=B`` on a call making a layer's input."""
    for name in _SHAPE_KEYWORDS:
        arg = keyword(node, name)
        if arg is not None and isinstance(arg.value, (cst.List, cst.Tuple)) and arg.value.elements:
            first = arg.value.elements[0]
            if not isinstance(first, cst.StarredElement) and not is_name(first.value, "None"):
                return first.value
    batch = keyword(node, "batch_size")
    if batch is None or is_name(batch.value, "None"):
        return None
    if any(keyword(node, name) is not None for name in _INPUT_KEYWORDS) or last_name(node.func) in (
            "Input", "InputLayer"):
        return batch.value
    return None


def describe_fixed_batch(ctx: FileContext, fixed: FixedBatch) -> str:
    """How the message names what fixes the batch."""
    if fixed.source is None:
        return "through a stateful layer, which needs a fixed batch"
    code = code_of(ctx, fixed.source)
    given = f", {fixed.size} where the model is made" if fixed.size is not None and code != str(fixed.size) else ""
    return f"its input's batch dimension `{code}`{given}"
