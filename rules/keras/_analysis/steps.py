"""Custom training loops as a script has them: functions that open a ``tf.GradientTape`` (the
steps), the ``tf.function`` test steps beside them that only run the model, and the ``for`` loops
that call them. ``porter.rules.keras._analysis.custom_loop`` plans their
rewrite (IPU111); ``porter.rules.keras._analysis.model_plan`` asks which statements of a block the
strategy scope must also cover when they are rewritten: the loops, and the optimizers and metrics
they use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Set, Tuple, Union

import libcst as cst

from porter.context import FileContext, SharedKey, bound_names, code_of, walk
from porter.cstutil import argument, is_name, keyword
from porter.rules.keras._analysis.util import HOST_FUNCTIONS, LOOKUP_LAYERS, RUN_METHODS, assigned_layers, is_run_call
from porter.scopes import assignments, called_returns, loads, parameter_names, returns_of, values_of

TAPES = ("tensorflow.GradientTape", "tensorflow.autodiff.GradientTape", "tensorflow.compat.v1.GradientTape")
IN_SCOPE_PREFIXES = ("keras.optimizers.", "keras.metrics.")
LOSSES = "keras.losses."  # loss objects (classes) join the scope too; loss functions are only called
# Optimizers of TensorFlow Addons (`tfa.optimizers.AdamW`, `Lookahead`...): Keras optimizers too.
_ADDONS_OPTIMIZERS = "tensorflow_addons.optimizers."
_SCHEDULES = "keras.optimizers.schedules."
FUNCTIONS = ("tensorflow.function", "tensorflow.compat.v2.function")

# Calls that change weights: without one, a tape only takes gradients (saliency maps, guides).
WEIGHT_UPDATES = frozenset({"apply_gradients", "minimize", "assign_sub", "assign_add", "assign"})
# Methods a loop's body calls when it trains (or evaluates) batch by batch.
_TRAINING_METHODS = frozenset({*RUN_METHODS, "train_on_batch", "test_on_batch"})
# What a step differentiates and updates: the object these are read from is a model.
TRAINED_ATTRIBUTES = frozenset({"trainable_variables", "trainable_weights"})

# Calls in a step that only make sense in Python, eagerly: the step cannot be compiled as it is.
_EAGER_METHODS = frozenset({"numpy", "item", "append", "extend", "tolist"})
_EAGER_FUNCTIONS = frozenset({"print", "float", "int", "input", "open"})

_STEP_FUNCTIONS: SharedKey[Dict[str, List[cst.FunctionDef]]] = SharedKey("keras-step-functions")
_TRAINED_NAMES: SharedKey[Set[str]] = SharedKey("keras-trained-names")
_EVALUATION_CALLS: SharedKey[List["StepCall"]] = SharedKey("keras-evaluation-calls")  # per set of models
_RUN_BY: SharedKey[Tuple[cst.FunctionDef, ...]] = SharedKey("keras-functions-run-by")  # per function
_OWN_CALLS: SharedKey[Tuple[FrozenSet[str], bool]] = SharedKey("keras-own-calls")  # per function
_CALLED_IN_LOOPS: SharedKey[Set[str]] = SharedKey("keras-called-in-loops")
_PLAIN_FUNCTIONS: SharedKey[Dict[str, cst.FunctionDef]] = SharedKey("keras-plain-functions")
_MADE_STEPS: SharedKey[Dict[str, List[cst.FunctionDef]]] = SharedKey("keras-made-steps")
_METHOD_STEP_CALLS: SharedKey[List["StepCall"]] = SharedKey("keras-method-step-calls")


@dataclass
class StepCall:
    function: cst.FunctionDef
    call: cst.Call
    statement: cst.BaseStatement  # the statement of the loop body that holds the call
    loop: cst.For


def step_functions(ctx: FileContext) -> Dict[str, List[cst.FunctionDef]]:
    """Functions of the file (not methods) that open a ``tf.GradientTape``, per name (a notebook
    may define ``train_step`` twice, one for each of its loops). A plain function that opens its
    tapes only in a loop of its own, called once per epoch (``_epoch_function``), is no step: the
    step is written inline in its loop."""
    def find() -> Dict[str, List[cst.FunctionDef]]:
        found: Dict[str, List[cst.FunctionDef]] = {}
        tapes = [call for call, _ in ctx.calls_to(*TAPES)]
        for call in tapes:
            function = ctx.enclosing_function(call)
            if function is None or ctx.enclosing(function, cst.ClassDef) is not None:
                continue
            if _epoch_function(ctx, function, tapes):
                continue
            same_name = found.setdefault(function.name.value, [])
            if all(function is not known for known in same_name):
                same_name.append(function)
        return found

    return ctx.shared(_STEP_FUNCTIONS, find)


def _epoch_function(ctx: FileContext, function: cst.FunctionDef, tapes: List[cst.Call]) -> bool:
    """A plain function (no ``tf.function``) that opens its tapes only in a loop of its own, and
    whose calls are run once, or once per pass of a ``range`` loop (the epochs): its loop goes over
    the batches. (A step called per batch that trains several models in a loop is a step.)"""
    if is_tf_function(ctx, function) or not all(
            _in_own_loop(ctx, tape, function) for tape in tapes if ctx.enclosing_function(tape) is function):
        return False
    calls = [call for call in ctx.nodes(cst.Call) if is_name(call.func, function.name.value)]
    return bool(calls) and all(_over_range(loop) for call in calls for loop in ctx.ancestors(call)
                               if isinstance(loop, (cst.For, cst.While)))


def _over_range(loop: Union[cst.For, cst.While]) -> bool:
    """``for epoch in range(...)``: a loop over numbers, not over batches."""
    return isinstance(loop, cst.For) and isinstance(loop.iter, cst.Call) and is_name(loop.iter.func, "range")


def _in_own_loop(ctx: FileContext, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    """``node`` is in the body of a ``for`` or ``while`` loop written in ``function``."""
    child = node
    for ancestor in ctx.ancestors(node):
        if ancestor is function:
            return False
        if isinstance(ancestor, (cst.For, cst.While)) and ancestor.body is child:
            return True
        child = ancestor
    return False


def definition_before(ctx: FileContext, call: cst.Call, candidates: List[cst.FunctionDef]) -> cst.FunctionDef:
    """Which of the functions of one name a call runs: the last one defined before it in the
    nearest block around it that defines one (Python binds the name when ``def`` runs)."""
    if len(candidates) == 1:
        return candidates[0]
    for node in (call, *ctx.ancestors(call)):
        block = ctx.parent(node)
        if not isinstance(block, (cst.Module, cst.IndentedBlock)):
            continue
        before = list(block.body)[:list(block.body).index(node)]
        defined = [statement for statement in before if any(statement is function for function in candidates)]
        if defined:
            return defined[-1]
    return candidates[0]


def is_tf_function(ctx: FileContext, function: Optional[cst.FunctionDef]) -> bool:
    """Whether ``function`` is decorated with ``tf.function`` (with or without options)."""
    if function is None:
        return False
    for decorator in function.decorators:
        node = decorator.decorator
        if ctx.qualified_name(node.func if isinstance(node, cst.Call) else node) in FUNCTIONS:
            return True
    return False


def is_jit_compiled(ctx: FileContext, function: Optional[cst.FunctionDef]) -> bool:
    """Whether ``function`` is decorated with ``tf.function(jit_compile=True)`` (or the older
    ``experimental_compile=True``)."""
    for decorator in function.decorators if function is not None else ():
        node = decorator.decorator
        if isinstance(node, cst.Call) and ctx.qualified_name(node.func) in FUNCTIONS:
            given = keyword(node, "jit_compile") or keyword(node, "experimental_compile")
            if given is not None and is_name(given.value, "True"):
                return True
    return False


def minimize_calls(ctx: FileContext) -> List[cst.Call]:
    """Calls ``optimizer.minimize(loss, var_list=...)`` of a TensorFlow 2 optimizer held in a name
    (``var_list`` is what sets them apart from TF1's ``minimize(loss)`` and from functions of a
    module, such as SciPy's ``minimize``)."""
    return [call for call in ctx.nodes(cst.Call) if isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "minimize" and isinstance(call.func.value, (cst.Name, cst.Attribute))
            and ctx.qualified_name(call.func) is None and argument(call, "var_list", 1) is not None]


def updates_weights(node: cst.CSTNode) -> bool:
    """An optimizer step, or a hand-written update of a variable (``w.assign_sub(lr * dw)``)."""
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in WEIGHT_UPDATES)


