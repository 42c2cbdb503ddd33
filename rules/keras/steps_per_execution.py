import functools
import math
from typing import List, NamedTuple, Optional, Tuple

import libcst as cst

from porter import throughput
from porter.context import SharedKey, bound_names, code_of, walk
from porter.rules._tf.tfdata import is_dataset
from porter.cstutil import append_args, argument, is_name, is_true, keyword, keyword_arg
from porter.rules.keras._analysis.fit import (KERAS_DEFAULT_BATCH, TrainingCall, call_columns, floor_operand, int_value,
                             inherited_method, is_helper_call, layout, last_value_before, literal_options, loaded_binding,
                             loaded_source, one_batch_call, rounded_up, static_int, super_calls, first_input,
                             fraction_value, single_sample, static_samples, training_calls, validation_entry)
from porter.rule import FIX, KERAS, Example, Rule
from porter.rules.keras._analysis.datasets import (chain, given_arguments, made_datasets, parameter_input,
                                                   training_batches)
from porter.rules.keras._analysis.util import callback_model, is_callback_method, method_calls, reached_methods
from porter.rules.keras._analysis.model_plan import keras_extensions_off
from porter.scopes import (assignments, instance_class, loads, local_function, owner, parameter_names,
                           statements_in, values_of)
from porter.rules.keras.divisible_dataset import helper_name, pad_helper_names

_CHECKPOINTS = ("keras.callbacks.ModelCheckpoint",)
_LAMBDA_CALLBACKS = ("keras.callbacks.LambdaCallback",)
_TENSORBOARD = ("keras.callbacks.TensorBoard",)
_SLICES = "tensorflow.data.Dataset.from_tensor_slices"
# Dataset methods that keep the number of elements.
_SAME_COUNT = frozenset({"shuffle", "map", "cache", "prefetch", "with_options"})
# Dataset methods after which the number of batches is not known before it is iterated.
_UNKNOWN_LENGTH = ("repeat", "filter", "take_while", "unbatch", "rejection_resample", "interleave", "flat_map",
                   # Datasets of a generator or of files, whose length `len()` cannot tell either.
                   "from_generator", "TextLineDataset", "TFRecordDataset", "FixedLengthRecordDataset",
                   "make_csv_dataset")
_CALLBACK_BASES = ("keras.callbacks.Callback",)
# Methods of the callback's model that save its weights or read them on the host.
_WEIGHT_METHODS = frozenset({"save", "save_weights", "get_weights"})
# The ``super().compile(...)`` calls that a model's own ``compile`` has had the option added to.
_SUPER_EDITS: SharedKey[list] = SharedKey("keras-super-compile-edits")
_BATCH_HOOKS = ("on_batch_begin", "on_batch_end", "on_train_batch_begin", "on_train_batch_end",
                "on_test_batch_begin", "on_test_batch_end", "on_predict_batch_begin", "on_predict_batch_end")

# A GAN-like model whose `compile` takes parameters of its own and calls Keras' through `super()`.
_PAIR = '''import tensorflow as tf


class Pair(tf.keras.Model):
    def compile(self, first_optimizer, second_optimizer, metrics=None):
        super().compile(metrics=metrics)
        self.first_optimizer, self.second_optimizer = first_optimizer, second_optimizer


class CriticPair(Pair):
    pass


pair = Pair()
pair.compile(first_optimizer=tf.keras.optimizers.Adam(), second_optimizer=tf.keras.optimizers.Adam())
pair.fit(dataset, epochs=2)
'''


def _with_steps(code: str) -> str:
    return code.replace("super().compile(metrics=metrics)", "super().compile(metrics=metrics, steps_per_execution=4)")


_BEFORE = '''import tensorflow as tf


def main():
    (x_train, y_train), (x_test, y_test) = load()
    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x_train, y_train, batch_size=64, epochs=3)
    model.evaluate(x_test, y_test, batch_size=64)
'''


# The keyword that gives the batches a call runs, in place of those of its data.
_STEP_COUNTS = {"fit": "steps_per_epoch", "evaluate": "steps", "predict": "steps"}
# What a step count may be computed with where the model is compiled: the same value, no side effect.
_COUNT_BUILTINS = frozenset({"len", "int", "round", "min", "max", "abs"})
_COUNT_FUNCTIONS = frozenset({"math.ceil", "math.floor", "numpy.ceil", "numpy.floor"})
# Methods that change a dict, a list or a namespace in place.
_MUTATING_METHODS = frozenset({"update", "setdefault", "pop", "popitem", "clear", "append", "extend", "insert",
                               "remove", "__setitem__", "__setattr__"})
# Dataset methods after which a repeated dataset is finite again.
_ENDS_REPEAT = frozenset({"take", "take_while"})


class _Part(NamedTuple):
    """A part of a call that runs in executions of the model's value (its inputs, its validation):
    its batches per replica as code (None: not known where the model is compiled, ``why``), and how
    the report words them when not as that code (``shown``)."""
    what: str
    value: Optional[str]
    shown: str = ""
    why: str = ""
    # Whether another value of `steps_per_execution` would do (else the count itself must change).
    other_value: bool = True


class _Choice(NamedTuple):
    """What ``auto`` chose for one compiled model: the value (None: ``unknown`` has no count where
    the model is compiled), the parts it divides, and the inputs it could not count."""
    value: Optional[str]
    parts: List[_Part]
    unchecked: List[Tuple[cst.CSTNode, str, str]]
    unknown: Optional[_Part] = None


def _given_count(entry: TrainingCall, name: str) -> Optional[cst.Arg]:
    """``name=N`` of the call, unless it is absent or ``None`` (Keras then counts the data)."""
    given = keyword(entry.call, name)
    return None if given is None or is_name(given.value, "None") else given


def _options_argument(entry: TrainingCall) -> Optional[cst.Arg]:
    """The one ``**options`` argument of the call (``fit(train_ds, **fit_kwargs)``), else None."""
    splatted = [arg for arg in entry.call.args if arg.star == "**"]
    return splatted[0] if len(splatted) == 1 else None


def _given_option(ctx, entry: TrainingCall, name: str) -> Optional[Tuple[cst.CSTNode, cst.BaseExpression]]:
    """Where the call gives ``name`` and its value: its keyword, else the entry of the literal dict
    its ``**options`` passes (``fit_kwargs = dict(steps_per_epoch=50)``), else None."""
    given = keyword(entry.call, name)
    if given is not None:
        return given, given.value
    options = _options_argument(entry)
    entries = literal_options(ctx, options.value, entry.owner) if options is not None else None
    value = (entries or {}).get(name)
    return (value, value) if value is not None else None


def _dataset_beside_options(ctx, entry: TrainingCall) -> Optional[cst.BaseExpression]:
    """``fit(train_ds, **fit_kwargs)``: the dataset given first, beside a literal dict of options
    that keeps the analysis of the call from reading its inputs, else None (options the port
    cannot read are reported on their own)."""
    first = entry.call.args[0] if entry.call.args else None
    options = _options_argument(entry)
    if entry.data is not None or options is None or first is None or first.star or first.keyword \
            or literal_options(ctx, options.value, entry.owner) is None:
        return None
    return first.value if is_dataset(ctx, first.value) else None


def _value_read(ctx, node: cst.BaseExpression, scope: cst.CSTNode) -> cst.BaseExpression:
    """What the variable ``node`` holds where it is read: the value of the last assignment before
    the read in the same block, else of its only assignment (the read may have moved into the
    IPU strategy's scope since); ``node`` itself when it is not such a variable."""
    if not isinstance(node, cst.Name):
        return node
    value = last_value_before(ctx, node, scope)
    if value is None:
        values = values_of(ctx, node)
        value = values[0] if len(values) == 1 else None
    return node if value is None else value


def _static_counts(ctx, count: cst.BaseExpression, scope: cst.CSTNode) -> Optional[List[int]]:
    """The values the step count ``count`` (read in ``scope``) has, when each is known statically:
    a number, a module constant, arithmetic of them, or a parameter of ``scope`` that every call
    of the function gives such a value (and its default, when it has one)."""
    value = static_int(ctx, count)
    if value is not None:
        return [value]
    if not isinstance(count, cst.Name) or parameter_input(ctx, count, scope) != count.value:
        return None
    params = scope.params
    param = next(param for param in (*params.posonly_params, *params.params, *params.kwonly_params)
                 if param.name.value == count.value)
    given = [value for value, _, _ in given_arguments(ctx, count, scope, ())]
    if param.default is not None:
        given.append(param.default)
    values = [static_int(ctx, value) for value in given]
    if not values or None in values:
        return None
    return sorted(set(values))


def _uncomputable(ctx, count: cst.BaseExpression, entry: TrainingCall, compile_entry: TrainingCall) -> Optional[str]:
    """Why the step count ``count`` of ``entry`` cannot be computed where the model is compiled, to
    the value the call gets (None: it can, plain arithmetic on names bound before ``compile`` and
    not bound again after it)."""
    if entry.owner is not compile_entry.owner:
        where = (f"`{compile_entry.owner.name.value}`" if isinstance(compile_entry.owner, cst.FunctionDef)
                 else "the module")
        return f"is computed in another function than the one that compiles the model ({where})"
    for part in walk(count):
        if isinstance(part, (cst.NamedExpr, cst.Lambda, cst.Await, cst.Yield, cst.BaseComp)) or isinstance(
                part, cst.Call) and not (isinstance(part.func, cst.Name) and part.func.value in _COUNT_BUILTINS
                                         or ctx.qualified_name(part.func) in _COUNT_FUNCTIONS):
            return f"calls `{code_of(ctx, part)}`, which the port does not run again at `compile`"
    for name in sorted({name.value for name in loads(count)} - _COUNT_BUILTINS):
        if not _bound_before(ctx, name, compile_entry):
            return f"reads `{name}`, which has no value yet where the model is compiled"
    if not _unchanged_after_compile(ctx, count, compile_entry) or _changed_in_place(ctx, count, compile_entry):
        return "reads a name bound again or changed after `compile`, so its value there is not the one the call gets"
    return None


def _changed_in_place(ctx, count: cst.BaseExpression, compile_entry: TrainingCall) -> bool:
    """A statement after ``compile`` in its function assigns to an attribute or an item of a name
    that ``count`` reads (``args.steps //= 2``, ``cfg["steps"] = 7``, ``setattr(args, ...)``), or
    calls a method of it that changes it in place (``cfg.update(...)``): the count is no longer the
    value it had at ``compile``."""
    read = {name.value for name in loads(count) if ctx.qualified_name(name) is None}  # not modules (`math.ceil`)
    statements = list(statements_in(compile_entry.owner))
    compiled = ctx.statement_of(compile_entry.call)
    after = statements[next((index for index, statement in enumerate(statements) if statement is compiled),
                            len(statements)) + 1:]
    for statement in after:
        if isinstance(statement, cst.BaseCompoundStatement):
            continue  # its own statements follow in the list
        for node in walk(statement):
            targets = []
            if isinstance(node, cst.AssignTarget):
                targets.append(node.target)
            elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
                targets.append(node.target)
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and node.func.attr.value in _MUTATING_METHODS:
                targets.append(node.func)
            elif isinstance(node, cst.Call) and is_name(node.func, "setattr") and node.args:
                targets.append(cst.Attribute(node.args[0].value, cst.Name("_")))
            if any(isinstance(target, (cst.Attribute, cst.Subscript)) and _root_name(target) in read
                   for target in targets):
                return True
    return False


def _repeated(ctx, data: cst.BaseExpression, scope: cst.CSTNode) -> bool:
    """Every way the dataset ``data`` is made repeats it for ever (``.repeat()``, and no ``.take``
    after it): a step count may then take more batches than one pass holds."""
    made = made_datasets(ctx, data, scope)
    for dataset in made:
        methods = [call.func.attr.value for call in dataset.methods]  # the last applied first
        repeats = [index for index, call in enumerate(dataset.methods) if call.func.attr.value == "repeat"
                   and (not call.args or is_name(call.args[0].value, "None"))]
        if not repeats or any(method in _ENDS_REPEAT for method in methods[:repeats[0]]):
            return False
    return bool(made)


