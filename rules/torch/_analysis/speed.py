"""The speed options for PopTorch (PopTorch User Guide, "Options" and "Pipelined execution"): the
``poptorch.Options`` calls they ask for, and the ``poptorch.BeginBlock`` split of a model into pipeline stages.

Each option belongs to a rule, which says what its call is (``option_call``) and reports it under
its own code. The calls go right after the options are created: by the options rule when it creates
them, or after an existing ``opts = poptorch.Options()`` by the rule of each option
(``add_to_existing``). Options are frozen once used, so they are set right after creation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Protocol, Set, Tuple

import libcst as cst

from porter import throughput
from porter.context import FileContext, SharedKey, dotted_name, iter_children, walk
from porter.cstutil import argument, statement

OPTIONS = "poptorch.Options"
_TRAINING_MODEL = "poptorch.trainingModel"
_INFERENCE_MODEL = "poptorch.inferenceModel"
_BLOCKS = ("poptorch.BeginBlock", "poptorch.Block", "poptorch.BlockFunction")


@dataclass(frozen=True)
class OptionCall:
    method: str  # how to recognise it on an options variable ("deviceIterations", "Training.gradientAccumulation")
    arguments: str
    message: str


class OptionRule(Protocol):
    """A rule that sets one ``poptorch.Options`` call when its option is given."""

    code: str

    def option_call(self, config, training: bool) -> Optional[OptionCall]:
        """The call, or None when the config does not ask for it (``training``: the options
        go to a training model; inference options refuse some calls)."""


def replication_factor(config) -> int:
    """Copies of the model: the IPUs over the pipeline stages (PopTorch User Guide, "Options":
    IPUs = model IPUs x factor)."""
    return throughput.config_replicas(config)


def option_line(name: str, call: OptionCall) -> cst.BaseStatement:
    return statement(f"{name}.{call.method}({call.arguments})")


def _is_options(ctx: FileContext, func: cst.BaseExpression) -> bool:
    """``poptorch.Options``, also when the port is yet to add ``import poptorch``."""
    qualified = ctx.qualified_name(func)
    return qualified == OPTIONS or (qualified is None and dotted_name(func) == OPTIONS
                                    and "poptorch" not in ctx.aliases)


def _options_variables(ctx: FileContext) -> List[Tuple[str, cst.BaseStatement]]:
    found = []
    for assign in ctx.nodes(cst.Assign):
        if not (isinstance(assign.value, cst.Call) and _is_options(ctx, assign.value.func)):
            continue
        if len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name):
            line = ctx.statement_of(assign)
            if line is not None and ctx.block_of(line) is not None:
                found.append((assign.targets[0].target.value, line))
    return found


def _calls_on(ctx: FileContext, name: str) -> Set[str]:
    """The option methods already called on ``name`` (``Training.gradientAccumulation`` spelt so)."""
    found = set()
    for call in ctx.nodes(cst.Call):
        func = call.func
        parts = []
        while isinstance(func, cst.Attribute):
            parts.append(func.attr.value)
            func = func.value
        if isinstance(func, cst.Name) and func.value == name and parts:
            found.add(".".join(reversed(parts)))
    return found


def options_of(ctx: FileContext, wrapper: str) -> Set[str]:
    """Options variables passed to ``poptorch.trainingModel`` or ``poptorch.inferenceModel``."""
    found = set()
    for call in ctx.nodes(cst.Call):
        if ctx.qualified_name(call.func) == wrapper:
            arg = argument(call, "options", 1)
            if arg is not None and isinstance(arg.value, cst.Name):
                found.add(arg.value.value)
    return found


def add_to_existing(ctx: FileContext, rule: OptionRule) -> None:
    """Set the option of ``rule`` on each ``poptorch.Options()`` of the file that lacks it."""
    training, inference = options_of(ctx, _TRAINING_MODEL), options_of(ctx, _INFERENCE_MODEL)
    for name, line in _options_variables(ctx):
        call = rule.option_call(ctx.config, name in training or name not in inference)
        if call is None or call.method in _calls_on(ctx, name):
            continue
        ctx.insert_after(line, [option_line(name, call)])
        ctx.report(rule.code, line, f"`{name}.{call.method}({call.arguments})`: {call.message}", fixed=True)


# ------------------------------------------------------------------------------ pipelining
_PARAMETERS = {
    "torch.nn.Linear": lambda a: a[0] * a[1] + a[1] if len(a) >= 2 else None,
    "torch.nn.Conv2d": lambda a: a[0] * a[1] * a[2] * a[2] + a[1] if len(a) >= 3 else None,
    "torch.nn.Conv1d": lambda a: a[0] * a[1] * a[2] + a[1] if len(a) >= 3 else None,
    "torch.nn.Embedding": lambda a: a[0] * a[1] if len(a) >= 2 else None,
    "torch.nn.BatchNorm2d": lambda a: 2 * a[0] if a else None,
    "torch.nn.BatchNorm1d": lambda a: 2 * a[0] if a else None,
    "torch.nn.LayerNorm": lambda a: 2 * a[0] if a else None,
}
_FREE = ("torch.nn.Dropout", "torch.nn.ReLU", "torch.nn.MaxPool2d", "torch.nn.Flatten", "torch.nn.Dropout2d",
         "torch.nn.AvgPool2d", "torch.nn.GELU", "torch.nn.Tanh", "torch.nn.Sigmoid", "torch.nn.Softmax",
         "torch.nn.LogSoftmax", "torch.nn.AdaptiveAvgPool2d", "torch.nn.Identity")


@dataclass
class BlockPlan:
    model: str
    anchor: cst.BaseStatement  # the statement that creates the model
    starts: List[Tuple[str, int]]  # (submodule attribute, stage) where each stage begins
    counts: List[int]  # submodules per stage
    parameters: Optional[List[int]]  # per stage, when known


def _positional_ints(call: cst.Call) -> List[int]:
    values = []
    for arg in call.args:
        if arg.keyword is not None or not isinstance(arg.value, cst.Integer):
            break
        values.append(int(arg.value.evaluated_value))
    return values


def _trained_models(ctx: FileContext) -> List[str]:
    """Variables whose ``.parameters()`` go to an optimizer: the models being trained."""
    found = []
    for call in ctx.nodes(cst.Call):
        name = ctx.qualified_name(call.func) or ""
        if not name.startswith(("torch.optim.", "poptorch.optim.")) or not call.args:
            continue
        first = call.args[0].value
        if (isinstance(first, cst.Call) and isinstance(first.func, cst.Attribute)
                and first.func.attr.value == "parameters" and isinstance(first.func.value, cst.Name)):
            if first.func.value.value not in found:
                found.append(first.func.value.value)
    return found


def block_plan(ctx: FileContext, stages: int) -> Tuple[Optional[BlockPlan], Optional[str]]:
    """Where the model's stages begin, or why it cannot be split statically."""
    from porter.rules.common._analysis.pipeline import balanced, stage_totals

    if any(ctx.qualified_name(call.func) in _BLOCKS for call in ctx.nodes(cst.Call)) or any(
            isinstance(node.decorator, cst.Call) and ctx.qualified_name(node.decorator.func) in _BLOCKS
            for node in ctx.nodes(cst.Decorator)):
        return None, None  # already split by hand or by an earlier port
    classes: Dict[str, cst.ClassDef] = {cls.name.value: cls for cls in ctx.nodes(cst.ClassDef)}
    for model in _trained_models(ctx):
        for assign in ctx.nodes(cst.Assign):
            value = _constructor(assign.value)
            if not (len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)
                    and assign.targets[0].target.value == model and isinstance(value, cst.Call)
                    and isinstance(value.func, cst.Name) and value.func.value in classes):
                continue
            line = ctx.statement_of(assign)
            if line is None or ctx.block_of(line) is None:
                continue
            submodules = _submodules_in_order(ctx, classes[value.func.value])
            if len(submodules) < stages:
                return None, (f"`{model}` has {len(submodules)} submodules called in `forward`, fewer than the "
                              f"{stages} pipeline stages: annotate it with `poptorch.BeginBlock` by hand")
            weights = [weight for _, weight in submodules]
            known = None if any(weight is None for weight in weights) else weights
            assignment = balanced(known, len(submodules), stages)
            starts = [(submodules[index][0], stage) for index, stage in enumerate(assignment)
                      if index == 0 or assignment[index - 1] != stage]
            counts = [assignment.count(stage) for stage in range(stages)]
            totals = stage_totals(assignment, known, stages) if known is not None else None
            return BlockPlan(model, line, starts, counts, totals), None
    return None, ("no model of a class defined in this file is trained here: split it into pipeline stages "
                  "with `poptorch.BeginBlock(submodule, ipu_id=i)` by hand (PopTorch User Guide, \"Pipelined "
                  "execution\")")


