"""`tensorflow.python.ipu` emulated on the CPU (Targeting the IPU from TensorFlow 2 and 1).

`build(tf)` returns fresh module objects keyed by their import names. The IPU strategy is a real
`tf.distribute.OneDeviceStrategy` on the CPU, so Keras and custom loops behave as they would on one
IPU; the IPU's rules are checked on the way in. TF1 code gets `ipu_scope` and
`ipu_compiler.compile`, which trace the computation on the CPU and then check the traced ops
against what the IPU device accepts."""

import contextlib
import enum
import threading
import types
import weakref

from . import ipu_config
from .state import STATE

# ops allowed to touch uint8/int8 tensors on the device: data movement only ("Supported types")
DATA_MOVEMENT_OPS = frozenset({
    "Cast", "Identity", "Reshape", "ExpandDims", "BroadcastTo", "_Arg", "_Retval", "Const",
    "NormaliseImage", "Placeholder", "PlaceholderWithDefault", "IteratorGetNext", "NoOp",
    "IteratorGetNextAsOptional", "OptionalGetValue",
})
SMALL_INT_TYPES = ("uint8", "int8")
UNSUPPORTED_RUN_DTYPES = ("float64",)
# ops with no IPU kernel (Targeting the IPU from TensorFlow 2, "Supported types" and
# "Unsupported operations"): the device's op filter (FFT and complex
# numbers), host Python, and image decoding (a string op)
UNSUPPORTED_OPS = frozenset({
    "Angle", "Complex", "ComplexAbs", "Conj", "FFT", "FFT2D", "FFT3D", "IFFT", "IFFT2D", "IFFT3D",
    "Imag", "MaxPoolGradGrad", "MaxPool3DGradGrad", "NonMaxSuppressionV4", "Real",
    "RFFT", "RFFT2D", "RFFT3D", "IRFFT", "IRFFT2D", "IRFFT3D",
    "EagerPyFunc", "PyFunc", "PyFuncStateless",
    "DecodeJpeg", "DecodePng", "DecodeGif", "DecodeBmp", "DecodeImage", "DecodeAndCropJpeg",
})
# tensors the device cannot hold; a string constant may still feed an assertion, which XLA drops
HOST_ONLY_DTYPES = ("string", "complex64", "complex128")
HOST_ONLY_EXEMPT_OPS = ("Const", "Assert")
# ops the emulation itself adds inside device code (outfeeds, counters) live under this name scope
EMULATION_SCOPE = "ipu_emulation_host"
ITERATOR_OPS = ("IteratorGetNext", "IteratorGetNextSync", "OptionalGetValue")
INFEED_SHAPE = ("Output shape {shape} is not fully defined. If using tf.Dataset.batch, set "
                "`drop_remainder=True`.")

_LOCAL = threading.local()
_CHECKED = weakref.WeakKeyDictionary()  # the user's tf.function -> as the emulated device runs it
# graphs holding ipu_compiler.compile output (they need a configured system) -> names of the ops
# compile returned: fetching one of them runs the compiled computation on the IPU
COMPILED_GRAPHS = weakref.WeakKeyDictionary()


def keras_is_running(running):
    """Keras fit/evaluate/predict call `strategy.run` themselves (after the IPU data checks of
    keras_emu, and with float64 data cast as the IPU's Keras does): not the user's run."""
    _LOCAL.keras_running = running


def _ipu_scope_depth():
    return getattr(_LOCAL, "ipu_scope_depth", 0)


class PipelineSchedule(enum.IntEnum):
    Grouped = 0
    Interleaved = 1
    Sequential = 2


class RecomputationMode(enum.IntEnum):
    Auto = 0
    RecomputeThenBackpropagate = 1
    RecomputeAndBackpropagateInterleaved = 2


class GradientAccumulationReductionMethod(enum.IntEnum):
    SUM = 0
    MEAN = 1
    RUNNING_MEAN = 2


def _device_error(tf, op, message):
    node = op if isinstance(op, tf.Operation) else None  # a node of a function body has no Operation
    return STATE.error(tf.errors.InvalidArgumentError(
        None, node, "No registered '%s' OpKernel for 'IPU' devices compatible with node %s: %s "
        "(emulated check, \"Supported types\")" % (op.type, op.name, message)))


