"""The PyTorch training-step and evaluation-loop analysis shared by the IPU3xx rules.

All rules see the ORIGINAL tree, so rules that depend on each other agree through this one
analysis: IPU305 (training model) recognises the plain step and the AMP step that IPU309 removes,
IPU302 (options) knows where the models are created, IPU306 (inference model) knows whether a
training model exists to detach, IPU308 (setOptimizer) knows which training model a scheduler
belongs to. The plan is computed once per file and cached on the context.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from porter import cstutil, scopes
from porter.context import FileContext, SharedKey, bound_names, code_of, in_loop, iter_children, walk
from porter.cstutil import append_args, argument, expr_call, keyword_arg, method_of, name_of, simple_assign
from porter.rule import rule_by_code
from porter.statements import rename
from porter.scopes import (
    Owner, assignments_of, common_point, creation_point, fresh_name, is_module_function, loads, local_calls,
    module_definitions, module_globals,
)
from porter.rules.torch._analysis.util import (
    BUILTINS, NO_GRAD, accelerators, asked_accumulation, autocast_block, is_autocast, qualified, selected,
    swaps_to_poptorch,
)

# Attributes of torch.nn.Module a wrapper attribute must not shadow.
_RESERVED = frozenset({"training", "forward", "train", "eval", "parameters", "modules", "children", "to",
                       "cuda", "half", "float", "double", "apply", "state_dict", "zero_grad", "buffers",
                       "type", "named_parameters", "register_buffer", "load_state_dict", "self"})
LR_SCHEDULER = "torch.optim.lr_scheduler."

_PLAN: SharedKey["Plan"] = SharedKey("torch-plan")
_MODELS: SharedKey[Set[str]] = SharedKey("torch-models")
_SCHEDULERS: SharedKey[Dict[str, cst.Call]] = SharedKey("torch-schedulers")


@dataclass
class Placement:
    """Where a PopTorch model is created once, and how it reaches the code that runs it."""

    owner: Owner                       # the scope the creation statement goes into
    before: cst.BaseStatement          # the creation goes right before this statement
    values: Dict[str, str]             # name used by the loop -> expression at the creation site
    function: Optional[cst.FunctionDef] = None   # hoisted: this function gets a new parameter
    calls: List[cst.Call] = field(default_factory=list)   # ... and its call sites a new argument


@dataclass
class TrainStep:
    backward: cst.BaseStatement
    loss_name: str
    scaler: Optional[str] = None
    step: Optional[cst.BaseStatement] = None
    update: Optional[cst.BaseStatement] = None
    loss: Optional[cst.BaseStatement] = None
    forward: Optional[cst.BaseStatement] = None
    # Statements between the forward and the loss that feed the loss from the model or its output
    # (a regulariser, a reshape): they move into the wrapper's ``forward`` with them.
    between: List[cst.BaseStatement] = field(default_factory=list)
    # ... those that feed it from the batch alone (a shifted target): they stay on the host, before the call.
    hoisted: List[cst.BaseStatement] = field(default_factory=list)
    autocast: Optional[cst.With] = None
    zero_grads: List[cst.BaseStatement] = field(default_factory=list)
    model: str = ""
    optimizer: str = ""
    output: Optional[str] = None
    inputs: List[str] = field(default_factory=list)
    captured: List[str] = field(default_factory=list)
    owner: Optional[Owner] = None
    placement: Optional[Placement] = None
    problem: Optional[str] = None
    problem_anchor: Optional[cst.CSTNode] = None
    clip: bool = False
    # `clip_grad_norm_(model.parameters(), max_norm)` between backward() and step(): it goes, and
    # the optimizer created by `clip_creation` takes `max_grad_norm=clip_norm` instead.
    clip_statement: Optional[cst.BaseStatement] = None
    unscales: List[cst.BaseStatement] = field(default_factory=list)   # `scaler.unscale_(optimizer)`
    clip_creation: Optional[cst.Call] = None
    clip_norm: str = ""
    self_loss: bool = False  # the model's forward already returns the loss: no wrapper
    name: str = ""
    wrapper: str = ""
    selected: bool = True   # False when IPU305 is not selected: nothing is rewritten

    @property
    def rewritten(self) -> bool:
        return self.problem is None and self.selected


@dataclass
class Evaluation:
    anchor: cst.BaseStatement   # the `with torch.no_grad():` block, or the statement holding the calls
    model: str
    calls: List[cst.Call]
    owner: Owner
    placement: Optional[Placement] = None
    problem: Optional[str] = None
    name: str = ""
    releases: List["Release"] = field(default_factory=list)
    reuses: bool = False   # an earlier evaluation of the same scope already creates the model


@dataclass
class Release:
    """Around one place that evaluates: detach the training model before it, the inference
    model after it, so that each finds a free IPU."""

    site: cst.BaseStatement
    training: Optional[str] = None   # detach this training model before the site
    guarded: bool = False            # ... only when it ran already (the site may come first)
    inference: bool = False          # detach the inference model after the site


@dataclass
class Plan:
    steps: List[TrainStep]
    evaluations: List[Evaluation]
    opts: Optional[str]            # the options variable the generated code uses
    opts_exists: bool
    existing_training: List[Tuple[str, cst.Call]]
    inference_opts: Optional[str] = None  # separate options for inference, when training's differ

    @property
    def rewrites(self) -> List[TrainStep]:
        return [step for step in self.steps if step.rewritten]

    def training_in(self, owner: Owner) -> Optional[Tuple[str, str]]:
        """(training model, optimizer) visible in ``owner``."""
        step = self.training_step_in(owner)
        if step is None:
            return None
        if step.placement.owner is owner:
            return step.name, step.placement.values[step.optimizer]
        return step.name, step.optimizer

    def training_step_in(self, owner: Owner) -> Optional[TrainStep]:
        """The rewritten step whose training model is visible in ``owner``."""
        for step in self.rewrites:
            if step.placement.owner is owner or step.placement.function is owner:
                return step
        return None


def plan(ctx: FileContext) -> Plan:
    return ctx.shared(_PLAN, lambda: _fixed_point_plan(ctx))


def _fixed_point_plan(ctx: FileContext) -> Plan:
    """The plan of the code as a second port sees it: the inference models the port creates call
    ``model.eval()`` (and ``model.train()``), which make ``model`` a model name everywhere in the
    file, so the plan is made again with those names until it adds none."""
    names = model_names(ctx)
    while True:
        result = _plan(ctx)
        added = {evaluation.placement.values[evaluation.model] for evaluation in result.evaluations
                 if evaluation.problem is None} - names
        added = {name for name in added if name.isidentifier()}
        if not added:
            return result
        names.update(added)


def _plan(ctx: FileContext) -> Plan:
    taken: Set[str] = set()
    existing_opts = assignments_of(ctx, "poptorch.Options")
    if existing_opts:
        opts, opts_exists = existing_opts[0][0], True
    else:
        opts, opts_exists = (fresh_name(ctx, "opts") if selected(ctx, "poptorch-options") else None), False
    steps = _train_steps(ctx)
    # (scope, model) already wrapped: the same name in another function is another model.
    wrapped: Set[Tuple[int, str]] = {(id(scopes.owner(ctx, call)), code_of(ctx, call.args[0].value))
                                     for _, call in assignments_of(ctx, "poptorch.trainingModel")
                                     if call.args and call.args[0].keyword is None}
    for step in steps:
        if step.problem is None and step.self_loss:
            model = step.placement.values[step.model]
            if {(id(step.placement.owner), model), (id(ctx.module), model)} & wrapped:
                # poptorch.trainingModel raises on a model it already wraps
                step.problem_anchor = step.backward
                step.problem = (f"`{model}` is already wrapped by a `poptorch.trainingModel` above: reuse that "
                                "training model here (or call its `destroy()` first)")
            wrapped.add((id(step.placement.owner), model))
    for step in steps:
        step.selected = selected(ctx, "training-model")
        if not step.rewritten:
            continue
        step.name = fresh_name(ctx, "training_model", taken=taken)
        taken.add(step.name)
        step.wrapper = fresh_name(ctx, "TrainingModelWithLoss", taken=taken)
        taken.add(step.wrapper)
    evaluations = _evaluations(ctx, steps)
    evaluations = [e for e in evaluations if selected(ctx, "inference-model")]
    order = {id(call): index for index, call in enumerate(ctx.nodes(cst.Call))}
    evaluations.sort(key=lambda e: order[id(e.calls[0])])
    created: Dict[Tuple[int, str], Evaluation] = {}
    for evaluation in evaluations:
        if evaluation.problem is not None:
            continue
        placement = evaluation.placement
        key = (id(placement.owner), placement.values[evaluation.model])
        earlier = created.get(key) if placement.function is None else None
        if earlier is not None:
            body = list(ctx.siblings(placement.before))
            first = earlier.placement.before
            if first in body and body.index(first) <= body.index(placement.before):
                evaluation.name, evaluation.reuses = earlier.name, True
                continue
        evaluation.name = fresh_name(ctx, "inference_model", taken=taken)
        taken.add(evaluation.name)
        created.setdefault(key, evaluation)
    result = Plan(steps, evaluations, opts, opts_exists, assignments_of(ctx, "poptorch.trainingModel"))
    asked = asked_accumulation(ctx) > 1
    accumulates = opts is not None and ((opts_exists and _accumulates(ctx, opts)) or asked)
    if selected(ctx, "poptorch-options") and any(e.problem is None for e in evaluations) and accumulates:
        result.inference_opts = fresh_name(ctx, "inference_opts", taken=taken)
    _plan_detach(ctx, result)
    return result


def _accumulates(ctx: FileContext, opts: str) -> bool:
    """True when ``opts`` sets gradient accumulation: an inference model cannot use it (4.3)."""
    for call in ctx.nodes(cst.Call):
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "gradientAccumulation" \
                and isinstance(func.value, cst.Attribute) and func.value.attr.value == "Training" \
                and name_of(func.value.value) == opts:
            return not (len(call.args) == 1 and isinstance(call.args[0].value, cst.Integer)
                        and call.args[0].value.value == "1")
    return False


# --------------------------------------------------------------------------------- placement
def _assigned_within(node: cst.CSTNode) -> Set[str]:
    names: Set[str] = set()
    if not isinstance(node, cst.BaseCompoundStatement):
        return names
    for child in walk(node):
        if isinstance(child, cst.AssignTarget):
            names.update(bound_names(child.target))
        elif isinstance(child, (cst.For, cst.AugAssign, cst.AnnAssign)):
            names.update(bound_names(child.target))
    return names


def _place(ctx: FileContext, node: cst.CSTNode, owner: Owner, needed: List[str], what: str,
           param: str, rebuilt: Set[str] = frozenset()) -> Tuple[Optional[Placement], Optional[str]]:
    """Create once: in ``owner`` before its loop, or, when ``owner`` is a function called in a
    loop (once per epoch), in the caller before that loop, passed in as a new parameter."""
    if is_module_function(ctx, owner):
        calls = local_calls(ctx, owner)
        looped = [call for call in calls if in_loop(ctx, call, scopes.owner(ctx, call))]
        if looped:
            return _hoist(ctx, owner, calls, needed, what, param)
    before = creation_point(ctx, node, owner)
    if before is None:
        return None, "could not find where to create it"
    late = _assigned_within(before) & set(needed) - _rebuilt(ctx, before, rebuilt)
    if late:
        name = sorted(late)[0]
        if isinstance(before, (cst.For, cst.While)):
            return None, f"`{name}` is assigned inside the loop; create the {what} once, before the loop"
        block = _KEYWORDS.get(type(before), "compound")
        return None, (f"`{name}` is assigned inside the `{block}` block that uses it; assign `{name}` before "
                      f"that block, then create the {what} once, between the two")
    return Placement(owner, before, {name: name for name in needed}), None


_KEYWORDS = {cst.With: "with", cst.If: "if", cst.Try: "try", cst.FunctionDef: "def", cst.ClassDef: "class"}


def _rebuilt(ctx: FileContext, loop: cst.CSTNode, names: Set[str]) -> Set[str]:
    """Those of ``names`` that ``loop`` binds only by plain ``name = <call>`` statements: an
    optimizer rebuilt there reaches the training model through ``setOptimizer`` (IPU308)."""
    kept = set(names)
    for child in walk(loop):
        if isinstance(child, (cst.For, cst.AugAssign, cst.AnnAssign)):
            kept -= set(bound_names(child.target))
        elif isinstance(child, cst.Assign):
            plain = len(child.targets) == 1 and isinstance(child.targets[0].target, cst.Name) \
                and isinstance(child.value, cst.Call)
            if not plain:
                for target in child.targets:
                    kept -= set(bound_names(target.target))
    return kept


def _hoist(ctx, function: cst.FunctionDef, calls: List[cst.Call], needed: List[str], what: str,
           param: str) -> Tuple[Optional[Placement], Optional[str]]:
    fname = function.name.value
    callers = {id(scopes.owner(ctx, call)) for call in calls}
    if len(callers) != 1:
        return None, (f"`{fname}()` is called from several functions: create the {what} once and pass it in")
    params = function.params
    if isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None or params.posonly_params:
        return None, f"`{fname}()` takes *args/**kwargs: create the {what} once and pass it in"
    caller = scopes.owner(ctx, calls[0])
    before = common_point(ctx, calls, caller) if len(calls) > 1 else creation_point(ctx, calls[0], caller)
    if before is None or any(arg.star for call in calls for arg in call.args):
        return None, f"create the {what} once, outside the loop that calls `{fname}()`, and pass it in"
    names = [p.name.value for p in params.params]
    local = set(_local_bindings(function))
    values: Dict[str, str] = {}
    for call in calls:
        found, problem = _call_values(ctx, function, call, needed, local, what)
        if problem is not None:
            return None, problem
        if values and found != values:
            return None, f"`{fname}()` is called with different models: create the {what} once and pass it in"
        values = found
    late = _assigned_within(before)
    for value in values.values():
        if any(name.value in late for name in loads(cstutil.expression(value))):
            return None, f"create the {what} once, before the loop that calls `{fname}()`, and pass it in"
    if param in names:
        return None, f"`{fname}()` already has a `{param}` parameter"
    return Placement(caller, before, values, function, list(calls)), None


def _call_values(ctx, function: cst.FunctionDef, call: cst.Call, needed: List[str], local: Set[str],
                 what: str) -> Tuple[Dict[str, str], Optional[str]]:
    """What the names the model needs are at one call site of ``function``."""
    fname = function.name.value
    names = [p.name.value for p in function.params.params]
    positional = [arg for arg in call.args if arg.keyword is None]
    values: Dict[str, str] = {}
    for name in needed:
        if name in names:
            index = names.index(name)
            arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)
            if arg is None and index < len(positional):
                arg = positional[index]
            if arg is None:
                return {}, f"`{fname}()` is called without `{name}`: create the {what} once and pass it in"
            if name in needed[:2] and not isinstance(arg.value, (cst.Name, cst.Attribute)):
                return {}, (f"`{fname}()` gets `{name}` as an expression: create the {what} once, from a "
                            "variable, and pass it in")
            values[name] = code_of(ctx, arg.value)
        elif name not in local and name in module_globals(ctx):
            values[name] = name
        else:
            return {}, (f"`{name}` is created inside `{fname}()`, which runs once per epoch: create the "
                        f"{what} once, outside, and pass it in")
    return values, None


def _local_bindings(function: cst.FunctionDef) -> List[str]:
    names = [p.name.value for p in function.params.params]
    for child in walk(function.body):
        if isinstance(child, (cst.AssignTarget, cst.For)):
            names.extend(bound_names(child.target))
    return names


# ----------------------------------------------------------------------------- training steps
def model_names(ctx: FileContext) -> Set[str]:
    """Variables used as models: ``m.parameters()``, ``m.train()``, ``m.eval()``, ``m.to(device)``."""
    def compute():
        names = set()
        for call in ctx.nodes(cst.Call):
            receiver = name_of(method_of(call, "parameters", "train", "eval", "named_parameters"))
            if receiver is not None:
                names.add(receiver)
        for statement in ctx.nodes(cst.SimpleStatementLine):
            # `model.to(device)` on a line of its own moves a module in place (a tensor's `.to` would be lost)
            receiver = name_of(method_of(expr_call(statement), "to", "cuda"))
            if receiver is not None:
                names.add(receiver)
        return names
    return ctx.shared(_MODELS, compute)


def scheduler_names(ctx: FileContext) -> Dict[str, cst.Call]:
    def compute():
        found = {}
        for assign in ctx.nodes(cst.Assign):
            if len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name) \
                    and isinstance(assign.value, cst.Call) and _scheduler_like(assign.value.func):
                full = qualified(ctx, assign.value.func) or ""
                if full.startswith(LR_SCHEDULER):
                    found[assign.targets[0].target.value] = assign.value
        return found
    return ctx.shared(_SCHEDULERS, compute)


def _scheduler_like(func: cst.BaseExpression) -> bool:
    """A cheap test before resolving the name: the class names of torch.optim.lr_scheduler."""
    last = func.attr.value if isinstance(func, cst.Attribute) else name_of(func) or ""
    return "LR" in last or last.endswith(("Restarts", "Scheduler"))


def _autocast_with(ctx: FileContext, statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.With) and any(is_autocast(ctx, item.item) for item in statement.items)


def _step_body(ctx: FileContext, backward: cst.BaseStatement) -> Optional[List[cst.BaseStatement]]:
    """The statements around ``backward()`` as they are once IPU309 has replaced each
    autocast-only ``with`` block by its body (the block holding ``backward()`` too): the step is
    planned on the code a second port would see, so one port reaches the fixed point."""
    block = ctx.block_of(backward)
    if block is None:
        return None
    if not selected(ctx, "remove-amp"):
        return list(block.body)
    while autocast_block(ctx, ctx.parent(block)) and ctx.block_of(ctx.parent(block)) is not None:
        block = ctx.block_of(ctx.parent(block))
    return _without_autocast(ctx, block.body)


def _without_autocast(ctx: FileContext, statements) -> List[cst.BaseStatement]:
    flat: List[cst.BaseStatement] = []
    for statement in statements:
        if autocast_block(ctx, statement):
            flat.extend(_without_autocast(ctx, statement.body.body))
        else:
            flat.append(statement)
    return flat


def _train_steps(ctx: FileContext) -> List[TrainStep]:
    steps = []
    for call in ctx.nodes(cst.Call):
        receiver = method_of(call, "backward")
        if receiver is None:
            continue
        statement = ctx.statement_of(call)
        if expr_call(statement) is not call:
            continue
        scaler = None
        engine = _engine(ctx, call, receiver, statement)
        if engine is not None:
            steps.append(TrainStep(statement, "", problem=engine, problem_anchor=call))
            continue
        if call.args and code_of(ctx, receiver) in accelerators(ctx) and len(call.args) == 1:
            receiver = call.args[0].value   # `accelerator.backward(loss)` is `loss.backward()` on one device
        if isinstance(receiver, cst.Call) and len(receiver.args) == 1 and name_of(method_of(receiver, "scale")):
            scaler = name_of(method_of(receiver, "scale"))
            receiver = receiver.args[0].value
        loss_name = name_of(receiver)
        if loss_name is None:  # `criterion(out, y).backward()`, `out.sum().backward()`
            steps.append(TrainStep(statement, "", problem=(
                f"the loss `{code_of(ctx, receiver)}` has no name: assign it (`loss = ...`) and call "
                "`loss.backward()`, then port again; the porter moves a named loss into the model's `forward`"),
                problem_anchor=call))
            continue
        step = TrainStep(statement, loss_name, scaler)
        step.problem = _analyse(ctx, step)
        if step.problem is None and step.clip_statement is not None:
            step.problem = _clip_in_optimizer(ctx, step)
        if step.problem is not None and step.problem_anchor is None:
            step.problem_anchor = call
        steps.append(step)
    loops: Dict[int, List[TrainStep]] = {}
    for step in steps:
        loop = ctx.enclosing(step.backward, cst.For) or ctx.enclosing(step.backward, cst.While)
        loops.setdefault(id(loop), []).append(step)
    for group in loops.values():
        if len(group) > 1:
            for step in group:
                step.problem_anchor = step.backward
                step.problem = ("this loop runs several backward passes (several losses or optimizers, e.g. a "
                                "GAN): a `poptorch.trainingModel` runs one loss and one optimizer; rewrite it by "
                                "hand (one training model per optimizer, or one loss through "
                                "`poptorch.identity_loss`)")
    return steps


def _engine(ctx: FileContext, call: cst.Call, receiver: cst.BaseExpression,
            statement: cst.BaseStatement) -> Optional[str]:
    """Why ``engine.backward(loss)`` followed by ``engine.step()`` cannot be ported: a training
    engine (DeepSpeed's) owns the model, the optimizer and the step; None for other calls."""
    engine = name_of(receiver)
    if engine is None or not call.args or call.args[0].keyword is not None \
            or code_of(ctx, receiver) in accelerators(ctx):
        return None
    if not any(name_of(method_of(expr_call(later), "step")) == engine for later in ctx.siblings(statement)):
        return None
    return (f"`{engine}` is a training engine (`{engine}.backward(loss)`, `{engine}.step()`, as DeepSpeed's "
            "`initialize` returns): PopTorch runs no engine; build the model with its loss in `forward` and a "
            "`torch.optim` optimizer, and train through `poptorch.trainingModel` by hand (replication: "
            "`opts.replicationFactor(n)`)")


def _zero_grad(statement: cst.CSTNode) -> bool:
    return name_of(method_of(expr_call(statement), "zero_grad")) is not None


def _describe(ctx: FileContext, statements: List[cst.BaseStatement]) -> Tuple[str, bool]:
    clip = any(isinstance(node, cst.Name) and node.value in ("clip_grad_norm_", "clip_grad_value_")
               or isinstance(node, cst.Attribute) and node.attr.value in ("clip_grad_norm_", "clip_grad_value_")
               for statement in statements for node in walk(statement))
    first = code_of(ctx, statements[0].with_changes(leading_lines=())).strip().splitlines()[0]
    return first, clip


def _between_problem(first: str, clip: bool, why: str = "") -> str:
    hint = (" `poptorch.optim` optimizers take `max_grad_norm=` for gradient clipping by norm."
            if clip else "")
    return (f"code between `backward()` and `step()` (`{first}`) cannot run inside "
            f"`poptorch.trainingModel`{why}: the step is left as it is; move the loss into the model's "
            f"`forward` and use `poptorch.trainingModel` by hand.{hint}")


_CLIPPED_OPTIMIZERS = {f"{package}.optim.{cls}" for package in ("torch", "poptorch") for cls in ("SGD", "Adam", "AdamW")}


def _clip_by_norm(ctx: FileContext, statement: cst.BaseStatement) -> Optional[Tuple[cst.Call, cst.Call]]:
    """``(params, max_norm)`` of a statement that is only ``clip_grad_norm_(m.parameters(), max_norm)``
    by the L2 norm (its result unused): what ``max_grad_norm=`` of a PopTorch optimizer does."""
    call = expr_call(statement)
    if call is None or qualified(ctx, call.func) not in ("torch.nn.utils.clip_grad_norm_",
                                                           "torch.nn.utils.clip_grad.clip_grad_norm_"):
        return None
    params, max_norm = argument(call, "parameters", 0), argument(call, "max_norm", 1)
    norm_type = argument(call, "norm_type", 2)
    known = {"parameters", "max_norm", "norm_type"}
    if params is None or max_norm is None or any(arg.star for arg in call.args) \
            or len(call.args) > 3 or any(arg.keyword is not None and arg.keyword.value not in known for arg in call.args):
        return None
    if norm_type is not None and code_of(ctx, norm_type.value) not in ("2", "2.0"):
        return None   # PopTorch clips by the L2 norm only
    if not isinstance(params.value, cst.Call) or params.value.args or method_of(params.value, "parameters") is None:
        return None
    return params.value, max_norm.value


def _clip_in_optimizer(ctx: FileContext, step: TrainStep) -> Optional[str]:
    """Move the clip of the step into its optimizer's creation (``max_grad_norm=``): PopTorch clips
    the gradients of all the parameters the optimizer trains, so the clip must take the parameters of
    the model the optimizer is built from, by the L2 norm, with a ``max_norm`` the creation can read.
    Sets ``clip_creation``/``clip_norm``; the problem when it cannot."""
    first, _ = _describe(ctx, [step.clip_statement])
    params, max_norm = _clip_by_norm(ctx, step.clip_statement)
    placement = step.placement
    if name_of(method_of(params, "parameters")) != step.model or step.self_loss:
        return _between_problem(first, True, f" (it clips other parameters than `{step.model}`'s)")
    optimizer, model = placement.values[step.optimizer], placement.values[step.model]
    created = [(index, value) for index, (_, name, value) in enumerate(scopes.assignments(ctx, placement.owner))
               if name == optimizer]
    creation = created[0][1] if len(created) == 1 else None
    if not _clippable_creation(ctx, creation, f"{model}.parameters()"):
        return _between_problem(first, True, (
            f" (`{optimizer}` is not created once, as `SGD`, `Adam` or `AdamW` of `{model}.parameters()`, "
            "where the training model is)"))
    norm = _readable_at(ctx, step, max_norm, created[0][0])
    if norm is None:
        return _between_problem(first, True, (
            f" (`{code_of(ctx, max_norm)}` cannot be read where `{optimizer}` is created)"))
    step.clip_creation, step.clip_norm = creation, norm
    return None


def _clippable_creation(ctx: FileContext, creation: Optional[cst.BaseExpression], params: str) -> bool:
    """``creation`` builds a PopTorch optimizer that takes ``max_grad_norm`` (or its ``torch.optim``
    twin, which the poptorch-optim rule swaps) from exactly ``params``, with no clipping of its own."""
    if not isinstance(creation, cst.Call) or (qualified(ctx, creation.func) or "") not in _CLIPPED_OPTIMIZERS:
        return False
    swapped = selected(ctx, "poptorch-optim") and ctx.allowed(creation, rule_by_code("poptorch-optim").code) \
        and swaps_to_poptorch(ctx, creation)
    if qualified(ctx, creation.func).startswith("torch.") and not swapped:
        return False   # it stays a torch.optim optimizer, which takes no max_grad_norm
    given = argument(creation, "params", 0)
    return given is not None and code_of(ctx, given.value) == params \
        and cstutil.keyword(creation, "max_grad_norm") is None


def _readable_at(ctx: FileContext, step: TrainStep, value: cst.BaseExpression, created: int) -> Optional[str]:
    """``value`` (read in the step) as the code of the placement's scope that has the same value
    where the optimizer is created (its ``created``-th assignment there); None when there is none."""
    placement = step.placement
    names = sorted({name.value for name in loads(value)})
    mapping = {name: name for name in names}
    if placement.function is not None:   # the step's function is called by the placement's scope
        local = set(_local_bindings(placement.function))
        found = [_call_values(ctx, placement.function, call, names, local, "optimizer") for call in placement.calls]
        if not found or any(problem is not None or values != found[0][0] for values, problem in found):
            return None
        mapping = found[0][0]
    elif placement.owner is not step.owner:
        return None
    code = code_of(ctx, rename(value, mapping))
    assigned = scopes.assignments(ctx, placement.owner)
    params = [] if placement.owner is ctx.module else scopes.parameter_names(placement.owner)
    for name in loads(cstutil.expression(code)):
        indices = [index for index, (_, bound, _) in enumerate(assigned) if bound == name.value]
        if name.value in params and not indices:
            continue
        if indices and max(indices) < created:
            continue
        if not indices and name.value in module_globals(ctx) | BUILTINS:
            continue
        return None
    return code


def _no_step_reason(ctx: FileContext, backward: cst.BaseStatement) -> str:
    """Why a ``backward()`` with no ``optimizer.step()`` after it cannot be ported, as precisely as
    the code shows: an optimizer closure (LBFGS), a step under a condition (accumulation), or else."""
    function = ctx.enclosing_function(backward)
    if function is not None and any(
            method_of(call, "step") is not None and any(name_of(arg.value) == function.name.value for arg in call.args)
            for call in ctx.nodes(cst.Call)):
        return (f"`backward()` runs in the optimizer closure `{function.name.value}` "
                "(`optimizer.step(closure)`, as LBFGS needs): PopTorch optimizers take no closure; rewrite "
                "this step by hand with the loss in the model's `forward` and `poptorch.trainingModel`")
    loop = ctx.enclosing(backward, cst.For) or ctx.enclosing(backward, cst.While)
    if loop is not None and any(method_of(expr_call(node), "step") is not None and ctx.enclosing(node, cst.If)
                                for node in walk(loop) if isinstance(node, cst.SimpleStatementLine)):
        return ("the optimizer steps only under a condition, after several `backward()` calls (gradient "
                "accumulation): rewrite this step by hand with `poptorch.trainingModel` and "
                "`opts.Training.gradientAccumulation(n)`")
    return ("`loss.backward()` is not followed by `optimizer.step()` in the same block: rewrite this step by "
            "hand with the loss in the model's `forward` and `poptorch.trainingModel`")


def _analyse(ctx: FileContext, step: TrainStep) -> Optional[str]:
    body = _step_body(ctx, step.backward)
    if body is None:
        return "`backward()` is not on a line of its own: rewrite this training step by hand"
    index = body.index(step.backward)
    step.owner = scopes.owner(ctx, step.backward)
    # The optimizer step after backward().
    at = None
    for later in range(index + 1, len(body)):
        call = expr_call(body[later])
        if step.scaler is not None:
            receiver = name_of(method_of(call, "step"))
            if receiver == step.scaler and len(call.args) == 1 and name_of(call.args[0].value):
                step.optimizer, at = call.args[0].value.value, later
        else:
            receiver = name_of(method_of(call, "step"))
            if receiver is not None and not call.args and receiver not in scheduler_names(ctx):
                step.optimizer, at = receiver, later
        if at is not None:
            break
    if at is None:
        for later in body[index + 1:]:
            call = expr_call(later)
            receiver = method_of(call, "step")
            if receiver is not None and (call.args or not isinstance(receiver, cst.Name)):
                step.problem_anchor = later
                return (f"`{code_of(ctx, call)}` is not a plain `optimizer.step()` on a variable: rewrite this "
                        "step by hand with the loss in the model's `forward` and `poptorch.trainingModel`")
        return _no_step_reason(ctx, step.backward)
    step.step = body[at]
    # `scaler.unscale_(optimizer)` readies the gradients for a clip: it goes with the scaler.
    step.unscales = [s for s in body[index + 1:at] if step.scaler is not None
                     and name_of(method_of(expr_call(s), "unscale_")) == step.scaler]
    extra = [s for s in body[index + 1:at] if not _zero_grad(s) and s not in step.unscales]
    if extra:
        first, step.clip = _describe(ctx, extra)
        step.problem_anchor = extra[0]
        if len(extra) > 1 or _clip_by_norm(ctx, extra[0]) is None:
            return _between_problem(first, step.clip)
        step.clip_statement = extra[0]
    if step.scaler is not None and at + 1 < len(body):
        if name_of(method_of(expr_call(body[at + 1]), "update")) == step.scaler:
            step.update = body[at + 1]
    step.zero_grads = [s for s in body if _zero_grad(s)]
    # The loss (and the forward) before backward().
    before = index - 1
    while before >= 0 and (_zero_grad(body[before]) or _neutral(body[before], step.loss_name)):
        before -= 1
    if before < 0:
        return "no loss computation before `backward()`: rewrite this step by hand"
    previous = body[before]
    if _autocast_with(ctx, previous):
        step.autocast = previous
        inner = list(previous.body.body) if isinstance(previous.body, cst.IndentedBlock) else []
        if len(inner) not in (1, 2) or len(previous.items) != 1:
            return "the `autocast` block holds more than the forward and the loss: rewrite this step by hand"
        step.loss = inner[-1]
        step.forward = inner[0] if len(inner) == 2 else None
    else:
        step.loss = previous
        step.forward = None
        earlier = before - 1
        while earlier >= 0 and _zero_grad(body[earlier]):
            earlier -= 1
        if earlier >= 0:
            step.forward = body[earlier]
    loss = simple_assign(step.loss)
    if loss is not None and isinstance(loss[1], cst.Call) and name_of(loss[1].func) in model_names(ctx) \
            and qualified(ctx, loss[1].func) is None and step.loss_name in bound_names(loss[0]) \
            and (step.autocast is None or step.forward is None):
        # `output, loss = model(x, y)`: the model computes its loss already.
        step.model, step.self_loss, step.forward = loss[1].func.value, True, None
        step.placement, problem = _place(ctx, step.backward, step.owner, [step.model, step.optimizer],
                                         "training model", "training_model")
        return problem
    if loss is None or name_of(loss[0]) != step.loss_name:
        return f"`{step.loss_name}` is not computed right before `backward()`: rewrite this step by hand"
    if step.forward is not None and not _is_forward(ctx, step, step.forward, [loss[1]]):
        if step.autocast is not None:
            return "the `autocast` block holds more than the forward and the loss: rewrite this step by hand"
        step.forward = None
    if step.forward is None:
        calls = [n for n in walk(loss[1]) if isinstance(n, cst.Call) and name_of(n.func) in _trainable(ctx, step)]
        if calls:
            step.model = calls[0].func.value
        elif step.autocast is not None:
            return "the model call feeding the loss was not found: rewrite this step by hand"
        else:
            problem = _earlier_forward(ctx, step, body, before)
            if problem is not None:
                return problem
    return _classify(ctx, step, body, index)


def _neutral(statement: cst.BaseStatement, loss_name: str) -> bool:
    """A statement between the loss and ``backward()`` that can run after the training model
    call (metrics, logging): it does not assign the loss nor run a backward pass or a step."""
    for node in walk(statement):
        if isinstance(node, cst.Call) and method_of(node, "backward", "step", "zero_grad") is not None:
            return False
        if isinstance(node, (cst.AssignTarget, cst.AugAssign)) and loss_name in bound_names(node.target):
            return False
        if isinstance(node, cst.With):
            return False
    return True


# Calls that need a host value: they cannot run inside the training model's `forward`.
_HOST_ONLY = ("item", "cpu", "numpy", "tolist", "backward", "step", "zero_grad")


def _earlier_forward(ctx: FileContext, step: TrainStep, body: List[cst.BaseStatement],
                     loss_at: int) -> Optional[str]:
    """The model call further up than right before the loss, the statements in between (plain
    assignments: shifted targets, masks, a regulariser) moving into the wrapper with the forward
    and the loss; a problem naming what stops it, None when the step is found."""
    between: List[cst.BaseStatement] = []
    for statement in reversed(body[:loss_at]):
        if _zero_grad(statement):
            continue
        if _is_forward(ctx, step, statement, [step.loss, *between], known=True):
            step.forward = statement
            step.hoisted, step.between = _split_host(step, _feeding_loss(step.loss, between))
            return _kept_in_forward(ctx, step)
        if not _assignments(statement):
            break
        between.insert(0, statement)
    models = sorted(_trainable(ctx, step))
    if not models:
        return ("the model call feeding the loss was not found: no variable here is used as a model "
                "(`model.parameters()` given to the optimizer, `model.train()`, `model.eval()`, "
                "`model.to(device)`); call `model.train()` before the loop and port again, or rewrite this step "
                "by hand")
    return (f"the model call feeding the loss was not found: no statement `output = {models[0]}(...)` of its "
            "own feeds the loss (only a call of the model the optimizer trains is taken for the forward); "
            "rewrite this step by hand")


def _assignments(statement: cst.BaseStatement) -> bool:
    """Plain assignments to names, with no call that needs a host value."""
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, cst.Assign)
        and all(isinstance(n, (cst.Name, cst.Tuple, cst.Element)) for t in small.targets for n in walk(t.target))
        for small in statement.body) and not any(
        isinstance(node, cst.Call) and (method_of(node, *_HOST_ONLY) is not None or name_of(node.func) == "print")
        for node in walk(statement))


