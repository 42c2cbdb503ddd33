import dataclasses
from typing import Iterator, Optional, Set, Tuple, Union

import libcst as cst

from porter.context import SharedKey, code_of, in_loop, walk

from porter import throughput
from porter.cstutil import (LINE_LIMIT, append_args, argument, is_name, keyword, keyword_arg, leading_blank_count,
                            statements)
from porter.imports import insertion_point
from porter.rules.keras._analysis.fit import (KERAS_DEFAULT_BATCH, ONE_BATCH_METHODS, call_columns, calls_of,
                                              describe_fixed_batch, floor_operand, fraction_value, held_values,
                                              is_helper_call,
                                              joined_along_steps, layout, literal_options, literal_samples,
                                              loaded_uncompiled, most_samples, multiple_code, never_compiled,
                                              one_batch_call, own_method, reaching_bindings, repeatable,
                                              replayed_draw, rounded_up, same_size,
                                              samples_per_execution, single_sample, smallest_per_execution,
                                              speed_asked, static_int, static_length, tokenizer_encoding,
                                              training_calls, validation_entry)
from porter.rule import FIX, KERAS, Example, Rule, snippet
from porter.rules._tf.tfdata import is_dataset
from porter.rules.keras._analysis.util import (callback_model, is_callback_method, method_calls, number_value,
                                               self_attribute_values)
from porter.rules.keras._analysis.model_plan import keras_extensions_off
from porter.rules.keras._analysis.predict_datasets import padded_predictions
from porter.scopes import assignments, fresh_name, owner, single_value

MARKER = "(ipu-port)"
_EMPTY = cst.Module(body=[])  # renders a node on its own
_NAMES = ("trim_to_multiple", "ipu_trim_to_multiple", "trim_to_ipu_multiple")
_HELPER = '''def {trim}(data, multiple, smallest=None):
    """Drop the last samples of `data` so that its length is a multiple of `multiple`, or of
    `smallest` when it holds less than `multiple` {marker}: the IPU only runs whole executions
    of full batches. `data` is an array, a tensor or a list of samples (numbers or strings), or
    a list, tuple or dict of them (a `None` among them is kept). Raises a ValueError when `data`
    holds less than one execution: trimming would leave no sample."""
    if data is None:
        return data
    if isinstance(data, dict):
        return {{key: {trim}(value, multiple, smallest) for key, value in data.items()}}
    if isinstance(data, (list, tuple)) and not {samples}(data):
        return type(data)({trim}(value, multiple, smallest) for value in data)
    if smallest is not None and len(data) < multiple:
        multiple = smallest
    if len(data) < multiple:
        raise ValueError(f"{{len(data)}} samples cannot fill one IPU execution of {{multiple}} "
                         "(whole batches on every replica), and Keras on the IPU rejects a "
                         "partial batch: use a smaller batch size")
    return data[:len(data) - len(data) % multiple]
'''
_SPLIT_NAMES = ("split_validation_to_multiple", "ipu_split_validation")
_SPLIT_HELPER = '''def {split}(arrays, validation_split, multiple, smallest=None):
    """Split `arrays` as `fit(validation_split=...)` does, the last samples for validation, and
    trim both parts with `{trim}` {marker}: the IPU only runs whole batches, and
    `validation_split` cuts the data anywhere. Each input (an array, a list of samples, or a
    list, tuple or dict of inputs) is cut at the same sample. Returns (training arrays,
    validation arrays), and None for the validation arrays when `validation_split` is 0, as
    Keras then validates on nothing."""
    first = arrays[0]
    while isinstance(first, (dict, list, tuple)) and not {samples}(first):
        first = next(iter(first.values())) if isinstance(first, dict) else first[0]
    split_at = int(len(first) * (1.0 - validation_split))

    def part(data, start, stop):
        if data is None:
            return data
        if isinstance(data, dict):
            return {{key: part(value, start, stop) for key, value in data.items()}}
        if isinstance(data, (list, tuple)) and not {samples}(data):
            return type(data)(part(value, start, stop) for value in data)
        return data[start:stop]

    training = tuple({trim}(part(array, None, split_at), multiple, smallest) for array in arrays)
    if not validation_split:
        return training, None
    validation = tuple({trim}(part(array, split_at, None), multiple, smallest) for array in arrays)
    return training, validation
'''
_PAD_NAMES = ("pad_to_multiple", "ipu_pad_to_multiple")
_PAD_HELPER = '''def {pad}(data, multiple):
    """Repeat the last sample of `data` until its length is a multiple of `multiple` {marker}:
    the IPU only runs whole batches, and `predict` must still answer for every sample (the
    answers for the repeats are dropped by `{cut}`). `data` is an array, a tensor, a pandas
    table or column, or a list of samples (numbers or strings), or a list, tuple or dict of them."""
    import numpy

    if isinstance(data, dict):
        return {{key: {pad}(value, multiple) for key, value in data.items()}}
    if isinstance(data, (list, tuple)) and not {samples}(data):
        return type(data)({pad}(value, multiple) for value in data)
    missing = -len(data) % multiple
    if missing == 0:
        return data
    # `asarray`: a pandas column's own `repeat` takes no axis.
    return numpy.concatenate([data, numpy.repeat(numpy.asarray(data[-1:]), missing, axis=0)])
'''
_CUT_NAMES = ("cut_to_samples", "ipu_cut_to_samples")
_CUT_HELPER = '''def {cut}(predictions, data):
    """The first of `predictions`, one for each sample of `data` {marker}: what `predict`
    answered for the samples repeated by `{pad}` is dropped. `predictions` is what
    `predict` returns (an array, or a list, tuple, namedtuple or dict of them, or a dict class
    with attributes), `data` what it was given."""
    while isinstance(data, (dict, list, tuple)) and not {samples}(data):
        data = next(iter(data.values())) if isinstance(data, dict) else data[0]
    count = len(data)
    if isinstance(predictions, dict):
        values = {{key: value[:count] for key, value in predictions.items()}}
        if type(predictions) is dict:
            return values
        return type(predictions)(**values)  # a dict class of its own (a Hugging Face output) keeps `.logits`
    if isinstance(predictions, (list, tuple)):
        values = [value[:count] for value in predictions]
        if hasattr(predictions, "_fields"):  # a namedtuple takes its fields one by one
            return type(predictions)(*values)
        return type(predictions)(values)
    return predictions[:count]
'''
_SAMPLES_NAMES = ("is_list_of_samples", "ipu_is_list_of_samples")
_SAMPLES_HELPER = '''def {samples}(data):
    """Whether `data` is a list (or tuple) that Keras takes as the samples of one input, not as
    several inputs {marker}: its first item (or that item's first item, and so on) is a number
    or a string."""
    if not isinstance(data, (list, tuple)):
        return False
    first = data
    while isinstance(first, (list, tuple)) and first:
        first = first[0]
    return isinstance(first, (int, float, str, bytes, bytearray))
'''
# The helpers in the order they are written into a file, by what they do.
_TEMPLATES = (("trim", _HELPER), ("split", _SPLIT_HELPER), ("pad", _PAD_HELPER), ("cut", _CUT_HELPER),
              ("samples", _SAMPLES_HELPER))
# Their usual names, as the examples show them.
_USUAL_NAMES = {"trim": _NAMES[0], "split": _SPLIT_NAMES[0], "pad": _PAD_NAMES[0], "cut": _CUT_NAMES[0],
                "samples": _SAMPLES_NAMES[0]}


def _helpers_code(wanted, names=None) -> str:
    """The text of the ``wanted`` helpers ("trim", "split", "pad", "cut", "samples"), in the order
    they are written, calling each other by ``names`` (the usual ones when not given)."""
    names = names or _USUAL_NAMES
    return "\n\n".join(template.format(marker=MARKER, **names) for key, template in _TEMPLATES if key in wanted)


def _examples_helpers(*wanted: str) -> str:
    """The helpers an example's port adds: those ``wanted``, and the test they share."""
    return _helpers_code(set(wanted) | {"samples"})


# How each helper's docstring starts: what tells them apart in a file ported before.
_TRIM_DOC = "Drop the last samples"
_SPLIT_DOC = "Split `arrays`"
_PAD_DOC = "Repeat the last sample"
_CUT_DOC = "The first of `predictions`"
_SAMPLES_DOC = "Whether `data` is a list"
_DOCS = {"trim": _TRIM_DOC, "split": _SPLIT_DOC, "pad": _PAD_DOC, "cut": _CUT_DOC, "samples": _SAMPLES_DOC}
_EXISTING_HELPERS: SharedKey[dict] = SharedKey("keras-existing-helpers")


def existing_helper(ctx, start: str = _TRIM_DOC) -> Optional[str]:
    """The name of the trimming helper (or the one whose docstring begins with ``start``) an
    earlier port wrote into the file, if any."""
    return ctx.shared(_EXISTING_HELPERS, lambda: _existing_helpers(ctx)).get(start)


def _existing_helpers(ctx) -> dict:
    """{how its docstring starts: name} of the helpers an earlier port wrote into the file."""
    found = {}
    for statement in ctx.module.body:
        if not isinstance(statement, cst.FunctionDef):
            continue
        docstring = statement.get_docstring(clean=False)
        if not (docstring and MARKER in docstring):
            continue
        for start in _DOCS.values():
            if docstring.startswith(start):
                found.setdefault(start, statement.name.value)
    return found


def helper_name(ctx) -> str:
    found = existing_helper(ctx)
    if found is not None:
        return found
    return fresh_name(ctx, *_NAMES)


def split_helper_name(ctx) -> str:
    found = existing_helper(ctx, _SPLIT_DOC)
    if found is not None:
        return found
    return fresh_name(ctx, *_SPLIT_NAMES)


def pad_helper_names(ctx):
    """The names of the padding helper and of the one that cuts the predictions back."""
    pad = existing_helper(ctx, _PAD_DOC) or fresh_name(ctx, *_PAD_NAMES)
    cut = existing_helper(ctx, _CUT_DOC) or fresh_name(ctx, *_CUT_NAMES)
    return pad, cut


def samples_helper_name(ctx) -> str:
    """The name of the test the helpers share: is a list the samples of one input?"""
    return existing_helper(ctx, _SAMPLES_DOC) or fresh_name(ctx, *_SAMPLES_NAMES)


def _helper_anchor(ctx, names: Set[str]) -> Optional[cst.BaseStatement]:
    """The statement the helpers ``names`` go before: the first after the imports at the top of the
    file, or, when module-level code calls a helper above the file's last import (a script that
    imports matplotlib at its end), the first after the imports above that call."""
    body = list(ctx.module.body)
    statement, after = insertion_point(ctx, names)
    start = 0 if statement is None else body.index(statement) + (1 if after else 0)
    return body[start] if start < len(body) else None


def _encoding_input(ctx, entry) -> Optional[cst.BaseExpression]:
    """The input of a training call that is a tokenizer's whole encoding (``tokenizer(texts,
    return_tensors="np")``, or a variable given one), not its items or a ``dict`` of it."""
    inputs = [arg.value for arg in entry.arrays] + ([entry.data] if entry.data is not None else [])
    return next((node for node in inputs if tokenizer_encoding(ctx, node, entry.owner)), None)


def _trimmed(name: str, multiple: str):
    template = cst.parse_expression(f"{name}(data, {multiple})")

    def build(node: cst.BaseExpression) -> cst.BaseExpression:
        first = template.args[0].with_changes(value=node)
        return template.with_changes(args=[first, *template.args[1:]])

    return build


_REPLAY = """\
import random

import numpy as np
import tensorflow as tf


class Agent:
    def __init__(self):
        self.q_net = tf.keras.models.load_model("q.keras")
        self.memory = []

    def remember(self, state, action, reward, next_state):
        self.memory.append((state, action, reward, next_state))

    def replay(self, size):
        for state, action, reward, next_state in random.sample(self.memory, size):
            target = self.q_net.predict(state, verbose=0{predict})
            target[0][action] = reward + 0.9 * self.q_net.predict(next_state, verbose=0{predict}).max()
            self.q_net.fit(state, target, verbose=0{fit})


agent = Agent()
for episode in range(10):
    state = {state}
    for step in range(200):
        observation, reward = env.step(0)
        next_state = np.reshape(observation, [1, 4])
        agent.remember(state, 0, reward, next_state)
        state = next_state
    agent.replay(16)
"""


