"""A reproducible corpus of training scripts for the benchmarks (fixed seed, written from scratch).

    python benchmarks/corpus.py OUT_DIR [--seed N]

Writes ``keras/``, ``tf1/``, ``torch/`` and ``plain/`` below OUT_DIR: Keras, TensorFlow 1 and
PyTorch training scripts of 2 to 40 KB (argparse entry points, data pipelines, several model
styles, training loops, evaluation, checkpoints, and the helper code real scripts carry), and plain
Python files with no ML import. The same seed always gives the same bytes.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path
from typing import Callable, Dict, List

SEED = 20261126
COUNTS = {"keras": 110, "tf1": 80, "torch": 110, "plain": 60}

WORDS = ("loss accuracy batch epoch sample feature label weight bias layer hidden output input "
         "token image pixel channel kernel stride window score metric logit step rate decay "
         "warmup checkpoint shard record split fold seed noise mask embedding vocab sequence").split()


class Writer:
    """Random but plausible names, numbers and helper code."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def name(self, parts=2) -> str:
        return "_".join(self.rng.choice(WORDS) for _ in range(parts))

    def pick(self, *options):
        return self.rng.choice(options)

    def helper_function(self) -> str:
        rng = self.rng
        name = self.name(rng.randint(2, 3))
        args = sorted({self.name(1) for _ in range(rng.randint(1, 4))})
        kind = rng.randint(0, 5)
        doc = f'    """{self.name(1).capitalize()} helper: computes the {self.name(2).replace("_", " ")}."""\n'
        if kind == 0:
            body = (f"    total = 0.0\n    for index, value in enumerate({args[0]}):\n"
                    f"        if index % {rng.randint(2, 9)} == 0:\n            continue\n"
                    f"        total += value * {rng.random():.3f}\n    return total / max(len({args[0]}), 1)\n")
        elif kind == 1:
            body = (f"    result = {{}}\n    for key in sorted({args[0]}):\n"
                    f"        result[key] = result.get(key, 0) + 1  # count {self.name(1)}\n    return result\n")
        elif kind == 2:
            body = (f"    with open({args[0]}, \"r\", encoding=\"utf-8\") as handle:\n"
                    f"        lines = [line.strip() for line in handle if line.strip()]\n"
                    f"    return [line.split(\",\") for line in lines[{rng.randint(0, 2)}:]]\n")
        elif kind == 3:
            body = (f"    if not {args[0]}:\n        raise ValueError(\"empty {self.name(1)}\")\n"
                    f"    low, high = min({args[0]}), max({args[0]})\n"
                    f"    span = (high - low) or 1\n    return [(item - low) / span for item in {args[0]}]\n")
        elif kind == 4:
            body = (f"    try:\n        value = float({args[0]})\n    except (TypeError, ValueError):\n"
                    f"        logging.warning(\"bad value %r\", {args[0]})\n        return None\n"
                    f"    return round(value, {rng.randint(1, 6)})\n")
        else:
            body = (f"    parts = []\n    for item in {args[0]}:\n"
                    f"        parts.append(f\"{{item!r:>{rng.randint(4, 12)}}}\")\n"
                    f"    return \" | \".join(parts)\n")
        return f"def {name}({', '.join(args)}):\n{doc}{body}"

    def helper_class(self) -> str:
        name = "".join(part.capitalize() for part in self.name(2).split("_"))
        fields = sorted({self.name(1) for _ in range(self.rng.randint(2, 5))})
        init = "".join(f"        self.{field} = {field}\n" for field in fields)
        return (
            f"class {name}:\n    \"\"\"Keeps track of {self.name(2).replace('_', ' ')}.\"\"\"\n\n"
            f"    def __init__(self, {', '.join(f'{f}=None' for f in fields)}):\n{init}\n"
            f"    def as_dict(self):\n        return {{{', '.join(f'{f!r}: self.{f}' for f in fields)}}}\n\n"
            f"    def __repr__(self):\n        return f\"{name}({{self.as_dict()}})\"\n"
        )

    def helpers(self, target_bytes: int) -> str:
        chunks: List[str] = []
        size = 0
        while size < target_bytes:
            chunk = self.helper_class() if self.rng.random() < 0.25 else self.helper_function()
            if self.rng.random() < 0.3:
                chunk = f"# {self.name(3).replace('_', ' ')}\n" + chunk
            chunks.append(chunk)
            size += len(chunk) + 2
        return "\n\n".join(chunks)

    def argparse_block(self, options) -> str:
        lines = ["def parse_args():", '    parser = argparse.ArgumentParser(description="Train a model.")']
        for flag, kind, default in options:
            lines.append(f'    parser.add_argument("--{flag}", type={kind}, default={default!r})')
        lines.append("    return parser.parse_args()")
        return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ Keras
