"""TensorFlow 1 graph-mode facts shared by the IPU2xx rules: device scopes, what must stay on the
CPU, the function a scope computes, and how to spell TF1 API calls in the file's own style.
"""

from __future__ import annotations

import re
from typing import Callable, Dict, Iterator, List, Optional, Set, Tuple

import libcst as cst

from porter.context import FileContext, SharedKey, bound_names, walk
from porter.cstutil import string_value
from porter.rules.keras._analysis.steps import functions_called_from
from porter.scopes import assignments

_TF_PREFIXES = ("tensorflow.compat.v1.", "tensorflow.")

Statements = List[cst.BaseStatement]

# Analyses of the original tree, computed once per file by whichever rule asks first.
_CALLS_BY_LAST_NAME: SharedKey[Dict[str, List[cst.Call]]] = SharedKey("tf1-calls-by-last-name")
_GRAPH_INPUTS: SharedKey[Set[str]] = SharedKey("tf1-graph-inputs")  # per function (or module)
_IPU_FUNCTIONS: SharedKey[Set[str]] = SharedKey("tf1-ipu-functions")
# State the IPU2xx rules hand on: the statements each IPU scope gets a CPU scope for, by the
# scope's id (IPU201, then IPU205, move statements there); the computations IPU202 compiles (read
# by IPU207); the rewrites IPU207 asks for the bodies IPU202 builds, by first statement's id.
TF1_HOISTED: SharedKey[Dict[int, Statements]] = SharedKey("tf1-hoisted", dict)
TF1_COMPILED: SharedKey[List[Tuple[str, object, str]]] = SharedKey("tf1-compiled", list)
TF1_BODY_HOOKS: SharedKey[Dict[int, Callable[[Statements], Statements]]] = SharedKey("tf1-body-hooks", dict)

IPU_DEVICE = "/device:IPU:0"
IPU_SCOPE = "tensorflow.python.ipu.scopes.ipu_scope"
IPU_COMPILE = "tensorflow.python.ipu.ipu_compiler.compile"

# Device strings for the first GPU: "/gpu:0", "/device:GPU:0", "gpu", "/job:localhost/.../GPU:0".
_GPU0 = re.compile(r"^(/job:[\w-]+)?(/replica:\d+)?(/task:\d+)?/?(device:)?gpu(:0)?$", re.IGNORECASE)
_GPU = re.compile(r"(^|/)(device:)?gpu(:\d+)?$", re.IGNORECASE)
_CPU = re.compile(r"^(/job:[\w-]+)?(/replica:\d+)?(/task:\d+)?/?(device:)?cpu(:\d+)?$", re.IGNORECASE)


def tf_name(ctx: FileContext, expr: cst.CSTNode) -> Optional[str]:
    """``placeholder`` for ``tf.placeholder`` / ``tf.compat.v1.placeholder`` (any import spelling);
    ``train.AdamOptimizer`` for ``tf.train.AdamOptimizer``; None when not a TensorFlow name."""
    qualified = ctx.qualified_name(expr)
    if qualified is None:
        return None
    for prefix in _TF_PREFIXES:
        if qualified.startswith(prefix):
            return qualified[len(prefix):]
    return None


def tf_call_name(ctx: FileContext, node: cst.CSTNode) -> Optional[str]:
    return tf_name(ctx, node.func) if isinstance(node, cst.Call) else None


def _calls_by_last_name(ctx: FileContext) -> Dict[str, List[cst.Call]]:
    """Calls grouped by the last part of their function's spelling (``b`` for ``a.b(...)``);
    a call through an import alias (``from m import f as g``; ``g(...)``) is also filed under
    the imported name. Built once per file."""
    return ctx.shared(_CALLS_BY_LAST_NAME, lambda: _index_calls(ctx))


def _index_calls(ctx: FileContext) -> Dict[str, List[cst.Call]]:
    index: Dict[str, List[cst.Call]] = {}
    for call in ctx.nodes(cst.Call):
        func = call.func
        if isinstance(func, cst.Attribute):
            index.setdefault(func.attr.value, []).append(call)
        elif isinstance(func, cst.Name):
            index.setdefault(func.value, []).append(call)
            imported = ctx.aliases.get(func.value)
            if imported is not None and imported.rsplit(".", 1)[-1] != func.value:
                index.setdefault(imported.rsplit(".", 1)[-1], []).append(call)
    return index