def _check_dtype(tf, op, base):
    """The device's kernel registry for one dtype an op touches."""
    if base in UNSUPPORTED_RUN_DTYPES:
        raise _device_error(tf, op, "T=DT_DOUBLE is not supported on the IPU; cast to float32")
    if base in SMALL_INT_TYPES and op.type not in DATA_MOVEMENT_OPS:
        raise _device_error(tf, op, "T=DT_%s is only supported by data-movement ops; cast it to "
                            "float32 or int32 first" % base.upper())
    if base in HOST_ONLY_DTYPES and op.type not in HOST_ONLY_EXEMPT_OPS:
        raise _device_error(tf, op, "T=DT_%s is not supported on the IPU (no string or complex "
                            "kernels): do this in the tf.data pipeline or outside_compilation_scope"
                            % base.upper())


def _check_op_type(tf, op):
    if op.type in UNSUPPORTED_OPS and EMULATION_SCOPE not in op.name:
        raise _device_error(tf, op, "the op has no IPU kernel (\"Unsupported operations\"): move it to the tf.data "
                            "pipeline, the host, or outside_compilation_scope")


def _function_names(node_def):
    """Names of the functions an op calls (loop bodies, conditionals, nested tf.functions)."""
    for value in node_def.attr.values():
        if value.HasField("func"):
            yield value.func.name
        for function in value.list.func:
            yield function.name


def _check_function_bodies(tf, graph, node_defs, seen):
    """The ops of nested function bodies, as the device compiles them with the caller."""
    for node_def in node_defs:
        for name in _function_names(node_def):
            if name in seen:
                continue
            seen.add(name)
            function = graph._get_function(name)
            definition = getattr(function, "cached_definition", None) or getattr(function, "definition", None)
            if definition is None:
                continue
            for node in definition.node_def:
                if EMULATION_SCOPE in node.name:
                    continue
                op = _NodeView(node)
                _check_op_type(tf, op)
                op.check_iterator_shapes(tf)
                for base in op.dtype_names(tf):
                    _check_dtype(tf, op, base)
            _check_function_bodies(tf, graph, definition.node_def, seen)


class _NodeView:
    """A node of a function body, with what the device checks need of a graph op."""

    def __init__(self, node_def):
        self.node_def = node_def
        self.type = node_def.op
        self.name = node_def.name

    def check_iterator_shapes(self, tf):
        if self.type not in ITERATOR_OPS or "output_shapes" not in self.node_def.attr:
            return
        for proto in self.node_def.attr["output_shapes"].list.shape:
            shape = tf.TensorShape(proto)
            if not shape.is_fully_defined():
                raise STATE.error(ValueError(INFEED_SHAPE.format(shape=shape) + " (the iterator "
                                             "read by %s feeds the IPU)" % self.name))

    def dtype_names(self, tf):
        for value in self.node_def.attr.values():
            types = [value.type] if value.WhichOneof("value") == "type" else list(value.list.type)
            for dtype in types:
                yield tf.as_dtype(dtype).name


def _check_iterator_shapes(op):
    """An iterator read on the device is an infeed: its elements need fully defined shapes."""
    if op.type not in ITERATOR_OPS:
        return
    for tensor in op.outputs:
        if not tensor.shape.is_fully_defined():
            raise STATE.error(ValueError(INFEED_SHAPE.format(shape=tensor.shape) + " (the iterator "
                                         "read by %s feeds the IPU)" % op.name))


