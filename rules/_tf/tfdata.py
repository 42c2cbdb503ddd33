"""Which expressions are ``tf.data`` datasets, followed through method chains and variables.

Shared by the Keras and TF1 rules (drop_remainder, uint8 casts) so the logic exists once.
"""

from __future__ import annotations

from typing import Callable, Dict, Iterator, List, Optional, Set, Tuple

import libcst as cst

from porter.context import FileContext, SharedKey, bound_names, code_of, walk
from porter.cstutil import (append_args, argument, as_receiver, is_false, is_main_guard, is_name, is_true, keyword,
                            keyword_arg, replace_arg)
from porter.rules._tf.arrays import (FLOAT64, FLOAT64_KINDS, FLOAT64_TENSOR, FRAME, MAYBE_FLOAT64, SKLEARN_MADE,
                                     SKLEARN_SPLIT, UINT8, UINT8_TENSOR, ArrayData, array_value, is_uint8_dtype)
from porter.rules.keras._analysis.util import KERAS_BATCHED_SOURCES, last_name
from porter.scopes import assignments, called_returns, loads, local_function, owner, sub_blocks

DATASET_SOURCES = ("tensorflow.data.", "tensorflow.compat.v1.data.", "tensorflow_datasets.load")

# Analyses of the original tree, computed once per file by whichever rule asks first.
_DATASET_VARIABLES: SharedKey[Set[str]] = SharedKey("dataset-variables")  # per function (or module)
_ASSIGNS_BY_OWNER: SharedKey[Dict[int, List[cst.Assign]]] = SharedKey("assigns-by-owner")
_ARRAY_FLOWS: SharedKey["_ArrayFlow"] = SharedKey("array-flows")  # per function (or module)
_UINT8_POSSIBLE: SharedKey[bool] = SharedKey("uint8-possible")
_OWNERS_OF_MAPS: SharedKey[Set[int]] = SharedKey("owners-of-maps")
_RETURNS_VISITED: SharedKey[Set[int]] = SharedKey("dataset-returns-visited")  # functions being followed
_FLOWS_WALKED: SharedKey[Set[int]] = SharedKey("array-flows-walked")  # functions whose flow is being made


def _dataset_variables(ctx: FileContext, scope: cst.CSTNode) -> Set[str]:
    return ctx.shared(_DATASET_VARIABLES, lambda: _find_dataset_variables(ctx, scope), per=id(scope))