def calls_by_last_name(ctx: FileContext, name: str) -> List[cst.Call]:
    """Calls whose function is spelled ``...name``, unresolved."""
    return _calls_by_last_name(ctx).get(name, [])


def _in_source_order(ctx: FileContext, calls: List[cst.Call]) -> List[cst.Call]:
    if len(calls) < 2:
        return calls
    order = {id(call): position for position, call in enumerate(ctx.nodes(cst.Call))}
    return sorted(calls, key=lambda call: order[id(call)])


def _head(node: cst.BaseExpression) -> Optional[str]:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _candidates(ctx: FileContext, names) -> List[cst.Call]:
    """Calls spelled with the last part of one of ``names``, from an imported name."""
    index = _calls_by_last_name(ctx)
    imported = ctx.imported_names
    found: Dict[int, cst.Call] = {}
    for name in names:
        for call in index.get(name.rsplit(".", 1)[-1], ()):
            if _head(call.func) in imported:
                found[id(call)] = call
    return list(found.values())


def calls_named(ctx: FileContext, names) -> List[cst.Call]:
    """Calls (source order) to the TensorFlow functions ``names`` as ``tf_call_name`` spells them
    (``"train.get_or_create_global_step"``). Resolving names is the costly part of a port: only
    calls spelled with the right last name are resolved."""
    wanted = set(names)
    return _in_source_order(ctx, [call for call in _candidates(ctx, wanted) if tf_call_name(ctx, call) in wanted])


def find_calls(ctx: FileContext, *qualified: str) -> List[cst.Call]:
    """Like ``ctx.calls_to``, for fully qualified names, resolving only the likely calls."""
    wanted = set(qualified)
    return _in_source_order(ctx, [call for call in _candidates(ctx, wanted)
                                  if ctx.qualified_name(call.func) in wanted])


def tf_module(ctx: FileContext) -> str:
    """How this file spells the TF1 API module: ``tf`` or ``tf.compat.v1``."""
    v1 = [local for local, full in ctx.aliases.items() if full == "tensorflow.compat.v1"]
    if v1:
        return sorted(v1)[0]
    plain = sorted(local for local, full in ctx.aliases.items() if full == "tensorflow")
    name = plain[0] if plain else "tf"
    for attribute in ctx.nodes(cst.Attribute):
        qualified = ctx.qualified_name(attribute)
        if qualified is not None and qualified.startswith("tensorflow.compat.v1."):
            return name + ".compat.v1"
    return name


SESSIONS = frozenset({"Session", "InteractiveSession", "train.MonitoredTrainingSession",
                      "train.MonitoredSession", "train.SingularMonitoredSession"})


def session_calls(ctx: FileContext) -> List[cst.Call]:
    """Calls that create a session, in source order."""
    return calls_named(ctx, SESSIONS)


# ------------------------------------------------------------------------------ device scopes
def device_of(ctx: FileContext, expr: cst.BaseExpression) -> Optional[Tuple[str, str]]:
    """(kind, device string) for a device context manager: kind is "gpu0", "gpu" (another GPU),
    "cpu", "ipu" (``ipu_scope``) or "other"; None when ``expr`` is not a device scope."""
    if not isinstance(expr, cst.Call):
        return None
    if ctx.qualified_name(expr.func) == IPU_SCOPE:
        return "ipu", IPU_DEVICE
    if tf_name(ctx, expr.func) != "device" or not expr.args:
        return None
    device = string_value(expr.args[0].value)
    if device is None:
        return "other", ""
    if _GPU0.match(device):
        return "gpu0", device
    if _GPU.search(device):
        return "gpu", device
    if _CPU.match(device):
        return "cpu", device
    return "other", device


def device_scopes(ctx: FileContext) -> Iterator[Tuple[cst.With, str, str]]:
    """Every ``with`` statement with a single device scope item: (with, kind, device)."""
    for node in ctx.nodes(cst.With):
        if len(node.items) != 1:
            continue
        found = device_of(ctx, node.items[0].item)
        if found is not None:
            yield (node, *found)


