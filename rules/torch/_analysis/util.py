"""Small PyTorch helpers shared by the IPU3xx rules: statement shapes, scopes, CUDA device
expressions.

Everything here reads the original tree through the ``FileContext``; results that several rules
need are cached on the context so each file pays for them once.
"""

from __future__ import annotations

import builtins
from typing import Dict, Iterator, List, Optional, Set, Tuple, Union

import libcst as cst

from porter import cstutil
from porter.context import FileContext, SharedKey, bound_names, code_of, in_loop, walk
from porter.cstutil import with_args
from porter.rule import is_selected

Owner = Union[cst.Module, cst.FunctionDef]

BUILTINS = frozenset(dir(builtins))
AUTOCAST = frozenset({"torch.cuda.amp.autocast", "torch.autocast", "torch.amp.autocast",
                      "torch.cuda.amp.autocast_mode.autocast"})
GRAD_SCALER = frozenset({"torch.cuda.amp.GradScaler", "torch.amp.GradScaler"})
NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode"})
CUDA_AVAILABLE = "torch.cuda.is_available"
CUDA_COUNT = "torch.cuda.device_count"
DATALOADER = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})

# Analyses of the original tree, computed once per file by whichever rule asks first.
_QUALIFIED: SharedKey[Dict[int, Optional[str]]] = SharedKey("torch-qualified", dict)
_GLOBALS: SharedKey[Set[str]] = SharedKey("torch-globals")
_DEVICES: SharedKey[Set[str]] = SharedKey("torch-devices")
# The comments and blank lines of removed statements that the next statement kept must carry, by
# that statement's id: the rules removing statements (IPU305, IPU307, IPU309) pass them along.
CARRIED_LINES: SharedKey[Dict[int, Tuple[cst.EmptyLine, ...]]] = SharedKey("torch-carried-lines", dict)


def qualified(ctx: FileContext, node: cst.CSTNode) -> Optional[str]:
    """``ctx.qualified_name``, remembered per node: the torch rules ask about the same calls."""
    store = ctx.shared(_QUALIFIED)
    key = id(node)
    if key not in store:
        store[key] = ctx.qualified_name(node)
    return store[key]


def calls_to(ctx: FileContext, *names: str) -> List[cst.Call]:
    return [call for call in ctx.nodes(cst.Call) if qualified(ctx, call.func) in names]


def selected(ctx: FileContext, code: str) -> bool:
    return is_selected(code, ctx.config.select, ctx.config.ignore)


# ------------------------------------------------------------------------------ statement shapes
def single_small(statement: cst.CSTNode) -> Optional[cst.BaseSmallStatement]:
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        return statement.body[0]
    return None


def expr_call(statement: cst.CSTNode) -> Optional[cst.Call]:
    """The call of an expression statement ``f(...)``."""
    small = single_small(statement)
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        return small.value
    return None


def method_of(call: Optional[cst.CSTNode], *methods: str) -> Optional[cst.BaseExpression]:
    """The receiver of ``receiver.method(...)`` when the method is one of ``methods``."""
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in methods:
        return call.func.value
    return None


def name_of(node: Optional[cst.CSTNode]) -> Optional[str]:
    return node.value if isinstance(node, cst.Name) else None


