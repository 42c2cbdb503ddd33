"""Custom training loops (IPU111): how each Python loop that calls a ``tf.GradientTape`` step
function is rewritten for the IPU, or why it is left for a person. The loops themselves are found by
``porter.rules.keras._analysis.steps``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from porter.context import FileContext, SharedKey, bound_names, code_of, walk
from porter.cstutil import argument, is_name, single_small
from porter.scopes import assignments, bindings_of, called_in_callers_scope, instance_class, owner, parameter_names
from porter.rule import KERAS, is_selected
from porter.rules._tf.tfdata import float64_data
from porter.rules.keras._analysis.datasets import training_inputs
from porter.rules.keras._analysis.host_updates import movable_updates
from porter.rules.keras._analysis.model_plan import Plan, calls_by_name, in_regions, model_plan, setup_anchors
from porter.rules.keras._analysis.steps import (TAPES, StepCall, applies_result, definition_before, eager_calls,
                                                evaluation_calls,
                                                is_tf_function, method_step_calls, probes_model, reaches_models,
                                                run_calls, step_calls, trains, updates_weights,
                                                wrapped_methods)
from porter.rules.keras._analysis.util import is_run_call
from porter.throughput import config_steps

# DTensor distributes over meshes of devices the IPU strategy does not know.
_DTENSOR = ("tensorflow.experimental.dtensor", "tensorflow.dtensor")

_LOOP_PLANS: SharedKey[List["LoopPlan"]] = SharedKey("keras-loop-plans")
CALLER_DEPTH = 4  # how many callers up a loop may run in the strategy's scope


def tensorflow_alias(ctx: FileContext) -> Optional[str]:
    for local, full in ctx.aliases.items():
        if full == "tensorflow":
            return local
    return None


def rewrites_loops(ctx: FileContext, custom_loop_code: str) -> bool:
    """True when the custom-loop rule (its code given by the caller) rewrites this file's loops: it
    is selected, and the file is TensorFlow 2 code that imports `tensorflow` under a name (TensorFlow
    1.x run eagerly, `tf` being `compat.v1`, has no TF2 `tf.function` to compile with)."""
    return (KERAS in ctx.frameworks and tensorflow_alias(ctx) is not None
            and is_selected(custom_loop_code, ctx.config.select, ctx.config.ignore))


@dataclass
class LoopPlan:
    step: StepCall
    mode: Optional[str] = None  # "device" (an on-device loop of K steps) or "step" (strategy.run per step)
    problem: Optional[str] = None  # why it is left for a person
    strategy: str = "strategy"
    unknown_length: bool = False  # an on-device loop would fit, but `len()` of its dataset raises
    # What the step is given besides the batch (`epoch`, `scale`), which an on-device loop cannot read.
    beside_batch: List[str] = field(default_factory=list)
    # What the step is given that the loop never changes (a model, an optimizer): the on-device loop
    # takes it as a parameter after the iterator, as the documented loop takes its model.
    handed_on: List[str] = field(default_factory=list)


def strategy_scope_name(ctx: FileContext, node: cst.CSTNode) -> Optional[str]:
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.With):
            for item in ancestor.items:
                call = item.item
                if (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                        and call.func.attr.value == "scope" and isinstance(call.func.value, cst.Name)):
                    return call.func.value.value
    return None


def covered(ctx: FileContext, regions, node: cst.CSTNode, depth: int) -> bool:
    """Whether ``node`` runs in one of ``regions``: in one, or in a function whose every call
    (``depth`` callers up at most) is."""
    if in_regions(ctx, regions, node):
        return True
    function = ctx.enclosing_function(node)
    callers = calls_by_name(ctx).get(function.name.value, []) if function is not None and depth > 0 else []
    return bool(callers) and all(covered(ctx, regions, call, depth - 1) for call in callers)


def handed_modules(ctx: FileContext, call: cst.Call) -> List[Tuple[str, cst.BaseStatement]]:
    """``(name, statement)`` for each instance of a ``tf.Module`` class of the file (not a Keras
    one) that the step ``call`` is given: by name, or through the parameters of the functions
    around it (``CALLER_DEPTH`` callers up), each with the statement that makes it (the last one
    before the name is read, when a notebook makes it again). Its ``tf.Variable``s are placed
    where it is made, which the model plan does not follow."""
    modules = {id(node) for node in _module_classes(ctx)}
    found: List[Tuple[str, cst.BaseStatement]] = []
    pending = [(arg.value, CALLER_DEPTH) for arg in call.args if isinstance(arg.value, cst.Name)]
    while pending:
        name, depth = pending.pop(0)
        function = ctx.enclosing_function(name)
        bindings = bindings_of(ctx, name)
        params = parameter_names(function) if function is not None else []
        if not bindings and name.value in params and depth > 0:
            position = params.index(name.value)
            for caller in calls_by_name(ctx).get(function.name.value, []):
                given = argument(caller, name.value, position) if isinstance(caller.func, cst.Name) else None
                if given is not None and isinstance(given.value, cst.Name):
                    pending.append((given.value, depth - 1))
            continue
        if len(bindings) > 1:
            last = definition_before(ctx, name, [statement for statement, _ in bindings])
            bindings = [(statement, value) for statement, value in bindings if statement is last]
        for statement, value in bindings:
            made = instance_class(ctx, value) if isinstance(value, cst.Call) else None
            if made is not None and id(made) in modules and (name.value, statement) not in found:
                found.append((name.value, statement))
    return found


def _module_classes(ctx: FileContext) -> List[cst.ClassDef]:
    """The classes of the file deriving from ``tf.Module`` (directly or through a class of the file)
    that make ``tf.Variable``s when an instance is made, in their ``__init__`` or a base's. (Keras
    layers they hold make theirs when first called, where the step runs.)"""
    found: List[cst.ClassDef] = []
    modules: Dict[str, bool] = {}  # each module class of the file: whether it makes variables
    for node in ctx.nodes(cst.ClassDef):  # a base class is defined before the classes deriving from it
        bases = [base.value.value for base in node.bases if isinstance(base.value, cst.Name)
                 and base.value.value in modules]
        if not bases and not any(ctx.qualified_name(base.value) == "tensorflow.Module" for base in node.bases):
            continue
        modules[node.name.value] = any(modules[base] for base in bases) or _makes_variables(ctx, node)
        if modules[node.name.value]:
            found.append(node)
    return found


def _makes_variables(ctx: FileContext, owner_class: cst.ClassDef) -> bool:
    """Whether the ``__init__`` of ``owner_class`` calls ``tf.Variable``."""
    return any(isinstance(statement, cst.FunctionDef) and statement.name.value == "__init__" and any(
        isinstance(node, cst.Call) and ctx.qualified_name(node.func) == "tensorflow.Variable"
        for node in walk(statement.body)) for statement in owner_class.body.body)


def _global_strategy(ctx: FileContext, model: Plan) -> bool:
    """Whether the strategy the port uses is bound at module level: a loop in a function called
    in the scope can then call its ``run``."""
    anchors = [model.strategy_statement, *model.more_strategy_statements] if model.strategy_statement is not None \
        else setup_anchors(ctx, model)
    return bool(anchors) and all(ctx.parent(anchor) is ctx.module for anchor in anchors)


def run_targets(ctx: FileContext) -> Set[str]:
    """Names of functions already passed to ``<strategy>.run``."""
    found = set()
    for call in ctx.nodes(cst.Call):
        if is_run_call(call) and call.args:
            first = call.args[0].value
            if isinstance(first, cst.Name):
                found.add(first.value)
    return found


def loop_plans(ctx: FileContext) -> List[LoopPlan]:
    # Shared before it is filled: the model plan needed here asks for the loop plans in turn, and
    # gets none yet instead of recursing.
    new: List[LoopPlan] = []
    plans = ctx.shared(_LOOP_PLANS, lambda: new)
    if plans is not new:
        return plans
    if tensorflow_alias(ctx) is None:
        return plans
    model = model_plan(ctx)
    done = run_targets(ctx)
    steps = config_steps(ctx.config)
    evaluations = evaluation_calls(ctx, model.model_like)
    methods = method_step_calls(ctx)
    calls = step_calls(ctx) + evaluations + methods
    # Functions whose calls become steps: a step called in a loop of one (a hand-written on-device
    # loop, `for _ in tf.range(n): step(next(iterator))`) runs inside the outer step's replica.
    outer = {id(step.function) for step in calls}
    for step in calls:
        name = step.function.name.value
        if name in done or any(isinstance(node, cst.FunctionDef) and (node.name.value in done or id(node) in outer)
                               for node in ctx.ancestors(step.call)) or _hands_on_a_step(ctx, step.function):
            continue  # already run through strategy.run, or inside what is (or will be), or it runs one itself
        plan = LoopPlan(step, strategy=model.strategy_name)
        existing = strategy_scope_name(ctx, step.loop)
        plan.problem = (_method_problem(ctx, step, model) if step in methods
                        else _problem(ctx, step, model, existing, evaluates=step in evaluations))
        if plan.problem is None and step in methods:
            # A trainer's method runs where its calls are, all in the scope: the current strategy.
            plan.strategy = f"{tensorflow_alias(ctx)}.distribute.get_strategy()"
        elif plan.problem is None and existing is not None and model.has_ipu_strategy:
            plan.strategy = existing
        elif plan.problem is None and out_of_reach(ctx, step.loop, model, existing):
            # The loop runs in a function called in the scope, the strategy is a local of another
            # function: in the scope, TensorFlow's current strategy is the IPU strategy.
            plan.strategy = f"{tensorflow_alias(ctx)}.distribute.get_strategy()"
        if plan.problem is None:
            plan.handed_on = _unchanged_arguments(ctx, step) if steps is not None else []
            plan.beside_batch = _beside_batch(ctx, step, plan.handed_on) if steps is not None else []
            fits = steps is not None and not plan.beside_batch and device_loop_fits(ctx, step)
            plan.unknown_length = fits and _unknown_length(ctx, step.loop.iter, step.loop)
            plan.mode = "device" if fits and not plan.unknown_length else "step"
        plans.append(plan)
    return plans


def fed_loops(ctx: FileContext, runs: bool = False) -> List[Tuple[StepCall, cst.BaseExpression]]:
    """``(step call, dataset)`` for each loop of the file that feeds a custom step, training or
    test (the last step of a loop that calls several): what it iterates over, through ``enumerate``,
    ``tqdm`` and ``zip`` (one pair for each dataset zipped). With ``runs``, also the loops that
    already hand their step to ``strategy.run``."""
    calls = step_calls(ctx) + evaluation_calls(ctx, model_plan(ctx).model_like) + (run_calls(ctx) if runs else [])
    loops = {id(step.loop): step for step in calls}
    return [(step, source) for step in loops.values() for source in iterated(ctx, step.loop.iter)]


def iterated(ctx: FileContext, source: cst.BaseExpression) -> List[cst.BaseExpression]:
    """What a loop over ``source`` takes its batches from, through the calls that hand them on
    (``enumerate(train_ds)``, ``tqdm(train_ds, total=n)``, ``zip(images, labels)``, nested)."""
    if not (isinstance(source, cst.Call) and source.args):
        return [source]
    builtin = isinstance(source.func, cst.Name) and ctx.qualified_name(source.func) is None
    if builtin and source.func.value == "zip":
        return [found for arg in source.args if arg.keyword is None and not arg.star
                for found in iterated(ctx, arg.value)]
    if builtin and source.func.value == "enumerate" or _progress_bar(ctx, source.func):
        return iterated(ctx, source.args[0].value)
    return [source]


def _progress_bar(ctx: FileContext, func: cst.BaseExpression) -> bool:
    """``func`` is ``tqdm`` (of ``tqdm``, ``tqdm.auto``, ``tqdm.notebook``...), which yields what it wraps."""
    parts = (ctx.qualified_name(func) or "").split(".")
    return len(parts) > 1 and parts[0] == "tqdm" and parts[-1] == "tqdm"


def read_in_training(ctx: FileContext) -> List[Tuple[cst.BaseExpression, cst.CSTNode]]:
    """``(data, the function or module it is read in)`` for what ``fit``/``evaluate``/``predict``
    get and what the loops that feed a custom step iterate over."""
    found = [(value, entry.owner) for entry, value in training_inputs(ctx)]
    return found + [(source, owner(ctx, step.loop)) for step, source in fed_loops(ctx)]


def _hands_on_a_step(ctx: FileContext, function: cst.FunctionDef) -> bool:
    """A distributed step: ``strategy.run(step_fn, ...)`` inside it hands a function of the file
    (often one it defines) to the strategy, then reduces what the replicas give. The function it
    hands on is the step; this one stays the host's."""
    defined = {node.name.value for node in ctx.nodes(cst.FunctionDef)}
    return any(isinstance(node, cst.Call) and is_run_call(node) and node.args and isinstance(node.args[0].value, cst.Name)
               and node.args[0].value.value in defined for node in walk(function.body))