def ipu_bound_scopes(ctx: FileContext) -> List[cst.With]:
    """Scopes whose body runs on the IPU once ported: ``ipu_scope`` and the first GPU's scope."""
    return [node for node, kind, _ in device_scopes(ctx) if kind in ("ipu", "gpu0")]


def enclosing_device(ctx: FileContext, node: cst.CSTNode) -> Optional[str]:
    """The kind of the innermost device scope around ``node`` (see ``device_of``)."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.With) and len(ancestor.items) == 1:
            found = device_of(ctx, ancestor.items[0].item)
            if found is not None and found[0] != "other":
                return found[0]
    return None


def cpu_device_scope(ctx: FileContext, body: List[cst.BaseStatement], leading=()) -> cst.With:
    """``with tf.device("cpu"):`` around ``body``, after the ``leading`` lines; blank lines above the
    first statement go above the new scope, its comments stay with it."""
    scope = cst.parse_statement(f'with {tf_module(ctx)}.device("cpu"):\n    pass\n')
    assert isinstance(scope, cst.With)
    first = body[0]
    lines = list(getattr(first, "leading_lines", ()))
    blank = 0
    while blank < len(lines) and lines[blank].comment is None:
        blank += 1
    if blank:
        body = [first.with_changes(leading_lines=lines[blank:]), *body[1:]]
    return scope.with_changes(body=scope.body.with_changes(body=body),
                              leading_lines=(*leading, *lines[:blank]))


def hoist_to_cpu(ctx: FileContext, target: cst.BaseStatement, statements: List[cst.BaseStatement]) -> bool:
    """Move ``statements`` into one ``with tf.device("cpu"):`` in front of ``target`` (the IPU
    scope), which gives its comments and blank lines to the CPU scope. Several rules moving
    statements in front of the same scope share that one CPU scope."""
    pending = ctx.shared(TF1_HOISTED)
    moved = pending.get(id(target))
    if moved is not None:
        if any(ctx.block_of(statement) is None for statement in statements):
            return False
        for statement in statements:
            ctx.remove(statement)
        moved.extend(statements)
        return True
    moved = list(statements)
    above = target.leading_lines
    if not ctx.move_before(target, moved, lambda body: [cpu_device_scope(ctx, body, above)]):
        return False
    pending[id(target)] = moved
    if above:
        ctx.replace(target, lambda node: node.with_changes(leading_lines=()))
    return True


# ----------------------------------------------------------------------- what stays on the CPU
_PLACEHOLDERS = {"placeholder", "placeholder_with_default", "sparse_placeholder"}
_ITERATOR_FACTORIES = {"data.make_one_shot_iterator", "data.make_initializable_iterator",
                       "data.Iterator.from_structure", "data.Iterator.from_string_handle"}
_ITERATOR_METHODS = {"make_one_shot_iterator", "make_initializable_iterator", "get_next"}
GLOBAL_STEP_FACTORIES = {"train.get_or_create_global_step", "train.create_global_step"}


def cpu_bound_kind(ctx: FileContext, statement: cst.BaseStatement) -> Optional[str]:
    """"placeholder", "iterator" or "global step" when ``statement`` (an assignment or a bare
    call) creates a graph input or the global step, which belong on the CPU; else None."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, cst.Assign):
        value = small.value
    elif isinstance(small, cst.Expr):
        value = small.value
    else:
        return None
    if not isinstance(value, cst.Call):
        return None
    name = tf_call_name(ctx, value)
    if name in _PLACEHOLDERS:
        return "placeholder"
    if name in GLOBAL_STEP_FACTORIES:
        return "global step"
    if name in _ITERATOR_FACTORIES:
        return "iterator"
    func = value.func
    if isinstance(func, cst.Attribute) and func.attr.value in _ITERATOR_METHODS and name is None:
        return "iterator"
    return None


