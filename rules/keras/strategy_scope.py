import builtins
from textwrap import indent
from typing import AbstractSet, Dict, Optional, Set, Tuple

import libcst as cst

from porter.config import Config
from porter.context import FileContext, SharedKey, bound_names, code_of, is_under, walk
from porter.markers import PYTHON_MAGIC
from porter.cstutil import (append_args, expr_call, expression, is_name, keyword, keyword_arg, simple_assign,
                            single_small, statement, string_value)
from porter.parsing import ParseError, parse
from porter.rule import ERROR, FIX, KERAS, Example, Rule, is_selected
from porter.rules._tf.tfdata import dataset_like
from porter.rules.keras._analysis.custom_loop import loop_plans
from porter.rules.keras._analysis.datasets import keras_batched_source
from porter.rules.keras._analysis.fit import training_calls
from porter.rules.keras._analysis.model_plan import (GLOBAL_STRATEGY_SETTERS, IPU_CONFIG_MARKERS, IPU_STRATEGIES,
                                                    OVERRIDING_KERAS_MODELS, RUNNING_METHODS, TPU_SETUP,
                                                    gives_strategy, gpu_number, in_model_class,
                                                    in_region, in_regions, keras_extensions_off, model_plan,
                                                    made_distribution_strategy, project_trained_arguments,
                                                    runs_model, setup_anchors, without_compat)
from porter.rules.keras._analysis.steps import TAPES, loop_trains, minimize_calls, step_functions
from porter.rules.keras._analysis.util import auto_loss_objects, clears_session, is_run_call, tuners
from porter.rules.keras.ipu_import import IpuImport
from porter.statements import remove_statement
from porter.suppress import MARKER
from porter.suppress import find as find_suppressions
from porter.scopes import (assignments, called_returns, fresh_name, is_module_function, local_calls,
                           local_function, module_definitions, owner, owner_body, parameter_names, returns_of,
                           values_of)


# Strategies of several hosts, and what else of theirs the script must lose.
_MULTI_HOST = {
    "MultiWorkerMirroredStrategy": "",
    "ParameterServerStrategy": "; `ClusterCoordinator` and `schedule` take no IPU strategy, so the loop that uses "
                               "them must become a plain loop over the dataset",
}


def _strategy_code(ctx) -> str:
    if keras_extensions_off(ctx) is not None:
        return "ipu.ipu_strategy.IPUStrategy(enable_keras_extensions=False)"
    return "ipu.ipu_strategy.IPUStrategy()"


def _plain_models(ctx, plan) -> str:
    """The models the file compiles that are surely not of a class that overrides a Keras hook
    (``classifier = keras.Sequential(...)``, or made by a function of the file that returns one):
    they lose the IPU Keras extensions too, being in the same strategy. As a clause of a message."""
    if not plan.overridden_hooks:
        return ""
    names = []
    for entry in training_calls(ctx):
        receiver = entry.call.func.value if isinstance(entry.call.func, cst.Attribute) else None
        if entry.method == "compile" and isinstance(receiver, cst.Name) and entry.model not in names:
            values = values_of(ctx, receiver)
            if values and all(_keras_made(ctx, value) for value in values):
                names.append(entry.model)
    if not names:
        return ""
    return ", " + ", ".join(f"`{name}`" for name in names) + " too, which overrides nothing"


def _keras_made(ctx, value: Optional[cst.BaseExpression]) -> bool:
    """``value`` is a model made by Keras (``keras.Sequential(...)``, ``keras.Model(inputs,
    outputs)``, ``keras.applications.ResNet50(...)``), directly or returned by a function of the file."""
    if not isinstance(value, cst.Call):
        return False
    qualified = ctx.qualified_name(value.func) or ""
    if qualified.startswith(("keras.", "tensorflow.keras.")):
        return True
    function, returned = called_returns(ctx, value)
    return function is not None and bool(returned) and all(
        isinstance(result, cst.Call) and (ctx.qualified_name(result.func) or "").startswith(
            ("keras.", "tensorflow.keras.")) for result in returned)


class ScopeBlock:
    """Builds ``with name.scope():`` around statements; ``name`` may be an attribute
    (``trainer.strategy``). The audit (IPU190) tells the blocks it builds from other rules' by it."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, statements) -> cst.With:
        return cst.With(
            items=[cst.WithItem(cst.Call(cst.Attribute(cst.parse_expression(self.name), cst.Name("scope"))))],
            body=cst.IndentedBlock(body=statements),
        )




class ExtendedScope(ScopeBlock):
    """Brings statements after an existing ``with name.scope():`` into it: the piece of the range
    that starts with that block gets them at the end of its body; another piece (a later notebook
    cell, or statements after one that stays out) gets a block of its own, of the same strategy."""

    def __call__(self, statements) -> cst.With:
        first = statements[0]
        receiver = scope_receiver(first) if isinstance(first, cst.With) else None
        if receiver is None or cst.Module([]).code_for_node(receiver) != self.name or not isinstance(
                first.body, cst.IndentedBlock):
            return super().__call__(statements)
        return first.with_changes(body=first.body.with_changes(body=[*first.body.body, *statements[1:]]))


def scope_receiver(with_node: cst.With) -> Optional[cst.BaseExpression]:
    """``strategy`` of ``with strategy.scope():`` (one item, no arguments), else None."""
    if len(with_node.items) != 1:
        return None
    item = with_node.items[0].item
    if isinstance(item, cst.Call) and not item.args and isinstance(item.func, cst.Attribute) \
            and item.func.attr.value == "scope":
        return item.func.value
    return None


def _ipu_scopes(ctx):
    """``(with, name)`` for each ``with name.scope():`` of a name bound only to an IPU strategy."""
    for with_node in ctx.nodes(cst.With):
        receiver = scope_receiver(with_node)
        if not isinstance(receiver, cst.Name):
            continue
        values = values_of(ctx, receiver)
        if values and all(isinstance(value, cst.Call) and ctx.qualified_name(value.func) in IPU_STRATEGIES
                          for value in values):
            yield with_node, receiver.value


def _models_made_in(ctx, plan, with_node: cst.With) -> Set[str]:
    """The models (and their parts) the block assigns, not in a function it defines."""
    made: Set[str] = set()
    for node in walk(with_node.body):
        if isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and ctx.enclosing_function(
                node) is ctx.enclosing_function(with_node):
            targets = [target.target for target in node.targets] if isinstance(node, cst.Assign) else [node.target]
            made.update(name for target in targets for name in bound_names(target))
    return made & (plan.model_like | plan.model_names)


def _runs_of(ctx, plan, statement_node: cst.BaseStatement, models: Set[str]):
    """The calls of ``statement_node`` (not in a function it defines) that run one of ``models``:
    ``model.fit(...)``, a function of the file given the model (``train(model, ds)``), or one that
    runs it by the name it has there (a nested ``def check(): return model.evaluate(x, y)``), or a
    function of another module of the project given the model, which it trains."""
    if isinstance(statement_node, (cst.FunctionDef, cst.ClassDef)):
        return []
    runs = []
    for node in walk(statement_node):
        if not isinstance(node, cst.Call) or ctx.enclosing(node, cst.Lambda) is not None:
            continue
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in models \
                and runs_model(node, plan) and func.attr.value != "compile":
            runs.append(node)
        elif isinstance(func, cst.Name):
            function = local_function(ctx, func.value, node)
            given = any(isinstance(arg.value, cst.Name) and arg.value.value in models for arg in node.args)
            if function is not None and any(isinstance(call, cst.Call) and runs_model(call, plan) and (
                    given or isinstance(call.func.value, cst.Name) and call.func.value.value in models)
                    for call in walk(function.body)):
                runs.append(node)  # given the model, or a function that runs it by its name
        if isinstance(func, (cst.Name, cst.Attribute)) and _trains_given(ctx, node, models):
            runs.append(node)  # `train_model(model, ds)`, `trainer.train_model(model, ds)`
    return runs


def _trains_given(ctx, call: cst.Call, models: Set[str]) -> bool:
    """Whether ``call`` hands one of ``models`` to a function of another module of the project
    that trains it (``train_model(model, ds)`` after ``from trainer import train_model``)."""
    return any(isinstance(arg.value, cst.Name) and arg.value.value in models
               for arg in project_trained_arguments(ctx, call))


def _sibling_holding(ctx, siblings, node: cst.CSTNode) -> cst.BaseStatement:
    """The statement of ``siblings`` that holds ``node``."""
    holders = {id(ancestor) for ancestor in (node, *ctx.ancestors(node))}
    return next(statement_node for statement_node in siblings if id(statement_node) in holders)


# Functions a notebook cell calls to show a value: Jupyter's `display` and `print` are builtins there.
_DISPLAY_BUILTINS = frozenset({"print", "display"})
_DISPLAY_FUNCTIONS = frozenset({"IPython.display.display", "keras.utils.plot_model",
                                "keras.utils.vis_utils.plot_model"})
# What runs code or binds a name inside an expression.
_ACTIVE = (cst.Call, cst.NamedExpr, cst.Lambda, cst.Await, cst.Yield)


def _plain(node: cst.CSTNode) -> bool:
    """An expression that only reads values: names, attributes, items, constants."""
    return not any(isinstance(part, _ACTIVE) for part in walk(node))


def _only_displays(ctx, statement_node: cst.BaseStatement) -> bool:
    """A statement that only shows a value: a bare name or attribute (the cell's output), or
    ``summary()``, ``plot_model``, ``print`` or ``display`` of plain values. It creates nothing
    and runs no model code, so it may run after the strategy's scope."""
    small = single_small(statement_node)
    if not isinstance(small, cst.Expr):
        return False
    value = small.value
    if not isinstance(value, cst.Call):
        return isinstance(value, (cst.Name, cst.Attribute, cst.Subscript)) and _plain(value)
    func = value.func
    shows = (
        isinstance(func, cst.Attribute) and func.attr.value == "summary" and _plain(func.value)
        or isinstance(func, cst.Name) and func.value in _DISPLAY_BUILTINS and ctx.qualified_name(func) is None
        or ctx.keras_name(func) in _DISPLAY_FUNCTIONS or ctx.qualified_name(func) in _DISPLAY_FUNCTIONS
    )
    return shows and all(_plain(arg.value) for arg in value.args)


_BUILTINS = frozenset(dir(builtins))


def _host_expression(ctx, model_code: set, statement_node: cst.BaseStatement) -> bool:
    """A bare expression whose value a notebook cell shows, and that touches neither the model
    nor TensorFlow (``os.listdir(checkpoint_dir)``): it may run after the strategy's scope."""
    small = single_small(statement_node)
    if not isinstance(small, cst.Expr) or isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
        return False
    host = _host_names(ctx)
    for node in walk(small.value):
        if isinstance(node, cst.Name) and node.value in model_code and not _read_only(ctx, node):
            return False
        if isinstance(node, (cst.NamedExpr, cst.Lambda, cst.Await, cst.Yield)):
            return False
        if isinstance(node, cst.Call) and not (isinstance(node.func, cst.Name) and node.func.value in _BUILTINS) and (
                ctx.qualified_name(node.func) or "tensorflow").startswith(("tensorflow", "keras", "tf_keras")) \
                and not _of_host_values(ctx, node.func, host):
            return False  # TensorFlow's, or a call the porter cannot name
    return True


# Model methods whose answer a notebook cell ends with, to show it: scores, predictions.
_ANSWERS = frozenset({"evaluate", "predict", "predict_on_batch", "test_on_batch", "evaluate_generator",
                      "predict_generator"})


def _shows_result(ctx, plan, statement_node: cst.BaseStatement) -> bool:
    """A bare expression as the last line of a cell, in the scope: ``model.evaluate(x_test,
    y_test)``, ``np.argmax(model.predict(x), 1)``, ``tf.nn.softmax(predictions).numpy()``. The cell
    shows its value, so it is computed in the scope and shown after it. Not prose, ``print(...)``
    or ``model.summary()``, which show nothing, nor what a model's other methods give (``fit``'s
    ``History``) unless an answer of the model is in it, nor a call of a function of the file that
    returns nothing (``train(dataset)``)."""
    small = single_small(statement_node)
    value = small.value if isinstance(small, cst.Expr) else None
    if isinstance(small, cst.Expr) and isinstance(small.semicolon, cst.Semicolon):
        return False  # `model.evaluate(x, y);`: the semicolon tells Jupyter to show nothing
    if value is None or isinstance(value, (cst.SimpleString, cst.ConcatenatedString)) or isinstance(
            value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in _DISPLAY_BUILTINS:
        return False  # prose, or a `print(...)` that shows what it gives by itself
    runners = plan.model_like | _layer_names(ctx)
    if any(isinstance(node, cst.Call) and (
            isinstance(node.func, cst.Attribute) and node.func.attr.value in _ANSWERS
            or isinstance(node.func, cst.Name) and node.func.value in runners) for node in walk(value)):
        return True
    return not (_only_displays(ctx, statement_node) or _model_method(value, runners) or _returns_nothing(ctx, value))


def _returns_nothing(ctx, value: cst.BaseExpression) -> bool:
    """``train(dataset, EPOCHS)``: a call of a function of the file that returns no value, so the
    cell shows nothing."""
    function, returned = called_returns(ctx, value)
    return function is not None and not returned


def _model_method(value: cst.BaseExpression, runners: set) -> bool:
    """``model.fit(x, y)``, ``model.save("m.keras")``: a method of a model called as a statement,
    for what it does (what it gives is no answer of the model)."""
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and isinstance(
        value.func.value, cst.Name) and value.func.value.value in runners


def _layer_names(ctx) -> set:
    """Names the module assigns a Keras layer or a TF Hub layer: calling one runs it."""
    def find() -> set:
        return {bound for _, bound, value in assignments(ctx, ctx.module) if isinstance(value, cst.Call) and (
            (ctx.keras_name(value.func) or "").startswith("keras.layers.")
            or ctx.qualified_name(value.func) == "tensorflow_hub.KerasLayer")}

    return ctx.shared(_LAYER_NAMES, find)


_LAYER_NAMES: SharedKey[set] = SharedKey("keras-module-layer-names")


def _keras_values(ctx) -> set:
    """Names the module assigns what Keras makes, other than host utilities: an ``Input``, a
    layer's output (``Dense(8)(inputs)``, ``layer(x)``). Arithmetic on such a symbolic tensor
    (``2 * inputs + 1``) makes Keras layers, so it is model code, not host work."""
    layers = _layer_names(ctx)

    def made_by_keras(value: cst.BaseExpression) -> bool:
        func = value.func if isinstance(value, cst.Call) else None
        while isinstance(func, cst.Call):  # `Dense(8)(inputs)`: the layer's output
            func = func.func
        if func is None:
            return False
        keras = ctx.keras_name(func)
        return (keras is not None and not is_under(keras, _HOST_KERAS)
                or isinstance(func, cst.Name) and func.value in layers)

    return {bound for _, bound, value in assignments(ctx, ctx.module) if made_by_keras(value)}


# What a model has that a cell may show without running it: its weights' list, its size, its config.
_MODEL_READS = frozenset({"trainable_variables", "trainable_weights", "non_trainable_variables", "variables",
                          "weights", "layers", "name", "count_params", "get_config", "to_json", "input_shape",
                          "output_shape", "inputs", "outputs", "metrics_names"})


def _read_only(ctx, name: cst.Name) -> bool:
    """``model.trainable_variables``, ``model.count_params()``: a look at the model, which runs
    nothing on a device, whether in the scope or after it."""
    attribute = ctx.parent(name)
    return isinstance(attribute, cst.Attribute) and attribute.value is name and attribute.attr.value in _MODEL_READS


def _of_host_values(ctx, func: cst.BaseExpression, host: set) -> bool:
    """``hist.tail``, ``history.history.keys``, ``(classes == labels).mean``: a method of a value
    made of host values only."""
    return isinstance(func, cst.Attribute) and _host_expr(ctx, func.value, host)


def _host_expr(ctx, node: cst.BaseExpression, host: set) -> bool:
    """An expression of host values: names bound to them, NumPy and pandas, literals, and what
    their items, methods and arithmetic give."""
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(node, cst.Name):
        return node.value in host or (ctx.qualified_name(node) or "").startswith(_HOST_LIBRARIES)
    if isinstance(node, (cst.Attribute, cst.Subscript)):
        return _host_expr(ctx, node.value, host)
    if isinstance(node, cst.Call):
        return (ctx.qualified_name(node.func) or "").startswith(_HOST_LIBRARIES) or _of_host_values(ctx, node.func, host)
    if isinstance(node, cst.BinaryOperation):
        return _host_expr(ctx, node.left, host) and _host_expr(ctx, node.right, host)
    if isinstance(node, cst.Comparison):
        return _host_expr(ctx, node.left, host) and all(_host_expr(ctx, target.comparator, host)
                                                        for target in node.comparisons)
    if isinstance(node, cst.UnaryOperation):
        return _host_expr(ctx, node.expression, host)
    return False


_HOST_LIBRARIES = ("numpy", "pandas")


def _host_names(ctx) -> set:
    """Names of the module bound only to host values: what pandas or NumPy made, the ``History``
    that ``fit`` returns, ``predict``'s arrays, literals, and what their methods and arithmetic
    give. Their methods (``hist.tail()``, ``history.history.keys()``) run in Python."""
    def find() -> set:
        values = {}
        for _, bound, value in assignments(ctx, ctx.module):
            values.setdefault(bound, []).append(value)
        host: set = set()
        for _ in range(3):  # names made from names made from host values
            host |= {name for name, bound in values.items() if all(_host_value(ctx, value, host) for value in bound)}
        return host

    return ctx.shared(_HOST_NAMES, find)


def _host_value(ctx, value: Optional[cst.BaseExpression], host: set) -> bool:
    if isinstance(value, (cst.Dict, cst.List, cst.Tuple)):
        return True
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in (
            "fit", "fit_generator", "predict"):
        return True  # Keras' `History`, or NumPy arrays
    return value is not None and _host_expr(ctx, value, host)


_HOST_NAMES: SharedKey[set] = SharedKey("keras-host-names")


def _model_code(ctx, plan) -> set:
    """Names whose use is model code: models, their parts, tuners, and the functions of the file."""
    return plan.model_like | plan.holders | plan.model_names | module_definitions(ctx)


def _kept_out(ctx, plan):
    """Which statements of a region stay out of the scope, where they read as before and do what
    they did: a plain function defined among the model code (defining it creates nothing on a
    device; its body runs where it is called, in the scope when its callers are), and a look at a
    dataset on the host (a loop over `ds.take(1)` that plots, `next(iter(ds))`), since in the scope
    iterating a dataset makes an IPU infeed (Targeting the IPU from TensorFlow 2). A decorated
    function (a `tf.function`), a training step (IPU111 compiles it) and a class (a callback or a
    model whose methods run the model) stay with the model code, as in the guides, and so does a
    function whose default values make Keras objects (made where it is defined)."""
    steps = {id(function) for same_name in step_functions(ctx).values() for function in same_name}
    model_code = _model_code(ctx, plan)

    fed = _fed_iterators(ctx)
    helpers = _host_helpers(ctx, model_code, steps)

    def host_iteration(statement_node: cst.BaseStatement) -> bool:
        iterates = False
        small = single_small(statement_node)
        if isinstance(small, cst.Assign) and any(is_name(target.target, name) for target in small.targets
                                                 for name in fed):
            return False  # `iterator = iter(ds)` that a step runs on: an IPU infeed in the scope
        for node in walk(statement_node):
            if isinstance(node, cst.Name) and node.value in model_code and node.value not in helpers or isinstance(
                    node, cst.With) or (isinstance(node, cst.For) and loop_trains(ctx, node)):
                return False  # runs a model, calls code of the file (a step defined beside it), or opens a tape
            if _iterates_dataset(ctx, node) or isinstance(node, cst.Call) and _helper_iterates(ctx, helpers, node):
                iterates = True
        return iterates

    losses = set(auto_loss_objects(ctx))

    def host_loss(statement_node: cst.BaseStatement) -> bool:
        """``print(loss_fn(y[:1], predictions).numpy())``: a loss object of automatic reduction
        called on host values; in the scope Keras would refuse it (a ValueError)."""
        names = [node.value for node in walk(statement_node) if isinstance(node, cst.Name)]
        return isinstance(statement_node, cst.SimpleStatementLine) and any(
            isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in losses
            for node in walk(statement_node)) and not any(name in model_code for name in names)

    tuner_names = _tuner_results(ctx)

    def tuner_results(statement_node: cst.BaseStatement) -> bool:
        """``best = tuner.oracle.get_best_trials(1)[0]``: a look at what a tuner found, which
        builds nothing (``search`` and ``get_best_models`` stay out too, ``hypermodel.build`` in)."""
        names = {node.value for node in walk(statement_node) if isinstance(node, cst.Name)}
        return bool(names & tuner_names) and not names & (model_code - tuner_names) and not names & _BUILDING

    def kept_out(statement_node: cst.BaseStatement) -> bool:
        if isinstance(statement_node, cst.FunctionDef):
            return not statement_node.decorators and id(statement_node) not in steps and not _default_makes_objects(
                ctx, statement_node)
        return not isinstance(statement_node, cst.ClassDef) and (
            host_iteration(statement_node) or dataset_loop(ctx, statement_node) is not None
            or bool(losses) and host_loss(statement_node) or clears_session(ctx, statement_node)
            or bool(tuner_names) and tuner_results(statement_node))

    return kept_out


# Libraries whose calls run on the host only: a notebook cell of them needs no IPU scope.
_HOST_ONLY = ("numpy", "pandas", "matplotlib", "seaborn", "os", "sys", "pathlib", "datetime", "time", "json",
              "random", "math", "collections", "itertools", "re", "shutil", "glob", "pickle", "csv", "PIL",
              "IPython", "tqdm", "sklearn", "scipy", "string", "textwrap", "pprint", "logging", "warnings",
              "zipfile", "tarfile", "urllib", "io", "platform", "copy", "tensorflow_datasets")
# What TensorFlow and Keras make on the host, with no variable: input pipelines, files, callbacks,
# Keras' utilities (as for `_makes_device_objects`).
_HOST_TENSORFLOW = ("tensorflow.data", "tensorflow.io.gfile", "tensorflow.function", "tensorflow.random.set_seed")
_HOST_KERAS = ("keras.datasets", "keras.callbacks", "keras.utils", "keras.saving.register_keras_serializable")


def _idle_in_cell(ctx, plan):
    """Which statements of a notebook cell need no IPU strategy scope: imports; definitions whose
    decorators, default values and class-body statements create nothing on a device (defining runs
    nothing; the body runs where it is called); and statements of host work (NumPy, pandas, plots,
    files, `tf.data` pipelines, `keras.datasets`, callbacks) that name no model, layer or function
    of the notebook. A cell made only of them stays as it is: wrapping it changes nothing but
    the cell. Anything else (a TensorFlow op, a variable, an unknown call) is taken for model code."""
    model_code = _model_code(ctx, plan) | _layer_names(ctx) | _keras_values(ctx)
    fed = _fed_iterators(ctx)
    host = _host_names(ctx)
    idle_names: set = set()
    checking: set = set()  # the functions of the notebook whose bodies are being checked

    def idle_call(call: cst.Call) -> bool:
        func = call.func
        qualified = ctx.qualified_name(func)
        if qualified is not None:
            return is_under(qualified, _HOST_ONLY + _HOST_TENSORFLOW) or is_under(ctx.keras_name(func), _HOST_KERAS)
        if isinstance(func, cst.Name):
            return func.value in _BUILTINS or host_function(func.value)
        receiver = func.value if isinstance(func, cst.Attribute) else None
        while isinstance(receiver, (cst.Attribute, cst.Subscript)):
            receiver = receiver.value
        if isinstance(receiver, cst.Name):
            return receiver.value in idle_names or receiver.value in host or _is_dataset(ctx, func.value)
        return receiver is not None  # a method of what a call gives (checked on its own) or of a literal

    def host_function(name: str) -> bool:
        """A function of the notebook whose body is host work only (a plotting helper): calling it
        needs no scope. One being checked (a recursive one) is not."""
        if name in checking:
            return False
        definitions = [node for node in ctx.module.body if isinstance(node, cst.FunctionDef) and node.name.value == name]
        definition = definitions[0] if len(definitions) == 1 else None
        if definition is None or definition.decorators or not isinstance(definition.body, cst.IndentedBlock) or (
                name in step_functions(ctx)):
            return False
        checking.add(name)
        # Its local variables bound by host work (`ax = plt.subplot(212)`, `for metric in ["loss",
        # "accuracy"]`) are host values too, in source order: `label = metric.title()` in that loop is.
        local = set()
        for statement_node, bound, value in assignments(ctx, definition):
            if bound in idle_names:
                continue
            if value is None and isinstance(statement_node, cst.For):
                value = statement_node.iter
            if value is not None and idle_expression(value):
                local.add(bound)
                idle_names.add(bound)
        try:
            return all(idle(inner) for inner in definition.body.body)
        finally:
            checking.discard(name)
            idle_names.difference_update(local)

    def called_host_function(name: cst.Name) -> bool:
        call = ctx.parent(name)
        return isinstance(call, cst.Call) and call.func is name and host_function(name.value)

    def idle_expression(node: Optional[cst.CSTNode]) -> bool:
        if node is None:
            return True
        # A lambda's body runs where it is called (`ds.map(lambda x, y: (tf.cast(x, tf.float32), y))`
        # in the input pipeline): its calls are checked there, its names here.
        deferred = {id(inner) for part in walk(node) if isinstance(part, cst.Lambda) for inner in walk(part.body)}
        for part in walk(node):
            if isinstance(part, cst.Name) and (part.value in model_code and not _read_only(ctx, part)
                                               and not called_host_function(part)
                                               or part.value.startswith(PYTHON_MAGIC)):
                return False
            if isinstance(part, (cst.Await, cst.Yield)) or isinstance(part, cst.Call) and id(
                    part) not in deferred and not idle_call(part):
                return False
        return True

    def idle_definition(definition) -> bool:
        if isinstance(definition, cst.FunctionDef):
            defaults = [param.default for param in (*definition.params.params, *definition.params.kwonly_params,
                                                    *definition.params.posonly_params)]
            return all(idle_expression(decorator.decorator) for decorator in definition.decorators) and all(
                idle_expression(default) for default in defaults)
        return all(idle_expression(decorator.decorator) for decorator in definition.decorators) and all(
            idle_expression(arg.value) for arg in (*definition.bases, *definition.keywords)) and isinstance(
            definition.body, cst.IndentedBlock) and all(
            idle_method(inner) if isinstance(inner, (cst.FunctionDef, cst.ClassDef)) else idle_expression(inner)
            for inner in definition.body.body)

    def idle_method(definition) -> bool:
        # A class whose methods run the model (a callback that predicts) stays with the model code,
        # as in scripts: Keras, not the notebook, calls those methods, in the scope.
        return idle_definition(definition) and not any(
            isinstance(part, cst.Name) and part.value in model_code for part in walk(definition.body))

    def idle(statement_node: cst.BaseStatement) -> bool:
        if isinstance(statement_node, (cst.FunctionDef, cst.ClassDef)):
            return idle_definition(statement_node)
        small = single_small(statement_node)
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            return True
        if isinstance(small, cst.Assign) and any(is_name(target.target, name) for target in small.targets
                                                 for name in fed):
            return False  # `iterator = iter(ds)` that a step runs on: an IPU infeed in the scope
        if isinstance(small, cst.Assign) and all(isinstance(target.target, cst.Name) for target in small.targets):
            # What a name is bound to decides, not the name: `loss = history.history["loss"]` for a
            # plot is host work though the notebook binds `loss` to a loss object in another cell.
            return idle_expression(small.value)
        return idle_expression(statement_node)

    def find_idle_names() -> None:
        """The module's names bound only by host work: from every name that is not model code,
        drop those with a binding that is not host work until none is left to drop (a name bound
        by `with open(path) as lines` whose body reads `lines` is host work)."""
        bindings: dict = {}
        for statement_node, name, _ in assignments(ctx, ctx.module):
            bindings.setdefault(name, []).append(statement_node)
        idle_names.update(name for name in bindings if name not in model_code)
        while True:
            dropped = {name for name in idle_names if not all(idle(node) for node in bindings[name])}
            if not dropped:
                return
            idle_names.difference_update(dropped)

    def idle_in_notebook(statement_node: cst.BaseStatement) -> bool:
        if not found:  # only notebooks ask, once
            found.append(True)
            find_idle_names()
        return idle(statement_node)

    found: list = []
    return idle_in_notebook


def _iterates_dataset(ctx, node: cst.CSTNode, parameters: AbstractSet[str] = frozenset()) -> bool:
    """Whether ``node`` reads a dataset's elements: a loop or a comprehension over it, ``iter`` or
    ``list`` of it, or its ``as_numpy_iterator()``. ``parameters``: names taken for datasets (the
    parameters of a helper that its callers give datasets)."""
    def dataset(value: cst.BaseExpression) -> bool:
        return isinstance(value, cst.Name) and value.value in parameters or _is_dataset(ctx, value)

    if isinstance(node, (cst.For, cst.CompFor)):
        return dataset(node.iter)
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if isinstance(func, cst.Name):
        return func.value in ("iter", "list") and ctx.qualified_name(func) is None and bool(node.args) and dataset(
            node.args[0].value)
    return isinstance(func, cst.Attribute) and func.attr.value == "as_numpy_iterator" and dataset(func.value)


def _host_helpers(ctx, model_code: set, steps: set) -> dict:
    """The plain functions of the file that only do host work (``labels_of(ds)`` gathering a
    dataset's labels with NumPy, ``count_data_items(filenames)``): no model, no Keras object, no
    variable, no ``with`` block, and only such functions of the file called. Calling one runs
    nothing on a device, in the scope or out. Each name maps to the names of the parameters its body
    iterates like a dataset."""
    functions = {statement_node.name.value: statement_node for statement_node in ctx.module.body
                 if isinstance(statement_node, cst.FunctionDef) and not statement_node.decorators
                 and id(statement_node) not in steps}
    helpers = {name: function for name, function in functions.items() if not any(
        isinstance(node, cst.With) or isinstance(node, cst.Call) and _makes_device_objects(ctx, node.func)
        for node in walk(function.body))}
    while True:  # a helper calls helpers only
        kept = {name: function for name, function in helpers.items() if not any(
            isinstance(node, cst.Name) and node.value in model_code and node.value not in helpers
            for node in walk(function.body))}
        if len(kept) == len(helpers):
            break
        helpers = kept
    return {name: {parameter for parameter in parameter_names(function) if any(
        _iterates_dataset(ctx, node, {parameter}) for node in walk(function.body))}
        for name, function in helpers.items()}


def _default_makes_objects(ctx, function: cst.FunctionDef) -> bool:
    """``def block(x, layer=layers.Dense(8))``: a default value is made where the function is
    defined, so a Keras object or variable made there needs the scope as much as the model does."""
    params = function.params
    return any(isinstance(node, cst.Call) and _makes_device_objects(ctx, node.func)
               for param in (*params.posonly_params, *params.params, *params.kwonly_params)
               if param.default is not None for node in walk(param.default))


def _makes_device_objects(ctx, func: cst.BaseExpression) -> bool:
    """A call of Keras (other than its utilities) or ``tf.Variable``: it makes objects a scope places."""
    keras_name = ctx.keras_name(func) or ""
    return keras_name.startswith("keras.") and not keras_name.startswith("keras.utils.") or (
        ctx.qualified_name(func) or "").startswith(("tensorflow.Variable", "tensorflow.compat.v1.Variable"))


def _helper_iterates(ctx, helpers: dict, call: cst.Call) -> bool:
    """``labels_of(val_ds)``: a host helper given a dataset for a parameter its body iterates."""
    if not (isinstance(call.func, cst.Name) and call.func.value in helpers):
        return False
    function = local_function(ctx, call.func.value, call)
    iterated = helpers[call.func.value]
    if function is None or not iterated:
        return False
    positions = parameter_names(function)
    for index, arg in enumerate(call.args):
        name = arg.keyword.value if arg.keyword is not None else positions[index] if not arg.star and index < len(
            positions) else None
        if name in iterated and _is_dataset(ctx, arg.value):
            return True
    return False


def _clears_unscoped(ctx, function: cst.FunctionDef) -> bool:
    """Whether ``function``'s own body clears the Keras session outside any ``with`` block."""
    return isinstance(function.body, cst.IndentedBlock) and any(
        not isinstance(statement_node, cst.With) and clears_session(ctx, statement_node)
        for statement_node in function.body.body)


def _initializer(ctx, name: str) -> Optional[cst.FunctionDef]:
    """The ``__init__`` of the class ``name`` of the module: what ``Name(...)`` runs."""
    for node in ctx.module.body:
        if isinstance(node, cst.ClassDef) and node.name.value == name and isinstance(node.body, cst.IndentedBlock):
            return next((method for method in node.body.body
                         if isinstance(method, cst.FunctionDef) and method.name.value == "__init__"), None)
    return None


def _fed_iterators(ctx) -> set:
    """Names given to a step run through ``strategy.run`` (``strategy.run(train_loop,
    args=(iterator,))``) or to a function of the file a loop calls as its step: the iterator an
    on-device loop reads with ``next``."""
    steps = {function.name.value for same_name in step_functions(ctx).values() for function in same_name}
    steps |= {plan.step.function.name.value for plan in loop_plans(ctx)}
    found = set()
    for call in ctx.nodes(cst.Call):
        func = call.func
        handed = is_run_call(call) or isinstance(func, cst.Name) and (
            func.value in steps)
        if handed:
            found |= {node.value for arg in call.args for node in walk(arg.value) if isinstance(node, cst.Name)}
    return found


# What builds or trains a model from a tuner (`tuner.hypermodel.build(hp)`, `tuner.get_best_models()`).
_BUILDING = frozenset({"build", "fit", "get_best_models", "load_model", "search"})


def _tuner_results(ctx) -> set:
    """The tuners' names, and the names the module binds to what they found (``best_hp =
    tuner.get_best_hyperparameters()[0]``, ``trial = tuner.oracle.get_best_trials(1)[0]``), made
    without building a model."""
    found = set(tuners(ctx))
    for _ in range(2):  # what was found from what was found
        for _, name, value in assignments(ctx, ctx.module):
            names = {node.value for node in walk(value) if isinstance(node, cst.Name)} if value is not None else set()
            if names & found and not names & _BUILDING:
                found.add(name)
    return found


def dataset_loop(ctx, statement_node: cst.BaseStatement):
    """A ``for`` loop over a dataset whose body runs the model but trains nothing (``for images,
    labels in val_ds.take(1): print(model.predict(images))``): the loop iterates on the host, out
    of the scope, where a dataset of any shape can be read, and its body goes in the scope. (In the
    scope the loop would make an IPU infeed, which takes only fully defined shapes.) A loop with a
    training step, or a tape, is the on-device loop of the guides: it stays whole."""
    if not (isinstance(statement_node, cst.For) and _is_dataset(ctx, statement_node.iter)
            and isinstance(statement_node.body, cst.IndentedBlock)) or loop_trains(ctx, statement_node):
        return None
    return statement_node


def _is_dataset(ctx, node: cst.BaseExpression) -> bool:
    """A `tf.data` dataset, one Keras made (`image_dataset_from_directory`...), or what a method
    only datasets have gives (`test_ds.take(1)`, `ds.shuffle(64).batch(8)`, wherever `ds` comes from)."""
    return dataset_like(ctx, node) or keras_batched_source(ctx, node, owner(ctx, node)) is not None


def _only_text(statement_node: cst.BaseStatement) -> bool:
    """A string standing alone as a statement: a docstring-like block of prose, which does nothing."""
    small = single_small(statement_node)
    return isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString))


