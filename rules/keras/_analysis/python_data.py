"""Python data handed to Keras (IPU151): generators, iterators and ``keras.utils.Sequence``
objects, which Keras on the IPU rejects, followed through variables (also unpacked from a returned
tuple), the returns of the file's functions and methods and the arguments a function's callers give
for its parameters."""

from __future__ import annotations

from typing import List, Optional, Set, Tuple

import libcst as cst

from porter.config import Config
from porter.context import FileContext
from porter.parsing import ParseError, parse
from porter.rules.keras._analysis.datasets import given_arguments, parameter_input
from porter.rules.keras._analysis.steps import method_named
from porter.rules.keras._analysis.util import IMAGE_FLOWS, generator_functions, subclasses_of
from porter.cstutil import element_at, simple_assign, target_place
from porter.scopes import bindings_of, called_file_returns, instance_class, owner, values_of

SEQUENCES = ("keras.utils.Sequence", "keras.utils.data_utils.Sequence")
# Keras 3's successor of `Sequence`, which Keras on the IPU would refuse the same way (IPU163 says
# that Keras 2.6 does not have it at all).
PY_DATASETS = ("keras.utils.PyDataset",)
_IMAGE_GENERATOR = "keras.preprocessing.image.ImageDataGenerator"
# The kinds `python_data_kind` names: those that give whole batches by index, and a dataset's NumPy iterator.
SEQUENCE = "a `keras.utils.Sequence`"
PY_DATASET = "a `keras.utils.PyDataset`"
IMAGE_FLOW = "an `ImageDataGenerator` iterator (a `keras.utils.Sequence`)"
TIMESERIES = "a `TimeseriesGenerator` (a `keras.utils.Sequence`)"
BATCH_KINDS = frozenset({SEQUENCE, PY_DATASET, IMAGE_FLOW, TIMESERIES})
# Keras's own Sequences, made directly (an `ImageDataGenerator`'s `flow...` makes its iterators too).
_KERAS_SEQUENCES = {"keras.preprocessing.sequence.TimeseriesGenerator": TIMESERIES,
                    "keras.preprocessing.image.DirectoryIterator": IMAGE_FLOW,
                    "keras.preprocessing.image.NumpyArrayIterator": IMAGE_FLOW}
NUMPY_ITERATOR = "a NumPy iterator"
_DEPTH = 3  # how many variables, returns and parameters a value is followed through


def python_data_kind(ctx: FileContext, value: cst.BaseExpression) -> Optional[str]:
    """What Python data ``value`` is (``"a Python generator"``...), when it surely is some: every
    way it is followed gives one; else None."""
    return _kind(ctx, value, generator_functions(ctx), subclasses_of(ctx, *SEQUENCES, *PY_DATASETS), 0)


def _kind(ctx, value, generators, sequences, depth) -> Optional[str]:
    if isinstance(value, cst.GeneratorExp):
        return "a generator expression"
    if isinstance(value, cst.Call):
        return _call_kind(ctx, value, generators, sequences, depth)
    if isinstance(value, cst.Name) and depth < _DEPTH:
        scope = owner(ctx, value)
        if parameter_input(ctx, value, scope) is not None:  # what the callers of the function give
            values = [given for given, _, _ in given_arguments(ctx, value, scope, ())]
        else:
            values = _assigned_values(ctx, value)
        kinds = [_kind(ctx, v, generators, sequences, depth + 1) if v is not None else None for v in values]
        if kinds and all(kinds):
            return kinds[-1]
    return None


