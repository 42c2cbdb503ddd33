"""Shared by the robustness tests: framework preludes, ML snippets, and the three properties every
port must have, whatever the input (the engine never raises, the output parses, a second port
changes nothing; a rejected input comes back unchanged with an error)."""

from __future__ import annotations

import ast
import warnings
from typing import List

from porter.config import Config
from porter.engine import port

# What the framework imports look like at the top of real scripts. Each prelude makes the engine
# detect its frameworks, so that every rule of those frameworks runs over the code that follows.
PRELUDES = {
    "keras-torch": "import tensorflow as tf\nfrom tensorflow import keras\nimport torch\nimport torch.nn as nn\n",
    "tf1": "import tensorflow.compat.v1 as tf\nimport torch\n",
}

# A training function per framework, appended so that rules also edit (and the engine renders and
# re-verifies) every file, with the real-world code around the edits.
SNIPPETS = {
    "keras-torch": '''

def _robustness_probe_train(features, labels, batch_size=16):
    dataset = tf.data.Dataset.from_tensor_slices((features, labels)).shuffle(64).batch(batch_size)
    with tf.device("/GPU:0"):
        model = keras.Sequential([keras.layers.Dense(32, activation="relu"), keras.layers.Dense(1)])
        model.compile(optimizer="adam", loss="mse")
        model.fit(dataset, epochs=2)
    net = nn.Sequential(nn.Linear(8, 4), nn.ReLU()).cuda()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    for inputs, targets in torch.utils.data.DataLoader(list(zip(features, labels)), batch_size=4):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(net(inputs.cuda()), targets.cuda())
        loss.backward()
        optimizer.step()
    return model, net
''',
    "tf1": '''

def _robustness_probe_train(features, labels, steps=10):
    x = tf.placeholder(tf.float32, [None, 8])
    y = tf.placeholder(tf.float32, [None, 1])
    with tf.device("/device:GPU:0"):
        logits = tf.layers.dense(x, 1)
        loss = tf.losses.mean_squared_error(y, logits)
        train_op = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(train_op, feed_dict={x: features, y: labels})
    return loss
''',
}


def python_accepts(source: str) -> bool:
    """Whether CPython itself compiles the source (the independent judge of "valid")."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source, "<robustness>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False
    return True


def with_prelude(text: str, prelude: str) -> str:
    """The prelude inserted after the module docstring and ``from __future__`` imports (which must
    stay first), or at the very top when the text does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return prelude + text
    line = 0
    for index, statement in enumerate(tree.body):
        is_docstring = index == 0 and isinstance(statement, ast.Expr) and isinstance(
            getattr(statement, "value", None), ast.Constant) and isinstance(statement.value.value, str)
        is_future = isinstance(statement, ast.ImportFrom) and statement.module == "__future__"
        if not (is_docstring or is_future):
            break
        line = statement.end_lineno
    if line == 0:
        return prelude + text
    lines = text.splitlines(keepends=True)
    head, tail = "".join(lines[:line]), "".join(lines[line:])
    if not head.endswith(("\n", "\r")):
        head += "\n"
    return head + prelude + tail


def port_problems(source: str, config: Config = Config(), strict_syntax: bool = True) -> List[str]:
    """What is wrong with porting ``source``: empty when all is well.

    - the engine never raises;
    - a rejected input comes back byte for byte, unchanged, with its error (and with
      ``strict_syntax`` a rejection is only allowed when CPython rejects the code too, or for
      nesting deeper than the parser handles);
    - an accepted input gives output that CPython compiles, and porting that output again changes
      nothing.
    """
    try:
        result = port(source, config)
    except BaseException as error:  # noqa: B902 - the point is that nothing escapes
        if isinstance(error, KeyboardInterrupt):
            raise
        return [f"engine raised {type(error).__name__}: {error}"]
    if result.error is not None:
        problems = []
        if result.source != source or result.changed:
            problems.append(f"rejected ({result.error}) but the source came back changed")
        if "\n" in result.error:
            problems.append(f"error message is more than one line: {result.error!r}")
        if strict_syntax and "nested" not in result.error and python_accepts(source):
            problems.append(f"CPython compiles it but the engine rejected it: {result.error}")
        return problems
    if not result.changed:
        if result.source != source:
            return ["unchanged result whose source differs from the input"]
        return []  # same input, same output: a second port is this port again
    if not python_accepts(result.source):
        if python_accepts(source):
            return ["the ported code does not compile"]
        # libcst is more lenient than CPython on some inputs (such as misplaced __future__
        # imports); the port must then at least still be parseable by libcst, which the
        # second port below checks.
    try:
        again = port(result.source, config)
    except Exception as error:
        return [f"second port raised {type(error).__name__}: {error}"]
    if again.error is not None:
        return [f"second port failed: {again.error}"]
    if again.source != result.source:
        return ["a second port changes the code again"]
    return []