def _stepped_losses(ctx) -> set:
    """Loss objects a training step calls (a step function, a tape block of a loop, or an optimizer's
    `minimize` written in one): IPU111 gives them an explicit reduction when it compiles the step."""
    steps = [function for same_name in step_functions(ctx).values() for function in same_name]
    tapes = [node for node in ctx.nodes(cst.With) if any(
        isinstance(item.item, cst.Call) and ctx.qualified_name(item.item.func) in TAPES for item in node.items)]
    return {node.func.value for root in (*steps, *tapes, *minimize_calls(ctx)) for node in walk(root)
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name)}


def _at_edges(statement_node: cst.BaseStatement) -> bool:
    """What may stay out where a scope begins or ends: prose, constants (``BATCH_SIZE = 64``),
    imports (``import os`` opening a notebook cell) and ``del model`` (after a fold clears the
    session), which are the same in the scope or out."""
    return _only_text(statement_node) or isinstance(statement_node, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom, cst.Del)) or isinstance(small, cst.Assign)
        and all(isinstance(target.target, cst.Name) for target in small.targets) and _literal(small.value)
        for small in statement_node.body)


def _literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(node, cst.UnaryOperation):
        return _literal(node.expression)
    if isinstance(node, (cst.Tuple, cst.List)):
        return all(isinstance(element, cst.Element) and _literal(element.value) for element in node.elements)
    return isinstance(node, cst.Name) and node.value in ("True", "False", "None")


_FLIPS = """\
import tensorflow as tf

flips = [tf.keras.layers.RandomFlip("horizontal"), tf.keras.layers.RandomRotation(0.1)]


def augment(images):
    for layer in flips:
        images = layer(images)
    return images


train_ds = raw_train.map(lambda x, y: (augment(x), y))
model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
model.fit(train_ds, epochs=2)
"""

# An optimizer and a metric made at module level, updated by a step that `main()` runs on its model.
_MODULE_OBJECTS = """\
import tensorflow as tf

optimizer = tf.keras.optimizers.SGD(0.1)
train_loss = tf.keras.metrics.Mean()


@tf.function
def step(model, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    train_loss(loss)
"""
_MAIN_LOOP = """

def main():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    for x, y in dataset:
        step(model, x, y)
    print(float(train_loss.result()))


"""

# Mixed precision's loss scaling by hand around an optimizer of TensorFlow Addons, made at module
# level, in a step that `main()` runs.
_SCALED_OPTIMIZER = ("optimizer = tf.keras.mixed_precision.LossScaleOptimizer("
                     "tfa.optimizers.AdamW(weight_decay=1e-4, learning_rate=1e-3))\n")
_SCALED_STEP = """

@tf.function
def step(model, x, y):
    with tf.GradientTape() as tape:
        loss = optimizer.get_scaled_loss(tf.reduce_mean((model(x) - y) ** 2))
    grads = optimizer.get_unscaled_gradients(tape.gradient(loss, model.trainable_variables))
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""
_SCALED_MAIN = """

def main():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    for x, y in dataset:
        step(model, x, y)


"""


# A trainer class of its own, whose loop runs its tape step, handed the models it trains as they are built.
_GIVEN_BUILT_MODELS = """\
import tensorflow as tf


class Trainer:
    def __init__(self, generator, critic):
        self.generator = generator
        self.critic = critic
        self.optimizer = tf.keras.optimizers.Adam(1e-3)

    @tf.function
    def train_step(self, real):
        with tf.GradientTape() as tape:
            fake = self.generator(tf.random.normal(tf.shape(real)))
            loss = tf.reduce_mean(self.critic(fake)) - tf.reduce_mean(self.critic(real))
        variables = self.generator.trainable_variables + self.critic.trainable_variables
        self.optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))

    def fit(self, dataset, epochs):
        for epoch in range(epochs):
            for real in dataset:
                self.train_step(real)


def build_generator():
    return tf.keras.Sequential([tf.keras.layers.Dense(2)])


def build_critic():
    return tf.keras.Sequential([tf.keras.layers.Dense(1)])


def main(dataset):
    trainer = Trainer(build_generator(), build_critic())
    trainer.fit(dataset, 2)
