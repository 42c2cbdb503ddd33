"""What Keras 2.6, the Keras of the IPU's TensorFlow, has under which name: its bare ``keras``
package (``import keras``) beside the public API that ``tensorflow.keras`` is
(``keras.api._v2.keras``), and its optimizers, which newer Keras keeps under ``optimizers.legacy``.
Shared by the rules that port such names (IPU113, IPU114) and the rule that reports the rest
(IPU163), which skips what the first two fixed."""

from __future__ import annotations

from typing import Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

import libcst as cst

from porter.context import FileContext, SharedKey

# The public utilities of Keras 2.6 (`tf.keras.utils`), which its `keras.utils` package itself, a
# folder of modules (`np_utils`, `data_utils`...) with an empty `__init__`, does not export.
PUBLIC_UTILS = frozenset({
    "to_categorical", "normalize", "Sequence", "SequenceEnqueuer", "OrderedEnqueuer", "GeneratorEnqueuer",
    "get_file", "Progbar", "plot_model", "model_to_dot", "CustomObjectScope", "custom_object_scope",
    "get_custom_objects", "register_keras_serializable", "serialize_keras_object",
    "deserialize_keras_object", "get_registered_name", "get_registered_object", "get_source_inputs",
    "array_to_img", "img_to_array", "load_img", "save_img", "image_dataset_from_directory",
    "text_dataset_from_directory", "timeseries_dataset_from_array", "pack_x_y_sample_weight",
    "unpack_x_y_sample_weight",
})

# The names of Keras 2.6's public API (`tensorflow.keras`) at its top.
PUBLIC_TOP = frozenset({
    "activations", "applications", "backend", "callbacks", "constraints", "datasets", "estimator",
    "experimental", "initializers", "layers", "losses", "metrics", "mixed_precision", "models",
    "optimizers", "preprocessing", "regularizers", "utils", "wrappers", "Input", "Model", "Sequential",
    "__version__",
})

