"""Sampling loops of Keras model classes: a diffusion model's ``generate_images`` or a flow's
``sample``, a method run on the host (from a callback, or after ``fit``) that loops over the steps
of a sampler and calls a network the model holds at each of them
(``for t in reversed(range(T)): noise = self.ema_network([x, t], training=False)``)."""
from typing import Dict, Iterator, List, NamedTuple, Optional, Set

import libcst as cst

from porter.context import FileContext, walk
from porter.rules.keras._analysis.losses import is_self
from porter.rules.keras._analysis.model_plan import MODEL_BASES
from porter.rules.keras._analysis.steps import is_tf_function
from porter.rules.keras._analysis.util import is_callback_method, reached_methods, subclass_definitions

# The methods Keras runs traced, in a compiled function: what they call is no eager code.
_TRACED_METHODS = ("train_step", "test_step", "predict_step", "call")
# What an attribute holds when it is made by these: an object of Keras that is no network.
_NO_NETWORKS = ("keras.losses.", "keras.metrics.", "keras.optimizers.", "keras.callbacks.")
_NESTED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


class SamplingLoop(NamedTuple):
    loop: cst.BaseCompoundStatement  # the `for`/`while` of the sampler's steps
    method: cst.FunctionDef  # the method that holds it
    call: cst.Call  # what the loop calls at each step: the network, or a method of the class that runs it
    network: cst.Call  # the call that runs the network (`call` itself, or one in the method it calls)
    owner: cst.ClassDef  # the model class


def eager_sampling_loops(ctx: FileContext) -> Iterator[SamplingLoop]:
    """The loops of the methods of the file's Keras model classes that run on the host and call,
    at each pass, a network the instance holds (``self.network(...)``, ``self(...)``, a name that
    holds one, or a method of the class that calls one): each call runs the network eagerly."""
    for owner in subclass_definitions(ctx, *MODEL_BASES):
        methods = {node.name.value: node for node in owner.body.body if isinstance(node, cst.FunctionDef)}
        traced = reached_methods(owner, _TRACED_METHODS)
        networks = _network_attributes(ctx, owner, methods)
        entries = [name for name, method in methods.items() if name not in traced and not name.startswith("__")
                   and not is_tf_function(ctx, method) and _used_on_host(ctx, name, owner, traced)]
        for method in reached_methods(owner, entries).values():
            if is_tf_function(ctx, method):
                continue
            for loop in walk(method.body, skip=_NESTED):
                if not isinstance(loop, (cst.For, cst.While)):
                    continue
                found = _step_call(ctx, loop, method, methods, networks)
                if found is not None:
                    yield SamplingLoop(loop, method, found[0], found[1], owner)


def eager_callback_loops(ctx: FileContext) -> Iterator[SamplingLoop]:
    """The loops of a Keras callback's methods (``on_epoch_end``, which Keras calls on the host)
    that call, at each pass, a network the model holds (``self.model.ema_network(...)``) or a
    method of the model's class that runs one (``self.model.denoise(x, t)``)."""
    networks: Set[str] = set()
    running: Dict[str, cst.Call] = {}  # the methods of the model classes that run a network: that call
    for owner in subclass_definitions(ctx, *MODEL_BASES):
        methods = {node.name.value: node for node in owner.body.body if isinstance(node, cst.FunctionDef)}
        held = _network_attributes(ctx, owner, methods)
        networks |= held
        for name, method in methods.items():
            inner = None if is_tf_function(ctx, method) else _direct_network_call(method, held)
            if inner is not None:
                running.setdefault(name, inner)
    for owner in subclass_definitions(ctx, "keras.callbacks.Callback"):
        for method in owner.body.body:
            if not (isinstance(method, cst.FunctionDef) and is_callback_method(ctx, method)):
                continue
            for loop in walk(method.body, skip=_NESTED):
                if not isinstance(loop, (cst.For, cst.While)):
                    continue
                for call in walk(loop.body, skip=_NESTED):
                    name = _model_part(call) if isinstance(call, cst.Call) else None
                    if name in networks or name in running:
                        yield SamplingLoop(loop, method, call, running.get(name, call), owner)
                        break


