"""A CPU emulation of PopTorch (the PopTorch User Guide), built as fresh module objects.

`build()` returns the `poptorch` module and its `poptorch.optim` submodule. Everything runs on
the CPU with plain PyTorch; what the emulation adds are PopTorch's rules: options that chain and
freeze, `drop_last=True` and combined batches in `DataLoader`, the loss that must come out of
`forward`, one optimizer step per device iteration, optimizer values that reach the device only
through `setOptimizer`, and the errors the reference quotes."""

import copy
import enum
import types
import warnings

import torch

from .state import STATE

FROZEN_MESSAGE = "Can't modify frozen Options"
ALREADY_WRAPPED = (
    "Model has already been wrapped in 'poptorch.trainingModel'. Call model.destroy() on the "
    "model to unwrap before wrapping again."
)
INFERENCE_ACCUMULATION = (
    "You must set poptorch.Options().Training.gradientAccumulation to 1 or leave it as its "
    "default value (1) when running a poptorch.inferenceModel()."
)
AMSGRAD = "Only non-amsgrad Adam/AdamW optimizers are supported."
UNSUPPORTED_OPTIMIZER = "Unsupported optimizer type"
NO_LOSS = (
    "poptorch.trainingModel: the model's forward() must compute and return the loss "
    "(for example `return output, loss`), but none of its outputs is a loss (emulated check)."
)
RECOMPILE_HINT = (
    "\nThis error occurred because the inputs passed at runtime don't match the inputs used to "
    "compile the model.\nTo recompile the model for the new inputs create a new inferenceModel / "
    "trainingModel wrapper or call destroy() on the current one and try again."
)
MULTIPLE_LOSSES = (
    "Multiple independent losses found in graph. Graph must have one final loss. "
    "Wrap final graph loss in poptorch.identity_loss."
)


class Error(RuntimeError):
    """`poptorch.Error`, what PopTorch raises for its own failures."""


class OutputMode(enum.IntEnum):
    Final = 0
    EveryN = 1
    All = 2
    Sum = 3
    Default = 4


class ReductionType(enum.IntEnum):
    Sum = 0
    Mean = 1
    NoReduction = 2


class ConnectionType(enum.IntEnum):
    Always = 0
    OnDemand = 1
    Never = 2


class SyncPattern(enum.IntEnum):
    Full = 0
    SinglePipeline = 1
    ReplicaAndLadder = 2


class DataLoaderMode(enum.IntEnum):
    Sync = 0
    Async = 1
    AsyncRebatched = 2


class _Frozen:
    """Attribute writes fail once `_freeze()` has been called (also on the sub-objects)."""

    def __init__(self):
        object.__setattr__(self, "_frozen", False)

    def __setattr__(self, name, value):
        if self._frozen:
            raise AttributeError(FROZEN_MESSAGE)
        object.__setattr__(self, name, value)

    def _freeze(self):
        for value in vars(self).values():
            if isinstance(value, _Frozen):
                value._freeze()
        object.__setattr__(self, "_frozen", True)


class _TrainingOptions(_Frozen):
    def __init__(self):
        super().__init__()
        self.gradient_accumulation = 1
        self.accumulation_and_replication_reduction_type = ReductionType.Mean
        self.automatic_loss_scaling = False

    def gradientAccumulation(self, gradient_accumulation):
        assert isinstance(gradient_accumulation, int) and gradient_accumulation >= 1
        self.gradient_accumulation = gradient_accumulation
        return self

    def accumulationAndReplicationReductionType(self, reduction_type):
        assert reduction_type in (ReductionType.Sum, ReductionType.Mean)
        self.accumulation_and_replication_reduction_type = reduction_type
        return self

    def setAutomaticLossScaling(self, enabled):
        self.automatic_loss_scaling = bool(enabled)
        return self


class _PrecisionOptions(_Frozen):
    def __init__(self):
        super().__init__()
        self.partials_type = torch.float32
        self.stochastic_rounding = False
        self.fp_exceptions = False

    def setPartialsType(self, dtype):
        assert dtype in (torch.float16, torch.float32, torch.half, torch.float)
        self.partials_type = dtype
        return self

    def enableStochasticRounding(self, enabled):
        self.stochastic_rounding = bool(enabled)
        return self

    def enableFloatingPointExceptions(self, enabled):
        self.fp_exceptions = bool(enabled)
        return self


