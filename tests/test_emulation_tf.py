"""The emulated `tensorflow.python.ipu`, Keras IPU extensions and `ipu_tensorflow_addons`
(tests/emulation): one test per documented constraint, each raising on the bad case and passing
the good one."""

import sys

import numpy as np
import pytest

from emulation import emulated_ipu, import_tensorflow

pytest.importorskip("tensorflow")
tf, keras = import_tensorflow()


@pytest.fixture
def ipu():
    with emulated_ipu(torch=False) as state:
        from tensorflow.python import ipu
        ipu.state = state
        keras.backend.clear_session()
        keras.utils.set_random_seed(0)
        yield ipu
    assert "tensorflow.python.ipu" not in sys.modules
    assert not hasattr(keras, "ipu")


def configure(ipu, ipus=1):
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = ipus
    config.configure_ipu_system()
    return config


def dense_model(inputs=4):
    return keras.Sequential([keras.layers.Dense(8, activation="relu", input_shape=(inputs,)),
                             keras.layers.Dense(2)])


def compiled(model, **kwargs):
    model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  **kwargs)
    return model


def arrays(n=32, inputs=4):
    rng = np.random.RandomState(0)
    return rng.rand(n, inputs).astype("float32"), rng.randint(0, 2, n).astype("int32")


def in_scope(ipu, build, ipus=1, **strategy_kwargs):
    configure(ipu, ipus)
    strategy = ipu.ipu_strategy.IPUStrategy(**strategy_kwargs)
    with strategy.scope():
        return build()


# module layout -------------------------------------------------------------------------------

def test_import_forms(ipu):
    from tensorflow.python.ipu import config, ipu_compiler, scopes, utils  # noqa: F401
    from tensorflow.python.ipu.ops import pipelining_ops
    import tensorflow.python.ipu.ipu_strategy as strategy_module
    assert strategy_module.IPUStrategy is strategy_module.IPUStrategyV1
    assert pipelining_ops.PipelineSchedule.Grouped == 0
    assert ipu.ops.pipelining_ops.PipelineSchedule.Interleaved == 1
    assert utils.IPUConfig is config.IPUConfig


def test_old_configuration_functions_are_gone(ipu):
    for name in ("create_ipu_config", "auto_select_ipus", "set_ipu_model_options",
                 "set_recomputation_options", "set_floating_point_behaviour_options"):
        assert not hasattr(ipu.utils, name)
    assert hasattr(ipu.utils, "configure_ipu_system")


def test_old_ipu_keras_module_is_gone(ipu):
    assert not hasattr(ipu, "keras")
    with pytest.raises(ImportError):
        from tensorflow.python.ipu import keras as _  # noqa: F401


# IPUConfig ------------------------------------------------------------------------------------

def test_config_unknown_attribute_suggests(ipu):
    config = ipu.config.IPUConfig()
    with pytest.raises(AttributeError, match="Did you mean 'auto_select_ipus'"):
        config.auto_select_ipu = 1
    with pytest.raises(AttributeError, match="Did you mean 'poplar_options'"):
        config.matmuls.poplar_option = {}
    config.auto_select_ipus = 1


def test_config_category_cannot_be_assigned(ipu):
    config = ipu.config.IPUConfig()
    with pytest.raises(AttributeError, match="category"):
        config.experimental = 2
    config.experimental.enable_prng_stability = True


def test_config_types_are_checked(ipu):
    config = ipu.config.IPUConfig()
    with pytest.raises(TypeError):
        config.allow_recompute = 1
    with pytest.raises(TypeError):
        config.auto_select_ipus = "1"
    with pytest.raises(TypeError):
        config.ipu_model.tiles_per_ipu = 1.5
    with pytest.raises(TypeError):
        config.selection_order = "SNAKE"
    config.auto_select_ipus = [1, 1]
    config.io_tiles.available_memory_proportion = 1
    config.selection_order = ipu.config.SelectionOrder.SNAKE


def test_config_esr_is_an_enum_not_a_bool(ipu):
    config = ipu.config.IPUConfig()
    with pytest.raises(ValueError):
        config.floating_point_behaviour.esr = True
    config.floating_point_behaviour.esr = ipu.config.StochasticRoundingBehaviour.ON