def _finite_dataset_in(ctx, data: cst.BaseExpression, scope: cst.CSTNode) -> bool:
    """``data`` names a batched ``tf.data`` dataset of ``scope`` whose length ``len()`` knows at run
    time: no ``repeat``, ``filter``... in the chains assigned to it (and no gradient accumulation,
    which a whole epoch per execution would not divide)."""
    if not isinstance(data, cst.Name) or not is_dataset(ctx, data) or throughput.config_accumulation(ctx.config) > 1:
        return False
    batched = False
    for assign in ctx.nodes(cst.Assign):
        if (ctx.enclosing_function(assign) or ctx.module) is not scope or not any(
                isinstance(target.target, cst.Name) and target.target.value == data.value
                for target in assign.targets):
            continue
        for node in walk(assign.value):
            if isinstance(node, cst.Attribute) and node.attr.value in _UNKNOWN_LENGTH:
                return False
            if isinstance(node, cst.Attribute) and node.attr.value in ("batch", "padded_batch"):
                batched = True
    return batched or _made_finite(ctx, data, scope)


def _made_finite(ctx, data: cst.Name, scope: cst.CSTNode) -> bool:
    """``data`` is made elsewhere (``train_ds = df_to_dataset(table)``, a function of the file that
    batches it) of arrays only, each way it is made batched and with nothing that hides its length
    from ``len()`` (a generator's dataset, another module's, ``repeat``, ``filter``...)."""
    made = made_datasets(ctx, data, scope)
    return bool(made) and all(
        dataset.of_arrays
        and any(call.func.attr.value in ("batch", "padded_batch") for call in dataset.methods)
        and not any(call.func.attr.value in _UNKNOWN_LENGTH for call in dataset.methods)
        for dataset in made)


def _top_statement(ctx, node, owner) -> Optional[cst.BaseStatement]:
    body = owner.body if isinstance(owner, cst.Module) else owner.body.body
    ids = {id(statement) for statement in body}
    for ancestor in (node, *ctx.ancestors(node)):
        if id(ancestor) in ids:
            return ancestor
    return None


def _binds(statement: cst.CSTNode, name: str) -> bool:
    for node in walk(statement):
        if isinstance(node, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For)):
            if name in bound_names(node.target):
                return True
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node.name.value == name:
            return True
        elif isinstance(node, cst.AsName) and name in bound_names(node.name):
            return True
        elif isinstance(node, (cst.Import, cst.ImportFrom)):
            from porter.context import import_bindings

            if any(local == name for local, _ in import_bindings(node)):
                return True
    return False


def _bound_before(ctx, name: str, entry: TrainingCall) -> bool:
    """``name`` has a value where the compile call runs: a parameter of its function, a name of the
    module, or assigned by an earlier statement of its function."""
    owner = entry.owner
    if isinstance(owner, cst.FunctionDef):
        params = owner.params
        if any(param.name.value == name for param in (*params.posonly_params, *params.params, *params.kwonly_params)):
            return True
        if any(_binds(statement, name) for statement in ctx.module.body if not isinstance(statement, cst.FunctionDef)):
            return True
    top = _top_statement(ctx, entry.call, owner)
    body = owner.body if isinstance(owner, cst.Module) else owner.body.body
    for statement in body:
        if statement is top:
            return False
        if _binds(statement, name):
            return True
    return False


def _unchanged_after_compile(ctx, node: cst.BaseExpression, entry: TrainingCall) -> bool:
    """No name that ``node`` reads is bound again after the compile call ``entry`` in its
    function: a count written into ``compile`` from a loop variable bound later (``x[i]``) fails
    with a NameError there, and one from data a later loop changes (``x[labelled]``) is stale
    when the call runs."""
    read = {name.value for name in loads(node)}
    order = {id(statement): index for index, statement in enumerate(statements_in(entry.owner))}
    compiled = order.get(id(ctx.statement_of(entry.call)), -1)
    return not any(name in read and order.get(id(statement), -1) > compiled
                   for statement, name, _ in assignments(ctx, entry.owner))


def _root_name(node: cst.BaseExpression) -> Optional[str]:
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