# Names the bare package's modules hold that the public API's same modules do not (their private
# submodules, imports and helpers), read from the Keras 2.6 wheel: `keras.layers.merge` works after
# `import keras`, not after `from tensorflow import keras`.
BARE_ONLY: Dict[str, FrozenSet[str]] = {
    "layers": frozenset(
        "BatchNormalizationV1 BatchNormalizationV2 CategoryCrossing CuDNNGRU CuDNNLSTM DeviceWrapper "
        "DropoutWrapper EinsumDense GRUCellV1 GRUCellV2 GRUV1 GRUV2 LSTMCellV1 LSTMCellV2 LSTMV1 LSTMV2 "
        "PeepholeLSTMCell PreprocessingLayer RandomFourierFeatures ResidualWrapper SyncBatchNormalization "
        "VersionAwareLayers advanced_activations convolutional convolutional_recurrent core cudnn_recurrent "
        "dense_attention einsum_dense embeddings kernelized legacy_rnn local merge multi_head_attention "
        "noise normalization pooling preprocessing recurrent recurrent_v2 rnn_cell_wrapper_v2 serialization "
        "tf tf2 wrappers".split()),
    "backend": frozenset(
        "ContextValueCache GraphExecutionFunction OBSERVED_NAMES PER_GRAPH_OBJECT_NAME_UIDS backend_config "
        "base_layer_utils cast_variables_to_tensor collections config config_pb2 "
        "configure_and_create_distributed_session context control_flow_util conv3d_transpose "
        "convert_inputs_if_ragged dc deprecated_internal_learning_phase_scope "
        "deprecated_internal_set_learning_phase doc_controls dtype_numpy eager_learning_phase_scope "
        "get_config get_default_graph_uid_map get_default_session_config get_graph get_session "
        "global_learning_phase_is_set identity input_layer is_placeholder is_tpu_strategy itertools json "
        "keras_export keras_tensor local_conv logging logsumexp maybe_convert_to_ragged models np "
        "object_identity observe_object_name os py_all py_any py_sum separable_conv1d set_session "
        "symbolic_learning_phase sys tf tf_contextlib tf_inspect tf_utils threading track_tf_optimizer "
        "track_variable unique_object_name warnings weakref".split()),
    "models": frozenset(
        "AddMetric CustomObjectScope Functional Input InputLayer Layer backend clone_and_build_model "
        "functional generic_utils in_place_subclassed_model_state_restoration keras_export logging "
        "metrics_module model_config optimizer_v1 save sequential share_weights tf training training_v1 "
        "version_utils".split()),
    "optimizers": frozenset(
        "TFOptimizer adadelta_v2 adagrad_v2 adam_v2 adamax_v2 backend deserialize_keras_object ftrl "
        "gradient_descent_v2 keras_export loss_scale_optimizer nadam_v2 optimizer_v2 rmsprop_v2 "
        "serialize_keras_object tf".split()),
    "losses": frozenset(
        "BCE LABEL_DTYPES_FOR_LOSSES LossFunctionWrapper abc backend bce deserialize_keras_object dispatch "
        "doc_controls functools huber_loss is_categorical_crossentropy keras_export losses_utils "
        "ragged_map_ops ragged_util serialize_keras_object tf tf_utils".split()),
    "metrics": frozenset(
        "ACC BCE Reduce SensitivitySpecificityBase SumOverBatchSize SumOverBatchSizeMetricWrapper abc acc "
        "accuracy activations backend base_layer base_layer_utils bce categorical_hinge clone_metric "
        "clone_metrics cosine_proximity cosine_similarity deserialize_keras_object distributed_training_utils "
        "doc_controls generic_utils is_built_in is_tensor_or_variable keras_export keras_tensor losses_utils "
        "metric_serialization metrics_utils np serialize_keras_object tf to_list types warnings".split()),
    "callbacks": frozenset(
        "BackupAndRestore ModeKeys Progbar Sequence backend collections configure_callbacks copy csv "
        "distributed_file_utils doc_controls embeddings generic_utils json keras_export keras_model_summary "
        "learning_rate_schedule logging make_logs np os path_to_string projector_config_pb2 re requests "
        "set_callback_parameters sys text_format tf tf_utils time version_utils worker_training_state".split()),
    "activations": frozenset(
        "advanced_activations backend deserialize_keras_object keras_export leaky_relu log_softmax relu6 "
        "serialize_keras_object silu tf".split()),
    "initializers": frozenset(
        "LOCAL generic_utils init_ops initializers_v1 initializers_v2 inspect keras_export "
        "populate_deserializable_objects tf tf2 threading".split()),
    "regularizers": frozenset("backend deserialize_keras_object keras_export math serialize_keras_object tf".split()),
    "constraints": frozenset(
        "backend deserialize_keras_object doc_controls keras_export maxnorm nonneg serialize_keras_object "
        "tf unitnorm".split()),
    "datasets": frozenset({"cifar"}),
    "preprocessing": frozenset(
        "backend dataset_utils image_dataset keras_preprocessing text_dataset timeseries utils".split()),
    "mixed_precision": frozenset(
        "autocast_variable device_compatibility_check get_layer_policy loss_scale loss_scale_optimizer "
        "policy test_util".split()),
    "utils": frozenset(
        "all_utils control_flow_util conv_utils data_utils dataset_creator generic_utils io_utils "
        "kernelized_utils kpl_test_utils layer_utils losses_utils metrics_utils mode_keys multi_gpu_utils "
        "np_utils object_identity tf_contextlib tf_inspect tf_utils version_utils vis_utils".split()),
}

# Base classes Keras 3 also exports at its top (`keras.Layer`), which Keras 2.6 has only in their
# module (an AttributeError or ImportError there), by the module: Keras 3's `keras.Layer` is its
# `keras.layers.Layer`, the class Keras 2.6 has under that name. (`keras.Optimizer` is not here:
# Keras 2.6's optimizer base class has another interface.)
TOP_LEVEL_CLASSES: Dict[str, str] = {
    "Layer": "layers", "InputSpec": "layers", "Loss": "losses", "Metric": "metrics",
    "Initializer": "initializers", "Regularizer": "regularizers",
}

# Keras 3's functions (and class) that Keras 2.6 has under another name, with the same arguments and
# defaults: `keras.config`'s settings are Keras 2.6's `keras.backend` ones, and its dtype policies are
# Keras 2.6's mixed-precision policies.
RENAMED: Dict[str, str] = {
    **{f"keras.config.{name}": f"keras.backend.{name}" for name in (
        "floatx", "set_floatx", "epsilon", "set_epsilon", "image_data_format", "set_image_data_format", "backend")},
    "keras.config.set_dtype_policy": "keras.mixed_precision.set_global_policy",
    "keras.config.dtype_policy": "keras.mixed_precision.global_policy",
    "keras.mixed_precision.set_dtype_policy": "keras.mixed_precision.set_global_policy",
    "keras.mixed_precision.dtype_policy": "keras.mixed_precision.global_policy",
    "keras.mixed_precision.DTypePolicy": "keras.mixed_precision.Policy",
}

