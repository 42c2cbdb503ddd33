"""Where a Keras script builds and trains its model: the analysis behind IPU102 and IPU103.

The plan is computed once per file and shared by both rules:

- model variables: names assigned a Keras model (``keras.Sequential(...)``, ``keras.Model(...)``,
  ``load_model``, an instance of a ``keras.Model`` subclass of the file, or the result of a function
  of the file that returns one);
- regions: in the block that assigns a model variable, the statements from that assignment to the
  last statement that uses a model variable. ``with tf.device("/gpu:0")`` blocks and the scopes of
  other distribution strategies are transparent: they are unwrapped, and the region is taken in the
  block around them. A model assigned in a branch (``if``/``else``, ``try``) and used after it has
  its region in the block around the branches, so that they share one scope. A function that only
  builds and returns a model is not a region: its caller's scope covers it. A model created as the
  argument of a function of the file that trains it (``train(build())``) makes the statement of
  that call a region: it both creates and trains the model. So does a builder handed to a call
  that builds models with it (``kt.Hyperband(build_model, ...)``). A function that trains a model
  and returns it to callers that keep it (``model = run_experiment()``) runs in its callers' scope
  too, like a builder, and so does a builder kept in a dict or registered by a decorator
  (``MODELS[arch](...)``). A region starts at the model's layers, or earlier at a network made
  by a call the port does not know that the model code uses as one (``backbone.output``,
  ``backbone(inputs)``): its weights are the model's;
- later runs: a region grows to take in the statements that run its models afterwards (``predict``
  in a function called later, on an alias such as ``encoder = model.get_layer("encoder")``, on
  what a tuner built), and a function with model code of its own, called only where its caller
  has a region, runs in that region's scope: one strategy for the program;
- the anchor of each region: the statement of the function (or module) body that holds the region,
  where the IPU configuration and the strategy go, once, outside any loop.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Set, Tuple, Union

import libcst as cst

from porter.context import FileContext, SharedKey, bound_names, code_of, walk
from porter.markers import LOCAL_CELL_MAGIC
from porter.cstutil import argument, is_main_guard, is_name, keyword, single_small, string_value
from porter.rules.keras._analysis.functional import eager_host_call
from porter.rules.keras._analysis.held_models import (ADDERS, EXTENDERS, fills_collection, held_items, held_models,
                                                     keyword_dict, model_item)
from porter.rules.keras._analysis.steps import (  # custom loops (IPU111)
    evaluation_calls, made_with_variables, makes_stateful, method_step_calls, module_objects, module_stateful_objects,
    probes_model, reaches_models, scope_statements, step_calls, trained_names, trains, trains_in_loops)
from porter.rules.keras._analysis.util import (KERAS_LAYER_CLASSES, RUN_METHODS, clears_session, estimator_model_fns,
                                               host_only, keras_subclasses, library_subclass_definitions, model_holders,
                                               subclass_definitions)
from porter.scopes import (fresh_name, is_module_function, local_calls, parameter_names, project_callee, returned_local,
                           returns_of, values_of)

# A model rebuilt from its saved architecture (`to_json()`, `get_config()`), given its weights
# after (`load_weights`): new, and not compiled.
REBUILT_MODELS = frozenset({
    "keras.models.model_from_json", "keras.models.model_from_config", "keras.models.model_from_yaml",
    "keras.saving.model_from_json", "keras.Model.from_config", "keras.Sequential.from_config",
    "keras.models.Model.from_config", "keras.models.Sequential.from_config",
})
MODEL_CONSTRUCTORS = frozenset({
    "keras.Sequential", "keras.Model", "keras.models.Sequential", "keras.models.Model",
    "keras.models.load_model", "keras.saving.load_model", "keras.models.clone_model",
}) | REBUILT_MODELS
MODEL_BASES = frozenset({"keras.Model", "keras.models.Model", "keras.Sequential", "keras.models.Sequential"})
DISTRIBUTION_STRATEGIES = frozenset({
    "tensorflow.distribute.MirroredStrategy", "tensorflow.distribute.OneDeviceStrategy",
    "tensorflow.distribute.MultiWorkerMirroredStrategy", "tensorflow.distribute.get_strategy",
    "tensorflow.distribute.experimental.MultiWorkerMirroredStrategy",
    "tensorflow.distribute.experimental.CentralStorageStrategy",
    "tensorflow.distribute.experimental.ParameterServerStrategy",
    "tensorflow.distribute.CentralStorageStrategy",
    "tensorflow.distribute.TPUStrategy", "tensorflow.distribute.experimental.TPUStrategy",
})
# Set-up of a TPU system, which an IPU system does not have: reported where the strategy is replaced.
TPU_SETUP = frozenset({
    "tensorflow.distribute.cluster_resolver.TPUClusterResolver", "tensorflow.config.experimental_connect_to_cluster",
    "tensorflow.tpu.experimental.initialize_tpu_system",
    "tensorflow.distribute.cluster_resolver.TPUClusterResolver.connect",
})
# What enters a strategy's scope for the rest of the program: its argument is the program's strategy.
GLOBAL_STRATEGY_SETTERS = frozenset({"tensorflow.distribute.experimental_set_strategy"})
IPU_STRATEGIES = frozenset({
    "tensorflow.python.ipu.ipu_strategy.IPUStrategy", "tensorflow.python.ipu.ipu_strategy.IPUStrategyV1",
})
IPU_CONFIG_MARKERS = frozenset({
    "tensorflow.python.ipu.config.IPUConfig", "tensorflow.python.ipu.utils.IPUConfig",
    "tensorflow.python.ipu.config.configure_ipu_system", "tensorflow.python.ipu.utils.create_ipu_config",
    "tensorflow.python.ipu.utils.configure_ipu_system",
})
# Calls that run a model: a function that makes them is where the model is used, not a builder.
RUNNING_METHODS = frozenset({
    "fit", "evaluate", "predict", "fit_generator", "evaluate_generator", "predict_generator",
    "train_on_batch", "test_on_batch", "predict_on_batch",
})
# Keyword arguments only Keras' fit/evaluate/predict take: a call with one trains a Keras model
# whatever its receiver is called (sklearn's `fit(X, y)` takes none of them).
# (Not `verbose` or `callbacks`: gradient-boosting libraries' `fit` takes those too.)
KERAS_KEYWORDS = frozenset({"epochs", "batch_size", "validation_data", "validation_split",
                            "steps_per_epoch", "validation_steps", "initial_epoch"})
# Model methods whose override IPUStrategy's Keras extensions refuse (Targeting the IPU from
# TensorFlow 2, "Keras with IPUs").
OVERRIDING_LIBRARIES = ("transformers.",)
# Keras' own premade models that override `train_step`: the wide & deep model trains its linear
# and deep parts with an optimizer each.
OVERRIDING_KERAS_MODELS = frozenset({"keras.experimental.WideDeepModel", "keras.premade.WideDeepModel"})
# Library base classes that override `train_step` and `test_step` to train with the `compute_loss`
# their subclasses write: TensorFlow Recommenders' `tfrs.Model`.
OVERRIDING_BASES = ("tensorflow_recommenders.Model", "tensorflow_recommenders.models.Model",
                    "tensorflow_recommenders.models.base.Model")
# What makes a layer, or a stack of them, that the tf.data pipeline may run on the host.
# Attributes of a Keras model or layer: a name read or set through them holds a network.
_NETWORK_ATTRIBUTES = frozenset({"input", "inputs", "output", "outputs", "get_layer", "trainable",
                                 "trainable_variables", "trainable_weights", "non_trainable_weights"})
_LAYER_MAKERS = ("keras.layers.", "keras.Sequential", "keras.models.Sequential")
# Preprocessing layers fitted to data (`adapt`) whose state a model need not hold.
_HOST_PREPROCESSING = frozenset({"StringLookup", "IntegerLookup", "Normalization", "TextVectorization", "Hashing",
                                 "Discretization", "CategoryEncoding"})
# The arguments of Keras' own `Model.compile` (Keras 2.x): any other one is read by an override.
KERAS_COMPILE_KEYWORDS = frozenset({
    "optimizer", "loss", "metrics", "loss_weights", "weighted_metrics", "run_eagerly", "steps_per_execution",
    "jit_compile", "pss_evaluation_shards", "sample_weight_mode", "target_tensors", "distribute",
    "experimental_run_tf_function", "auto_scale_loss"})
_KERAS_PREFIXES = ("keras.", "tensorflow.", "tf_keras.", "transformers.")
OVERRIDDEN_HOOKS = ("train_step", "make_train_function", "make_test_function", "make_predict_function")

Block = Union[cst.Module, cst.IndentedBlock]
# Code that runs when called, not where it is written.
_CODE_ELSEWHERE = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
# Statements a model assigned inside is not lifted out of: a loop makes one model per iteration.
_LOOPS = (cst.For, cst.While)
# What code reads of a strategy without using it to place or run anything, and the builtins that
# only look at a value (``print(strategy)``, ``type(strategy).__name__``).
_STRATEGY_QUERIES = frozenset({"num_replicas_in_sync"})
_INSPECTING_BUILTINS = frozenset({"print", "type", "isinstance", "str", "repr", "format"})

# What runs the code in it any number of times: loops and comprehensions.
_REPEATING = _LOOPS + (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)

# How far up the chain of callers a run of the model is followed to the statement that leads to it.
_DEPTH = 4

_MODEL_PLAN: SharedKey["Plan"] = SharedKey("keras-model-plan")
_CALLS_BY_NAME: SharedKey[Dict[str, List[cst.Call]]] = SharedKey("keras-calls-by-name")


@dataclass
class Region:
    block: Block
    first: cst.BaseStatement
    last: cst.BaseStatement
    anchor: cst.BaseStatement  # statement of the function/module body before which set-up goes
    # Where the IPU configuration goes instead, when the region's function is called repeatedly
    # (a fold of a k-fold loop): once, before those calls.
    config_anchor: Optional[cst.BaseStatement] = None


@dataclass
class Plan:
    regions: List[Region] = field(default_factory=list)
    transparent: List[cst.With] = field(default_factory=list)  # device/strategy scopes to unwrap
    unsafe_withs: List[cst.With] = field(default_factory=list)  # GPU scopes that cannot be unwrapped
    replaced_strategies: List[cst.Call] = field(default_factory=list)
    strategy_statement: Optional[cst.BaseStatement] = None  # an existing strategy assignment
    # The other assignments of the strategy of that name when each function with model code binds
    # its own (``strategy = get_strategy()`` in ``train()`` and in ``evaluate()``): each is the
    # strategy of the model code after it, configured before it like ``strategy_statement``.
    more_strategy_statements: List[cst.BaseStatement] = field(default_factory=list)
    # Per id of one of those statements in a function called repeatedly (a fold's ``run_fold``):
    # where its IPU configuration goes instead, once, before those calls.
    strategy_config_anchors: Dict[int, cst.BaseStatement] = field(default_factory=dict)
    strategy_name: str = "strategy"
    # The function of the file that makes the program's strategy when the program only enters its
    # scope (``with get_strategy().scope():``): the strategy the port makes (with no
    # ``strategy_statement``) is made by calling it.
    strategy_factory: Optional[str] = None
    # Where a class makes the strategy it owns when model code out of the class gets the port's own
    # IPU strategy: two strategies, which cannot nest (the audit reports it).
    second_strategies: List[cst.BaseStatement] = field(default_factory=list)
    has_ipu_strategy: bool = False
    configured: bool = False
    overridden_hooks: List[cst.FunctionDef] = field(default_factory=list)
    # Models of libraries whose classes override `train_step` (Hugging Face Transformers' TF models).
    library_overrides: List[cst.Call] = field(default_factory=list)
    # Classes of the file deriving from such a library base class (`class Ranker(tfrs.Model)`).
    library_bases: List[cst.ClassDef] = field(default_factory=list)
    # `gan.compile(d_optimizer=..., g_optimizer=..., loss_fn=...)` of a model whose class another
    # module defines: what says that class overrides `train_step` (the class of another file of the
    # project that does, or a `compile` with arguments Keras' own does not take), by compile call.
    imported_overrides: List[Tuple[cst.Call, str]] = field(default_factory=list)
    # Every assignment of a Keras model in the file (also in builder functions), and the names bound.
    model_assignments: List[cst.Assign] = field(default_factory=list)
    model_names: Set[str] = field(default_factory=set)
    compiled_names: Set[str] = field(default_factory=set)  # names whose `.compile(...)` the file calls
    builders: Set[str] = field(default_factory=set)  # functions of the file that return a model
    model_classes: Set[str] = field(default_factory=set)  # Keras model classes of the file
    # Names that hold a model or a part of one (aliases included), and names that hold an object
    # that builds and trains models with a builder of the file (a tuner): what runs them is model code.
    model_like: Set[str] = field(default_factory=set)
    holders: Set[str] = field(default_factory=set)
    # Names bound to what a function that makes and enters a strategy of its own returns, by the
    # function's name (``model`` of ``model, history = compile_and_fit(build_model, x, y)``): a model
    # built in that function's IPU strategy, which only that scope may run.
    own_scope_models: Dict[str, str] = field(default_factory=dict)
    # Lists and dicts whose items are models (``models[0].evaluate(...)`` runs one).
    model_collections: Set[str] = field(default_factory=set)
    # Assignments, in a block around a function's model code, of a network that code builds its
    # model on (``backbone = make_backbone()`` at module level): its weights are made where it runs.
    outer_networks: List[cst.Assign] = field(default_factory=list)
    # Ids of the calls by which the methods of the class that owns the program's strategy run the
    # models its instance keeps (``self.net.evaluate(x, y)``): model runs, in that strategy's scope.
    instance_runs: Set[int] = field(default_factory=set)
    # Ids of the calls that make a model run in the same expression (``build(width).fit(x, y)``).
    chained_models: Set[int] = field(default_factory=set)


def _metric_object(keras_name: str) -> bool:
    """``keras.metrics.AUC(name="auc")``: a metric object, whose variables Keras refuses in
    ``compile`` when they were made under another strategy (or none)."""
    return keras_name.startswith("keras.metrics.") and keras_name.rpartition(".")[2][:1].isupper()


def _pretrained_layer(qualified: Optional[str]) -> bool:
    """``hub.KerasLayer(url)``, ``keras_hub.models.Backbone.from_preset(...)``,
    ``TFAutoModel.from_pretrained(...)``: a layer or network other libraries make with weights."""
    if qualified is None:
        return False
    if qualified in _PRETRAINED_LAYERS:
        return True
    method = qualified.rsplit(".", 1)[-1]
    return (method == "from_preset" and qualified.startswith(("keras_hub.", "keras_nlp.", "keras_cv."))
            or method == "from_pretrained" and qualified.startswith("transformers.TF"))


def _hugging_face_model(qualified: Optional[str]) -> bool:
    """``TFAutoModelForSequenceClassification.from_pretrained(...)``: a whole Keras model of
    Transformers (its TF classes), which the file may run (``predict``, ``model(inputs)``) without
    compiling it."""
    return qualified is not None and qualified.startswith(OVERRIDING_LIBRARIES) \
        and qualified.rsplit(".", 2)[-2][:2] == "TF" and qualified.endswith(".from_pretrained")


_PRETRAINED_LAYERS = frozenset({"tensorflow_hub.KerasLayer", "tensorflow_hub.keras_layer.KerasLayer"})


def library_network(ctx, node: cst.BaseExpression) -> bool:
    """``node`` makes a whole network, from a library, that a model uses as one layer: a TF Hub
    layer, a Keras application (``keras.applications.ResNet50(...)``), a preset or a Hugging Face model."""
    if not isinstance(node, cst.Call):
        return False
    return is_application(ctx.keras_name(node.func) or "") or _pretrained_layer(ctx.qualified_name(node.func))


def global_strategy_setter(ctx, strategy: cst.BaseExpression) -> Optional[cst.Call]:
    """The call of ``tf.distribute.experimental_set_strategy`` whose argument is ``strategy``, else None."""
    arg = ctx.parent(strategy)
    call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    if isinstance(call, cst.Call) and without_compat(ctx.qualified_name(call.func)) in GLOBAL_STRATEGY_SETTERS:
        return call
    return None


def made_distribution_strategy(ctx: FileContext, node: cst.BaseExpression) -> bool:
    """``node`` makes a strategy of ``tf.distribute`` in place (``tf.distribute.MirroredStrategy()``
    given to a Keras Tuner), which the port replaces by the IPU strategy."""
    return isinstance(node, cst.Call) and without_compat(ctx.qualified_name(node.func)) in DISTRIBUTION_STRATEGIES


def without_compat(qualified: Optional[str]) -> Optional[str]:
    """``tensorflow.compat.v1.distribute.X`` -> ``tensorflow.distribute.X``: the same strategies
    under the ``compat`` aliases (``import tensorflow.compat.v1 as tf``)."""
    for prefix in ("tensorflow.compat.v1.", "tensorflow.compat.v2."):
        if qualified is not None and qualified.startswith(prefix):
            return "tensorflow." + qualified[len(prefix):]
    return qualified


def _binds_on_every_path(compound: cst.BaseCompoundStatement, name: str) -> bool:
    """A ``try`` whose body and every handler assign ``name``, or an ``if`` whose every branch does."""
    if isinstance(compound, cst.Try):
        return _assigns(compound.body, name) and bool(compound.handlers) and all(
            _assigns(handler.body, name) for handler in compound.handlers)
    if isinstance(compound, cst.If):
        orelse = compound.orelse
        if orelse is None or not _assigns(compound.body, name):
            return False
        return _binds_on_every_path(orelse, name) if isinstance(orelse, cst.If) else _assigns(orelse.body, name)
    return False


def _assigns(block: cst.BaseSuite, name: str) -> bool:
    """Whether ``block`` assigns ``name`` a strategy: ``strategy = None`` (``else: strategy = None``
    when no GPU is found, the branch an IPU system takes) leaves no strategy to enter."""
    return any(isinstance(node, cst.Assign) and not is_name(node.value, "None")
               and any(name in bound_names(target.target) for target in node.targets)
               for node in walk(block, skip=_CODE_ELSEWHERE))


def _part_of(value: cst.BaseExpression) -> Optional[str]:
    """The name at the root of ``value`` when it is what that name holds or a part of it: the name,
    attributes, items and method calls (``trainer.model``, ``model.get_layer("x")``), not a call that runs
    or compiles a model (its result is data or a history)."""
    node = value
    while True:
        if isinstance(node, cst.Call):
            if not isinstance(node.func, cst.Attribute) or node.func.attr.value in RUNNING_METHODS | {"compile"}:
                return None
            node = node.func
        elif isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
        elif isinstance(node, cst.Name):
            return node.value
        else:
            return None


def is_gpu_device(ctx: FileContext, call: cst.CSTNode) -> bool:
    """``tf.device("/gpu:0")``, ``tf.device("/device:GPU:0")``, ``tf.device("GPU")``..."""
    if not isinstance(call, cst.Call) or ctx.qualified_name(call.func) not in (
        "tensorflow.device", "tensorflow.compat.v1.device"
    ):
        return False
    return bool(call.args) and _names_gpu(ctx, call.args[0].value)


def gpu_number(ctx: FileContext, call: cst.CSTNode) -> Optional[int]:
    """The number of the GPU a device scope names in a literal (``tf.device("/gpu:1")`` is 1,
    ``"/device:GPU:0"`` 0); None for another device, a bare ``"GPU"`` or a string made at run time."""
    if not is_gpu_device(ctx, call):
        return None
    found = _GPU_NUMBER.search(string_value(call.args[0].value) or "")
    return int(found.group(1)) if found else None


_GPU_NUMBER = re.compile(r"gpu:(\d+)\s*$", re.IGNORECASE)


def _names_gpu(ctx: FileContext, device: cst.BaseExpression, follow: bool = True) -> bool:
    """A device string that names a GPU: a literal, a choice of one (``"/gpu:0" if gpus else
    "/cpu:0"``, the GPU when there is one), the name of the GPU TensorFlow found (Colab's
    ``device_name = tf.test.gpu_device_name()``), or a variable only ever given such values
    (``DEVICE = "/GPU:0"``)."""
    text = string_value(device)
    if text is not None:
        return "gpu" in text.lower()
    if isinstance(device, cst.Call):
        return ctx.qualified_name(device.func) == "tensorflow.test.gpu_device_name"
    if isinstance(device, cst.IfExp):
        return _names_gpu(ctx, device.body, follow) or _names_gpu(ctx, device.orelse, follow)
    if isinstance(device, cst.Name) and follow:
        values = [assign.value for assign in ctx.nodes(cst.Assign) if any(
            device.value in bound_names(target.target) and isinstance(target.target, cst.Name)
            for target in assign.targets)]
        return bool(values) and all(_names_gpu(ctx, value, follow=False) for value in values)
    return False


# Calls that run the function they are given once for each item (or return one that will).
# Calls that run the function handed to them any number of times: mappers, and the searches of
# hyperparameter libraries that run an objective per trial (Optuna, Hyperopt, scikit-optimize).
_MAPPERS = frozenset({"map", "starmap", "imap", "imap_unordered", "partial",
                      "optimize", "fmin", "gp_minimize", "forest_minimize", "gbrt_minimize"})


def _maps(call: cst.CSTNode) -> bool:
    """``map(train, widths)``, ``pool.starmap(train, ...)``, ``partial(train, x)``,
    ``study.optimize(objective, n_trials=20)``."""
    func = call.func if isinstance(call, cst.Call) else None
    name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
    return name in _MAPPERS


def _looked_up_in(func: cst.BaseExpression) -> Optional[str]:
    """``MODELS`` for a callee taken out of a dict or list by name: ``MODELS[arch]``,
    ``MODELS.get(arch)``."""
    if isinstance(func, cst.Subscript) and isinstance(func.value, cst.Name):
        return func.value.value
    if (isinstance(func, cst.Call) and isinstance(func.func, cst.Attribute) and func.func.attr.value == "get"
            and isinstance(func.func.value, cst.Name)):
        return func.func.value.value
    return None


def _subscript_targets(function: cst.FunctionDef) -> Set[str]:
    """Names that ``function`` (or a function in it) assigns an item of: ``REGISTRY[name] = fn``."""
    return {target.target.value.value for node in walk(function) if isinstance(node, cst.Assign)
            for target in node.targets if isinstance(target.target, cst.Subscript)
            and isinstance(target.target.value, cst.Name)}


def gives_strategy(function: cst.FunctionDef, value: cst.BaseExpression, made: Set[int],
                   followed: FrozenSet[str] = frozenset()) -> bool:
    """Whether ``value``, returned by ``function``, is one of the strategies ``made``: one of
    them, both branches of ``a if c else b``, or a local name (not a parameter: the caller's
    strategy) every assignment of ``function`` binds to one (``strategy = TPUStrategy(tpu)`` in
    ``try``, ``strategy = MirroredStrategy()`` in ``except``)."""
    if isinstance(value, cst.Call):
        return id(value) in made
    if isinstance(value, cst.IfExp):
        return gives_strategy(function, value.body, made, followed) and gives_strategy(
            function, value.orelse, made, followed)
    if not isinstance(value, cst.Name) or value.value in followed or value.value in parameter_names(function):
        return False
    bound = [node for node in walk(function.body, skip=(cst.FunctionDef, cst.Lambda, cst.ClassDef))
             if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.AsName, cst.NamedExpr))
             and value.value in _bound_by(node)]
    return bool(bound) and all(isinstance(node, cst.Assign) and gives_strategy(
        function, node.value, made, followed | {value.value}) for node in bound)


def _bound_by(node: cst.CSTNode) -> Set[str]:
    """The names an assignment, a ``for`` target, an ``as`` or a ``:=`` binds."""
    if isinstance(node, cst.Assign):
        return {name for target in node.targets for name in bound_names(target.target)}
    if isinstance(node, cst.For):
        return set(bound_names(node.target))
    if isinstance(node, cst.AsName):
        return set(bound_names(node.name))
    return set(bound_names(node.target))


def _parameter_of(owner_class: cst.ClassDef, construction: cst.Call, arg: cst.Arg) -> Optional[str]:
    """The parameter of ``owner_class``'s ``__init__`` that ``arg`` of ``construction`` binds."""
    init = next((node for node in owner_class.body.body
                 if isinstance(node, cst.FunctionDef) and node.name.value == "__init__"), None)
    if init is None or arg.star:
        return None
    if arg.keyword is not None:
        return arg.keyword.value
    params = init.params.params[1:]  # after `self`
    index = [candidate for candidate in construction.args if candidate.keyword is None].index(arg)
    return params[index].name.value if index < len(params) else None


