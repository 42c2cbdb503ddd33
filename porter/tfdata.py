"""Which expressions are ``tf.data`` datasets, followed through method chains and variables.

Shared by the Keras and TF1 rules (drop_remainder, uint8 casts) so the logic exists once.
"""

from __future__ import annotations

from typing import Dict, Set

import libcst as cst

from porter.context import FileContext

DATASET_SOURCES = ("tensorflow.data.", "tensorflow.compat.v1.data.", "tensorflow_datasets.load")


def _owner(ctx: FileContext, node: cst.CSTNode) -> cst.CSTNode:
    return ctx.enclosing_function(node) or ctx.module


def _dataset_variables(ctx: FileContext, owner: cst.CSTNode) -> Set[str]:
    cache: Dict[int, Set[str]] = ctx.__dict__.setdefault("_dataset_variables", {})
    found = cache.get(id(owner))
    if found is not None:
        return found
    found = cache[id(owner)] = set()
    for assign in ctx.nodes(cst.Assign):
        if _owner(ctx, assign) is not owner or len(assign.targets) != 1:
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
