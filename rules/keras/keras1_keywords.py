"""IPU115: Keras 1 keywords that Keras 2.0 to 2.2 still took and Keras 2.6 rejects."""

from typing import Dict, Set

import libcst as cst

from porter.cstutil import keyword
from porter.rule import FIX, KERAS, Example, Rule
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


class Keras1Keywords(Rule):
    code = "IPU115"
    name = "keras1-keywords"
    kind = FIX
    frameworks = frozenset({KERAS})
    summary = "Rename the Keras 1 keywords Keras 2.6 rejects: `Model(input=, output=)`, `fit(nb_epoch=)`."
    rationale = (
        "The IPU's TensorFlow (Poplar SDK 2.6 to 3.4) has Keras 2.6 (Targeting the IPU from TensorFlow 2, "
        "\"API changes\", release 2.6). Scripts written for Keras 1 and kept running on Keras 2.0 to 2.2, "
        "which renamed Keras 1 keywords with a warning, call `Model(input=..., output=...)` and "
        "`fit(..., nb_epoch=...)`: Keras 2.6 raises a TypeError for both. They are the same arguments "
        "as `inputs`, `outputs` and `epochs`, so the port renames them (not when the call passes the new "
        "keyword too)."
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

    def _rename(self, ctx, call: cst.Call, renames: Dict[str, str], what: str) -> None:
        old_words: Set[str] = {old for old, new in renames.items()
                               if keyword(call, old) is not None and keyword(call, new) is None}
        if not old_words or not ctx.replace(call, lambda updated: _renamed(updated, old_words, renames)):
            return
        for old in sorted(old_words, key=lambda word: call.args.index(keyword(call, word))):
            ctx.report(self.code, keyword(call, old), f"{what}: `{old}=` becomes `{renames[old]}=`, its Keras 2 "
                       "name: Keras 2.6, the Keras of the IPU's TensorFlow, no longer takes the Keras 1 keyword "
                       "(TypeError)", fixed=True)


def _renamed(call: cst.Call, old_words: Set[str], renames: Dict[str, str]) -> cst.Call:
    return call.with_changes(args=[
        arg.with_changes(keyword=cst.Name(renames[arg.keyword.value]))
        if arg.keyword is not None and arg.keyword.value in old_words else arg
        for arg in call.args
    ])


RULE = Keras1Keywords()