def _problem(ctx: FileContext, step: StepCall, model: Plan, existing: Optional[str],
             evaluates: bool = False) -> Optional[str]:
    """What stops the rewrite of the loop around ``step`` (a training step, or with ``evaluates``
    a test step that only runs the model), if anything."""
    name = step.function.name.value
    if ctx.imports_module(*_DTENSOR):
        return (f"`{name}` trains DTensor variables (meshes and layouts), which have no IPU "
                "equivalent: rewrite the model with Keras layers or `tf.Variable`s, then run the step "
                "through `strategy.run` inside `strategy.scope()`")
    if not evaluates and not trains(ctx, step.function) and not probes_model(ctx, step, model.model_like):
        return _no_weight_update(name, step)
    eager = eager_calls(ctx, step.function.body, traced=is_tf_function(ctx, step.function))
    if eager:
        return (f"`{name}` needs Python while it runs ({', '.join(eager)}): it cannot be compiled for "
                "the IPU as it is; move that out of the step, then run it through `strategy.run` in a "
                "`@tf.function(jit_compile=True)` (Targeting the IPU from TensorFlow 2, "
                "\"On-device loops\")")
    renewed = _made_for_each_call(ctx, step)
    if renewed is not None:
        return renewed
    generator = _python_generator(ctx, step.loop.iter)
    if generator is not None:
        return (f"the loop feeds `{name}` from the Python generator `{generator}`, whose batches the IPU "
                "cannot stream: make it a `tf.data.Dataset.from_generator(..., output_signature=...)` "
                "batched with `drop_remainder=True`, then run the step through `strategy.run` inside "
                "`strategy.scope()`")
    if existing is not None and model.has_ipu_strategy:
        return None
    if not model.has_ipu_strategy and not (model.regions and reaches_models(
            ctx, step, model.model_like | model.holders | model.model_collections)):
        return (f"the porter finds no Keras model where the loop that calls `{name}` runs (a `tf.Module` or plain "
                "`tf.Variable`s are not taken for one): create the model, the optimizer and the loop inside "
                f"`with strategy.scope():` and call `{name}` through `strategy.run` (Targeting the IPU from "
                "TensorFlow 2, \"On-device loops\")")
    if model.has_ipu_strategy:
        return _NOT_WHERE_BUILT.format(name=name)
    if in_regions(ctx, model.regions, step.loop):
        return None
    if not covered(ctx, model.regions, step.loop, CALLER_DEPTH):
        return _NOT_WHERE_BUILT.format(name=name)
    return None