def test_config_defaults(ipu):
    config = ipu.config.IPUConfig()
    assert config.auto_select_ipus == [] and config.allow_recompute is False
    assert config.device_connection.type == ipu.config.DeviceConnectionType.ALWAYS
    assert config.ipu_model.version == "ipu2" and config.io_tiles.available_memory_proportion == 0.9


def test_configure_only_one_selection(ipu):
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.select_ipus = [0]
    with pytest.raises(Exception, match="Only one of"):
        config.configure_ipu_system()


def test_configure_pre_compile_needs_a_version(ipu):
    config = ipu.config.IPUConfig()
    config.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE
    with pytest.raises(ValueError):
        config.configure_ipu_system()
    config.device_connection.version = "ipu2"
    config.configure_ipu_system()


def test_poplar_option_values_must_be_strings(ipu):
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.matmuls.poplar_options = {"availableMemoryProportion": 0.6}
    with pytest.raises(TypeError):
        config.configure_ipu_system()
    config.matmuls.poplar_options = {"availableMemoryProportion": "0.6"}
    ipu.config.configure_ipu_system(config)
    assert ipu.state.configured == [config]


# IPUStrategy ----------------------------------------------------------------------------------

def test_strategy_replicas_and_loss_scaling(ipu):
    configure(ipu, 2)
    strategy = ipu.ipu_strategy.IPUStrategyV1()
    assert strategy.num_replicas_in_sync == 1
    assert strategy.supports_loss_scaling


def test_strategy_run_needs_a_tf_function(ipu):
    configure(ipu)
    strategy = ipu.ipu_strategy.IPUStrategy()
    with pytest.raises(ValueError, match="does not support eager execution"):
        strategy.run(lambda x: x * 2, args=(tf.constant(1.0),))
    assert float(strategy.run(tf.function(lambda x: x * 2), args=(tf.constant(1.0),))) == 2.0


def test_strategy_run_rejects_float64(ipu):
    configure(ipu)
    strategy = ipu.ipu_strategy.IPUStrategy()
    double = tf.function(lambda x: x * 2)
    with pytest.raises(TypeError, match="Unsupported data type for input: float64"):
        strategy.run(double, args=(tf.constant(1.0, tf.float64),))
    with pytest.raises(TypeError, match="Unsupported data type for output: float64"):
        strategy.run(tf.function(lambda x: tf.cast(x, tf.float64)), args=(tf.constant(1.0),))
    strategy.run(double, args=(tf.constant(1.0, tf.float32),))


def test_strategy_run_uint8_only_for_data_movement(ipu):
    configure(ipu)
    strategy = ipu.ipu_strategy.IPUStrategy()
    images = tf.constant(np.arange(8, dtype="uint8").reshape(2, 4))
    with pytest.raises(tf.errors.InvalidArgumentError, match="DT_UINT8"):
        strategy.run(tf.function(lambda x: tf.reduce_sum(x * 2)), args=(images,))
    cast_first = tf.function(lambda x: tf.reduce_sum(tf.cast(x, tf.float32) * 2.0))
    assert float(strategy.run(cast_first, args=(images,))) == 56.0


def test_strategy_experimental_run_v2_deleted(ipu):
    strategy = ipu.ipu_strategy.IPUStrategy()
    with pytest.raises(RuntimeError, match="has been deleted. Use `run` instead."):
        strategy.experimental_run_v2(tf.function(lambda: 1))


def test_strategy_needs_a_configured_system(ipu):
    strategy = ipu.ipu_strategy.IPUStrategy()
    with pytest.raises(RuntimeError, match="configured"):
        strategy.run(tf.function(lambda x: x), args=(tf.constant(1.0),))


def test_strategy_reduce_sum_and_mean_only(ipu):
    configure(ipu)
    strategy = ipu.ipu_strategy.IPUStrategy()
    value = strategy.run(tf.function(lambda: tf.constant(3.0)))
    assert float(strategy.reduce(tf.distribute.ReduceOp.SUM, value, axis=None)) == 3.0
    with pytest.raises(ValueError, match="Unsupported reduce op"):
        strategy.reduce("MAX", value, axis=None)


# Keras inside the strategy ("Keras with IPUs") ---------------------------------------------

