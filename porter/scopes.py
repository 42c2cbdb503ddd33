"""What a function (or the module) binds: its statements, its assignments, the values a variable
gets, the names it reads. Static and local: a name is followed within one function, then the module.
Also where a node sits in its scope: the statement of the scope's own block that holds it, and the
statement before which something used at several places is created once."""

from __future__ import annotations

from typing import AbstractSet, Dict, Iterator, List, Optional, Set, Tuple, Union

import libcst as cst

from porter.context import FileContext, SharedKey, bound_names, walk
from porter.cstutil import argument, is_name, keyword

Owner = Union[cst.Module, cst.FunctionDef]  # a scope: a function, or the module

Assignment = Tuple[cst.BaseStatement, str, Optional[cst.BaseExpression]]

_ASSIGNMENTS: SharedKey[List[Assignment]] = SharedKey("assignments")  # per function (or module)
_NAMES: SharedKey[Set[str]] = SharedKey("names")
_MODULE_GLOBALS: SharedKey[Set[str]] = SharedKey("module-globals")
_LOCAL_CALLS: SharedKey[Dict[str, List[cst.Call]]] = SharedKey("local-calls")
_BODY_BINDINGS: SharedKey[Tuple[Dict[str, cst.FunctionDef], Set[str]]] = SharedKey("body-bindings")  # per body


def owner(ctx: FileContext, node: cst.CSTNode) -> Owner:
    """The function that holds ``node``, or the module."""
    return ctx.enclosing_function(node) or ctx.module


def assignments(ctx: FileContext, scope: cst.CSTNode) -> List[Tuple[cst.BaseStatement, str, Optional[cst.BaseExpression]]]:
    """``(statement, name, value)`` for every name bound by an assignment in ``scope`` (not in
    nested functions), in source order. ``a, b = c, d`` gives each name its own value; a name
    bound by unpacking anything else (``a, b = f()``) gets ``None``; ``for`` targets too."""
    return ctx.shared(_ASSIGNMENTS, lambda: _assignments(scope), per=id(scope))


def _assignments(scope: cst.CSTNode) -> List[Tuple[cst.BaseStatement, str, Optional[cst.BaseExpression]]]:
    found: List[Tuple[cst.BaseStatement, str, Optional[cst.BaseExpression]]] = []
    for statement in statements_in(scope):
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        smalls = list(statement.body) if isinstance(statement, cst.SimpleStatementLine) else [
            small for block in sub_blocks(statement) if isinstance(block, cst.SimpleStatementSuite)
            for small in block.body]
        if isinstance(statement, cst.For):
            found.extend((statement, name, None) for name, _ in _pairs(statement.target, None))
        elif isinstance(statement, cst.With):
            for item in statement.items:
                if item.asname is not None:
                    found.extend((statement, name, None) for name, _ in _pairs(item.asname.name, None))
        for small in smalls:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    found.extend((statement, name, value) for name, value in _pairs(target.target, small.value))
            elif isinstance(small, cst.AnnAssign):
                found.extend((statement, name, small.value) for name, _ in _pairs(small.target, None))
            elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
                found.append((statement, small.target.value, None))
    return found


def _pairs(target: cst.CSTNode, value: Optional[cst.BaseExpression]):
    if isinstance(target, cst.Name):
        yield target.value, value
    elif isinstance(target, (cst.Tuple, cst.List)):
        values = None
        if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(target.elements) and not any(
            isinstance(element, cst.StarredElement) for element in (*value.elements, *target.elements)
        ):
            values = [element.value for element in value.elements]
        for index, element in enumerate(target.elements):
            inner = element.value
            yield from _pairs(inner, values[index] if values is not None else None)
    elif isinstance(target, cst.StarredElement):
        yield from _pairs(target.value, None)


def values_of(ctx: FileContext, name: cst.Name) -> List[Optional[cst.BaseExpression]]:
    """Every value the variable ``name`` is assigned in its function (None: not readable); for a
    name the function neither assigns nor takes as a parameter, the module's assignments."""
    return [value for _, value in bindings_of(ctx, name)]


def single_value(ctx: FileContext, data: cst.BaseExpression) -> cst.BaseExpression:
    """What the variable ``data`` is assigned, when it is assigned once in its function; else ``data``."""
    if not isinstance(data, cst.Name):
        return data
    values = values_of(ctx, data)
    return values[0] if len(values) == 1 and values[0] is not None else data