def _find_dataset_variables(ctx: FileContext, scope: cst.CSTNode) -> Set[str]:
    found: Set[str] = set()
    for assign in _assigns_by_owner(ctx).get(id(scope), ()):
        if len(assign.targets) != 1:
            continue
        target = assign.targets[0].target
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(assign.value, (cst.Tuple, cst.List)) and len(
                target.elements) == len(assign.value.elements) and not any(
                isinstance(element, cst.StarredElement) for element in (*target.elements, *assign.value.elements)):
            # `train, val = full.take(900), full.skip(900)`: each name gets its own value.
            for element, value in zip(target.elements, assign.value.elements):
                if isinstance(element.value, cst.Name) and _is_dataset_in(ctx, value.value, found):
                    found.add(element.value.value)
                elif isinstance(element.value, cst.Name):
                    found.discard(element.value.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            found.update(_unpacked_tfds_splits(ctx, target, assign.value))
            found.update(_unpacked_returns(ctx, target, assign.value))
        elif isinstance(target, cst.Name):
            if _is_dataset_in(ctx, assign.value, found):
                found.add(target.value)
            else:
                found.discard(target.value)
    return found


def _unpacked_returns(ctx: FileContext, target: cst.BaseExpression, value: cst.BaseExpression) -> List[str]:
    """The names ``train, val = make_datasets()`` binds to datasets, when every ``return`` of that
    function of the file gives a tuple whose element at each such place is one of its datasets."""
    function, returned = called_returns(ctx, value)
    visiting = ctx.shared(_RETURNS_VISITED, set)
    if function is None or id(function) in visiting:
        return []
    visiting.add(id(function))  # a function that calls itself: not followed again
    names = [element.value for element in target.elements]
    found = []
    if returned and all(isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(names)
                        for value in returned):
        for index, name in enumerate(names):
            if isinstance(name, cst.Name) and all(is_dataset(ctx, value.elements[index].value) for value in returned):
                found.append(name.value)
    visiting.discard(id(function))
    return found


def _returns_datasets(ctx: FileContext, call: cst.Call) -> bool:
    """``get_data(64)``: a call of a function of the file every ``return`` of which gives a dataset."""
    function, returned = called_returns(ctx, call)
    visiting = ctx.shared(_RETURNS_VISITED, set)
    if function is None or not returned or id(function) in visiting:
        return False
    visiting.add(id(function))  # a function that calls itself: not followed again
    try:
        return all(value is not None and is_dataset(ctx, value) for value in returned)
    finally:
        visiting.discard(id(function))


def _assigns_by_owner(ctx: FileContext) -> Dict[int, List[cst.Assign]]:
    """The file's assignments grouped by the function (or module) they are in, found once."""
    def group() -> Dict[int, List[cst.Assign]]:
        grouped: Dict[int, List[cst.Assign]] = {}
        for assign in ctx.nodes(cst.Assign):
            grouped.setdefault(id(owner(ctx, assign)), []).append(assign)
        return grouped

    return ctx.shared(_ASSIGNS_BY_OWNER, group)


def _unpacked_tfds_splits(ctx: FileContext, target: cst.BaseExpression, value: cst.BaseExpression) -> List[str]:
    """The datasets ``tfds.load`` unpacks into: ``train, test = tfds.load(..., split=[...])``, and
    the first element of ``(train, test), info = tfds.load(..., with_info=True)``."""
    if not (isinstance(value, cst.Call) and ctx.qualified_name(value.func) == "tensorflow_datasets.load"):
        return []
    elements = [element.value for element in target.elements]
    if is_true(_keyword_value(value, "with_info")):
        elements = elements[:1]
        if elements and isinstance(elements[0], (cst.Tuple, cst.List)):
            elements = [element.value for element in elements[0].elements]
    return [element.value for element in elements if isinstance(element, cst.Name)]


def _is_dataset_in(ctx: FileContext, node: cst.BaseExpression, variables: Set[str]) -> bool:
    while True:
        if isinstance(node, cst.IfExp):  # `ds.shuffle(n).batch(b) if training else ds.batch(b)`
            return _is_dataset_in(ctx, node.body, variables) and _is_dataset_in(ctx, node.orelse, variables)
        if isinstance(node, cst.Subscript) and _is_tfds_splits(ctx, node.value, variables):
            return True  # tfds.load(...)["train"]: one split of the dict tfds.load returns
        if isinstance(node, cst.Call):
            qualified = ctx.qualified_name(node.func)
            if qualified is not None and qualified.startswith(DATASET_SOURCES) or _unbatched_reader(ctx, node):
                return True
            if not isinstance(node.func, cst.Attribute):
                return _returns_datasets(ctx, node)
            node = node.func.value
        elif isinstance(node, cst.Name):
            return node.value in variables
        else:
            return False


def _unbatched_reader(ctx: FileContext, call: cst.Call) -> bool:
    """A Keras reader given ``batch_size=None`` (``image_dataset_from_directory(folder,
    batch_size=None)``): a dataset of single samples, which the script batches itself (``.batch(32)``)
    as it would any ``tf.data`` dataset."""
    batch = keyword(call, "batch_size")
    return batch is not None and is_name(batch.value, "None") and ctx.keras_name(call.func) in KERAS_BATCHED_SOURCES


def _is_tfds_splits(ctx: FileContext, node: cst.BaseExpression, variables: Set[str]) -> bool:
    if isinstance(node, cst.Call):
        return ctx.qualified_name(node.func) == "tensorflow_datasets.load"
    return isinstance(node, cst.Name) and node.value in variables


def is_dataset(ctx: FileContext, node: cst.BaseExpression) -> bool:
    """True when ``node`` is a tf.data dataset: a chain that starts at ``tf.data...`` (or
    ``tfds.load``), or at a variable of the same function that was assigned one."""
    return _is_dataset_in(ctx, node, _dataset_variables(ctx, owner(ctx, node)))


# Methods of `tf.data.Dataset` that lists, arrays and tables do not have.
DATASET_ONLY_METHODS = frozenset({"take", "skip", "shuffle", "batch", "padded_batch", "unbatch", "prefetch",
                                  "cache", "as_numpy_iterator", "with_options", "interleave", "flat_map"})


def dataset_like(ctx: FileContext, node: cst.BaseExpression) -> bool:
    """A dataset: one ``is_dataset`` follows, or what a method only datasets have gives
    (``test_ds.take(1)``, ``ds.shuffle(64).batch(8)``), wherever ``ds`` comes from."""
    if is_dataset(ctx, node):
        return True
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        if node.func.attr.value in DATASET_ONLY_METHODS:
            return True
        node = node.func.value
    return False


def dataset_method_calls(ctx: FileContext, *methods: str):
    """Calls ``<dataset>.method(...)`` for the given method names."""
    for call in ctx.nodes(cst.Call):
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in methods and is_dataset(ctx, func.value):
            yield call, func.attr.value


# Where drop_remainder sits when passed by position (the batching methods of a dataset).
DROP_REMAINDER_POSITION = {"batch": 1, "padded_batch": 3}


def fix_drop_remainder(ctx: FileContext, code: str, explained: Dict[int, tuple] = {},
                       skip: Set[int] = frozenset()) -> None:
    """``.batch(n)`` / ``.padded_batch(...)`` of a dataset get ``drop_remainder=True``; an explicit
    False becomes True; a value the porter cannot read is reported. Used by the Keras (IPU105) and
    TF1 (IPU206) rules. ``explained``: per call id, what the message adds and whether the port is
    complete with it (a dataset ``predict`` answers for loses its last answers) and, optionally,
    whether the message still has to say that a partial batch is dropped; ``skip``: the ids of
    calls left as they are."""
    for call, method in dataset_method_calls(ctx, "batch", "padded_batch"):
        if id(call) not in skip and not _unbatched_later(ctx, call) \
                and not read_into_python(ctx, outermost_chain(ctx, call)):
            fix_batch_call(ctx, code, call, method, *explained.get(id(call), ("", True)))


def _unbatched_later(ctx: FileContext, call: cst.Call) -> bool:
    """``ds.batch(10000).map(parse).unbatch()``: batches made only to run a ``map`` on many rows
    at once, split back into rows by the same chain. They never reach the model, and dropping the
    last one would lose up to a whole batch of rows."""
    for method in methods_after(ctx, call):
        if method.func.attr.value in ("unbatch", "batch", "padded_batch", "rebatch"):
            return method.func.attr.value == "unbatch"  # split back into rows, or batched again first
    return False


def methods_after(ctx: FileContext, call: cst.Call) -> Iterator[cst.Call]:
    """The dataset method calls applied after ``call``, in order: on its chain, then where a
    later line of the same block goes on with the variable it is assigned to (``ds = ds.batch(512)``,
    then ``ds = ds.map(parse)``)."""
    node: cst.BaseExpression = call
    while True:
        attribute = ctx.parent(node)
        outer = ctx.parent(attribute) if isinstance(attribute, cst.Attribute) and attribute.value is node else None
        if not (isinstance(outer, cst.Call) and outer.func is attribute):
            node = _next_read(ctx, node)
            if node is None:
                return
            continue
        yield outer
        node = outer


def _next_read(ctx: FileContext, chain_end: cst.BaseExpression) -> Optional[cst.Name]:
    """``ds = <chain_end>``, then ``ds = ds.map(parse)`` on a later line of the same block: that
    read of ``ds``, where the chain goes on. Only when it is the one place the value goes: the
    line binds ``ds`` again, or no other line of the block reads ``ds``. None otherwise."""
    assign = ctx.parent(chain_end)
    if not (isinstance(assign, cst.Assign) and assign.value is chain_end and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)):
        return None
    name = assign.targets[0].target.value
    siblings = list(ctx.siblings(ctx.statement_of(assign)))
    later = siblings[siblings.index(ctx.statement_of(assign)) + 1:]
    for index, line in enumerate(later):
        reads = [read for read in loads(line) if read.value == name]
        rebinds = isinstance(line, cst.SimpleStatementLine) and any(
            name in bound_names(target.target) for small in line.body if isinstance(small, cst.Assign)
            for target in small.targets)
        if not reads:
            if rebinds:
                return None
            continue
        elsewhere = any(read.value == name for other in later[index + 1:] for read in loads(other))
        return reads[0] if len(reads) == 1 and (rebinds or not elsewhere) else None
    return None