def test_keras_fit_in_scope_matches_the_cpu(ipu):
    x, y = arrays()

    def train():
        model = compiled(dense_model())
        return model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0).history["loss"]

    keras.utils.set_random_seed(0)
    on_cpu = train()
    keras.backend.clear_session()
    keras.utils.set_random_seed(0)
    assert in_scope(ipu, train) == pytest.approx(on_cpu, rel=1e-6)
    assert ipu.state.keras_ipu_calls == [("fit", "sequential")]


def test_keras_partial_batch(ipu):
    x, y = arrays(30)
    model = in_scope(ipu, lambda: compiled(dense_model()))
    for call in (lambda: model.fit(x, y, batch_size=8, verbose=0),
                 lambda: model.evaluate(x, y, batch_size=8, verbose=0),
                 lambda: model.predict(x, batch_size=8, verbose=0)):
        with pytest.raises(ValueError, match="partial batch"):
            call()
    model.fit(x[:24], y[:24], batch_size=8, verbose=0)
    model.predict(x[:24], batch_size=8, verbose=0)


def test_keras_default_batch_size_32(ipu):
    x, y = arrays(48)
    model = in_scope(ipu, lambda: compiled(dense_model()))
    with pytest.raises(ValueError, match="partial batch"):
        model.fit(x, y, verbose=0)
    model.fit(x[:32], y[:32], verbose=0)


def test_keras_validation_split_parts_must_divide(ipu):
    x, y = arrays(40)
    model = in_scope(ipu, lambda: compiled(dense_model()))
    with pytest.raises(ValueError, match="partial batch"):
        model.fit(x, y, batch_size=8, validation_split=0.1, verbose=0)
    model.fit(x, y, batch_size=8, validation_split=0.2, verbose=0)


def test_keras_dataset_shapes_fully_defined(ipu):
    x, y = arrays(32)
    model = in_scope(ipu, lambda: compiled(dense_model()))
    with pytest.raises(ValueError, match="not fully defined.*drop_remainder=True"):
        model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(8), verbose=0)
    model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(8, drop_remainder=True), verbose=0)


def test_keras_steps_per_execution_divides_batches(ipu):
    x, y = arrays(32)
    model = in_scope(ipu, lambda: compiled(dense_model(), steps_per_execution=3))
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(4, drop_remainder=True)
    with pytest.raises(ValueError, match=r"`steps_per_execution` \(3\) must be a divisor of the number "
                                         r"of batches \(8\)"):
        model.fit(dataset, verbose=0)
    model = in_scope(ipu, lambda: compiled(dense_model(), steps_per_execution=4))
    model.fit(dataset, verbose=0)


def test_keras_steps_per_epoch_multiple_of_steps_per_execution(ipu):
    x, y = arrays(32)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(4, drop_remainder=True).repeat()
    model = in_scope(ipu, lambda: compiled(dense_model(), steps_per_execution=2))
    with pytest.raises(ValueError, match="multiple of `steps_per_execution`"):
        model.fit(dataset, steps_per_epoch=3, verbose=0)
    model.fit(dataset, steps_per_epoch=4, verbose=0)


def test_keras_no_generators_or_sequences(ipu):
    x, y = arrays(32)

    class Batches(keras.utils.Sequence):
        def __len__(self):
            return 4

        def __getitem__(self, index):
            return x[index * 8:(index + 1) * 8], y[index * 8:(index + 1) * 8]

    def generator():
        while True:
            yield x[:8], y[:8]

    model = in_scope(ipu, lambda: compiled(dense_model()))
    with pytest.raises(ValueError, match="requirement to know the data shape ahead of time"):
        model.fit(generator(), steps_per_epoch=4, verbose=0)
    with pytest.raises(ValueError, match="from_generator"):
        model.fit(Batches(), verbose=0)
    dataset = tf.data.Dataset.from_generator(
        generator, output_signature=(tf.TensorSpec([8, 4], tf.float32), tf.TensorSpec([8], tf.int32)))
    model.fit(dataset, steps_per_epoch=4, verbose=0)


def test_keras_no_run_eagerly(ipu):
    x, y = arrays(32)
    model = in_scope(ipu, lambda: compiled(dense_model(), run_eagerly=True))
    with pytest.raises(RuntimeError, match="cannot run eagerly when using `IPUStrategy`"):
        model.fit(x, y, batch_size=8, verbose=0)
    model = in_scope(ipu, lambda: compiled(dense_model()))
    model.fit(x, y, batch_size=8, verbose=0)