"""


class StrategyScope(Rule):
    code = "IPU103"
    name = "strategy-scope"
    kind = FIX
    frameworks = frozenset({KERAS})
    # The strategy is created after the IPU system is configured: both go in front of the same statement.
    after = ("IPU102",)
    summary = "Build, compile, train and save the Keras model inside an `IPUStrategy` scope."
    rationale = (
        "Code targets the IPU inside `with strategy.scope():` of an `ipu.ipu_strategy.IPUStrategy()`, "
        "instead of `tf.device` blocks or other distribution strategies, and the Keras model must be "
        "constructed inside the scope (Graphcore's Keras tutorial, \"Wrap the model within the IPU strategy "
        "scope\"). `tf.device('/gpu:N')` scopes "
        "are replaced, `MirroredStrategy`/`OneDeviceStrategy`/`MultiWorkerMirroredStrategy`/"
        "`TPUStrategy`/`get_strategy()` become the `IPUStrategy` (the variable name is kept; TPU set-up "
        "before it goes, and so does a notebook's `assert \"COLAB_TPU_ADDR\" in os.environ`, a resolver used for "
        "anything else is reported, and so is a read of a strategy that only one branch of an `if` makes, "
        "before the model code; a strategy made global with "
        "`experimental_set_strategy` is entered by the port's scope instead) and the model code after "
        "their scope moves into it. A model that overrides `train_step` (or another `make_*_function`) "
        "gets `IPUStrategy(enable_keras_extensions=False)`, since the IPU Keras extensions refuse such "
        "models (Targeting the IPU from TensorFlow 2, \"Keras with IPUs\"); so does a model of a class of "
        "another module that overrides it (a class of another file ported with the script, or one compiled "
        "with arguments Keras' `compile` does not take, `d_optimizer=`, `loss_fn=`: its class overrides "
        "`compile` for a step of its own). A model created as the argument "
        "of the function that trains it (`train(build())`, with `fit` or a loop of custom steps, also a "
        "function nested in its caller) gets the scope around that call; a model chosen "
        "in an `if`/`else` gets one scope around the choice and the training, and model code in separate "
        "branches (a script's modes, `if args.mode == \"train\":` and `else:`) one strategy made before the "
        "choice and a scope per branch. A "
        "method of a plain class that returns a model and that only the class calls (`self._network()`) runs in "
        "the scope of the method that calls it, and a class whose field a builder makes "
        "(`field(default_factory=build_model)` in a dataclass) in the scope of the code that makes its objects. "
        "The scope also takes in the "
        "statements that run a model after it is trained (`predict` in a function called later, on an alias "
        "such as `encoder = model.get_layer(\"encoder\")`, on a model a function trained and returned), a "
        "tuner handed a builder of the file, and the calls of a function with model code of its own when its "
        "caller has a scope or calls it several times: one IPU configuration and one strategy for the "
        "program, never a strategy inside another's scope. A trainer class that makes its strategy in "
        "`__init__` (`self.strategy = ...`) runs the model code of its other methods (`self.model.fit(...)` "
        "in `train`) in that strategy's scope. `tf.distribute.get_strategy()` in a builder that only asks the "
        "strategy in use about itself or enters its scope stays: in the IPU strategy's scope it gives that "
        "strategy. Plain functions defined among the model code, "
        "prose strings at the edges and host-side looks at a dataset stay out of the scope (in it, "
        "iterating a dataset makes an IPU infeed), which then comes in several blocks. In a notebook, "
        "statements at the end of a cell that only display a value (`model.summary()`, a bare expression of "
        "host values: `history.history.keys()`, a pandas table, `len(model.layers)`) stay after the scope, "
        "`clear_session()` (which drops the graph that holds the scope) runs out of it, the scope beginning "
        "again after it (in a loop's body too), "
        "so that the cell still shows its output; so does a statement that calls a Keras loss object of "
        "automatic reduction on host values, which Keras refuses in a strategy's scope outside `fit` (such a "
        "call on the model in the scope is reported); a cell that ends with a value computed in the scope "
        "(the model's answer `model.evaluate(x, y)`, `tf.nn.softmax(logits).numpy()`) keeps it as "
        "`result = ...` in the scope and shows `result` after it. A cell of host work only (imports, NumPy, "
        "pandas, plots, `tf.data` pipelines, or a call of a function of the notebook whose body is such work, a "
        "plotting helper given `history.history`) is left as it is. In a script ported by hand, whose "
        "`with strategy.scope():` of an `IPUStrategy` builds the model, the statements after the block up to "
        "the last that runs that model (`fit`, `evaluate`, `predict`, or a function of the file, or of a module of "
        "the project it imports, given it) go "
        "into the block, and into a block of the same strategy in each later notebook cell that runs it."
    )
    examples = (
        # A helper that makes and enters its own strategy, given the builder: it keeps that scope,
        # the IPU strategy's once ported, and its caller gets none of its own around the call.
        Example(
            """\
            import tensorflow as tf


            def compile_and_fit(build_fn, dataset):
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    model = build_fn()
                    model.compile(optimizer="adam", loss="mse")
                return model.fit(dataset, epochs=2)


            def build_model():
                return tf.keras.Sequential([tf.keras.layers.Dense(1)])


            def main(dataset):
                compile_and_fit(build_model, dataset)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def compile_and_fit(build_fn, dataset):
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    model = build_fn()
                    model.compile(optimizer="adam", loss="mse")
                    return model.fit(dataset, epochs=2)


            def build_model():
                return tf.keras.Sequential([tf.keras.layers.Dense(1)])


            def main(dataset):
                compile_and_fit(build_model, dataset)
            """,
        ),
        # A hand port that builds the model in its IPU strategy's scope and trains it after the
        # block: the training and the evaluation go in.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu
            from tensorflow.python.ipu.ipu_strategy import IPUStrategyV1 as Strategy


            def evaluate(net, x, y):
                return net.evaluate(x, y, batch_size=8)


            def main(x, y):
                config = ipu.config.IPUConfig()
                config.auto_select_ipus = 1
                config.configure_ipu_system()
                ipu_strategy = Strategy()
                with ipu_strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(loss="mse")
                model.fit(x, y, batch_size=8)
                print(evaluate(model, x, y))
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu
            from tensorflow.python.ipu.ipu_strategy import IPUStrategyV1 as Strategy


            def evaluate(net, x, y):
                return net.evaluate(x, y, batch_size=8)


            def main(x, y):
                config = ipu.config.IPUConfig()
                config.auto_select_ipus = 1
                config.configure_ipu_system()
                ipu_strategy = Strategy()
                with ipu_strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(loss="mse")
                    model.fit(x, y, batch_size=8)
                    print(evaluate(model, x, y))
            """,
        ),
        # A nested function that evaluates the model by its name, called after the block: the
        # call goes in, the definition stays out.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def main(x, y):
                config = ipu.config.IPUConfig()
                config.configure_ipu_system()
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(loss="mse")

                def check():
                    return model.evaluate(x, y, batch_size=8)

                print(check())
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def main(x, y):
                config = ipu.config.IPUConfig()
                config.configure_ipu_system()
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(loss="mse")

                def check():
                    return model.evaluate(x, y, batch_size=8)

                with strategy.scope():
                    print(check())
            """,
        ),
        # A look at a dataset on the host between the block and the prediction stays out; its
        # body, which predicts, runs in a block of the same strategy.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            config = ipu.config.IPUConfig()
            config.configure_ipu_system()
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(loss="mse")
            model.fit(train_ds, epochs=2)
            for images, labels in test_ds.take(1):
                print(model.predict(images))
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            config = ipu.config.IPUConfig()
            config.configure_ipu_system()
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(loss="mse")
                model.fit(train_ds, epochs=2)
            for images, labels in test_ds.take(1):
                with strategy.scope():
                    print(model.predict(images))
            """,
        ),
        # Models kept in a dict by key (an ensemble, widths compared): `models[width] = build(width)`
        # makes a model like `model = build(width)` does, and the item runs it.
        Example(
            """\
            import tensorflow as tf


            def build(width):
                return tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)])


            models = {}
            for width in (8, 64):
                models[width] = build(width)
                models[width].compile(loss="mse")
                models[width].fit(x, y, epochs=2)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def build(width):
                return tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)])


            models = {}
            strategy = ipu.ipu_strategy.IPUStrategy()
            for width in (8, 64):
                with strategy.scope():
                    models[width] = build(width)
                    models[width].compile(loss="mse")
                    models[width].fit(x, y, epochs=2)
            """,
        ),
        # Models made with no name of their own: put in a list (`append`, `extend`, `+=`) or trained
        # at once (`build().fit(...)`). The statement that makes one is model code, as an assignment
        # of the model is (each of the two scopes enters the one strategy).
        Example(
            """\
            import tensorflow as tf


            def build(width):
                model = tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)])
                model.compile(loss="mse")
                return model


            models = []
            for width in (8, 64):
                models.append(build(width))
                models[-1].fit(x, y, epochs=2)
            models += [build(16)]
            history = build(32).fit(x, y, epochs=2)
            scores = [model.evaluate(x, y) for model in models]
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def build(width):
                model = tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)])
                model.compile(loss="mse")
                return model


            models = []
            strategy = ipu.ipu_strategy.IPUStrategy()
            for width in (8, 64):
                with strategy.scope():
                    models.append(build(width))
                    models[-1].fit(x, y, epochs=2)
            with strategy.scope():
                models += [build(16)]
                history = build(32).fit(x, y, epochs=2)
                scores = [model.evaluate(x, y) for model in models]
            """,
        ),
        # Models written inline in a list, tuple or dict (or `dict(...)`) that a loop, or a function
        # handed the literal, then trains: the statement that makes them is model code too, so
        # the scope takes it in with the runs after it.
        Example(
            """\
            import tensorflow as tf


            def compile_and_fit(model, name):
                model.compile(optimizer="adam", loss="mse")
                return model.fit(x, y, epochs=2)


            histories = {}
            for name, model in [("tiny", tf.keras.Sequential([tf.keras.layers.Dense(1)])),
                                ("small", tf.keras.Sequential([tf.keras.layers.Dense(8), tf.keras.layers.Dense(1)]))]:
                histories[name] = compile_and_fit(model, name)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def compile_and_fit(model, name):
                model.compile(optimizer="adam", loss="mse")
                return model.fit(x, y, epochs=2)


            histories = {}
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                for name, model in [("tiny", tf.keras.Sequential([tf.keras.layers.Dense(1)])),
                                    ("small", tf.keras.Sequential([tf.keras.layers.Dense(8), tf.keras.layers.Dense(1)]))]:
                    histories[name] = compile_and_fit(model, name)
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def make_large():
                return tf.keras.Sequential([tf.keras.layers.Dense(64), tf.keras.layers.Dense(1)])


            def compare(models):
                return [model.evaluate(x, y) for model in models]


            def main():
                models = {"tiny": tf.keras.Sequential([tf.keras.layers.Dense(1)]), "large": make_large()}
                for name, model in models.items():
                    model.compile(optimizer="adam", loss="mse")
                    model.fit(x, y, epochs=2)
                pairs = dict(sgd=(make_large(), tf.keras.optimizers.SGD()), adam=(make_large(), "adam"))
                for net, optimizer in pairs.values():
                    net.compile(optimizer=optimizer, loss="mse")
                print(compare([make_large(), tf.keras.applications.MobileNetV2(weights=None)]))
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def make_large():
                return tf.keras.Sequential([tf.keras.layers.Dense(64), tf.keras.layers.Dense(1)])


            def compare(models):
                return [model.evaluate(x, y) for model in models]


            def main():
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    models = {"tiny": tf.keras.Sequential([tf.keras.layers.Dense(1)]), "large": make_large()}
                    for name, model in models.items():
                        model.compile(optimizer="adam", loss="mse")
                        model.fit(x, y, epochs=2)
                    pairs = dict(sgd=(make_large(), tf.keras.optimizers.SGD()), adam=(make_large(), "adam"))
                    for net, optimizer in pairs.values():
                        net.compile(optimizer=optimizer, loss="mse")
                    print(compare([make_large(), tf.keras.applications.MobileNetV2(weights=None)]))
            """,
        ),
        # Kept by an object (`self.models = [...]`): the statements that make and use the object.
        Example(
            """\
            import tensorflow as tf


            class Comparison:
                def __init__(self):
                    self.models = [tf.keras.Sequential([tf.keras.layers.Dense(1)]),
                                   tf.keras.Sequential([tf.keras.layers.Dense(8), tf.keras.layers.Dense(1)])]

                def run(self, x, y):
                    for model in self.models:
                        model.compile(optimizer="adam", loss="mse")
                        model.fit(x, y, epochs=2)


            comparison = Comparison()
            comparison.run(x, y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            class Comparison:
                def __init__(self):
                    self.models = [tf.keras.Sequential([tf.keras.layers.Dense(1)]),
                                   tf.keras.Sequential([tf.keras.layers.Dense(8), tf.keras.layers.Dense(1)])]

                def run(self, x, y):
                    for model in self.models:
                        model.compile(optimizer="adam", loss="mse")
                        model.fit(x, y, epochs=2)


            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                comparison = Comparison()
                comparison.run(x, y)
            """,
        ),
        # An item taken out of `dict(...)` of models runs one of them.
        Example(
            """\
            import tensorflow as tf

            models = dict(first=tf.keras.models.load_model("a.keras"), second=tf.keras.models.load_model("b.keras"))
            best = models["first"]
            scores = best.predict(x)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                models = dict(first=tf.keras.models.load_model("a.keras"), second=tf.keras.models.load_model("b.keras"))
                best = models["first"]
                scores = best.predict(x)
            """,
        ),
        # Kept in a `global` by a function the file calls: made where it is called, with the runs.
        Example(
            """\
            import tensorflow as tf

            MODELS = {}


            def setup():
                global MODELS
                MODELS = {"linear": tf.keras.Sequential([tf.keras.layers.Dense(1)])}


            def train(x, y):
                for name, model in MODELS.items():
                    model.compile(optimizer="adam", loss="mse")
                    model.fit(x, y, epochs=2)


            def main(x, y):
                setup()
                train(x, y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            MODELS = {}


            def setup():
                global MODELS
                MODELS = {"linear": tf.keras.Sequential([tf.keras.layers.Dense(1)])}


            def train(x, y):
                for name, model in MODELS.items():
                    model.compile(optimizer="adam", loss="mse")
                    model.fit(x, y, epochs=2)


            def main(x, y):
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    setup()
                    train(x, y)
            """,
        ),
        # A function that returns the literal builds the models for its caller: no scope there.
        Example(
            """\
            import tensorflow as tf


            def build_all():
                models = {"tiny": tf.keras.Sequential([tf.keras.layers.Dense(1)]),
                          "small": tf.keras.Sequential([tf.keras.layers.Dense(8)])}
                return models
            """,
            reported=False,
        ),
        # A function that fills a list of models and returns it builds them for its caller: no
        # scope of its own there (the runs in the caller, out of any scope, are left to IPU190).
        Example(
            """\
            import tensorflow as tf


            def build_all(widths):
                models = []
                for width in widths:
                    models.append(tf.keras.Sequential([tf.keras.layers.Dense(width)]))
                return models
            """,
            reported=False,
        ),
        # Its caller, which trains the models of the list, and of a dict another builder fills by
        # key, gets the scope: they are made and run in it.
        Example(
            """\
            import tensorflow as tf


            def build_all(widths):
                models = []
                for width in widths:
                    models.append(tf.keras.Sequential([tf.keras.layers.Dense(width)]))
                return models


            def build_pair():
                pair = {}
                for name in ("small", "large"):
                    net = tf.keras.Sequential([tf.keras.layers.Dense(4)])
                    pair[name] = net
                return pair


            def main(x, y):
                for model in build_all([4, 8]):
                    model.compile(loss="mse")
                    model.fit(x, y, batch_size=8)
                pair = build_pair()
                pair["small"].compile(loss="mse")
                pair["small"].fit(x, y, batch_size=8)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def build_all(widths):
                models = []
                for width in widths:
                    models.append(tf.keras.Sequential([tf.keras.layers.Dense(width)]))
                return models


            def build_pair():
                pair = {}
                for name in ("small", "large"):
                    net = tf.keras.Sequential([tf.keras.layers.Dense(4)])
                    pair[name] = net
                return pair


            def main(x, y):
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    for model in build_all([4, 8]):
                        model.compile(loss="mse")
                        model.fit(x, y, batch_size=8)
                    pair = build_pair()
                    pair["small"].compile(loss="mse")
                    pair["small"].fit(x, y, batch_size=8)
            """,
        ),
        # A function that trains the models it puts in a list and returns it: its caller keeps
        # them and predicts with them, so it runs in the caller's scope, with those predictions.
        Example(
            """\
            import tensorflow as tf


            def train_folds(x, y, folds):
                trained = []
                for fold in range(folds):
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(loss="mse")
                    model.fit(x, y, batch_size=8)
                    trained.append(model)
                return trained


            def main(x, y):
                fold_models = train_folds(x, y, 3)
                print([m.predict(x, batch_size=8) for m in fold_models])
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def train_folds(x, y, folds):
                trained = []
                for fold in range(folds):
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(loss="mse")
                    model.fit(x, y, batch_size=8)
                    trained.append(model)
                return trained


            def main(x, y):
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    fold_models = train_folds(x, y, 3)
                    print([m.predict(x, batch_size=8) for m in fold_models])
            """,
        ),
        # The same with builders the porter cannot see (a table of them): the item trained with
        # Keras' arguments is a model, and so are the models taken out of the dict to predict.
        Example(
            """\
            import tensorflow as tf

            models = {}
            for name, make in BUILDERS.items():
                models[name] = make()
                models[name].fit(x, y, epochs=2)
            scores = {name: model.predict(x_test, batch_size=8) for name, model in models.items()}
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            models = {}
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                for name, make in BUILDERS.items():
                    models[name] = make()
                    models[name].fit(x, y, epochs=2)
                scores = {name: model.predict(x_test, batch_size=8) for name, model in models.items()}
            """,
        ),
        # The strategy made again under its name for a second model (a notebook's later cell): the
        # statement goes, as a second strategy made in the first one's scope would mix the two.
        Example(
            """\
            import tensorflow as tf

            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile("sgd", "mse")
            model.fit(x, y, epochs=2)

            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                wider = tf.keras.Sequential([tf.keras.layers.Dense(8), tf.keras.layers.Dense(1)])
                wider.compile("sgd", "mse")
            wider.fit(x, y, epochs=2)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile("sgd", "mse")
                model.fit(x, y, epochs=2)
                wider = tf.keras.Sequential([tf.keras.layers.Dense(8), tf.keras.layers.Dense(1)])
                wider.compile("sgd", "mse")
                wider.fit(x, y, epochs=2)
            """,
        ),
        # A layer's `__init__` makes a sub-model (`block = make_block(units)`): it runs where the
        # layer is made, in the scope of the code that builds the model, not in a scope of its own.
        Example(
            """\
            from tensorflow import keras


            def make_block(units):
                return keras.Sequential([keras.layers.Dense(units, activation="relu"), keras.layers.Dense(units)])


            class Residual(keras.layers.Layer):
                def __init__(self, units):
                    super().__init__()
                    block = make_block(units)
                    self.block = block

                def call(self, inputs):
                    return inputs + self.block(inputs)


            def main(x, y):
                inputs = keras.Input(shape=(8,))
                model = keras.Model(inputs, keras.layers.Dense(1)(Residual(8)(inputs)))
                model.compile(optimizer="adam", loss="mse")
                model.fit(x, y, batch_size=32, epochs=2)
            """,
            """\
            from tensorflow import keras
            from tensorflow.python import ipu


            def make_block(units):
                return keras.Sequential([keras.layers.Dense(units, activation="relu"), keras.layers.Dense(units)])


            class Residual(keras.layers.Layer):
                def __init__(self, units):
                    super().__init__()
                    block = make_block(units)
                    self.block = block

                def call(self, inputs):
                    return inputs + self.block(inputs)


            def main(x, y):
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    inputs = keras.Input(shape=(8,))
                    model = keras.Model(inputs, keras.layers.Dense(1)(Residual(8)(inputs)))
                    model.compile(optimizer="adam", loss="mse")
                    model.fit(x, y, batch_size=32, epochs=2)
            """,
        ),
        # One function makes the model into a `global` name, another trains it, and `main` calls
        # both: the model is made where `main` calls the first, so the scope holds both calls.
        Example(
            """\
import tensorflow as tf

model = None


def build():
    global model
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")


def train(x, y):
    model.fit(x, y, batch_size=16)


def main(x, y):
    build()
    train(x, y)
""",
            """\
import tensorflow as tf
from tensorflow.python import ipu

model = None


def build():
    global model
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")


def train(x, y):
    model.fit(x, y, batch_size=16)


def main(x, y):
    strategy = ipu.ipu_strategy.IPUStrategy()
    with strategy.scope():
        build()
        train(x, y)
""",
        ),
        # A function of the file makes the strategy, and the program only enters its scope inline:
        # the port makes its IPU strategy by calling that function, and the scope holds the fit.
        Example(
            """\
import tensorflow as tf


def get_strategy():
    if tf.config.list_logical_devices("GPU"):
        return tf.distribute.MirroredStrategy()
    return tf.distribute.OneDeviceStrategy("/cpu:0")


with get_strategy().scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
model.fit(x, y, batch_size=16)
""",
            """\
import tensorflow as tf
from tensorflow.python import ipu


def get_strategy():
    if tf.config.list_logical_devices("GPU"):
        return ipu.ipu_strategy.IPUStrategy()
    return ipu.ipu_strategy.IPUStrategy()


strategy = get_strategy()
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, y, batch_size=16)
""",
        ),
        # Each function enters the scope of a strategy it gets from a function of the file, and
        # both are called from the module: they run in the one IPU strategy's scope made there (a
        # scope of their own would configure the IPU again, and nest a second strategy).
        Example(
            """\
import tensorflow as tf


def make_strategy():
    return tf.distribute.MirroredStrategy()


def train(x, y):
    strategy = make_strategy()
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse")
        model.fit(x, y, batch_size=16)
    return model


def report(model, x, y):
    strategy = make_strategy()
    with strategy.scope():
        print(model.evaluate(x, y, batch_size=16))


report(train(x, y), x, y)
""",
            """\
import tensorflow as tf
from tensorflow.python import ipu


def make_strategy():
    return ipu.ipu_strategy.IPUStrategy()


def train(x, y):
    strategy = make_strategy()
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, y, batch_size=16)
    return model


def report(model, x, y):
    strategy = make_strategy()
    print(model.evaluate(x, y, batch_size=16))


strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    report(train(x, y), x, y)
""",
        ),
        # Models made and trained in a loop, the best kept and evaluated and saved after it: the
        # scope starts at the loop and holds what runs the kept model.
        Example(
            """\
import tensorflow as tf

best, best_loss = None, float("inf")
for width in (8, 16):
    model = tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    loss = model.fit(x, y, batch_size=16).history["loss"][-1]
    if loss < best_loss:
        best, best_loss = model, loss
print(best.evaluate(x, y, batch_size=16))
best.save("best.keras")
""",
            """\
import tensorflow as tf
from tensorflow.python import ipu

best, best_loss = None, float("inf")
strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    for width in (8, 16):
        model = tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse")
        loss = model.fit(x, y, batch_size=16).history["loss"][-1]
        if loss < best_loss:
            best, best_loss = model, loss
    print(best.evaluate(x, y, batch_size=16))
    best.save("best.keras")
""",
        ),
        # The members of an ensemble, made in a list comprehension by a helper and run in another
        # one: the statements that make and run them go in the scope.
        Example(
            """\
import tensorflow as tf


def load_members(paths):
    return [tf.keras.models.load_model(path) for path in paths]


def vote(members, rows):
    return sum(member.predict(rows, batch_size=16) for member in members) / len(members)


members = load_members(paths)
scores = vote(members, rows)
""",
            """\
import tensorflow as tf
from tensorflow.python import ipu


def load_members(paths):
    return [tf.keras.models.load_model(path) for path in paths]


def vote(members, rows):
    return sum(member.predict(rows, batch_size=16) for member in members) / len(members)


strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    members = load_members(paths)
    scores = vote(members, rows)
""",
        ),
        # An inference helper that calls the model itself (not `predict`): the model runs where the
        # helper is called, which goes in the scope too.
        Example(
            """\
import tensorflow as tf

encoder = tf.keras.models.load_model("encoder.keras")


def embed(rows):
    return encoder(rows, training=False).numpy()


codes = embed(rows)
""",
            """\
import tensorflow as tf
from tensorflow.python import ipu

strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    encoder = tf.keras.models.load_model("encoder.keras")


def embed(rows):
    return encoder(rows, training=False).numpy()


with strategy.scope():
    codes = embed(rows)
""",
        ),
        # A model from an imported builder under an existing strategy scope: the scope is kept
        # (as the IPU strategy's) and grows to the training call.
        Example(
            """\
import tensorflow as tf
from zoo import make_net

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    net = make_net()
    net.compile(optimizer="adam", loss="mse")
net.fit(x, y, batch_size=16)
""",
            """\
import tensorflow as tf
from zoo import make_net
from tensorflow.python import ipu

strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    net = make_net()
    net.compile(optimizer="adam", loss="mse")
    net.fit(x, y, batch_size=16)
""",
        ),
        # A module of builders that never calls them (the training script imports it): each model
        # is made in its importer's scope, which that script's port opens around the call; a scope
        # and an IPU configuration here would nest a second strategy in it.
        Example(
            """\
import tensorflow as tf


def build_regressor(units):
    model = tf.keras.Sequential([tf.keras.layers.Dense(units, activation="relu"), tf.keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    return model


def build_classifier(classes):
    return tf.keras.Sequential([tf.keras.layers.Dense(classes, activation="softmax")])
""",
            reported=False,
        ),
        # A device chosen once (the GPU when there is one) is a GPU scope all the same; and a
        # constructor picked once by name (`Net = ...ResNet50`) makes a model like the name it holds.
        Example(
            """\
import tensorflow as tf

Net = tf.keras.applications.ResNet50
device = "/gpu:0" if tf.config.list_physical_devices("GPU") else "/cpu:0"
with tf.device(device):
    net = Net(weights=None, classes=10)
    net.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
net.fit(images, labels, batch_size=32)
""",
            """\
import tensorflow as tf
from tensorflow.python import ipu

Net = tf.keras.applications.ResNet50
device = "/gpu:0" if tf.config.list_physical_devices("GPU") else "/cpu:0"
strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    net = Net(weights=None, classes=10)
    net.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    net.fit(images, labels, batch_size=32)
""",
        ),
        # Colab's check keeps the name of the GPU TensorFlow found, and training runs on it.
        Example(
            """\
import tensorflow as tf

device_name = tf.test.gpu_device_name()
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
with tf.device(device_name):
    model.fit(features, targets, epochs=2)
""",
            """\
import tensorflow as tf
from tensorflow.python import ipu

device_name = tf.test.gpu_device_name()
strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(features, targets, epochs=2)
""",
        ),
        # Any callable whose result is compiled is a model: keras.applications here.
        Example(
            """\
import tensorflow as tf

net = tf.keras.applications.ResNet50(weights=None, classes=10)
net.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
net.fit(images, labels, batch_size=32)
""",
            """\
import tensorflow as tf
from tensorflow.python import ipu

strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    net = tf.keras.applications.ResNet50(weights=None, classes=10)
    net.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    net.fit(images, labels, batch_size=32)
""",
        ),
        # A TF Hub layer made before the model it is part of: its weights are the model's, made in
        # the scope too.
        Example(
            """\
import tensorflow as tf
import tensorflow_hub as hub

encoder = hub.KerasLayer(ENCODER_URL, trainable=True)
head = tf.keras.layers.Dense(5)
net = tf.keras.Sequential([encoder, head])
net.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
net.fit(train_batches, epochs=3)
""",
            """\
import tensorflow as tf
import tensorflow_hub as hub
from tensorflow.python import ipu

strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    encoder = hub.KerasLayer(ENCODER_URL, trainable=True)
    head = tf.keras.layers.Dense(5)
    net = tf.keras.Sequential([encoder, head])
    net.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    net.fit(train_batches, epochs=3)
""",
        ),
        # An imported builder that compiles its model: the file only trains it, with arguments
        # only Keras takes, so what the builder returns is a model, made and trained in the scope.
        Example(
            """\
import tensorflow as tf
from zoo import make_net


def main(args, x, y):
    net = make_net(args.arch)
    net.fit(x, y, batch_size=16, epochs=args.epochs)
    net.evaluate(x, y, batch_size=16)
""",
            """\
import tensorflow as tf
from zoo import make_net
from tensorflow.python import ipu


def main(args, x, y):
    strategy = ipu.ipu_strategy.IPUStrategy()
    with strategy.scope():
        net = make_net(args.arch)
        net.fit(x, y, batch_size=16, epochs=args.epochs)
        net.evaluate(x, y, batch_size=16)
""",
        ),
        # scikit-learn's `fit(X, y)` takes no argument only Keras takes: no model, no edit.
        Example(
            """\
import tensorflow as tf
from sklearn.linear_model import LogisticRegression


def baseline(features, labels):
    classifier = LogisticRegression(max_iter=200)
    classifier.fit(features, labels)
    return classifier.score(features, labels)
""",
            reported=False,
        ),
        # A model split over two GPUs by hand runs whole on one IPU: the scope of the second GPU
        # is reported, with how to pipeline the model if it does not fit.
        Example(
            """\
            import tensorflow as tf
            from tensorflow import keras


            def build():
                inputs = keras.Input(shape=(8,))
                with tf.device("/gpu:0"):
                    x = keras.layers.Dense(16)(inputs)
                with tf.device("/gpu:1"):
                    outputs = keras.layers.Dense(1)(x)
                return keras.Model(inputs, outputs)


            model = build()
            model.compile(loss="mse")
            """,
            """\
            import tensorflow as tf
            from tensorflow import keras
            from tensorflow.python import ipu


            def build():
                inputs = keras.Input(shape=(8,))
                x = keras.layers.Dense(16)(inputs)
                outputs = keras.layers.Dense(1)(x)
                return keras.Model(inputs, outputs)


            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = build()
                model.compile(loss="mse")
            """,
        ),
        # A GPU scope around a model the porter cannot see is still the IPU strategy's scope.
        Example(
            """\
import tensorflow as tf
from zoo import restore

with tf.device("/GPU:0"):
    net = restore("checkpoints/best")
run_experiment(net)
""",
            """\
import tensorflow as tf
from zoo import restore
from tensorflow.python import ipu

strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    net = restore("checkpoints/best")
run_experiment(net)
""",
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse")
            model.fit(x, y, epochs=2)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.compile(loss="mse")
                model.fit(x, y, epochs=2)
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def main():
                data = load()
                with tf.device("/GPU:0"):
                    model = tf.keras.models.load_model("net.h5")
                    model.evaluate(data)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def main():
                data = load()
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    model = tf.keras.models.load_model("net.h5")
                    model.evaluate(data)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            mirrored = tf.distribute.MirroredStrategy()
            with mirrored.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(loss="mse")
            model.fit(x, y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            mirrored = ipu.ipu_strategy.IPUStrategy()
            with mirrored.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(loss="mse")
                model.fit(x, y)
            """,
        ),
        # ... also through a local the function returns, whichever branch makes it.
        Example(
            """\
            import tensorflow as tf


            def get_strategy():
                if tf.config.list_physical_devices("GPU"):
                    strategy = tf.distribute.MirroredStrategy()
                else:
                    strategy = tf.distribute.get_strategy()
                return strategy


            STRATEGY = get_strategy()
            with STRATEGY.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(loss="mse")
            model.fit(x, y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def get_strategy():
                if tf.config.list_physical_devices("GPU"):
                    strategy = ipu.ipu_strategy.IPUStrategy()
                else:
                    strategy = ipu.ipu_strategy.IPUStrategy()
                return strategy


            STRATEGY = get_strategy()
            with STRATEGY.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(loss="mse")
                model.fit(x, y)
            """,
        ),
        # A training loop over a dataset, calling a step defined beside it: the on-device loop of the
        # guides, in the scope with the step (only a loop that trains nothing iterates on the host).
        Example(
            """\
            import tensorflow as tf


            def main():
                dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(32, drop_remainder=True)
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                optimizer = tf.keras.optimizers.SGD(0.1)

                def step(x, y):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean((model(x) - y) ** 2)
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))

                for x, y in dataset:
                    step(x, y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def main():
                dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(32, drop_remainder=True)
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    optimizer = tf.keras.optimizers.SGD(0.1)

                    def step(x, y):
                        with tf.GradientTape() as tape:
                            loss = tf.reduce_mean((model(x) - y) ** 2)
                        grads = tape.gradient(loss, model.trainable_variables)
                        optimizer.apply_gradients(zip(grads, model.trainable_variables))

                    for x, y in dataset:
                        step(x, y)
            """,
        ),
        # The optimizer and a metric the step updates are made at module level, the model in
        # `main()`: their variables belong in the scope too, so the module's code that makes them
        # and calls `main()` runs in it (the step and `main` stay as they are).
        Example(_MODULE_OBJECTS + _MAIN_LOOP + 'if __name__ == "__main__":\n    main()\n',
                "import tensorflow as tf\nfrom tensorflow.python import ipu\n\nstrategy = ipu.ipu_strategy.IPUStrategy()\n"
                "with strategy.scope():\n" + indent(_MODULE_OBJECTS.partition("\n\n")[2], "    ").replace("\n    \n", "\n\n")
                + _MAIN_LOOP + 'with strategy.scope():\n    if __name__ == "__main__":\n        main()\n'),
        # Mixed precision's loss-scale optimizer around one of TensorFlow Addons, made at module level
        # for a step that `main()` runs: made in the scope like a Keras optimizer.
        Example("import tensorflow as tf\nimport tensorflow_addons as tfa\n\n" + _SCALED_OPTIMIZER + _SCALED_STEP
                + _SCALED_MAIN + 'if __name__ == "__main__":\n    main()\n',
                "import tensorflow as tf\nimport tensorflow_addons as tfa\nfrom tensorflow.python import ipu\n\n"
                "strategy = ipu.ipu_strategy.IPUStrategy()\nwith strategy.scope():\n"
                + indent(_SCALED_OPTIMIZER + _SCALED_STEP, "    ") + _SCALED_MAIN
                + 'with strategy.scope():\n    if __name__ == "__main__":\n        main()\n'),
        # The loss-scale optimizer of mixed precision made before the model it compiles: its loss
        # scale is a variable made with it, so it is made in the scope too.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras import mixed_precision


            def main():
                mixed_precision.set_global_policy("mixed_float16")
                optimizer = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))
                model = tf.keras.Sequential([tf.keras.layers.Dense(1, dtype="float32")])
                model.compile(optimizer=optimizer, loss="mse")
                model.fit(x, y, batch_size=32)
            """,
            """\
            import tensorflow as tf
            from tensorflow.keras import mixed_precision
            from tensorflow.python import ipu


            def main():
                mixed_precision.set_global_policy("mixed_float16")
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    optimizer = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1, dtype="float32")])
                    model.compile(optimizer=optimizer, loss="mse")
                    model.fit(x, y, batch_size=32)
            """,
        ),
        # A function that trains a model, run once for each width by a comprehension (or `map`):
        # the scope goes around the comprehension, so the IPU is configured and the strategy made once.
        Example(
            """\
            import tensorflow as tf


            def train(width):
                model = tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)])
                model.compile(optimizer="sgd", loss="mse")
                return model.fit(x, y, batch_size=32).history["loss"][-1]


            losses = [train(width) for width in (8, 16, 32)]
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def train(width):
                model = tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)])
                model.compile(optimizer="sgd", loss="mse")
                return model.fit(x, y, batch_size=32).history["loss"][-1]


            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                losses = [train(width) for width in (8, 16, 32)]
            """,
        ),
        # The model's layers come before the strategy: the port's strategy is made before them, and
        # the script's own, which would be a second one, is left out.
        Example(
            """\
            import tensorflow as tf

            inputs = tf.keras.Input((4,))
            outputs = tf.keras.layers.Dense(1)(inputs)
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                model = tf.keras.Model(inputs, outputs)
                model.compile(optimizer="sgd", loss="mse")
            model.fit(x, y, batch_size=32)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                inputs = tf.keras.Input((4,))
                outputs = tf.keras.layers.Dense(1)(inputs)
                model = tf.keras.Model(inputs, outputs)
                model.compile(optimizer="sgd", loss="mse")
                model.fit(x, y, batch_size=32)
            """,
        ),
        # Two models made in one assignment (a GAN's) are models all the same.
        Example(
            """\
            import tensorflow as tf

            gen, disc = tf.keras.Sequential([tf.keras.layers.Dense(2)]), tf.keras.Sequential([tf.keras.layers.Dense(1)])
            opt = tf.keras.optimizers.Adam()
            ds = tf.data.Dataset.from_tensor_slices(tf.random.normal((640, 2))).batch(64)


            @tf.function
            def step(x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(disc(x)) - tf.reduce_mean(disc(gen(x)))
                opt.apply_gradients(zip(tape.gradient(loss, disc.trainable_variables), disc.trainable_variables))


            for x in ds:
                step(x)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                gen, disc = tf.keras.Sequential([tf.keras.layers.Dense(2)]), tf.keras.Sequential([tf.keras.layers.Dense(1)])
                opt = tf.keras.optimizers.Adam()
                ds = tf.data.Dataset.from_tensor_slices(tf.random.normal((640, 2))).batch(64)


                @tf.function
                def step(x):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(disc(x)) - tf.reduce_mean(disc(gen(x)))
                    opt.apply_gradients(zip(tape.gradient(loss, disc.trainable_variables), disc.trainable_variables))


                for x in ds:
                    step(x)
            """,
        ),
        # Trained twice from `__main__`: one scope around both calls (a keyword named like the
        # function, `train=True`, hands nothing on), in the guard, so that importing the port
        # makes no strategy.
        Example(
            """\
            import tensorflow as tf


            def train(width, epochs):
                images, labels = load_split(train=True)
                model = tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(10)])
                model.compile(optimizer="sgd", loss="mse")
                model.fit(images, labels, batch_size=32, epochs=epochs)


            if __name__ == "__main__":
                train(64, 2)
                train(128, 4)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def train(width, epochs):
                images, labels = load_split(train=True)
                model = tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(10)])
                model.compile(optimizer="sgd", loss="mse")
                model.fit(images, labels, batch_size=32, epochs=epochs)


            if __name__ == "__main__":
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    train(64, 2)
                    train(128, 4)
            """,
        ),
        # A `train_step` override in a subclass of a subclass of `keras.Model`: the Keras extensions off.
        Example(
            """\
            import tensorflow as tf


            class Base(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.dense = tf.keras.layers.Dense(1)

                def call(self, x):
                    return self.dense(x)


            class Regressor(Base):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.compiled_loss(y, self(x, training=True))
                    self.optimizer.minimize(loss, self.trainable_variables, tape=tape)
                    return {"loss": loss}


            model = Regressor()
            model.compile(optimizer="adam", loss="mse")
            model.fit(x, y, batch_size=32)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            class Base(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.dense = tf.keras.layers.Dense(1)

                def call(self, x):
                    return self.dense(x)


            class Regressor(Base):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.compiled_loss(y, self(x, training=True))
                    self.optimizer.minimize(loss, self.trainable_variables, tape=tape)
                    return {"loss": loss}


            strategy = ipu.ipu_strategy.IPUStrategy(enable_keras_extensions=False)
            with strategy.scope():
                model = Regressor()
                model.compile(optimizer="adam", loss="mse")
                model.fit(x, y, batch_size=32)
            """,
        ),
        # A model of a class another module defines, compiled with arguments Keras' `compile` does not
        # take: its class overrides `compile` for a `train_step` of its own, so the extensions are off.
        Example(
            """\
            from tensorflow import keras

            from gans import PairGAN

            gan = PairGAN(latent_dim=16)
            gan.compile(d_optimizer=keras.optimizers.Adam(), g_optimizer=keras.optimizers.Adam())
            gan.fit(images, batch_size=32)
            """,
            """\
            from tensorflow import keras

            from gans import PairGAN
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy(enable_keras_extensions=False)
            with strategy.scope():
                gan = PairGAN(latent_dim=16)
                gan.compile(d_optimizer=keras.optimizers.Adam(), g_optimizer=keras.optimizers.Adam())
                gan.fit(images, batch_size=32)
            """,
        ),
        # A strategy made in the `with` itself: the block enters the IPU strategy the port makes
        # (a second strategy entered inside the first would be refused).
        Example(
            """\
            import tensorflow as tf

            with tf.distribute.MirroredStrategy().scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(loss="mse")
            model.fit(x, y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                with strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(loss="mse")
                model.fit(x, y)
            """,
        ),
        # A strategy a function of the file returns: the variable given its result is the strategy.
        Example(
            """\
            import tensorflow as tf


            def get_strategy():
                return tf.distribute.MirroredStrategy()


            strategy = get_strategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(loss="mse")
            model.fit(x, y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def get_strategy():
                return ipu.ipu_strategy.IPUStrategy()


            strategy = get_strategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(loss="mse")
                model.fit(x, y)
            """,
        ),
        Example(
            """\
            from tensorflow import keras


            def main():
                data = load()
                inputs = keras.Input(shape=(8,))
                outputs = keras.layers.Dense(1)(inputs)
                model = keras.Model(inputs, outputs)
                model.fit(data)
            """,
            """\
            from tensorflow import keras
            from tensorflow.python import ipu


            def main():
                data = load()
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    inputs = keras.Input(shape=(8,))
                    outputs = keras.layers.Dense(1)(inputs)
                    model = keras.Model(inputs, outputs)
                    model.fit(data)
            """,
        ),
        # The model created as the argument of the function that trains it: the scope goes
        # around the call that both creates and trains it.
        Example(
            """\
            import tensorflow as tf


            def build():
                return tf.keras.Sequential([tf.keras.layers.Dense(1)])


            def train(model, x, y):
                model.compile(optimizer="sgd", loss="mse")
                model.fit(x, y, epochs=2)


            def main():
                x, y = load()
                train(build(), x, y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def build():
                return tf.keras.Sequential([tf.keras.layers.Dense(1)])


            def train(model, x, y):
                model.compile(optimizer="sgd", loss="mse")
                model.fit(x, y, epochs=2)


            def main():
                x, y = load()
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    train(build(), x, y)
            """,
        ),
        # The same with a function that trains the model it is given in a loop of custom steps.
        Example(
            """\
            import tensorflow as tf


            def build():
                return tf.keras.Sequential([tf.keras.layers.Dense(1)])


            def train(model, dataset):
                optimizer = tf.keras.optimizers.SGD(0.1)

                @tf.function
                def step(x, y):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(model(x) - y))
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))

                for x, y in dataset:
                    step(x, y)


            def main():
                train(build(), load())
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def build():
                return tf.keras.Sequential([tf.keras.layers.Dense(1)])


            def train(model, dataset):
                optimizer = tf.keras.optimizers.SGD(0.1)

                @tf.function
                def step(x, y):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(model(x) - y))
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))

                for x, y in dataset:
                    step(x, y)


            def main():
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    train(build(), load())
            """,
        ),
        # A device scope in a method of the model runs where the model is called: it goes.
        Example(
            """\
            import tensorflow as tf


            class TwoTower(tf.keras.Model):
                def call(self, inputs):
                    with tf.device("/gpu:1"):
                        return self.head(self.body(inputs))


            model = TwoTower()
            model.compile(optimizer="adam", loss="mse")
            model.fit(x, y, epochs=2)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            class TwoTower(tf.keras.Model):
                def call(self, inputs):
                    return self.head(self.body(inputs))


            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = TwoTower()
                model.compile(optimizer="adam", loss="mse")
                model.fit(x, y, epochs=2)
            """,
        ),
        # A model chosen on a condition: one scope around the choice and the training.
        Example(
            """\
            import tensorflow as tf
            from zoo import resnet

            if args.arch == "resnet":
                model = resnet(classes=10)
            else:
                model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
            model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
            model.fit(images, labels, epochs=2)
            """,
            """\
            import tensorflow as tf
            from zoo import resnet
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                if args.arch == "resnet":
                    model = resnet(classes=10)
                else:
                    model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
                model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
                model.fit(images, labels, epochs=2)
            """,
        ),
        # A model run after the statements that train it, through an alias and a function called
        # later: the scope grows to take in the call that runs it (fit/evaluate/predict run in it).
        Example(
            """\
            import tensorflow as tf

            autoencoder = tf.keras.Sequential([tf.keras.layers.Dense(4, name="code"), tf.keras.layers.Dense(8)])
            autoencoder.compile(optimizer="adam", loss="mse")
            autoencoder.fit(x, x, epochs=2)
            encoder = autoencoder.get_layer("code")


            def embed(samples):
                return encoder.predict(samples)


            codes = embed(x)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                autoencoder = tf.keras.Sequential([tf.keras.layers.Dense(4, name="code"), tf.keras.layers.Dense(8)])
                autoencoder.compile(optimizer="adam", loss="mse")
                autoencoder.fit(x, x, epochs=2)
                encoder = autoencoder.get_layer("code")


            def embed(samples):
                return encoder.predict(samples)


            with strategy.scope():
                codes = embed(x)
            """,
        ),
        # A function that trains a model and returns it to a caller that runs it again: the function
        # runs in its caller's scope, which takes in both.
        Example(
            """\
            import tensorflow as tf


            def run_experiment(x, y):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer="sgd", loss="mse")
                history = model.fit(x, y, epochs=2)
                return history, model


            _, model = run_experiment(x, y)
            print(model.predict(x_new))
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def run_experiment(x, y):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer="sgd", loss="mse")
                history = model.fit(x, y, epochs=2)
                return history, model


            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                _, model = run_experiment(x, y)
                print(model.predict(x_new))
            """,
        ),
        # A function that trains its model in a custom loop and returns it: no builder (it runs the
        # model), so where nothing keeps its result, its own model code gets the scope.
        Example(
            """\
            import tensorflow as tf


            def train(dataset):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                optimizer = tf.keras.optimizers.SGD(0.1)
                for x, y in dataset:
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean((model(x) - y) ** 2)
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return model


            train(dataset)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def train(dataset):
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    optimizer = tf.keras.optimizers.SGD(0.1)
                    for x, y in dataset:
                        with tf.GradientTape() as tape:
                            loss = tf.reduce_mean((model(x) - y) ** 2)
                        grads = tape.gradient(loss, model.trainable_variables)
                        optimizer.apply_gradients(zip(grads, model.trainable_variables))
                    return model


            train(dataset)
            """,
        ),
        # A builder handed to a Keras Tuner, which builds and trains models with it after clearing
        # the session (which would end a scope around it): the tuner builds them in the IPU
        # strategy's scope itself, and its `search` and `get_best_models` run out of the scope, with
        # what only reads the tuner's results (shown as they were in a notebook).
        Example(
            """\
            import keras_tuner
            import tensorflow as tf


            def build_model(hp):
                model = tf.keras.Sequential([tf.keras.layers.Dense(hp.Int("units", 8, 64)), tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse")
                return model


            tuner = keras_tuner.RandomSearch(build_model, objective="val_loss", max_trials=4)
            tuner.search(x, y, epochs=2, validation_data=(x_val, y_val))
            best_hp = tuner.get_best_hyperparameters(1)[0]
            print("best units", best_hp.get("units"))
            best = tuner.get_best_models(num_models=1)[0]
            best.evaluate(x_val, y_val)
            """,
            """\
            import keras_tuner
            import tensorflow as tf
            from tensorflow.python import ipu


            def build_model(hp):
                model = tf.keras.Sequential([tf.keras.layers.Dense(hp.Int("units", 8, 64)), tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse")
                return model


            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                tuner = keras_tuner.RandomSearch(build_model, objective="val_loss", max_trials=4, distribution_strategy=strategy)
            tuner.search(x, y, epochs=2, validation_data=(x_val, y_val))
            best_hp = tuner.get_best_hyperparameters(1)[0]
            print("best units", best_hp.get("units"))
            best = tuner.get_best_models(num_models=1)[0]
            with strategy.scope():
                best.evaluate(x_val, y_val)
            """,
        ),
        # A tuner given a GPU strategy made in its own call (the distributed-tuning recipe) would
        # build and train each trial's model in that strategy's scope, not on the IPU: it gets the
        # IPU strategy instead.
        Example(
            """\
            import keras_tuner
            import tensorflow as tf


            def build_model(hp):
                model = tf.keras.Sequential([tf.keras.layers.Dense(hp.Int("units", 8, 64)), tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse")
                return model


            tuner = keras_tuner.RandomSearch(build_model, objective="val_loss", max_trials=4,
                                             distribution_strategy=tf.distribute.MirroredStrategy())
            tuner.search(x, y, epochs=2, validation_data=(x_val, y_val))
            """,
            """\
            import keras_tuner
            import tensorflow as tf
            from tensorflow.python import ipu


            def build_model(hp):
                model = tf.keras.Sequential([tf.keras.layers.Dense(hp.Int("units", 8, 64)), tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse")
                return model


            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                tuner = keras_tuner.RandomSearch(build_model, objective="val_loss", max_trials=4,
                                                 distribution_strategy=strategy)
            tuner.search(x, y, epochs=2, validation_data=(x_val, y_val))
            """,
        ),
        # A tuner made by a function of the file: the tuner it returns gets the IPU strategy too.
        Example(
            """\
            import keras_tuner
            import tensorflow as tf


            def build_model(hp):
                model = tf.keras.Sequential([tf.keras.layers.Dense(hp.Int("units", 8, 64)), tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse")
                return model


            def make_tuner(trials):
                return keras_tuner.BayesianOptimization(build_model, objective="val_loss", max_trials=trials)


            tuner = make_tuner(4)
            tuner.search(x, y, epochs=2, validation_data=(x_val, y_val))
            """,
            """\
            import keras_tuner
            import tensorflow as tf
            from tensorflow.python import ipu


            def build_model(hp):
                model = tf.keras.Sequential([tf.keras.layers.Dense(hp.Int("units", 8, 64)), tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse")
                return model


            def make_tuner(trials):
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    return keras_tuner.BayesianOptimization(build_model, objective="val_loss", max_trials=trials, distribution_strategy=strategy)


            tuner = make_tuner(4)
            tuner.search(x, y, epochs=2, validation_data=(x_val, y_val))
            """,
        ),
        # Builders kept in a dict and called through it: each runs in the scope of the code that
        # calls it, never with a strategy of its own inside that scope.
        Example(
            """\
            import tensorflow as tf


            def build_mlp(width):
                model = tf.keras.Sequential()
                model.add(tf.keras.layers.Dense(width, activation="relu"))
                model.add(tf.keras.layers.Dense(1))
                return model


            def build_wide(width):
                return tf.keras.Sequential([tf.keras.layers.Dense(4 * width), tf.keras.layers.Dense(1)])


            MODELS = {"mlp": build_mlp, "wide": build_wide}


            def train(arch):
                model = MODELS[arch](16)
                model.compile(optimizer="adam", loss="mse")
                model.fit(x, y, batch_size=32)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def build_mlp(width):
                model = tf.keras.Sequential()
                model.add(tf.keras.layers.Dense(width, activation="relu"))
                model.add(tf.keras.layers.Dense(1))
                return model


            def build_wide(width):
                return tf.keras.Sequential([tf.keras.layers.Dense(4 * width), tf.keras.layers.Dense(1)])


            MODELS = {"mlp": build_mlp, "wide": build_wide}


            def train(arch):
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    model = MODELS[arch](16)
                    model.compile(optimizer="adam", loss="mse")
                    model.fit(x, y, batch_size=32)
            """,
        ),
        # A builder a decorator of the file registers is called through the registry, like one
        # kept in a dict.
        Example(
            """\
            import tensorflow as tf

            REGISTRY = {}


            def register(name):
                def add(builder):
                    REGISTRY[name] = builder
                    return builder
                return add


            @register("cnn")
            def build_cnn(classes):
                inputs = tf.keras.Input((28, 28, 1))
                outputs = tf.keras.layers.Dense(classes)(tf.keras.layers.Flatten()(inputs))
                return tf.keras.Model(inputs, outputs)


            def main(arch):
                net = REGISTRY[arch](10)
                net.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
                net.fit(images, labels, batch_size=32)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            REGISTRY = {}


            def register(name):
                def add(builder):
                    REGISTRY[name] = builder
                    return builder
                return add


            @register("cnn")
            def build_cnn(classes):
                inputs = tf.keras.Input((28, 28, 1))
                outputs = tf.keras.layers.Dense(classes)(tf.keras.layers.Flatten()(inputs))
                return tf.keras.Model(inputs, outputs)


            def main(arch):
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    net = REGISTRY[arch](10)
                    net.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
                    net.fit(images, labels, batch_size=32)
            """,
        ),
        # A network made by a call the port does not know, then used as a layer of the model: its
        # weights are the model's, so the scope starts where it is made (the data before it stays out).
        Example(
            """\
            import tensorflow as tf
            from backbones import make_backbone

            images, labels = load_images("train")
            backbone = make_backbone("resnet50", input_shape=(64, 64, 3))
            backbone.trainable = False
            inputs = tf.keras.Input((64, 64, 3))
            features = backbone(inputs, training=False)
            outputs = tf.keras.layers.Dense(5, activation="softmax")(features)
            model = tf.keras.Model(inputs, outputs)
            model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
            model.fit(images, labels, batch_size=32)
            """,
            """\
            import tensorflow as tf
            from backbones import make_backbone
            from tensorflow.python import ipu

            images, labels = load_images("train")
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                backbone = make_backbone("resnet50", input_shape=(64, 64, 3))
                backbone.trainable = False
                inputs = tf.keras.Input((64, 64, 3))
                features = backbone(inputs, training=False)
                outputs = tf.keras.layers.Dense(5, activation="softmax")(features)
                model = tf.keras.Model(inputs, outputs)
                model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
                model.fit(images, labels, batch_size=32)
            """,
        ),
        # The same for a backbone a function of the file picks by name with `getattr`.
        Example(
            """\
            import tensorflow as tf


            def backbone_named(name):
                return getattr(tf.keras.applications, name)(include_top=False, weights=None, pooling="avg")


            backbone = backbone_named("ResNet50")
            scores = tf.keras.layers.Dense(5, activation="softmax")(backbone.output)
            model = tf.keras.Model(backbone.input, scores)
            model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
            model.fit(images, labels, batch_size=32)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def backbone_named(name):
                return getattr(tf.keras.applications, name)(include_top=False, weights=None, pooling="avg")


            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                backbone = backbone_named("ResNet50")
                scores = tf.keras.layers.Dense(5, activation="softmax")(backbone.output)
                model = tf.keras.Model(backbone.input, scores)
                model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
                model.fit(images, labels, batch_size=32)
            """,
        ),
        # A function with model code of its own, called only where the script already has a scope:
        # its call joins that scope (one strategy for the program, never one inside another).
        Example(
            """\
            import tensorflow as tf

            encoder = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            encoder.compile(optimizer="adam", loss="mse")
            encoder.fit(x, z, epochs=2)


            def train_head(features, labels):
                head = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                head.compile(optimizer="sgd", loss="mse")
                head.fit(features, labels, epochs=2)


            train_head(encoder.predict(x), y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                encoder = tf.keras.Sequential([tf.keras.layers.Dense(4)])
                encoder.compile(optimizer="adam", loss="mse")
                encoder.fit(x, z, epochs=2)


            def train_head(features, labels):
                head = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                head.compile(optimizer="sgd", loss="mse")
                head.fit(features, labels, epochs=2)


            with strategy.scope():
                train_head(encoder.predict(x), y)
            """,
        ),
        # A look at a batch on the host stays out of the scope: there, iterating a dataset makes an IPU infeed.
        Example(
            """\
            import matplotlib.pyplot as plt
            import tensorflow as tf

            train_ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(32, drop_remainder=True)
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
            model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
            for images, labels in train_ds.take(1):
                plt.imshow(images[0].numpy())
            model.fit(train_ds, epochs=2)
            """,
            """\
            import matplotlib.pyplot as plt
            import tensorflow as tf
            from tensorflow.python import ipu

            train_ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(32, drop_remainder=True)
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
                model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
            for images, labels in train_ds.take(1):
                plt.imshow(images[0].numpy())
            with strategy.scope():
                model.fit(train_ds, epochs=2)
            """,
        ),
        # So do a comprehension over a dataset, its NumPy iterator, and a helper of the file that
        # gathers a dataset's labels on the host (one that compiles a regular expression is no model).
        Example(
            """\
            import re

            import numpy as np
            import tensorflow as tf


            def labels_of(dataset):
                return np.concatenate([labels.numpy() for _, labels in dataset])


            def count_items(filenames):
                return sum(int(re.compile(r"-([0-9]+)\\.").search(name).group(1)) for name in filenames)


            val_ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(32, drop_remainder=True)
            model = tf.keras.Sequential([tf.keras.layers.Dense(3, activation="softmax")])
            model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
            model.fit(val_ds, epochs=2)
            y_true = np.concatenate([labels.numpy() for _, labels in val_ds])
            images, labels = val_ds.as_numpy_iterator().next()
            print(model.predict_on_batch(images).argmax(1), labels)
            y_seen = labels_of(val_ds)
            first = next(iter(val_ds.unbatch().batch(count_items(files))))
            y_prob = model.predict(val_ds)
            """,
            """\
            import re

            import numpy as np
            import tensorflow as tf
            from tensorflow.python import ipu


            def labels_of(dataset):
                return np.concatenate([labels.numpy() for _, labels in dataset])


            def count_items(filenames):
                return sum(int(re.compile(r"-([0-9]+)\\.").search(name).group(1)) for name in filenames)


            val_ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(32, drop_remainder=True)
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(3, activation="softmax")])
                model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
                model.fit(val_ds, epochs=2)
            y_true = np.concatenate([labels.numpy() for _, labels in val_ds])
            images, labels = val_ds.as_numpy_iterator().next()
            with strategy.scope():
                print(model.predict_on_batch(images).argmax(1), labels)
            y_seen = labels_of(val_ds)
            first = next(iter(val_ds.unbatch().batch(count_items(files))))
            with strategy.scope():
                y_prob = model.predict(val_ds)
            """,
        ),
        # A function with model code called in a loop would configure the IPU and make a strategy on
        # every call: the loop that calls it goes in the scope instead.
        Example(
            """\
            import tensorflow as tf


            def probe(features, width):
                head = tf.keras.Sequential([tf.keras.layers.Dense(width)])
                head.compile(optimizer="sgd", loss="mse")
                head.fit(features, targets, epochs=1)


            for width in (8, 16, 32):
                probe(features, width)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def probe(features, width):
                head = tf.keras.Sequential([tf.keras.layers.Dense(width)])
                head.compile(optimizer="sgd", loss="mse")
                head.fit(features, targets, epochs=1)


            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                for width in (8, 16, 32):
                    probe(features, width)
            """,
        ),
        # A layer only the tf.data pipeline runs (here a text vectorizer) is host code: its
        # variables stay on the host, out of the scope.
        Example(
            """\
            import tensorflow as tf

            vectorizer = tf.keras.layers.TextVectorization(max_tokens=5000, output_sequence_length=64)
            vectorizer.adapt(texts)
            train_ds = raw_train.map(lambda text, label: (vectorizer(text), label))
            model = tf.keras.Sequential([tf.keras.layers.Embedding(5000, 16), tf.keras.layers.Dense(1)])
            model.fit(train_ds, epochs=2)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            vectorizer = tf.keras.layers.TextVectorization(max_tokens=5000, output_sequence_length=64)
            vectorizer.adapt(texts)
            train_ds = raw_train.map(lambda text, label: (vectorizer(text), label))
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Embedding(5000, 16), tf.keras.layers.Dense(1)])
                model.fit(train_ds, epochs=2)
            """,
        ),
        # The same layer given by its name to the map (`.map(vectorize)`): host code as well.
        Example(
            """\
            import tensorflow as tf

            vectorizer = tf.keras.layers.TextVectorization(max_tokens=5000, output_sequence_length=64)
            vectorizer.adapt(texts)
            tokens = tf.data.Dataset.from_tensor_slices(texts).batch(32, drop_remainder=True).map(vectorizer)
            model = tf.keras.Sequential([tf.keras.layers.Embedding(5000, 16), tf.keras.layers.Dense(1)])
            model.fit(tf.data.Dataset.zip((tokens, labels)), epochs=2)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            vectorizer = tf.keras.layers.TextVectorization(max_tokens=5000, output_sequence_length=64)
            vectorizer.adapt(texts)
            tokens = tf.data.Dataset.from_tensor_slices(texts).batch(32, drop_remainder=True).map(vectorizer)
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Embedding(5000, 16), tf.keras.layers.Dense(1)])
                model.fit(tf.data.Dataset.zip((tokens, labels)), epochs=2)
            """,
        ),
        # The layer handed to a function of the file that gives it to its map by name: host code too.
        Example(
            """\
            import tensorflow as tf


            def tokenized(texts, text_layer):
                return tf.data.Dataset.from_tensor_slices(texts).batch(32, drop_remainder=True).map(text_layer)


            vectorizer = tf.keras.layers.TextVectorization(max_tokens=5000, output_sequence_length=64)
            vectorizer.adapt(texts)
            model = tf.keras.Sequential([tf.keras.layers.Embedding(5000, 16), tf.keras.layers.Dense(1)])
            model.fit(tf.data.Dataset.zip((tokenized(texts, vectorizer), labels)), epochs=2)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def tokenized(texts, text_layer):
                return tf.data.Dataset.from_tensor_slices(texts).batch(32, drop_remainder=True).map(text_layer)


            vectorizer = tf.keras.layers.TextVectorization(max_tokens=5000, output_sequence_length=64)
            vectorizer.adapt(texts)
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Embedding(5000, 16), tf.keras.layers.Dense(1)])
                model.fit(tf.data.Dataset.zip((tokenized(texts, vectorizer), labels)), epochs=2)
            """,
        ),
        # A loop over a dataset that runs the model after training iterates on the host: the loop
        # stays out (in the scope it would make an IPU infeed), its body goes in.
        Example(
            """\
            import tensorflow as tf

            full_size_images = tf.data.Dataset.from_tensor_slices(paths).map(load_image)
            model = tf.keras.models.load_model("denoiser.keras")
            model.fit(noisy_ds, epochs=2)
            for image in full_size_images.take(3):
                show(image, model(image[None]))
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            full_size_images = tf.data.Dataset.from_tensor_slices(paths).map(load_image)
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.models.load_model("denoiser.keras")
                model.fit(noisy_ds, epochs=2)
            for image in full_size_images.take(3):
                with strategy.scope():
                    show(image, model(image[None]))
            """,
        ),
        # The model made on the CPU and trained after the block (the template `multi_gpu_model` copied,
        # whose weights stayed on the host): the strategy places the weights, and the block goes.
        Example(
            """\
            import tensorflow as tf

            with tf.device("/cpu:0"):
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(optimizer="sgd", loss="mse")
            model.fit(x, y, batch_size=16)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.compile(optimizer="sgd", loss="mse")
                model.fit(x, y, batch_size=16)
            """,
        ),
        # A resolver used for something else stays, reported; the set-up calls on it go.
        Example(
            """\
            import tensorflow as tf

            resolver = tf.distribute.cluster_resolver.TPUClusterResolver()
            print("TPU at", resolver.master())
            tf.config.experimental_connect_to_cluster(resolver)
            strategy = tf.distribute.TPUStrategy(resolver)
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.compile(loss="mse", optimizer="adam")
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            resolver = tf.distribute.cluster_resolver.TPUClusterResolver()
            print("TPU at", resolver.master())
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.compile(loss="mse", optimizer="adam")
            """,
        ),
        # A TPU strategy is replaced too, and the TPU set-up before it goes (it fails on an IPU system).
        Example(
            """\
            import tensorflow as tf

            resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="")
            tf.tpu.experimental.initialize_tpu_system(resolver)
            strategy = tf.distribute.TPUStrategy(resolver)
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.compile(loss="mse", optimizer="adam")
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.compile(loss="mse", optimizer="adam")
            """,
        ),
        # A notebook's check that it runs on a TPU fails on an IPU system: it goes with the TPU set-up.
        Example(
            """\
            import os
            import tensorflow as tf

            assert "COLAB_TPU_ADDR" in os.environ, "Switch the runtime to a TPU"
            resolver = tf.distribute.cluster_resolver.TPUClusterResolver()
            strategy = tf.distribute.TPUStrategy(resolver)
            with strategy.scope():
                encoder = tf.keras.applications.MobileNetV2(weights=None)
            """,
            """\
            import os
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                encoder = tf.keras.applications.MobileNetV2(weights=None)
            """,
        ),
        # A strategy made only when a TPU is found, and read before the model code: on an IPU system
        # the branch does not run and the read fails; the port's own strategy comes too late for it,
        # so the read is reported.
        Example(
            """\
            import os
            import tensorflow as tf

            if "COLAB_TPU_ADDR" in os.environ:
                resolver = tf.distribute.cluster_resolver.TPUClusterResolver()
                strategy = tf.distribute.TPUStrategy(resolver)
            batch_size = 16 * strategy.num_replicas_in_sync
            with strategy.scope():
                encoder = tf.keras.applications.ResNet50(weights=None)
            """,
            """\
            import os
            import tensorflow as tf
            from tensorflow.python import ipu

            if "COLAB_TPU_ADDR" in os.environ:
                strategy = ipu.ipu_strategy.IPUStrategy()
            batch_size = 16 * strategy.num_replicas_in_sync
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                encoder = tf.keras.applications.ResNet50(weights=None)
            """,
        ),
        # An augmentation stack that only the tf.data pipeline runs is host code, not the model.
        Example(
            """\
            import tensorflow as tf

            augment = tf.keras.Sequential([tf.keras.layers.RandomFlip("horizontal")])
            train_ds = raw_train.map(lambda x, y: (augment(x), y))
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
            model.fit(train_ds, epochs=2)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            augment = tf.keras.Sequential([tf.keras.layers.RandomFlip("horizontal")])
            train_ds = raw_train.map(lambda x, y: (augment(x), y))
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
                model.fit(train_ds, epochs=2)
            """,
        ),
        # The same with a list of layers that a function of the file, run by the pipeline, applies.
        Example(_FLIPS, _FLIPS.replace("import tensorflow as tf\n", "import tensorflow as tf\nfrom tensorflow.python import ipu\n").replace(
            "model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])\nmodel.fit(train_ds, epochs=2)\n",
            "strategy = ipu.ipu_strategy.IPUStrategy()\nwith strategy.scope():\n"
            "    model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])\n"
            "    model.fit(train_ds, epochs=2)\n")),
        # A loss object called on host values (the quickstart's first look at the loss) stays out of the
        # scope: in it, Keras refuses the automatic reduction outside `fit`. Called on the model in the
        # scope, it is reported.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            scores = model(images[:1]).numpy()
            loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            print(loss_fn(labels[:1], scores).numpy())
            model.compile(optimizer="adam", loss=loss_fn)
            model.fit(images, labels, epochs=2)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                scores = model(images[:1]).numpy()
                loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            print(loss_fn(labels[:1], scores).numpy())
            with strategy.scope():
                model.compile(optimizer="adam", loss=loss_fn)
                model.fit(images, labels, epochs=2)
            """,
        ),
        # Metric objects made before the model: made in the scope too (compile refuses metrics made
        # under another strategy).
        Example(
            """\
            import tensorflow as tf

            METRICS = [tf.keras.metrics.AUC(name="auc"), tf.keras.metrics.Recall(name="recall")]
            model = tf.keras.Sequential([tf.keras.layers.Dense(1, activation="sigmoid")])
            model.compile(optimizer="adam", loss="binary_crossentropy", metrics=METRICS)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                METRICS = [tf.keras.metrics.AUC(name="auc"), tf.keras.metrics.Recall(name="recall")]
                model = tf.keras.Sequential([tf.keras.layers.Dense(1, activation="sigmoid")])
                model.compile(optimizer="adam", loss="binary_crossentropy", metrics=METRICS)
            """,
        ),
        # `clear_session()` drops the graph that holds the scope: it runs out of it, and the scope
        # begins again after it, in the loop that makes a model per learning rate.
        Example(
            """\
            import tensorflow as tf

            for rate in (0.01, 0.001):
                tf.keras.backend.clear_session()
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer=tf.keras.optimizers.Adam(rate), loss="mse")
                model.fit(features, targets, epochs=2)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            for rate in (0.01, 0.001):
                tf.keras.backend.clear_session()
                with strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(optimizer=tf.keras.optimizers.Adam(rate), loss="mse")
                    model.fit(features, targets, epochs=2)
            """,
        ),
        # A class whose `__init__` clears the session, made in the scope the port adds: the scope
        # cannot go after the clearing, inside the class, so the call is reported (an error).
        Example(
            """\
            import tensorflow as tf


            class Run:
                def __init__(self, width):
                    tf.keras.backend.clear_session()
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)])
                    self.model.compile(optimizer="adam", loss="mse")


            for width in (8, 16):
                run = Run(width)
                run.model.fit(features, targets, epochs=2)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            class Run:
                def __init__(self, width):
                    tf.keras.backend.clear_session()
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)])
                    self.model.compile(optimizer="adam", loss="mse")


            strategy = ipu.ipu_strategy.IPUStrategy()
            for width in (8, 16):
                with strategy.scope():
                    run = Run(width)
                    run.model.fit(features, targets, epochs=2)
            """,
        ),
        # The same in a grid of two loops, with a last model trained after the grid.
        Example(
            """\
            import tensorflow as tf

            for width in (8, 16):
                for rate in (0.01, 0.001):
                    tf.keras.backend.clear_session()
                    model = tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)])
                    model.compile(optimizer=tf.keras.optimizers.Adam(rate), loss="mse")
                    model.fit(features, targets, epochs=2)
            final = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            final.compile(optimizer="adam", loss="mse")
            final.fit(features, targets, epochs=4)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            for width in (8, 16):
                for rate in (0.01, 0.001):
                    tf.keras.backend.clear_session()
                    with strategy.scope():
                        model = tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)])
                        model.compile(optimizer=tf.keras.optimizers.Adam(rate), loss="mse")
                        model.fit(features, targets, epochs=2)
            with strategy.scope():
                final = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                final.compile(optimizer="adam", loss="mse")
                final.fit(features, targets, epochs=4)
            """,
        ),
        # Members of an ensemble, each made and trained by a function that returns it, kept in a
        # list and averaged after the loop: the function runs in the caller's scope, and the scope
        # takes in the loop and the predictions after it.
        Example(
            """\
            import tensorflow as tf


            def train_member(seed, x, y):
                tf.random.set_seed(seed)
                model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse")
                model.fit(x, y, epochs=2)
                return model


            members = []
            for seed in range(3):
                members.append(train_member(seed, features, targets))
            average = sum(member.predict(features) for member in members) / len(members)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def train_member(seed, x, y):
                tf.random.set_seed(seed)
                model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse")
                model.fit(x, y, epochs=2)
                return model


            members = []
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                for seed in range(3):
                    members.append(train_member(seed, features, targets))
                average = sum(member.predict(features) for member in members) / len(members)
            """,
        ),
        # `del model` after the clearing only frees the host's memory: it gets no scope of its own.
        Example(
            """\
            import gc

            import tensorflow as tf

            for rate in (0.01, 0.001):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer=tf.keras.optimizers.Adam(rate), loss="mse")
                model.fit(features, targets, epochs=2)
                tf.keras.backend.clear_session()
                del model
                gc.collect()
            """,
            """\
            import gc

            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            for rate in (0.01, 0.001):
                with strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(optimizer=tf.keras.optimizers.Adam(rate), loss="mse")
                    model.fit(features, targets, epochs=2)
                tf.keras.backend.clear_session()
                del model
                gc.collect()
            """,
        ),
        # A function that clears the session, then trains a fresh model, called per fold: its
        # scope stays in it, after the clearing (around its call, the clearing would drop it).
        Example(
            """\
            import tensorflow as tf

            def train_fold(train_x, train_y):
                tf.keras.backend.clear_session()
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse")
                return model.fit(train_x, train_y, epochs=2)

            for fold_x, fold_y in folds:
                train_fold(fold_x, fold_y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            def train_fold(train_x, train_y):
                tf.keras.backend.clear_session()
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(optimizer="adam", loss="mse")
                    return model.fit(train_x, train_y, epochs=2)

            for fold_x, fold_y in folds:
                train_fold(fold_x, fold_y)
            """,
        ),
        # A builder that begins by clearing the session, called where its model is trained: the
        # clearing would drop the scope around the call; said.
        Example(
            """\
            import tensorflow as tf

            def build(width):
                tf.keras.backend.clear_session()
                model = tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse")
                return model

            model = build(16)
            model.fit(features, targets, epochs=2)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            def build(width):
                tf.keras.backend.clear_session()
                model = tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse")
                return model

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = build(16)
                model.fit(features, targets, epochs=2)
            """,
        ),
        # A trainer class that owns the strategy (makes it, enters its scope, runs its steps through
        # it): its strategy becomes the IPU strategy, and no second one is made around its use.
        Example(
            """\
            import tensorflow as tf


            class Trainer:
                def __init__(self, model_fn):
                    self.strategy = tf.distribute.MirroredStrategy()
                    with self.strategy.scope():
                        self.model = model_fn()
                        self.optimizer = tf.keras.optimizers.SGD(0.01)

                @tf.function
                def distributed_step(self, x, y):
                    return self.strategy.run(self.step, args=(x, y))


            def build():
                return tf.keras.Sequential([tf.keras.layers.Dense(1)])


            trainer = Trainer(build)
            for x, y in dataset:
                trainer.distributed_step(x, y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            class Trainer:
                def __init__(self, model_fn):
                    self.strategy = ipu.ipu_strategy.IPUStrategy()
                    with self.strategy.scope():
                        self.model = model_fn()
                        self.optimizer = tf.keras.optimizers.SGD(0.01)

                @tf.function
                def distributed_step(self, x, y):
                    return self.strategy.run(self.step, args=(x, y))


            def build():
                return tf.keras.Sequential([tf.keras.layers.Dense(1)])


            trainer = Trainer(build)
            for x, y in dataset:
                trainer.distributed_step(x, y)
            """,
        ),
        # A trainer class of its own whose loop runs its tape step, given the models it trains as
        # they are built (`Trainer(build_generator(), build_critic())`): that statement makes them,
        # so it goes in the scope with the trainer's loop.
        Example(_GIVEN_BUILT_MODELS, _GIVEN_BUILT_MODELS.replace(
            "import tensorflow as tf\n", "import tensorflow as tf\nfrom tensorflow.python import ipu\n").replace(
            "    trainer = Trainer(build_generator(), build_critic())\n    trainer.fit(dataset, 2)\n",
            "    strategy = ipu.ipu_strategy.IPUStrategy()\n    with strategy.scope():\n"
            "        trainer = Trainer(build_generator(), build_critic())\n        trainer.fit(dataset, 2)\n")),
        # `tf.distribute.get_strategy()` in a builder that only asks the strategy in scope how many
        # replicas it has: in the IPU strategy's scope it gives the IPU strategy (and out of any
        # scope the default one, as before), so it stays; a new `IPUStrategy()` there would be one
        # nothing enters.
        Example(
            """\
            import tensorflow as tf


            def build(lr):
                strategy = tf.distribute.get_strategy()
                print("replicas:", strategy.num_replicas_in_sync)
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer=tf.keras.optimizers.SGD(lr), loss="mse")
                return model


            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                model = build(0.01)
            model.fit(x, y, batch_size=16)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def build(lr):
                strategy = tf.distribute.get_strategy()
                print("replicas:", strategy.num_replicas_in_sync)
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer=tf.keras.optimizers.SGD(lr), loss="mse")
                return model


            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = build(0.01)
                model.fit(x, y, batch_size=16)
            """,
        ),
        # The same builder entering the scope of the strategy it gets: called in the IPU strategy's
        # scope, it enters that strategy's scope again (a new `IPUStrategy()` there would be a second
        # strategy, refused inside the first).
        Example(
            """\
            import tensorflow as tf


            def build(lr):
                strategy = tf.distribute.get_strategy()
                with strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(optimizer=tf.keras.optimizers.SGD(lr), loss="mse")
                return model


            model = build(0.01)
            model.fit(x, y, batch_size=16)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def build(lr):
                strategy = tf.distribute.get_strategy()
                with strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(optimizer=tf.keras.optimizers.SGD(lr), loss="mse")
                return model


            ipu_strategy = ipu.ipu_strategy.IPUStrategy()
            with ipu_strategy.scope():
                model = build(0.01)
                model.fit(x, y, batch_size=16)
            """,
        ),
        # A strategy helper called by each function that has model code (`train` and `evaluate`):
        # each call's strategy is the IPU strategy of the model code after it, and no other is made.
        Example(
            """\
            import tensorflow as tf


            def make_strategy():
                return tf.distribute.MirroredStrategy()


            def train(model_fn, x, y):
                strategy = make_strategy()
                with strategy.scope():
                    model = model_fn()
                model.fit(x, y, batch_size=16)
                model.save_weights("weights.h5")


            def evaluate(model_fn, x, y):
                strategy = make_strategy()
                with strategy.scope():
                    model = model_fn()
                    model.load_weights("weights.h5")
                return model.evaluate(x, y, batch_size=16)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def make_strategy():
                return ipu.ipu_strategy.IPUStrategy()


            def train(model_fn, x, y):
                strategy = make_strategy()
                with strategy.scope():
                    model = model_fn()
                    model.fit(x, y, batch_size=16)
                    model.save_weights("weights.h5")


            def evaluate(model_fn, x, y):
                strategy = make_strategy()
                with strategy.scope():
                    model = model_fn()
                    model.load_weights("weights.h5")
                    return model.evaluate(x, y, batch_size=16)
            """,
        ),
        # A trainer class that makes its strategy in `__init__`, builds its model there in its scope,
        # and trains, scores and answers in other methods: once an instance exists its strategy is
        # bound there, and each of those statements runs in that (the IPU) strategy's scope, a model
        # made again by a method of the class (`self._make_net()`, which runs where it is called) too,
        # and a run of the model through a property that gives it (`self.model.evaluate(x, y)`).
        Example(
            """\
            import tensorflow as tf


            def pick_strategy():
                if len(tf.config.list_physical_devices("GPU")) > 1:
                    return tf.distribute.MirroredStrategy()
                return tf.distribute.OneDeviceStrategy("/cpu:0")


            class Trainer:
                def __init__(self, width):
                    self.width = width
                    self._strategy = pick_strategy()
                    with self._strategy.scope():
                        self.net = self._make_net()

                def _make_net(self):
                    net = tf.keras.Sequential([tf.keras.layers.Dense(self.width), tf.keras.layers.Dense(1)])
                    net.compile(optimizer="sgd", loss="mse")
                    return net

                def restart(self):
                    self.net = self._make_net()

                def train(self, x, y):
                    for _ in range(3):
                        self.net.fit(x, y, batch_size=16, verbose=0)

                @property
                def model(self):
                    return self.net

                def score(self, x, y):
                    return self.model.evaluate(x, y, verbose=0)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def pick_strategy():
                if len(tf.config.list_physical_devices("GPU")) > 1:
                    return ipu.ipu_strategy.IPUStrategy()
                return ipu.ipu_strategy.IPUStrategy()


            class Trainer:
                def __init__(self, width):
                    self.width = width
                    self._strategy = pick_strategy()
                    with self._strategy.scope():
                        self.net = self._make_net()

                def _make_net(self):
                    net = tf.keras.Sequential([tf.keras.layers.Dense(self.width), tf.keras.layers.Dense(1)])
                    net.compile(optimizer="sgd", loss="mse")
                    return net

                def restart(self):
                    with self._strategy.scope():
                        self.net = self._make_net()

                def train(self, x, y):
                    with self._strategy.scope():
                        for _ in range(3):
                            self.net.fit(x, y, batch_size=16, verbose=0)

                @property
                def model(self):
                    return self.net

                def score(self, x, y):
                    with self._strategy.scope():
                        return self.model.evaluate(x, y, verbose=0)
            """,
        ),
        # A method that `__init__` calls before it makes the strategy: the attribute is not bound
        # when it runs, so it gets no scope (IPU190 reports its `fit`); a method called after does.
        Example(
            """\
            import tensorflow as tf


            class Trainer:
                def __init__(self, x, y):
                    self.warm_up(x, y)
                    self.strategy = tf.distribute.MirroredStrategy()
                    with self.strategy.scope():
                        self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                        self.model.compile(optimizer="sgd", loss="mse")
                    self.train(x, y)

                def warm_up(self, x, y):
                    self.model.fit(x, y, batch_size=8)

                def train(self, x, y):
                    self.model.fit(x, y, batch_size=8)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            class Trainer:
                def __init__(self, x, y):
                    self.warm_up(x, y)
                    self.strategy = ipu.ipu_strategy.IPUStrategy()
                    with self.strategy.scope():
                        self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                        self.model.compile(optimizer="sgd", loss="mse")
                    self.train(x, y)

                def warm_up(self, x, y):
                    self.model.fit(x, y, batch_size=8)

                def train(self, x, y):
                    with self.strategy.scope():
                        self.model.fit(x, y, batch_size=8)
            """,
        ),
        # A Keras layer of the file that holds a model of its own (a residual block), made in a helper
        # that builds the model: layer code, run in the one scope around the model's construction,
        # with no strategy of its own.
        Example(
            """\
            import tensorflow as tf


            class Residual(tf.keras.layers.Layer):
                def __init__(self, units):
                    super().__init__()
                    self.body = tf.keras.Sequential([tf.keras.layers.Dense(units), tf.keras.layers.Dense(units)])

                def call(self, x):
                    return x + self.body(x)


            def block(x, units):
                return Residual(units)(x)


            inputs = tf.keras.Input(shape=(16,))
            model = tf.keras.Model(inputs, block(block(inputs, 16), 16))
            model.compile(optimizer="adam", loss="mse")
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            class Residual(tf.keras.layers.Layer):
                def __init__(self, units):
                    super().__init__()
                    self.body = tf.keras.Sequential([tf.keras.layers.Dense(units), tf.keras.layers.Dense(units)])

                def call(self, x):
                    return x + self.body(x)


            def block(x, units):
                return Residual(units)(x)


            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                inputs = tf.keras.Input(shape=(16,))
                model = tf.keras.Model(inputs, block(block(inputs, 16), 16))
                model.compile(optimizer="adam", loss="mse")
            """,
        ),
        # A trainer class given the strategy a function of the file picks (and entering its scope):
        # the function gives the IPU strategy, and no second one is made around the trainer.
        Example(
            """\
            import tensorflow as tf


            def get_strategy():
                if len(tf.config.list_physical_devices("GPU")) > 1:
                    return tf.distribute.MirroredStrategy()
                return tf.distribute.get_strategy()


            class Trainer:
                def __init__(self, strategy, model_fn):
                    self.strategy = strategy
                    with strategy.scope():
                        self.model = model_fn()


            def build():
                return tf.keras.Sequential([tf.keras.layers.Dense(1)])


            if __name__ == "__main__":
                trainer = Trainer(get_strategy(), build)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def get_strategy():
                if len(tf.config.list_physical_devices("GPU")) > 1:
                    return ipu.ipu_strategy.IPUStrategy()
                return ipu.ipu_strategy.IPUStrategy()


            class Trainer:
                def __init__(self, strategy, model_fn):
                    self.strategy = strategy
                    with strategy.scope():
                        self.model = model_fn()


            def build():
                return tf.keras.Sequential([tf.keras.layers.Dense(1)])


            if __name__ == "__main__":
                trainer = Trainer(get_strategy(), build)
            """,
        ),
        # A trainer class that keeps the strategy a function of the file picks (self.strategy =
        # select_strategy()) and enters its scope: the function gives the IPU strategy, and no
        # second one is made around the trainer (entered in it, two strategies fail).
        Example(
            """\
            import tensorflow as tf


            def select_strategy():
                if len(tf.config.list_physical_devices("GPU")) > 1:
                    return tf.distribute.MirroredStrategy()
                return tf.distribute.get_strategy()


            class Trainer:
                def __init__(self):
                    self.strategy = select_strategy()
                    with self.strategy.scope():
                        self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                        self.model.compile(loss="mse")


            def main():
                trainer = Trainer()
                return trainer.model
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def select_strategy():
                if len(tf.config.list_physical_devices("GPU")) > 1:
                    return ipu.ipu_strategy.IPUStrategy()
                return ipu.ipu_strategy.IPUStrategy()


            class Trainer:
                def __init__(self):
                    self.strategy = select_strategy()
                    with self.strategy.scope():
                        self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                        self.model.compile(loss="mse")


            def main():
                trainer = Trainer()
                return trainer.model
            """,
        ),
        # The same with the strategy made by a method of the trainer (self.make_strategy()).
        Example(
            """\
            import tensorflow as tf


            class Trainer:
                def __init__(self):
                    self.strategy = self.make_strategy()
                    with self.strategy.scope():
                        self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])

                def make_strategy(self):
                    return tf.distribute.MirroredStrategy()
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            class Trainer:
                def __init__(self):
                    self.strategy = self.make_strategy()
                    with self.strategy.scope():
                        self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])

                def make_strategy(self):
                    return ipu.ipu_strategy.IPUStrategy()
            """,
        ),
        # A builder that takes the strategy in use (get_strategy()) before main() makes its own:
        # main()'s, made before its model code, becomes the IPU strategy (not a second one after it),
        # and the builder, which runs in its scope, keeps asking for the strategy in use (the IPU
        # strategy there; a new `IPUStrategy()` would be one nothing uses).
        Example(
            """\
            import tensorflow as tf


            def build(width):
                strategy = tf.distribute.get_strategy()
                with strategy.scope():
                    net = tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)])
                    net.compile(loss="mse")
                return net


            def main(x, y):
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    model = build(16)
                model.fit(x, y, batch_size=32)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def build(width):
                strategy = tf.distribute.get_strategy()
                net = tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)])
                net.compile(loss="mse")
                return net


            def main(x, y):
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    model = build(16)
                    model.fit(x, y, batch_size=32)
            """,
        ),
        # A strategy chosen by a condition (MirroredStrategy() if ... else get_strategy()): the
        # name holds the program's strategy on both branches, so the choice becomes the IPU
        # strategy, and its scope the IPU's.
        Example(
            """\
            import tensorflow as tf


            def main(x, y):
                gpus = tf.config.list_physical_devices("GPU")
                strategy = tf.distribute.MirroredStrategy() if len(gpus) > 1 else tf.distribute.get_strategy()
                with strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(loss="mse")
                model.fit(x, y, batch_size=32)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def main(x, y):
                gpus = tf.config.list_physical_devices("GPU")
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(loss="mse")
                    model.fit(x, y, batch_size=32)
            """,
        ),
        # A function given the program's strategy as a parameter (evaluate(strategy, model)) enters
        # its scope: it keeps the parameter, with no strategy of its own, after main made the one.
        Example(
            """\
            import tensorflow as tf


            def make_strategy():
                return tf.distribute.MirroredStrategy()


            def evaluate(strategy, model, x, y):
                with strategy.scope():
                    metric = tf.keras.metrics.Accuracy()
                metric.update_state(y, model.predict(x))
                return metric.result()


            if __name__ == "__main__":
                strategy = make_strategy()
                with strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(loss="mse")
                model.fit(x, y)
                print(evaluate(strategy, model, x, y))
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def make_strategy():
                return ipu.ipu_strategy.IPUStrategy()


            def evaluate(strategy, model, x, y):
                with strategy.scope():
                    metric = tf.keras.metrics.Accuracy()
                    metric.update_state(y, model.predict(x))
                return metric.result()


            if __name__ == "__main__":
                strategy = make_strategy()
                with strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(loss="mse")
                    model.fit(x, y)
                    print(evaluate(strategy, model, x, y))
            """,
        ),
        # A trainer class that makes its strategy when it is given none (`if strategy is None:`):
        # the class keeps it as the one IPU strategy, and no second one is made around the trainer.
        Example(
            """\
            import tensorflow as tf


            class Trainer:
                def __init__(self, build, strategy=None):
                    if strategy is None:
                        strategy = tf.distribute.MirroredStrategy()
                    self.strategy = strategy
                    with self.strategy.scope():
                        self.model = build()


            def build():
                return tf.keras.Sequential([tf.keras.layers.Dense(1)])


            trainer = Trainer(build)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            class Trainer:
                def __init__(self, build, strategy=None):
                    if strategy is None:
                        strategy = ipu.ipu_strategy.IPUStrategy()
                    self.strategy = strategy
                    with self.strategy.scope():
                        self.model = build()


            def build():
                return tf.keras.Sequential([tf.keras.layers.Dense(1)])


            trainer = Trainer(build)
            """,
        ),
        # The same trainer made once, with model code after it out of the class (a probe model built
        # in the trainer's scope, an evaluation): that code runs in the scope of the trainer's
        # strategy, the one IPU strategy, not of a second one made for it.
        Example(
            """\
            import tensorflow as tf


            class Trainer:
                def __init__(self, strategy=None):
                    self.strategy = strategy or tf.distribute.MirroredStrategy()
                    with self.strategy.scope():
                        self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                        self.model.compile(loss="mse")

                def train(self, x, y):
                    self.model.fit(x, y, batch_size=32)


            def main(x, y):
                trainer = Trainer()
                trainer.train(x, y)
                with trainer.strategy.scope():
                    probe = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    probe.compile(loss="mse")
                probe.fit(x, y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            class Trainer:
                def __init__(self, strategy=None):
                    self.strategy = strategy or ipu.ipu_strategy.IPUStrategy()
                    with self.strategy.scope():
                        self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                        self.model.compile(loss="mse")

                def train(self, x, y):
                    self.model.fit(x, y, batch_size=32)


            def main(x, y):
                trainer = Trainer()
                with trainer.strategy.scope():
                    trainer.train(x, y)
                    with trainer.strategy.scope():
                        probe = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                        probe.compile(loss="mse")
                    probe.fit(x, y)
            """,
        ),
        # Methods of a plain class that build its models (a GAN class's builders): one scope where
        # the class's object is made and used, not one strategy per method.
        Example(
            """\
            import tensorflow as tf


            class PairTrainer:
                def __init__(self):
                    self.encoder = self.build_encoder()
                    self.decoder = self.build_decoder()
                    self.decoder.compile(optimizer="adam", loss="mse")

                def build_encoder(self):
                    return tf.keras.Sequential([tf.keras.layers.Dense(4)])

                def build_decoder(self):
                    model = tf.keras.Sequential()
                    model.add(tf.keras.layers.Dense(8))
                    return model

                def train(self, batches):
                    for x in batches:
                        self.decoder.train_on_batch(self.encoder(x), x)


            trainer = PairTrainer()
            trainer.train(batches)
            print("done")
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            class PairTrainer:
                def __init__(self):
                    self.encoder = self.build_encoder()
                    self.decoder = self.build_decoder()
                    self.decoder.compile(optimizer="adam", loss="mse")

                def build_encoder(self):
                    return tf.keras.Sequential([tf.keras.layers.Dense(4)])

                def build_decoder(self):
                    model = tf.keras.Sequential()
                    model.add(tf.keras.layers.Dense(8))
                    return model

                def train(self, batches):
                    for x in batches:
                        self.decoder.train_on_batch(self.encoder(x), x)


            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                trainer = PairTrainer()
                trainer.train(batches)
            print("done")
            """,
        ),
        # A model built by a method of a plain class: the scope runs from the object to the last use
        # of the model taken from it.
        Example(
            """\
            import tensorflow as tf


            class Net:
                def build(self):
                    model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
                    model.compile(optimizer="adam", loss="mse")
                    return model


            net = Net()
            model = net.build()
            history = model.fit(x, y, epochs=2)
            print(history.history["loss"])
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            class Net:
                def build(self):
                    model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
                    model.compile(optimizer="adam", loss="mse")
                    return model


            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                net = Net()
                model = net.build()
                history = model.fit(x, y, epochs=2)
            print(history.history["loss"])
            """,
        ),
        # A class that keeps its model in an attribute, made in `__init__` by a method that returns
        # it: where its object is made and used is the model code.
        Example(
            """\
            import tensorflow as tf


            class Trainer:
                def __init__(self, classes):
                    self.model = self.make_model(classes)
                    self.model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")

                @staticmethod
                def make_model(classes):
                    return tf.keras.Sequential([tf.keras.layers.Dense(classes)])

                def predict(self, x):
                    return self.model.predict(x)


            def main():
                trainer = Trainer(4)
                trainer.model.fit(x, y, epochs=2)
                predictions = trainer.predict(x)
                print(predictions.argmax(-1))
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            class Trainer:
                def __init__(self, classes):
                    self.model = self.make_model(classes)
                    self.model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")

                @staticmethod
                def make_model(classes):
                    return tf.keras.Sequential([tf.keras.layers.Dense(classes)])

                def predict(self, x):
                    return self.model.predict(x)


            def main():
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    trainer = Trainer(4)
                    trainer.model.fit(x, y, epochs=2)
                    predictions = trainer.predict(x)
                print(predictions.argmax(-1))
            """,
        ),
        # A text layer of the input pipeline, also called on new text written in the code after
        # training: still the host's, made and adapted out of the scope.
        Example(
            """\
            import tensorflow as tf

            vectorize = tf.keras.layers.TextVectorization(max_tokens=1000, output_sequence_length=20)
            vectorize.adapt(texts)
            train_ds = raw_ds.map(lambda text, label: (vectorize(text), label))
            model = tf.keras.Sequential([tf.keras.layers.Embedding(1000, 8), tf.keras.layers.GlobalAveragePooling1D(),
                                         tf.keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss="mse")
            model.fit(train_ds, epochs=2)
            print(model(vectorize(["a fine film"])))
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            vectorize = tf.keras.layers.TextVectorization(max_tokens=1000, output_sequence_length=20)
            vectorize.adapt(texts)
            train_ds = raw_ds.map(lambda text, label: (vectorize(text), label))
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Embedding(1000, 8), tf.keras.layers.GlobalAveragePooling1D(),
                                             tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse")
                model.fit(train_ds, epochs=2)
                print(model(vectorize(["a fine film"])))
            """,
        ),
        # The same with the new text held by variables first.
        Example(
            """\
            import tensorflow as tf

            vectorize = tf.keras.layers.TextVectorization(max_tokens=1000, output_sequence_length=20)
            vectorize.adapt(texts)
            train_ds = raw_ds.map(lambda text, label: (vectorize(text), label))
            model = tf.keras.Sequential([tf.keras.layers.Embedding(1000, 8), tf.keras.layers.GlobalAveragePooling1D(),
                                         tf.keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss="mse")
            model.fit(train_ds, epochs=2)
            review = "a fine film"
            reviews = tf.constant([review, "a dull plot"])
            print(model(vectorize(reviews)))
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            vectorize = tf.keras.layers.TextVectorization(max_tokens=1000, output_sequence_length=20)
            vectorize.adapt(texts)
            train_ds = raw_ds.map(lambda text, label: (vectorize(text), label))
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Embedding(1000, 8), tf.keras.layers.GlobalAveragePooling1D(),
                                             tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse")
                model.fit(train_ds, epochs=2)
                review = "a fine film"
                reviews = tf.constant([review, "a dull plot"])
                print(model(vectorize(reviews)))
            """,
        ),
        # The same layer handed to a function of the file that only runs it in `dataset.map`.
        Example(
            """\
            import tensorflow as tf


            def encoded(dataset, vectorize):
                return dataset.map(lambda text, label: (vectorize(text), label))


            vectorize = tf.keras.layers.TextVectorization(max_tokens=1000, output_sequence_length=20)
            vectorize.adapt(texts)
            model = tf.keras.Sequential([tf.keras.layers.Embedding(1000, 8), tf.keras.layers.GlobalAveragePooling1D(),
                                         tf.keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss="mse")
            model.fit(encoded(raw_ds, vectorize), epochs=2)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def encoded(dataset, vectorize):
                return dataset.map(lambda text, label: (vectorize(text), label))


            vectorize = tf.keras.layers.TextVectorization(max_tokens=1000, output_sequence_length=20)
            vectorize.adapt(texts)
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Embedding(1000, 8), tf.keras.layers.GlobalAveragePooling1D(),
                                             tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse")
                model.fit(encoded(raw_ds, vectorize), epochs=2)
            """,
        ),
        # The same layer made on the CPU on purpose: the block stays out of the scope (no baseline).
        Example(
            """\
            import tensorflow as tf

            with tf.device("/CPU:0"):
                vectorize = tf.keras.layers.TextVectorization(max_tokens=1000, output_sequence_length=20)
                vectorize.adapt(texts)
            train_ds = raw_ds.map(lambda text, label: (vectorize(text), label))
            model = tf.keras.Sequential([tf.keras.layers.Embedding(1000, 8), tf.keras.layers.GlobalAveragePooling1D(),
                                         tf.keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss="mse")
            model.fit(train_ds, epochs=2)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            with tf.device("/CPU:0"):
                vectorize = tf.keras.layers.TextVectorization(max_tokens=1000, output_sequence_length=20)
                vectorize.adapt(texts)
            train_ds = raw_ds.map(lambda text, label: (vectorize(text), label))
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Embedding(1000, 8), tf.keras.layers.GlobalAveragePooling1D(),
                                             tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse")
                model.fit(train_ds, epochs=2)
            """,
        ),
        # A CPU baseline a course times: with the IPU strategy's scope in it, it measures nothing; said.
        Example(
            """\
            import time

            import tensorflow as tf

            with tf.device("/CPU:0"):
                baseline = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                baseline.compile(optimizer="sgd", loss="mse")
                start = time.time()
                baseline.fit(features, targets, epochs=1)
                print("CPU seconds", time.time() - start)
            """,
            """\
            import time

            import tensorflow as tf
            from tensorflow.python import ipu

            with tf.device("/CPU:0"):
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    baseline = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                    baseline.compile(optimizer="sgd", loss="mse")
                    start = time.time()
                    baseline.fit(features, targets, epochs=1)
                print("CPU seconds", time.time() - start)
            """,
        ),
        # A lookup that encodes the labels on the host, fitted and called on host data only: its
        # table is the host's, made out of the scope, which starts at the model.
        Example(
            """\
            import tensorflow as tf

            tag_lookup = tf.keras.layers.StringLookup(output_mode="multi_hot")
            tag_lookup.adapt(tags)
            targets = tag_lookup(tags).numpy()
            model = tf.keras.Sequential([tf.keras.layers.Dense(tag_lookup.vocabulary_size(), activation="sigmoid")])
            model.compile(optimizer="adam", loss="binary_crossentropy")
            model.fit(dataset, epochs=2)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            tag_lookup = tf.keras.layers.StringLookup(output_mode="multi_hot")
            tag_lookup.adapt(tags)
            targets = tag_lookup(tags).numpy()
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(tag_lookup.vocabulary_size(), activation="sigmoid")])
                model.compile(optimizer="adam", loss="binary_crossentropy")
                model.fit(dataset, epochs=2)
            """,
        ),
        # The same kind of layer called in a training step (under a tape): it runs in what the IPU
        # compiles, so it is model code, made in the scope.
        Example(
            """\
            import tensorflow as tf

            norm = tf.keras.layers.Normalization()
            norm.adapt(features)
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])


            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(norm(x)) - y))
                return tape.gradient(loss, model.trainable_variables)


            for x, y in dataset:
                train_step(x, y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                norm = tf.keras.layers.Normalization()
                norm.adapt(features)
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])


                def train_step(x, y):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(model(norm(x)) - y))
                    return tape.gradient(loss, model.trainable_variables)


                for x, y in dataset:
                    train_step(x, y)
            """,
        ),
        # A preprocessing layer adapted on the CPU among the model code: host work, not a baseline;
        # the block goes in the scope, where its `tf.device` still keeps the work on the CPU.
        Example(
            """\
            import tensorflow as tf

            normalize = tf.keras.layers.Normalization()
            model = tf.keras.Sequential([normalize, tf.keras.layers.Dense(1)])
            with tf.device("/CPU:0"):
                normalize.adapt(features)
            model.compile(optimizer="sgd", loss="mse")
            model.fit(dataset, epochs=1)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                normalize = tf.keras.layers.Normalization()
                model = tf.keras.Sequential([normalize, tf.keras.layers.Dense(1)])
                with tf.device("/CPU:0"):
                    normalize.adapt(features)
                model.compile(optimizer="sgd", loss="mse")
                model.fit(dataset, epochs=1)
            """,
        ),
        # Predictions of the trained model asked of the CPU: no baseline; the block goes in the scope
        # with the model, and the person is told that the model answers on the IPU there.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(optimizer="sgd", loss="mse")
            model.fit(features, targets, epochs=1)
            with tf.device("/CPU:0"):
                predictions = model.predict(test_features)
            print(predictions.argmax(axis=1))
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.compile(optimizer="sgd", loss="mse")
                model.fit(features, targets, epochs=1)
                with tf.device("/CPU:0"):
                    predictions = model.predict(test_features)
            print(predictions.argmax(axis=1))
            """,
        ),
        # A strategy over several hosts: replaced, and what that loses said.
        Example(
            """\
            import tensorflow as tf

            strategy = tf.distribute.MultiWorkerMirroredStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.compile(loss="mse")
            model.fit(shards, epochs=3)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.compile(loss="mse")
                model.fit(shards, epochs=3)
            """,
        ),
        # Hugging Face's TF models override `train_step`: the IPU Keras extensions would refuse them.
        Example(
            """\
            import tensorflow as tf
            from transformers import TFAutoModelForSequenceClassification

            model = TFAutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased")
            model.compile(optimizer=tf.keras.optimizers.Adam(3e-5))
            model.fit(train_ds, epochs=1)
            """,
            """\
            import tensorflow as tf
            from transformers import TFAutoModelForSequenceClassification
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy(enable_keras_extensions=False)
            with strategy.scope():
                model = TFAutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased")
                model.compile(optimizer=tf.keras.optimizers.Adam(3e-5))
                model.fit(train_ds, epochs=1)
            """,
        ),
        # Keras' wide & deep model trains its two parts with its own `train_step`: the extensions are off.
        Example(
            """\
            import tensorflow as tf

            wide_deep = tf.keras.experimental.WideDeepModel(linear, deep, activation="sigmoid")
            wide_deep.compile(optimizer=["ftrl", "adam"], loss="binary_crossentropy")
            wide_deep.fit(train_ds, epochs=5)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy(enable_keras_extensions=False)
            with strategy.scope():
                wide_deep = tf.keras.experimental.WideDeepModel(linear, deep, activation="sigmoid")
                wide_deep.compile(optimizer=["ftrl", "adam"], loss="binary_crossentropy")
                wide_deep.fit(train_ds, epochs=5)
            """,
        ),
        # TensorFlow Recommenders' `Model` trains with its own `train_step` and `test_step` (they call the
        # `compute_loss` a subclass writes), also under a class of the file: the Keras extensions are off.
        Example(
            """\
            import tensorflow as tf
            import tensorflow_recommenders as tfrs


            class Base(tfrs.Model):
                pass


            class Ranker(Base):
                def compute_loss(self, features, training=False):
                    return self.task(labels=features["rating"], predictions=self(features))


            model = Ranker()
            model.compile(optimizer=tf.keras.optimizers.Adagrad(0.1))
            model.fit(ratings, epochs=3)
            """,
            """\
            import tensorflow as tf
            import tensorflow_recommenders as tfrs
            from tensorflow.python import ipu


            class Base(tfrs.Model):
                pass


            class Ranker(Base):
                def compute_loss(self, features, training=False):
                    return self.task(labels=features["rating"], predictions=self(features))


            strategy = ipu.ipu_strategy.IPUStrategy(enable_keras_extensions=False)
            with strategy.scope():
                model = Ranker()
                model.compile(optimizer=tf.keras.optimizers.Adagrad(0.1))
                model.fit(ratings, epochs=3)
            """,
        ),
        # A Hugging Face TF model that only predicts (never compiled) is model code all the same: it
        # runs in the IPU strategy's scope, whose Keras extensions `predict` does not refuse.
        Example(
            """\
            import tensorflow as tf
            from transformers import TFAutoModelForSequenceClassification

            model = TFAutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased")
            logits = model.predict(encoded["input_ids"], batch_size=8)["logits"]
            print(tf.argmax(logits, axis=-1))
            """,
            """\
            import tensorflow as tf
            from transformers import TFAutoModelForSequenceClassification
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = TFAutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased")
                logits = model.predict(encoded["input_ids"], batch_size=8)["logits"]
            print(tf.argmax(logits, axis=-1))
            """,
        ),
        # A strategy only handed to an Estimator's configuration is the Estimator's (IPU211 reports
        # it), and a model built in an Estimator's `model_fn` is the Estimator's graph.
        Example(
            """\
            import tensorflow as tf


            def model_fn(features, labels, mode):
                net = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                loss = tf.reduce_mean(tf.square(net(features) - labels))
                return tf.estimator.EstimatorSpec(mode, loss=loss)


            strategy = tf.distribute.MirroredStrategy()
            config = tf.estimator.RunConfig(train_distribute=strategy)
            estimator = tf.estimator.Estimator(model_fn, config=config)
            """,
            reported=False,
        ),
        # The same strategies under `import tensorflow.compat.v1 as tf` are replaced too.
        Example(
            """\
            import tensorflow.compat.v1 as tf

            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.compile(loss="mse", optimizer="adam")
            model.fit(train_ds, epochs=2)
            """,
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.compile(loss="mse", optimizer="adam")
                model.fit(train_ds, epochs=2)
            """,
        ),
        # A function among the model code whose default value is a layer: the layer is made where
        # the function is defined, so the definition stays in the scope with the model.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(4)])


            def head(x, layer=tf.keras.layers.Dense(1)):
                return layer(x)


            model.compile(optimizer="adam", loss="mse")
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(4)])


                def head(x, layer=tf.keras.layers.Dense(1)):
                    return layer(x)


                model.compile(optimizer="adam", loss="mse")
            """,
        ),
        # A function the file never calls (left for a user or an importer) that runs the module's
        # model: the statement that runs it gets a scope of its own, from the module's strategy.
        Example(
            """\
            import tensorflow as tf


            def score_folder(images):
                for batch in images:
                    print(classifier.predict(batch, batch_size=8).argmax(axis=1))


            classifier = tf.keras.models.load_model("classifier.keras")
            classifier.evaluate(test_ds)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def score_folder(images):
                with strategy.scope():
                    for batch in images:
                        print(classifier.predict(batch, batch_size=8).argmax(axis=1))


            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                classifier = tf.keras.models.load_model("classifier.keras")
                classifier.evaluate(test_ds)
            """,
        ),
        # A strategy made global with `experimental_set_strategy`: its scope is entered for the rest of
        # the program, and the IPU strategy's inside it would be a second strategy; the call goes.
        Example(
            """\
            import tensorflow as tf

            strategy = tf.distribute.MirroredStrategy()
            tf.distribute.experimental_set_strategy(strategy)
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(optimizer="sgd", loss="mse")
            model.fit(x, y, batch_size=16)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.compile(optimizer="sgd", loss="mse")
                model.fit(x, y, batch_size=16)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            tf.distribute.experimental_set_strategy(tf.distribute.MirroredStrategy())
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(optimizer="sgd", loss="mse")
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.compile(optimizer="sgd", loss="mse")
            """,
        ),
        # Model code in the branches of a choice of modes: one strategy, made before the choice, and a
        # scope in each branch.
        Example(
            """\
            import tensorflow as tf


            def main(args):
                if args.mode == "train":
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile("sgd", "mse")
                    model.fit(x, y)
                else:
                    model = tf.keras.models.load_model(args.path)
                    model.evaluate(x, y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def main(args):
                strategy = ipu.ipu_strategy.IPUStrategy()
                if args.mode == "train":
                    with strategy.scope():
                        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                        model.compile("sgd", "mse")
                        model.fit(x, y)
                else:
                    with strategy.scope():
                        model = tf.keras.models.load_model(args.path)
                        model.evaluate(x, y)
            """,
        ),
        # Models created as the argument of a function nested in the one that calls it: the scope
        # goes around the statement that creates and trains them.
        Example(
            """\
            import tensorflow as tf


            def sweep(widths, x, y):
                def fit_one(model):
                    model.compile("sgd", "mse")
                    model.fit(x, y, batch_size=32)
                    return model.evaluate(x, y, batch_size=32)

                return [fit_one(tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)]))
                        for width in widths]
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def sweep(widths, x, y):
                def fit_one(model):
                    model.compile("sgd", "mse")
                    model.fit(x, y, batch_size=32)
                    return model.evaluate(x, y, batch_size=32)

                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    return [fit_one(tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)]))
                            for width in widths]
            """,
        ),
        # A dataclass whose field is made by a builder of the file: each object it makes builds a
        # model, so the scope goes around where the object is made and used, not in the class body.
        Example(
            """\
            from dataclasses import dataclass, field

            import tensorflow as tf


            def build_model():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile("sgd", "mse")
                return model


            @dataclass
            class Job:
                model: tf.keras.Model = field(default_factory=build_model)


            job = Job()
            job.model.fit(x, y)
            """,
            """\
            from dataclasses import dataclass, field

            import tensorflow as tf
            from tensorflow.python import ipu


            def build_model():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile("sgd", "mse")
                return model


            @dataclass
            class Job:
                model: tf.keras.Model = field(default_factory=build_model)


            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                job = Job()
                job.model.fit(x, y)
            """,
        ),
        # A method that returns a model only the class calls (`self._network()`): the model is made
        # where it is called, so the scope goes around that call and the training in `train`.
        Example(
            """\
            import tensorflow as tf


            class Trainer:
                def _network(self):
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile("sgd", "mse")
                    return model

                def train(self, x, y):
                    model = self._network()
                    model.fit(x, y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            class Trainer:
                def _network(self):
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile("sgd", "mse")
                    return model

                def train(self, x, y):
                    strategy = ipu.ipu_strategy.IPUStrategy()
                    with strategy.scope():
                        model = self._network()
                        model.fit(x, y)
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.fit(x, y)
            """,
            reported=False,
        ),
        # The program's strategy scope or none, chosen on GPUs (`... if use_gpus else nullcontext()`):
        # an IPU system takes the no-GPU branch, which would leave the model out of any scope; the
        # port's scope replaces the choice.
        Example(
            """\
            import contextlib
            import tensorflow as tf

            strategy = tf.distribute.MirroredStrategy()
            use_gpus = len(tf.config.list_logical_devices("GPU")) > 1
            with strategy.scope() if use_gpus else contextlib.nullcontext():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile("sgd", "mse")
            model.fit(x, y)
            """,
            """\
            import contextlib
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            use_gpus = len(tf.config.list_logical_devices("GPU")) > 1
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile("sgd", "mse")
                model.fit(x, y)
            """,
        ),
        # A strategy made in the `with` that enters it (`(strategy := MirroredStrategy()).scope()`): it
        # becomes the port's own strategy, entered again, and `strategy` still names it after.
        Example(
            """\
            import tensorflow as tf

            with (strategy := tf.distribute.MirroredStrategy()).scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile("sgd", "mse")
            print(strategy.num_replicas_in_sync)
            model.fit(x, y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            ipu_strategy = ipu.ipu_strategy.IPUStrategy()
            with ipu_strategy.scope():
                with (strategy := ipu_strategy).scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile("sgd", "mse")
                print(strategy.num_replicas_in_sync)
                model.fit(x, y)
            """,
        ),
        # `fit` in a `try` whose `finally` clears the Keras session: the `try` stays out of the scope
        # (clearing the session drops it), and its body, which trains, goes in.
        Example(
            """\
            import tensorflow as tf

            for width in (8, 16):
                model = tf.keras.Sequential([tf.keras.layers.Dense(width)])
                model.compile("sgd", "mse")
                try:
                    model.fit(x, y)
                except tf.errors.ResourceExhaustedError:
                    print("too wide:", width)
                finally:
                    tf.keras.backend.clear_session()
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            strategy = ipu.ipu_strategy.IPUStrategy()
            for width in (8, 16):
                with strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(width)])
                    model.compile("sgd", "mse")
                try:
                    with strategy.scope():
                        model.fit(x, y)
                except tf.errors.ResourceExhaustedError:
                    print("too wide:", width)
                finally:
                    tf.keras.backend.clear_session()
            """,
        ),
        # A strategy made only when GPUs are found, else `None`: an IPU system has no GPUs, so the
        # `None` branch would run and `strategy.scope()` fail; the whole choice is the IPU strategy.
        Example(
            """\
            import tensorflow as tf

            gpus = tf.config.list_logical_devices("GPU")
            strategy = tf.distribute.MirroredStrategy() if gpus else None
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile("sgd", "mse")
            model.fit(x, y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            gpus = tf.config.list_logical_devices("GPU")
            strategy = ipu.ipu_strategy.IPUStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile("sgd", "mse")
                model.fit(x, y)
            """,
        ),
        # The same choice as an `if`/`else` statement: the `else` branch leaves `strategy` None, so
        # the model code gets a strategy of its own, made where it starts.
        Example(
            """\
            import tensorflow as tf


            def main():
                if tf.config.list_physical_devices("GPU"):
                    strategy = tf.distribute.MirroredStrategy()
                else:
                    strategy = None
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile("sgd", "mse")
                model.fit(x, y)
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu


            def main():
                if tf.config.list_physical_devices("GPU"):
                    strategy = ipu.ipu_strategy.IPUStrategy()
                else:
                    strategy = None
                strategy = ipu.ipu_strategy.IPUStrategy()
                with strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile("sgd", "mse")
                    model.fit(x, y)
            """,
        ),
        Example(
            """\
            from tensorflow import keras


            def build_model():
                return keras.Sequential([keras.layers.Dense(10)])
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        plan = model_plan(ctx)
        others = _plain_models(ctx, plan)
        for hook in plan.overridden_hooks:
            ctx.report(self.code, hook, f"`{hook.name.value}` is overridden: the port uses "
                       "`IPUStrategy(enable_keras_extensions=False)`, which loses IPU Keras features "
                       "(pipelining, gradient accumulation, the float64 cast of `fit`'s datasets, replication "
                       f"managed by Keras) for every model it runs{others}; remove the override to keep them",
                       fixed=False)
        for call in plan.library_overrides:
            made = "a wide & deep model, which overrides `train_step` to train its linear and deep parts with an " \
                   "optimizer each" if ctx.keras_name(call.func) in OVERRIDING_KERAS_MODELS \
                else "a Hugging Face model, which overrides `train_step` and `test_step`"
            ctx.report(self.code, call, f"`{code_of(ctx, call.func)}` makes {made}: the port uses "
                       "`IPUStrategy(enable_keras_extensions=False)`, "
                       "which loses IPU Keras features (pipelining, infeeds) and the float64 to float32 cast of "
                       "`fit`'s data", fixed=False)
        for cls in plan.library_bases:
            ctx.report(self.code, cls.name, f"`{cls.name.value}` derives from TensorFlow Recommenders' `Model`, "
                       "whose own `train_step` and `test_step` train with the `compute_loss` it writes, and the IPU "
                       "Keras extensions refuse them: the port uses `IPUStrategy(enable_keras_extensions=False)`, "
                       "which loses IPU Keras features (pipelining, gradient accumulation, the float64 cast of "
                       "`fit`'s datasets, replication managed by Keras)", fixed=False)
        for call, why in plan.imported_overrides:
            ctx.report(self.code, call.func.attr, f"{why}, which the IPU Keras extensions refuse: the port uses "
                       "`IPUStrategy(enable_keras_extensions=False)`, which loses IPU Keras features (pipelining, "
                       "gradient accumulation, the float64 cast of `fit`'s datasets, replication managed by Keras) "
                       "for every model it runs; remove the override to keep them", fixed=False)
        for with_node in plan.unsafe_withs:
            ctx.report(self.code, with_node, "GPU device scope with several items or `as`: replace it "
                       "with `with strategy.scope():` by hand", fixed=False)
        if plan.has_ipu_strategy:
            self._extend_ipu_scopes(ctx, plan)
            return
        changed = False
        if plan.replaced_strategies:
            changed = self._tpu_setup(ctx, plan) or changed
            self._report_multi_host(ctx, plan)
            self._report_branch_strategies(ctx, plan)
        if plan.replaced_strategies or plan.regions:
            changed = self._remove_global_strategy(ctx) or changed
        replaced_choices: Set[int] = set()
        for call in plan.replaced_strategies:
            choice = strategy_or_none(ctx, plan, call)
            if choice is not None:  # both branches become the IPU strategy: the choice goes
                if id(choice) not in replaced_choices:
                    replaced_choices.add(id(choice))
                    ctx.replace(choice, expression(_strategy_code(ctx)))
                    ctx.report(self.code, call, "distribution strategy replaced by `IPUStrategy`", fixed=True)
                    changed = True
                continue
            again = _made_again(ctx, plan, call)
            if again is not None:  # the port's own strategy, of the same name, is made before it
                ctx.remove(again)
                ctx.report(self.code, call, f"distribution strategy replaced by the `IPUStrategy` made as "
                           f"`{plan.strategy_name}` before the model code", fixed=True)
                changed = True
                continue
            made = plan.strategy_name if _entered_in_region(ctx, plan, call) else _strategy_code(ctx)
            ctx.replace(call, expression(made))
            ctx.report(self.code, call, "distribution strategy replaced by `IPUStrategy`", fixed=True)
            changed = True
        if plan.strategy_statement is None:
            for anchor in setup_anchors(ctx, plan):
                made = f"{plan.strategy_factory}()" if plan.strategy_factory else _strategy_code(ctx)
                ctx.insert_before(anchor, [statement(f"{plan.strategy_name} = {made}")])
        wrapped = []
        kept_out = _kept_out(ctx, plan)
        model_code = _model_code(ctx, plan)
        for region in plan.regions:
            if ctx.wrap(region.first, region.last, ScopeBlock(plan.strategy_name),
                        display=lambda line: _only_displays(ctx, line) or _host_expression(ctx, model_code, line),
                        keep_out=kept_out, edges=_at_edges, shows=lambda line: _shows_result(ctx, plan, line),
                        shown_as=fresh_name(ctx, "result", "cell_result"), idle=_idle_in_cell(ctx, plan)):
                ctx.report(self.code, region.first, f"model code runs in `with {plan.strategy_name}.scope():`",
                           fixed=True)
                wrapped.append(region)
                changed = True
                self._wrap_loop_bodies(ctx, plan, region, kept_out)
        split_scopes = _split_over_gpus(ctx, plan)
        for with_node in plan.transparent:
            ctx.unwrap(with_node)
            if id(with_node) in split_scopes:
                ctx.report(self.code, with_node, split_scopes[id(with_node)], fixed=False)
            else:
                ctx.report(self.code, with_node, _unwrapped_message(ctx, plan, with_node, wrapped), fixed=True)
            changed = True
        if changed:
            ctx.add_import("tensorflow.python", "ipu", code=IpuImport.code)
        if wrapped:
            self._report_losses_in_scope(ctx, wrapped, kept_out)
            self._report_cpu_blocks(ctx, plan, wrapped)
            self._give_tuners_the_strategy(ctx, plan, wrapped)
            self._report_clearing_calls(ctx, wrapped, kept_out)

    def _extend_ipu_scopes(self, ctx, plan) -> None:
        """A hand port's ``with strategy.scope():`` of an ``IPUStrategy`` that builds a model run
        after the block (``model.fit(...)`` below it, or in a later notebook cell): the statements
        up to its last run go into the scope, as for a scope the port makes. A statement that stays
        out of a scope (one that clears the Keras session) keeps its runs out, for the audit (IPU190)
        to report; a host loop over a dataset gets its body in the scope."""
        kept_out = _kept_out(ctx, plan)
        model_code = _model_code(ctx, plan)
        scopes = dict(_ipu_scopes(ctx))
        for with_node, name in scopes.items():
            models = _models_made_in(ctx, plan, with_node)
            later = list(ctx.siblings(with_node))
            later = later[later.index(with_node) + 1:]
            runs, loops, last = [], [], None
            for statement_node in later:
                found = [call for call in _runs_of(ctx, plan, statement_node, models)
                         if not any(ancestor in scopes for ancestor in ctx.ancestors(call))]
                if found and not kept_out(statement_node):
                    last = statement_node
                elif found and dataset_loop(ctx, statement_node) is not None:
                    loops.append(statement_node)
                else:
                    continue
                runs += found
            if last is not None and not ctx.wrap(
                    with_node, last, ExtendedScope(name),
                    display=lambda line: _only_displays(ctx, line) or _host_expression(ctx, model_code, line),
                    keep_out=kept_out, edges=_at_edges, shows=lambda line: _shows_result(ctx, plan, line),
                    shown_as=fresh_name(ctx, "result", "cell_result"), idle=_idle_in_cell(ctx, plan)):
                continue
            if not runs:
                continue
            for loop in loops:
                self._wrap_after_clearing(ctx, plan, loop, model_code, name)
            named = ", ".join(dict.fromkeys(f"`{code_of(ctx, call.func)}()`" for call in runs))
            ctx.report(self.code, runs[0], f"{named} after `with {name}.scope():` ran outside the IPU strategy "
                       "(on the CPU): brought into its scope", fixed=True)

    def _report_clearing_calls(self, ctx, regions, kept_out) -> None:
        """A function of the file that clears the Keras session (a builder that begins with
        ``clear_session()``), called in a scope the port adds: the clearing drops the graph that
        holds the scope, so the model is built without the IPU strategy and leaving the scope
        fails. (Such a function with a scope of its own is left there, after the clearing.)"""
        reported = set()
        for region in regions:
            body = list(region.block.body)
            for statement_node in body[body.index(region.first):body.index(region.last) + 1]:
                if kept_out(statement_node):
                    continue
                for call in walk(statement_node, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name)):
                        continue
                    function = local_function(ctx, call.func.value, call) or _initializer(ctx, call.func.value)
                    if function is None or id(call) in reported or not _clears_unscoped(ctx, function):
                        continue
                    reported.add(id(call))
                    where = "its `__init__`" if function.name.value == "__init__" else "the function"
                    ctx.report(self.code, call, f"`{call.func.value}()` clears the Keras session, which drops the graph "
                               "that holds the IPU strategy's scope it is called in (its model would be built without "
                               "the IPU strategy, and leaving the scope fails): clear the session before the scope, "
                               f"out of {where}", fixed=False, severity=ERROR)

    def _give_tuners_the_strategy(self, ctx, plan, regions) -> None:
        """A Keras Tuner clears the Keras session before it builds each trial's model, which ends
        a strategy's scope around ``search``: ``search`` runs out of the scope (``clears_session``),
        and the tuner builds its models in the IPU strategy's scope itself (its documented
        ``distribution_strategy`` argument); ``fit`` runs in the strategy its model was made in."""
        for calls in tuners(ctx).values():
            for call in calls:
                given = keyword(call, "distribution_strategy")
                if given is not None:
                    self._replace_tuners_strategy(ctx, plan, regions, call, given)
                    continue
                if not in_regions(ctx, regions, call):
                    ctx.report(self.code, call, "Keras Tuner clears the Keras session before each trial's model, "
                               "which ends a strategy's scope: give the tuner `distribution_strategy=` the IPU "
                               "strategy, made before it, and call its `search` out of the strategy's scope",
                               fixed=False)
                    continue
                ctx.replace(call, append_args(call, keyword_arg("distribution_strategy", cst.Name(plan.strategy_name))))
                ctx.report(self.code, call, "Keras Tuner clears the Keras session before each trial's model, which "
                           f"would end the scope: the tuner builds them in `{plan.strategy_name}`'s scope itself "
                           "(`distribution_strategy`), and its `search` runs out of the scope", fixed=True)

    def _replace_tuners_strategy(self, ctx, plan, regions, call: cst.Call, given: cst.Arg) -> None:
        """``distribution_strategy=tf.distribute.MirroredStrategy()`` made in the tuner's call: the
        tuner would build and train every trial's model in that strategy's scope, on the CPU, not
        on the IPU. It gets the IPU strategy instead (a strategy bound to a name is replaced where
        it is made)."""
        if not made_distribution_strategy(ctx, given.value):
            return
        made = code_of(ctx, given.value.func).rpartition(".")[2]
        if not in_regions(ctx, regions, call):
            ctx.report(self.code, given, f"the tuner builds and trains each trial's model in the `{made}` it is "
                       "given, not on the IPU: give it `distribution_strategy=` the IPU strategy, made before "
                       "it, and call its `search` out of the strategy's scope", fixed=False)
            return
        ctx.replace(given.value, cst.Name(plan.strategy_name))
        ctx.report(self.code, given, f"the tuner gets `distribution_strategy={plan.strategy_name}` instead of a "
                   f"`{made}`, in whose scope it would build and train each trial's model, not on the IPU",
                   fixed=True)

    def _report_cpu_blocks(self, ctx, plan, regions) -> None:
        """``with tf.device("/CPU:0"):`` in or around model code the port puts in the IPU strategy's
        scope (a CPU baseline a course times against the accelerator): the model is the strategy's,
        and what the block measures is no longer the CPU. A block that only runs a model trained
        before it (``preds = model.predict(x_test)``) is no baseline: the port put it in the scope,
        where the model answers on the IPU."""
        for with_node in ctx.nodes(cst.With):
            devices = [item.item for item in with_node.items if isinstance(item.item, cst.Call)
                       and ctx.qualified_name(item.item.func) in ("tensorflow.device", "tensorflow.compat.v1.device")
                       and item.item.args and "cpu" in code_of(ctx, item.item.args[0].value).lower()]
            if not devices or not (in_regions(ctx, regions, with_node) or any(
                    any(ancestor is with_node for ancestor in ctx.ancestors(region.first)) for region in regions)):
                continue
            if _only_makes_models(ctx, plan, with_node) and len(with_node.items) == 1 and (
                    with_node.items[0].asname is None):
                # The template of `multi_gpu_model`: weights on the host, which the GPU copies shared.
                ctx.unwrap(with_node)
                ctx.report(self.code, devices[0], "`with tf.device` on the CPU removed around the making of the model: "
                           "it kept the weights on the host for GPU copies of the model to share, and in the IPU "
                           "strategy's scope the strategy places them", fixed=True)
                continue
            if not _holds_model_code(plan, with_node):
                continue  # host work pinned to the CPU (`vectorizer.adapt(...)`): the block still places it there
            if _only_runs_models(ctx, plan, with_node):
                ctx.report(self.code, devices[0], "this block asks for the CPU to run a model made in the IPU "
                           "strategy's scope; the port runs the block in that scope too (the model is used there), "
                           "where Keras runs the model on the IPU, not on the CPU: drop the `with tf.device` block",
                           fixed=False)
                continue
            ctx.report(self.code, devices[0], "this block asks for the CPU, but its model code is in the IPU "
                       "strategy's scope: the model is placed by the strategy and trained through the IPU's Keras, "
                       "so a CPU baseline measures nothing; run it before the IPU is configured, out of the scope "
                       "(or drop it)", fixed=False)

    def _report_losses_in_scope(self, ctx, regions, kept_out) -> None:
        """A Keras loss object of automatic reduction called in the scope, outside ``fit`` and the
        steps (``loss_fn(labels, model(images))``): Keras raises a ValueError there."""
        losses = set(auto_loss_objects(ctx)) - _stepped_losses(ctx)
        for call in ctx.nodes(cst.Call) if losses else ():
            if not (isinstance(call.func, cst.Name) and call.func.value in losses):
                continue
            statement = ctx.statement_of(call)
            owners = {id(ctx.enclosing_function(region.first)) for region in regions if in_region(ctx, region, call)}
            if id(ctx.enclosing_function(call)) not in owners or statement is None or kept_out(statement):
                continue  # not in a scope, or in a function defined there (a step: IPU111 sets its reduction)
            ctx.report(self.code, call, f"`{call.func.value}` has the automatic loss reduction, which Keras refuses in a "
                       "strategy's scope outside `fit` (a ValueError): give it "
                       "`reduction=tf.keras.losses.Reduction.NONE` and average what it gives with `tf.reduce_mean`, "
                       "or call it after the scope", fixed=False)

    def _remove_global_strategy(self, ctx) -> bool:
        """``tf.distribute.experimental_set_strategy(strategy)`` enters the GPU strategy's scope for
        the rest of the program: the IPU strategy's scope entered in it would be a second strategy
        ("Mixing different tf.distribute.Strategy objects"), so the statement goes and the model code
        runs in the IPU strategy's scope. ``experimental_set_strategy(None)`` leaves it."""
        removed = False
        for call in ctx.nodes(cst.Call):
            if without_compat(ctx.qualified_name(call.func)) not in GLOBAL_STRATEGY_SETTERS or not call.args or (
                    is_name(call.args[0].value, "None")):
                continue
            statement_node = ctx.statement_of(call)
            if expr_call(statement_node) is call and ctx.allowed(statement_node):
                remove_statement(ctx, statement_node)
                ctx.report(self.code, call, "`experimental_set_strategy` removed: it entered the strategy's scope for "
                           "the whole program, where the IPU strategy's scope would be a second strategy; the model "
                           "code runs in the IPU strategy's scope", fixed=True)
                removed = True
            else:
                ctx.report(self.code, call, "`experimental_set_strategy` enters a strategy's scope for the whole "
                           "program, and the IPU strategy's scope entered in it would be a second strategy (\"Mixing "
                           "different tf.distribute.Strategy objects\"): remove it; the model code runs in the IPU "
                           "strategy's scope", fixed=False)
        return removed

    def _report_multi_host(self, ctx, plan) -> None:
        """A strategy that trains over several hosts (workers read ``TF_CONFIG``, a parameter server
        and its coordinator): the IPU strategy runs the program on one host."""
        for call in plan.replaced_strategies:
            qualified = (ctx.qualified_name(call.func) or "").replace("compat.v1.", "").replace("compat.v2.", "")
            kind = qualified.rsplit(".", 1)[-1]
            if kind in _MULTI_HOST:
                ctx.report(self.code, call, f"`{kind}` trains over several hosts; the `IPUStrategy` that replaces it "
                           "runs this program on one host, and each worker started with `TF_CONFIG` would train alone: "
                           "run one process, replicated over IPUs (port with `--ipus N`), or PopDist's `PopDistStrategy` "
                           f"across hosts{_MULTI_HOST[kind]}", fixed=False)

    def _report_branch_strategies(self, ctx, plan) -> None:
        """A strategy made in one branch of an ``if`` only (``if "COLAB_TPU_ADDR" in os.environ:``, no
        ``else``) and read after it out of the model code (``strategy.num_replicas_in_sync``): the IPU
        strategy that replaces it is made only when that branch runs, and the port's own comes later,
        with the model code, so the read fails with a NameError when the branch does not run."""
        for call in plan.replaced_strategies:
            found = _branch_only_binding(ctx, call)
            if found is None:
                continue
            name, choice = found
            read = _first_read_after(ctx, plan, name, choice)
            if read is not None:
                ctx.report(self.code, read, f"`{name}` is made in only one branch of the `if` on "
                           f"`{code_of(ctx, choice.test)}`, which may not run on an IPU system, and it is read here, "
                           f"before the model code (a NameError then): make `{name} = {_strategy_code(ctx)}` where the "
                           "`if` ends, after the IPU configuration", fixed=False)

    def _tpu_setup(self, ctx, plan) -> bool:
        """TPU set-up before a TPU strategy the port replaces fails on an IPU system, which has no TPU.
        A statement that only sets the TPU up goes (``tf.config.experimental_connect_to_cluster(r)``,
        ``tf.tpu.experimental.initialize_tpu_system(r)``, and ``r = TPUClusterResolver(...)`` when
        nothing but that set-up and the replaced strategy uses ``r``); the rest is reported."""
        setup = [call for call in ctx.nodes(cst.Call) if _tpu_setup_name(ctx, call) is not None]
        consumers = {id(call) for call in setup} | {id(call) for call in plan.replaced_strategies}
        removed = False
        for call in setup:
            name = _tpu_setup_name(ctx, call)
            statement_node = ctx.statement_of(call)
            if (expr_call(statement_node) is call or _only_consumed(ctx, statement_node, call, consumers)) and (
                    ctx.allowed(statement_node)):
                if not any(ctx.is_removed(node) for node in (statement_node, *ctx.ancestors(statement_node))):
                    remove_statement(ctx, statement_node)
                ctx.report(self.code, call, f"TPU set-up (`{name}`) removed: an IPU system has no TPU, and the IPU "
                           "strategy replaces the TPU one", fixed=True)
                removed = True
                continue
            ctx.report(self.code, call, f"TPU set-up (`{name}`): an IPU system has no TPU, and the IPU strategy "
                       "replaces the TPU one; remove it, with what else uses it (a `TPUEstimator` is reported on its "
                       "own)", fixed=False)
        return self._tpu_asserts(ctx) or removed

    def _tpu_asserts(self, ctx) -> bool:
        """``assert "COLAB_TPU_ADDR" in os.environ``: a check that the notebook runs on a TPU, which
        fails on an IPU system, where the IPU strategy replaces the TPU one. It goes."""
        removed = False
        for node in ctx.nodes(cst.Assert):
            statement_node = ctx.statement_of(node)
            if single_small(statement_node) is not node or not _reads_tpu_environment(ctx, node.test) or (
                    not ctx.allowed(statement_node)) or ctx.is_removed(statement_node):
                continue
            remove_statement(ctx, statement_node)
            ctx.report(self.code, node, "TPU check removed: an IPU system has no TPU, and the IPU strategy "
                       "replaces the TPU one", fixed=True)
            removed = True
        return removed

    @staticmethod
    def _wrap_loop_bodies(ctx, plan, region, kept_out) -> None:
        """The bodies of the dataset loops kept out of ``region`` that run the model go in the scope."""
        body = list(region.block.body)
        model_code = _model_code(ctx, plan)
        for statement_node in body[body.index(region.first):body.index(region.last) + 1]:
            if not kept_out(statement_node):
                continue
            loop = dataset_loop(ctx, statement_node)
            if loop is None and isinstance(statement_node, _CLEARING_COMPOUNDS) and clears_session(ctx, statement_node):
                loop = statement_node
            if loop is not None:
                StrategyScope._wrap_after_clearing(ctx, plan, loop, model_code, plan.strategy_name)

    @staticmethod
    def _wrap_after_clearing(ctx, plan, compound, model_code, name: str) -> None:
        """Each block of ``compound`` that runs the model (a loop's body; a ``try``'s body,
        handlers, ``else`` and ``finally``) goes in the scope of ``name`` after its last statement that clears
        the session, if any; a loop or ``try`` nested in it that clears it (a grid of two
        hyperparameters, ``fit`` in a ``try`` whose ``finally`` clears it) is wrapped the same way
        inside."""
        for block in _clearing_blocks(compound):
            if not isinstance(block, cst.IndentedBlock) or not any(
                    isinstance(node, cst.Name) and node.value in model_code for node in walk(block)):
                continue
            body = list(block.body)
            clearing = [index for index, statement in enumerate(body) if clears_session(ctx, statement)]
            inner = body[clearing[-1] + 1 if clearing else 0:]
            if inner:
                ctx.wrap(inner[0], inner[-1], ScopeBlock(name))
            if clearing and isinstance(body[clearing[-1]], _CLEARING_COMPOUNDS):
                StrategyScope._wrap_after_clearing(ctx, plan, body[clearing[-1]], model_code, name)


