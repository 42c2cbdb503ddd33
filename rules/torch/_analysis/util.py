"""Small PyTorch helpers shared by the IPU3xx rules: qualified calls, fresh names, CUDA device
expressions, ``forward`` methods. Statement shapes, scopes and statement edits that know nothing of
PyTorch are in ``porter.cstutil``, ``porter.scopes`` and ``porter.statements``.

Everything here reads the original tree through the ``FileContext``; results that several rules
need are cached on the context so each file pays for them once.
"""

from __future__ import annotations

import builtins
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from porter import scopes
from porter.context import FileContext, SharedKey, bound_names, code_of, walk
from porter.cstutil import argument, assigned_name, is_false, keyword, name_of, with_args
from porter.scopes import Owner
from porter.rule import is_selected, rule_by_code

BUILTINS = frozenset(dir(builtins))
AUTOCAST = frozenset({"torch.cuda.amp.autocast", "torch.autocast", "torch.amp.autocast",
                      "torch.cuda.amp.autocast_mode.autocast", "transformer_engine.pytorch.fp8_autocast"})
GRAD_SCALER = frozenset({"torch.cuda.amp.GradScaler", "torch.amp.GradScaler"})
NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode"})
CUDA_AVAILABLE = "torch.cuda.is_available"
# Accelerator tests that are False on an IPU host: CPU torch, and `torch.accelerator` is missing
# from the torch PopTorch pins (a call would fail with AttributeError).
GPU_AVAILABLE = frozenset({CUDA_AVAILABLE, "torch.accelerator.is_available", "torch.backends.mps.is_available"})
CUDA_COUNT = "torch.cuda.device_count"
DATALOADER = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})

PARTIAL = "functools.partial"
ACCELERATOR = "accelerate.Accelerator"

# Analyses of the original tree, computed once per file by whichever rule asks first.
_QUALIFIED: SharedKey[Dict[int, Optional[str]]] = SharedKey("torch-qualified", dict)
_DEVICES: SharedKey[Set[str]] = SharedKey("torch-devices")
_ACCELERATORS: SharedKey[Set[str]] = SharedKey("torch-accelerators")
_AUTOCAST_NAMES: SharedKey[List[Tuple[str, cst.SimpleStatementLine]]] = SharedKey("torch-autocast-names")


def qualified(ctx: FileContext, node: cst.CSTNode) -> Optional[str]:
    """``ctx.qualified_name``, remembered per node: the torch rules ask about the same calls."""
    store = ctx.shared(_QUALIFIED)
    key = id(node)
    if key not in store:
        store[key] = ctx.qualified_name(node)
    return store[key]


def autocast_names(ctx: FileContext) -> List[Tuple[str, cst.SimpleStatementLine]]:
    """Names bound to an autocast factory or context, with the statement that binds them:
    ``amp = functools.partial(torch.autocast, device_type="cuda")`` (used as ``with amp():``) and
    ``amp_ctx = torch.autocast("cuda")`` (used as ``with amp_ctx:``)."""
    def compute():
        found = []
        for statement in ctx.nodes(cst.SimpleStatementLine):
            name = assigned_name(statement)
            value = statement.body[0].value if name else None
            if not isinstance(value, cst.Call):
                continue
            full = qualified(ctx, value.func)
            if full in AUTOCAST or (full == PARTIAL and value.args and value.args[0].keyword is None
                                    and qualified(ctx, value.args[0].value) in AUTOCAST):
                found.append((name, statement))
        return found
    return ctx.shared(_AUTOCAST_NAMES, compute)


def _autocast_binding(ctx: FileContext, use: cst.BaseExpression, depth: int = 0) -> Optional[str]:
    """What the autocast name ``use`` is bound to (``functools.partial`` or an autocast), in its
    own scope or the module's, or through a parameter every caller passes one to; None for other
    names."""
    name = name_of(use)
    if name is None or qualified(ctx, use) is not None:
        return None
    scope = scopes.owner(ctx, use)
    for bound, statement in autocast_names(ctx):
        if bound == name and scopes.owner(ctx, statement) in (scope, ctx.module):
            return qualified(ctx, statement.body[0].value.func)
    return _passed_autocast(ctx, scope, name, depth) if depth < 3 else None


def _passed_autocast(ctx: FileContext, function: Owner, name: str, depth: int) -> Optional[str]:
    """``def train_epoch(..., amp_autocast=suppress)`` called as ``train_epoch(..., amp_autocast=amp)``
    by every caller, ``amp`` an autocast: what ``amp`` is bound to."""
    if not isinstance(function, cst.FunctionDef):
        return None
    params = [param.name.value for param in function.params.params]
    keyword_only = [param.name.value for param in function.params.kwonly_params]
    if name not in params + keyword_only:
        return None
    position = params.index(name) if name in params else len(params) + len(keyword_only)
    calls = scopes.local_calls(ctx, function)
    bindings = set()
    for call in calls:
        arg = argument(call, name, position)
        bindings.add(_autocast_binding(ctx, arg.value, depth + 1) if arg is not None and not arg.star else None)
    return bindings.pop() if len(bindings) == 1 else None


def is_autocast(ctx: FileContext, item: cst.BaseExpression) -> bool:
    """A ``with`` item that enters CUDA autocast: ``torch.autocast(...)``, ``amp()`` for a partial
    of it, ``amp_ctx`` for an autocast object bound once, or ``accelerator.autocast()``."""
    if isinstance(item, cst.Call):
        func = item.func
        if isinstance(func, cst.Attribute) and func.attr.value == "autocast" \
                and code_of(ctx, func.value) in accelerators(ctx):
            return True
        return qualified(ctx, func) in AUTOCAST or _autocast_binding(ctx, func) == PARTIAL
    return _autocast_binding(ctx, item) in AUTOCAST