def keras_script(w: Writer, target: int) -> str:
    rng = w.rng
    tf_import = w.pick("import tensorflow as tf", "import tensorflow as tf\nfrom tensorflow import keras",
                       "import tensorflow as tf\nfrom tensorflow.keras import layers")
    uses_keras = "from tensorflow import keras" in tf_import
    uses_layers = "from tensorflow.keras import layers" in tf_import
    K = "keras" if uses_keras else "tf.keras"
    L = "layers" if uses_layers else f"{K}.layers"
    units = rng.choice([64, 128, 256, 512])
    style = rng.randint(0, 2)
    if style == 0:
        model = (f"def build_model(num_classes):\n    model = {K}.Sequential([\n"
                 f"        {L}.Flatten(input_shape=(28, 28)),\n"
                 f"        {L}.Dense({units}, activation=\"relu\"),\n"
                 f"        {L}.Dropout({rng.choice([0.1, 0.2, 0.5])}),\n"
                 f"        {L}.Dense(num_classes),\n    ])\n    return model\n")
    elif style == 1:
        model = (f"def build_model(num_classes):\n    inputs = {K}.Input(shape=(32, 32, 3))\n"
                 f"    x = {L}.Conv2D({units // 4}, 3, activation=\"relu\")(inputs)\n"
                 f"    x = {L}.MaxPooling2D()(x)\n    x = {L}.Conv2D({units // 2}, 3, activation=\"relu\")(x)\n"
                 f"    x = {L}.GlobalAveragePooling2D()(x)\n    outputs = {L}.Dense(num_classes)(x)\n"
                 f"    return {K}.Model(inputs=inputs, outputs=outputs, name=\"{w.name(2)}\")\n")
    else:
        model = (f"class Classifier({K}.Model):\n    def __init__(self, num_classes):\n"
                 f"        super().__init__()\n        self.embed = {L}.Embedding(10000, {units // 2})\n"
                 f"        self.rnn = {L}.LSTM({units})\n        self.head = {L}.Dense(num_classes)\n\n"
                 f"    def call(self, inputs, training=False):\n        x = self.embed(inputs)\n"
                 f"        x = self.rnn(x, training=training)\n        return self.head(x)\n\n\n"
                 f"def build_model(num_classes):\n    return Classifier(num_classes)\n")
    data = (f"def make_dataset(features, labels, batch_size, training=True):\n"
            f"    dataset = tf.data.Dataset.from_tensor_slices((features, labels))\n"
            f"    if training:\n        dataset = dataset.shuffle({rng.choice([1000, 4096, 10000])})\n"
            f"    dataset = dataset.map(lambda x, y: (tf.cast(x, tf.float32) / 255.0, y),\n"
            f"                          num_parallel_calls=tf.data.AUTOTUNE)\n"
            f"    return dataset.batch(batch_size).prefetch({rng.choice([1, 2, 'tf.data.AUTOTUNE'])})\n")
    device = w.pick('with tf.device("/GPU:0"):', 'with strategy.scope():', None)
    train_lines = [
        f"model = build_model({rng.choice([10, 100])})",
        f"model.compile(optimizer={K}.optimizers.Adam({rng.choice(['1e-3', '3e-4', 'args.lr'])}),",
        f"              loss={K}.losses.SparseCategoricalCrossentropy(from_logits=True),",
        "              metrics=[\"accuracy\"])",
        "model.fit(train_ds, epochs=args.epochs, validation_data=test_ds)",
    ]
    main = ["def main():", "    args = parse_args()", "    logging.basicConfig(level=logging.INFO)",
            f"    (x_train, y_train), (x_test, y_test) = {K}.datasets.{w.pick('mnist', 'cifar10', 'fashion_mnist')}.load_data()",
            "    train_ds = make_dataset(x_train, y_train, args.batch_size)",
            "    test_ds = make_dataset(x_test, y_test, args.batch_size, training=False)"]
    if device == "with strategy.scope():":
        main.append("    strategy = tf.distribute.MirroredStrategy()")
    if device:
        main.append(f"    {device}")
        main.extend("        " + line for line in train_lines)
    else:
        main.extend("    " + line for line in train_lines)
    main.append("    model.evaluate(test_ds)")
    if rng.random() < 0.5:
        main.append(f'    model.save_weights(os.path.join(args.out, "{w.name(1)}.h5"))')
    head = f'"""{w.name(3).replace("_", " ").capitalize()}: a Keras training script."""\nimport argparse\nimport logging\nimport os\n\n{tf_import}\n'
    body = [head, w.argparse_block([("epochs", "int", rng.randint(1, 30)), ("batch_size", "int", rng.choice([32, 64, 128])),
                                    ("lr", "float", 0.001), ("out", "str", "checkpoints")]), data, model]
    if rng.random() < 0.4:
        body.append(
            "@tf.function\ndef train_step(model, optimizer, loss_fn, x, y):\n    with tf.GradientTape() as tape:\n"
            "        logits = model(x, training=True)\n        loss = loss_fn(y, logits)\n"
            "    grads = tape.gradient(loss, model.trainable_variables)\n"
            "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n    return loss\n")
    return assemble(w, body, "\n".join(main) + "\n", target)


