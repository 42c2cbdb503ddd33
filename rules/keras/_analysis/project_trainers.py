"""Functions of another module of the project that train a model they are given (``from trainer
import train_model``, then ``train_model(model, ds)``): read from that module when the files are
ported together, or when a script ported alone imports it (``porter.api.projects``), so that the
model analysis of the importing file knows the call runs its model, like a trainer of its own
(``model_plan.project_trained_arguments``).
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Set, Tuple

import libcst as cst

from porter.config import Config
from porter.context import FileContext, walk
from porter.cstutil import argument, is_name
from porter.parsing import ParseError, parse
from porter.rules.keras._analysis.model_plan import is_keras_run
from porter.scopes import is_module_function

# Methods that run a Keras model; ``compile`` (with arguments) counts too: it must be in the
# strategy's scope as well.
_RUNS = frozenset({"fit", "evaluate", "predict", "fit_generator", "evaluate_generator", "predict_generator",
                   "train_on_batch", "test_on_batch", "predict_on_batch", "compile"})
# What a custom training loop reads of the model it differentiates.
_WEIGHTS = frozenset({"trainable_variables", "trainable_weights"})
# The calls of a training step: ``tape.gradient(...)``, ``optimizer.apply_gradients(...)``.
_GRADIENT_STEPS = frozenset({"gradient", "apply_gradients", "minimize"})
# Text a module must hold to define such a function: it is parsed only then.
MARKERS = tuple(f".{method}(" for method in _RUNS) + tuple(f".{weights}" for weights in sorted(_WEIGHTS))


def trained_parameters(text: str, config: Config) -> List[Tuple[str, str, int, bool]]:
    """``(function, parameter, position, trains)`` for each parameter that a module-level function
    of the module ``text`` holds (none when it does not parse) runs as a model: it calls
    ``param.fit(...)``, ``param.evaluate(...)``, ``param.compile(...)``... or hands the parameter to
    another such function of the module (``def run(m, ds): return fit_once(m, ds)``). ``trains``:
    it compiles it or trains it with an argument only Keras takes (``fit(ds, epochs=2)``), which
    says the parameter is a Keras model, as for a trainer of the file itself."""
    try:
        ctx = FileContext(parse(text), config)
    except ParseError:
        return []
    functions = {function.name.value: function for function in ctx.nodes(cst.FunctionDef)
                 if is_module_function(ctx, function)}
    calls: Dict[int, List[cst.Call]] = {}
    for call in ctx.nodes(cst.Call):
        calls.setdefault(id(ctx.enclosing_function(call)), []).append(call)
    differentiated = _differentiated_parameters(ctx, functions)
    runs = _parameters(functions, calls, lambda call: call.func.attr.value in _RUNS and (
        call.func.attr.value != "compile" or bool(call.args)), differentiated)
    trains = _parameters(functions, calls, lambda call: is_keras_run(call) or (
        call.func.attr.value == "compile" and bool(call.args)), differentiated)
    found = [(name, param, position, param in trains.get(name, {}))
             for name, params in sorted(runs.items()) for param, position in params.items()]
    for owner_class in ctx.module.body:
        if isinstance(owner_class, cst.ClassDef):
            found.extend(kept_models(ctx, owner_class))
    return found


def kept_models(ctx: FileContext, owner_class: cst.ClassDef) -> List[Tuple[str, str, int, bool]]:
    """``(Class, parameter, position, trains)`` for each parameter of the class's ``__init__`` that
    it keeps (``self.model = model``) and that a method of the class runs (``self.model.fit(...)``,
    ``self.model.compile(...)``, a training step on ``self.model.trainable_variables``): making an
    object of it (``Trainer(model)``) hands it the model that its methods run. The position does
    not count ``self``."""
    init = next((node for node in owner_class.body.body
                 if isinstance(node, cst.FunctionDef) and node.name.value == "__init__"), None)
    params = [param.name.value for param in init.params.params][1:] if init is not None else []
    runs: Dict[str, bool] = {}  # parameter -> trains
    for param, trains in kept_attributes(ctx, owner_class).values():
        runs[param] = runs.get(param, False) or trains
    return [(owner_class.name.value, param, params.index(param), trains) for param, trains in sorted(runs.items())]


def kept_attributes(ctx: FileContext, owner_class: cst.ClassDef) -> Dict[str, Tuple[str, bool]]:
    """``{"model": ("model", True)}``: the attributes of the instance that keep a parameter of the
    class's ``__init__`` (``self.model = model``) and that a method of the class runs, with that
    parameter and whether it compiles it or trains it (``kept_models``)."""
    methods = [node for node in owner_class.body.body if isinstance(node, cst.FunctionDef)]
    init = next((method for method in methods if method.name.value == "__init__"), None)
    if init is None:
        return {}
    params = [param.name.value for param in init.params.params][1:]
    kept: Dict[str, str] = {}  # attribute -> parameter
    for node in ctx.nodes(cst.Assign):
        value = node.value
        if isinstance(value, cst.Name) and value.value in params and ctx.enclosing_function(node) is init:
            for target in node.targets:
                if isinstance(target.target, cst.Attribute) and is_name(target.target.value, "self"):
                    kept[target.target.attr.value] = value.value
    found: Dict[str, Tuple[str, bool]] = {}
    for method in methods:
        taking_steps = _steps(ctx, method)
        for node in walk(method):
            attribute = _kept_attribute(node, kept)
            if attribute is None:
                continue
            trains = found.get(attribute, ("", False))[1]
            if isinstance(node, cst.Call) and node.func.attr.value in _RUNS and (
                    node.func.attr.value != "compile" or node.args):
                found[attribute] = (kept[attribute], trains or is_keras_run(node) or node.func.attr.value == "compile")
            elif isinstance(node, cst.Attribute) and node.attr.value in _WEIGHTS and taking_steps:
                found[attribute] = (kept[attribute], True)
    return found


def _kept_attribute(node: cst.CSTNode, kept: Dict[str, str]) -> Optional[str]:
    """``model`` for ``self.model.fit(...)`` or ``self.model.trainable_variables``, when the
    instance keeps a parameter of ``__init__`` as ``self.model`` (``kept``)."""
    target = node.func if isinstance(node, cst.Call) else node
    if not isinstance(target, cst.Attribute):
        return None
    held = target.value
    if isinstance(held, cst.Attribute) and is_name(held.value, "self") and held.attr.value in kept:
        return held.attr.value
    return None


def _differentiated_parameters(ctx: FileContext, functions: Dict[str, cst.FunctionDef]) -> Dict[str, Set[str]]:
    """Per function, its parameters whose trainable weights it (or a step it defines) reads: a
    custom training loop's model (``tape.gradient(loss, model.trainable_variables)``), which
    must be made in the IPU strategy's scope like one given to ``fit``."""
    found: Dict[str, Set[str]] = {}
    for node in ctx.nodes(cst.Attribute):
        if node.attr.value not in _WEIGHTS or not isinstance(node.value, cst.Name):
            continue
        function = ctx.enclosing_function(node)
        while function is not None and not is_module_function(ctx, function):
            function = ctx.enclosing_function(function)
        if function is not None and functions.get(function.name.value) is function and _steps(ctx, function):
            found.setdefault(function.name.value, set()).add(node.value.value)
    return found


