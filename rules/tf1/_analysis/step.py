"""A TF1 training step built line by line, outside any device scope: the block of statements from
the graph inputs to the training op (and the evaluation tensors right after it), what goes in and
out of it, and how the session uses what comes out (training or evaluation fetches).

Read by IPU208, which moves the block into a compiled function. Everything here reads the original
tree; a ``Step`` or a ``Blocked`` (the statement that prevents the move, and why) is the answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple, Union

import libcst as cst

from porter.context import FileContext, SharedKey, dotted_name, walk
from porter.rules.tf1._analysis.graph import (IPU_DEVICE, cpu_bound_kind, graph_inputs, is_operation,
                                              names_bound, names_used, returned_values, session_calls,
                                              tf_call_name)
from porter.scopes import local_function

_TRAINING_METHODS = {"minimize", "apply_gradients"}
# Graph pieces that run on the host: the block stops in front of them.
_HOST_CALLS = {"global_variables_initializer", "local_variables_initializer", "initialize_all_variables",
               "variables_initializer", "tables_initializer", "train.Saver", "Session", "InteractiveSession",
               "ConfigProto", "GPUOptions"}
# What `ipu_compiler.compile` cannot hold (Targeting the IPU from TensorFlow 1: summaries, strings, py_func).
_NOT_COMPILED = ("summary.", "py_func", "numpy_function", "Print", "print", "string", "as_string")
_UNMOVABLE = (cst.Return, cst.Yield, cst.Global, cst.Nonlocal, cst.Break, cst.Continue, cst.Await,
              cst.Import, cst.ImportFrom)
# Layers and variables that a second build shares under `reuse=True` only when named.
_NAMED_BUILDERS = ("layers.", "contrib.layers.", "keras.layers.")


@dataclass
class Blocked:
    """The statement (or expression) that prevents the move, and what to do."""
    anchor: cst.CSTNode
    reason: str


@dataclass
class Step:
    owner: cst.CSTNode
    statements: List[cst.BaseStatement]     # the block, siblings in the owner's body
    hoisted: List[cst.BaseStatement]        # stay in front of the function: variables, objects, defs
    moved: List[cst.BaseStatement]          # the body of the compiled function
    inputs: List[str]                       # graph inputs it reads, in order of first use
    tensors: List[str]                      # tensors the code after it uses
    ops: List[str]                          # the training op(s) the code after it uses
    call: Optional[cst.Call] = None         # the block is one call of a step function of the file
    front: List[cst.BaseStatement] = field(default_factory=list)  # graph inputs made among the statements
    early: List[cst.BaseStatement] = field(default_factory=list)  # variables made above the graph inputs
    eval_runs: List[cst.Call] = field(default_factory=list)     # session runs that only evaluate
    eval_names: Dict[int, str] = field(default_factory=dict)    # Name node id -> output it fetches
    eval_outputs: List[str] = field(default_factory=list)
    forward: List[cst.BaseStatement] = field(default_factory=list)  # what the evaluation computes
    reuse: Optional[str] = None             # how the forward build gets variables by name (variables_by_name)
    other_uses: List[cst.Name] = field(default_factory=list)    # uses neither a train nor an eval fetch
    trained: Set[str] = field(default_factory=set)              # outputs used other than by evaluation


def training_part(step: Step) -> List[cst.BaseStatement]:
    """The statements of the compiled training step: all of them but the evaluation tensors built
    after the last training op that no training run needs (test accuracy, predictions)."""
    last = max(index for index, statement in enumerate(step.moved) if is_training_statement(statement)
               or any(name in step.ops for name in names_bound(statement)))
    needed = set(step.trained) | set(step.ops)
    tail: List[cst.BaseStatement] = []
    for statement in reversed(step.moved[last + 1:]):
        if names_bound(statement) & needed:
            tail.insert(0, statement)
            needed |= names_used(statement)
    return step.moved[:last + 1] + tail


def is_training_statement(statement: cst.BaseStatement) -> bool:
    """True when the statement builds a training op (``opt.minimize(loss)``, ``apply_gradients``)."""
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return False
    return any(isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
               and node.func.attr.value in _TRAINING_METHODS for node in walk(statement))


def builds_training(ctx: FileContext, statement: cst.BaseStatement) -> bool:
    """The statement builds a training op, itself or through a step function of the file."""
    return is_training_statement(statement) or _calls_step_function(ctx, statement) is not None


def _calls_step_function(ctx: FileContext, statement: cst.BaseStatement) -> Optional[cst.FunctionDef]:
    """``loss, train_op = step(x, y)`` with ``step`` a function of the file that builds a training op."""
    small = _single_assign(statement)
    if small is None or not isinstance(small.value, cst.Call) or not isinstance(small.value.func, cst.Name):
        return None
    function = local_function(ctx, small.value.func.value, statement)
    if function is None or not any(is_training_statement(line) for line in function.body.body):
        return None
    return function


def _single_assign(statement: cst.BaseStatement) -> Optional[cst.Assign]:
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and \
            isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1:
        return statement.body[0]
    return None


def _not_compiled(ctx: FileContext, statement: cst.BaseStatement) -> Optional[cst.Call]:
    for node in walk(statement):
        name = tf_call_name(ctx, node)
        if name is not None and any(name.startswith(prefix) or name == prefix for prefix in _NOT_COMPILED):
            return node
    return None


def _is_host_statement(ctx: FileContext, statement: cst.BaseStatement) -> bool:
    return any(tf_call_name(ctx, node) in _HOST_CALLS for node in walk(statement))


def _is_graph_statement(ctx: FileContext, statement: cst.BaseStatement) -> bool:
    """Statements that may go into the step function: assignments (with, for and if blocks of
    them), defs; not bare calls (``print``), imports, returns or jumps."""
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return True
    if any(isinstance(node, _UNMOVABLE) for node in walk(statement)):
        return False
    if isinstance(statement, cst.SimpleStatementLine):
        return all(isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign)) for small in statement.body) \
            or _sets_resource_variables(statement)
    if isinstance(statement, (cst.With, cst.For, cst.If)):
        inner = [node for node in walk(statement) if isinstance(node, cst.SimpleStatementLine)]
        return all(_is_graph_statement(ctx, line) for line in inner)
    return False


def _sets_resource_variables(statement: cst.BaseStatement) -> bool:
    """``tf.get_variable_scope().set_use_resource(True)`` (IPU204 adds it in front of variables)."""
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    return isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and \
        isinstance(small.value.func, cst.Attribute) and small.value.func.attr.value == "set_use_resource"


def _uses_tf(ctx: FileContext, statement: cst.BaseStatement) -> bool:
    return any(tf_call_name(ctx, node) is not None for node in walk(statement))


def _plain_python(ctx: FileContext, statement: cst.BaseStatement, inputs: Set[str]) -> bool:
    """No TensorFlow call, no graph input, no call of a function of the file (which may build graph)."""
    return not _uses_tf(ctx, statement) and not (names_used(statement) & inputs) and not any(
        isinstance(node, cst.Call) and isinstance(node.func, cst.Name)
        and local_function(ctx, node.func.value, node) is not None for node in walk(statement))


def _owner_body(owner: cst.CSTNode) -> List[cst.BaseStatement]:
    if isinstance(owner, cst.Module):
        return list(owner.body)
    return list(owner.body.body) if isinstance(owner.body, cst.IndentedBlock) else []


def inputs_of(ctx: FileContext, owner: cst.CSTNode) -> Set[str]:
    """The graph inputs the statements of ``owner`` (a module, a function, a ``with
    graph.as_default():`` block) can read."""
    if isinstance(owner, cst.With):
        owner = ctx.enclosing_function(owner) or ctx.module
    return graph_inputs(ctx, owner)


def step_owners(ctx: FileContext) -> List[cst.CSTNode]:
    """Where a step may be built line by line: the module, its functions (and methods), and the
    ``with graph.as_default():`` blocks at the top of those."""
    owners: List[cst.CSTNode] = [ctx.module]
    owners += [node for node in ctx.nodes(cst.FunctionDef)]
    for owner in list(owners):
        for statement in _owner_body(owner):
            if isinstance(statement, cst.With) and isinstance(statement.body, cst.IndentedBlock) and any(
                    isinstance(item.item, cst.Call) and isinstance(item.item.func, cst.Attribute)
                    and item.item.func.attr.value == "as_default" for item in statement.items):
                owners.append(statement)
    return owners


def _session_index(ctx: FileContext, body: List[cst.BaseStatement]) -> int:
    """The position of the first statement of ``body`` that creates a session (its length if none)."""
    sessions = _holders_of(ctx).sessions
    for index, statement in enumerate(body):
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        if id(statement) in sessions:
            return index
    return len(body)


@dataclass
class _Holders:
    """Ids of the statements (at every level) that hold a session call, a training op
    (``minimize``/``apply_gradients``) or any call: found once per file, by climbing from the calls,
    instead of walking every statement of every body again."""
    sessions: Set[int] = field(default_factory=set)
    training: Set[int] = field(default_factory=set)
    calls: Set[int] = field(default_factory=set)


_HOLDERS: SharedKey[_Holders] = SharedKey("tf1-step-holders")


def _holders_of(ctx: FileContext) -> _Holders:
    def find() -> _Holders:
        holders = _Holders()
        sessions = {id(call) for call in session_calls(ctx)}
        for call in ctx.nodes(cst.Call):
            sets = [holders.calls]
            if id(call) in sessions:
                sets.append(holders.sessions)
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in _TRAINING_METHODS:
                sets.append(holders.training)
            for ancestor in ctx.ancestors(call):
                if not isinstance(ancestor, cst.BaseStatement):
                    continue
                definition = isinstance(ancestor, (cst.FunctionDef, cst.ClassDef))
                for found in sets:
                    if not (definition and found is holders.training):  # as `is_training_statement`
                        found.add(id(ancestor))
        return holders

    return ctx.shared(_HOLDERS, find)


def makes_inputs(ctx: FileContext, statement: cst.BaseStatement) -> Optional[str]:
    """What ``cpu_bound_kind`` says, also for a ``with`` block (``tf.name_scope("input")``) that only
    makes graph inputs."""
    if isinstance(statement, cst.With) and isinstance(statement.body, cst.IndentedBlock) and statement.body.body:
        kinds = [cpu_bound_kind(ctx, inner) for inner in statement.body.body]
        return kinds[0] if all(kind is not None for kind in kinds) else None
    return cpu_bound_kind(ctx, statement)


def find_block(ctx: FileContext, owner: cst.CSTNode) -> Optional[Union[List[cst.BaseStatement], Blocked]]:
    """The statements of ``owner``'s body from the first graph input to the training op and the
    evaluation tensors after it (graph inputs made in between included: the rule moves them in
    front); None when ``owner`` builds no training op before its session."""
    body = _owner_body(owner)
    holders = _holders_of(ctx)
    if not any(id(statement) in holders.training or id(statement) in holders.calls for statement in body):
        return None  # no training op and no call in this body: nothing to look at (most functions)
    limit = _session_index(ctx, body)
    # a loop that calls `minimize` runs eagerly or builds a graph per iteration: not a step built once
    training = [index for index in range(limit) if isinstance(body[index], (cst.SimpleStatementLine, cst.With))
                and (id(body[index]) in holders.training or _calls_step_function(ctx, body[index]) is not None)]
    if not training:
        return None
    end = training[-1]
    if any(isinstance(node, cst.Return) for node in walk(body[end])):
        return None  # a function that returns the step to its caller: the call is compiled there
    if not _is_graph_statement(ctx, body[end]):
        return Blocked(body[end], "the training op is not built by an assignment")
    start = end
    while start > 0 and (makes_inputs(ctx, body[start - 1]) is not None or (
            _is_graph_statement(ctx, body[start - 1]) and not _is_host_statement(ctx, body[start - 1]))):
        start -= 1
    graph_input_lines = [index for index in range(start, end) if makes_inputs(ctx, body[index]) is not None]
    if graph_input_lines:
        start = graph_input_lines[0]  # what is above the graph inputs stays where it is
    inputs = inputs_of(ctx, owner)
    while start < end and (_plain_python(ctx, body[start], inputs) or makes_inputs(ctx, body[start]) is not None):
        start += 1  # as do plain Python and the graph inputs in front of the graph
    moved_names = set()
    for statement in body[start:end + 1]:
        moved_names |= names_bound(statement)
    while end + 1 < limit and isinstance(body[end + 1], (cst.SimpleStatementLine, cst.With)) and \
            _is_graph_statement(ctx, body[end + 1]) and not _is_host_statement(ctx, body[end + 1]) and \
            makes_inputs(ctx, body[end + 1]) is None and names_used(body[end + 1]) & moved_names:
        end += 1  # accuracy, predictions: evaluation tensors of the model
        moved_names |= names_bound(body[end])
    block = body[start:end + 1]
    blocked = _before_block(ctx, owner, body[:start], block) or _inputs_in_block(ctx, block)
    return blocked if blocked is not None else block


def inputs_in_block(ctx: FileContext, block: List[cst.BaseStatement]) -> List[cst.BaseStatement]:
    """The graph inputs (placeholders, ``get_next()``, the global step) made among the statements
    of the block: they go in front of it, on the host."""
    return [statement for statement in block if makes_inputs(ctx, statement) is not None]


def _inputs_in_block(ctx: FileContext, block: List[cst.BaseStatement]) -> Optional[Blocked]:
    made: Set[str] = set()
    for statement in block:
        if makes_inputs(ctx, statement) is not None and names_used(statement) & made:
            return Blocked(statement, f"this graph input reads `{sorted(names_used(statement) & made)[0]}`, which "
                                      "the graph builds above it: make it before the graph")
        if makes_inputs(ctx, statement) is None:
            made |= names_bound(statement)
    return None


def _splitter(ctx: FileContext, before: List[cst.BaseStatement]) -> Optional[Blocked]:
    """The statement right above the block when it is what splits the graph in two."""
    if not before or makes_inputs(ctx, before[-1]) is not None:
        return None
    statement = before[-1]
    call = _not_compiled(ctx, statement)
    if call is not None:
        return Blocked(statement, f"`{_spelling(call.func)}` splits the graph from the graph inputs to the "
                                  "training op and does not compile for the IPU: move it below the training op "
                                  "(it can read the compiled outputs there)")
    return Blocked(statement, "this statement splits the graph from the graph inputs to the training op: move it "
                              "above the graph inputs or below the training op")


def _before_block(ctx: FileContext, owner: cst.CSTNode, before: List[cst.BaseStatement],
                  block: List[cst.BaseStatement]) -> Optional[Blocked]:
    """The block reads graph tensors made above it, not graph inputs: say which statement splits
    the graph. Variables made above it (``early_variables``) are no obstacle."""
    inputs = inputs_of(ctx, owner)
    early = {id(statement) for statement in early_variables(ctx, owner, before, block)}
    needed = _needed(ctx, before, block)
    for statement in reversed(before):
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) or id(statement) in early:
            continue  # a def makes no tensor
        made = (names_bound(statement) & needed) - inputs
        if not made or not _uses_tf(ctx, statement) or makes_inputs(ctx, statement) is not None:
            continue
        name = sorted(made)[0]
        splitter = _splitter(ctx, before)
        if splitter is not None and splitter.anchor is not statement:
            return splitter
        return Blocked(statement, f"`{name}` is built here, above the graph inputs or above a statement that "
                                  f"is not graph construction, and the step reads it: build the graph in one "
                                  f"block after the placeholders, with nothing else in between")
    return None


def _needed(ctx: FileContext, before: List[cst.BaseStatement], block: List[cst.BaseStatement]) -> Set[str]:
    """The names the block reads from above it, also through the functions defined above it."""
    needed, made_here = set(), set()
    for statement in block:
        needed |= names_used(statement) - made_here
        made_here |= names_bound(statement)
    for statement in reversed(before):
        if isinstance(statement, cst.FunctionDef) and statement.name.value in needed:
            needed |= {node.value for node in _free_names(statement)}
    return needed


def makes_variables(ctx: FileContext, statement: cst.BaseStatement) -> bool:
    """``w = tf.Variable(...)``, ``weights = {"h1": tf.get_variable(...), ...}``: an assignment of
    variables (and plain values), which a compiled step can read from where they are."""
    small = _single_assign(statement)
    return small is not None and _hoistable_value(ctx, small.value) and any(
        (tf_call_name(ctx, node) or "").rsplit(".", 1)[-1] in ("Variable", "get_variable")
        for node in walk(small.value))


def early_variables(ctx: FileContext, owner: cst.CSTNode, before: List[cst.BaseStatement],
                    block: List[cst.BaseStatement]) -> List[cst.BaseStatement]:
    """Statements above the block that make the variables it reads (``weights = {"h1":
    tf.Variable(...)}`` above the placeholders): they go into an IPU scope where they are."""
    inputs = inputs_of(ctx, owner)
    needed = _needed(ctx, before, block)
    found = []
    for statement in before:
        small = _single_assign(statement)
        if small is None or not (names_bound(statement) & needed) or names_used(small.value) & inputs:
            continue
        if makes_variables(ctx, statement):
            found.append(statement)
    return found


def _hoistable_value(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """Variables, objects (optimizers, layers) and plain Python values: they can be made in front
    of the step function and shared by the training and the evaluation builds."""
    if isinstance(value, (cst.Dict, cst.List, cst.Tuple)):
        elements = [element.value for element in value.elements] if not isinstance(value, cst.Dict) else \
            [element.value for element in value.elements if isinstance(element, cst.DictElement)]
        return bool(elements) and all(_hoistable_value(ctx, element) for element in elements)
    if isinstance(value, cst.Call):
        name = tf_call_name(ctx, value)
        if name is not None:
            last = name.rsplit(".", 1)[-1]
            return last in ("Variable", "get_variable") or last[:1].isupper()
        callee = dotted_name(value.func) or ""
        return "." in callee and not any(isinstance(node, cst.Call) and tf_call_name(ctx, node) is not None
                                         for node in walk(value))
    return not any(isinstance(node, cst.Call) for node in walk(value))


def split_block(ctx: FileContext, owner: cst.CSTNode, block: List[cst.BaseStatement]):
    """(hoisted, moved): what stays in front of the step function and what goes into it."""
    inputs = inputs_of(ctx, owner)
    hoisted: List[cst.BaseStatement] = []
    moved: List[cst.BaseStatement] = []
    made: Set[str] = set()
    for statement in block:
        small = _single_assign(statement)
        plain = small is not None and not (names_used(small.value) & (made | inputs)) and \
            _hoistable_value(ctx, small.value) and all(isinstance(t.target, cst.Name) for t in small.targets)
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) or plain or _sets_resource_variables(statement):
            hoisted.append(statement)
        else:
            moved.append(statement)
            made |= names_bound(statement)
    return hoisted, moved


def used_after(ctx: FileContext, owner: cst.CSTNode, block: List[cst.BaseStatement]) -> List[cst.Name]:
    """The name nodes read after the block: later in the owner, and in the file's functions when
    the block is at module level."""
    body = _owner_body(owner)
    later = body[body.index(block[-1]) + 1:]
    if isinstance(owner, cst.With):
        siblings = list(ctx.siblings(owner))
        later += siblings[siblings.index(owner) + 1:]
    found = [node for statement in later for node in _free_names(statement)]
    if isinstance(owner, cst.Module):
        for statement in body[:body.index(block[0])]:
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                found += _free_names(statement)
    return found


def _free_names(statement: cst.BaseStatement) -> List[cst.Name]:
    """The name nodes of ``statement``; in a def, those its body does not bind (its own locals
    are other variables)."""
    names = [node for node in walk(statement) if isinstance(node, cst.Name)]
    if not isinstance(statement, cst.FunctionDef):
        return names
    local = {param.name.value for param in walk(statement.params) if isinstance(param, cst.Param)}
    for inner in statement.body.body:
        local |= names_bound(inner)
    return [node for node in names if node.value not in local]


def output_kind(ctx: FileContext, body: List[cst.BaseStatement], name: str) -> Optional[str]:
    """"tensor" or "op" for the last ``name = <value>`` of ``body`` (also inside ``with`` blocks
    such as variable scopes, and ``a, b = step(...)`` with ``step`` a function of the file that
    returns them); None if unclear (bound otherwise, or an object such as an optimizer or a layer)."""
    value = None
    pending = list(body)
    while pending:
        statement = pending.pop(0)
        if name not in names_bound(statement):
            continue
        if isinstance(statement, cst.With) and isinstance(statement.body, cst.IndentedBlock):
            pending[:0] = list(statement.body.body)
            continue
        small = _single_assign(statement) if isinstance(statement, cst.SimpleStatementLine) else None
        if small is None:
            return None
        if not isinstance(small.targets[0].target, cst.Name):
            return _unpacked_kind(ctx, statement, small, name)
        value = small.value
    if isinstance(value, cst.Call):
        callee = dotted_name(value.func) or ""
        if callee.split(".")[-1][:1].isupper():
            return None
        if is_operation(ctx, value, None):
            return "op"
    return "tensor" if value is not None else None


def _unpacked_kind(ctx: FileContext, statement: cst.BaseStatement, small: cst.Assign, name: str) -> Optional[str]:
    function = _calls_step_function(ctx, statement)
    target = small.targets[0].target
    if function is None or not isinstance(target, (cst.Tuple, cst.List)):
        return None
    values = returned_values(function)
    names = [element.value.value if isinstance(element.value, cst.Name) else None for element in target.elements]
    if values is None or len(values) != len(names) or name not in names:
        return None
    return "op" if is_operation(ctx, values[names.index(name)], function) else "tensor"


def host_graph_after(ctx: FileContext, owner: cst.CSTNode,
                     block: List[cst.BaseStatement]) -> Optional[Tuple[cst.BaseStatement, str]]:
    """The graph built after the compiled ``block`` (statements of ``owner``), before the session, on
    graph inputs alone, such as a test model on a test iterator: left where it is, the session runs
    it on the CPU. Returns its first statement and what to say there; None if there is none."""
    body = _owner_body(owner)
    if block[-1] not in body:
        return None
    inputs = inputs_of(ctx, owner)
    made_by_step: Set[str] = set()
    for statement in block:
        made_by_step |= names_bound(statement)
    found: List[cst.BaseStatement] = []
    built: Set[str] = set()
    first_input = ""
    for statement in body[body.index(block[-1]) + 1:_session_index(ctx, body)]:
        used = names_used(statement)
        read = sorted(used & inputs)
        if not _is_graph_statement(ctx, statement) or isinstance(statement, (cst.FunctionDef, cst.ClassDef)) \
                or _plain_python(ctx, statement, set()) or _is_host_statement(ctx, statement) \
                or makes_inputs(ctx, statement) is not None or _not_compiled(ctx, statement) is not None:
            continue
        if used & made_by_step or not (read or used & built):
            continue  # built on the step's outputs: the rules report those uses
        first_input = first_input or (read[0] if read else "")
        found.append(statement)
        built |= names_bound(statement)
    if not found:
        return None
    read_later = {node.value for node in used_after(ctx, owner, [found[-1]])}
    later = [f"`{name}`" for statement in found for name in sorted(names_bound(statement)) if name in read_later]
    if not later:
        return None
    return found[0], (f"the graph built here on `{first_input}`, up to {', '.join(later)}, is not part of the "
                      f"compiled training step, so the session computes it on the CPU: build it in a function of "
                      f"its own (sharing the step's variables by name, under `reuse=True`), compile that with "
                      f"`ipu.ipu_compiler.compile` in `ipu.scopes.ipu_scope(\"{IPU_DEVICE}\")` and fetch what it "
                      f"returns")


# ------------------------------------------------------------------ how the session uses the outputs
def _run_fetches(ctx: FileContext, name: cst.Name) -> Optional[cst.Call]:
    """The ``session.run(...)`` call whose fetches (first argument) hold ``name``."""
    child: cst.CSTNode = name
    for ancestor in ctx.ancestors(name):
        if isinstance(ancestor, cst.Call):
            if isinstance(ancestor.func, cst.Attribute) and ancestor.func.attr.value == "run" and ancestor.args:
                fetches = next((arg for arg in ancestor.args if arg.keyword is not None
                                and arg.keyword.value == "fetches"), ancestor.args[0])
                return ancestor if child is fetches else None
        if isinstance(ancestor, (cst.BaseStatement, cst.Lambda)):
            return None
        child = ancestor
    return None


def _is_eval_method(ctx: FileContext, name: cst.Name) -> bool:
    """``tensor.eval(...)``: evaluates the tensor in the default session."""
    parent = ctx.parent(name)
    return isinstance(parent, cst.Attribute) and parent.value is name and parent.attr.value == "eval" and \
        isinstance(ctx.parent(parent), cst.Call)


def classify_uses(ctx: FileContext, step: Step, later: List[cst.Name]) -> None:
    """Fill ``step.eval_runs``, ``eval_names``, ``eval_outputs`` and ``other_uses``: a run that
    fetches a training op trains, any other fetch of an output only evaluates."""
    outputs = set(step.tensors) | set(step.ops)
    for name in later:
        if name.value not in outputs or isinstance(ctx.parent(name), cst.Attribute) and \
                ctx.parent(name).attr is name:
            continue
        run = _run_fetches(ctx, name)
        if run is not None:
            fetched = names_used(run.args[0].value)
            if fetched & set(step.ops):
                step.trained.add(name.value)
                continue  # a training step: it fetches the training op
            if run not in step.eval_runs:
                step.eval_runs.append(run)
        elif not _is_eval_method(ctx, name):
            step.trained.add(name.value)
            if not _in_training_fetches(ctx, name, step) and not _summary_run_with_training(ctx, name, step, later):
                step.other_uses.append(name)
            continue
        if name.value in step.ops:
            step.other_uses.append(name)
            continue
        step.eval_names[id(name)] = name.value
        if name.value not in step.eval_outputs:
            step.eval_outputs.append(name.value)


def _summary_run_with_training(ctx: FileContext, name: cst.Name, step: Step, later: List[cst.Name]) -> bool:
    """``tf.summary.scalar("loss", loss)`` on an output, where every run that fetches the summary (by
    its own name or through ``merge_all()``/``merge([...])``) also fetches the training op: it runs
    on the host on the step's outputs and trains no more than the run does."""
    statement = next((ancestor for ancestor in ctx.ancestors(name) if isinstance(ancestor, cst.BaseStatement)), None)
    summary = next((ancestor for ancestor in ctx.ancestors(name) if isinstance(ancestor, cst.Call)
                    and (tf_call_name(ctx, ancestor) or "").startswith("summary.")), None)
    if summary is None or statement is None:
        return False
    carriers = set(names_bound(statement))
    for merge in (node for node in ctx.nodes(cst.Call) if tf_call_name(ctx, node) in ("summary.merge_all",
                                                                                   "summary.merge")):
        if tf_call_name(ctx, merge) == "summary.merge" and not names_used(merge) & carriers:
            continue
        holder = next((ancestor for ancestor in ctx.ancestors(merge) if isinstance(ancestor, cst.BaseStatement)))
        carriers |= names_bound(holder)
    for node in later:
        if node.value not in carriers or isinstance(ctx.parent(node), cst.AssignTarget):
            continue
        run = _run_fetches(ctx, node)
        if run is None or not names_used(run.args[0].value) & set(step.ops):
            return False
    return True


