"""Keras models a file keeps in lists, tuples and dicts (an ensemble, models compared side by side),
and the names that take them in turn: the variables of loops over them (``for name, m in
models.items()``, ``for name, m in [("baseline", a), ("weighted", b)]``) and items taken out
(``best = models[0]``). Part of the model analysis (``model_plan``): such a name runs a model like
the variable the model was assigned to, and ``models[0].evaluate(...)`` runs one too.

What an expression holds is described by a shape: True for a model, a tuple of shapes for a tuple
written out (``("baseline", model)`` is ``(None, True)``), None for anything else.
"""

from __future__ import annotations

from typing import Callable, Dict, FrozenSet, Iterator, List, Optional, Set, Tuple, Union

import libcst as cst

from porter.context import FileContext, SharedKey
from porter.cstutil import argument
from porter.scopes import called_returns

Shape = Union[bool, Tuple["Shape", ...], None]
IsModel = Callable[[cst.BaseExpression], bool]

# Methods that put an item in a list or a set: ``models.append(model)``.
ADDERS = frozenset({"append", "add"})
# Methods that put the items of a collection in a list, or in a dict: ``models.extend([a, b])``.
EXTENDERS = frozenset({"extend", "update"})
# Builtins that give the items of what they get, in turn.
_SAME_ITEMS = frozenset({"list", "tuple", "reversed", "sorted", "iter"})


def held_models(ctx: FileContext, is_model: IsModel) -> Tuple[Set[str], Set[str]]:
    """(names bound to a model taken out of a collection, names of lists and dicts whose items are
    models), given ``is_model``, which tells an expression that gives a model (a model variable
    known so far, a call that makes one)."""
    collections = _collections(ctx, is_model)
    shapes = _Shapes(ctx, is_model, collections)
    names: Set[str] = set()
    for target, iterable in _loops(ctx):
        names.update(_bound_to_models(target, shapes.item(iterable)))
    for assign in ctx.nodes(cst.Assign):
        if isinstance(assign.value, cst.Subscript):  # `best = models[0]`, `name, net = pairs[-1]`
            for target in assign.targets:
                names.update(_bound_to_models(target.target, shapes.value(assign.value)))
    return names, {name for name, (_, shape) in collections.items() if shape is True}


def model_item(node: cst.CSTNode, collections: Set[str]) -> bool:
    """``models[0]``, ``members[-1]``, ``by_name["cnn"]``: one item of a collection of models."""
    held = _indexed(node)
    return held is not None and held in collections


def _indexed(node: cst.CSTNode) -> Optional[str]:
    """``name`` for ``name[key]``: one item (not a slice) of what a variable holds."""
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and len(node.slice) == 1 \
            and isinstance(node.slice[0].slice, cst.Index):
        return node.value.value
    return None


# A collection: whether it is a dict (iterating it gives its keys), and the shape of its items.
_Collection = Tuple[bool, Shape]
# What the file puts in each name, and the names each name is given: found once, asked again as
# the model analysis learns more model names.
_FILLINGS: SharedKey[Dict[str, Tuple[bool, List[Optional[cst.BaseExpression]]]]] = SharedKey("keras-held-fillings")
_ALIASES: SharedKey[Dict[str, List[Optional[str]]]] = SharedKey("keras-held-aliases")


def _collections(ctx: FileContext, is_model: IsModel) -> Dict[str, _Collection]:
    """Names of lists, tuples, sets and dicts whose every item (every value, for a dict) put in
    them has the same shape, holding a model; a list made from another one too, and a name that
    is only ever given one (a parameter, what a function returns)."""
    found: Dict[str, _Collection] = {}
    fillings = ctx.shared(_FILLINGS, lambda: _fillings(ctx))
    aliases = ctx.shared(_ALIASES, lambda: _aliases(ctx))
    changed = True
    while changed:  # `kept = [m for m in models if ...]`: a collection made from another one
        changed = False
        shapes = _Shapes(ctx, is_model, found)
        for name, (keyed, items) in fillings.items():
            shape = _common([shapes.value(item) if item is not None else None for item in items])
            if name not in found and name not in aliases and _holds_model(shape):
                found[name] = (keyed, shape)
                changed = True
        for name, sources in aliases.items():
            given = [found.get(source) if source is not None else None for source in sources]
            if name not in found and name not in fillings and given[0] is not None and all(
                    one == given[0] for one in given):
                found[name] = given[0]
                changed = True
    return found


