"""Where the datasets fed to Keras training come from, for IPU105 (drop-remainder).

``tf.data`` chains are traced by ``porter.rules._tf.tfdata``; this module follows what it cannot:

* ``feeds_training(ctx, call)``: the value of ``call`` reaches the ``x`` or ``validation_data`` of a
  ``fit``/``evaluate``/``predict`` call (directly, or through a variable of the same function);
* ``returned_batches(ctx, function)``: the ``.batch(...)`` calls whose dataset ``function`` returns;
* ``keras_batched_source(ctx, expr, scope)``: the ``keras.utils.image_dataset_from_directory(...)``
  (or text, audio, timeseries) call that made ``expr``, batched with a partial last batch and no
  other batching on the way;
* ``parameter_input(ctx, expr, scope)``: ``expr`` is a dataset the function is given by its caller;
* ``given_batches(ctx)``: the batching that makes what callers give a training function for its input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from porter.context import FileContext, SharedKey
from porter.cstutil import alternatives, argument, is_name, keyword
from porter.rules._tf.tfdata import SLICES_CONSTRUCTORS, chain, reads_global
from porter.rules.keras._analysis.fit import (TrainingCall, given_arguments, last_binding_before, last_value_before,
                                             parameter_input, training_calls)
from porter.rules.keras._analysis.util import KERAS_BATCHED_SOURCES
from porter.scopes import (assignments, called_method_returns, called_returns, exclusive_branches, instance_class, owner,
                           owner_body, returns_of, top_statement)

# tf.data functions that batch internally (a partial last batch, an unknown batch dimension); the
# batch size is their second argument, with no default.
TF_BATCHED_SOURCES = frozenset({
    "tensorflow.data.experimental.make_csv_dataset", "tensorflow.data.experimental.make_batched_features_dataset",
})


def batched_source_name(ctx: FileContext, call: cst.Call) -> Optional[str]:
    """The canonical name of the Keras or tf.data function ``call`` runs when it makes a dataset in
    batches with a partial last one, else None."""
    keras = ctx.keras_name(call.func)
    if keras in KERAS_BATCHED_SOURCES:
        return keras
    qualified = ctx.qualified_name(call.func)
    if qualified == TFDS_LOAD:
        return qualified if _tfds_batches(call) else None
    return qualified if qualified in TF_BATCHED_SOURCES else None


# `tfds.load(..., batch_size=n)` gives its splits in batches of n with a partial last one (and an
# unknown batch dimension); `batch_size=-1` gives each split whole, as tensors, not a dataset.
TFDS_LOAD = "tensorflow_datasets.load"


def _tfds_batches(call: cst.Call) -> bool:
    """``tfds.load`` is given a batch size: a name or a positive number, not None or -1."""
    batch = keyword(call, "batch_size")
    if batch is None or is_name(batch.value, "None"):
        return False
    return not isinstance(batch.value, cst.UnaryOperation)  # `-1`: whole tensors


# Dataset methods that batch (or unbatch) again: what comes after them is not the source's batches.
BATCHING_METHODS = frozenset({"batch", "padded_batch", "unbatch", "rebatch", "bucket_by_sequence_length",
                              "ragged_batch", "group_by_window"})

FROM_GENERATOR = ("tensorflow.data.Dataset.from_generator", "tensorflow.compat.v1.data.Dataset.from_generator")

# Joins datasets element by element: what it joins feeds what the joined dataset feeds.
_ZIP = ("tensorflow.data.Dataset.zip", "tensorflow.compat.v2.data.Dataset.zip")

_TRAINING_ROOTS: SharedKey[Tuple[Set[Tuple[int, str]], Set[int]]] = SharedKey("keras-training-roots")
_TRAINING_BATCHES: SharedKey[List["TrainingBatch"]] = SharedKey("keras-training-batches")
_GIVEN_BATCHES: SharedKey[List["TrainingBatch"]] = SharedKey("keras-given-batches")


def training_inputs(ctx: FileContext):
    """(training call, input expression) for the ``x`` and ``validation_data`` of each training call."""
    for entry in training_calls(ctx):
        if entry.data is not None:
            yield entry, entry.data
        validation = keyword(entry.call, "validation_data")
        if entry.method in ("fit", "search") and validation is not None:
            yield entry, validation.value


def _training_roots(ctx: FileContext, predict: bool = False) -> Tuple[Set[Tuple[int, str]], Set[int]]:
    """(function id, variable) and call ids at the root of the inputs of the training calls (of the
    ``predict`` calls only, with ``predict``), and of what those variables are made from in their
    function: the datasets a ``Dataset.zip`` joins (``total = tf.data.Dataset.zip((labelled,
    unlabelled))``), the variable a chain starts at."""
    def find():
        names: Set[Tuple[int, str]] = set()
        calls: Set[int] = set()
        pending = [(entry.owner, value) for entry, value in training_inputs(ctx)
                   if not predict or entry.method == "predict"]
        while pending:
            scope, value = pending.pop()
            root = chain(ctx, value)[1]
            if isinstance(root, cst.IfExp):  # `ds.batch(b) if training else ds`: either may be the input
                pending.extend([(scope, root.body), (scope, root.orelse)])
            elif isinstance(root, cst.Name):
                if (id(scope), root.value) in names:
                    continue
                names.add((id(scope), root.value))
                pending.extend((scope, made) for _, name, made in assignments(ctx, scope)
                               if name == root.value and made is not None)
                # A parameter (`def train_and_evaluate(model, train_ds)`): what each caller gives for it.
                pending.extend((caller, given) for given, caller, _ in given_arguments(ctx, root, scope, ()))
                if reads_global(ctx, root):  # `def run_experiment(model): model.fit(train_dataset)`
                    pending.append((ctx.module, root))
            elif isinstance(root, cst.Call):
                calls.add(id(root))
                if ctx.qualified_name(root.func) in _ZIP and root.args:
                    joined = root.args[0].value
                    parts = [element.value for element in joined.elements] if isinstance(
                        joined, (cst.Tuple, cst.List)) else [joined]
                    pending.extend((scope, part) for part in parts)
        return names, calls

    return ctx.shared(_TRAINING_ROOTS, find, per=predict)


@dataclass
class TrainingBatch:
    """The batching that makes an input of a training call: ``entry`` (the call), ``value`` (its
    input expression), ``batch`` (the ``.batch(...)`` call) and ``later`` (the dataset methods
    applied after it on the way to the call: a ``.map`` there runs on whole batches)."""
    entry: "TrainingCall"
    value: cst.BaseExpression
    batch: cst.Call
    later: List[cst.Call]
    batching: str = "batch"  # how `batch` batches: `batch`, `padded_batch`, `ragged_batch`...

    @property
    def method(self) -> str:
        return self.entry.method


def training_batches(ctx: FileContext) -> List[TrainingBatch]:
    """The batching that makes each input of a training call (``fit``, ``predict``...), found
    through method chains and the variables of its function, wherever the dataset comes from: the
    last batching of the chain (``ds.shuffle(n).batch(64)``, ``train_ds = train_ds.batch(32)``); a
    chain that unbatches last, or none found, gives none."""
    return [batch for batch in _traced_batches(ctx) if batch.batching in ("batch", "padded_batch")]


def uneven_batches(ctx: FileContext) -> List[TrainingBatch]:
    """The inputs of training calls batched last in batches of varying shapes: ragged batches
    (``.ragged_batch(n)``, ``.apply(dense_to_ragged_batch(n))``), buckets of sequence lengths, or
    windows of a key (``group_by_window``: the last window of each key is partial)."""
    return [batch for batch in _traced_batches(ctx) if batch.batching in _UNEVEN]


def uneven_batchings(ctx: FileContext, value: cst.BaseExpression, scope: cst.CSTNode) -> List[Tuple[cst.Call, str]]:
    """(batching call, how it batches) for each last batching of ``value`` in ``scope`` (the dataset
    a loop feeds to a custom step, say) that gives batches of varying shapes, as for training calls."""
    return [(batch, name) for batch, _, name in _last_batchings(ctx, value, scope) if name in _UNEVEN]


# Batchings whose batches have no one static shape, as methods and as `Dataset.apply` transformations.
_UNEVEN = frozenset({"ragged_batch", "bucket_by_sequence_length", "dense_to_ragged_batch", "group_by_window"})


def _batching_name(ctx: FileContext, call: cst.Call) -> Optional[str]:
    """``batch`` for ``.batch(...)``; ``dense_to_ragged_batch`` for ``.apply(tf.data.experimental.
    dense_to_ragged_batch(32))``; None for a method that does not batch."""
    name = call.func.attr.value
    if name == "apply" and call.args and isinstance(call.args[0].value, cst.Call):
        applied = (ctx.qualified_name(call.args[0].value.func) or "").rpartition(".")[2]
        return applied if applied in _UNEVEN else None
    return name if name in BATCHING_METHODS else None


def _traced_batches(ctx: FileContext) -> List[TrainingBatch]:
    def find() -> List[TrainingBatch]:
        return [TrainingBatch(entry, value, batch, later, name) for entry, value in training_inputs(ctx)
                for batch, later, name in _last_batchings(ctx, value, entry.owner)]

    return ctx.shared(_TRAINING_BATCHES, find)


def given_batches(ctx: FileContext) -> List[TrainingBatch]:
    """The same for a training input that is a parameter of its function (``def fit_model(model,
    data): model.fit(data)``): the batching that makes what each caller gives for it
    (``fit_model(model, make_ds(32))``), traced from the caller."""
    def find() -> List[TrainingBatch]:
        found: List[TrainingBatch] = []
        for entry, value in training_inputs(ctx):
            calls, root = chain(ctx, value)
            for given, scope, _ in given_arguments(ctx, root, entry.owner, ()):
                found.extend(TrainingBatch(entry, value, batch, later, name)
                             for batch, later, name in _last_batchings(ctx, given, scope, calls))
        return found

    return ctx.shared(_GIVEN_BATCHES, find)


def _last_batchings(ctx: FileContext, value: cst.BaseExpression, scope: cst.CSTNode,
                    after: List[cst.Call] = ()) -> List[Tuple[cst.Call, List[cst.Call], str]]:
    """(batching call, the dataset methods after it, how it batches) for the last batching of each
    chain that makes ``value`` in ``scope``, followed through variables and the file's functions
    that return it; ``after``: the methods already applied after ``value``."""
    found: List[Tuple[cst.Call, List[cst.Call], str]] = []
    seen: Set[Tuple[int, str]] = set()
    # (what is batched, the calls after it, the function or module whose names it reads)
    pending: List[Tuple[cst.BaseExpression, List[cst.Call], cst.CSTNode]] = [(value, list(after), scope)]
    while pending:
        expression, later, scope = pending.pop()
        calls, root = chain(ctx, expression)
        if isinstance(root, cst.IfExp) and not calls:  # each branch makes the value on its own path
            pending.extend([(root.body, later, scope), (root.orelse, later, scope)])
            continue
        batching = [index for index, call in enumerate(calls) if _batching_name(ctx, call) is not None]
        if batching:
            batch = calls[batching[0]]
            name = _batching_name(ctx, batch)
            if name in _UNEVEN | {"batch", "padded_batch"}:
                found.append((batch, later + calls[:batching[0]], name))
            continue
        function, returned = called_returns(ctx, root)  # `make_ds(x_test, 64)`: what it returns
        if function is not None and (id(function), "") not in seen:
            seen.add((id(function), ""))
            pending.extend((made, later + calls, function) for made in returned)
        if not isinstance(root, cst.Name):
            continue
        value_then = last_value_before(ctx, root, scope)  # `ds = ds.map(f)`: ds before it
        if value_then is not None:
            pending.append((value_then, later + calls, scope))
        elif (id(scope), root.value) not in seen:
            seen.add((id(scope), root.value))
            pending.extend((made, later + calls, scope) for _, name, made in assignments(ctx, scope)
                           if name == root.value and made is not None)
    return found


def feeds_training(ctx: FileContext, call: cst.Call, predict: bool = False) -> bool:
    """The value of ``call`` is the root of a training input (of a ``predict`` input, with
    ``predict``), or is assigned to a variable that is."""
    names, calls = _training_roots(ctx, predict)
    if id(call) in calls:
        return True
    parent = ctx.parent(call)
    if isinstance(parent, cst.Assign) and parent.value is call and len(parent.targets) == 1:
        target = parent.targets[0].target
        return isinstance(target, cst.Name) and (id(owner(ctx, call)), target.value) in names
    return False


def returned_batches(ctx: FileContext, function: cst.FunctionDef) -> List[cst.Call]:
    """The ``.batch(...)``/``.padded_batch(...)`` calls in the chains ``function`` returns, directly
    (``return ds.shuffle(100).batch(n)``) or through a variable it assigns them to."""
    found: List[cst.Call] = []
    for returned in [value for node in returns_of(function) for value in alternatives(node.value)]:
        calls, root = chain(ctx, returned)
        values = [value for _, name, value in assignments(ctx, function)
                  if isinstance(root, cst.Name) and name == root.value]
        for value in [returned] + [each for value in values if value is not None for each in alternatives(value)]:
            found.extend(call for call in chain(ctx, value)[0] if call.func.attr.value in ("batch", "padded_batch")
                         and call not in found)
    return found


def keras_batched_source(ctx: FileContext, expr: cst.BaseExpression, scope: cst.CSTNode,
                         depth: int = 0) -> Optional[cst.Call]:
    """The Keras call that made the batched dataset ``expr`` in ``scope``, when nothing batches it
    again on the way (through method chains and the variable's reassignments)."""
    if isinstance(expr, cst.IfExp):  # either branch may be the dataset: one source must make both
        found = [keras_batched_source(ctx, made, scope, depth + 1) for made in alternatives(expr)]
        return found[0] if found[0] is not None and all(source is found[0] for source in found) else None
    calls, root = chain(ctx, expr)
    if any(call.func.attr.value in BATCHING_METHODS for call in calls):
        return None
    method = next((found for found in (called_method_returns(ctx, call) for call in reversed(calls))
                   if found[0] is not None), None)
    if method is not None:  # `window.make_dataset(df)`, a method of a class of the file
        return _same_source([keras_batched_source(ctx, value, method[0], depth + 1) for value in method[1]]
                            ) if depth <= 8 else None
    if isinstance(root, cst.Call):
        if batched_source_name(ctx, root) is not None:
            return root
        return _returned_source(ctx, root, depth) if depth <= 8 else None
    if isinstance(root, cst.Attribute) and depth <= 8:  # `window.train`, a property of a class of the file
        return _property_source(ctx, root, depth)
    if not isinstance(root, cst.Name) or depth > 8:
        return None
    sources: Dict[int, cst.Call] = {}
    for statement, name, value in assignments(ctx, scope):
        if name != root.value or _bound_after(ctx, statement, root, scope):
            continue
        if value is None:
            unpacked = _unpacked_return(ctx, statement, name)  # `train, val = load_folders()`
            found = keras_batched_source(ctx, unpacked[0], unpacked[1], depth + 1) if unpacked else (
                both_subsets(ctx, statement))
            if found is None:
                return None
            sources[id(found)] = found
            continue
        for made in alternatives(value):  # `ds = ds.map(augment) if training else ds`: each branch
            more, again = chain(ctx, made)
            if isinstance(again, cst.Name) and again.value == root.value or _passed_through(
                    ctx, again, root.value):  # ds = ds.cache().prefetch(...), ds = prepare(ds)
                if any(call.func.attr.value in BATCHING_METHODS for call in more):
                    return None
                continue
            found = keras_batched_source(ctx, made, scope, depth + 1)
            if found is None:
                return None
            sources[id(found)] = found
    return next(iter(sources.values())) if len(sources) == 1 else None


def _bound_after(ctx: FileContext, statement: cst.BaseStatement, read: cst.Name, scope: cst.CSTNode) -> bool:
    """Whether ``statement`` (a binding in ``scope``) lies in a statement of the body of ``scope``
    after the one that holds ``read``: it cannot give ``read`` its value (a notebook that reuses
    `train_ds` for a second dataset after training on the first). A read in a function of ``scope``
    may run after any of them: never said."""
    if owner(ctx, read) is not scope:
        return False
    body = list(owner_body(scope).body)
    places = [top_statement(ctx, node, scope) for node in (read, statement)]
    return None not in places and body.index(places[1]) > body.index(places[0])


def zipped_keras_sources(ctx: FileContext, expr: cst.BaseExpression, scope: cst.CSTNode,
                         depth: int = 0) -> List[cst.Call]:
    """The Keras calls that made the batched datasets a ``Dataset.zip`` joins into the dataset
    ``expr`` of ``scope`` (``zip((windows, targets))`` of two ``timeseries_dataset_from_array``),
    through variables and the functions of the file that return it, when nothing batches it again
    on the way: each part keeps its partial last batch, and so does what the zip makes."""
    calls, root = chain(ctx, expr)
    if depth > 8 or any(call.func.attr.value in BATCHING_METHODS for call in calls):
        return []
    if isinstance(root, cst.Call):
        if ctx.qualified_name(root.func) in _ZIP and root.args:
            return [source for part in _zipped(root.args[0].value)
                    for source in [keras_batched_source(ctx, part, scope)] if source is not None]
        function, returned = called_returns(ctx, root)
        return [source for value in returned for source in zipped_keras_sources(ctx, value, function, depth + 1)]
    if not isinstance(root, cst.Name):
        return []
    found: List[cst.Call] = []
    for statement, name, value in assignments(ctx, scope):
        if name != root.value:
            continue
        if value is None:  # `train, val = make_datasets()`
            unpacked = _unpacked_return(ctx, statement, name)
            made = zipped_keras_sources(ctx, unpacked[0], unpacked[1], depth + 1) if unpacked else []
            found.extend(source for source in made if source not in found)
            continue
        more, again = chain(ctx, value)
        if isinstance(again, cst.Name) and again.value == root.value:  # ds = ds.prefetch(...)
            if any(call.func.attr.value in BATCHING_METHODS for call in more):
                return []
            continue
        found.extend(source for source in zipped_keras_sources(ctx, value, scope, depth + 1) if source not in found)
    return found


def both_subsets(ctx: FileContext, statement: cst.BaseStatement) -> Optional[cst.Call]:
    """``train, val = image_dataset_from_directory(..., subset="both")``: the Keras call that
    makes both datasets of the statement, each batched with a partial last batch."""
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    value = small.value if isinstance(small, cst.Assign) else None
    if not (isinstance(value, cst.Call) and makes_both(value)):
        return None
    return value if batched_source_name(ctx, value) is not None else None


def makes_both(source: cst.Call) -> bool:
    """``subset="both"`` (a Keras maker) or ``split=[...]`` (``tfds.load``): the call gives several
    datasets, not one."""
    subset = keyword(source, "subset")
    if subset is not None and isinstance(subset.value, cst.SimpleString) and subset.value.evaluated_value == "both":
        return True
    split = keyword(source, "split")
    return split is not None and isinstance(split.value, (cst.List, cst.Tuple))


def _unpacked_return(ctx: FileContext, statement: cst.BaseStatement,
                     name: str) -> Optional[Tuple[cst.BaseExpression, cst.FunctionDef]]:
    """What ``name`` gets in ``train, val = load_folders()`` (the statement), and the function that
    makes it: the element at its place in what that function of the file returns, when it returns
    one tuple of that size."""
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Tuple)):
        return None
    names = [element.value for element in small.targets[0].target.elements]
    position = next((index for index, element in enumerate(names) if is_name(element, name)), None)
    made = _made_for_each(small.value, len(names))
    if position is not None and made is not None:  # `train, val = (make(part) for part in (a, b))`
        return made, owner(ctx, statement)
    function, returned = called_returns(ctx, small.value)
    if position is None or len(returned) != 1 or not isinstance(returned[0], cst.Tuple) or len(
            returned[0].elements) != len(names):
        return None
    return returned[0].elements[position].value, function


