"""IPU390: the last check of a PyTorch port. A port may be partial, never falsely complete."""

from typing import List

import libcst as cst

from porter.context import code_of, walk
from porter.cstutil import method_of, name_of
from porter.rule import ERROR, TORCH, WARN, Example, Rule
from porter.rules.torch._analysis.loop import plan
from porter.rules.torch._analysis.util import NO_GRAD, backward_calls, calls_to, qualified
from porter.rules.torch.training_model import RULE as TRAINING_RULE

_TRAINING_WRAPPER = "poptorch.trainingModel"


class TorchAudit(Rule):
    code = "IPU390"
    name = "torch-audit"
    kind = WARN
    frameworks = frozenset({TORCH})
    # What it reports makes the port incomplete.
    severity = ERROR
    # It judges what the other rules made of the file.
    after = ("IPU305", "IPU306")
    summary = "Report PyTorch training or evaluation that still runs on the CPU after the port."
    rationale = (
        "PyTorch code runs on the IPU only through the PopTorch wrappers: `poptorch.trainingModel` for "
        "training (the loss computed in `forward`, the optimizer stepped on the device) and "
        "`poptorch.inferenceModel` for evaluation (PopTorch User Guide, \"Model wrapping functions\"). A "
        "loop that calls `loss.backward()` and `optimizer.step()` itself trains on the CPU. After the "
        "other rules, this check reports a script that trains and whose port creates no PopTorch model, "
        "at the first `backward()`, so that the port is never taken for a complete one; the findings of "
        "IPU305 name the statement that stopped the port."
    )
    examples = (
        # An evaluation in a nested function of a trainer method stays on the CPU.
        Example(
            """\
            import torch


            class Trainer:
                def validate(self, loader):
                    self.model.eval()

                    def run(batches):
                        with torch.no_grad():
                            return [self.model(x) for x, _ in batches]

                    return run(loader)
            """,
        ),
        Example(
            """\
            import torch

            for x, y in loader:
                optimizer.zero_grad()
                loss = step_loss(model, x, y)
                loss.backward()
                optimizer.step()
            """,
        ),
        Example(
            """\
            import torch
            import poptorch

            training_model = poptorch.trainingModel(model, options=opts, optimizer=optimizer)
            for x, y in loader:
                output, loss = training_model(x, y)
            """,
            reported=False,
        ),
        Example(
            """\
            import torch

            weights = torch.zeros(3)
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        left = _cpu_evaluations(ctx)
        if left:
            stopped = {id(call) for evaluation in plan(ctx).evaluations if evaluation.problem is not None
                       for call in evaluation.calls}
            why = "IPU306 says what stopped it" if id(left[0]) in stopped else "a nested function or a method"
            ctx.report(self.code, left[0], f"`{code_of(ctx, left[0].func)}(...)` evaluates on the CPU: the port "
                       f"moved no evaluation here to a `poptorch.inferenceModel` ({why}), "
                       "so it is not complete; create one with `poptorch.inferenceModel(model.eval(), "
                       "options=opts)` once and call it here", fixed=False)
        backwards = backward_calls(ctx)
        if not backwards or self._has_training_model(ctx):
            return
        ctx.report(self.code, backwards[0], "the training still runs on the CPU: the port creates no "
                   "`poptorch.trainingModel`, so it is not complete; move the loss into the model's `forward` "
                   "and train through `poptorch.trainingModel` (IPU305 reports what stopped it, when it knows)",
                   fixed=False)

    @staticmethod
    def _has_training_model(ctx) -> bool:
        if calls_to(ctx, _TRAINING_WRAPPER):
            return True
        return any(report.fixed and report.code == TRAINING_RULE.code for report in ctx.reports)


def _cpu_evaluations(ctx) -> List[cst.Call]:
    """Calls of a model (``model(x)``, ``self.model(x)``: a name or attribute whose ``.eval()``
    the file calls) under ``torch.no_grad()`` that no inference model replaces."""
    evaluated = {name_of(receiver) or (receiver.attr.value if isinstance(receiver, cst.Attribute) else None)
                 for receiver in (method_of(call, "eval") for call in ctx.nodes(cst.Call)) if receiver is not None}
    evaluated.discard(None)
    if not evaluated:
        return []
    replaced = {id(call) for evaluation in plan(ctx).evaluations if evaluation.problem is None
                for call in evaluation.calls}
    found = []
    for with_node in ctx.nodes(cst.With):
        if not any(isinstance(item.item, cst.Call) and qualified(ctx, item.item.func) in NO_GRAD
                   for item in with_node.items):
            continue
        for node in walk(with_node.body):
            if isinstance(node, cst.Call) and id(node) not in replaced and _model_call(node, evaluated):
                found.append(node)
    return found


def _model_call(call: cst.Call, models) -> bool:
    func = call.func
    if isinstance(func, cst.Name):
        return func.value in models
    return (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
            and func.attr.value in models)


RULE = TorchAudit()
