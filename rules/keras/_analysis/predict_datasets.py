"""``predict`` datasets made from arrays the port can pad, for IPU105 (drop-remainder) and IPU107
(divisible-dataset).

Keras on the IPU rejects a partial batch, so a ``predict`` dataset is batched with
``drop_remainder=True``; that alone loses the answers for the last samples, and a submission
written from them loses rows. Where the arrays are in sight, as in
``model.predict(tf.data.Dataset.from_tensor_slices(x).map(prep).batch(64))`` (inline, or held in a
variable only ``predict`` reads, or built step by step), the port pads ``x`` to whole batches
before it is sliced and cuts the answers back to one per sample; where a function of the file
makes the dataset from its parameters (``model.predict(make_ds(x_test, 64))``), the arguments are
padded where it is called. Both rules need the same answer to "which ones":

* ``padded_predictions(ctx)``: those datasets, with what is padded and which calls are cut back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple, Union

import libcst as cst

from porter.context import FileContext, SharedKey, code_of, walk
from porter.cstutil import argument, is_false, is_name
from porter.rules.keras._analysis.datasets import chain, feeds_training, returned_batches, training_batches
from porter.rules.keras._analysis.fit import TrainingCall, last_binding_before, repeatable
from porter.scopes import assignments, loads, local_calls, module_globals, owner, returns_of

# `from_tensor_slices` only: `from_tensors` makes one element, not one per sample.
_SLICES = ("tensorflow.data.Dataset.from_tensor_slices", "tensorflow.compat.v1.data.Dataset.from_tensor_slices")
# Dataset methods that keep one element per sample, in order: the repeated last sample stays last,
# and the answers line up with the arrays. (`shuffle`, `filter`, `take`, `skip`, `repeat`... do not.)
_ORDERED = frozenset({"map", "prefetch", "cache", "with_options"})

_PADDED: SharedKey[Dict[int, object]] = SharedKey("keras-padded-predictions")


@dataclass
class PaddedPrediction:
    """A dataset made as ``from_tensor_slices(arrays)...batch(n)``, whose ``predict`` calls must
    answer for every sample: each of ``pads`` (the expression padded, the batch size there) is
    padded to whole batches, and what each of ``cuts`` (the call, the data whose ``len`` counts
    its samples, the batch size) answers is cut back to one answer per sample. ``helper``: the
    function of the file that makes the dataset from its parameters, when the padding is done
    where it is called."""
    batch: cst.Call
    arrays: cst.BaseExpression
    pads: List[Tuple[cst.BaseExpression, cst.BaseExpression]]
    cuts: List[Tuple[TrainingCall, cst.BaseExpression, cst.BaseExpression]]
    helper: Optional[cst.FunctionDef] = None
    trains: bool = False  # the helper's dataset also feeds `fit`/`evaluate`, which lose a partial batch


def padded_predictions(ctx: FileContext) -> List[PaddedPrediction]:
    return [found for found in _found(ctx).values() if isinstance(found, PaddedPrediction)]


def unpadded_reasons(ctx: FileContext) -> Dict[int, str]:
    """Per id of the ``.batch()`` of a dataset ``predict`` reads and the port does not pad: why
    not, as a clause (\"it is shuffled before batching\"), when it can say."""
    return {key: found for key, found in _found(ctx).items() if isinstance(found, str) and found}


def _found(ctx: FileContext) -> Dict[int, Union[PaddedPrediction, str]]:
    return ctx.shared(_PADDED, lambda: _find(ctx))


def _find(ctx: FileContext) -> Dict[int, Union[PaddedPrediction, str]]:
    grouped: Dict[int, list] = {}
    for found in training_batches(ctx):
        grouped.setdefault(id(found.batch), []).append(found)
    return {key: _padded(ctx, uses) for key, uses in grouped.items()}


def _padded(ctx: FileContext, uses: list) -> Union[PaddedPrediction, str]:
    """The padding of the dataset ``uses`` (TrainingBatch of one ``.batch()``) read, or why its
    ``predict`` answers cannot be lined up with its samples that way ("" when nothing is to say)."""
    batch = uses[0].batch
    predicts = [use for use in uses if use.method == "predict"]
    if not predicts:
        return ""
    later = next((call for use in predicts for call in use.later if call.func.attr.value not in _ORDERED), None)
    if later is not None:
        return f"`.{later.func.attr.value}()` after the batching changes which samples `predict` answers for"
    entries = [use.entry for use in predicts]
    if any(argument(entry.call, "steps", 3) for entry in entries):
        return "`predict` is given `steps=`, a count of batches that padding would change"
    size = argument(batch, "batch_size", 0)
    drop = argument(batch, "drop_remainder", 1)
    if len({entry.model for entry in entries}) != 1 or size is None or drop is not None and not is_false(drop.value):
        return ""
    scope = owner(ctx, batch)
    calls, root, followed = _made_from(ctx, batch, scope)
    if isinstance(root, cst.Name) and last_binding_before(ctx, root, scope)[1] is not None:
        return f"`{root.value}` is assigned again in a branch before the batching, which may reorder the samples"
    if not (isinstance(root, cst.Call) and ctx.qualified_name(root.func) in _SLICES and root.args
            and not root.args[0].keyword):
        return "it is not made by `from_tensor_slices` from arrays the port can pad"
    unordered = next((call for call in calls if not _keeps_order(call)), None)
    if unordered is not None:
        return f"`.{unordered.func.attr.value}()` before the batching changes the order or the count of the samples"
    arrays = root.args[0].value
    if all(use.entry.owner is scope for use in uses):
        others = sorted({use.method for use in uses} - {"predict"})
        if others:
            return f"`{'`/`'.join(others)}` reads it too, and would count the repeated samples"
        if not repeatable(ctx, arrays):
            return f"`{code_of(ctx, arrays)}` would run again to count the answers: assign it to a variable first"
        if not all(_reaches(ctx, batch, root, entry, followed) for entry in entries):
            return "its variables are read by other code, or rebound before `predict` reads it"
        return PaddedPrediction(batch, arrays, [(arrays, size.value)], [(entry, arrays, size.value) for entry in entries])
    if isinstance(scope, cst.FunctionDef):
        return _padded_by_callers(ctx, batch, scope, root, followed, entries, size.value)
    return "`predict` reads it in another function than the one that makes it"


def _padded_by_callers(ctx: FileContext, batch: cst.Call, helper: cst.FunctionDef, root: cst.Call,
                       followed: List[cst.Name], entries: List[TrainingCall], size: cst.BaseExpression
                       ) -> Union[PaddedPrediction, str]:
    """``helper`` returns the dataset it makes from its parameters (``def make_ds(x, n): return
    tf.data.Dataset.from_tensor_slices(x).map(f).batch(n)``): each ``predict`` call of it pads the
    arguments where it calls it (``make_ds(pad(x_test, 64), 64)``). Every other call of ``helper``
    feeds ``fit``/``evaluate``, which the dropped partial batch trims as IPU105 says."""
    name = helper.name.value
    parameters = [param.name.value for param in helper.params.params]
    sliced = root.args[0].value
    parts = [element.value for element in sliced.elements] if isinstance(sliced, cst.Tuple) else [sliced]
    assigned = {name for _, name, _ in assignments(ctx, helper)}
    if not all(isinstance(part, cst.Name) and part.value in parameters and part.value not in assigned for part in parts):
        return f"`{name}` slices `{code_of(ctx, sliced)}`, not the parameters it is given as they are"
    if not _returned_whole(ctx, helper, batch, followed):
        return f"`{name}` does not just return the dataset it makes"
    pads, cuts, makers = [], [], set()
    for entry in entries:
        maker = _maker_call(ctx, entry, helper)
        if maker is None or id(maker) in makers:
            return f"`predict` reads it through a variable other code reads, or not from a call of `{name}`"
        makers.add(id(maker))
        # each parameter once: `from_tensor_slices((x, x))` slices one argument twice
        given = [_given(maker, parameters, part, helper) for part in dict.fromkeys(part.value for part in parts)]
        size_there = _size_at(ctx, size, maker, parameters, helper, assigned)
        if size_there is None:
            return f"the batch size `{code_of(ctx, size)}` of `{name}` cannot be read where it is called"
        if any(value is None for value in given):
            return f"a call of `{name}` leaves the data it slices to a default or to `*args`"
        unread = next((value for value in given if not repeatable(ctx, value)), None)
        if unread is not None:
            return (f"`{code_of(ctx, unread)}`, given to `{name}`, would run again to count the answers: assign it to "
                    "a variable first")
        if not _kept_until(ctx, given, maker, entry):
            return f"what `{name}` is given is rebound before `predict` reads the dataset"
        pads.extend((value, size_there) for value in given)
        cuts.append((entry, given[0], size_there))
    others = [call for call in local_calls(ctx, helper) if id(call) not in makers]
    if not all(feeds_training(ctx, call) for call in others):
        return f"another call of `{name}` uses the dataset besides `fit`/`evaluate`/`predict`"
    return PaddedPrediction(batch, sliced, pads, cuts, helper, trains=bool(others))


def _returned_whole(ctx: FileContext, helper: cst.FunctionDef, batch: cst.Call, followed: List[cst.Name]) -> bool:
    """``helper`` has one ``return``, of the dataset ``batch`` makes, and its pipeline variables
    are read by nothing else."""
    returns = returns_of(helper)
    if len(returns) != 1 or returns[0].value is None or batch not in returned_batches(ctx, helper):
        return False
    returned = {id(node) for node in walk(returns[0].value)}
    returned_root = chain(ctx, returns[0].value)[1]
    pipeline = {name.value for name in followed} | ({returned_root.value} if isinstance(returned_root, cst.Name) else set())
    followed_ids = {id(name) for name in followed}
    return all(name.value not in pipeline or id(name) in followed_ids or id(name) in returned for name in loads(helper))


def _maker_call(ctx: FileContext, entry: TrainingCall, helper: cst.FunctionDef) -> Optional[cst.Call]:
    """The call of ``helper`` that makes what ``entry`` predicts on: its input, or the value of
    the variable it reads, assigned in the same block and read by nothing but ``predict``."""
    value = entry.data
    if isinstance(value, cst.Name):
        statement, made = last_binding_before(ctx, value, entry.owner)
        if statement is None or not _read_by_predict_only(ctx, {value.value}, entry.owner, set()):
            return None
        value = made
    return value if isinstance(value, cst.Call) and is_name(value.func, helper.name.value) else None


def _given(call: cst.Call, parameters: List[str], name: str, helper: cst.FunctionDef) -> Optional[cst.BaseExpression]:
    """What ``call`` gives the parameter ``name`` of ``helper`` (None when not given: a default
    cannot be padded where the helper is called)."""
    if any(arg.star for arg in call.args):
        return None
    given = argument(call, name, parameters.index(name))
    return given.value if given is not None else None


def _size_at(ctx: FileContext, size: cst.BaseExpression, call: cst.Call, parameters: List[str],
             helper: cst.FunctionDef, assigned: set) -> Optional[cst.BaseExpression]:
    """The batch size ``size`` of ``helper`` as an expression where ``call`` calls it: a number
    as it is, a parameter as the call gives it (or its default), a module constant the helper and
    the caller do not bind."""
    if isinstance(size, cst.Integer):
        return size
    if not isinstance(size, cst.Name) or size.value in assigned:
        return None
    if size.value in parameters:
        given = _given(call, parameters, size.value, helper)
        if given is not None:
            return given
        default = next(param.default for param in helper.params.params if param.name.value == size.value)
        return _size_at(ctx, default, call, [], helper, assigned) if default is not None else None
    caller = owner(ctx, call)
    bound = {name for _, name, _ in assignments(ctx, caller)} if caller is not ctx.module else set()
    return size if size.value in module_globals(ctx) and size.value not in bound else None


def _kept_until(ctx: FileContext, given: List[cst.BaseExpression], maker: cst.Call, entry: TrainingCall) -> bool:
    """The variables ``given`` reads are bound to the same values from ``maker`` to the ``predict``
    call ``entry``."""
    made, read = ctx.statement_of(maker), ctx.statement_of(entry.call)
    if made is read:
        return True
    return not any(_rebound_between(ctx, name.value, made, read, entry.owner) for value in given
                   for name in loads(value))


def _made_from(ctx: FileContext, batch: cst.Call, scope: cst.CSTNode):
    """(the dataset methods before ``batch``, the root they start from, the variables read on the
    way): followed through the variables a step-by-step pipeline assigns in the same block
    (``ds = tf.data.Dataset.from_tensor_slices(x)``, ``ds = ds.map(f)``, ``ds = ds.batch(n)``)."""
    calls, root = chain(ctx, batch.func.value)
    followed: List[cst.Name] = []
    while isinstance(root, cst.Name) and len(followed) < _STEPS_FOLLOWED:
        bound, value = last_binding_before(ctx, root, scope)
        if value is None or _rebound_between(ctx, root.value, bound, ctx.statement_of(root), scope):
            break  # `if augment: ds = ds.shuffle(n)` in between: not one straight pipeline
        followed.append(root)
        more, root = chain(ctx, value)
        calls = calls + more
    return calls, root, followed


def _rebound_between(ctx: FileContext, name: str, first: cst.BaseStatement, last: cst.BaseStatement,
                     scope: cst.CSTNode) -> bool:
    """``name`` is assigned in a statement of the block of ``first`` after it, up to ``last`` (or
    to the statement that holds it), nested blocks included."""
    block = ctx.block_of(first)
    body = list(block.body) if block is not None else []
    end = _index_in(ctx, body, last)
    if first not in body or end is None:
        return True
    between = body[body.index(first) + 1:end + 1]
    return any(bound == name and assigned is not last and _inside(ctx, assigned, between)
               for assigned, bound, _ in assignments(ctx, scope))


# How many assignments of a step-by-step pipeline are followed back to where it starts.
_STEPS_FOLLOWED = 8


def _keeps_order(call: cst.Call) -> bool:
    """A dataset method that keeps one element per sample in order (a ``map`` asked for no
    ``deterministic=False``)."""
    deterministic = argument(call, "deterministic", 2) if call.func.attr.value == "map" else None
    return call.func.attr.value in _ORDERED and (deterministic is None or not is_false(deterministic.value))


def _reaches(ctx: FileContext, batch: cst.Call, root: cst.Call, entry: TrainingCall, followed: List[cst.Name]) -> bool:
    """``entry`` reads the dataset ``batch`` makes from ``root`` (``from_tensor_slices(arrays)``),
    in the chain it is given or in the variable the statement of ``batch`` assigns it to; the
    variables of the pipeline are read by nothing but the pipeline (``followed``) and ``predict``
    calls; and the variables the arrays are read from are bound to the same values from ``root``
    to the call, so that ``len`` of them counts the samples the dataset was made of."""
    value = entry.data
    if not any(node is batch for node in walk(value)):
        if not isinstance(value, cst.Name) or not _bound_by(ctx, value, ctx.statement_of(batch), entry.owner):
            return False
    pipeline = {name.value for name in followed} | ({value.value} if isinstance(value, cst.Name) else set())
    if not _read_by_predict_only(ctx, pipeline, entry.owner, {id(name) for name in followed}):
        return False
    made, read = ctx.statement_of(root), ctx.statement_of(entry.call)
    return not any(_rebound_between(ctx, name.value, made, read, entry.owner) for name in loads(root.args[0].value))


def _bound_by(ctx: FileContext, name: cst.Name, statement: cst.BaseStatement, scope: cst.CSTNode) -> bool:
    """The value ``name`` reads is the one ``statement`` binds: the last binding before it in its
    block, or, when the read sits in a loop, a branch or a ``with`` after ``statement`` in its
    block (a benchmark that predicts N times), with no binding of the name in between."""
    if last_binding_before(ctx, name, scope)[0] is statement:
        return True
    read, block = ctx.statement_of(name), ctx.block_of(statement)
    body = list(block.body) if block is not None else []
    if read is None or statement not in body or read in body:
        return False
    binds = any(assigned is statement and bound == name.value for assigned, bound, _ in assignments(ctx, scope))
    after = _index_in(ctx, body, read)
    return binds and after is not None and after > body.index(statement) \
        and not _rebound_between(ctx, name.value, statement, read, scope)


def _read_by_predict_only(ctx: FileContext, variables: set, scope: cst.CSTNode, pipeline: set) -> bool:
    """Every read of ``variables`` in ``scope`` (nested functions included) is the input of a
    ``predict`` call, or a step of the pipeline (the ids in ``pipeline``): the padded samples
    reach no other code."""
    for name in loads(scope):
        if name.value not in variables or id(name) in pipeline:
            continue
        call = ctx.parent(ctx.parent(name))
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and call.func.attr.value == "predict" and call.args and call.args[0].value is name):
            return False
    return True


def _index_in(ctx: FileContext, block: list, statement: cst.BaseStatement) -> Optional[int]:
    """The index in ``block`` of the statement that holds ``statement``, None when none does."""
    for node in [statement, *ctx.ancestors(statement)]:
        if node in block:
            return block.index(node)
    return None


def _inside(ctx: FileContext, statement: cst.BaseStatement, block: list) -> bool:
    return _index_in(ctx, block, statement) is not None
