"""Training steps written inline in a loop: the tape, the gradients and the optimizer step as
statements of a ``for`` loop's body. IPU111 moves them into a step function, compiled and
run through ``strategy.run`` (Targeting the IPU from TensorFlow 2, "On-device loops"), or says what
stops the move.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple, Union

import libcst as cst

from porter.context import FileContext, SharedKey, bound_names, code_of, dotted_name, walk
from porter.cstutil import is_name
from porter.rules.keras._analysis.custom_loop import (CALLER_DEPTH, covered, made_each_pass, out_of_reach, run_targets,
                                                       trained_names,
                                                      strategy_scope_name, tensorflow_alias)
from porter.scopes import assignments, fresh_name, parameter_names
from porter.rules.keras._analysis.model_plan import Plan, model_plan
from porter.rules.keras._analysis.steps import (TAPES, eager_calls, functions_called_from, is_jit_compiled,
                                                minimize_calls, plain_functions, step_calls, trains, updates_weights)

# What a function made of the loop's statements cannot hold as they are.
# (`loss += sum(model.losses)` is fine: a name the step set before, else read before set, said below.)
_UNSUPPORTED = (cst.Return, cst.Break, cst.Continue, cst.Yield, cst.Global, cst.Nonlocal,
                cst.Del, cst.FunctionDef, cst.ClassDef, cst.Await)
# How the message names them: as the code writes them.
_WRITTEN = {cst.Return: "`return`", cst.Break: "`break`", cst.Continue: "`continue`", cst.Yield: "`yield`",
            cst.Global: "`global`", cst.Nonlocal: "`nonlocal`", cst.Del: "`del`", cst.FunctionDef: "a `def`", cst.ClassDef: "a `class`", cst.Await: "`await`"}
# Statements that bind names in their targets.
_BINDERS = (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.AsName, cst.NamedExpr)

_INLINE_STEPS: SharedKey[List["InlineStep"]] = SharedKey("keras-inline-steps")


@dataclass
class InlineStep:
    loop: Union[cst.For, cst.While]  # the loop the step runs in (its body, or an `if` in it)
    statements: List[cst.BaseStatement]  # the statements of the loop's body that are the step
    anchor: cst.BaseStatement  # the outermost loop around it: the step function goes before it, once
    inputs: List[str] = field(default_factory=list)  # the step function's parameters
    # What the call gives each parameter, when that is not the name itself: the batch a subscript
    # of the loop's index takes (``X[i:i + bs]``), and the subscripts in the step it stands for.
    batches: Dict[str, Tuple[str, List[cst.Subscript]]] = field(default_factory=dict)
    outputs: List[str] = field(default_factory=list)  # what it returns: names the code after it reads
    problem: Optional[str] = None
    strategy: str = "strategy"


def inline_steps(ctx: FileContext) -> List[InlineStep]:
    def find() -> List[InlineStep]:
        found: List[InlineStep] = []
        model = model_plan(ctx)
        starts = [with_node for tape, _ in ctx.calls_to(*TAPES) for with_node in _tape_with(ctx, tape)]
        # A helper that only takes gradients, called first in the loop that applies them, starts one too.
        starts += [call.statement for call in step_calls(ctx) if not trains(ctx, call.function)]
        # So does an optimizer's `minimize(loss_fn, var_list=...)`: it takes the gradients itself, with no tape.
        starts += [ctx.statement_of(call) for call in minimize_calls(ctx)]
        for start in starts:
            step = _inline_step(ctx, start)
            if step is not None and all(step.loop is not other.loop for other in found):
                found.append(step)
        # What a step sets before it reads it is its own: another step's names do not read it.
        own = {id(name) for step in found for name in _own_reads(step.statements)}
        for step in found:
            step.strategy = strategy_scope_name(ctx, step.loop) if model.has_ipu_strategy else model.strategy_name
            if out_of_reach(ctx, step.loop, model, strategy_scope_name(ctx, step.loop)):
                # In a function called in the scope, where the port's strategy is another function's
                # local: there, TensorFlow's current strategy is the IPU strategy.
                step.strategy = f"{tensorflow_alias(ctx)}.distribute.get_strategy()"
            step.problem = _problem(ctx, step, model, own)
        return found

    return ctx.shared(_INLINE_STEPS, find)


def _tape_with(ctx: FileContext, tape: cst.Call) -> List[cst.With]:
    """The ``with`` statement that opens ``tape``, if the tape is opened by one."""
    with_node = next((node for node in ctx.ancestors(tape) if isinstance(node, cst.With)), None)
    return [with_node] if with_node is not None and any(item.item is tape for item in with_node.items) else []


def _inline_step(ctx: FileContext, start: cst.BaseStatement) -> Optional[InlineStep]:
    """The step that starts with ``start`` (the ``with`` of a tape, or a call of a helper that
    takes gradients), when it is a statement of the body of a loop, or of a branch of an ``if`` in
    it (an update every k batches, an RL agent's learning step), not inside a step function, and
    its block goes on to update weights. Statements before it (reading the batch, host-side
    bookkeeping) stay where they are."""
    block = ctx.parent(start)
    if not isinstance(block, cst.IndentedBlock):
        return None
    loop = _loop_around(ctx, block)
    if loop is None:
        return None
    if ctx.enclosing(loop, cst.ClassDef) is not None:
        return None  # a method: a Keras `train_step` override (`fit` compiles it) or a trainer's (IPU153)
    function = ctx.enclosing_function(loop)
    if function is not None and any(function is call.function for call in step_calls(ctx)):
        return None  # a loop inside a step function called per batch: the function is the step
    if any(is_jit_compiled(ctx, node) or node.name.value in run_targets(ctx)
           for node in ctx.ancestors(loop) if isinstance(node, cst.FunctionDef)):
        return None  # a loop in a function compiled for the IPU (`for i in tf.range(n)`): that function is the step
    first = list(block.body).index(start)
    updates = [index for index, statement in enumerate(block.body)
               if index >= first and any(updates_weights(node) for node in walk(statement))]
    if not updates:
        return None  # gradients only (IPU153 reports them)
    anchor: cst.BaseStatement = loop
    for ancestor in ctx.ancestors(loop):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            break
        if isinstance(ancestor, (cst.For, cst.While)):
            anchor = ancestor
    return InlineStep(loop, list(block.body[first:updates[-1] + 1]), anchor)


def _loop_around(ctx: FileContext, block: cst.IndentedBlock) -> Optional[Union[cst.For, cst.While]]:
    """The loop whose body ``block`` is, directly or through branches of ``if`` statements."""
    node: cst.CSTNode = block
    while True:
        owner = ctx.parent(node)
        if isinstance(owner, (cst.For, cst.While)) and owner.body is node:
            return owner
        if isinstance(owner, cst.Else):
            owner = ctx.parent(owner)
        if not isinstance(owner, cst.If):
            return None
        while isinstance(ctx.parent(owner), cst.If):  # an `elif` hangs off the `if` before it
            owner = ctx.parent(owner)
        node = ctx.parent(owner)
        if not isinstance(node, cst.IndentedBlock):
            return None


def moved(ctx: FileContext, node: cst.CSTNode) -> bool:
    """Whether ``node`` is in an inline step that IPU111 moves into a function."""
    moving = {id(statement) for step in inline_steps(ctx) if step.problem is None for statement in step.statements}
    return any(id(ancestor) in moving for ancestor in (node, *ctx.ancestors(node)))


def _problem(ctx: FileContext, step: InlineStep, model: Plan, own: Set[int]) -> Optional[str]:
    """What stops the move of the step into a function, if anything; fills the step's inputs and
    outputs otherwise."""
    inside = {id(node) for statement in step.statements for node in walk(statement)}
    unsupported = sorted({_WRITTEN[type(node)] for statement in step.statements
                          for node in walk(statement) if isinstance(node, _UNSUPPORTED)
                          and not _ends_own_loop(ctx, node, inside)})
    advice = ("move the tape, the gradients and the optimizer step into a function; the porter then compiles "
              "it and calls it through `strategy.run`")
    if unsupported:
        return f"the training step written inline in this loop uses {', '.join(unsupported)}: {advice}"
    eager = sorted({found for statement in step.statements for found in eager_calls(ctx, statement)})
    if eager:
        return (f"the training step written inline in this loop needs Python while it runs ({', '.join(eager)}): "
                f"it cannot be compiled for the IPU as it is; keep that on the host, out of the step, then {advice}")
    if isinstance(step.loop, cst.For) and not all(
            isinstance(node, (cst.Name, cst.Tuple, cst.List, cst.Element)) for node in walk(step.loop.target)):
        return f"the loop's target is not plain names: {advice}"
    owner = ctx.enclosing_function(step.loop)
    assigned = _bound_in(step.statements)
    early = sorted(_read_before_set(step.statements) & assigned)
    if early:
        return (f"the training step written inline in this loop reads `{early[0]}` before it sets it (the value "
                f"of an earlier pass), which a function cannot: {advice}")
    tapes = {item.asname.name.value for statement in step.statements for node in walk(statement)
             if isinstance(node, cst.With) for item in node.items
             if item.asname is not None and isinstance(item.asname.name, cst.Name)}
    step.outputs = sorted({name.value for name in _loads(ctx, owner) if id(name) not in inside
                           and id(name) not in own and name.value in assigned
                           and not (name.value in tapes and _rebound_by_with(ctx, name))})
    if tapes & set(step.outputs):
        return f"the code after the inline training step uses its tape: {advice}"
    around = {name for binder in walk(step.anchor) if isinstance(binder, _BINDERS) and id(binder) not in inside
              for name in _names_bound_by(binder)} | (
        set(bound_names(step.loop.target)) if isinstance(step.loop, cst.For) else set()) | _changed_in(
        step.anchor, inside)
    stale = _loop_names_read_by_helpers(ctx, step.statements, around - assigned)
    if stale:
        helper, name = stale
        return (f"`{helper}`, which the training step written inline in this loop uses, reads `{name}`, which the "
                f"loop sets: compiled, the step would use on every pass the value `{name}` had when it was first "
                f"traced; make `{name}` a parameter of `{helper}` and pass it, then {advice}")
    _take_batches(ctx, step, assigned)
    hoisted = {id(node) for _, nodes in step.batches.values() for subscript in nodes for node in walk(subscript)}
    read = [name.value for statement in step.statements for name in _loads_in(statement) if id(name) not in hoisted]
    step.inputs = list(dict.fromkeys(name for name in read if name in around and name not in assigned))
    step.inputs += list(step.batches)
    # The batch in the order the loop unpacks it (`for images, labels in ds` gives `(images, labels)`).
    order = {name: index for index, name in enumerate(
        bound_names(step.loop.target) if isinstance(step.loop, cst.For) else [])}
    step.inputs.sort(key=lambda name: order.get(name, len(order)))
    changing = sorted(python_numbers(ctx, step.loop, inside) & set(step.inputs))
    if changing:
        return (f"the training step written inline in this loop reads `{changing[0]}`, which the loop changes on "
                "every pass: given to a compiled step, each new Python value would compile it again; make it a "
                f"`tf.Variable` the step reads (and `assign` it), or keep it out of the step, then {advice}")
    renewed = made_each_pass(ctx, step.loop, trained_names(step.statements), inside)
    if renewed is not None:
        name, made = renewed
        return (f"`{name}`, which the training step written inline in this loop trains, is made anew on every pass of "
                f"a loop around the step (`{code_of(ctx, made)}`): compiled, the step would be compiled again for "
                "each new one, and a Keras optimizer cannot make its variables in a later call of a `tf.function`; "
                f"make `{name}` once, before the loops (a task's copy of a model: `clone_model` once, then "
                f"`set_weights(model.get_weights())` on each pass), then {advice}")
    if not model.has_ipu_strategy and not model.regions:
        return (f"the porter finds no Keras model where this loop runs (a `tf.Module` or plain `tf.Variable`s are "
                f"not taken for one): create the model and optimizer inside `with strategy.scope():`, then {advice}")
    if model.has_ipu_strategy and strategy_scope_name(ctx, step.loop) is None or (
            not model.has_ipu_strategy and not covered(ctx, model.regions, step.loop, CALLER_DEPTH)):
        return ("the loop with the inline training step is not where the model is built: run it inside "
                f"`with strategy.scope():`, then {advice}")
    return None


def _rebound_by_with(ctx: FileContext, name: cst.Name) -> bool:
    """``name`` is read after a ``with`` of its own block, or inside one, that binds it anew: the
    tape of a second step (a meta-learning query loss after the inner steps), not the step's."""
    statement = ctx.statement_of(name)
    block = ctx.block_of(statement) if statement is not None else None
    if block is None:
        return False
    body = list(block.body)
    withs = [node for node in (*body[:body.index(statement)], *ctx.ancestors(name)) if isinstance(node, cst.With)]
    return any(is_name(item.asname.name, name.value) for node in withs for item in node.items
               if item.asname is not None)


def _loop_names_read_by_helpers(ctx: FileContext, statements: List[cst.BaseStatement],
                                loop_names: Set[str]) -> Optional[Tuple[str, str]]:
    """A function of the file that the statements call or pass on (``optimizer.minimize(loss_fn, ...)``)
    and that reads, as a global or a closure, one of ``loop_names`` (what the loop around sets, a
    batch): the function and the name. A step made of the statements would not pass it on."""
    functions = plain_functions(ctx)
    used = [functions[name.value] for statement in statements for name in _loads_in(statement)
            if name.value in functions]
    for function in dict.fromkeys(used + functions_called_from(ctx, used)):
        own = _locals_of(ctx, function)
        read = [name.value for name in _loads(ctx, function) if name.value not in own]
        found = next((name for name in read if name in loop_names), None)
        if found is not None:
            return function.name.value, found
    return None


def _ends_own_loop(ctx: FileContext, node: cst.CSTNode, inside: Set[int]) -> bool:
    """``node`` is a ``break`` or ``continue`` of a loop written in the step itself (a Python loop
    over penalties, an episode's time steps), which a function made of the step holds as it is;
    one of the loop the step runs in (or of a loop around it) is not."""
    if not isinstance(node, (cst.Break, cst.Continue)):
        return False
    child = node
    for ancestor in ctx.ancestors(node):
        # The body of a loop, not its `else` (a `break` there ends the loop around it).
        if isinstance(ancestor, (cst.For, cst.While)) and ancestor.body is child:
            return id(ancestor) in inside
        child = ancestor
    return False


def _take_batches(ctx: FileContext, step: InlineStep, assigned: Set[str]) -> None:
    """``model(X[i:i + bs])`` in a step run by ``for i in range(...)``: each subscript of the loop's
    index (the outermost, on arrays the step does not set) becomes a parameter of the step, and the
    call gives it the batch, so that the compiled step takes arrays of one shape, not a new Python
    number on every pass (a new program each). The same subscript written twice is one parameter."""
    index = _range_index(step.loop)
    if index is None:
        return
    taken: Set[str] = set()
    by_code: Dict[str, str] = {}
    for statement in step.statements:
        for subscript in _index_subscripts(statement, index, assigned):
            code = code_of(ctx, subscript)
            if code not in by_code:
                root = dotted_name(subscript.value)
                base = root.replace(".", "_") if root else "batch"
                by_code[code] = fresh_name(ctx, f"{base}_batch", f"{base}_ipu_batch", taken=taken)
                taken.add(by_code[code])
                step.batches[by_code[code]] = (code, [])
            step.batches[by_code[code]][1].append(subscript)


def _range_index(loop: Union[cst.For, cst.While]) -> Optional[str]:
    """The name ``for i in range(...)`` counts with: a Python number, new on every pass."""
    if isinstance(loop, cst.For) and isinstance(loop.target, cst.Name) and isinstance(loop.iter, cst.Call) \
            and isinstance(loop.iter.func, cst.Name) and loop.iter.func.value == "range":
        return loop.target.value
    return None


def _index_subscripts(root: cst.CSTNode, index: str, assigned: Set[str]) -> List[cst.Subscript]:
    """The outermost subscripts under ``root`` that read ``index`` and no name in ``assigned``
    (``X[i:i + bs]``, ``X[order[i:i + bs]]``; not ``logits[i]``, which the step computes)."""
    if isinstance(root, cst.Subscript):
        names = {node.value for node in _loads_in(root)}
        if index in names:
            return [] if names & assigned else [root]
    return [found for child in root.children for found in _index_subscripts(child, index, assigned)]


def python_numbers(ctx: FileContext, loop: Union[cst.For, cst.While], inside: Set[int]) -> Set[str]:
    """Names a loop gives a new Python number on every pass: counters (``i += 1``, ``step = step +
    1``), the index ``enumerate`` gives (``for i, batch in enumerate(ds)``), and the one ``range``
    gives (``for i in range(0, n, bs)``). Batches it reads are tensors or arrays, which a compiled
    step takes without compiling again."""
    found: Set[str] = set(filter(None, [_range_index(loop)]))
    if isinstance(loop, cst.For) and isinstance(loop.iter, cst.Call) and isinstance(loop.iter.func, cst.Name) \
            and loop.iter.func.value == "enumerate" and isinstance(loop.target, cst.Tuple) and loop.target.elements:
        found.update(bound_names(loop.target.elements[0].value))
    for node in walk(loop.body):
        if id(node) in inside:
            continue
        if isinstance(node, cst.AugAssign) and isinstance(node.value, (cst.Integer, cst.Float)):
            found.update(bound_names(node.target))  # `i += 1`
        elif isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            name = node.targets[0].target.value  # `step = 0`, `step = step + 1`
            if _numbers_and(node.value, name):
                found.add(name)
    return found


def _numbers_and(value: cst.BaseExpression, name: str) -> bool:
    """``value`` reads nothing but numbers and ``name`` itself (``0``, ``step + 1``): no call, no
    attribute or item, no other variable."""
    reads = (cst.Name, cst.Integer, cst.Float, cst.Call, cst.Attribute, cst.Subscript)
    return all(isinstance(part, (cst.Integer, cst.Float)) or isinstance(part, cst.Name) and part.value == name
               for part in walk(value) if isinstance(part, reads))


def _bound_in(statements: List[cst.BaseStatement]) -> Set[str]:
    """The names the statements set."""
    return {name for statement in statements for node in walk(statement) if isinstance(node, _BINDERS)
            for name in _names_bound_by(node)}


# The methods that change a list or dict in place.
_IN_PLACE = frozenset({"append", "extend", "insert", "update", "pop", "clear", "remove", "setdefault"})


def _changed_in(loop: cst.CSTNode, inside: Set[int]) -> Set[str]:
    """Names of lists or dicts the loop changes in place, out of the step (``anchors.append(
    model.get_weights())`` after each task, ``penalties[name] = ...``). A step that reads one gets it
    as a parameter: compiled, it would otherwise keep what the name held when it was first traced
    (an empty list: an elastic weight consolidation penalty that never applies)."""
    changed = set()
    for node in walk(loop):
        if id(node) in inside:
            continue
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and isinstance(
                node.func.value, cst.Name) and node.func.attr.value in _IN_PLACE:
            changed.add(node.func.value.value)
        elif isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Subscript) and isinstance(
                node.target.value, cst.Name):
            changed.add(node.target.value.value)
    return changed


