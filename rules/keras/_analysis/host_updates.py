"""Weight updates a custom loop makes on the host right after its compiled step (a Polyak target
update, WGAN clipping) that can move, exactly, to the end of the step (IPU167), so that they run on
the IPU once per step, also in the on-device loop of ``--steps-per-execution`` (IPU111).
"""

from __future__ import annotations

import builtins
from typing import List, Optional

import libcst as cst

from porter.context import FileContext, bound_names, walk
from porter.rule import is_selected, rule_by_code
from porter.scopes import assignments, loads, local_function, owner, parameter_names
from porter.rules.keras._analysis.steps import StepCall, is_tf_function

# The rules, by name (they declare their codes): the one that moves the updates, and the one that
# compiles the step they move into.
HOST_UPDATES = "host-variable-updates"
CUSTOM_LOOP = "custom-loop"
# What updates a variable in place, in the graph (`set_weights` goes through NumPy: host only).
_ASSIGNS = frozenset({"assign", "assign_add", "assign_sub"})
# A learning rate (or a step counter) the host writes between executions is one scalar: valid host work.
HOST_SCALARS = frozenset({"learning_rate", "lr", "iterations"})
_LOOPS = (cst.For, cst.While)


def movable_updates(ctx: FileContext, step: StepCall) -> List[cst.BaseStatement]:
    """The statements that directly follow the call of ``step`` in its loop's body and only update
    variables, when they can move before the step's final ``return`` and mean the same there: the
    step is called from that one place, by its name, and ends in one ``return`` of names; every name
    they read is seen the same inside the step and does not change between calls. Empty otherwise."""
    if not _selected(ctx, HOST_UPDATES):
        return []
    if not (is_tf_function(ctx, step.function) or _selected(ctx, CUSTOM_LOOP)):
        return []  # a step left eager: moved, the update would still run on the host
    body = list(step.loop.body.body)
    at = next((index for index, statement in enumerate(body) if statement is step.statement), None)
    if at is None or final_return(step.function) is None or not _called_once(ctx, step):
        return []
    following: List[cst.BaseStatement] = []
    for statement in body[at + 1:]:
        # A suppression comment on the update keeps it where it is (and the loop one step per execution).
        if not _only_updates(ctx, statement) or not ctx.allowed(statement, rule_by_code(HOST_UPDATES).code):
            break
        following.append(statement)
    if not following or not all(_reads_what_the_step_sees(ctx, step, statement) for statement in following):
        return []
    return following


def _selected(ctx: FileContext, name: str) -> bool:
    return is_selected(rule_by_code(name).code, ctx.config.select, ctx.config.ignore)


def final_return(function: cst.FunctionDef) -> Optional[cst.SimpleStatementLine]:
    """The one ``return`` of ``function``, when it is its last statement and gives back names only
    (values computed before the moved updates, which a return of ``model(x)`` would not be)."""
    returns = [node for node in walk(function.body, skip=(cst.FunctionDef, cst.Lambda, cst.ClassDef))
               if isinstance(node, cst.Return)]
    last = function.body.body[-1] if isinstance(function.body, cst.IndentedBlock) else None
    if len(returns) != 1 or not isinstance(last, cst.SimpleStatementLine) or last.body[0] is not returns[0]:
        return None
    value = returns[0].value
    elements = [element.value for element in value.elements] if isinstance(value, cst.Tuple) else [value]
    return last if all(element is None or isinstance(element, cst.Name) for element in elements) else None


def is_update(call: cst.CSTNode) -> bool:
    """``x.assign(...)`` (``assign_add``, ``assign_sub``) of something other than a learning rate."""
    func = call.func if isinstance(call, cst.Call) else None
    return (isinstance(func, cst.Attribute) and func.attr.value in _ASSIGNS
            and not (isinstance(func.value, cst.Attribute) and func.value.attr.value in HOST_SCALARS))


def updating_helper(ctx: FileContext, call: cst.CSTNode) -> Optional[cst.FunctionDef]:
    """The plain function of the file (no ``tf.function``) that ``call`` calls by name, when its body
    only updates variables (``soft_update(target.variables, online.variables, tau)``)."""
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name)):
        return None
    function = local_function(ctx, call.func.value, call)
    if function is None or function.decorators or not isinstance(function.body, cst.IndentedBlock):
        return None
    body = [statement for statement in function.body.body if not _docstring(statement)]
    return function if body and all(_only_updates(ctx, statement) for statement in body) else None


