"""Keras on the emulated IPU (Targeting the IPU from TensorFlow 2, "Keras with IPUs").

`patches(tf, keras)` returns (object, attribute, new value) triples that the installer applies
and undoes: `fit`/`evaluate`/`predict` check the IPU's data and model rules when the model was
created in an `IPUStrategy` scope, the models get the IPU extension methods, and `keras.ipu`
provides `PipelineStage`."""

import collections.abc
import functools
import inspect
import logging
import math
import threading
import types

from . import ipu_config, tf_ipu
from .state import STATE

GENERATOR_MESSAGE = (
    "The provided input of type {kind} is not compatible with the IPU's requirement to know the data "
    "shape ahead of time. Please use `tf.data.Dataset.from_generator()` with a fully defined "
    "`output_signature` instead."
)
PARTIAL_BATCH = (
    "The provided set of data has a partial batch, which could lead to inconsistent results: "
    "{n} samples are not divisible by the batch size {batch_size}. Please make sure the number of "
    "samples is divisible by the batch size (or pass a `tf.data.Dataset` batched with "
    "`drop_remainder=True`)."
)
NOT_FULLY_DEFINED = (
    "The provided set of data has an unknown shape {shape}, which is not fully defined. The IPU "
    "requires fully defined shapes. If using batch() make sure to set `drop_remainder=True`."
)
SPE_DIVISOR = (
    "`steps_per_execution` ({spe}) must be a divisor of the number of batches ({batches}) in the "
    "dataset provided (per replica)."
)
NOT_ENOUGH_DATA = (
    "Your input does not have enough data. Make sure that your dataset or generator can generate at "
    "least `steps_per_epoch * epochs` batches (in this case, {batches} batches). You may need to use "
    "the repeat() function when building your dataset."
)
OUTSIDE_THE_SCOPE = (
    "the model {name} was created outside the IPUStrategy scope and {method} was called inside it: "
    "it gets none of the IPU Keras extensions and does not run as an IPU model (create the model in "
    "the scope, Targeting the IPU from TensorFlow 2, \"Keras with IPUs\")"
)
RUN_EAGERLY = (
    "Keras models cannot run eagerly when using `IPUStrategy`. Set `run_eagerly=False` when calling "
    "`compile`."
)
OVERRIDDEN = (
    "The function `{function}` for the model {name} has been overridden. This is not supported when "
    "using Keras within an IPUStrategy. Either remove the override from your model definition or set "
    "`enable_keras_extensions=False` when creating the IPUStrategy."
)
FORBIDDEN_PIPELINING_KWARGS = (
    "gradient_accumulation_count", "device_mapping", "accumulate_outfeed", "computational_stages",
    "repeat_count", "inputs", "infeed_queue", "outfeed_queue", "optimizer_function", "outfeed_loss",
    "outfeed_mask", "batch_serialization_iterations", "experimental_normalize_gradients",
)
REDUCTION_METHODS = ("sum", "mean", "running_mean")

_LOCAL = threading.local()


def _current_stage():
    return getattr(_LOCAL, "stage", None)


class PipelineStage:
    """`keras.ipu.PipelineStage(stage)`: layers called inside belong to that pipeline stage."""

    def __init__(self, stage):
        if not isinstance(stage, int) or stage < 0:
            raise STATE.error(ValueError("PipelineStage expects a non-negative int, got %r" % (stage,)))
        self._stage = stage

    def __enter__(self):
        if _current_stage() is not None:
            raise STATE.error(ValueError("Pipeline stages cannot be nested."))
        _LOCAL.stage = self._stage
        return self

    def __exit__(self, *exc):
        _LOCAL.stage = None
        return False


class _Assignment:
    def __init__(self, layer, pipeline_stage=None):
        self.layer = layer
        self.pipeline_stage = pipeline_stage

    def __repr__(self):
        return "PipelineStageAssignment(%s, pipeline_stage=%r)" % (self.layer.name, self.pipeline_stage)