def evaluation_runs(ctx: FileContext, node: cst.CSTNode, tensors: List[str], ops: List[str]) -> List[cst.Call]:
    """The session runs after ``node`` (a statement of a function or the module) that fetch
    ``tensors`` of a compiled training step without its training ``ops``: they train."""
    if not ops:
        return []
    owner = ctx.enclosing_function(node) or ctx.module
    top = node
    for ancestor in ctx.ancestors(node):
        if ancestor is owner:
            break
        if isinstance(ancestor, cst.BaseStatement):
            top = ancestor
    if top not in _owner_body(owner):
        return []
    step = Step(owner, [top], [], [], [], list(tensors), list(ops))
    classify_uses(ctx, step, used_after(ctx, owner, [top]))
    return step.eval_runs


def _in_training_fetches(ctx: FileContext, name: cst.Name, step: Step) -> bool:
    """``fetches = [train_op, loss]``: a list of fetches that holds the training op."""
    for ancestor in ctx.ancestors(name):
        if isinstance(ancestor, (cst.List, cst.Tuple, cst.Dict)):
            if names_used(ancestor) & set(step.ops):
                return True
            continue
        if isinstance(ancestor, (cst.Element, cst.DictElement, cst.BaseElement)):
            continue
        return False
    return False


# ------------------------------------------------------------------------------ the evaluation
def forward_slice(ctx: FileContext, moved: List[cst.BaseStatement], outputs: List[str]) -> List[cst.BaseStatement]:
    """The statements of ``moved`` that the ``outputs`` depend on, in order."""
    wanted = set(outputs)
    kept: List[cst.BaseStatement] = []
    for statement in reversed(moved):
        if names_bound(statement) & wanted:
            kept.append(statement)
            wanted |= names_used(statement)
    return list(reversed(kept))