def _made_for_each(value: cst.BaseExpression, count: int) -> Optional[cst.BaseExpression]:
    """What each item of ``(make(part) for part in (train_rows, val_rows))`` (or of a list made so)
    is made by, when it makes ``count`` items: one loop over a literal list or tuple of ``count``
    items, with no condition."""
    if not isinstance(value, (cst.GeneratorExp, cst.ListComp)):
        return None
    loop = value.for_in
    if loop.inner_for_in is not None or loop.ifs or not isinstance(loop.iter, (cst.List, cst.Tuple)) or len(
            loop.iter.elements) != count or any(isinstance(item, cst.StarredElement) for item in loop.iter.elements):
        return None
    return value.elt


def _returned_source(ctx: FileContext, call: cst.Call, depth: int) -> Optional[cst.Call]:
    """The Keras call that made the batched dataset a function of the file returns (``def
    make_ds(path): return keras.utils.image_dataset_from_directory(path, batch_size=32)``), the
    same on every ``return``."""
    function, returned = called_returns(ctx, call)
    return _same_source([_given_source(ctx, call, function, value, depth)
                         or keras_batched_source(ctx, value, function, depth + 1) for value in returned])


def _property_source(ctx: FileContext, attribute: cst.Attribute, depth: int) -> Optional[cst.Call]:
    """The Keras call that made the batched dataset a ``@property`` of a class of the file returns
    (``window.train``, for ``def train(self): return self.make_dataset(self.train_df)``), the same
    on every ``return``."""
    owner_class = instance_class(ctx, attribute.value)
    body = owner_class.body.body if owner_class is not None and isinstance(owner_class.body, cst.IndentedBlock) else ()
    method = next((statement for statement in body if isinstance(statement, cst.FunctionDef)
                   and statement.name.value == attribute.attr.value and any(
                       is_name(decorator.decorator, "property") for decorator in statement.decorators)), None)
    if method is None:
        return None
    return _same_source([keras_batched_source(ctx, node.value, method, depth + 1) for node in returns_of(method)
                         if node.value is not None])


