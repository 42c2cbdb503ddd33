"""The emulated TF1 IPU APIs (tests/emulation/tf_ipu.py): ipu_scope, ipu_compiler.compile, the
device's dtype and resource-variable rules (Targeting the IPU from TensorFlow 1, "Supported types",
"Adding variables"), one test per constraint."""

import numpy as np
import pytest

from emulation import emulated_ipu, import_tensorflow

pytest.importorskip("tensorflow")
tf, keras = import_tensorflow()
v1 = tf.compat.v1


@pytest.fixture
def ipu():
    with emulated_ipu(torch=False) as state:
        from tensorflow.python import ipu
        ipu.state = state
        config = ipu.config.IPUConfig()
        config.auto_select_ipus = 1
        config.configure_ipu_system()
        with tf.Graph().as_default():
            yield ipu


def mlp(x, y):
    w = v1.get_variable("w", [4, 2], initializer=v1.glorot_uniform_initializer(seed=1))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=tf.matmul(x, w)))
    return loss, v1.train.GradientDescentOptimizer(0.1).minimize(loss)


def placeholders(batch=8, x_dtype=tf.float32):
    with tf.device("cpu"):
        return v1.placeholder(x_dtype, [batch, 4]), v1.placeholder(tf.int32, [batch])


def feed(x, y, batch=8, x_dtype="float32"):
    rng = np.random.RandomState(0)
    return {x: (rng.rand(batch, 4) * 10).astype(x_dtype), y: rng.randint(0, 2, batch).astype("int32")}


def test_compile_must_be_under_ipu_scope(ipu):
    x, y = placeholders()
    with pytest.raises(Exception, match="ipu_scope"):
        ipu.ipu_compiler.compile(mlp, [x, y])
    with ipu.scopes.ipu_scope("/device:IPU:0"):
        ipu.ipu_compiler.compile(mlp, [x, y])


def test_compile_returns_a_list_with_ops_as_dependencies(ipu):
    x, y = placeholders()
    with ipu.scopes.ipu_scope("/device:IPU:0"):
        outputs = ipu.ipu_compiler.compile(mlp, [x, y])
    assert isinstance(outputs, list) and len(outputs) == 1
    with v1.Session() as session:
        session.run(v1.global_variables_initializer())
        values = [session.run(outputs, feed(x, y))[0] for _ in range(3)]
    assert values[2] < values[0]  # the train op ran with every fetch


def test_compile_single_output_is_wrapped(ipu):
    x, y = placeholders()
    with ipu.scopes.ipu_scope("/device:IPU:0"):
        outputs = ipu.ipu_compiler.compile(lambda a, b: tf.reduce_sum(a), [x, y])
    assert isinstance(outputs, list) and len(outputs) == 1


def test_compile_operations_after_tensors(ipu):
    x, y = placeholders()
    with ipu.scopes.ipu_scope("/device:IPU:0"):
        with pytest.raises(ValueError, match="operations must come after"):
            ipu.ipu_compiler.compile(lambda a, b: tuple(reversed(mlp(a, b))), [x, y])


def test_compile_needs_fully_defined_shapes(ipu):
    with tf.device("cpu"):
        x, y = v1.placeholder(tf.float32, [None, 4]), v1.placeholder(tf.int32, [None])
    with ipu.scopes.ipu_scope("/device:IPU:0"):
        with pytest.raises(ValueError, match="fully defined"):
            ipu.ipu_compiler.compile(mlp, [x, y])


def test_compile_needs_fully_defined_captured_placeholders(ipu):
    with tf.device("cpu"):
        x = v1.placeholder(tf.float32, [None, 4])
    with ipu.scopes.ipu_scope("/device:IPU:0"):
        with pytest.raises(ValueError, match="not fully defined"):
            ipu.ipu_compiler.compile(lambda: tf.reduce_sum(x * 2.0), [])


def test_uint8_only_for_data_movement(ipu):
    x, y = placeholders(x_dtype=tf.uint8)
    with ipu.scopes.ipu_scope("/device:IPU:0"):
        with pytest.raises(tf.errors.InvalidArgumentError, match="DT_UINT8"):
            ipu.ipu_compiler.compile(lambda a, b: mlp(tf.cast(a * 2, tf.float32), b), [x, y])
    with ipu.scopes.ipu_scope("/device:IPU:0"), v1.variable_scope("cast_first"):
        outputs = ipu.ipu_compiler.compile(lambda a, b: mlp(tf.cast(a, tf.float32) / 255.0, b), [x, y])
    with v1.Session() as session:
        session.run(v1.global_variables_initializer())
        session.run(outputs, feed(x, y, x_dtype="uint8"))


def test_float64_rejected_on_the_device(ipu):
    x, y = placeholders(x_dtype=tf.float64)
    with ipu.scopes.ipu_scope("/device:IPU:0"):
        with pytest.raises(tf.errors.InvalidArgumentError, match="DT_DOUBLE"):
            ipu.ipu_compiler.compile(lambda a, b: tf.reduce_sum(a * 2.0), [x, y])
    x, y = placeholders(x_dtype=tf.float32)
    with ipu.scopes.ipu_scope("/device:IPU:0"):
        ipu.ipu_compiler.compile(lambda a, b: tf.reduce_sum(a * 2.0), [x, y])


def test_ref_variables_rejected_under_ipu_scope(ipu):
    with pytest.raises(tf.errors.InvalidArgumentError, match="resource variables"):
        with ipu.scopes.ipu_scope("/device:IPU:0"):
            v1.get_variable("v", [2], use_resource=False)
    with ipu.scopes.ipu_scope("/device:IPU:0"):
        v1.get_variable("r", [2])