def _feeding_loss(loss: cst.BaseStatement, between: List[cst.BaseStatement]) -> List[cst.BaseStatement]:
    """Those of ``between`` the loss reads, directly or through each other; the others (metrics
    on the output: ``_, preds = torch.max(outputs, 1)``) stay in the loop, after the training
    model's call, which returns the output they read."""
    needed = {name.value for name in loads(loss)}
    feeding: List[cst.BaseStatement] = []
    for statement in reversed(between):
        if _bound(statement) & needed:
            feeding.insert(0, statement)
            needed |= {name.value for name in loads(statement)}
    return feeding


def _bound(statement: cst.BaseStatement) -> Set[str]:
    return {name for small in statement.body if isinstance(small, cst.Assign)
            for target in small.targets for name in bound_names(target.target)}


def _split_host(step: TrainStep, feeding: List[cst.BaseStatement]):
    """(hoisted, moved): a statement that reads neither the model nor its output (a target
    shifted by one: ``tgt_out = tgt[1:]``) can run on the host before the model call, as it
    would have, and reach the loss as one more input; the others move into the wrapper."""
    inside = {step.model, *bound_names(simple_assign(step.forward)[0])}
    read = {name.value for name in loads(step.forward)}   # what the wrapper reads before this statement
    hoisted: List[cst.BaseStatement] = []
    moved: List[cst.BaseStatement] = []
    for statement in feeding:
        bound, reads = _bound(statement), {name.value for name in loads(statement)}
        if reads & inside or bound & (read | inside):
            moved.append(statement)
            inside |= bound
            read |= reads
        else:
            hoisted.append(statement)
    return hoisted, moved