def _same_source(sources: List[Optional[cst.Call]]) -> Optional[cst.Call]:
    """The one Keras call that made each of ``sources``; None when any is unknown or they differ."""
    if not sources or None in sources or any(source is not sources[0] for source in sources):
        return None
    return sources[0]


def _given_source(ctx: FileContext, call: cst.Call, function, value: cst.BaseExpression,
                  depth: int) -> Optional[cst.Call]:
    """``def prepare(ds): return ds.map(to_spectrogram)``: what ``function`` returns is a chain of
    its parameter, so the Keras call that made the dataset ``call`` gives it, if any, made it."""
    given = _given_argument(ctx, call, function, value)
    if given is None:
        return None
    return keras_batched_source(ctx, given, ctx.enclosing_function(call) or ctx.module, depth + 1)


def _given_argument(ctx: FileContext, call: cst.Call, function, value: cst.BaseExpression
                    ) -> Optional[cst.BaseExpression]:
    """What ``call`` gives the parameter of ``function`` that ``value`` (one of its returns) is a
    chain of, batched no more on the way; None when ``value`` is not such a chain."""
    calls = chain(ctx, value)[0]
    parameter = (parameter_input(ctx, value, function) or _rechained_parameter(ctx, value, function)
                 if function is not None else None)
    if parameter is None or any(step.func.attr.value in BATCHING_METHODS for step in calls):
        return None
    names = [param.name.value for param in function.params.params]
    given = argument(call, parameter, names.index(parameter)) if parameter in names else keyword(call, parameter)
    return None if given is None or given.star else given.value