def _ipu_strategy_of(model):
    strategy = getattr(model, "_distribution_strategy", None)
    if strategy is None:
        return None
    if type(strategy).__name__ == "IPUStrategyV1" and STATE.strategies and strategy in STATE.strategies:
        return strategy
    return None


def _ipu_options(model):
    options = model.__dict__.get("_ipu_emulation")
    if options is None:
        options = {"gradient_accumulation": None, "pipelining": None, "stages": None,
                   "reduction": "sum"}
        model.__dict__["_ipu_emulation"] = options
    return options


def _require_ipu_model(model, method):
    if _ipu_strategy_of(model) is None:
        raise AttributeError("'%s' object has no attribute '%s' (IPU extension methods exist only on "
                             "models created in an IPUStrategy scope)" % (type(model).__name__, method))


def _check_reduction(method):
    name = getattr(method, "name", method)
    if str(name).lower() not in REDUCTION_METHODS:
        raise STATE.error(ValueError(
            "gradient_accumulation_reduction_method must be one of %s, not %r" % (REDUCTION_METHODS, method)))


def _check_positive(value, what):
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise STATE.error(ValueError("%s must be a positive int, got %r" % (what, value)))


def set_gradient_accumulation_options(self, gradient_accumulation_steps_per_replica=None,
                                      gradient_accumulation_reduction_method="sum",
                                      use_v2_gradient_accumulation_optimizer=False,
                                      **gradient_accumulation_optimizer_kwargs):
    _require_ipu_model(self, "set_gradient_accumulation_options")
    _check_positive(gradient_accumulation_steps_per_replica, "gradient_accumulation_steps_per_replica")
    _check_reduction(gradient_accumulation_reduction_method)
    for name in ("opt", "num_mini_batches"):
        if name in gradient_accumulation_optimizer_kwargs:
            raise STATE.error(ValueError(
                "Found %s key in `gradient_accumulation_optimizer_kwargs`. This argument is set by "
                "Keras and cannot be passed." % name))
    options = _ipu_options(self)
    options["gradient_accumulation"] = gradient_accumulation_steps_per_replica
    options["reduction"] = gradient_accumulation_reduction_method


def set_pipelining_options(self, gradient_accumulation_steps_per_replica=None, device_mapping=None,
                           accumulate_outfeed=None, gradient_accumulation_reduction_method="sum",
                           **pipelining_kwargs):
    _require_ipu_model(self, "set_pipelining_options")
    _check_positive(gradient_accumulation_steps_per_replica, "gradient_accumulation_steps_per_replica")
    _check_reduction(gradient_accumulation_reduction_method)
    for name in FORBIDDEN_PIPELINING_KWARGS:
        if name in pipelining_kwargs:
            raise STATE.error(ValueError(
                "Found %s key in `pipelining_kwargs`. This argument cannot be passed to "
                "set_pipelining_options (it is set by Keras, has its own argument or is not supported)."
                % name))
    schedule = pipelining_kwargs.get("pipeline_schedule")
    if schedule is not None and not isinstance(schedule, tf_ipu.PipelineSchedule):
        raise STATE.error(TypeError("pipeline_schedule must be an ipu.ops.pipelining_ops.PipelineSchedule"))
    if device_mapping is not None and not all(isinstance(i, int) for i in device_mapping):
        raise STATE.error(TypeError("device_mapping must be a list of ints"))
    options = _ipu_options(self)
    options["pipelining"] = dict(pipelining_kwargs, device_mapping=device_mapping,
                                 gradient_accumulation_steps_per_replica=gradient_accumulation_steps_per_replica,
                                 accumulate_outfeed=accumulate_outfeed)
    options["reduction"] = gradient_accumulation_reduction_method


def _is_sequential(model):
    return type(model).__name__ == "Sequential" or any(
        klass.__name__ == "Sequential" for klass in type(model).__mro__)


def get_pipeline_stage_assignment(self):
    _require_ipu_model(self, "get_pipeline_stage_assignment")
    if not self.built:
        raise STATE.error(ValueError(
            "The model %s has not been built: call `model.build(input_shape)` before getting its "
            "pipeline stage assignment." % self.name))
    stages = _ipu_options(self)["stages"]
    if stages is not None:
        return list(stages)
    return [_Assignment(layer, getattr(layer, "_ipu_pipeline_stage", None)) for layer in self.layers]