class CustomStep(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(2)

    def call(self, inputs):
        return self.dense(inputs)

    def train_step(self, data):
        return super().train_step(data)


def test_keras_overridden_train_step(ipu):
    x, y = arrays(32)
    model = in_scope(ipu, lambda: compiled(CustomStep()))
    with pytest.raises(RuntimeError, match="`train_step` .* has been overridden.*enable_keras_extensions=False"):
        model.fit(x, y, batch_size=8, verbose=0)
    model = in_scope(ipu, lambda: compiled(CustomStep()), enable_keras_extensions=False)
    model.fit(x, y, batch_size=8, verbose=0)


def test_keras_float64_data_is_cast(ipu):
    x, y = arrays(32)
    model = in_scope(ipu, lambda: compiled(dense_model()))
    model.fit(x.astype("float64"), y, batch_size=8, verbose=0)


def test_keras_model_outside_the_scope_is_plain(ipu):
    x, y = arrays(30)
    configure(ipu)
    model = compiled(dense_model())
    model.fit(x, y, batch_size=8, verbose=0)  # not an IPU model: no IPU checks
    assert ipu.state.keras_ipu_calls == []
    with pytest.raises(AttributeError):
        model.set_pipelining_options(gradient_accumulation_steps_per_replica=4)


def test_keras_fit_needs_a_configured_system(ipu):
    x, y = arrays(32)
    strategy = ipu.ipu_strategy.IPUStrategy()
    with strategy.scope():
        model = compiled(dense_model())
    with pytest.raises(RuntimeError, match="configured"):
        model.fit(x, y, batch_size=8, verbose=0)


# extension methods and pipelining ("Keras with IPUs") ----------------------------------------

def test_gradient_accumulation_options(ipu):
    model = in_scope(ipu, lambda: compiled(dense_model(), steps_per_execution=4))
    with pytest.raises(ValueError, match="num_mini_batches"):
        model.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=4, num_mini_batches=2)
    with pytest.raises(ValueError):
        model.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=4,
                                                gradient_accumulation_reduction_method="max")
    model.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=4)


def test_gradient_accumulation_divides_steps_per_execution(ipu):
    x, y = arrays(32)
    model = in_scope(ipu, lambda: compiled(dense_model(), steps_per_execution=2))
    model.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=4)
    with pytest.raises(RuntimeError, match="not divisible by `gradient_accumulation_steps_per_replica`"):
        model.fit(x, y, batch_size=4, verbose=0)
    model = in_scope(ipu, lambda: compiled(dense_model(), steps_per_execution=4))
    model.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=4)
    model.fit(x, y, batch_size=4, verbose=0)


def test_pipelining_options_forbidden_kwargs(ipu):
    model = in_scope(ipu, lambda: compiled(dense_model()))
    for name in ("gradient_accumulation_count", "device_mapping_", "repeat_count", "optimizer_function"):
        if name.endswith("_"):
            continue
        with pytest.raises(ValueError, match=name):
            model.set_pipelining_options(gradient_accumulation_steps_per_replica=4, **{name: 1})
    model.set_pipelining_options(
        gradient_accumulation_steps_per_replica=4,
        pipeline_schedule=ipu.ops.pipelining_ops.PipelineSchedule.Grouped)


def test_sequential_stage_assignment_one_per_layer(ipu):
    model = in_scope(ipu, lambda: compiled(dense_model()), ipus=2)
    with pytest.raises(ValueError, match="does not match the number of layers"):
        model.set_pipeline_stage_assignment([0, 1, 1])
    model.set_pipeline_stage_assignment([0, 1])


def test_pipelined_model_needs_gradient_accumulation(ipu):
    x, y = arrays(64)
    model = in_scope(ipu, lambda: compiled(dense_model(), steps_per_execution=8), ipus=2)
    model.set_pipeline_stage_assignment([0, 1])
    with pytest.raises(ValueError, match="is pipelined, however `gradient_accumulation_steps_per_replica`"):
        model.fit(x, y, batch_size=4, verbose=0)
    model.set_pipelining_options(gradient_accumulation_steps_per_replica=4)
    model.fit(x, y, batch_size=4, verbose=0)
    assert any("accumulates" in note for note in ipu.state.notes)


