"""Generated programs: hypothesis writes the code, the port must hold up.

Two sources of programs, each with TensorFlow / Keras / PyTorch imports in front and framework API
calls sprinkled in, so that the rules meet code no one would think of writing:

- hypothesmith's valid-Python modules (from CPython's grammar; its libcst-based strategy is too slow here), with
  API statements inserted between their top-level statements and at the top of their functions;
- training-script-shaped programs assembled from a pool of framework statements, nested at random
  in functions, classes, ``with``/``if``/``for``/``try`` blocks, with comments and blank lines.

The properties are those of ``robustness.port_problems``: the engine never raises, the output
compiles, a second port changes nothing, and a rejected input comes back unchanged with an error.
"""

from __future__ import annotations

import ast
import warnings

import hypothesmith
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from porter.config import Config
from robustness import PRELUDES, port_problems, python_accepts

# hypothesmith compiles what it generates; its odd-but-valid code draws SyntaxWarnings
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

SETTINGS = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,  # the same programs every run: CI must not turn red by chance
    suppress_health_check=list(HealthCheck),
)

# Statements real training scripts are made of, per prelude (names as the prelude binds them).
KERAS_STATEMENTS = [
    'dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(1024).batch(32)',
    'dataset = dataset.map(lambda x, y: (tf.cast(x, tf.float32) / 255.0, y)).batch(batch_size)',
    'model = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dense(10)])',
    'model = tf.keras.Model(inputs=inputs, outputs=outputs)',
    'inputs = keras.Input(shape=(28, 28))',
    'outputs = keras.layers.LSTM(32)(inputs)',
    'model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])',
    'model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss=loss_fn, run_eagerly=True)',
    'model.fit(dataset, epochs=epochs, steps_per_epoch=100, callbacks=callbacks)',
    'history = model.fit(x_train, y_train, batch_size=64, epochs=2, validation_split=0.1)',
    'model.evaluate(test_ds, steps=10)',
    'predictions = model.predict(x_test)',
    'strategy = tf.distribute.MirroredStrategy()',
    'gpus = tf.config.list_physical_devices("GPU")',
    'tf.config.experimental.set_memory_growth(gpus[0], True)',
    'tf.keras.mixed_precision.set_global_policy("mixed_float16")',
    'x = tf.cast(images, tf.float64)',
    'images = tf.cast(images, tf.uint8)',
    'y = tf.py_function(func=augment, inp=[x], Tout=tf.float32)',
    'replicas = strategy.num_replicas_in_sync',
    'dataset = tf.data.Dataset.from_generator(gen, output_types=(tf.float32, tf.int32))',
    'optimizer = keras.optimizers.Adam(learning_rate=1e-3)',
    'loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)',
    'model.save("model.h5")',
]
KERAS_BLOCKS = [
    'with tf.device("/GPU:0"):\n    {body}',
    'with strategy.scope():\n    {body}',
    'with tf.GradientTape() as tape:\n    {body}',
    '@tf.function\ndef train_step(x, y):\n    {body}\n    return x',
]
TF1_STATEMENTS = [
    'x = tf.placeholder(tf.float32, [None, 784])',
    'y = tf.placeholder(tf.int64, shape=None)',
    'logits = tf.layers.dense(x, 10)',
    'loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))',
    'train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)',
    'train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)',
    'global_step = tf.train.get_or_create_global_step()',
    'init = tf.global_variables_initializer()',
    'sess.run(init)',
    'sess.run(train_op, feed_dict={x: batch_x, y: batch_y})',
    'saver = tf.train.Saver()',
    'tf.disable_v2_behavior()',
    'iterator = dataset.make_one_shot_iterator()',
    'dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(32)',
    'w = tf.get_variable("w", shape=[784, 10], use_resource=False)',
    'estimator = tf.estimator.Estimator(model_fn=model_fn, model_dir=model_dir)',
    'estimator.train(input_fn=train_input_fn, steps=1000)',
    'config = tf.ConfigProto(allow_soft_placement=True)',
    'out = tf.py_func(my_func, [x], tf.float32)',
    'out = tf.xla.experimental.compile(model_fn, inputs=[x])',
]
TF1_BLOCKS = [
    'with tf.Session() as sess:\n    {body}',
    'with tf.device("/device:GPU:0"):\n    {body}',
    'with tf.variable_scope("model"):\n    {body}',
    'def model_fn(features, labels, mode, params):\n    {body}\n    return spec',
]
TORCH_STATEMENTS = [
    'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")',
    'model = Net().to(device)',
    'model = model.cuda()',
    'inputs, targets = inputs.cuda(), targets.to(device)',
    'optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)',
    'optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)',
    'loader = torch.utils.data.DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4)',
    'optimizer.zero_grad()',
    'output = model(inputs)',
    'loss = criterion(output, targets)',
    'loss = nn.functional.cross_entropy(output, targets)',
    'loss.backward()',
    'optimizer.step()',
    'scaler = torch.cuda.amp.GradScaler()',
    'scaler.scale(loss).backward()',
    'total += loss.item()',
    'model.eval()',
    'model.train()',
    'model = torch.nn.DataParallel(model)',
    'torch.save(model.state_dict(), path)',
    'scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)',
    'x = x.double()',
    'layer = nn.Linear(128, 10)',
    'torch.distributed.init_process_group("nccl")',
]
TORCH_BLOCKS = [
    'for inputs, targets in loader:\n    {body}',
    'with torch.no_grad():\n    {body}',
    'with torch.cuda.amp.autocast():\n    {body}',
    'class Net(nn.Module):\n    def forward(self, x):\n        {body}\n        return x',
    'def train(model, loader, optimizer, epochs=1):\n    {body}',
]
COMMON_BLOCKS = [
    'def main():\n    {body}',
    'if __name__ == "__main__":\n    {body}',
    'for epoch in range(epochs):\n    {body}',
    'try:\n    {body}\nexcept Exception:  # keep going\n    pass',
    'if args.debug:\n    {body}\nelse:\n    pass',
    'class Trainer:\n    def run(self):\n        {body}',
    'while step < max_steps:\n    {body}',
]
COMMON_STATEMENTS = [
    'pass',
    '# a comment about the next line',
    '',
    'args = parse_args()',
    'print("epoch", epoch)',
    'x = lambda tf: tf + 1',
    'tf = None',
    'def helper(torch=None):\n    return torch',
    'import numpy as np',
    'from tensorflow.python import ipu',
    'import poptorch',
    'step += 1',
]