def hoistable(ctx: FileContext, body: List[cst.BaseStatement]) -> Tuple[List[cst.BaseStatement], List[str]]:
    """The statements of a device scope's ``body`` that create graph inputs or the global step
    and can move in front of the scope (they use nothing the statements before them define), and
    what they create ("placeholders", "iterators", "global steps")."""
    hoisted: List[cst.BaseStatement] = []
    kinds: List[str] = []
    defined: Set[str] = set()
    for statement in body:
        kind = cpu_bound_kind(ctx, statement)
        if kind is not None and not (names_used(statement) & defined):
            hoisted.append(statement)
            if kind + "s" not in kinds:
                kinds.append(kind + "s")
        else:
            defined |= names_bound(statement)
    return hoisted, kinds


# Names used and bound by a statement, asked again and again by the step analysis: kept with
# the node itself (ids are reused once a tree is gone), and forgotten when there are many.
_NAMES_CACHE: Dict[Tuple[str, int], Tuple[cst.CSTNode, Set[str]]] = {}
_NAMES_CACHE_SIZE = 20000


def _cached(kind: str, node: cst.CSTNode, compute: Callable[[cst.CSTNode], Set[str]]) -> Set[str]:
    key = (kind, id(node))
    hit = _NAMES_CACHE.get(key)
    if hit is not None and hit[0] is node:
        return set(hit[1])
    if len(_NAMES_CACHE) >= _NAMES_CACHE_SIZE:
        _NAMES_CACHE.clear()
    found = compute(node)
    _NAMES_CACHE[key] = (node, found)
    return set(found)


def names_used(node: cst.CSTNode) -> Set[str]:
    return _cached("used", node, lambda root: {sub.value for sub in walk(root) if isinstance(sub, cst.Name)})


def names_bound(statement: cst.BaseStatement) -> Set[str]:
    return _cached("bound", statement, _names_bound)


def _names_bound(statement: cst.BaseStatement) -> Set[str]:
    found: Set[str] = set()
    for sub in walk(statement):
        if isinstance(sub, cst.AssignTarget):
            found.update(bound_names(sub.target))
        elif isinstance(sub, (cst.AugAssign, cst.AnnAssign, cst.For)):
            found.update(bound_names(sub.target))
        elif isinstance(sub, (cst.FunctionDef, cst.ClassDef)):
            found.add(sub.name.value)
        elif isinstance(sub, cst.AsName):
            found.update(bound_names(sub.name))
    return found


def graph_inputs(ctx: FileContext, owner: cst.CSTNode) -> Set[str]:
    """Names that hold graph inputs in ``owner`` (a function or the module): placeholders and
    the tensors an iterator's ``get_next()`` returns, made there or at module level."""
    found = _graph_inputs_made_in(ctx, owner)
    if owner is ctx.module:
        return found
    return found | _graph_inputs_made_in(ctx, ctx.module)


def _graph_inputs_made_in(ctx: FileContext, owner: cst.CSTNode) -> Set[str]:
    return ctx.shared(_GRAPH_INPUTS, lambda: _find_graph_inputs(ctx, owner), per=id(owner))


def _find_graph_inputs(ctx: FileContext, owner: cst.CSTNode) -> Set[str]:
    found: Set[str] = set()
    for statement, name, value in assignments(ctx, owner):
        if value is None and isinstance(statement, cst.SimpleStatementLine) and \
                isinstance(statement.body[0], cst.Assign):
            value = statement.body[0].value  # `images, labels = iterator.get_next()`
        if isinstance(value, cst.Call) and (tf_call_name(ctx, value) in _PLACEHOLDERS or (
                isinstance(value.func, cst.Attribute) and value.func.attr.value == "get_next")):
            found.add(name)
    return found


# ------------------------------------------------------------------- the computation of a scope
_OP_METHODS = {"minimize", "apply_gradients", "assign", "assign_add", "assign_sub", "run"}
_OP_FUNCTIONS = {"group", "no_op", "assign", "assign_add", "assign_sub", "tuple"}


def is_operation(ctx: FileContext, expr: cst.BaseExpression, function: Optional[cst.FunctionDef]) -> bool:
    """True when ``expr`` (in ``function``) is an operation, such as a training op, not a tensor."""
    if isinstance(expr, cst.Name):
        if function is None:
            return False
        for node in walk(function.body):
            if isinstance(node, cst.Assign) and any(
                    expr.value in bound_names(target.target) for target in node.targets):
                return is_operation(ctx, node.value, function) if isinstance(node.value, cst.Call) else False
        return False
    if not isinstance(expr, cst.Call):
        return False
    name = tf_call_name(ctx, expr)
    if name is not None:
        return name in _OP_FUNCTIONS
    return isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _OP_METHODS