class _ExecutionStrategy:
    def __init__(self, *args, **kwargs):
        self.args = args
        self.kwargs = kwargs


class PipelinedExecution(_ExecutionStrategy):
    pass


class ShardedExecution(_ExecutionStrategy):
    pass


class SerialPhasedExecution(_ExecutionStrategy):
    pass


class ParallelPhasedExecution(_ExecutionStrategy):
    pass


class AutoStage(enum.IntEnum):
    SameAsIpu = 0
    AutoIncrement = 1


class Options(_Frozen):
    def __init__(self):
        super().__init__()
        self.replication_factor = 1
        self.device_iterations = 1
        self.output_mode = OutputMode.Default
        self.output_return_period = 1
        self.connection_type = ConnectionType.Always
        self.sync_pattern = SyncPattern.Full
        self.auto_round_num_ipus = False
        self.executable_cache_dir = None
        self.use_ipu_model = False
        self.random_seed = None
        self.execution_strategy = PipelinedExecution()
        self.available_memory_proportion = {}
        self.log_dir = "."
        self.Training = _TrainingOptions()
        self.Precision = _PrecisionOptions()
        STATE.poptorch_options.append(self)

    def deviceIterations(self, device_iterations):
        assert isinstance(device_iterations, int) and device_iterations >= 1
        self.device_iterations = device_iterations
        return self

    def replicationFactor(self, replication_factor):
        assert isinstance(replication_factor, int) and replication_factor >= 1
        self.replication_factor = replication_factor
        return self

    def outputMode(self, output_mode, output_return_period=None):
        assert isinstance(output_mode, OutputMode), "output_mode must be a poptorch.OutputMode"
        if output_mode == OutputMode.EveryN:
            assert output_return_period is not None and output_return_period > 0
            self.output_return_period = output_return_period
        elif output_return_period is not None:
            raise ValueError("output_return_period may only be set with OutputMode.EveryN")
        self.output_mode = output_mode
        return self

    def enableExecutableCaching(self, path):
        self.executable_cache_dir = path
        return self

    def useIpuModel(self, use_model):
        self.use_ipu_model = bool(use_model)
        return self

    def randomSeed(self, random_seed):
        assert isinstance(random_seed, int), "random_seed must be an int"
        torch.manual_seed(random_seed)
        self.random_seed = random_seed
        return self

    def autoRoundNumIPUs(self, auto_round_num_ipus=True):
        self.auto_round_num_ipus = bool(auto_round_num_ipus)
        return self

    def setExecutionStrategy(self, strategy):
        assert isinstance(strategy, _ExecutionStrategy)
        self.execution_strategy = strategy
        return self

    def setAvailableMemoryProportion(self, available_memory_proportion):
        for key in available_memory_proportion:
            if not key.startswith("IPU"):
                raise ValueError(
                    "Keys of available_memory_proportion must start with 'IPU', e.g. 'IPU0': %r" % key)
        self.available_memory_proportion = dict(available_memory_proportion)
        return self

    def connectionType(self, connection_type):
        self.connection_type = connection_type
        return self

    def useOfflineIpuTarget(self, ipu_version=2):
        self.connection_type = ConnectionType.Never
        return self

    def useIpuId(self, ipu_id):
        return self

    def syncPattern(self, sync_pattern):
        self.sync_pattern = sync_pattern
        return self

    def enableSyntheticData(self, enabled):
        return self

    def logCycleCount(self, log_cycle_count):
        return self

    def enableProfiling(self, profile_dir=None):
        return self

    def broadcastBuffers(self, broadcast_buffers=True):
        return self

    def loadFromFile(self, filepath):
        return self

    def logDir(self, log_dir):
        self.log_dir = log_dir
        return self

    def clone(self):
        clone = copy.deepcopy(self)
        _unfreeze(clone)
        STATE.poptorch_options.append(clone)
        return clone

    # emulation helpers -------------------------------------------------------------------
    @property
    def micro_batches_per_step(self):
        return self.replication_factor * self.Training.gradient_accumulation

    def combined_batch_factor(self):
        return self.device_iterations * self.replication_factor * self.Training.gradient_accumulation


def _unfreeze(options):
    for value in vars(options).values():
        if isinstance(value, _Frozen):
            _unfreeze(value)
    object.__setattr__(options, "_frozen", False)


