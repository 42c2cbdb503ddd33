"""Which expressions are ``tf.data`` datasets, followed through method chains and variables.

Shared by the Keras and TF1 rules (drop_remainder, uint8 casts) so the logic exists once.
"""

from __future__ import annotations

from typing import Dict, List, Set, Tuple

import libcst as cst

from porter.context import FileContext, bound_names
from porter.cstutil import append_args, argument, is_false, is_true, keyword_arg, replace_arg

DATASET_SOURCES = ("tensorflow.data.", "tensorflow.compat.v1.data.", "tensorflow_datasets.load")


def _owner(ctx: FileContext, node: cst.CSTNode) -> cst.CSTNode:
    return ctx.enclosing_function(node) or ctx.module


def assignments_in(ctx: FileContext, owner: cst.CSTNode) -> List[cst.Assign]:
    """The assignments made directly in ``owner`` (a function or the module), in source order;
    grouped once per file."""
    groups: Dict[int, List[cst.Assign]] = ctx.__dict__.get("_assignments_by_owner")  # type: ignore[assignment]
    if groups is None:
        groups = ctx.__dict__["_assignments_by_owner"] = {}
        for assign in ctx.nodes(cst.Assign):
            groups.setdefault(id(_owner(ctx, assign)), []).append(assign)
    return groups.get(id(owner), [])


def _dataset_variables(ctx: FileContext, owner: cst.CSTNode) -> Set[str]:
    cache: Dict[int, Set[str]] = ctx.__dict__.setdefault("_dataset_variables", {})
    found = cache.get(id(owner))
    if found is not None:
        return found
    found = cache[id(owner)] = set()
    for assign in assignments_in(ctx, owner):
        if len(assign.targets) != 1:
            continue
        target = assign.targets[0].target
        if isinstance(target, cst.Name):
            if _is_dataset_in(ctx, assign.value, found):
                found.add(target.value)
            else:
                found.discard(target.value)
    return found


def _is_dataset_in(ctx: FileContext, node: cst.BaseExpression, variables: Set[str]) -> bool:
    while True:
        if isinstance(node, cst.Call):
            qualified = ctx.qualified_name(node.func)
            if qualified is not None and qualified.startswith(DATASET_SOURCES):
                return True
            if not isinstance(node.func, cst.Attribute):
                return False
            node = node.func.value
        elif isinstance(node, cst.Name):
            return node.value in variables
        else:
            return False


def is_dataset(ctx: FileContext, node: cst.BaseExpression) -> bool:
    """True when ``node`` is a tf.data dataset: a chain that starts at ``tf.data...`` (or
    ``tfds.load``), or at a variable of the same function that was assigned one."""
    return _is_dataset_in(ctx, node, _dataset_variables(ctx, _owner(ctx, node)))


def dataset_method_calls(ctx: FileContext, *methods: str):
    """Calls ``<dataset>.method(...)`` for the given method names."""
    for call in ctx.nodes(cst.Call):
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in methods and is_dataset(ctx, func.value):
            yield call, func.attr.value


# Where drop_remainder sits when passed by position.
_DROP_REMAINDER_POSITION = {"batch": 1, "padded_batch": 3}


def fix_drop_remainder(ctx: FileContext, code: str) -> None:
    """``.batch(n)`` / ``.padded_batch(...)`` of a dataset get ``drop_remainder=True``; an explicit
    False becomes True; a value the porter cannot read is reported. Used by the Keras (IPU105) and
    TF1 (IPU206) rules."""
    for call, method in dataset_method_calls(ctx, "batch", "padded_batch"):
        current = argument(call, "drop_remainder", _DROP_REMAINDER_POSITION[method])
        if current is None:
            ctx.replace(call, lambda node: append_args(node, keyword_arg("drop_remainder", cst.Name("True"))))
            ctx.report(code, call.func.attr, f"`.{method}()` gets `drop_remainder=True`", fixed=True)
        elif is_false(current.value):
            new = current.with_changes(value=cst.Name("True"))
            ctx.replace(call, lambda node, at=call.args.index(current), new=new: replace_arg(node, at, new))
            ctx.report(code, current, f"`.{method}()`: `drop_remainder=False` becomes `True`: "
                       "the last partial batch is now dropped", fixed=True)
        elif not is_true(current.value):
            ctx.report(code, current, f"`.{method}()`: `drop_remainder` must be True on the IPU; "
                       "make sure this value is True", fixed=False)


