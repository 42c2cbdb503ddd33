"""IPU115: Keras 1 keywords that Keras 2.0 to 2.2 still took and Keras 2.6 rejects."""

from typing import Dict, Set

import libcst as cst

from porter.context import canonical_keras
from porter.cstutil import keyword
from porter.rule import FIX, KERAS, Example, Rule
from porter.rules.keras._analysis.keras1 import CHANGED_KEYWORDS, LAYER_KEYWORDS
from porter.rules.keras._analysis.util import method_calls

_MODEL = {"input": "inputs", "output": "outputs"}
_EPOCHS = {"nb_epoch": "epochs"}
# Keras functions and classes called with a Keras 1 keyword, and its Keras 2 name.
_CALLS: Dict[str, Dict[str, str]] = {
    "keras.models.Model": _MODEL,
    "keras.Model": _MODEL,
    "keras.engine.training.Model": _MODEL,
}
# (`KerasClassifier(nb_epoch=...)` is left alone: Keras 2.6's scikit-learn wrapper accepts it and drops
# it, as Keras 2.2's did, so `epochs=` would change how long it trains.)
_METHODS: Dict[str, Dict[str, str]] = {"fit": _EPOCHS, "fit_generator": _EPOCHS}
# The convolutions whose Keras 1 kernel (`nb_row`, `nb_col`) is one Keras 2 `kernel_size`.
_TWO_D = frozenset({"Conv2D", "Convolution2D"})