def _kept_in_forward(ctx: FileContext, step: TrainStep) -> Optional[str]:
    """A name the moved statements bind, other than the model's output, exists only inside the
    wrapper's ``forward`` after the port: it must not be read anywhere else."""
    inside = {id(name) for statement in (step.forward, *step.between, step.loss) for name in loads(statement)}
    for name in loads(step.owner):
        if id(name) in inside or name.value == step.loss_name:   # the loss is returned
            continue
        statement = next((s for s in step.between if name.value in _bound(s)), None)
        if statement is not None:
            first = code_of(ctx, statement.with_changes(leading_lines=())).strip()
            return (f"`{first}` feeds the loss from the model or its output, and `{name.value}` is read after "
                    f"the loss too: it would exist only inside the training model; compute `{name.value}` "
                    "again after the step, or rewrite this step by hand")
    return None


def _is_forward(ctx: FileContext, step: TrainStep, statement: cst.CSTNode,
                readers: List[cst.CSTNode], known: bool = False) -> bool:
    """``statement`` is ``output = model(...)`` (or ``output, hidden = model(...)``) and
    ``readers`` (the loss, and what leads to it) read its output. The call must be of the model
    the optimizer trains (see ``_trainable``): ``inputs, labels = split(batch)`` is not. Only in
    a file that shows no model at all is a call right before the loss (not ``known``) taken for it,
    and only when it reads no output of an earlier call of its block: ``logits = head(features)``
    after ``features = net(images)`` is a head on the model's output, not the model."""
    assign = simple_assign(statement)
    if assign is None or not isinstance(assign[1], cst.Call) or not _names_only(assign[0]):
        return False
    call = assign[1]
    while isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Call):
        call = call.func.value
    func = name_of(call.func)
    if func is None or func in BUILTINS or func in module_definitions(ctx) or qualified(ctx, call.func):
        return False
    trainable = _trainable(ctx, step)
    if func not in trainable and (trainable or known or not isinstance(assign[0], cst.Name)
                                  or _reads_computed(ctx, statement, call)):
        return False
    outputs = set(bound_names(assign[0]))
    if not any(name.value in outputs for reader in readers for name in loads(reader)):
        return False
    step.model, step.output = func, code_of(ctx, assign[0])
    return True