def set_pipeline_stage_assignment(self, pipeline_stage_assignment):
    _require_ipu_model(self, "set_pipeline_stage_assignment")
    assignment = list(pipeline_stage_assignment)
    if _is_sequential(self):
        if len(assignment) != len(self.layers):
            raise STATE.error(ValueError(
                "The size of the provided `pipeline_stage_assignment` (%d) does not match the number of "
                "layers in the model (%d). Each layer in a Sequential model needs to be assigned to a "
                "pipeline stage." % (len(assignment), len(self.layers))))
        if not all(isinstance(stage, int) and not isinstance(stage, bool) for stage in assignment):
            raise STATE.error(ValueError("`pipeline_stage_assignment` must be a list of ints for a "
                                         "Sequential model"))
        stages = [_Assignment(layer, stage) for layer, stage in zip(self.layers, assignment)]
    else:
        if not self.built:
            raise STATE.error(ValueError(
                "The model %s has not been built: call `model.build(input_shape)` first." % self.name))
        for item in assignment:
            if not isinstance(item, _Assignment) or not isinstance(item.pipeline_stage, int):
                raise STATE.error(ValueError(
                    "Every entry of `pipeline_stage_assignment` must be an assignment from "
                    "`get_pipeline_stage_assignment()` with `pipeline_stage` set to an int."))
        stages = assignment
    values = [item.pipeline_stage for item in stages]
    if any(later < earlier for earlier, later in zip(values, values[1:])):
        raise STATE.error(ValueError("Pipeline stages must be assigned in increasing order of layers"))
    _ipu_options(self)["stages"] = stages


def reset_pipeline_stage_assignment(self):
    _require_ipu_model(self, "reset_pipeline_stage_assignment")
    _ipu_options(self)["stages"] = None


def _noop_extension(name):
    def method(self, *args, **kwargs):
        _require_ipu_model(self, name)
    method.__name__ = name
    return method


EXTENSION_METHODS = {
    "set_gradient_accumulation_options": set_gradient_accumulation_options,
    "set_pipelining_options": set_pipelining_options,
    "get_pipeline_stage_assignment": get_pipeline_stage_assignment,
    "set_pipeline_stage_assignment": set_pipeline_stage_assignment,
    "reset_pipeline_stage_assignment": reset_pipeline_stage_assignment,
    "print_pipeline_stage_assignment_summary": _noop_extension("print_pipeline_stage_assignment_summary"),
    "set_replication_options": _noop_extension("set_replication_options"),
    "set_asynchronous_callbacks": _noop_extension("set_asynchronous_callbacks"),
    "set_infeed_queue_options": _noop_extension("set_infeed_queue_options"),
    "set_outfeed_queue_options": _noop_extension("set_outfeed_queue_options"),
}


# fit / evaluate / predict ----------------------------------------------------------------------

def _stage_count(model):
    options = _ipu_options(model)
    if options["stages"] is not None:
        stages = [item.pipeline_stage for item in options["stages"]]
    else:
        stages = [getattr(layer, "_ipu_pipeline_stage", None) for layer in _all_layers(model)]
    stages = [stage for stage in stages if stage is not None]
    mapping = (options["pipelining"] or {}).get("device_mapping")
    if mapping:
        return max(max(stages or [0]) + 1, 1), max(mapping) + 1
    count = max(stages) + 1 if stages else 1
    return count, count


def _all_layers(model):
    try:
        return list(model._flatten_layers(include_self=False))
    except Exception:
        return list(getattr(model, "layers", []))


def _steps_per_execution(model):
    variable = getattr(model, "_steps_per_execution", None)
    if variable is None:
        return 1
    try:
        return int(variable.numpy())
    except Exception:
        return int(variable)


