"""The batch size a Keras model fixes in itself (``batch_input_shape=[B, ...]``, ``Input(...,
batch_size=B)``, ``batch_shape=(B, ...)``), which the stateful RNNs need: such a model takes batches
of B samples only, so its ``fit``/``evaluate``/``predict`` must run with ``batch_size=B`` and their
arrays be trimmed or padded to B, never to Keras' default 32."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterator, Optional

import libcst as cst

from porter.context import FileContext, code_of, walk
from porter.cstutil import keyword
from porter.rules.keras._analysis.fit import int_value, last_value_before, reaching_bindings, static_int
from porter.scopes import called_returns, local_calls, owner, parameter_names

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
        stateful |= flag is not None and isinstance(flag.value, cst.Name) and flag.value.value == "True"
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
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)):
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
            if not isinstance(first, cst.StarredElement) and not (
                    isinstance(first.value, cst.Name) and first.value.value == "None"):
                return first.value
    batch = keyword(node, "batch_size")
    if batch is None or isinstance(batch.value, cst.Name) and batch.value.value == "None":
        return None
    if any(keyword(node, name) is not None for name in _INPUT_KEYWORDS) or _names_input(node.func):
        return batch.value
    return None


def _names_input(func: cst.BaseExpression) -> bool:
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return name in ("Input", "InputLayer")


def describe(ctx: FileContext, fixed: FixedBatch) -> str:
    """How the message names what fixes the batch."""
    if fixed.source is None:
        return "through a stateful layer, which needs a fixed batch"
    code = code_of(ctx, fixed.source)
    given = f", {fixed.size} where the model is made" if fixed.size is not None and code != str(fixed.size) else ""
    return f"its input's batch dimension `{code}`{given}"