def _reads_computed(ctx: FileContext, statement: cst.CSTNode, call: cst.Call) -> bool:
    """Whether ``call`` reads a name that a statement before ``statement`` in its block binds to
    the output of a call of a variable (``features = net(images)``, a network). What a method, a
    builtin or a function of the file or of a library makes of the batch (``images =
    images.float()``, ``x = preprocess(x)``) is still the model's input."""
    siblings = list(ctx.siblings(statement))
    computed = set()
    for earlier in siblings[:siblings.index(statement)]:
        assign = simple_assign(earlier)
        if assign is not None and isinstance(assign[1], cst.Call) and _calls_variable(ctx, assign[1]):
            computed.update(bound_names(assign[0]))
    return any(name.value in computed for arg in call.args for name in loads(arg.value))


def _calls_variable(ctx: FileContext, call: cst.Call) -> bool:
    """``net(images)``: a call of a name that is no builtin, no function or class of the file and
    no import (a module, a network held in a variable or a parameter)."""
    func = call.func
    return (isinstance(func, cst.Name) and func.value not in BUILTINS and func.value not in module_definitions(ctx)
            and not qualified(ctx, func))


def _trainable(ctx: FileContext, step: TrainStep) -> Set[str]:
    """The variables the model call may be of: those whose parameters the step's optimizer takes
    where it is created (in this scope, the module, or the callers that pass it in), else the
    variables the file uses as models. A call of any other variable (``w = weights_fn(y)``, a
    frozen ``backbone(x)``) is not the model, whatever line it is on. Of the file's models, only
    those the step can see count: ``model`` of another function is not the ``net`` a test is given."""
    optimized = _optimized(ctx, step.owner, step.optimizer)
    if optimized:
        return optimized
    seen: Set[str] = set(module_globals(ctx))
    scope = step.owner if step.owner is not ctx.module else None
    while scope is not None:  # the step's function and those it is nested in
        seen.update(_local_bindings(scope))
        scope = ctx.enclosing_function(scope)
    elsewhere = {name for function in ctx.nodes(cst.FunctionDef) for name in _local_bindings(function)}
    return model_names(ctx) - (elsewhere - seen)