def _passed_through(ctx: FileContext, call: cst.BaseExpression, name: str) -> bool:
    """``prepare(ds)`` in ``ds = prepare(ds)``: a call of a function of the file that returns, on
    every ``return``, a chain of the parameter it gives ``name`` to, batched no more on the way (see
    ``_given_source``). The variable still holds the dataset it held, mapped: followed on through
    its earlier values, not through this assignment again."""
    if not isinstance(call, cst.Call):
        return False
    function, returned = called_returns(ctx, call)
    return function is not None and bool(returned) and all(
        value is not None and is_name(_given_argument(ctx, call, function, value), name) for value in returned)


def _rechained_parameter(ctx: FileContext, expr: cst.BaseExpression, function: cst.FunctionDef) -> Optional[str]:
    """``def prepare(ds): ds = ds.map(rescale); if augment: ds = ds.map(flip); return ds.prefetch(n)``:
    the parameter ``expr`` is a chain of, when the function assigns it only chains of itself that do
    not batch it again (each still holds the dataset it was given, mapped)."""
    root = chain(ctx, expr)[1]
    params = function.params
    if not isinstance(root, cst.Name) or root.value not in {param.name.value for param in params.params}:
        return None
    for _, name, value in assignments(ctx, function):
        if name != root.value:
            continue
        calls, again = chain(ctx, value) if value is not None else ((), None)
        if not is_name(again, root.value) or any(call.func.attr.value in BATCHING_METHODS for call in calls):
            return None
    return root.value