def _steps(ctx: FileContext, function: cst.FunctionDef) -> bool:
    """Whether ``function`` (or a step it defines) takes gradients or applies them: a training loop,
    not a helper that only counts or copies weights."""
    return any(isinstance(call.func, cst.Attribute) and call.func.attr.value in _GRADIENT_STEPS
               for call in ctx.nodes(cst.Call) if any(ancestor is function for ancestor in ctx.ancestors(call)))


def _parameters(functions: Dict[str, cst.FunctionDef], calls: Dict[int, List[cst.Call]],
                runs: Callable[[cst.Call], bool], differentiated: Dict[str, Set[str]]
                ) -> Dict[str, Dict[str, int]]:
    """Per function, the parameters (name -> position) on which it makes a call that ``runs``
    (``param.fit(...)``), whose trainable weights it reads (``differentiated``), or that it hands
    to a function that does either."""
    found: Dict[str, Dict[str, int]] = {}
    changed = True
    while changed:  # a function may hand its model on to another one
        changed = False
        for name, function in functions.items():
            used = _run_names(calls.get(id(function), []), found, runs) | differentiated.get(name, set())
            params = {param.name.value: position for position, param in enumerate(function.params.params)
                      if param.name.value in used}
            if params and params != found.get(name):
                found[name] = params
                changed = True
    return found


def _run_names(calls: List[cst.Call], found: Dict[str, Dict[str, int]], runs: Callable[[cst.Call], bool]
               ) -> Set[str]:
    """The names that ``calls`` run, directly (``runs``) or through one of the functions ``found``."""
    names = set()
    for call in calls:
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and runs(call):
            names.add(func.value.value)
        elif isinstance(func, cst.Name) and func.value in found:
            for param, position in found[func.value].items():
                given = argument(call, param, position)
                if given is not None and isinstance(given.value, cst.Name):
                    names.add(given.value.value)
    return names