def _uses_given_strategy(owner_class: cst.ClassDef, parameter: Optional[str]) -> bool:
    """Whether ``owner_class`` enters the scope of the strategy its ``__init__`` is given as
    ``parameter``, or runs steps through it, directly or as the attribute it keeps it in
    (``self.strategy = strategy``)."""
    if parameter is None:
        return False
    kept = {target.target.attr.value for node in walk(owner_class) if isinstance(node, cst.Assign)
            and is_name(node.value, parameter) for target in node.targets
            if isinstance(target.target, cst.Attribute) and is_name(target.target.value, "self")}
    for node in walk(owner_class):
        if isinstance(node, cst.Attribute) and node.attr.value in ("scope", *RUN_METHODS):
            holder = node.value
            if is_name(holder, parameter) or (isinstance(holder, cst.Attribute) and holder.attr.value in kept
                                              and is_name(holder.value, "self")):
                return True
    return False


def _single_item(with_node: cst.With) -> Optional[cst.Call]:
    if len(with_node.items) != 1 or with_node.items[0].asname is not None:
        return None
    item = with_node.items[0].item
    return item if isinstance(item, cst.Call) else None


def _entered_receiver(with_node: cst.With) -> cst.BaseExpression:
    """What a device or strategy scope the port replaces enters: ``tf`` of ``tf.device(...)``,
    ``strategy`` of ``strategy.scope()``, also as the branch of ``strategy.scope() if gpus else
    nullcontext()`` that enters one."""
    item = with_node.items[0].item
    if isinstance(item, cst.IfExp):
        item = item.body if isinstance(item.body, cst.Call) and isinstance(item.body.func, cst.Attribute) and (
            item.body.func.attr.value == "scope") else item.orelse
    return item.func.value


def is_keras_run(call: cst.Call) -> bool:
    """``x.fit(...)``, ``x.predict(...)``... with an argument only Keras takes."""
    return (isinstance(call.func, cst.Attribute) and call.func.attr.value in RUNNING_METHODS
            and any(keyword(call, name) is not None for name in KERAS_KEYWORDS))


def project_trained_arguments(ctx: FileContext, call: cst.Call, trains: bool = False) -> List[cst.Arg]:
    """The arguments of ``call`` that it runs as models, when it calls a function of another module
    of the project that runs those parameters (``train_model(model, ds)`` after ``from trainer
    import train_model``, or ``trainer.train_model(model, ds)``; ``porter.project``); with
    ``trains``, only those it compiles or trains with an argument only Keras takes."""
    if not ctx.project.trainers:
        return []
    name = ctx.project_function(call.func)
    found = (argument(call, param, position) for trainer, param, position, compiled in ctx.project.trainers
             if trainer == name and (compiled or not trains))
    return [arg for arg in found if arg is not None and not arg.star]


def is_application(keras_name: str) -> bool:
    """A pre-trained network of ``keras.applications`` (``ResNet50``, ``applications.efficientnet.
    EfficientNetB0``): a class, capitalised, unlike the module's ``preprocess_input`` functions."""
    return keras_name.startswith("keras.applications.") and keras_name.rsplit(".", 1)[-1][:1].isupper()


def runs_model(call: cst.Call, plan: Plan) -> bool:
    """Whether ``call`` compiles or runs a model: ``fit``/``evaluate``/``predict``... or
    ``compile(...)`` on a name that holds one (or a part of one) or on an item of a list of them
    (``models[0]``), any method of a tuner given a builder (``tuner.search(...)``), or a call with
    an argument only Keras' methods take."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return False
    if is_keras_run(call):
        return True
    receiver = func.value.value if isinstance(func.value, cst.Name) else None
    if receiver in plan.holders:
        return True
    return (receiver in plan.model_like or model_item(func.value, plan.model_collections)) and (
        func.attr.value in RUNNING_METHODS or func.attr.value == "compile" and bool(call.args))


def is_self_call(call: cst.Call, method: cst.FunctionDef) -> bool:
    """``self.<method>(...)``: a call of ``method`` by the instance, in its class."""
    return (isinstance(call.func, cst.Attribute) and is_name(call.func.value, "self")
            and call.func.attr.value == method.name.value)


def in_model_class(ctx: FileContext, function: cst.FunctionDef, model_classes: Set[str]) -> bool:
    """Whether ``function`` is a method of one of the Keras model classes ``model_classes``."""
    owner = ctx.enclosing(function, cst.ClassDef)
    return owner is not None and owner.name.value in model_classes


def in_region(ctx: FileContext, region: Region, node: cst.CSTNode) -> bool:
    """Whether ``node`` is in the statements of ``region`` (nested blocks included)."""
    body = list(region.block.body)
    for candidate in (node, *ctx.ancestors(node)):
        if isinstance(candidate, cst.BaseStatement) and ctx.block_of(candidate) is region.block:
            return body.index(region.first) <= body.index(candidate) <= body.index(region.last)
    return False


def _keyed_in(target: cst.BaseExpression) -> List[str]:
    """``[models]`` for the target ``models[name]`` (one item of a variable); else nothing."""
    if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
        return [target.value.value]
    return []


def in_regions(ctx: FileContext, regions: List[Region], node: cst.CSTNode) -> bool:
    """Whether ``node`` is in the statements of one of ``regions``."""
    return any(in_region(ctx, region, node) for region in regions)


def setup_anchors(ctx: FileContext, plan: Plan) -> List[cst.BaseStatement]:
    """Where the strategy goes: the regions' anchors, the first one of each block only (one after
    it in the same block runs later, when it is made already)."""
    return [_out_of_local_cell(ctx, anchor) for anchor in _first_per_block(ctx, [region.anchor for region in plan.regions])]


def config_anchors(ctx: FileContext, plan: Plan) -> List[cst.BaseStatement]:
    """Where the IPU configuration goes: as the strategy, but before the calls of a function
    called repeatedly that has a region of its own (``config_anchor``), so that the IPU system is
    configured once."""
    anchors = _first_per_block(ctx, [region.config_anchor or region.anchor for region in plan.regions])
    return [_out_of_local_cell(ctx, anchor) for anchor in anchors]


def _out_of_local_cell(ctx: FileContext, anchor: cst.BaseStatement) -> cst.BaseStatement:
    """``anchor``, or the marker of its notebook cell when that cell runs under ``%%timeit``,
    which keeps none of the names the cell binds: the configuration and its strategy then go at
    the end of the cell before, where the cells after it can use them."""
    if not ctx.barriers:
        return anchor
    top = anchor
    for ancestor in ctx.ancestors(anchor):
        if isinstance(ancestor, cst.BaseStatement):
            top = ancestor
    body = list(ctx.module.body)
    if top not in body:
        return anchor
    index = body.index(top)
    marker = next((index for index in range(index, -1, -1) if id(body[index]) in ctx.barriers), None)
    if marker is None or marker == 0 or marker + 1 >= len(body):
        return anchor  # the first cell has no cell before it
    first = body[marker + 1]
    if any(line.comment is not None and line.comment.value.strip() == LOCAL_CELL_MAGIC
           for line in first.leading_lines):
        return body[marker]
    return anchor


def _first_per_block(ctx: FileContext, anchors: List[cst.BaseStatement]) -> List[cst.BaseStatement]:
    first: Dict[int, cst.BaseStatement] = {}
    for anchor in anchors:
        block = ctx.block_of(anchor)
        key = id(block) if block is not None else id(anchor)
        current = first.get(key)
        if current is None or (block is not None and block.body.index(anchor) < block.body.index(current)):
            first[key] = anchor
    return list(first.values())


def calls_by_name(ctx: FileContext) -> Dict[str, List[cst.Call]]:
    """The calls of the file by the name they call: ``f(...)`` and ``x.f(...)`` (a method is
    called through any receiver)."""
    def find() -> Dict[str, List[cst.Call]]:
        found: Dict[str, List[cst.Call]] = {}
        for call in ctx.nodes(cst.Call):
            func = call.func
            name = func.value if isinstance(func, cst.Name) else (
                func.attr.value if isinstance(func, cst.Attribute) else None)
            if name is not None:
                found.setdefault(name, []).append(call)
        return found

    return ctx.shared(_CALLS_BY_NAME, find)


def calls_of_method(ctx: FileContext, method: cst.FunctionDef) -> List[cst.Call]:
    """The calls ``x.<name>(...)`` of the method ``method`` of a class, through any receiver, out of
    the method itself; not those its class makes on an attribute of its instance: in ``class
    Trainer``, ``self.model.fit(...)`` is the Keras model's method, not ``Trainer.fit``."""
    owner_class = ctx.enclosing(method, cst.ClassDef)
    return [call for call in calls_by_name(ctx).get(method.name.value, ())
            if isinstance(call.func, cst.Attribute) and not any(ancestor is method for ancestor in ctx.ancestors(call))
            and not (isinstance(call.func.value, cst.Attribute) and is_name(call.func.value.value, "self")
                     and ctx.enclosing(call, cst.ClassDef) is owner_class)]


def model_plan(ctx: FileContext) -> Plan:
    return ctx.shared(_MODEL_PLAN, lambda: _Analysis(ctx).plan())


def keras_extensions_off(ctx: FileContext) -> Optional[str]:
    """Why the port's strategy is ``IPUStrategy(enable_keras_extensions=False)`` (IPU103), or None:
    a model class of the file overrides ``train_step`` (or a ``make_*_function``), or a library
    model does. Every model of that strategy loses the IPU Keras extensions: their methods
    (pipelining, gradient accumulation), their replication and the float64 cast of the data."""
    plan = model_plan(ctx)
    if plan.overridden_hooks:
        hook = plan.overridden_hooks[0]
        owner = ctx.enclosing(hook, cst.ClassDef)
        where = f"`{owner.name.value}.{hook.name.value}`" if owner is not None else f"`{hook.name.value}`"
        return f"{where} is overridden"
    if plan.library_overrides:
        return f"`{code_of(ctx, plan.library_overrides[0].func)}` makes a model that overrides `train_step`"
    if plan.library_bases:
        return f"`{plan.library_bases[0].name.value}` derives from a library model that overrides `train_step`"
    if plan.imported_overrides:
        return plan.imported_overrides[0][1]
    return None