# Libraries whose functions make datasets (of files, of generators) the porter does not follow.
_DATASET_LIBRARIES = ("tensorflow", "keras", "tf_keras", "keras_core", "tensorflow_datasets")
_FOLLOW_DEPTH = 6  # how many variables, returns and parameters a dataset is followed through


@dataclass
class MadeDataset:
    """A dataset as far as it is followed back from where it is read: ``maker`` (the
    ``from_tensor_slices``/``from_tensors``/``from_generator`` call, or a call of another module's
    function), the dataset methods called on the way (``methods``, the last applied first), and the
    calls of the file's functions it was followed into (``callers``, innermost last), which give those
    functions' parameters."""
    maker: cst.Call
    methods: Tuple[cst.Call, ...]
    callers: Tuple[cst.Call, ...]

    @property
    def maps(self) -> Tuple[cst.Call, ...]:
        """The ``.map(...)`` calls on the way."""
        return tuple(call for call in self.methods if call.func.attr.value == "map")

    @property
    def of_arrays(self) -> bool:
        """Made by ``from_tensor_slices``/``from_tensors``, not by another module."""
        return isinstance(self.maker.func, cst.Attribute) and self.maker.func.attr.value in (
            "from_tensor_slices", "from_tensors")

    @property
    def of_generator(self) -> bool:
        """Made by ``tf.data.Dataset.from_generator``."""
        return isinstance(self.maker.func, cst.Attribute) and self.maker.func.attr.value == "from_generator"