def functions_run_by(ctx: FileContext, function: cst.FunctionDef) -> Tuple[cst.FunctionDef, ...]:
    """``function`` and the functions of the file it calls by name, transitively: the helpers a
    step calls (its loss, its optimizer step) run inside ``strategy.run`` too. (Asked of every
    function by the analyses of steps: found once for each.)"""
    return ctx.shared(_RUN_BY, lambda: (function, *functions_called_from(ctx, [function.body], exclude=function)),
                      per=id(function))


def plain_functions(ctx: FileContext) -> Dict[str, cst.FunctionDef]:
    """The functions of the file that are not methods, by name (the first of a name)."""
    def find() -> Dict[str, cst.FunctionDef]:
        functions: Dict[str, cst.FunctionDef] = {}
        for node in ctx.nodes(cst.FunctionDef):
            if ctx.enclosing(node, cst.ClassDef) is None:
                functions.setdefault(node.name.value, node)
        return functions

    return ctx.shared(_PLAIN_FUNCTIONS, find)


def functions_called_from(ctx: FileContext, roots: List[cst.CSTNode],
                          exclude: Optional[cst.FunctionDef] = None) -> List[cst.FunctionDef]:
    """The functions of the file (not methods) that the code under ``roots`` calls by name, and
    those they call, transitively."""
    functions = plain_functions(ctx)
    found: List[cst.FunctionDef] = []
    pending: List[cst.CSTNode] = list(roots)
    while pending:
        for node in walk(pending.pop()):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
                callee = functions.get(node.func.value)
                if callee is not None and callee is not exclude and all(callee is not seen for seen in found):
                    found.append(callee)
                    pending.append(callee.body)
    return found