def bindings_of(ctx: FileContext, name: cst.Name) -> List[Tuple[cst.BaseStatement, Optional[cst.BaseExpression]]]:
    """``(statement, value)`` for every assignment of the variable ``name`` that ``values_of``
    reads: the statement tells where a name bound by unpacking (value None) gets its value."""
    scope = owner(ctx, name)
    found = [(statement, value) for statement, bound, value in assignments(ctx, scope) if bound == name.value]
    if not found and isinstance(scope, cst.FunctionDef) and name.value not in parameter_names(scope):
        found = [(statement, value) for statement, bound, value in assignments(ctx, ctx.module) if bound == name.value]
    return found


def parameter_names(function: cst.FunctionDef) -> List[str]:
    """The names of all of ``function``'s parameters, in order (``*args`` and ``**kwargs`` last)."""
    params = function.params
    names = [param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params)]
    names.extend(star.name.value for star in (params.star_arg, params.star_kwarg) if isinstance(star, cst.Param))
    return names


def statements_in(scope: cst.CSTNode) -> Iterator[cst.BaseStatement]:
    """Every statement of a module or function, nested blocks included (not nested functions or
    classes, which are yielded but not entered), in source order; expressions are not walked."""
    if isinstance(scope, cst.Module):
        stack = list(reversed(scope.body))
    elif isinstance(scope.body, cst.IndentedBlock):
        stack = list(reversed(scope.body.body))
    else:
        return
    while stack:
        statement = stack.pop()
        yield statement
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) or not isinstance(statement, cst.BaseCompoundStatement):
            continue
        inner: List[cst.BaseStatement] = []
        for block in sub_blocks(statement):
            if isinstance(block, cst.IndentedBlock):
                inner.extend(block.body)
        stack.extend(reversed(inner))


def sub_blocks(statement: cst.CSTNode) -> Iterator[cst.BaseSuite]:
    """The blocks of a compound statement: body, elif/else, except and finally blocks."""
    for name in ("body", "orelse", "finalbody"):
        block = getattr(statement, name, None)
        if isinstance(block, (cst.Else, cst.Finally)):
            block = block.body
        if isinstance(block, cst.If):  # elif
            yield from sub_blocks(block)
            continue
        if isinstance(block, cst.BaseSuite):
            yield block
    for handler in getattr(statement, "handlers", ()):
        yield handler.body


def loads(node: cst.CSTNode) -> Iterator[cst.Name]:
    """Names read in ``node`` (not attribute names, keywords or assignment targets)."""
    skip: Set[int] = set()
    local: Set[str] = set()
    for child in walk(node):
        if isinstance(child, cst.CompFor):
            local.update(bound_names(child.target))
        elif isinstance(child, cst.Lambda):
            local.update(param.name.value for param in child.params.params)
    for child in walk(node):
        if id(child) in skip or (isinstance(child, cst.Name) and child.value in local):
            continue
        if isinstance(child, cst.Attribute):
            skip.add(id(child.attr))
        elif isinstance(child, cst.Arg) and child.keyword is not None:
            skip.add(id(child.keyword))
        elif isinstance(child, cst.AssignTarget):
            for target in walk(child.target):
                if isinstance(target, cst.Name):
                    skip.add(id(target))
        elif isinstance(child, cst.Name):
            yield child


def exclusive_branches(ctx: FileContext, first: cst.CSTNode, second: cst.CSTNode) -> bool:
    """``first`` and ``second`` sit in different branches of one ``if`` (its body and its
    ``else``/``elif``): no run goes through both, so a value bound in one never reaches the other."""
    inside_second = {id(ancestor) for ancestor in ctx.ancestors(second)}
    child: cst.CSTNode = first
    for ancestor in ctx.ancestors(first):
        if isinstance(ancestor, cst.If) and id(ancestor) in inside_second and child in (ancestor.body, ancestor.orelse):
            branch = ancestor.body if child is ancestor.body else ancestor.orelse
            return id(branch) not in inside_second and branch is not second
        child = ancestor
    return False