def test_grouped_schedule_needs_twice_the_stages(ipu):
    x, y = arrays(64)
    model = in_scope(ipu, lambda: compiled(dense_model(), steps_per_execution=6), ipus=2)
    model.set_pipeline_stage_assignment([0, 1])
    model.set_pipelining_options(gradient_accumulation_steps_per_replica=6)
    with pytest.raises(RuntimeError, match="must be a multiple of 4"):
        model.fit(x[:48], y[:48], batch_size=4, verbose=0)
    model.set_pipelining_options(gradient_accumulation_steps_per_replica=6,
                                 pipeline_schedule=ipu.ops.pipelining_ops.PipelineSchedule.Interleaved)
    model.fit(x[:48], y[:48], batch_size=4, verbose=0)


def test_pipeline_needs_enough_ipus(ipu):
    x, y = arrays(64)
    model = in_scope(ipu, lambda: compiled(dense_model(), steps_per_execution=4), ipus=1)
    model.set_pipeline_stage_assignment([0, 1])
    model.set_pipelining_options(gradient_accumulation_steps_per_replica=4)
    with pytest.raises(ValueError, match="requires a multiple of 2 IPUs"):
        model.fit(x, y, batch_size=4, verbose=0)


def test_pipeline_stage_context_assigns_functional_layers(ipu):
    x, y = arrays(64)

    def build():
        inputs = keras.Input((4,))
        with keras.ipu.PipelineStage(0):
            hidden = keras.layers.Dense(8)(inputs)
        with keras.ipu.PipelineStage(1):
            outputs = keras.layers.Dense(2)(hidden)
        return compiled(keras.Model(inputs, outputs), steps_per_execution=4)

    model = in_scope(ipu, build, ipus=2)
    stages = [item.pipeline_stage for item in model.get_pipeline_stage_assignment()]
    assert stages[-2:] == [0, 1]
    with pytest.raises(ValueError, match="is pipelined"):
        model.fit(x, y, batch_size=4, verbose=0)
    model.set_pipelining_options(gradient_accumulation_steps_per_replica=4)
    model.fit(x, y, batch_size=4, verbose=0)


def test_replication_is_noted(ipu):
    x, y = arrays(32)
    model = in_scope(ipu, lambda: compiled(dense_model()), ipus=2)
    model.fit(x, y, batch_size=8, verbose=0)
    assert any("2 replicas" in note for note in ipu.state.notes)


# ipu_tensorflow_addons ("IPU TensorFlow Addons") --------------------------------------------

def addons_layers():
    from ipu_tensorflow_addons.keras import layers
    return layers


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_addons_rnn_rejects(ipu, kind):
    layer = getattr(addons_layers(), kind)
    for bad in (dict(use_bias=False), dict(kernel_regularizer="l2"), dict(recurrent_dropout=0.1),
                dict(implementation=3), dict(go_backwards=True), dict(unroll=True), dict(activation="elu"),
                dict(bias_constraint=keras.constraints.NonNeg())):
        with pytest.raises(ValueError):
            layer(4, **bad)
    layer(4, dropout=0.1, dropout_seed=None, partials_dtype=tf.float32, options={}, options_bwd={})


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_addons_rnn_matches_keras_and_rejects_masks(ipu, kind):
    inputs = tf.random.stateless_uniform([2, 5, 3], seed=[1, 2])
    keras.utils.set_random_seed(3)
    ours = getattr(addons_layers(), kind)(4, return_sequences=True)(inputs)
    keras.utils.set_random_seed(3)
    stock = getattr(keras.layers, kind)(4, return_sequences=True)(inputs)
    np.testing.assert_allclose(ours.numpy(), stock.numpy(), rtol=1e-6)
    with pytest.raises(NotImplementedError):
        getattr(addons_layers(), kind)(4)(inputs, mask=tf.ones([2, 5], tf.bool))
    with pytest.raises(ValueError, match="3-D|ndim=3"):
        getattr(addons_layers(), kind)(4)(tf.ones([2, 3]))


def test_addons_lstm_positional_order_is_the_ipu_one(ipu):
    layer = addons_layers().LSTM(4, "tanh", "sigmoid", True, "glorot_uniform", "orthogonal", "zeros", True,
                                 None, None, None, None, None, None, None, 0.0, None, 0.0, 2, True)
    assert layer.return_sequences is True