# -------------------------------------------------------------------------------------------- TF1
def tf1_script(w: Writer, target: int) -> str:
    rng = w.rng
    tf_import = w.pick("import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()",
                       "import tensorflow as tf", "import tensorflow.compat.v1 as tf")
    hidden = rng.choice([64, 128, 256])
    graph = (f"def build_graph(learning_rate):\n    x = tf.placeholder(tf.float32, [None, 784], name=\"x\")\n"
             f"    y = tf.placeholder(tf.int64, [None], name=\"y\")\n"
             f"    hidden = tf.layers.dense(x, {hidden}, activation=tf.nn.relu)\n"
             f"    logits = tf.layers.dense(hidden, 10)\n"
             f"    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))\n"
             f"    global_step = tf.train.get_or_create_global_step()\n"
             f"    optimizer = tf.train.{w.pick('AdamOptimizer', 'GradientDescentOptimizer', 'MomentumOptimizer')}"
             f"(learning_rate{', 0.9' if rng.random() < 0.3 else ''})\n"
             f"    train_op = optimizer.minimize(loss, global_step=global_step)\n"
             f"    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))\n"
             f"    return x, y, loss, train_op, accuracy\n")
    if "MomentumOptimizer(learning_rate)" in graph:
        graph = graph.replace("MomentumOptimizer(learning_rate)", "MomentumOptimizer(learning_rate, 0.9)")
    loop = ["def main():", "    args = parse_args()",
            "    images, labels = load_data(args.data)"]
    device = w.pick('with tf.device("/device:GPU:0"):', None)
    if device:
        loop += [f"    {device}", "        x, y, loss, train_op, accuracy = build_graph(args.lr)"]
    else:
        loop += ["    x, y, loss, train_op, accuracy = build_graph(args.lr)"]
    loop += ["    saver = tf.train.Saver()",
             f"    config = tf.ConfigProto(allow_soft_placement={w.pick('True', 'False')})",
             "    with tf.Session(config=config) as sess:",
             "        sess.run(tf.global_variables_initializer())",
             "        for step in range(args.steps):",
             "            start = (step * args.batch_size) % len(images)",
             "            batch_x = images[start:start + args.batch_size]",
             "            batch_y = labels[start:start + args.batch_size]",
             "            _, loss_value = sess.run([train_op, loss], feed_dict={x: batch_x, y: batch_y})",
             f"            if step % {rng.choice([10, 50, 100])} == 0:",
             "                print(\"step\", step, \"loss\", loss_value)",
             "        saver.save(sess, args.out)"]
    loader = ("def load_data(path):\n    data = np.load(path)\n"
              "    return data[\"images\"].reshape(-1, 784).astype(np.float32) / 255.0, data[\"labels\"]\n")
    head = f'"""{w.name(3).replace("_", " ").capitalize()}: a TensorFlow 1 training script."""\nimport argparse\n\nimport numpy as np\n{tf_import}\n'
    body = [head, w.argparse_block([("steps", "int", rng.choice([1000, 5000])), ("batch_size", "int", 64),
                                    ("lr", "float", 0.01), ("data", "str", "mnist.npz"), ("out", "str", "model.ckpt")]),
            loader, graph]
    if rng.random() < 0.3:
        body.append("def input_fn(features, labels, batch_size):\n"
                    "    dataset = tf.data.Dataset.from_tensor_slices((features, labels))\n"
                    "    dataset = dataset.repeat().batch(batch_size)\n"
                    "    return dataset.make_one_shot_iterator().get_next()\n")
    return assemble(w, body, "\n".join(loop) + "\n", target)