_MODULE_METHODS = ("to", "cuda", "cpu", "float", "half", "double", "train", "eval")


def _constructor(value: cst.BaseExpression) -> cst.BaseExpression:
    """``Net()`` in ``Net().to(device)`` or ``Net().cuda()``: methods that return the module itself."""
    while (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
           and value.func.attr.value in _MODULE_METHODS and isinstance(value.func.value, cst.Call)):
        value = value.func.value
    return value


def _submodules_in_order(ctx: FileContext, cls: cst.ClassDef) -> List[Tuple[str, Optional[int]]]:
    """(attribute, parameters) of the submodules ``__init__`` assigns, in the order ``forward``
    first uses them."""
    init = forward = None
    for item in cls.body.body:
        if isinstance(item, cst.FunctionDef):
            if item.name.value == "__init__":
                init = item
            elif item.name.value == "forward":
                forward = item
    if init is None or forward is None:
        return []
    created: Dict[str, Optional[int]] = {}
    for node in walk(init.body):
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.value, cst.Call):
            target = node.targets[0].target
            if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
                qualified = ctx.qualified_name(node.value.func) or ""
                if qualified in _FREE:
                    created[target.attr.value] = 0
                elif qualified in _PARAMETERS:
                    created[target.attr.value] = _PARAMETERS[qualified](_positional_ints(node.value))
                elif qualified.startswith("torch.nn.") or (isinstance(node.value.func, cst.Name)
                                                           and node.value.func.value[:1].isupper()):
                    created[target.attr.value] = None
    order: List[Tuple[str, Optional[int]]] = []
    seen: Set[str] = set()
    for node in _calls_in_execution_order(forward.body):
        func = node.func
        if (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
                and func.attr.value in created and func.attr.value not in seen):
            seen.add(func.attr.value)
            order.append((func.attr.value, created[func.attr.value]))
    return order