class DataLoader(torch.utils.data.DataLoader):
    def __init__(self, options, dataset, batch_size=1, shuffle=None, num_workers=0, drop_last=True,
                 persistent_workers=None, auto_distributed_partitioning=True, mode=DataLoaderMode.Sync,
                 async_options=None, rebatched_worker_size=None, batch_sampler=None, **kwargs):
        assert isinstance(options, Options), "Invalid poptorch.Options"
        options._freeze()
        if persistent_workers is None:
            persistent_workers = num_workers > 0
        combined = batch_size * options.combined_batch_factor()
        self._combined_batch_size = combined
        self.options = options
        if not drop_last and hasattr(dataset, "__len__") and len(dataset) % combined:
            warnings.warn("The number of elements in the dataset (%d) is not divisible by the combined "
                          "batch size (%d): the last tensor will be smaller." % (len(dataset), combined))
        super().__init__(dataset, batch_size=None if batch_sampler is not None else combined,
                         shuffle=bool(shuffle), num_workers=num_workers,
                         drop_last=drop_last if batch_sampler is None else False,
                         persistent_workers=persistent_workers, batch_sampler=batch_sampler, **kwargs)
        STATE.dataloaders.append(self)

    @property
    def combinedBatchSize(self):
        return self._combined_batch_size


# identity_loss / blocks ------------------------------------------------------------------------

_MARKED_LOSSES = {}


def identity_loss(x, reduction):
    if reduction == "sum":
        out = x.sum()
    elif reduction == "mean":
        out = x.mean()
    elif reduction == "none":
        out = x * 1
    else:
        raise STATE.error(ValueError(
            "reduction must be one of 'sum', 'mean' or 'none', not %r" % (reduction,)))
    _MARKED_LOSSES[id(out)] = out
    return out


class Block:
    def __init__(self, user_id=None, ipu_id=None):
        self.user_id = user_id
        self.ipu_id = ipu_id

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def BlockFunction(user_id=None, ipu_id=None):
    def decorate(function):
        return function
    return decorate


def BeginBlock(layer_to_call, user_id=None, ipu_id=None):
    if not isinstance(layer_to_call, torch.nn.Module):
        raise STATE.error(TypeError("BeginBlock expects a torch.nn.Module, got %r" % type(layer_to_call)))
    layer_to_call._poptorch_block = (user_id, ipu_id)
    return layer_to_call


class Stage:
    def __init__(self, *block_ids):
        self.block_ids = block_ids
        self._ipu = None

    def ipu(self, ipu):
        self._ipu = ipu
        return self


_RUNNING = [False]


def isRunningOnIpu():
    return _RUNNING[0]


# optimizers ---------------------------------------------------------------------------------------

def _defined(**kwargs):
    return {key: value for key, value in kwargs.items() if value is not None}


class _PoptorchOptimizer:
    _extra = ()

    def _take_extras(self, extras):
        self._poptorch_extras = {key: value for key, value in extras.items() if value is not None}
        self.variable_attrs = set()

    def markAsConstant(self, attr):
        self.variable_attrs.discard(attr)

    def markAsVariable(self, attr):
        self.variable_attrs.add(attr)


class SGD(_PoptorchOptimizer, torch.optim.SGD):
    def __init__(self, params, lr, momentum=None, dampening=None, weight_decay=None, nesterov=None,
                 maximize=None, foreach=None, differentiable=None, loss_scaling=None,
                 velocity_scaling=None, use_combined_accum=None, accum_type=None,
                 velocity_accum_type=None, max_grad_norm=None):
        torch.optim.SGD.__init__(self, params, lr=lr, **_defined(
            momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
            maximize=maximize, foreach=foreach, differentiable=differentiable))
        self._take_extras(dict(loss_scaling=loss_scaling, velocity_scaling=velocity_scaling,
                               use_combined_accum=use_combined_accum, accum_type=accum_type,
                               velocity_accum_type=velocity_accum_type, max_grad_norm=max_grad_norm))


def _check_amsgrad(amsgrad):
    if amsgrad:
        raise STATE.error(ValueError(AMSGRAD))