# ------------------------------------------------------------------------------------------ torch
def torch_script(w: Writer, target: int) -> str:
    rng = w.rng
    hidden = rng.choice([64, 128, 256, 512])
    nn_import = w.pick("import torch.nn as nn", "from torch import nn")
    functional = w.pick("import torch.nn.functional as F", "from torch.nn import functional as F")
    net = (f"class Net(nn.Module):\n    def __init__(self, num_classes={rng.choice([10, 100])}):\n"
           f"        super().__init__()\n        self.conv1 = nn.Conv2d(3, {hidden // 8}, 3, padding=1)\n"
           f"        self.conv2 = nn.Conv2d({hidden // 8}, {hidden // 4}, 3, padding=1)\n"
           f"        self.pool = nn.MaxPool2d(2)\n        self.fc = nn.Linear({hidden // 4} * 8 * 8, num_classes)\n\n"
           f"    def forward(self, x):\n        x = self.pool(F.relu(self.conv1(x)))\n"
           f"        x = self.pool(F.relu(self.conv2(x)))\n        x = torch.flatten(x, 1)\n"
           f"        return self.fc(x)\n")
    device = w.pick('torch.device("cuda" if torch.cuda.is_available() else "cpu")', '"cuda"', 'torch.device("cuda:0")')
    optimizer = w.pick("torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)",
                       "torch.optim.Adam(model.parameters(), lr=args.lr)",
                       "torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-2)")
    amp = rng.random() < 0.3
    train = ["def train(model, loader, optimizer, device, epoch):", "    model.train()",
             "    criterion = nn.CrossEntropyLoss()"]
    if amp:
        train.append("    scaler = torch.cuda.amp.GradScaler()")
    train += ["    for batch_idx, (data, target) in enumerate(loader):",
              "        data, target = data.to(device), target.to(device)",
              "        optimizer.zero_grad()"]
    if amp:
        train += ["        with torch.cuda.amp.autocast():",
                  "            output = model(data)",
                  "            loss = criterion(output, target)",
                  "        scaler.scale(loss).backward()",
                  "        scaler.step(optimizer)",
                  "        scaler.update()"]
    else:
        train += ["        output = model(data)", "        loss = criterion(output, target)",
                  "        loss.backward()", "        optimizer.step()"]
    train += [f"        if batch_idx % {rng.choice([10, 50, 100])} == 0:",
              "            print(f\"epoch {epoch} batch {batch_idx} loss {loss.item():.4f}\")"]
    evaluate = ("def evaluate(model, loader, device):\n    model.eval()\n    correct = 0\n"
                "    with torch.no_grad():\n        for data, target in loader:\n"
                "            data, target = data.to(device), target.to(device)\n"
                "            correct += (model(data).argmax(1) == target).sum().item()\n"
                "    return correct / len(loader.dataset)\n")
    main = ["def main():", "    args = parse_args()", f"    device = {device}",
            "    transform = transforms.Compose([transforms.ToTensor()])",
            f"    train_set = datasets.{w.pick('CIFAR10', 'CIFAR100')}(args.data, train=True, download=True, transform=transform)",
            f"    train_loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch_size, shuffle=True, num_workers={rng.choice([2, 4, 8])})",
            f"    model = Net().{w.pick('to(device)', 'cuda()')}",
            f"    optimizer = {optimizer}"]
    if rng.random() < 0.4:
        main.append("    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)")
    main += ["    for epoch in range(1, args.epochs + 1):",
             "        train(model, train_loader, optimizer, device, epoch)"]
    if "scheduler" in main[-3]:
        main.append("        scheduler.step()")
    main += ["    print(\"accuracy\", evaluate(model, train_loader, device))",
             "    torch.save(model.state_dict(), args.out)"]
    head = (f'"""{w.name(3).replace("_", " ").capitalize()}: a PyTorch training script."""\nimport argparse\n\n'
            f"import torch\n{nn_import}\n{functional}\nfrom torchvision import datasets, transforms\n")
    body = [head, w.argparse_block([("epochs", "int", rng.randint(1, 50)), ("batch_size", "int", rng.choice([32, 64, 128])),
                                    ("lr", "float", 0.01), ("data", "str", "./data"), ("out", "str", "model.pt")]),
            net, "\n".join(train) + "\n", evaluate]
    return assemble(w, body, "\n".join(main) + "\n", target)