def made_datasets(ctx: FileContext, source: cst.BaseExpression, scope: cst.CSTNode,
                  every_maker: bool = False) -> List[MadeDataset]:
    """How the dataset ``source`` (read in ``scope``) is made: followed through method chains,
    variables, ``Dataset.zip``, a strategy's ``experimental_distribute_dataset``, the functions of
    the file that return it and the parameters their callers give. Datasets made by another module
    or of arrays or a generator; with ``every_maker``, also those TensorFlow makes of files or a
    range (``TFRecordDataset``, ``list_files``, ``Dataset.range``), for the methods on their way."""
    found: List[MadeDataset] = []
    _follow(ctx, source, scope, (), (), found, set(), 0, every_maker)
    return found


def _follow(ctx: FileContext, expr: cst.BaseExpression, scope: cst.CSTNode, methods: Tuple[cst.Call, ...],
            callers: Tuple[cst.Call, ...], found: List[MadeDataset], seen: Set[Tuple[int, int]], depth: int,
            every_maker: bool = False) -> None:
    if depth > _FOLLOW_DEPTH:
        return
    calls, root = chain(ctx, expr)
    for index, call in enumerate(calls):
        method = call.func.attr.value
        if method in ("experimental_distribute_dataset", "concatenate") and call.args:
            # `strategy.experimental_distribute_dataset(ds)` gives `ds`; `a.concatenate(b)` gives `b` too
            given = methods + tuple(calls[:index])
            _follow(ctx, call.args[0].value, scope, given, callers, found, seen, depth + 1, every_maker)
            if method == "experimental_distribute_dataset":
                return
    methods = methods + tuple(calls)
    if isinstance(root, cst.Call):
        _follow_call(ctx, root, scope, methods, callers, found, seen, depth, every_maker)
    elif isinstance(root, cst.Name):
        _follow_name(ctx, root, scope, methods, callers, found, seen, depth, every_maker)