# Statements whose blocks may clear the session and run the model apart: each block is wrapped
# on its own, after the clearing.
_CLEARING_COMPOUNDS = (cst.For, cst.While, cst.Try)


def _clearing_blocks(compound: cst.BaseCompoundStatement):
    """The blocks of a loop (its body) or of a ``try`` (body, handlers, ``else``, ``finally``)."""
    if not isinstance(compound, cst.Try):
        return [compound.body]
    return [compound.body, *(handler.body for handler in compound.handlers),
            *(part.body for part in (compound.orelse, compound.finalbody) if part is not None)]


# Model methods that make or change a model: a block with one builds or trains on its device.
_TRAINING = frozenset({"compile", "fit", "fit_generator", "train_on_batch"})


def _only_runs_models(ctx, plan, with_node: cst.With) -> bool:
    """Whether ``with_node`` only runs models made before it (``predict``, ``evaluate``, a call):
    it makes no model and compiles or trains none."""
    made = {id(assign) for assign in plan.model_assignments}
    runs = False
    for node in walk(with_node.body):
        if id(node) in made or isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and (
                node.func.attr.value in _TRAINING):
            return False
        runs = runs or isinstance(node, cst.Name) and node.value in plan.model_like
    return runs


def _tpu_setup_name(ctx, call: cst.Call) -> Optional[str]:
    """``initialize_tpu_system`` for a call of a TPU set-up function (also under ``compat.v1``), else None."""
    qualified = without_compat(ctx.qualified_name(call.func))
    return qualified.rsplit(".", 1)[1] if qualified in TPU_SETUP else None