def simple_assign(statement: cst.CSTNode) -> Optional[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    """(target, value) of ``target = value`` with a single target."""
    small = single_small(statement)
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        return small.targets[0].target, small.value
    return None


def assigned_name(statement: cst.CSTNode) -> Optional[str]:
    found = simple_assign(statement)
    return name_of(found[0]) if found else None


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


# ------------------------------------------------------------------------------------ scopes
def owner_of(ctx: FileContext, node: cst.CSTNode) -> Owner:
    return ctx.enclosing_function(node) or ctx.module


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


def local_calls(ctx: FileContext, function: cst.FunctionDef) -> List[cst.Call]:
    """Calls ``name(...)`` of a module-level function of this file."""
    name = function.name.value
    return [call for call in ctx.nodes(cst.Call)
            if isinstance(call.func, cst.Name) and call.func.value == name and qualified(ctx, call.func) is None]


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
    return ctx.shared(_GLOBALS, compute)


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
                and qualified(ctx, func) in names:
            found.append((assign.targets[0].target.value, assign.value))
    return found


def nn_module_spelling(ctx: FileContext) -> str:
    """How this file spells ``torch.nn.Module``."""
    for local, full in ctx.aliases.items():
        if full == "torch.nn":
            return f"{local}.Module"
        if full == "torch.nn.Module":
            return local
    return "torch.nn.Module"


# -------------------------------------------------------------------------------- CUDA devices
def device_names(ctx: FileContext) -> Set[str]:
    """Variables and parameters that hold a device: ``device = torch.device(...)``, parameters
    called ``device``, and names assigned a CUDA string."""
    def compute():
        names = {"device"}
        for assign in ctx.nodes(cst.Assign):
            if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
                continue
            value = assign.value
            if isinstance(value, cst.Call) and qualified(ctx, value.func) == "torch.device":
                names.add(assign.targets[0].target.value)
            elif is_cuda_string(value):
                names.add(assign.targets[0].target.value)
        return names
    return ctx.shared(_DEVICES, compute)


def is_cuda_string(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return isinstance(value, str) and value.startswith("cuda")
    if isinstance(node, cst.IfExp):
        return is_cuda_string(node.body) or is_cuda_string(node.orelse)
    return False


def is_device(ctx: FileContext, node: cst.CSTNode) -> bool:
    """An expression that names a device (never a dtype)."""
    if is_cuda_string(node):
        return True
    if isinstance(node, cst.Name):
        return node.value in device_names(ctx) and qualified(ctx, node) is None
    if isinstance(node, cst.Attribute):
        return node.attr.value == "device"
    if isinstance(node, cst.Call):
        return qualified(ctx, node.func) == "torch.device"
    return False


class _DeviceStripper(cst.CSTTransformer):
    """``x.cuda()`` -> ``x``, ``x.to(device)`` -> ``x``, ``x.to(device, dtype)`` -> ``x.to(dtype)``,
    for a small subtree (the statements copied into a generated wrapper)."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        return strip_device_call(self.ctx, original, updated) or updated


def strip_device_call(ctx: FileContext, original: cst.Call, updated: cst.Call) -> Optional[cst.BaseExpression]:
    """The replacement of a ``.cuda()`` / ``.to(device)`` call, or None when it is not one."""
    func = updated.func
    if not isinstance(func, cst.Attribute) or not isinstance(original.func, cst.Attribute):
        return None
    if func.attr.value == "pin_memory" and not original.args:
        return func.value
    if func.attr.value == "cuda":
        if all(arg.keyword is not None and arg.keyword.value == "non_blocking" for arg in original.args) \
                or (len(original.args) == 1 and original.args[0].keyword is None):
            return func.value
        return None
    if func.attr.value != "to" or not original.args:
        return None
    keep = []
    dropped = False
    for index, arg in enumerate(original.args):
        if arg.star:
            return None
        keyword = arg.keyword.value if arg.keyword is not None else None
        if (keyword is None and index == 0 and is_device(ctx, arg.value)) or (keyword == "device") \
                or keyword in ("non_blocking", "copy", "memory_format"):
            dropped = dropped or keyword is None or keyword == "device"
            continue
        keep.append(updated.args[index])
    if not dropped:
        return None
    if not keep:
        return func.value
    return with_args(updated, keep)


def strip_devices(ctx: FileContext, node: cst.CSTNode) -> cst.CSTNode:
    return node.visit(_DeviceStripper(ctx))


def rename(node: cst.CSTNode, mapping: Dict[str, str]) -> cst.CSTNode:
    """Replace read names by expressions (``model`` -> ``self.model``) in a small subtree."""
    return node.visit(_Renamer(mapping))


class _Renamer(cst.CSTTransformer):
    def __init__(self, mapping: Dict[str, str]) -> None:
        super().__init__()
        self.mapping = mapping
        self.protected: Set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self.protected.add(id(node.attr))
        return True

    def visit_Arg(self, node: cst.Arg) -> bool:
        if node.keyword is not None:
            self.protected.add(id(node.keyword))
        return True

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        if id(original) in self.protected or original.value not in self.mapping:
            return updated
        return cstutil.expression(self.mapping[original.value])


def first_code_statement(ctx: FileContext) -> Optional[cst.BaseStatement]:
    """The first module statement after the docstring and the imports."""
    for index, statement in enumerate(ctx.module.body):
        small = single_small(statement)
        if index == 0 and isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString,
                                                                                   cst.ConcatenatedString)):
            continue
        if isinstance(statement, cst.SimpleStatementLine) and all(
                isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body):
            continue
        return statement
    return None


def blank_lines(count: int) -> Tuple[cst.EmptyLine, ...]:
    return tuple(cst.EmptyLine(indent=False, whitespace=cst.SimpleWhitespace("")) for _ in range(count))


def ensure_blank_lines(ctx: FileContext, statement: cst.BaseStatement, count: int = 2) -> None:
    """Make sure at least ``count`` blank lines precede ``statement`` (after a new class)."""
    def pad(node):
        lines = list(node.leading_lines)
        blanks = 0
        while blanks < len(lines) and lines[blanks].comment is None:
            blanks += 1
        if blanks >= count:
            return node
        return node.with_changes(leading_lines=(*blank_lines(count - blanks), *lines))
    ctx.replace(statement, pad)


def insert_module_class(ctx: FileContext, new: cst.BaseStatement, before: cst.BaseStatement) -> None:
    """Put a new module-level class after the last class defined before ``before`` (a module
    statement), or else before the first statement after the imports."""
    body = list(ctx.module.body)
    new = new.with_changes(leading_lines=blank_lines(2))
    classes = [s for s in body[:body.index(before)] if isinstance(s, cst.ClassDef)]
    if classes:
        ctx.insert_after(classes[-1], [new])
        return
    first = first_code_statement(ctx) or before
    ctx.insert_before(first, [new])
    if not isinstance(first, (cst.FunctionDef, cst.ClassDef)):
        ensure_blank_lines(ctx, first)


def remove_statement(ctx: FileContext, *statements: cst.BaseStatement) -> None:
    """Remove statements; their comments and blank lines go to the next statement kept."""
    for statement in statements:
        ctx.remove(statement)
    for statement in statements:
        _move_lines(ctx, statement)


def _move_lines(ctx: FileContext, statement: cst.BaseStatement) -> None:
    carried = ctx.shared(CARRIED_LINES)
    lines = (*carried.pop(id(statement), ()), *statement.leading_lines)
    siblings = list(ctx.siblings(statement))
    if statement not in siblings:
        return
    index = siblings.index(statement)
    following = [s for s in siblings[index + 1:] if not ctx.is_removed(s)]
    if not following:
        return
    target = following[0]
    if all(ctx.is_removed(s) for s in siblings[:index]) and isinstance(ctx.block_of(statement), cst.IndentedBlock):
        # The next statement now opens the block: no blank line above it.
        lines = tuple(line for line in lines if line.comment is not None)
        ctx.replace(target, lambda node: node.with_changes(
            leading_lines=[line for line in node.leading_lines if line.comment is not None]))
    if not lines:
        return
    inserted = ctx.inserted_before.get(id(target))
    if inserted:
        # Statements inserted above the next one come first: the lines go above them.
        own = tuple(inserted[0].leading_lines)
        if not (all(line.comment is None for line in lines) and own and own[0].comment is None):
            inserted[0] = inserted[0].with_changes(leading_lines=(*lines, *own))
        return
    if id(target) not in carried:
        # Read when the edits are applied: a later removal of ``target`` carries the lines on.
        ctx.replace(target, lambda node, key=id(target): _prepend(node, carried.get(key, ())))
    carried[id(target)] = (*carried.get(id(target), ()), *lines)


def _prepend(node: cst.BaseStatement, lines) -> cst.BaseStatement:
    own = tuple(node.leading_lines)
    if not lines or (all(line.comment is None for line in lines) and own and own[0].comment is None):
        return node
    return node.with_changes(leading_lines=(*lines, *own))


def forward_tensors(function: cst.FunctionDef) -> Set[str]:
    """The names in ``forward`` that may hold tensors: its parameters (not ``self``) and locals."""
    names = {param.name.value for param in function.params.params[1:]}
    for node in walk(function.body):
        if isinstance(node, (cst.AssignTarget, cst.For)):
            names.update(bound_names(node.target))
    return names


def forward_methods(ctx: FileContext) -> List[cst.FunctionDef]:
    """``forward`` methods of classes (the code PopTorch compiles)."""
    return [function for function in ctx.nodes(cst.FunctionDef)
            if function.name.value == "forward" and isinstance(ctx.parent(ctx.parent(function)), cst.ClassDef)]


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


def cuda_value(ctx, test) -> Optional[bool]:
    """What a CUDA test evaluates to on an IPU host (CPU torch: no CUDA device), or None when it
    does not depend on CUDA alone: ``torch.cuda.is_available()``, ``torch.cuda.device_count() > 0``,
    and ``not``/``and``/``or`` of them."""
    if isinstance(test, cst.Call):
        return False if qualified(ctx, test.func) == CUDA_AVAILABLE else None
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = cuda_value(ctx, test.expression)
        return None if inner is None else not inner
    if isinstance(test, cst.BooleanOperation):
        left, right = cuda_value(ctx, test.left), cuda_value(ctx, test.right)
        if isinstance(test.operator, cst.And):
            return False if False in (left, right) else (True if left is right is True else None)
        return True if True in (left, right) else (False if left is right is False else None)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Call) \
            and qualified(ctx, test.left.func) == CUDA_COUNT \
            and isinstance(test.comparisons[0].comparator, cst.Integer):
        bound = int(test.comparisons[0].comparator.value)
        operator = test.comparisons[0].operator
        checks = {cst.GreaterThan: 0 > bound, cst.GreaterThanEqual: 0 >= bound, cst.Equal: bound == 0,
                  cst.NotEqual: bound != 0, cst.LessThan: 0 < bound, cst.LessThanEqual: 0 <= bound}
        return checks.get(type(operator))
    return None


def in_dead_cuda_branch(ctx: FileContext, node: cst.CSTNode) -> bool:
    """True inside the branch of a CUDA test that never runs on an IPU host (IPU307 removes it)."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.If):
            value = cuda_value(ctx, ancestor.test)
            if (value is False and child is ancestor.body) or (value is True and child is ancestor.orelse):
                return True
        child = ancestor
    return False


_NOT_TENSORS = ("torch.nn.", "torch.optim.", "torch.utils.", "torch.device", "torch.cuda.", "torch.backends.")


def tensor_variables(ctx: FileContext, owner: Owner) -> Set[str]:
    """Variables of ``owner`` assigned a tensor from a ``torch.*`` factory (``torch.tensor``,
    ``torch.ones``...), possibly through ``.to(...)``/``.float()``: a wrapper module must register
    them as buffers, or PopTorch leaves them on the host."""
    found = set()
    for assign in ctx.nodes(cst.Assign):
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name) \
                or owner_of(ctx, assign) is not owner:
            continue
        root = assign.value
        while isinstance(root, cst.Call) and isinstance(root.func, cst.Attribute) \
                and isinstance(root.func.value, cst.Call):
            root = root.func.value
        if isinstance(root, cst.Call):
            full = qualified(ctx, root.func) or ""
            if full.startswith("torch.") and not full.startswith(_NOT_TENSORS):
                found.add(assign.targets[0].target.value)
    return found
