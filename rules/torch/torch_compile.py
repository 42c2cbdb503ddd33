import libcst as cst

from porter.rule import TORCH, WARN, Example, Rule
from porter.rules.torch._analysis.loop import model_names
from porter.rules.torch._analysis.util import calls_to, qualified

_TORCHSCRIPT = ("torch.jit.script", "torch.jit.trace")


class WarnCompile(Rule):
    code = "IPU311"
    name = "torch-compile"
    kind = WARN
    frameworks = frozenset({TORCH})
    summary = "Report `torch.compile`, `Module.compile()` and TorchScript, which PopTorch does not support."
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

            model = torch.jit.script(Net())
            """),
        Example("""\
            import torch

            model = torch.nn.Linear(2, 2)
            model.compile()
            model.train()
            """),
        Example("""\
            import re
            import torch

            model = torch.nn.Linear(2, 2)
            pattern = re.compile("x")
            """, reported=False),
        Example("""\
            import torch

            model = torch.nn.Linear(2, 2)
            """, reported=False),
    )

    def run(self, ctx) -> None:
        for call in calls_to(ctx, "torch.compile"):
            ctx.report(self.code, call, "`torch.compile` is not supported by PopTorch: remove it, the PopTorch "
                       "model wrappers compile for the IPU", fixed=False)
        for call in calls_to(ctx, *_TORCHSCRIPT):
            ctx.report(self.code, call, f"`{qualified(ctx, call.func)}` makes a TorchScript module, which the "
                       "PopTorch wrappers cannot take: wrap the plain `nn.Module`", fixed=False)
        models = model_names(ctx)
        for call in ctx.nodes(cst.Call):
            func = call.func
            if (isinstance(func, cst.Attribute) and func.attr.value == "compile" and isinstance(func.value, cst.Name)
                    and func.value.value in models and qualified(ctx, func) is None):
                ctx.report(self.code, call, f"`{func.value.value}.compile()` (`torch.compile` on the module) is not "
                           "supported by PopTorch: remove it, the PopTorch model wrappers compile for the IPU",
                           fixed=False)


RULE = WarnCompile()
