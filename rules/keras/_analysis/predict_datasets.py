"""``predict`` datasets made from arrays the port can pad, for IPU105 (drop-remainder) and IPU107
(divisible-dataset).

Keras on the IPU rejects a partial batch, so a ``predict`` dataset is batched with
``drop_remainder=True``; that alone loses the answers for the last samples, and a submission
written from them loses rows. Where the arrays are in sight, as in
``model.predict(tf.data.Dataset.from_tensor_slices(x).map(prep).batch(64))`` (inline, or held in a
variable only ``predict`` reads), the port pads ``x`` to whole batches before it is sliced and cuts
the answers back to one per sample, so both rules need the same answer to "which ones":

* ``padded_predictions(ctx)``: those datasets, with the arrays, the batch size and the calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional

import libcst as cst

from porter.context import FileContext, SharedKey, walk
from porter.cstutil import argument, is_false
from porter.rules.keras._analysis.datasets import chain, training_batches
from porter.rules.keras._analysis.fit import TrainingCall, last_binding_before, repeatable
from porter.scopes import assignments, loads, owner

# `from_tensor_slices` only: `from_tensors` makes one element, not one per sample.
_SLICES = ("tensorflow.data.Dataset.from_tensor_slices", "tensorflow.compat.v1.data.Dataset.from_tensor_slices")
# Dataset methods that keep one element per sample, in order: the repeated last sample stays last,
# and the answers line up with the arrays. (`shuffle`, `filter`, `take`, `skip`, `repeat`... do not.)
_ORDERED = frozenset({"map", "prefetch", "cache", "with_options"})

_PADDED: SharedKey[List["PaddedPrediction"]] = SharedKey("keras-padded-predictions")


@dataclass
class PaddedPrediction:
    """A dataset only ``predict`` reads, made as ``from_tensor_slices(arrays)...batch(size)``:
    ``arrays`` are padded to whole batches where they are sliced, and what each call of ``entries``
    answers is cut back to one answer per sample."""
    batch: cst.Call
    arrays: cst.BaseExpression
    size: cst.BaseExpression
    entries: List[TrainingCall]


def padded_predictions(ctx: FileContext) -> List[PaddedPrediction]:
    return ctx.shared(_PADDED, lambda: _find(ctx))


def padded_batch_ids(ctx: FileContext) -> Dict[int, PaddedPrediction]:
    """The same, per id of the ``.batch()`` call."""
    return {id(found.batch): found for found in padded_predictions(ctx)}


def _find(ctx: FileContext) -> List[PaddedPrediction]:
    grouped: Dict[int, list] = {}
    for found in training_batches(ctx):
        grouped.setdefault(id(found.batch), []).append(found)
    padded = []
    for uses in grouped.values():
        made = _padded(ctx, uses)
        if made is not None:
            padded.append(made)
    return padded


def _padded(ctx: FileContext, uses: list) -> Optional[PaddedPrediction]:
    """The padding of the dataset that every one of ``uses`` (TrainingBatch of one ``.batch()``)
    reads, or None when its answers cannot be lined up with its samples that way."""
    batch = uses[0].batch
    entries = [use.entry for use in uses]
    scope = owner(ctx, batch)
    if any(use.batching != "batch" or use.method != "predict" or use.entry.owner is not scope
           or any(call.func.attr.value not in _ORDERED for call in use.later) for use in uses):
        return None  # also read by `fit`/`evaluate`, in another function, or reordered after batching
    if len({entry.model for entry in entries}) != 1 or any(argument(entry.call, "steps", 3) for entry in entries):
        return None  # one multiple for all the calls; a step count of their own asks for its batches
    size = argument(batch, "batch_size", 0)
    drop = argument(batch, "drop_remainder", 1)
    if size is None or drop is not None and not is_false(drop.value):
        return None
    calls, root, followed = _made_from(ctx, batch, scope)
    if not (isinstance(root, cst.Call) and ctx.qualified_name(root.func) in _SLICES and root.args
            and not root.args[0].keyword and all(_keeps_order(call) for call in calls)):
        return None
    arrays = root.args[0].value
    if not repeatable(ctx, arrays) or not all(_reaches(ctx, batch, root, entry, followed) for entry in entries):
        return None
    return PaddedPrediction(batch, arrays, size.value, entries)


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
        if not isinstance(value, cst.Name) or last_binding_before(ctx, value, entry.owner)[0] is not \
                ctx.statement_of(batch):
            return False
    pipeline = {name.value for name in followed} | ({value.value} if isinstance(value, cst.Name) else set())
    if not _read_by_predict_only(ctx, pipeline, entry.owner, {id(name) for name in followed}):
        return False
    made, read = ctx.statement_of(root), ctx.statement_of(entry.call)
    return not any(_rebound_between(ctx, name.value, made, read, entry.owner) for name in loads(root.args[0].value))


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
    return any(node in block for node in [statement, *ctx.ancestors(statement)])