def test_ref_variable_read_in_compiled_code_rejected(ipu):
    ref = v1.get_variable("ref_w", [4, 2], use_resource=False)
    x, y = placeholders()
    with ipu.scopes.ipu_scope("/device:IPU:0"):
        with pytest.raises(tf.errors.InvalidArgumentError, match="ref variable"):
            ipu.ipu_compiler.compile(lambda a, b: tf.reduce_sum(tf.matmul(a, ref)), [x, y])


def test_ref_global_step_on_the_cpu_is_allowed(ipu):
    with tf.device("cpu"):
        step = v1.get_variable("global_step", [], tf.int64, v1.zeros_initializer(), use_resource=False)
    assert step.dtype._is_ref_dtype
    x, y = placeholders()
    with ipu.scopes.ipu_scope("/device:IPU:0"):
        ipu.ipu_compiler.compile(lambda a, b: v1.assign_add(step, 1), [x, y])


def test_session_needs_the_system_configured(ipu):
    from tensorflow.python.ipu import config
    x, y = placeholders()
    with ipu.scopes.ipu_scope("/device:IPU:0"):
        outputs = ipu.ipu_compiler.compile(mlp, [x, y])  # building the graph needs no system
    config.reset_ipu_configuration()
    with v1.Session() as session:
        with pytest.raises(RuntimeError, match="configured"):
            session.run(v1.global_variables_initializer())


def test_ipu_scope_makes_resource_variables(ipu):
    with ipu.scopes.ipu_scope("/device:IPU:0"):
        variable = v1.get_variable("r", [2])
    assert "Resource" in type(variable).__name__ or variable.dtype == tf.float32 and not variable.dtype._is_ref_dtype


def test_ipu_shard_and_outside_compilation(ipu):
    x, y = placeholders()
    with ipu.scopes.ipu_scope("/device:IPU:0"):
        def sharded(a, b):
            with ipu.scopes.ipu_shard(0):
                hidden = a * 2.0
            with ipu.scopes.ipu_shard(1):
                return tf.reduce_sum(hidden)
        ipu.ipu_compiler.compile(sharded, [x, y])


def test_infeed_needs_static_shapes_and_loops_repeat(ipu):
    rng = np.random.RandomState(0)
    dataset = tf.data.Dataset.from_tensor_slices(
        (rng.rand(32, 4).astype("float32"), rng.randint(0, 2, 32).astype("int32")))
    with pytest.raises(ValueError, match="drop_remainder=True"):
        ipu.ipu_infeed_queue.IPUInfeedQueue(dataset.batch(8))
    with pytest.raises(TypeError, match="feed_name"):
        ipu.ipu_infeed_queue.IPUInfeedQueue(dataset.batch(8, drop_remainder=True), feed_name="infeed")
    infeed = ipu.ipu_infeed_queue.IPUInfeedQueue(dataset.batch(8, drop_remainder=True).repeat())

    def body(total, x, y):
        loss, train = mlp(x, y)
        with tf.control_dependencies([train]):
            return total + loss

    with ipu.scopes.ipu_scope("/device:IPU:0"):
        outputs = ipu.ipu_compiler.compile(lambda: ipu.loops.repeat(4, body, [tf.constant(0.0)], infeed), [])
    with v1.Session() as session:
        session.run(infeed.initializer)
        session.run(v1.global_variables_initializer())
        total, = session.run(outputs)
    assert np.isfinite(total) and total > 0


def test_session_runs_count_where_the_training_ran(ipu):
    x, y = placeholders()
    with ipu.scopes.ipu_scope("/device:IPU:0"):
        outputs = ipu.ipu_compiler.compile(mlp, [x, y])
    with tf.device("cpu"):
        with v1.variable_scope("cpu"):
            _, cpu_train = mlp(x, y)
    with v1.Session() as session:
        session.run(v1.global_variables_initializer())
        for _ in range(3):
            session.run(outputs, feed(x, y))
        session.run(outputs[0].name, feed(x, y))  # fetched by name
        session.run(cpu_train, feed(x, y))
        session.run(x, feed(x, y))  # neither compiled nor training
    assert (ipu.state.ipu_executions, ipu.state.cpu_training_steps) == (4, 1)


def test_iterator_captured_by_a_computation_needs_static_shapes(ipu):
    dataset = tf.data.Dataset.from_tensor_slices(np.zeros([20, 4], "float32")).repeat()
    partial = v1.data.make_one_shot_iterator(dataset.batch(8)).get_next()  # read on the host
    unbatched = v1.data.make_one_shot_iterator(dataset.batch(8))           # read on the device
    static = v1.data.make_one_shot_iterator(dataset.batch(8, drop_remainder=True))
    with ipu.scopes.ipu_scope("/device:IPU:0"):
        with pytest.raises(ValueError, match=r"Output shape \(None, 4\) is not fully defined"):
            ipu.ipu_compiler.compile(lambda: tf.reduce_sum(partial), [])
        with pytest.raises(ValueError, match="is not fully defined"):
            ipu.ipu_compiler.compile(lambda: tf.reduce_sum(unbatched.get_next()), [])
        ipu.ipu_compiler.compile(lambda: tf.reduce_sum(static.get_next()), [])


def test_compiled_ops_without_an_ipu_kernel_rejected(ipu):
    x, y = placeholders()
    with ipu.scopes.ipu_scope("/device:IPU:0"):
        with pytest.raises(tf.errors.InvalidArgumentError, match="No registered 'PyFunc'"):
            ipu.ipu_compiler.compile(lambda a, b: tf.reduce_sum(tf.numpy_function(np.square, [a], tf.float32)),
                                     [x, y])
        with pytest.raises(tf.errors.InvalidArgumentError, match="No registered 'Complex'"):
            ipu.ipu_compiler.compile(lambda a, b: tf.abs(tf.signal.fft(tf.complex(a, a))), [x, y])