def autocast_block(ctx: FileContext, statement: cst.CSTNode) -> bool:
    """A ``with`` block that only enters autocast: IPU309 replaces it by its body."""
    return isinstance(statement, cst.With) and isinstance(statement.body, cst.IndentedBlock) \
        and all(is_autocast(ctx, item.item) for item in statement.items)


def accelerators(ctx: FileContext) -> Set[str]:
    """The code of the targets bound to a Hugging Face ``accelerate.Accelerator(...)``:
    ``accelerator``, ``self.accelerator``."""
    def compute():
        return {code_of(ctx, assign.targets[0].target) for assign in ctx.nodes(cst.Assign)
                if len(assign.targets) == 1 and isinstance(assign.value, cst.Call)
                and qualified(ctx, assign.value.func) == ACCELERATOR}
    return ctx.shared(_ACCELERATORS, compute)


def backward_calls(ctx: FileContext) -> List[cst.Call]:
    """Every ``x.backward(...)`` of the file: where it trains, ported or not."""
    return [call for call in ctx.nodes(cst.Call)
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward"]


def calls_to(ctx: FileContext, *names: str) -> List[cst.Call]:
    return [call for call in ctx.nodes(cst.Call) if qualified(ctx, call.func) in names]


# `torch.optim` optimizers with a `poptorch.optim` twin that takes the same arguments.
SWAPPED_OPTIMIZERS = ("SGD", "Adam", "AdamW", "RMSprop")


def swaps_to_poptorch(ctx: FileContext, call: cst.Call) -> bool:
    """Whether the poptorch-optim rule (IPU304) turns ``call`` into its ``poptorch.optim`` twin:
    a ``torch.optim`` optimizer that has one, without ``amsgrad=True`` (PopTorch rejects it)."""
    full = qualified(ctx, call.func) or ""
    if not full.startswith("torch.optim.") or full.rsplit(".", 1)[-1] not in SWAPPED_OPTIMIZERS:
        return False
    amsgrad = keyword(call, "amsgrad")
    return amsgrad is None or is_false(amsgrad.value)


def asked_device_iterations(ctx: FileContext) -> int:
    """The device iterations the port's options set (``--device-iterations``), else 1."""
    return (ctx.config.device_iterations or 1) if selected(ctx, "device-iterations") else 1


def asked_accumulation(ctx: FileContext) -> int:
    """The gradient accumulation the port's options set (``--gradient-accumulation``, which the
    pipelining rule writes), else 1."""
    return (ctx.config.gradient_accumulation or 1) if selected(ctx, "poptorch-pipelining") else 1


def selected(ctx: FileContext, rule: str) -> bool:
    """True when ``rule`` (a rule's name, or its code) is selected for this port. The shared
    analysis asks by name: the rules declare their codes, and it plans only what selected rules
    write."""
    found = rule_by_code(rule)
    if found is None:
        raise KeyError(f"no rule is called {rule!r}")
    return is_selected(found.code, ctx.config.select, ctx.config.ignore)



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
    """``"cuda"``, ``"cuda:0"``, ``f"cuda:{rank}"``, or a conditional expression with one."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return isinstance(value, str) and value.startswith("cuda")
    if isinstance(node, cst.FormattedString):
        first = node.parts[0] if node.parts else None
        return isinstance(first, cst.FormattedStringText) and first.value.startswith("cuda")
    if isinstance(node, cst.IfExp):
        return is_cuda_string(node.body) or is_cuda_string(node.orelse)
    return False


# Words in a variable's name that make it a device where `.to(...)` takes it: `local_rank`,
# `self.gpu_id`, `args.gpu` are device indices (a dtype is never named so).
_DEVICE_WORDS = ("device", "gpu", "cuda", "rank")


def is_device(ctx: FileContext, node: cst.CSTNode) -> bool:
    """An expression that names a device (never a dtype)."""
    if is_cuda_string(node) or isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.Name):
        return qualified(ctx, node) is None and (
            node.value in device_names(ctx) or any(word in node.value.lower() for word in _DEVICE_WORDS))
    if isinstance(node, cst.Attribute):
        return node.attr.value == "device" or any(word in node.attr.value.lower() for word in _DEVICE_WORDS)
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
    if func.attr.value == "cuda":  # whatever the device index: there is no CUDA device
        return func.value
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


def cuda_value(ctx, test) -> Optional[bool]:
    """What a CUDA test evaluates to on an IPU host (CPU torch: no CUDA device), or None when it
    does not depend on CUDA alone: ``torch.cuda.is_available()``, ``torch.cuda.device_count() > 0``,
    and ``not``/``and``/``or`` of them."""
    if isinstance(test, cst.Call):
        return False if qualified(ctx, test.func) in GPU_AVAILABLE else None
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


_NOT_TENSORS = ("torch.nn.", "torch.optim.", "torch.utils.", "torch.device", "torch.cuda.", "torch.backends.",
                 "torch.compile", "torch.jit.")


def tensor_variables(ctx: FileContext, owner: Owner) -> Set[str]:
    """Variables of ``owner`` assigned a tensor from a ``torch.*`` factory (``torch.tensor``,
    ``torch.ones``...), possibly through ``.to(...)``/``.float()``: a wrapper module must register
    them as buffers, or PopTorch leaves them on the host."""
    found = set()
    for assign in ctx.nodes(cst.Assign):
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name) \
                or scopes.owner(ctx, assign) is not owner:
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