class _Analysis:
    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.plan_ = Plan()
        self.model_classes: Set[str] = set()
        self.layer_classes: Set[int] = set()  # ids of the file's subclasses of Keras layers
        self.builders: Set[str] = set()  # functions of the file that return a model
        # Functions of the file that train a model and return it to callers that keep it
        # (``model = run_experiment()``): their callers' scope covers them, as it covers builders.
        self.returners: Set[str] = set()
        # Ids of the methods of plain classes that return a model and that only the class calls
        # (``model = self._make_model()`` in ``train``): like builders, they run in their caller's scope.
        self.builder_methods: Set[int] = set()
        # Module functions that make a model into a ``global`` name the file calls (``def build():
        # global model; model = ...``), then trained by other functions: like builders, they run in
        # their caller's scope, whose calls of them make the model.
        self.global_makers: Set[str] = set()
        # Functions of the file that compile or train a model passed to them: name -> the
        # trained parameters (name -> position), and the functions by name.
        self.trainers: Dict[str, Dict[str, int]] = {}
        self._functions: Dict[str, cst.FunctionDef] = {}
        # The module's functions and the nested ones of a name of their own, that may be trainers.
        self._trainer_functions: Dict[str, cst.FunctionDef] = {}
        self.strategy_vars: Set[str] = set()
        # Functions of the file whose strategy the program only enters (``with get_strategy().scope():``).
        self.scoped_factories: Set[str] = set()
        self._project_strategy = False  # a strategy from a function of another file of the project
        self._project_configured = False  # ... from one that configures the IPU system first
        self.owned_strategies: Dict[str, List[cst.BaseStatement]] = {}  # per class: where it makes its strategy
        self._owned_calls: List[cst.Call] = []  # the strategy constructions those classes keep
        # Every assignment of a strategy to a name of the program, and that name, in source order.
        self._strategy_bindings: List[Tuple[cst.BaseStatement, str]] = []
        # Per class given the strategy a function of the file makes (``Trainer(get_strategy())``):
        # the class and the statement that calls that function.
        self.given_strategies: Dict[str, Tuple[cst.ClassDef, cst.BaseStatement]] = {}
        self._assignments: List[cst.Assign] = []
        self._assignments_key: Tuple[int, int, int] = (-1, -1, -1)
        self._block_code: Dict[int, List[Tuple[cst.BaseStatement, cst.CSTNode]]] = {}
        self._variables: Dict[int, Set[str]] = {}
        self._variables_key: Tuple[int, int, int] = (-1, -1, -1)
        self._grouped: Dict[type, Dict[int, List[cst.CSTNode]]] = {}
        self._compiled: Optional[Dict[int, Set[str]]] = None
        self._handovers: Optional[Dict[str, List[cst.Call]]] = None
        self._host: Optional[Set[str]] = None  # layers only the tf.data pipeline runs
        self._names: Optional[Dict[str, int]] = None
        self._model_fns: Optional[Set[str]] = None  # functions handed to an Estimator
        self._tables: Set[str] = set()  # dicts and lists of builders (``MODELS[arch](...)``)
        self._tables_key = -1

    def plan(self) -> Plan:
        ctx, plan = self.ctx, self.plan_
        self._find_model_classes()
        self._find_library_overrides()
        plan.library_bases = library_subclass_definitions(ctx, *OVERRIDING_BASES)
        self._find_imported_overrides()
        self._find_strategies()
        plan.configured = self._project_configured or any(
            ctx.qualified_name(call.func) in IPU_CONFIG_MARKERS for call in ctx.nodes(cst.Call)
        )
        # The IPU configured, and the strategy a function of the project gives is an IPU strategy
        # (``_from_project_factory``): a ported program, as one that makes its ``IPUStrategy``.
        plan.has_ipu_strategy = plan.has_ipu_strategy or plan.configured and self._project_strategy
        self._find_trainers()
        self._find_builders()
        self._find_returners()
        self._find_builder_methods()
        self._find_global_makers()
        self._keep_scoped_lookups()
        plan.builders = set(self.builders)
        plan.model_classes = set(self.model_classes)
        plan.model_assignments = list(self._model_assignments())
        plan.compiled_names = set().union(*self._compiled_names().values())
        plan.model_names = {name for assign in plan.model_assignments for target in assign.targets
                            for name in bound_names(target.target)}
        plan.model_like, plan.holders, plan.model_collections = self._model_like_names()
        self._find_transparent_withs()
        if not plan.has_ipu_strategy:
            self._find_regions()
            self._set_up_before_branches()
            self._configure_before_repeated_calls()
            self._configure_before_caller_strategy()
            self._configure_before_sibling_calls()
            self._use_owned_strategy()
            if plan.strategy_statement is not None:
                self._choose_binding()
            self._use_given_strategy()
            self._configure_strategies_once()
        return plan

    def _configure_strategies_once(self) -> None:
        """A strategy of the program made in a function called repeatedly (``strategy =
        tf.distribute.MirroredStrategy()`` in ``run_fold``, called per fold) would configure the
        IPU system on every call: its configuration goes before the first of those calls, out of
        any loop (the strategy stays in the function)."""
        plan = self.plan_
        for statement in filter(None, [plan.strategy_statement, *plan.more_strategy_statements]):
            function = self.ctx.enclosing_function(statement)
            repeated = self._repeated_calls(function) if function is not None else None
            if repeated:
                block = repeated[0][0]
                plan.strategy_config_anchors[id(statement)] = self._anchor(
                    min((top for _, top in repeated), key=block.body.index))

    def _choose_binding(self) -> None:
        """The first assignment of the program's strategy (the first found, then the others in
        source order) that every region's model code runs after, or is given as a parameter: the
        strategy of ``main()``, not the one a builder called from it gets. When none is, the port
        makes its own where the model code starts (named as the first)."""
        plan = self.plan_
        first = (plan.strategy_statement, plan.strategy_name)
        for statement, name in [first] + [binding for binding in self._strategy_bindings if binding[0] is not first[0]]:
            plan.strategy_statement, plan.strategy_name = self._binding_statement(statement, name), name
            if all(self._bound_before(plan.strategy_statement, region.anchor)
                   or self._bound_in_instance(plan.strategy_statement, name, region.anchor)
                   or self._given_the_strategy(self._function_of(region.block), _DEPTH) for region in plan.regions):
                return
        plan.strategy_statement, plan.strategy_name = None, first[1]  # too late for some model code
        per_region = self._binding_per_region(first[1])
        if per_region:
            plan.strategy_statement, plan.more_strategy_statements = per_region[0], per_region[1:]

    def _binding_per_region(self, name: str) -> List[cst.BaseStatement]:
        """The bindings of the program's strategy ``name`` when each region's model code runs after
        one of its own (``strategy = get_strategy()`` at the top of ``train()`` and again of
        ``evaluate()``): in source order, each that a region runs after, once; empty when some
        region runs after none. Each becomes that region's IPU strategy, configured before it: one
        strategy per region, and no other made beside it."""
        bindings = [self._binding_statement(statement, bound) for statement, bound in self._strategy_bindings
                    if bound == name]
        used: Dict[int, cst.BaseStatement] = {}
        for region in self.plan_.regions:
            found = [binding for binding in bindings if self._bound_before(binding, region.anchor)]
            if not found:
                return []
            used[id(found[-1])] = found[-1]
        return [binding for binding in bindings if id(binding) in used]

    def _use_owned_strategy(self) -> None:
        """A class of the file that owns the program's one strategy (``_owning_class``), with no
        model code out of the class: the IPU is configured where the class makes its strategy,
        which becomes the IPU strategy and stays the program's only one."""
        plan = self.plan_
        owned = [statement for statements in self.owned_strategies.values() for statement in statements]
        # Every strategy the program makes is the one the class keeps (the branches of the function
        # of the file it calls for it count once: one of them runs).
        if len(owned) != 1 or len(self._owned_calls) != len(plan.replaced_strategies) \
                or plan.strategy_statement is not None:
            return
        owner_class = self.ctx.enclosing(owned[0], cst.ClassDef)
        kept = self._kept_in_attribute(self._held_value(plan.replaced_strategies[0])).targets[0].target
        outside = [region for region in plan.regions
                   if not any(ancestor is owner_class for ancestor in self.ctx.ancestors(region.block))]
        if not outside:
            plan.strategy_statement = owned[0]
            plan.strategy_name = code_of(self.ctx, kept)
            self._scope_instance_runs(owner_class, kept.attr.value)
            return
        self._use_instance_strategy(owner_class, kept.attr.value, outside)
        if plan.strategy_statement is None:
            plan.second_strategies.append(owned[0])

    def _scope_instance_runs(self, owner_class: cst.ClassDef, attribute: str) -> None:
        """The methods of the class that owns the program's strategy (``self.strategy``, made in
        ``__init__`` and entered there to build the model) that make, compile or run the model it
        keeps (``self.model.fit(...)`` in ``train``, ``self.model = self._build()`` in ``reset``):
        Keras on the IPU runs them in the IPU strategy's scope, so each statement that does gets a
        region of its method, in the scope of the instance's strategy (bound there once the
        instance exists, ``_bound_in_instance``)."""
        builders = self._builder_methods(owner_class)
        self.plan_.regions = [region for region in self.plan_.regions
                              if self.ctx.enclosing_function(region.block) not in builders]
        regions: Dict[int, Optional[Region]] = {id(region.block): region for region in self.plan_.regions}
        held = self._instance_models(owner_class)
        name = f"self.{attribute}"
        for node in walk(owner_class):
            method = self.ctx.enclosing_function(node)
            if (method is None or self.ctx.parent(self.ctx.parent(method)) is not owner_class or method in builders
                    or not isinstance(method.body, cst.IndentedBlock) or self.ctx.enclosing(node, cst.Lambda)):
                continue
            if isinstance(node, cst.Call) and self._runs_instance_model(node, held):
                self.plan_.instance_runs.add(id(node))
            elif isinstance(node, cst.Call) and any(is_self_call(node, builder) for builder in builders):
                pass  # a model made by a method of the class (``self._make_model()``)
            elif not (isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) and any(
                    isinstance(target.target, cst.Attribute) and is_name(target.target.value, "self")
                    and target.target.attr.value in held for target in node.targets)):
                continue
            if self._in_instance_scope(node, name, method):
                continue
            top = self._statement_in(method.body, node)
            if self._bound_before(self.plan_.strategy_statement, top) or self._bound_in_instance(
                    self.plan_.strategy_statement, name, top):
                self._take_in(regions, method.body, top, top)

    def _builder_methods(self, owner_class: cst.ClassDef) -> List[cst.FunctionDef]:
        """The methods of ``owner_class`` that return a model and that only the class calls
        (``self._make_model()``): they run where they are called, in the instance's scope."""
        methods = [method for method in owner_class.body.body
                   if isinstance(method, cst.FunctionDef) and self._returns_model(method)]
        return [method for method in methods if all(
            is_self_call(call, method) and self.ctx.enclosing(call, cst.ClassDef) is owner_class
            for call in calls_by_name(self.ctx).get(method.name.value, []))]

    def _instance_models(self, owner_class: cst.ClassDef) -> Set[str]:
        """The attributes of ``self`` that the methods of ``owner_class`` assign a model to
        (``self.model = keras.Sequential(...)``, or what a method of the class that returns one
        gives: ``self.net = self._build(...)``) or compile (``self.net.compile(optimizer, loss)``)."""
        builders = {method.name.value for method in self._builder_methods(owner_class)}
        held = set()
        for node in walk(owner_class):
            if isinstance(node, cst.Assign) and (self._is_model_assignment(node) or (
                    isinstance(node.value, cst.Call) and isinstance(node.value.func, cst.Attribute)
                    and is_name(node.value.func.value, "self") and node.value.func.attr.value in builders)):
                held.update(target.target.attr.value for target in node.targets
                            if isinstance(target.target, cst.Attribute) and is_name(target.target.value, "self"))
            elif (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "compile"
                  and node.args and isinstance(node.func.value, cst.Attribute)
                  and is_name(node.func.value.value, "self")):
                held.add(node.func.value.attr.value)
        return held | self._model_properties(owner_class, held)

    def _model_properties(self, owner_class: cst.ClassDef, held: Set[str]) -> Set[str]:
        """The properties of ``owner_class`` that give a model its instance keeps (``@property
        def model(self): return self._model``): ``self.model.evaluate(x, y)`` runs that model."""
        found = set()
        for method in owner_class.body.body:
            if not (isinstance(method, cst.FunctionDef) and any(
                    is_name(decorator.decorator, "property") for decorator in method.decorators)):
                continue
            returned = [node.value for node in walk(method) if isinstance(node, cst.Return)]
            if returned and all(isinstance(value, cst.Attribute) and is_name(value.value, "self")
                                and value.attr.value in held for value in returned):
                found.add(method.name.value)
        return found

    def _runs_instance_model(self, call: cst.Call, held: Set[str]) -> bool:
        """``self.model.fit(...)``, ``self.model.evaluate(x, y)``: a run of a model the instance keeps
        (``held``), or any call that runs a model (``runs_model``)."""
        func = call.func
        if runs_model(call, self.plan_):
            return True
        return (isinstance(func, cst.Attribute) and (func.attr.value in RUNNING_METHODS or func.attr.value == "compile")
                and isinstance(func.value, cst.Attribute) and is_name(func.value.value, "self")
                and func.value.attr.value in held)

    def _in_instance_scope(self, node: cst.CSTNode, name: str, method: cst.FunctionDef) -> bool:
        """Whether ``node`` is in a ``with self.strategy.scope():`` of ``method`` already."""
        for ancestor in self.ctx.ancestors(node):
            if ancestor is method:
                return False
            item = _single_item(ancestor) if isinstance(ancestor, cst.With) else None
            if item is not None and isinstance(item.func, cst.Attribute) and item.func.attr.value == "scope" \
                    and code_of(self.ctx, item.func.value) == name:
                return True
        return False

    def _bound_in_instance(self, assignment: cst.BaseStatement, name: str, statement: cst.BaseStatement) -> bool:
        """Whether the attribute ``name`` (``self.strategy``), which ``assignment`` in ``__init__``
        leads to, is bound when ``statement`` runs in another method of the class: once the
        instance exists, it is, unless ``__init__`` calls that method before it binds the attribute."""
        init = self.ctx.enclosing_function(assignment)
        method = self.ctx.enclosing_function(statement)
        owner_class = self.ctx.enclosing(assignment, cst.ClassDef)
        if (not name.startswith("self.") or init is None or init.name.value != "__init__" or method is None
                or method is init or self.ctx.parent(self.ctx.parent(init)) is not owner_class
                or self.ctx.parent(self.ctx.parent(method)) is not owner_class
                or not isinstance(init.body, cst.IndentedBlock)):
            return False
        attribute = name[len("self."):]
        binders = [top for top in init.body.body if any(
            isinstance(node, cst.Assign) and any(isinstance(target.target, cst.Attribute)
                                                 and is_name(target.target.value, "self")
                                                 and target.target.attr.value == attribute for target in node.targets)
            for node in walk(top, skip=_CODE_ELSEWHERE))]
        if not binders or not isinstance(binders[0], cst.SimpleStatementLine):
            return False  # (bound in a branch of ``__init__``, it may be unbound)
        bound_at = init.body.body.index(binders[0])
        return not any(
            isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and is_name(node.func.value, "self")
            and node.func.attr.value == method.name.value and init.body.body.index(top) <= bound_at
            for top in init.body.body for node in walk(top, skip=_CODE_ELSEWHERE))

    def _use_instance_strategy(self, owner_class: cst.ClassDef, attribute: str, outside: List[Region]) -> None:
        """The class that owns the program's strategy made once (``trainer = Trainer()``), with all
        the model code out of the class after it (``with trainer.strategy.scope():``, ``trainer.
        model.evaluate(...)``): the IPU is configured before the object is made, and that code runs
        in the scope of the object's strategy (``trainer.strategy``), the program's only one."""
        plan = self.plan_
        constructions = local_calls(self.ctx, owner_class)
        assign = self.ctx.parent(constructions[0]) if len(constructions) == 1 else None
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1
                and isinstance(assign.targets[0].target, cst.Name)) or len(outside) != len(plan.regions):
            return
        statement = self.ctx.statement_of(assign)
        if all(self._bound_before(statement, region.anchor) for region in outside):
            plan.strategy_statement = statement
            plan.strategy_name = f"{assign.targets[0].target.value}.{attribute}"

    def _binding_statement(self, assignment: cst.BaseStatement, name: str) -> cst.BaseStatement:
        """The outermost statement that binds the strategy on every path: ``assignment`` itself,
        or the ``try``/``if`` around it when every branch assigns ``name`` (``try: strategy =
        TPUStrategy(...) except ValueError: strategy = get_strategy()``). Up to a branch that leaves
        it unbound (``if __name__ == "__main__":``), the model code after it in that branch only
        (``_bound_before``) can use it."""
        top = assignment
        for ancestor in self.ctx.ancestors(assignment):
            if isinstance(ancestor, (cst.Module, cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return top
            if isinstance(ancestor, cst.BaseCompoundStatement) and self.ctx.block_of(ancestor) is not None:
                if not _binds_on_every_path(ancestor, name):
                    return top
                top = ancestor
        return top

    def _use_given_strategy(self) -> None:
        """A class of the file given the program's one strategy by the function of the file that
        makes it (``Trainer(get_strategy(), build)``, ``_given_to_class``), with no model code out
        of the class: the IPU is configured before the statement that calls that function, whose
        strategy becomes the IPU strategy, and no other strategy or scope is added."""
        plan = self.plan_
        if len(self.given_strategies) != 1 or plan.strategy_statement is not None:
            return
        ((owner_class, statement),) = self.given_strategies.values()
        if any(not any(ancestor is owner_class for ancestor in self.ctx.ancestors(region.block))
               for region in plan.regions):
            return
        plan.strategy_statement = statement

    def _given_the_strategy(self, function: Optional[cst.FunctionDef], depth: int) -> bool:
        """Whether ``function`` takes the program's strategy as a parameter of its name, which
        every call gives it where the strategy is bound (``evaluate(strategy, model)`` after
        ``strategy = make_strategy()``, or in a function given it in turn): its scope is that
        strategy's, and the function needs no strategy or IPU configuration of its own."""
        name = self.plan_.strategy_name
        if function is None or depth == 0 or name not in parameter_names(function):
            return False
        position = parameter_names(function).index(name)
        calls = local_calls(self.ctx, function)
        return bool(calls) and all(
            is_name(getattr(argument(call, name, position), "value", None), name) and (
                self._bound_before(self.plan_.strategy_statement, self.ctx.statement_of(call))
                or self._given_the_strategy(self.ctx.enclosing_function(call), depth - 1))
            for call in calls)

    def _bound_before(self, assignment: cst.BaseStatement, statement: cst.BaseStatement) -> bool:
        """Whether what ``assignment`` binds is bound when ``statement`` runs: it comes earlier in a
        block around ``statement`` (or ``statement`` is in a function defined there, which runs
        when called)."""
        block = self.ctx.block_of(assignment)
        for candidate in (statement, *self.ctx.ancestors(statement)):
            if self.ctx.block_of(candidate) is block:
                if isinstance(candidate, _CODE_ELSEWHERE):
                    return True
                return block.body.index(assignment) < block.body.index(candidate)
        return False

    # ------------------------------------------------------------------ what the file defines
    def _find_model_classes(self) -> None:
        """Subclasses of ``keras.Model``, also through classes of the file (``Trained(Base)``), and of
        Keras layers."""
        for cls in subclass_definitions(self.ctx, *MODEL_BASES):  # each, when a notebook defines one again
            self.model_classes.add(cls.name.value)
            for statement in cls.body.body:
                if isinstance(statement, cst.FunctionDef) and statement.name.value in OVERRIDDEN_HOOKS:
                    self.plan_.overridden_hooks.append(statement)
        self.layer_classes = {id(cls) for cls in subclass_definitions(self.ctx, *KERAS_LAYER_CLASSES)}

    def _only_handed_on(self, name: str) -> bool:
        """Whether the strategy variable ``name`` is only ever an argument of calls
        (``RunConfig(train_distribute=strategy)``), never entered or run by the file; made global
        (``tf.distribute.experimental_set_strategy(strategy)``), it is entered."""
        uses = [node for node in self.ctx.nodes(cst.Name) if node.value == name
                and not isinstance(self.ctx.parent(node), cst.AssignTarget)]
        return bool(uses) and all(isinstance(self.ctx.parent(node), cst.Arg)
                                  and global_strategy_setter(self.ctx, node) is None for node in uses)

    def _find_library_overrides(self) -> None:
        """``TFAutoModelForSequenceClassification.from_pretrained(...)``: Transformers' TF models
        override ``train_step`` and ``test_step``, which the IPU Keras extensions refuse; so does
        Keras' ``WideDeepModel(linear_model, dnn_model)``."""
        for call in self.ctx.nodes(cst.Call):
            qualified = self.ctx.qualified_name(call.func) or ""
            hugging_face = qualified.startswith(OVERRIDING_LIBRARIES) and qualified.rsplit(".", 2)[-2][:2] == "TF" \
                and qualified.endswith(".from_pretrained")
            if (hugging_face or self.ctx.keras_name(call.func) in OVERRIDING_KERAS_MODELS) and self._compiled_itself(call):
                self.plan_.library_overrides.append(call)

    def _find_imported_overrides(self) -> None:
        """``gan = GAN(g, d)`` of ``from gan_lib import GAN``, then ``gan.compile(...)``: the class
        overrides ``train_step`` when the port of its project says so, or when the ``compile`` takes
        arguments Keras' own does not (``d_optimizer=``, ``loss_fn=``): a class overrides ``compile``
        for the step it trains with."""
        for call in self.ctx.nodes(cst.Call):
            if not self._compiles(call):
                continue
            made = [value for value in values_of(self.ctx, call.func.value) if isinstance(value, cst.Call)]
            imported = [value for value in made if self.ctx.qualified_name(value.func) is not None
                        and not self.ctx.qualified_name(value.func).startswith(_KERAS_PREFIXES)]
            if not made or len(imported) != len(made):
                continue
            maker = code_of(self.ctx, imported[0].func)
            if any(self.ctx.project_function(value.func) in self.ctx.project.overriding_classes for value in imported):
                self.plan_.imported_overrides.append((call, f"`{maker}` of another file of the project overrides "
                                                            "`train_step`"))
                continue
            unknown = [arg.keyword.value for arg in call.args
                       if arg.keyword is not None and arg.keyword.value not in KERAS_COMPILE_KEYWORDS]
            if unknown:
                names = ", ".join(f"`{name}`" for name in unknown)
                self.plan_.imported_overrides.append((call, (
                    f"`{maker}` of another module is compiled with {names}, which Keras' `compile` does not take: "
                    "its class overrides `compile`, and so most likely `train_step`")))

    def _compiled_itself(self, call: cst.Call) -> bool:
        """The model ``call`` makes is assigned to a name the file compiles, also through a builder
        that returns it (not only used as a layer of another model, whose own steps Keras runs)."""
        compiled = set().union(*self._compiled_names().values())
        return bool(model_holders(self.ctx, call) & compiled)

    def _find_strategies(self) -> None:
        ctx, plan = self.ctx, self.plan_
        for call in ctx.nodes(cst.Call):
            qualified = ctx.qualified_name(call.func)
            if qualified in IPU_STRATEGIES:
                plan.has_ipu_strategy = True
            elif without_compat(qualified) in DISTRIBUTION_STRATEGIES:
                parent = ctx.parent(self._chosen_value(call))
                name = parent.targets[0].target.value if isinstance(parent, cst.Assign) and len(
                    parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name) else None
                if isinstance(parent, cst.Arg) or name is not None and self._only_handed_on(name):
                    continue  # given to a call (an Estimator's `RunConfig`): not this program's strategy
                if without_compat(qualified) == "tensorflow.distribute.get_strategy" and self._only_queried(call):
                    continue  # the strategy in scope where it runs: the IPU strategy in the port's scope
                plan.replaced_strategies.append(call)
                held = self._held_value(call)
                owner_class = self._owning_class(held)
                if owner_class is not None:  # kept in the class's attribute, not bound to a name of the program
                    statements = self.owned_strategies.setdefault(owner_class.name.value, [])
                    if not any(statement is ctx.statement_of(held) for statement in statements):
                        statements.append(ctx.statement_of(held))
                    self._owned_calls.append(call)
                    continue
                bindings = self._returned_strategies(call) or ([parent] if name is not None else [])
                if not bindings:
                    self._given_to_class(call)
                for binding in bindings:
                    self._bind_strategy(binding)
            elif self._from_project_factory(call):
                self._bind_strategy(ctx.parent(call))
                self._project_strategy = True
                self._project_configured = self._project_configured or (
                    ctx.project_function(call.func) in ctx.project.configuring_factories)
        self._find_scoped_factories()
        if plan.strategy_statement is None:
            plan.strategy_name = fresh_name(ctx, "strategy", "ipu_strategy")

    def _find_scoped_factories(self) -> None:
        """``with get_strategy().scope():`` for a function of the module whose every ``return``
        gives a strategy the port replaces, called with no argument and only to enter its scope
        (``_enters_scope``): the block enters the program's strategy, as ``with strategy.scope():``
        does, and its model code goes in the IPU strategy's scope. The port makes that strategy by
        calling the function (what else it does, a print, is kept), once the IPU is configured:
        the block is not a second strategy entered inside the first."""
        plan = self.plan_
        made = {id(call) for call in plan.replaced_strategies}
        for call in plan.replaced_strategies:
            factory = self._strategy_factory(call)
            if factory is None or not is_module_function(self.ctx, factory) or factory.name.value in self.scoped_factories:
                continue
            calls = self._factory_calls(factory)
            if calls and all(self._enters_scope(caller) for caller in calls) and all(
                    gives_strategy(factory, node.value, made) for node in returns_of(factory)):
                self.scoped_factories.add(factory.name.value)
        if len(self.scoped_factories) == 1:
            plan.strategy_factory = next(iter(self.scoped_factories))

    def _enters_scope(self, call: cst.Call) -> bool:
        """``call`` (with no argument) is ``X`` in the one item of ``with X.scope():``."""
        scope = self.ctx.parent(call)
        entered = self.ctx.parent(scope) if isinstance(scope, cst.Attribute) and scope.attr.value == "scope" else None
        item = self.ctx.parent(entered) if isinstance(entered, cst.Call) and not entered.args else None
        with_node = self.ctx.parent(item) if isinstance(item, cst.WithItem) else None
        return not call.args and isinstance(with_node, cst.With) and _single_item(with_node) is entered

    def _bind_strategy(self, binding: cst.Assign) -> None:
        """``strategy = ...``: ``strategy`` names a strategy of the program (the first one bound
        is where the port configures the IPU before it)."""
        plan, name = self.plan_, binding.targets[0].target.value
        self.strategy_vars.add(name)
        self._strategy_bindings.append((self.ctx.statement_of(binding), name))
        if plan.strategy_statement is None:
            plan.strategy_statement = self.ctx.statement_of(binding)
            plan.strategy_name = name

    def _from_project_factory(self, call: cst.Call) -> bool:
        """``strategy = get_strategy()`` for a function of another file of the project, ported
        with this one, that returns a strategy its port makes an ``IPUStrategy``
        (``porter.project``): ``strategy`` is the program's strategy, already the IPU's, and
        model code runs in its scope (a strategy of the port's own would nest in it, and
        strategy scopes do not nest)."""
        parent = self.ctx.parent(call)
        return bool(self.ctx.project.strategy_factories) and isinstance(parent, cst.Assign) and len(
            parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name) and (
            self.ctx.project_function(call.func) in self.ctx.project.strategy_factories)

    def _keep_scoped_lookups(self) -> None:
        """``tf.distribute.get_strategy()`` in a function that runs in its callers' scope (a
        builder) that only asks about the strategy or enters its scope (``with tf.distribute.
        get_strategy().scope():``): called in the IPU strategy's scope, it gives that strategy, so
        it stays; a new ``IPUStrategy()`` there would be a second strategy, entered inside the
        first ("Mixing different tf.distribute.Strategy objects")."""
        plan = self.plan_
        for call in list(plan.replaced_strategies):
            function = self.ctx.enclosing_function(call)
            if (function is None or without_compat(self.ctx.qualified_name(call.func)) != "tensorflow.distribute."
                    "get_strategy" or not self._inside_builder(function.body)
                    or not self._only_queried(call, _STRATEGY_QUERIES | {"scope"})):
                continue
            plan.replaced_strategies.remove(call)
            statement = self.ctx.statement_of(call)
            self._strategy_bindings = [binding for binding in self._strategy_bindings if binding[0] is not statement]
            self.strategy_vars = {name for _, name in self._strategy_bindings}
            if plan.strategy_statement is statement:
                plan.strategy_statement, plan.strategy_name = self._strategy_bindings[0] if (
                    self._strategy_bindings) else (None, fresh_name(self.ctx, "strategy", "ipu_strategy"))

    def _only_queried(self, call: cst.Call, allowed: frozenset = _STRATEGY_QUERIES) -> bool:
        """Whether the code only asks about the strategy ``call`` gives (``tf.distribute.
        get_strategy()`` in a builder: its ``num_replicas_in_sync``, printed), with no other
        attribute than ``allowed``, and never returns or hands it on: that is the strategy in scope
        where it runs, the IPU strategy in the port's scope (the default one out of it, as in the
        original), and a new ``IPUStrategy()`` in its place would be one nothing uses."""
        parent = self.ctx.parent(call)
        if isinstance(parent, cst.Attribute):
            return parent.attr.value in allowed
        if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1
                and isinstance(parent.targets[0].target, cst.Name)):
            return False
        name, function = parent.targets[0].target.value, self.ctx.enclosing_function(call)
        if function is None:
            return False  # a module's strategy: code anywhere may use it
        uses = [node for node in walk(function) if isinstance(node, cst.Name) and node.value == name
                and node is not parent.targets[0].target]
        return all(self._queried(node, allowed) for node in uses)

    def _queried(self, node: cst.Name, allowed: frozenset) -> bool:
        """``strategy.num_replicas_in_sync``, ``print(strategy)``, ``type(strategy)``: a look at
        the strategy that ``node`` names (through an attribute of ``allowed``), not a use of it."""
        parent = self.ctx.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            return parent.attr.value in allowed
        call = self.ctx.parent(parent) if isinstance(parent, cst.Arg) else None
        return isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and (
            call.func.value in _INSPECTING_BUILTINS and self.ctx.qualified_name(call.func) is None)

    def _owning_class(self, call: cst.Call) -> Optional[cst.ClassDef]:
        """The class whose method makes the strategy ``call`` makes, keeps it (``self.strategy =
        tf.distribute.MirroredStrategy()``, also as the default of a strategy it may be given,
        ``_kept_in_attribute``) and enters its scope or runs steps through it: the class owns the
        program's strategy (a trainer class), and its code is where the strategy is used."""
        assign = self._kept_in_attribute(call)
        if assign is None:
            return None
        attribute = assign.targets[0].target.attr.value
        owner_class = self.ctx.enclosing(call, cst.ClassDef)
        uses = [node for node in walk(owner_class) if isinstance(node, cst.Attribute) and node.attr.value in ("scope", *RUN_METHODS)
                and isinstance(node.value, cst.Attribute) and node.value.attr.value == attribute
                and is_name(node.value.value, "self")] if owner_class is not None else []
        return owner_class if uses else None

    def _chosen_value(self, call: cst.Call) -> cst.BaseExpression:
        """The choice of strategies ``call`` is one of (``MirroredStrategy() if len(gpus) > 1
        else get_strategy()``, ``strategy or MirroredStrategy()``), else ``call``: what is
        assigned holds the strategy ``call`` makes when that branch is taken."""
        value: cst.BaseExpression = call
        parent = self.ctx.parent(call)
        while isinstance(parent, (cst.BooleanOperation, cst.IfExp)) and value is not getattr(parent, "test", None) \
                and (isinstance(parent, cst.IfExp) or isinstance(parent.operator, cst.Or)):
            value, parent = parent, self.ctx.parent(parent)
        return value

    def _held_value(self, call: cst.Call) -> cst.Call:
        """What holds the strategy ``call`` makes where the program keeps it: the one call of the
        function of the module that returns it (``self.strategy = select_strategy()`` for ``def
        select_strategy(): ... return tf.distribute.MirroredStrategy()``), else ``call`` itself."""
        factory = self._strategy_factory(call)
        callers = self._factory_calls(factory) if factory is not None else []
        return callers[0] if len(callers) == 1 else call

    def _kept_in_attribute(self, call: cst.Call) -> Optional[cst.Assign]:
        """The assignment of an attribute of ``self`` that keeps what ``call`` makes: ``self.strategy
        = call``, or ``call`` as the default of a strategy the method is given (``self.strategy =
        strategy or call``, ``... if strategy is not None else call``, or ``if strategy is None:
        strategy = call`` before ``self.strategy = strategy``)."""
        parent = self.ctx.parent(self._chosen_value(call))
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
            local = parent.targets[0].target.value
            method = self.ctx.enclosing_function(call)
            kept = [node for node in walk(method) if isinstance(node, cst.Assign) and is_name(node.value, local)
                    ] if method is not None else []
            parent = kept[0] if len(kept) == 1 else None
        if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1
                and isinstance(parent.targets[0].target, cst.Attribute)
                and is_name(parent.targets[0].target.value, "self")):
            return None
        return parent

    def _given_to_class(self, call: cst.Call) -> None:
        """``Trainer(get_strategy(), build)`` when ``call`` makes the strategy that a function of
        the module returns, called once, as an argument of a class of the file that keeps it and
        enters its scope or runs steps through it: the class uses the program's strategy."""
        factory = self._strategy_factory(call)
        callers = self._factory_calls(factory) if factory is not None else []
        arg = self.ctx.parent(callers[0]) if len(callers) == 1 else None
        constructor = self.ctx.parent(arg) if isinstance(arg, cst.Arg) and arg.value is callers[0] else None
        if not isinstance(constructor, cst.Call) or not isinstance(constructor.func, cst.Name):
            return
        owner_class = next((node for node in self.ctx.module.body if isinstance(node, cst.ClassDef)
                            and node.name.value == constructor.func.value), None)
        if owner_class is not None and _uses_given_strategy(owner_class, _parameter_of(owner_class, constructor, arg)):
            self.given_strategies[owner_class.name.value] = (owner_class, self.ctx.statement_of(constructor))

    def _strategy_factory(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        """The function of the module, or the method of a class of the module, that returns the
        strategy ``call`` makes (``return tf.distribute.MirroredStrategy()``, or a local it assigns
        and returns), if any."""
        function = self.ctx.enclosing_function(call)
        parent = self.ctx.parent(call)
        if function is None or not (isinstance(parent, cst.Return) or returned_local(function, parent)):
            return None
        return function if is_module_function(self.ctx, function) or self._method_class(function) else None

    def _method_class(self, function: cst.FunctionDef) -> Optional[cst.ClassDef]:
        """The class of the module whose method ``function`` is."""
        owner = self.ctx.parent(self.ctx.parent(function))
        return owner if isinstance(owner, cst.ClassDef) and self.ctx.parent(owner) is self.ctx.module else None

    def _factory_calls(self, factory: cst.FunctionDef) -> List[cst.Call]:
        """The calls of the strategy-making ``factory``: ``get_strategy()`` for a function of the
        module, ``self.make_strategy()`` in its class for a method."""
        owner_class = self._method_class(factory)
        if owner_class is None:
            return local_calls(self.ctx, factory)
        return [node for node in walk(owner_class) if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                and is_name(node.func.value, "self") and node.func.attr.value == factory.name.value]

    def _returned_strategies(self, call: cst.Call) -> List[cst.Assign]:
        """``strategy = get_strategy()`` when ``call`` makes the strategy that a function of the
        module returns (``def get_strategy(): ... return tf.distribute.MirroredStrategy()``, or
        a local it assigns and returns): each assignment of its result to a name (one per function
        that trains, a ``train()`` and an ``evaluate()``) holds a strategy of the program (replaced
        inside the function). Empty when a call of the function is used otherwise."""
        function = self._strategy_factory(call)
        if function is None:
            return []
        bindings = [self.ctx.parent(caller) for caller in self._factory_calls(function)]
        if not all(isinstance(binding, cst.Assign) and len(binding.targets) == 1
                   and isinstance(binding.targets[0].target, cst.Name) for binding in bindings):
            return []
        return bindings

    def _is_model_call(self, node: cst.CSTNode) -> bool:
        if not isinstance(node, cst.Call):
            return False
        keras_name = self.ctx.keras_name(node.func) or ""
        if keras_name in MODEL_CONSTRUCTORS or is_application(keras_name) or _hugging_face_model(
                self.ctx.qualified_name(node.func)):
            return True
        if isinstance(node.func, cst.Name):
            name = node.func.value
            return (name in self.model_classes or name in self.builders or name in self.returners
                    ) and self.ctx.qualified_name(node.func) is None
        if self._calls_builder_method(node):
            return True
        table = _looked_up_in(node.func)
        return table is not None and table in self._builder_tables()

    def _calls_builder_method(self, call: cst.Call) -> bool:
        """``self._make_model()`` in a method of the class whose method of that name is a builder
        method (``_find_builder_methods``)."""
        owner_class = self.ctx.enclosing(call, cst.ClassDef) if self.builder_methods else None
        return owner_class is not None and any(
            id(method) in self.builder_methods and is_self_call(call, method) for method in owner_class.body.body
            if isinstance(method, cst.FunctionDef))

    def _makes_models(self, node: cst.CSTNode) -> bool:
        """A list or dict comprehension whose items are made by a model call: the members of an
        ensemble (``[keras.models.load_model(path) for path in paths]``, ``{k: build() for k in
        folds}``), each made where the comprehension runs."""
        item = node.elt if isinstance(node, cst.ListComp) else node.value if isinstance(node, cst.DictComp) else None
        return item is not None and self._is_model_call(item)

    def _builder_tables(self) -> Set[str]:
        """Module-level names of dicts or lists that hold builders of the file: given them
        (``MODELS = {"mlp": build_mlp}``), or filled by a decorator of the file that registers
        them (``@register("mlp")`` with ``REGISTRY[name] = fn``). Calling an item of one
        (``MODELS[arch](...)``) builds a model."""
        if self._tables_key != len(self.builders):
            self._tables = set()
            for statement in self.ctx.module.body:
                assign = single_small(statement)
                if isinstance(assign, cst.Assign) and self._holds_builders(assign.value):
                    self._tables.update(name for target in assign.targets for name in bound_names(target.target))
            for function in self._functions.values():
                if function.name.value in self.builders:
                    for decorator in self._registering_decorators(function):
                        self._tables.update(_subscript_targets(decorator))
            self._tables_key = len(self.builders)
        return self._tables

    def _holds_builders(self, value: cst.BaseExpression) -> bool:
        """A dict, list or tuple literal with a builder of the file among its values."""
        if isinstance(value, cst.Dict):
            values = [element.value for element in value.elements if isinstance(element, cst.DictElement)]
        elif isinstance(value, (cst.List, cst.Tuple)):
            values = [element.value for element in value.elements]
        else:
            return False
        return any(isinstance(item, cst.Name) and item.value in self.builders
                   and self.ctx.qualified_name(item) is None for item in values)

    def _registering_decorators(self, function: cst.FunctionDef) -> List[cst.FunctionDef]:
        """The functions of the file that decorate ``function`` (``@register("mlp")``, or
        ``@register``): they may keep it where later code calls it."""
        found = []
        for decorator in function.decorators:
            node = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
            if isinstance(node, cst.Name) and self.ctx.qualified_name(node) is None and node.value in self._functions:
                found.append(self._functions[node.value])
        return found

    def _find_builders(self) -> None:
        """Functions that return a Keras model, directly or through a local variable."""
        functions = self.ctx.nodes(cst.FunctionDef)
        changed = True
        while changed:  # a builder may call another builder
            changed = False
            for function in functions:
                name = function.name.value
                if name in self.builders or self.ctx.enclosing(function, cst.ClassDef) is not None:
                    continue
                if self._returns_model(function) and not self._runs_model(function):
                    self.builders.add(name)
                    changed = True

    def _find_returners(self) -> None:
        """Functions that train a model and return it (alone or in a tuple), whose every call
        keeps the result (``_, model = run_experiment()``): the model lives on in the caller, which
        runs it again (``model.predict``) in the same strategy's scope. Like a builder, such a
        function runs in its caller's scope; one whose result some call drops keeps its own."""
        for function in self.ctx.nodes(cst.FunctionDef):
            name = function.name.value
            if name in self.builders or not is_module_function(self.ctx, function):
                continue
            calls = local_calls(self.ctx, function)
            if calls and self._returns_model(function) and all(self._result_kept(call) for call in calls):
                self.returners.add(name)

    def _result_kept(self, call: cst.Call) -> bool:
        """Whether the caller keeps what ``call`` returns: assigned (``model = train(...)``), or
        gathered as the members of an ensemble (``members = [train(seed) for seed in seeds]``,
        ``members.append(train(seed))``), which the caller runs later."""
        parent = self.ctx.parent(call)
        if isinstance(parent, (cst.ListComp, cst.SetComp, cst.DictComp)):
            return isinstance(self.ctx.parent(parent), cst.Assign)
        if isinstance(parent, cst.Arg):
            adder = self.ctx.parent(parent)
            return (isinstance(adder, cst.Call) and isinstance(adder.func, cst.Attribute)
                    and adder.func.attr.value in ADDERS and isinstance(adder.func.value, cst.Name)
                    and len(adder.args) == 1)
        return isinstance(parent, cst.Assign)

    def _find_builder_methods(self) -> None:
        """Methods of plain classes (no Keras class, no strategy of their own) that return a model
        without running it and that the class calls, only through ``self`` (``def _model(self):
        ... return model``, then ``model = self._model()`` and ``model.fit(...)`` in ``train``): the
        model is made where the method is called, in the scope of the method that calls it, as a
        builder's is in its caller's."""
        for function in self.ctx.nodes(cst.FunctionDef):
            owner_class = self._plain_class_of(function)
            if owner_class is None or owner_class.name.value in self.owned_strategies:
                continue
            if function in self._builder_methods(owner_class) and not self._runs_model(function) \
                    and calls_by_name(self.ctx).get(function.name.value):
                self.builder_methods.add(id(function))

    def _find_global_makers(self) -> None:
        """Module functions, called in the file, that assign a model (or a literal of models) to a
        name they declare ``global``: the model lives on in the module, where the functions that
        train or run it find it, so it is made where the function is called, in the scope that
        holds those runs."""
        for function in self.ctx.nodes(cst.FunctionDef):
            name = function.name.value
            if name in self.builders or not is_module_function(self.ctx, function) or not local_calls(
                    self.ctx, function):
                continue
            declared = {item.name.value for node in self._in_function(cst.Global, function)
                        for item in node.names}
            if declared and any(self._is_model_assignment(assign) and declared & {
                    bound for target in assign.targets for bound in bound_names(target.target)}
                    for assign in self._in_function(cst.Assign, function)):
                self.global_makers.add(name)
            elif declared & {self._literal_kept(call) for call in self._in_function(cst.Call, function)
                             if self._is_model_call(call)}:
                self.global_makers.add(name)  # `MODELS = {"a": keras.Sequential(...), ...}`

    def _in_function(self, node_type: type, function: Optional[cst.FunctionDef]) -> List[cst.CSTNode]:
        """The nodes of a type whose innermost enclosing function is ``function`` (None: the
        module's own code), in source order (grouped once per type: asking each function in turn
        would be quadratic)."""
        groups = self._grouped.get(node_type)
        if groups is None:
            groups = self._grouped[node_type] = {}
            for node in self.ctx.nodes(node_type):
                groups.setdefault(id(self.ctx.enclosing_function(node)), []).append(node)
        return groups.get(id(function), [])

    def _returns_model(self, function: cst.FunctionDef) -> bool:
        """Whether ``function`` returns a model, alone, in a tuple, list or dict written out
        (``return encoder, decoder``, ``return {"gen": gen, "disc": disc}``), made by a
        comprehension, or in a list or dict it fills (``members.append(build(w))``, then ``return
        members``): the models are its caller's, made in the caller's scope."""
        models = self._model_variables(function)
        filled = self._filled_with_models(function)
        for node in self._in_function(cst.Return, function):
            if node.value is None:
                continue
            made = held_items(node.value)
            values = [item for item in made[1] if item is not None] if made is not None else [node.value]
            if any(self._is_model_call(value) or self._makes_models(value)
                   or (isinstance(value, cst.Name) and value.value in models | filled) for value in values):
                return True
        return False

    def _filled_with_models(self, function: cst.FunctionDef) -> Set[str]:
        """The lists and dicts that ``function`` puts a model in by a call that makes it
        (``members.append(build(w))``, ``models += [build()]``, ``models.update({k: build(k) ...})``)
        or by a model variable of its own (``members.append(model)``, ``models[name] = model``)."""
        models = self._model_variables(function)
        filled = {self._list_filled(call) for call in self._in_function(cst.Call, function)
                  if self._is_model_call(call)}
        filled.update(adder.func.value.value for adder in self._in_function(cst.Call, function)
                      if fills_collection(adder, ADDERS) and isinstance(adder.args[0].value, cst.Name)
                      and adder.args[0].value.value in models)
        filled.update(name for assign in self._in_function(cst.Assign, function)
                      if isinstance(assign.value, cst.Name) and assign.value.value in models
                      for target in assign.targets for name in _keyed_in(target.target))
        filled.discard(None)
        return filled

    def _runs_model(self, function: cst.FunctionDef) -> bool:
        models = self._model_variables(function)
        for call in self._in_function(cst.Call, function):
            func = call.func
            if (isinstance(func, cst.Attribute) and func.attr.value in RUNNING_METHODS
                    and isinstance(func.value, cst.Name) and func.value.value in models):
                return True
        return bool(models & self._passed_to_trainers(function)) or trains_in_loops(self.ctx, function)

    def _find_trainers(self) -> None:
        """Functions of the file that compile or train a model they are given (``def
        train(model, data): model.fit(data)``), directly or through another such function."""
        functions = [function for function in self.ctx.nodes(cst.FunctionDef)
                     if is_module_function(self.ctx, function)]
        self._functions = {function.name.value: function for function in functions}
        candidates = functions + self._nested_functions()
        self._trainer_functions = {function.name.value: function for function in candidates}
        changed = True
        while changed:  # a trainer may hand the model on to another trainer
            changed = False
            for function in candidates:
                params = function.params.params
                trained = self._trained_names(function) | self._trained_by_loop_steps(function)
                found = {param.name.value: position for position, param in enumerate(params)
                         if param.name.value in trained}
                if found and found != self.trainers.get(function.name.value):
                    self.trainers[function.name.value] = found
                    changed = True

    def _trained_by_loop_steps(self, function: cst.FunctionDef) -> Set[str]:
        """Names that a loop of ``function`` trains batch by batch through a custom step (``def
        train(model, ds): ... for x, y in ds: step(x, y)``, the step differentiating
        ``model.trainable_variables``): a model given to ``function`` is trained there, as by
        ``fit``, so ``train(build(), ds)`` makes and trains it in the caller's statement."""
        return trained_names(self.ctx) if trains_in_loops(self.ctx, function) else set()

    def _nested_functions(self) -> List[cst.FunctionDef]:
        """Functions defined in the body of another function (``def fit_one(m): m.fit(...)`` in
        ``run()``) whose name no other function of the file has: a call by that name is theirs."""
        counts = Counter(function.name.value for function in self.ctx.nodes(cst.FunctionDef))
        return [function for function in self.ctx.nodes(cst.FunctionDef)
                if counts[function.name.value] == 1 and self.ctx.enclosing_function(function) is not None
                and not isinstance(self.ctx.parent(self.ctx.parent(function)), cst.ClassDef)]

    def _trained_names(self, owner: Optional[cst.FunctionDef]) -> Set[str]:
        """Names that the code of ``owner`` (a function, None for the module) compiles or trains
        as a Keras model: ``.compile(...)``, ``.fit(...)`` with an argument only Keras takes."""
        names = {call.func.value.value for call in self._in_function(cst.Call, owner)
                 if isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name)
                 and (self._compiles(call) or is_keras_run(call))}
        return names | self._passed_to_trainers(owner)

    def _trained_items(self, owner: Optional[cst.FunctionDef]) -> Set[str]:
        """Names whose items the code of ``owner`` trains as Keras models: ``models[name].fit(x,
        y, epochs=2)``, with an argument only Keras takes."""
        return {name for call in self._in_function(cst.Call, owner) if is_keras_run(call)
                for name in _keyed_in(call.func.value)}

    def _passed_to_trainers(self, owner: Optional[cst.FunctionDef]) -> Set[str]:
        """Names that the code of ``owner`` passes to a trainer, where it trains its argument."""
        return {arg.value.value for arg in self._trainer_arguments(owner) if isinstance(arg.value, cst.Name)}

    def _trainer_arguments(self, owner: Optional[cst.FunctionDef]) -> List[cst.Arg]:
        """The arguments that the code of ``owner`` passes to trainers, where they are trained."""
        return [arg for call in self._in_function(cst.Call, owner) for arg in self._trained_arguments(call)]

    def _trained_arguments(self, call: cst.Call) -> List[cst.Arg]:
        """The arguments of ``call`` that it trains, when it calls a trainer (of the file, or of
        another module of the project: ``train_model(model, ds)`` after ``from trainer import
        train_model``)."""
        if not isinstance(call.func, cst.Name) or self.ctx.qualified_name(call.func) is not None:
            return project_trained_arguments(self.ctx, call, trains=True)
        found = (argument(call, param, position)
                 for param, position in self.trainers.get(call.func.value, {}).items())
        return [arg for arg in found if arg is not None]

    def _model_assignments(self) -> List[cst.Assign]:
        # Depends on the builders found so far, so it is cached per number of builders.
        key = (len(self.builders), len(self.returners), len(self.builder_methods))
        if self._assignments_key != key:
            self._assignments = [assign for assign in self.ctx.nodes(cst.Assign) if self._is_model_assignment(assign)]
            self._assignments_key = key
        return self._assignments

    def _is_model_assignment(self, assign: cst.Assign) -> bool:
        """``name = <call>`` where the call makes a model the file knows of, or where ``name`` is
        then compiled, trained with an argument only Keras takes (``fit(x, y, epochs=2)`` on a
        model an imported builder compiled), or handed to a function of the file that trains it (a model from
        ``keras.applications``, an imported builder, a method), or trained by a custom step: any
        callable whose result is compiled and trained is a model."""
        if self._is_model_call(assign.value):
            return not self._host_pipeline(assign)
        if isinstance(assign.value, cst.Tuple) and any(self._is_model_call(element.value)
                                                       for element in assign.value.elements):
            return True  # `generator, critic = make_generator(), make_critic()`
        if self._makes_models(assign.value):
            return True  # an ensemble: `members = [keras.models.load_model(path) for path in paths]`
        if not isinstance(assign.value, cst.Call) or self._enters_own_strategy(assign.value):
            return False  # (a model made in a strategy of its own is run in that scope, not in a new one)
        owner = self.ctx.enclosing_function(assign)
        # What the function compiles, trains with Keras' arguments or hands to a trainer, and what a
        # custom training step trains: a model built by code the file cannot see.
        trained = self._trained_names(owner) | trained_names(self.ctx)
        # A model put in a collection by key (``models[name] = make()``), whose item is trained.
        trained_items = self._trained_items(owner)
        return any(name in trained for target in assign.targets for name in bound_names(target.target)) or any(
            name in trained_items for target in assign.targets for name in _keyed_in(target.target))

    def _compiled_names(self) -> Dict[int, Set[str]]:
        """Per function (id, None for the module), the names whose ``.compile(...)`` is called."""
        if self._compiled is None:
            self._compiled = {}
            for call in self.ctx.nodes(cst.Call):
                if self._compiles(call):
                    owner = self.ctx.enclosing_function(call)
                    self._compiled.setdefault(id(owner), set()).add(call.func.value.value)
        return self._compiled

    def _compiles(self, call: cst.Call) -> bool:
        """``name.compile(...)`` with arguments, on a name no import binds: a model compiled
        (``re.compile(pattern)`` compiles a regular expression)."""
        func = call.func
        return (isinstance(func, cst.Attribute) and func.attr.value == "compile" and isinstance(func.value, cst.Name)
                and bool(call.args) and self.ctx.qualified_name(func.value) is None)

    def _model_variables(self, function: cst.FunctionDef) -> Set[str]:
        # Depends on the builders found so far, like the assignments it is made of.
        key = (len(self.builders), len(self.returners), len(self.builder_methods))
        if self._variables_key != key:
            self._variables = {}
            for assign in self._model_assignments():
                owner = self.ctx.enclosing_function(assign)
                if owner is not None:
                    names = self._variables.setdefault(id(owner), set())
                    for target in assign.targets:
                        names.update(bound_names(target.target))
            self._variables_key = key
        return self._variables.get(id(function), set())

    # ------------------------------------------------------------------- device/strategy scopes
    def _find_transparent_withs(self) -> None:
        ctx, plan = self.ctx, self.plan_
        for with_node in ctx.nodes(cst.With):
            gpu = any(is_gpu_device(ctx, item.item) for item in with_node.items)
            item = _single_item(with_node)
            strategy_scope = item is not None and self._enters_strategy(item)
            scope_or_none = self._scope_or_none(with_node)
            if not (gpu or strategy_scope or scope_or_none):
                continue
            if (item is not None or scope_or_none) and (ctx.block_of(with_node) is not None
                    and isinstance(with_node.body, cst.IndentedBlock)):
                plan.transparent.append(with_node)
            elif gpu:
                plan.unsafe_withs.append(with_node)

    def _enters_strategy(self, node: cst.BaseExpression) -> bool:
        """``strategy.scope()`` for a strategy of the program, or ``get_strategy().scope()`` for a
        function of the file that makes it (``scoped_factories``)."""
        entered = node.func.value if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and (
            node.func.attr.value == "scope") else None
        return isinstance(entered, cst.Name) and self.ctx.qualified_name(entered) is None and (
            entered.value in self.strategy_vars) or isinstance(entered, cst.Call) and isinstance(
            entered.func, cst.Name) and entered.func.value in self.scoped_factories

    def _scope_or_none(self, with_node: cst.With) -> bool:
        """``with strategy.scope() if gpus else contextlib.nullcontext():``: the program's strategy
        scope or none, chosen on a condition (GPUs found, a flag). The port's scope replaces it: the
        strategy is the IPU's on both branches, and the no-GPU branch, the one an IPU system takes,
        would leave the model out of it."""
        if len(with_node.items) != 1 or with_node.items[0].asname is not None:
            return False
        choice = with_node.items[0].item
        if not isinstance(choice, cst.IfExp):
            return False
        branches = (choice.body, choice.orelse)
        return any(self._enters_strategy(branch) for branch in branches) and all(
            self._enters_strategy(branch) or isinstance(branch, cst.Call)
            and self.ctx.qualified_name(branch.func) == "contextlib.nullcontext" for branch in branches)

    # -------------------------------------------------------------------------------- regions
    def _find_regions(self) -> None:
        ctx, plan = self.ctx, self.plan_
        regions: Dict[int, Optional[Region]] = {}  # per block id; None: no model code there
        for assign in ctx.nodes(cst.Assign):
            if not self._is_model_assignment(assign):
                continue
            statement = ctx.statement_of(assign)
            block = self._lifted(self._outer_block(ctx.block_of(statement) if statement is not None else None))
            if block is None or id(block) in regions or self._inside_builder(block) or self._in_model_fn(block):
                continue
            regions[id(block)] = region = self._region_in(block)
            if region is not None:
                plan.regions.append(region)
        self._cover_global_makers(regions)
        self._cover_inline_models(regions)
        self._cover_handovers(regions)
        self._cover_scopes(regions)
        self._cover_later_runs(regions)
        self._cover_module_objects(regions)
        self._cover_objects_made_before(regions)
        self._hoist_functions(regions)
        self._hoist_methods(regions)
        # A region inside another one (a model trained in a loop, then the loop in the region of
        # the block around it) is in the scope already.
        plan.regions = [region for region in plan.regions if not any(
            other is not region and self._top_in(other.block, region.block) is not None
            and in_region(ctx, other, region.block) for other in plan.regions)]

    def _lifted(self, block: Optional[Block]) -> Optional[Block]:
        """``block``, or, when a model it assigns is used after the compound statement that holds
        it (``if``/``else``, ``try``: a model chosen by a condition, then trained), the block
        around that statement: one scope and one IPU configuration for every branch."""
        while block is not None and not isinstance(block, cst.Module):
            holder = self._holder(block)
            outer = self._outer_block(self.ctx.block_of(holder)) if holder is not None else None
            if outer is None or not self._used_after(outer, self._statement_in(outer, holder),
                                                     self._model_names_in(block)):
                return block
            block = outer
        return block

    def _holder(self, block: Block) -> Optional[cst.BaseStatement]:
        """The statement of an outer block whose branch ``block`` is; None for a function body
        or a loop body."""
        for ancestor in self.ctx.ancestors(block):
            if isinstance(ancestor, _CODE_ELSEWHERE + _LOOPS):
                return None
            if isinstance(ancestor, cst.BaseStatement) and self.ctx.block_of(ancestor) is not None:
                return ancestor
        return None

    def _used_after(self, block: Block, statement: cst.BaseStatement, names: Set[str]) -> bool:
        order = {id(top): index for index, top in enumerate(block.body)}
        start = order[id(statement)]
        return any(order[id(top)] > start and type(node) is cst.Name and node.value in names
                   for top, node in self._code_of_block(block))

    def _cover_global_makers(self, regions: Dict[int, Optional[Region]]) -> None:
        """``build_model()`` (a function that makes a ``global`` model) at the top of a block: the
        model is made there, so the statement starts that block's region, which the runs of the
        model, through the functions called after it, then grow (``_cover_later_runs``)."""
        for name in sorted(self.global_makers):
            for call in local_calls(self.ctx, self._functions[name]):
                statement = self.ctx.statement_of(call)
                block = self._outer_block(self.ctx.block_of(statement)) if statement is not None else None
                if block is not None and not self._inside_builder(block) and not self._in_model_fn(block):
                    top = self._statement_in(block, statement)
                    self._take_in(regions, block, top, top)

    def _cover_inline_models(self, regions: Dict[int, Optional[Region]]) -> None:
        """``train(build(), data)``: a model created as the argument of a function of the file
        that trains it. The statement of that call both creates and trains the model: it goes in
        the scope (the region of its block grows to take it in). A trainer called in no way the
        porter sees is left to the audit (IPU190). ``GANTrainer(build_generator(), build_critic())``:
        models created as the arguments of a trainer class of the file (one whose method runs a
        tape step), which its loop trains: that statement goes in the scope too."""
        for name in self.trainers:
            for call in local_calls(self.ctx, self._trainer_functions[name]):
                if any(isinstance(arg.value, cst.Call) for arg in self._trained_arguments(call)):
                    self._take_in_call(regions, call)
        for name in self.returners:  # `members.append(train_member(seed))`: made and trained there
            for call in local_calls(self.ctx, self._functions[name]):
                if isinstance(self.ctx.parent(call), cst.Arg):
                    self._take_in_call(regions, call)
        for call in self.ctx.nodes(cst.Call):  # `models.append(build(seed))`, `build().fit(x, y)`
            if self._kept_unnamed(call) and self._is_model_call(call):
                self._take_in_call(regions, call)
                if isinstance(self.ctx.parent(call), cst.Attribute):
                    self.plan_.chained_models.add(id(call))
        trainer_classes = {self.ctx.enclosing(step.function, cst.ClassDef).name.value
                           for step in method_step_calls(self.ctx)}
        for call in self.ctx.nodes(cst.Call) if trainer_classes else ():
            if (isinstance(call.func, cst.Name) and call.func.value in trainer_classes
                    and self.ctx.qualified_name(call.func) is None
                    and any(self._is_model_call(arg.value) for arg in call.args)):
                self._take_in_call(regions, call)

    def _kept_unnamed(self, call: cst.Call) -> bool:
        """Whether what ``call`` returns is used with no name of its own: put in a list
        (``models.append(build(seed))``, ``models.extend([build(), build()])``, ``models +=
        [build()]``), written in a literal that is kept, iterated or handed on (``for name, m in
        [("tiny", build(4)), ...]``, ``_literal_kept``), or run at once (``build(width).fit(ds,
        epochs=3)``, ``return build().fit(...)``). Made by a model call, such a model is made and
        run in that statement."""
        parent = self.ctx.parent(call)
        if isinstance(parent, cst.Attribute):  # chained: `build().fit(...)`
            runner = self.ctx.parent(parent)
            return (isinstance(runner, cst.Call) and runner.func is parent
                    and parent.attr.value in RUNNING_METHODS | {"compile"})
        filled = self._list_filled(call) or self._literal_kept(call)
        # A function that fills a list of models and returns it builds them for its caller, whose
        # scope they are made in (not one of its own, which would leave their runs out of it).
        function = self.ctx.enclosing_function(call) if filled is not None else None
        return filled is not None and not (function is not None and any(
            is_name(node, filled) for returned in returns_of(function) for node in walk(returned.value)))

    def _literal_kept(self, call: cst.Call) -> Optional[str]:
        """For a model made as an item of a list, tuple or dict written out (through the tuples in
        it: ``("tiny", keras.Sequential([...]))``), or given to ``dict(tiny=...)``: the name that
        literal is assigned to (``models = {"tiny": ..., "large": make_large()}``), or ``""`` when it
        is kept in an attribute (``self.models = [...]``), iterated (``for name, model in [("tiny",
        ...), ...]:``) or handed to a call (``compare([build_cnn(), build_mlp()])``). Such a model
        is made in that statement, which then runs it or keeps it for the code that does. None for
        any other call, and for a literal returned (a builder's) or only ever a default value."""
        literal, item = None, call
        while True:
            collection = self._collection_of(item)
            if collection is None or isinstance(collection, (cst.ListComp, cst.DictComp)):
                break
            literal = item = collection
        if literal is None:
            return None
        holder = self.ctx.parent(literal)
        if isinstance(holder, cst.Assign) and len(holder.targets) == 1:
            target = holder.targets[0].target
            if isinstance(target, cst.Attribute):
                return ""  # `self.models = {...}`: the object keeps them, where it is made and used
            return target.value if isinstance(target, cst.Name) else None
        if isinstance(holder, (cst.For, cst.CompFor)) and holder.iter is literal or isinstance(holder, cst.Arg) \
                and self._hands_on_models(self.ctx.parent(holder)):
            return ""
        return None

    def _hands_on_models(self, call: cst.CSTNode) -> bool:
        """A call given a literal of models that runs them or hands them on (``compare(models)``,
        ``zip(names, models)``): not ``dict(...)``, whose items are the models, nor a Keras call,
        whose items are parts of what it makes (``keras.Sequential([backbone, head])``)."""
        return isinstance(call, cst.Call) and not keyword_dict(call) and self.ctx.keras_name(call.func) is None

    def _list_filled(self, call: cst.Call) -> Optional[str]:
        """The name of the list (or dict) that ``call``'s result is put in, with no name of its own:
        ``models`` for ``models.append(build(seed))``, ``models += [build()]``,
        ``models.extend([build(k) for k in ks])`` or ``models.update({k: build(k) for k in ks})``."""
        parent = self.ctx.parent(call)
        if isinstance(parent, cst.Arg):
            adder = self.ctx.parent(parent)
            return adder.func.value.value if fills_collection(adder, ADDERS) else None
        collection = self._collection_of(call)
        holder = self.ctx.parent(collection) if collection is not None else None
        if isinstance(holder, cst.AugAssign) and isinstance(holder.operator, cst.AddAssign) \
                and isinstance(holder.target, cst.Name):
            return holder.target.value
        extender = self.ctx.parent(holder) if isinstance(holder, cst.Arg) else None
        return extender.func.value.value if fills_collection(extender, EXTENDERS) else None

    def _collection_of(self, item: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        """The list, tuple or dict written out (or ``dict(...)``), or the comprehension, of which
        ``item`` is an item (a value, for a dict); None when it is not one."""
        parent = self.ctx.parent(item)
        if isinstance(parent, (cst.Element, cst.DictElement)) and parent.value is item:
            return self.ctx.parent(parent)
        if isinstance(parent, cst.ListComp) and parent.elt is item or isinstance(parent, cst.DictComp) \
                and parent.value is item:
            return parent
        if isinstance(parent, cst.Arg) and keyword_dict(self.ctx.parent(parent)):
            return self.ctx.parent(parent)  # `dict(tiny=build(4), ...)`
        return None

    def _cover_handovers(self, regions: Dict[int, Optional[Region]]) -> None:
        """``tuner = kt.Hyperband(build_model, ...)``: a builder handed to a call that builds models
        with it. The builder runs where that object trains them: the statement goes in the scope.
        A function (of the file or of its project) that makes and enters a strategy of its own
        builds the model in that scope, whose port is the IPU strategy's: a scope around its call
        would nest a second strategy."""
        for calls in self._builder_handovers().values():
            for call in calls:
                if not (isinstance(call.func, cst.Name) and self._has_strategy(call.func.value)
                        or self._enters_own_strategy(call)):
                    self._take_in_call(regions, call)  # (a class with a strategy of its own uses it)

    def _enters_own_strategy(self, call: cst.Call) -> bool:
        """Whether ``call`` calls a function of the file that makes a strategy and enters its scope
        (``def compile_and_fit(build_fn, ...): strategy = MirroredStrategy(); with
        strategy.scope(): ...``), or such a function of a module of the project."""
        if self.ctx.project_function(call.func) in self.ctx.project.strategy_owners:
            return True
        if not isinstance(call.func, cst.Name) or call.func.value not in self._functions:
            return False
        function = self._functions[call.func.value]
        made = {id(node) for node in self.plan_.replaced_strategies}
        return any(id(node) in made for node in walk(function)) and any(
            self.ctx.enclosing_function(node) is function for node in self.plan_.transparent)

    def _has_strategy(self, class_name: str) -> bool:
        """Whether the class ``class_name`` makes, or is given, the program's strategy and uses it."""
        return class_name in self.owned_strategies or class_name in self.given_strategies

    def _take_in_call(self, regions: Dict[int, Optional[Region]], call: cst.Call) -> None:
        """The region of the block around ``call`` (past branches a model leaves) takes in the
        statement that makes it, unless the block is a builder's, which runs in its caller's scope,
        or a class body (``model: keras.Model = field(default_factory=build_model)`` in a dataclass),
        which runs once, when the class is defined, and only hands the builder on: the model is made
        where the class makes its objects (``_classes_given_builders``)."""
        statement = self.ctx.statement_of(call)
        block = self._lifted(self._outer_block(self.ctx.block_of(statement)))
        if block is not None and not self._inside_builder(block) and not isinstance(
                self.ctx.parent(block), cst.ClassDef):
            top = self._statement_in(block, statement)
            self._take_in(regions, block, top, top)

    # --------------------------------------------------------------- runs after the region
    def _cover_later_runs(self, regions: Dict[int, Optional[Region]]) -> None:
        """A model is often run after the statements that create and train it: ``predict`` in a
        function called later, on an alias (``decoder = trainer.vqvae.get_layer("decoder")``), on
        what a tuner built, or in a custom loop in a function called later. Keras on the IPU runs a
        model's ``fit``/``evaluate``/``predict`` (and a loop its ``strategy.run``) in the IPU
        strategy's scope, so the region of the block that leads to each such run (directly, or
        through the calls of the functions that hold it) grows to take in that statement. Not when
        that would leave a function with a scope of its own called both inside the region and out:
        it makes its own strategy, and two strategies cannot nest (IPU190 reports the run)."""
        if not any(regions.values()):
            return
        calls_by = calls_by_name(self.ctx)
        for call in self.ctx.nodes(cst.Call):
            if runs_model(call, self.plan_) or self._called_in_function(call) or self._runs_project_object(call):
                self._grow_to(regions, call, calls_by, _DEPTH, set())
        models = self._model_holders()
        for step in step_calls(self.ctx):  # a custom loop, or one of a gradient step through a model
            if not reaches_models(self.ctx, step, models):
                continue  # what it trains is made out of sight of the port: reported (IPU111)
            if trains(self.ctx, step.function) or probes_model(self.ctx, step, self.plan_.model_like):
                self._grow_to(regions, step.loop, calls_by, _DEPTH, set())
        for step in method_step_calls(self.ctx):  # a trainer's loop: the calls of its method run in the scope
            if trains(self.ctx, step.function):
                self._grow_to(regions, step.loop, calls_by, _DEPTH, set())

    def _runs_project_object(self, call: cst.Call) -> bool:
        """``trainer.fit(ds)`` on ``trainer = Trainer(model)``, for a class of another module of the
        project that keeps the model it is given and runs it in its methods
        (``Project.trainers``): the method runs that model out of the file's sight."""
        called = project_callee(self.ctx, call) if self.ctx.project.trainers else None
        if called is None or called.count(".") != 2:
            return False
        return any(trainer == called.rpartition(".")[0] for trainer, *_ in self.ctx.project.trainers)

    def _called_in_function(self, call: cst.Call) -> bool:
        """``model(x, training=False)`` in a function of the file (an inference helper, ``def
        encode(x): return model(x)``, plain or a ``tf.function``): the model runs where the
        function is called, which must be in the scope like a ``predict`` there. (At the top of a
        block, a call of the model is model code of its block already.)"""
        func = call.func
        return (isinstance(func, cst.Name) and func.value in self.plan_.model_like
                and self.ctx.qualified_name(func) is None and self.ctx.enclosing_function(call) is not None)

    def _cover_module_objects(self, regions: Dict[int, Optional[Region]]) -> None:
        """A custom step that updates an optimizer or metric made at module level (a tutorial's
        ``optimizer = ...`` and ``train_loss = tf.keras.metrics.Mean()`` above ``main()``), while the
        loop runs in a function with a region of its own: those variables must be made in the IPU
        strategy's scope too. The statements that make them join the module's region, and the
        function, called only from module code, runs in that scope (``_hoist_functions`` takes its
        calls in). A function called from elsewhere keeps its region, and IPU111 reports the objects.
        The same for the metrics and loss-scale optimizer made at module level that a function's
        region compiles its model with (their variables are made with them)."""
        steps = step_calls(self.ctx) + evaluation_calls(self.ctx, self.plan_.model_like)
        for step in steps:
            region = next((region for region in regions.values() if region is not None
                           and in_region(self.ctx, region, step.loop)), None)
            function = self._function_of(region.block) if region is not None else None
            if function is None or not self._hoisted_to_module(region, function):
                continue
            self._take_in_module_objects(regions, module_objects(self.ctx, step.function))
        compiled, made = self._compiled_with(), module_stateful_objects(self.ctx)
        for region in [region for region in regions.values() if region is not None]:
            function = self._function_of(region.block)
            if function is not None and self._hoisted_to_module(region, function):
                self._take_in_module_objects(regions, [
                    (name, statement) for name, _ in module_objects(self.ctx, function)
                    if name in compiled and any(made_with_variables(self.ctx, value) for _, value in made[name])
                    for statement, _ in made[name]])  # `optimizer = LossScaleOptimizer(optimizer)` too

    def _take_in_module_objects(self, regions: Dict[int, Optional[Region]],
                                objects: List[Tuple[str, cst.BaseStatement]]) -> None:
        for _, statement in objects:
            if not any(other is not None and in_region(self.ctx, other, statement) for other in regions.values()):
                self._take_in(regions, self.ctx.module, statement, statement)

    def _compiled_with(self) -> Set[str]:
        """The names read in the arguments of the file's ``model.compile(...)`` calls: metrics (and
        a loss-scale optimizer) made at module level and compiled in a function (``main()``) are
        made in the scope that function's model code runs in (Keras refuses a metric made out of it)."""
        return {node.value for call in self.ctx.nodes(cst.Call) if self._compiles(call)
                for arg in call.args for node in walk(arg.value) if type(node) is cst.Name}

    def _hoisted_to_module(self, region: Region, function: cst.FunctionDef) -> bool:
        """Whether a region of the module would take in ``function``'s region: it keeps no scope
        of its own, and module code makes each of its calls."""
        calls = local_calls(self.ctx, function)
        return (bool(calls) and not self._has_own_strategy(function) and not self._clears_session(region)
                and all(self._top_in(self.ctx.module, call) is not None for call in calls))

    def _grow_to(self, regions: Dict[int, Optional[Region]], node: cst.CSTNode,
                 calls_by_name: Dict[str, List[cst.Call]], depth: int, seen: Set[int]) -> None:
        """Take ``node`` into the region of a block around it, in its function (or the module);
        when there is none there, take in the calls of that function instead."""
        top = None  # the statement of the function body (or the module) that holds ``node``
        for ancestor in (node, *self.ctx.ancestors(node)):
            if isinstance(ancestor, (cst.ClassDef, cst.Lambda)):
                return
            if isinstance(ancestor, cst.FunctionDef):
                if depth == 0 or id(ancestor) in seen:
                    return
                seen.add(id(ancestor))
                callers = calls_by_name.get(ancestor.name.value, [])
                for caller in callers:
                    self._grow_to(regions, caller, calls_by_name, depth - 1, seen)
                if not callers and top is not None:
                    self._scope_uncalled(regions, ancestor, top)
                return
            if not isinstance(ancestor, cst.BaseStatement):
                continue
            top = ancestor
            block = self.ctx.block_of(ancestor)
            region = regions.get(id(block)) if block is not None else None
            if region is None:
                earlier = self._holding_a_region(regions, block, ancestor) if block is not None else None
                if earlier is not None:  # a model made in a loop before (the best of several), run after it
                    self._take_in(regions, block, earlier, self._last_naming(block, ancestor, node))
                    return
                continue
            if not in_region(self.ctx, region, ancestor) and not self._nests_a_strategy(regions, region, ancestor):
                self._take_in(regions, block, ancestor, ancestor)
            return

    def _holding_a_region(self, regions: Dict[int, Optional[Region]], block: Block,
                          statement: cst.BaseStatement) -> Optional[cst.BaseStatement]:
        """The first statement of ``block`` before ``statement`` that holds the region of a block
        nested in it (a loop whose body makes and trains a model per iteration, and keeps the best:
        ``statement`` runs a model made there), if any: the block's region starts there."""
        order = {id(top): index for index, top in enumerate(block.body)}
        holders = [self._top_in(block, region.block) for region in regions.values() if region is not None]
        earlier = [top for top in holders if top is not None and order[id(top)] < order[id(statement)]]
        return min(earlier, key=lambda top: order[id(top)]) if earlier else None

    def _last_naming(self, block: Block, statement: cst.BaseStatement, run: cst.CSTNode) -> cst.BaseStatement:
        """The last statement of ``block``, from ``statement`` on, that names the model ``run``
        runs (``best.evaluate(...)``, then ``best.save(...)``): saving it belongs in the scope too."""
        receiver = _part_of(run.func.value) if isinstance(run, cst.Call) and isinstance(run.func, cst.Attribute) else None
        order = {id(top): index for index, top in enumerate(block.body)}
        last = statement
        for top, node in self._code_of_block(block):
            if type(node) is cst.Name and node.value == receiver and order[id(top)] > order[id(last)]:
                last = top
        return last

    def _scope_uncalled(self, regions: Dict[int, Optional[Region]], function: cst.FunctionDef,
                        top: cst.BaseStatement) -> None:
        """A module-level function the file never calls nor hands on (left for a user or an
        importer to call) that runs a model made in the module's region: the statement that runs it
        gets a scope of its own in the function, from the strategy the module makes (whenever
        it is called, the module has run). Its region borrows the module region's anchor: no
        set-up goes in the function."""
        module_region = regions.get(id(self.ctx.module))
        name = function.name.value
        if (module_region is None or self.ctx.parent(function) is not self.ctx.module or function.decorators
                or not isinstance(function.body, cst.IndentedBlock) or id(function.body) in regions
                or self._name_counts().get(name, 0) > 1):  # named elsewhere: handed on, called unseen
            return
        region = regions[id(function.body)] = Region(function.body, top, top, module_region.anchor)
        self.plan_.regions.append(region)

    def _name_counts(self) -> Dict[str, int]:
        """How many times each name is written in the file (a ``def``'s name counts once)."""
        if self._names is None:
            self._names = Counter(node.value for node in self.ctx.nodes(cst.Name))
        return self._names

    def _nests_a_strategy(self, regions: Dict[int, Optional[Region]], region: Region,
                          statement: cst.BaseStatement) -> bool:
        """Whether taking ``statement`` into ``region`` would leave a function with a scope of its
        own called both inside and outside the region: that function makes its own strategy, and
        two strategies cannot nest. (Called only inside, it runs in the region's scope instead.)"""
        scoped = {id(self.ctx.enclosing_function(other.block)) for other in regions.values()
                  if other is not None and not isinstance(other.block, cst.Module)}
        order = {id(top): index for index, top in enumerate(region.block.body)}
        low = min(order[id(region.first)], order[id(statement)])
        high = max(order[id(region.last)], order[id(statement)])
        for node in walk(statement, skip=_CODE_ELSEWHERE):
            if type(node) is not cst.Call or not isinstance(node.func, cst.Name):
                continue
            function = self._functions.get(node.func.value)
            if function is None or id(function) not in scoped:
                continue
            for call in local_calls(self.ctx, function):
                top = self._top_in(region.block, call)
                if top is None or not low <= order[id(top)] <= high:
                    return True
        return False

    def _top_in(self, block: Block, node: cst.CSTNode) -> Optional[cst.BaseStatement]:
        """The statement of ``block`` that runs ``node`` where it is written (not in a function
        or class defined there), or None."""
        for candidate in (node, *self.ctx.ancestors(node)):
            if isinstance(candidate, _CODE_ELSEWHERE):
                return None
            if isinstance(candidate, cst.BaseStatement) and self.ctx.block_of(candidate) is block:
                return candidate
        return None

    def _hoist_functions(self, regions: Dict[int, Optional[Region]]) -> None:
        """A function with a region of its own, called only where the caller has a region (a
        script whose module code has a scope, calling ``train_head(...)``), runs in the caller's
        scope: its calls are taken in there, and it has no region (one IPU configuration and one
        strategy for the program, never a second strategy inside the first). A function that makes
        or enters a strategy itself keeps its own."""
        plan = self.plan_
        changed = True
        while changed:
            changed = False
            for region in list(plan.regions):
                function = self._function_of(region.block)
                if function is None or self._has_own_strategy(function) and not self._enters_local_strategy(
                        function) or self._clears_session(region):
                    continue
                del regions[id(region.block)]
                tops = self._caller_tops(regions, function)
                if tops is None or any(self._nests_a_strategy(regions, other, top) for other, top in tops):
                    repeated = self._repeated_calls(function, into_guard=regions.get(id(self.ctx.module)) is None)
                    if repeated is None:
                        regions[id(region.block)] = region
                        continue
                    for block, top in repeated:
                        self._take_in(regions, block, top, top)
                else:
                    for other, top in tops:
                        self._take_in(regions, other.block, top, top)
                plan.regions.remove(region)
                changed = True

    def _hoist_methods(self, regions: Dict[int, Optional[Region]]) -> None:
        """Methods of a plain class with regions of their own (a GAN class's ``build_generator``
        and ``build_discriminator``) would each configure the IPU and make a strategy, and what
        the class then compiles and trains with both models would mix two strategies. When only
        code outside the class makes its objects, the regions move there: each statement that makes
        one, to the last statement of its block that uses the object or a model taken from it
        (``model = Net().build()``, then ``model.fit``). So does a class whose methods only return
        a model or keep one in an attribute (``self.model = self._make_model()``), which have no
        region of their own: where its objects are made and used is the model code."""
        by_class: Dict[int, Tuple[cst.ClassDef, List[Region]]] = {
            id(owner_class): (owner_class, []) for owner_class in self._model_making_classes()}
        for region in self.plan_.regions:
            function = self.ctx.enclosing_function(region.block) if not isinstance(region.block, cst.Module) else None
            owner_class = self._plain_class_of(function)
            if owner_class is not None:
                by_class.setdefault(id(owner_class), (owner_class, []))[1].append(region)
        for owner_class, methods in by_class.values():
            places = self._construction_places(owner_class)
            if not places or owner_class.name.value in self.owned_strategies:
                continue  # (a class with a strategy of its own scopes its methods: ``_scope_instance_runs``)
            for region in methods:
                del regions[id(region.block)]
                self.plan_.regions.remove(region)
            for block, first, last in places:
                self._take_in(regions, block, first, last)

    def _construction_places(self, owner_class: cst.ClassDef
                             ) -> Optional[List[Tuple[Block, cst.BaseStatement, cst.BaseStatement]]]:
        """Per call that makes an object of ``owner_class``: its block, the statement that makes it
        and the last statement of the block that names the object; None when one is made inside a
        class, or where no region can go."""
        name = owner_class.name.value
        calls = [call for call in self.ctx.nodes(cst.Call) if is_name(call.func, name)]
        if not calls or any(self.ctx.enclosing(call, cst.ClassDef) is not None for call in calls):
            return None
        places = []
        for call in calls:
            statement = self.ctx.statement_of(call)
            block = self._lifted(self._outer_block(self.ctx.block_of(statement)))
            if block is None or self._inside_builder(block):
                return None
            first = self._statement_in(block, statement)
            places.append((block, first, self._last_use_of_object(block, first)))
        return places

    def _last_use_of_object(self, block: Block, first: cst.BaseStatement) -> cst.BaseStatement:
        """The last statement of ``block`` that names what ``first`` assigns (an object of a class
        of the file, or a model its method built: ``model = Net().build()``), or a part of it taken
        later (``model = net.build()``, ``encoder = trainer.encoder``); ``first`` when there is none."""
        assign = single_small(first)
        bound = {name for target in assign.targets for name in bound_names(target.target)} if isinstance(
            assign, cst.Assign) else set()
        names_by_statement: Dict[int, Set[str]] = {}
        for top, node in self._code_of_block(block):
            if type(node) is cst.Name:
                names_by_statement.setdefault(id(top), set()).add(node.value)
        last = first
        for top in block.body[block.body.index(first) + 1:]:
            if not names_by_statement.get(id(top), set()) & bound:
                continue
            last = top
            taken = single_small(top)
            if isinstance(taken, cst.Assign) and _part_of(taken.value) in bound:
                bound |= {name for target in taken.targets for name in bound_names(target.target)}
        return last

    def _plain_class_of(self, function: Optional[cst.FunctionDef]) -> Optional[cst.ClassDef]:
        """The class ``function`` is a method of, when that class is no Keras class (a model, a
        layer that holds a model of its own, a callback...)."""
        owner_class = self.ctx.parent(self.ctx.parent(function)) if function is not None else None
        if isinstance(owner_class, cst.ClassDef) and owner_class.name.value not in self.model_classes and (
                owner_class.name.value not in keras_subclasses(self.ctx)):
            return owner_class
        return None

    def _model_making_classes(self) -> List[cst.ClassDef]:
        """Plain classes of the file (no Keras model, no strategy of their own) with a method that
        assigns a model (to a name or an attribute: ``self.model = keras.Model(...)``) or returns
        one (``return keras.Sequential(...)``)."""
        methods = [function for function in self.ctx.nodes(cst.FunctionDef)
                   if self._plain_class_of(function) is not None and self._returns_model(function)]
        methods += [self.ctx.enclosing_function(assign) for assign in self._model_assignments()]
        found: Dict[int, cst.ClassDef] = {}
        for method in methods:
            owner_class = self._plain_class_of(method)
            if owner_class is not None and owner_class.name.value not in self.owned_strategies:
                found[id(owner_class)] = owner_class
        for owner_class in self._classes_given_builders():
            found.setdefault(id(owner_class), owner_class)
        return list(found.values())

    def _classes_given_builders(self) -> List[cst.ClassDef]:
        """Plain classes whose body hands a builder of the file on (a dataclass field
        ``model: keras.Model = field(default_factory=build_model)``): each object they make
        builds a model."""
        found = []
        for calls in self._builder_handovers().values():
            for call in calls:
                owner_class = self.ctx.enclosing(call, cst.ClassDef)
                if (owner_class is not None and self.ctx.enclosing_function(call) is None
                        and owner_class.name.value not in self.model_classes | self.owned_strategies.keys()
                        and owner_class.name.value not in keras_subclasses(self.ctx)):
                    found.append(owner_class)
        return found

    def _set_up_before_branches(self) -> None:
        """Regions of one function (or of the module) in different branches (``if args.mode ==
        "train":`` with a model trained, ``elif args.mode == "eval":`` with one loaded) would each
        configure the IPU system and make a strategy in their branch: the set-up goes once, before
        the statement of the block they share that holds the first of them, which runs on every
        path to each of them. A region that clears the session keeps its own set-up after that."""
        by_function: Dict[int, List[Region]] = {}
        for region in self.plan_.regions:
            function = None if isinstance(region.block, cst.Module) else self.ctx.enclosing_function(region.block)
            if self.ctx.enclosing_function(region.anchor) is function and not self._clears_session(region):
                by_function.setdefault(id(function), []).append(region)
        for regions in by_function.values():
            if len({id(self.ctx.block_of(region.anchor)) for region in regions}) < 2:
                continue
            block = self._common_block([region.anchor for region in regions])
            tops = [self._top_in(block, region.anchor) for region in regions] if block is not None else [None]
            if any(top is None for top in tops):
                continue
            for region, top in zip(regions, tops):
                region.anchor = self._anchor(top)

    def _configure_before_repeated_calls(self) -> None:
        """A function that keeps a region of its own (it clears the session first, or makes its own
        strategy) and is called repeatedly from one place (``train_fold`` in a k-fold loop) would
        configure the IPU system on every call: the configuration goes before the first of those
        calls, out of any loop (the strategy and its scope stay in the function)."""
        for region in self.plan_.regions:
            function = self._function_of(region.block)
            if function is None or self.ctx.enclosing_function(region.anchor) is not function:
                continue  # module code, or a scope that borrows the module's set-up
            module_code = any(other.block is self.ctx.module for other in self.plan_.regions)
            repeated = self._repeated_calls(function, into_guard=not module_code)
            if repeated:
                block = repeated[0][0]
                region.config_anchor = self._anchor(min((top for _, top in repeated), key=block.body.index))

    def _self_configuring_regions(self):
        """The regions whose set-up is in their own function, with no configuration placed
        elsewhere yet, each with that function."""
        for region in self.plan_.regions:
            function = self._function_of(region.block)
            if region.config_anchor is None and function is not None \
                    and self.ctx.enclosing_function(region.anchor) is function:
                yield region, function

    def _configure_before_caller_strategy(self) -> None:
        """A function with a region of its own, called from one function after that function binds
        a strategy of the program (``strategy = get_strategy()`` in ``main()``, only to print its
        replicas, then ``train()``): the binding makes an IPU strategy, which needs the IPU system
        configured first, so the configuration goes before the binding, out of any loop (the region's
        strategy and scope stay in the function, which runs after it)."""
        for region, function in self._self_configuring_regions():
            calls = list(local_calls(self.ctx, function))
            if not calls or len({id(self.ctx.enclosing_function(call)) for call in calls}) != 1:
                continue
            body = self._body_of(self.ctx.enclosing_function(calls[0]))
            tops = [self._top_in(body, call) for call in calls] if body is not None else [None]
            if any(top is None for top in tops):
                continue
            first_call = min(body.body.index(top) for top in tops)
            bindings = [statement for statement, _ in self._strategy_bindings
                        if self.ctx.block_of(statement) is body and body.body.index(statement) < first_call]
            if bindings:
                region.config_anchor = self._anchor(min(bindings, key=body.body.index))

    def _configure_before_sibling_calls(self) -> None:
        """Functions with regions of their own (``train()`` and ``evaluate()``) all called from one
        caller (``main()`` runs both) would each configure the IPU system again in one run: the
        configuration goes once, before the first statement of the caller that calls one of them
        (the strategies and scopes stay in the functions)."""
        by_caller: Dict[int, List[Tuple[Region, List[cst.Call]]]] = {}
        for region, function in self._self_configuring_regions():
            calls = list(local_calls(self.ctx, function))
            callers = {id(self.ctx.enclosing_function(call)) for call in calls}
            if len(callers) == 1:
                by_caller.setdefault(callers.pop(), []).append((region, calls))
        for siblings in by_caller.values():
            functions = {id(self._function_of(region.block)) for region, _ in siblings}
            if len(functions) < 2:
                continue
            calls = [call for _, found in siblings for call in found]
            block = self._common_block(calls)
            tops = [self._top_in(block, call) for call in calls] if block is not None else [None]
            if any(top is None for top in tops) or self._inside_builder(block):
                continue
            first = self._anchor(min(tops, key=block.body.index))
            for region, _ in siblings:
                region.config_anchor = first

    def _common_block(self, nodes: List[cst.CSTNode]) -> Optional[Block]:
        """The innermost block (of one function, or the module) that holds every one of ``nodes``:
        the body of ``if __name__ == "__main__":`` rather than the module around it."""
        def blocks(node: cst.CSTNode) -> List[Block]:
            found = []
            for ancestor in self._ancestors_in_function(node):
                if isinstance(ancestor, (cst.IndentedBlock, cst.Module)):
                    found.append(ancestor)
            if self.ctx.enclosing_function(node) is None:
                found.append(self.ctx.module)
            return found

        shared = [block for block in blocks(nodes[0])
                  if all(any(block is other for other in blocks(node)) for node in nodes[1:])]
        return shared[0] if shared else None

    def _repeated_calls(self, function: cst.FunctionDef, into_guard: bool = False
                        ) -> Optional[List[Tuple[Block, cst.BaseStatement]]]:
        """When ``function`` is called several times, or in a loop or a comprehension, or handed
        to a call that runs it (``map(train, widths)``), from one function (or the
        module), and from nowhere else: the statements of that function's body that make the calls.
        With its own region it would configure the IPU and make a strategy on every call; its
        callers' scope takes them in instead. None otherwise. With ``into_guard`` (the module has no
        model code of its own), calls all made in the body of ``if __name__ == "__main__":`` give
        the statements of that body, so that importing the port configures no IPU."""
        calls: List[cst.CSTNode] = list(local_calls(self.ctx, function))
        # Handed to a call: run by it (`app.run(main)`, once), or any number of times by a mapper.
        handed = [node for node in self.ctx.nodes(cst.Name) if node.value == function.name.value
                  and isinstance(self.ctx.parent(node), cst.Arg) and self.ctx.parent(node).value is node
                  and self.ctx.qualified_name(node) is None]
        calls += handed
        if not calls:
            return None
        callers = {id(self.ctx.enclosing_function(call)) for call in calls}
        lambdas = self._handed_lambdas(calls)
        looped = any(_maps(self.ctx.parent(self.ctx.parent(node))) for node in [*handed, *lambdas.values()]) or any(
            isinstance(ancestor, _REPEATING) for call in calls for ancestor in self._ancestors_in_function(call))
        if len(callers) != 1 or not (len(calls) > 1 or looped):
            return None
        found = []
        for call in calls:
            owner_body = self._body_of(self.ctx.enclosing_function(call))
            top = self._top_in(owner_body, self._handing_call(lambdas, call)) if owner_body is not None else None
            if top is None or self._inside_builder(owner_body):
                return None
            found.append((owner_body, top))
        guard = found[0][1]
        if into_guard and is_main_guard(guard) and all(
                block is self.ctx.module and top is guard for block, top in found):
            return [(guard.body, self._top_in(guard.body, self._handing_call(lambdas, call))) for call in calls]
        return found

    def _handed_lambdas(self, calls: List[cst.CSTNode]) -> Dict[int, cst.Lambda]:
        """{id(call): the lambda it is the body of}, for those of ``calls`` made in a lambda handed
        to a call as an argument (``study.optimize(lambda trial: objective(trial, x, y), n_trials=20)``):
        the call that is handed the lambda runs the function."""
        found = {}
        for call in calls:
            ancestor = self.ctx.parent(call)
            if isinstance(ancestor, cst.Lambda) and isinstance(self.ctx.parent(ancestor), cst.Arg):
                found[id(call)] = ancestor
        return found

    def _handing_call(self, lambdas: Dict[int, cst.Lambda], call: cst.CSTNode) -> cst.CSTNode:
        """The call that is handed the lambda ``call`` is made in, else ``call``."""
        handed = lambdas.get(id(call))
        return call if handed is None else self.ctx.parent(self.ctx.parent(handed))

    def _ancestors_in_function(self, node: cst.CSTNode):
        """The ancestors of ``node`` up to the function (or class, or module) it is written in."""
        for ancestor in self.ctx.ancestors(node):
            if isinstance(ancestor, _CODE_ELSEWHERE):
                return
            yield ancestor

    def _body_of(self, function: Optional[cst.FunctionDef]) -> Optional[Block]:
        """The block of statements of ``function`` (the module when None)."""
        if function is None:
            return self.ctx.module
        return function.body if isinstance(function.body, cst.IndentedBlock) else None

    def _function_of(self, block: Block) -> Optional[cst.FunctionDef]:
        """The module-level function whose body ``block`` is in, if any."""
        function = self.ctx.enclosing_function(block) if not isinstance(block, cst.Module) else None
        return function if function is not None and self._functions.get(function.name.value) is function else None

    def _clears_session(self, region: Region) -> bool:
        """Whether the body that holds ``region`` clears the Keras session before it (a function
        that trains a fresh model per fold): that drops the graph of a scope around its call, so
        the function keeps its own scope, after the clearing."""
        body = list(region.block.body)
        return any(clears_session(self.ctx, statement) for statement in body[:body.index(region.first)])

    def _enters_local_strategy(self, function: cst.FunctionDef) -> bool:
        """Whether ``function`` makes no strategy itself and only enters the scope of one that a
        function of the file makes for it (``strategy = make_strategy()`` then ``with
        strategy.scope():``, or ``with make_strategy().scope():``): called only in the scope of the
        program's IPU strategy, it runs there, and a region of its own would configure the IPU
        again and enter a second strategy inside the first. (A strategy it is given, or the
        module's, is the program's: its scope stays, entered again.)"""
        made = {id(node) for node in self.plan_.replaced_strategies}
        if any(id(node) in made for node in walk(function)):
            return False
        local = {name for node in walk(function.body, skip=_CODE_ELSEWHERE) if isinstance(node, cst.Assign)
                 for target in node.targets for name in bound_names(target.target)} - set(parameter_names(function))
        withs = [node for node in self.plan_.transparent if self.ctx.enclosing_function(node) is function]
        entered = [_entered_receiver(node) for node in withs]
        return bool(withs) and all(isinstance(node, cst.Call) or isinstance(node, cst.Name) and node.value in local
                                   for node in entered)

    def _has_own_strategy(self, function: cst.FunctionDef) -> bool:
        """Whether ``function`` creates a distribution strategy or enters a device or strategy scope."""
        owned = {id(node) for node in self.plan_.replaced_strategies} | {id(node) for node in self.plan_.transparent}
        return any(id(node) in owned for node in walk(function))

    def _caller_tops(self, regions: Dict[int, Optional[Region]],
                     function: cst.FunctionDef) -> Optional[List[Tuple[Region, cst.BaseStatement]]]:
        """For every call of ``function``, the region of a block around it in its own function (or
        the module) and the statement of that block that holds it; None when a call has none."""
        calls = local_calls(self.ctx, function)
        if not calls:
            return None
        found = []
        for call in calls:
            for ancestor in self.ctx.ancestors(call):
                if isinstance(ancestor, _CODE_ELSEWHERE):
                    return None
                block = self.ctx.block_of(ancestor) if isinstance(ancestor, cst.BaseStatement) else None
                region = regions.get(id(block)) if block is not None else None
                if region is not None:
                    found.append((region, ancestor))
                    break
            else:
                return None
        return found

    def _model_like_names(self) -> Tuple[Set[str], Set[str], Set[str]]:
        """Names that hold a model, names that hold an object building models (a tuner given
        a builder), and names of lists and dicts of models. A model's names include its aliases:
        names assigned a part of it (``trainer.model``, ``model.get_layer("encoder")``), not what
        running it gives, and the names that take it out of a list or dict (``for name, m in
        models.items()``)."""
        plan = self.plan_
        names = set(plan.model_names | plan.compiled_names)
        holders: Set[str] = set()
        for calls in self._builder_handovers().values():
            for call in calls:
                if not isinstance(self.ctx.parent(call), cst.Assign) or (
                        isinstance(call.func, cst.Name) and self._has_strategy(call.func.value)):
                    continue
                # What a function entering a strategy of its own returns is the model it built
                # there (``model, history = compile_and_fit(build_model, x, y)``), not an object
                # that builds and trains models: only running it counts.
                bound = [name for target in self.ctx.parent(call).targets for name in bound_names(target.target)]
                if self._enters_own_strategy(call):
                    names.update(bound)
                    plan.own_scope_models.update((name, self.ctx.module.code_for_node(call.func)) for name in bound)
                else:
                    holders.update(bound)
        collections: Set[str] = set()
        # What a model assignment assigns: a call the file cannot see make a model, whose result is trained.
        assigned_models = {id(assign.value) for assign in plan.model_assignments}
        changed = True
        while changed:  # an alias of an alias
            changed = False
            for assign in self.ctx.nodes(cst.Assign):
                root = _part_of(assign.value)
                if root is None or root not in names | holders:
                    continue
                for target in assign.targets:
                    for name in bound_names(target.target):
                        if name not in names:
                            names.add(name)
                            changed = True
            for name in self._parameters_given(names):
                if name not in names:
                    names.add(name)
                    changed = True
            taken_out, collections = held_models(self.ctx, lambda node: (
                isinstance(node, cst.Name) and node.value in names or self._is_model_call(node)
                or id(node) in assigned_models))
            if taken_out - names:
                names |= taken_out
                changed = True
        return names - holders, holders, collections

    def _parameters_given(self, names: Set[str]) -> Set[str]:
        """Parameters of the file's functions that a call gives one of ``names`` (a model), a part
        of one, or a model made in the call: in ``show(conv_model)``, ``show(vae.decoder)`` or
        ``show(keras.models.load_model(path))``, ``def show(model): model.predict(...)`` runs that
        model."""
        found: Set[str] = set()
        for call in self.ctx.nodes(cst.Call):
            function = self._functions.get(call.func.value) if isinstance(call.func, cst.Name) else None
            if function is None:
                continue
            params = [param.name.value for param in function.params.params]
            for index, arg in enumerate(call.args):
                if arg.star or _part_of(arg.value) not in names and not self._is_model_call(arg.value):
                    continue
                if arg.keyword is not None:
                    found.add(arg.keyword.value)
                elif index < len(params):
                    found.add(params[index])
        return found

    def _outer_block(self, block: Optional[Block]) -> Optional[Block]:
        """``block``, or the block around the transparent scopes that hold it."""
        transparent = {id(node) for node in self.plan_.transparent}
        while block is not None:
            owner = self.ctx.parent(block)
            if owner is None or id(owner) not in transparent or self.ctx.block_of(owner) is None:
                return block
            block = self.ctx.block_of(owner)
        return None

    def _cover_scopes(self, regions: Dict[int, Optional[Region]]) -> None:
        """An existing device or strategy scope says where model code lives, whether or not the
        model is recognised: what it holds stays in the IPU strategy's scope. A region of its block
        grows to take it in; a block without one gets a region from the scope to the last
        statement that runs what the scope created."""
        for with_node in self.plan_.transparent:
            block = self._outer_block(self.ctx.block_of(with_node))
            if block is None or self._inside_builder(block):
                continue
            top = self._statement_in(block, with_node)
            order = {id(statement): index for index, statement in enumerate(block.body)}
            last = top if regions.get(id(block)) is not None else self._last_use(block, top, order)
            self._take_in(regions, block, top, last)

    def _take_in(self, regions: Dict[int, Optional[Region]], block: Block,
                 first: cst.BaseStatement, last: cst.BaseStatement) -> None:
        """The region of ``block`` grows to take in the statements ``first`` to ``last``; a block
        without one gets it as its region."""
        region = regions.get(id(block))
        if region is None:
            region = regions[id(block)] = Region(block, first, last, self._anchor(first))
            self.plan_.regions.append(region)
            return
        order = {id(statement): index for index, statement in enumerate(block.body)}
        if order[id(first)] < order[id(region.first)]:
            region.first = first
            if self.ctx.block_of(region.anchor) is block or self.ctx.enclosing_function(region.anchor) is \
                    self.ctx.enclosing_function(first):  # not an anchor borrowed from the module
                region.anchor = self._anchor(first)
        if order[id(last)] > order[id(region.last)]:
            region.last = last

    def _statement_in(self, block: Block, node: cst.CSTNode) -> cst.BaseStatement:
        """The statement of ``block`` that holds ``node``."""
        for candidate in (node, *self.ctx.ancestors(node)):
            if self.ctx.block_of(candidate) is block:
                return candidate
        raise ValueError("node outside block")  # pragma: no cover - callers pass a node of the block

    def _last_use(self, block: Block, scope: cst.BaseStatement, order: Dict[int, int]) -> cst.BaseStatement:
        """The last statement of ``block`` that runs a model method (fit, evaluate, ...) on a name
        bound inside ``scope``, or ``scope`` itself."""
        bound = {name for node in walk(scope, skip=_CODE_ELSEWHERE) if isinstance(node, cst.Assign)
                 for target in node.targets for name in bound_names(target.target)}
        last = scope
        for top, node in self._code_of_block(block):
            if (type(node) is cst.Call and isinstance(node.func, cst.Attribute)
                    and node.func.attr.value in RUNNING_METHODS | {"compile", "save", "save_weights"}
                    and isinstance(node.func.value, cst.Name) and node.func.value.value in bound
                    and order[id(top)] > order[id(last)]):
                last = top
        return last

    def _in_model_fn(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` is in a function the file hands to an Estimator as its ``model_fn``."""
        if self._model_fns is None:
            self._model_fns = estimator_model_fns(self.ctx)
        function = self.ctx.enclosing_function(node) if not isinstance(node, cst.Module) else None
        return function is not None and function.name.value in self._model_fns

    def _inside_builder(self, block: Block) -> bool:
        """Whether ``block`` runs in its callers' scope: in a function that builds a model (called
        here or from another module), in one that trains and returns a model and is called, or in
        a method of a Keras model class of the file (``call`` runs where the model is called), or
        of a Keras layer class of the file (its ``__init__`` makes its sub-models where the layer is
        made: in a model's building, in the scope of its callers)."""
        function = self.ctx.enclosing_function(block) if not isinstance(block, cst.Module) else None
        if function is None:
            return False
        if in_model_class(self.ctx, function, self.model_classes) or self._in_layer_class(function):
            return True
        if id(function) in self.builder_methods:
            return True
        name = function.name.value
        if name in self.global_makers:
            return True
        # A builder the file never calls is called by an importer (or by nobody): its model is
        # made in that caller's scope too, where the importer's port puts it; a scope and an IPU
        # configuration of its own would make a second strategy inside the importer's.
        return name in self.builders or (name in self.returners and self._is_called(function))

    def _in_layer_class(self, function: cst.FunctionDef) -> bool:
        """Whether ``function`` is a method of a Keras layer class of the file."""
        return id(self.ctx.enclosing(function, cst.ClassDef)) in self.layer_classes

    def _is_called(self, function: cst.FunctionDef) -> bool:
        """Whether the file calls ``function`` by its name, hands it to a call that will
        (``kt.Hyperband(build_model, ...)``), or keeps it where code the port cannot follow by
        name calls it: a value of a dict or list, an alias, or registered by a decorator of the
        file (``MODELS[arch](...)``). Such a function runs in its caller's scope; a scope of its own
        would nest a second strategy in that one."""
        name = function.name.value
        return any(isinstance(call.func, cst.Name) and call.func.value == name for call in self.ctx.nodes(cst.Call)
                   ) or bool(self._builder_handovers().get(name)) or bool(
            self._registering_decorators(function)) or self._named_as_value(function)

    def _named_as_value(self, function: cst.FunctionDef) -> bool:
        """Whether the file names ``function`` other than in its ``def`` or to call it: as a value
        (``{"mlp": build_mlp}``, ``make = build_mlp``) that something calls later."""
        name = function.name.value
        for node in self.ctx.nodes(cst.Name):
            if node.value != name or node is function.name or self.ctx.qualified_name(node) is not None:
                continue
            parent = self.ctx.parent(node)
            called = isinstance(parent, cst.Call) and parent.func is node
            # An attribute, a keyword, a parameter or an assigned name that is spelled the same.
            other = (isinstance(parent, cst.Attribute) and parent.attr is node
                     or isinstance(parent, cst.Arg) and parent.keyword is node
                     or isinstance(parent, (cst.Param, cst.AssignTarget)))
            if not (called or other):
                return True
        return False

    def _builder_handovers(self) -> Dict[str, List[cst.Call]]:
        """Per builder of the file, the calls that take it as an argument (not calling it):
        a tuner or a factory that builds models with it."""
        if self._handovers is None:
            self._handovers = {}
            for call in self.ctx.nodes(cst.Call):
                for arg in call.args:
                    if (isinstance(arg.value, cst.Name) and arg.value.value in self.builders
                            and self.ctx.qualified_name(arg.value) is None):
                        self._handovers.setdefault(arg.value.value, []).append(call)
        return self._handovers

    def _model_names_in(self, block: Block) -> Set[str]:
        """The names the statements of ``block`` assign a model to, or put one in by key (an
        ensemble's ``models[name] = build(name)``: the model is then run as ``models[name]``)."""
        model_assignments = {id(assign) for assign in self._model_assignments()}
        return {name for _, node in self._code_of_block(block) if id(node) in model_assignments
                for target in node.targets for name in bound_names(target.target) + _keyed_in(target.target)}

    def _region_in(self, block: Block) -> Optional[Region]:
        """From the first statement of ``block`` that assigns a model to the last one that uses it."""
        names = self._model_names_in(block)
        if not names:
            return None
        uses = [top for top, node in self._code_of_block(block) if type(node) is cst.Name and node.value in names]
        if not uses:
            return None
        uses.extend(scope_statements(self.ctx, block, names, self._model_holders()))
        order = {id(statement): index for index, statement in enumerate(block.body)}
        uses.sort(key=lambda statement: order[id(statement)])
        first, last = uses[0], uses[-1]
        # A functional model's layers are created (with their weights) before `keras.Model(...)`:
        # they belong in the scope too (Targeting the IPU from TensorFlow 2: construct the model
        # inside the scope).
        construction = self._layer_statements(block)
        for layer in construction:
            if order[id(layer)] < order[id(first)]:
                first = layer
        construction += [top for top, node in self._code_of_block(block)
                         if isinstance(node, cst.Assign) and self._is_model_assignment(node)]
        first = self._made_earlier(block, first, last, construction, order)
        return Region(block, first, last, self._anchor(first))

    def _cover_objects_made_before(self, regions: Dict[int, Optional[Region]]) -> None:
        """Each region grows back to the optimizers and metrics made before it in its block, that
        its model code uses (``_objects_made_before``)."""
        for region in [region for region in regions.values() if region is not None]:
            order = {id(statement): index for index, statement in enumerate(region.block.body)}
            first = self._objects_made_before(region.block, region.first, region.last, order)
            if first is not region.first:
                self._take_in(regions, region.block, first, region.last)

    def _objects_made_before(self, block: Block, first: cst.BaseStatement, last: cst.BaseStatement,
                             order: Dict[int, int]) -> cst.BaseStatement:
        """The first statement of the region once it takes in the optimizers and metrics made
        before it that the model code uses (``optimizer = mixed_precision.LossScaleOptimizer(opt)``
        or ``optimizer = get_optimizer(args)`` above ``model = build_model()``, then
        ``compile(optimizer=optimizer)``): Keras refuses in ``compile`` a metric whose variables
        were made out of the model's strategy, and the loss scale of a ``LossScaleOptimizer`` is
        made with it, on the host, where the IPU's step cannot update it (Targeting the IPU from
        TensorFlow 2: create the model and its optimizer inside the scope)."""
        region = range(order[id(first)], order[id(last)] + 1)
        used = {node.value for top, node in self._code_of_block(block)
                if order[id(top)] in region and type(node) is cst.Name}
        makers = [top for top, node in self._code_of_block(block)
                  if order[id(top)] < order[id(first)] and isinstance(node, cst.Assign)
                  and isinstance(node.value, cst.Call) and makes_stateful(self.ctx, node.value)
                  and any(name in used for target in node.targets for name in bound_names(target.target))]
        return min(makers, key=lambda top: order[id(top)]) if makers else first

    def _made_earlier(self, block: Block, first: cst.BaseStatement, last: cst.BaseStatement,
                      construction: List[cst.BaseStatement], order: Dict[int, int]) -> cst.BaseStatement:
        """The first statement of the region once it takes in what the model is built on: a
        network made by a call the port does not know (``backbone = make_backbone(...)``, a
        constructor picked with ``getattr``) before ``first``, that the model code then uses as a
        model or layer (``backbone.output``, ``backbone(x)``, ``backbone.trainable = False``). Its
        weights are variables of the model, made in the scope like those of its layers."""
        while True:
            used = self._used_as_networks(block, first, last, {id(top) for top in construction}, order)
            makers = [top for top, node in self._code_of_block(block)
                      if order[id(top)] < order[id(first)] and isinstance(node, cst.Assign)
                      and isinstance(node.value, cst.Call)
                      and any(name in used for target in node.targets for name in bound_names(target.target))]
            if not makers:
                self.plan_.outer_networks.extend(self._outer_makers(block, used))
                return first
            first = min(makers, key=lambda top: order[id(top)])
            construction.extend(makers)  # what they are made with is used the same way

    def _outer_makers(self, block: Block, names: Set[str]) -> List[cst.Assign]:
        """The assignments by a call of ``names`` (networks the model code of ``block`` uses) in
        the bodies around the function that holds ``block``, when ``block`` does not assign them."""
        if isinstance(block, cst.Module) or any(
                isinstance(node, cst.Assign) and names & {name for target in node.targets
                                                          for name in bound_names(target.target)}
                for _, node in self._code_of_block(block)):
            return []
        function = self.ctx.enclosing_function(block)
        outer = {id(None)} | {id(ancestor) for ancestor in self.ctx.ancestors(function)
                              if isinstance(ancestor, cst.FunctionDef)}
        return [assign for assign in self.ctx.nodes(cst.Assign) if isinstance(assign.value, cst.Call)
                and id(self.ctx.enclosing_function(assign)) in outer
                and names & {name for target in assign.targets for name in bound_names(target.target)}]

    def _feeding(self, code: List[Tuple[cst.BaseStatement, cst.CSTNode]], construction: Set[int]) -> Set[int]:
        """The statements of ``code`` that assign what a statement building the model reads,
        directly or through other such statements (``features = backbone(inputs)`` before
        ``keras.Model(inputs, head(features))``)."""
        reads: Dict[int, Set[str]] = {}
        binds: Dict[int, Set[str]] = {}
        for top, node in code:
            if type(node) is cst.Name:
                reads.setdefault(id(top), set()).add(node.value)
            elif isinstance(node, cst.Assign):
                binds.setdefault(id(top), set()).update(
                    name for target in node.targets for name in bound_names(target.target))
        feeding: Set[int] = set()
        read = set().union(*(reads.get(top, set()) for top in construction))
        changed = True
        while changed:
            changed = False
            for top, names in binds.items():
                if top not in construction and top not in feeding and names & read:
                    feeding.add(top)
                    read |= reads.get(top, set())
                    changed = True
        return feeding

    def _used_as_networks(self, block: Block, first: cst.BaseStatement, last: cst.BaseStatement,
                          construction: Set[int], order: Dict[int, int]) -> Set[str]:
        """Names that the statements ``first`` to ``last`` of ``block`` use as a Keras network:
        ``backbone.trainable = False``, or, in a statement that builds the model (or what it is
        built from), a model's attribute read (``backbone.output``), called (``backbone(inputs)``)
        or listed as a layer."""
        code = [(top, node) for top, node in self._code_of_block(block)
                if order[id(first)] <= order[id(top)] <= order[id(last)]]
        construction = construction | self._feeding(code, construction)
        found = set()
        for top, node in code:
            if isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Attribute) and (
                    node.target.attr.value == "trainable" and isinstance(node.target.value, cst.Name)):
                found.add(node.target.value.value)
            if id(top) not in construction:
                continue
            if isinstance(node, cst.Attribute) and node.attr.value in _NETWORK_ATTRIBUTES and isinstance(
                    node.value, cst.Name):
                found.add(node.value.value)
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
                found.add(node.func.value)
            elif isinstance(node, cst.List):
                found.update(element.value.value for element in node.elements if isinstance(element.value, cst.Name))
        return found

    def _model_holders(self) -> Set[str]:
        """Names that hold a model, a part of one, an object that builds them, or a list of them."""
        return self.plan_.model_like | self.plan_.holders | self.plan_.model_collections

    def _layer_statements(self, block: Block) -> List[cst.BaseStatement]:
        """Statements of ``block`` that create Keras inputs or layers, a pre-trained network of
        ``keras.applications``, TF Hub, KerasHub or Hugging Face (a backbone the model is built on:
        its weights are variables too), or metric objects the model is compiled with."""
        found = []
        host = self._host_layers()
        for top, node in self._code_of_block(block):
            if type(node) is not cst.Call:
                continue
            name = self.ctx.keras_name(node.func)
            if name is not None and (name.startswith(("keras.layers.", "keras.applications.")) or name == "keras.Input"
                                     or _metric_object(name)) or _pretrained_layer(self.ctx.qualified_name(node.func)):
                # The assignment that holds the call, in the statement or in a block it holds (a `with tf.device`).
                assign = next((ancestor for ancestor in self.ctx.ancestors(node)
                               if isinstance(ancestor, cst.Assign) or ancestor is top), None)
                if not (isinstance(assign, cst.Assign) and any(
                        isinstance(target.target, cst.Name) and target.target.value in host for target in assign.targets)):
                    found.append(top)
        return found

    def _host_pipeline(self, assign: cst.Assign) -> bool:
        """``augment = keras.Sequential([layers.RandomFlip(), ...])`` used only in ``dataset.map``:
        preprocessing on the host, not a model the IPU trains."""
        names = [target.target.value for target in assign.targets if isinstance(target.target, cst.Name)]
        return bool(names) and all(name in self._host_layers() for name in names)

    def _host_layers(self) -> Set[str]:
        """Names of layers (or stacks of them) that only the ``tf.data`` pipeline runs (a
        ``TextVectorization`` or an augmentation used in ``dataset.map``, and otherwise only adapted
        or read): not model layers, their variables belong on the host."""
        if self._host is None:
            candidates = {target.target.value for assign in self.ctx.nodes(cst.Assign)
                          if self._makes_layers(assign.value)
                          for target in assign.targets if isinstance(target.target, cst.Name)}
            # A lookup or `Normalization` fitted and called on the host's data only (label
            # encoding, decoding predictions): host work too, though no map runs it.
            preprocessing = {target.target.value for assign in self.ctx.nodes(cst.Assign)
                             if isinstance(assign.value, cst.Call) and (self.ctx.keras_name(assign.value.func) or "")
                             .rsplit(".", 1)[-1] in _HOST_PREPROCESSING
                             for target in assign.targets if isinstance(target.target, cst.Name)}
            self._host = host_only(self.ctx, candidates) | host_only(
                self.ctx, preprocessing, host_call=lambda call: eager_host_call(self.ctx, call))
        return self._host

    def _makes_layers(self, value: cst.BaseExpression) -> bool:
        """A layer, a stack of them, or a list of layers (``[layers.RandomFlip(), ...]``)."""
        if isinstance(value, (cst.List, cst.Tuple)):
            return bool(value.elements) and all(self._makes_layers(element.value) for element in value.elements)
        return isinstance(value, cst.Call) and (self.ctx.keras_name(value.func) or "").startswith(_LAYER_MAKERS)

    def _code_of_block(self, block: Block) -> List[Tuple[cst.BaseStatement, cst.CSTNode]]:
        """``(statement of block, node)`` for every node of the block's statements, nested
        functions, classes and lambdas left out (they run elsewhere); cached per block."""
        cached = self._block_code.get(id(block))
        if cached is None:
            cached = self._block_code[id(block)] = [
                (statement, node) for statement in block.body if not isinstance(statement, _CODE_ELSEWHERE)
                for node in walk(statement, skip=_CODE_ELSEWHERE)
            ]
        return cached

    def _anchor(self, statement: cst.BaseStatement) -> cst.BaseStatement:
        """Where set-up for a region goes: before it, or before the outermost loop around it in
        the same function, so that the IPU is configured once."""
        anchor = statement
        for ancestor in self.ctx.ancestors(statement):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                break
            if isinstance(ancestor, (cst.For, cst.While)):
                anchor = ancestor
        return anchor