def test_addons_dropout_seed_and_noise_shape(ipu):
    layers = addons_layers()
    with pytest.raises(ValueError, match="Expected the seed to have a shape \\[2\\]"):
        layers.Dropout(0.5, seed=42)
    with pytest.raises(ValueError, match="Dimension mismatch"):
        layers.Dropout(0.5, noise_shape=(None, 1))
    layers.Dropout(0.5, seed=[1, 2], noise_shape=(8, 1))
    layers.Dropout(0.5)


def test_addons_embedding(ipu):
    layers = addons_layers()
    for bad in (dict(mask_zero=True), dict(input_length=10), dict(embeddings_regularizer="l2"),
                dict(activity_regularizer="l2"), dict(embeddings_constraint=keras.constraints.NonNeg())):
        with pytest.raises(NotImplementedError):
            layers.Embedding(10, 4, **bad)
    with pytest.raises(ValueError, match="2-D"):
        layers.Embedding(10, 4)(tf.zeros([2, 3, 4], tf.int32))
    assert layers.Embedding(10, 4, serialization_factor=2)(tf.zeros([2, 3], tf.int32)).shape == (2, 3, 4)


def test_addons_layer_normalization(ipu):
    layers = addons_layers()
    with pytest.raises(NotImplementedError):
        layers.LayerNormalization(beta_regularizer="l2")
    with pytest.raises(ValueError, match="unknown dimensions"):
        keras.Sequential([keras.Input((4,)), layers.LayerNormalization()])
    keras.Sequential([keras.Input((4,), batch_size=8), layers.LayerNormalization()])
    assert layers.LayerNorm is layers.LayerNormalization


def test_addons_optimizers_spelled_ipu(ipu):
    from ipu_tensorflow_addons.keras import optimizers
    optimizers.AdamIpuOptimizer(0.01, m_dtype=tf.float16)
    optimizers.SGDIpuOptimizer(0.01, momentum_accum_dtype=tf.float32)
    assert not hasattr(optimizers, "AdamIPUOptimizer")


# feeds (API changes, "Release 2.4") ------------------------------------------------------------

def test_infeed_prefetch_depth_and_static_shapes(ipu):
    dataset = tf.data.Dataset.from_tensor_slices(np.zeros([16, 4], "float32"))
    with pytest.raises(ValueError, match="prefetch_depth"):
        ipu.ipu_infeed_queue.IPUInfeedQueue(dataset.batch(4, drop_remainder=True), prefetch_depth=256)
    with pytest.raises(ValueError, match="drop_remainder=True"):
        ipu.ipu_infeed_queue.IPUInfeedQueue(dataset.batch(4))
    ipu.ipu_infeed_queue.IPUInfeedQueue(dataset.batch(4, drop_remainder=True), prefetch_depth=2)


def test_outfeed_in_a_device_loop(ipu):
    configure(ipu)
    strategy = ipu.ipu_strategy.IPUStrategy()
    outfeed = ipu.ipu_outfeed_queue.IPUOutfeedQueue()

    @tf.function(jit_compile=True)
    def loop():
        for step in tf.range(3):
            outfeed.enqueue({"step": tf.cast(step, tf.float32)})

    strategy.run(loop)
    assert [float(item["step"]) for item in outfeed] == [0.0, 1.0, 2.0]
    strategy.run(loop)
    assert outfeed.dequeue()["step"].numpy().tolist() == [0.0, 1.0, 2.0]
    last = ipu.ipu_outfeed_queue.IPUOutfeedQueue(outfeed_mode=ipu.ipu_outfeed_queue.IPUOutfeedMode.LAST)
    last.enqueue(tf.constant(1.0))
    last.enqueue(tf.constant(2.0))
    assert float(last.dequeue()) == 2.0


# where the work ran (issue 15, gap 1) ----------------------------------------------------------

def test_keras_steps_in_the_scope_count_as_ipu_executions(ipu):
    x, y = arrays(32)
    model = in_scope(ipu, lambda: compiled(dense_model(), steps_per_execution=2))
    model.fit(x, y, batch_size=8, epochs=2, validation_data=(x, y), verbose=0)
    assert ipu.state.ipu_executions == 2 * (4 + 4)  # every epoch: 4 training and 4 validation steps
    model.evaluate(x, y, batch_size=8, verbose=0)
    model.predict(x, batch_size=8, verbose=0)
    assert (ipu.state.ipu_executions, ipu.state.cpu_training_steps) == (24, 0)


