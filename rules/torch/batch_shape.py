from typing import Dict, Iterator, Optional, Tuple

import libcst as cst

from porter.context import code_of
from porter.cstutil import argument, is_true, keyword, name_of, positional
from porter.rule import TORCH, WARN, Example, Rule
from porter.scopes import assignments_of, is_module_function, local_calls
from porter.rules.torch._analysis.loop import plan
from porter.rules.torch._analysis.util import DATALOADER, qualified, selected

_POPTORCH_MODELS = ("poptorch.trainingModel", "poptorch.inferenceModel")
# Calls that pass an iterable through: `for i, batch in enumerate(tqdm(loader))`.
_PASS_THROUGH = ("enumerate", "tqdm", "iter")
_SHAPE = ("PopTorch compiles the model for one batch shape, so a shorter batch compiles an inference model "
          "again and fails in a training model")


class BatchShape(Rule):
    code = "IPU319"
    name = "batch-shape"
    kind = WARN
    frameworks = frozenset({TORCH})
    summary = "Report a PopTorch model fed batches whose last one is shorter (no `drop_last`, sliced by `range`)."
    rationale = (
        "A PopTorch model is compiled for the shapes of its first inputs: a batch of another shape compiles an "
        "inference model again and makes a training model fail (PopTorch User Guide, \"Efficient data "
        "batching\"). `poptorch.DataLoader` drops the last partial batch by default (IPU303 converts the "
        "loaders it can); a `torch.utils.data.DataLoader` that stays (IPU303 not selected, or more than three "
        "positional arguments) without `drop_last=True`, and batches sliced by hand with "
        "`range(start, stop, step)`, end with a shorter batch unless the data divides evenly. The loop that "
        "feeds the model is reported with what to change."
    )
    examples = (
        Example("""\
            import torch
            import poptorch

            inference_model = poptorch.inferenceModel(model)
            for i in range(0, len(data), 32):
                out = inference_model(data[i:i + 32])
            """),
        Example("""\
            import torch
            import poptorch

            loader = torch.utils.data.DataLoader(ds, 32, True, None)
            inference_model = poptorch.inferenceModel(model)
            for x, y in loader:
                out = inference_model(x)
            """),
        Example("""\
            import torch
            import poptorch

            inference_model = poptorch.inferenceModel(model)


            def evaluate(loader):
                for x, y in loader:
                    out = inference_model(x)


            test_loader = torch.utils.data.DataLoader(ds, 64, False, None)
            evaluate(test_loader)
            """),
        Example("""\
            import torch
            import poptorch

            loader = torch.utils.data.DataLoader(ds, 32, True, None, drop_last=True)
            inference_model = poptorch.inferenceModel(model)
            for x, y in loader:
                out = inference_model(x)
            """, reported=False),
    )

    def run(self, ctx) -> None:
        loaders = _plain_loaders(ctx)
        reported = set()
        for site, model in _poptorch_sites(ctx):
            for loop in _loops_around(ctx, site):
                if id(loop) in reported:
                    continue
                message = _shorter_batches(ctx, loop, loaders, model)
                if message is not None:
                    reported.add(id(loop))
                    ctx.report(self.code, loop, message, fixed=False)


def _poptorch_sites(ctx) -> Iterator[Tuple[cst.CSTNode, str]]:
    """The places that run a PopTorch model after the port, with the model's name."""
    p = plan(ctx)
    for step in p.rewrites:
        yield step.backward, step.name
    for evaluation in p.evaluations:
        if evaluation.problem is None:
            for call in evaluation.calls:
                yield call, evaluation.name
    existing = {name for name, _ in assignments_of(ctx, *_POPTORCH_MODELS)}
    for call in ctx.nodes(cst.Call):
        if name_of(call.func) in existing:
            yield call, call.func.value


def _loops_around(ctx, site: cst.CSTNode) -> Iterator[cst.For]:
    """The ``for`` loops around ``site`` in its function, innermost first."""
    for ancestor in ctx.ancestors(site):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            return
        if isinstance(ancestor, cst.For):
            yield ancestor


def _plain_loaders(ctx) -> Dict[str, cst.Call]:
    """Variables holding a ``torch.utils.data.DataLoader`` that the port leaves as it is and that
    keeps a last partial batch."""
    converts = selected(ctx, "poptorch-dataloader")
    found = {}
    for assign in ctx.nodes(cst.Assign):
        call = assign.value
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name) \
                or not isinstance(call, cst.Call) or qualified(ctx, call.func) not in DATALOADER:
            continue
        drop_last = keyword(call, "drop_last")
        if (converts and len(positional(call)) <= 3) or (drop_last is not None and is_true(drop_last.value)):
            continue
        found[assign.targets[0].target.value] = call
    return found


def _iterable(loop: cst.For) -> cst.BaseExpression:
    iterable = loop.iter
    while isinstance(iterable, cst.Call) and name_of(iterable.func) in _PASS_THROUGH and iterable.args:
        iterable = iterable.args[0].value
    return iterable


def _loader_of(ctx, loop: cst.For, iterable: cst.BaseExpression, loaders: Dict[str, cst.Call]) -> Optional[str]:
    """The plain loader the loop runs over: a variable holding one, or a parameter of the
    function that a caller passes one to."""
    name = name_of(iterable)
    if name is None:
        return None
    if name in loaders:
        return name
    function = ctx.enclosing_function(loop)
    params = [param.name.value for param in function.params.params] if function is not None else []
    if name not in params or not is_module_function(ctx, function):
        return None
    for call in local_calls(ctx, function):
        arg = argument(call, name, params.index(name))
        if arg is not None and name_of(arg.value) in loaders:
            return arg.value.value
    return None


def _shorter_batches(ctx, loop: cst.For, loaders: Dict[str, cst.Call], model: str) -> Optional[str]:
    iterable = _iterable(loop)
    loader = _loader_of(ctx, loop, iterable, loaders)
    if loader is not None:
        passed = f", passed as `{iterable.value}`" if loader != iterable.value else ""
        return (f"`{loader}` (a `torch.utils.data.DataLoader` the port leaves as it is{passed}) feeds `{model}` "
                f"and keeps a shorter last batch: {_SHAPE}; pass `drop_last=True`, or make it a "
                f"`poptorch.DataLoader(opts, ...)` (which drops it by default)")
    if isinstance(iterable, cst.Call) and name_of(iterable.func) == "range" and qualified(ctx, iterable.func) is None \
            and len(iterable.args) == 3 and not any(arg.keyword or arg.star for arg in iterable.args):
        stop, step = (code_of(ctx, arg.value) for arg in iterable.args[1:])
        return (f"`{model}` gets batches sliced by `range(..., {stop}, {step})`: the last one is shorter unless the "
                f"length divides by `{step}`, and {_SHAPE}; stop the range at a multiple of `{step}` (drop the "
                f"rest) or pad the last batch")
    return None


RULE = BatchShape()