class Keras1Keywords(Rule):
    code = "IPU115"
    name = "keras1-keywords"
    kind = FIX
    frameworks = frozenset({KERAS})
    summary = ("Rename the Keras 1 keywords Keras 2.6 rejects: `Model(input=, output=)`, `fit(nb_epoch=)`, layer "
               "keywords (`output_dim`, `nb_filter`, `nb_row`/`nb_col`, `border_mode`, `subsample`, `init`...).")
    rationale = (
        "The IPU's TensorFlow (Poplar SDK 2.6 to 3.4) has Keras 2.6 (Targeting the IPU from TensorFlow 2, "
        "\"API changes\", release 2.6). Scripts written for Keras 1 and kept running on Keras 2.0 to 2.2, "
        "which renamed Keras 1 keywords with a warning, call `Model(input=..., output=...)` and "
        "`fit(..., nb_epoch=...)`: Keras 2.6 raises a TypeError for both. They are the same arguments "
        "as `inputs`, `outputs` and `epochs`, so the port renames them (not when the call passes the new "
        "keyword too). Layers too: `Dense(output_dim=)` is `units=`, a convolution's `nb_filter`, "
        "`border_mode`, `subsample` and `init` are `filters`, `padding`, `strides` and `kernel_initializer`, "
        "and its `nb_row`, `nb_col` (keywords, or the numbers after the filters, which Keras 2.6 would read "
        "as the strides) are `kernel_size=(rows, columns)`, as Keras 2.0 to 2.2 read them. Keywords whose "
        "values changed meaning (`dim_ordering`, `consume_less`, a batch normalisation's `mode`) are reported."
    )
    examples = (
        Example(
            """\
            from keras.layers import Dense, Input
            from keras.models import Model

            features = Input(shape=(8,))
            model = Model(input=features, output=Dense(1)(features))
            model.compile("sgd", "mse")
            model.fit(x, y, batch_size=32, nb_epoch=10)
            """,
            """\
            from keras.layers import Dense, Input
            from keras.models import Model

            features = Input(shape=(8,))
            model = Model(inputs=features, outputs=Dense(1)(features))
            model.compile("sgd", "mse")
            model.fit(x, y, batch_size=32, epochs=10)
            """,
        ),
        Example(
            """\
            from keras.layers import Convolution2D, Dense, Dropout

            conv = Convolution2D(32, 3, 3, border_mode="same", init="he_normal")
            strided = Convolution2D(nb_filter=64, nb_row=3, nb_col=3, subsample=(2, 2))
            hidden = Dense(output_dim=128, W_regularizer=None)
            drop = Dropout(p=0.5)
            """,
            """\
            from keras.layers import Convolution2D, Dense, Dropout

            conv = Convolution2D(32, (3, 3), padding="same", kernel_initializer="he_normal")
            strided = Convolution2D(filters=64, kernel_size=(3, 3), strides=(2, 2))
            hidden = Dense(units=128, kernel_regularizer=None)
            drop = Dropout(rate=0.5)
            """,
        ),
        # A value that changed meaning is reported, not renamed.
        Example(
            """\
            from keras.layers import MaxPooling2D

            pool = MaxPooling2D((2, 2), dim_ordering="th")
            """,
        ),
        # Newer code: `Conv2D(64, 3, 2)` means strides 2 in tf.keras and in a file with no Keras 1 code.
        Example(
            """\
            import tensorflow as tf
            from keras.layers import Conv2D

            down = tf.keras.layers.Conv2D(64, 3, 2, padding="same")
            up = Conv2D(64, 3, 2)
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Model(inputs=features, outputs=scores)
            model.fit(x, y, epochs=10)
            estimator.fit(x, y, input="raw")
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        for call, name in ctx.calls_to(*_CALLS):
            self._rename(ctx, call, _CALLS[name], f"`{name.rsplit('.', 1)[1]}`")
        for call, method in method_calls(ctx, *_METHODS):
            self._rename(ctx, call, _METHODS[method], f"`{method}`")
        layers = list(_layer_calls(ctx))
        # Three positional numbers are Keras 1 code only in a file that shows Keras 1 elsewhere:
        # `Conv2D(64, 3, 2)` of a newer script means strides 2.
        keras1_file = any(keyword(call, old) is not None for call, layer, _ in layers
                          for old in (*LAYER_KEYWORDS[layer], *CHANGED_KEYWORDS))
        for call, layer, standalone in layers:
            merge = layer in _TWO_D and _keras1_kernel(call, layer, standalone)
            self._rename(ctx, call, LAYER_KEYWORDS[layer], f"`{layer}`", merge)
            self._report_changed(ctx, call, layer, merged=merge)
            if layer in _TWO_D and standalone and keras1_file and not merge and _positional_ints(call):
                ctx.report(self.code, call.args[2], f"`{layer}` gets three positional numbers: Keras 2.0 to 2.2 "
                           "read them as filters, rows and columns of the kernel, Keras 2.6 (the Keras of the "
                           "IPU's TensorFlow) reads the third as the strides: write `kernel_size=(rows, columns)` "
                           "if that is what it means", fixed=False)

    def _report_changed(self, ctx, call: cst.Call, layer: str, merged: bool) -> None:
        for old, advice in CHANGED_KEYWORDS.items():
            arg = keyword(call, old)
            if arg is None or (old in ("nb_row", "nb_col") and (merged or layer not in _TWO_D)) or (
                    old == "mode" and layer != "BatchNormalization"):
                continue
            ctx.report(self.code, arg, f"`{layer}`: the Keras 1 keyword `{old}=` is not taken by Keras 2.6, the "
                       f"Keras of the IPU's TensorFlow (TypeError), and its value means something else in "
                       f"Keras 2: write {advice}", fixed=False)

    def _rename(self, ctx, call: cst.Call, renames: Dict[str, str], what: str, merge: bool = False) -> None:
        old_words: Set[str] = {old for old, new in renames.items()
                               if keyword(call, old) is not None and keyword(call, new) is None}
        if merge:
            if not ctx.replace(call, lambda updated: _with_kernel_size(_renamed(updated, old_words, renames))):
                return
            ctx.report(self.code, call, f"{what}: the kernel's rows and columns (`nb_row`, `nb_col`) become "
                       "`kernel_size=(rows, columns)`, as Keras 2.0 to 2.2 read them: Keras 2.6, the Keras of "
                       "the IPU's TensorFlow, no longer takes the Keras 1 keywords, and reads a third positional "
                       "number as the strides", fixed=True)
        elif not old_words or not ctx.replace(call, lambda updated: _renamed(updated, old_words, renames)):
            return
        for old in sorted(old_words, key=lambda word: call.args.index(keyword(call, word))):
            ctx.report(self.code, keyword(call, old), f"{what}: `{old}=` becomes `{renames[old]}=`, its Keras 2 "
                       "name: Keras 2.6, the Keras of the IPU's TensorFlow, no longer takes the Keras 1 keyword "
                       "(TypeError)", fixed=True)


def _layer_calls(ctx):
    """(call, layer class name, from standalone Keras) for each call of a layer ``LAYER_KEYWORDS`` names."""
    for call in ctx.nodes(cst.Call):
        qualified = ctx.qualified_name(call.func)
        keras = canonical_keras(qualified)
        layer = keras.rsplit(".", 1)[1] if keras is not None and keras.startswith("keras.layers.") else None
        if layer in LAYER_KEYWORDS:
            yield call, layer, qualified.startswith("keras.")


def _positional_ints(call: cst.Call) -> bool:
    """``Conv2D(32, 3, 3)``: three positional arguments, the last two int literals."""
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    return len(positional) == 3 and all(isinstance(arg.value, cst.Integer) for arg in positional[1:])


def _keras1_kernel(call: cst.Call, layer: str, standalone: bool) -> bool:
    """Whether a 2-D convolution gives its kernel the Keras 1 way, and Keras 2.0 to 2.2 read it as
    the kernel's size: ``nb_row=`` and ``nb_col=``, or ``nb_col=`` after the rows, or (standalone
    Keras, in a call that is Keras 1 code: the Keras 1 class name or a Keras 1 keyword) three
    positional numbers, which Keras 2.6 would read as filters, kernel size and strides."""
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    if any(arg.star for arg in call.args) or keyword(call, "kernel_size") is not None:
        return False
    rows, columns = keyword(call, "nb_row"), keyword(call, "nb_col")
    if rows is not None and columns is not None:
        return len(positional) <= 1
    if columns is not None:
        return len(positional) == 2
    keras1_words = (*LAYER_KEYWORDS[layer], *CHANGED_KEYWORDS)
    keras1 = layer == "Convolution2D" or any(keyword(call, old) is not None for old in keras1_words)
    return rows is None and standalone and keras1 and _positional_ints(call)


def _with_kernel_size(call: cst.Call) -> cst.Call:
    """``call`` with its kernel rows and columns (``nb_row``/``nb_col``, or the second and third
    positional arguments) in one ``kernel_size=(rows, columns)`` where the rows were."""
    positional = [arg for arg in call.args if arg.keyword is None]
    rows = keyword(call, "nb_row") or positional[1]
    columns = keyword(call, "nb_col") or positional[2]
    size = cst.Tuple([cst.Element(rows.value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                      cst.Element(columns.value)])
    args = []
    for arg in call.args:
        if arg is rows:
            keep = arg.keyword is None and keyword(call, "nb_col") is None
            args.append(arg.with_changes(value=size) if keep else arg.with_changes(
                keyword=cst.Name("kernel_size"), value=size, equal=cst.AssignEqual(
                    whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))))
        elif arg is not columns:
            args.append(arg)
    if args and args[-1].comma is not cst.MaybeSentinel.DEFAULT and columns is call.args[-1]:
        args[-1] = args[-1].with_changes(comma=columns.comma)
    return call.with_changes(args=args)


def _renamed(call: cst.Call, old_words: Set[str], renames: Dict[str, str]) -> cst.Call:
    return call.with_changes(args=[
        arg.with_changes(keyword=cst.Name(renames[arg.keyword.value]))
        if arg.keyword is not None and arg.keyword.value in old_words else arg
        for arg in call.args
    ])


RULE = Keras1Keywords()
