from typing import Optional

import libcst as cst

from porter.context import code_of

from porter import throughput
from porter.cstutil import keyword, statements
from porter.imports import _top_level_imports
from porter.rules.keras._analysis.fit import (KERAS_DEFAULT_BATCH, call_columns, is_helper_call, layout, multiple_code,
                             samples_per_execution, smallest_per_execution, speed_asked, static_int, static_samples,
                             training_calls)
from porter.rule import FIX, KERAS, Example, Rule, snippet
from porter.scopes import fresh_name

MARKER = "(ipu-port)"
_NAMES = ("trim_to_multiple", "ipu_trim_to_multiple", "trim_to_ipu_multiple")
_HELPER = '''def {name}(data, multiple, smallest=None):
    """Drop the last samples of `data` so that its length is a multiple of `multiple`, or of
    `smallest` when it holds less than `multiple` {marker}: the IPU only runs whole executions
    of full batches. `data` is an array or a tensor, or a list, tuple or dict of them."""
    if isinstance(data, dict):
        return {{key: {name}(value, multiple, smallest) for key, value in data.items()}}
    if isinstance(data, (list, tuple)):
        return type(data)({name}(value, multiple, smallest) for value in data)
    if smallest is not None and len(data) < multiple:
        multiple = smallest
    return data[:len(data) - len(data) % multiple]
'''


def existing_helper(ctx) -> Optional[str]:
    """The name of the trimming helper an earlier port wrote into the file, if any."""
    for statement in ctx.module.body:
        if not isinstance(statement, cst.FunctionDef):
            continue
        docstring = statement.get_docstring(clean=False)
        if docstring and MARKER in docstring and "multiple" in docstring:
            return statement.name.value
    return None


def helper_name(ctx) -> str:
    found = existing_helper(ctx)
    if found is not None:
        return found
    return fresh_name(ctx, *_NAMES)


def _helper_anchor(ctx) -> Optional[cst.BaseStatement]:
    """The first statement after the imports at the top of the file."""
    body = list(ctx.module.body)
    imports = _top_level_imports(ctx.module)
    start = body.index(imports[-1]) + 1 if imports else 0
    return body[start] if start < len(body) else None


def _trimmed(name: str, multiple: str):
    template = cst.parse_expression(f"{name}(data, {multiple})")

    def build(node: cst.BaseExpression) -> cst.BaseExpression:
        first = template.args[0].with_changes(value=node)
        return template.with_changes(args=[first, *template.args[1:]])

    return build


class DivisibleDataset(Rule):
    code = "IPU107"
    name = "divisible-dataset"
    kind = FIX
    frameworks = frozenset({KERAS})
    summary = ("Trim NumPy/tensor inputs of `fit`/`evaluate`/`predict` to whole IPU executions "
               "(batch x replicas x steps per execution).")
    rationale = (
        "Keras on the IPU rejects NumPy or tensor inputs whose length leaves a partial batch, and the "
        "batches per epoch of each replica must be a multiple of `steps_per_execution` (Targeting the IPU "
        "from TensorFlow 2, \"Keras with IPUs\"); Graphcore's Keras tutorial trims its data for this "
        "(\"Preparing the dataset\"). When "
        "`--steps-per-execution`, replication (`--ipus`) or `--gradient-accumulation` is asked for, the "
        "inputs are passed through one helper function, written once per file, that drops the last "
        "samples: a multiple of batch x replicas x steps per execution (which already counts the "
        "accumulated batches; with `auto`, batch x replicas x accumulation). This changes what is "
        "trained on (at most one execution's worth of samples), so every trimming is reported. "
        "Inputs already trimmed are left alone."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf


            def main():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.fit(x_train, y_train, batch_size=64, epochs=3)
            """,
            snippet("""\
            import tensorflow as tf


            """) + _HELPER.format(name="trim_to_multiple", marker=MARKER) +
            snippet("""\


            def main():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.fit(trim_to_multiple(x_train, 1024, 128), trim_to_multiple(y_train, 1024, 128),
                          batch_size=64, epochs=3)
            """),
            options={"steps_per_execution": 8, "ipus": 2},
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


            """) + _HELPER.format(name="trim_to_multiple", marker=MARKER) +
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

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.fit(x_train, y_train, batch_size=64)
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
    )

    def run(self, ctx) -> None:
        config = ctx.config
        if not speed_asked(config):
            return
        name = helper_name(ctx)
        trimmed = False
        for entry in training_calls(ctx, name):
            targets = [arg.value for arg in entry.arrays] + list(entry.validation)
            targets = [node for node in targets if not is_helper_call(node, name)]
            if not targets:
                continue
            multiple = multiple_code(ctx, entry, config)
            arguments = multiple
            if smallest_per_execution(config) != samples_per_execution(config):
                arguments += ", " + multiple_code(ctx, entry, config, smallest_per_execution(config))
            for node in targets:
                ctx.replace(node, _trimmed(name, arguments))
            ctx.replace(entry.call, layout(*call_columns(ctx, entry)))
            trimmed = True
            ctx.report(self.code, entry.call.func.attr, self._message(ctx, entry, targets, multiple), fixed=True)
            split = keyword(entry.call, "validation_split")
            if split is not None:
                ctx.report(self.code, split, "`validation_split` cuts the trimmed inputs again, into parts that "
                           "need not fill whole executions: split the data yourself and pass `validation_data`",
                           fixed=False)
        if trimmed and existing_helper(ctx) is None:
            self._emit_helper(ctx, name)

    @staticmethod
    def _message(ctx, entry, targets, multiple) -> str:
        config = ctx.config
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
        counted = ""
        samples = static_samples(ctx, entry.data, entry.owner) if entry.data is not None else None
        batch = static_int(ctx, entry.batch) if entry.batch is not None else KERAS_DEFAULT_BATCH
        if samples is not None and batch is not None:
            kept = throughput.usable_samples(samples, batch * samples_per_execution(config))
            counted = f"; {samples} samples become {kept}"
        return (f"`{entry.method}` inputs {names} trimmed to a multiple of `{multiple}` samples "
                f"({' x '.join(parts)}): the last samples that do not fill an execution are not used{counted}")

    @staticmethod
    def _emit_helper(ctx, name: str) -> None:
        anchor = _helper_anchor(ctx)
        if anchor is None:
            return
        helper = statements(_HELPER.format(name=name, marker=MARKER))[0]
        blank = cst.EmptyLine(indent=False, whitespace=cst.SimpleWhitespace(""))
        # Two blank lines around it: the helper owns them, the statement after it keeps its comments.
        helper = helper.with_changes(leading_lines=[blank, blank], body=helper.body.with_changes(footer=[blank, blank]))
        ctx.insert_before(anchor, [helper])
        ctx.replace(anchor, _without_leading_blank_lines)


def _without_leading_blank_lines(statement):
    lines = list(statement.leading_lines)
    while lines and lines[0].comment is None:
        lines.pop(0)
    return statement.with_changes(leading_lines=lines)


RULE = DivisibleDataset()
