import libcst as cst

from porter.rule import TORCH, WARN, Example, Rule
from porter.cstutil import method_of
from porter.rules.torch._analysis.util import qualified

_FLOAT64 = ("torch.float64", "torch.double")


class WarnFloat64(Rule):
    code = "IPU313"
    name = "torch-float64"
    kind = WARN
    frameworks = frozenset({TORCH})
    summary = "Report float64 tensors (`.double()`, `torch.float64`), which the IPU runs as float32."
    rationale = (
        "The IPU has no float64: PopTorch silently converts float64 to float32 (and int64 to int32), so "
        "code that relies on double precision changes results."
    )
    examples = (
        Example("""\
            import torch

            x = torch.zeros(3, dtype=torch.float64)
            """),
        Example("""\
            import torch

            model = model.double()
            """),
        Example("""\
            import torch

            x = torch.zeros(3, dtype=torch.float32)
            """, reported=False),
    )

    def run(self, ctx) -> None:
        for attribute in ctx.nodes(cst.Attribute):
            if qualified(ctx, attribute) in _FLOAT64:
                ctx.report(self.code, attribute, "float64 runs as float32 on the IPU: use `torch.float32`",
                           fixed=False)
        for call in ctx.nodes(cst.Call):
            if method_of(call, "double") is not None and not call.args:
                ctx.report(self.code, call.func.attr, "`.double()`: float64 runs as float32 on the IPU; use "
                           "`.float()`", fixed=False)


RULE = WarnFloat64()
