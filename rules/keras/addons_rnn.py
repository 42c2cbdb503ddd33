from typing import List, Optional

import libcst as cst

from porter.context import canonical_keras, dotted_name, import_bindings
from porter.cstutil import argument, keyword, string_value
from porter.kerasutil import is_literal_false, last_name, number_value, values_of
from porter.rule import FIX, KERAS, Example, Rule

_ADDONS = "ipu_tensorflow_addons.keras"
_ADDONS_LAYERS = _ADDONS + ".layers"
_ALIAS = "ipu_layers"

# The positional order of the stock Keras (TF 2.6) constructors, reference 2.2.
_SHARED = ("units", "activation", "recurrent_activation", "use_bias", "kernel_initializer",
           "recurrent_initializer", "bias_initializer")
_REGULARIZED = ("kernel_regularizer", "recurrent_regularizer", "bias_regularizer", "activity_regularizer",
                "kernel_constraint", "recurrent_constraint", "bias_constraint")
_ORDER = {
    "LSTM": _SHARED + ("unit_forget_bias",) + _REGULARIZED + (
        "dropout", "recurrent_dropout", "return_sequences", "return_state", "go_backwards", "stateful",
        "time_major", "unroll"),
    "GRU": _SHARED + _REGULARIZED + (
        "dropout", "recurrent_dropout", "return_sequences", "return_state", "go_backwards", "stateful",
        "unroll", "time_major", "reset_after"),
}
_ACTIVATIONS = ("tanh", "relu", "softmax", "sigmoid", "hard_sigmoid")
_RECURRENT_ACTIVATIONS = ("tanh", "softmax", "sigmoid", "hard_sigmoid")
_MASKING = "keras.layers.Masking"
_EMBEDDING = "keras.layers.Embedding"
_BIDIRECTIONAL = "keras.layers.Bidirectional"
_SEQUENTIAL = "keras.Sequential"


class _Unsafe(Exception):
    pass


