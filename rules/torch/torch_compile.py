from porter.rule import TORCH, WARN, Example, Rule
from porter.rules.torch._analysis.util import calls_to


class WarnCompile(Rule):
    code = "IPU311"
    name = "torch-compile"
    kind = WARN
    frameworks = frozenset({TORCH})
    summary = "Report `torch.compile`, which PopTorch does not support."
    rationale = (
        "`torch.compile` is not supported by PopTorch: the PopTorch wrappers (`poptorch.trainingModel`, "
        "`poptorch.inferenceModel`) compile the model for the IPU instead (PopTorch User Guide, \"Model "
        "wrapping functions\")."
    )
    examples = (
        Example("""\
            import torch

            model = torch.compile(model)
            """),
        Example("""\
            import torch

            model = torch.nn.Linear(2, 2)
            """, reported=False),
    )

    def run(self, ctx) -> None:
        for call in calls_to(ctx, "torch.compile"):
            ctx.report(self.code, call, "`torch.compile` is not supported by PopTorch: remove it, the PopTorch "
                       "model wrappers compile for the IPU", fixed=False)


RULE = WarnCompile()