def _optimized(ctx: FileContext, scope: Owner, optimizer: str, depth: int = 0) -> Set[str]:
    """The variables of ``scope`` whose ``.parameters()`` the optimizer ``optimizer`` takes, as
    far as the file shows (empty when it does not)."""
    values = [value for _, name, value in scopes.assignments(ctx, scope) if name == optimizer]
    if values:
        return _parameter_owners(ctx, scope, values)
    if scope is ctx.module:
        return set()
    params = [param.name.value for param in scope.params.params]
    if optimizer not in params:
        return set() if optimizer in _local_bindings(scope) else _optimized(ctx, ctx.module, optimizer)
    calls = local_calls(ctx, scope) if is_module_function(ctx, scope) and depth < 3 else []
    found: Set[str] = set()
    for call in calls:
        # what each caller passes, named back as this function's parameters
        passed = {param: argument(call, param, index) for index, param in enumerate(params)}
        given = name_of(passed[optimizer].value) if passed[optimizer] is not None else None
        owners = _optimized(ctx, scopes.owner(ctx, call), given, depth + 1) if given else set()
        named = {param for param, arg in passed.items() if arg is not None and name_of(arg.value) in owners}
        if not named:
            return set()
        found |= named
    return found


def _parameter_owners(ctx: FileContext, scope: Owner, values: List[Optional[cst.BaseExpression]]) -> Set[str]:
    """The variables whose ``.parameters()`` ``values`` read, also through a variable of ``scope``
    (``params = model.parameters()``): ``model`` of ``model.fc.parameters()`` too."""
    owners: Set[str] = set()
    seen: Set[str] = set()
    while values:
        value = values.pop()
        for node in walk(value) if value is not None else ():
            receiver = method_of(node, "parameters", "named_parameters")
            while isinstance(receiver, cst.Attribute):
                receiver = receiver.value
            if name_of(receiver) is not None:
                owners.add(receiver.value)
            elif isinstance(node, cst.Name) and node.value not in seen:
                seen.add(node.value)
                values.extend(v for _, name, v in scopes.assignments(ctx, scope) if name == node.value)
    return owners


