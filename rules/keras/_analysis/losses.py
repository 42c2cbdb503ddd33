"""Keras loss objects of automatic reduction that a step a strategy runs calls: Keras refuses that
reduction inside ``strategy.run`` outside its compiled losses ("Please use
`tf.keras.losses.Reduction.SUM` or `NONE` ... outside of the built-in training loops")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import libcst as cst

from porter.context import FileContext, walk
from porter.cstutil import keyword
from porter.rules.keras._analysis.datasets import given_arguments, parameter_input
from porter.rules.keras._analysis.steps import plain_functions
from porter.rules.keras._analysis.util import auto_loss_objects, is_auto_loss
from porter.scopes import assignments, loads, parameter_names, values_of


def step_methods(ctx: FileContext, hook: cst.FunctionDef) -> List[cst.FunctionDef]:
    """``hook`` and the methods of its class it calls through ``self``, transitively."""
    owner = ctx.enclosing(hook, cst.ClassDef)
    methods = {statement.name.value: statement for statement in owner.body.body
               if isinstance(statement, cst.FunctionDef)} if owner is not None else {}
    found = [hook]
    for method in found:
        for node in walk(method.body):
            if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and is_self(node.func.value)
                    and node.func.attr.value in methods and methods[node.func.attr.value] not in found):
                found.append(methods[node.func.attr.value])
    return found


def is_self(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "self"


def attribute_losses(ctx: FileContext, owner: cst.ClassDef, attribute: str) -> Optional[List[cst.Call]]:
    """The loss objects of automatic reduction that ``self.<attribute>`` holds: what the class's
    methods assign it, directly (``self.loss_fn = keras.losses.MeanSquaredError()``), through a
    module variable, or through a parameter of the method (``def compile(self, ..., loss_fn)``)
    from every call of that method. Empty when it holds none; None when something it is assigned
    cannot be followed while a loss object of automatic reduction is among what can."""
    found: List[cst.Call] = []
    given: List[cst.CSTNode] = []  # the expressions that hand the objects on
    unknown = False
    for method in (statement for statement in owner.body.body if isinstance(statement, cst.FunctionDef)):
        for value in _assigned(method, attribute):
            for source in _sources(ctx, owner, method, value, given):
                if source is None:
                    unknown = True
                elif is_auto_loss(ctx, source) and source not in found:
                    found.append(source)
    # A module variable's object used anywhere else too would change there as well.
    return None if found and (unknown or not all(_only_given(ctx, source, given) for source in found)) else found


def attribute_lambdas(ctx: FileContext, owner: cst.ClassDef, attribute: str) -> List[cst.Lambda]:
    """The lambdas ``self.<attribute>`` is given (``compile(loss_fn=lambda y, p: ...)``, or assigned
    directly): what ``attribute_losses`` cannot follow into."""
    found: List[cst.Lambda] = []
    for method in (statement for statement in owner.body.body if isinstance(statement, cst.FunctionDef)):
        for value in _assigned(method, attribute):
            if isinstance(value, cst.Name) and value.value in parameter_names(method):
                found += [argument for argument in _arguments(ctx, owner, method, value.value)
                          if isinstance(argument, cst.Lambda)]
            elif isinstance(value, cst.Lambda):
                found.append(value)
    return found


def _only_given(ctx: FileContext, constructor: cst.Call, given: List[cst.CSTNode]) -> bool:
    """Whether the object ``constructor`` makes is used only where it is handed on: made inline,
    or held by a module variable named nowhere else."""
    assign = ctx.parent(constructor)
    if not isinstance(assign, cst.Assign):
        return True
    target = assign.targets[0].target
    if not isinstance(target, cst.Name):
        return True  # made for `self.loss_fn = ...`: held by the attribute only
    handed = {id(node) for node in given}
    return all(id(node) in handed for node in loads(ctx.module)
               if node.value == target.value and not _local_there(ctx, node))


def _local_there(ctx: FileContext, name: cst.Name) -> bool:
    """A parameter, or a name the function it is read in takes as a parameter (``def
    compile(self, loss_fn)``): not the module variable of that name."""
    if isinstance(ctx.parent(name), cst.Param):
        return True
    function = ctx.enclosing_function(name)
    return function is not None and name.value in {param.name.value for param in function.params.params}


def _assigned(method: cst.FunctionDef, attribute: str) -> List[cst.BaseExpression]:
    """What ``method`` assigns ``self.<attribute>``, also in ``self.a, self.b = a, b``."""
    values = []
    for assign in walk(method.body):
        if not isinstance(assign, cst.Assign):
            continue
        for target in assign.targets:
            pairs = [(target.target, assign.value)]
            if isinstance(target.target, cst.Tuple) and isinstance(assign.value, cst.Tuple) and len(
                    target.target.elements) == len(assign.value.elements):
                pairs = [(left.value, right.value) for left, right in zip(target.target.elements, assign.value.elements)]
            values += [value for left, value in pairs if isinstance(left, cst.Attribute) and is_self(left.value)
                       and left.attr.value == attribute]
    return values


def _sources(ctx: FileContext, owner: cst.ClassDef, method: cst.FunctionDef, value: cst.BaseExpression,
             given: List[cst.CSTNode]) -> List[Optional[cst.Call]]:
    """The calls that made ``value``, assigned in ``method``: itself when it is a call, the
    constructor of a module variable, or the arguments every call of ``method`` (on an instance
    of ``owner``) gives the parameter it names; None for one that cannot be followed."""
    if isinstance(value, cst.Call):
        return [value]
    if not isinstance(value, cst.Name):
        return [None]
    module_losses = auto_loss_objects(ctx)
    if value.value not in parameter_names(method):
        given.append(value)
        return [module_losses[value.value].value] if value.value in module_losses else [None]
    found: List[Optional[cst.Call]] = []
    for argument in _arguments(ctx, owner, method, value.value):
        if isinstance(argument, cst.Name) and argument.value in module_losses:
            given.append(argument)
            argument = module_losses[argument.value].value
        found.append(argument if isinstance(argument, cst.Call) else None)
    return found


def _arguments(ctx: FileContext, owner: cst.ClassDef, method: cst.FunctionDef,
               parameter: str) -> List[Optional[cst.BaseExpression]]:
    """What each call of ``method`` (on an instance of ``owner``) gives its ``parameter``, by
    keyword or by position; None for a call that gives it nothing the port can see."""
    index = parameter_names(method).index(parameter) - 1  # `self` is not passed
    found: List[Optional[cst.BaseExpression]] = []
    for call in _calls_of(ctx, owner, method):
        by_keyword = keyword(call, parameter)
        positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
        found.append(by_keyword.value if by_keyword is not None
                     else positional[index].value if 0 <= index < len(positional) else None)
    return found


def attribute_functions(ctx: FileContext, owner: cst.ClassDef, attribute: str) -> List[cst.FunctionDef]:
    """The functions of the file that ``self.<attribute>`` holds: named where the class's methods
    assign it, or given by the calls of the method whose parameter it is assigned (a CycleGAN's
    ``compile(self, gen_loss_fn)`` called with ``gen_loss_fn=generator_loss_fn``). A step that
    calls the attribute runs them, and the loss objects they call, in the strategy."""
    functions = plain_functions(ctx)
    found: List[cst.FunctionDef] = []
    for method in (statement for statement in owner.body.body if isinstance(statement, cst.FunctionDef)):
        for value in _assigned(method, attribute):
            if not isinstance(value, cst.Name):
                continue
            named = (_arguments(ctx, owner, method, value.value) if value.value in parameter_names(method)
                     else [value])
            for name in named:
                function = functions.get(name.value) if isinstance(name, cst.Name) else None
                if function is not None and all(function is not seen for seen in found):
                    found.append(function)
    return found


def _calls_of(ctx: FileContext, owner: cst.ClassDef, method: cst.FunctionDef) -> List[cst.Call]:
    """The calls of ``method`` on the instances of ``owner`` the file makes (``gan.compile(...)``
    for ``gan = GAN(...)``), or of the class itself for ``__init__``."""
    name = owner.name.value
    if method.name.value == "__init__":
        return [call for call in ctx.nodes(cst.Call) if isinstance(call.func, cst.Name) and call.func.value == name]
    instances = {target.target.value for assign in ctx.nodes(cst.Assign)
                 if isinstance(assign.value, cst.Call) and isinstance(assign.value.func, cst.Name)
                 and assign.value.func.value == name
                 for target in assign.targets if isinstance(target.target, cst.Name)}
    return [call for call in ctx.nodes(cst.Call) if isinstance(call.func, cst.Attribute)
            and call.func.attr.value == method.name.value and isinstance(call.func.value, cst.Name)
            and call.func.value.value in instances]


@dataclass
class HandedLoss:
    """A parameter of ``function`` that the steps call as a loss (``loss_fn(y, logits)`` in a step
    defined in ``train(model, loss_fn, ...)``): ``calls``, its calls in the steps; ``made``, the
    loss objects of automatic reduction its callers give it, made where they are written;
    ``blocking``, a use that keeps them from being rewritten (None when they can be)."""
    function: cst.FunctionDef
    name: str
    calls: List[cst.Call] = field(default_factory=list)
    made: List[cst.Call] = field(default_factory=list)
    blocking: Optional[cst.CSTNode] = None


_HAND_DEPTH = 4  # how many functions a loss object is followed through, handed from one to the next


def handed_losses(ctx: FileContext, step_calls: List[cst.Call]) -> List[HandedLoss]:
    """The parameters that ``step_calls`` (the calls in the steps) call, with the loss objects of
    automatic reduction the callers of their functions give them."""
    found: Dict[Tuple[int, str], HandedLoss] = {}
    for call in step_calls:
        function = _taking(ctx, call.func) if isinstance(call.func, cst.Name) else None
        if function is not None:
            key = (id(function), call.func.value)
            found.setdefault(key, HandedLoss(function, call.func.value)).calls.append(call)
    for handed in found.values():
        called = {id(call.func) for call in handed.calls}
        others = [use for use in _uses(ctx, handed.function, handed.name) if id(use) not in called]
        handed.made, handed.blocking = _given_losses(ctx, handed.function, handed.name, 0)
        if others:
            handed.blocking = others[0]  # also used out of the steps, where its reduced loss is what it gives
    return [handed for handed in found.values() if handed.made]


def _taking(ctx: FileContext, name: cst.Name) -> Optional[cst.FunctionDef]:
    """The function around ``name`` that takes it as a parameter and never assigns it; None when
    a function in between binds it, or none takes it."""
    for function in (node for node in ctx.ancestors(name) if isinstance(node, cst.FunctionDef)):
        if name.value in parameter_names(function):
            return function if parameter_input(ctx, name, function) is not None else None
        if any(bound == name.value for _, bound, _ in assignments(ctx, function)):
            return None
    return None


def _uses(ctx: FileContext, function: cst.FunctionDef, name: str) -> List[cst.Name]:
    """The reads of ``function``'s parameter ``name`` in its body (in the functions it defines too)."""
    return [node for node in loads(function.body) if node.value == name
            and not isinstance(ctx.parent(node), cst.Param) and _taking(ctx, node) is function]


