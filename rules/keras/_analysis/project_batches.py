"""Datasets that the files of a project hand to the functions of a library module of it, and
whether each comes in whole batches (``.batch(n, drop_remainder=True)``): ``def train(model,
train_ds, val_ds): model.fit(train_ds, ...)`` in ``trainer.py`` sees no batching of its own, but
when every call of it in the project gives datasets batched whole, where the caller makes them or
in a function that returns them (``data.load``), the IPU gets no partial batch through it.

Read from the callers as ported (``porter.api.with_callers``) into ``Project.batched_calls``; the
library's IPU105 leaves a parameter unreported only when every call gives it such a dataset.
"""

from __future__ import annotations

from typing import AbstractSet, FrozenSet, Set, Tuple

import libcst as cst

from porter.config import Config
from porter.context import FileContext
from porter.cstutil import is_true, keyword
from porter.parsing import ParseError, parse
from porter.rules._tf.tfdata import DROP_REMAINDER_POSITION, chain
from porter.scopes import is_module_function, local_function, project_callee, returns_of, values_of

# What a call of a library function gives it: the function, whether each positional argument
# is a dataset in whole batches, and the same per keyword (``"*"``: a ``*args`` or ``**kwargs``,
# whose arguments cannot be told apart).
BatchedCall = Tuple[str, Tuple[bool, ...], FrozenSet[Tuple[str, bool]]]

# Text a module must hold to make such batches: it is parsed only then.
MARKER = "drop_remainder"
# Dataset methods after ``.batch(...)`` that keep its batches whole.
_KEEP_BATCHES = frozenset({"prefetch", "cache", "repeat", "shuffle", "map", "with_options", "take", "skip",
                           "filter"})
# Variables and functions followed to where a dataset is made.
_DEPTH = 4


def whole_batch_makers(text: str, config: Config) -> Set[str]:
    """The module-level functions of ``text`` every ``return`` of which gives a dataset batched
    whole (``def load(split): ...; return ds.batch(32, drop_remainder=True)``). Empty when it does
    not parse."""
    try:
        ctx = FileContext(parse(text), config)
    except ParseError:
        return set()
    return {function.name.value for function in ctx.nodes(cst.FunctionDef) if is_module_function(ctx, function)
            and _returns_whole(ctx, function, frozenset(), _DEPTH)}


def batched_calls(ctx: FileContext, module: str, makers: AbstractSet[str]) -> Set[BatchedCall]:
    """The calls that the code of ``ctx`` (a file of the project, as ported) makes of the functions
    of the project's module ``module``, each as a ``BatchedCall``; ``makers``: the
    ``module.function`` of the project that return whole batches."""
    found: Set[BatchedCall] = set()
    for call in ctx.nodes(cst.Call):
        called = project_callee(ctx, call)
        if called is None or called.partition(".")[0] != module:
            continue
        positions = tuple(_whole(ctx, arg.value, makers, _DEPTH) for arg in call.args
                          if arg.keyword is None and not arg.star)
        keywords = frozenset((arg.keyword.value, _whole(ctx, arg.value, makers, _DEPTH)) if arg.keyword is not None
                             else ("*", False) for arg in call.args if arg.keyword is not None or arg.star)
        found.add((called.partition(".")[2], positions, keywords))
    return found


def given_whole_by_callers(calls: AbstractSet[BatchedCall], function: str, parameter: str, position: int) -> bool:
    """Whether the project's ``calls`` of ``function`` (some) all give its ``parameter`` (at
    ``position``) a dataset in whole batches."""
    mine = [call for call in calls if call[0] == function]
    return bool(mine) and all(_given_whole(call, parameter, position) for call in mine)


def _given_whole(call: BatchedCall, parameter: str, position: int) -> bool:
    _, positions, keywords = call
    named = dict(keywords)
    if "*" in named:
        return False
    if position < len(positions):
        return positions[position]
    return named.get(parameter, False)


def _whole(ctx: FileContext, value: cst.BaseExpression, makers: AbstractSet[str], depth: int) -> bool:
    """Whether ``value`` is a dataset batched whole: its last batching is ``.batch(n,
    drop_remainder=True)``, in the chain itself, in the variable's every assignment, or in every
    return of the function of the file (or of ``makers``) that it calls."""
    if depth <= 0:
        return False
    calls, root = chain(ctx, value)
    for call in calls:  # outermost first
        method = call.func.attr.value
        if method in DROP_REMAINDER_POSITION:
            return _drops_remainder(call, method)
        if method not in _KEEP_BATCHES:
            return False
    if isinstance(root, cst.Name):
        values = [made for made in values_of(ctx, root) if made is not value]
        return bool(values) and all(made is not None and made is not root and _whole(ctx, made, makers, depth - 1)
                                    for made in values)
    if isinstance(root, cst.Call) and not calls:
        if ctx.project_function(root.func) in makers:
            return True
        function = local_function(ctx, root.func.value, root) if isinstance(root.func, cst.Name) else None
        return function is not None and _returns_whole(ctx, function, makers, depth - 1)
    return False


def _returns_whole(ctx: FileContext, function: cst.FunctionDef, makers: AbstractSet[str], depth: int) -> bool:
    returns = returns_of(function)
    return bool(returns) and all(_whole(ctx, node.value, makers, depth) for node in returns)


def _drops_remainder(call: cst.Call, method: str) -> bool:
    given = keyword(call, "drop_remainder")
    if given is None:
        positions = [arg for arg in call.args if arg.keyword is None and not arg.star]
        given = positions[DROP_REMAINDER_POSITION[method]] if len(positions) > DROP_REMAINDER_POSITION[method] else None
    return given is not None and is_true(given.value)