def check_device_ops(tf, operations, captured_placeholders=True):
    """The checks the IPU device makes on the ops of a compiled computation."""
    new = set(operations)
    graph = operations[0].graph if operations else None
    seen = set()
    for op in operations:
        if EMULATION_SCOPE in op.name:
            continue
        _check_op_type(tf, op)
        _check_iterator_shapes(op)
        for tensor in list(op.inputs) + list(op.outputs):
            _check_dtype(tf, op, tensor.dtype.base_dtype.name)
        for tensor in op.inputs:
            source = tensor.op
            if source.type == "Identity" and source.inputs and source.inputs[0].dtype._is_ref_dtype:
                source = source.inputs[0].op
            # a ref variable placed on the CPU explicitly (the TF1 global step) is
            # read from the host; any other ref variable is pulled onto the IPU, which has no kernel
            if source not in new and source.type in ("VariableV2", "Variable") \
                    and "cpu" not in source.device.lower():
                raise STATE.error(tf.errors.InvalidArgumentError(
                    None, op, "Cannot assign a device for operation %s: Could not satisfy explicit device "
                    "specification '/device:IPU:0' because no supported kernel for IPU devices is "
                    "available. The compiled code reads the ref variable %s: create variables as "
                    "resource variables (\"Adding variables\")." % (source.name, source.name)))
        if captured_placeholders:
            for tensor in op.inputs:
                if tensor.op not in new and tensor.op.type == "Placeholder" \
                        and not tensor.shape.is_fully_defined():
                    raise STATE.error(ValueError(
                        "The shape of %s is not fully defined (%s): the IPU needs fully defined shapes "
                        "for everything fed to ipu_compiler.compile" % (tensor.name, tensor.shape)))
            for tensor in op.inputs:
                if tensor.op not in new:
                    _check_iterator_shapes(tensor.op)
    if graph is not None:
        _check_function_bodies(tf, graph, [op.node_def for op in operations
                                           if EMULATION_SCOPE not in op.name], seen)