def _given_losses(ctx: FileContext, function: cst.FunctionDef, name: str,
                  depth: int) -> Tuple[List[cst.Call], Optional[cst.CSTNode]]:
    """The loss objects of automatic reduction that the calls of ``function`` give its parameter
    ``name``: made in the argument, held by a variable named nowhere else, or handed on from a
    parameter of the caller; and the first argument that holds one the port cannot rewrite."""
    made: List[cst.Call] = []
    blocking: Optional[cst.CSTNode] = None
    for given, scope, _ in given_arguments(ctx, cst.Name(name), function, ()):
        if is_auto_loss(ctx, given):
            made.append(given)
        elif isinstance(given, cst.Name) and isinstance(scope, cst.FunctionDef) and depth < _HAND_DEPTH \
                and parameter_input(ctx, given, scope) is not None:
            handed_on, stuck = _given_losses(ctx, scope, given.value, depth + 1)
            made += handed_on
            if handed_on and (stuck is not None or len(_uses(ctx, scope, given.value)) > 1):
                blocking = blocking or stuck or given  # also used otherwise in the caller
        elif isinstance(given, cst.Name):
            values = [value for value in values_of(ctx, given) if value is not None]
            losses = [value for value in values if is_auto_loss(ctx, value)]
            if losses and (len(values) > 1 or _named_elsewhere(ctx, given, losses[0])):
                blocking = blocking or given
            made += losses
    return made, blocking


def _named_elsewhere(ctx: FileContext, given: cst.Name, constructor: cst.Call) -> bool:
    """Whether the variable ``given`` names, assigned ``constructor``, is read anywhere else."""
    return any(node is not given and node.value == given.value and not isinstance(ctx.parent(node), cst.Param)
               and any(value is constructor for value in values_of(ctx, node)) for node in loads(ctx.module))