def _call_kind(ctx, value: cst.Call, generators, sequences, depth) -> Optional[str]:
    func = value.func
    if isinstance(func, cst.Name) and func.value in generators:
        return "a Python generator"
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" \
            and func.attr.value in generators:
        return "a Python generator"
    if isinstance(func, cst.Attribute) and func.attr.value in generators and _generator_method(ctx, func, generators):
        return "a Python generator"
    if isinstance(func, cst.Name) and func.value in sequences:
        return _sequence_kind(ctx, sequences[func.value], sequences)
    imported = ctx.project_function(func)  # a Sequence or generator of a module ported with the file
    if imported in ctx.project.sequence_classes:
        return SEQUENCE
    if imported in ctx.project.generator_functions:
        return "a Python generator"
    if ctx.keras_name(func) in SEQUENCES:
        return SEQUENCE
    if ctx.keras_name(func) in _KERAS_SEQUENCES:
        return _KERAS_SEQUENCES[ctx.keras_name(func)]
    if isinstance(func, cst.Attribute) and func.attr.value == "as_numpy_iterator":
        return NUMPY_ITERATOR
    if isinstance(func, cst.Name) and func.value == "iter" and ctx.qualified_name(func) is None:
        return "a Python iterator"
    if isinstance(func, cst.Attribute) and func.attr.value in IMAGE_FLOWS and image_generator(ctx, func.value):
        return IMAGE_FLOW
    returned = _returned(ctx, value)  # `def get_data(): return Frames(...)`
    if depth < _DEPTH:
        kinds = [_kind(ctx, made, generators, sequences, depth + 1) for made in returned]
        if kinds and all(kinds):
            return kinds[-1]
    return None


def _generator_method(ctx: FileContext, func: cst.Attribute, generators) -> bool:
    """``loader.batches`` is a generator method of a class of the file: ``loader`` is made from that
    class where it is assigned or, a parameter, in every call that gives it."""
    receiver = func.value
    if not isinstance(receiver, cst.Name) or ctx.qualified_name(receiver) is not None:
        return False
    scope = owner(ctx, receiver)
    made = [receiver] if parameter_input(ctx, receiver, scope) is None else [
        given for given, _, _ in given_arguments(ctx, receiver, scope, ())]
    classes = [instance_class(ctx, node) for node in made]
    return bool(classes) and all(found is not None and method_named(found, func.attr.value) is generators[
        func.attr.value] for found in classes)


def _sequence_kind(ctx, sequence: cst.ClassDef, sequences) -> str:
    """What the Sequence-like class ``sequence`` of the file is, by the Keras base it derives from."""
    for base in sequence.bases:
        if ctx.keras_name(base.value) in PY_DATASETS:
            return PY_DATASET
        if isinstance(base.value, cst.Name) and base.value.value in sequences:
            return _sequence_kind(ctx, sequences[base.value.value], sequences)
    return SEQUENCE


def _assigned_values(ctx: FileContext, name: cst.Name) -> List[Optional[cst.BaseExpression]]:
    """Every value the variable ``name`` is assigned; where it is unpacked from a call of a function
    or method of the file (``train, val = make_generators()``), the element at its place in what each
    ``return`` gives (None where that is not a tuple written out)."""
    values: List[Optional[cst.BaseExpression]] = []
    for statement, value in bindings_of(ctx, name):
        assigned = simple_assign(statement) if value is None else None
        place = target_place(assigned[0], name.value) if assigned is not None else None
        returned = _returned(ctx, assigned[1]) if place else []
        values.extend([element_at(made, place) for made in returned] if returned else [value])
    return values


def _returned(ctx: FileContext, call: cst.BaseExpression) -> List[cst.BaseExpression]:
    """What each ``return`` gives of the function or method of the file that ``call`` runs."""
    return called_file_returns(ctx, call)[1]


def image_generator(ctx: FileContext, node) -> bool:
    """Whether ``node`` is a Keras ``ImageDataGenerator``, made there or held by a variable every
    assignment of which makes one."""
    if isinstance(node, cst.Call):
        return ctx.keras_name(node.func) == _IMAGE_GENERATOR
    if isinstance(node, cst.Name):
        values = values_of(ctx, node)
        return bool(values) and all(isinstance(v, cst.Call) and ctx.keras_name(v.func) == _IMAGE_GENERATOR
                                    for v in values)
    return False


def python_data_names(text: str, config: Config) -> Tuple[Set[str], Set[str]]:
    """The names of the ``keras.utils.Sequence`` (or ``PyDataset``) classes and of the generator
    functions a module defines at its top level, that a file of its project importing them hands
    Keras as Python data. Empty when ``text`` does not parse."""
    try:
        module = parse(text)
    except ParseError:
        return set(), set()
    ctx = FileContext(module, config)
    top_level = {id(statement) for statement in module.body}
    classes = {name for name, found in subclasses_of(ctx, *SEQUENCES, *PY_DATASETS).items() if id(found) in top_level}
    functions = {name for name, found in generator_functions(ctx).items() if id(found) in top_level}
    return classes, functions