# Keras dataset loaders whose arrays are uint8: ((x_train, y_train), (x_test, y_test)).
UINT8_LOADERS = frozenset({
    "keras.datasets.mnist.load_data", "keras.datasets.fashion_mnist.load_data",
    "keras.datasets.cifar10.load_data", "keras.datasets.cifar100.load_data",
})
_DATASET_FROM_ARRAYS = ("data.Dataset.from_tensor_slices", "data.Dataset.from_tensors")


def _is_uint8_loader(ctx: FileContext, call: cst.Call) -> bool:
    """``mnist.load_data()`` through any import spelling, or through a variable holding the
    dataset module (``fashion_mnist = tf.keras.datasets.fashion_mnist``)."""
    if ctx.keras_name(call.func) in UINT8_LOADERS:
        return True
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "load_data" and isinstance(func.value, cst.Name)):
        return False
    for assign in ctx.nodes(cst.Assign):
        if (len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)
                and assign.targets[0].target.value == func.value.value):
            module = ctx.keras_name(assign.value)
            return module is not None and f"{module}.load_data" in UINT8_LOADERS
    return False


def _keeps_dtype(value: cst.BaseExpression, name: str) -> bool:
    """``x[...]`` and ``x.reshape(...)`` of ``name`` keep its dtype."""
    if isinstance(value, cst.Subscript):
        return isinstance(value.value, cst.Name) and value.value.value == name
    return (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "reshape" and isinstance(value.func.value, cst.Name)
            and value.func.value.value == name)


def _uint8_arrays(ctx: FileContext, owner: cst.CSTNode) -> Dict[str, str]:
    """Names in ``owner`` that hold a Keras loader's uint8 arrays and are never reassigned to
    something else: name -> "features" or "labels"."""
    cache: Dict[int, Dict[str, str]] = ctx.__dict__.setdefault("_uint8_arrays", {})
    found = cache.get(id(owner))
    if found is not None:
        return found
    found = cache[id(owner)] = {}
    changed: Set[str] = set()
    for assign in assignments_in(ctx, owner):
        for target in assign.targets:
            loaded = isinstance(assign.value, cst.Call) and _is_uint8_loader(ctx, assign.value)
            pairs = target.target.elements if loaded and isinstance(target.target, (cst.Tuple, cst.List)) else ()
            for pair in pairs:
                if isinstance(pair.value, (cst.Tuple, cst.List)) and len(pair.value.elements) == 2:
                    for element, kind in zip(pair.value.elements, ("features", "labels")):
                        if isinstance(element.value, cst.Name):
                            found[element.value.value] = kind
            if not loaded:
                for name in bound_names(target.target):
                    if not _keeps_dtype(assign.value, name):
                        changed.add(name)
    for name in changed:
        found.pop(name, None)
    return found


def uint8_dataset_inputs(ctx: FileContext) -> List[Tuple[cst.Name, str]]:
    """The uint8 arrays a ``tf.data.Dataset.from_tensor_slices`` / ``from_tensors`` call is built
    from: (the name in the call, "features" or "labels"). The arrays come from a Keras dataset
    loader (MNIST, Fashion-MNIST, CIFAR) unchanged; the IPU does not compute on uint8 (reference
    1.11 and 6 item 20), so they are cast on the host. Shared by the Keras and TF1 rules."""
    if not any(isinstance(call.func, cst.Attribute) and call.func.attr.value == "load_data"
               or isinstance(call.func, cst.Name) and call.func.value == "load_data"
               for call in ctx.nodes(cst.Call)):
        return []
    found: List[Tuple[cst.Name, str]] = []
    for call in ctx.nodes(cst.Call):
        qualified = ctx.qualified_name(call.func)
        if qualified is None or not qualified.endswith(_DATASET_FROM_ARRAYS) or not call.args:
            continue
        if not qualified.startswith(DATASET_SOURCES):
            continue
        arrays = _uint8_arrays(ctx, _owner(ctx, call))
        value = call.args[0].value
        if isinstance(value, (cst.Tuple, cst.List)):
            candidates = [element.value for element in value.elements]
        elif isinstance(value, cst.Dict):
            candidates = [element.value for element in value.elements if isinstance(element, cst.DictElement)]
        else:
            candidates = [value]
        for candidate in candidates:
            if isinstance(candidate, cst.Name) and candidate.value in arrays:
                found.append((candidate, arrays[candidate.value]))
    return found