def private_variables(ctx: FileContext, forward: List[cst.BaseStatement]):
    """(call, what) for the first variable a second build of ``forward`` would create anew
    instead of sharing (``tf.Variable``, a layer object made inline); None when every variable is
    shared (made in front of the function, or by name under ``reuse=True``). The functions of the
    file called there are looked into too."""
    for call in _calls_in(ctx, forward):
        name = tf_call_name(ctx, call)
        last = (name or "").rsplit(".", 1)[-1]
        if last == "Variable":
            return call, "`tf.Variable` makes a new variable each time it runs"
        if name is not None and last[:1].isupper() and name.startswith(_NAMED_BUILDERS):
            return call, f"a `{last}` layer made here has its own variables"
    return None


def _calls_in(ctx: FileContext, forward: List[cst.BaseStatement], depth: int = 2) -> List[cst.Call]:
    """The calls of ``forward`` and of the functions of the file it calls (``depth`` levels)."""
    found: List[cst.Call] = []
    for statement in forward:
        for node in walk(statement):
            if not isinstance(node, cst.Call):
                continue
            found.append(node)
            function = local_function(ctx, node.func.value, node) if isinstance(node.func, cst.Name) else None
            if function is not None and depth > 0:
                found += _calls_in(ctx, list(function.body.body), depth - 1)
    return found