def _check_overrides(model, keras, names):
    base = keras.Model
    for name in names:
        if getattr(type(model), name, None) is not getattr(base, name, None):
            raise STATE.error(RuntimeError(OVERRIDDEN.format(function=name, name=model.name)))


def _is_generator_like(keras, value):
    if isinstance(value, keras.utils.Sequence):
        return "keras.utils.Sequence"
    if inspect.isgenerator(value):
        return "generator"
    if isinstance(value, collections.abc.Iterator):
        return type(value).__name__
    return None


def _first_dim(tf, value):
    if _is_list_of_scalars(value):
        return len(value)
    flat = [item for item in tf.nest.flatten(value) if hasattr(item, "shape")]
    if not flat:
        return None
    return int(flat[0].shape[0])


def _is_list_of_scalars(value):
    """A list whose first item (or that item's first item...) is a number or a string: Keras 2
    takes it as the samples of one array (`ListsOfScalarsDataAdapter`)."""
    first = value
    while isinstance(first, (list, tuple)) and first:
        first = first[0]
    return isinstance(value, (list, tuple)) and isinstance(first, (int, float, str, bytes, bytearray))


def _array_batches(tf, x, batch_size):
    n = _first_dim(tf, x)
    if n is None:
        return None
    if n % batch_size:
        raise STATE.error(ValueError(PARTIAL_BATCH.format(n=n, batch_size=batch_size)))
    return n // batch_size


def _check_dataset(tf, dataset):
    for spec in tf.nest.flatten(dataset.element_spec):
        shape = getattr(spec, "shape", None)
        if shape is not None and not shape.is_fully_defined():
            raise STATE.error(ValueError(NOT_FULLY_DEFINED.format(shape=shape)))
    cardinality = int(dataset.cardinality())
    return cardinality if cardinality >= 0 else None


def _check_data(tf, keras, model, x, y, batch_size, steps, validation_split=0.0):
    kind = _is_generator_like(keras, x)
    if kind:
        raise STATE.error(ValueError(GENERATOR_MESSAGE.format(kind=kind)))
    if isinstance(x, tf.data.Dataset):
        batches = _check_dataset(tf, x)
    else:
        batch_size = batch_size or 32
        n = _first_dim(tf, x)
        if n is not None and validation_split:
            train = int(math.floor(n * (1.0 - validation_split)))
            _array_batches(tf, tf.zeros([n - train, 0]), batch_size)
            batches = _array_batches(tf, tf.zeros([train, 0]), batch_size)
        else:
            batches = _array_batches(tf, x, batch_size)
    return steps if steps is not None else batches


def _check_enough_data(tf, x, steps, repeats):
    """With `steps` given, Keras restarts a finite dataset each epoch only when `steps` is its
    length; otherwise the one iterator must last for `repeats * steps` batches."""
    if steps is None or not isinstance(x, tf.data.Dataset):
        return
    cardinality = int(x.cardinality())
    if 0 <= cardinality != steps and repeats * steps > cardinality:
        raise STATE.error(ValueError(NOT_ENOUGH_DATA.format(batches=repeats * steps)))