# ------------------------------------------------------------------------------------------ plain
def plain_script(w: Writer, target: int) -> str:
    head = (f'"""{w.name(3).replace("_", " ").capitalize()}: utilities without any ML framework."""\n'
            "import json\nimport logging\nimport os\nimport sys\n")
    main = ("def main(argv=None):\n    argv = sys.argv[1:] if argv is None else argv\n"
            "    for path in argv:\n        with open(path) as handle:\n"
            "            print(json.dumps(json.load(handle), indent=2))\n    return 0\n")
    return assemble(w, [head], main, target)


def assemble(w: Writer, parts: List[str], main: str, target: int) -> str:
    """The script's parts, helper code up to the target size, then main() and the entry point."""
    fixed = sum(len(part) for part in parts) + len(main) + 80
    if "import logging" not in parts[0]:
        parts[0] = parts[0].replace("import argparse\n", "import argparse\nimport logging\n", 1)
    helpers = w.helpers(max(0, target - fixed))
    sections = parts[:1] + [helpers] + parts[1:] if helpers else parts
    return "\n\n".join(section.rstrip("\n") + "\n" for section in sections) + "\n\n" + main + \
        '\n\nif __name__ == "__main__":\n    main()\n'


GENERATORS: Dict[str, Callable[[Writer, int], str]] = {
    "keras": keras_script, "tf1": tf1_script, "torch": torch_script, "plain": plain_script,
}


def target_size(rng: random.Random) -> int:
    """Log-uniform between 2 and 40 KB: many small scripts, some long ones."""
    return int(2048 * (18.5 ** rng.random()))