def chain(ctx: FileContext, node: cst.BaseExpression) -> Tuple[List[cst.Call], cst.BaseExpression]:
    """The method calls of ``a.b(...).c(...)`` (outermost first) and its root ``a``; a call of an
    imported function (``tf.data.Dataset.range(8)``, ``keras.utils.image_dataset_from_directory(...)``)
    is a root."""
    calls = []
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and ctx.qualified_name(node.func) is None:
        calls.append(node)
        node = node.func.value
    return calls, node


def outermost_chain(ctx: FileContext, call: cst.Call) -> cst.BaseExpression:
    """``ds.batch(8).prefetch(2).take(1)`` for its ``.batch(8)``: the whole method chain."""
    node = call
    while True:
        attribute = ctx.parent(node)
        outer = ctx.parent(attribute) if isinstance(attribute, cst.Attribute) and attribute.value is node else None
        if not isinstance(outer, cst.Call) or outer.func is not attribute:
            return node
        node = outer


# Builtins, dataset methods and tf.data functions that read a dataset's elements into Python, on the host.
_PYTHON_READERS = frozenset({"iter", "next", "list"})
_PYTHON_READ_METHODS = frozenset({"as_numpy_iterator", "get_single_element"})
_PYTHON_READ_FUNCTIONS = frozenset({
    "tensorflow.data.experimental.get_single_element", "tensorflow.data.Dataset.get_single_element",
    "tensorflow.compat.v1.data.experimental.get_single_element", "tensorflow.contrib.data.get_single_element",
})


def read_into_python(ctx: FileContext, node: cst.BaseExpression) -> bool:
    """``node`` (a whole method chain) is read into Python: ``next(iter(labels.batch(n)))``,
    ``labels.batch(n).as_numpy_iterator()``, ``tf.data.experimental.get_single_element(ds.batch(n))``.
    No model runs on what it gives there, and a dropped last batch would lose its elements (all of
    them, when one batch is meant to hold them all)."""
    method = node
    while isinstance(method, cst.Call) and isinstance(method.func, cst.Attribute) \
            and ctx.qualified_name(method.func) is None:
        if method.func.attr.value in _PYTHON_READ_METHODS:
            return True
        method = method.func.value
    arg = ctx.parent(node)
    call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    if isinstance(call, cst.Call) and ctx.qualified_name(call.func) in _PYTHON_READ_FUNCTIONS:
        return arg is call.args[0]
    return (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in _PYTHON_READERS
            and ctx.qualified_name(call.func) is None and local_function(ctx, call.func.value, call) is None)


def fix_batch_call(ctx: FileContext, code: str, call: cst.Call, method: str, why: str = "",
                   fixed: bool = True, drops: bool = True) -> None:
    """One ``.batch(...)`` / ``.padded_batch(...)`` call gets ``drop_remainder=True`` (``why``: what
    the message adds about where the dataset goes; not ``fixed`` when that leaves work; not
    ``drops`` when ``why`` says what is dropped, or the port pads the data so that nothing is)."""
    current = argument(call, "drop_remainder", DROP_REMAINDER_POSITION[method])
    if current is None:
        ctx.replace(call, lambda node: append_args(node, keyword_arg("drop_remainder", cst.Name("True"))))
        dropped = ("; " if why else ": ") + "a last partial batch is dropped" if fixed and drops else ""
        ctx.report(code, call.func.attr, f"`.{method}()` gets `drop_remainder=True`{why}{dropped}", fixed=fixed)
    elif is_false(current.value):
        new = current.with_changes(value=cst.Name("True"))
        ctx.replace(call, lambda node, at=call.args.index(current), new=new: replace_arg(node, at, new))
        dropped = ": the last partial batch is now dropped" if drops else ""
        ctx.report(code, current, f"`.{method}()`: `drop_remainder=False` becomes `True`{dropped}{why}", fixed=fixed)
    elif not is_true(current.value):
        ctx.report(code, current, f"`.{method}()`: `drop_remainder` must be True on the IPU; "
                   "make sure this value is True", fixed=False)


# ------------------------------------------------------------------------------ uint8 and float64 data
# Which arrays certainly hold uint8 data (images from ``keras.datasets.*.load_data()``, arrays made
# with ``dtype=uint8``) at a given read, followed through one function in source order. Shared by the
# Keras rule (IPU106) and the TF1 rule (IPU206): both cast such data on the host before it reaches
# the IPU (Targeting the IPU from TensorFlow 2, "Supported types"), and both leave data alone when
# its flow is not clear. The same walk notes the float64 arrays NumPy makes (IPU155 casts those a
# custom loop's dataset is made of).
#
#   uint8_data(ctx, expr)       -> ArrayData(kind, origin, role) or None: ``expr`` (a variable or a
#                                  slice of one, e.g. a feed_dict value) holds uint8 data right there
#   float64_data(ctx, expr)     -> the same for float64 host data (NumPy, pandas, uint8 data divided)
#   tensor_slices_inputs(ctx)   -> (call, [(role, expr)]) for Dataset.from_tensor_slices/from_tensors
#   sliced_arrays(call)         -> every array one of those calls is made of
#   is_mapped(ctx, call)        -> the dataset a call makes goes through .map() (leave it to the user)
#   astype(expr, dtype)         -> ``expr.astype("dtype")``
#   uint8_tfds_loads(ctx), cast_images_map(dataset, tf) -> tfds image sets, and the tf.cast map for them