def _names_bound_by(binder: cst.CSTNode) -> List[str]:
    if isinstance(binder, cst.AsName):
        return bound_names(binder.name)
    return bound_names(binder.target)


def _own_reads(statements: List[cst.BaseStatement]) -> List[cst.Name]:
    """The names the statements read that they set before."""
    early = _read_before_set(statements)
    assigned = _bound_in(statements)
    return [name for statement in statements for name in _loads_in(statement)
            if name.value in assigned and name.value not in early]


def _read_before_set(statements: List[cst.BaseStatement]) -> Set[str]:
    """Names the statements read before they set them, in the order they run: in a function of
    their own those would be unbound locals."""
    stored: Set[str] = set()
    early: Set[str] = set()

    def store(target: cst.CSTNode) -> None:
        stored.update(bound_names(target))

    def visit(node: cst.CSTNode) -> None:
        if isinstance(node, cst.Assign):
            visit(node.value)
            for target in node.targets:
                store(target.target)
        elif isinstance(node, cst.For):
            visit(node.iter)
            store(node.target)
            visit(node.body)
        elif isinstance(node, cst.WithItem):
            visit(node.item)
            if node.asname is not None:
                store(node.asname.name)
        elif isinstance(node, cst.Attribute):
            visit(node.value)  # `tape.gradient` reads `tape`, not `gradient`
        elif isinstance(node, cst.Arg):
            visit(node.value)
        elif isinstance(node, cst.Name):
            if node.value not in stored:
                early.add(node.value)
        else:
            for child in node.children:
                visit(child)

    for statement in statements:
        visit(statement)
    return early


