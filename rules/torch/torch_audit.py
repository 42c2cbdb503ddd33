"""IPU390: the last check of a PyTorch port. A port may be partial, never falsely complete."""

import libcst as cst

from porter.rule import ERROR, TORCH, WARN, Example, Rule
from porter.rules.torch._analysis.util import calls_to
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
    after = ("IPU305",)
    summary = "Report a PyTorch script that still trains on the CPU after the port (no PopTorch model)."
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
        backwards = [call for call in ctx.nodes(cst.Call)
                     if isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward"]
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


RULE = TorchAudit()