def _aliases(ctx: FileContext) -> Dict[str, List[Optional[str]]]:
    """Per name, the names it is given (None for anything else): ``ensemble = models``, the
    parameter ``models`` of ``def compare(models, x, y)`` for each call ``compare(nets, ...)``, and
    ``ensemble = train_all(...)`` for what each ``return`` of that function of the file gives."""
    found: Dict[str, List[Optional[str]]] = {}
    for assign in ctx.nodes(cst.Assign):
        if held_items(assign.value) is not None or _returned_items(ctx, assign.value) is not None:
            continue  # a collection written out (here, or returned by a function): its items are its fillings
        function, returned = called_returns(ctx, assign.value)
        sources = [_name_of(value) for value in returned] if function is not None else [_name_of(assign.value)]
        for target in assign.targets:
            if isinstance(target.target, cst.Name):
                found.setdefault(target.target.value, []).extend(sources or [None])
    functions = {statement.name.value: statement for statement in ctx.module.body
                 if isinstance(statement, cst.FunctionDef)}
    for call in ctx.nodes(cst.Call):
        function = functions.get(call.func.value) if isinstance(call.func, cst.Name) else None
        if function is None or ctx.qualified_name(call.func) is not None:
            continue
        for position, param in enumerate(param.name.value for param in function.params.params):
            given = argument(call, param, position)
            if given is not None and not given.star and _name_of(given.value) != param:
                # (given a variable of its own name, `score(models, x)`, a parameter is that variable)
                found.setdefault(param, []).append(_name_of(given.value))
    return found


def _name_of(value: cst.BaseExpression) -> Optional[str]:
    return value.value if isinstance(value, cst.Name) else None


def _fillings(ctx: FileContext) -> Dict[str, Tuple[bool, List[Optional[cst.BaseExpression]]]]:
    """Per name, whether it is made as a dict, and every item the file puts in it (None for an item
    out of sight): in the list, tuple, set or dict written out and assigned to it, by a
    comprehension, ``append``/``add`` or ``name[key] = item``."""
    found: Dict[str, Tuple[bool, List[Optional[cst.BaseExpression]]]] = {}

    def put(name: str, items: List[Optional[cst.BaseExpression]], keyed: bool = False) -> None:
        made_keyed, known = found.setdefault(name, (keyed, []))
        found[name] = (made_keyed or keyed, known + items)

    for assign in ctx.nodes(cst.Assign):
        value = assign.value
        for target in assign.targets:
            if isinstance(target.target, cst.Name):
                made = held_items(value)
                if made is None:
                    made = _returned_items(ctx, value)
                if made is not None:
                    put(target.target.value, made[1], made[0])
            elif isinstance(target.target, cst.Subscript) and isinstance(target.target.value, cst.Name):
                put(target.target.value.value, [value])  # `models[name] = model`
    for call in ctx.nodes(cst.Call):
        func = call.func
        if fills_collection(call, ADDERS):
            put(func.value.value, [call.args[0].value])
        elif fills_collection(call, EXTENDERS):  # `models.extend([a, b])`, `models.update({"a": a})`
            made = held_items(call.args[0].value)
            put(func.value.value, made[1] if made is not None else [None], func.attr.value == "update")
    for augmented in ctx.nodes(cst.AugAssign):  # `models += [build()]`
        if isinstance(augmented.target, cst.Name) and isinstance(augmented.operator, cst.AddAssign):
            made = held_items(augmented.value)
            put(augmented.target.value, made[1] if made is not None else [None])
    return found


def fills_collection(call: cst.CSTNode, methods: FrozenSet[str]) -> bool:
    """``models.append(item)`` (for ``methods`` holding ``append``): a call of one of ``methods``
    on a variable, with one argument."""
    return (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in methods
            and isinstance(call.func.value, cst.Name) and len(call.args) == 1 and not call.args[0].star)


def held_items(value: cst.BaseExpression) -> Optional[Tuple[bool, List[Optional[cst.BaseExpression]]]]:
    """(a dict?, the items) of a list, tuple, set or dict written out (``dict(k=v, ...)`` too), or
    of a comprehension (its one item stands for all); None for any other value."""
    if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
        return False, [element.value if isinstance(element, cst.Element) else None for element in value.elements]
    if isinstance(value, cst.Dict):
        return True, [element.value if isinstance(element, cst.DictElement) else None for element in value.elements]
    if keyword_dict(value):  # `dict(tiny=build(4), small=build(8))`
        return True, [arg.value for arg in value.args]
    if isinstance(value, (cst.ListComp, cst.SetComp)):
        return False, [value.elt]
    if isinstance(value, cst.DictComp):
        return True, [value.value]
    return None