STATEMENTS = {
    "keras-torch": KERAS_STATEMENTS + TORCH_STATEMENTS + COMMON_STATEMENTS,
    "tf1": TF1_STATEMENTS + TORCH_STATEMENTS + COMMON_STATEMENTS,
}
BLOCKS = {
    "keras-torch": KERAS_BLOCKS + TORCH_BLOCKS + COMMON_BLOCKS,
    "tf1": TF1_BLOCKS + TORCH_BLOCKS + COMMON_BLOCKS,
}


def _indent(code: str, prefix: str) -> str:
    return "\n".join(prefix + line if line else line for line in code.split("\n"))


@st.composite
def training_scripts(draw, variant):
    """A script of framework statements nested in blocks; every block body gets at least one line."""
    statements, blocks = STATEMENTS[variant], BLOCKS[variant]

    def body(depth):
        lines = []
        for _ in range(draw(st.integers(1, 5))):
            if depth < 3 and draw(st.integers(0, 3)) == 0:
                block = draw(st.sampled_from(blocks))
                inner = body(depth + 1)
                # the line holding {body} gives the indent of the body
                lines.append("\n".join(
                    _indent(inner, line[:line.index("{body}")]) if "{body}" in line else line
                    for line in block.split("\n")
                ))
            else:
                lines.append(draw(st.sampled_from(statements)))
        text = "\n".join(lines)
        return text if text.strip() and not text.strip().startswith("#") else text + "\npass"

    blank = draw(st.sampled_from(["\n", "\n\n", "\n\n\n"]))
    return PRELUDES[variant] + blank + body(0) + "\n"


def _statement_starts(tree: ast.Module, lines):
    """(line index, indent) where a statement starts on a line of its own: places where another
    statement with the same indent can go."""
    places = []

    def visit(body):
        previous_end = 0
        for statement in body:
            first = min([statement.lineno] + [d.lineno for d in getattr(statement, "decorator_list", [])])
            line = lines[first - 1] if first - 1 < len(lines) else ""
            prefix = line[:statement.col_offset]
            if first > previous_end and prefix.strip(" \t") == "" and "\f" not in prefix and (
                    not decorated(statement) or first < statement.lineno):
                places.append((first - 1, prefix))
            previous_end = statement.end_lineno
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(statement, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    visit(inner)

    def decorated(statement):
        return bool(getattr(statement, "decorator_list", None))

    visit(tree.body)
    return places


GRAMMAR_MODULES = hypothesmith.from_grammar()  # built once: building it means building a parser


@st.composite
def sprinkled_modules(draw, variant):
    """A hypothesmith module with framework statements inserted where statements start."""
    code = draw(GRAMMAR_MODULES)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        assume(False)
    lines = code.splitlines(keepends=True)
    places = _statement_starts(tree, lines)
    statements = [s for s in STATEMENTS[variant] if s and "\n" not in s]
    inserts = {}
    for _ in range(draw(st.integers(1, 6))):
        if places:
            index, prefix = draw(st.sampled_from(places))
        else:
            index, prefix = len(lines), ""
        inserts.setdefault(index, []).append(prefix + draw(st.sampled_from(statements)) + "\n")
    out = []
    for index, line in enumerate(lines):
        out.extend(inserts.get(index, []))
        out.append(line)
    if lines and not lines[-1].endswith(("\n", "\r")):
        out[-1] += "\n"
    out.extend(inserts.get(len(lines), []))
    return PRELUDES[variant] + "".join(out)


@pytest.mark.parametrize("variant", sorted(PRELUDES))
@SETTINGS
@given(data=st.data())
def test_generated_training_scripts_port_cleanly(variant, data):
    source = data.draw(training_scripts(variant), label="source")
    assert python_accepts(source), source
    problems = port_problems(source, Config(), strict_syntax=True)
    assert not problems, "\n".join(problems) + "\n--- source ---\n" + source


@pytest.mark.parametrize("ipus", [1, 4])
@SETTINGS
@given(data=st.data())
def test_generated_training_scripts_port_cleanly_with_options(ipus, data):
    variant = data.draw(st.sampled_from(sorted(PRELUDES)), label="variant")
    source = data.draw(training_scripts(variant), label="source")
    problems = port_problems(source, Config(ipus=ipus), strict_syntax=True)
    assert not problems, "\n".join(problems) + "\n--- source ---\n" + source


@pytest.mark.parametrize("variant", sorted(PRELUDES))
@SETTINGS
@given(data=st.data())
def test_generated_modules_with_api_calls_port_cleanly(variant, data):
    source = data.draw(sprinkled_modules(variant), label="source")
    assume(python_accepts(source))
    # libcst may reject a few odd but valid programs: a clean error is all that is asked then
    problems = port_problems(source, Config(), strict_syntax=False)
    assert not problems, "\n".join(problems) + "\n--- source ---\n" + source
