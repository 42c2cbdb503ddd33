import libcst as cst

from porter.context import code_of, walk
from porter.cstutil import is_name, keyword
from porter.rule import KERAS, WARN, Example, Rule
from porter.rules.keras._analysis.steps import step_functions
from porter.rules.keras._analysis.util import STRING_LAYERS, host_only, string_layer_names, subclasses_of

_INPUTS = frozenset({"keras.Input", "keras.layers.Input"})
_STRING_DTYPES = frozenset({"tensorflow.string", "tensorflow.dtypes.string"})
_HUB_LAYER = "tensorflow_hub.KerasLayer"
_SEQUENTIAL = frozenset({"keras.Sequential", "keras.models.Sequential"})
_MODELS = _SEQUENTIAL | {"keras.Model", "keras.models.Model"}
_ADVICE = ("string ops do not run on the IPU (Targeting the IPU from TensorFlow 2, \"Unsupported "
           "operations\"); do the text processing in the `tf.data` pipeline (`dataset.map`) and give the "
           "model integer ids")


# The methods of a model subclass that Keras (or a custom loop) compiles.
_COMPILED_METHODS = frozenset({"call", "train_step", "test_step", "predict_step"})
_MODEL_CLASSES = ("keras.Model", "keras.models.Model")


def _parameters_run(model: cst.ClassDef) -> dict:
    """{position: name} of the constructor's parameters that the model keeps (``self.words =
    words``) and calls in ``call``/``train_step`` (``self.words(text)``)."""
    methods = {node.name.value: node for node in model.body.body if isinstance(node, cst.FunctionDef)}
    init = methods.get("__init__")
    if init is None:
        return {}
    names = [param.name.value for param in init.params.params][1:]
    kept = {node.targets[0].target.attr.value: node.value.value for node in walk(init)
            if isinstance(node, cst.Assign) and isinstance(node.targets[0].target, cst.Attribute)
            and is_name(node.targets[0].target.value, "self") and isinstance(node.value, cst.Name)}
    called = {node.func.attr.value for name in _COMPILED_METHODS if name in methods for node in walk(methods[name])
              if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and is_name(node.func.value, "self")}
    run = {kept[attribute] for attribute in called if attribute in kept}
    return {index: name for index, name in enumerate(names) if name in run}


def _held_string_layer(ctx, func: cst.BaseExpression) -> bool:
    """``self.vectorize`` where the class assigns ``self.vectorize = TextVectorization(...)``."""
    if not (isinstance(func, cst.Attribute) and is_name(func.value, "self")):
        return False
    owner = ctx.enclosing(func, cst.ClassDef)
    return owner is not None and any(
        isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) and ctx.keras_name(node.value.func) in
        STRING_LAYERS and any(isinstance(target.target, cst.Attribute) and target.target.attr.value == func.attr.value
                              and is_name(target.target.value, "self") for target in node.targets)
        for node in walk(owner))