def keyword_dict(node: cst.CSTNode) -> bool:
    """``dict(tiny=..., small=...)``: the builtin given its items by keyword."""
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "dict"
            and bool(node.args) and all(arg.keyword is not None for arg in node.args))


def _returned_items(ctx: FileContext, value: cst.BaseExpression
                    ) -> Optional[Tuple[bool, List[Optional[cst.BaseExpression]]]]:
    """The same for a call of a function of the file whose every ``return`` gives a collection
    written out (``def load_all(paths): return [load_model(path) for path in paths]``)."""
    function, returned = called_returns(ctx, value)
    made = [held_items(each) for each in returned] if function is not None else []
    if not made or any(each is None for each in made) or len({keyed for keyed, _ in made}) > 1:
        return None
    return made[0][0], [item for _, items in made for item in items]


def _loops(ctx: FileContext) -> Iterator[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    """(target, iterable) of every ``for`` loop and comprehension of the file."""
    for loop in ctx.nodes(cst.For):
        yield loop.target, loop.iter
    for loop in ctx.nodes(cst.CompFor):
        yield loop.target, loop.iter


class _Shapes:
    """The shapes of what expressions give, and of what iterating them gives."""

    def __init__(self, ctx: FileContext, is_model: IsModel, collections: Dict[str, _Collection]) -> None:
        self.ctx = ctx
        self.is_model = is_model
        self.collections = collections

    def value(self, node: cst.BaseExpression) -> Shape:
        if self.is_model(node):
            return True
        if isinstance(node, cst.Tuple) and node.elements and all(
                isinstance(element, cst.Element) for element in node.elements):
            shape = tuple(self.value(element.value) for element in node.elements)
            return shape if _holds_model(shape) else None
        held = _indexed(node)  # `models[0]`, `by_name["cnn"]`
        return self.collections[held][1] if held in self.collections else None

    def item(self, iterable: cst.BaseExpression) -> Shape:
        """The shape of each item iterating ``iterable`` gives."""
        if isinstance(iterable, cst.Name) and iterable.value in self.collections:
            keyed, shape = self.collections[iterable.value]
            return None if keyed else shape
        made = held_items(iterable)
        if made is not None and not made[0]:
            return _common([self.value(item) if item is not None else None for item in made[1]])
        if not isinstance(iterable, cst.Call) or not iterable.args or any(arg.star for arg in iterable.args):
            return self._dict_view(iterable)
        func = iterable.func
        if not isinstance(func, cst.Name) or self.ctx.qualified_name(func) is not None:
            return self._dict_view(iterable)
        items = [self.item(arg.value) for arg in iterable.args if arg.keyword is None]
        if func.value == "enumerate" and items:
            return _pair(None, items[0])
        if func.value == "zip" and items:
            shape = tuple(items)
            return shape if _holds_model(shape) else None
        return items[0] if func.value in _SAME_ITEMS and len(items) == 1 else None

    def _dict_view(self, iterable: cst.BaseExpression) -> Shape:
        """``models.values()``, ``models.items()`` on a dict of models."""
        if not (isinstance(iterable, cst.Call) and not iterable.args and isinstance(iterable.func, cst.Attribute)
                and isinstance(iterable.func.value, cst.Name) and iterable.func.value.value in self.collections):
            return None
        keyed, shape = self.collections[iterable.func.value.value]
        if not keyed:
            return None
        if iterable.func.attr.value == "values":
            return shape
        return _pair(None, shape) if iterable.func.attr.value == "items" else None


def _pair(first: Shape, second: Shape) -> Shape:
    shape = (first, second)
    return shape if _holds_model(shape) else None


def _holds_model(shape: Shape) -> bool:
    if shape is True:
        return True
    return isinstance(shape, tuple) and any(_holds_model(part) for part in shape)


def _common(shapes: List[Shape]) -> Shape:
    """The shape every item has, or None when they differ (models mixed with other objects)."""
    return shapes[0] if shapes and all(shape == shapes[0] for shape in shapes) else None


def _bound_to_models(target: cst.BaseExpression, shape: Shape) -> List[str]:
    """The names ``target`` binds to a model when it is given a value of ``shape``."""
    if shape is True:
        return [target.value] if isinstance(target, cst.Name) else []
    if not (isinstance(shape, tuple) and isinstance(target, (cst.Tuple, cst.List))
            and len(target.elements) == len(shape)
            and not any(isinstance(element, cst.StarredElement) for element in target.elements)):
        return []
    return [name for element, part in zip(target.elements, shape) for name in _bound_to_models(element.value, part)]

