"""What the files ported together (a folder) tell about each other.

A file ported alone is read on its own. Ported with the rest of its project, a file may lean on
what another file of the project is or does: ``from models import build_model`` makes a script
that imports no framework Keras code, and ``strategy = get_strategy()``, for a function of the
project's ``utils.py`` that returns a ``MirroredStrategy``, gives the IPU strategy the port of
``utils.py`` returns instead, so that strategy is the program's, not one to nest in the port's own.
``porter.api.projects`` finds what each file learns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, Tuple


@dataclass(frozen=True)
class Project:
    # The file imports a module of its project that is Keras code (a model builder): it is Keras
    # code itself, whatever it imports.
    keras_import: bool = False
    # ``utils.get_strategy``: functions of the modules ported with the file (by module and
    # function name) that return a distribution strategy their port makes an IPU strategy.
    strategy_factories: FrozenSet[str] = frozenset()
    # ``gan_lib.GAN``: Keras model classes of the modules ported with the file (by module and class
    # name) that override ``train_step``, which the IPU Keras extensions refuse.
    overriding_classes: FrozenSet[str] = frozenset()
    # ``data.BatchLoader``, ``data.batches``: `keras.utils.Sequence` classes and generator functions
    # of the modules ported with the file, which Keras on the IPU refuses as training data.
    sequence_classes: FrozenSet[str] = frozenset()
    generator_functions: FrozenSet[str] = frozenset()
    # ``ipu_setup.make_strategy``: the strategy factories that configure the IPU system before they
    # return its strategy; a file that calls one is configured already.
    configuring_factories: FrozenSet[str] = frozenset()
    # ``("trainer.train_model", "model", 0, True)``: functions of the modules ported with the file
    # (by module and function name) that run a model given to them, by parameter name and position,
    # and whether they compile it or train it with an argument only Keras takes (a Keras model).
    trainers: FrozenSet[Tuple[str, str, int, bool]] = frozenset()
    # ``train``: module-level functions of the file that the files of its project importing it
    # call, every call inside the IPU strategy's scope (of those files as ported): the models they
    # run are in that scope, with the IPU system configured by their callers.
    called_in_scope: FrozenSet[str] = frozenset()
    # ``("train", "main.py")``: functions of the file that a file of its project calls outside the
    # IPU strategy's scope (as ported), by that file's path.
    called_outside: FrozenSet[Tuple[str, str]] = frozenset()
    # ``train_lib.compile_and_fit``: functions of the modules ported with the file that make (as
    # ported) an IPU strategy and enter its scope: a model built in them, from a builder the file
    # hands them, is in that scope already, with the IPU configured by them.
    strategy_owners: FrozenSet[str] = frozenset()
    # ``("train", (False, True), frozenset({("val_ds", True)}))``: per call that a file of the
    # project importing the file makes of one of its functions, whether each argument (by position,
    # then by keyword) is a dataset batched whole (``rules/keras/_analysis/project_batches.py``).
    batched_calls: FrozenSet[Tuple[str, Tuple[bool, ...], FrozenSet[Tuple[str, bool]]]] = frozenset()


ALONE = Project()