def _model_part(call: cst.Call) -> Optional[str]:
    """``name`` for ``self.model.name(...)`` in a callback's method."""
    func = call.func
    if (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute) and is_self(func.value.value)
            and func.value.attr.value == "model"):
        return func.attr.value
    return None


def _network_attributes(ctx: FileContext, owner: cst.ClassDef, methods: Dict[str, cst.FunctionDef]) -> Set[str]:
    """The attributes the class gives its instance (``self.ema_network = ...``) that may hold a
    network: not its methods, nor a loss, metric, optimizer or callback Keras makes."""
    names = set()
    for assign in walk(owner):
        if not isinstance(assign, cst.Assign):
            continue
        made = ctx.keras_name(assign.value.func) if isinstance(assign.value, cst.Call) else None
        if made is not None and made.startswith(_NO_NETWORKS):
            continue
        names.update(target.target.attr.value for target in assign.targets
                     if isinstance(target.target, cst.Attribute) and is_self(target.target.value))
    return names - set(methods)


def _used_on_host(ctx: FileContext, name: str, owner: cst.ClassDef, traced: Dict[str, cst.FunctionDef]) -> bool:
    """Whether the method ``name`` is called, or handed on (``LambdaCallback(on_epoch_end=
    model.plot_images)``), from code Keras does not trace: out of the class's traced methods."""
    traced_ids = {id(method) for method in traced.values()}
    for node in ctx.nodes(cst.Attribute):
        if node.attr.value != name or isinstance(ctx.parent(node), cst.FunctionDef):
            continue
        function = ctx.enclosing_function(node)
        if function is None or id(function) not in traced_ids:
            return True
    return False


def _step_call(ctx: FileContext, loop: cst.BaseCompoundStatement, method: cst.FunctionDef,
               methods: Dict[str, cst.FunctionDef], networks: Set[str]) -> Optional[List[cst.Call]]:
    """``[call, network call]`` for the first call in the loop's body that runs a network: the
    network itself, or a method of the class (``self.denoise(...)``) whose body calls one."""
    held = _names_holding_networks(method, networks)
    for node in walk(loop.body, skip=_NESTED):
        if not isinstance(node, cst.Call):
            continue
        if _runs_network(node, networks, held):
            return [node, node]
        called = node.func.attr.value if isinstance(node.func, cst.Attribute) and is_self(node.func.value) else None
        if called in methods and methods[called] is not method and not is_tf_function(ctx, methods[called]):
            inner = _direct_network_call(methods[called], networks)
            if inner is not None:
                return [node, inner]
    return None


def _direct_network_call(method: cst.FunctionDef, networks: Set[str]) -> Optional[cst.Call]:
    """The first call in the body of ``method`` that runs a network the instance holds."""
    held = _names_holding_networks(method, networks)
    return next((node for node in walk(method.body, skip=_NESTED)
                 if isinstance(node, cst.Call) and _runs_network(node, networks, held)), None)


def _runs_network(call: cst.Call, networks: Set[str], held: Set[str]) -> bool:
    """``self.network(...)``, ``self(...)``, or ``network(...)`` for a name that holds one."""
    func = call.func
    if is_self(func):
        return True
    if isinstance(func, cst.Attribute) and is_self(func.value):
        return func.attr.value in networks
    return isinstance(func, cst.Name) and func.value in held


def _names_holding_networks(method: cst.FunctionDef, networks: Set[str]) -> Set[str]:
    """The names ``method`` binds to a network of the instance: ``network = self.network if
    training else self.ema_network``."""
    names = set()
    for assign in walk(method.body, skip=_NESTED):
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1
                and isinstance(assign.targets[0].target, cst.Name)):
            continue
        value = assign.value
        options = [value.body, value.orelse] if isinstance(value, cst.IfExp) else [value]
        if all(isinstance(option, cst.Attribute) and is_self(option.value) and option.attr.value in networks
               for option in options):
            names.add(assign.targets[0].target.value)
    return names