def ruled_out_by_call(ctx: FileContext, node: cst.CSTNode, function: cst.FunctionDef, call: cst.Call) -> bool:
    """``node``, in ``function``, sits in a branch of an ``if`` on a flag parameter that ``call`` of
    the function never takes: ``if training:`` when the call gives ``training=False`` or leaves a
    ``False`` default (``if not training:`` the other way round, ``else`` branches alike)."""
    child: cst.CSTNode = node
    for ancestor in ctx.ancestors(node):
        if ancestor is function:
            return False
        if isinstance(ancestor, cst.If) and (child is ancestor.body or child is ancestor.orelse):
            flag = _flag_given(ctx, ancestor.test, function, call)
            if flag is not None and flag != (child is ancestor.body):
                return True
        child = ancestor
    return False


def _flag_given(ctx: FileContext, test: cst.BaseExpression, function: cst.FunctionDef, call: cst.Call
                ) -> Optional[bool]:
    """The truth of the test ``flag`` or ``not flag`` in this ``call`` of ``function``, for a
    parameter ``flag`` given (or left at its default) as ``True``/``False`` and never reassigned."""
    negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
    flag = test.expression if negated else test
    params = function.params
    listed = [*params.posonly_params, *params.params]
    param = next((param for param in (*listed, *params.kwonly_params)
                  if isinstance(flag, cst.Name) and param.name.value == flag.value), None)
    if param is None or any(arg.star for arg in call.args) or any(
            name == param.name.value for _, name, _ in assignments(ctx, function)):
        return None
    place = next((index for index, each in enumerate(listed) if each is param), None)
    given = argument(call, param.name.value, place) if place is not None else keyword(call, param.name.value)
    value = given.value if given is not None else param.default
    if not isinstance(value, cst.Name) or value.value not in ("True", "False"):
        return None
    return (value.value == "True") != negated


# ------------------------------------------------------------------------------ scopes and placement
def owner_body(owner: Owner) -> cst.CSTNode:
    return owner if isinstance(owner, cst.Module) else owner.body


def top_statement(ctx: FileContext, node: cst.CSTNode, owner: Owner) -> Optional[cst.BaseStatement]:
    """The statement of ``owner``'s own block that holds ``node``."""
    body = owner_body(owner)
    current = ctx.statement_of(node)
    while current is not None:
        if ctx.parent(current) is body:
            return current
        current = ctx.statement_of(ctx.parent(current)) if ctx.parent(current) is not None else None
    return None


def is_module_function(ctx: FileContext, node: cst.CSTNode) -> bool:
    return isinstance(node, cst.FunctionDef) and ctx.parent(node) is ctx.module


def project_name(ctx: FileContext, function: cst.FunctionDef) -> Optional[str]:
    """The name by which the other files of the project call ``function`` of this module:
    ``train`` for a module-level function, ``Trainer.fit`` for a method of a module-level class
    (called on the objects they make of it), ``Trainer`` for its ``__init__`` (the class is
    called). None for a nested function."""
    if is_module_function(ctx, function):
        return function.name.value
    block = ctx.parent(function)
    owner_class = ctx.parent(block) if isinstance(block, cst.IndentedBlock) else None
    if not (isinstance(owner_class, cst.ClassDef) and ctx.parent(owner_class) is ctx.module):
        return None
    method = function.name.value
    return owner_class.name.value if method == "__init__" else f"{owner_class.name.value}.{method}"


def project_callee(ctx: FileContext, call: cst.Call) -> Optional[str]:
    """``trainer.train`` for a call of a function of another module of the project
    (``ctx.project_function``), and ``trainer.Trainer.fit`` for a call of a method on an object
    made from one of its classes: ``Trainer(model).fit(ds)``, or ``t.fit(ds)`` where each value
    the variable ``t`` is assigned in its function is ``Trainer(...)``. None for any other call."""
    called = ctx.project_function(call.func)
    if called is not None or not isinstance(call.func, cst.Attribute):
        return called
    receiver = call.func.value
    made = [receiver] if isinstance(receiver, cst.Call) else (
        values_of(ctx, receiver) if isinstance(receiver, cst.Name) else [])
    classes = {ctx.project_function(value.func) if isinstance(value, cst.Call) else None for value in made}
    if len(classes) != 1 or None in classes:
        return None
    return f"{classes.pop()}.{call.func.attr.value}"