def _loads(ctx: FileContext, owner: Optional[cst.FunctionDef]) -> List[cst.Name]:
    """Names read in ``owner`` or in the functions it holds (the whole file for the module) that
    read ``owner``'s variables: not a name that a function it holds binds itself (a loss
    function's parameter ``z1``), which is that function's own local."""
    root = owner if owner is not None else ctx.module
    own: Dict[int, Set[str]] = {}
    return [name for name in _loads_in(root) if not _local_to_inner(ctx, name, root, own)]


def _local_to_inner(ctx: FileContext, name: cst.Name, root: cst.CSTNode, own: Dict[int, Set[str]]) -> bool:
    """Whether ``name`` is read in a function (or lambda) inside ``root`` that binds it: its
    parameters and assignments, unless it declares the name ``global`` or ``nonlocal``."""
    for ancestor in ctx.ancestors(name):
        if ancestor is root:
            return False
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            if id(ancestor) not in own:
                own[id(ancestor)] = _locals_of(ctx, ancestor)
            if name.value in own[id(ancestor)]:
                return True
    return False


def _locals_of(ctx: FileContext, function: Union[cst.FunctionDef, cst.Lambda]) -> Set[str]:
    """The names a function binds in its own scope."""
    names = set(parameter_names(function))  # (a lambda's parameters are laid out as a function's)
    if isinstance(function, cst.FunctionDef):
        names.update(name for _, name, _ in assignments(ctx, function))
        names -= {alias.name.value for node in walk(function.body) if isinstance(node, (cst.Global, cst.Nonlocal))
                  for alias in node.names}
    return names


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