def build(tf):
    """Fresh `tensorflow.python.ipu` modules (and submodules) for the given TensorFlow."""
    modules = {}

    def module(name, **attrs):
        full = "tensorflow.python.ipu" + ("." + name if name else "")
        mod = types.ModuleType(full)
        mod.__dict__.update(attrs)
        if name in ("", "ops"):
            mod.__path__ = []
        modules[full] = mod
        return mod

    # config / utils ----------------------------------------------------------------------------
    config_names = ("IPUConfig", "SelectionOrder", "DeviceConnectionType", "StochasticRoundingBehaviour",
                    "SchedulingAlgorithm", "MergeRemoteBuffersBehaviour", "ExecutionProfileType",
                    "configure_ipu_system", "reset_ipu_configuration", "get_ipu_config")
    config = module("config", **{name: getattr(ipu_config, name) for name in config_names})

    def reset_ipu_seed(seed, device="/device:IPU:0", cpu_device="cpu",
                       experimental_identical_replicas=False):
        tf.random.set_seed(seed)

    def move_variable_initialization_to_cpu(graph=None):
        return None

    def running_on_ipu_model():
        import os
        return "--use_ipu_model" in os.environ.get("TF_POPLAR_FLAGS", "")

    utils = module("utils", reset_ipu_seed=reset_ipu_seed,
                   move_variable_initialization_to_cpu=move_variable_initialization_to_cpu,
                   running_on_ipu_model=running_on_ipu_model,
                   **{name: getattr(ipu_config, name) for name in config_names if name != "reset_ipu_configuration"})

    # strategy ------------------------------------------------------------------------------------
    class IPUStrategyV1(tf.distribute.OneDeviceStrategy):
        def __init__(self, ipu_device="/device:IPU:0", cpu_device="/device:CPU:0",
                     enable_dataset_iterators=True, enable_keras_extensions=True):
            super().__init__("/cpu:0")
            self._ipu_device = ipu_device
            self._enable_dataset_iterators = enable_dataset_iterators
            self._enable_keras_extensions = enable_keras_extensions
            STATE.strategies.append(self)

        def scope(self):
            STATE.scopes_entered += 1
            return super().scope()

        @property
        def supports_loss_scaling(self):
            return True

        def experimental_run_v2(self, fn, args=(), kwargs=None, options=None):
            raise STATE.error(RuntimeError(
                "IPUStrategy.experimental_run_v2(...) has been deleted. Use `run` instead."))

        def run(self, fn, args=(), kwargs=None, options=None):
            if getattr(_LOCAL, "keras_running", False):
                # a Keras step: its data cast as the IPU's Keras casts it, the step checked as the
                # device compiles it (keras_emu counts the steps)
                args, kwargs = _autocast_float64(tf, (args, kwargs or {}))
                return super().run(_checked_call(tf, fn, run_outputs=False), args=args, kwargs=kwargs,
                                   options=options)
            require_configured()
            if tf.executing_eagerly() and not isinstance(
                    fn, (tf.types.experimental.PolymorphicFunction, tf.types.experimental.ConcreteFunction)):
                raise STATE.error(ValueError(
                    "IPUStrategyV1.run(fn, ...) does not support eager execution. Either convert `fn` "
                    "into a tf.function or consider calling strategy.run inside a tf.function."))
            _check_run_dtypes(tf, (args, kwargs or {}), "input")
            _check_iterator_args(tf, (args, kwargs or {}))
            if isinstance(fn, tf.types.experimental.PolymorphicFunction):
                fn = _checked_function(tf, fn)
            elif not tf.executing_eagerly():
                fn = _checked_call(tf, fn)
            STATE.strategy_runs += 1
            result = super().run(fn, args=args, kwargs=kwargs, options=options)
            _count_execution(tf)
            _check_run_dtypes(tf, result, "output")
            return result

        def reduce(self, reduce_op, value, axis):
            if reduce_op not in (tf.distribute.ReduceOp.SUM, tf.distribute.ReduceOp.MEAN):
                raise STATE.error(ValueError("Unsupported reduce op"))
            return super().reduce(reduce_op, value, axis)

    module("ipu_strategy", IPUStrategyV1=IPUStrategyV1, IPUStrategy=IPUStrategyV1)

    # TF1: scopes and the compiler ---------------------------------------------------------------
    @contextlib.contextmanager
    def ipu_scope(device):
        STATE.scopes_entered += 1
        graph = tf.compat.v1.get_default_graph()
        first = len(graph.get_operations())
        _LOCAL.ipu_scope_depth = _ipu_scope_depth() + 1
        try:
            with tf.compat.v1.variable_scope(tf.compat.v1.get_variable_scope(), use_resource=True,
                                             auxiliary_name_scope=False):
                yield
        finally:
            _LOCAL.ipu_scope_depth -= 1
        for op in graph.get_operations()[first:]:
            if op.type in ("VariableV2", "Variable"):
                raise STATE.error(tf.errors.InvalidArgumentError(
                    None, op, "Cannot assign a device for operation %s: Could not satisfy explicit device "
                    "specification '%s' because no supported kernel for IPU devices is available. "
                    "Use resource variables (\"Adding variables\")." % (op.name, device)))

    @contextlib.contextmanager
    def ipu_shard(index):
        yield

    @contextlib.contextmanager
    def outside_compilation_scope(name="outside"):
        yield

    module("scopes", ipu_scope=ipu_scope, ipu_shard=ipu_shard,
           outside_compilation_scope=outside_compilation_scope)

    def compile(computation, inputs=None):
        if _ipu_scope_depth() == 0:
            raise STATE.error(Exception(
                "`ipu_compiler.compile` must be called from within an IPU device scope: wrap it in "
                "`with ipu.scopes.ipu_scope('/device:IPU:0'):`."))
        if tf.executing_eagerly():
            require_configured()
        inputs = list(inputs or [])
        for value in tf.nest.flatten(inputs):
            if hasattr(value, "shape") and hasattr(value.shape, "is_fully_defined") \
                    and not value.shape.is_fully_defined():
                raise STATE.error(ValueError(
                    "The input %s to ipu_compiler.compile does not have a fully defined shape (%s)."
                    % (getattr(value, "name", value), value.shape)))
        graph = tf.compat.v1.get_default_graph()
        first = len(graph.get_operations())
        outputs = computation(*inputs)
        check_device_ops(tf, graph.get_operations()[first:])
        STATE.compiled += 1
        results = _compiled_results(tf, outputs)
        COMPILED_GRAPHS.setdefault(graph, set()).update(
            getattr(result, "op", result).name for result in results)
        return results

    module("ipu_compiler", compile=compile)

    # loops and feeds ------------------------------------------------------------------------------
    class IPUInfeedQueue:
        def __init__(self, dataset, device_ordinal=None, prefetch_depth=None, optimise_latency=False,
                     **kwargs):
            for name in ("feed_name", "replication_factor", "data_to_prefetch", "io_batch_size"):
                if name in kwargs:
                    raise STATE.error(TypeError(
                        "IPUInfeedQueue() got an unexpected keyword argument '%s' (removed in SDK 2.4)" % name))
            check_infeed_shapes(tf, dataset)
            if prefetch_depth is not None and not 0 < prefetch_depth < 256:
                raise STATE.error(ValueError("prefetch_depth must be between 1 and 255"))
            self._dataset = dataset
            if tf.executing_eagerly():
                self._iterator = iter(dataset)
                self.initializer = None
            else:
                self._iterator = tf.compat.v1.data.make_initializable_iterator(dataset)
                self.initializer = self._iterator.initializer

        def _dequeue(self):
            return self._iterator.get_next()

        def __iter__(self):
            return self

        def __next__(self):
            return next(self._iterator)

    class IPUOutfeedMode(enum.Enum):
        ALL = 1
        LAST = 2

    class IPUOutfeedQueue:
        """Enqueued values go to a host-side buffer through `tf.py_function`, so enqueueing works
        inside device loops (TF1 `loops.repeat`, TF2 `tf.range` loops) as the real outfeed does."""

        def __init__(self, outfeed_mode=None, device_ordinal=None, buffer_depth=3, optimise_latency=False):
            self._mode = outfeed_mode or IPUOutfeedMode.ALL
            self._buffer = []
            self._structure = None

        def enqueue(self, tensors):
            flat = [tf.convert_to_tensor(value) for value in tf.nest.flatten(tensors)]
            self._structure = tensors
            self._specs = [(value.dtype, value.shape) for value in flat]

            def push(*values):
                self._buffer.append([value.numpy() for value in values])
                STATE.outfeed_items += 1
                return 0

            with tf.name_scope(EMULATION_SCOPE):
                done = tf.py_function(push, flat, Tout=tf.int32)
            return done if tf.executing_eagerly() else done.op

        def _take(self):
            items, self._buffer[:] = list(self._buffer), []
            if self._mode == IPUOutfeedMode.LAST:
                items = items[-1:]
            return items

        def dequeue(self, wait_for_completion=False):
            if self._structure is None:
                raise STATE.error(ValueError("dequeue() called on an outfeed nothing was enqueued to"))
            import numpy as np

            def pull():
                items = self._take()
                if not items:
                    return [np.zeros((0,) + tuple(shape), dtype.as_numpy_dtype) for dtype, shape in self._specs]
                columns = [np.stack(column) for column in zip(*items)]
                if self._mode == IPUOutfeedMode.LAST:
                    return [column[0] for column in columns]
                return columns

            with tf.name_scope(EMULATION_SCOPE):
                values = tf.py_function(pull, [], Tout=[dtype for dtype, _ in self._specs])
            for value, (_, shape) in zip(values, self._specs):
                value.set_shape(shape if self._mode == IPUOutfeedMode.LAST else [None] + list(shape))
            return tf.nest.pack_sequence_as(self._structure, values)

        def __iter__(self):
            for item in self._take():
                yield tf.nest.pack_sequence_as(self._structure, [tf.constant(value) for value in item])

    module("ipu_infeed_queue", IPUInfeedQueue=IPUInfeedQueue)
    module("ipu_outfeed_queue", IPUOutfeedQueue=IPUOutfeedQueue, IPUOutfeedMode=IPUOutfeedMode,
           ScopedIPUOutfeedQueue=IPUOutfeedQueue)

    def repeat(n, body, inputs=None, infeed_queue=None, use_while_v1=True):
        inputs = list(inputs or [])

        def loop_body(i, *carried):
            args = list(carried)
            if infeed_queue is not None:
                element = infeed_queue._dequeue()
                if isinstance(element, dict):
                    result = body(*args, **element)
                else:
                    result = body(*(args + list(element if isinstance(element, (list, tuple)) else [element])))
            else:
                result = body(*args)
            if isinstance(result, tf.Operation):
                with tf.control_dependencies([result]):
                    return [i + 1] + [tf.identity(value) for value in carried]
            result = list(result) if isinstance(result, (list, tuple)) else ([] if result is None else [result])
            ops = [item for item in result if isinstance(item, tf.Operation)]
            values = [item for item in result if not isinstance(item, tf.Operation)]
            if len(values) != len(carried):
                raise STATE.error(TypeError(
                    "The body of ipu.loops.repeat returned %d values but %d loop-carried inputs were given"
                    % (len(values), len(carried))))
            with tf.control_dependencies(ops):
                return [i + 1] + [tf.identity(value) for value in values]

        loop = tf.while_loop(lambda i, *_: i < n, loop_body, [tf.constant(0)] + inputs)
        loop = list(loop) if isinstance(loop, (list, tuple)) else [loop]
        outputs = loop[1:]
        if not outputs:
            return None if tf.executing_eagerly() else tf.group(*loop)
        return outputs if len(outputs) > 1 else outputs[0]

    module("loops", repeat=repeat)

    # ops / optimizers --------------------------------------------------------------------------
    pipelining_ops = module("ops.pipelining_ops", PipelineSchedule=PipelineSchedule,
                            RecomputationMode=RecomputationMode,
                            GradientAccumulationReductionMethod=GradientAccumulationReductionMethod)
    ops = module("ops", pipelining_ops=pipelining_ops)

    def cross_replica_sum(x, replica_group_size=None, name=None):
        return tf.identity(x)

    cross_replica_ops = module("cross_replica_ops", cross_replica_sum=cross_replica_sum,
                               cross_replica_mean=cross_replica_sum)

    class CrossReplicaOptimizer(tf.compat.v1.train.Optimizer):
        def __init__(self, opt, name="CrossReplicaOptimizer"):
            super().__init__(False, name)
            self._opt = opt

        def compute_gradients(self, *args, **kwargs):
            return self._opt.compute_gradients(*args, **kwargs)

        def apply_gradients(self, *args, **kwargs):
            return self._opt.apply_gradients(*args, **kwargs)

        def get_slot(self, *args, **kwargs):
            return self._opt.get_slot(*args, **kwargs)

        def get_slot_names(self, *args, **kwargs):
            return self._opt.get_slot_names(*args, **kwargs)

        def variables(self):
            return self._opt.variables()

    optimizers = module("optimizers", CrossReplicaOptimizer=CrossReplicaOptimizer)

    ipu = module("", **{name.split(".")[-1]: mod for name, mod in modules.items()
                        if name.count(".") == 3})
    ipu.cross_replica_optimizer = optimizers
    return modules