# UINT8 (from porter.rules._tf.arrays), and FLOAT64: also what a true division makes of uint8
# data (`x / 255.0`, `x.reshape(-1, 784) / 255.0`): NumPy gives float64.
# keras.datasets whose load_data() returns uint8 images and uint8 labels.
UINT8_DATASETS = ("mnist", "fashion_mnist", "cifar10", "cifar100")
SLICES_CONSTRUCTORS = ("tensorflow.data.Dataset.from_tensor_slices", "tensorflow.data.Dataset.from_tensors",
                       "tensorflow.compat.v1.data.Dataset.from_tensor_slices",
                       "tensorflow.compat.v1.data.Dataset.from_tensors")


class _ArrayFlow:
    """Walks one function (or the module) in source order and notes, before each statement, which
    names hold uint8 data (``UINT8``) and which hold float64 data (the kinds of
    ``porter.rules._tf.arrays``, which says what each expression makes). A name bound inside a
    branch or a loop is no longer known (the flow there is not clear), unless it may hold float64
    data: it then ``MAYBE_FLOAT64``."""

    def __init__(self, ctx: FileContext, scope: cst.CSTNode) -> None:
        self.ctx = ctx
        self.state: Dict[str, ArrayData] = {}
        self.before: Dict[int, Dict[str, ArrayData]] = {}
        walked = ctx.shared(_FLOWS_WALKED, set)
        walked.add(id(scope))  # a function that calls itself, or its caller: its returns are not followed
        if isinstance(scope, cst.Module):
            self._block(scope.body, linear=True)
        else:
            self._body(scope.body, linear=True)
        walked.discard(id(scope))

    def _block(self, statements, linear: bool) -> None:
        for statement in statements:
            self._statement(statement, linear)

    def _statement(self, statement, linear: bool) -> None:
        self.before[id(statement)] = dict(self.state)
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                self._small(small, linear)
            return
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            self._forget([statement.name.value])
            return
        if isinstance(statement, cst.With):
            for item in statement.items:
                if item.asname is not None:
                    self._forget(_bound(item.asname.name))
            self._body(statement.body, linear)
            return
        within = None
        if isinstance(statement, cst.For):
            self._forget(_bound(statement.target))
            within = self._one_pass(statement)
        if is_main_guard(statement):  # `if __name__ == "__main__":` runs straight through
            self._body(statement.body, linear)
            return
        for block in sub_blocks(statement):
            self._body(block, False)
        if within is not None:
            self.before.update(within)

    def _one_pass(self, loop: cst.For) -> Dict[int, Dict[str, ArrayData]]:
        """The notes (what names hold before each statement) of one pass through the body of
        ``loop``, walked in order from the state before it: a name the body binds holds, after
        that, what the body gave it (`imgs = x_train[idx]`, then `model.train_on_batch(imgs, ...)`),
        and before it what it held before the loop, as the walk of the loop as a branch says. The
        state is left as it was: that walk, which follows, says what the names hold after the loop."""
        entry, notes = dict(self.state), self.before
        self.before = {}
        self._body(loop.body, linear=True)
        within, self.before, self.state = self.before, notes, entry
        return within

    def _body(self, block, linear: bool) -> None:
        if isinstance(block, cst.IndentedBlock):
            self._block(block.body, linear)
        elif isinstance(block, cst.SimpleStatementSuite):
            for small in block.body:
                self._small(small, linear)

    def _small(self, small, linear: bool) -> None:
        if isinstance(small, cst.Assign):
            for target in small.targets:
                self._bind(target.target, small.value, linear)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            self._bind(small.target, small.value, linear)
        elif isinstance(small, cst.AugAssign) and self._float64_name(small.target) and linear:
            pass  # `x -= x.mean(0)`: an array changed in place keeps its dtype
        elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
            self._forget(_bound(small.target))
        elif isinstance(small, cst.Del):
            self._forget(_bound(small.target))

    def _forget(self, names) -> None:
        for name in names:
            self.state.pop(name, None)

    def _set(self, name: str, data: Optional[ArrayData]) -> None:
        if data is None:
            self.state.pop(name, None)
        else:
            self.state[name] = data

    def _float64_name(self, target) -> bool:
        return isinstance(target, cst.Name) and target.value in self.state and \
            self.state[target.value].kind in FLOAT64_KINDS

    def _bind(self, target, value, linear: bool) -> None:
        if not linear:
            self._bind_on_some_paths(target, value)
            return
        kinds = self._bound_kinds(target, value, self.state)
        self._forget(_bound(target))  # all values are read before any name is bound
        for element, kind in kinds or ():
            if isinstance(element, cst.Name):
                self._set(element.value, kind)

    def _bound_kinds(self, target, value, state: Dict[str, ArrayData]) -> Optional[list]:
        """``(target part, what it holds)`` for each part of the target of an assignment, with the
        names holding what ``state`` says; None when the parts are not known."""
        returned = self._returned_kinds(target, value, state)
        if returned is not None:
            return returned
        if isinstance(target, cst.Name):
            return [(target, self._kind(value, state))]
        if not isinstance(target, (cst.Tuple, cst.List)):
            return None
        loaded = self._loaded_dataset(value)
        if loaded is not None:
            kinds = []
            for pair in target.elements:  # ((x_train, y_train), (x_test, y_test))
                inner = pair.value
                if isinstance(inner, (cst.Tuple, cst.List)) and len(inner.elements) == 2:
                    kinds.extend((element.value, ArrayData(UINT8, f"`{loaded}.load_data()`", role))
                                 for element, role in zip(inner.elements, ("images", "labels")))
            return kinds
        kinds = self._unpacked_kinds(target, value, state)
        return kinds if kinds is not None else self._sklearn_kinds(target, value, state)

    def _returned_kinds(self, target, value, state: Dict[str, ArrayData]) -> Optional[list]:
        """``x, y = make_data()``, ``images = load()``: what each part of the target holds, when
        ``value`` calls a function of the file, from what its ``return``s give there (the same
        at every ``return``, else float64 data on some paths only), with its parameters holding
        the float64 data the call gives them (``u = exact(t)`` of ``def exact(t): return
        np.sin(np.pi * t)``, with ``t`` float64 in ``state``); None for any other value."""
        function, returned = called_returns(self.ctx, value)
        if function is None or not returned or id(function) in self.ctx.shared(_FLOWS_WALKED, set):
            return None
        given = self._given_float64(function, value, state)
        at_returns = []
        for result in returned:
            flow = _flow(self.ctx, result)
            at_return = flow.before.get(id(self.ctx.statement_of(result)))
            kinds = flow._bound_kinds(target, result, {**given, **at_return}) if at_return is not None else None
            if kinds is None or at_returns and [part for part, _ in kinds] != [part for part, _ in at_returns[0]]:
                return None
            at_returns.append(kinds)
        where = f" in `{function.name.value}()`"
        return [(parts[0][0], _same_kind([kind for _, kind in parts], where)) for parts in zip(*at_returns)]

    def _given_float64(self, function: cst.FunctionDef, call: cst.Call, state: Dict[str, ArrayData]
                       ) -> Dict[str, ArrayData]:
        """The parameters of ``function`` that ``call`` gives float64 data (by position or by
        keyword, as ``state`` says it holds), and that the function never binds anew."""
        params = [*function.params.posonly_params, *function.params.params]
        by_name = {param.name.value for param in (*params, *function.params.kwonly_params)}
        rebound = {name for _, name, _ in assignments(self.ctx, function)}
        given = {}
        for index, arg in enumerate(call.args):
            if arg.star:
                break
            name = arg.keyword.value if arg.keyword is not None else (
                params[index].name.value if index < len(params) else None)
            data = self._kind(arg.value, state) if name in by_name and name not in rebound else None
            if data is not None and data.kind in FLOAT64_KINDS:
                given[name] = data
        return given

    def _unpacked_kinds(self, target, value, state: Dict[str, ArrayData]) -> Optional[list]:
        """``(target part, what its value holds)`` for ``a, b = c, d``, also nested
        (``(x_fit, y_fit), (x_val, y_val) = (x[:n], y[:n]), (x[n:], y[n:])``); None when the value
        is not a tuple of the same shape."""
        if not (isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(target.elements) and not any(
                isinstance(element, cst.StarredElement) for element in (*value.elements, *target.elements))):
            return None
        kinds = []
        for element, item in zip(target.elements, value.elements):
            nested = self._unpacked_kinds(element.value, item.value, state) if isinstance(
                element.value, (cst.Tuple, cst.List)) else None
            kinds.extend(nested if nested is not None else [(element.value, self._kind(item.value, state))])
        return kinds

    def _bind_on_some_paths(self, target, value) -> None:
        """A name bound in a branch or a loop: float64 data given to a name that held float64 data
        leaves it float64; else float64 data, or a name that held some, may hold float64 data after
        it; else it is no longer known."""
        data = self._kind(value) if isinstance(target, cst.Name) else None
        before = self.state.get(target.value) if self._float64_name(target) else None
        if data is not None and data.kind == FLOAT64 and before is not None and before.kind == FLOAT64:
            return
        if before is not None or data is not None and data.kind in FLOAT64_KINDS:
            data = data if data is not None and data.kind in FLOAT64_KINDS else before
            self._set(target.value, data._replace(kind=MAYBE_FLOAT64))
        else:
            self._forget(_bound(target))

    def _sklearn_kinds(self, target, value, state: Dict[str, ArrayData]) -> Optional[list]:
        """``X, y = make_regression(...)`` (both float64), ``x_fit, x_val, y_fit, y_val =
        train_test_split(x, y, ...)`` (each part holds what its array holds)."""
        if not isinstance(value, cst.Call) or any(isinstance(element, cst.StarredElement)
                                                  for element in target.elements):
            return None
        qualified = self.ctx.qualified_name(value.func)
        targets = [element.value for element in target.elements]
        if qualified in SKLEARN_MADE and len(targets) == 2:
            origin = f"`{code_of(self.ctx, value.func)}`"
            return [(element, ArrayData(FLOAT64, origin) if made else None)
                    for element, made in zip(targets, SKLEARN_MADE[qualified])]
        arrays = [arg.value for arg in value.args if arg.keyword is None and not arg.star]
        if qualified == SKLEARN_SPLIT and arrays and len(targets) == 2 * len(arrays):
            return [(element, self._kind(arrays[index // 2], state)) for index, element in enumerate(targets)]
        return None

    def _loaded_dataset(self, value) -> Optional[str]:
        """``mnist`` for ``tf.keras.datasets.mnist.load_data()`` (any spelling, or a variable)."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "load_data"):
            return None
        module = self.ctx.keras_name(value.func.value)
        if module is None and isinstance(value.func.value, cst.Name):
            known = [self.ctx.keras_name(v) for _, name, v in _assigned(self.ctx, value.func.value)]
            module = known[0] if known and all(k == known[0] for k in known) else None
        if module is None or not module.startswith("keras.datasets."):
            return None
        name = module[len("keras.datasets."):]
        return name if name in UINT8_DATASETS else None

    def _kind(self, value, state: Optional[Dict[str, ArrayData]] = None) -> Optional[ArrayData]:
        """What the value of an assignment holds (with the names holding what ``state`` says, the
        flow's current state by default): uint8 data, float64 data, or None (none of these, or not
        known)."""
        state = self.state if state is None else state
        if self._makes_uint8(value):
            return ArrayData(UINT8, "a uint8 array", "array")
        return array_value(self.ctx, value, state)

    def kind_at(self, statement: Optional[cst.BaseStatement], value: cst.BaseExpression) -> Optional[ArrayData]:
        """What ``value``, read in ``statement`` (None: after the last statement), holds."""
        state = self.state if statement is None else self.before.get(id(statement))
        if state is None:
            return None
        # A call of a function of the file read as it is (`tf.constant(exact(t))`): what it returns,
        # as for `u = exact(t)`.
        returned = self._returned_kinds(cst.Name("returned"), value, state)
        return returned[0][1] if returned else self._kind(value, state)

    def _makes_uint8(self, value) -> bool:
        """A call given a uint8 dtype (``dtype=np.uint8``), of any library but TensorFlow's: a tensor
        has no ``.astype`` to cast it with."""
        if not isinstance(value, cst.Call) or (self.ctx.qualified_name(value.func) or "").startswith(
                ("tensorflow.", "keras.", "torch.")):
            return False
        dtype = _dtype_argument(value)
        if isinstance(value.func, cst.Attribute) and value.func.attr.value == "astype" and value.args:
            dtype = value.args[0].value
        return dtype is not None and is_uint8_dtype(self.ctx, dtype)


def _same_kind(kinds: List[Optional[ArrayData]], where: str) -> Optional[ArrayData]:
    """What a part of a function's result holds, from what it holds at each ``return``: the same
    data at each, or float64 data on some paths only; ``where`` is added to the origin."""
    known = [kind._replace(origin=kind.origin + where) for kind in kinds if kind is not None]
    if known and len(known) == len(kinds) and all(kind.kind == known[0].kind for kind in known):
        return known[0]
    float64 = [kind for kind in known if kind.kind in FLOAT64_KINDS]
    return float64[0]._replace(kind=MAYBE_FLOAT64) if float64 else None


def _bound(target) -> list:
    return bound_names(target)


def _dtype_argument(call: cst.Call) -> Optional[cst.BaseExpression]:
    return _keyword_value(call, "dtype")


def _assigned(ctx: FileContext, name: cst.Name):
    scope = owner(ctx, name)
    return [item for item in assignments(ctx, scope) if item[1] == name.value] or \
        [item for item in assignments(ctx, ctx.module) if item[1] == name.value]


def _flow(ctx: FileContext, node: cst.CSTNode) -> _ArrayFlow:
    scope = node if isinstance(node, cst.Module) else owner(ctx, node)
    return ctx.shared(_ARRAY_FLOWS, lambda: _ArrayFlow(ctx, scope), per=id(scope))


def _may_hold_uint8(ctx: FileContext) -> bool:
    """A cheap test: does the file load a Keras dataset or spell uint8 at all?"""
    return ctx.shared(_UINT8_POSSIBLE, lambda: any(
        node.attr.value in ("load_data", "uint8") for node in ctx.nodes(cst.Attribute)) or any(
        node.value == "uint8" for node in ctx.nodes(cst.Name)) or any(
        "uint8" in node.value for node in ctx.nodes(cst.SimpleString)))


def uint8_data(ctx: FileContext, expr: cst.BaseExpression, tensors: bool = False) -> Optional[ArrayData]:
    """What ``expr`` holds when it certainly holds uint8 data where it is read (where from, images
    or labels): a variable, a slice of one, or an array call that keeps its dtype
    (``np.expand_dims(x_test, -1)``); with ``tensors``, also a tensor TensorFlow made of such data
    (kind ``UINT8_TENSOR``); else None."""
    if not _may_hold_uint8(ctx) or ctx.enclosing(expr, cst.Lambda) is not None:
        return None
    data = _flowed_data(ctx, expr)
    return data if data is not None and (data.kind == UINT8 or tensors and data.kind == UINT8_TENSOR) else None


def float64_data(ctx: FileContext, expr: cst.BaseExpression, tensors: bool = False) -> Optional[ArrayData]:
    """What ``expr`` holds where it is read when that is float64 host data (a kind of
    ``FLOAT64_KINDS``): a variable (or a slice of one, or arithmetic on one) that NumPy, pandas or
    scikit-learn made float64 (``X = np.random.randn(n, 8)``, ``x_train = x_train / 255.0`` of uint8
    data), or such a call itself; with ``tensors``, also a tensor TensorFlow made of such data
    without a dtype (kind ``FLOAT64_TENSOR``: ``tf.convert_to_tensor(X)``); else None."""
    data = _host_data(ctx, expr)
    if data is not None and tensors and data.kind == FLOAT64_TENSOR:
        return data
    return data if data is not None and data.kind in FLOAT64_KINDS else None


def table_data(ctx: FileContext, expr: cst.BaseExpression) -> Optional[ArrayData]:
    """What ``expr`` holds where it is read when that is a pandas table (kind ``FRAME``): a
    variable that pandas made (``pd.read_csv(...)``, ``pd.DataFrame(...)``), or a table made of
    one (``table.dropna()``); else None."""
    data = _host_data(ctx, expr)
    return data if data is not None and data.kind == FRAME else None


def _host_data(ctx: FileContext, expr: cst.BaseExpression) -> Optional[ArrayData]:
    """What the array flow knows ``expr`` holds where it is read (None: nothing)."""
    if not _may_hold_float64(ctx) or ctx.enclosing(expr, cst.Lambda) is not None:
        return None
    return _flowed_data(ctx, expr)


def _flowed_data(ctx: FileContext, expr: cst.BaseExpression) -> Optional[ArrayData]:
    """What the array flow of ``expr``'s function (or the module) knows it holds where it is read;
    for a module variable a function reads without binding it (``def run_experiment(model):
    model.fit(x_train, y_train)``), what the module made before it ran the function."""
    if reads_global(ctx, expr):
        return _flow(ctx, ctx.module).kind_at(None, expr)
    statement = ctx.statement_of(expr)
    return _flow(ctx, expr).kind_at(statement, expr) if statement is not None else None


def reads_global(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """``expr`` is a module variable (or a slice of one) a function reads without binding it."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    function = ctx.enclosing_function(expr)
    if not isinstance(expr, cst.Name) or function is None:
        return False
    params = function.params
    local = {param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params)}
    local.update(name for _, name, _ in assignments(ctx, function))
    return expr.value not in local


def _may_hold_float64(ctx: FileContext) -> bool:
    """A cheap test: does the file use an array library, or load uint8 data it may divide?"""
    return ctx.imports_module("numpy", "pandas", "sklearn") or _may_hold_uint8(ctx)


def tensor_slices_inputs(ctx: FileContext):
    """``(call, [(role, expr)])`` for ``tf.data.Dataset.from_tensor_slices(...)`` / ``from_tensors``:
    role "features" for a lone array (or dict of them) or the first of a tuple, "labels" for the second."""
    for call in ctx.nodes(cst.Call):
        if last_name(call.func) not in ("from_tensor_slices", "from_tensors") or not call.args:
            continue
        if ctx.qualified_name(call.func) not in SLICES_CONSTRUCTORS:
            continue
        value = call.args[0].value
        if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) in (2, 3) and not any(
            isinstance(element, cst.StarredElement) for element in value.elements
        ):
            yield call, [("features", value.elements[0].value), ("labels", value.elements[1].value)]
        elif isinstance(value, (cst.Name, cst.Subscript, cst.Dict)):
            yield call, [("features", value)]


def sliced_arrays(call: cst.Call) -> List[cst.BaseExpression]:
    """What ``Dataset.from_tensor_slices(...)``/``from_tensors(...)`` is made of: each element of a
    tuple or list (features, labels, weights), or the one value; none for a dict or starred parts."""
    given = argument(call, "tensors", 0)
    value = None if given is None or given.star else given.value
    if isinstance(value, (cst.Tuple, cst.List)):
        if any(isinstance(element, cst.StarredElement) for element in value.elements):
            return []
        return [element.value for element in value.elements]
    return [] if value is None or isinstance(value, cst.Dict) else [value]


def is_mapped(ctx: FileContext, call: cst.Call) -> bool:
    """True when the dataset ``call`` makes goes through ``.map(...)``: in its own chain, or
    anywhere in the same function (a variable may carry it there)."""
    node: cst.CSTNode = call
    while True:
        parent = ctx.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            if parent.attr.value == "map":
                return True
            node = ctx.parent(parent) or parent
            continue
        break
    return id(owner(ctx, call)) in _owners_of_maps(ctx)


def _maps_pass_labels_through(ctx: FileContext, call: cst.Call) -> bool:
    """Whether each ``map`` the dataset ``call`` makes may go through (those of its function, as
    ``is_mapped`` finds them) takes (image, label, ...) and only returns its label or gives it to
    ``tf.cast``: labels cast before such maps reach what follows with the values they had. A map
    that computes with them (``tf.one_hot``, ``/ 255``) may depend on their dtype."""
    where = owner(ctx, call)
    maps = [mapped for mapped, _ in dataset_method_calls(ctx, "map") if owner(ctx, mapped) is where]
    return bool(maps) and all(_passes_label_through(ctx, mapped) for mapped in maps)


def _passes_label_through(ctx: FileContext, map_call: cst.Call) -> bool:
    given = map_call.args[0].value if map_call.args else None
    if isinstance(given, cst.Name):
        given = local_function(ctx, given.value, map_call)
    if not isinstance(given, (cst.Lambda, cst.FunctionDef)) or len(given.params.params) < 2:
        return False
    label = given.params.params[1].name.value
    uses = [node for node in walk(given.body) if isinstance(node, cst.Name) and node.value == label]
    return all(_handed_on(ctx, use) for use in uses)


def _handed_on(ctx: FileContext, use: cst.Name) -> bool:
    """``label`` as an element of the tuple a map returns, or as what ``tf.cast`` is given."""
    parent = ctx.parent(use)
    if isinstance(parent, cst.Arg) and parent.value is use:
        cast = ctx.parent(parent)
        return isinstance(cast, cst.Call) and cast.args[0] is parent and ctx.qualified_name(cast.func) in (
            "tensorflow.cast", "tensorflow.dtypes.cast")
    if not (isinstance(parent, cst.Element) and parent.value is use):
        return False
    returned = ctx.parent(parent)
    holder = ctx.parent(returned)
    return isinstance(returned, cst.Tuple) and (isinstance(holder, cst.Return) or isinstance(holder, cst.Lambda)
                                                and holder.body is returned)


def _owners_of_maps(ctx: FileContext) -> Set[int]:
    """The functions (or module) in which a dataset goes through ``.map(...)``, found once."""
    return ctx.shared(_OWNERS_OF_MAPS, lambda: {
        id(owner(ctx, mapped)) for mapped, _ in dataset_method_calls(ctx, "map")})


def astype(expr: cst.BaseExpression, dtype: str, quote: str = '"') -> cst.Call:
    """``expr.astype("dtype")`` (parenthesised when ``expr`` needs it), the dtype in ``quote``s."""
    return cst.Call(func=cst.Attribute(value=as_receiver(expr), attr=cst.Name("astype")),
                    args=[cst.Arg(cst.SimpleString(f'{quote}{dtype}{quote}'))])


def string_quote(ctx: FileContext, node: cst.CSTNode) -> str:
    """The quote a string written at ``node`` takes: ``'`` in the braces of an f-string delimited by
    ``"``, whose quote the SDK's Python (before 3.12) takes for the end of the f-string; else ``"``."""
    formatted = ctx.enclosing(node, cst.FormattedString)
    return "'" if formatted is not None and '"' in formatted.start else '"'


# TensorFlow Datasets image sets whose images come as tf.uint8.
UINT8_TFDS = ("mnist", "fashion_mnist", "kmnist", "emnist", "cifar10", "cifar100", "svhn_cropped", "stl10",
              "rock_paper_scissors", "horses_or_humans", "colorectal_histology", "eurosat", "patch_camelyon", "beans",
              "tf_flowers", "cats_vs_dogs", "oxford_flowers102", "food101", "caltech101", "imagenette", "malaria")


def uint8_tfds_loads(ctx: FileContext):
    """``tfds.load("mnist", split="train", as_supervised=True)`` calls: one split of a uint8 image
    set as ``(image, label)`` pairs (a dataset, not a dict or a tuple with info)."""
    for call in ctx.nodes(cst.Call):
        if last_name(call.func) != "load" or not call.args:
            continue
        if ctx.qualified_name(call.func) != "tensorflow_datasets.load":
            continue
        name = call.args[0].value
        if call.args[0].keyword is not None or not isinstance(name, cst.SimpleString):
            continue
        if str(name.evaluated_value).split(":")[0] not in UINT8_TFDS:
            continue
        split, supervised, info = (_keyword_value(call, key) for key in ("split", "as_supervised", "with_info"))
        if not isinstance(split, cst.SimpleString) or not (isinstance(supervised, cst.Name) and supervised.value == "True"):
            continue
        if info is not None and not (isinstance(info, cst.Name) and info.value == "False"):
            continue
        yield call


def _keyword_value(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def cast_images_map(dataset: cst.BaseExpression, tf: str) -> cst.Call:
    """``dataset.map(lambda image, label: (tf.cast(image, tf.float32), label))``."""
    mapper = cst.parse_expression(f"lambda image, label: ({tf}.cast(image, {tf}.float32), label)")
    return cst.Call(func=cst.Attribute(value=dataset, attr=cst.Name("map")), args=[cst.Arg(mapper)])


# Where the data an expression holds can be cast: ``(expr, where)`` pairs, ``where`` naming the place
# for the message (the expression itself, or the arguments the callers of its function give).
Sources = Callable[[cst.BaseExpression, str], List[Tuple[cst.BaseExpression, str]]]


def cast_uint8(ctx: FileContext, code: str, value: cst.BaseExpression, role: str, where: str,
               sources: Optional[Sources] = None, labels_only: bool = False) -> None:
    """``value`` gets ``.astype(...)`` when it certainly holds uint8 data: "int32" for a Keras
    dataset's labels reaching a label slot (``role`` "y" or "labels"), else "float32", which holds
    every uint8 value exactly. ``where`` names the place for the message. The values of a dict
    (named inputs, ``{"image": images}``) and the items of a list or tuple (several inputs) are cast
    one by one, as a value alone. ``sources`` says where else to cast it (what the callers of a
    function give for its parameter); ``value`` alone by default. ``labels_only``: only a Keras
    dataset's labels are cast."""
    if isinstance(value, (cst.Dict, cst.List, cst.Tuple)):
        for element in value.elements:
            if isinstance(element, (cst.DictElement, cst.Element)):
                cast_uint8(ctx, code, element.value, role, where, sources, labels_only)
        return
    for source, place in sources(value, where) if sources is not None else [(value, where)]:
        _cast_uint8_at(ctx, code, source, role, place, labels_only)


def _cast_uint8_at(ctx: FileContext, code: str, value: cst.BaseExpression, role: str, where: str,
                   labels_only: bool) -> None:
    data = uint8_data(ctx, value, tensors=True)
    if data is None or labels_only and data.role != "labels":
        return
    # Labels a map picks out of the dataset stay integers: the map may index with them (`tf.one_hot`).
    dtype = "int32" if data.role == "labels" and (role in ("y", "labels") or labels_only) else "float32"
    what = {"images": "uint8 images", "labels": "uint8 labels"}.get(data.role, "uint8 data")
    name = ctx.module.code_for_node(value)
    if data.kind != UINT8_TENSOR:
        ctx.replace(value, lambda node, dtype=dtype, quote=string_quote(ctx, value): astype(node, dtype, quote))
        ctx.report(code, value, f"`{name}` holds {what} (from {data.origin}), which the IPU does not compute "
                   f"with: {where} gets `.astype(\"{dtype}\")`", fixed=True)
        return
    held = f"`{name}` is a tensor of {what} (from {data.origin}), which the IPU does not compute with"
    tf = tensorflow_alias(ctx)
    if tf is None:
        ctx.report(code, value, f"{held}: cast it where {where} reads it (`tf.cast({name}, tf.{dtype})`)",
                   fixed=False)
        return
    ctx.replace(value, lambda node, dtype=dtype: cst.Call(
        func=cst.parse_expression(f"{tf}.cast"), args=[cst.Arg(node), cst.Arg(cst.parse_expression(f"{tf}.{dtype}"))]))
    ctx.report(code, value, f"{held}: {where} gets `{tf}.cast({name}, {tf}.{dtype})`", fixed=True)


def tensorflow_alias(ctx: FileContext) -> Optional[str]:
    """The name the file imports TensorFlow as (``tf``), or None."""
    return next((local for local, full in sorted(ctx.aliases.items())
                 if full in ("tensorflow", "tensorflow.compat.v1")), None)


def cast_uint8_datasets(ctx: FileContext, code: str, sources: Optional[Sources] = None) -> None:
    """The uint8 arrays ``Dataset.from_tensor_slices`` / ``from_tensors`` are built from get cast
    (``cast_uint8``), and a ``tfds.load`` of a uint8 image set gets a ``tf.cast`` map. In a dataset
    with its own ``map`` only a Keras dataset's labels are cast (a map passes labels through, and
    takes class ids of any integer type); its images are left to the user, since casting them first
    would change what ``convert_image_dtype`` does. ``sources`` as for ``cast_uint8``. Used by the
    Keras (IPU106) and TF1 (IPU206) rules."""
    for call, inputs in tensor_slices_inputs(ctx):
        mapped = is_mapped(ctx, call)
        for role, value in inputs:
            # A lone dict (`{"image": x, "label": y}`) may hold the labels the map picks out. Any uint8
            # labels (masks) are cast when every map hands them on as they are or only casts them.
            if not mapped or role == "labels" or isinstance(value, cst.Dict):
                labels_only = mapped and not (role == "labels" and _maps_pass_labels_through(ctx, call))
                cast_uint8(ctx, code, value, role, "the dataset", sources, labels_only=labels_only)
    for call in uint8_tfds_loads(ctx):
        if is_mapped(ctx, call):
            continue
        tf = tensorflow_alias(ctx)
        if tf is None:
            continue
        ctx.replace(call, lambda node, tf=tf: cast_images_map(node, tf))
        ctx.report(code, call, "the dataset holds uint8 images, which the IPU does not compute with: "
                   f"it gets `.map(...)` with `{tf}.cast(image, {tf}.float32)`", fixed=True)