def _names_only(target: cst.BaseExpression) -> bool:
    """``output`` or ``output, hidden``: no starred, subscript or attribute target."""
    if isinstance(target, cst.Name):
        return True
    return isinstance(target, cst.Tuple) and all(
        isinstance(element, cst.Element) and isinstance(element.value, cst.Name) for element in target.elements)


def _classify(ctx: FileContext, step: TrainStep, body: List[cst.BaseStatement], index: int) -> Optional[str]:
    """Split the names the forward and loss read into per-step inputs and captured objects."""
    per_step: Set[str] = set()
    for ancestor in ctx.ancestors(step.backward):
        if ancestor is step.owner:
            break
        if isinstance(ancestor, cst.For):
            per_step.update(bound_names(ancestor.target))
    first = step.autocast or step.forward or step.loss
    for statement in [*body[:body.index(first)], *step.hoisted]:
        for child in walk(statement):
            if isinstance(child, (cst.AssignTarget, cst.For)):
                per_step.update(bound_names(child.target))
    if not per_step:
        return "the training step is not inside a loop over batches: rewrite it by hand"
    definitions = module_definitions(ctx)
    inputs: List[str] = []
    captured: List[str] = []
    local = {step.model, step.loss_name}   # names the wrapper's `forward` binds before reading them
    for statement in (step.forward, *step.between, step.loss):
        if statement is None:
            continue
        for name in loads(statement):
            value = name.value
            if value in local:
                continue
            # A name the loop binds is a batch input, whatever builtin or global it shadows (`input`).
            if value not in per_step and (value in BUILTINS or value in definitions
                                          or qualified(ctx, name) is not None):
                continue
            bucket = inputs if value in per_step else captured
            if value not in bucket:
                bucket.append(value)
        local |= _bound(statement)
    if not inputs:
        return "the model's inputs were not found in the loop: rewrite this step by hand"
    reserved = (set(captured) | {step.model}) & _RESERVED
    if reserved:
        return f"`{sorted(reserved)[0]}` cannot be an attribute of a wrapper module: rewrite this step by hand"
    step.inputs, step.captured = inputs, captured
    needed = [step.model, step.optimizer, *captured]
    step.placement, problem = _place(ctx, step.backward, step.owner, needed, "training model",
                                     "training_model", rebuilt={step.optimizer})
    if problem is not None:
        step.problem_anchor = step.backward
        return problem
    if step.optimizer in captured or step.model == step.optimizer:
        return "the optimizer is used in the loss: rewrite this step by hand"
    return None


