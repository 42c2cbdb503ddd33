"""Training steps written inline in a loop: the tape, the gradients and the optimizer step as the
first statements of a ``for`` loop's body. IPU111 moves them into a step function, compiled and
run through ``strategy.run`` (Targeting the IPU from TensorFlow 2, "On-device loops"), or says what
stops the move.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Set

import libcst as cst

from porter.context import FileContext, SharedKey, bound_names, walk
from porter.rules.keras._analysis.custom_loop import eager_calls, in_region, strategy_scope_name
from porter.rules.keras._analysis.model_plan import Plan, model_plan
from porter.rules.keras._analysis.steps import TAPES, step_functions, updates_weights

# What a function made of the loop's statements cannot hold as they are.
_UNSUPPORTED = (cst.Return, cst.Break, cst.Continue, cst.Yield, cst.Global, cst.Nonlocal, cst.AugAssign,
                cst.Del, cst.FunctionDef, cst.ClassDef, cst.Await)
# Statements that bind names in their targets.
_BINDERS = (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.AsName, cst.NamedExpr)

_INLINE_STEPS: SharedKey[List["InlineStep"]] = SharedKey("keras-inline-steps")


@dataclass
class InlineStep:
    loop: cst.For
    statements: List[cst.BaseStatement]  # the first statements of the loop's body: the step
    anchor: cst.BaseStatement  # the outermost loop around it: the step function goes before it, once
    inputs: List[str] = field(default_factory=list)  # the step function's parameters
    outputs: List[str] = field(default_factory=list)  # what it returns: names the code after it reads
    problem: Optional[str] = None
    strategy: str = "strategy"


def inline_steps(ctx: FileContext) -> List[InlineStep]:
    def find() -> List[InlineStep]:
        found: List[InlineStep] = []
        model = model_plan(ctx)
        for tape, _ in ctx.calls_to(*TAPES):
            step = _inline_step(ctx, tape)
            if step is None or any(step.loop is other.loop for other in found):
                continue
            step.strategy = strategy_scope_name(ctx, step.loop) if model.has_ipu_strategy else model.strategy_name
            step.problem = _problem(ctx, step, model)
            found.append(step)
        return found

    return ctx.shared(_INLINE_STEPS, find)


def _inline_step(ctx: FileContext, tape: cst.Call) -> Optional[InlineStep]:
    """The step that starts with the ``with`` of ``tape``, when it opens the body of a ``for`` loop
    (not inside a step function) and the body goes on to update weights."""
    with_node = next((node for node in ctx.ancestors(tape) if isinstance(node, cst.With)), None)
    if with_node is None or not any(item.item is tape for item in with_node.items):
        return None
    block = ctx.parent(with_node)
    loop = ctx.parent(block) if isinstance(block, cst.IndentedBlock) else None
    if not isinstance(loop, cst.For) or loop.body is not block or block.body[0] is not with_node:
        return None
    function = ctx.enclosing_function(loop)
    if function is not None and any(function is step for same_name in step_functions(ctx).values()
                                    for step in same_name):
        return None  # a loop inside a step function: the function is the step
    updates = [index for index, statement in enumerate(block.body)
               if any(updates_weights(node) for node in walk(statement))]
    if not updates:
        return None  # gradients only (IPU153 reports them)
    anchor: cst.BaseStatement = loop
    for ancestor in ctx.ancestors(loop):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            break
        if isinstance(ancestor, (cst.For, cst.While)):
            anchor = ancestor
    return InlineStep(loop, list(block.body[:updates[-1] + 1]), anchor)


def _problem(ctx: FileContext, step: InlineStep, model: Plan) -> Optional[str]:
    """What stops the move of the step into a function, if anything; fills the step's inputs and
    outputs otherwise."""
    inside = {id(node) for statement in step.statements for node in walk(statement)}
    unsupported = sorted({f"`{type(node).__name__.lower()}`" for statement in step.statements
                          for node in walk(statement) if isinstance(node, _UNSUPPORTED)})
    advice = ("move the tape, the gradients and the optimizer step into a function; the porter then compiles "
              "it and calls it through `strategy.run`")
    if unsupported:
        return f"the training step written inline in this loop uses {', '.join(unsupported)}: {advice}"
    eager = sorted({found for statement in step.statements for found in eager_calls(ctx, statement)})
    if eager:
        return (f"the training step written inline in this loop needs Python while it runs ({', '.join(eager)}): "
                f"it cannot be compiled for the IPU as it is; {advice}")
    if not all(isinstance(node, (cst.Name, cst.Tuple, cst.List, cst.Element)) for node in walk(step.loop.target)):
        return f"the loop's target is not plain names: {advice}"
    owner = ctx.enclosing_function(step.loop)
    assigned = _bound_in(ctx, step.statements)
    rebound = sorted(name for binder in _binders(ctx, owner) if id(binder) not in inside
                     for name in _names_bound_by(binder) if name in assigned)
    if rebound:
        return (f"the training step written inline in this loop sets `{rebound[0]}`, which the code around it "
                f"sets too: {advice}")
    step.outputs = sorted({name.value for name in _loads(ctx, owner) if id(name) not in inside
                           and name.value in assigned})
    tapes = {item.asname.name.value for statement in step.statements for node in walk(statement)
             if isinstance(node, cst.With) for item in node.items
             if item.asname is not None and isinstance(item.asname.name, cst.Name)}
    if tapes & set(step.outputs):
        return f"the code after the inline training step uses its tape: {advice}"
    around = {name for binder in walk(step.anchor) if isinstance(binder, _BINDERS) and id(binder) not in inside
              for name in _names_bound_by(binder)} | set(bound_names(step.loop.target))
    read = [name.value for statement in step.statements for name in _loads_in(statement)]
    step.inputs = list(dict.fromkeys(name for name in read if name in around and name not in assigned))
    if not model.has_ipu_strategy and not model.regions:
        return (f"the porter finds no Keras model where this loop runs (a `tf.Module` or plain `tf.Variable`s are "
                f"not taken for one): create the model and optimizer inside `with strategy.scope():`, then {advice}")
    if model.has_ipu_strategy and strategy_scope_name(ctx, step.loop) is None or (
            not model.has_ipu_strategy and not in_region(ctx, model.regions, step.loop)):
        return ("the loop with the inline training step is not where the model is built: run it inside "
                f"`with strategy.scope():`, then {advice}")
    return None


def _bound_in(ctx: FileContext, statements: List[cst.BaseStatement]) -> Set[str]:
    return {name for statement in statements for node in walk(statement) if isinstance(node, _BINDERS)
            for name in _names_bound_by(node)}


def _names_bound_by(binder: cst.CSTNode) -> List[str]:
    if isinstance(binder, cst.AsName):
        return bound_names(binder.name)
    return bound_names(binder.target)


def _binders(ctx: FileContext, owner: Optional[cst.FunctionDef]) -> List[cst.CSTNode]:
    """The binding nodes whose names live in ``owner``'s scope (the module's when None)."""
    return [node for node_type in _BINDERS for node in ctx.nodes(node_type)
            if ctx.enclosing_function(node) is owner]


def _loads(ctx: FileContext, owner: Optional[cst.FunctionDef]) -> List[cst.Name]:
    """Names read in ``owner`` or in the functions it holds (the whole file for the module)."""
    root = owner if owner is not None else ctx.module
    return list(_loads_in(root))


def _loads_in(root: cst.CSTNode):
    """The ``cst.Name`` nodes under ``root`` that read a variable (not an attribute, a keyword,
    a parameter or a binding)."""
    skipped: Set[int] = set()
    for node in walk(root):
        if isinstance(node, cst.Attribute):
            skipped.add(id(node.attr))
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            skipped.add(id(node.keyword))
        elif isinstance(node, (cst.Param, cst.FunctionDef, cst.ClassDef)):
            skipped.add(id(node.name))
        elif isinstance(node, (cst.ImportAlias,)):
            skipped.update(id(name) for name in walk(node) if isinstance(name, cst.Name))
        elif isinstance(node, _BINDERS):
            target = node.name if isinstance(node, cst.AsName) else node.target
            if isinstance(node, cst.AugAssign):
                continue  # `x += 1` reads `x` too
            skipped.update(id(name) for name in walk(target) if isinstance(name, cst.Name)
                           and name.value in bound_names(target))
        elif isinstance(node, cst.Name) and id(node) not in skipped:
            yield node