class StepsPerExecution(Rule):
    code = "IPU108"
    name = "steps-per-execution"
    kind = FIX
    frameworks = frozenset({KERAS})
    summary = "`--steps-per-execution auto|K`: K batches per device execution (`compile(steps_per_execution=K)`)."
    rationale = (
        "By default the IPU runs one batch per execution and waits on the host between batches; "
        "`steps_per_execution` in `compile` runs K batches of one replica per execution, the biggest "
        "speed-up of Graphcore's Keras tutorial (\"Going faster by setting steps_per_execution\"; Targeting "
        "the IPU from TensorFlow 2, \"Keras with IPUs\"). K must divide the batches per "
        "epoch of one replica (IPU107 trims array inputs so that it does), `steps_per_epoch` must be a "
        "multiple of it (and so must `validation_steps`, the `steps` of `evaluate`/`predict`, and the batches of "
        "a finite dataset they read, which are reported), and with gradient accumulation it must be a multiple of the accumulation count "
        "(given accumulation alone, K defaults to it); in a strategy without the IPU Keras extensions (a "
        "`train_step` override, IPU103) Keras' own data handler runs what is left in a shorter last execution, "
        "and none of these counts is checked. `auto` takes a whole epoch per execution: "
        "`len(x) // (batch x replicas)` computed at run time from the `fit` inputs; when the model also "
        "evaluates or predicts on other inputs, one value serves every call: the greatest common divisor "
        "of their batches per replica (computed with `math.gcd` when they are known at run time only), those of "
        "`predict` counted up, as IPU107 pads its inputs to whole batches; `fit` validates in executions of the "
        "same size, so its validation arrays count too (in batches of `validation_batch_size` when given), and "
        "so does a validation dataset (`len()` of a finite one, batched where it is read or by a function of the "
        "file that makes it of arrays; one of a generator or of files has no length: it is reported); "
        "`validation_split` cuts its inputs into a training and a validation part, each counted as Keras splits "
        "them; of several inputs (a list or a dict of arrays) the first counts the samples of all. A call given "
        "a step count (`steps_per_epoch`, `validation_steps`, `steps`) runs that many batches, "
        "`steps // replicas` on each replica, and Keras checks both: the value divides both, known statically (through "
        "the calls of the function that trains, too) or computed at `compile` from the count's own code when what it "
        "reads is bound there and not changed after it; a count rounded up (`math.ceil(n / batch)`) of inputs that are "
        "not repeated counts a partial batch the port drops, and a count the port cannot compute there is reported, "
        "with no value. Inputs of `evaluate`/`predict` it cannot count at all are reported after the value is chosen. "
        "An `evaluate`/`predict` of `self.model` in a callback runs in the same executions on data `auto` does "
        "not count: it is reported when `auto` gives a model of the file a value (a fixed K trims its inputs to "
        "whole executions). A "
        "compiled model is never compiled again: the next `fit` would start with a fresh optimizer. An existing "
        "`steps_per_execution` is kept, and wins over the option for its model (said when they differ); the "
        "`fit` calls after it are checked against it the same way. A model class with a `compile` of its own "
        "(a GAN's, of two optimizers, with no `**kwargs` it hands on) gets a fixed K in the one `super().compile(...)` "
        "that "
        "`compile` calls, for every model of the class; under `auto`, or with no such call, it is reported. "
        "Per-batch callbacks "
        "(`ModelCheckpoint(save_freq=<int>)`, `TensorBoard(update_freq=<int>)`, `on_*batch_*` methods and "
        "`LambdaCallback` hooks) only run once per execution: they "
        "are reported (with `auto`, only when it gives a model of the file a value); asynchronous callbacks run a "
        "hook after every batch, but the learning rate it sets reaches the IPU, and the weights it saves leave it, "
        "between executions only, so a hook that does either is pointed to a `LearningRateSchedule` or to "
        "saves per epoch instead. A model loaded with "
        "`load_model` (on any path to the call: loaded in one branch of an `if`, built "
        "in the other) and not compiled again keeps the compile it was saved with, "
        "which holds no `steps_per_execution`: the port does not compile it (its `fit` would start with a fresh "
        "optimizer), notes that the option does not reach it, and IPU107 trims its inputs to whole batches only. "
        "PopTorch's counterpart is `--device-iterations K` (IPU315)."
    )
    examples = (
        # Validation and evaluation run executions of K batches too: their finite datasets and step
        # counts are checked like `fit`'s.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
            model.compile(optimizer="adam", loss="mse")
            model.fit(train_batches.repeat(), steps_per_epoch=40, validation_data=check_batches, epochs=3)
            model.evaluate(test_batches)
            model.predict(test_batches, steps=10)
            """,
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
            model.compile(optimizer="adam", loss="mse", steps_per_execution=8)
            model.fit(train_batches.repeat(), steps_per_epoch=40, validation_data=check_batches, epochs=3)
            model.evaluate(test_batches)
            model.predict(test_batches, steps=10)
            """,
            options={"steps_per_execution": 8},
        ),
        # `auto` on a repeated dataset: the step counts the user gives are the batches each call runs.
        # With 2 replicas each runs half of them (500, 50, 25): the value divides every share.
        Example(
            """\
            import tensorflow as tf

            def main(train_ds, val_ds):
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.compile(optimizer="adam", loss="mse")
                model.fit(train_ds.repeat(), steps_per_epoch=1000, validation_data=val_ds.repeat(),
                          validation_steps=100, epochs=3)
                model.evaluate(val_ds.repeat(), steps=50)
            """,
            """\
            import tensorflow as tf

            def main(train_ds, val_ds):
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.compile(optimizer="adam", loss="mse", steps_per_execution=25)
                model.fit(train_ds.repeat(), steps_per_epoch=1000, validation_data=val_ds.repeat(),
                          validation_steps=100, epochs=3)
                model.evaluate(val_ds.repeat(), steps=50)
            """,
            options={"steps_per_execution": "auto", "ipus": 2},
        ),
        # Counts known at run time only (command-line arguments, `len(x) // BATCH`), bound before
        # `compile` and not changed after it: their greatest common divisor, computed there.
        Example(
            """\
            import tensorflow as tf

            def main(args, train_ds, val_ds):
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.compile(optimizer="adam", loss="mse")
                model.fit(train_ds, steps_per_epoch=args.steps_per_epoch, validation_data=val_ds,
                          validation_steps=args.validation_steps)
            """,
            """\
            import tensorflow as tf
            import math

            def main(args, train_ds, val_ds):
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.compile(optimizer="adam", loss="mse",
                              steps_per_execution=math.gcd(args.steps_per_epoch, args.validation_steps))
                model.fit(train_ds, steps_per_epoch=args.steps_per_epoch, validation_data=val_ds,
                          validation_steps=args.validation_steps)
            """,
            options={"steps_per_execution": "auto"},
        ),
        # Several inputs in a list or a dict hold as many samples each: the first counts them, in
        # `fit` and in its validation alike.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            def train(model, ids, numbers, clicks, batch_size):
                model.compile(optimizer="adam", loss="binary_crossentropy")
                model.fit([ids, numbers], clicks, batch_size=batch_size, epochs=2,
                          validation_data=({"ids": ids[-256:], "numbers": numbers[-256:]}, clicks[-256:]))

            ages = np.random.rand(1000, 1)
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(optimizer="sgd", loss="mse")
            model.fit({"age": ages, "income": np.random.rand(1000, 1)}, np.random.rand(1000), batch_size=50)
            """,
            """\
            import numpy as np
            import tensorflow as tf
            import math

            def train(model, ids, numbers, clicks, batch_size):
                model.compile(optimizer="adam", loss="binary_crossentropy",
                              steps_per_execution=math.gcd(len(ids) // batch_size, len(ids[-256:]) // batch_size))
                model.fit([ids, numbers], clicks, batch_size=batch_size, epochs=2,
                          validation_data=({"ids": ids[-256:], "numbers": numbers[-256:]}, clicks[-256:]))

            ages = np.random.rand(1000, 1)
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(optimizer="sgd", loss="mse", steps_per_execution=20)
            model.fit({"age": ages, "income": np.random.rand(1000, 1)}, np.random.rand(1000), batch_size=50)
            """,
            options={"steps_per_execution": "auto"},
        ),
        # Validation arrays held in a variable as a tuple run in executions of the same size too:
        # 20 batches of `fit`, 3 of its validation.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x = np.random.rand(1000, 4)
            y = np.random.rand(1000, 1)
            x_val = np.random.rand(150, 4)
            held_out = (x_val, np.random.rand(150, 1))
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile("sgd", "mse")
            model.fit(x, y, batch_size=50, validation_data=held_out)
            """,
            """\
            import numpy as np
            import tensorflow as tf

            x = np.random.rand(1000, 4)
            y = np.random.rand(1000, 1)
            x_val = np.random.rand(150, 4)
            held_out = (x_val, np.random.rand(150, 1))
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile("sgd", "mse", steps_per_execution=1)
            model.fit(x, y, batch_size=50, validation_data=held_out)
            """,
            options={"steps_per_execution": "auto"},
        ),
        # Named inputs held in a variable: `len()` of a dict counts its inputs, not their samples.
        Example(
            """\
            import tensorflow as tf

            def train(model, table, batch_size):
                features = {name: table[name].values for name in ("age", "hours")}
                model.compile(optimizer="adam", loss="binary_crossentropy")
                model.fit(features, table["label"].values, batch_size=batch_size, epochs=2)
            """,
            """\
            import tensorflow as tf

            def train(model, table, batch_size):
                features = {name: table[name].values for name in ("age", "hours")}
                model.compile(optimizer="adam", loss="binary_crossentropy",
                              steps_per_execution=len(next(iter(features.values()))) // batch_size)
                model.fit(features, table["label"].values, batch_size=batch_size, epochs=2)
            """,
            options={"steps_per_execution": "auto"},
        ),
        # A dataset a function of the file makes of arrays and batches (a pandas table's columns
        # here) has the length `len()` counts; one of a generator has none: no value, reported.
        Example(
            """\
            import tensorflow as tf

            def table_dataset(table, batch_size, shuffle=True):
                table = table.copy()
                labels = table.pop("target")
                dataset = tf.data.Dataset.from_tensor_slices((dict(table), labels))
                if shuffle:
                    dataset = dataset.shuffle(len(table))
                return dataset.batch(batch_size)

            def main(train_table, rows):
                train_ds = table_dataset(train_table, 32)
                streamed = tf.data.Dataset.from_generator(rows, output_signature=signature).batch(32)
                model = build_model()
                model.compile(optimizer="adam", loss="binary_crossentropy")
                model.fit(train_ds, epochs=2)
                other = build_model()
                other.compile(optimizer="adam", loss="binary_crossentropy")
                other.fit(streamed, epochs=2)
            """,
            """\
            import tensorflow as tf

            def table_dataset(table, batch_size, shuffle=True):
                table = table.copy()
                labels = table.pop("target")
                dataset = tf.data.Dataset.from_tensor_slices((dict(table), labels))
                if shuffle:
                    dataset = dataset.shuffle(len(table))
                return dataset.batch(batch_size)

            def main(train_table, rows):
                train_ds = table_dataset(train_table, 32)
                streamed = tf.data.Dataset.from_generator(rows, output_signature=signature).batch(32)
                model = build_model()
                model.compile(optimizer="adam", loss="binary_crossentropy",
                              steps_per_execution=len(train_ds))
                model.fit(train_ds, epochs=2)
                other = build_model()
                other.compile(optimizer="adam", loss="binary_crossentropy")
                other.fit(streamed, epochs=2)
            """,
            options={"steps_per_execution": "auto"},
        ),
        # A count given to the function that trains, by its one caller: known statically.
        Example(
            """\
            import tensorflow as tf

            def build():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer="sgd", loss="mse")
                return model

            def train(model, dataset, steps):
                model.fit(dataset.repeat(), steps_per_epoch=steps, epochs=2)

            train(build(), batches, 60)
            """,
            """\
            import tensorflow as tf

            def build():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer="sgd", loss="mse", steps_per_execution=60)
                return model

            def train(model, dataset, steps):
                model.fit(dataset.repeat(), steps_per_epoch=steps, epochs=2)

            train(build(), batches, 60)
            """,
            options={"steps_per_execution": "auto"},
        ),
        # A function of the file the compiled model is handed to runs it, wherever it is defined and
        # whatever it names it: the batches of its `fit` count, and here they are not known.
        Example(
            """\
            import tensorflow as tf

            def run_epochs(net, features, targets):
                net.fit(features, targets, batch_size=32, epochs=2)

            x, y = load_pairs()
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(optimizer="sgd", loss="mse")
            run_epochs(model, x, y)
            """,
            options={"steps_per_execution": "auto"},
        ),
        # A count rounded up (`math.ceil`) takes one batch from the next pass of a repeated dataset,
        # which is whole: it is the value.
        Example(
            """\
            import math
            import tensorflow as tf

            BATCH = 32
            x, y = load_pairs()
            ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH, drop_remainder=True).repeat()
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(optimizer="sgd", loss="mse")
            model.fit(ds, steps_per_epoch=math.ceil(len(x) / BATCH), epochs=2)
            """,
            """\
            import math
            import tensorflow as tf

            BATCH = 32
            x, y = load_pairs()
            ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH, drop_remainder=True).repeat()
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(optimizer="sgd", loss="mse", steps_per_execution=math.ceil(len(x) / BATCH))
            model.fit(ds, steps_per_epoch=math.ceil(len(x) / BATCH), epochs=2)
            """,
            options={"steps_per_execution": "auto"},
        ),
        # ... but of inputs that are not repeated it counts a last partial batch the port drops: no
        # value is chosen from it, and the report says so.
        Example(
            """\
            import math
            import tensorflow as tf

            def main(x, y, batch_size):
                ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size)
                steps = math.ceil(len(x) / batch_size)
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer="sgd", loss="mse")
                model.fit(ds, steps_per_epoch=steps, epochs=2)
            """,
            options={"steps_per_execution": "auto"},
        ),
        # The step counts of a literal dict `fit` is given with `**` are checked as its keywords are.
        Example(
            """\
            import tensorflow as tf

            def train(train_ds, val_ds):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer="sgd", loss="mse", steps_per_execution=4)
                fit_kwargs = dict(epochs=3, steps_per_epoch=50, validation_data=val_ds, validation_steps=8)
                model.fit(train_ds.repeat(), **fit_kwargs)
            """,
        ),
        # Options the port cannot read may give a step count, or leave Keras to count the dataset's
        # batches: either must be a multiple of the steps per execution, reported.
        Example(
            """\
            import tensorflow as tf

            def train(train_ds, config):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer="sgd", loss="mse", steps_per_execution=4)
                model.fit(train_ds, **config.fit_kwargs)
            """,
        ),
        # ... and a count in the dict that is a multiple of it says nothing.
        Example(
            """\
            import tensorflow as tf

            def train(train_ds, val_ds):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer="sgd", loss="mse", steps_per_execution=4)
                fit_kwargs = {"epochs": 3, "verbose": 2, "steps_per_epoch": 48}
                model.fit(train_ds.repeat(), **fit_kwargs)
            """,
            reported=False,
        ),
        # A count changed after `compile` (a schedule that grows it, `args.steps //= 2`) is not the
        # value it had there: reported, no value.
        Example(
            """\
            import tensorflow as tf

            def train(dataset, args):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer="sgd", loss="mse")
                args.steps //= 2
                model.fit(dataset.repeat(), steps_per_epoch=args.steps, epochs=2)
            """,
            options={"steps_per_execution": "auto"},
        ),
        # The script's own `steps_per_execution`, with no option: `steps_per_epoch` must be a multiple of it.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss="mse", steps_per_execution=4)
            model.fit(train_ds.repeat(), steps_per_epoch=10, epochs=3)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(optimizer="adam", loss="mse")
            model.fit(dataset, epochs=3)
            """,
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(optimizer="adam", loss="mse", steps_per_execution=16)
            model.fit(dataset, epochs=3)
            """,
            options={"steps_per_execution": 16},
        ),
        Example(
            _BEFORE,
            _BEFORE.replace("import tensorflow as tf\n", "import tensorflow as tf\nimport math\n").replace(
                'loss="mse")\n', 'loss="mse",\n                  '
                'steps_per_execution=math.gcd(len(x_train) // 128, len(x_test) // 128))\n', 1),
            options={"steps_per_execution": "auto", "ipus": 2},
        ),
        # `fit` validates on arrays in executions of the same size: their batches count too.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x_train, y_train = np.zeros((6000, 8), "float32"), np.zeros(6000, "int32")
            x_val, y_val = np.zeros((1000, 8), "float32"), np.zeros(1000, "int32")
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse")
            model.fit(x_train, y_train, batch_size=100, validation_data=(x_val, y_val))
            """,
            """\
            import numpy as np
            import tensorflow as tf

            x_train, y_train = np.zeros((6000, 8), "float32"), np.zeros(6000, "int32")
            x_val, y_val = np.zeros((1000, 8), "float32"), np.zeros(1000, "int32")
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse", steps_per_execution=10)
            model.fit(x_train, y_train, batch_size=100, validation_data=(x_val, y_val))
            """,
            options={"steps_per_execution": "auto"},
        ),
        # Keras 2's `fit_generator` on a dataset is `fit` in TensorFlow 2: its steps count the same.
        Example(
            """\
            import tensorflow as tf

            train = tf.data.Dataset.from_tensor_slices((x, y)).batch(32, drop_remainder=True).repeat()
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse")
            model.fit_generator(train, steps_per_epoch=25, epochs=2)
            """,
            """\
            import tensorflow as tf

            train = tf.data.Dataset.from_tensor_slices((x, y)).batch(32, drop_remainder=True).repeat()
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse", steps_per_execution=4)
            model.fit_generator(train, steps_per_epoch=25, epochs=2)
            """,
            options={"steps_per_execution": 4},
        ),
        # Data that a loop after `compile` changes (an active learning loop growing the labelled
        # rows): a count written into `compile` would be stale, so no value is chosen, reported.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            def main(pool_x, pool_y):
                labelled = list(range(100))
                model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                model.compile(loss="mse")
                while len(labelled) < 500:
                    model.fit(pool_x[labelled], pool_y[labelled], batch_size=32)
                    labelled = labelled + pick(model.predict(pool_x, batch_size=256))
            """,
            options={"steps_per_execution": "auto"},
        ),
        # A fraction bound again after `compile` (a loop over splits): a count written from it
        # would be stale for the later passes, so no value is chosen, reported.
        Example(
            """\
            import tensorflow as tf

            def train(x, y):
                split = 0.1
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile("adam", "mse")
                for split in (0.1, 0.25):
                    model.fit(x, y, batch_size=32, validation_split=split)
            """,
            options={"steps_per_execution": "auto"},
        ),
        # `validation_split` cuts the inputs before Keras counts batches: each part is counted.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x, y = np.zeros((6000, 8), "float32"), np.zeros(6000, "float32")
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile("adam", "mse")
            model.fit(x, y, batch_size=50, validation_split=0.1)
            model.evaluate(x[:1000], y[:1000], batch_size=50)
            """,
            """\
            import numpy as np
            import tensorflow as tf
            import math

            x, y = np.zeros((6000, 8), "float32"), np.zeros(6000, "float32")
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile("adam", "mse", steps_per_execution=math.gcd(12, len(x[:1000]) // 50))
            model.fit(x, y, batch_size=50, validation_split=0.1)
            model.evaluate(x[:1000], y[:1000], batch_size=50)
            """,
            options={"steps_per_execution": "auto"},
        ),
        # A sampling callback predicts one sample (one batch) at a time: whatever the length of the
        # training data, the greatest common divisor is 1, written as such, not as `math.gcd(1, ...)`.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x, y = np.load("x.npy"), np.load("y.npy")
            model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            model.compile("adam", "mse")

            def on_epoch_end(epoch, logs):
                seed = np.zeros((1, 8))
                print(model.predict(seed, verbose=0, batch_size=1).argmax())

            model.fit(x, y, batch_size=128, callbacks=[tf.keras.callbacks.LambdaCallback(on_epoch_end=on_epoch_end)])
            """,
            """\
            import numpy as np
            import tensorflow as tf

            x, y = np.load("x.npy"), np.load("y.npy")
            model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            model.compile("adam", "mse", steps_per_execution=1)

            def on_epoch_end(epoch, logs):
                seed = np.zeros((1, 8))
                print(model.predict(seed, verbose=0, batch_size=1).argmax())

            model.fit(x, y, batch_size=128, callbacks=[tf.keras.callbacks.LambdaCallback(on_epoch_end=on_epoch_end)])
            """,
            options={"steps_per_execution": "auto"},
        ),
        Example(
            """\
            import tensorflow as tf

            def train(x, y, args):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile("adam", "mse")
                model.fit(x, y, batch_size=64, validation_split=args.val_split)
            """,
            """\
            import tensorflow as tf
            import math

            def train(x, y, args):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile("adam", "mse",
                              steps_per_execution=math.gcd(int(len(x) * (1.0 - args.val_split)) // 128, (len(x) - int(len(x) * (1.0 - args.val_split))) // 128))
                model.fit(x, y, batch_size=64, validation_split=args.val_split)
            """,
            options={"steps_per_execution": "auto", "ipus": 2},
        ),
        # A callback's `self.model.evaluate` runs in the executions of `fit`'s value, on data the port
        # does not count: reported.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            class Holdout(tf.keras.callbacks.Callback):
                def __init__(self, x, y):
                    super().__init__()
                    self.x, self.y = x, y

                def on_epoch_end(self, epoch, logs=None):
                    logs["holdout_loss"] = self.model.evaluate(self.x, self.y, batch_size=50, verbose=0)

            x, y = np.zeros((900, 3), "float32"), np.zeros(900, "float32")
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile("sgd", "mse")
            model.fit(x[:400], y[:400], batch_size=50, callbacks=[Holdout(x[400:], y[400:])])
            """,
            """\
            import numpy as np
            import tensorflow as tf

            class Holdout(tf.keras.callbacks.Callback):
                def __init__(self, x, y):
                    super().__init__()
                    self.x, self.y = x, y

                def on_epoch_end(self, epoch, logs=None):
                    logs["holdout_loss"] = self.model.evaluate(self.x, self.y, batch_size=50, verbose=0)

            x, y = np.zeros((900, 3), "float32"), np.zeros(900, "float32")
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile("sgd", "mse", steps_per_execution=len(x[:400]) // 50)
            model.fit(x[:400], y[:400], batch_size=50, callbacks=[Holdout(x[400:], y[400:])])
            """,
            options={"steps_per_execution": "auto"},
        ),
        # ... but when auto gives no model a value (here no call of the file trains it), every model
        # runs one batch per execution and its callbacks run as they did: nothing to say.
        Example(
            """\
            import tensorflow as tf
            from trainer import train

            class Holdout(tf.keras.callbacks.Callback):
                def on_epoch_end(self, epoch, logs=None):
                    logs["holdout_loss"] = self.model.evaluate(self.x, self.y, batch_size=50, verbose=0)

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile("sgd", "mse")
            train(model, callbacks=[Holdout(), tf.keras.callbacks.ModelCheckpoint("ckpt", save_freq=100)])
            """,
            reported=False,
            options={"steps_per_execution": "auto"},
        ),
        # A model loaded in one branch and built in the other: only the built one gets the option.
        Example(
            """\
            import os
            import tensorflow as tf

            def build_model():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile("adam", "mse")
                return model

            if os.path.exists("saved"):
                model = tf.keras.models.load_model("saved")
            else:
                model = build_model()
            model.fit(dataset, epochs=2)
            """,
            """\
            import os
            import tensorflow as tf

            def build_model():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile("adam", "mse", steps_per_execution=4)
                return model

            if os.path.exists("saved"):
                model = tf.keras.models.load_model("saved")
            else:
                model = build_model()
            model.fit(dataset, epochs=2)
            """,
            options={"steps_per_execution": 4},
        ),
        # A finite validation dataset runs in executions of the same size: its batches count too.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x, y = np.zeros((2048, 5), "float32"), np.zeros(2048, "float32")
            checks = tf.data.Dataset.from_tensor_slices((x[:2000], y[:2000])).batch(50, drop_remainder=True)
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile("sgd", "mse")
            model.fit(x, y, batch_size=64, validation_data=checks)
            """,
            """\
            import numpy as np
            import tensorflow as tf
            import math

            x, y = np.zeros((2048, 5), "float32"), np.zeros(2048, "float32")
            checks = tf.data.Dataset.from_tensor_slices((x[:2000], y[:2000])).batch(50, drop_remainder=True)
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile("sgd", "mse", steps_per_execution=math.gcd(32, len(checks)))
            model.fit(x, y, batch_size=64, validation_data=checks)
            """,
            options={"steps_per_execution": "auto"},
        ),
        # Validation arrays batched by their own `validation_batch_size` are counted in those batches.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x, y = np.zeros((2304, 5), "float32"), np.zeros(2304, "float32")
            x_val, y_val = np.zeros((1800, 5), "float32"), np.zeros(1800, "float32")
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile("sgd", "mse")
            model.fit(x, y, batch_size=64, validation_data=(x_val, y_val), validation_batch_size=100)
            """,
            """\
            import numpy as np
            import tensorflow as tf

            x, y = np.zeros((2304, 5), "float32"), np.zeros(2304, "float32")
            x_val, y_val = np.zeros((1800, 5), "float32"), np.zeros(1800, "float32")
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile("sgd", "mse", steps_per_execution=18)
            model.fit(x, y, batch_size=64, validation_data=(x_val, y_val), validation_batch_size=100)
            """,
            options={"steps_per_execution": "auto"},
        ),
        Example(
            """\
            import tensorflow as tf

            train = tf.data.Dataset.from_tensor_slices((x, y)).batch(32, drop_remainder=True)
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse")
            model.fit(train, epochs=2)
            """,
            """\
            import tensorflow as tf

            train = tf.data.Dataset.from_tensor_slices((x, y)).batch(32, drop_remainder=True)
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse", steps_per_execution=len(train) // 2)
            model.fit(train, epochs=2)
            """,
            options={"steps_per_execution": "auto", "ipus": 2},
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse")
            saver = tf.keras.callbacks.ModelCheckpoint("ckpt", save_freq=100)
            model.fit(dataset, steps_per_epoch=100, callbacks=[saver])
            """,
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse", steps_per_execution=8)
            saver = tf.keras.callbacks.ModelCheckpoint("ckpt", save_freq=100)
            model.fit(dataset, steps_per_epoch=100, callbacks=[saver])
            """,
            options={"steps_per_execution": 8},
        ),
        # Saves every 96 batches fall at the end of an execution of 8: the same checkpoints as before.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse", steps_per_execution=8)
            saver = tf.keras.callbacks.ModelCheckpoint("ckpt", save_freq=96)
            model.fit(dataset, steps_per_epoch=96, callbacks=[saver])
            """,
            reported=False,
            options={"steps_per_execution": 8},
        ),
        # Per-batch hooks of a `LambdaCallback`, and TensorBoard's batch frequency, run once per execution.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse")
            progress = tf.keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: print(batch))
            board = tf.keras.callbacks.TensorBoard("logs", update_freq=50)
            model.fit(dataset, callbacks=[progress, board])
            """,
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse", steps_per_execution=8)
            progress = tf.keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: print(batch))
            board = tf.keras.callbacks.TensorBoard("logs", update_freq=50)
            model.fit(dataset, callbacks=[progress, board])
            """,
            options={"steps_per_execution": 8},
        ),
        # TensorBoard writing "batch" by batch gets one point per execution; writing every 64 batches,
        # a multiple of the batches of an execution, it writes at the same batches as before.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse")
            model.fit(dataset, callbacks=[tf.keras.callbacks.TensorBoard("logs", update_freq="batch")])
            """,
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse", steps_per_execution=8)
            model.fit(dataset, callbacks=[tf.keras.callbacks.TensorBoard("logs", update_freq="batch")])
            """,
            options={"steps_per_execution": 8},
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse")
            model.fit(dataset, callbacks=[tf.keras.callbacks.TensorBoard("logs", update_freq=64)])
            """,
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse", steps_per_execution=8)
            model.fit(dataset, callbacks=[tf.keras.callbacks.TensorBoard("logs", update_freq=64)])
            """,
            options={"steps_per_execution": 8},
        ),
        # A learning-rate warm-up by batch sets the rate between executions only, even with asynchronous
        # callbacks: reported with a schedule the IPU computes every batch as the way out.
        Example(
            """\
            import tensorflow as tf
            from tensorflow.keras import backend as K

            class WarmUp(tf.keras.callbacks.Callback):
                def on_train_batch_begin(self, batch, logs=None):
                    self.ramp(batch)

                def ramp(self, batch):
                    if batch < 100:
                        K.set_value(self.model.optimizer.lr, 1e-3 * (batch + 1) / 100)

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse")
            model.fit(dataset, callbacks=[WarmUp()])
            """,
            """\
            import tensorflow as tf
            from tensorflow.keras import backend as K

            class WarmUp(tf.keras.callbacks.Callback):
                def on_train_batch_begin(self, batch, logs=None):
                    self.ramp(batch)

                def ramp(self, batch):
                    if batch < 100:
                        K.set_value(self.model.optimizer.lr, 1e-3 * (batch + 1) / 100)

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse", steps_per_execution=8)
            model.fit(dataset, callbacks=[WarmUp()])
            """,
            options={"steps_per_execution": 8},
        ),
        # The script's own `steps_per_execution` is kept, and the option not applied to its model: said,
        # with what its dataset must then hold; a value the port cannot read is a warning.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse", steps_per_execution=4)
            model.fit(dataset)
            scorer = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            scorer.compile(loss="mse", steps_per_execution=args.steps)
            """,
            options={"steps_per_execution": 16},
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse", steps_per_execution=16)
            model.fit(features, labels, batch_size=32)
            """,
            reported=False, options={"steps_per_execution": 16},
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse")
            model.fit(dataset)
            """,
            reported=False,
        ),
        # A model's own `compile` (a GAN's, of two optimizers) takes no `steps_per_execution`: the
        # `super().compile(...)` it calls gets it, for every model of the class; so when the
        # `compile` takes `**kwargs` but does not hand them on (they would drop the option), is
        # inherited by a subclass, or is called on a model a builder makes (the call's keywords are
        # not Keras' own, or the builder is the file's: `compile(..., steps_per_execution=4)` would raise).
        *(Example(before, _with_steps(before), options={"steps_per_execution": 4}) for before in (
            _PAIR, _PAIR.replace("metrics=None)", "metrics=None, **kwargs)"),
            _PAIR.replace("pair = Pair()", "pair = CriticPair()"),
            _PAIR.replace("pair = Pair()", "pair = make_pair()"),
            _PAIR.replace("pair = Pair()", "def make_pair():\n    return CriticPair()\n\n\npair = make_pair()").replace(
                "(first_optimizer=tf.keras.optimizers.Adam(), second_optimizer=", "(tf.keras.optimizers.Adam(), "))),
        # Under auto the value is counted from the data of each `fit`, which the class does not see;
        # a `compile` of its own that calls no `super().compile(...)` is no place for it either: said.
        Example(_PAIR, options={"steps_per_execution": "auto"}),
        Example(_PAIR.replace("super().compile(", "tf.keras.Model.compile(self, "), options={"steps_per_execution": 4}),
        # `predict`'s inputs are padded to whole batches (IPU107): its batches are counted up, 100
        # samples in batches of 32 are 4 batches, and 4 divides the 300 of `fit` as well.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            x_train, y_train = np.zeros((9600, 8), "float32"), np.zeros(9600, "int32")
            x_new = np.zeros((100, 8), "float32")
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse")
            model.fit(x_train, y_train, batch_size=32)
            scores = model.predict(x_new, batch_size=32)
            """,
            """\
            import numpy as np
            import tensorflow as tf

            x_train, y_train = np.zeros((9600, 8), "float32"), np.zeros(9600, "int32")
            x_new = np.zeros((100, 8), "float32")
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse", steps_per_execution=4)
            model.fit(x_train, y_train, batch_size=32)
            scores = model.predict(x_new, batch_size=32)
            """,
            options={"steps_per_execution": "auto"},
        ),
        # MNIST's 60000 images in batches of 64 are 937 batches per epoch: not a multiple of 4, which
        # Keras on the IPU rejects; its 10000 test images are 156 batches, a multiple of 4: not reported.
        Example(
            """\
            import tensorflow as tf

            (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
            train = tf.data.Dataset.from_tensor_slices((x_train / 255.0, y_train)).batch(64, drop_remainder=True)
            test = tf.data.Dataset.from_tensor_slices((x_test / 255.0, y_test)).batch(64, drop_remainder=True)
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse")
            model.fit(train.prefetch(2), epochs=2, validation_data=test)
            """,
            """\
            import tensorflow as tf

            (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
            train = tf.data.Dataset.from_tensor_slices((x_train / 255.0, y_train)).batch(64, drop_remainder=True)
            test = tf.data.Dataset.from_tensor_slices((x_test / 255.0, y_test)).batch(64, drop_remainder=True)
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse", steps_per_execution=4)
            model.fit(train.prefetch(2), epochs=2, validation_data=test)
            """,
            options={"steps_per_execution": 4},
        ),
        # A dataset a function of the file makes, in the call: its batches must fill whole executions.
        Example(
            """\
            import tensorflow as tf


            def batches(size):
                return tf.data.Dataset.from_tensor_slices((x, y)).batch(size, drop_remainder=True)


            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse")
            model.fit(batches(32), epochs=2)
            """,
            """\
            import tensorflow as tf


            def batches(size):
                return tf.data.Dataset.from_tensor_slices((x, y)).batch(size, drop_remainder=True)


            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse", steps_per_execution=4)
            model.fit(batches(32), epochs=2)
            """,
            options={"steps_per_execution": 4},
        ),
        # A loaded model keeps the compile it was saved with, without `steps_per_execution`: the port
        # does not compile it again, and says that the option does not reach it.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("pretrained.keras")
            model.fit(dataset, epochs=2)
            """,
            options={"steps_per_execution": 4},
        ),
        # ... also when a function of the file loads it (or, resuming or not, loads or builds one).
        Example(
            """\
            import tensorflow as tf


            def restore(path):
                model = tf.keras.models.load_model(path)
                return model


            model = restore("pretrained.keras")
            model.evaluate(dataset)
            """,
            options={"steps_per_execution": 4},
        ),
        # ... and when it is one member of an ensemble loaded from files, run in a loop.
        Example(
            """\
            import tensorflow as tf

            members = [tf.keras.models.load_model(f"fold_{k}.keras") for k in range(5)]
            for member in members:
                print(member.evaluate(dataset))
            """,
            options={"steps_per_execution": 4},
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("pretrained.keras")
            model.compile(optimizer="adam", loss="mse")
            model.fit(dataset, epochs=2)
            """,
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("pretrained.keras")
            model.compile(optimizer="adam", loss="mse", steps_per_execution=4)
            model.fit(dataset, epochs=2)
            """,
            options={"steps_per_execution": 4},
        ),
        # A model trained batch by batch with `train_on_batch`: each call is one execution of one
        # batch, so `compile` gets no `steps_per_execution` (a note says why).
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(optimizer="sgd", loss="mse")
            for start in range(0, 256, 32):
                model.train_on_batch(features[start:start + 32], targets[start:start + 32])
            """,
            options={"steps_per_execution": 4},
        ),
        # ... but a model of the same name that another function makes and trains with `fit` is
        # another model: it gets the option.
        Example(
            """\
            import tensorflow as tf

            def pretrain(x, y):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer="sgd", loss="mse")
                model.train_on_batch(x, y)

            def train(dataset):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse")
                model.fit(dataset, epochs=2)
            """,
            """\
            import tensorflow as tf

            def pretrain(x, y):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer="sgd", loss="mse")
                model.train_on_batch(x, y)

            def train(dataset):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse", steps_per_execution=4)
                model.fit(dataset, epochs=2)
            """,
            options={"steps_per_execution": 4},
        ),
        # A model that fixes its batch to 8 (`batch_input_shape`): 800 samples are 100 of its batches,
        # not 25 of Keras' default 32.
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            rows = np.zeros((800, 4), dtype="float32")
            labels = np.zeros(800, dtype="float32")
            model = tf.keras.Sequential([tf.keras.layers.Dense(1, batch_input_shape=(8, 4))])
            model.compile(optimizer="sgd", loss="mse")
            model.fit(rows, labels, epochs=1)
            """,
            """\
            import numpy as np
            import tensorflow as tf

            rows = np.zeros((800, 4), dtype="float32")
            labels = np.zeros(800, dtype="float32")
            model = tf.keras.Sequential([tf.keras.layers.Dense(1, batch_input_shape=(8, 4))])
            model.compile(optimizer="sgd", loss="mse", steps_per_execution=100)
            model.fit(rows, labels, epochs=1)
            """,
            options={"steps_per_execution": "auto"},
        ),
    )

    def run(self, ctx) -> None:
        config = ctx.config
        auto = throughput.is_auto(config)
        fixed = throughput.config_steps(config) or config.gradient_accumulation
        if not auto and fixed is None:
            self._check_own_steps(ctx)
            return
        helper = helper_name(ctx)
        calls = training_calls(ctx, helper)
        stepped = False  # whether a model runs more than one batch per execution (auto: may run)
        for index, entry in enumerate(calls):
            if entry.method != "compile" or any(arg.star for arg in entry.call.args):
                continue
            later = [other for other in calls[index + 1:] if other.model == entry.model]
            later = later[:next((i for i, other in enumerate(later) if other.method == "compile"), len(later))]
            later += _handed_runs(ctx, entry, calls, later)
            given = keyword(entry.call, "steps_per_execution")
            if given is not None:
                self._keep_own(ctx, entry, given.value, later)
                stepped = True
                continue
            own = _own_compile(ctx, entry)
            if own is not None:
                if self._through_super(ctx, entry, own, later, None if auto else fixed):
                    stepped = True
                continue
            one_batch = one_batch_call(ctx, entry.model, entry.owner)
            if one_batch is not None:
                self._report_one_batch(ctx, entry, one_batch)
                continue
            if auto:
                # A value divides every count it counted; no value, one batch per execution, divides all.
                if self._auto(ctx, entry, later, helper):
                    stepped = True
                continue
            self._set(ctx, entry, str(fixed))
            ctx.report(self.code, entry.call.func.attr, f"`compile` gets `steps_per_execution={fixed}`: "
                       f"{fixed} batches per replica in each device execution", fixed=True)
            self._check_fits(ctx, later, fixed)
        self._report_loaded(ctx, calls)
        # Under auto, callbacks of models that all run one batch per execution run as they did.
        if auto and stepped or not auto and (fixed or 1) > 1:
            self._warn_callbacks(ctx, None if auto else fixed)

    def _through_super(self, ctx, entry: TrainingCall, own: cst.FunctionDef, later: List[TrainingCall],
                       fixed: Optional[int]) -> bool:
        """A model's own ``compile`` (a GAN's, of two optimizers) takes no ``steps_per_execution``;
        the one ``super().compile(...)`` it calls, with no ``**kwargs``, gets the option's value,
        which every model of the class then runs with (its value, when the script or an earlier
        port gives it one, is kept). Under auto the value is counted from the data of the calls
        after the ``compile`` of the script, which the class does not see: said. True when the
        model runs more than one batch per execution."""
        name = ctx.enclosing(own, cst.ClassDef).name.value
        calls = super_calls(own, "compile")
        target = calls[0] if len(calls) == 1 and not any(arg.star for arg in calls[0].args) else None
        given = keyword(target, "steps_per_execution") if target is not None else None
        if given is not None:
            self._keep_own(ctx, entry, given.value, later)
            return True
        if target is None or fixed is None:
            advice = ("pass `steps_per_execution=K` to the `super().compile(...)` it calls, K a divisor of the "
                      "batches per epoch of one replica of its calls" if target is not None else
                      "pass it to the `super().compile(...)` it calls (or give it `**kwargs` to pass on), then "
                      "port again")
            ctx.report(self.code, entry.call.func.attr, f"`{name}.compile` is the model's own and takes no "
                       f"`steps_per_execution`: {advice}", fixed=False)
            return False
        # Every model of the class is compiled through the same call: it is edited once.
        if not any(edit is target for edit in ctx.shared(_SUPER_EDITS, list)):
            ctx.shared(_SUPER_EDITS, list).append(target)
            argument = keyword_arg("steps_per_execution", cst.parse_expression(str(fixed)))
            ctx.replace(target, lambda node: append_args(node, argument))
        ctx.report(self.code, entry.call.func.attr, f"`{name}.compile` is the model's own: the `super().compile(...)` "
                   f"it calls gets `steps_per_execution={fixed}`: {fixed} batches per replica in each device "
                   "execution", fixed=True)
        self._check_fits(ctx, later, fixed)
        return fixed > 1

    def _report_one_batch(self, ctx, entry: TrainingCall, call: cst.Call) -> None:
        """The model also runs ``train_on_batch``/``test_on_batch``/``predict_on_batch``: Keras runs
        such a call as one execution of the compiled function, which loops ``steps_per_execution``
        times over the one batch it is given; the option is left out for this model."""
        method = call.func.attr.value
        ctx.report(self.code, entry.call.func.attr,
                   f"`{entry.model}` runs `{method}`, one batch per call: Keras runs "
                   "the compiled function `steps_per_execution` times on each call, over an iterator of that one "
                   "batch, so `compile` does not get `steps_per_execution` here; to run K batches per execution, "
                   f"train with `fit` on a dataset (or arrays) and compile with `steps_per_execution=K`",
                   fixed=False, severity="note")

    def _report_loaded(self, ctx, calls: List[TrainingCall]) -> None:
        """A model loaded with ``load_model`` and run without a ``compile`` of the file: the option
        does not reach it, and the port does not compile it (that would reset its optimizer)."""
        if ctx.config.steps_per_execution is None:
            return  # gradient accumulation alone: IPU110 speaks of it
        said = set()
        for entry in calls:
            loaded = loaded_binding(ctx, entry, calls) if (id(entry.owner), entry.model) not in said else None
            if loaded is None:
                continue
            said.add((id(entry.owner), entry.model))
            source = loaded_source(ctx, loaded)
            ctx.report(self.code, entry.call.func.attr, f"`{entry.model}` {source} and is not "
                       f"compiled again before `{entry.method}`, so `--steps-per-execution "
                       f"{ctx.config.steps_per_execution}` does not reach "
                       "it: it runs one batch per execution (the port does not compile it, which would give `fit` a "
                       "fresh optimizer); compile it after loading with `steps_per_execution=K` and its loss and "
                       "metrics, and port again", fixed=False, severity="note")

    def _keep_own(self, ctx, entry: TrainingCall, given: cst.BaseExpression, later: List[TrainingCall]) -> None:
        """The script compiles the model with its own ``steps_per_execution``: kept, and the option
        is not applied to this model; its inputs are trimmed and padded for the script's value
        (IPU107), when the port can read it."""
        option = ctx.config.steps_per_execution
        if option is None:  # gradient accumulation alone asked for: nothing to choose between
            return
        if throughput.is_auto(ctx.config):
            choice = self._choose(ctx, entry, later, helper_name(ctx))
            if choice is not None and choice.value == code_of(ctx, given):
                self._report_unchecked(ctx, choice)  # the value `auto` gives: a port of a port says nothing new
                return
        own = static_int(ctx, given)
        self._check_fits(ctx, later, own)
        if own is not None and str(own) == str(option):
            return
        if own is None:
            ctx.report(self.code, entry.call.func.attr, f"`compile` keeps the script's "
                       f"`steps_per_execution={code_of(ctx, given)}`, so `--steps-per-execution {option}` is not "
                       "applied to this model, but its array inputs are trimmed and padded for the option, as the port "
                       "cannot read the script's value: give both the same value, or remove the script's",
                       fixed=False)
            return
        ctx.report(self.code, entry.call.func.attr, f"`compile` keeps the script's `steps_per_execution={own}`: "
                   f"`--steps-per-execution {option}` is not applied to this model, and its array inputs are trimmed "
                   f"and padded to whole executions of {own} batches; remove the script's value to use the "
                   "option", fixed=False, severity="note")

    @staticmethod
    def _set(ctx, entry: TrainingCall, value: str) -> None:
        argument = keyword_arg("steps_per_execution", cst.parse_expression(value))
        wrap = layout(*call_columns(ctx, entry))
        ctx.replace(entry.call, lambda node: wrap(append_args(node, argument)))

    def _auto(self, ctx, compile_entry: TrainingCall, later: List[TrainingCall], helper: Optional[str]) -> bool:
        """One value for every ``fit``/``evaluate``/``predict`` of the compiled model: the batches
        of each call per replica (the step count it is given, else its data's), or their greatest
        common divisor. A compiled model is never compiled again: that would give the next ``fit``
        a fresh optimizer. True when a value is given."""
        choice = self._choose(ctx, compile_entry, later, helper)
        if choice is None:
            return False
        if choice.value is None:
            unknown = choice.unknown
            why = unknown.why or (f"the number of batches of {unknown.what} is not known where the model is "
                                  "compiled (dataset input, or data made or changed after it)")
            advice = ("; pass `steps_per_execution=K`, a divisor of the batches per epoch of one replica of every "
                      "call" + (" and of its validation" if unknown.what.startswith("`fit`") else "")
                      ) if unknown.other_value else ""
            ctx.report(self.code, compile_entry.call.func.attr, f"`steps_per_execution` auto: {why}{advice}",
                       fixed=False)
            return False
        value, parts = choice.value, choice.parts
        if "math.gcd(" in value:
            ctx.add_import("math", code=self.code)
        self._set(ctx, compile_entry, value)
        if len(parts) == 1:
            what = (f"{parts[0].shown} of {parts[0].what}, all in one device execution" if parts[0].shown else
                    "a whole epoch of one replica per device execution")
        else:
            what = ("the greatest common divisor of the batches per replica that Keras runs (" + ", ".join(
                f"{part.what}: {part.shown or part.value}" for part in parts) + "), so that each call runs whole "
                "executions without compiling the model again")
        ctx.report(self.code, compile_entry.call.func.attr, f"`compile` gets `steps_per_execution={value}`: {what}",
                   fixed=True)
        self._report_unchecked(ctx, choice)
        return True

    def _report_unchecked(self, ctx, choice: "_Choice") -> None:
        for node, reader, count in choice.unchecked:
            ctx.report(self.code, node, f"the batches per epoch of `{code_of(ctx, node)}` (per replica) are not known "
                       f"to the porter, and {reader} runs them in executions of `steps_per_execution={choice.value}` "
                       "(chosen by `--steps-per-execution auto` from the calls it can count): unless they are a "
                       f"multiple of it, or fewer, Keras on the IPU raises an error; pass `{count}`, a multiple of it "
                       "(on a repeated dataset), or port with `--steps-per-execution K`, a K that divides them",
                       fixed=False)

    def _choose(self, ctx, compile_entry: TrainingCall, later: List[TrainingCall], helper: Optional[str]
                ) -> Optional["_Choice"]:
        """What ``auto`` gives the model compiled at ``compile_entry``, run by the calls ``later``
        (None: it runs none)."""
        runs = [entry for entry in later if entry.method != "compile"]
        if not runs:
            return None
        parts: List[_Part] = []
        unchecked: List[Tuple[cst.CSTNode, str, str]] = []  # inputs of unknown size: (where, reader, count)
        pad = pad_helper_names(ctx)[0]
        for entry in runs:
            # Inputs padded by an earlier port (IPU107) were arrays whose batches the first port
            # could not count, or the model would have its value: they are not counted now either.
            padded = is_helper_call(entry.data, pad)
            counted = _given_count(entry, _STEP_COUNTS[entry.method]) is not None
            if entry is not runs[0] and not (entry.has_arrays or padded or counted or self._finite_dataset(ctx, entry)):
                if not padded and entry.data is not None:
                    unchecked.append((entry.data, f"`{entry.method}`", _STEP_COUNTS[entry.method]))
                continue
            found = self._batches_run(ctx, compile_entry, entry, helper, unchecked)
            unknown = next((part for part in found if part.value is None), None)
            if unknown is not None:
                return _Choice(None, parts, unchecked, unknown)
            parts.extend(found)
        values: List[str] = []
        for part in parts:
            if part.value not in values:
                values.append(part.value)
        return _Choice(self._common(values), parts, unchecked)

    def _batches_run(self, ctx, compile_entry, entry, helper, unchecked: List[Tuple[cst.CSTNode, str, str]]
                     ) -> List["_Part"]:
        """The parts of one call with their batches per replica: its inputs (or the step count it
        is given), and for ``fit`` its validation, which runs in executions of the same size.
        ``validation_split`` cuts the inputs in two before Keras counts either. Validation data in a
        variable the port cannot follow is added to ``unchecked``."""
        method = f"`{entry.method}`"
        split = _split_fraction(entry)
        data = _unwrapped(entry.data, helper)
        steps = _STEP_COUNTS[entry.method]
        if _given_count(entry, steps) is not None:
            found = [self._count_part(ctx, compile_entry, entry, steps, method, entry.data)]
        elif split is not None:
            found = [_Part(f"{method} training", self._arrays_value(ctx, compile_entry, entry, data,
                                                                    ("training", split)))]
        else:
            found = [_Part(method, self._auto_value(ctx, compile_entry, entry, helper))]
        if entry.method != "fit":
            return found
        validating = validation_entry(ctx, entry)  # batched by `validation_batch_size` when given
        validation = keyword(entry.call, "validation_data")
        if _given_count(entry, "validation_steps") is not None and (validation is not None or split is not None):
            found.append(self._count_part(ctx, compile_entry, entry, "validation_steps", f"{method} validation",
                                          validation.value if validation is not None else entry.data))
        elif split is not None:
            found.append(_Part(f"{method} validation", self._arrays_value(ctx, compile_entry, validating, data,
                                                                          ("validation", split))))
        elif entry.validation:
            found.extend(_Part(f"{method} validation", self._arrays_value(
                ctx, compile_entry, validating, _unwrapped(arrays.elements[0].value, helper)))
                for arrays in entry.validation)
        elif validation is not None and is_dataset(ctx, validation.value):  # its batches as `len()` counts them
            found.append(_Part(f"{method} validation", self._dataset_value(
                ctx, compile_entry, entry, validation.value) if _finite_dataset_in(
                    ctx, validation.value, entry.owner) else None))
        elif validation is not None and isinstance(validation.value, cst.Name) and entry.held_validation is None:
            # A variable not seen to hold validation arrays most likely holds a dataset made elsewhere.
            unchecked.append((validation.value, f"the validation of {method}", "validation_steps"))
        elif entry.held_validation is not None:
            # `held_out = (x_val, y_val)`: the arrays of the tuple the variable holds.
            held = _held_tuple(ctx, entry.held_validation)
            if held is None:
                unchecked.append((entry.held_validation, f"the validation of {method}", "validation_steps"))
            else:
                found.append(_Part(f"{method} validation", self._arrays_value(
                    ctx, compile_entry, validating, _unwrapped(held.elements[0].value, helper))))
        return found

    def _count_part(self, ctx, compile_entry: TrainingCall, entry: TrainingCall, name: str, what: str,
                    data: cst.BaseExpression) -> "_Part":
        """The part of ``entry`` whose batches its ``name=N`` gives (``steps_per_epoch``, ``steps``,
        ``validation_steps``): N batches in all, N // replicas on each replica, and Keras checks
        both against ``steps_per_execution``, so the value divides both. Known statically, or as the
        count's own code when it can be computed where the model is compiled, to the value the call
        gets; the count as earlier rules leave it (IPU105/IPU107 floor a rounded-up count)."""
        given = _given_count(entry, name)
        count = ctx.requested(given.value)
        shown = f"`{name}={code_of(ctx, count)}`"  # as the port writes it
        subject = f"{shown} of {what}"
        written = _value_read(ctx, count, entry.owner) if count is given.value else count
        if rounded_up(ctx, written) is not None and not _repeated(ctx, data, entry.owner):
            return _Part(what, None, why=f"{subject} rounds up to count a last partial batch, which the IPU port "
                         "drops from inputs that are not repeated: count the whole batches")
        statics = _static_counts(ctx, written, entry.owner)
        if statics is not None:
            return self._static_count_part(ctx, what, shown, statics, count)
        if throughput.config_accumulation(ctx.config) > 1:
            return _Part(what, None, why=f"{subject} is known at run time only, and with gradient accumulation the "
                         f"value must be a multiple of {throughput.config_accumulation(ctx.config)} that divides it")
        why = _uncomputable(ctx, count, entry, compile_entry)
        if why is not None:
            return _Part(what, None, why=f"{subject} {why}")
        code = code_of(ctx, count)
        replicas = throughput.config_replicas(ctx.config)
        if replicas > 1:  # Keras checks the count, and each replica's share of it
            code = f"math.gcd({floor_operand(ctx, count)} // {replicas}, {code})"
        return _Part(what, code, shown=shown + (f" on {replicas} replicas" if replicas > 1 else ""))

    @staticmethod
    def _static_count_part(ctx, what: str, shown: str, counts: List[int], written: cst.BaseExpression) -> "_Part":
        """The part of a call given ``counts`` batches (one per way the call is reached): the
        greatest value that divides each count and each replica's share of it, a multiple of the
        accumulated batches."""
        replicas = throughput.config_replicas(ctx.config)
        accumulation = throughput.config_accumulation(ctx.config)
        if not (len(counts) == 1 and isinstance(written, cst.Integer)):
            shown += f" ({', '.join(str(count) for count in counts)})"
        on_replicas = f" on {replicas} replicas" if replicas > 1 else ""
        shares = [count // replicas for count in counts]
        value = functools.reduce(math.gcd, counts + shares)
        if min(shares) < 1 or value % accumulation:
            batches = f"{'/'.join(map(str, shares))} batch{'es' if max(shares) != 1 else ''}"
            return _Part(what, None, other_value=False, why=(
                f"{shown} of {what}{on_replicas} gives {batches} per replica, fewer than one each" if min(shares) < 1
                else f"{shown} of {what}{on_replicas} gives {batches} per replica, which no multiple of the "
                f"{accumulation} batches accumulated for one weight update divides") +
                f": give it a multiple of {replicas * accumulation}")
        if replicas > 1:
            shown += f"{on_replicas} ({', '.join(map(str, shares))} each" + (
                f", {value} divides both)" if value != math.gcd(*shares) else ")")
        return _Part(what, str(value), shown=shown)

    def _dataset_value(self, ctx, compile_entry: TrainingCall, entry: TrainingCall, data: cst.BaseExpression
                       ) -> Optional[str]:
        """The batches per replica of the finite dataset ``data`` that ``entry`` reads, ``len(data)``
        where the model is compiled."""
        if (entry.owner is not compile_entry.owner or not _bound_before(ctx, data.value, compile_entry)
                or not _unchanged_after_compile(ctx, data, compile_entry)):
            return None
        replicas = throughput.config_replicas(ctx.config)
        return f"len({code_of(ctx, data)})" + (f" // {replicas}" if replicas > 1 else "")

    @staticmethod
    def _common(values: List[str]) -> str:
        """``values`` as one: itself, their gcd when they are numbers, else ``math.gcd(...)``
        (``1`` when the numbers among them have no common divisor but 1: so has the whole)."""
        numbers = [int(value) for value in values if value.isdigit()]
        if numbers:  # the known values as one: `math.gcd(12, len(x_test) // 32)`
            known = functools.reduce(math.gcd, numbers)
            if known == 1:  # `math.gcd(1, len(x) // 128)` is 1 whatever `x` holds
                return "1"
            values = [str(known)] + [value for value in values if not value.isdigit()]
        return functools.reduce(lambda left, right: f"math.gcd({left}, {right})", values)

    def _auto_value(self, ctx, compile_entry, entry, helper) -> Optional[str]:
        if self._finite_dataset(ctx, entry):
            return self._dataset_value(ctx, compile_entry, entry, entry.data)
        if not entry.has_arrays:
            return None
        return self._arrays_value(ctx, compile_entry, entry, _unwrapped(entry.data, helper))

    def _arrays_value(self, ctx, compile_entry, entry, data, part: Optional[Tuple[str, cst.BaseExpression]] = None
                      ) -> Optional[str]:
        """The batches per replica of arrays ``data`` that ``entry`` runs on (or of the ``part``
        of them that ``validation_split`` gives), known statically or written as an expression
        where the model is compiled."""
        if entry.model_batch is not None and entry.model_batch.size is None:
            return None  # the model fixes a batch the port cannot read: not Keras' default of 32
        static = self._static(ctx, entry, data, part)
        if static is not None:
            return static
        if entry.owner is not compile_entry.owner:
            return None
        names = [_root_name(data)]
        if entry.batch is not None and int_value(entry.batch) is None:
            names.append(_root_name(entry.batch))
        if part is not None and fraction_value(part[1]) is None:
            names.append(_root_name(part[1]))
        if any(name is None or not _bound_before(ctx, name, compile_entry) for name in names):
            return None
        if _held_inputs(ctx, data) == "mixed":
            return None  # several inputs on one path, one on another: no one `len()` counts both
        read = (data, entry.batch, part[1] if part is not None else None)  # the fraction too: `for split in ...`
        if not all(_unchanged_after_compile(ctx, node, compile_entry) for node in read if node is not None):
            return None
        return self._expression(ctx, entry, data, part)

    @staticmethod
    def _static(ctx, entry: TrainingCall, data: cst.BaseExpression,
                part: Optional[Tuple[str, cst.BaseExpression]] = None) -> Optional[str]:
        """The value itself when the number of samples and the batch size are known statically."""
        samples = static_samples(ctx, data, entry.owner)
        batch = static_int(ctx, entry.batch) if entry.batch is not None else KERAS_DEFAULT_BATCH
        if samples is None or batch is None:
            return None
        if part is not None:
            fraction = fraction_value(part[1])
            if fraction is None:
                return None
            training = int(samples * (1.0 - fraction))  # where Keras splits the inputs
            samples = training if part[0] == "training" else samples - training
        config = ctx.config
        if entry.method == "predict":  # padded to whole batches of every replica (IPU107)
            whole = batch * throughput.config_replicas(config)
            samples = -(-samples // whole) * whole
        value = throughput.auto_steps_per_execution(samples, batch, throughput.config_replicas(config),
                                                    throughput.config_accumulation(config))
        return str(value) if value >= 1 else None

    @staticmethod
    def _finite_dataset(ctx, entry: TrainingCall) -> bool:
        """The input of ``entry`` is a batched ``tf.data`` dataset of its function whose length
        ``len()`` knows at run time. Its batches are split between the replicas; without
        accumulation a whole epoch per execution always divides them."""
        return entry.dataset_input and _finite_dataset_in(ctx, entry.data, entry.owner)

    def _expression(self, ctx, entry: TrainingCall, data: cst.BaseExpression,
                    part: Optional[Tuple[str, cst.BaseExpression]] = None) -> str:
        static = self._static(ctx, entry, data, part)
        if static is not None:
            return static
        config = ctx.config
        replicas = throughput.config_replicas(config)
        if not entry.has_arrays:  # a finite dataset: its batches per replica
            return f"len({code_of(ctx, data)})" + (f" // {replicas}" if replicas > 1 else "")
        accumulation = throughput.config_accumulation(config)
        batch_value = int_value(entry.batch) if entry.batch is not None else KERAS_DEFAULT_BATCH
        if batch_value is not None:
            divisor = str(batch_value * replicas * accumulation)
        else:
            factor = replicas * accumulation
            batch = code_of(ctx, entry.batch)
            divisor = f"({batch} * {factor})" if factor > 1 else batch
        # `predict`'s inputs are padded to whole batches (IPU107): their batches are counted up.
        samples = _length_code(ctx, data)
        if part is not None:  # where Keras splits the inputs, as it computes it
            training = f"int({samples} * (1.0 - {code_of(ctx, part[1])}))"
            samples = training if part[0] == "training" else f"({samples} - {training})"
        value = (f"-(-{samples} // {divisor})" if entry.method == "predict" else f"{samples} // {divisor}")
        return f"{value} * {accumulation}" if accumulation > 1 else value

    def _check_own_steps(self, ctx) -> None:
        """No option asked for: the script's own ``compile(steps_per_execution=K)`` binds the
        ``fit`` calls after it the same way."""
        calls = training_calls(ctx, helper_name(ctx))
        for index, entry in enumerate(calls):
            given = keyword(entry.call, "steps_per_execution") if entry.method == "compile" else None
            own = int_value(given.value) if given is not None else None
            if own is None or own <= 1:
                continue
            later = [other for other in calls[index + 1:] if other.model == entry.model]
            later = later[:next((i for i, other in enumerate(later) if other.method == "compile"), len(later))]
            later += _handed_runs(ctx, entry, calls, later)
            self._check_fits(ctx, later, own)

    def _check_fits(self, ctx, later: List[TrainingCall], fixed: Optional[int]) -> None:
        """The step counts and finite datasets of the calls after ``compile``: every execution runs
        ``fixed`` batches, in `fit`, in its validation and in `evaluate`/`predict` alike. Not so in
        a strategy without the IPU Keras extensions (a ``train_step`` override): Keras' own data
        handler runs the batches left over in a shorter last execution."""
        if keras_extensions_off(ctx) is not None:
            return
        for entry in later:
            counts = {"fit": ("steps_per_epoch", "validation_steps"), "evaluate": ("steps",), "predict": ("steps",)}
            for name in counts.get(entry.method, ()):
                given = _given_option(ctx, entry, name)
                if given is not None and not is_name(given[1], "None"):
                    self._check_count(ctx, given[0], given[1], name, fixed)
            if fixed is not None and fixed > 1 and entry.method in counts:
                self._report_unread_options(ctx, entry, counts[entry.method], fixed)
            if not (fixed is not None and fixed > 1 and throughput.config_replicas(ctx.config) == 1):
                continue  # else IPU109 says it
            count = counts[entry.method][0] if entry.method in counts else None
            data = entry.data if entry.dataset_input else _dataset_beside_options(ctx, entry)
            if count is not None and data is not None and _given_option(ctx, entry, count) is None:
                self._check_dataset_batches(ctx, entry, data, entry.call.func.attr, f"`{entry.method}`",
                                            count, fixed)
            validation = _given_option(ctx, entry, "validation_data")
            # A variable not seen to hold validation arrays most likely holds a dataset made elsewhere.
            if entry.method == "fit" and validation is not None and _given_option(ctx, entry, "validation_steps") is None \
                    and (is_dataset(ctx, validation[1]) or isinstance(validation[1], cst.Name)
                         and entry.held_validation is None):
                self._check_dataset_batches(ctx, entry, validation[1], validation[0], "the validation of `fit`",
                                            "validation_steps", fixed)

    def _report_unread_options(self, ctx, entry: TrainingCall, names: Tuple[str, ...], fixed: int) -> None:
        """``fit(train_ds, **config.fit_kwargs)``: options the port cannot read may give step counts,
        or leave Keras to count the batches of the data; either must be a multiple of ``fixed``.
        Arrays with such options are reported by IPU107, which leaves them untrimmed."""
        options = _options_argument(entry)
        if options is None or entry.hidden_options is not None or literal_options(ctx, options.value, entry.owner) \
                is not None:
            return
        counts = " or ".join(f"`{name}`" for name in names)
        ctx.report(self.code, options, f"`{entry.method}` gets options through `**{code_of(ctx, options.value)}`, "
                   f"which the port cannot read: a {counts} among them, or else the batches per epoch of the data "
                   f"it reads (per replica), must be a multiple of `steps_per_execution={fixed}`, or Keras on the "
                   "IPU raises an error; check them", fixed=False)

    def _check_dataset_batches(self, ctx, entry: TrainingCall, data: cst.BaseExpression, node: cst.CSTNode,
                               reader: str, count: str, fixed: int) -> None:
        """The batches of the dataset ``data`` that ``reader`` runs in executions of ``fixed``: said
        exactly when the port can count them (and nothing when they are a multiple of it), else
        left for a person to check."""
        known = _static_batches(ctx, entry, data)
        if known is None:
            self._report_dataset_batches(ctx, node, reader, count, fixed)
        elif known[0] % fixed:
            batches, samples, size = known
            ctx.report(self.code, node, f"this dataset gives {batches} batches per epoch ({samples} samples in "
                       f"batches of {size}), not a multiple of {fixed}, so {reader} raises an error on the IPU: "
                       f"`.repeat()` it and pass `{count}={max(fixed, batches - batches % fixed)}`, or pick a batch "
                       f"size that gives a multiple of {fixed} batches", fixed=False)

    def _check_count(self, ctx, given: cst.CSTNode, count: cst.BaseExpression, name: str, fixed: Optional[int]
                     ) -> None:
        """``steps_per_epoch``/``validation_steps``/``steps``: ``count``, given at ``given``, a multiple of ``fixed``."""
        value = int_value(count)
        if fixed is not None and value is not None:
            if value % fixed:
                ctx.report(self.code, given, f"`{name}={value}` must be a multiple of "
                           f"`steps_per_execution={fixed}`: use {max(fixed, value - value % fixed)}", fixed=False)
        else:
            what = f"`steps_per_execution={fixed}`" if fixed is not None else "`steps_per_execution`"
            ctx.report(self.code, given, f"`{name}` must be a multiple of {what}; check this value", fixed=False)

    def _report_dataset_batches(self, ctx, node: cst.CSTNode, reader: str, count: str, fixed: int) -> None:
        """A finite dataset whose batches ``reader`` runs in executions of ``fixed``: Keras on the IPU
        raises unless their number is a multiple of it (or ``count`` says how many to run)."""
        ctx.report(self.code, node, f"the batches per epoch of this dataset (per replica) must be a multiple of "
                   f"{fixed}, or {reader} raises an error: check its size, or `.repeat()` it and pass `{count}`, "
                   f"a multiple of {fixed}", fixed=False)

    def _warn_callbacks(self, ctx, fixed: Optional[int]) -> None:
        """The per-batch callbacks, which run once per execution; ``fixed`` is the number of
        batches in one (None: a whole epoch, ``auto``)."""
        if fixed is None:
            self._report_callback_runs(ctx)
        for call, _ in ctx.calls_to(*_CHECKPOINTS):
            frequency = keyword(call, "save_freq")
            if frequency is None or isinstance(frequency.value, cst.SimpleString) and \
                    frequency.value.evaluated_value == "epoch":
                continue
            batches = static_int(ctx, frequency.value)
            if fixed is not None and batches is not None and batches % fixed == 0:
                continue  # every save falls at the end of an execution: the same checkpoints
            advice = (f"use `save_freq={max(fixed, batches - batches % fixed)}`, a multiple of {fixed}"
                      if fixed is not None and batches is not None
                      else "make `save_freq` a multiple of `steps_per_execution`")
            ctx.report(self.code, frequency, "`ModelCheckpoint(save_freq=<batches>)` saves at most once per "
                       "execution, with the weights of the end of the execution: "
                       f"{advice}, or save per epoch", fixed=False)
        for call, _ in ctx.calls_to(*_TENSORBOARD):
            self._report_tensorboard_frequency(ctx, keyword(call, "update_freq"), fixed)
        for call, _ in ctx.calls_to(*_LAMBDA_CALLBACKS):
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value in _BATCH_HOOKS:
                    function = (local_function(ctx, arg.value.value, call) if isinstance(arg.value, cst.Name)
                                else arg.value)
                    self._report_batch_hook(ctx, arg, f"`LambdaCallback({arg.keyword.value}=...)`",
                                            [function] if function is not None else [])
        for cls in ctx.nodes(cst.ClassDef):
            if not any(ctx.keras_name(base.value) in _CALLBACK_BASES for base in cls.bases):
                continue
            for statement in cls.body.body:
                if isinstance(statement, cst.FunctionDef) and statement.name.value in _BATCH_HOOKS:
                    self._report_batch_hook(ctx, statement.name, f"`{statement.name.value}`",
                                            list(reached_methods(cls, (statement.name.value,)).values()))

    def _report_tensorboard_frequency(self, ctx, frequency: Optional[cst.Arg], fixed: Optional[int]) -> None:
        """``TensorBoard(update_freq=...)`` in batches, or ``"batch"``: TensorBoard writes from its
        per-batch hook, which runs once per execution; a number of batches that is a multiple of
        ``fixed`` writes at the same batches as before."""
        if frequency is None:
            return
        if isinstance(frequency.value, cst.SimpleString) and frequency.value.evaluated_value == "batch":
            ctx.report(self.code, frequency, "`TensorBoard(update_freq=\"batch\")` writes once per execution of "
                       "`steps_per_execution` batches, not after every batch, so its curves get one point per "
                       "execution: expect that, or write per epoch", fixed=False)
            return
        batches = int_value(frequency.value)
        if batches is None or fixed is not None and batches % fixed == 0:
            return
        ctx.report(self.code, frequency, "`TensorBoard(update_freq=<batches>)` writes at most once per "
                   "execution of `steps_per_execution` batches: make `update_freq` a multiple of it, or "
                   "write per epoch", fixed=False)

    def _report_batch_hook(self, ctx, node: cst.CSTNode, hook: str, code: List[cst.CSTNode]) -> None:
        """A per-batch hook, which runs once per execution; ``code`` is what it runs. Asynchronous
        callbacks call it after every batch, but only with the batch's logs: the learning rate it
        sets reaches the IPU, and the weights it saves leave it, between executions only."""
        learning_rate = next(filter(None, (_learning_rate_written(ctx, node) for part in code for node in walk(part))),
                             None)
        weights = next((node for part in code for node in walk(part) if _weights_call(node)), None)
        if learning_rate is not None:
            ctx.report(self.code, node, f"{hook} sets the learning rate `{code_of(ctx, learning_rate)}` once "
                       "per execution of `steps_per_execution` batches, and the IPU trains every batch of an "
                       "execution with the value it started with (asynchronous callbacks do not change that): "
                       "give the optimizer a `keras.optimizers.schedules.LearningRateSchedule` as its learning "
                       "rate instead, which the IPU computes at every batch", fixed=False)
        elif weights is not None:
            ctx.report(self.code, node, f"{hook} runs once per execution of `steps_per_execution` batches, and "
                       f"`{code_of(ctx, weights.func)}` there sees the weights of the end of an execution "
                       "(asynchronous callbacks do not change that: the weights leave the IPU between executions "
                       "only): save per epoch, or with `ModelCheckpoint(save_freq=...)` a multiple of "
                       "`steps_per_execution`", fixed=False)
        else:
            ctx.report(self.code, node, f"{hook} runs once per execution of `steps_per_execution` batches, not "
                       "after every batch (or enable asynchronous callbacks: "
                       "`model.set_asynchronous_callbacks(True)`)", fixed=False)

    def _report_callback_runs(self, ctx) -> None:
        """``self.model.evaluate(self.x, self.y)`` in a callback runs during ``fit`` in executions of
        the model's ``steps_per_execution``, which ``auto`` counted on the calls it can see, not on
        the data the callback holds: its batches must be a multiple of that value (or fewer), and
        IPU107 trims its inputs to whole batches only, as the value is not known there."""
        for call, method in method_calls(ctx, "evaluate", "predict"):
            function = ctx.enclosing_function(call)
            if not (callback_model(call.func.value) and function is not None and is_callback_method(ctx, function)):
                continue
            data = argument(call, "x", 0)
            if data is None or single_sample(ctx, data.value, function):
                continue  # one batch: never more than one execution holds
            ctx.report(self.code, call.func.attr, f"`{code_of(ctx, call.func.value)}.{method}()` in the callback "
                       f"`{ctx.enclosing(function, cst.ClassDef).name.value}` runs during `fit` in executions of the "
                       "model's `steps_per_execution`, which `--steps-per-execution auto` counts on the calls the "
                       f"porter sees, not on `{code_of(ctx, data.value)}`: unless its batches per replica are a "
                       "multiple of that value (or fewer), Keras on the IPU raises an error; port with "
                       "`--steps-per-execution K`, a K that divides its batches too (array inputs are then trimmed "
                       "to whole executions), or give the callback whole executions of data", fixed=False)



def _learning_rate_written(ctx, node: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """The optimizer's learning rate that ``node`` writes (``K.set_value(self.model.optimizer.lr,
    ...)``, ``optimizer.learning_rate.assign(...)``, ``self.model.optimizer.lr = ...``), else None."""
    if isinstance(node, cst.Call):
        if ctx.keras_name(node.func) == "keras.backend.set_value" and node.args:
            written = node.args[0].value
        else:
            written = node.func.value if isinstance(node.func, cst.Attribute) and node.func.attr.value == "assign" \
                else None
        return written if written is not None and _learning_rate(written) else None
    targets = ([target.target for target in node.targets] if isinstance(node, cst.Assign)
               else [node.target] if isinstance(node, cst.AugAssign) else [])
    return next((target for target in targets if _learning_rate(target) and "optimizer" in _attribute_names(target)),
                None)


def _learning_rate(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Attribute) and node.attr.value in ("lr", "learning_rate")


def _attribute_names(node: cst.BaseExpression) -> List[str]:
    """The names of the attribute chain ``node`` (``self.model.optimizer.lr``: model, optimizer, lr)."""
    names = []
    while isinstance(node, cst.Attribute):
        names.append(node.attr.value)
        node = node.value
    return names


def _weights_call(node: cst.CSTNode) -> bool:
    """``node`` saves or reads the weights of the callback's model (``self.model.save_weights(...)``)."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
        node.func.attr.value in _WEIGHT_METHODS and callback_model(node.func.value)