class DivisibleDataset(Rule):
    code = "IPU107"
    name = "divisible-dataset"
    kind = FIX
    frameworks = frozenset({KERAS})
    summary = ("Trim NumPy/tensor inputs of `fit`/`evaluate` to whole IPU executions (batch x replicas x "
               "steps per execution), pad those of `predict` and cut its answers back; split `validation_split` "
               "into whole batches.")
    rationale = (
        "Keras on the IPU rejects NumPy or tensor inputs whose length leaves a partial batch (\"The provided "
        "set of data has a partial batch\"), and the batches per epoch of each replica must be a multiple of "
        "`steps_per_execution` (Targeting the IPU from TensorFlow 2, \"Keras with IPUs\"); Graphcore's Keras "
        "tutorial trims its data for this (\"Preparing the dataset\"). On every port the inputs of "
        "`fit`/`evaluate`/`predict` (and `validation_data` arrays) are passed through one helper function, "
        "written once per file, that drops the last samples: a multiple of batch x replicas x steps per "
        "execution (which already counts the accumulated batches; with `auto`, batch x replicas x "
        "accumulation), or of the smallest execution when the data holds less than one (Keras shortens it); "
        "in a strategy without the IPU Keras extensions (a `train_step` override, IPU103), whose Keras runs a "
        "shorter last execution and accumulates nothing, of batch x replicas. "
        "The helpers tell a list of samples from a list of inputs as Keras does: a list whose first item (or "
        "that item's first item...) is a number or a string holds samples (labels kept as a Python list). "
        "Where even the smallest execution cannot be filled the helper raises a ValueError that says so, "
        "rather than give Keras an empty input. Inputs whose length is known to be a multiple (a Keras "
        "dataset's `load_data()`, a slice with int bounds, a part of scikit-learn's `train_test_split` of such arrays "
        "with sizes written out) are left alone; inputs of unknown length are "
        "trimmed, a no-op when they are whole executions. `validation_split` cuts the inputs again, into "
        "parts that need not be whole batches: the split is made before the call, as Keras makes it (the last "
        "samples validate), both parts are trimmed and `fit` gets `validation_data`. Trimming changes what is "
        "trained on (at most one execution's worth of samples), so every trimming is reported. `predict` must "
        "answer for every sample, in order, as code pairs its answers with labels: its inputs are padded "
        "instead, by repeating the last sample up to whole executions (a second helper), and what it returns "
        "is cut back to one answer per sample (a third); a single sample (`x[None]`, `np.expand_dims(x, 0)`) "
        "is padded the same way, except one made at each step of a loop or comprehension (either branch of a "
        "conditional expression, or the sample joined to the last answer along the steps), which gets "
        "`batch_size=1` (an input that grows along the steps each time round is reported: each new length "
        "compiles a new IPU program), as does one made in the call, which padding would run twice (one query "
        "text vectorized for a search, `predict(vectorize([query]))`), and so are the arrays of a dataset only `predict` reads, made in the same function "
        "as `tf.data.Dataset.from_tensor_slices(x)`, order-keeping methods (`map`, `cache`, `prefetch`) and "
        "`.batch(n)` (inline, in a variable, or step by step): `x` is padded to whole executions of `n` before it is "
        "sliced, as IPU105 drops a partial batch, and the answers are cut back to `len(x)`; when a function of the "
        "file makes the dataset from its parameters (`predict(make_ds(x_test, 64))`), the arguments are padded where "
        "`predict` calls it, provided its other callers only feed `fit`/`evaluate`. That reads the inputs twice, so it is done when they are variables, "
        "attributes, subscripts or such calls (and lists, tuples and dicts of them); other `predict` inputs (a call "
        "that loads or makes them, `load()[:500]`, `[np.arange(n), ...]`) are reported, never trimmed. "
        "Inputs (or `validation_data`, written in the call, held in a variable or returned by a function of the "
        "file) known to hold fewer samples than one execution of `fit`/`evaluate` are "
        "reported: trimming would leave nothing (for validation data batched by a `validation_batch_size` of its "
        "own, one execution of that). An input alone (`predict(x_test)`) counts as arrays when the "
        "same variable is an array input of another call, or is made by NumPy, scaled by a number, unpacked "
        "from what a function of the file returns as arrays or from one batch drawn from a dataset "
        "(`images, labels = next(iter(val_ds))`), or is a list comprehension of strings or numbers "
        "(`[t.decode() for t in batch]`, the samples of one input), or is an item of a tokenizer's encoding asked "
        "for arrays or tensors (`encoded[\"input_ids\"]` of `tokenizer(texts, return_tensors=\"np\")`); the "
        "encoding given whole (a `BatchEncoding`, whose `len` counts its keys) is reported, to be given as "
        "`dict(encoded)`. Inputs that are arrays by Keras' rules (labels are "
        "given) but that the port cannot tell are arrays are reported instead of trimmed, in `validation_data` "
        "too. A `validation_data` tuple (or list, which Keras takes alike) written in the call or in a branch of a "
        "conditional expression there (`(x_val, y_val) if validate else None`), held in a variable (a "
        "conditional too, its None kept), in an "
        "attribute of the class that reads it, or returned by a function of the file, is trimmed part by part "
        "where the call reads it; `batch_size=None` is Keras' default of 32. Validation data is trimmed to a "
        "multiple of `validation_batch_size` "
        "when the call gives one, as Keras batches it by that. A step count of a trimmed call rounded up for the partial batch (`steps_per_epoch=math.ceil(n / "
        "batch)`) becomes `n // batch` when an execution is one batch; any other count is reported, as it may "
        "ask for batches the trimmed inputs no longer hold. Models in a list or "
        "dict count like model variables: a loop over them (`for name, m in models.items()`) and an item of one "
        "(`models[0].evaluate(...)`). Inputs already trimmed are left alone, and so are "
        "inputs of unknown length in a file that already makes an `IPUStrategy` (unless a speed option is "
        "given). The helpers go after the imports at the top of the file, above the first module-level code "
        "that calls them, even when the script imports more further down (matplotlib before its plots). "
        "`train_on_batch`/`test_on_batch`/`predict_on_batch` on windows `x[i:i + n]` of a `range(..., n)` loop "
        "(or of a loop or comprehension over a count rounded up, `range(math.ceil(len(x) / n))` or "
        "`range((len(x) + n - 1) // n)`, reading `x[b * n:(b + 1) * n]`), "
        "directly, through a variable assigned the window or through an index that is one (`x[order[i:i + n]]`), "
        "are reported when the last window may be short (a range that stops a window short of the end, `len(x) - n + 1` "
        "or `len(x) - len(x) % n`, gives whole windows only): each call is one batch of what it is given, and a "
        "batch of another shape is another program for the IPU to compile. A model trained batch by batch (which "
        "IPU108 gives no `steps_per_execution`) and one that is never compiled (a GAN's generator that only "
        "predicts) run one batch per execution: their `predict` inputs are padded to whole batches, not to whole "
        "executions of the option. A model whose class (of the file) defines `fit`, `evaluate` or `predict` itself, "
        "without handing on to Keras's through `super()`, runs that method, not Keras's: its inputs are left alone "
        "and the call is reported, as what the method runs on the model is out of Keras's compiled functions. "
        "A model that fixes its batch to B (`batch_input_shape=[B, ...]`, `batch_shape`, `Input(..., batch_size=B)`, "
        "as a stateful RNN needs), made in place or by a function of the file given B (a literal, a constant, or a "
        "name bound to one), takes batches of B only: a call on its arrays that gives no `batch_size` gets "
        "`batch_size=B` and is trimmed or padded to B, so a text generator built for batch 1 predicts one seed "
        "alone; where B is not visible such a call is reported rather than trimmed or padded to Keras' 32."
    )
    examples = (
        # The model class defines `predict` itself: the call runs that method, not Keras's, so
        # nothing is padded, and the method is reported (it runs the model out of Keras's functions).
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            class Ranker(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.score = tf.keras.layers.Dense(3)

                def call(self, rows):
                    return self.score(rows)

                def predict(self, rows):
                    return np.argsort(self(rows).numpy(), axis=1)


            ranker = Ranker()
            order = ranker.predict(np.random.rand(10, 4).astype("float32"))
            """,
        ),
        # A list comprehension of strings is the samples of one input, padded like an array.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("reviews.keras")
            texts = [line.strip() for line in open("reviews.txt")]
            print(np.argmax(model.predict(texts), axis=-1))
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            model = tf.keras.models.load_model("reviews.keras")
            texts = [line.strip() for line in open("reviews.txt")]
            print(np.argmax(cut_to_samples(model.predict(pad_to_multiple(texts, 32)), texts), axis=-1))
            """),
        ),
        # A model rebuilt from its saved architecture (`model_from_json`, `Model.from_config`) and
        # given its weights is a Keras model like a loaded one: what it predicts is padded.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            with open("net.json") as f:
                rebuilt = tf.keras.models.model_from_json(f.read())
            rebuilt.load_weights("net.weights.h5")
            probe = np.zeros((4, 20), dtype="float32")
            print(rebuilt.predict(probe))
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            with open("net.json") as f:
                rebuilt = tf.keras.models.model_from_json(f.read())
            rebuilt.load_weights("net.weights.h5")
            probe = np.zeros((4, 20), dtype="float32")
            print(cut_to_samples(rebuilt.predict(pad_to_multiple(probe, 32)), probe))
            """),
        ),
        # Named inputs of a model with several: a dict of array variables, itself in a variable, is
        # padded input by input, as a list of them is.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("tickets.keras")
            titles = np.load("titles.npy")
            bodies = np.load("bodies.npy")
            inputs = {"title": titles, "body": bodies}
            priority, department = model.predict(inputs)
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            model = tf.keras.models.load_model("tickets.keras")
            titles = np.load("titles.npy")
            bodies = np.load("bodies.npy")
            inputs = {"title": titles, "body": bodies}
            priority, department = cut_to_samples(model.predict(pad_to_multiple(inputs, 32)), inputs)
            """),
        ),
        # The query set of an episode, unpacked from what a sampler's method returns when asked for a
        # split (it returns the dataset alone otherwise), for each sampler of a loop over them: arrays,
        # padded.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            class TaskSampler:
                def episode(self, ways, split=False):
                    support = np.random.rand(ways * 5, 8)
                    dataset = tf.data.Dataset.from_tensor_slices(support).batch(5)
                    if split:
                        return dataset, np.random.rand(ways, 8), np.arange(ways)
                    return dataset


            model = tf.keras.models.load_model("learner.keras")
            for sampler in (TaskSampler(), TaskSampler()):
                episode, query, labels = sampler.episode(5, split=True)
                accuracy = np.mean(model.predict(query).argmax(axis=1) == labels)
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            class TaskSampler:
                def episode(self, ways, split=False):
                    support = np.random.rand(ways * 5, 8)
                    dataset = tf.data.Dataset.from_tensor_slices(support).batch(5)
                    if split:
                        return dataset, np.random.rand(ways, 8), np.arange(ways)
                    return dataset


            model = tf.keras.models.load_model("learner.keras")
            for sampler in (TaskSampler(), TaskSampler()):
                episode, query, labels = sampler.episode(5, split=True)
                accuracy = np.mean(cut_to_samples(model.predict(pad_to_multiple(query, 32)), query).argmax(axis=1) == labels)
            """),
        ),
        # Images unpacked from one batch drawn from a dataset (`next(iter(...))`): arrays of a length the
        # port cannot read, padded like any array (not taken for a dataset made elsewhere).
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("flowers.keras")
            val_ds = tf.data.Dataset.from_tensor_slices((images, labels)).batch(200)
            sample_images, sample_labels = next(iter(val_ds))
            scores = model.predict(sample_images)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            model = tf.keras.models.load_model("flowers.keras")
            val_ds = tf.data.Dataset.from_tensor_slices((images, labels)).batch(200)
            sample_images, sample_labels = next(iter(val_ds))
            scores = cut_to_samples(model.predict(pad_to_multiple(sample_images, 32)), sample_images)
            """),
        ),
        # An override that hands on to Keras's `predict`: Keras batches the inputs, padded as usual.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            class Ranker(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.score = tf.keras.layers.Dense(3)

                def call(self, rows):
                    return self.score(rows)

                def predict(self, rows, **kwargs):
                    return super().predict(rows, **kwargs).argmax(axis=1)


            ranker = Ranker()
            rows = np.random.rand(10, 4).astype("float32")
            order = ranker.predict(rows)
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            class Ranker(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.score = tf.keras.layers.Dense(3)

                def call(self, rows):
                    return self.score(rows)

                def predict(self, rows, **kwargs):
                    return super().predict(rows, **kwargs).argmax(axis=1)


            ranker = Ranker()
            rows = np.random.rand(10, 4).astype("float32")
            order = cut_to_samples(ranker.predict(pad_to_multiple(rows, 32)), rows)
            """),
        ),
        # New sentences through the text layer of the input pipeline, in the call: a tensor of a
        # few samples, which the port cannot pad (it would run the layer twice): reported.
        Example(
            """\
            import tensorflow as tf

            vectorize = tf.keras.layers.TextVectorization(max_tokens=5000, output_sequence_length=20)
            model = tf.keras.models.load_model("reviews.keras")
            print(model.predict(vectorize(sentences)))
            """,
        ),
        # One batch of every sample (`batch_size=len(rows)`): no batch is partial, nothing to pad.
        Example(
            """\
import tensorflow as tf

model = tf.keras.models.load_model("scorer.keras")
scores = model.predict(rows, batch_size=len(rows))
""",
            reported=False,
        ),
        # A dataset only `predict` reads, made from arrays: padded before it is sliced (IPU105 gives
        # its `.batch()` `drop_remainder=True`), so that the submission has a row for every id.
        Example(
            """\
            import pandas as pd
            import tensorflow as tf

            test = pd.read_csv("test.csv")
            model = tf.keras.models.load_model("model.keras")
            test_ds = tf.data.Dataset.from_tensor_slices(test[columns].values).map(scale).batch(64)
            probabilities = model.predict(test_ds)
            pd.DataFrame({"id": test["id"], "target": probabilities[:, 0]}).to_csv("submission.csv")
            """,
            snippet("""\
            import pandas as pd
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            test = pd.read_csv("test.csv")
            model = tf.keras.models.load_model("model.keras")
            test_ds = tf.data.Dataset.from_tensor_slices(pad_to_multiple(test[columns].values, 64)).map(scale).batch(64)
            probabilities = cut_to_samples(model.predict(test_ds), test[columns].values)
            pd.DataFrame({"id": test["id"], "target": probabilities[:, 0]}).to_csv("submission.csv")
            """),
        ),
        # A pandas table itself, its id column taken out: an array to Keras, padded the same way.
        Example(
            """\
            import pandas as pd
            import tensorflow as tf

            test = pd.read_csv("test.csv")
            ids = test.pop("id")
            model = tf.keras.models.load_model("model.keras")
            scores = model.predict(test, batch_size=64)
            """,
            snippet("""\
            import pandas as pd
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            test = pd.read_csv("test.csv")
            ids = test.pop("id")
            model = tf.keras.models.load_model("model.keras")
            scores = cut_to_samples(model.predict(pad_to_multiple(test, 64), batch_size=64), test)
            """),
        ),
        # A column of a pandas table (`test["text"]`) is an array, not a dataset a dict holds: padded,
        # so that every row of the test table gets its answer.
        Example(
            """\
            import pandas as pd
            import tensorflow as tf

            test = pd.read_csv("test.csv")
            model = tf.keras.models.load_model("model.keras")
            test["score"] = model.predict(test["reading"])
            """,
            snippet("""\
            import pandas as pd
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            test = pd.read_csv("test.csv")
            model = tf.keras.models.load_model("model.keras")
            test["score"] = cut_to_samples(model.predict(pad_to_multiple(test["reading"], 32)),
                                           test["reading"])
            """),
        ),
        # A loaded model that is not compiled again keeps no gradient accumulation: whole batches
        # are enough, and 100 samples are 10 of them.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x_test, y_test = np.zeros((100, 8), "float32"), np.zeros((100, 1), "float32")
            model = tf.keras.models.load_model("model.keras")
            model.evaluate(x_test, y_test, batch_size=10)
            """,
            reported=False,
            options={"gradient_accumulation": 4},
        ),
        # Labels given as `y.astype("int32")` (IPU106 writes it) hold the samples of `y`: 60000
        # digits are whole batches of 32, so a second port leaves the call alone as the first did.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
            images = np.reshape(x_train / 255.0, (-1, 28, 28, 1))
            model = tf.keras.models.load_model("digits.keras")
            model.evaluate(images, y_train.astype("int32"), batch_size=32)
            """,
            reported=False,
        ),
        # ... nor do the members of an ensemble loaded from files, run one by one in a loop.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x_test, y_test = np.zeros((100, 8), "float32"), np.zeros((100, 1), "float32")
            members = [tf.keras.models.load_model(f"fold_{k}.keras") for k in range(5)]
            print([member.evaluate(x_test, y_test, batch_size=10) for member in members])
            """,
            reported=False,
            options={"gradient_accumulation": 4, "steps_per_execution": 4},
        ),
        # The same built where `predict` reads it, from file names and their labels.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("model.keras")
            scores = model.predict(tf.data.Dataset.from_tensor_slices((paths, labels)).map(load).batch(BATCH))
            print(np.mean(scores.argmax(axis=1) == labels))
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            model = tf.keras.models.load_model("model.keras")
            scores = cut_to_samples(model.predict(tf.data.Dataset.from_tensor_slices(pad_to_multiple((paths, labels), BATCH)).map(load).batch(BATCH)),
                                    (paths, labels))
            print(np.mean(scores.argmax(axis=1) == labels))
            """),
        ),
        # A pipeline built step by step in a function: followed back to the arrays it slices.
        Example(
            """\
            import tensorflow as tf


            def embed(model, rows, batch_size=64):
                ds = tf.data.Dataset.from_tensor_slices(rows)
                ds = ds.map(normalize)
                ds = ds.batch(batch_size)
                return model.predict(ds)


            encoder = tf.keras.models.load_model("encoder.keras")
            vectors = embed(encoder, table)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            def embed(model, rows, batch_size=64):
                ds = tf.data.Dataset.from_tensor_slices(pad_to_multiple(rows, batch_size))
                ds = ds.map(normalize)
                ds = ds.batch(batch_size)
                return cut_to_samples(model.predict(ds), rows)


            encoder = tf.keras.models.load_model("encoder.keras")
            vectors = embed(encoder, table)
            """),
        ),
        # A dataset predicted on again in a timing loop and under a flag: each call is padded and
        # cut back, as the dataset is bound once before them and not again.
        Example(
            """\
            import time

            import tensorflow as tf

            model = tf.keras.models.load_model("model.keras")
            ds = tf.data.Dataset.from_tensor_slices(paths).map(load).batch(32)
            start = time.time()
            for _ in range(5):
                model.predict(ds)
            if save_scores:
                scores = model.predict(ds)
            """,
            snippet("""\
            import time

            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            model = tf.keras.models.load_model("model.keras")
            ds = tf.data.Dataset.from_tensor_slices(pad_to_multiple(paths, 32)).map(load).batch(32)
            start = time.time()
            for _ in range(5):
                cut_to_samples(model.predict(ds), paths)
            if save_scores:
                scores = cut_to_samples(model.predict(ds), paths)
            """),
        ),
        # Rebound in the loop before it is predicted on again: the padded samples are not the ones
        # each `predict` reads, so nothing is padded.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("model.keras")
            ds = tf.data.Dataset.from_tensor_slices(paths).map(load).batch(32)
            for shard in shards:
                print(model.predict(ds))
                ds = tf.data.Dataset.from_tensor_slices(shard).batch(32)
            """,
            reported=False,
        ),
        # Arrays a loader of the file draws from NumPy's random generator (`rng.normal(...)`):
        # arrays, padded for `predict` like any other.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            def make_rows(count, seed):
                rng = np.random.default_rng(seed)
                return rng.normal(size=(count, 6)).astype("float32"), rng.integers(0, 2, count)


            model = tf.keras.models.load_model("model.keras")
            rows, _ = make_rows(100, 1)
            print(model.predict(rows))
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            def make_rows(count, seed):
                rng = np.random.default_rng(seed)
                return rng.normal(size=(count, 6)).astype("float32"), rng.integers(0, 2, count)


            model = tf.keras.models.load_model("model.keras")
            rows, _ = make_rows(100, 1)
            print(cut_to_samples(model.predict(pad_to_multiple(rows, 32)), rows))
            """),
        ),
        # Pairs a method of the script's loader returns, reshaped, for a model and a loader handed to
        # a scoring function (one-shot tasks of a siamese net): arrays, padded like any other.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            class Loader:
                def __init__(self, data):
                    self.data = data

                def task(self, ways):
                    support = self.data[np.arange(ways), 1]
                    support = support.reshape(ways, 8, 8, 1)
                    return [np.repeat(support[:1], ways, axis=0), support], np.arange(ways) == 0


            def oneshot(model, loader, ways):
                inputs, targets = loader.task(ways)
                return np.argmax(model.predict(inputs)) == np.argmax(targets)


            siamese = tf.keras.models.load_model("siamese.keras")
            print(oneshot(siamese, Loader(np.load("glyphs.npy")), 20))
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            class Loader:
                def __init__(self, data):
                    self.data = data

                def task(self, ways):
                    support = self.data[np.arange(ways), 1]
                    support = support.reshape(ways, 8, 8, 1)
                    return [np.repeat(support[:1], ways, axis=0), support], np.arange(ways) == 0


            def oneshot(model, loader, ways):
                inputs, targets = loader.task(ways)
                return np.argmax(cut_to_samples(model.predict(pad_to_multiple(inputs, 32)), inputs)) == np.argmax(targets)


            siamese = tf.keras.models.load_model("siamese.keras")
            print(oneshot(siamese, Loader(np.load("glyphs.npy")), 20))
            """),
        ),
        # A query repeated against a gallery, written out in the call: the call runs once, padded,
        # and the gallery, read again, tells how many predictions to keep.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            siamese = tf.keras.models.load_model("siamese.keras")
            gallery = np.load("gallery.npy")
            query = np.load("query.npy")
            scores = siamese.predict([np.repeat(query[None], len(gallery), axis=0), gallery])
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            siamese = tf.keras.models.load_model("siamese.keras")
            gallery = np.load("gallery.npy")
            query = np.load("query.npy")
            scores = cut_to_samples(siamese.predict(pad_to_multiple([np.repeat(query[None], len(gallery), axis=0), gallery], 32)),
                                    gallery)
            """),
        ),
        # The same draw from an object that is not NumPy's generator (a sampler of the script, which
        # may give a dataset): not taken for arrays.
        Example(
            """\
            import tensorflow as tf


            def make_rows(sampler):
                return sampler.normal(size=(100, 6))


            model = tf.keras.models.load_model("model.keras")
            print(model.predict(make_rows(Sampler())))
            """,
            reported=False,
        ),
        # Validation arrays given alone (no tuple) with inputs alone: Keras takes them as the inputs,
        # labels inside (Hugging Face's dicts), and batches them as the inputs: trimmed whole.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            data = np.load("squad.npz")
            train_set = {"input_ids": data["train_ids"][:], "start_positions": data["train_starts"][:]}
            validation_set = {"input_ids": data["val_ids"][:], "start_positions": data["val_starts"][:]}
            model = tf.keras.models.load_model("reader.keras")
            model.fit(train_set, validation_data=validation_set, epochs=1)
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            data = np.load("squad.npz")
            train_set = {"input_ids": data["train_ids"][:], "start_positions": data["train_starts"][:]}
            validation_set = {"input_ids": data["val_ids"][:], "start_positions": data["val_starts"][:]}
            model = tf.keras.models.load_model("reader.keras")
            model.fit(trim_to_multiple(train_set, 32),
                      validation_data=trim_to_multiple(validation_set, 32), epochs=1)
            """),
        ),
        # An episode drawn anew each time round the loop by a call (N classes x K shots): trimmed, but
        # a draw of fewer than 32 samples cannot be, so the call is left to a person to give a batch size.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("learner.keras")
            for episode in range(100):
                x_support, y_support = sample_episode(classes, 5, 1)
                model.fit(x_support, y_support, epochs=1, verbose=0)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            model = tf.keras.models.load_model("learner.keras")
            for episode in range(100):
                x_support, y_support = sample_episode(classes, 5, 1)
                model.fit(trim_to_multiple(x_support, 32), trim_to_multiple(y_support, 32), epochs=1,
                          verbose=0)
            """),
        ),
        # Keras 2's `fit_generator` hands its validation arrays on to `fit`, which batches them by 32:
        # trimmed as `fit`'s (its generator, and the steps after it, are no arrays: IPU151 reports it).
        Example(
            """\
            import numpy as np
            from keras.models import load_model

            x_val, y_val = np.load("val_x.npy"), np.load("val_y.npy")
            model = load_model("net.h5")
            model.fit_generator(batches(x_train, y_train, 64), 100, epochs=3, validation_data=(x_val, y_val))
            """,
            snippet("""\
            import numpy as np
            from keras.models import load_model


            """) + _examples_helpers("trim") +
            snippet("""\


            x_val, y_val = np.load("val_x.npy"), np.load("val_y.npy")
            model = load_model("net.h5")
            model.fit_generator(batches(x_train, y_train, 64), 100, epochs=3,
                                validation_data=(trim_to_multiple(x_val, 32), trim_to_multiple(y_val, 32)))
            """),
        ),
        # Validation data held in a variable (or returned by a function of the file) known to hold fewer
        # samples than one execution: trimming would leave none and the helper would raise where `fit`
        # reads it, so the call is reported, not trimmed.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("net.keras")
            x = np.random.rand(256, 8)
            y = np.random.rand(256, 1)
            held_out = (x[-20:], y[-20:])
            model.fit(x, y, batch_size=32, validation_data=held_out)
            """,
        ),
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            def validation_split():
                return np.random.rand(12, 8), np.random.rand(12, 1)


            def train():
                model = tf.keras.models.load_model("net.keras")
                x, y = np.random.rand(256, 8), np.random.rand(256, 1)
                model.fit(x, y, batch_size=16, validation_data=validation_split())
            """,
        ),
        # Parts of scikit-learn's `train_test_split` of arrays of known length are counted as it counts
        # them (test samples rounded up): 26 validation samples cannot fill a batch of 32, reported...
        Example(
            """\
            import numpy as np
            import tensorflow as tf
            from sklearn.model_selection import train_test_split

            model = tf.keras.models.load_model("net.keras")
            x, y = np.random.rand(250, 8), np.random.rand(250, 1)
            x_train, x_val, y_train, y_val = train_test_split(x, y, test_size=26)
            model.fit(x_train, y_train, batch_size=32, validation_data=(x_val, y_val))
            """,
        ),
        # ...and parts of whole batches (224 and 32 of 256) are left alone.
        Example(
            """\
            import numpy as np
            import tensorflow as tf
            from sklearn.model_selection import train_test_split

            model = tf.keras.models.load_model("net.keras")
            x, y = np.random.rand(256, 8), np.random.rand(256, 1)
            x_train, x_val, y_train, y_val = train_test_split(x, y, test_size=0.125, random_state=0)
            model.fit(x_train, y_train, batch_size=32, validation_data=(x_val, y_val))
            """,
            reported=False,
        ),
        # The same validation data given a `validation_batch_size` of its own: it is that which must divide it.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("net.keras")
            x = np.random.rand(256, 8)
            y = np.random.rand(256, 1)
            model.fit(x, y, batch_size=32, validation_data=(x[:30], y[:30]), validation_batch_size=64)
            """,
        ),
        # A dataset one of Keras' readers made, given a `batch_size` as arrays would be (Keras ignores
        # it for a dataset): not trimmed, a dataset has no items to slice (IPU105 rebatches it).
        Example(
            """\
            import tensorflow as tf

            reviews = tf.keras.utils.text_dataset_from_directory("reviews", batch_size=64)
            reviews = reviews.map(lambda text, label: (tf.strings.length(text), label))
            model = tf.keras.models.load_model("reviews.keras")
            model.evaluate(reviews, batch_size=64)
            """,
            reported=False,
        ),
        # A model a class of the file holds (`self.model`, made by a method of the class), run on
        # an instance with no argument only Keras takes: still a Keras model's `evaluate`.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            class Regressor:
                def __init__(self):
                    self.model = self._build()

                def _build(self):
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(optimizer="adam", loss="mse")
                    return model


            regressor = Regressor()
            x_test = np.zeros((100, 4), "float32")
            print(regressor.model.evaluate(x_test, x_test[:, :1]))
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            class Regressor:
                def __init__(self):
                    self.model = self._build()

                def _build(self):
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(optimizer="adam", loss="mse")
                    return model


            regressor = Regressor()
            x_test = np.zeros((100, 4), "float32")
            print(regressor.model.evaluate(trim_to_multiple(x_test, 32),
                                           trim_to_multiple(x_test[:, :1], 32)))
            """),
        ),
        # The same attribute holding a scikit-learn model: its `predict` is no Keras call.
        Example(
            """\
            import numpy as np
            from sklearn.linear_model import LinearRegression
            import tensorflow as tf


            class Baseline:
                def __init__(self):
                    self.model = LinearRegression()


            baseline = Baseline()
            x_test = np.zeros((100, 4), "float32")
            print(baseline.model.predict(x_test))
            encoder = tf.keras.models.load_model("encoder.keras")
            """,
            reported=False,
        ),
        # A function of the file makes it from its parameters, for `fit` and for `predict`: the
        # arguments are padded where `predict` reads it, with the batch size that call gives.
        Example(
            """\
            import tensorflow as tf


            def make_batches(images, labels, batch_size=BATCH):
                return tf.data.Dataset.from_tensor_slices((images, labels)).map(augment).batch(batch_size)


            model = tf.keras.models.load_model("model.keras")
            model.fit(make_batches(x_train, y_train), epochs=3)
            scores = model.predict(make_batches(x_test, y_test, 50))
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            def make_batches(images, labels, batch_size=BATCH):
                return tf.data.Dataset.from_tensor_slices((images, labels)).map(augment).batch(batch_size)


            model = tf.keras.models.load_model("model.keras")
            model.fit(make_batches(x_train, y_train), epochs=3)
            scores = cut_to_samples(model.predict(make_batches(pad_to_multiple(x_test, 50), pad_to_multiple(y_test, 50), 50)),
                                    x_test)
            """),
        ),
        # Shuffled before batching (also in a branch), or read by `evaluate` too: a repeated sample
        # would be answered anywhere, or counted in the loss; IPU105 reports what the dropped batch
        # costs instead.
        Example(
            """\
            import tensorflow as tf


            def score(model, rows, augment):
                ds = tf.data.Dataset.from_tensor_slices(rows)
                if augment:
                    ds = ds.shuffle(1000)
                ds = ds.batch(32)
                return model.predict(ds)


            model = tf.keras.models.load_model("model.keras")
            print(score(model, x_test, False))
            shuffled = model.predict(tf.data.Dataset.from_tensor_slices(x_test).shuffle(100).batch(32))
            held_out = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(32)
            model.evaluate(held_out)
            guesses = model.predict(held_out)
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow as tf


            def main():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.fit(x_train, y_train, batch_size=64, epochs=3)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            def main():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.fit(trim_to_multiple(x_train, 1024, 128), trim_to_multiple(y_train, 1024, 128),
                          batch_size=64, epochs=3)
            """),
            options={"steps_per_execution": 8, "ipus": 2},
        ),
        # A batch size read from a configuration: the multiple is written as the script writes it,
        # in parentheses only where the multiplication by the replicas needs them.
        Example(
            """\
            import json
            import tensorflow as tf

            options = json.load(open("options.json"))
            classifier = tf.keras.models.load_model(options["model"])
            history = classifier.fit(x_train, y_train, batch_size=options["batch"] * options["per_batch"])
            print(classifier.evaluate(x_test, y_test, batch_size=options["batch"]))
            """,
            snippet("""\
            import json
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            options = json.load(open("options.json"))
            classifier = tf.keras.models.load_model(options["model"])
            history = classifier.fit(trim_to_multiple(x_train, options["batch"] * options["per_batch"]),
                                     trim_to_multiple(y_train, options["batch"] * options["per_batch"]),
                                     batch_size=options["batch"] * options["per_batch"])
            print(classifier.evaluate(trim_to_multiple(x_test, options["batch"]),
                                      trim_to_multiple(y_test, options["batch"]),
                                      batch_size=options["batch"]))
            """),
        ),
        Example(
            """\
            import yaml
            from tensorflow import keras

            settings = yaml.safe_load(open("train.yaml"))
            model = keras.models.load_model("net.keras")
            model.fit(features, labels, batch_size=settings["train"]["batch_size"], epochs=3)
            model.evaluate(features, labels, batch_size=settings["train"]["batch_size"] // 2)
            """,
            snippet("""\
            import yaml
            from tensorflow import keras


            """) + _examples_helpers("trim") +
            snippet("""\


            settings = yaml.safe_load(open("train.yaml"))
            model = keras.models.load_model("net.keras")
            model.fit(trim_to_multiple(features, settings["train"]["batch_size"] * 2),
                      trim_to_multiple(labels, settings["train"]["batch_size"] * 2),
                      batch_size=settings["train"]["batch_size"], epochs=3)
            model.evaluate(trim_to_multiple(features, (settings["train"]["batch_size"] // 2) * 2),
                           trim_to_multiple(labels, (settings["train"]["batch_size"] // 2) * 2),
                           batch_size=settings["train"]["batch_size"] // 2)
            """),
            options={"ipus": 2},
        ),
        Example(
            """\
            from tensorflow import keras

            BATCH = 32
            model = keras.models.load_model("net.h5")
            model.evaluate(x=images, y=labels, batch_size=BATCH)
            """,
            snippet("""\
            from tensorflow import keras


            """) + _examples_helpers("trim") +
            snippet("""\


            BATCH = 32
            model = keras.models.load_model("net.h5")
            model.evaluate(x=trim_to_multiple(images, BATCH * 4), y=trim_to_multiple(labels, BATCH * 4),
                           batch_size=BATCH)
            """),
            options={"ipus": 4},
        ),
        Example(
            """\
            import tensorflow as tf

            (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
            model.fit(x_train, y_train, batch_size=128, epochs=2)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
            model.fit(trim_to_multiple(x_train, 128), trim_to_multiple(y_train, 128), batch_size=128,
                      epochs=2)
            """),
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.fit(features, labels, batch_size=64, validation_split=0.2)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim", "split") +
            snippet("""\


            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            (features_fit, labels_fit), (features_val, labels_val) = split_validation_to_multiple(
                (features, labels), 0.2, 64)
            model.fit(features_fit, labels_fit, batch_size=64, validation_data=(features_val, labels_val))
            """),
        ),
        # A split given by a variable may be 0: the helper then gives no validation arrays, and `fit`
        # gets `validation_data=None`, as Keras validates on nothing. Labels of `None` stay `None`.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("scorer.keras")
            model.fit(rows, flags, batch_size=64, validation_split=args.val_split)
            autoencoder = tf.keras.models.load_model("autoencoder.keras")
            autoencoder.fit(images, None, batch_size=64, validation_split=0.1)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim", "split") +
            snippet("""\


            model = tf.keras.models.load_model("scorer.keras")
            (rows_fit, flags_fit), validation_data = split_validation_to_multiple(
                (rows, flags), args.val_split, 64)
            model.fit(rows_fit, flags_fit, batch_size=64, validation_data=validation_data)
            autoencoder = tf.keras.models.load_model("autoencoder.keras")
            (images_fit,), (images_val,) = split_validation_to_multiple((images,), 0.1, 64)
            autoencoder.fit(images_fit, None, batch_size=64, validation_data=(images_val, None))
            """),
        ),
        # Full-batch node classification, `batch_size=len(x)`: each part of the split, and validation data,
        # is one whole batch of its own; the batch of all the samples is whole, and nothing is trimmed.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("node_classifier.keras")
            model.fit(x=train_nodes, y=train_labels, batch_size=len(train_nodes), validation_split=0.1, epochs=100)
            model.fit(train_nodes, train_labels, batch_size=len(train_nodes), epochs=100)
            model.fit(train_nodes, train_labels, batch_size=len(train_nodes), validation_data=(val_nodes, val_labels))
            model.fit(features, labels, batch_size=features.shape[0], validation_split=0.2)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim", "split") +
            snippet("""\


            model = tf.keras.models.load_model("node_classifier.keras")
            (train_nodes_fit, train_labels_fit), (train_nodes_val, train_labels_val) = split_validation_to_multiple(
                (train_nodes, train_labels), 0.1, 1)
            model.fit(x=train_nodes_fit, y=train_labels_fit, batch_size=len(train_nodes_fit),
                      validation_data=(train_nodes_val, train_labels_val), epochs=100,
                      validation_batch_size=len(train_nodes_val))
            model.fit(train_nodes, train_labels, batch_size=len(train_nodes), epochs=100)
            model.fit(train_nodes, train_labels, batch_size=len(train_nodes),
                      validation_data=(val_nodes, val_labels), validation_batch_size=len(val_nodes))
            (features_fit, labels_fit), (features_val, labels_val) = split_validation_to_multiple(
                (features, labels), 0.2, 1)
            model.fit(features_fit, labels_fit, batch_size=len(features_fit),
                      validation_data=(features_val, labels_val), validation_batch_size=len(features_val))
            """),
        ),
        # `validation_split=0.0` splits nothing: the inputs are trimmed as if it were not given.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x = np.random.rand(1000, 8).astype("float32")
            model = tf.keras.models.load_model("scorer.keras")
            model.fit(x, flags, batch_size=64, validation_split=0.0)
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            x = np.random.rand(1000, 8).astype("float32")
            model = tf.keras.models.load_model("scorer.keras")
            model.fit(trim_to_multiple(x, 64), trim_to_multiple(flags, 64), batch_size=64,
                      validation_split=0.0)
            """),
        ),
        # Named inputs held in one variable: the helper counts the samples of the first input and
        # cuts every input at the same sample.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("pairs.keras")
            inputs = {"left": left_rows, "right": right_rows}
            model.fit(inputs, matches, batch_size=32, validation_split=0.2)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim", "split") +
            snippet("""\


            model = tf.keras.models.load_model("pairs.keras")
            inputs = {"left": left_rows, "right": right_rows}
            (inputs_fit, matches_fit), (inputs_val, matches_val) = split_validation_to_multiple(
                (inputs, matches), 0.2, 32)
            model.fit(inputs_fit, matches_fit, batch_size=32, validation_data=(inputs_val, matches_val))
            """),
        ),
        # Several inputs written in the call, as a seq2seq or two-tower model takes them: a list (or
        # tuple) of variables is split into parts of the same shape, unpacked into a name for each
        # part; a dict, whose keys an assignment cannot unpack, into one variable for each part.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("translator.keras")
            model.fit([source_tokens, shifted_tokens], target_tokens, batch_size=64, validation_split=0.2)
            ranker = tf.keras.models.load_model("ranker.keras")
            ranker.fit({"query": queries, "doc": docs}, relevance, batch_size=32, validation_split=0.1)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim", "split") +
            snippet("""\


            model = tf.keras.models.load_model("translator.keras")
            ([source_tokens_fit, shifted_tokens_fit], target_tokens_fit), ([source_tokens_val, shifted_tokens_val], target_tokens_val) = split_validation_to_multiple(
                ([source_tokens, shifted_tokens], target_tokens), 0.2, 64)
            model.fit([source_tokens_fit, shifted_tokens_fit], target_tokens_fit, batch_size=64,
                      validation_data=([source_tokens_val, shifted_tokens_val], target_tokens_val))
            ranker = tf.keras.models.load_model("ranker.keras")
            (inputs_fit, relevance_fit), (inputs_val, relevance_val) = split_validation_to_multiple(
                ({"query": queries, "doc": docs}, relevance), 0.1, 32)
            ranker.fit(inputs_fit, relevance_fit, batch_size=32,
                       validation_data=(inputs_val, relevance_val))
            """),
        ),
        # Sample weights are trimmed with the inputs they weigh, also when scikit-learn computes them in
        # the call and when `evaluate` is given them by position (its fifth argument).
        Example(
            """\
            import tensorflow as tf
            from sklearn.utils.class_weight import compute_sample_weight

            model = tf.keras.models.load_model("triage.keras")
            model.fit(x_train, y_train, batch_size=64, sample_weight=compute_sample_weight("balanced", y_train))
            print(model.evaluate(x_test, y_test, 64, 0, compute_sample_weight("balanced", y_test)))
            """,
            snippet("""\
            import tensorflow as tf
            from sklearn.utils.class_weight import compute_sample_weight


            """) + _examples_helpers("trim") +
            snippet("""\


            model = tf.keras.models.load_model("triage.keras")
            model.fit(trim_to_multiple(x_train, 64), trim_to_multiple(y_train, 64), batch_size=64,
                      sample_weight=trim_to_multiple(compute_sample_weight("balanced", y_train), 64))
            print(model.evaluate(trim_to_multiple(x_test, 64), trim_to_multiple(y_test, 64), 64, 0,
                                 trim_to_multiple(compute_sample_weight("balanced", y_test), 64)))
            """),
        ),
        # Inputs that are not variables (parts of one array, labels one-hot encoded in the call, weights
        # computed there) are split whole, each into one variable for each part, named by its place.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("matcher.keras")
            model.fit([pairs[:, 0], pairs[:, 1]], tf.keras.utils.to_categorical(labels), batch_size=64,
                      sample_weight=np.where(labels == 0, 1.0, 3.0), validation_split=0.2)
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("trim", "split") +
            snippet("""\


            model = tf.keras.models.load_model("matcher.keras")
            (inputs_fit, targets_fit, sample_weights_fit), (inputs_val, targets_val, sample_weights_val) = split_validation_to_multiple(
                ([pairs[:, 0], pairs[:, 1]],
                 tf.keras.utils.to_categorical(labels),
                 np.where(labels == 0, 1.0, 3.0)),
                0.2, 64)
            model.fit(inputs_fit, targets_fit, batch_size=64,
                      sample_weight=sample_weights_fit,
                      validation_data=(inputs_val, targets_val, sample_weights_val))
            """),
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("net.keras")
            print(model.evaluate(x_test, y_test))
            scores = model.predict(x_test)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim", "pad", "cut") +
            snippet("""\


            model = tf.keras.models.load_model("net.keras")
            print(model.evaluate(trim_to_multiple(x_test, 32), trim_to_multiple(y_test, 32)))
            scores = cut_to_samples(model.predict(pad_to_multiple(x_test, 32)), x_test)
            """),
        ),
        # A helper given a part of the trained model (`vae.decoder`) predicts with that model.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            def decode_grid(decoder, n):
                latents = np.array([[x, y] for x in np.linspace(-1, 1, n) for y in np.linspace(-1, 1, n)])
                return decoder.predict(latents)


            vae = tf.keras.models.load_model("vae.keras")
            images = decode_grid(vae.decoder, 10)
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            def decode_grid(decoder, n):
                latents = np.array([[x, y] for x in np.linspace(-1, 1, n) for y in np.linspace(-1, 1, n)])
                return cut_to_samples(decoder.predict(pad_to_multiple(latents, 32)), latents)


            vae = tf.keras.models.load_model("vae.keras")
            images = decode_grid(vae.decoder, 10)
            """),
        ),
        # One sample: padded to a batch, and the one answer kept.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("digits.h5")
            image = np.asarray(picture, dtype="float32") / 255.0
            image = np.expand_dims(image, 0)
            print(model.predict(image).argmax())
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            model = tf.keras.models.load_model("digits.h5")
            image = np.asarray(picture, dtype="float32") / 255.0
            image = np.expand_dims(image, 0)
            print(cut_to_samples(model.predict(pad_to_multiple(image, 32)), image).argmax())
            """),
        ),
        # One sample each time round a decoding loop (every value of `tokens` is one sample, and
        # Keras takes as many samples from each input as from `tokens`): a batch of one, not 32.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            decoder = tf.keras.models.load_model("decoder.keras")
            tokens = np.zeros((1, 1), dtype="int32")
            for step in range(40):
                logits, state = decoder.predict([tokens, state])
                tokens = np.expand_dims([int(logits[0, -1].argmax())], 0)
            """,
            """\
            import numpy as np
            import tensorflow as tf

            decoder = tf.keras.models.load_model("decoder.keras")
            tokens = np.zeros((1, 1), dtype="int32")
            for step in range(40):
                logits, state = decoder.predict([tokens, state], batch_size=1)
                tokens = np.expand_dims([int(logits[0, -1].argmax())], 0)
            """,
        ),
        # One state made a sample (`np.reshape(state, [1, n])`) in an agent's method that the episode
        # loop calls at each step: a batch of one each time, as in a loop of its own, not 32.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            class Agent:
                def __init__(self):
                    self.q_net = tf.keras.models.load_model("q.keras")

                def act(self, state):
                    q_values = self.q_net.predict(np.reshape(state, [1, 4]), verbose=0)
                    return int(q_values[0].argmax())


            agent = Agent()
            state = np.zeros(4, "float32")
            for step in range(200):
                state = np.roll(state, agent.act(state))
            """,
            """\
            import numpy as np
            import tensorflow as tf


            class Agent:
                def __init__(self):
                    self.q_net = tf.keras.models.load_model("q.keras")

                def act(self, state):
                    q_values = self.q_net.predict(np.reshape(state, [1, 4]), verbose=0, batch_size=1)
                    return int(q_values[0].argmax())


            agent = Agent()
            state = np.zeros(4, "float32")
            for step in range(200):
                state = np.roll(state, agent.act(state))
            """,
        ),
        # The agent's method predicts on the state it is given, and each call (the only uses of the
        # method) gives it one sample: reshaped before the episode's loop and at each step of it.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            class Agent:
                def __init__(self):
                    self.q_net = tf.keras.models.load_model("q.keras")

                def act(self, state):
                    return int(self.q_net.predict(state, verbose=0)[0].argmax())


            agent = Agent()
            for episode in range(10):
                state = np.reshape(env.reset(), [1, 4])
                for step in range(200):
                    observation, reward, done = env.step(agent.act(state))
                    next_state = np.reshape(observation, [1, 4])
                    state = next_state
            """,
            """\
            import numpy as np
            import tensorflow as tf


            class Agent:
                def __init__(self):
                    self.q_net = tf.keras.models.load_model("q.keras")

                def act(self, state):
                    return int(self.q_net.predict(state, verbose=0, batch_size=1)[0].argmax())


            agent = Agent()
            for episode in range(10):
                state = np.reshape(env.reset(), [1, 4])
                for step in range(200):
                    observation, reward, done = env.step(agent.act(state))
                    next_state = np.reshape(observation, [1, 4])
                    state = next_state
            """,
        ),
        # Transitions drawn from a replay buffer whose every item the file appends holds one state
        # in each place (made a sample by the episode's loop): each `predict` and the `fit` on one
        # transition get `batch_size=1` (trimmed to the default 32, the `fit` would keep nothing).
        Example(_REPLAY.format(state="np.reshape(env.reset(), [1, 4])", predict="", fit=""),
                _REPLAY.format(state="np.reshape(env.reset(), [1, 4])", predict=", batch_size=1",
                               fit=", batch_size=1")),
        # The same buffer with the first state of each episode stored as the environment gave it: a
        # transition of a size the port cannot read. Its `predict` is padded, as any array of unknown
        # length; its `fit` is reported, as trimmed to whole batches one transition would keep nothing.
        Example(_REPLAY.format(state="env.reset()", predict="", fit=""),
                _REPLAY.format(state="env.reset()", predict="", fit="").replace(
                    "import tensorflow as tf\n", "import tensorflow as tf\n\n\n" + _examples_helpers("pad", "cut"), 1
                ).replace("self.q_net.predict(state, verbose=0)", "cut_to_samples(self.q_net.predict(pad_to_multiple("
                          "state, 32), verbose=0),\n                                    state)").replace(
                    "predict(next_state, verbose=0)", "predict(next_state, verbose=0, batch_size=1)")),
        # The items of a Python list of arrays, one pair each time round: arrays of a length the port
        # cannot read, padded as any other (not taken for datasets).
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            critic = tf.keras.models.load_model("critic.keras")
            pairs = [(np.random.rand(5, 4), np.random.rand(5, 4)) for _ in range(4)]
            for before, after in pairs:
                gain = critic.predict(after).max()
                gain -= critic.predict(before).max()
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            critic = tf.keras.models.load_model("critic.keras")
            pairs = [(np.random.rand(5, 4), np.random.rand(5, 4)) for _ in range(4)]
            for before, after in pairs:
                gain = cut_to_samples(critic.predict(pad_to_multiple(after, 32)), after).max()
                gain -= cut_to_samples(critic.predict(pad_to_multiple(before, 32)), before).max()
            """),
        ),
        # The items of a Python list of arrays whose length is written out, each fewer than one
        # execution: trimmed, each would keep nothing (a ValueError), so `fit` is reported instead.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("m.keras")
            episodes = [(np.random.rand(12, 4), np.random.rand(12, 1)) for _ in range(5)]
            for states, returns in episodes:
                model.fit(states, returns, epochs=2, verbose=0)
            """,
        ),
        # The same items, of 40 samples each: trimmed to the 32 that fill an execution.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("m.keras")
            for states, returns in [(np.zeros((40, 4)), np.zeros((40, 1))), (np.ones((40, 4)), np.ones((40, 1)))]:
                model.fit(states, returns, verbose=0)
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            model = tf.keras.models.load_model("m.keras")
            for states, returns in [(np.zeros((40, 4)), np.zeros((40, 1))), (np.ones((40, 4)), np.ones((40, 1)))]:
                model.fit(trim_to_multiple(states, 32), trim_to_multiple(returns, 32), verbose=0)
            """),
        ),
        # The parts NumPy splits an array into: of lengths the port does not count, padded.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("m.keras")
            for part in np.array_split(np.load("rows.npy"), 7):
                print(model.predict(part).mean())
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            model = tf.keras.models.load_model("m.keras")
            for part in np.array_split(np.load("rows.npy"), 7):
                print(cut_to_samples(model.predict(pad_to_multiple(part, 32)), part).mean())
            """),
        ),
        # A function of the file that predicts on what each call gives it, called on the items of a
        # Python list of arrays: padded as where the loop itself predicts.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("m.keras")


            def score(rows):
                return model.predict(rows, verbose=0)


            for piece in [np.random.rand(n, 4) for n in (3, 7)]:
                print(score(piece).shape)
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            model = tf.keras.models.load_model("m.keras")


            def score(rows):
                return cut_to_samples(model.predict(pad_to_multiple(rows, 32), verbose=0), rows)


            for piece in [np.random.rand(n, 4) for n in (3, 7)]:
                print(score(piece).shape)
            """),
        ),
        # A Python list of batched datasets: each item is a dataset, whose batches `drop_remainder` makes whole.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("classifier.keras")
            train_ds = tf.data.Dataset.from_tensor_slices(np.zeros((64, 4), "float32")).batch(16, drop_remainder=True)
            test_ds = tf.data.Dataset.from_tensor_slices(np.zeros((32, 4), "float32")).batch(16, drop_remainder=True)
            for split in [train_ds, test_ds]:
                print(model.predict(split).shape)
            """,
            reported=False,
        ),
        # The context window made one sample by either branch of a conditional expression (padded
        # while the text is short, its last tokens after): a batch of one at each step as well.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("lm.keras")
            tokens = [2, 7]
            for step in range(20):
                context = np.array([tokens + [0] * (16 - len(tokens))]) if len(tokens) < 16 else np.array([tokens[-16:]])
                tokens.append(int(model.predict(context)[0].argmax()))
            """,
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("lm.keras")
            tokens = [2, 7]
            for step in range(20):
                context = np.array([tokens + [0] * (16 - len(tokens))]) if len(tokens) < 16 else np.array([tokens[-16:]])
                tokens.append(int(model.predict(context, batch_size=1)[0].argmax()))
            """,
        ),
        # One sample for each item of a comprehension: a batch of one each time as in a loop; the
        # iterable of its first `for` is read once.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            tagger = tf.keras.models.load_model("tagger.keras")
            confidence = [tagger.predict(sentence[np.newaxis]).max() for sentence in sentences]
            """,
            """\
            import numpy as np
            import tensorflow as tf

            tagger = tf.keras.models.load_model("tagger.keras")
            confidence = [tagger.predict(sentence[np.newaxis], batch_size=1).max() for sentence in sentences]
            """,
        ),
        # Each image of a folder loaded by a function of the file that adds the batch axis and
        # scales it (`np.expand_dims(array, axis=0) / 255.0`): one sample, a batch of one per step.
        Example(
            """\
            import os

            import numpy as np
            from tensorflow import keras


            def load_image(path):
                array = keras.utils.img_to_array(keras.utils.load_img(path, target_size=(180, 180)))
                return np.expand_dims(array, axis=0) / 255.0


            model = keras.models.load_model("classifier.keras")
            for name in sorted(os.listdir("images")):
                print(name, model.predict(load_image(os.path.join("images", name))).argmax())
            """,
            """\
            import os

            import numpy as np
            from tensorflow import keras


            def load_image(path):
                array = keras.utils.img_to_array(keras.utils.load_img(path, target_size=(180, 180)))
                return np.expand_dims(array, axis=0) / 255.0


            model = keras.models.load_model("classifier.keras")
            for name in sorted(os.listdir("images")):
                print(name, model.predict(load_image(os.path.join("images", name)), batch_size=1).argmax())
            """,
        ),
        # Each answer appended to the one sample along the steps: a batch of one each time, and a
        # new length at each call, which compiles a new IPU program (reported).
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("lm.keras")
            ids = np.array([[1]], dtype="int32")
            for step in range(20):
                logits = model.predict(ids, verbose=0)
                ids = np.concatenate([ids, [[int(logits[0, -1].argmax())]]], axis=1)
            """,
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("lm.keras")
            ids = np.array([[1]], dtype="int32")
            for step in range(20):
                logits = model.predict(ids, verbose=0, batch_size=1)
                ids = np.concatenate([ids, [[int(logits[0, -1].argmax())]]], axis=1)
            """,
        ),
        # Next-frame prediction: the frames so far, made a batch of one, and the predicted frame
        # appended along the time axis each time round: a new length at each call (reported).
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("next_frame.keras")
            frames = np.load("clip.npy")[:10]
            for _ in range(10):
                predicted = model.predict(np.expand_dims(frames, axis=0))
                frames = np.concatenate((frames, predicted[0, -1:]), axis=0)
            """,
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("next_frame.keras")
            frames = np.load("clip.npy")[:10]
            for _ in range(10):
                predicted = model.predict(np.expand_dims(frames, axis=0), batch_size=1)
                frames = np.concatenate((frames, predicted[0, -1:]), axis=0)
            """,
        ),
        # Flattened sample by sample (`reshape(-1, 784)`) and scaled in the call: still 10000 samples.
        Example(
            """\
            import tensorflow as tf

            (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
            x_test = x_test.reshape(-1, 784).astype("float32")
            model = tf.keras.models.load_model("digits.h5")
            logits = model.predict(x_test / 255.0, batch_size=64)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
            x_test = x_test.reshape(-1, 784).astype("float32")
            model = tf.keras.models.load_model("digits.h5")
            logits = cut_to_samples(model.predict(pad_to_multiple(x_test / 255.0, 64), batch_size=64),
                                    x_test / 255.0)
            """),
        ),
        # A tenth of 1000 samples validates: 100, less than a batch of 128; trimmed, nothing would be left.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            rows = np.zeros((1000, 20), dtype="float32")
            flags = np.zeros(1000, dtype="int32")
            model = tf.keras.models.load_model("scorer.keras")
            model.fit(rows, flags, batch_size=128, epochs=5, validation_split=0.1)
            """,
        ),
        # A slice of at most 10 samples (whatever the test set holds), less than the default batch of
        # 32: reported, left as it is (trimming would leave none).
        Example(
            """\
            import tensorflow as tf

            (x_train, y_train), (x_test, y_test) = tf.keras.datasets.boston_housing.load_data()
            model = tf.keras.models.load_model("prices.keras")
            print(model.evaluate(x_test[:10], y_test[:10], verbose=0))
            """,
        ),
        # Validation arrays of a known 20 samples, less than a batch of 32: reported, left as they are.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x_val = np.random.rand(20, 8).astype("float32")
            y_val = np.random.rand(20, 1).astype("float32")
            model = tf.keras.models.load_model("regressor.keras")
            model.fit(x_train, y_train, batch_size=32, validation_data=(x_val, y_val))
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            x_val = np.random.rand(20, 8).astype("float32")
            y_val = np.random.rand(20, 1).astype("float32")
            model = tf.keras.models.load_model("regressor.keras")
            model.fit(trim_to_multiple(x_train, 32), trim_to_multiple(y_train, 32), batch_size=32,
                      validation_data=(x_val, y_val))
            """),
        ),
        # Texts and labels kept as Python lists: Keras takes each as the samples of one input, and
        # so do the helpers (a list of arrays is several inputs).
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("reviews.keras")
            texts = [review["text"] for review in reviews]
            labels = [1 if review["stars"] > 3 else 0 for review in reviews]
            model.fit(texts, labels, batch_size=16, epochs=2)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            model = tf.keras.models.load_model("reviews.keras")
            texts = [review["text"] for review in reviews]
            labels = [1 if review["stars"] > 3 else 0 for review in reviews]
            model.fit(trim_to_multiple(texts, 16), trim_to_multiple(labels, 16), batch_size=16, epochs=2)
            """),
        ),
        # 100 samples hold 3 batches of 32, fewer than the 8 of an execution: Keras runs a shorter
        # one, and the helper trims to whole batches; the split helper falls back the same way.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x = np.random.rand(100, 4).astype("float32")
            model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            model.fit(x, x, batch_size=32)
            model.fit(rows, flags, batch_size=32, validation_split=0.2)
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("trim", "split") +
            snippet("""\


            x = np.random.rand(100, 4).astype("float32")
            model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            model.fit(trim_to_multiple(x, 256, 32), trim_to_multiple(x, 256, 32), batch_size=32)
            (rows_fit, flags_fit), (rows_val, flags_val) = split_validation_to_multiple(
                (rows, flags), 0.2, 256, 32)
            model.fit(rows_fit, flags_fit, batch_size=32, validation_data=(rows_val, flags_val))
            """),
            options={"steps_per_execution": 8},
        ),
        # One row of named inputs, made by a comprehension of tensors: padded like a dict of arrays.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("heart.keras")
            row = {name: tf.convert_to_tensor([value]) for name, value in patient.items()}
            risk = model.predict(row)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            model = tf.keras.models.load_model("heart.keras")
            row = {name: tf.convert_to_tensor([value]) for name, value in patient.items()}
            risk = cut_to_samples(model.predict(pad_to_multiple(row, 32)), row)
            """),
        ),
        # The arrays of a NumPy archive, by name: arrays, padded for `predict`.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            archive = np.load("held_out.npz")
            model = tf.keras.models.load_model("digits.keras")
            scores = model.predict(archive["images"])
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            archive = np.load("held_out.npz")
            model = tf.keras.models.load_model("digits.keras")
            scores = cut_to_samples(model.predict(pad_to_multiple(archive["images"], 32)),
                                    archive["images"])
            """),
        ),
        # Several inputs as a list of arrays, and a batch a loop takes apart: padded for `predict`.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("pairs.keras")
            left, right = np.load("left.npy"), np.load("right.npy")
            same = model.predict([left, right])
            for batch in pairs.take(1):
                images, labels = batch
                guesses = model.predict(images)
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            model = tf.keras.models.load_model("pairs.keras")
            left, right = np.load("left.npy"), np.load("right.npy")
            same = cut_to_samples(model.predict(pad_to_multiple([left, right], 32)), [left, right])
            for batch in pairs.take(1):
                images, labels = batch
                guesses = cut_to_samples(model.predict(pad_to_multiple(images, 32)), images)
            """),
        ),
        # Inputs unpacked in the call: out of sight, reported.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("scorer.keras")
            model.fit(*training_arrays, batch_size=64, epochs=2)
            """,
        ),
        # A table's values, a fitted scaler's output, and the batches a generator of image files gives:
        # arrays, padded for `predict`.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("digits.keras")
            pixels = (test_frame.values / 255.0).reshape(-1, 28, 28, 1)
            labels = model.predict(pixels)
            rows = scaler.transform(submission_frame)
            scores = model.predict(rows)
            for images, _ in image_reader.flow_from_directory("extra", batch_size=20):
                features = model.predict(images)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            model = tf.keras.models.load_model("digits.keras")
            pixels = (test_frame.values / 255.0).reshape(-1, 28, 28, 1)
            labels = cut_to_samples(model.predict(pad_to_multiple(pixels, 32)), pixels)
            rows = scaler.transform(submission_frame)
            scores = cut_to_samples(model.predict(pad_to_multiple(rows, 32)), rows)
            for images, _ in image_reader.flow_from_directory("extra", batch_size=20):
                features = cut_to_samples(model.predict(pad_to_multiple(images, 32)), images)
            """),
        ),
        # A dataset to train on, arrays to validate: Keras batches the arrays by 32 (no `batch_size`).
        Example(
            """\
            import tensorflow as tf

            train = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(64, drop_remainder=True)
            model = tf.keras.models.load_model("digits.h5")
            model.fit(train, epochs=3, validation_data=(x_val, y_val))
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            train = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(64, drop_remainder=True)
            model = tf.keras.models.load_model("digits.h5")
            model.fit(train, epochs=3,
                      validation_data=(trim_to_multiple(x_val, 32), trim_to_multiple(y_val, 32)))
            """),
        ),
        # Test images reshaped (their count no longer shows) beside the labels of `load_data()`,
        # which show it: the report counts the validation samples from the labels.
        Example(
            """\
            import tensorflow as tf

            (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
            x_test = x_test.reshape(x_test.shape[0], 28, 28, 1).astype("float32") / 255
            model = tf.keras.models.load_model("digits.h5")
            model.fit(train, epochs=3, validation_data=(x_test, y_test))
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
            x_test = x_test.reshape(x_test.shape[0], 28, 28, 1).astype("float32") / 255
            model = tf.keras.models.load_model("digits.h5")
            model.fit(train, epochs=3,
                      validation_data=(trim_to_multiple(x_test, 32), trim_to_multiple(y_test, 32)))
            """),
        ),
        # Validation data given as a list, which Keras takes as it takes the tuple: trimmed alike.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("digits.h5")
            model.fit(x_train, y_train, batch_size=64, validation_data=[x_val, y_val])
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            model = tf.keras.models.load_model("digits.h5")
            model.fit(trim_to_multiple(x_train, 64), trim_to_multiple(y_train, 64), batch_size=64,
                      validation_data=[trim_to_multiple(x_val, 64), trim_to_multiple(y_val, 64)])
            """),
        ),
        # Validation data in one branch of a conditional expression (none in the other), and inputs
        # that are arrays in either branch: each trimmed where it is.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("digits.h5")
            model.fit(x if full else x[:900], y if full else y[:900], batch_size=64,
                      validation_data=(x_val, y_val) if validate else None)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            model = tf.keras.models.load_model("digits.h5")
            model.fit(trim_to_multiple(x if full else x[:900], 64),
                      trim_to_multiple(y if full else y[:900], 64), batch_size=64,
                      validation_data=(trim_to_multiple(x_val, 64), trim_to_multiple(y_val, 64)) if validate else None)
            """),
        ),
        # `batch_size=None` is Keras' default (batches of 32 for arrays), not a batch size to trim to;
        # validation data a class keeps in an attribute is trimmed part by part where `fit` reads it.
        Example(
            """\
            import tensorflow as tf


            class Experiment:
                def __init__(self, model, x_val, y_val):
                    self.model = model
                    self.held_out = (x_val, y_val)

                def run(self, x, y):
                    self.model.fit(x, y, batch_size=None, validation_data=self.held_out)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            class Experiment:
                def __init__(self, model, x_val, y_val):
                    self.model = model
                    self.held_out = (x_val, y_val)

                def run(self, x, y):
                    self.model.fit(trim_to_multiple(x, 32), trim_to_multiple(y, 32), batch_size=None,
                                   validation_data=tuple(trim_to_multiple(part, 32) for part in self.held_out))
            """),
        ),
        # Validation weights computed in the tuple itself are arrays too: all three parts are trimmed.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("prices.h5")
            model.fit(rows, prices, batch_size=50, validation_data=(rows_val, prices_val, np.abs(prices_val) + 0.1))
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            model = tf.keras.models.load_model("prices.h5")
            model.fit(trim_to_multiple(rows, 50), trim_to_multiple(prices, 50), batch_size=50,
                      validation_data=(trim_to_multiple(rows_val, 50),
                                       trim_to_multiple(prices_val, 50),
                                       trim_to_multiple(np.abs(prices_val) + 0.1, 50)))
            """),
        ),
        # A step count rounded up for the partial batch the trimmed inputs no longer hold: made whole.
        Example(
            """\
            import math

            import tensorflow as tf

            model = tf.keras.models.load_model("ctr.h5")
            model.fit(impressions, clicked, batch_size=256, steps_per_epoch=math.ceil(len(impressions) / 256))
            """,
            snippet("""\
            import math

            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            model = tf.keras.models.load_model("ctr.h5")
            model.fit(trim_to_multiple(impressions, 256), trim_to_multiple(clicked, 256), batch_size=256,
                      steps_per_epoch=len(impressions) // 256)
            """),
        ),
        # With several batches an execution, `n // batch` need not be whole executions: reported.
        Example(
            """\
            import numpy as np
            from tensorflow import keras

            ranker = keras.models.load_model("ranker.h5")
            ranker.compile(optimizer="adam", loss="mse")
            ranker.fit(queries, relevance, batch_size=128, epochs=3, steps_per_epoch=int(np.ceil(len(queries) / 128)))
            """,
            snippet("""\
            import numpy as np
            from tensorflow import keras


            """) + _examples_helpers("trim") +
            snippet("""\


            ranker = keras.models.load_model("ranker.h5")
            ranker.compile(optimizer="adam", loss="mse")
            ranker.fit(trim_to_multiple(queries, 1024, 128), trim_to_multiple(relevance, 1024, 128),
                       batch_size=128, epochs=3, steps_per_epoch=int(np.ceil(len(queries) / 128)))
            """),
            options={"steps_per_execution": 8},
        ),
        # A validation tuple held in a variable, or returned by a function of the file: trimmed part by
        # part where `fit` reads it (the variable itself is left whole for the host).
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            def read_split(path):
                archive = np.load(path)
                return archive["pixels"], archive["labels"]

            model = tf.keras.models.load_model("scanner.h5")
            checks = (scans_val, findings_val, np.where(findings_val > 0, 4.0, 1.0))
            model.fit(scans, findings, batch_size=16, validation_data=checks)
            model.fit(scans, findings, batch_size=16, validation_data=read_split("audit.npz"))
            print(len(checks[0]))
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            def read_split(path):
                archive = np.load(path)
                return archive["pixels"], archive["labels"]

            model = tf.keras.models.load_model("scanner.h5")
            checks = (scans_val, findings_val, np.where(findings_val > 0, 4.0, 1.0))
            model.fit(trim_to_multiple(scans, 16), trim_to_multiple(findings, 16), batch_size=16,
                      validation_data=tuple(trim_to_multiple(part, 16) for part in checks))
            model.fit(trim_to_multiple(scans, 16), trim_to_multiple(findings, 16), batch_size=16,
                      validation_data=tuple(trim_to_multiple(part, 16) for part in read_split("audit.npz")))
            print(len(checks[0]))
            """),
        ),
        # Held validation data that a flag may turn off: trimmed when it is a tuple, None kept.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("scanner.h5")
            checks = (scans_val, findings_val) if args.validate else None
            model.fit(scans, findings, batch_size=16, validation_data=checks)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            model = tf.keras.models.load_model("scanner.h5")
            checks = (scans_val, findings_val) if args.validate else None
            model.fit(trim_to_multiple(scans, 16), trim_to_multiple(findings, 16), batch_size=16,
                      validation_data=tuple(trim_to_multiple(part, 16) for part in checks) if checks is not None else None)
            """),
        ),
        # The same held in an attribute of the class: trimmed where `fit` reads it, None kept.
        Example(
            """\
            import tensorflow as tf

            class Job:
                def __init__(self, validate):
                    self.checks = (scans_val, findings_val) if validate else None

                def run(self):
                    model = tf.keras.models.load_model("scanner.h5")
                    model.fit(scans, findings, batch_size=16, validation_data=self.checks)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            class Job:
                def __init__(self, validate):
                    self.checks = (scans_val, findings_val) if validate else None

                def run(self):
                    model = tf.keras.models.load_model("scanner.h5")
                    model.fit(trim_to_multiple(scans, 16), trim_to_multiple(findings, 16), batch_size=16,
                              validation_data=tuple(trim_to_multiple(part, 16) for part in self.checks) if self.checks is not None else None)
            """),
        ),
        # Validation data batched by its own `validation_batch_size`: trimmed to a multiple of it.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("voices.h5")
            model.fit(clips, speakers, batch_size=48, validation_data=(held_clips, held_speakers), validation_batch_size=12)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            model = tf.keras.models.load_model("voices.h5")
            model.fit(trim_to_multiple(clips, 48), trim_to_multiple(speakers, 48), batch_size=48,
                      validation_data=(trim_to_multiple(held_clips, 12),
                                       trim_to_multiple(held_speakers, 12)),
                      validation_batch_size=12)
            """),
        ),
        # A validation split batched by its own `validation_batch_size`: the shared split cannot trim the two
        # parts to different multiples, so it is reported.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("voices.h5")
            model.fit(clips, speakers, batch_size=48, validation_split=0.2, validation_batch_size=10)
            """,
            reported=True,
        ),
        # Validation inputs made by a function of another module: not trimmed, but reported.
        Example(
            """\
            import tensorflow as tf
            from text_prep import encode

            model = tf.keras.models.load_model("reviews.h5")
            model.fit(codes, stars, batch_size=64, validation_data=(encode(held_out_reviews), held_out_stars))
            """,
            snippet("""\
            import tensorflow as tf
            from text_prep import encode


            """) + _examples_helpers("trim") +
            snippet("""\


            model = tf.keras.models.load_model("reviews.h5")
            model.fit(trim_to_multiple(codes, 64), trim_to_multiple(stars, 64), batch_size=64,
                      validation_data=(encode(held_out_reviews), held_out_stars))
            """),
        ),
        # Scaled in pairs after `load_data()`, and split by scikit-learn: arrays, padded for `predict`.
        Example(
            """\
            import tensorflow as tf
            from sklearn.model_selection import train_test_split

            (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
            x_train, x_test = x_train / 255.0, x_test / 255.0
            x_fit, x_held, y_fit, y_held = train_test_split(x_train, y_train, test_size=0.1)
            model = tf.keras.models.load_model("digits.h5")
            digits = model.predict(x_test)
            held = model.predict(x_held)
            """,
            snippet("""\
            import tensorflow as tf
            from sklearn.model_selection import train_test_split


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
            x_train, x_test = x_train / 255.0, x_test / 255.0
            x_fit, x_held, y_fit, y_held = train_test_split(x_train, y_train, test_size=0.1)
            model = tf.keras.models.load_model("digits.h5")
            digits = cut_to_samples(model.predict(pad_to_multiple(x_test, 32)), x_test)
            held = cut_to_samples(model.predict(pad_to_multiple(x_held, 32)), x_held)
            """),
        ),
        # A variable last made by NumPy (or a list of such arrays) is an array input, not a dataset.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            def label_rows(rows):
                model = tf.keras.models.load_model("rows.keras")
                window = np.stack([np.asarray(row, dtype="float32") for row in rows])
                return model.predict(window, verbose=0).argmax(axis=1)
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            def label_rows(rows):
                model = tf.keras.models.load_model("rows.keras")
                window = np.stack([np.asarray(row, dtype="float32") for row in rows])
                return cut_to_samples(model.predict(pad_to_multiple(window, 32), verbose=0), window).argmax(axis=1)
            """),
        ),
        # A table's columns (`dict(frame)`) are arrays too, and so are samples picked by index.
        Example(
            """\
            import pandas as pd
            import tensorflow as tf

            frame = pd.read_csv("reviews.csv")
            model = tf.keras.models.load_model("sentiment.keras")
            model.evaluate(dict(frame), frame["label"], batch_size=16)
            print(model.predict(frame.values[picked]))
            """,
            snippet("""\
            import pandas as pd
            import tensorflow as tf


            """) + _examples_helpers("trim", "pad", "cut") +
            snippet("""\


            frame = pd.read_csv("reviews.csv")
            model = tf.keras.models.load_model("sentiment.keras")
            model.evaluate(trim_to_multiple(dict(frame), 16), trim_to_multiple(frame["label"], 16),
                           batch_size=16)
            print(cut_to_samples(model.predict(pad_to_multiple(frame.values[picked], 32)),
                                 frame.values[picked]))
            """),
        ),
        # A batch a dataset gives in a loop is a tensor: padded too (the last batch may be partial).
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("flowers.keras")
            for images, labels in val_ds.take(3):
                print(model.predict(images).argmax(axis=1), labels)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            model = tf.keras.models.load_model("flowers.keras")
            for images, labels in val_ds.take(3):
                print(cut_to_samples(model.predict(pad_to_multiple(images, 32)), images).argmax(axis=1), labels)
            """),
        ),
        # A helper given the trained model under another name runs it too.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            def label(net, rows):
                batch = np.stack(rows)
                return net.predict(batch, verbose=0).argmax(axis=1)


            classifier = tf.keras.models.load_model("rows.keras")
            print(label(classifier, recent_rows))
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            def label(net, rows):
                batch = np.stack(rows)
                return cut_to_samples(net.predict(pad_to_multiple(batch, 32), verbose=0), batch).argmax(axis=1)


            classifier = tf.keras.models.load_model("rows.keras")
            print(label(classifier, recent_rows))
            """),
        ),
        # Arrays a function of the file returns, and arithmetic on arrays, are arrays too: padded.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            def load_rows(path):
                return np.loadtxt(path, delimiter=",", dtype="float32")


            model = tf.keras.models.load_model("rows.keras")
            recent = load_rows("recent.csv")
            print(model.predict(recent / 255.0).argmax(axis=1))
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            def load_rows(path):
                return np.loadtxt(path, delimiter=",", dtype="float32")


            model = tf.keras.models.load_model("rows.keras")
            recent = load_rows("recent.csv")
            print(cut_to_samples(model.predict(pad_to_multiple(recent / 255.0, 32)), recent / 255.0).argmax(axis=1))
            """),
        ),
        # Arrays a function of the file returns in a tuple, unpacked: arrays, trimmed for `fit` and
        # padded for `predict`.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            def make_windows(series, steps):
                xs, ys = [], []
                for start in range(len(series) - steps):
                    xs.append(series[start:start + steps])
                    ys.append(series[start + steps])
                return np.array(xs)[..., None], np.array(ys)


            model = tf.keras.models.load_model("forecast.keras")
            history, _ = make_windows(train_series, 10)
            model.fit(history / 10.0, history / 10.0, batch_size=64)
            windows, targets = make_windows(recent_series, 10)
            forecast = model.predict(windows)
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("trim", "pad", "cut") +
            snippet("""\


            def make_windows(series, steps):
                xs, ys = [], []
                for start in range(len(series) - steps):
                    xs.append(series[start:start + steps])
                    ys.append(series[start + steps])
                return np.array(xs)[..., None], np.array(ys)


            model = tf.keras.models.load_model("forecast.keras")
            history, _ = make_windows(train_series, 10)
            model.fit(trim_to_multiple(history / 10.0, 64), trim_to_multiple(history / 10.0, 64),
                      batch_size=64)
            windows, targets = make_windows(recent_series, 10)
            forecast = cut_to_samples(model.predict(pad_to_multiple(windows, 32)), windows)
            """),
        ),
        # Models compared in a loop, and the members of an ensemble (a loop variable, an item of a
        # list of models): their inputs are trimmed and padded like those of a model variable.
        Example(
            """\
            import tensorflow as tf

            baseline = tf.keras.models.load_model("baseline.keras")
            weighted = tf.keras.models.load_model("weighted.keras")
            for name, net in [("baseline", baseline), ("weighted", weighted)]:
                print(name, net.evaluate(x_test, y_test, batch_size=64))
            members = [tf.keras.models.load_model(path) for path in member_paths]
            votes = [member.predict(x_test) for member in members]
            print(members[0].evaluate(x_test, y_test))
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim", "pad", "cut") +
            snippet("""\


            baseline = tf.keras.models.load_model("baseline.keras")
            weighted = tf.keras.models.load_model("weighted.keras")
            for name, net in [("baseline", baseline), ("weighted", weighted)]:
                print(name, net.evaluate(trim_to_multiple(x_test, 64), trim_to_multiple(y_test, 64),
                                         batch_size=64))
            members = [tf.keras.models.load_model(path) for path in member_paths]
            votes = [cut_to_samples(member.predict(pad_to_multiple(x_test, 32)), x_test) for member in members]
            print(members[0].evaluate(trim_to_multiple(x_test, 32), trim_to_multiple(y_test, 32)))
            """),
        ),
        # Estimators of scikit-learn compared in a loop are not Keras models: left alone.
        Example(
            """\
            from sklearn.ensemble import RandomForestClassifier
            from sklearn.linear_model import LogisticRegression
            import tensorflow as tf

            estimators = {"linear": LogisticRegression(), "forest": RandomForestClassifier()}
            for name, estimator in estimators.items():
                estimator.fit(x_train, y_train)
                print(name, estimator.predict(x_test))
            """,
            reported=False,
        ),
        # Named inputs made by a comprehension of arrays, in the call: trimmed like a dict of arrays.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("housing.keras")
            model.fit({name: np.array(column) for name, column in frame.items()}, prices, batch_size=16)
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            model = tf.keras.models.load_model("housing.keras")
            model.fit(trim_to_multiple({name: np.array(column) for name, column in frame.items()}, 16),
                      trim_to_multiple(prices, 16), batch_size=16)
            """),
        ),
        # A variable scaled by a number is an array (a dataset takes no arithmetic), wherever it comes from.
        Example(
            """\
            import tensorflow as tf
            from loaders import load_pixels

            train, test = load_pixels()
            model = tf.keras.models.load_model("autoencoder.keras")
            recon = model.predict(test / 255.0, batch_size=128)
            """,
            snippet("""\
            import tensorflow as tf
            from loaders import load_pixels


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            train, test = load_pixels()
            model = tf.keras.models.load_model("autoencoder.keras")
            recon = cut_to_samples(model.predict(pad_to_multiple(test / 255.0, 128), batch_size=128),
                                   test / 255.0)
            """),
        ),
        # Inputs that are arrays by Keras' rules (labels are given) but made out of the port's sight:
        # reported, not trimmed (trimming an object the port does not know could break the call).
        Example(
            """\
            import tensorflow as tf
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
            model = tf.keras.models.load_model("sentiment.keras")
            model.fit(tokenizer(texts, padding=True, return_tensors="tf"), labels, batch_size=16)
            """,
        ),
        # A tokenizer's whole encoding (a `BatchEncoding`, a dict class whose `len` counts its keys)
        # is not trimmed: reported, to be given as `dict(...)`, which the port trims.
        Example(
            """\
            import tensorflow as tf
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
            model = tf.keras.models.load_model("sentiment.keras")
            encoded = tokenizer(reviews, padding="max_length", max_length=64, return_tensors="np")
            model.fit(encoded, labels, batch_size=16)
            """,
        ),
        # The items of a tokenizer's encoding asked for arrays or tensors (`return_tensors`) are
        # arrays, one row a text: `predict` pads them with no batch size written (Keras' 32).
        Example(
            """\
            import tensorflow as tf
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
            model = tf.keras.models.load_model("sentiment.keras")
            encoded = tokenizer(reviews, padding="max_length", max_length=64, return_tensors="np")
            scores = model.predict([encoded["input_ids"], encoded["attention_mask"]])
            """,
            snippet("""\
            import tensorflow as tf
            from transformers import AutoTokenizer


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
            model = tf.keras.models.load_model("sentiment.keras")
            encoded = tokenizer(reviews, padding="max_length", max_length=64, return_tensors="np")
            scores = cut_to_samples(model.predict(pad_to_multiple([encoded["input_ids"], encoded["attention_mask"]], 32)),
                                    [encoded["input_ids"], encoded["attention_mask"]])
            """),
        ),
        # In a lambda (a `LambdaCallback`) the padded call is an expression all the same.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("rows.keras")
            probe = held_out[:6]
            show = tf.keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: print(model.predict(probe)))
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            model = tf.keras.models.load_model("rows.keras")
            probe = held_out[:6]
            show = tf.keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: print(cut_to_samples(model.predict(pad_to_multiple(probe, 32)),
                                                                                                           probe)))
            """),
        ),
        # The same input read in the call itself cannot be read again to cut the answers back: reported.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            def load_rows(path):
                return np.loadtxt(path, delimiter=",", dtype="float32")


            model = tf.keras.models.load_model("rows.keras")
            print(model.predict(load_rows("recent.csv")).argmax(axis=1))
            """,
        ),
        # The script's own `steps_per_execution`: an epoch must be whole executions of 4 batches.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x = np.random.rand(1000, 4).astype("float32")
            model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            model.compile(optimizer="adam", loss="mse", steps_per_execution=4)
            model.fit(x, x, batch_size=24)
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            x = np.random.rand(1000, 4).astype("float32")
            model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            model.compile(optimizer="adam", loss="mse", steps_per_execution=4)
            model.fit(trim_to_multiple(x, 96, 24), trim_to_multiple(x, 96, 24), batch_size=24)
            """),
        ),
        # The script's own `steps_per_execution` wins over the option (IPU108 says so): 250 batches
        # are 5 executions of 50, nothing to trim, and `predict` is padded to executions of 50.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x = np.random.rand(8000, 4).astype("float32")
            model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            model.compile(optimizer="adam", loss="mse", steps_per_execution=50)
            model.fit(x, x, batch_size=32)
            scores = model.predict(x_new, batch_size=32)
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            x = np.random.rand(8000, 4).astype("float32")
            model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            model.compile(optimizer="adam", loss="mse", steps_per_execution=50)
            model.fit(x, x, batch_size=32)
            scores = cut_to_samples(model.predict(pad_to_multiple(x_new, 1600), batch_size=32), x_new)
            """),
            options={"steps_per_execution": 8},
        ),
        # A model an object holds, trained in a method with Keras' own arguments: trimmed the same way.
        Example(
            """\
            import tensorflow as tf


            class Trainer:
                def __init__(self, model, batch_size):
                    self.model = model
                    self.batch_size = batch_size

                def train(self, x, y):
                    return self.model.fit(x, y, batch_size=self.batch_size, epochs=3)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            class Trainer:
                def __init__(self, model, batch_size):
                    self.model = model
                    self.batch_size = batch_size

                def train(self, x, y):
                    return self.model.fit(trim_to_multiple(x, self.batch_size),
                                          trim_to_multiple(y, self.batch_size), batch_size=self.batch_size,
                                          epochs=3)
            """),
        ),
        # A part of a model (a GAN's generator) predicts like the model.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            gan = tf.keras.models.load_model("gan.keras")
            noise = np.random.normal(size=(16, 8))
            samples = gan.generator.predict(noise)
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            gan = tf.keras.models.load_model("gan.keras")
            noise = np.random.normal(size=(16, 8))
            samples = cut_to_samples(gan.generator.predict(pad_to_multiple(noise, 32)), noise)
            """),
        ),
        # A Keras 2 GAN with steps per execution: the generator is never compiled and the discriminator
        # trains batch by batch, so neither gets `steps_per_execution` (IPU108); each runs one batch
        # per execution, and their inputs are padded to whole batches, not to 4 of them.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            generator = tf.keras.Sequential([tf.keras.layers.Dense(8)])
            discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            discriminator.compile(loss="binary_crossentropy")
            for step in range(100):
                fake = generator.predict(np.random.normal(size=(16, 4)))
                discriminator.train_on_batch(fake, np.zeros((16, 1)))
                scores = discriminator.predict(fake)
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            generator = tf.keras.Sequential([tf.keras.layers.Dense(8)])
            discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            discriminator.compile(loss="binary_crossentropy")
            for step in range(100):
                fake = generator.predict(np.random.normal(size=(16, 4)))
                discriminator.train_on_batch(fake, np.zeros((16, 1)))
                scores = cut_to_samples(discriminator.predict(pad_to_multiple(fake, 32)), fake)
            """),
            options={"steps_per_execution": 4},
        ),
        # A `train_step` override: without the IPU Keras extensions Keras runs a shorter last
        # execution, so whole batches are enough, whatever the steps per execution.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            class Denoiser(tf.keras.Model):
                def train_step(self, data):
                    return {}


            model = Denoiser()
            model.compile(optimizer="sgd")
            model.fit(np.zeros((1000, 4), "float32"), batch_size=32)
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            class Denoiser(tf.keras.Model):
                def train_step(self, data):
                    return {}


            model = Denoiser()
            model.compile(optimizer="sgd")
            model.fit(trim_to_multiple(np.zeros((1000, 4), "float32"), 32), batch_size=32)
            """),
            options={"steps_per_execution": 4},
        ),
        # One sample per call in a loop, with steps per execution: a batch of one, which Keras runs as a
        # shortened execution, so the input needs no padding (and a second port pads nothing either).
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("scorer.keras")
            model.compile(loss="mse")
            for row in np.zeros((10, 4), "float32"):
                print(model.predict(row[np.newaxis]))
            """,
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("scorer.keras")
            model.compile(loss="mse")
            for row in np.zeros((10, 4), "float32"):
                print(model.predict(row[np.newaxis], batch_size=1))
            """,
            options={"steps_per_execution": 4},
        ),
        # Training batch by batch on windows of the arrays: the last window of 1000 samples holds 8, a
        # batch of another shape, reported.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x = np.random.rand(1000, 8).astype("float32")
            y = np.random.rand(1000, 1).astype("float32")
            model = tf.keras.models.load_model("model.keras")
            for start in range(0, len(x), 32):
                model.train_on_batch(x[start:start + 32], y[start:start + 32])
            """,
        ),
        # The same on 1024 samples: whole windows only, nothing to say.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x = np.random.rand(1024, 8).astype("float32")
            y = np.random.rand(1024, 1).astype("float32")
            model = tf.keras.models.load_model("model.keras")
            for start in range(0, len(x), 32):
                model.train_on_batch(x[start:start + 32], y[start:start + 32])
            """,
            reported=False,
        ),
        # The window read through variables and as wide as a parameter: the last one is still short.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            def train(model, x, y, batch_size):
                order = np.random.permutation(len(x))
                for start in range(0, len(x), batch_size):
                    rows = order[start:start + batch_size]
                    x_batch = x[rows]
                    model.train_on_batch(x_batch, y[rows])
            """,
        ),
        # Windows counted with a count rounded up, and predicted in a comprehension: reported too.
        Example(
            """\
            import math
            import tensorflow as tf

            def score(model, x, batch_size):
                steps = math.ceil(len(x) / batch_size)
                return [model.predict_on_batch(x[b * batch_size:(b + 1) * batch_size]) for b in range(steps)]
            """,
        ),
        # A trainer that counts its batches, rounded up, in `__init__` and trains on windows in `train`:
        # reported as well.
        Example(
            """\
            import math
            import tensorflow as tf

            class Trainer:
                def __init__(self, model, x, batch_size):
                    self.model, self.x, self.batch_size = model, x, batch_size
                    self.n_batches = math.ceil(len(x) / batch_size)

                def train(self):
                    for b in range(self.n_batches):
                        real = self.x[b * self.batch_size:(b + 1) * self.batch_size]
                        self.model.train_on_batch(real, real)
            """,
        ),
        # A count rounded up as `(n + size - 1) // size` or `-(-n // size)`, and a range that stops one
        # sample short of the end: the last window may still be short, reported.
        Example(
            """\
            import tensorflow as tf

            def train(model, x, y, batch_size):
                for b in range((len(x) + batch_size - 1) // batch_size):
                    model.train_on_batch(x[b * batch_size:(b + 1) * batch_size], y[b * batch_size:(b + 1) * batch_size])
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            def train(model, x, y, batch_size):
                for start in range(0, len(x) - 1, batch_size):
                    model.train_on_batch(x[start:start + batch_size], y[start:start + batch_size])
            """,
        ),
        # A GAN's discriminator step joins the window of real images to as many generated ones: the
        # joined batch is short when the window is, reported.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            def train(generator, discriminator, x, batch_size):
                for b in range(int(np.ceil(x.shape[0] / float(batch_size)))):
                    real = x[b * batch_size:(b + 1) * batch_size]
                    fake = generator.predict(np.random.normal(size=(len(real), 16)), verbose=0)
                    pair = np.concatenate((real, fake))
                    discriminator.train_on_batch(pair, np.array([1] * len(real) + [0] * len(real)))
            """,
        ),
        # Loops that stop at the last whole window: nothing to say.
        Example(
            """\
            import tensorflow as tf

            def train(model, x, y, batch_size):
                for start in range(0, len(x) - batch_size + 1, batch_size):
                    model.train_on_batch(x[start:start + batch_size], y[start:start + batch_size])
                for b in range(len(x) // batch_size):
                    model.test_on_batch(x[b * batch_size:(b + 1) * batch_size], y[b * batch_size:(b + 1) * batch_size])
                for start in range(0, len(x) - len(x) % 32, 32):
                    model.predict_on_batch(x[start:start + 32])
            """,
            reported=False,
        ),
        # A literal list of samples (texts for a model that vectorizes them): padded as an array is.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("sentiment.keras")
            print(model.predict(["great movie", "dull film", "fine"]))
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") +
            snippet("""\


            model = tf.keras.models.load_model("sentiment.keras")
            print(cut_to_samples(model.predict(pad_to_multiple(["great movie", "dull film", "fine"], 32)),
                                 ["great movie", "dull film", "fine"]))
            """),
        ),
        # One text made a sample by the tokenizer: one sample, counted through the calls, made in
        # the call (padding would run it twice): a batch of one.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras.preprocessing.sequence import pad_sequences

            model = tf.keras.models.load_model("sentiment.keras")
            print(model.predict(pad_sequences(tokenizer.texts_to_sequences(["great movie"]), maxlen=40)))
            """,
            """\
            import tensorflow as tf
            from tensorflow.keras.preprocessing.sequence import pad_sequences

            model = tf.keras.models.load_model("sentiment.keras")
            print(model.predict(pad_sequences(tokenizer.texts_to_sequences(["great movie"]), maxlen=40), batch_size=1))
            """,
        ),
        # One query text vectorized in the call (`TextVectorization` gives a row of ids a text), to
        # search a gallery: one sample, a batch of one, also one query at a time in a loop.
        Example(
            """\
            import tensorflow as tf

            vectorize = tf.keras.layers.TextVectorization(max_tokens=5000, output_sequence_length=16)
            vectorize.adapt(captions)
            text_encoder = tf.keras.models.load_model("text_encoder.keras")
            query_embedding = text_encoder.predict(vectorize(["a dog on a beach"]))
            for query in queries:
                print(tf.math.top_k(text_encoder.predict(vectorize(tf.constant([query]))) @ gallery.T, k=5))
            """,
            """\
            import tensorflow as tf

            vectorize = tf.keras.layers.TextVectorization(max_tokens=5000, output_sequence_length=16)
            vectorize.adapt(captions)
            text_encoder = tf.keras.models.load_model("text_encoder.keras")
            query_embedding = text_encoder.predict(vectorize(["a dog on a beach"]), batch_size=1)
            for query in queries:
                print(tf.math.top_k(text_encoder.predict(vectorize(tf.constant([query])), batch_size=1) @ gallery.T, k=5))
            """,
        ),
        # The same one query with 2 replicas: a batch of one cannot feed both, so it is reported.
        Example(
            """\
            import tensorflow as tf

            vectorize = tf.keras.layers.TextVectorization(max_tokens=5000, output_sequence_length=16)
            vectorize.adapt(captions)
            text_encoder = tf.keras.models.load_model("text_encoder.keras")
            query_embedding = text_encoder.predict(vectorize(["a dog on a beach"]))
            """,
            options={"ipus": 2},
        ),
        # The batch size passed in a literal dict of options, which nothing changes: read there.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x = np.random.rand(300, 4).astype("float32")
            y = np.random.rand(300, 1).astype("float32")
            options = {"batch_size": 64, "epochs": 2}
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.fit(x, y, **options)
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            x = np.random.rand(300, 4).astype("float32")
            y = np.random.rand(300, 1).astype("float32")
            options = {"batch_size": 64, "epochs": 2}
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.fit(trim_to_multiple(x, 64), trim_to_multiple(y, 64), **options)
            """),
        ),
        # ... and in a dict the module sets once, read by the function that trains.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            FIT_OPTIONS = dict(batch_size=64, epochs=2)


            def train(model, x, y):
                model.compile(optimizer="sgd", loss="mse")
                model.fit(x, y, **FIT_OPTIONS)


            x = np.random.rand(300, 4).astype("float32")
            y = np.random.rand(300, 1).astype("float32")
            train(tf.keras.Sequential([tf.keras.layers.Dense(1)]), x, y)
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            FIT_OPTIONS = dict(batch_size=64, epochs=2)


            def train(model, x, y):
                model.compile(optimizer="sgd", loss="mse")
                model.fit(trim_to_multiple(x, 64), trim_to_multiple(y, 64), **FIT_OPTIONS)


            x = np.random.rand(300, 4).astype("float32")
            y = np.random.rand(300, 1).astype("float32")
            train(tf.keras.Sequential([tf.keras.layers.Dense(1)]), x, y)
            """),
        ),
        # A function given a model made in its call (`train(load_model(path), x, y)`) trains that model.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            def train(model, x, y):
                model.fit(x, y, batch_size=64)


            x = np.random.rand(300, 4).astype("float32")
            y = np.random.rand(300, 1).astype("float32")
            train(tf.keras.models.load_model("model.keras"), x, y)
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            def train(model, x, y):
                model.fit(trim_to_multiple(x, 64), trim_to_multiple(y, 64), batch_size=64)


            x = np.random.rand(300, 4).astype("float32")
            y = np.random.rand(300, 1).astype("float32")
            train(tf.keras.models.load_model("model.keras"), x, y)
            """),
        ),
        # ... but not when a function changes it before the call: reported.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            FIT_OPTIONS = dict(batch_size=64, epochs=2)


            def train(model, x, y, batch_size):
                FIT_OPTIONS["batch_size"] = batch_size
                model.compile(optimizer="sgd", loss="mse")
                model.fit(x, y, **FIT_OPTIONS)


            x = np.random.rand(300, 4).astype("float32")
            y = np.random.rand(300, 1).astype("float32")
            train(tf.keras.Sequential([tf.keras.layers.Dense(1)]), x, y, 100)
            """,
        ),
        # A dict of options changed after it is made: its batch size is out of the port's sight, reported.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x = np.random.rand(300, 4).astype("float32")
            y = np.random.rand(300, 1).astype("float32")
            options = {"batch_size": 64, "epochs": 2}
            options.update(batch_size=100)
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.fit(x=x, y=y, sample_weight=np.ones(300), **options)
            """,
        ),
        # The batch size in the call, the other options out of sight: they may hold a `sample_weight`
        # or a `validation_split` that trimmed inputs would no longer match, so the inputs are left
        # as they are and reported.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            def train(settings):
                x = np.random.rand(300, 4).astype("float32")
                y = np.random.rand(300, 1).astype("float32")
                model = tf.keras.models.load_model(settings.checkpoint)
                model.fit(x, y, batch_size=64, **settings.fit_kwargs)
            """,
        ),
        # Arrays with a step count and no batch size: Keras batches them by `ceil(samples / steps)`,
        # not by 32, so trimming to 32 would still leave a partial batch; reported.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x = np.random.rand(1000, 4).astype("float32")
            y = np.random.rand(1000, 1).astype("float32")
            model = tf.keras.models.load_model("net.keras")
            model.fit(x, y, steps_per_epoch=30, epochs=2)
            """,
        ),
        # `predict` too: padding to 32 would leave a partial batch of `ceil(samples / steps)`.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            images = np.random.rand(1000, 28, 28).astype("float32")
            model = tf.keras.models.load_model("net.keras")
            scores = model.predict(images, steps=30)
            """,
        ),
        # A step count that divides the samples makes whole batches: nothing to do.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            images = np.random.rand(1000, 28, 28).astype("float32")
            model = tf.keras.models.load_model("net.keras")
            scores = model.predict(images, steps=8)
            """,
            reported=False,
        ),
        # Noise drawn in the call, its size given by position: whole batches, nothing to do; a draw
        # of 50 cannot be padded in place (a second draw differs), so it is reported.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            generator = tf.keras.models.load_model("generator.keras")
            images = generator.predict(np.random.normal(0, 1, (64, 100)))
            """,
            reported=False,
        ),
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            generator = tf.keras.models.load_model("generator.keras")
            images = generator.predict(np.random.normal(0, 1, (50, 100)))
            """,
        ),
        # Validation given by position (Keras 2's `fit(x, y, batch, epochs, verbose, callbacks,
        # validation_split, validation_data)`): not read by the port, so not trimmed, reported.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x = np.random.rand(320, 4).astype("float32")
            y = np.random.rand(320, 1).astype("float32")
            held_out = (np.random.rand(50, 4).astype("float32"), np.random.rand(50, 1).astype("float32"))
            model = tf.keras.models.load_model("net.keras")
            model.fit(x, y, 32, 3, 2, None, 0.0, held_out)
            """,
        ),
        # The arrays themselves in the literal dict: the port does not rewrite the dict, reported
        # with the batch size read there.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x = np.random.rand(300, 4).astype("float32")
            y = np.random.rand(300, 1).astype("float32")
            fit_config = dict(x=x, y=y, batch_size=64, epochs=2)
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.fit(**fit_config)
            """,
        ),
        # `steps_per_epoch` counted before the trim would ask for more batches than are left: reported.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("net.keras")
            model.fit(features, labels, batch_size=64, steps_per_epoch=batches_per_epoch)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim") +
            snippet("""\


            model = tf.keras.models.load_model("net.keras")
            model.fit(trim_to_multiple(features, 64), trim_to_multiple(labels, 64), batch_size=64,
                      steps_per_epoch=batches_per_epoch)
            """),
        ),
        # Data TensorFlow makes with a static length, fewer samples than one batch: reported.
        Example(
            """\
            import tensorflow as tf

            x = tf.linspace(-2.0, 2.0, 201)
            y = 3.0 * x + 2.0
            model = tf.keras.models.load_model("line.keras")
            model.fit(x, y, epochs=10, batch_size=1000)
            """,
        ),
        # Batches of one sample: every length is whole, nothing to trim.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("stateful.keras")
            model.fit(x_train, y_train, batch_size=1, shuffle=False)
            """,
            reported=False,
        ),
        # A callback predicts during `fit` on data it was handed: reported, not guessed.
        Example(
            """\
            import tensorflow as tf


            class RecallLogger(tf.keras.callbacks.Callback):
                def __init__(self, images, labels):
                    super().__init__()
                    self.images, self.labels = images, labels

                def on_epoch_end(self, epoch, logs=None):
                    scores = self.model.predict(self.images)
                    print(epoch, (scores.argmax(axis=1) == self.labels).mean())
            """,
        ),
        # So does a model the callback's model holds (a GAN's generator), on noise it draws.
        Example(
            """\
            import tensorflow as tf


            class SampleSaver(tf.keras.callbacks.Callback):
                def on_epoch_end(self, epoch, logs=None):
                    noise = tf.random.normal((3, 64))
                    images = self.model.generator.predict(noise)
                    tf.io.write_file("epoch_%d.png" % epoch, tf.io.encode_png(images[0]))
            """,
        ),
        # A script that imports more after its training code (matplotlib for the plots) gets the helper
        # above the code that calls it, after the imports at its top.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("model.keras")
            history = model.fit(features, targets, batch_size=64, epochs=5)

            import matplotlib.pyplot as plt
            plt.plot(history.history["loss"])
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim") + snippet("""\


            model = tf.keras.models.load_model("model.keras")
            history = model.fit(trim_to_multiple(features, 64), trim_to_multiple(targets, 64),
                                batch_size=64, epochs=5)

            import matplotlib.pyplot as plt
            plt.plot(history.history["loss"])
            """),
        ),
        # Given its batch size, the callback's call is padded (or trimmed) like any other, and only
        # that is said: the inputs are whole batches now, whatever their length.
        Example(
            """\
            import tensorflow as tf


            class RecallLogger(tf.keras.callbacks.Callback):
                def __init__(self, images, labels):
                    super().__init__()
                    self.images, self.labels = images, labels

                def on_epoch_end(self, epoch, logs=None):
                    scores = self.model.predict(self.images, batch_size=50)
                    print(epoch, (scores.argmax(axis=1) == self.labels).mean())
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("pad", "cut") + snippet("""\


            class RecallLogger(tf.keras.callbacks.Callback):
                def __init__(self, images, labels):
                    super().__init__()
                    self.images, self.labels = images, labels

                def on_epoch_end(self, epoch, logs=None):
                    scores = cut_to_samples(self.model.predict(pad_to_multiple(self.images, 50),
                                                               batch_size=50), self.images)
                    print(epoch, (scores.argmax(axis=1) == self.labels).mean())
            """),
        ),
        # Several inputs made in the call: arrays, which cannot be read twice to pad them: reported.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("recommender.keras")
            scores = model.predict([np.full(777, 7), np.arange(777)], batch_size=256)
            """,
        ),
        # An item of what a call gives cannot be read twice either (to pad it, then to count its
        # samples): reported, never trimmed, as `predict` answers for every sample.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.models.load_model("net.keras")
            scores = model.predict(load_images()[:500], batch_size=16)
            curve = model.predict(np.linspace(0, 1, 777)[:, None])
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
            model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
            model.fit(x_train, y_train, batch_size=100, epochs=2)
            model.evaluate(x_test, y_test, batch_size=100)
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(8, drop_remainder=True)
            model.fit(dataset, epochs=2)
            """,
            reported=False, options={"steps_per_execution": 4},
        ),
        # Ragged data made by a function of the file has no length to cut by (IPU161 reports it).
        Example(
            """\
            import tensorflow as tf


            def tokenize(texts, vocabulary):
                return tf.ragged.constant([[vocabulary.get(word, 1) for word in text.split()] for text in texts])


            reviews = tokenize(texts, vocabulary)
            model = tf.keras.models.load_model("reviews.keras")
            model.evaluate(reviews, labels, batch_size=32)
            """,
            reported=False,
        ),
        # A scikit-learn wrapper trains in the batches it is given (IPU190 reports it): not trimmed here.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras.wrappers.scikit_learn import KerasClassifier


            def build():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1, activation="sigmoid")])
                model.compile(optimizer="adam", loss="binary_crossentropy")
                return model


            model = KerasClassifier(build_fn=build, epochs=10, batch_size=10)
            model.fit(features, labels)
            """,
            reported=False,
        ),
        # A call written one argument a line: a validation tuple too long for its line is broken
        # after its commas, lined up where the script starts the argument.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("clips.keras")
            model.fit(
                train_clips,
                train_labels,
                validation_data=(held_out_clips_for_checking, held_out_labels_for_checking),
                batch_size=32,
            )
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim") + snippet("""\


            model = tf.keras.models.load_model("clips.keras")
            model.fit(
                trim_to_multiple(train_clips, 32),
                trim_to_multiple(train_labels, 32),
                validation_data=(trim_to_multiple(held_out_clips_for_checking, 32),
                                 trim_to_multiple(held_out_labels_for_checking, 32)),
                batch_size=32,
            )
            """),
        ),
        # The same with the arguments on a line of their own after the parenthesis (a hanging
        # indent): the lines the port adds keep that indent.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("clips.keras")
            model.fit(
                train_clips, train_labels, epochs=5, batch_size=64, validation_data=(held_out_clips, held_out_labels)
            )
            """,
            snippet("""\
            import tensorflow as tf


            """) + _examples_helpers("trim") + snippet("""\


            model = tf.keras.models.load_model("clips.keras")
            model.fit(
                trim_to_multiple(train_clips, 64), trim_to_multiple(train_labels, 64), epochs=5,
                batch_size=64,
                validation_data=(trim_to_multiple(held_out_clips, 64),
                                 trim_to_multiple(held_out_labels, 64))
            )
            """),
        ),
        # A text generator built for one sequence at a time (a stateful LSTM, `batch_input_shape=[batch,
        # None]` with a builder given 1): `predict` gets the model's batch of 1, never padded to 32.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            def build(vocab, batch):
                return tf.keras.Sequential([
                    tf.keras.layers.Embedding(vocab, 8, batch_input_shape=[batch, None]),
                    tf.keras.layers.LSTM(16, stateful=True),
                    tf.keras.layers.Dense(vocab),
                ])


            generator = build(40, 1)
            generator.load_weights("text.h5")
            seed = np.array([3, 1, 4])
            print(generator.predict(seed[None]).argmax())
            """,
            """\
            import numpy as np
            import tensorflow as tf


            def build(vocab, batch):
                return tf.keras.Sequential([
                    tf.keras.layers.Embedding(vocab, 8, batch_input_shape=[batch, None]),
                    tf.keras.layers.LSTM(16, stateful=True),
                    tf.keras.layers.Dense(vocab),
                ])


            generator = build(40, 1)
            generator.load_weights("text.h5")
            seed = np.array([3, 1, 4])
            print(generator.predict(seed[None], batch_size=1).argmax())
            """,
        ),
        # An input of a fixed batch of 4 (`Input(..., batch_size=BATCH)`): the calls that give no batch
        # size get 4, and their arrays are trimmed to it; 4 samples to `predict` need no padding.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            BATCH = 4
            inputs = tf.keras.Input(shape=(6,), batch_size=BATCH)
            model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(inputs))
            model.compile(optimizer="sgd", loss="mse")
            rows = np.zeros((50, 6), dtype="float32")
            labels = np.zeros(50, dtype="float32")
            model.fit(rows, labels, epochs=1)
            print(model.predict(rows[:4]))
            """,
            snippet("""\
            import numpy as np
            import tensorflow as tf


            """) + _examples_helpers("trim") + snippet("""\


            BATCH = 4
            inputs = tf.keras.Input(shape=(6,), batch_size=BATCH)
            model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(inputs))
            model.compile(optimizer="sgd", loss="mse")
            rows = np.zeros((50, 6), dtype="float32")
            labels = np.zeros(50, dtype="float32")
            model.fit(trim_to_multiple(rows, 4), trim_to_multiple(labels, 4), epochs=1, batch_size=4)
            print(model.predict(rows[:4], batch_size=4))
            """),
        ),
        # A stateful model whose batch is a parameter of the function that trains it: the port cannot
        # read it, so the call is reported, its arrays neither trimmed nor given Keras' default of 32.
        Example(
            """\
            import tensorflow as tf


            def build(batch):
                inputs = tf.keras.Input(shape=(None, 3), batch_size=batch)
                return tf.keras.Model(inputs, tf.keras.layers.GRU(8, stateful=True)(inputs))


            def train(rows, targets, batch):
                model = build(batch)
                model.compile(optimizer="adam", loss="mse")
                model.fit(rows, targets, epochs=1, shuffle=False)
            """,
        ),
        # Layers stacked with `model.add(...)` (Keras 2 scripts), the first fixing a batch of one.
        Example(
            """\
            import numpy as np
            from tensorflow.keras.layers import LSTM, Dense
            from tensorflow.keras.models import Sequential

            model = Sequential()
            model.add(LSTM(32, batch_input_shape=(1, None, 30), stateful=True))
            model.add(Dense(30, activation="softmax"))
            model.load_weights("chars.h5")
            probe = np.zeros((1, 1, 30), dtype="float32")
            print(model.predict(probe, verbose=0))
            """,
            """\
            import numpy as np
            from tensorflow.keras.layers import LSTM, Dense
            from tensorflow.keras.models import Sequential

            model = Sequential()
            model.add(LSTM(32, batch_input_shape=(1, None, 30), stateful=True))
            model.add(Dense(30, activation="softmax"))
            model.load_weights("chars.h5")
            probe = np.zeros((1, 1, 30), dtype="float32")
            print(model.predict(probe, verbose=0, batch_size=1))
            """,
        ),
        # A function given the model (`next_step(sampler, window)`): the batch its callers' models fix.
        Example(
            """\
            import numpy as np
            import tensorflow as tf


            def build(batch):
                inputs = tf.keras.Input(shape=(None, 3), batch_size=batch)
                return tf.keras.Model(inputs, tf.keras.layers.LSTM(3, stateful=True)(inputs))


            def next_step(model, window):
                return model.predict(window[None])


            sampler = build(1)
            sampler.load_weights("steps.h5")
            print(next_step(sampler, np.zeros((5, 3), dtype="float32")))
            """,
            """\
            import numpy as np
            import tensorflow as tf


            def build(batch):
                inputs = tf.keras.Input(shape=(None, 3), batch_size=batch)
                return tf.keras.Model(inputs, tf.keras.layers.LSTM(3, stateful=True)(inputs))


            def next_step(model, window):
                return model.predict(window[None], batch_size=1)


            sampler = build(1)
            sampler.load_weights("steps.h5")
            print(next_step(sampler, np.zeros((5, 3), dtype="float32")))
            """,
        ),
        # A fixed batch of 8 that each call already gives, on whole batches: nothing to change.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.Sequential([
                tf.keras.layers.InputLayer(batch_input_shape=(8, 5)),
                tf.keras.layers.Dense(1),
            ])
            model.compile(optimizer="sgd", loss="mse")
            rows = np.zeros((64, 5), dtype="float32")
            model.fit(rows, np.zeros(64, dtype="float32"), batch_size=8, epochs=1)
            print(model.predict(rows[:8], batch_size=8))
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        name = helper_name(ctx)
        helpers = {name, split_helper_name(ctx)}
        taken: set = set()
        splits = []
        trimmed = False
        pad, cut = pad_helper_names(ctx)
        padded = False
        ported = set()  # the calls whose inputs were trimmed or padded here
        for found in padded_predictions(ctx):
            self._pad_dataset(ctx, found, pad, cut)
            padded = True
        for entry in training_calls(ctx, name):
            if entry.ragged_or_sparse is not None:
                continue  # no `len()` to trim or pad by; IPU161 reports ragged and sparse inputs
            method = own_method(ctx, entry) if entry.has_arrays or entry.data is not None else None
            if method is not None:
                self._report_own_method(ctx, entry, method)
                continue
            if entry.hidden_options is not None and _unknown_lengths_trimmed(ctx):
                self._report_hidden_batch(ctx, entry)
                continue
            if entry.model_batch is not None and entry.model_batch.size is None:
                self._report_unread_fixed_batch(ctx, entry, entry.model_batch)
                continue
            if entry.model_batch is not None:
                self._give_fixed_batch(ctx, entry, entry.model_batch)
            if entry.unpacked is not None and _unknown_lengths_trimmed(ctx):
                self._report_unpacked(ctx, entry)
                continue
            encoding = _encoding_input(ctx, entry)
            if encoding is not None and _unknown_lengths_trimmed(ctx) and self._multiple(ctx, entry) != 1:
                self._report_encoding(ctx, entry, encoding)
                continue
            steps = keyword(entry.call, _STEPS_BY_METHOD.get(entry.method, "steps"))
            if entry.arrays and entry.batch is None and entry.model_batch is None and steps is not None \
                    and not is_name(steps.value, "None"):
                # Padding or trimming to 32 would leave a partial batch either way.
                if _unknown_lengths_trimmed(ctx) and not self._steps_divide(ctx, entry, steps):
                    self._report_batch_from_steps(ctx, entry, steps)
                continue
            if entry.method == "predict" and entry.data is not None:
                self._report_growing(ctx, entry)
                handled = self._pad(ctx, entry, pad, cut, helpers)
                if handled is not None:
                    padded |= handled
                    if handled:
                        ported.add(entry.call)
                    continue
            if entry.method == "predict" and entry.data is not None and single_sample(ctx, entry.data, entry.owner):
                if not self._give_batch_of_one(ctx, entry):
                    self._report_single_sample(ctx, entry)
                continue
            if entry.method == "predict" and any(not repeatable(ctx, arg.value) for arg in entry.arrays):
                self._report_read_once(ctx, entry)
                continue
            if entry.unfollowed and _unknown_lengths_trimmed(ctx) and self._multiple(ctx, entry) != 1:
                self._report_unfollowed(ctx, entry)
            if entry.method == "fit" and _unknown_lengths_trimmed(ctx):
                self._report_positional_validation(ctx, entry)
            if not entry.arrays and not entry.validation and entry.held_validation is None \
                    and entry.validation_inputs is None:
                continue
            split = keyword(entry.call, "validation_split")
            if split is not None and entry.arrays and fraction_value(split.value) != 0:  # `0.0`: no split, as if absent
                statement = self._split(ctx, entry, split, helpers, taken)
                if statement is not None:
                    splits.append(statement)
                continue
            if self._fit_one_sample(ctx, entry) or self._report_replayed_item(ctx, entry):
                continue
            if self._trim(ctx, entry, name, helpers):
                trimmed = True
                ported.add(entry.call)
        if _unknown_lengths_trimmed(ctx):
            self._report_callback_inputs(ctx, ported)
            self._report_short_last_slice(ctx)
        used = {"trim": trimmed or bool(splits), "split": bool(splits), "pad": padded, "cut": padded}
        used["samples"] = trimmed or bool(splits) or padded
        wanted = {key for key, needed in used.items() if needed and existing_helper(ctx, _DOCS[key]) is None}
        if wanted:
            names = {"trim": name, "split": split_helper_name(ctx), "pad": pad, "cut": cut,
                     "samples": samples_helper_name(ctx)}
            self._emit_helper(ctx, _helpers_code(wanted, names), set(names.values()))

    def _pad(self, ctx, entry, pad: str, cut: str, helpers) -> Optional[bool]:
        """``predict`` on arrays (or on one sample) that may leave a partial batch: the inputs are
        padded to whole executions and the predictions cut back to one per sample, so that they
        still line up with the labels. True when padded, False when nothing needs doing, None when
        the call is not one to pad (its inputs cannot be read twice: trimmed or reported instead)."""
        if self._one_per_execution(ctx, entry):
            return False
        single = not entry.arrays and single_sample(ctx, entry.data, entry.owner)
        # A literal list of samples (`["great movie", "bad film"]`) is padded as an array is.
        listed = not entry.arrays and literal_samples(entry.data) is not None
        inputs = [arg.value for arg in entry.arrays] or ([entry.data] if single or listed else [])
        if not inputs or any(_already_trimmed(ctx, node, entry.owner, helpers) for node in inputs):
            return None
        if any(is_helper_call(node, pad) for node in inputs):
            return False
        counted = entry.data if all(repeatable(ctx, node) for node in inputs) else _repeatable_part(ctx, entry.data,
                                                                                                  inputs)
        if counted is None:
            return None
        if _batch_of_all(ctx, entry, inputs):
            return False
        multiple = self._multiple(ctx, entry)
        one = single or entry.data is not None and single_sample(ctx, entry.data, entry.owner)
        length = 1 if one else static_length(ctx, entry.data, entry.owner)
        if length is not None and multiple is not None and length % multiple == 0 or multiple == 1:
            return False
        # Fewer batches than one execution: Keras shortens the execution to them (`predict(x[None],
        # batch_size=1)` with steps per execution), so whole smallest executions need no padding.
        smallest = self._multiple(ctx, entry, smallest=True)
        if length is not None and multiple is not None and smallest and length < multiple and length % smallest == 0:
            return False
        if length is None and not _unknown_lengths_trimmed(ctx):
            return False
        arguments = multiple_code(ctx, entry, _entry_config(ctx, entry))
        for node in inputs:
            ctx.replace(node, _trimmed(pad, arguments))
        indent, offset = call_columns(ctx, entry)
        data = counted.deep_clone()  # a node of its own: the input itself is replaced by its padding
        ctx.replace(entry.call, lambda node: layout(indent, offset)(cst.Call(cst.Name(cut), args=[
            cst.Arg(layout(indent, offset + len(cut) + 1)(node),
                    comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Arg(data)])))
        names = ", ".join(f"`{code_of(ctx, node)}`" for node in inputs)
        answers = "its one sample" if single or length == 1 else (
            f"each of its {length} samples" if length is not None else "each of its samples")
        ctx.report(self.code, entry.call.func.attr,
                   f"`predict` inputs {names} padded to a multiple of `{arguments}` samples by repeating the last "
                   f"sample, and the predictions cut back with `{cut}`: the IPU rejects a partial batch, and "
                   f"`predict` still answers for {answers}", fixed=True)
        return True

    def _one_per_execution(self, ctx, entry) -> bool:
        """``predict`` on one sample each time round a loop (decoding token by token, ``x =
        np.expand_dims([token], 0)``) gets ``batch_size=1``: padding it to a batch would compute
        the batch's copies at every step, and breaks a model built for one sample at a time (a
        stateful RNN, ``keras.Input(..., batch_size=1)``). True when it did."""
        if not _repeated(ctx, entry) or not _batch_of_one_whole(ctx, entry):
            return False
        ctx.replace(entry.call, lambda node: append_args(node, keyword_arg("batch_size", cst.Integer("1"))))
        caller = None if _repeated_call(ctx, entry.call, entry.owner) else _caller_in_loop(ctx, entry)
        where = "in a loop" if caller is None else (
            f"in `{entry.owner.name.value}`, which `{code_of(ctx, caller)}` calls in a loop,")
        ctx.report(self.code, entry.call.func.attr,
                   f"`predict` on one sample (`{code_of(ctx, entry.data)}`) {where} gets `batch_size=1`: the "
                   f"IPU rejects a partial batch of the default {KERAS_DEFAULT_BATCH}, and a batch of one computes "
                   f"that sample alone at each step (padded to {KERAS_DEFAULT_BATCH}, it would compute "
                   f"{KERAS_DEFAULT_BATCH - 1} copies too); each call is still a device execution of its own, "
                   "with a round trip to the host", fixed=True)
        return True

    def _fit_one_sample(self, ctx, entry) -> bool:
        """``fit(state, target)`` on one sample (a transition of a replay buffer, trained on one at
        a time) with no batch size: trimmed to whole batches of the default 32, it would keep no
        sample and raise. It gets ``batch_size=1``, the one step of one sample Keras ran; one sample
        cannot fill the executions of several replicas (or accumulated batches): reported. True
        when handled."""
        if not _trained_without_batch(entry) or not single_sample(ctx, entry.data, entry.owner):
            return False
        smallest = smallest_per_execution(_entry_config(ctx, entry))
        where = f"`{entry.method}` on one sample (`{code_of(ctx, entry.data)}`)"
        if smallest != 1:
            ctx.report(self.code, entry.call.func.attr,
                       f"{where} cannot fill one IPU execution of {smallest} samples (a batch on every replica), "
                       "and Keras on the IPU rejects a partial batch: train on batches of several samples (stack "
                       "the transitions of a minibatch into one array)", fixed=False)
            return True
        ctx.replace(entry.call, lambda node: append_args(node, keyword_arg("batch_size", cst.Integer("1"))))
        ctx.report(self.code, entry.call.func.attr,
                   f"{where} gets `batch_size=1`: the IPU rejects a partial batch of the default "
                   f"{KERAS_DEFAULT_BATCH}, and trimmed to whole batches it would keep no sample; each call is a "
                   "device execution of its own, with a round trip to the host (stacking the transitions of a "
                   "minibatch into one `fit` is faster)", fixed=True)
        return True

    def _report_replayed_item(self, ctx, entry) -> bool:
        """``fit(state, target)`` with no batch size on an item drawn from a replay buffer whose size
        the port cannot read (``state = env.reset()`` stored as it is): most likely one transition,
        which trimmed to whole batches of the default 32 keeps no sample and raises, and
        ``batch_size=1`` is only right where it is visibly one sample. Reported. True when it did."""
        if not _trained_without_batch(entry):
            return False
        draw = replayed_draw(ctx, entry.data, entry.owner)
        if draw is None:
            return False
        stack = f"stack the transitions of the minibatch into one array and one `{entry.method}`"
        advice = _batch_of_one_advice(
            ctx, entry, f"if each item is one sample, pass `batch_size=1` (or, faster, {stack}); else trim the inputs "
            "to a multiple of the batch size", stack + ", of a multiple of {smallest} samples")
        ctx.report(self.code, entry.call.func.attr,
                   f"`{entry.method}` on `{code_of(ctx, entry.data)}`, an item of `{code_of(ctx, draw)}` whose "
                   f"samples the port cannot count (most likely one transition): Keras on the IPU rejects a partial "
                   f"batch of the default {KERAS_DEFAULT_BATCH}, and trimmed to whole batches one transition would "
                   f"keep no sample; {advice}", fixed=False)
        return True

    def _give_batch_of_one(self, ctx, entry) -> bool:
        """``predict(vectorize([query]))`` once: one sample made by a call, which padding would run
        twice (to pad it, then to count the answers), gets ``batch_size=1``, a whole batch. True
        when it did."""
        if not _batch_of_one_whole(ctx, entry):
            return False
        ctx.replace(entry.call, lambda node: append_args(node, keyword_arg("batch_size", cst.Integer("1"))))
        ctx.report(self.code, entry.call.func.attr,
                   f"`predict` on one sample (`{code_of(ctx, entry.data)}`, made in the call, which the port does not "
                   f"run twice to pad it) gets `batch_size=1`: the IPU rejects a partial batch of the default "
                   f"{KERAS_DEFAULT_BATCH}, and a batch of one is whole; it compiles an executable of its own for "
                   "batches of one", fixed=True)
        return True

    def _report_growing(self, ctx, entry) -> None:
        """``predict(ids)`` in a loop that appends each answer to ``ids`` along the steps (``ids =
        np.concatenate([ids, [[token]]], axis=1)``): every call has a new shape, and the IPU runs
        a program compiled for one shape, so each step compiles a new one."""
        grown = _grown_in_loop(ctx, entry)
        if grown is None:
            return
        ctx.report(self.code, entry.call.func.attr,
                   f"`predict` gets `{code_of(ctx, entry.data)}`, which grows by a step each time round the loop "
                   f"(`{code_of(ctx, grown)}`): the IPU runs programs compiled for one input shape, so each new "
                   "length compiles a new program; give the model a fixed length (pad the steps to the longest, "
                   "and read the answer at the last real step)", fixed=False)

    def _pad_dataset(self, ctx, found, pad: str, cut: str) -> None:
        """A dataset only ``predict`` reads, ``from_tensor_slices(x)...batch(n)`` (or made by a
        function of the file from its parameters): ``x`` is padded to whole executions of ``n``
        before it is sliced (IPU105 gives the ``.batch()`` ``drop_remainder=True``), and what each
        call answers is cut back to ``len(x)`` answers."""
        entry = found.cuts[0][0]
        config = _entry_config(ctx, entry)
        for node, size in found.pads:
            ctx.replace(node, _trimmed(pad, multiple_code(ctx, dataclasses.replace(entry, batch=size), config)))
        where = f" where `{found.helper.name.value}` is called" if found.helper is not None else ""
        for entry, data, size in found.cuts:
            arguments = multiple_code(ctx, dataclasses.replace(entry, batch=size), config)
            indent, offset = call_columns(ctx, entry)
            data = data.deep_clone()  # a node of its own: the data itself is replaced by its padding
            ctx.replace(entry.call, lambda node, data=data, indent=indent, offset=offset: layout(indent, offset)(
                cst.Call(cst.Name(cut), args=[
                    cst.Arg(layout(indent, offset + len(cut) + 1)(node),
                            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                    cst.Arg(data)])))
            ctx.report(self.code, entry.call.func.attr,
                       f"`predict` reads a dataset made from `{code_of(ctx, found.arrays)}`, which is padded{where} "
                       f"to a multiple of `{arguments}` samples by repeating the last sample before it is sliced, and "
                       f"the predictions cut back with `{cut}`: the IPU rejects a partial batch, and `predict` still "
                       "answers for each of its samples", fixed=True)

    def _trim(self, ctx, entry, name: str, helpers) -> bool:
        """Trims the inputs of one call that may leave a partial batch (or execution); True when
        anything was trimmed."""
        multiple, smallest = self._multiple(ctx, entry), self._multiple(ctx, entry, smallest=True)
        inputs = [arg.value for arg in entry.arrays if not is_name(arg.value, "None")]  # `fit(x, None)`
        targets = [node for node in inputs if not _already_trimmed(ctx, node, entry.owner, helpers)]
        # Every input holds the same samples: the first whose count shows gives it (`y` may show it).
        counts = (static_length(ctx, node, entry.owner) for node in inputs) if targets else iter(())
        length = next((count for count in counts if count is not None), None)
        if length is None and not _unknown_lengths_trimmed(ctx):
            targets = []
        # `evaluate(x_test[:10], y_test[:10])`: a slice shows the most samples there can be.
        most = length if length is not None else next(
            (count for count in (most_samples(ctx, node, entry.owner) for node in targets) if count is not None), None)
        if most is not None and smallest is not None and most < smallest:
            self._report_too_few(ctx, entry, entry.data, most, smallest, exact=length is not None)
            return False
        if length is not None and multiple is not None and length % multiple == 0 or multiple == 1 \
                or _batch_of_all(ctx, entry, inputs):
            targets = []  # whole executions already, of one sample, or one batch of all: nothing to trim
        inputs_trimmed = bool(targets)
        # Keras batches the validation data by `validation_batch_size` when it is given.
        checked = validation_entry(ctx, entry)
        if checked is entry and _batch_of_all(ctx, entry, inputs):
            return self._full_batch_validation(ctx, entry)
        multiple, smallest = self._multiple(ctx, checked), self._multiple(ctx, checked, smallest=True)
        validation_targets = []
        # Tuples trimmed part by part, as Keras takes them apart (a tuple of lists is not a list of
        # samples); arrays Keras takes as the inputs alone, whole.
        given = [(validation, [element.value for element in validation.elements if not is_name(element.value, "None")])
                 for validation in entry.validation]
        if entry.validation_inputs is not None:
            given.append((entry.validation_inputs, [entry.validation_inputs]))
        for validation, parts in given:
            if not parts or _already_trimmed(ctx, parts[0], entry.owner, helpers):
                continue
            counted = static_length(ctx, parts[0], entry.owner)
            most = most_samples(ctx, parts[0], entry.owner)
            if counted is None and not _unknown_lengths_trimmed(ctx) or multiple == 1 \
                    or _batch_of_all(ctx, checked, parts):
                continue  # unknown, executions of one sample, or one batch of all (`validation_batch_size=len(x)`)
            if most is not None and smallest is not None and most < smallest:
                self._report_too_few(ctx, checked, validation, most, smallest, exact=counted is not None)
            elif counted is None or multiple is None or counted % multiple:
                validation_targets.extend(parts)
        held = entry.held_validation
        if held is not None and (not _unknown_lengths_trimmed(ctx) or multiple == 1):
            held = None  # its length is not known: trimmed only where unknown lengths are
        if held is not None and self._held_too_few(ctx, entry, checked, held, smallest):
            held = None  # the helper would raise where the call reads it: reported instead
        if not targets and not validation_targets and held is None:
            return False
        arguments = self._arguments(ctx, entry)
        for node in targets:
            ctx.replace(node, _trimmed(name, arguments))
        validation_arguments = self._arguments(ctx, checked)
        for node in validation_targets:
            ctx.replace(node, _trimmed(name, validation_arguments))
        if held is not None:
            ctx.replace(held, lambda node: _held_trimmed(node, name, validation_arguments,
                                                         entry.held_validation_optional))
            validation_targets.append(held)
        validation_trimmed = bool(validation_targets)
        ctx.replace(entry.call, layout(*call_columns(ctx, entry)))
        # The count is of the inputs, not of the validation data: said only when they are trimmed.
        trimmed_samples = length if inputs_trimmed else None
        drawn = _drawn_each_time(ctx, entry, targets) if inputs_trimmed and length is None else None
        few = "" if drawn is None else (
            f"; `{drawn}` is drawn anew each time round the loop, and a draw of fewer samples than one "
            f"execution cannot be trimmed (`{name}` raises a ValueError): give `{entry.method}` a `batch_size` "
            "that divides the samples of every draw (the draw's own length when they all have one)")
        if checked is entry:
            ctx.report(self.code, entry.call.func.attr, self._message(
                ctx, entry, targets, trimmed_samples, validation=validation_targets,
                validation_samples=self._validation_length(ctx, entry, validation_targets)) + few, fixed=not few)
        else:
            if targets:
                ctx.report(self.code, entry.call.func.attr, self._message(ctx, entry, targets, trimmed_samples)
                           + few, fixed=not few)
            if validation_targets:
                ctx.report(self.code, entry.call.func.attr, self._message(
                    ctx, checked, validation_targets, self._validation_length(ctx, entry, validation_targets),
                    what="validation data (`validation_batch_size`)"), fixed=True)
        for counted, trimmed in (("steps_per_epoch", inputs_trimmed), ("validation_steps", validation_trimmed),
                                 ("steps", inputs_trimmed)):
            given = keyword(entry.call, counted)
            if trimmed and given is not None and not isinstance(given.value, cst.Integer) \
                    and not is_name(given.value, "None") and not self._floor_count(
                        ctx, checked if counted == "validation_steps" else entry, counted, given):
                ctx.report(self.code, given, f"`{counted}={code_of(ctx, given.value)}` may count the batches of the "
                           "inputs before they were trimmed: the trimmed inputs hold fewer, and Keras on the IPU raises "
                           f"a ValueError when they run out; count `{counted}` on the trimmed inputs", fixed=False)
        return True

    def _full_batch_validation(self, ctx, entry) -> bool:
        """``fit(x, y, batch_size=len(x), validation_data=(x_val, y_val))``, one batch of all the
        samples: Keras batches the validation data by that batch size too, and trimming it to a
        multiple of ``len(x)`` would leave none of it (or drop some): it gets a whole batch of its
        own, ``validation_batch_size=len(x_val)``. True when the call was changed."""
        if not entry.validation and entry.held_validation is None and entry.validation_inputs is None:
            return False
        parts = [element.value for element in entry.validation[0].elements if not is_name(element.value, "None")] \
            if len(entry.validation) == 1 and entry.held_validation is None and entry.validation_inputs is None else []
        if not parts:
            given = keyword(entry.call, "validation_data")
            ctx.report(self.code, given if given is not None else entry.call.func.attr,
                       f"`batch_size={code_of(ctx, entry.batch)}` makes one batch of all the samples, and Keras batches "
                       "the validation data by it too: a validation set of another length leaves a partial batch, "
                       "which the IPU rejects; give `validation_batch_size` the number of validation samples",
                       fixed=False)
            return False
        counted = f"len({code_of(ctx, parts[0])})"
        ctx.replace(entry.call, lambda node: layout(*call_columns(ctx, entry))(append_args(
            node, keyword_arg("validation_batch_size", cst.parse_expression(counted)))))
        ctx.report(self.code, entry.call.func.attr,
                   f"`batch_size={code_of(ctx, entry.batch)}` makes one batch of all the samples, and Keras batches "
                   "the validation data by it too: a validation set of another length leaves a partial batch, which "
                   f"the IPU rejects; it gets one whole batch of its own, `validation_batch_size={counted}`",
                   fixed=True)
        return True

    def _floor_count(self, ctx, entry, counted: str, given: cst.Arg) -> bool:
        """``steps_per_epoch=math.ceil(n / batch)`` (or ``n // batch + 1``...) of a call whose inputs
        are now trimmed to whole batches: the rounded-up batch no longer exists, so the count
        becomes ``n // batch``. Only when the trimming multiple is the batch itself (one batch an
        execution, no replicas): ``n // batch`` batches are then what the trimmed inputs hold.
        True when rewritten."""
        rounded = rounded_up(ctx, given.value)
        batch = entry.batch if entry.batch is not None else cst.Integer(str(KERAS_DEFAULT_BATCH))
        if rounded is None or samples_per_execution(_entry_config(ctx, entry)) != 1 \
                or not same_size(ctx, rounded[1], batch):
            return False
        floor = f"{floor_operand(ctx, rounded[0])} // {code_of(ctx, rounded[1])}"
        ctx.replace(given.value, lambda node: cst.parse_expression(floor))
        ctx.report(self.code, given, f"`{counted}={code_of(ctx, given.value)}` rounds up to count a partial last "
                   f"batch, which the trimmed inputs no longer hold: it becomes `{floor}`, their whole batches (one "
                   "more would run out of data on the IPU)", fixed=True)
        return True

    @staticmethod
    def _multiple(ctx, entry, smallest: bool = False) -> Optional[int]:
        """Samples of one execution, or of the ``smallest`` one (Keras shortens an execution to the
        batches there are, and the helper trims to it), when the batch size is known statically."""
        batch = static_int(ctx, entry.batch) if entry.batch is not None else KERAS_DEFAULT_BATCH
        config = _entry_config(ctx, entry)
        per_batch = smallest_per_execution(config) if smallest else samples_per_execution(config)
        return batch * per_batch if batch is not None else None

    @staticmethod
    def _arguments(ctx, entry) -> str:
        """The helper's arguments after the data: the multiple, and the smallest execution's when
        it differs."""
        config = _entry_config(ctx, entry)
        arguments = multiple_code(ctx, entry, config)
        if smallest_per_execution(config) != samples_per_execution(config):
            arguments += ", " + multiple_code(ctx, entry, config, smallest_per_execution(config))
        return arguments

    def _split(self, ctx, entry, split, helpers, taken) -> Optional[cst.BaseStatement]:
        """``fit(x, y, validation_split=s)``: the split is made before the call, as Keras makes it,
        and both parts trimmed; the call gets the parts and ``validation_data``. Returns the new
        statement, or None when the call is reported instead."""
        # `fit(x, None, validation_split=s)`: a `None` stays in the call, and in `validation_data`.
        inputs = [arg.value for arg in entry.arrays if not is_name(arg.value, "None")]
        statement = entry.statement
        problem = None
        if keyword(entry.call, "validation_data") is not None:
            problem = "`validation_data` is given too, so Keras ignores `validation_split`: remove it"
        elif validation_entry(ctx, entry) is not entry:
            problem = ("the validation part is batched by `validation_batch_size`, not by the batch size: split the "
                       "inputs yourself (the last samples validate), trim the training part to whole batches and "
                       "the validation part to whole validation batches, and pass `validation_data`")
        elif not _nones_last(entry.arrays):
            problem = ("`y` is `None` but sample weights are given: split the inputs yourself (the last samples "
                       "validate), trim both parts to whole batches and pass `validation_data`")
        elif not isinstance(statement, cst.SimpleStatementLine) or ctx.statement_of(entry.call) is not statement \
                or ctx.enclosing(entry.call, cst.Lambda) is not None:
            problem = ("the call is not a statement of its own: split the inputs before it (the last samples "
                       "validate), trim both parts to whole batches and pass `validation_data`")
        else:
            problem = self._split_too_small(ctx, entry, split.value)
        if problem is None and (all(_already_trimmed(ctx, node, entry.owner, helpers) for node in inputs)
                                or self._whole_split(ctx, entry, split.value)):
            return None
        if static_length(ctx, entry.data, entry.owner) is None and not _unknown_lengths_trimmed(ctx):
            return None
        if problem is not None:
            ctx.report(self.code, split, f"`validation_split` cuts the inputs into parts that need not be whole "
                       f"batches, which the IPU rejects: {problem}", fixed=False)
            return None
        positions = [index for index, arg in enumerate(entry.arrays) if not is_name(arg.value, "None")]
        names = [_input_part_names(ctx, node, position, taken) for node, position in zip(inputs, positions)]
        counted = _counted_input(ctx, entry, inputs)
        # `batch_size=len(x)`, one batch of all: each part is one batch of its own, so nothing is trimmed.
        arguments = self._arguments(ctx, entry) if counted is None else "1"
        comma = "," if len(names) == 1 else ""
        # A split that may be 0 (a variable) gives no validation arrays, only None: one name holds either.
        held_whole = None
        if fraction_value(split.value) is None:
            held_whole = fresh_name(ctx, "validation_data", taken=taken)
            taken.add(held_whole)
        edited = {}  # the inputs as the earlier rules left them (a cast, say): the split takes them
        build = _split_statement(names, inputs, edited, f"{split_helper_name(ctx)}(({{}}{comma}), "
                                 f"{code_of(ctx, split.value)}, {arguments})", statement.leading_lines,
                                 call_columns(ctx, entry)[0], held_whole)
        if not ctx.move_before(statement, [], build):
            return None
        ctx.replace(statement, lambda node: node.with_changes(leading_lines=[]))
        for index, (node, (fit, _)) in enumerate(zip(inputs, names)):
            ctx.replace(node, _taken_by(edited, index, fit))
        validation = cst.parse_expression(held_whole or _validation_tuple(entry.arrays, [held for _, held in names]))
        ctx.replace(split, lambda arg: keyword_arg("validation_data", validation).with_changes(comma=arg.comma))
        if counted is not None:
            self._full_batch_parts(ctx, entry, split, names[counted])
            return statement
        ctx.replace(entry.call, layout(*call_columns(ctx, entry)))
        ctx.report(self.code, split, f"`validation_split={code_of(ctx, split.value)}` cuts the inputs into parts "
                   "that need not be whole batches, which the IPU rejects: the split is made before the call, "
                   f"as Keras makes it (the last samples validate), and both parts are trimmed to a multiple of "
                   f"`{arguments.split(', ')[0]}` samples; `{entry.method}` gets `validation_data`"
                   + (" (`None` when the split is 0: Keras then validates on nothing)" if held_whole else ""),
                   fixed=True)
        return statement

    def _full_batch_parts(self, ctx, entry, split, parts: Tuple[str, str]) -> None:
        """``fit(x, y, batch_size=len(x), validation_split=s)``, one batch of all the samples: the
        training part is shorter than ``len(x)``, a partial batch the IPU rejects, and so is the
        validation part. Each part becomes one whole batch of its own: ``batch_size=len(x_fit)``
        and ``validation_batch_size=len(x_val)``."""
        fit, held = parts
        ctx.replace(entry.batch, lambda node: cst.parse_expression(f"len({fit})"))
        ctx.replace(entry.call, lambda node: layout(*call_columns(ctx, entry))(append_args(
            node, keyword_arg("validation_batch_size", cst.parse_expression(f"len({held})")))))
        ctx.report(self.code, split, f"`validation_split={code_of(ctx, split.value)}` with "
                   f"`batch_size={code_of(ctx, entry.batch)}`, one batch of all the samples: the training part "
                   "holds fewer samples than that batch, a partial batch the IPU rejects, and so does the validation "
                   f"part; the split is made before the call, as Keras makes it (the last samples validate), and "
                   f"each part is one whole batch: `batch_size=len({fit})`, `validation_batch_size=len({held})`; "
                   f"`{entry.method}` gets `validation_data`", fixed=True)

    def _whole_split(self, ctx, entry, fraction: cst.BaseExpression) -> bool:
        """Both parts of a split of a known number of samples are whole executions already."""
        counts = self._split_counts(ctx, entry, fraction)
        return counts is not None and counts[1] % counts[2] == 0 and (counts[0] - counts[1]) % counts[2] == 0

    def _split_counts(self, ctx, entry, fraction: cst.BaseExpression) -> Optional[Tuple[int, int, int]]:
        """(samples, where Keras splits them, samples of an execution), when all are known."""
        value = fraction_value(fraction)
        samples = static_length(ctx, entry.data, entry.owner)
        multiple = self._multiple(ctx, entry)
        if value is None or samples is None or multiple is None:
            return None
        return samples, int(samples * (1.0 - value)), multiple

    def _split_too_small(self, ctx, entry, fraction: cst.BaseExpression) -> Optional[str]:
        """Why a split cannot be trimmed to whole executions: a part smaller than the smallest one."""
        counts = self._split_counts(ctx, entry, fraction)
        if counts is None:
            return None
        samples, split_at, _ = counts
        smallest = self._multiple(ctx, entry, smallest=True)
        small = [(part, count) for part, count in (("training", split_at), ("validation", samples - split_at))
                 if 0 < count < smallest]
        if not small:
            return None
        part, count = small[0]
        return (f"the {part} part holds {count} samples, fewer than the {smallest} of one execution, and trimming "
                "would leave none: split so that each part holds whole executions (or use a smaller batch) and pass "
                "`validation_data`")

    def _report_short_last_slice(self, ctx) -> None:
        """``model.train_on_batch(x[i:i + 32], ...)`` in ``for i in range(0, len(x), 32)``: each call
        is one batch of the samples it is given, so a shorter last slice is a batch of another
        shape, which the IPU compiles a program of its own for (and a model built for a fixed batch
        size rejects). The window may be read through a variable (``xb = x[i:i + bs]``) or an
        index (``x[perm[i:i + bs]]``), and be as wide as a variable (``args.batch_size``).
        Reported unless the length is a known multiple of the step."""
        for call, method in method_calls(ctx, *sorted(ONE_BATCH_METHODS)):
            first = call.args[0].value if call.args and not call.args[0].star else None
            window = _loop_window(ctx, first) if first is not None else None
            joined = None if window is not None or first is None else _joined_window(ctx, first)
            if joined is not None:
                window = joined[1]
            if window is None:
                continue
            loop, width = window
            step = str(width) if isinstance(width, int) else f"`{code_of(ctx, width)}`"
            stepped = argument(loop.iter, "step", 2) is not None
            how, stop = (("stepped by", "stop the `range` at the last whole window") if stepped else
                         ("counted, rounded up, by", "count only the whole windows (floor division)"))
            read = f"`{code_of(ctx, first)}`" + (f", which joins `{code_of(ctx, joined[0])}`" if joined else "")
            ctx.report(self.code, call.func.attr,
                       f"`{method}` on {read}, a window of {step} samples {how} "
                       f"`{code_of(ctx, loop.iter)}`: the last window holds fewer samples unless the data is a multiple "
                       f"of {step}, and each call is one batch of what it is given, so that batch has another shape: "
                       "the IPU compiles another program for it (and a model built for a fixed batch size rejects it); "
                       f"trim the data to a multiple of {step} before the loop, or {stop}", fixed=False)

    def _report_callback_inputs(self, ctx, ported) -> None:
        """``self.model.predict(self.x_val)`` in a Keras callback runs on the IPU during ``fit``,
        on data the callback was given: the porter cannot see how many samples it holds. So does
        a model the callback's model holds (``self.model.generator.predict(noise)``), made in the
        same scope.
        A call in ``ported`` had its inputs trimmed or padded by this rule already, so nothing is left
        to say."""
        for call, method in method_calls(ctx, "predict", "evaluate"):
            if call in ported:
                continue
            receiver = call.func.value
            function = ctx.enclosing_function(call)
            if not (callback_model(receiver) and function is not None and is_callback_method(ctx, function)):
                continue
            data = argument(call, "x", 0)
            if data is None or data.star or is_dataset(ctx, data.value):
                continue
            length, batch = static_length(ctx, data.value, function), _batch_of(call, method)
            if length is not None and batch and length % batch == 0:
                continue
            seen = "whose length the porter cannot see" if length is None else f"{length} samples, not whole batches"
            ctx.report(self.code, call.func.attr, f"`{code_of(ctx, receiver)}.{method}()` in the callback "
                       f"`{ctx.enclosing(function, cst.ClassDef).name.value}` runs on the IPU during `fit`, on "
                       f"`{code_of(ctx, data.value)}`, {seen}: the IPU rejects a "
                       "partial batch; give the callback arrays whose length is a multiple of the batch size "
                       "(pad them and cut the predictions back), or a dataset batched with "
                       "`drop_remainder=True`", fixed=False)

    def _report_own_method(self, ctx, entry, method) -> None:
        """``model.predict(x)`` where the model's class defines ``predict`` itself: Keras's batches do
        not apply, so its inputs are left alone, and what the method runs is out of Keras's compiled
        functions."""
        owner_class = ctx.enclosing(method, cst.ClassDef).name.value
        ctx.report(self.code, entry.call.func.attr,
                   f"`{code_of(ctx, entry.call.func)}` runs `{owner_class}.{entry.method}`, the model class's own "
                   f"method, not Keras's `{entry.method}`: its inputs are left as they are, and what it runs on the "
                   f"model runs outside Keras's compiled functions; to run that on the IPU, call the model in a "
                   f"`@tf.function(jit_compile=True)` function through `strategy.run`, on batches of one static shape",
                   fixed=False, severity="warning")

    def _give_fixed_batch(self, ctx, entry, fixed) -> None:
        """A call on arrays of a model that fixes its batch to B, with no ``batch_size`` of its own,
        gets ``batch_size=B``: Keras batches arrays by 32 otherwise, which such a model rejects (the
        shared analysis already counts B as the call's batch)."""
        size = str(fixed.size)
        ctx.replace(entry.call, lambda node: append_args(node, keyword_arg("batch_size", cst.Integer(size))))
        ctx.report(self.code, entry.call.func.attr,
                   f"`{entry.method}` gets `batch_size={size}`, the batch `{entry.model}` fixes "
                   f"({describe_fixed_batch(ctx, fixed)}): Keras batches arrays by {KERAS_DEFAULT_BATCH} otherwise, "
                   f"and a model built for batches of {size} rejects any other", fixed=True)

    def _report_unread_fixed_batch(self, ctx, entry, fixed) -> None:
        """A model that fixes its batch to a size the port cannot read: trimming or padding to
        Keras' default 32 would break it, so the call is reported instead."""
        ctx.report(self.code, entry.call.func.attr,
                   f"`{entry.method}` runs `{entry.model}`, which fixes its batch ({describe_fixed_batch(ctx, fixed)}) "
                   + ("to sizes that differ between the models its function is given" if fixed.varies
                      else "to a size the port cannot read")
                   + f", and gives no `batch_size`: Keras batches arrays by "
                   f"{KERAS_DEFAULT_BATCH}, which that model rejects, and the IPU rejects a partial batch; pass "
                   "`batch_size=` the model's batch and give the call a multiple of it (times the replicas and steps "
                   "per execution) samples: trim `fit`/`evaluate` arrays, pad `predict`'s and cut its answers back",
                   fixed=False)

    def _report_single_sample(self, ctx, entry) -> None:
        advice = _batch_of_one_advice(
            ctx, entry, "predict on a batch of samples, or pass `batch_size=1` (which compiles a separate executable, "
            "and a model built with a fixed batch size rejects)",
            "predict on a multiple of {smallest} samples (repeat the sample and keep the first answer)")
        ctx.report(self.code, entry.call.func.attr,
                   f"`predict` on one sample (`{code_of(ctx, entry.data)}`): Keras on the IPU runs whole batches "
                   f"of `batch_size` ({code_of(ctx, entry.batch) if entry.batch is not None else 'default 32'}) and "
                   f"rejects a partial one; {advice}", fixed=False)

    def _report_hidden_batch(self, ctx, entry) -> None:
        options = code_of(ctx, entry.hidden_options)
        entries = literal_options(ctx, entry.hidden_options, entry.owner)
        if entries is not None:
            self._report_options_dict(ctx, entry, options, entries)
            return
        batch = keyword(entry.call, "batch_size")
        if batch is None:
            hidden = "which may hold the batch size: the port cannot see it, and"
            multiple = "the batch size"
        else:  # the options may still hold what trimmed inputs must match
            held = _HIDDEN_BY_METHOD.get(entry.method, "a step count")
            hidden = (f"which may hold {held} that trimmed inputs must match: the port cannot see them and leaves "
                      "the inputs as they are, but")
            multiple = f"`{code_of(ctx, batch.value)}`"
        ctx.report(self.code, entry.call.func.attr,
                   f"`{entry.method}` gets arrays and its options through `**{options}`, {hidden} Keras on the IPU "
                   f"rejects a partial batch; trim the inputs"
                   + (", and a `sample_weight` among the options," if batch is not None and entry.method != "predict"
                      else "")
                   + f" to a multiple of {multiple} (and of the replicas and steps per execution)"
                   + (", and pad `predict`'s inputs instead, cutting the predictions back" if entry.method == "predict"
                      else ""), fixed=False)

    def _steps_divide(self, ctx, entry, steps: cst.Arg) -> bool:
        """``predict(x, steps=10)`` on 10000 samples: Keras batches them by ``samples / steps``, whole
        batches all, and one batch an execution (no replicas, no steps per execution), so nothing
        is left over."""
        count = static_int(ctx, steps.value)
        length = static_length(ctx, entry.data, entry.owner) if entry.data is not None else None
        return bool(count) and length is not None and length % count == 0 \
            and samples_per_execution(_entry_config(ctx, entry)) == 1

    def _report_batch_from_steps(self, ctx, entry, steps: cst.Arg) -> None:
        """``fit(x, y, steps_per_epoch=100)`` with no batch size: Keras batches the arrays by
        ``ceil(samples / steps)``, not by 32, so trimming to the default batch would still leave a
        partial one; left as it is, and reported."""
        name = steps.keyword.value
        ctx.report(self.code, entry.call.func.attr,
                   f"`{entry.method}` gets arrays and `{name}={code_of(ctx, steps.value)}` but no `batch_size`: Keras "
                   f"batches them by `ceil(samples / {name})`, which the port does not trim to, and Keras on the IPU "
                   f"rejects a partial batch; pass `batch_size=` and port again, or give it a number of samples that "
                   f"`{name}` divides into whole batches", fixed=False)

    def _report_positional_validation(self, ctx, entry) -> None:
        """``fit(x, y, 32, 3, 2, None, 0.2)``: the validation given by position (the seventh and
        eighth arguments), which the port reads by keyword only: left as it is, and reported."""
        positional = [arg for arg in entry.call.args if not arg.star and arg.keyword is None]
        for name, at in (("validation_split", 6), ("validation_data", 7)):
            given = positional[at] if len(positional) > at else None
            if given is None or is_name(given.value, "None") or number_value(given.value) == 0:
                continue
            ctx.report(self.code, given, f"`fit` gets `{name}` by position, which the port does not read: the "
                       "validation is neither trimmed nor split into whole batches, and Keras on the IPU rejects "
                       f"a partial batch; pass it as `{name}=...` and port again", fixed=False)

    def _report_options_dict(self, ctx, entry, options: str, entries) -> None:
        """``fit(**config)`` with a literal ``config`` the port reads but does not rewrite: it holds
        the inputs, or inputs whose trimming would change what the dict says (``validation_split``)."""
        given = keyword(entry.call, "batch_size")
        batch = (code_of(ctx, given.value) if given is not None else code_of(ctx, entries["batch_size"])
                 if "batch_size" in entries else f"{KERAS_DEFAULT_BATCH}, Keras' default")
        inputs = [key for key in ("x", "y", "sample_weight", "validation_data", "validation_split") if key in entries]
        held = ", ".join(f"`{key}`" for key in inputs) or "its options"
        if inputs == ["validation_split"]:
            advice = (", and the split need not give whole batches: pass `validation_split` to the call itself and "
                      "port again (the port then splits the inputs into whole batches), or split them yourself")
        else:
            advice = ("; pad the inputs to a multiple of the batch size and cut the predictions back"
                      if entry.method == "predict" else
                      "; trim the inputs to a multiple of the batch size (and of the replicas and steps per execution)")
            advice += f" where `{options}` is made, or pass them to the call itself and port again"
        ctx.report(self.code, entry.call.func.attr,
                   f"`{entry.method}` gets {held} through `**{options}` (batch size {batch}), which the port does not "
                   f"rewrite: Keras on the IPU rejects a partial batch{advice}", fixed=False)

    def _report_unpacked(self, ctx, entry) -> None:
        """``fit(*train_data)``: the arrays are unpacked in the call, out of the port's sight."""
        held = code_of(ctx, entry.unpacked)
        advice = ("pad them to a multiple of the batch size and cut the predictions back" if entry.method == "predict"
                  else "trim them to a multiple of the batch size (and of the replicas and steps per execution)")
        ctx.report(self.code, entry.call.func.attr, f"`{entry.method}` gets its inputs unpacked from `{held}`: the "
                   f"port cannot see them, and Keras on the IPU rejects a partial batch; {advice}", fixed=False)

    def _report_read_once(self, ctx, entry) -> None:
        """``predict(load_batch(path))``: padding needs the inputs twice (to pad them, then to count
        the answers to keep), and a call cannot be run again; trimming an input of unknown length
        could leave no sample at all."""
        multiple = self._multiple(ctx, entry)
        length = static_length(ctx, entry.data, entry.owner)
        whole = length is not None and multiple is not None and length % multiple == 0
        if multiple == 1 or whole or not _unknown_lengths_trimmed(ctx):
            return
        samples = (f"{length} samples, not whole batches" if length is not None
                   else "whose number of samples the port cannot see")
        ctx.report(self.code, entry.call.func.attr,
                   f"`predict` on `{code_of(ctx, entry.data)}`, {samples}: Keras on the IPU rejects a partial batch "
                   f"of `{multiple_code(ctx, entry, _entry_config(ctx, entry))}` samples; assign the input to a "
                   "variable first (the port then pads it and cuts the predictions back), or pad it to whole batches "
                   "yourself", fixed=False)

    def _report_encoding(self, ctx, entry, encoding: cst.BaseExpression) -> None:
        """``fit(encoded, labels, batch_size=16)`` with ``encoded = tokenizer(..., return_tensors="np")``:
        a ``BatchEncoding``, whose ``len`` counts its keys and whose slices are not its samples; the
        helpers take a ``dict`` of arrays."""
        code = code_of(ctx, encoding)
        ctx.report(self.code, entry.call.func.attr,
                   f"`{entry.method}` gets `{code}`, a tokenizer's encoding (a `BatchEncoding`, a dict class of its "
                   "own, whose length is its number of keys), which the port cannot trim or pad: Keras on the IPU "
                   f"rejects a partial batch of `{multiple_code(ctx, entry, _entry_config(ctx, entry))}` samples; "
                   f"give `{entry.method}` `dict({code})` and port again", fixed=False)

    def _report_unfollowed(self, ctx, entry) -> None:
        """``fit(tokenize(texts), labels, ...)``: arrays by Keras' rules (``y`` is given), made where
        the port cannot tell what they are; trimming an object it does not know could break the call."""
        names = ", ".join(f"`{code_of(ctx, node)}`" for node in entry.unfollowed)
        ctx.report(self.code, entry.call.func.attr,
                   f"`{entry.method}` gets {names}, which the port cannot tell are arrays, so it does not trim "
                   f"them: Keras on the IPU rejects a partial batch of "
                   f"`{multiple_code(ctx, entry, _entry_config(ctx, entry))}` samples; trim the inputs to a multiple "
                   "of it", fixed=False)

    def _report_too_few(self, ctx, entry, data: cst.BaseExpression, length: int, multiple: int,
                        exact: bool = True) -> None:
        """``data`` (the inputs, or the ``validation_data`` tuple) holds fewer samples than one
        execution (``length``, or at most ``length`` when not ``exact``): left as it is, since
        trimming would leave none."""
        what = "validation samples" if data is not entry.data else "samples"
        # Validation data batched by a `validation_batch_size` of its own is made whole by that, not `batch_size`.
        batched_by = "validation_batch_size" if data is not entry.data and keyword(
            entry.call, "validation_batch_size") is not None and entry.batch is keyword(
            entry.call, "validation_batch_size").value else "batch_size"
        ctx.report(self.code, entry.call.func.attr,
                   f"`{entry.method}` gets {'' if exact else 'at most '}{length} {what} (`{code_of(ctx, data)}`), "
                   "fewer than one IPU "
                   f"execution of {multiple}: trimming would leave none; pass a `{batched_by}` that divides "
                   f"{length} (and the replicas and steps per execution), or more samples", fixed=False)

    def _held_too_few(self, ctx, entry, checked, held: cst.BaseExpression, smallest: Optional[int]) -> bool:
        """``validation_data=held_out``, a tuple out of the call: reported, and True, when a tuple it
        may hold is known to have fewer samples than the smallest execution (``held_out = (x[-20:],
        y[-20:])`` at batch 32), as the helper would raise on it where the call reads it."""
        if smallest is None:
            return False
        for made, scope in held_values(ctx, held, entry):
            parts = [element.value for element in made.elements if not is_name(element.value, "None")] \
                if isinstance(made, (cst.Tuple, cst.List)) else []
            if not parts or _batch_of_all(ctx, checked, parts):
                continue
            most = most_samples(ctx, parts[0], scope or entry.owner)
            if most is not None and most < smallest:
                counted = static_length(ctx, parts[0], scope or entry.owner)
                self._report_too_few(ctx, checked, held, most, smallest, exact=counted is not None)
                return True
        return False

    @staticmethod
    def _validation_length(ctx, entry, validation_targets) -> Optional[int]:
        """The number of samples of the trimmed validation data, when it is one tuple of static length:
        its parts hold the same samples, so the first whose count shows gives it (the labels of
        ``load_data()`` show it where the images went through ``reshape``)."""
        if len(entry.validation) != 1 or entry.held_validation is not None or not validation_targets:
            return None
        counts = (static_length(ctx, node, entry.owner) for node in validation_targets)
        return next((count for count in counts if count is not None), None)

    @staticmethod
    def _message(ctx, entry, targets, samples: Optional[int], what: str = "inputs", validation=(),
                 validation_samples: Optional[int] = None) -> str:
        """What trimming ``targets`` (and the ``validation`` data, batched as the inputs) does: the
        multiple, and how ``samples`` inputs (and ``validation_samples``) shrink."""
        config = _entry_config(ctx, entry)
        multiple = multiple_code(ctx, entry, config)
        parts = [f"batch {code_of(ctx, entry.batch) if entry.batch is not None else KERAS_DEFAULT_BATCH}"]
        replicas = throughput.config_replicas(config)
        if replicas > 1:
            parts.append(f"{replicas} replicas")
        steps = throughput.config_steps(config)
        accumulation = throughput.config_accumulation(config)
        if steps is not None and steps > 1:
            parts.append(f"{steps} steps per execution")
        elif accumulation > 1:
            parts.append(f"{accumulation} accumulated batches")
        names = ", ".join(f"`{code_of(ctx, node)}`" for node in targets)
        if validation:
            held_out = ", ".join(f"`{code_of(ctx, node)}`" for node in validation)
            names = f"{names} and validation data {held_out}" if names else held_out
            what = what if targets else "validation data"
        batch = static_int(ctx, entry.batch) if entry.batch is not None else KERAS_DEFAULT_BATCH

        def kept(count: int) -> int:
            # The helper trims to the smallest execution what holds less than a whole one.
            execution = batch * samples_per_execution(config)
            return throughput.usable_samples(count, execution if count >= execution
                                             else batch * smallest_per_execution(config))
        if batch is not None and (samples is not None or validation_samples is not None):
            counts = []
            if samples is not None:
                counts.append(f"{samples} {'training ' if validation else ''}samples become {kept(samples)}")
            if validation_samples is not None:
                counts.append(f"{validation_samples} validation samples become {kept(validation_samples)}")
            counted = "; " + ", ".join(counts)
        elif batch is not None:
            counted = f"; at most {batch * samples_per_execution(config) - 1} samples are dropped"
        else:
            counted = f"; at most `{multiple} - 1` samples are dropped"
        if entry.method == "predict":
            counted += ", and `predict` returns no predictions for them"
        return (f"`{entry.call.func.attr.value}` {what} {names} trimmed to a multiple of `{multiple}` samples "
                f"({' x '.join(parts)}): the IPU rejects a partial batch, so the last samples that do not fill "
                f"an execution are not used{counted}")

    @staticmethod
    def _emit_helper(ctx, code: str, names: Set[str]) -> None:
        anchor = _helper_anchor(ctx, names)
        if anchor is None:
            return
        helpers = statements(code)
        blank = cst.EmptyLine(indent=False, whitespace=cst.SimpleWhitespace(""))
        # Two blank lines around them: the helpers own them, the statement after keeps its comments.
        helpers[0] = helpers[0].with_changes(leading_lines=[blank, blank])
        helpers[-1] = helpers[-1].with_changes(body=helpers[-1].body.with_changes(footer=[blank, blank]))
        ctx.insert_before(anchor, helpers, first=True)
        ctx.replace(anchor, _without_leading_blank_lines)


def _repeatable_part(ctx, data: cst.BaseExpression, inputs) -> Optional[cst.BaseExpression]:
    """For several inputs written out, one of them made by a call (``[np.repeat(query[None], n,
    axis=0), gallery]``), an input that can be read again (``gallery``): Keras takes as many samples
    from each, so its length tells how many predictions to keep, and the call runs once, padded."""
    if len(inputs) != 1 or inputs[0] is not data or not isinstance(data, (cst.List, cst.Tuple)):
        return None
    return next((element.value for element in data.elements
                 if isinstance(element, cst.Element) and repeatable(ctx, element.value)), None)


def _batch_of(call: cst.Call, method: str) -> int:
    """The batch size of a ``predict``/``evaluate`` call: its literal ``batch_size``, else Keras's
    default; 0 when it is not a literal (no length is then known to be whole batches)."""
    given = argument(call, "batch_size", 1 if method == "predict" else 2)
    if given is None:
        return KERAS_DEFAULT_BATCH
    return int(given.value.value) if isinstance(given.value, cst.Integer) else 0


def _held_trimmed(held: cst.BaseExpression, name: str, multiple: str, optional: bool) -> cst.BaseExpression:
    """Held validation data trimmed part by part, as Keras takes the tuple apart (a tuple of lists
    is not a list of samples); a None it may hold instead is kept."""
    held_code = _EMPTY.code_for_node(held)
    code = f"tuple({name}(part, {multiple}) for part in {held_code})"
    if optional:
        code += f" if {held_code} is not None else None"
    return cst.parse_expression(code)


def _without_leading_blank_lines(statement):
    return statement.with_changes(leading_lines=statement.leading_lines[leading_blank_count(statement):])


_OWN_STEPS: SharedKey[dict] = SharedKey("keras-own-steps-per-execution")


def _entry_config(ctx, entry):
    """The options a call's batch arithmetic follows: the command line's, with the
    ``steps_per_execution=K`` the script compiles the model with in place of the option's (the port
    keeps the script's K, and the batches of an epoch must be a multiple of K on the IPU)."""
    config = ctx.config
    if keras_extensions_off(ctx) is not None:
        # Without the IPU Keras extensions, Keras' own data handler runs the batches left over in a
        # shorter last execution, and the models accumulate no gradients (IPU110): whole batches.
        return dataclasses.replace(config, steps_per_execution=None, gradient_accumulation=None)
    if (config.steps_per_execution is not None or config.gradient_accumulation) and loaded_uncompiled(
            ctx, entry, training_calls(ctx, helper_name(ctx))):
        # A loaded model that is not compiled again runs one batch per execution (IPU108 says so),
        # and a saved model keeps no gradient accumulation (IPU110 says so). Unpipelined, it is
        # replicated over every IPU of a pipelined port: the pipeline's multiple is kept, which
        # covers those replicas.
        if config.pipeline_stages:
            return dataclasses.replace(config, steps_per_execution=None) if config.steps_per_execution else config
        return dataclasses.replace(config, steps_per_execution=None, gradient_accumulation=None)
    steps = ctx.shared(_OWN_STEPS, lambda: _own_steps(ctx)).get(entry.model)
    if steps is not None:
        return dataclasses.replace(config, steps_per_execution=steps)
    if config.steps_per_execution is not None and (one_batch_call(ctx, entry.model, entry.owner) is not None or never_compiled(
            ctx, entry, training_calls(ctx, helper_name(ctx)))):
        # IPU108 gives no `steps_per_execution` to a model trained batch by batch, and none reaches a
        # model that is never compiled: one batch per execution, so whole batches are enough.
        return dataclasses.replace(config, steps_per_execution=None)
    return config


def _own_steps(ctx) -> dict:
    """Per model, the ``steps_per_execution=K`` of its ``compile`` calls, when they agree on a
    number (K > 1, or any K when the command line asks for steps per execution: the script's wins)."""
    given: dict = {}
    for entry in training_calls(ctx, helper_name(ctx)):
        value = keyword(entry.call, "steps_per_execution") if entry.method == "compile" else None
        if value is not None:
            given.setdefault(entry.model, set()).add(static_int(ctx, value.value))
    least = 1 if ctx.config.steps_per_execution is not None else 2
    own = {}
    for model, values in given.items():
        steps = values.pop() if len(values) == 1 else None
        if isinstance(steps, int) and steps >= least:
            own[model] = steps
    return own


def _batch_of_all(ctx, entry, inputs) -> bool:
    """``predict(x, batch_size=len(x))``: one batch holds every sample of an input, so no batch is
    partial (with one batch an execution and no replicas) and there is nothing to pad or trim."""
    return _counted_input(ctx, entry, inputs) is not None


def _counted_input(ctx, entry, inputs) -> Optional[int]:
    """The position in ``inputs`` of the input whose length is the batch size (``fit(x, y,
    batch_size=len(x))`` or ``x.shape[0]``, a full batch), with one batch an execution and no
    replicas, or None."""
    batch = entry.batch
    if isinstance(batch, cst.Call) and is_name(batch.func, "len") and len(batch.args) == 1 \
            and ctx.qualified_name(batch.func) is None:
        measured = batch.args[0].value
    elif isinstance(batch, cst.Subscript) and isinstance(batch.value, cst.Attribute) \
            and batch.value.attr.value == "shape" and len(batch.slice) == 1 \
            and isinstance(batch.slice[0].slice, cst.Index) and code_of(ctx, batch.slice[0].slice.value) == "0":
        measured = batch.value.value
    else:
        return None
    if samples_per_execution(_entry_config(ctx, entry)) != 1:
        return None
    counted = "".join(code_of(ctx, measured).split())
    return next((index for index, node in enumerate(inputs) if "".join(code_of(ctx, node).split()) == counted), None)


def _grown_in_loop(ctx, entry) -> Optional[cst.Call]:
    """The join that makes the variable ``predict`` reads longer along the steps in the loop around
    the call (``ids = np.concatenate([ids, [[token]]], axis=1)``), or None. The variable may be
    given made a batch of one (``np.expand_dims(frames, axis=0)``, ``frames[None]``), as the frames
    a next-frame model predicts from, one more each time round."""
    grown = _batched_variable(entry.data)
    if grown is None:
        return None
    loop = next((ancestor for ancestor in ctx.ancestors(entry.call) if isinstance(ancestor, (cst.For, cst.While))
                 or ancestor is entry.owner), None)
    if not isinstance(loop, (cst.For, cst.While)):
        return None
    inside = {id(node) for node in walk(loop)}
    for statement, name, value in assignments(ctx, entry.owner):
        parts = joined_along_steps(ctx, value, unbatched=grown is not entry.data) \
            if name == grown.value and id(statement) in inside else None
        if parts is not None and any(is_name(part, name) for part in parts):
            return value
    return None


def _batched_variable(data: Optional[cst.BaseExpression]) -> Optional[cst.Name]:
    """The variable ``data`` is, or makes a batch of one of: ``frames`` in ``frames``,
    ``np.expand_dims(frames, axis=0)``, ``frames[None, ...]`` or ``np.array([frames])``; None
    for anything else."""
    while isinstance(data, (cst.Call, cst.Subscript, cst.List, cst.Tuple)):
        if isinstance(data, cst.Subscript):
            data = data.value
        elif isinstance(data, cst.Call):
            data = data.args[0].value if data.args and data.args[0].keyword is None and not data.args[0].star else None
        else:
            data = data.elements[0].value if len(data.elements) == 1 else None
    return data if isinstance(data, cst.Name) else None


def _trained_without_batch(entry) -> bool:
    """``fit``/``evaluate`` on arrays ``x`` (and ``y``) with no ``batch_size`` and no validation
    data or split: Keras' default batch of 32, whatever the arrays hold."""
    return entry.method in ("fit", "evaluate") and entry.batch is None and bool(entry.arrays) \
        and not entry.validation and keyword(entry.call, "validation_split") is None and entry.data is not None


def _batch_of_one_advice(ctx, entry, whole: str, remedy: str) -> str:
    """What a finding on a batch of one advises: ``whole`` when one batch is a whole execution; with
    replicas or accumulated batches, that one sample cannot fill an execution, then ``remedy`` (its
    ``{smallest}``: the samples an execution needs), never ``batch_size=1``."""
    smallest = smallest_per_execution(_entry_config(ctx, entry))
    if smallest == 1:
        return whole
    return (f"a batch of one cannot fill one IPU execution of {smallest} samples (a batch on every replica): "
            + remedy.format(smallest=smallest))


def _repeated(ctx, entry) -> bool:
    """The call runs once an item of a loop: a ``for``/``while`` body or the element of a
    comprehension (``[model.predict(t[None]) for t in texts]``) of its function, or of a function
    calling that one (an agent's ``act(state)``, called at each step of an episode)."""
    return _repeated_call(ctx, entry.call, entry.owner) or _caller_in_loop(ctx, entry) is not None


def _batch_of_one_whole(ctx, entry) -> bool:
    """``predict`` on one sample with no ``batch_size`` given, whose smallest execution is one batch
    (no replicas or accumulation to fill): ``batch_size=1`` makes it a whole execution."""
    return entry.batch is None and smallest_per_execution(_entry_config(ctx, entry)) == 1 \
        and single_sample(ctx, entry.data, entry.owner)


def _caller_in_loop(ctx, entry) -> Optional[cst.Call]:
    """The first call, made once an item of a loop, of the function ``entry`` is made in
    (``agent.act(state)`` at each step of an episode); None when there is none."""
    if not isinstance(entry.owner, cst.FunctionDef):
        return None
    return next((call for call in calls_of(ctx, entry.owner) if _repeated_call(ctx, call, owner(ctx, call))), None)


def _repeated_call(ctx, call: cst.Call, scope: cst.CSTNode) -> bool:
    """``call`` runs once an item of a loop of ``scope`` (its function or module)."""
    if in_loop(ctx, call, scope):
        return True
    for ancestor in ctx.ancestors(call):
        if ancestor is scope or isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            return False
        # the first `for`'s iterable is read once; the element and the rest run for each item
        if isinstance(ancestor, cst.BaseComp) and not any(node is ancestor.for_in.iter
                                                          for node in (call, *ctx.ancestors(call))):
            return True
    return False


# The step count that, given without a batch size, makes Keras batch arrays by `ceil(samples / steps)`.
_STEPS_BY_METHOD = {"fit": "steps_per_epoch", "search": "steps_per_epoch"}

# What `**options` may hold that inputs trimmed by their batch size must match, by method.
_HIDDEN_BY_METHOD = {"fit": "a `sample_weight`, a `validation_split` or a step count",
                     "evaluate": "a `sample_weight` or a step count"}


def _unknown_lengths_trimmed(ctx) -> bool:
    """Inputs of unknown length are trimmed when the port makes the file an IPU program, or changes
    its batch arithmetic; a file that already runs on the IPU (it makes an ``IPUStrategy``) has
    its sizes right, as far as the porter can tell."""
    return speed_asked(ctx.config) or not any(
        (ctx.qualified_name(call.func) or "").endswith("ipu_strategy.IPUStrategy") for call in ctx.nodes(cst.Call))


def _already_trimmed(ctx, node: cst.BaseExpression, scope: cst.CSTNode, helpers) -> bool:
    """A call of a helper, or a variable of ``scope`` only ever assigned from one (the parts
    ``(x_fit, y_fit), (x_val, y_val) = split_validation_to_multiple(...)`` of an earlier port), or
    a list, tuple or dict of such variables."""
    if any(is_helper_call(node, helper) for helper in helpers):
        return True
    if isinstance(node, (cst.List, cst.Tuple, cst.Dict)) and _of_variables(node):
        # `[enc_fit, dec_fit]`: the parts a split of several inputs unpacked, each trimmed already
        return all(_already_trimmed(ctx, element.value, scope, helpers) for element in node.elements)
    if not isinstance(node, cst.Name):
        return False
    sources = [statement for statement, name, _ in assignments(ctx, scope) if name == node.value]
    return bool(sources) and all(
        isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Assign)
        and any(is_helper_call(statement.body[0].value, helper) for helper in helpers)
        for statement in sources)


def _taken_by(edited: dict, index: int, name: str):
    """A replacement that notes the edited input and puts its part in its place: a name, or a
    list or tuple of names (``[enc_fit, dec_fit]``)."""
    def replace(node):
        edited[index] = node
        return cst.parse_expression(name)

    return replace


def _split_statement(names, inputs, edited: dict, call: str, leading_lines, indent: int,
                     held_whole: Optional[str] = None):
    """The builder of ``(x_fit, y_fit), (x_val, y_val) = split(...)`` (or ``(x_fit, y_fit),
    held_whole = ...``) from the edited inputs, at ``indent``, broken like the calls the port
    changes when it grows too long."""
    def build(_moved):
        values = ", ".join(_EMPTY.code_for_node(edited.get(index, node)) for index, node in enumerate(inputs))
        comma = "," if len(names) == 1 else ""
        held = held_whole or f"({', '.join(held for _, held in names)}{comma})"
        targets = f"({', '.join(fit for fit, _ in names)}{comma}), {held}"
        made = statements(f"{targets} = {call.format(values)}\n")[0]
        assign = made.body[0]
        assign = assign.with_changes(value=_hanging_when_long(assign.value, indent, len(targets) + 3))
        assign = assign.with_changes(value=layout(indent, len(targets) + 3)(assign.value))
        return [made.with_changes(body=[assign], leading_lines=leading_lines)]

    return build


def _hanging_when_long(call: cst.Call, indent: int, offset: int) -> cst.Call:
    """``call`` with its arguments on the next line, indented once, when the statement does not fit
    on one line: lined up after the parenthesis, far right behind the targets (``([enc_fit,
    dec_fit], y_fit), ...``), the arguments would take a line each, or pass the line limit."""
    if indent + 4 + offset + len(_EMPTY.code_for_node(call)) <= LINE_LIMIT:  # 4: a scope the port may add
        return call
    return call.with_changes(whitespace_before_args=cst.ParenthesizedWhitespace(
        indent=True, last_line=cst.SimpleWhitespace(" " * 4)))


def _nones_last(arrays) -> bool:
    """No array after a ``None`` among ``fit``'s inputs (``fit(x, None)``, not ``fit(x, None,
    sample_weight=w)``): without the ``None``, the parts keep their places in ``validation_data``."""
    nones = [is_name(arg.value, "None") for arg in arrays]
    return all(nones[nones.index(True):]) if True in nones else True


def _validation_tuple(arrays, held_names) -> str:
    """``(x_val, y_val)`` (or ``(x_val, None)``) for ``fit``'s inputs ``arrays``: the name of the
    validation part of each, and a ``None`` kept where the input is ``None``."""
    held = iter(held_names)
    values = ["None" if is_name(arg.value, "None") else next(held) for arg in arrays]
    return f"({', '.join(values)}{',' if len(values) == 1 else ''})"


def _of_variables(node: cst.BaseExpression) -> bool:
    """A variable, or a list, tuple or dict (without ``*`` or ``**``) of variables, as a model of
    several inputs or outputs takes them. A ``None`` in a list (``sample_weight=[w, None]``, no
    weights for an output) is no variable to unpack a part into."""
    if isinstance(node, cst.Name):
        return True
    if isinstance(node, (cst.List, cst.Tuple)):
        return bool(node.elements) and all(isinstance(element, cst.Element) and isinstance(element.value, cst.Name)
                                           and not is_name(element.value, "None") for element in node.elements)
    if isinstance(node, cst.Dict):
        return bool(node.elements) and all(isinstance(element, cst.DictElement) and isinstance(element.value, cst.Name)
                                           for element in node.elements)
    return False


# The stem of the parts of an input that is not a variable nor a list of them (a dict of arrays,
# `to_categorical(y)`), by its place among `fit`'s inputs (x, y, sample_weight).
_STEMS = ("inputs", "targets", "sample_weights")


def _input_part_names(ctx, node: cst.BaseExpression, position: int, taken: set):
    """The training and validation parts of the input ``node``, as assignment targets and
    expressions: ``x_fit``, ``x_val`` for a variable; ``[enc_fit, dec_fit]``, ``[enc_val,
    dec_val]`` for a list (a tuple stays a tuple) of variables, unpacked as the split helper
    gives its parts back in the input's own type; one variable for each part of anything else
    (a dict, whose keys an assignment cannot unpack, or a call such as ``to_categorical(y)``),
    named by its place among the inputs."""
    if isinstance(node, cst.Name):
        return _part_names(ctx, node.value, taken)
    if isinstance(node, cst.Dict) or not _of_variables(node):
        return _part_names(ctx, _STEMS[min(position, len(_STEMS) - 1)], taken)
    parts = [_part_names(ctx, element.value.value, taken) for element in node.elements]
    opening, closing = ("[", "]") if isinstance(node, cst.List) else ("(", ")")
    comma = "," if len(parts) == 1 and isinstance(node, cst.Tuple) else ""
    return tuple(f"{opening}{', '.join(part[side] for part in parts)}{comma}{closing}" for side in (0, 1))


def _part_names(ctx, name: str, taken: set):
    """Fresh names for the training and validation parts of ``name``: ``x_train`` -> ``x_fit``,
    ``x_val``."""
    stem = name[:-len("_train")] if name.endswith("_train") and len(name) > len("_train") else name
    parts = []
    for suffix in ("fit", "val"):
        chosen = fresh_name(ctx, f"{stem}_{suffix}", taken=taken)
        taken.add(chosen)
        parts.append(chosen)
    return parts[0], parts[1]


# NumPy calls that join the arrays of a list or tuple into one.
_ARRAY_JOINS = frozenset({"numpy.concatenate", "numpy.vstack", "numpy.row_stack", "numpy.hstack"})

# A loop (or comprehension clause) over windows of samples, and the width of a window.
_Window = Tuple[Union[cst.For, cst.CompFor], Union[int, cst.BaseExpression]]


def _loop_window(ctx, data: cst.BaseExpression) -> Optional[_Window]:
    """The loop and the width of the window of samples ``data`` reads when its last window may be
    shorter: ``x[i:i + n]`` in ``for i in range(start, stop, n)``, or ``x[b * n:(b + 1) * n]`` in
    ``for b in range(count)`` with a count rounded up (``math.ceil(len(x) / n)``), read directly,
    through a variable assigned it once (``xb = x[i:i + n]``), or through an index
    (``x[rows]`` with ``rows = order[i:i + n]``). The width is an int, or the expression of ``n``
    when it is not a constant (``args.batch_size``)."""
    data = single_value(ctx, data)
    if not (isinstance(data, cst.Subscript) and len(data.slice) == 1):
        return None
    first = data.slice[0].slice
    if isinstance(first, cst.Index):
        return _loop_window(ctx, first.value)
    if not isinstance(first, cst.Slice) or first.step is not None:
        return None
    return _stepped_window(ctx, data, first) or _counted_window(ctx, data, first)


def _joined_window(ctx, data: cst.BaseExpression) -> Optional[Tuple[cst.BaseExpression, _Window]]:
    """The part of ``data`` that is a loop's window (see ``_loop_window``) and that window, when
    ``data`` joins it to other arrays: ``np.concatenate((real, fake))``, as a GAN's discriminator
    step joins the real images of the batch to as many generated ones. Along the samples or along
    another axis, a short last window makes a short joined batch too. None for anything else."""
    data = single_value(ctx, data)
    if not (isinstance(data, cst.Call) and data.args and not data.args[0].star
            and ctx.qualified_name(data.func) in _ARRAY_JOINS):
        return None
    parts = data.args[0].value
    if not isinstance(parts, (cst.List, cst.Tuple)):
        return None
    for element in parts.elements:
        window = None if isinstance(element, cst.StarredElement) else _loop_window(ctx, element.value)
        if window is not None:
            return element.value, window
    return None


def _stepped_window(ctx, data: cst.Subscript, window: cst.Slice) -> Optional[_Window]:
    """``x[i:i + n]`` in ``for i in range(start, stop, n)``, unless the range gives whole windows only."""
    upper = window.upper
    if not (isinstance(window.lower, cst.Name) and isinstance(upper, cst.BinaryOperation)
            and isinstance(upper.operator, cst.Add) and is_name(upper.left, window.lower.value)):
        return None
    loop = _range_loop(ctx, data, window.lower.value)
    step = argument(loop.iter, "step", 2) if loop is not None else None
    if step is None:
        return None
    width = static_int(ctx, upper.right)
    if width is None and code_of(ctx, step.value) == code_of(ctx, upper.right):
        width = upper.right
    if width is None or (isinstance(width, int) and static_int(ctx, step.value) != width):
        return None
    return None if _whole_windows_only(ctx, loop, width, data) else (loop, width)


def _counted_window(ctx, data: cst.Subscript, window: cst.Slice) -> Optional[_Window]:
    """``x[b * n:(b + 1) * n]`` in ``for b in range(count)`` where ``count`` is rounded up."""
    lower, upper = window.lower, window.upper
    if not (isinstance(lower, cst.BinaryOperation) and isinstance(lower.operator, cst.Multiply)
            and isinstance(lower.left, cst.Name) and isinstance(upper, cst.BinaryOperation)
            and isinstance(upper.operator, cst.Multiply) and code_of(ctx, upper.right) == code_of(ctx, lower.right)):
        return None
    index = upper.left
    if not (isinstance(index, cst.BinaryOperation) and isinstance(index.operator, cst.Add)
            and is_name(index.left, lower.left.value) and static_int(ctx, index.right) == 1):
        return None
    loop = _range_loop(ctx, data, lower.left.value)
    count = argument(loop.iter, "stop", 0) if loop is not None and len(loop.iter.args) == 1 else None
    if count is None or rounded_up(ctx, _count_value(ctx, count.value)) is None:
        return None
    width = static_int(ctx, lower.right)
    return loop, lower.right if width is None else width


def _count_value(ctx, count: cst.BaseExpression) -> cst.BaseExpression:
    """What a ``range`` count is assigned: once in its function (``steps = math.ceil(...)``), or
    once in its class for ``self.<attr>`` (a trainer's ``self.n_batches``, set in ``__init__``);
    else ``count``."""
    if isinstance(count, cst.Attribute) and is_name(count.value, "self"):
        values = self_attribute_values(ctx, count)
        return values[0] if len(values) == 1 else count
    return single_value(ctx, count)


def _range_loop(ctx, data: cst.CSTNode, target: str) -> Optional[Union[cst.For, cst.CompFor]]:
    """The ``for`` loop or comprehension around ``data`` whose target ``target`` runs over a ``range``."""
    loop = next((node for node in _loops_around(ctx, data) if is_name(node.target, target)), None)
    if loop is None or not (isinstance(loop.iter, cst.Call) and is_name(loop.iter.func, "range")):
        return None
    return loop


def _loops_around(ctx, node: cst.CSTNode) -> Iterator[Union[cst.For, cst.CompFor]]:
    """The ``for`` loops and comprehension clauses that ``node`` runs in, innermost first."""
    for outer in ctx.ancestors(node):
        if isinstance(outer, cst.For):
            yield outer
        elif isinstance(outer, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            clauses = []
            clause = outer.for_in
            while clause is not None:
                clauses.append(clause)
                clause = clause.inner_for_in
            yield from reversed(clauses)


def _whole_windows_only(ctx, loop: Union[cst.For, cst.CompFor], width: Union[int, cst.BaseExpression],
                        at: cst.CSTNode) -> bool:
    """The ``range`` of ``loop`` gives only whole windows: it stops a window short of the end
    (``range(0, len(x) - 32 + 1, 32)``), or at a length that is a known multiple of ``width``."""
    stop = argument(loop.iter, "stop", 1)
    if stop is None:
        return False
    if _stops_a_window_short(ctx, stop.value, width):
        return True
    length = _len_of(ctx, stop.value, at)
    return isinstance(width, int) and length is not None and length % width == 0


def _stops_a_window_short(ctx, stop: cst.BaseExpression, width: Union[int, cst.BaseExpression]) -> bool:
    """``stop`` is ``n - width`` (``+ 1``), ``n - len(x) % width``, or ``n - k`` with ``k`` at least
    ``width - 1``: every window that starts before it ends by ``n``. (``len(x) - 1`` in steps of
    32 lets a last window of fewer samples start.)"""
    extra = 0
    if isinstance(stop, cst.BinaryOperation) and isinstance(stop.operator, cst.Add):
        extra = static_int(ctx, stop.right)
        if extra is None:
            return False
        stop = stop.left
    if not (isinstance(stop, cst.BinaryOperation) and isinstance(stop.operator, cst.Subtract)):
        return False
    taken = stop.right
    if isinstance(taken, cst.BinaryOperation) and isinstance(taken.operator, cst.Modulo):
        return extra <= 0 and _same_width(ctx, taken.right, width)  # down to a multiple of the width
    if _same_width(ctx, taken, width):
        return extra <= 1
    count = static_int(ctx, taken)
    return isinstance(width, int) and count is not None and count - extra >= width - 1


def _same_width(ctx, node: cst.BaseExpression, width: Union[int, cst.BaseExpression]) -> bool:
    """``node`` is the window's width: the same int, or the same expression."""
    if isinstance(width, int):
        return static_int(ctx, node) == width
    return code_of(ctx, node) == code_of(ctx, width)


def _len_of(ctx, stop: cst.BaseExpression, at: cst.CSTNode) -> Optional[int]:
    """The value of a ``range`` stop: an int, or ``len(x)`` of data of known length."""
    if isinstance(stop, cst.Call) and is_name(stop.func, "len") and len(stop.args) == 1:
        scope = ctx.enclosing_function(at) or ctx.module
        return static_length(ctx, stop.args[0].value, scope)
    return static_int(ctx, stop)


RULE = DivisibleDataset()


def _drawn_each_time(ctx, entry, inputs) -> Optional[str]:
    """The first of ``inputs`` (of a call in a loop, that gives no batch size) that each time round
    the loop is bound anew by a call (``x, y = sample_episode(classes, n_way, k_shot)``, ``batch =
    np.array(random.sample(memory, 32))``): a draw per episode or step, whose length may fall short
    of a batch. None when any input is not (a slice of a dataset by fold, a split of it)."""
    if entry.batch is not None or not entry.in_loop:
        return None
    loop = next((node for node in ctx.ancestors(entry.call) if isinstance(node, (cst.For, cst.While))), None)
    for node in inputs:
        bindings = reaching_bindings(ctx, node, entry.owner) if isinstance(node, cst.Name) else []
        if not bindings or not all(loop in ctx.ancestors(statement) and _bound_by_call(statement)
                                   for statement, _ in bindings):
            return None
    return code_of(ctx, inputs[0])


def _bound_by_call(statement) -> bool:
    """``statement`` assigns what a call returns (``x, y = sample(...)``)."""
    assign = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and statement.body else None
    return isinstance(assign, cst.Assign) and isinstance(assign.value, cst.Call)