def _docstring(statement: cst.BaseStatement) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value, cst.SimpleString))


def _only_updates(ctx: FileContext, statement: cst.BaseStatement) -> bool:
    """``v.assign(...)`` lines, or ``for`` loops (no ``else``) of them, with no ``.numpy()``."""
    if any(isinstance(node, cst.Attribute) and node.attr.value == "numpy" for node in walk(statement)):
        return False
    if isinstance(statement, cst.For):
        return (statement.orelse is None and statement.asynchronous is None
                and isinstance(statement.body, cst.IndentedBlock)
                and all(_only_updates(ctx, inner) for inner in statement.body.body))
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    # A counter stepped by a constant (`ckpt.step.assign_add(1)`) is valid host work, left where it is.
    return all(isinstance(small, cst.Expr) and (is_update(small.value) and not (
        len(small.value.args) == 1 and isinstance(small.value.args[0].value, (cst.Integer, cst.Float)))
        or updating_helper(ctx, small.value) is not None) for small in statement.body)


def _called_once(ctx: FileContext, step: StepCall) -> bool:
    """The step's name is read in one place in the file: the call of the loop, by that name."""
    name = step.function.name.value
    if not (isinstance(step.call.func, cst.Name) and step.call.func.value == name):
        return False
    uses = [node for node in ctx.nodes(cst.Name) if node.value == name and node is not step.function.name]
    return len(uses) == 1


def _reads_what_the_step_sees(ctx: FileContext, step: StepCall, statement: cst.BaseStatement) -> bool:
    """Each name ``statement`` reads is a builtin, or bound where the step is defined and nowhere in
    the step, in the loops around its call, or (shadowing it) in the function of the loop; the names
    the statement binds (its ``for`` targets) are not the step's."""
    own = {name for node in walk(statement) if isinstance(node, cst.For) for name in bound_names(node.target)}
    step_bound = set(parameter_names(step.function)) | {name for _, name, _ in assignments(ctx, step.function)}
    if own & {node.value for node in walk(step.function) if isinstance(node, cst.Name)}:
        return False
    defined_in = owner(ctx, step.function)
    loop_owner = owner(ctx, step.loop)
    read = {node.value for node in loads(statement)} - own
    for call in walk(statement):  # and what the helpers it calls read besides their parameters
        helper = updating_helper(ctx, call)
        if helper is not None:
            inner = {name for node in walk(helper.body) if isinstance(node, cst.For) for name in bound_names(node.target)}
            read |= {node.value for node in loads(helper.body)} - inner - set(parameter_names(helper))
    for name in read:
        if name in step_bound:
            return False
        if not _bound(ctx, defined_in, name):
            if name in dir(builtins) and not _bound(ctx, loop_owner, name):
                continue
            return False
        if (_changes_between_calls(ctx, defined_in, name, step.call) or _declared_global(ctx, name)
                or loop_owner is not defined_in and _bound(ctx, loop_owner, name)):
            return False
    return True


def _bound(ctx: FileContext, scope: cst.CSTNode, name: str) -> bool:
    if isinstance(scope, cst.Module):
        definitions = {node.name.value for node in scope.body if isinstance(node, (cst.FunctionDef, cst.ClassDef))}
        if name in ctx.aliases or name in definitions:
            return True
    elif name in parameter_names(scope):
        return True
    return any(bound == name for _, bound, _ in assignments(ctx, scope))


def _changes_between_calls(ctx: FileContext, scope: cst.CSTNode, name: str, call: cst.Call) -> bool:
    """``name`` is bound more than once (a notebook's later cell may set it again), or in a loop that
    holds the step's call: the step would see it only as it was when it was traced."""
    loops = {id(node) for node in ctx.ancestors(call) if isinstance(node, _LOOPS)}
    statements = [statement for statement, bound, _ in assignments(ctx, scope) if bound == name]
    return len(statements) > 1 or any(
        id(statement) in loops or any(id(ancestor) in loops for ancestor in ctx.ancestors(statement))
        for statement in statements)


def _declared_global(ctx: FileContext, name: str) -> bool:
    """A function rebinds ``name`` with ``global``: it may change between calls."""
    return any(name in [item.name.value for item in node.names] for node in ctx.nodes(cst.Global))