def test_keras_fit_of_a_plain_model_counts_cpu_training_steps(ipu):
    x, y = arrays(32)
    configure(ipu)
    model = compiled(dense_model())
    model.fit(x, y, batch_size=8, epochs=3, verbose=0)
    model.evaluate(x, y, batch_size=8, verbose=0)  # not training: not counted
    assert (ipu.state.ipu_executions, ipu.state.cpu_training_steps) == (0, 12)


def test_keras_model_made_in_the_scope_trains_on_the_ipu_outside_it(ipu):
    # fit enters the strategy the model was created in (Targeting the IPU from TensorFlow 2,
    # "Keras with IPUs": construct it in the scope)
    x, y = arrays(32)
    model = in_scope(ipu, lambda: compiled(dense_model()))
    model.fit(x, y, batch_size=8, verbose=0)
    assert (ipu.state.ipu_executions, ipu.state.cpu_training_steps) == (4, 0)
    assert ipu.state.keras_ipu_calls == [("fit", "sequential")]


def test_strategy_run_counts_each_execution(ipu):
    configure(ipu)
    strategy = ipu.ipu_strategy.IPUStrategy()
    step = tf.function(lambda x: x * 2)
    for _ in range(3):
        strategy.run(step, args=(tf.constant(1.0),))
    assert ipu.state.ipu_executions == 3

    @tf.function
    def loop(x):
        return strategy.run(lambda v: v + 1.0, args=(x,))

    for _ in range(2):
        loop(tf.constant(1.0))
    assert ipu.state.ipu_executions == 5  # traced once, executed twice


# a model created outside the scope (gap 6) -----------------------------------------------------

def test_keras_model_created_outside_the_scope_cannot_train_inside_it(ipu):
    x, y = arrays(32)
    configure(ipu)
    strategy = ipu.ipu_strategy.IPUStrategy()
    model = compiled(dense_model())
    with strategy.scope():
        with pytest.raises(ValueError, match=r"created in this tf.distribute.Strategy.scope\(\)"):
            model.fit(x, y, batch_size=8, verbose=0)
        model.evaluate(x, y, batch_size=8, verbose=0)
    assert ipu.state.ipu_executions == 0
    assert [note.split(":")[0] for note in ipu.state.notes] == [
        "the model sequential was created outside the IPUStrategy scope and fit was called inside it",
        "the model sequential was created outside the IPUStrategy scope and evaluate was called inside it"]


def test_keras_unbuilt_model_created_outside_the_scope_trains_as_cpu_work(ipu):
    x, y = arrays(32)
    configure(ipu)
    strategy = ipu.ipu_strategy.IPUStrategy()
    model = keras.Sequential([keras.layers.Dense(2)])  # its weights are made at the first call
    with strategy.scope():
        compiled(model).fit(x, y, batch_size=8, verbose=0)
    assert (ipu.state.ipu_executions, ipu.state.cpu_training_steps) == (0, 4)
    assert "created outside the IPUStrategy scope" in ipu.state.notes[0]


# ops without an IPU kernel (gap 2) -------------------------------------------------------------

@pytest.mark.parametrize("body, op", [
    (lambda x: tf.abs(tf.signal.rfft(x)), "RFFT"),
    (lambda x: tf.math.real(tf.complex(x, x)), "Complex"),
    (lambda x: tf.py_function(lambda v: v, [x], tf.float32), "EagerPyFunc"),
    (lambda x: tf.numpy_function(lambda v: v, [x], tf.float32), "PyFunc"),
    (lambda x: tf.cast(tf.strings.length(tf.strings.as_string(x)), tf.float32), "AsString"),
    (lambda x: tf.cast(tf.io.decode_png(tf.constant(b"")), tf.float32), "DecodePng"),
])
def test_strategy_run_rejects_ops_without_an_ipu_kernel(ipu, body, op):
    configure(ipu)
    strategy = ipu.ipu_strategy.IPUStrategy()
    with pytest.raises(tf.errors.InvalidArgumentError, match="No registered '%s' OpKernel for 'IPU'" % op):
        strategy.run(tf.function(body), args=(tf.constant([1.0, 2.0]),))
    assert ipu.state.ipu_executions == 0