def _check_execution(tf, model, batches, steps_given):
    spe = _steps_per_execution(model)
    options = _ipu_options(model)
    stages, shards = _stage_count(model)
    pipelined = stages > 1 or options["pipelining"] is not None and stages > 1
    accumulation = options["gradient_accumulation"]
    if options["pipelining"] is not None:
        accumulation = options["pipelining"]["gradient_accumulation_steps_per_replica"] or accumulation
    if pipelined and not accumulation:
        raise STATE.error(ValueError(
            "The model %s is pipelined, however `gradient_accumulation_steps_per_replica` has not been "
            "set through `set_pipelining_options()`. Pipelined models always accumulate gradients: "
            "set `gradient_accumulation_steps_per_replica` (Graphcore's Keras tutorial, \"Pipelining\")."
            % model.name))
    ipus = ipu_config.configured_ipus()
    rounded = 2 ** int(math.ceil(math.log2(shards))) if shards > 1 else 1
    if ipus % rounded or ipus < rounded:
        raise STATE.error(ValueError(
            "Current device has %d IPUs attached, however the current model requires a multiple of %d "
            "IPUs." % (ipus, rounded)))
    replicas = ipus // rounded
    if replicas > 1:
        STATE.notes.append("%s runs with %d replicas: training is data parallel, losses differ from "
                           "the single-device original" % (model.name, replicas))
    if accumulation:
        if spe % accumulation:
            raise STATE.error(RuntimeError(
                "The model has been configured to use gradient accumulation for training, however the "
                "current `steps_per_execution` (%d) is not divisible by "
                "`gradient_accumulation_steps_per_replica` (%d)." % (spe, accumulation)))
        STATE.notes.append("%s accumulates gradients over %d batches: weights update less often than "
                           "in the original" % (model.name, accumulation))
        if pipelined:
            schedule = (options["pipelining"] or {}).get("pipeline_schedule", tf_ipu.PipelineSchedule.Grouped)
            multiple = 2 * stages if schedule == tf_ipu.PipelineSchedule.Grouped else stages
            if schedule != tf_ipu.PipelineSchedule.Sequential and accumulation % multiple:
                raise STATE.error(RuntimeError(
                    "FailedPrecondition: The number of iterations of the pipeline must be a multiple of "
                    "%d, but it is %d (gradient_accumulation_steps_per_replica)." % (multiple, accumulation)))
    if batches is None:
        return
    per_replica = batches // replicas
    if steps_given and batches % spe:
        raise STATE.error(ValueError(
            "`steps_per_epoch`/`steps` (%d) must be a multiple of `steps_per_execution` (%d)." % (batches, spe)))
    if spe > per_replica:
        logging.warning("`steps_per_execution` (%d) is larger than the number of batches (%d): truncated",
                        spe, per_replica)
        return
    if per_replica % spe:
        raise STATE.error(ValueError(SPE_DIVISOR.format(spe=spe, batches=per_replica)))


def _step_counter(keras):
    class StepCounter(keras.callbacks.Callback):
        """Counts the steps a fit/evaluate/predict call ran from the batch indices its callbacks see
        (with `steps_per_execution` N they see every N-th batch): on the IPU, or as CPU training."""

        def __init__(self, on_ipu):
            super().__init__()
            self._on_ipu = on_ipu
            self._done = {}

        def _ran(self, mode, batch):
            steps = batch + 1 - self._done.get(mode, 0)
            self._done[mode] = batch + 1
            if self._on_ipu:
                STATE.ipu_executions += steps
            elif mode == "train":
                STATE.cpu_training_steps += steps

        def on_epoch_begin(self, epoch, logs=None):
            self._done["train"] = 0

        def on_test_begin(self, logs=None):
            self._done["test"] = 0

        def on_predict_begin(self, logs=None):
            self._done["predict"] = 0

        def on_train_batch_end(self, batch, logs=None):
            self._ran("train", batch)

        def on_test_batch_end(self, batch, logs=None):
            self._ran("test", batch)

        def on_predict_batch_end(self, batch, logs=None):
            self._ran("predict", batch)

    return StepCounter


def _counted(original, model, args, kwargs, counter):
    bound = inspect.signature(original).bind(model, *args, **kwargs)
    bound.arguments["callbacks"] = list(bound.arguments.get("callbacks") or []) + [counter]
    return original(*bound.args, **bound.kwargs)


def _in_ipu_scope(tf):
    return tf.distribute.has_strategy() and type(tf.distribute.get_strategy()).__name__ == "IPUStrategyV1"