def called_in_callers_scope(ctx: FileContext, function: cst.FunctionDef) -> bool:
    """Whether the files of the project that import the module call ``function`` (a function, or
    a method of a class: ``Trainer.fit``) only in their IPU strategy's scope; for a method, with no
    call of its name outside the scope on an object they cannot trace (``?.fit``), which may be
    one of the class's."""
    name = project_name(ctx, function)
    if name not in ctx.project.called_in_scope:
        return False
    method = name.partition(".")[2]
    return not method or all(called != f"?.{method}" for called, _ in ctx.project.called_outside)


def untraced_method(ctx: FileContext, call: cst.Call) -> Optional[str]:
    """``?.fit`` for ``trainer.fit(ds)`` on an object the file cannot trace to a class of the project
    (``trainer = make_trainer(cfg)``, ``self.trainer``), nor to an import: it may be a method of
    any class of the project of that name. None for any other call."""
    func = call.func
    if not isinstance(func, cst.Attribute) or project_callee(ctx, call) is not None or ctx.qualified_name(func):
        return None
    return f"?.{func.attr.value}"


def local_calls(ctx: FileContext, function: cst.FunctionDef) -> List[cst.Call]:
    """Calls ``name(...)`` of a module-level function of this file."""
    return ctx.shared(_LOCAL_CALLS, lambda: _calls_by_local_name(ctx)).get(function.name.value, [])


def _calls_by_local_name(ctx: FileContext) -> Dict[str, List[cst.Call]]:
    """{name: calls ``name(...)``} of the names no import binds, in source order."""
    calls: Dict[str, List[cst.Call]] = {}
    for call in ctx.nodes(cst.Call):
        if type(call.func) is cst.Name and ctx.qualified_name(call.func) is None:
            calls.setdefault(call.func.value, []).append(call)
    return calls


def local_function(ctx: FileContext, name: str, at: cst.CSTNode) -> Optional[cst.FunctionDef]:
    """The function ``name`` refers to at ``at``: defined in the enclosing function or module."""
    owners: List[cst.CSTNode] = [a for a in ctx.ancestors(at) if type(a) is cst.FunctionDef]
    owners.append(ctx.module)
    for owner in owners:
        functions, assigned = ctx.shared(_BODY_BINDINGS, lambda: _body_bindings(owner), per=id(owner))
        if name in assigned:
            return None
        if name in functions:
            return functions[name]
    return None


def _body_bindings(owner: cst.CSTNode) -> Tuple[Dict[str, cst.FunctionDef], Set[str]]:
    """The functions a body defines by name (the last of each name), and the names its plain
    assignments bind (they hide a function of that name: ``step = make_step()``)."""
    body = owner.body.body if isinstance(owner, cst.FunctionDef) else owner.body
    functions: Dict[str, cst.FunctionDef] = {}
    assigned: Set[str] = set()
    for statement in body:
        if type(statement) is cst.FunctionDef:
            functions[statement.name.value] = statement
        elif type(statement) is cst.SimpleStatementLine:
            for small in statement.body:
                if type(small) is cst.Assign:
                    assigned.update(name for target in small.targets for name in bound_names(target.target))
    return functions, assigned


def returns_of(function: cst.FunctionDef) -> List[cst.Return]:
    """The ``return <value>`` statements of ``function`` (not of the functions nested in it)."""
    return [node for node in walk(function.body, skip=(cst.FunctionDef, cst.Lambda, cst.ClassDef))
            if isinstance(node, cst.Return) and node.value is not None]


def returned_local(function: cst.FunctionDef, assign: cst.CSTNode) -> bool:
    """``assign`` binds one local name that every ``return`` of ``function`` gives back."""
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)):
        return False
    returned = returns_of(function)
    return bool(returned) and all(is_name(node.value, assign.targets[0].target.value) for node in returned)


def called_returns(ctx: FileContext, call: cst.BaseExpression
                   ) -> Tuple[Optional[cst.FunctionDef], List[cst.BaseExpression]]:
    """For ``f(...)``, a call by name of a function of the file: that function and what each of its
    ``return``s gives; ``(None, [])`` for any other expression."""
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and ctx.qualified_name(call.func) is None):
        return None, []
    function = local_function(ctx, call.func.value, call)
    return function, [node.value for node in returns_of(function)] if function is not None else []