def _compiled_results(tf, outputs):
    """What compile returns: a list, operations as dependencies of the tensors."""
    if outputs is None:
        return [tf.no_op()]
    if not isinstance(outputs, (list, tuple)):
        outputs = [outputs]
    outputs = list(outputs)
    tensors = [item for item in outputs if not isinstance(item, tf.Operation)]
    operations = [item for item in outputs if isinstance(item, tf.Operation)]
    if tensors and operations and outputs.index(operations[0]) < len(tensors):
        raise STATE.error(ValueError(
            "ipu_compiler.compile: operations must come after the tensors in the returned list"))
    if not tensors:
        return [tf.group(*operations)]
    with tf.control_dependencies(operations):
        return [tf.identity(tensor) for tensor in tensors]


def _checked_function(tf, fn):
    """`fn` as the device runs it: traced in the replica context like the real run, with the
    device's checks at trace time. Without XLA: the IPU compiles the function itself, and XLA on
    the CPU cannot hold the host-side pieces of the emulation (outfeeds)."""
    if fn not in _CHECKED:
        _CHECKED[fn] = tf.function(_checked_call(tf, fn.python_function), input_signature=fn.input_signature)
    return _CHECKED[fn]


def _checked_call(tf, function, run_outputs=True):
    """`function` traced with the device's op checks (no kernel, uint8 only for data movement, no
    float64, static iterator shapes) on the ops it adds to the graph, and (for `strategy.run`, not
    for Keras's own steps) its outputs' dtypes."""
    def checked(*args, **kwargs):
        graph = tf.compat.v1.get_default_graph()
        first = len(graph.get_operations())
        outputs = function(*args, **kwargs)
        if run_outputs:
            _check_run_dtypes(tf, outputs, "output")
        check_device_ops(tf, graph.get_operations()[first:], captured_placeholders=False)
        return outputs

    return checked