def eager_calls(ctx: FileContext, root: cst.CSTNode, traced: bool = False) -> List[str]:
    """What in a step (a function's body, a statement) needs Python at run time (``.numpy()``,
    ``print``, list appends...), and what in the functions of the file it calls cannot be compiled
    at all (``tf.numpy_function``, ``.numpy()``, summaries, ``tf.print``). With ``traced`` (the step
    is a ``tf.function`` already), Python's own calls run once, while it is traced: only what the
    compiled program cannot hold counts."""
    found: List[str] = []
    lookups = assigned_layers(ctx, LOOKUP_LAYERS)
    for node in walk(root):
        if isinstance(node, cst.Call):
            func = node.func
            if not traced and isinstance(func, cst.Attribute) and func.attr.value in _EAGER_METHODS:
                found.append(f"`.{func.attr.value}()`")
            elif not traced and isinstance(func, cst.Name) and func.value in _EAGER_FUNCTIONS \
                    and ctx.qualified_name(func) is None and not _static_conversion(ctx, node):
                found.append(f"`{func.value}()`")
            elif _calls_host(ctx, node):
                found.append(f"`{code_of(ctx, func)}()`")
            elif (ctx.qualified_name(func) or "").startswith(_SUMMARIES):
                found.append(f"`{code_of(ctx, func)}()`, which writes on the host")
            elif ctx.qualified_name(func) in _PRINTS:
                found.append(f"`{code_of(ctx, func)}()`, which prints on the host; in a compiled step, "
                             "`ipu.internal_ops.print_tensor` prints a tensor")
            elif isinstance(func, cst.Name) and func.value in lookups:
                found.append(f"`{func.value}()`, a lookup layer")
        elif isinstance(node, (cst.Global, cst.Nonlocal)) and not traced:
            found.append("`global`/`nonlocal` state")
    for function in functions_called_from(ctx, [root]):
        for node in walk(function):  # its decorators too: `@tf.numpy_function(...)` makes it host code
            if isinstance(node, cst.Call) and (_calls_host(ctx, node) or isinstance(
                    node.func, cst.Attribute) and node.func.attr.value == "numpy"):
                found.append(f"`{code_of(ctx, node.func)}()` in `{function.name.value}`")
    return sorted(set(found))


# TensorBoard summaries: their writer ops run on the host, and XLA compiles none of them.
_SUMMARIES = ("tensorflow.summary.", "tensorflow.compat.v2.summary.")
# `tf.print` formats strings and prints from the graph: not compiled either.
_PRINTS = frozenset({"tensorflow.print", "tensorflow.compat.v1.print", "tensorflow.compat.v2.print"})


def host_output(ctx: FileContext, call: cst.Call) -> Optional[str]:
    """What ``call`` writes from the graph on the host, as a clause (``tf.print``: "prints";
    ``tf.summary.scalar``: "writes a TensorBoard summary"), else None."""
    qualified = ctx.qualified_name(call.func) or ""
    if qualified in _PRINTS:
        return "prints"
    if qualified.startswith(_SUMMARIES):
        return "writes a TensorBoard summary"
    return None


def _static_conversion(ctx: FileContext, call: cst.Call) -> bool:
    """``int(targ.shape[1])``, ``float(BATCH)``: a number known when the step is traced (a static
    dimension, a constant of the module), which a compiled step may convert."""
    if call.func.value not in ("int", "float") or len(call.args) != 1:
        return False
    value = call.args[0].value
    if isinstance(value, (cst.Integer, cst.Float)):
        return True
    if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Attribute) and value.value.attr.value == "shape":
        return True
    return isinstance(value, cst.Name) and _module_constant(ctx, value.value)


def _module_constant(ctx: FileContext, name: str) -> bool:
    """``name`` is bound at module level to numbers only (``BATCH = 64``)."""
    values = [value for _, bound, value in assignments(ctx, ctx.module) if bound == name]
    return bool(values) and all(isinstance(value, (cst.Integer, cst.Float)) for value in values)


def _calls_host(ctx: FileContext, call: cst.Call) -> bool:
    """``tf.numpy_function(...)``, ``tf.py_function(...)``: Python called back from the graph."""
    return ctx.qualified_name(call.func) in HOST_FUNCTIONS


def trains(ctx: FileContext, function: cst.FunctionDef) -> bool:
    """Whether a step updates weights, itself or through the helpers it calls (else it only takes
    gradients: a guide, a saliency map, not a training step)."""
    return any(_own_calls(ctx, helper)[1] for helper in functions_run_by(ctx, function))


def trained_names(ctx: FileContext) -> Set[str]:
    """Names whose ``.trainable_variables`` a step function differentiates, or whose variables a
    training step written inline in a loop differentiates and updates (``tape.gradient(loss,
    net.variables)`` then ``apply_gradients``/``assign_sub``): models, even when the file cannot see
    how they are built (``pix2pix.unet_generator(...)``, a hub module, a ``tf.Module``)."""
    def find() -> Set[str]:
        found: Set[str] = set()
        for function in (function for same_name in step_functions(ctx).values() for function in same_name):
            for node in walk(function.body):
                if (isinstance(node, cst.Attribute) and node.attr.value in TRAINED_ATTRIBUTES
                        and isinstance(node.value, cst.Name)):
                    found.add(node.value.value)
        for call in ctx.nodes(cst.Call):
            if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "gradient" and len(call.args) >= 2):
                continue
            loop = ctx.enclosing(call, cst.For)
            if loop is None or not any(updates_weights(node) for node in walk(loop.body)):
                continue
            for node in walk(call.args[1].value):
                if (isinstance(node, cst.Attribute) and node.attr.value in TRAINED_ATTRIBUTES | {"variables"}
                        and isinstance(node.value, cst.Name)):
                    found.add(node.value.value)
        return found

    return ctx.shared(_TRAINED_NAMES, find)


def step_calls(ctx: FileContext) -> List[StepCall]:
    """Calls of a step function in the body of a ``for`` loop, directly or under a statement of it
    (the generator's step of a GAN every few batches, ``if i % 5 == 0: gen_step()``), by its name
    or by a name that holds it (``step_fn = make_train_step(model, optimizer)``)."""
    return _loop_calls(ctx, step_functions(ctx), nested=True) + _loop_calls(ctx, made_steps(ctx), nested=True)