def called_method_returns(ctx: FileContext, call: cst.BaseExpression
                          ) -> Tuple[Optional[cst.FunctionDef], List[cst.BaseExpression]]:
    """For ``obj.method(...)`` on an instance of a class of the file (``Loader(n).train_seq()``,
    ``loader.train_seq()`` after ``loader = Loader(n)``, ``self.train_seq()``): that method and what
    each of its ``return``s gives; ``(None, [])`` for any other expression."""
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
        return None, []
    owner_class = instance_class(ctx, call.func.value)
    body = owner_class.body.body if owner_class is not None and isinstance(owner_class.body, cst.IndentedBlock) else ()
    method = next((statement for statement in body if isinstance(statement, cst.FunctionDef)
                   and statement.name.value == call.func.attr.value), None)
    return method, [node.value for node in returns_of(method)] if method is not None else []


def called_file_returns(ctx: FileContext, call: cst.BaseExpression
                        ) -> Tuple[Optional[cst.FunctionDef], List[cst.BaseExpression]]:
    """For a call of a function of the file (``make_pairs(x)``) or of a method of an instance of a
    class of the file (``loader.get_batch(32)``): that function or method and what each of its
    ``return``s gives; ``(None, [])`` for any other expression."""
    function, returned = called_returns(ctx, call)
    return (function, returned) if function is not None else called_method_returns(ctx, call)


def instance_class(ctx: FileContext, node: cst.BaseExpression, depth: int = 0) -> Optional[cst.ClassDef]:
    """The class of the file ``node`` is an instance of: ``self`` in its methods, a call of the
    class, a variable every assignment of which is one, or a parameter of a function of the module
    that every call of it gives one (``evaluate(model, loader)`` after ``loader = Loader(data)``)."""
    if isinstance(node, cst.Name) and node.value == "self":
        return ctx.enclosing(node, cst.ClassDef)
    items = _loop_items(ctx, node) if isinstance(node, cst.Name) and depth < 3 else None
    if items:
        classes = {id(found): found for found in (instance_class(ctx, item, depth + 1) for item in items)}
        return next(iter(classes.values())) if len(classes) == 1 else None
    made = [node] if isinstance(node, cst.Call) else values_of(ctx, node) if isinstance(node, cst.Name) else []
    if not made and isinstance(node, cst.Name) and depth < 3:
        return _class_given(ctx, node, depth)
    classes = {id(found): found for found in (_class_made(ctx, value) for value in made)}
    return next(iter(classes.values())) if len(classes) == 1 and made else None


def _loop_items(ctx: FileContext, name: cst.Name) -> Optional[List[cst.BaseExpression]]:
    """The items written out in the tuple or list a ``for`` loop goes over, when binding ``name``
    to each of them is all its function does with it (``for sampler in (train_sampler,
    test_sampler):``); None otherwise."""
    bindings = bindings_of(ctx, name)
    if len(bindings) != 1:
        return None
    loop = bindings[0][0]
    if not (isinstance(loop, cst.For) and is_name(loop.target, name.value)
            and isinstance(loop.iter, (cst.Tuple, cst.List))) or any(
                isinstance(element, cst.StarredElement) for element in loop.iter.elements):
        return None
    return [element.value for element in loop.iter.elements]


def _class_given(ctx: FileContext, name: cst.Name, depth: int) -> Optional[cst.ClassDef]:
    """The class of the file that every call of the module function taking the parameter ``name``
    gives an instance of, in its place."""
    function = owner(ctx, name)
    if not isinstance(function, cst.FunctionDef) or function not in ctx.module.body:
        return None
    params = [param.name.value for param in function.params.params]
    if name.value not in params:
        return None
    calls = [call for call in local_calls(ctx, function) if ctx.enclosing_function(call) is not function]
    given = [argument(call, name.value, params.index(name.value)) for call in calls]
    classes = {id(found): found for found in (
        instance_class(ctx, arg.value, depth + 1) if arg is not None and not arg.star else None for arg in given)}
    return next(iter(classes.values())) if len(classes) == 1 and calls else None