def variables_by_name(ctx: FileContext, forward: List[cst.BaseStatement]) -> Optional[str]:
    """How building ``forward`` gets variables by name, so that a second build must reuse them:
    "named" (``get_variable``, layers given a ``name=``), "unnamed" (layers named by a counter,
    which restarts only in a named variable scope entered again); None when it gets none."""
    kinds = set()
    for call in _calls_in(ctx, forward):
        name = tf_call_name(ctx, call) or ""
        last = name.rsplit(".", 1)[-1]
        if name.endswith("get_variable"):
            kinds.add("named")
        elif name.startswith(_NAMED_BUILDERS) and last[:1].islower():
            named = any(arg.keyword is not None and arg.keyword.value == "name" for arg in call.args)
            kinds.add("named" if named or _in_named_scope(ctx, call) else "unnamed")
    return "unnamed" if "unnamed" in kinds else ("named" if kinds else None)


def _in_named_scope(ctx: FileContext, node: cst.CSTNode) -> bool:
    """Inside ``with tf.variable_scope("name"):``, entered again by a second build, where the
    counters that name layers restart."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.With) and any(
                tf_call_name(ctx, item.item) == "variable_scope" and item.item.args
                and isinstance(item.item.args[0].value, cst.SimpleString) for item in ancestor.items):
            return True
    return False


def reads_scope_names(ctx: FileContext) -> Optional[cst.Call]:
    """A call that finds variables by their scope's name (``get_collection(..., scope="gen")``,
    ``scope=`` arguments): moving the model into a new variable scope would change what it finds."""
    for call in ctx.nodes(cst.Call):
        name = tf_call_name(ctx, call)
        if name is None:
            continue
        if name.endswith("get_collection") or any(arg.keyword is not None and arg.keyword.value == "scope"
                                                  for arg in call.args):
            return call
    return None


# ------------------------------------------------------------------------------ all together
def analyse_step(ctx: FileContext, owner: cst.CSTNode) -> Optional[Union[Step, Blocked]]:
    """The step ``owner`` builds line by line, or what prevents compiling it; None if none."""
    found = find_block(ctx, owner)
    if found is None or isinstance(found, Blocked):
        return found
    front = inputs_in_block(ctx, found)
    block = [statement for statement in found if statement not in front]
    for call in _calls_in(ctx, block):
        if _not_compiled(ctx, call) is not None:
            return Blocked(call, f"`{_spelling(call.func)}` does not compile for the IPU: move it below the "
                                 "graph (on the compiled outputs) or into `ipu.scopes.outside_compilation_scope()`")
    hoisted, moved = split_block(ctx, owner, block)
    for statement in moved:
        made_inside = next((call for call in _calls_in(ctx, [statement]) if _makes_graph_input(ctx, call)), None)
        if made_inside is not None:
            return Blocked(statement, f"`{_spelling(made_inside.func)}(...)` makes a graph input inside the step: "
                                      "make the placeholders (or the iterator's `get_next()`) before the graph and "
                                      "pass them in, so that they stay on the host")
    inputs = inputs_of(ctx, owner)
    bound: List[str] = []
    for statement in moved:
        bound += [name for name in sorted(names_bound(statement)) if name not in bound]
    if any(name in inputs for name in bound):
        rebound = next(name for name in bound if name in inputs)
        return Blocked(block[0], f"the graph rebinds the graph input `{rebound}`")
    later = used_after(ctx, owner, block)
    read_later = {node.value for node in later}
    outputs = [name for name in bound if name in read_later]
    kinds = {}
    for name in outputs:
        kinds[name] = output_kind(ctx, moved, name)
        if kinds[name] is None:
            anchor = next(statement for statement in moved if name in names_bound(statement))
            return Blocked(anchor, f"`{name}` is used after the graph but is not clearly a tensor or an operation")
    tensors = [name for name in outputs if kinds[name] == "tensor"]
    ops = [name for name in outputs if kinds[name] == "op"]
    if _returned(ctx, owner, later, outputs):
        return None  # a function that builds the step for its caller: the call is compiled there
    if len(ops) > 1 and (not tensors or not _fetched_together(ctx, later, ops)):
        anchor = next(statement for statement in moved if ops[1] in names_bound(statement))
        return Blocked(anchor, f"the graph makes several training ops ({', '.join(f'`{op}`' for op in ops)}) "
                               "that the session does not always run together: compile each step in its own "
                               "function")
    if not ops:
        return None
    used = [name for statement in moved for name in _names_in_order(statement) if name in inputs]
    params = list(dict.fromkeys(used))
    step = Step(owner, block, hoisted, moved, params, tensors, ops, front=front)
    body = _owner_body(owner)
    step.early = early_variables(ctx, owner, body[:body.index(block[0])], block)
    if len(moved) == 1 and _calls_step_function(ctx, moved[0]) is not None:
        step.call = _single_assign(moved[0]).value
    classify_uses(ctx, step, later)
    return step


def _fetched_together(ctx: FileContext, later: List[cst.Name], ops: List[str]) -> bool:
    """True when every use of a training op is a session run that fetches all of them (a GAN's two
    steps): one compiled step can run them all."""
    for node in later:
        if node.value not in ops:
            continue
        run = _run_fetches(ctx, node)
        if run is None or not set(ops) <= names_used(run.args[0].value):
            return False
    return True


def _returned(ctx: FileContext, owner: cst.CSTNode, later: List[cst.Name], outputs: List[str]) -> bool:
    """True when the owner function returns one of the outputs."""
    function = owner if isinstance(owner, cst.FunctionDef) else ctx.enclosing_function(owner)
    return function is not None and any(
        node.value in outputs and ctx.enclosing_function(node) is function
        and any(isinstance(ancestor, cst.Return) for ancestor in ctx.ancestors(node)) for node in later)


def _makes_graph_input(ctx: FileContext, call: cst.Call) -> bool:
    name = tf_call_name(ctx, call) or ""
    return name.startswith("placeholder") or name == "sparse_placeholder" or (
        isinstance(call.func, cst.Attribute) and call.func.attr.value == "get_next")


def _spelling(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _names_in_order(statement: cst.BaseStatement) -> List[str]:
    return [node.value for node in walk(statement) if isinstance(node, cst.Name)]


# ------------------------------------------------------------------------------ generated lines
def compiled_lines(computation: str, inputs: List[str], tensors: List[str], ops: List[str]) -> List[cst.BaseStatement]:
    """``tensors = ipu.ipu_compiler.compile(...)`` and ``op = first_tensor.op`` lines."""
    compiled = f"ipu.ipu_compiler.compile({computation}, inputs=[{', '.join(inputs)}])"
    if not tensors:
        text = f"{ops[0]} = {compiled}"
    elif len(tensors) == 1:
        text = f"[{tensors[0]}] = {compiled}"
    else:
        text = f"{', '.join(tensors)} = {compiled}"
    lines = [cst.parse_statement(text + "\n")]
    if tensors:
        lines += [cst.parse_statement(f"{name} = {tensors[0]}.op  # runs the whole compiled step\n")
                  for name in ops if name != "_"]
    return lines


def ops_note(tensors: List[str], ops: List[str]) -> str:
    extra = [name for name in ops if name != "_"] if tensors else []
    if not extra:
        return ""
    return (f"; {', '.join(f'`{name}`' for name in extra)} now runs it through `{tensors[0]}.op`, and "
            f"fetching {', '.join(f'`{name}`' for name in tensors)} runs the whole step too")