def _branch_only_binding(ctx, call: cst.Call) -> Optional[Tuple[str, cst.If]]:
    """``(name, if)`` for ``name = call`` in a branch of an ``if`` (with its ``elif``s) some branch of
    which does not bind ``name``, and nothing else of the scope binds it; else None."""
    assign = simple_assign(ctx.statement_of(call))
    choice = ctx.enclosing(call, cst.If)
    if assign is None or assign[1] is not call or not isinstance(assign[0], cst.Name) or choice is None:
        return None
    while isinstance(ctx.parent(choice), cst.If) and ctx.parent(choice).orelse is choice:
        choice = ctx.parent(choice)  # the ``if`` of an ``elif``
    name = assign[0].value
    if all(_binds(block, name) for block in _branches(choice)):
        return None
    scope = owner(ctx, choice)
    if any(bound == name and not any(a is choice for a in (statement_node, *ctx.ancestors(statement_node)))
           for statement_node, bound, _ in assignments(ctx, scope)):
        return None
    return name, choice


def _branches(choice: cst.If) -> list:
    """The blocks of an ``if``, its ``elif``s and its ``else``; None for a missing ``else``."""
    blocks = [choice.body]
    orelse = choice.orelse
    while isinstance(orelse, cst.If):
        blocks.append(orelse.body)
        orelse = orelse.orelse
    blocks.append(orelse.body if isinstance(orelse, cst.Else) else None)
    return blocks