def method_step_calls(ctx: FileContext) -> List[StepCall]:
    """Calls ``self.train_step(x, y)`` directly in the body of a ``for`` loop of a method of a plain
    class (a trainer: no base class but ``object``), of its own method that opens a
    ``GradientTape``: the trainer's step, which the loop runs like a step function of the file."""
    def find() -> List[StepCall]:
        found: List[StepCall] = []
        steps: List[cst.FunctionDef] = []
        for tape, _ in ctx.calls_to(*TAPES):
            step = ctx.enclosing_function(tape)
            owner = ctx.parent(ctx.parent(step)) if step is not None else None
            if not isinstance(owner, cst.ClassDef) or not _plain_class(ctx, owner) or any(step is seen for seen in steps):
                continue
            steps.append(step)
            wrappers = wrapped_methods(ctx, owner)
            compiled = {id(wrapped) for wrapped, _ in wrappers.values()}
            # The class's test step beside it: a `tf.function` that calls what the tape's code calls on
            # `self` (the model), without a tape of its own.
            taped = {node.func.attr.value for node in walk(step.body) if isinstance(node, cst.Call)
                     and isinstance(node.func, cst.Attribute) and is_name(node.func.value, "self")}
            tests = [method for method in owner.body.body if isinstance(method, cst.FunctionDef)
                     and method is not step and (is_tf_function(ctx, method) or id(method) in compiled) and not any(
                         ctx.enclosing_function(other) is method for other, _ in ctx.calls_to(*TAPES))
                     and any(isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                             and is_name(node.func.value, "self") and node.func.attr.value in taped
                             for node in walk(method.body))]
            for method in [step, *tests]:
                # The method's own name, and the attributes that hold it compiled (`self.train_step =
                # tf.function(self._train_step)`): the loop calls either.
                names = {method.name.value} | {attribute for attribute, (wrapped, _) in wrappers.items()
                                               if wrapped is method}
                # Its own loops, and those of the base classes that leave the step to it (`BaseTrainer.fit`).
                for home in (owner, *_bases_leaving(ctx, owner, method.name.value)):
                    for call in walk(home):
                        if (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and is_name(
                                call.func.value, "self") and call.func.attr.value in names):
                            found.extend(_loop_calls_at(ctx, call, method, nested=False))
        return found

    return ctx.shared(_METHOD_STEP_CALLS, find)


def _bases_leaving(ctx: FileContext, owner: cst.ClassDef, name: str) -> List[cst.ClassDef]:
    """The classes of the file ``owner`` derives from whose training loop calls ``self.<name>``
    while only ``owner`` defines it (``class BaseTrainer:`` with ``def fit``, ``class
    Trainer(BaseTrainer):`` with the step): each defines ``name`` only to be overridden (``raise
    NotImplementedError``, ``pass``) or not at all, and ``owner`` is its one subclass of the file, so
    its calls of ``self.<name>`` always run ``owner``'s."""
    classes = {node.name.value: node for node in ctx.nodes(cst.ClassDef)}
    found: List[cst.ClassDef] = []
    below = owner
    while len(below.bases) == 1 and isinstance(below.bases[0].value, cst.Name):
        base = classes.get(below.bases[0].value.value)
        if base is None or any(base is seen for seen in found) or not _abstract(method_named(base, name)) or [
                node for node in classes.values() if any(is_name(arg.value, base.name.value) for arg in node.bases)
        ] != [below]:
            break
        found.append(base)
        below = base
    return found


def _abstract(method: Optional[cst.FunctionDef]) -> bool:
    """No method, or one that only says it is to be overridden: ``raise NotImplementedError``,
    ``pass``, ``...``, a docstring."""
    if method is None:
        return True
    for statement in method.body.body:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
        if isinstance(small, cst.Pass) or isinstance(small, cst.Expr) and isinstance(
                small.value, (cst.Ellipsis, cst.SimpleString, cst.ConcatenatedString)):
            continue
        raised = small.exc if isinstance(small, cst.Raise) else None
        if raised is not None and (is_name(raised, "NotImplementedError") or isinstance(raised, cst.Call) and is_name(
                raised.func, "NotImplementedError")):
            continue
        return False
    return True


def wrapped_methods(ctx: FileContext, owner: cst.ClassDef) -> Dict[str, Tuple[cst.FunctionDef, cst.Call]]:
    """The attributes a class's methods set to one of its methods compiled by a call of
    ``tf.function`` (``self.train_step = tf.function(self._train_step)`` in ``__init__``), by
    attribute name: the method, and the call that compiles it."""
    found: Dict[str, Tuple[cst.FunctionDef, cst.Call]] = {}
    for assign in walk(owner.body):
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1):
            continue
        target, value = assign.targets[0].target, assign.value
        if not (isinstance(target, cst.Attribute) and is_name(target.value, "self") and isinstance(value, cst.Call)
                and ctx.qualified_name(value.func) in FUNCTIONS and value.args and value.args[0].keyword is None):
            continue
        handed = value.args[0].value
        method = method_named(owner, handed.attr.value) if isinstance(handed, cst.Attribute) and is_name(
            handed.value, "self") else None
        if method is not None and ctx.enclosing(assign, cst.ClassDef) is owner:
            found[target.attr.value] = (method, value)
    return found


def _plain_class(ctx: FileContext, owner: cst.ClassDef, seen: FrozenSet[str] = frozenset()) -> bool:
    """A class of its own (``class Trainer:``), not a Keras model, layer or ``tf.Module``: its
    bases, if any, are ``object`` or classes of its own of the file (``class Trainer(BaseTrainer):``)."""
    classes = {node.name.value: node for node in ctx.nodes(cst.ClassDef)}
    return all(is_name(base.value, "object") or isinstance(base.value, cst.Name) and base.value.value not in seen
               and base.value.value in classes and ctx.qualified_name(base.value) is None
               and _plain_class(ctx, classes[base.value.value], seen | {owner.name.value}) for base in owner.bases)


