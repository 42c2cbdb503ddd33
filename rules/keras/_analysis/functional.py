"""The symbolic tensors of functional Keras models: which ``keras.Input`` calls a value is computed
from, followed through the names it reads (assigned, stored in a dict or list, iterated over), the
parameters of the file's functions and lambdas (the arguments their calls give) and comprehensions.
A layer called on such a value is part of a model, not of the host code around it."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from porter.context import FileContext, SharedKey, bound_names, walk
from porter.rules.keras._analysis.util import INPUTS
from porter.scopes import assignments, owner

# Methods that read what a dict or list holds (`inputs.items()`): their result is made of it.
_CONTAINER_READS = frozenset({"items", "values", "keys", "get", "pop", "copy"})
# Methods that store a value in a dict or list (`inputs.append(x)`).
_CONTAINER_STORES = frozenset({"append", "extend", "insert", "update", "setdefault"})

_STORES: SharedKey[Dict[Tuple[int, str], List[cst.BaseExpression]]] = SharedKey("keras-container-stores")


def keras_inputs_of(ctx: FileContext, node: cst.BaseExpression) -> List[cst.Call]:
    """The ``keras.Input(...)`` calls whose tensors ``node`` is computed from; empty for a value
    that comes from host data (arrays, constants, datasets) or from where the porter does not
    follow. A model's output counts only through its arguments: ``model(x)`` is as symbolic as
    ``x``."""
    found: List[cst.Call] = []
    seen = set()
    pending: List[cst.BaseExpression] = [node]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, cst.Call) and ctx.keras_name(current.func) in INPUTS:
            found.append(current)
        elif isinstance(current, cst.Name):
            pending.extend(_name_sources(ctx, current))
        elif _literal_key(current) is not None:
            key = _literal_key(current)
            pending.extend(value for source in _name_sources(ctx, current.value) for value in _entries(source, key))
        else:
            pending.extend(_operands(current))
    return found


def _literal_key(node: cst.CSTNode) -> Optional[str]:
    """``"age"`` for ``inputs["age"]``: a variable read at a key the code spells."""
    if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and len(node.slice) == 1):
        return None
    index = node.slice[0].slice
    key = index.value if isinstance(index, cst.Index) else None
    return key.evaluated_value if isinstance(key, cst.SimpleString) else None


def _entries(source: cst.BaseExpression, key: str) -> List[cst.BaseExpression]:
    """What a variable holding ``source`` gives at ``key``: the entry of a dict literal that has
    it, else all of ``source``."""
    if not isinstance(source, cst.Dict):
        return [source]
    keyed = [element.value for element in source.elements if isinstance(element, cst.DictElement)
             and isinstance(element.key, cst.SimpleString) and element.key.evaluated_value == key]
    spelled = all(isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString)
                  for element in source.elements)
    return keyed if spelled else [source]


def _operands(node: cst.CSTNode) -> List[cst.BaseExpression]:
    """What an expression is computed from: a call's arguments (and the container of
    ``inputs.items()``), a subscript's or attribute's object, the elements of a literal."""
    if isinstance(node, cst.Call):
        read = [node.func.value] if isinstance(node.func, cst.Attribute) and node.func.attr.value in \
            _CONTAINER_READS else []
        return read + [arg.value for arg in node.args]
    if isinstance(node, (cst.Attribute, cst.Subscript)):
        return [node.value]
    if isinstance(node, (cst.List, cst.Tuple, cst.Set, cst.Dict)):
        return [element.value for element in node.elements]
    if isinstance(node, cst.IfExp):
        return [node.body, node.orelse]
    if isinstance(node, cst.BinaryOperation):
        return [node.left, node.right]
    if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
        return [node.elt]
    if isinstance(node, cst.DictComp):
        return [node.value]
    return []


def _name_sources(ctx: FileContext, name: cst.Name) -> List[cst.BaseExpression]:
    """The values a variable holds where ``name`` reads it: the arguments given for a parameter,
    the iterable of a comprehension or ``for`` that binds it, its assignments and stores in its
    function (or the module, for a name the function does not bind)."""
    given = _arguments_for(ctx, name)
    if given is not None:
        return given
    for ancestor in ctx.ancestors(name):
        if isinstance(ancestor, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            loop: Optional[cst.CompFor] = ancestor.for_in
            while loop is not None:
                if name.value in bound_names(loop.target):
                    return [loop.iter]
                loop = loop.inner_for_in
    scope = owner(ctx, name)
    found = _bindings(ctx, scope, name.value)
    if not found and isinstance(scope, cst.FunctionDef):
        found = _bindings(ctx, ctx.module, name.value)
    return found


def _bindings(ctx: FileContext, scope: cst.CSTNode, name: str) -> List[cst.BaseExpression]:
    found: List[cst.BaseExpression] = []
    for statement, bound, value in assignments(ctx, scope):
        if bound != name:
            continue
        if value is not None:
            found.append(value)
        elif isinstance(statement, cst.For):
            found.append(statement.iter)
    return found + _stores(ctx).get((id(scope), name), [])


def _stores(ctx: FileContext) -> Dict[Tuple[int, str], List[cst.BaseExpression]]:
    """{(scope, name): values} put in a container by ``name[key] = value`` or ``name.append(value)``."""
    def find():
        found: Dict[Tuple[int, str], List[cst.BaseExpression]] = {}
        for assign in ctx.nodes(cst.Assign):
            for target in assign.targets:
                if isinstance(target.target, cst.Subscript) and isinstance(target.target.value, cst.Name):
                    key = (id(owner(ctx, assign)), target.target.value.value)
                    found.setdefault(key, []).append(assign.value)
        for call in ctx.nodes(cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in _CONTAINER_STORES \
                    and isinstance(func.value, cst.Name):
                key = (id(owner(ctx, call)), func.value.value)
                found.setdefault(key, []).extend(arg.value for arg in call.args)
        return found

    return ctx.shared(_STORES, find)


def _arguments_for(ctx: FileContext, name: cst.Name) -> Optional[List[cst.BaseExpression]]:
    """The arguments the calls of the function or lambda around ``name`` give for it, when it is
    one of its parameters (None when it is not)."""
    for ancestor in ctx.ancestors(name):
        if not isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            continue
        params = ancestor.params
        positional = [param.name.value for param in (*params.posonly_params, *params.params)]
        keyword_only = [param.name.value for param in params.kwonly_params]
        if name.value not in positional and name.value not in keyword_only:
            if isinstance(ancestor, cst.FunctionDef):
                return None  # a name of the function's own: its assignments say
            continue
        position = positional.index(name.value) if name.value in positional else None
        found = []
        for call in _callers(ctx, ancestor):
            for index, arg in enumerate(call.args):
                if arg.keyword is not None and arg.keyword.value == name.value or (
                        arg.keyword is None and not arg.star and index == position):
                    found.append(arg.value)
        return found
    return None


def _callers(ctx: FileContext, function: cst.CSTNode) -> List[cst.Call]:
    """The calls of a function of the file by its name, or of a lambda: through the name it is
    assigned to, or (returned by a function of the file) through the names that function's
    result is assigned to, or called at once (``make_encoder(...)(x)``)."""
    if isinstance(function, cst.FunctionDef):
        if ctx.enclosing(function, cst.ClassDef) is not None:
            return []  # a method: called through an object the porter does not follow
        return _calls_of(ctx, function.name.value)
    parent = ctx.parent(function)
    if isinstance(parent, cst.Assign):
        return [call for target in parent.targets for bound in bound_names(target.target)
                for call in _calls_of(ctx, bound)]
    maker = ctx.enclosing_function(function) if isinstance(parent, cst.Return) else None
    if maker is None:
        return []
    found = []
    for made in _calls_of(ctx, maker.name.value):
        holder = ctx.parent(made)
        if isinstance(holder, cst.Call) and holder.func is made:
            found.append(holder)
        elif isinstance(holder, cst.Assign):
            found.extend(call for target in holder.targets for bound in bound_names(target.target)
                         for call in _calls_of(ctx, bound))
    return found


def _calls_of(ctx: FileContext, name: str) -> List[cst.Call]:
    return [call for call in ctx.nodes(cst.Call)
            if isinstance(call.func, cst.Name) and call.func.value == name and ctx.qualified_name(call.func) is None]


def eager_host_call(ctx: FileContext, call: cst.Call) -> bool:
    """``lookup(labels)``, ``norm(data)``: a layer called on host data (no argument computed from a
    ``keras.Input``), at module level or in a plain function of the file that is only ever called
    (not handed to a ``Lambda`` layer, a ``map`` or a decorator that traces it), out of classes and
    lambdas: it runs eagerly on the host, not in a model."""
    if not call.args or any(keras_inputs_of(ctx, arg.value) for arg in call.args):
        return False
    for ancestor in ctx.ancestors(call):
        if isinstance(ancestor, (cst.ClassDef, cst.Lambda)):
            return False
        if isinstance(ancestor, cst.With) and any(_opens_tape(item.item) for item in ancestor.items):
            return False  # a training step written in a loop: the layer runs in what the port compiles
        if isinstance(ancestor, cst.FunctionDef) and (ancestor.decorators or not _only_called(ctx, ancestor)
                                                      or any(_opens_tape(node) for node in walk(ancestor.body))):
            return False
    return True


def _opens_tape(node: cst.CSTNode) -> bool:
    """``tf.GradientTape()``: a training step's tape."""
    return isinstance(node, cst.Call) and (
        isinstance(node.func, cst.Attribute) and node.func.attr.value == "GradientTape"
        or isinstance(node.func, cst.Name) and node.func.value == "GradientTape")


def _only_called(ctx: FileContext, function: cst.FunctionDef) -> bool:
    """Every use of ``function``'s name in the file calls it (it is never handed on as a value)."""
    for node in ctx.nodes(cst.Name):
        if node.value != function.name.value or node is function.name:
            continue
        parent = ctx.parent(node)
        if not (isinstance(parent, cst.Call) and parent.func is node):
            return False
    return True