class Adam(_PoptorchOptimizer, torch.optim.Adam):
    def __init__(self, params, lr=None, betas=None, eps=None, weight_decay=None, amsgrad=None,
                 foreach=None, maximize=None, capturable=None, differentiable=None, fused=None,
                 loss_scaling=None, accum_type=None, first_order_momentum_accum_type=None,
                 second_order_momentum_accum_type=None, max_grad_norm=None):
        _check_amsgrad(amsgrad)
        torch.optim.Adam.__init__(self, params, **_defined(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
            capturable=capturable, differentiable=differentiable, fused=fused))
        self._take_extras(dict(loss_scaling=loss_scaling, accum_type=accum_type,
                               first_order_momentum_accum_type=first_order_momentum_accum_type,
                               second_order_momentum_accum_type=second_order_momentum_accum_type,
                               max_grad_norm=max_grad_norm))


class AdamW(_PoptorchOptimizer, torch.optim.AdamW):
    def __init__(self, params, lr=None, betas=None, eps=None, weight_decay=None, amsgrad=None,
                 foreach=None, maximize=None, capturable=None, differentiable=None, fused=None,
                 loss_scaling=None, bias_correction=None, accum_type=None,
                 first_order_momentum_accum_type=None, second_order_momentum_accum_type=None,
                 max_grad_norm=None):
        _check_amsgrad(amsgrad)
        torch.optim.AdamW.__init__(self, params, **_defined(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
            capturable=capturable, differentiable=differentiable, fused=fused))
        self._take_extras(dict(loss_scaling=loss_scaling, bias_correction=bias_correction,
                               accum_type=accum_type,
                               first_order_momentum_accum_type=first_order_momentum_accum_type,
                               second_order_momentum_accum_type=second_order_momentum_accum_type,
                               max_grad_norm=max_grad_norm))


class RMSprop(_PoptorchOptimizer, torch.optim.RMSprop):
    def __init__(self, params, lr=None, alpha=None, eps=None, weight_decay=None, momentum=None,
                 centered=None, foreach=None, maximize=None, differentiable=None, loss_scaling=None,
                 accum_type=None, first_order_momentum_accum_type=None,
                 second_order_momentum_accum_type=None, use_tf_variant=None):
        torch.optim.RMSprop.__init__(self, params, **_defined(
            lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
            centered=centered, foreach=foreach, maximize=maximize, differentiable=differentiable))
        self._take_extras(dict(loss_scaling=loss_scaling, accum_type=accum_type,
                               first_order_momentum_accum_type=first_order_momentum_accum_type,
                               second_order_momentum_accum_type=second_order_momentum_accum_type,
                               use_tf_variant=use_tf_variant))


class LAMB(_PoptorchOptimizer, torch.optim.Optimizer):
    """LAMB (You et al.): Adam moments, update scaled by the trust ratio ||w|| / ||update||."""

    def __init__(self, params, lr=None, betas=None, eps=None, weight_decay=None, bias_correction=None,
                 loss_scaling=None, max_weight_norm=None, accum_type=None,
                 first_order_momentum_accum_type=None, second_order_momentum_accum_type=None):
        defaults = dict(lr=1e-3 if lr is None else lr, betas=(0.9, 0.999) if betas is None else betas,
                        eps=1e-8 if eps is None else eps,
                        weight_decay=1e-2 if weight_decay is None else weight_decay,
                        bias_correction=True if bias_correction is None else bias_correction,
                        max_weight_norm=max_weight_norm)
        torch.optim.Optimizer.__init__(self, params, defaults)
        self._take_extras(dict(loss_scaling=loss_scaling, accum_type=accum_type,
                               first_order_momentum_accum_type=first_order_momentum_accum_type,
                               second_order_momentum_accum_type=second_order_momentum_accum_type))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self.state[param]
                if not state:
                    state["step"] = 0
                    state["m"] = torch.zeros_like(param)
                    state["v"] = torch.zeros_like(param)
                state["step"] += 1
                m, v = state["m"], state["v"]
                m.mul_(beta1).add_(param.grad, alpha=1 - beta1)
                v.mul_(beta2).addcmul_(param.grad, param.grad, value=1 - beta2)
                m_hat, v_hat = m, v
                if group["bias_correction"]:
                    m_hat = m / (1 - beta1 ** state["step"])
                    v_hat = v / (1 - beta2 ** state["step"])
                update = m_hat / (v_hat.sqrt() + group["eps"]) + group["weight_decay"] * param
                weight_norm = param.norm()
                if group["max_weight_norm"] is not None:
                    weight_norm = weight_norm.clamp(max=group["max_weight_norm"])
                update_norm = update.norm()
                ratio = weight_norm / update_norm if weight_norm > 0 and update_norm > 0 else 1.0
                param.add_(update, alpha=-group["lr"] * float(ratio))