def made_steps(ctx: FileContext) -> Dict[str, List[cst.FunctionDef]]:
    """Names assigned what a function of the file returns when it returns a step function it
    defines (``def make_train_step(model, optimizer): ... return train_step``), or the step
    compiled by a call of ``tf.function`` (``train_fn = tf.function(train_step)``), by name: a
    call of the name runs that step. (A name the step's own, ``train_step = make_train_step(...)``,
    is called as the step already.)"""
    def find() -> Dict[str, List[cst.FunctionDef]]:
        steps = step_functions(ctx)
        functions = plain_functions(ctx)
        found: Dict[str, List[cst.FunctionDef]] = {}
        for assign in ctx.nodes(cst.Assign) if steps else ():
            value = assign.value
            if not (len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)
                    and isinstance(value, cst.Call)):
                continue
            compiled = compiled_function(ctx, value)
            if compiled is not None and compiled.value in steps:
                made = definition_before(ctx, value, steps[compiled.value])
            elif (isinstance(value.func, cst.Name) and ctx.qualified_name(value.func) is None
                  and value.func.value in functions):
                made = _returned_step(functions[value.func.value], steps)
            else:
                continue
            name = assign.targets[0].target.value
            if made is not None and name not in steps and all(made is not known for known in found.get(name, [])):
                found.setdefault(name, []).append(made)
        return found

    return ctx.shared(_MADE_STEPS, find)


def compiled_function(ctx: FileContext, call: cst.Call) -> Optional[cst.Name]:
    """The name of the function ``call`` compiles when it is ``tf.function(train_step, ...)``."""
    handed = call.args[0] if call.args else None
    if (ctx.qualified_name(call.func) in FUNCTIONS and handed is not None and handed.keyword is None
            and not handed.star and isinstance(handed.value, cst.Name)):
        return handed.value
    return None


def _returned_step(factory: cst.FunctionDef, steps: Dict[str, List[cst.FunctionDef]]) -> Optional[cst.FunctionDef]:
    """The step function that ``factory`` defines in its body and returns on every path, if any."""
    returns = returns_of(factory)
    names = {node.value.value for node in returns if isinstance(node.value, cst.Name)}
    if not returns or len(names) != 1 or len(returns) != sum(isinstance(node.value, cst.Name) for node in returns):
        return None
    name = names.pop()
    defined = [statement for statement in factory.body.body if isinstance(statement, cst.FunctionDef)
               and statement.name.value == name and any(statement is step for step in steps.get(name, []))]
    return defined[-1] if defined else None


def _loop_calls(ctx: FileContext, functions: Dict[str, List[cst.FunctionDef]],
                nested: bool = False) -> List[StepCall]:
    """Calls of ``functions`` (by name: those defined with it) directly in the body of a ``for``
    loop, or with ``nested`` anywhere in it (``if step % 4 == 3: apply()``)."""
    found: List[StepCall] = []
    for call in ctx.nodes(cst.Call) if functions else ():
        if not (isinstance(call.func, cst.Name) and call.func.value in functions) or ctx.qualified_name(
                call.func) is not None:
            continue
        found.extend(_loop_calls_at(ctx, call, definition_before(ctx, call, functions[call.func.value]), nested))
    return found


def _loop_calls_at(ctx: FileContext, call: cst.Call, function: cst.FunctionDef, nested: bool) -> List[StepCall]:
    """``call`` (of ``function``) as a call in the body of a ``for`` loop, if it is one."""
    statement = ctx.statement_of(call)
    while statement is not None:
        block = ctx.parent(statement)
        loop = ctx.parent(block) if isinstance(block, cst.IndentedBlock) else None
        if isinstance(loop, cst.For) and loop.body is block:
            return [StepCall(function, call, statement, loop)]
        # With `nested`, up to the statement whose block holds this one (an `if`, a `while`).
        around = ctx.statement_of(block) if nested and isinstance(block, cst.IndentedBlock) else None
        statement = around if around is not statement and not isinstance(
            around, (cst.FunctionDef, cst.ClassDef)) else None
    return []


def run_calls(ctx: FileContext) -> List[StepCall]:
    """Calls, in the body of a ``for`` loop, that hand a function of the file (the step) to
    ``<strategy>.run``: ``strategy.run(train_step, args=(x, y))``, or a call of a function of the
    file that does (``distributed_train_step(x, y)``). Code already written for a strategy."""
    functions = plain_functions(ctx)
    found: List[StepCall] = []
    handing: Dict[str, List[cst.FunctionDef]] = {}  # functions that run a step, by name
    for call in ctx.nodes(cst.Call):
        if not (is_run_call(call) and call.args
                and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value in functions):
            continue
        step = functions[call.args[0].value.value]
        direct = _loop_calls_at(ctx, call, step, nested=True)
        found.extend(direct)
        around = ctx.enclosing_function(call)
        if not direct and around is not None and around is functions.get(around.name.value):
            handing.setdefault(around.name.value, []).append(around)
    return found + _loop_calls(ctx, handing, nested=True) + _method_run_calls(ctx)