def _calls_in_execution_order(root: cst.CSTNode) -> List[cst.Call]:
    """Calls in the order they run: arguments before the call that takes them (post-order)."""
    found: List[cst.Call] = []
    stack: List[Tuple[cst.CSTNode, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            if isinstance(node, cst.Call):
                found.append(node)
            continue
        stack.append((node, True))
        children = list(iter_children(node))
        children.reverse()
        stack.extend((child, False) for child in children)
    return found


# ----------------------------------------------------------------------- evaluation loaders
_NO_GRAD = ("torch.no_grad", "torch.inference_mode")
_LOADERS = ("torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader", "poptorch.DataLoader")


def _under_no_grad(ctx: FileContext, node: cst.CSTNode) -> bool:
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.With) and any(
                isinstance(item.item, cst.Call) and ctx.qualified_name(item.item.func) in _NO_GRAD
                for item in ancestor.items):
            return True
        if isinstance(ancestor, cst.FunctionDef) and any(
                ctx.qualified_name(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) in _NO_GRAD
                for d in ancestor.decorators):
            return True
    return False


def _parameter_index(function: cst.FunctionDef, name: str) -> Optional[int]:
    for index, param in enumerate(function.params.params):
        if param.name.value == name:
            return index
    return None


def evaluation_loaders(ctx: FileContext) -> Set[str]:
    """Data loader variables that only feed evaluation: every loop over them (directly, or through
    the parameter of a function they are passed to) runs under ``torch.no_grad()``."""
    return {name for name, evaluating in _loader_loops(ctx).items() if evaluating and all(evaluating)}


def shared_loaders(ctx: FileContext) -> Set[str]:
    """Data loader variables that feed both training and evaluation: some loops over them run
    under ``torch.no_grad()`` (``evaluate(model, train_loader)``), some do not."""
    return {name for name, evaluating in _loader_loops(ctx).items() if any(evaluating) and not all(evaluating)}


def loader_names(ctx: FileContext) -> Set[str]:
    """Variables assigned a data loader (``train_loader = DataLoader(...)``)."""
    return {assign.targets[0].target.value for assign in ctx.nodes(cst.Assign)
            if isinstance(assign.value, cst.Call) and ctx.qualified_name(assign.value.func) in _LOADERS
            and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)}


# Per data loader variable, for each loop over it, whether the loop runs under `torch.no_grad()`.
_LOADER_LOOPS: SharedKey[Dict[str, List[bool]]] = SharedKey("loader-loops")


def _loader_loops(ctx: FileContext) -> Dict[str, List[bool]]:
    """Per data loader variable, for each loop over it (directly, or through the parameter of a
    function it is passed to), whether the loop runs under ``torch.no_grad()``."""
    return ctx.shared(_LOADER_LOOPS, lambda: _find_loader_loops(ctx))


def _find_loader_loops(ctx: FileContext) -> Dict[str, List[bool]]:
    loaders = loader_names(ctx)
    if not loaders:
        return {}
    uses: Dict[str, List[bool]] = {name: [] for name in loaders}
    functions = {function.name.value: function for function in ctx.nodes(cst.FunctionDef)}
    for loop in ctx.nodes(cst.For):
        iterable = loop.iter
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "enumerate" \
                and iterable.args:
            iterable = iterable.args[0].value
        if not isinstance(iterable, cst.Name):
            continue
        evaluating = _under_no_grad(ctx, loop)
        if iterable.value in uses:
            uses[iterable.value].append(evaluating)
        function = ctx.enclosing_function(loop)
        index = _parameter_index(function, iterable.value) if function is not None else None
        if index is None:
            continue
        for call in ctx.nodes(cst.Call):
            if isinstance(call.func, cst.Name) and functions.get(call.func.value) is function:
                arg = argument(call, iterable.value, index)
                if arg is not None and isinstance(arg.value, cst.Name) and arg.value.value in uses:
                    uses[arg.value.value].append(evaluating)
    return uses