# --------------------------------------------------------------------------- evaluation loops
def _evaluations(ctx: FileContext, steps: List[TrainStep]) -> List[Evaluation]:
    """The evaluations to move, found until the ``model.eval()`` each one adds where it creates
    its inference model finds no more: a second port, which sees those calls, moves nothing new."""
    evaluated: Dict[int, Set[str]] = {}
    for call in ctx.nodes(cst.Call):
        receiver = name_of(method_of(call, "eval"))
        if receiver is not None and not call.args:
            evaluated.setdefault(id(scopes.owner(ctx, call)), set()).add(receiver)
    while True:
        found = _evaluations_with(ctx, steps, evaluated)
        added = False
        for evaluation in found:
            if evaluation.problem is None:
                names = evaluated.setdefault(id(evaluation.placement.owner), set())
                model = evaluation.placement.values[evaluation.model]
                added = added or model not in names
                names.add(model)
        if not added:
            return found


def _evaluations_with(ctx: FileContext, steps: List[TrainStep], evaluated: Dict[int, Set[str]]) -> List[Evaluation]:
    found = []
    blocks: List[Tuple[cst.CSTNode, cst.CSTNode]] = []   # (statement or function, the code under no_grad)
    for with_stmt in ctx.nodes(cst.With):
        if any(isinstance(item.item, cst.Call) and qualified(ctx, item.item.func) in NO_GRAD
               for item in with_stmt.items):
            blocks.append((with_stmt, with_stmt.body))
    for function in ctx.nodes(cst.FunctionDef):
        if any(qualified(ctx, d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) in NO_GRAD
               for d in function.decorators):
            blocks.append((function, function.body))
    seen: Set[int] = set()
    for holder, body in blocks:
        owner = holder if isinstance(holder, cst.FunctionDef) else scopes.owner(ctx, holder)
        models = evaluated.get(id(owner), set()) | _trained_models(ctx, steps, holder, owner)
        calls = [node for node in walk(body) if isinstance(node, cst.Call) and id(node) not in seen
                 and name_of(node.func) in models and qualified(ctx, node.func) is None]
        seen.update(id(call) for call in calls)
        # One inference model per model the block evaluates (a model and its reference): moving
        # only the first would leave the others for a second port to move.
        for model in dict.fromkeys(call.func.value for call in calls):
            of_model = [call for call in calls if call.func.value == model]
            anchor = holder if isinstance(holder, cst.With) else creation_point(ctx, of_model[0], owner)
            evaluation = Evaluation(anchor, model, of_model, owner)
            evaluation.placement, evaluation.problem = _place(ctx, anchor, owner, [model], "inference model",
                                                              "inference_model")
            found.append(evaluation)
    return found