def _method_run_calls(ctx: FileContext) -> List[StepCall]:
    """The same for a step that is a method: ``strategy.run(self.step_fn, args=(x, y))`` in a loop
    of a method of its class, or in a method (``train_step``) that a loop calls on an instance of
    the class (``trainer.train_step(x, y)``, ``self.train_step(x, y)``)."""
    found: List[StepCall] = []
    for call in ctx.nodes(cst.Call):
        handed = call.args[0].value if is_run_call(call) and call.args else None
        owner = ctx.enclosing(call, cst.ClassDef) if isinstance(handed, cst.Attribute) and is_name(
            handed.value, "self") else None
        step = method_of_attribute(ctx, owner, handed.attr.value) if owner is not None else None
        if step is None:
            continue
        direct = _loop_calls_at(ctx, call, step, nested=True)
        found.extend(direct)
        around = ctx.enclosing_function(call)
        if direct or around is None or method_named(owner, around.name.value) is not around:
            continue
        for caller in ctx.nodes(cst.Call):
            func = caller.func
            if isinstance(func, cst.Attribute) and func.attr.value == around.name.value and instance_of(
                    ctx, func.value, owner):
                found.extend(_loop_calls_at(ctx, caller, around, nested=True))
    return found


def method_named(owner: cst.ClassDef, name: str) -> Optional[cst.FunctionDef]:
    """The method ``name`` the class ``owner`` defines, if it does."""
    return next((node for node in owner.body.body if isinstance(node, cst.FunctionDef) and node.name.value == name),
                None)


def method_of_attribute(ctx: FileContext, owner: cst.ClassDef, name: str) -> Optional[cst.FunctionDef]:
    """The method ``self.<name>`` runs in the class ``owner``: the method of that name, or the one an
    attribute of that name holds compiled (``self.train_step = tf.function(self._train_step)``)."""
    wrapped = wrapped_methods(ctx, owner).get(name)
    return method_named(owner, name) or (wrapped[0] if wrapped is not None else None)


def instance_of(ctx: FileContext, receiver: cst.BaseExpression, owner: cst.ClassDef) -> bool:
    """``receiver`` is an instance of the class ``owner``: ``self`` in its methods, or a variable
    assigned ``Owner(...)``."""
    if is_name(receiver, "self"):
        return ctx.enclosing(receiver, cst.ClassDef) is owner
    return isinstance(receiver, cst.Name) and any(
        isinstance(made, cst.Call) and is_name(made.func, owner.name.value) for made in values_of(ctx, receiver))


def evaluation_calls(ctx: FileContext, models: Set[str]) -> List[StepCall]:
    """Calls, in the body of a ``for`` loop, of a ``tf.function`` of the file (not a method) that
    opens no tape and runs one of ``models`` or updates weights: the test step of a custom loop
    (``@tf.function def test_step(x, y): predictions = model(x, training=False)...``), the
    optimizer step of gradients accumulated over batches. Compiled and run through
    ``strategy.run``, it runs on the IPU like the training step beside it."""
    def find() -> List[StepCall]:
        steps = step_functions(ctx)
        candidates: Dict[str, List[cst.FunctionDef]] = {}
        plain: Set[int] = set()  # candidates that are not `tf.function`s
        in_loops = _called_in_loops(ctx)
        for function in ctx.nodes(cst.FunctionDef):
            if (function.name.value in steps or function.name.value not in in_loops
                    or ctx.enclosing(function, cst.ClassDef) is not None
                    or not (runs_models(ctx, function, models) or trains(ctx, function))):
                continue
            if is_tf_function(ctx, function):
                candidates.setdefault(function.name.value, []).append(function)
            elif _compiles_as_step(ctx, function):
                candidates.setdefault(function.name.value, []).append(function)
                plain.add(id(function))
        return [call for call in _loop_calls(ctx, candidates, nested=True)
                if (id(call.function) not in plain or _in_training_loops(ctx, call.loop))
                and not _under_tape(ctx, call.call)]

    # Asked by the placement for each block with models, and by the loop plans: found once per models.
    return ctx.shared(_EVALUATION_CALLS, find, per=frozenset(models))


def _under_tape(ctx: FileContext, call: cst.Call) -> bool:
    """Whether ``call`` is made in a ``with tf.GradientTape()`` block: the tape records it for a
    training step written inline, so it is part of that step, not a step of its own."""
    return any(isinstance(node, cst.With) and any(isinstance(item.item, cst.Call) and ctx.qualified_name(
        item.item.func) in TAPES for item in node.items) for node in ctx.ancestors(call))


def _called_in_loops(ctx: FileContext) -> Set[str]:
    """The names called in the body of a ``for`` loop (``test_step(x, y)``)."""
    def find() -> Set[str]:
        return {call.func.value for call in ctx.nodes(cst.Call)
                if isinstance(call.func, cst.Name) and ctx.enclosing(call, cst.For) is not None}

    return ctx.shared(_CALLED_IN_LOOPS, find)


def _compiles_as_step(ctx: FileContext, function: cst.FunctionDef) -> bool:
    """A plain function that could be a test step: it works on one batch (no loop of its own) with
    TensorFlow only (no Python at run time, no call of another library: a plot, NumPy)."""
    helpers = functions_run_by(ctx, function)
    if eager_calls(ctx, function.body) or any(isinstance(node, (cst.For, cst.While)) for node in walk(function.body)):
        return False
    for helper in helpers:
        for node in walk(helper.body):
            if not isinstance(node, cst.Call):
                continue
            qualified = ctx.qualified_name(node.func)
            if qualified is not None and not qualified.startswith(_TENSORFLOW_MODULES):
                return False  # NumPy, matplotlib, a builtin: host code
    return True


_TENSORFLOW_MODULES = ("tensorflow.", "keras.", "tf_keras.", "keras_core.")