def _binds(block, name: str) -> bool:
    return block is not None and any(isinstance(node, cst.AssignTarget) and is_name(node.target, name)
                                     for node in walk(block))


def _first_read_after(ctx, plan, name: str, choice: cst.If) -> Optional[cst.Name]:
    """The first ``name.attribute`` of ``choice``'s scope after ``choice`` that is not model code the
    port puts in the scope of its own strategy."""
    scope = owner(ctx, choice)
    after = False
    for node in walk(owner_body(scope), skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        after = after or node is choice
        if not after or not isinstance(node, cst.Name) or node.value != name or not (
                isinstance(ctx.parent(node), cst.Attribute) and ctx.parent(node).value is node):
            continue
        if any(ancestor is choice for ancestor in ctx.ancestors(node)):
            continue
        if not in_regions(ctx, plan.regions, ctx.statement_of(node)):
            return node
    return None


# The environment variables a TPU runtime sets (Colab's, and the one `TPUClusterResolver` reads).
_TPU_ENVIRONMENT = frozenset({"COLAB_TPU_ADDR", "TPU_NAME"})


def _reads_tpu_environment(ctx, test: cst.BaseExpression) -> bool:
    """Whether ``test`` reads ``os.environ`` and names one of the TPU runtime's variables."""
    if not any(isinstance(node, cst.SimpleString) and node.evaluated_value in _TPU_ENVIRONMENT for node in walk(test)):
        return False
    return any(isinstance(node, (cst.Attribute, cst.Name)) and ctx.qualified_name(node) == "os.environ"
               for node in walk(test))


def _only_consumed(ctx, statement_node: cst.BaseStatement, call: cst.Call, consumers: AbstractSet[int]) -> bool:
    """``resolver = call`` alone, and every other use of ``resolver`` in the file is an argument of a
    call in ``consumers`` (the TPU set-up, the strategies the port replaces)."""
    assign = simple_assign(statement_node)
    if assign is None or assign[1] is not call or not isinstance(assign[0], cst.Name):
        return False
    target = assign[0]
    for node in ctx.nodes(cst.Name):
        if node.value != target.value or node is target:
            continue
        arg = ctx.parent(node)
        if not (isinstance(arg, cst.Arg) and arg.value is node and id(ctx.parent(arg)) in consumers):
            return False
    return True


def _holds_model_code(plan, with_node: cst.With) -> bool:
    """Whether ``with_node`` makes, compiles, trains or runs a model, or reads one: a block that
    does none of it (a preprocessing layer's ``adapt`` pinned to the CPU) is host work, which its
    ``tf.device`` keeps on the CPU in the IPU strategy's scope too."""
    made = {id(assign) for assign in plan.model_assignments}
    return any(id(node) in made or _calls_model_method(node) or isinstance(node, cst.Name) and node.value
               in plan.model_like for node in walk(with_node.body))


def _only_makes_models(ctx, plan, with_node: cst.With) -> bool:
    """Whether ``with_node`` makes a model and runs none: no ``compile``, ``fit``, ``evaluate``,
    ``predict`` or other call of a model's methods in it (the model is trained after the block)."""
    made = {id(assign) for assign in plan.model_assignments}
    makes = False
    for node in walk(with_node.body):
        if _calls_model_method(node):
            return False
        makes = makes or id(node) in made
    return makes


def _calls_model_method(node: cst.CSTNode) -> bool:
    """``x.compile(...)``, ``x.fit(...)``, ``x.predict(...)``...: a call of a method that trains or
    runs a model."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and (
        node.func.attr.value in _TRAINING or node.func.attr.value in RUNNING_METHODS)


def _entered_in_region(ctx, plan, call: cst.Call) -> bool:
    """``with tf.distribute.MirroredStrategy().scope():`` inside model code the port puts in the
    scope of the strategy it makes: the block enters that strategy again (a second strategy
    entered inside the first is refused: "Mixing different tf.distribute.Strategy objects")."""
    parent = ctx.parent(call)
    if isinstance(parent, cst.NamedExpr):  # `with (strategy := MirroredStrategy()).scope():`
        parent = ctx.parent(parent)
    if plan.strategy_statement is not None or not (isinstance(parent, cst.Attribute) and parent.attr.value == "scope"):
        return False
    with_node = ctx.enclosing(call, cst.With)
    return with_node is not None and in_regions(ctx, plan.regions, with_node)


def strategy_or_none(ctx, plan, call: cst.Call) -> Optional[cst.IfExp]:
    """``MirroredStrategy() if gpus else None`` (or ``... else tf.distribute.get_strategy()``, also
    replaced): the condition asks about GPUs, which an IPU system has none of, so the branch it
    takes there gives ``None`` (and ``strategy.scope()`` fails) or a second copy of the IPU
    strategy; the whole choice is the IPU strategy. None when ``call`` is not such a branch."""
    choice = ctx.parent(call)
    if not isinstance(choice, cst.IfExp) or choice.test is call:
        return None
    other = choice.orelse if choice.body is call else choice.body
    replaced = any(other is strategy for strategy in plan.replaced_strategies)
    return choice if replaced or is_name(other, "None") else None


def _made_again(ctx, plan, call: cst.Call) -> Optional[cst.BaseStatement]:
    """``strategy = tf.distribute.MirroredStrategy()`` inside model code the port puts in the scope
    of the strategy it makes under the same name, before it (the model's layers come first), or of
    the program's strategy made earlier under that name (a notebook that makes it again in a later
    cell): the statement would make a second strategy, which the one already entered would not run,
    and whose `run` would mix the two."""
    assign = ctx.parent(call)
    statement = ctx.statement_of(call)
    if (statement is plan.strategy_statement or not isinstance(assign, cst.Assign) or len(assign.targets) != 1
            or not is_name(assign.targets[0].target, plan.strategy_name)
            or not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1)):
        return None
    return statement if in_regions(ctx, plan.regions, statement) else None


def _split_over_gpus(ctx, plan) -> Dict[int, str]:
    """The removed scopes of a model split over GPUs by hand (``with tf.device("/gpu:1"):`` beside
    ``"/gpu:0"`` in the same class, function or module code), each but the first GPU's (by id) with
    what the port leaves to do: it runs the whole model on one IPU, and a model too big for one IPU
    is pipelined over several, which needs stages, IPUs and gradient accumulation a person picks."""
    scopes_by_owner: Dict[int, list] = {}
    if ctx.config.pipeline_stages:  # the pipelining rule splits the model, or says why it cannot
        return {}
    for with_node in plan.transparent:
        for item in with_node.items:
            number = gpu_number(ctx, item.item)
            if number is not None:
                owner = ctx.enclosing(with_node, cst.ClassDef) or ctx.enclosing_function(with_node)
                device = string_value(item.item.args[0].value)
                scopes_by_owner.setdefault(id(owner), []).append((number, device, with_node, owner))
                break
    messages = {}
    extensions_off = keras_extensions_off(ctx)
    for scopes in scopes_by_owner.values():
        gpus = sorted({number for number, _, _, _ in scopes})
        if len(gpus) < 2:
            continue
        stages = len(gpus)
        ipus = 1 << (stages - 1).bit_length()  # IPUs are selected in powers of two
        # The pipelining rule turns the blocks of a function that builds a functional model into stages.
        by_option = (f"; or port again with `--pipeline-stages {stages} --gradient-accumulation G`, which does "
                     "this for a functional model"
                     if isinstance(scopes[0][3], cst.FunctionDef) else "")
        # Pipelining is a method of the IPU Keras extensions, which a `train_step` override turns off.
        enable = (f" ({extensions_off}, so the port's strategy runs without the IPU Keras extensions that "
                  "pipeline a model: remove the override first)" if extensions_off else "")
        for number, device, with_node, _ in scopes:
            if number != gpus[0]:
                messages[id(with_node)] = (
                    f"`{device}` scope removed, and with it the split of the model over {stages} GPUs: the "
                    f"port runs all of the model on one IPU. If it does not fit there, pipeline it over "
                    f"{stages} IPUs{enable}: put the layer calls of each GPU's block in `with keras.ipu.PipelineStage(k):` "
                    f"(k from 0, in the order of the GPUs), set `auto_select_ipus = {ipus}` and call "
                    "`model.set_pipelining_options(gradient_accumulation_steps_per_replica=G)`, G a multiple "
                    f"of {2 * stages}{by_option} (Graphcore's Keras tutorial, \"Pipelining\")")
    return messages


def _unwrapped_message(ctx, plan, with_node: cst.With, wrapped) -> str:
    """What became of a device or strategy scope: replaced when its code is in a region the port
    wraps, removed otherwise (a function that builds the model runs in its caller's scope)."""
    if any(in_region(ctx, region, with_node) for region in wrapped):
        return "device/strategy scope replaced by the IPU strategy scope"
    function = ctx.enclosing_function(with_node)
    if function is not None and in_model_class(ctx, function, plan.model_classes):
        return (f"device/strategy scope removed: `{function.name.value}` is a method of the model, and it runs "
                "where the model is called, in the IPU strategy's scope")
    if function is not None and function.name.value in plan.builders:
        return (f"device/strategy scope removed: `{function.name.value}()` builds the model, and it is "
                "created in the IPU strategy's scope where it is called")
    calls = local_calls(ctx, function) if function is not None and is_module_function(ctx, function) else []
    if calls and all(in_regions(ctx, wrapped, call) for call in calls):
        return (f"device/strategy scope removed: `{function.name.value}()` is called in the IPU strategy's "
                "scope, where its code runs")
    return "device/strategy scope removed"


RULE = StrategyScope()


# The functions of a module that return an IPU strategy once the module is ported: the strategy
# factories (``def get_strategy(): ... return tf.distribute.MirroredStrategy()``) another file of the
# project calls (``strategy = get_strategy()``), read when the files are ported together
# (``porter.api.projects``).


def project_names(text: str, config: Config, as_is: bool = False
                  ) -> Tuple[Set[str], Set[str], Set[str], Set[str]]:
    """What a file of the project that imports the module learns from it, read from one parse:
    its strategy factories (``strategy_factories``), those of them that configure the IPU system
    themselves (``_configuring``), its overriding classes (``_overriding_in``) and the functions
    that enter a strategy they make (``_strategy_owners``). Empty when ``text`` does not parse or
    is not Keras code. ``as_is``: the module is not ported with the file, so only the functions
    that return (or enter) an IPU strategy already count."""
    try:
        module = parse(text)
    except ParseError:
        return set(), set(), set(), set()
    ctx = FileContext(module, config)
    if KERAS not in ctx.frameworks:
        return set(), set(), set(), set()
    made = _made_ipu_strategies(ctx, text, as_is)
    factories = {function.name.value for function in ctx.nodes(cst.FunctionDef) if is_module_function(
        ctx, function) and returns_of(function) and all(
            gives_strategy(function, node.value, made) for node in returns_of(function))}
    return factories, _configuring(ctx, factories), _overriding_in(ctx), _strategy_owners(ctx, made)


def strategy_factories(text: str, config: Config) -> Set[str]:
    """The names of the module's functions whose every ``return`` gives a strategy the port of
    ``text`` makes an ``IPUStrategy`` (or one that is an ``IPUStrategy`` already): a strategy
    made in the function, directly, through a local or one of the branches of a conditional.
    Empty when ``text`` is not Keras code or its strategies are left as they are (this rule not
    selected, or a suppression comment on them)."""
    return project_names(text, config)[0]


def _made_ipu_strategies(ctx: FileContext, text: str, as_is: bool = False) -> Set[int]:
    """The ids of the calls of the module ``ctx`` reads (its ``text``) that make an IPU strategy once
    ported: the strategies its port replaces and its IPU strategies; with ``as_is``, only the
    latter. Its suppressions are applied first: the plan it reads is made with them."""
    if not is_selected(StrategyScope.code, ctx.config.select, ctx.config.ignore):
        return set()
    if MARKER in text:
        ctx.suppress(find_suppressions(ctx.module))
    ctx.rule_code = StrategyScope.code
    plan = model_plan(ctx)
    made = set() if plan.has_ipu_strategy or as_is else {  # an existing IPU strategy: the port replaces none
        id(call) for call in plan.replaced_strategies if ctx.allowed(call)}
    made.update(id(call) for call in ctx.nodes(cst.Call) if ctx.qualified_name(call.func) in IPU_STRATEGIES)
    return made


def _strategy_owners(ctx: FileContext, made: Set[int]) -> Set[str]:
    """The module's functions that make an IPU strategy (as ported: ids ``made``) and enter its
    scope (``def compile_and_fit(build_fn, x, y): strategy = tf.distribute.MirroredStrategy();
    with strategy.scope(): model = build_fn() ...``): the model they build from a builder they
    are given is made in that scope, with the IPU configured there, so a caller's port puts no
    scope of its own around the call, which would nest a second strategy."""
    found = set()
    for function in ctx.nodes(cst.FunctionDef):
        nodes = list(walk(function)) if is_module_function(ctx, function) else []
        if any(id(node) in made for node in nodes) and any(
                isinstance(node, cst.WithItem) and isinstance(node.item, cst.Call)
                and isinstance(node.item.func, cst.Attribute) and node.item.func.attr.value == "scope"
                for node in nodes):
            found.add(function.name.value)
    return found


def _configuring(ctx: FileContext, factories: Set[str]) -> Set[str]:
    """The ``factories`` that configure the IPU system before they return its strategy (``def
    make_strategy(): cfg = ipu.config.IPUConfig(); ...; return ipu.ipu_strategy.IPUStrategy()``):
    a file that takes its strategy from one is configured, and a configuration of its own would
    be a second one."""
    return {function.name.value for function in ctx.nodes(cst.FunctionDef) if function.name.value in factories
            and is_module_function(ctx, function) and any(
                isinstance(node, cst.Call) and ctx.qualified_name(node.func) in IPU_CONFIG_MARKERS
                for node in walk(function))}


def _overriding_in(ctx: FileContext) -> Set[str]:
    """The names of the Keras model classes of the module ``ctx`` reads that override
    ``train_step`` (or a ``make_*_function``): a file of the project that trains one of them needs a
    strategy without the IPU Keras extensions (read when the files are ported together,
    ``porter.api.projects``)."""
    plan = model_plan(ctx)
    classes = (ctx.enclosing(hook, cst.ClassDef) for hook in plan.overridden_hooks)
    return {owner_class.name.value for owner_class in (*classes, *plan.library_bases) if owner_class is not None}