class StringModel(Rule):
    code = "IPU157"
    name = "string-model"
    kind = WARN
    frameworks = frozenset({KERAS})
    summary = "Warn about Keras models that take strings or hold string lookup layers."
    rationale = (
        "The IPU has no kernels for ops on strings and for the hash tables of lookups: a model that "
        "takes strings (`keras.Input(dtype=\"string\")`, a TF Hub layer given `dtype=tf.string`) or "
        "holds a `TextVectorization` or `StringLookup` layer (in a `Sequential`, or added with `add`) "
        "fails to compile for the IPU (Targeting the IPU from TensorFlow 2, \"Unsupported "
        "operations\"). Such layers belong in the `tf.data` pipeline, where they run on the host "
        "(`dataset.map(lambda text, label: (vectorize(text), label))`), and the model takes the ids "
        "they make. A string layer a custom training step runs, or that a model subclass holds (or is given) "
        "and calls, is reported too. This is reported, not changed: where the model ends and the pipeline starts is a "
        "choice for the author. The same layers used in a `map` function or for `adapt` are not "
        "reported."
    )
    examples = (
        # A string layer a custom step runs, or that a model subclass holds and calls: compiled code.
        Example(
            """\
            import tensorflow as tf

            to_ids = tf.keras.layers.StringLookup(vocabulary=["<start>", "a", "b"])


            @tf.function
            def train_step(images, captions):
                start = to_ids("<start>")
                with tf.GradientTape() as tape:
                    loss = loss_fn(captions, model([images, start]))
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
            """,
        ),
        # Given to a model that only keeps it for a host-side method: not compiled, not reported.
        Example(
            """\
            import tensorflow as tf

            to_chars = tf.keras.layers.StringLookup(vocabulary=letters, invert=True)


            class Sampler(tf.keras.Model):
                def __init__(self, net, to_chars):
                    super().__init__()
                    self.net = net
                    self.to_chars = to_chars

                def call(self, ids):
                    return self.net(ids)

                @tf.function
                def generate(self, ids):
                    return self.to_chars(tf.argmax(self.net(ids), -1))


            sampler = Sampler(net, to_chars)
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow as tf


            class Tagger(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.words = tf.keras.layers.TextVectorization(max_tokens=2000)
                    self.scores = tf.keras.layers.Dense(3)

                def call(self, text):
                    return self.scores(tf.cast(self.words(text), tf.float32))
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            text = tf.keras.Input(shape=(1,), dtype="string")
            ids = vectorizer(text)
            logits = tf.keras.layers.Dense(2)(tf.keras.layers.Embedding(20000, 64)(ids))
            model = tf.keras.Model(text, logits)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            vectorizer = tf.keras.layers.TextVectorization(max_tokens=20000, output_sequence_length=200)
            vectorizer.adapt(train_text)
            export = tf.keras.Sequential([vectorizer, classifier, tf.keras.layers.Activation("sigmoid")])
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            vectorizer = tf.keras.layers.TextVectorization(max_tokens=20000, output_sequence_length=200)
            vectorizer.adapt(train_text)
            train_ds = raw_train_ds.map(lambda text, label: (vectorizer(text), label))
            model = tf.keras.Sequential([tf.keras.layers.Embedding(20000, 64), tf.keras.layers.Dense(1)])
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        string_layers = string_layer_names(ctx)
        self._report_compiled_uses(ctx, string_layers)
        reported = set()  # the models reported already: one finding each
        for call in ctx.nodes(cst.Call):
            name = ctx.keras_name(call.func)
            if name in _INPUTS and self._takes_strings(ctx, call):
                models = self._models_of(ctx, call)
                if models and (host_only(ctx, models) == models or models <= reported):
                    continue  # a preprocessing model the tf.data pipeline runs, or one said already
                reported |= models
                ctx.report(self.code, call, f"the model takes strings (`{code_of(ctx, call)}`): {_ADVICE}",
                           fixed=False)
            elif ctx.qualified_name(call.func) == _HUB_LAYER and self._takes_strings(ctx, call):
                ctx.report(self.code, call, f"this TF Hub layer takes strings: {_ADVICE}", fixed=False)
            elif name in _SEQUENTIAL or self._is_add(call):
                if self._assigned_only_to_maps(ctx, call):
                    continue
                for layer in self._layers_given(call):
                    if self._is_string_layer(ctx, layer, string_layers):
                        ctx.report(self.code, layer, f"`{code_of(ctx, layer)}` in the model works on strings: "
                                   f"{_ADVICE}", fixed=False)

    def _report_compiled_uses(self, ctx, string_layers: set) -> None:
        """A string layer called in a training step of a custom loop, or in the ``call`` or
        ``train_step`` of a model subclass (``self.vectorize = TextVectorization(...)``): that code is
        compiled for the IPU."""
        steps = {id(function) for same_name in step_functions(ctx).values() for function in same_name}
        reported = set()
        for call in ctx.nodes(cst.Call):
            func = call.func
            held = _held_string_layer(ctx, func)
            if not (isinstance(func, cst.Name) and func.value in string_layers or held):
                continue
            function = ctx.enclosing_function(call)
            if function is None or not (id(function) in steps or held and function.name.value in _COMPILED_METHODS):
                continue
            what = code_of(ctx, func)
            if what not in reported:
                reported.add(what)
                ctx.report(self.code, call, f"`{what}` works on strings in `{function.name.value}`, code the IPU "
                           f"must compile: {_ADVICE}", fixed=False)
        models = subclasses_of(ctx, *_MODEL_CLASSES)
        for call in ctx.nodes(cst.Call):
            if not (isinstance(call.func, cst.Name) and call.func.value in models):
                continue
            run = _parameters_run(models[call.func.value])
            for index, arg in enumerate(call.args):
                parameter = arg.keyword.value if arg.keyword is not None else run.get(index)
                if not (isinstance(arg.value, cst.Name) and arg.value.value in string_layers
                        and parameter in run.values() and arg.value.value not in reported):
                    continue
                reported.add(arg.value.value)
                ctx.report(self.code, arg, f"`{arg.value.value}`, a string layer, is given to the model "
                           f"`{call.func.value}`, whose `call` or `train_step` runs it: {_ADVICE}", fixed=False)

    @staticmethod
    def _models_of(ctx, input_call: cst.Call) -> set:
        """The names of the models built on an ``Input``: ``keras.Model(...)`` or ``Sequential([...])``
        calls assigned to a name that mention the input (or the variable it is assigned to)."""
        parent = ctx.parent(input_call)
        variable = parent.targets[0].target.value if isinstance(parent, cst.Assign) and isinstance(
            parent.targets[0].target, cst.Name) else None
        models = set()
        for call in ctx.nodes(cst.Call):
            if ctx.keras_name(call.func) not in _MODELS or not isinstance(ctx.parent(call), cst.Assign):
                continue
            target = ctx.parent(call).targets[0].target
            if isinstance(target, cst.Name) and any(
                    node is input_call or isinstance(node, cst.Name) and node.value == variable
                    for arg in call.args for node in walk(arg.value)):
                models.add(target.value)
        return models

    @staticmethod
    def _assigned_only_to_maps(ctx, call: cst.Call) -> bool:
        """``preprocess = Sequential([lookup, ...])`` that only the tf.data pipeline runs."""
        parent = ctx.parent(call)
        return isinstance(parent, cst.Assign) and isinstance(parent.targets[0].target, cst.Name) and bool(
            host_only(ctx, {parent.targets[0].target.value}))

    @staticmethod
    def _takes_strings(ctx, call: cst.Call) -> bool:
        dtype = keyword(call, "dtype")
        if dtype is None:
            return False
        value = dtype.value
        if isinstance(value, cst.SimpleString):
            return value.evaluated_value == "string"
        return ctx.qualified_name(value) in _STRING_DTYPES

    @staticmethod
    def _is_add(call: cst.Call) -> bool:
        return isinstance(call.func, cst.Attribute) and call.func.attr.value == "add" and len(call.args) == 1

    @staticmethod
    def _layers_given(call: cst.Call):
        """The layers of ``Sequential([...])``, or the one of ``model.add(layer)``."""
        if not call.args:
            return []
        first = call.args[0].value
        if isinstance(first, (cst.List, cst.Tuple)):
            return [element.value for element in first.elements if isinstance(element, cst.Element)]
        return [first] if isinstance(call.func, cst.Attribute) else []

    @staticmethod
    def _is_string_layer(ctx, layer: cst.BaseExpression, names: set) -> bool:
        if isinstance(layer, cst.Name):
            return layer.value in names and ctx.qualified_name(layer) is None
        return isinstance(layer, cst.Call) and ctx.keras_name(layer.func) in STRING_LAYERS


RULE = StringModel()