def generate(out: Path, seed: int = SEED) -> Dict[str, List[Path]]:
    rng = random.Random(seed)
    writer = Writer(rng)
    written: Dict[str, List[Path]] = {}
    for group, count in COUNTS.items():
        folder = out / group
        folder.mkdir(parents=True, exist_ok=True)
        for index in range(count):
            text = GENERATORS[group](writer, target_size(rng))
            path = folder / f"{group}_{index:03d}.py"
            path.write_text(text, encoding="utf-8")
            written.setdefault(group, []).append(path)
    return written


def big_ml_file(target_bytes: int, seed: int = SEED) -> str:
    """One Keras script of about ``target_bytes``, its helpers and several model functions."""
    writer = Writer(random.Random(seed + 1))
    text = keras_script(writer, 8000)
    extra = []
    size = len(text)
    index = 0
    while size < target_bytes:
        chunk = keras_script(writer, 4000).split("\n\n\n", 1)[1].replace("def main(", f"def main_{index}(")
        chunk = chunk.replace('if __name__ == "__main__":\n    main()\n', "")
        extra.append(chunk)
        size += len(chunk)
        index += 1
    return text.replace('\n\nif __name__ == "__main__":', "\n\n" + "\n\n".join(extra) + '\n\nif __name__ == "__main__":', 1)


def ml_file_of_size(target_bytes: int, seed: int = SEED) -> str:
    return keras_script(Writer(random.Random(seed + 2)), target_bytes)


# ---------------------------------------------------------------------------------- small scripts
# The size of most scripts users bring: a tutorial's flat script of 1 to 3 KB, no argparse, no
# main(). On such files the porter's fixed costs per file weigh most.
SMALL_COUNTS = {"keras": 30, "tf1": 30, "torch": 30}
SMALL_SIZES = (1024, 3072)


def small_keras_script(w: Writer) -> str:
    rng = w.rng
    data = w.pick("mnist", "fashion_mnist")
    units = rng.choice([64, 128, 256])
    return (
        f'"""{w.name(2).replace("_", " ").capitalize()}: train a small classifier on {data}."""\n'
        "import tensorflow as tf\n\n"
        f"(x_train, y_train), (x_test, y_test) = tf.keras.datasets.{data}.load_data()\n"
        "x_train, x_test = x_train / 255.0, x_test / 255.0\n\n"
        "model = tf.keras.Sequential([\n"
        "    tf.keras.layers.Flatten(input_shape=(28, 28)),\n"
        f"    tf.keras.layers.Dense({units}, activation=\"relu\"),\n"
        f"    tf.keras.layers.Dropout({rng.choice([0.1, 0.2, 0.3])}),\n"
        "    tf.keras.layers.Dense(10),\n"
        "])\n"
        "loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)\n"
        f"model.compile(optimizer=\"{w.pick('adam', 'sgd', 'rmsprop')}\", loss=loss_fn, metrics=[\"accuracy\"])\n"
        f"model.fit(x_train, y_train, epochs={rng.randint(1, 10)}, batch_size={rng.choice([32, 64, 128])})\n"
        "model.evaluate(x_test, y_test, verbose=2)\n"
    )


def small_torch_script(w: Writer) -> str:
    rng = w.rng
    hidden = rng.choice([64, 128, 256])
    return (
        f'"""{w.name(2).replace("_", " ").capitalize()}: a small PyTorch training loop."""\n'
        "import torch\nfrom torch import nn\nfrom torchvision import datasets, transforms\n\n"
        "device = \"cuda\" if torch.cuda.is_available() else \"cpu\"\n"
        "data = datasets.MNIST(\"data\", train=True, download=True, transform=transforms.ToTensor())\n"
        f"loader = torch.utils.data.DataLoader(data, batch_size={rng.choice([32, 64, 128])}, shuffle=True)\n\n"
        f"model = nn.Sequential(nn.Flatten(), nn.Linear(784, {hidden}), nn.ReLU(), nn.Linear({hidden}, 10))\n"
        "model = model.to(device)\n"
        "criterion = nn.CrossEntropyLoss()\n"
        f"optimizer = torch.optim.{w.pick('SGD', 'Adam')}(model.parameters(), lr={w.pick('0.01', '1e-3')})\n\n"
        f"for epoch in range({rng.randint(1, 5)}):\n"
        "    for images, labels in loader:\n"
        "        images, labels = images.to(device), labels.to(device)\n"
        "        optimizer.zero_grad()\n"
        "        loss = criterion(model(images), labels)\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
        "    print(\"epoch\", epoch, \"loss\", loss.item())\n"
    )