def _in_training_loops(ctx: FileContext, loop: cst.For) -> bool:
    """Whether ``loop``, or a loop around it, trains: a plain function it calls beside a training
    step is that step's test step (the epoch loop runs both)."""
    return any(isinstance(node, cst.For) and loop_trains(ctx, node) for node in (loop, *ctx.ancestors(loop)))


def runs_models(ctx: FileContext, function: cst.FunctionDef, models: Set[str]) -> bool:
    """Whether ``function`` (or a helper it calls) calls one of ``models`` or a method of one."""
    return not _called_names(ctx, function).isdisjoint(models)


def _called_names(ctx: FileContext, function: cst.FunctionDef) -> FrozenSet[str]:
    """The names ``function`` and its helpers call (``model(x)``), or call a method of
    (``model.predict(x)``)."""
    return frozenset().union(*(_own_calls(ctx, helper)[0] for helper in functions_run_by(ctx, function)))


def _own_calls(ctx: FileContext, function: cst.FunctionDef) -> Tuple[FrozenSet[str], bool]:
    """What ``function``'s own body calls, from one walk of it: the names it calls or calls a
    method of, and whether it updates weights."""
    def find() -> Tuple[FrozenSet[str], bool]:
        names = set()
        updates = False
        for node in walk(function.body):
            if isinstance(node, cst.Call):
                updates = updates or updates_weights(node)
                func = node.func.value if isinstance(node.func, cst.Attribute) else node.func
                if isinstance(func, cst.Name):
                    names.add(func.value)
        return frozenset(names), updates

    return ctx.shared(_OWN_CALLS, find, per=id(function))


def probes_model(ctx: FileContext, step: StepCall, models: Set[str]) -> bool:
    """A step that takes gradients through a model without training it (a saliency map, deep dream,
    an adversarial image, the Fisher information of elastic weight consolidation): no weight update
    in it or in what it calls, none in its loop that applies what it gives, and it runs one
    of ``models`` (``model(images)``, ``extractor.predict``...). Compiled and run through
    ``strategy.run``, it runs on the IPU like a training step."""
    if trains(ctx, step.function) or any(
            updates_weights(node) and applies_result(node, step) for node in walk(step.loop.body)):
        return False
    return runs_models(ctx, step.function, models)


def applies_result(update: cst.CSTNode, step: StepCall) -> bool:
    """The optimizer step ``update`` applies what the step's call gives: it holds the call, or reads
    a name the call's statement binds (``grads = compute_gradients(x, y)``). A helper whose
    gradients the loop keeps for something else (the Fisher information of elastic weight
    consolidation) is not half a training step."""
    if any(node is step.call for node in walk(update)):
        return True
    bound = {name for node in walk(step.statement) if isinstance(node, cst.AssignTarget)
             for name in bound_names(node.target)}
    return any(isinstance(node, cst.Name) and node.value in bound for node in walk(update))


def reaches_models(ctx: FileContext, step: StepCall, models: Set[str]) -> bool:
    """Whether ``step`` is given, or reads, one of ``models`` (names that hold a Keras model or a
    part of one), in its call or in the code it runs. A step that reaches none trains variables
    the porter does not know where they are made (a ``tf.Module``, plain ``tf.Variable``s)."""
    names = {node.value for helper in functions_run_by(ctx, step.function) for node in walk(helper.body)
             if isinstance(node, cst.Name)}
    makers = _maker_calls(ctx, step.call.func.value) if isinstance(step.call.func, cst.Name) else []
    names.update(node.value for call in (step.call, *makers) for arg in call.args for node in walk(arg.value)
                 if isinstance(node, cst.Name))
    return not names.isdisjoint(models)


def _maker_calls(ctx: FileContext, name: str) -> List[cst.Call]:
    """The calls whose result ``name`` holds when it holds a step a function of the file made
    (``step_fn = make_train_step(model, optimizer)``): what they are given, the step uses."""
    if name not in made_steps(ctx):
        return []
    return [assign.value for assign in ctx.nodes(cst.Assign) if isinstance(assign.value, cst.Call)
            and len(assign.targets) == 1 and is_name(assign.targets[0].target, name)]


def trains_in_loops(ctx: FileContext, function: cst.FunctionDef) -> bool:
    """Whether a loop of ``function``'s own code trains a model batch by batch: it calls a step
    function of the file that updates weights (also one defined in ``function``), hands a step to
    ``strategy.run``, or opens a ``GradientTape`` in a body that applies the gradients. Such a
    function uses the models it makes, as one that calls ``fit`` does: it is no builder, even
    when it returns the model it trained."""
    loops = [step.loop for step in step_calls(ctx) if trains(ctx, step.function)] + [
        step.loop for step in run_calls(ctx)]
    if any(ctx.enclosing_function(loop) is function for loop in loops):
        return True
    for tape, _ in ctx.calls_to(*TAPES):
        loop = ctx.enclosing(tape, cst.For) or ctx.enclosing(tape, cst.While)
        if loop is not None and ctx.enclosing_function(tape) is function and ctx.enclosing_function(
                loop) is function and any(updates_weights(node) for node in walk(loop.body)):
            return True
    return False