def _ipu_entry(tf, keras, method, original, counter):
    checked_names = {
        "fit": ("train_step", "make_train_function"),
        "evaluate": ("make_test_function",),
        "predict": ("make_predict_function",),
    }[method]
    pipelined_names = {"fit": (), "evaluate": ("test_step",), "predict": ("predict_step",)}[method]

    def check(self, args, kwargs):
        """What Keras on the IPU checks before it runs the call: the data and the execution."""
        bound = inspect.signature(original).bind(self, *args, **kwargs).arguments
        tf_ipu.require_configured()
        if self.run_eagerly:
            raise STATE.error(RuntimeError(RUN_EAGERLY))
        names = checked_names + (pipelined_names if _stage_count(self)[0] > 1 else ())
        _check_overrides(self, keras, names)
        steps_name = "steps_per_epoch" if method == "fit" else "steps"
        steps = bound.get(steps_name)
        batches = _check_data(tf, keras, self, bound.get("x"), bound.get("y"), bound.get("batch_size"),
                              steps, bound.get("validation_split", 0.0) or 0.0)
        _check_execution(tf, self, batches, steps is not None)
        repeats = bound.get("epochs", 1) - bound.get("initial_epoch", 0) if method == "fit" else 1
        _check_enough_data(tf, bound.get("x"), steps, repeats)
        return bound

    @functools.wraps(original)
    def wrapper(self, *args, **kwargs):
        strategy = _ipu_strategy_of(self)
        if getattr(_LOCAL, "inside", False) and strategy is not None and strategy._enable_keras_extensions \
                and not kwargs.get("_use_cached_eval_dataset"):
            # An `evaluate`/`predict` of a callback during `fit` (not `fit`'s own validation, which
            # is checked below) runs on the IPU with the model's executions: checked the same way.
            check(self, args, kwargs)
        if getattr(_LOCAL, "inside", False) or strategy is not None and not strategy._enable_keras_extensions:
            return original(self, *args, **kwargs)  # counted by strategy.run (no Keras extensions)
        if strategy is None:
            if not _in_ipu_scope(tf):
                return _counted(original, self, args, kwargs, counter(on_ipu=False))
            # Keras runs its steps through the IPU strategy, but not as an IPU model: no IPU work
            STATE.notes.append(OUTSIDE_THE_SCOPE.format(name=self.name, method=method))
            tf_ipu.keras_is_running(True)
            try:
                return _counted(original, self, args, kwargs, counter(on_ipu=False))
            finally:
                tf_ipu.keras_is_running(False)
        bound = check(self, args, kwargs)
        validation = bound.get("validation_data")
        if method == "fit" and validation is not None:
            if isinstance(validation, tuple):
                vx, vy = validation[0], validation[1] if len(validation) > 1 else None
            else:
                vx, vy = validation, None
            vbatches = _check_data(tf, keras, self, vx, vy,
                                   bound.get("validation_batch_size") or bound.get("batch_size"),
                                   bound.get("validation_steps"))
            _check_enough_data(tf, vx, bound.get("validation_steps"), 1)
            if vbatches is not None:
                spe = _steps_per_execution(self)
                if vbatches >= spe and vbatches % spe:
                    raise STATE.error(ValueError(SPE_DIVISOR.format(spe=spe, batches=vbatches)))
        STATE.keras_ipu_calls.append((method, self.name))
        _LOCAL.inside = True
        tf_ipu.keras_is_running(True)
        try:
            return _counted(original, self, args, kwargs, counter(on_ipu=True))
        finally:
            _LOCAL.inside = False
            tf_ipu.keras_is_running(False)

    return wrapper


def patches(tf, keras):
    """(owner, attribute, value) for everything the Keras emulation changes."""
    model = keras.Model
    layer_class = keras.layers.Layer
    original_call = layer_class.__call__

    @functools.wraps(original_call)
    def layer_call(self, *args, **kwargs):
        stage = _current_stage()
        if stage is not None:
            self._ipu_pipeline_stage = stage
        return original_call(self, *args, **kwargs)

    ipu_module = types.ModuleType("keras.ipu")
    ipu_module.PipelineStage = PipelineStage
    counter = _step_counter(keras)
    result = [(model, method, _ipu_entry(tf, keras, method, getattr(model, method), counter))
              for method in ("fit", "evaluate", "predict")]
    result += [(model, name, function) for name, function in EXTENSION_METHODS.items()]
    result.append((layer_class, "__call__", layer_call))
    result.append((keras, "ipu", ipu_module))
    result.append((tf.keras, "ipu", ipu_module))  # `from tensorflow import keras` is a lazy loader
    return result