_SUPPORTED_OPTIMIZERS = (torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW, torch.optim.RMSprop, LAMB)


def _check_optimizer(optimizer):
    if not isinstance(optimizer, _SUPPORTED_OPTIMIZERS):
        raise STATE.error(AssertionError(UNSUPPORTED_OPTIMIZER))
    if isinstance(optimizer, (torch.optim.Adam, torch.optim.AdamW)):
        for group in optimizer.param_groups:
            _check_amsgrad(group.get("amsgrad", False))


def _snapshot(optimizer):
    """The optimizer values the device holds: copied at compile time and by setOptimizer."""
    return [{key: copy.deepcopy(value) for key, value in group.items() if key != "params"}
            for group in optimizer.param_groups]


# model wrappers ------------------------------------------------------------------------------------

def _flatten(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [item for element in value for item in _flatten(element)]
    if isinstance(value, dict):
        return [item for element in value.values() for item in _flatten(element)]
    return []


def _split(value, parts):
    """Split every tensor of a call's arguments into `parts` equal micro-batches along dim 0."""
    if isinstance(value, torch.Tensor):
        if value.dim() == 0 or value.shape[0] % parts:
            raise STATE.error(ValueError(
                "Input batch of size %s is not divisible by device iterations x replication factor x "
                "gradient accumulation = %d (use poptorch.DataLoader with the same options)"
                % (tuple(value.shape), parts)))
        return list(value.chunk(parts))
    if isinstance(value, (list, tuple)):
        columns = [_split(element, parts) for element in value]
        return [type(value)(column[i] for column in columns) if isinstance(value, tuple)
                else [column[i] for column in columns] for i in range(parts)]
    if isinstance(value, dict):
        columns = {key: _split(element, parts) for key, element in value.items()}
        return [{key: column[i] for key, column in columns.items()} for i in range(parts)]
    return [value] * parts


def _find_loss(output):
    candidates = [tensor for tensor in _flatten(output)
                  if tensor.requires_grad and (tensor.dim() == 0 or id(tensor) in _MARKED_LOSSES)]
    if not candidates:
        raise STATE.error(RuntimeError(NO_LOSS))
    if len(candidates) > 1:
        raise STATE.error(RuntimeError(MULTIPLE_LOSSES))
    return candidates[0]


def _combine(outputs, mode, period):
    """Apply the output mode to the per-iteration outputs."""
    if mode == OutputMode.Final:
        return outputs[-1]
    if mode == OutputMode.EveryN:
        outputs = outputs[period - 1::period]
    if mode == OutputMode.Sum:
        return _zip_map(outputs, lambda tensors: torch.stack(tensors).sum(0))
    return _zip_map(outputs, lambda tensors: torch.cat([t.reshape(1) if t.dim() == 0 else t
                                                        for t in tensors]))


def _zip_map(outputs, join):
    first = outputs[0]
    if isinstance(first, torch.Tensor):
        return join(list(outputs))
    if isinstance(first, (list, tuple)):
        joined = [_zip_map([output[i] for output in outputs], join) for i in range(len(first))]
        return type(first)(joined) if isinstance(first, tuple) else joined
    if isinstance(first, dict):
        return {key: _zip_map([output[key] for output in outputs], join) for key in first}
    return first


class PoplarExecutor:
    def __init__(self, model, options, training, optimizer=None):
        object.__setattr__(self, "_model", model)
        object.__setattr__(self, "_options", options)
        object.__setattr__(self, "_training", training)
        object.__setattr__(self, "_optimizer", optimizer)
        object.__setattr__(self, "_device_optimizer", _snapshot(optimizer) if optimizer else None)
        object.__setattr__(self, "_compiled", False)
        object.__setattr__(self, "_attached", False)
        object.__setattr__(self, "_destroyed", False)
        object.__setattr__(self, "_mode_at_wrap", model.training)
        object.__setattr__(self, "_device_weights", None)   # copied at compile, attach, copyWeightsToDevice
        object.__setattr__(self, "_signature", None)        # input shapes and dtypes, frozen by the first call
        object.__setattr__(self, "_runs", 0)                # calls of a training model
        object.__setattr__(self, "_training_runs_seen", 0)  # training runs an inference model has synced

    # attributes of the user model are reachable through the wrapper, as in PopTorch
    def __getattr__(self, name):
        return getattr(self._model, name)

    def __setattr__(self, name, value):
        setattr(self._model, name, value)

    def _check_usable(self):
        if self._destroyed:
            raise STATE.error(RuntimeError("This poptorch model has been destroyed."))

    def compile(self, *args, **kwargs):
        self._check_usable()
        object.__setattr__(self, "_compiled", True)
        object.__setattr__(self, "_attached", True)
        object.__setattr__(self, "_signature", _signature((args, kwargs)))
        self.copyWeightsToDevice()
        object.__setattr__(self, "_training_runs_seen", self._training_runs_of_shared_models())

    def isCompiled(self):
        return self._compiled

    def isAttachedToDevice(self):
        return self._attached

    def detachFromDevice(self):
        if not self._compiled:
            raise STATE.error(RuntimeError("Cannot detach from device: the model has not been compiled"))
        if not self._attached:
            raise STATE.error(RuntimeError("Device is not attached"))
        object.__setattr__(self, "_attached", False)

    def attachToDevice(self):
        if not self._compiled:
            raise STATE.error(RuntimeError("Cannot attach to device: the model has not been compiled"))
        if self._attached:
            raise STATE.error(RuntimeError("Device is already attached"))
        object.__setattr__(self, "_attached", True)
        self.copyWeightsToDevice()

    def destroy(self):
        object.__setattr__(self, "_destroyed", True)
        if getattr(self._model, "_poptorch_training_wrapper", None) is self:
            del self._model._poptorch_training_wrapper

    def copyWeightsToHost(self):
        pass  # the host model is written after every training run (PopTorch syncs it on use)

    def copyWeightsToDevice(self):
        object.__setattr__(self, "_device_weights", _copy_weights(self._model))

    def _load_weights(self, weights):
        with torch.no_grad():
            for name, tensor in self._model.state_dict(keep_vars=True).items():
                if name in weights:
                    tensor.copy_(weights[name])

    def _training_runs_of_shared_models(self):
        """Runs of the training models that share parameters with this model."""
        mine = {id(parameter) for parameter in self._model.parameters()}
        return sum(executor._runs for executor in STATE.training_models
                   if not executor._destroyed
                   and mine & {id(parameter) for parameter in executor._model.parameters()})

    def _check_inputs(self, args, kwargs):
        expected, actual = self._signature, _signature((args, kwargs))
        if len(expected) != len(actual):
            raise STATE.error(Error("Number of tensor inputs mismatch: expected %d but got %d.%s"
                                    % (len(expected), len(actual), RECOMPILE_HINT)))
        for index, ((shape, dtype), (new_shape, new_dtype)) in enumerate(zip(expected, actual)):
            if shape != new_shape:
                raise STATE.error(Error("Shape mismatch for input %d: expected %s but got %s.%s"
                                        % (index, list(shape), list(new_shape), RECOMPILE_HINT)))
            if dtype != new_dtype:
                raise STATE.error(Error("Dtype mismatch for input %d: expected %s but got %s.%s"
                                        % (index, dtype, new_dtype, RECOMPILE_HINT)))

    def setOptimizer(self, optimizer):
        self._check_usable()
        if not self._training:
            raise STATE.error(RuntimeError("setOptimizer is only available on a poptorch.trainingModel"))
        _check_optimizer(optimizer)
        object.__setattr__(self, "_optimizer", optimizer)
        object.__setattr__(self, "_device_optimizer", _snapshot(optimizer))

    def __call__(self, *args, **kwargs):
        self._check_usable()
        if not self._compiled:
            self.compile(*args, **kwargs)
        if not self._attached:
            self.attachToDevice()  # PopTorch re-attaches a detached model on call
        self._check_inputs(args, kwargs)
        if not self._training:
            # a model also wrapped for training: its trained weights reach this wrapper by themselves
            runs = self._training_runs_of_shared_models()
            if runs != self._training_runs_seen:
                self.copyWeightsToDevice()
                object.__setattr__(self, "_training_runs_seen", runs)
        # the run uses the weights the device holds: CPU training since the last copy is invisible
        # to it (PopTorch User Guide, "Model wrapping functions"); inference leaves the host's
        # weights as they were, training writes the device's back (PopTorch syncs the host model
        # when it is used)
        host_weights = None if self._training else _copy_weights(self._model)
        self._load_weights(self._device_weights)
        STATE.ipu_executions += 1
        _RUNNING[0] = True
        was_training = self._model.training
        try:
            if self._training:
                self._model.train()
                result = self._train(args, kwargs)
                self.copyWeightsToDevice()  # what the device trained is what it holds
                object.__setattr__(self, "_runs", self._runs + 1)
                return result
            if self._mode_at_wrap and not was_training:
                note = ("poptorch.inferenceModel wrapped the model while it was in training mode; "
                        "model.eval() called later is not synced to the wrapper (PopTorch User Guide, "
                        "\"Model wrapping functions\"), so "
                        "inference runs with dropout/batch-norm in training mode")
                if note not in STATE.notes:
                    STATE.notes.append(note)
            self._model.train(self._mode_at_wrap)
            # the device has its own random generator: inference must not draw from the host's
            with torch.no_grad(), torch.random.fork_rng():
                return self._infer(args, kwargs)
        finally:
            _RUNNING[0] = False
            self._model.train(was_training)
            if host_weights is not None:
                self._load_weights(host_weights)

    def _infer(self, args, kwargs):
        iterations = self._options.device_iterations * self._options.replication_factor
        calls = _split((args, kwargs), iterations)
        outputs = [self._model(*call_args, **call_kwargs) for call_args, call_kwargs in calls]
        mode = self._options.output_mode
        return _combine(outputs, OutputMode.All if mode == OutputMode.Default else mode,
                        self._options.output_return_period)

    def _train(self, args, kwargs):
        options = self._options
        micro = options.micro_batches_per_step
        parts = _split((args, kwargs), options.device_iterations * micro)
        scale = 1.0 / micro if (options.Training.accumulation_and_replication_reduction_type
                                == ReductionType.Mean) else 1.0
        outputs = []
        for iteration in range(options.device_iterations):
            self._optimizer.zero_grad()
            for call_args, call_kwargs in parts[iteration * micro:(iteration + 1) * micro]:
                output = self._model(*call_args, **call_kwargs)
                loss = _find_loss(output)
                loss = loss * scale if scale != 1.0 else loss
                # a loss marked with identity_loss(reduction="none") back-propagates ones
                loss.backward(None if loss.dim() == 0 else torch.ones_like(loss))
                outputs.append(_detach(output))
            self._step()
        _MARKED_LOSSES.clear()
        mode = options.output_mode
        result = _combine(outputs, OutputMode.Final if mode == OutputMode.Default else mode,
                          options.output_return_period)
        STATE.training_losses.extend(float(loss) for loss in _losses_of(outputs))
        return result

    def _step(self):
        """One optimizer step with the values the device holds (set at compile or setOptimizer)."""
        host = _snapshot(self._optimizer)
        for group, values in zip(self._optimizer.param_groups, self._device_optimizer):
            group.update(copy.deepcopy(values))
        try:
            self._clip()
            self._optimizer.step()
        finally:
            for group, values in zip(self._optimizer.param_groups, host):
                group.update(values)


    def _clip(self):
        """``max_grad_norm``: the device clips the gradients of all the optimizer's parameters by
        their global L2 norm before the update."""
        max_norm = getattr(self._optimizer, "_poptorch_extras", {}).get("max_grad_norm")
        if max_norm is not None:
            params = [param for group in self._optimizer.param_groups for param in group["params"]]
            torch.nn.utils.clip_grad_norm_(params, max_norm)


def _copy_weights(model):
    """The model's weights and buffers (lazy ones get theirs at the first forward: none yet)."""
    return {name: tensor.detach().clone() for name, tensor in model.state_dict().items()
            if not torch.nn.parameter.is_lazy(tensor)}


def _signature(inputs):
    """Shapes and dtypes of the tensors of a call, in order."""
    return [(tuple(tensor.shape), tensor.dtype) for tensor in _flatten(inputs)]


def count_cpu_steps():
    """Count the optimizer steps taken on the CPU (not by a trainingModel); returns the hook's
    handle, to remove it."""
    def counted(optimizer, args, kwargs):
        if not _RUNNING[0]:
            STATE.cpu_training_steps += 1
    from torch.optim.optimizer import register_optimizer_step_post_hook
    return register_optimizer_step_post_hook(counted)


def _detach(output):
    if isinstance(output, torch.Tensor):
        return output.detach()
    if isinstance(output, (list, tuple)):
        items = [_detach(item) for item in output]
        return type(output)(items) if isinstance(output, tuple) else items
    if isinstance(output, dict):
        return {key: _detach(value) for key, value in output.items()}
    return output


def _losses_of(outputs):
    losses = []
    for output in outputs:
        scalars = [tensor for tensor in _flatten(output) if tensor.dim() == 0]
        if scalars:
            losses.append(scalars[-1])
    return losses


def _ipus_of(model):
    """IPUs the model is split over by BeginBlock annotations (1 when not split)."""
    ids = {module._poptorch_block[1] for module in model.modules()
           if getattr(module, "_poptorch_block", None) is not None and module._poptorch_block[1] is not None}
    return max(ids) + 1 if ids else 1


def _check_ipus(model, options, training):
    ipus = _ipus_of(model)
    total = ipus * options.replication_factor
    if total & (total - 1) and not options.auto_round_num_ipus:
        raise STATE.error(RuntimeError(
            "The model needs %d IPUs (%d per replica x %d replicas), which is not a power of 2: "
            "use a power of 2 or opts.autoRoundNumIPUs(True) (PopTorch User Guide, \"Pipelined execution\")."
            % (total, ipus, options.replication_factor)))
    if ipus > 1 and isinstance(options.execution_strategy, PipelinedExecution):
        stages = 2 * ipus - 1 if training else ipus
        have = options.Training.gradient_accumulation if training else options.device_iterations
        what = "Training.gradientAccumulation" if training else "deviceIterations"
        if have < stages:
            raise STATE.error(RuntimeError(
                "The model is pipelined over %d IPUs (%d pipeline stages), so %s must be at least %d, "
                "not %d (PopTorch User Guide, \"Pipelined execution\")." % (ipus, stages, what, stages, have)))


def trainingModel(model, options=None, optimizer=None):
    if getattr(model, "_poptorch_training_wrapper", None) is not None:
        raise STATE.error(RuntimeError(ALREADY_WRAPPED))
    options = options if options is not None else Options()
    options._freeze()
    if optimizer is None:
        optimizer = SGD(model.parameters(), lr=0.01)
    _check_optimizer(optimizer)
    _check_ipus(model, options, training=True)
    if options.replication_factor > 1:
        STATE.notes.append("training with %d replicas: each step averages the gradients of %d "
                           "micro-batches" % (options.replication_factor, options.replication_factor))
    if options.Training.gradient_accumulation > 1:
        STATE.notes.append("gradients accumulated over %d micro-batches per optimizer step"
                           % options.Training.gradient_accumulation)
    executor = PoplarExecutor(model, options, training=True, optimizer=optimizer)
    model._poptorch_training_wrapper = executor
    STATE.training_models.append(executor)
    return executor


def inferenceModel(model, options=None):
    options = options if options is not None else Options()
    if options.Training.gradient_accumulation != 1:
        raise STATE.error(RuntimeError(INFERENCE_ACCUMULATION))
    options._freeze()
    _check_ipus(model, options, training=False)
    executor = PoplarExecutor(model, options, training=False)
    STATE.inference_models.append(executor)
    return executor


def build():
    """Fresh `poptorch` and `poptorch.optim` module objects."""
    optim = types.ModuleType("poptorch.optim")
    for optimizer in (SGD, Adam, AdamW, RMSprop, LAMB):
        setattr(optim, optimizer.__name__, optimizer)
    module = types.ModuleType("poptorch")
    module.__version__ = "3.4.0+emulated"
    for name in ("Options", "DataLoader", "DataLoaderMode", "OutputMode", "ReductionType",
                 "ConnectionType", "SyncPattern", "trainingModel", "inferenceModel", "identity_loss",
                 "BeginBlock", "Block", "BlockFunction", "Stage", "AutoStage", "PipelinedExecution",
                 "ShardedExecution", "SerialPhasedExecution", "ParallelPhasedExecution",
                 "isRunningOnIpu", "PoplarExecutor", "Error"):
        setattr(module, name, globals()[name])
    module.optim = optim
    return {"poptorch": module, "poptorch.optim": optim}