def test_ops_in_loop_bodies_and_plain_functions_are_checked(ipu):
    configure(ipu)
    strategy = ipu.ipu_strategy.IPUStrategy()

    @tf.function
    def device_loop(x):
        for _ in tf.range(2):
            x = tf.numpy_function(lambda v: v, [x], tf.float32)
            x.set_shape([2])
        return x

    with pytest.raises(tf.errors.InvalidArgumentError, match="No registered 'PyFunc'"):
        strategy.run(device_loop, args=(tf.constant([1.0, 2.0]),))

    @tf.function
    def outer(x):
        return strategy.run(lambda v: tf.math.imag(tf.complex(v, v)), args=(x,))

    with pytest.raises(tf.errors.InvalidArgumentError, match="No registered 'Complex'"):
        outer(tf.constant([1.0, 2.0]))


def test_keras_steps_are_checked_as_the_device_compiles_them(ipu):
    x, y = arrays(32)
    model = in_scope(ipu, lambda: compiled(keras.Sequential([
        keras.layers.Dense(8, input_shape=(4,)),
        keras.layers.Lambda(lambda t: tf.math.real(tf.complex(t, t))), keras.layers.Dense(2)])))
    with pytest.raises(tf.errors.InvalidArgumentError, match="No registered 'Complex'"):
        model.fit(x, y, batch_size=8, verbose=0)
    keras.backend.clear_session()
    doubles = in_scope(ipu, lambda: compiled(keras.Sequential([keras.layers.Dense(2, input_shape=(4,),
                                                                                   dtype="float64")])))
    with pytest.raises(tf.errors.InvalidArgumentError, match="DT_DOUBLE"):
        doubles.predict(x, batch_size=8, verbose=0)


# static shapes (gap 4) -------------------------------------------------------------------------

def test_iterator_made_in_the_scope_is_an_infeed(ipu):
    configure(ipu)
    strategy = ipu.ipu_strategy.IPUStrategy()
    dataset = tf.data.Dataset.from_tensor_slices(np.zeros([20, 4], "float32"))
    with strategy.scope():
        with pytest.raises(ValueError, match=r"Output shape \(None, 4\) is not fully defined"):
            iter(dataset.batch(8))
        iter(dataset.batch(8, drop_remainder=True))
    outside = iter(dataset.batch(8))  # a host iterator, until it feeds the device
    with pytest.raises(ValueError, match="drop_remainder=True"):
        strategy.run(tf.function(lambda it: next(it) * 2), args=(outside,))


def summing_loop(iterator, steps=3):
    """A device loop that reads `steps` batches from `iterator` (Targeting the IPU from TensorFlow 2,
    "On-device loops")."""
    @tf.function
    def loop():
        total = tf.constant(0.0)
        for _ in tf.range(steps):
            total += tf.reduce_sum(next(iterator))
        return total
    return loop


def test_iterator_read_in_a_device_loop_needs_static_shapes(ipu):
    configure(ipu)
    strategy = ipu.ipu_strategy.IPUStrategy()
    dataset = tf.data.Dataset.from_tensor_slices(np.ones([20, 4], "float32")).repeat()
    with pytest.raises(ValueError, match="is not fully defined"):
        strategy.run(summing_loop(iter(dataset.batch(8))))
    assert float(strategy.run(summing_loop(iter(dataset.batch(8, drop_remainder=True))))) == 96.0


# Keras needs enough data (gap 5) ---------------------------------------------------------------

def test_keras_finite_dataset_must_supply_every_step(ipu):
    x, y = arrays(32)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(8, drop_remainder=True)  # 4 batches
    model = in_scope(ipu, lambda: compiled(dense_model()))
    with pytest.raises(ValueError, match=r"at least `steps_per_epoch \* epochs` batches \(in this case, "
                                         r"6 batches\). You may need to use the repeat\(\) function"):
        model.fit(dataset, steps_per_epoch=3, epochs=2, verbose=0)
    with pytest.raises(ValueError, match="not have enough data"):
        model.evaluate(dataset, steps=5, verbose=0)
    model.fit(dataset, steps_per_epoch=4, epochs=2, verbose=0)  # one pass per epoch: restarted
    model.fit(dataset.repeat(), steps_per_epoch=3, epochs=2, verbose=0)
    assert ipu.state.ipu_executions == 8 + 6