def _class_made(ctx: FileContext, value: Optional[cst.BaseExpression]) -> Optional[cst.ClassDef]:
    """The class of the module that the call ``value`` makes an instance of."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)) or ctx.qualified_name(value.func):
        return None
    return next((statement for statement in ctx.module.body if isinstance(statement, cst.ClassDef)
                 and statement.name.value == value.func.value), None)


def module_globals(ctx: FileContext) -> Set[str]:
    """Names bound at module level (imports, defs, classes, assignments)."""
    def compute():
        names = set(ctx.aliases)
        for statement in ctx.module.body:
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                names.add(statement.name.value)
        for assign in ctx.nodes(cst.AssignTarget):
            if ctx.enclosing_function(assign) is None and ctx.enclosing(assign, cst.ClassDef) is None:
                names.update(bound_names(assign.target))
        return names
    return ctx.shared(_MODULE_GLOBALS, compute)


def module_definitions(ctx: FileContext) -> Set[str]:
    return {s.name.value for s in ctx.module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))}


def assignments_of(ctx: FileContext, *names: str) -> List[Tuple[str, cst.Call]]:
    """``name = <call to one of names>(...)`` anywhere in the file."""
    found = []
    last = {name.rsplit(".", 1)[-1] for name in names}
    for assign in ctx.nodes(cst.Assign):
        func = assign.value.func if isinstance(assign.value, cst.Call) else None
        if func is None or (func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)) \
                not in last:
            continue
        if len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name) \
                and ctx.qualified_name(func) in names:
            found.append((assign.targets[0].target.value, assign.value))
    return found


def creation_point(ctx: FileContext, node: cst.CSTNode, owner: Owner) -> Optional[cst.BaseStatement]:
    """Where something used at ``node`` is created once: before the outermost loop around
    ``node`` in ``owner`` (or before the statement itself outside loops)."""
    point = ctx.statement_of(node)
    for ancestor in ctx.ancestors(node):
        if ancestor is owner:
            break
        if isinstance(ancestor, (cst.For, cst.While)):
            point = ancestor
    return point if point is not None and ctx.block_of(point) is not None else None


def common_point(ctx: FileContext, nodes: List[cst.CSTNode], owner: Owner) -> Optional[cst.BaseStatement]:
    """The statement before which something used at all ``nodes`` (in ``owner``) is created once:
    in the deepest block holding them all that is not inside a loop."""
    chains = []
    for node in nodes:
        chain = []
        for ancestor in ctx.ancestors(node):
            if isinstance(ancestor, (cst.Module, cst.IndentedBlock)):
                chain.append(ancestor)
            if ancestor is owner or ancestor is owner_body(owner):
                break
        chains.append(list(reversed(chain)))
    block = None
    for level in zip(*chains):
        if any(b is not level[0] for b in level):
            break
        if any(isinstance(a, (cst.For, cst.While)) for a in _between(ctx, level[0], owner)):
            break
        block = level[0]
    if block is None:
        return None
    statements = []
    for node in nodes:
        current = ctx.statement_of(node)
        while current is not None and ctx.parent(current) is not block:
            current = ctx.statement_of(ctx.parent(current))
        if current is not None:
            statements.append(current)
    return min(statements, key=list(block.body).index) if statements else None


def _between(ctx: FileContext, node: cst.CSTNode, owner: Owner) -> Iterator[cst.CSTNode]:
    for ancestor in ctx.ancestors(node):
        if ancestor is owner:
            return
        yield ancestor


# ---------------------------------------------------------------------------------- new names
def names_in_file(ctx: FileContext) -> Set[str]:
    """Every identifier the file spells anywhere: bound, used, imported, or as an attribute or a
    keyword. A name outside this set can clash with nothing of the file's, in any scope."""
    return ctx.shared(_NAMES, lambda: {name.value for name in ctx.nodes(cst.Name)})


def fresh_name(ctx: FileContext, *candidates: str, taken: AbstractSet[str] = frozenset()) -> str:
    """A name for something a port adds to the file (a variable, a function, a class): the first
    of ``candidates`` that the file does not spell and ``taken`` (the names the caller already
    chose) does not hold; when every one is in use, the first candidate with the smallest free
    number from 2: ``ipu_config2``.

    The answer depends on the original file and the arguments alone, so two rules that need the
    same new name (one writes a helper, another calls it) ask alike and agree."""
    if not candidates:
        raise ValueError("fresh_name needs at least one candidate")
    names = names_in_file(ctx)
    for candidate in candidates:
        if candidate not in names and candidate not in taken:
            return candidate
    index = 2
    while f"{candidates[0]}{index}" in names or f"{candidates[0]}{index}" in taken:
        index += 1
    return f"{candidates[0]}{index}"