def _autocast_float64(tf, structure):
    """What the IPU's Keras does to float64 data before it reaches the device (Targeting the IPU
    from TensorFlow 2, "Keras with IPUs")."""
    def cast(value):
        if isinstance(value, tf.Tensor) and value.dtype == tf.float64:
            return tf.cast(value, tf.float32)
        return value
    return tf.nest.map_structure(cast, structure)


def _check_iterator_args(tf, structure):
    """An iterator passed to the device function feeds the IPU: its elements need static shapes."""
    for value in tf.nest.flatten(structure):
        if isinstance(value, tf.data.Iterator):
            for spec in tf.nest.flatten(value.element_spec):
                if not spec.shape.is_fully_defined():
                    raise STATE.error(ValueError(INFEED_SHAPE.format(shape=spec.shape)))


def _count_execution(tf):
    """One run of the device function: now when eager, or each time the enclosing tf.function runs."""
    if tf.executing_eagerly():
        STATE.ipu_executions += 1
        return

    def count():
        STATE.ipu_executions += 1
        return 0

    with tf.name_scope(EMULATION_SCOPE):
        tf.py_function(count, [], Tout=tf.int32)


def session_patches(tf):
    """A TF1 session running compiled IPU code needs the IPU system configured by then; each run
    counts as an IPU execution when it fetches compiled outputs, as a CPU training step when it
    fetches an optimizer update that was not compiled."""
    session_class = tf.compat.v1.Session.__mro__[1]  # BaseSession
    original_run = session_class.run

    def run(self, *args, **kwargs):
        if self.graph in COMPILED_GRAPHS:
            require_configured()
        result = original_run(self, *args, **kwargs)
        fetched = _fetched_ops(self.graph, args[0] if args else kwargs.get("fetches"))
        if any(op.name in COMPILED_GRAPHS.get(self.graph, ()) for op in fetched):
            STATE.ipu_executions += 1
        elif _updates_weights(self.graph, fetched):
            STATE.cpu_training_steps += 1
        return result

    return [(session_class, "run", run)]