def _trained_models(ctx: FileContext, steps: List[TrainStep], holder: cst.CSTNode, owner: Owner) -> Set[str]:
    """Models trained in ``owner`` count as evaluated after their training loop, even without
    ``model.eval()`` (never inside the loop that trains them: that would switch models per batch)."""
    found = set()
    for step in steps:
        if not step.rewritten or step.owner is not owner:
            continue
        loops = {id(a) for a in ctx.ancestors(step.backward) if isinstance(a, (cst.For, cst.While))}
        if not any(id(a) in loops for a in ctx.ancestors(holder)):
            found.add(step.model)
    return found


def _plan_detach(ctx: FileContext, result: Plan) -> None:
    """When a training model exists, detach it before evaluating, and detach the inference
    model after evaluating when training goes on afterwards (a per-epoch loop, or training that
    comes later), so that both fit on the IPUs."""
    detaching: Dict[Tuple[int, str], List[Release]] = {}   # releases of each training model
    for evaluation in result.evaluations:
        if evaluation.problem is not None:
            continue
        placement = evaluation.placement
        scope, sites = evaluation.owner, [evaluation.anchor]
        step = result.training_step_in(scope)
        if step is None and placement.calls:
            scope, sites = placement.owner, [ctx.statement_of(call) for call in placement.calls]
            step = result.training_step_in(scope)
        if step is None:
            continue
        trained = ctx.statement_of(step.backward if step.owner is scope else step.placement.calls[0])
        released: Set[int] = set()
        for site in sites:
            site = _outside_evaluation_loops(ctx, site, trained, scope)
            # two calls in one statement (`print(evaluate(...), evaluate(...))`) share one release
            if ctx.block_of(site) is None or id(site) in released:
                continue
            released.add(id(site))
            release = Release(site)
            evaluation.releases.append(release)
            if step.placement.owner is scope and _order(ctx, site, step.placement.before) < 0:
                release.inference = True   # evaluated before training starts: free the IPU for it
                continue
            release.training = step.name
            detaching.setdefault((id(scope), step.name), []).append(release)
            if _common_loop(ctx, site, trained, scope) is not None:
                release.inference = True
                release.guarded = _order(ctx, site, trained) < 0
    # A model detached at one site may already be detached at the next (an evaluation per epoch,
    # then a final one; a validation then a test), and detaching a detached model raises (PopTorch
    # User Guide, "detachFromDevice"): each site detaches it only while it is attached.
    for releases in detaching.values():
        if len(releases) > 1:
            for release in releases:
                release.guarded = True


def _outside_evaluation_loops(ctx: FileContext, site: cst.BaseStatement, trained: cst.CSTNode,
                              scope: Owner) -> cst.BaseStatement:
    """The outermost loop around ``site`` that does not also train (a loop over the evaluation
    batches with ``no_grad`` inside), or ``site``: the models are swapped once around it, not per
    batch (detaching a detached model fails)."""
    training = {id(ancestor) for ancestor in ctx.ancestors(trained)}
    for ancestor in ctx.ancestors(site):
        if ancestor is scope or id(ancestor) in training:
            break
        if isinstance(ancestor, (cst.For, cst.While)):
            site = ancestor
    return site


def _order(ctx: FileContext, a: cst.CSTNode, b: cst.CSTNode) -> int:
    """-1 when ``a`` comes before ``b`` in the source, 1 when after, 0 when one holds the other."""
    path_a = [a, *ctx.ancestors(a)]
    path_b = [b, *ctx.ancestors(b)]
    on_b = {id(node): index for index, node in enumerate(path_b)}
    for index, node in enumerate(path_a):
        if id(node) in on_b:
            at = on_b[id(node)]
            if index == 0 or at == 0:
                return 0
            child_a, child_b = path_a[index - 1], path_b[at - 1]
            children = list(iter_children(node))
            return -1 if children.index(child_a) < children.index(child_b) else 1
    return 0


def _common_loop(ctx: FileContext, a: cst.CSTNode, b: cst.CSTNode, scope: Owner) -> Optional[cst.CSTNode]:
    loops_b = {id(n) for n in ctx.ancestors(b) if isinstance(n, (cst.For, cst.While))}
    for ancestor in ctx.ancestors(a):
        if ancestor is scope:
            return None
        if id(ancestor) in loops_b:
            return ancestor
    return None


# ------------------------------------------------------------------------------- shared edits
def pass_in(ctx: FileContext, placement: Placement, param: str, value: str, code: str) -> None:
    """A hoisted model reaches its function as a new last parameter, passed at the call site."""
    function = placement.function
    if function is None or not placement.calls:
        return
    params = function.params.params
    default = bool(params) and params[-1].default is not None

    def add_param(node: cst.Parameters) -> cst.Parameters:
        new = cst.Param(cst.Name(param), default=cst.Name("None") if default else None,
                        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
                        if default else cst.MaybeSentinel.DEFAULT)
        items = list(node.params)
        if items and items[-1].comma == cst.MaybeSentinel.DEFAULT:
            items[-1] = items[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        elif items:
            new = new.with_changes(comma=items[-1].comma)
        return node.with_changes(params=[*items, new])

    ctx.replace(function.params, add_param)
    for call in placement.calls:
        by_keyword = default or any(arg.keyword is not None for arg in call.args)
        arg = keyword_arg(param, cst.Name(value)) if by_keyword else cst.Arg(cst.Name(value))
        ctx.replace(call, lambda node, arg=arg: append_args(node, arg))


def needs_poptorch(ctx: FileContext) -> bool:
    p = plan(ctx)
    return bool(p.rewrites or [e for e in p.evaluations if e.problem is None])