def loop_trains(ctx: FileContext, loop: cst.For) -> bool:
    """Whether the body of ``loop`` trains, or may: it opens a tape (any ``with`` but a strategy's
    scope), calls a step function of the file (or one named like a step, or a name that holds
    one), ``strategy.run`` or Keras' ``train_on_batch``/``test_on_batch``. Such a loop is the on-device loop of the guides: the
    port keeps it, and the dataset it reads, whole in the scope; another loop over a dataset
    iterates on the host, with only its body in the scope."""
    steps = {**step_functions(ctx), **made_steps(ctx)}
    for node in walk(loop.body):
        if isinstance(node, cst.With) and not _enters_scopes(node):
            return True
        if isinstance(node, cst.Call) and (
                isinstance(node.func, cst.Attribute) and node.func.attr.value in _TRAINING_METHODS
                or isinstance(node.func, cst.Name) and (node.func.value in steps or "step" in node.func.value)):
            return True
    return False


def _enters_scopes(with_node: cst.With) -> bool:
    """``with strategy.scope():``, and nothing else."""
    return all(isinstance(item.item, cst.Call) and isinstance(item.item.func, cst.Attribute)
               and item.item.func.attr.value == "scope" for item in with_node.items)


def scope_statements(ctx: FileContext, block, models: Set[str], known: Set[str]) -> List[cst.BaseStatement]:
    """Statements of ``block`` that the strategy scope must also cover when loops are rewritten:
    loops calling a step function that reaches a model of ``known`` (``reaches_models``), or a test
    step running one of ``models``, and the optimizers, metrics and loss objects they use."""
    training = bool(step_functions(ctx))
    loops: Set[int] = {id(step.loop) for step in step_calls(ctx) if trains(ctx, step.function)
                       and reaches_models(ctx, step, known)} if training else set()
    loops |= {id(step.loop) for step in evaluation_calls(ctx, models)}
    if not loops and not training:
        return []
    found = []
    for statement in block.body:
        for node in walk(statement):
            if id(node) in loops:
                found.append(statement)
                break
            if isinstance(node, cst.Call) and training:
                name = ctx.keras_name(node.func) or ""
                created = name.startswith(IN_SCOPE_PREFIXES) or makes_stateful_object(ctx, node.func) or (
                    name.startswith(LOSSES) and name.rpartition(".")[2][:1].isupper())
                if created and isinstance(statement, cst.SimpleStatementLine):
                    found.append(statement)
                    break
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                break
    return found


def makes_stateful_object(ctx: FileContext, func: cst.BaseExpression) -> bool:
    """Whether a call of ``func`` makes an optimizer or a metric, whose variables (slots, totals,
    the loss scale of ``mixed_precision.LossScaleOptimizer``, made when it is) the strategy's scope
    places: a Keras one, mixed precision's loss-scale wrapper, or one of TensorFlow Addons (not a
    learning-rate schedule, which holds none)."""
    name = ctx.keras_name(func) or ""
    if name.startswith(_SCHEDULES):
        return False
    if name.startswith(IN_SCOPE_PREFIXES) or (name.startswith("keras.mixed_precision.")
                                              and name.endswith(".LossScaleOptimizer")):
        return True
    return (ctx.qualified_name(func) or "").startswith(_ADDONS_OPTIMIZERS)


def made_with_variables(ctx: FileContext, call: cst.Call) -> bool:
    """Whether ``call`` makes an object whose variables are made with it: a Keras metric object
    (``keras.metrics.AUC()``), or mixed precision's ``LossScaleOptimizer`` (its loss scale). An
    optimizer makes its own when it first updates, in the scope that runs it."""
    name = ctx.keras_name(call.func) or ""
    return (name.startswith("keras.metrics.") and name.rpartition(".")[2][:1].isupper()) or (
        name.startswith("keras.mixed_precision.") and name.endswith(".LossScaleOptimizer"))


def makes_stateful(ctx: FileContext, call: cst.Call) -> bool:
    """Whether ``call`` makes an optimizer or a metric (``makes_stateful_object``), itself or through
    a function of the file that returns one (``optimizer = get_optimizer(args.optimizer, lr)``)."""
    if makes_stateful_object(ctx, call.func):
        return True
    _, returned = called_returns(ctx, call)
    return any(isinstance(value, cst.Call) and makes_stateful_object(ctx, value.func) for value in returned)


def module_stateful_objects(ctx: FileContext) -> Dict[str, List[Tuple[cst.BaseStatement, cst.Call]]]:
    """``{name: [(statement, call)...]}`` for the optimizers, metrics (and schedules) the module's
    own body makes, in source order (``optimizer = Adam()``, then ``optimizer =
    LossScaleOptimizer(optimizer)``)."""
    made: Dict[str, List[Tuple[cst.BaseStatement, cst.Call]]] = {}
    for statement, name, value in assignments(ctx, ctx.module):
        if isinstance(value, cst.Call) and ctx.parent(statement) is ctx.module and (
                (ctx.keras_name(value.func) or "").startswith(IN_SCOPE_PREFIXES) or makes_stateful_object(ctx, value.func)):
            made.setdefault(name, []).append((statement, value))
    return made


def module_objects(ctx: FileContext, function: cst.FunctionDef) -> List[Tuple[str, cst.BaseStatement]]:
    """``(name, statement)`` for the optimizers and metrics made at module level (by a statement of
    the module's own body) that ``function`` or a function it calls reads as globals: a step that
    updates them needs their variables made in the strategy's scope too."""
    made = {name: objects[0][0] for name, objects in module_stateful_objects(ctx).items()}
    found: Dict[str, cst.BaseStatement] = {}
    for helper in functions_run_by(ctx, function):
        local = {name for _, name, _ in assignments(ctx, helper)} | set(parameter_names(helper))
        for node in loads(helper.body):
            if node.value in made and node.value not in local:
                found.setdefault(node.value, made[node.value])
    return list(found.items())