def small_tf1_script(w: Writer) -> str:
    rng = w.rng
    return (
        f'"""{w.name(2).replace("_", " ").capitalize()}: a TensorFlow 1 session."""\n'
        "import numpy as np\nimport tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n\n"
        "x = tf.placeholder(tf.float32, [None, 784])\n"
        "y = tf.placeholder(tf.int64, [None])\n"
        f"hidden = tf.layers.dense(x, {rng.choice([64, 128, 256])}, activation=tf.nn.relu)\n"
        "logits = tf.layers.dense(hidden, 10)\n"
        "loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))\n"
        f"train_op = tf.train.{w.pick('AdamOptimizer', 'GradientDescentOptimizer')}({w.pick('0.01', '1e-3')}).minimize(loss)\n\n"
        "images = np.random.rand(1024, 784).astype(np.float32)\n"
        "labels = np.random.randint(0, 10, size=1024)\n"
        "with tf.Session() as sess:\n"
        "    sess.run(tf.global_variables_initializer())\n"
        f"    for step in range({rng.choice([100, 500, 1000])}):\n"
        f"        start = (step * {rng.choice([32, 64])}) % len(images)\n"
        f"        feed = {{x: images[start:start + {rng.choice([32, 64])}], y: labels[start:start + 64]}}\n"
        "        _, value = sess.run([train_op, loss], feed_dict=feed)\n"
        f"        if step % {rng.choice([10, 50, 100])} == 0:\n"
        "            print(\"step\", step, \"loss\", value)\n"
    )


SMALL_GENERATORS: Dict[str, Callable[[Writer], str]] = {
    "keras": small_keras_script, "tf1": small_tf1_script, "torch": small_torch_script,
}


def small_script(w: Writer, group: str) -> str:
    """A tutorial script with helper functions put before the training code, up to a size drawn
    between SMALL_SIZES (never above the upper bound)."""
    docstring, rest = SMALL_GENERATORS[group](w).split("\n", 1)
    imports, code = rest.split("\n\n", 1)
    imports = "import logging\n" + imports  # the helpers log
    low, high = SMALL_SIZES
    target = w.rng.randint(low, high)
    helpers: List[str] = []
    size = len(docstring) + len(imports) + len(code) + 4
    while size < target:
        chunk = w.helper_function() + "\n\n"
        if size + len(chunk) > high:
            break
        helpers.append(chunk)
        size += len(chunk)
    return f"{docstring}\n{imports}\n\n\n{''.join(helpers)}{code}"


def generate_small(out: Path, seed: int = SEED) -> List[Path]:
    """SMALL_COUNTS scripts of 1 to 3 KB, written to OUT/small_<group>_<index>.py."""
    writer = Writer(random.Random(seed + 3))
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for group, count in SMALL_COUNTS.items():
        for index in range(count):
            path = out / f"small_{group}_{index:03d}.py"
            path.write_text(small_script(writer, group), encoding="utf-8")
            written.append(path)
    return written


def _main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    written = generate(args.out, args.seed)
    for group, paths in written.items():
        sizes = sorted(path.stat().st_size for path in paths)
        print(f"{group}: {len(paths)} files, {sizes[0]} to {sizes[-1]} bytes")


if __name__ == "__main__":
    _main()