# The optimizers newer Keras keeps under `optimizers.legacy`: Keras 2.6's own, with the same
# arguments (the keywords of their `__init__` in Keras 2.6).
_COMMON_KEYWORDS = ("learning_rate", "name", "clipnorm", "clipvalue", "global_clipnorm", "lr", "decay")
LEGACY_OPTIMIZERS: Dict[str, FrozenSet[str]] = {
    optimizer: frozenset(_COMMON_KEYWORDS + tuple(keywords.split())) for optimizer, keywords in {
        "Adadelta": "rho epsilon",
        "Adagrad": "initial_accumulator_value epsilon",
        "Adam": "beta_1 beta_2 epsilon amsgrad",
        "Adamax": "beta_1 beta_2 epsilon",
        "Ftrl": "learning_rate_power initial_accumulator_value l1_regularization_strength "
                "l2_regularization_strength l2_shrinkage_regularization_strength beta",
        "Nadam": "beta_1 beta_2 epsilon",
        "RMSprop": "rho momentum epsilon centered",
        "SGD": "momentum nesterov",
    }.items()
}
# Positional arguments the same optimizers take (`learning_rate` first, `name` last).
LEGACY_POSITIONALS = {"Adadelta": 4, "Adagrad": 4, "Adam": 6, "Adamax": 5, "Ftrl": 8, "Nadam": 5,
                      "RMSprop": 6, "SGD": 4}

# The ids of the import aliases IPU113 moved to the public API, and of the names that read them:
# IPU163 does not report the utilities reached through them.
MOVED_IMPORTS: SharedKey[Set[int]] = SharedKey("keras26-moved-imports", set)
# The ids of what IPU114 rewrote: the head name of an `optimizers.legacy` chain, an import alias
# and the names that read it, a `jit_compile` argument. IPU163 does not report them.
REWRITTEN: SharedKey[Set[int]] = SharedKey("keras26-rewritten", set)


def head_name(node: cst.CSTNode) -> cst.CSTNode:
    """The name an attribute chain starts with (``keras`` of ``keras.utils.to_categorical``);
    any other node itself."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return node


def attribute_path(ctx: FileContext, name: cst.Name) -> List[str]:
    """The attributes read after ``name``: ``keras.utils.to_categorical(y)`` -> ``["utils",
    "to_categorical"]``."""
    path = []
    node: cst.CSTNode = name
    parent = ctx.parent(node)
    while isinstance(parent, cst.Attribute) and parent.value is node:
        path.append(parent.attr.value)
        node, parent = parent, ctx.parent(parent)
    return path


def uses_of(ctx: FileContext, local: str, qualified: str) -> Iterator[cst.Name]:
    """The names ``local`` that read the import of ``qualified`` (not those of an import statement,
    not an attribute or keyword of that spelling)."""
    for name in ctx.nodes(cst.Name):
        if name.value != local or any(isinstance(node, (cst.Import, cst.ImportFrom)) for node in ctx.ancestors(name)):
            continue
        parent = ctx.parent(name)
        if (isinstance(parent, cst.Attribute) and parent.attr is name) or (
                isinstance(parent, cst.Arg) and parent.keyword is name):
            continue
        if ctx.qualified_name(name) == qualified:
            yield name


def valid_legacy_call(call: cst.Call, optimizer: str) -> bool:
    """Whether Keras 2.6's ``optimizer`` takes the arguments of ``call`` (no ``*args`` or
    ``**kwargs`` it cannot read)."""
    positionals = 0
    for arg in call.args:
        if arg.star:
            return False
        if arg.keyword is None:
            positionals += 1
        elif arg.keyword.value not in LEGACY_OPTIMIZERS[optimizer]:
            return False
    return positionals <= LEGACY_POSITIONALS[optimizer]


def module_aliases(ctx: FileContext) -> Iterator[Tuple[cst.ImportAlias, str, Optional[str]]]:
    """(alias, its qualified name, the module of a ``from`` import) for each name a module-level
    import binds."""
    for statement in ctx.module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    yield alias, ctx.module.code_for_node(alias.name), None
            elif isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None \
                    and not isinstance(small.names, cst.ImportStar):
                module = ctx.module.code_for_node(small.module)
                for alias in small.names:
                    yield alias, f"{module}.{ctx.module.code_for_node(alias.name)}", module