def returned_values(function: cst.FunctionDef) -> Optional[List[cst.BaseExpression]]:
    """The values ``function`` returns, when it has one ``return`` (at the end of its body)."""
    returns = [node for node in walk(function.body) if isinstance(node, cst.Return)]
    if len(returns) != 1 or returns[0].value is None:
        return None
    body = function.body.body
    last = body[-1] if body else None
    if not (isinstance(last, cst.SimpleStatementLine) and last.body and last.body[-1] is returns[0]):
        return None
    value = returns[0].value
    if isinstance(value, (cst.Tuple, cst.List)):
        if any(isinstance(element, cst.StarredElement) for element in value.elements):
            return None
        return [element.value for element in value.elements]
    return [value]


def ipu_functions(ctx: FileContext) -> Set[str]:
    """Names of the functions the IPU scopes call or compile: their bodies run on the IPU."""
    return ctx.shared(_IPU_FUNCTIONS, lambda: _ipu_functions(ctx))


def _ipu_functions(ctx: FileContext) -> Set[str]:
    found: Set[str] = set()
    for scope in ipu_bound_scopes(ctx):
        for node in walk(scope.body):
            if isinstance(node, cst.Call):
                if isinstance(node.func, cst.Name):
                    found.add(node.func.value)
                if ctx.qualified_name(node.func) == IPU_COMPILE and node.args and \
                        isinstance(node.args[0].value, cst.Name):
                    found.add(node.args[0].value.value)
    return found


def runs_on_ipu(ctx: FileContext, node: cst.CSTNode) -> bool:
    """True when ``node`` is in an IPU (or first-GPU) scope or in a function such a scope runs."""
    if enclosing_device(ctx, node) in ("ipu", "gpu0"):
        return True
    function = ctx.enclosing_function(node)
    return function is not None and function.name.value in ipu_functions(ctx)


def compiled_by_port(ctx: FileContext) -> Callable[[cst.CSTNode], bool]:
    """A test of whether a node is in a computation this port compiles (IPU202, IPU208:
    ``compiled_now``) or in a function of the file such a computation calls, directly or through
    other functions. Asked once the computations are all known (by a rule that runs after them)."""
    compiled = compiled_now(ctx)
    roots = [part for kind, held, _ in compiled for part in ([held] if kind == "function" else held)]
    root_ids = {id(root) for root in roots}
    called = {function.name.value for function in functions_called_from(ctx, roots)} if roots else set()

    def test(node: cst.CSTNode) -> bool:
        if not roots:
            return False
        if any(id(ancestor) in root_ids for ancestor in ctx.ancestors(node)):
            return True
        function = ctx.enclosing_function(node)
        return function is not None and function.name.value in called

    return test


# ------------------------------------------------------- the computations IPU202 compiles (for IPU207)
def note_compiled(ctx: FileContext, kind: str, node, name: str) -> None:
    """Record a computation ``ipu.ipu_compiler.compile`` gets in this port: kind "function" (``node``
    is the ``FunctionDef`` of the file compiled) or "statements" (``node`` is the list of the scope's
    statements that become the function ``name``)."""
    ctx.shared(TF1_COMPILED).append((kind, node, name))


def compiled_now(ctx: FileContext) -> List[Tuple[str, object, str]]:
    """What ``note_compiled`` recorded, in order."""
    return list(ctx.shared(TF1_COMPILED))


def set_body_hook(ctx: FileContext, first: cst.BaseStatement, hook) -> None:
    """``hook(statements) -> statements`` rewrites the body of the function that the statements
    from ``first`` become (IPU207 shards it), when IPU202 builds it."""
    ctx.shared(TF1_BODY_HOOKS)[id(first)] = hook


def body_hook(ctx: FileContext, first: cst.BaseStatement):
    return ctx.shared(TF1_BODY_HOOKS).get(id(first), lambda statements: statements)