def iterator_patches(tf):
    """`iter(dataset)` in an IPUStrategy scope makes an infeed (Targeting the IPU from TensorFlow 2,
    "Keras with IPUs"): static shapes."""
    dataset_class = tf.data.Dataset
    original_iter = dataset_class.__iter__

    def __iter__(self):
        if tf.executing_eagerly() and not getattr(_LOCAL, "keras_running", False) \
                and tf.distribute.has_strategy():
            strategy = tf.distribute.get_strategy()
            if type(strategy).__name__ == "IPUStrategyV1" and strategy._enable_dataset_iterators:
                check_infeed_shapes(tf, self)
        return original_iter(self)

    return [(dataset_class, "__iter__", __iter__)]


def _fetched_ops(graph, fetches):
    """The graph operations a `Session.run` fetches (tensors, operations or their names)."""
    if isinstance(fetches, dict):
        fetches = list(fetches.values())
    if isinstance(fetches, (list, tuple)):
        return [op for item in fetches for op in _fetched_ops(graph, item)]
    try:
        element = graph.as_graph_element(fetches, allow_tensor=True, allow_operation=True)
    except (TypeError, ValueError, KeyError):
        return []
    return [getattr(element, "op", element)]


OPTIMIZER_UPDATE_PREFIXES = ("Apply", "ResourceApply", "SparseApply", "ResourceSparseApply")
_UPDATES = weakref.WeakKeyDictionary()  # graph -> {fetched op names: whether they update weights}


def _updates_weights(graph, fetched):
    """Whether running these ops runs an optimizer update (an Apply* op among their ancestors)."""
    key = tuple(sorted(op.name for op in fetched))
    cache = _UPDATES.setdefault(graph, {})
    if key not in cache:
        seen, stack, found = set(), list(fetched), False
        while stack and not found:
            op = stack.pop()
            if op in seen:
                continue
            seen.add(op)
            found = op.type.startswith(OPTIMIZER_UPDATE_PREFIXES)
            stack.extend(tensor.op for tensor in op.inputs)
            stack.extend(op.control_inputs)
        cache[key] = found
    return cache[key]


def check_infeed_shapes(tf, dataset):
    """A dataset that feeds the IPU (infeed queue, iterator made in the scope) has static shapes."""
    for spec in tf.nest.flatten(dataset.element_spec):
        if not spec.shape.is_fully_defined():
            raise STATE.error(ValueError(INFEED_SHAPE.format(shape=spec.shape)))


def require_configured():
    if ipu_config.configured_ipus() < 1:
        raise STATE.error(RuntimeError(
            "No IPU devices have been configured: call `configure_ipu_system()` on an IPUConfig with "
            "`auto_select_ipus` (or `select_ipus`) set before running on the IPU (emulated check)."))


def _check_run_dtypes(tf, structure, what):
    for value in tf.nest.flatten(structure, expand_composites=True):
        dtype = getattr(value, "dtype", None)
        if dtype is None:
            continue
        name = tf.as_dtype(dtype).name if not isinstance(dtype, str) else dtype
        if name in UNSUPPORTED_RUN_DTYPES:
            raise STATE.error(TypeError("Unsupported data type for %s: %s" % (what, name)))