def _static_batches(ctx, entry: TrainingCall, data: cst.BaseExpression) -> Optional[Tuple[int, int, int]]:
    """(batches, samples, batch size) of the dataset ``data`` that ``entry`` reads, when it slices
    arrays of a known length (``from_tensor_slices((x_train / 255.0, y_train))``) into batches of a
    literal size with ``drop_remainder=True``, and nothing on the way changes how many elements
    there are."""
    found = [batch for batch in training_batches(ctx) if batch.entry.call is entry.call and batch.value is data]
    if len(found) != 1 or not all(call.func.attr.value in _SAME_COUNT for call in found[0].later):
        return None
    batching = found[0].batch
    size = argument(batching, "batch_size", 0)
    drop = argument(batching, "drop_remainder", 1)
    size = static_int(ctx, size.value) if size is not None else None
    if not size or drop is None or not is_true(drop.value):
        return None
    node: cst.BaseExpression = batching.func.value
    scope = entry.owner
    for _ in range(8):  # `ds = ds.shuffle(n)`, `ds = from_tensor_slices(...)`: back to the slices
        calls, root = chain(ctx, node)
        if not all(call.func.attr.value in _SAME_COUNT for call in calls):
            return None
        if isinstance(root, cst.Name):
            scope = owner(ctx, root)
            node = last_value_before(ctx, root, scope)
            if node is None:
                return None
            continue
        if not (isinstance(root, cst.Call) and ctx.qualified_name(root.func) == _SLICES and root.args):
            return None
        sliced = root.args[0].value
        first = sliced.elements[0].value if isinstance(sliced, cst.Tuple) and sliced.elements else sliced
        samples = static_samples(ctx, _array_of(first), scope)
        return (samples // size, samples, size) if samples is not None and samples >= size else None
    return None


def _split_fraction(entry: TrainingCall) -> Optional[cst.BaseExpression]:
    """The ``validation_split`` of a ``fit`` on arrays that Keras cuts in two: not 0, and no
    ``validation_data`` (which Keras takes instead)."""
    split = keyword(entry.call, "validation_split")
    if entry.method != "fit" or not entry.has_arrays or split is None or fraction_value(split.value) == 0 \
            or keyword(entry.call, "validation_data") is not None:
        return None
    return split.value


def _array_of(node: cst.BaseExpression) -> cst.BaseExpression:
    """``x_train`` of ``x_train / 255.0`` or ``x_train.astype("float32")``: the same samples."""
    while True:
        if isinstance(node, cst.BinaryOperation):
            node = node.left
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "astype":
            node = node.func.value
        else:
            return node


def _held_tuple(ctx, held: cst.BaseExpression) -> Optional[cst.Tuple]:
    """The one tuple of arrays (``(x_val, y_val)``) the validation variable ``held`` is assigned."""
    values = values_of(ctx, held) if isinstance(held, cst.Name) else []
    if len(values) != 1 or not isinstance(values[0], cst.Tuple) or not values[0].elements:
        return None
    return None if isinstance(values[0].elements[0], cst.StarredElement) else values[0]


def _held_inputs(ctx, data: cst.BaseExpression) -> Optional[str]:
    """What the variable ``data`` holds when it is several inputs: "dict" (named inputs,
    ``{name: table[name].values for name in features}``, ``dict(table)``), "list" (``[ids, numbers]``),
    "mixed" when it holds one input on some paths; None for one input, or what is not known."""
    if not isinstance(data, cst.Name):
        return None
    kinds = set()
    for value in values_of(ctx, data):
        if isinstance(value, (cst.Dict, cst.DictComp)) or isinstance(value, cst.Call) and is_name(value.func, "dict"):
            kinds.add("dict")
        elif value is not None and first_input(value) is not value:
            kinds.add("list")
        else:
            kinds.add("one")
    several = kinds - {"one"}
    if not several:
        return None
    return several.pop() if len(several) == 1 and "one" not in kinds else "mixed"


def _length_code(ctx, data: cst.BaseExpression) -> str:
    """``len()`` of the samples of ``data``: of its first input when the variable holds several
    (``len()`` of a dict or a list of inputs counts the inputs)."""
    code = code_of(ctx, data)
    held = _held_inputs(ctx, data)
    if held == "dict":
        return f"len(next(iter({code}.values())))"
    if held == "list":
        return f"len({code}[0])"
    return f"len({code})"


def _unwrapped(node: cst.BaseExpression, helper: Optional[str]) -> cst.BaseExpression:
    """The data inside a call of the trimming helper, and of several inputs the first, which
    counts the samples of all (``[ids, numbers]``, ``{"age": age, ...}``)."""
    if is_helper_call(node, helper) and node.args:
        node = node.args[0].value
    return first_input(node)



RULE = StepsPerExecution()


def _handed_runs(ctx, compile_entry: TrainingCall, calls: List[TrainingCall], later: List[TrainingCall]
                 ) -> List[TrainingCall]:
    """The runs of the model compiled at ``compile_entry`` in the functions of the file that its
    function hands it to after compiling it (``train(model, x, y)`` for ``def train(net, x, y):
    net.fit(...)``, defined anywhere, its parameter named anyhow), beside the runs ``later`` found
    by name: they run the model ``steps_per_execution`` is chosen for. A function that compiles the
    model again runs it with its own options, and is left out."""
    every = ctx.nodes(cst.Call)
    start = next(index for index, call in enumerate(every) if call is compile_entry.call)
    found: List[TrainingCall] = []
    for call in every[start + 1:]:
        if owner(ctx, call) is not compile_entry.owner or not isinstance(call.func, cst.Name) or any(
                arg.star for arg in call.args):
            continue
        function = local_function(ctx, call.func.value, call)
        if function is None:
            continue
        parameters = parameter_names(function)
        for position, arg in enumerate(call.args):
            name = arg.keyword.value if arg.keyword is not None else (
                parameters[position] if position < len(parameters) else None)
            if not is_name(arg.value, compile_entry.model) or name is None:
                continue
            runs = [entry for entry in calls if entry.owner is function and entry.model == name]
            if any(entry.method == "compile" for entry in runs):
                continue
            found += [entry for entry in runs if not any(entry is other for other in (*later, *found))]
    return found


def _own_compile(ctx, entry: TrainingCall) -> Optional[cst.FunctionDef]:
    """The ``compile`` that ``entry`` (a ``compile`` call) calls, when a class of the file defines
    it, or inherits it from a class of the file (``class WGAN(GAN)``), with parameters of its own
    (``def compile(self, d_optimizer, g_optimizer)``, a GAN's) that hand no ``steps_per_execution``
    on to Keras: that of the class the model is made from (``gan = GAN(...)``, here or in another
    function under the same name), else, for a model made by a function (``gan = build_gan()``),
    the one such ``compile`` whose parameters take every keyword of the call when one of them is
    not Keras' own."""
    receiver = entry.call.func.value if isinstance(entry.call.func, cst.Attribute) else None
    found = instance_class(ctx, receiver) or _built_class(ctx, receiver) if receiver is not None else None
    if found is None:
        classes = {node.name.value: node for node in ctx.nodes(cst.ClassDef)}
        found = next((classes[assign.value.func.value] for assign in ctx.nodes(cst.Assign)
                      if isinstance(assign.value, cst.Call) and isinstance(assign.value.func, cst.Name)
                      and assign.value.func.value in classes
                      and any(is_name(target.target, entry.model) for target in assign.targets)), None)
    if found is not None:
        method = inherited_method(ctx, found, "compile")
        return method if method is not None and _takes_no_steps(method) else None
    keywords = {arg.keyword.value for arg in entry.call.args if arg.keyword is not None}
    if keywords <= _KERAS_COMPILE:
        return None
    own = {id(method): method for method in (inherited_method(ctx, node, "compile")
                                             for node in ctx.nodes(cst.ClassDef))
           if method is not None and _takes_no_steps(method)}
    taking = [method for method in own.values()
              if keywords <= {param.name.value for param in [*method.params.params, *method.params.kwonly_params]}]
    return taking[0] if len(taking) == 1 else None


def _built_class(ctx, receiver: cst.BaseExpression) -> Optional[cst.ClassDef]:
    """The class of the file whose instance every function of the file that makes ``receiver``
    returns (``gan = build_gan()`` for ``def build_gan(): return GAN(...)``), when it is one."""
    values = values_of(ctx, receiver) if isinstance(receiver, cst.Name) else []
    builders = [local_function(ctx, value.func.value, value) if isinstance(value, cst.Call)
                and isinstance(value.func, cst.Name) else None for value in values]
    if not builders or None in builders:
        return None
    returned = [node.value for builder in builders for node in walk(builder.body, skip=(cst.FunctionDef, cst.ClassDef))
                if isinstance(node, cst.Return)]
    made = {id(found): found for found in (instance_class(ctx, value) if value is not None else None
                                           for value in returned)}
    return next(iter(made.values())) if len(made) == 1 else None


# The keywords of Keras 2.6's `Model.compile` (and those its `**kwargs` take).
_KERAS_COMPILE = frozenset({"optimizer", "loss", "metrics", "loss_weights", "weighted_metrics", "run_eagerly",
                            "steps_per_execution", "jit_compile", "sample_weight_mode", "target_tensors",
                            "distribute", "experimental_steps_per_execution"})


def _takes_no_steps(method: cst.FunctionDef) -> bool:
    """Whether a ``compile`` of the file hands no ``steps_per_execution`` on to Keras: it takes
    none, and takes no ``**kwargs``, or takes them and does not pass them on to the
    ``super().compile(...)`` it calls (there, the option would be dropped)."""
    params = method.params
    if "steps_per_execution" in {param.name.value for param in [*params.params, *params.kwonly_params]}:
        return False
    rest = params.star_kwarg
    return not isinstance(rest, cst.Param) or not any(
        arg.star == "**" and is_name(arg.value, rest.name.value)
        for call in super_calls(method, "compile") for arg in call.args)