class AddonsRnn(Rule):
    code = "IPU104"
    name = "addons-rnn"
    kind = FIX
    frameworks = frozenset({KERAS})
    summary = "Swap Keras `LSTM`/`GRU` for the IPU layers of `ipu_tensorflow_addons`, or say why not."
    rationale = (
        "`ipu_tensorflow_addons.keras.layers.LSTM` and `GRU` (PopnnLSTM/PopnnGRU) are the IPU-optimised "
        "recurrent layers (seed 000; reference 2.1, 2.2); imported as Graphcore does, `from "
        "ipu_tensorflow_addons.keras import layers as ipu_layers`. Their positional order differs after "
        "`dropout`, so every argument after `units` becomes a keyword. They raise for `use_bias=False`, "
        "regularizers, constraints, `recurrent_dropout`, `go_backwards`, `unroll`, an `implementation` "
        "other than 1/2, activations they lack, and any mask (an upstream `Masking` layer or "
        "`Embedding(mask_zero=True)`); such layers, layers in a `Bidirectional` wrapper, and layers whose "
        "deciding arguments the porter cannot read (`**kwargs`, a variable `use_bias`...) are left as "
        "they are and reported."
    )
    examples = (
        Example(
            "import tensorflow as tf\n\nmodel = tf.keras.Sequential([\n"
            "    tf.keras.layers.Embedding(10000, 64),\n    tf.keras.layers.LSTM(64, return_sequences=True),\n"
            "    tf.keras.layers.GRU(32),\n    tf.keras.layers.Dense(1),\n])\n",
            "import tensorflow as tf\nfrom ipu_tensorflow_addons.keras import layers as ipu_layers\n\n"
            "model = tf.keras.Sequential([\n"
            "    tf.keras.layers.Embedding(10000, 64),\n    ipu_layers.LSTM(64, return_sequences=True),\n"
            "    ipu_layers.GRU(32),\n    tf.keras.layers.Dense(1),\n])\n",
        ),
        Example(
            "from tensorflow.keras import layers\n\n\ndef build(inputs):\n"
            "    x = layers.LSTM(128, \"tanh\", \"sigmoid\", True)(inputs)\n    return layers.Dense(1)(x)\n",
            "from tensorflow.keras import layers\nfrom ipu_tensorflow_addons.keras import layers as ipu_layers\n\n\n"
            "def build(inputs):\n"
            "    x = ipu_layers.LSTM(128, activation=\"tanh\", recurrent_activation=\"sigmoid\", use_bias=True)(inputs)\n"
            "    return layers.Dense(1)(x)\n",
        ),
        Example(
            "import keras\nfrom keras.layers import LSTM, Dense\n\n"
            "model = keras.Sequential([LSTM(32, input_shape=(10, 8)), Dense(1)])\n",
            "import keras\nfrom keras.layers import Dense\nfrom ipu_tensorflow_addons.keras import layers as ipu_layers\n\n"
            "model = keras.Sequential([ipu_layers.LSTM(32, input_shape=(10, 8)), Dense(1)])\n",
        ),
        Example(
            "import tensorflow as tf\nfrom tensorflow.keras.layers import GRU as RNNLayer\n\n"
            "encoder = RNNLayer(units=256, dropout=0.1, return_state=True)\n",
            "import tensorflow as tf\nfrom ipu_tensorflow_addons.keras import layers as ipu_layers\n\n"
            "encoder = ipu_layers.GRU(units=256, dropout=0.1, return_state=True)\n",
        ),
        Example(
            "import tensorflow as tf\nfrom ipu_tensorflow_addons.keras import layers as ipu_layers\n\n"
            "model = tf.keras.Sequential([ipu_layers.LSTM(64), tf.keras.layers.Dense(1)])\n",
            reported=False,
        ),
        Example(
            "import tensorflow as tf\n\nmodel = tf.keras.Sequential([\n"
            "    tf.keras.layers.Embedding(5000, 32, mask_zero=True),\n    tf.keras.layers.LSTM(32),\n])\n",
        ),
        Example(
            "from tensorflow import keras\n\n\ndef build():\n    inputs = keras.Input(shape=(None, 4))\n"
            "    x = keras.layers.Masking(mask_value=0.0)(inputs)\n    x = keras.layers.GRU(16)(x)\n"
            "    return keras.Model(inputs, x)\n",
        ),
        Example(
            "from tensorflow import keras\n\n\ndef build(vocab):\n"
            "    words = keras.Input(shape=(None,), dtype=\"int32\")\n"
            "    signal = keras.Input(shape=(50, 3))\n"
            "    text = keras.layers.Embedding(vocab, 32, mask_zero=True)(words)\n"
            "    text = keras.layers.GlobalAveragePooling1D()(text)\n"
            "    series = keras.layers.LSTM(16)(signal)\n"
            "    joined = keras.layers.concatenate([text, series])\n"
            "    return keras.Model([words, signal], keras.layers.Dense(1)(joined))\n",
            "from tensorflow import keras\nfrom ipu_tensorflow_addons.keras import layers as ipu_layers\n\n\n"
            "def build(vocab):\n"
            "    words = keras.Input(shape=(None,), dtype=\"int32\")\n"
            "    signal = keras.Input(shape=(50, 3))\n"
            "    text = keras.layers.Embedding(vocab, 32, mask_zero=True)(words)\n"
            "    text = keras.layers.GlobalAveragePooling1D()(text)\n"
            "    series = ipu_layers.LSTM(16)(signal)\n"
            "    joined = keras.layers.concatenate([text, series])\n"
            "    return keras.Model([words, signal], keras.layers.Dense(1)(joined))\n",
        ),
        Example(
            "import tensorflow as tf\nfrom tensorflow.keras import layers\n\n"
            "a = layers.LSTM(8, recurrent_dropout=0.2)\nb = layers.LSTM(8, go_backwards=True)\n"
            "c = layers.GRU(8, use_bias=False)\nd = layers.LSTM(8, kernel_regularizer=tf.keras.regularizers.l2(1e-4))\n"
            "e = layers.LSTM(8, activation=\"elu\")\nf = layers.GRU(8, unroll=True)\ng = layers.LSTM(8, implementation=3)\n",
        ),
        Example(
            "import tensorflow as tf\nfrom tensorflow.keras import layers\n\n"
            "x = layers.Bidirectional(layers.LSTM(64, return_sequences=True))(x)\n"
            "y = layers.LSTM(units, dropout=args.dropout, **extra)(x)\n"
            "z = layers.GRU(8, recurrent_dropout=rate)(x)\n",
        ),
        Example(
            "import keras\n\n\nclass Tagger(keras.Model):\n    def __init__(self):\n        super().__init__()\n"
            "        self.embed = keras.layers.Embedding(20000, 128, mask_zero=True)\n"
            "        self.rnn = keras.layers.LSTM(128, return_sequences=True)\n\n"
            "    def call(self, tokens):\n        return self.rnn(self.embed(tokens))\n",
        ),
        Example(
            "import tensorflow as tf\nfrom tensorflow.keras import layers\n\nmodel = tf.keras.Sequential()\n"
            "model.add(layers.Masking(mask_value=0.0, input_shape=(20, 3)))\nmodel.add(layers.LSTM(8))\n",
        ),
        Example(
            "import tensorflow as tf\nfrom ipu_tensorflow_addons.keras.layers import GRU, LSTM\n\n"
            "model = tf.keras.Sequential([LSTM(64, return_sequences=True), GRU(32), tf.keras.layers.Dense(1)])\n",
            reported=False,
        ),
        Example(
            "import tensorflow as tf\n\nmodel = build(tf.keras.layers.Dense(4))\ncell = tf.keras.layers.LSTMCell(8)\n",
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        swapped_funcs = set()
        local = self._addons_alias(ctx)
        for call, layer in self._layer_calls(ctx):
            reason = self._unsafe_reason(ctx, call, layer)
            if reason is None and local is None:
                reason = f"the name `{_ALIAS}` is taken in this file"
            if reason is not None:
                ctx.report(self.code, call, f"`{layer}` not swapped for `ipu_tensorflow_addons.keras.layers."
                           f"{layer}`: {reason} (reference 2.2)", fixed=False)
                continue
            keywords = self._positional_names(call, layer)
            new_func = cst.Attribute(value=cst.Name(local), attr=cst.Name(layer))
            ctx.replace(call, lambda node, func=new_func, layer=layer: _keywordize(node, layer).with_changes(func=func))
            if local == _ALIAS:
                ctx.add_import(_ADDONS, "layers", _ALIAS, code=self.code)
            extra = f", with {', '.join(f'`{name}`' for name in keywords)} passed by keyword" if keywords else ""
            ctx.report(self.code, call, f"`{layer}` becomes `ipu_tensorflow_addons.keras.layers.{layer}`{extra}",
                       fixed=True)
            swapped_funcs.add(id(call.func))
        self._drop_unused_imports(ctx, swapped_funcs)

    @staticmethod
    def _layer_calls(ctx):
        """``(call, "LSTM" | "GRU")`` for calls of the Keras layers, under any import spelling."""
        spellings = {"LSTM", "GRU"}
        for node_type in (cst.Import, cst.ImportFrom):
            for node in ctx.nodes(node_type):
                spellings.update(local for local, full in import_bindings(node)
                                 if canonical_keras(full) in ("keras.layers.LSTM", "keras.layers.GRU"))
        for call in ctx.nodes(cst.Call):
            if last_name(call.func) in spellings:
                name = ctx.keras_name(call.func)
                if name in ("keras.layers.LSTM", "keras.layers.GRU"):
                    yield call, name.rsplit(".", 1)[-1]

    # ------------------------------------------------------------------------------ safety
    def _unsafe_reason(self, ctx, call: cst.Call, layer: str) -> Optional[str]:
        if any(arg.star for arg in call.args):
            return "its `*args`/`**kwargs` cannot be read"
        order = _ORDER[layer]
        positional = [arg for arg in call.args if arg.keyword is None]
        if len(positional) > len(order):
            return "it has more positional arguments than Keras takes"
        values = {order[index]: arg.value for index, arg in enumerate(positional)}
        values.update((arg.keyword.value, arg.value) for arg in call.args if arg.keyword is not None)
        try:
            self._check_values(values)
            self._check_context(ctx, call)
        except _Unsafe as error:
            return str(error)
        return None

    @staticmethod
    def _check_values(values) -> None:
        use_bias = values.get("use_bias")
        if use_bias is not None and not (isinstance(use_bias, cst.Name) and use_bias.value == "True"):
            raise _Unsafe("`use_bias=False` is not supported" if is_literal_false(use_bias)
                          else "`use_bias` cannot be read (it must be True)")
        for name in _REGULARIZED:
            if name in values and not (isinstance(values[name], cst.Name) and values[name].value == "None"):
                raise _Unsafe(f"`{name}` is not supported")
        for name in ("go_backwards", "unroll"):
            if name in values and not is_literal_false(values[name]):
                if isinstance(values[name], cst.Name) and values[name].value == "True":
                    raise _Unsafe(f"`{name}=True` is not supported")
                raise _Unsafe(f"`{name}` cannot be read (it must be False)")
        if "recurrent_dropout" in values:
            rate = number_value(values["recurrent_dropout"])
            if rate is None:
                raise _Unsafe("`recurrent_dropout` cannot be read (it must be 0)")
            if rate != 0:
                raise _Unsafe("`recurrent_dropout` is not supported")
        if "implementation" in values:
            mode = number_value(values["implementation"])
            if mode not in (1.0, 2.0):
                raise _Unsafe("`implementation` must be 1 or 2" if mode is not None else "`implementation` cannot be read")
        for name, allowed in (("activation", _ACTIVATIONS), ("recurrent_activation", _RECURRENT_ACTIVATIONS)):
            if name in values:
                value = string_value(values[name])
                if value is None:
                    raise _Unsafe(f"`{name}` cannot be read (the IPU layer takes {', '.join(allowed)})")
                if value not in allowed:
                    raise _Unsafe(f"`{name}=\"{value}\"` is not supported (only {', '.join(allowed)})")
        if "dtype" in values and string_value(values["dtype"]) not in ("float32", "float16"):
            raise _Unsafe("the layer dtype must be float32 or float16")

    def _check_context(self, ctx, call: cst.Call) -> None:
        parent = ctx.parent(call)
        if isinstance(parent, cst.Arg):
            outer = ctx.parent(parent)
            if isinstance(outer, cst.Call) and ctx.keras_name(outer.func) == _BIDIRECTIONAL:
                raise _Unsafe("the IPU layers do not support the `Bidirectional` wrapper (no `go_backwards`)")
        if isinstance(parent, cst.Call) and parent.func is call and keyword(parent, "mask") is not None:
            raise _Unsafe("it is called with a `mask`, which the IPU layer does not support")
        sequence = self._sequential_prefix(ctx, call)
        if sequence is not None:
            if any(self._makes_mask(ctx, element) for element in sequence):
                raise _Unsafe("a `Masking` layer or `Embedding(mask_zero=True)` feeds it a mask")
            return
        if isinstance(parent, cst.Call) and parent.func is call:  # functional: LSTM(...)(inputs)
            masked = _Tracer(self, ctx).any_masked([arg.value for arg in parent.args])
            if masked:
                raise _Unsafe("a `Masking` layer or `Embedding(mask_zero=True)` feeds it a mask")
            if masked is False:
                return
        region = ctx.enclosing(call, cst.ClassDef) or ctx.enclosing_function(call)
        if any(self._region(ctx, mask) is region if region is None else
               any(ancestor is region for ancestor in ctx.ancestors(mask)) for mask in self._masks(ctx)):
            raise _Unsafe("a `Masking` layer or `Embedding(mask_zero=True)` in the same model may feed it a mask")

    @staticmethod
    def _sequential_prefix(ctx, call: cst.Call) -> Optional[List[cst.BaseExpression]]:
        """The layers before ``call`` in a ``Sequential([...])`` list when they are all layer
        constructors (so the data flow is clear), else None."""
        element = ctx.parent(call)
        container = ctx.parent(element) if isinstance(element, cst.Element) else None
        arg = ctx.parent(container) if isinstance(container, cst.List) else None
        outer = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
        if not isinstance(outer, cst.Call) or ctx.keras_name(outer.func) not in (_SEQUENTIAL, "keras.models.Sequential"):
            return None
        before = []
        for item in container.elements:
            if item is element:
                break
            if not isinstance(item.value, cst.Call):
                return None
            before.append(item.value)
        return before

    def _masks(self, ctx) -> List[cst.Call]:
        """Every call that makes a mask (cached per file)."""
        found = ctx.__dict__.get("_keras_masks")
        if found is None:
            found = ctx.__dict__["_keras_masks"] = [
                node for node in ctx.nodes(cst.Call)
                if last_name(node.func) in ("Masking", "Embedding")
                and self._makes_mask(ctx, node)]
        return found

    @staticmethod
    def _region(ctx, node):
        return ctx.enclosing(node, cst.ClassDef) or ctx.enclosing_function(node)

    @staticmethod
    def _makes_mask(ctx, node) -> bool:
        if not isinstance(node, cst.Call):
            return False
        name = ctx.keras_name(node.func)
        if name == _MASKING:
            return True
        if name == _EMBEDDING:
            mask_zero = argument(node, "mask_zero", 6)
            return mask_zero is not None and not is_literal_false(mask_zero.value)
        return False

    # ------------------------------------------------------------------------------ editing
    @staticmethod
    def _addons_alias(ctx) -> Optional[str]:
        """The name under which the addons layers module is (or will be) imported; None when the
        usual name is taken by something else."""
        for local, full in ctx.aliases.items():
            if full == _ADDONS_LAYERS:
                return local
        if any(node.value == _ALIAS for node in ctx.nodes(cst.Name)):
            return None
        return _ALIAS

    @staticmethod
    def _positional_names(call: cst.Call, layer: str) -> List[str]:
        positional = [arg for arg in call.args if arg.keyword is None]
        return list(_ORDER[layer][1:len(positional)])

    def _drop_unused_imports(self, ctx, swapped_funcs) -> None:
        """``from keras.layers import LSTM``: once every use of ``LSTM`` is swapped, the name goes."""
        for node in ctx.nodes(cst.ImportFrom):
            if isinstance(node.names, cst.ImportStar) or node.relative:
                continue
            unused = []
            for alias in node.names:
                local = (alias.asname.name if alias.asname is not None else alias.name)
                if not isinstance(local, cst.Name) or not isinstance(alias.name, cst.Name):
                    continue
                base = dotted_name(node.module) if node.module is not None else None
                full = canonical_keras(f"{base}.{alias.name.value}") if base else None
                if full not in ("keras.layers.LSTM", "keras.layers.GRU"):
                    continue
                uses = [name for name in ctx.nodes(cst.Name) if name.value == local.value and self._is_use(ctx, name)]
                if uses and all(id(name) in swapped_funcs for name in uses):
                    unused.append(alias)
            if unused:
                self._remove_aliases(ctx, node, unused)

    @staticmethod
    def _is_use(ctx, name: cst.Name) -> bool:
        parent = ctx.parent(name)
        if isinstance(parent, (cst.ImportAlias, cst.AsName)):
            return False
        if isinstance(parent, cst.Attribute) and parent.attr is name:
            return False
        if isinstance(parent, cst.Arg) and parent.keyword is name:
            return False
        return True

    def _remove_aliases(self, ctx, node: cst.ImportFrom, unused) -> None:
        names = [alias.name.value for alias in unused]
        if len(unused) == len(node.names):
            statement = ctx.statement_of(node)
            if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
                ctx.remove(statement)
                ctx.report(self.code, node, f"removed the unused import of {', '.join(names)}", fixed=True)
            return
        dropped = {alias.name.value for alias in unused}

        def without(updated: cst.ImportFrom) -> cst.ImportFrom:
            kept = [alias for alias in updated.names if not (isinstance(alias.name, cst.Name) and alias.name.value in dropped)]
            if not kept:
                return updated
            if kept[-1] is not updated.names[-1]:  # the last name went: the new last takes its comma
                kept[-1] = kept[-1].with_changes(comma=updated.names[-1].comma)
            return updated.with_changes(names=kept)

        ctx.replace(node, without)
        ctx.report(self.code, node, f"removed the unused import of {', '.join(names)}", fixed=True)


class _Tracer:
    """Follows a functional model's tensors back, within one function, to where they come from:
    True when a mask-making layer is upstream, False when every path ends at a `keras.Input` or a
    constant, None when a path is lost (a parameter, a helper function, a loop...)."""

    _INPUTS = ("keras.Input", "keras.layers.Input")

    def __init__(self, rule: "AddonsRnn", ctx) -> None:
        self.rule = rule
        self.ctx = ctx
        self.seen: set = set()

    def any_masked(self, nodes) -> Optional[bool]:
        results = [self.masked(node) for node in nodes]
        if any(result is True for result in results):
            return True
        return None if any(result is None for result in results) else False

    def masked(self, node) -> Optional[bool]:
        ctx = self.ctx
        if id(node) in self.seen:
            return False  # already followed: whatever is upstream of it is found there
        if len(self.seen) > 200:
            return None
        self.seen.add(id(node))
        if isinstance(node, cst.Call):
            if self.rule._makes_mask(ctx, node):
                return True
            if isinstance(node.func, cst.Call):  # Layer(...)(inputs): masks pass through layers
                if self.rule._makes_mask(ctx, node.func):
                    return True
                return self.any_masked([arg.value for arg in node.args])
            name = ctx.keras_name(node.func)
            if name in self._INPUTS:
                return False
            if name is not None and name.startswith("keras.layers."):  # layers.concatenate([a, b])
                return self.any_masked([arg.value for arg in node.args])
            return None
        if isinstance(node, cst.Name):
            values = values_of(ctx, node)
            if not values or any(value is None for value in values):
                return None
            return self.any_masked(values)
        if isinstance(node, (cst.List, cst.Tuple)):
            return self.any_masked([element.value for element in node.elements])
        if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
            return False
        return None


def _keywordize(call: cst.Call, layer: str) -> cst.Call:
    """Every positional argument after ``units`` passed by keyword, keeping commas and spacing."""
    order = _ORDER[layer]
    args = list(call.args)
    position = 0
    for index, arg in enumerate(args):
        if arg.keyword is not None or arg.star:
            continue
        if position > 0:
            args[index] = arg.with_changes(
                keyword=cst.Name(order[position]),
                equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                      whitespace_after=cst.SimpleWhitespace("")),
            )
        position += 1
    return call.with_changes(args=args)


RULE = AddonsRnn()