def _follow_call(ctx: FileContext, root: cst.Call, scope: cst.CSTNode, methods: Tuple[cst.Call, ...],
                 callers: Tuple[cst.Call, ...], found: List[MadeDataset], seen: Set[Tuple[int, int]],
                 depth: int, every_maker: bool = False) -> None:
    qualified = ctx.qualified_name(root.func)
    if qualified in SLICES_CONSTRUCTORS or qualified in FROM_GENERATOR:  # made of arrays, or by a generator
        found.append(MadeDataset(root, methods, callers))
    elif qualified in _ZIP and root.args:
        for part in _zipped(root.args[0].value):
            _follow(ctx, part, scope, methods, callers, found, seen, depth + 1, every_maker)
    elif qualified is not None and not qualified.startswith(_DATASET_LIBRARIES):
        found.append(MadeDataset(root, methods, callers))  # another module makes it
    elif every_maker and qualified is not None:  # `TFRecordDataset(files)`, `Dataset.range(n)`, ...
        found.append(MadeDataset(root, methods, callers))
    else:
        function, returned = called_returns(ctx, root)
        for value in returned:
            _follow(ctx, value, function, methods, callers + (root,), found, seen, depth + 1, every_maker)


def _zipped(joined: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The datasets ``Dataset.zip`` joins, through nesting: ``((images, extras), labels)`` makes
    an element of two inputs and a label of three datasets."""
    if not isinstance(joined, (cst.Tuple, cst.List)):
        return []
    return [part for element in joined.elements
            for part in (_zipped(element.value) if isinstance(element.value, (cst.Tuple, cst.List)) else [element.value])]


def _follow_name(ctx: FileContext, root: cst.Name, scope: cst.CSTNode, methods: Tuple[cst.Call, ...],
                 callers: Tuple[cst.Call, ...], found: List[MadeDataset], seen: Set[Tuple[int, int]],
                 depth: int, every_maker: bool = False) -> None:
    # Each read of the name once: `ds = ds.batch(1)` reads `ds` again, and that read is followed
    # back to the binding before it.
    if (id(scope), id(root)) in seen:
        return
    seen.add((id(scope), id(root)))
    last = last_binding_before(ctx, root, scope)
    bindings = [last] if last[0] is not None else [
        (statement, value) for statement, name, value in assignments(ctx, scope)
        if name == root.value and not exclusive_branches(ctx, statement, root)]
    for statement, value in bindings:
        unpacked = _unpacked_return(ctx, statement, root.value) if value is None else None
        if unpacked is not None:  # `train_ds, val_ds = make_datasets(...)`
            made_by = statement.body[0].value  # a call, or a generator of calls in this scope
            outer = callers + (made_by,) if isinstance(made_by, cst.Call) else callers
            _follow(ctx, unpacked[0], unpacked[1], methods, outer, found, seen, depth + 1, every_maker)
        elif value is not None:
            _follow(ctx, value, scope, methods, callers, found, seen, depth + 1, every_maker)
    if bindings:
        return
    if parameter_input(ctx, root, scope) is not None:
        for given, scope_of_given, outer in given_arguments(ctx, root, scope, callers):
            _follow(ctx, given, scope_of_given, methods, outer, found, seen, depth + 1, every_maker)
    elif isinstance(scope, cst.FunctionDef):  # a module variable the function reads
        _follow(ctx, root, ctx.module, methods, (), found, seen, depth + 1, every_maker)


_CALLERS = 3  # how many callers up a parameter's arrays are followed


def argument_sources(ctx: FileContext, expr: cst.BaseExpression, scope: cst.CSTNode, callers: Tuple[cst.Call, ...]
                     ) -> List[Tuple[cst.BaseExpression, Optional[str]]]:
    """Where the data ``expr`` (read in ``scope``) holds can be changed: ``(expr, None)`` itself, or,
    for a parameter of the function, ``(argument, name of the function)`` for the argument each call
    of it gives (followed up a few callers, through the last of ``callers`` when given)."""
    pending = [(expr, scope, callers, 0, None)]
    found: List[Tuple[cst.BaseExpression, Optional[str]]] = []
    while pending:
        value, scope, callers, depth, called = pending.pop()
        given = given_arguments(ctx, value, scope, callers) if depth < _CALLERS else []
        if not given:
            found.append((value, called))
        pending.extend((argument_value, outer_scope, outer, depth + 1, scope.name.value)
                       for argument_value, outer_scope, outer in given)
    return found