# What a step reads of the models it trains and of the optimizers that update them.
_TRAINED_THROUGH = frozenset({"trainable_weights", "trainable_variables", "apply_gradients", "minimize"})


def trained_names(statements: List[cst.CSTNode]) -> Set[str]:
    """The names ``statements`` train as models or update with as optimizers (``fast`` of
    ``fast.trainable_weights``, ``inner_opt`` of ``inner_opt.apply_gradients``)."""
    return {node.value.value for statement in statements for node in walk(statement)
            if isinstance(node, cst.Attribute) and node.attr.value in _TRAINED_THROUGH
            and isinstance(node.value, cst.Name)}


def made_each_pass(ctx: FileContext, loop: cst.CSTNode, names: Set[str], skip: Set[int] = frozenset()
                   ) -> Optional[Tuple[str, cst.Call]]:
    """One of ``names`` that ``loop``, or a loop around it in the same function, makes by a call on
    every pass (``fast = keras.models.clone_model(model)``, ``opt = SGD(0.1)`` per task; not in the
    nodes of ``skip``): the name and that call. A step compiled for it would compile again for
    each new one, and a Keras optimizer cannot make its variables in a later call."""
    function = ctx.enclosing_function(loop)
    loops = [loop] + [up for up in ctx.ancestors(loop) if isinstance(up, (cst.For, cst.While))
                      and ctx.enclosing_function(up) is function]
    for around in loops:
        for node in walk(around.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            if not (isinstance(node, cst.Assign) and id(node) not in skip and isinstance(node.value, cst.Call)):
                continue
            made = [target.target.value for target in node.targets
                    if isinstance(target.target, cst.Name) and target.target.value in names]
            if made:
                return made[0], node.value
    return None


def _made_for_each_call(ctx: FileContext, step: StepCall) -> Optional[str]:
    """Why the step cannot be compiled once: a model or optimizer it trains with is made anew,
    on every pass of a loop around its call, and handed to it."""
    trained = trained_names([step.function.body])
    params = [param.name.value for param in step.function.params.params]
    given = {}
    for position, param in enumerate(params):
        arg = argument(step.call, param, position)
        if param in trained and arg is not None and isinstance(arg.value, cst.Name):
            given[arg.value.value] = param
    renewed = made_each_pass(ctx, step.loop, set(given))
    if renewed is None:
        return None
    name, made = renewed
    function = step.function.name.value
    return (f"`{name}`, which `{function}` trains, is made anew on every pass of a loop around its call "
            f"(`{code_of(ctx, made)}`): compiled, `{function}` would be compiled again for each new one, and a "
            "Keras optimizer cannot make its variables in a later call of a `tf.function`; make it once, before "
            "the loops (a task's copy of a model: `clone_model` once, then `set_weights(model.get_weights())` on "
            f"each pass), then run `{function}` through `strategy.run` in a `@tf.function(jit_compile=True)`")


def _method_problem(ctx: FileContext, step: StepCall, model: Plan) -> Optional[str]:
    """What stops the rewrite of a trainer's loop that calls its own step method: the step must
    train and compile, every instance of the class must be made in the IPU strategy's scope (its
    model, optimizer and metrics are made or handed in there), and every call of the method that
    holds the loop must run there (the step runs through TensorFlow's current strategy)."""
    owner_class = ctx.enclosing(step.function, cst.ClassDef)
    name = f"{owner_class.name.value}.{step.function.name.value}"
    tested = not any(ctx.enclosing_function(tape) is step.function for tape, _ in ctx.calls_to(*TAPES))
    if not tested and not trains(ctx, step.function):
        return _no_weight_update(name, step)
    compiled = is_tf_function(ctx, step.function) or any(
        wrapped is step.function for wrapped, _ in wrapped_methods(ctx, owner_class).values())
    eager = eager_calls(ctx, step.function.body, traced=compiled)
    if eager:
        return (f"`{name}` needs Python while it runs ({', '.join(eager)}): it cannot be compiled for "
                "the IPU as it is; move that out of the step, then run it through `strategy.run` in a "
                "`@tf.function(jit_compile=True)` (Targeting the IPU from TensorFlow 2, \"On-device loops\")")
    made = [call for call in ctx.nodes(cst.Call) if is_name(call.func, owner_class.name.value)]
    runner = ctx.enclosing_function(step.loop)
    runs = [call for call in calls_by_name(ctx).get(runner.name.value, []) if isinstance(call.func, cst.Attribute)
            and ctx.enclosing(call, cst.ClassDef) is not owner_class]
    def in_scope(call: cst.Call) -> bool:
        if model.has_ipu_strategy:  # the script's own IPU strategy: its scope must be around the call
            return strategy_scope_name(ctx, call) is not None
        return covered(ctx, model.regions, call, CALLER_DEPTH)

    if not (made or runs) and _run_in_callers_scope(ctx, owner_class, runner):
        # The porter rewrites a method's loop only where it sees the scope the class is made in.
        return (f"the training step `{name}` is a method of a class that the files of its project make, and "
                f"whose `{runner.name.value}` they call, in the IPU strategy's scope, out of the porter's sight here: "
                f"decorate `{step.function.name.value}` with `@tf.function(jit_compile=True)` and call it through "
                f"`tf.distribute.get_strategy().run(self.{step.function.name.value}, args=(...))` (Targeting the "
                "IPU from TensorFlow 2, \"On-device loops\")")
    if not made or not runs or not all(in_scope(call) for call in made + runs):
        return (f"the training step `{name}` is a method whose class is not made, or whose "
                f"`{runner.name.value}` is not called, in the IPU strategy's scope: make the trainer and call "
                f"`{runner.name.value}` inside `with strategy.scope():`, decorate `{step.function.name.value}` with "
                f"`@tf.function(jit_compile=True)` and call it through `strategy.run(self.{step.function.name.value}, "
                "args=(...))` (Targeting the IPU from TensorFlow 2, \"On-device loops\")")
    return None


def _run_in_callers_scope(ctx: FileContext, owner_class: cst.ClassDef, runner: cst.FunctionDef) -> bool:
    """A class of a library module that the file neither makes nor runs: the files of its project
    that import it make its objects and call ``runner`` on them, every time in their IPU strategy's
    scope (``Project.called_in_scope``: ``Trainer`` and ``Trainer.train``)."""
    return ctx.parent(owner_class) is ctx.module and owner_class.name.value in ctx.project.called_in_scope and \
        called_in_callers_scope(ctx, runner)


def out_of_reach(ctx: FileContext, loop: cst.CSTNode, model: Plan, existing: Optional[str]) -> bool:
    """The loop runs in a function called in the IPU strategy's scope (not in a region itself),
    and the strategy variable is a local of another function."""
    return (existing is None and not model.has_ipu_strategy and not in_regions(ctx, model.regions, loop)
            and not _global_strategy(ctx, model))


_NOT_WHERE_BUILT = ("the loop that calls `{name}` is not where the model is built: run it inside "
                    "`with strategy.scope():` through `strategy.run` (Targeting the IPU from "
                    "TensorFlow 2, \"On-device loops\")")


def _python_generator(ctx: FileContext, source: cst.BaseExpression) -> Optional[str]:
    """The generator function of the file that a loop iterates over (``for x, y in batches(...)``,
    also through ``enumerate``/``zip``), if any."""
    generators = {function.name.value for function in ctx.nodes(cst.FunctionDef)
                  if any(isinstance(node, cst.Yield) and ctx.enclosing_function(node) is function
                         for node in walk(function.body))}
    for node in walk(source):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in generators:
            return node.func.value
    return None


def _no_weight_update(name: str, step: StepCall) -> str:
    """Why a step that applies no optimizer step is not rewritten."""
    if any(updates_weights(node) and applies_result(node, step) for node in walk(step.loop.body)):
        return (f"`{name}` only computes gradients and the loop applies them outside it: under `strategy.run` "
                "the optimizer step must run in the same compiled step; move the optimizer step "
                f"(`apply_gradients`) into `{name}`, then run it through `strategy.run` inside `strategy.scope()`")
    return (f"`{name}` takes gradients but applies no optimizer step (not a training step): it runs on the CPU "
            "as it is; to run it on the IPU, decorate it with `@tf.function(jit_compile=True)` and call it "
            "through `strategy.run(...)` inside `strategy.scope()`")


# Datasets whose length TensorFlow does not know, so that `len()` of them raises a TypeError: made
# from files or a generator, or cut by a predicate, or repeated for ever.
_UNKNOWN_SOURCES = frozenset({"TFRecordDataset", "TextLineDataset", "FixedLengthRecordDataset", "from_generator",
                              "list_files", "make_csv_dataset", "make_batched_features_dataset"})
_UNKNOWN_METHODS = frozenset({"filter", "flat_map", "interleave", "take_while", "unbatch", "rejection_resample"})


def _unknown_length(ctx: FileContext, dataset: cst.BaseExpression, at: cst.CSTNode, depth: int = 0) -> bool:
    """Whether the dataset ``dataset`` (read at ``at``) is made, as far as the function (or
    module) that reads it shows, in a way that leaves its length unknown."""
    from porter.rules.keras._analysis.datasets import chain
    from porter.scopes import assignments, owner

    calls, root = chain(ctx, dataset)
    if any(call.func.attr.value in _UNKNOWN_METHODS or call.func.attr.value == "repeat" and not call.args
           for call in calls):
        return True
    if isinstance(root, cst.Call):
        return (ctx.qualified_name(root.func) or "").rpartition(".")[2] in _UNKNOWN_SOURCES
    if not isinstance(root, cst.Name) or depth > 4:
        return False
    return any(_unknown_length(ctx, value, at, depth + 1) for _, name, value in assignments(ctx, owner(ctx, at))
               if name == root.value and value is not None and value is not dataset)


def _batch_names(loop: cst.For) -> List[str]:
    """The names a loop's target binds to each batch: ``x, y`` of ``for x, y in ds``, and
    ``v1, v2`` of ``for i, (v1, v2) in enumerate(ds)``."""
    return bound_names(loop.target)


def _beside_batch(ctx: FileContext, step: StepCall, unchanged: List[str]) -> List[str]:
    """The arguments of the step's call that are not the batch the loop binds (nor a literal, nor
    one of the ``unchanged`` names the on-device loop takes as parameters): the on-device loop, a
    function of its own that reads only the iterator, would read them where it is defined (a stale
    epoch, or an unbound name) instead of from the loop."""
    batch = set(_batch_names(step.loop))
    literals = (cst.Integer, cst.Float, cst.SimpleString)
    return [code_of(ctx, arg.value) for arg in step.call.args if not (
        isinstance(arg.value, literals) or isinstance(arg.value, cst.Name) and (
            arg.value.value in batch or arg.value.value in ("True", "False", "None") or arg.value.value in unchanged))]


def _unchanged_arguments(ctx: FileContext, step: StepCall) -> List[str]:
    """The names the step's call gives it that no loop around the call binds (``train_step(model,
    x, optimizer)``: the model and the optimizer), in order: the same objects on every pass, which
    the on-device loop can take as parameters. Not the batch, an epoch, or a name that the loop
    function's own parameter would hide."""
    loops = [step.loop] + [node for node in ctx.ancestors(step.loop) if isinstance(node, (cst.For, cst.While))]
    changed = {name for statement, name, _ in assignments(ctx, owner(ctx, step.loop)) if any(
        statement is loop or any(ancestor is loop for ancestor in ctx.ancestors(statement)) for loop in loops)}
    # (A float64 NumPy array or tensor stays out: the step's own call is where the port casts it, IPU155.)
    names = [arg.value.value for arg in step.call.args if isinstance(arg.value, cst.Name) and not arg.keyword
             and float64_data(ctx, arg.value, tensors=True) is None]
    return [name for name in names if name not in changed and name not in ("True", "False", "None", "iterator")
            and names.count(name) == 1]


def _never_read(ctx: FileContext, assign: cst.Assign) -> bool:
    """Whether the names ``assign`` binds (plain names only) appear nowhere else in the function
    or module that holds it, nor in the functions it defines that do not bind them themselves (the
    step's own ``loss``): what the step returned is dropped."""
    names = {name for target in assign.targets for name in bound_names(target.target)}
    simple = all(isinstance(node, (cst.Name, cst.Tuple, cst.List)) for target in assign.targets
                 for node in walk(target.target) if isinstance(node, cst.BaseExpression))
    bound = {id(node) for target in assign.targets for node in walk(target.target)}
    scopes = [owner(ctx, assign)]
    while scopes:
        scope = scopes.pop()
        body = scope.body if isinstance(scope, cst.FunctionDef) else scope
        for node in walk(body, skip=(cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            if isinstance(node, cst.Name) and node.value in names and id(node) not in bound:
                return False
        for inner in walk(body):
            if isinstance(inner, cst.FunctionDef) and ctx.enclosing_function(inner) is (
                    scope if isinstance(scope, cst.FunctionDef) else None) and not names <= _locals(ctx, inner):
                scopes.append(inner)
            elif isinstance(inner, (cst.Lambda, cst.ClassDef)) and any(
                    isinstance(node, cst.Name) and node.value in names for node in walk(inner)):
                return False
    return bool(names) and simple


def _locals(ctx: FileContext, function: cst.FunctionDef) -> Set[str]:
    """The names ``function`` binds itself: its parameters and what it assigns."""
    params = function.params
    found = {param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params)}
    return found | {name for _, name, _ in assignments(ctx, function)}


def device_loop_fits(ctx: FileContext, step: StepCall, keeping: bool = False) -> bool:
    """The loop only calls the step, by its own name (the on-device loop goes beside it, where a
    name that holds it, ``step_fn = make_step(...)``, is not bound), ignoring its result (or
    assigning it to names nothing reads: ``g_loss, d_loss = train_step(images)``), on what it
    iterates over. With ``keeping``, the names it assigns the result may be read."""
    if not is_name(step.call.func, step.function.name.value):
        return False
    loop = step.loop
    # Weight updates that follow the call move to the end of the step (IPU167): they run there, per step.
    if loop.orelse is not None or len(loop.body.body) != 1 + len(movable_updates(ctx, step)):
        return False
    statement = step.statement
    small = single_small(statement)
    if not (isinstance(small, cst.Expr) and small.value is step.call
            or isinstance(small, cst.Assign) and small.value is step.call and (keeping or _never_read(ctx, small))):
        return False
    if any(arg.star for arg in step.call.args):
        return False
    target = loop.target
    names = [target] if isinstance(target, cst.Name) else [
        element.value for element in target.elements] if isinstance(target, cst.Tuple) else []
    return bool(names) and all(isinstance(name, cst.Name) for name in names) and isinstance(
        loop.iter, (cst.Name, cst.Attribute))
