import libcst as cst

from porter import cstutil
from porter.cstutil import keyword
from porter.rule import FIX, TORCH, Example, Rule
from porter.rules.torch._analysis.util import SWAPPED_OPTIMIZERS, qualified, swaps_to_poptorch
from porter.rules.torch._analysis.loop import plan

OTHERS = ("Adadelta", "Adagrad", "Adamax", "ASGD", "LBFGS", "NAdam", "RAdam", "Rprop", "SparseAdam")


class PoptorchOptim(Rule):
    code = "IPU304"
    name = "poptorch-optim"
    kind = FIX
    frameworks = frozenset({TORCH})
    summary = "Use `poptorch.optim.SGD/Adam/AdamW/RMSprop`; report optimizers PopTorch cannot run."
    rationale = (
        "PopTorch compiles the optimizer into the training program: only SGD, Adam, AdamW, RMSprop (and "
        "PopTorch's LAMB) are supported, `amsgrad=True` raises, and the `poptorch.optim` versions add "
        "`loss_scaling`, `accum_type` and `max_grad_norm` and treat explicitly passed arguments as "
        "variables (PopTorch User Guide, \"Optimizers\"). The four supported optimizers become their "
        "`poptorch.optim` twins with the same arguments; others, custom optimizer classes and `amsgrad=True` "
        "are reported."
    )
    examples = (
        Example(
            """\
            import torch

            optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
            """,
            """\
            import torch
            import poptorch

            optimizer = poptorch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
            """,
        ),
        Example(
            """\
            from torch import optim

            optimizer = optim.AdamW(net.parameters(), lr=3e-4)
            """,
            """\
            from torch import optim
            import poptorch

            optimizer = poptorch.optim.AdamW(net.parameters(), lr=3e-4)
            """,
        ),
        Example("""\
            import torch

            optimizer = torch.optim.Adagrad(model.parameters())
            """, reported=True),
        Example("""\
            import torch

            optimizer = torch.optim.Adam(model.parameters(), amsgrad=True)
            """, reported=True),
        Example("""\
            import torch
            import poptorch

            optimizer = poptorch.optim.Adam(model.parameters())
            """,
                reported=False),
    )

    def run(self, ctx) -> None:
        for call in ctx.nodes(cst.Call):
            full = qualified(ctx, call.func) or ""
            if not full.startswith("torch.optim.") or full.startswith("torch.optim.lr_scheduler."):
                continue
            cls = full.rsplit(".", 1)[-1]
            if cls in OTHERS:
                ctx.report(self.code, call, f"`{cls}` is not supported by PopTorch: use `poptorch.optim.SGD`, "
                           "`Adam`, `AdamW`, `RMSprop` or `LAMB`", fixed=False)
                continue
            if cls not in SWAPPED_OPTIMIZERS:
                continue
            if not swaps_to_poptorch(ctx, call):
                ctx.report(self.code, keyword(call, "amsgrad"), "`amsgrad=True` is not supported by PopTorch: "
                           "remove it", fixed=False)
                continue
            ctx.replace(call.func, cstutil.expression(f"poptorch.optim.{cls}"))
            ctx.add_import("poptorch", code="IPU301")
            ctx.report(self.code, call.func, f"`{cls}` becomes `poptorch.optim.{cls}`", fixed=True)
        self._custom(ctx)

    def _custom(self, ctx) -> None:
        """The optimizer of a training step built from a class PopTorch does not know."""
        names = {step.optimizer for step in plan(ctx).steps if step.optimizer}
        for assign in ctx.nodes(cst.Assign):
            target = assign.targets[0].target if len(assign.targets) == 1 else None
            if not isinstance(target, cst.Name) or target.value not in names or not isinstance(assign.value, cst.Call):
                continue
            full = qualified(ctx, assign.value.func) or ""
            if full.startswith(("torch.optim.", "poptorch.optim.")):
                continue
            ctx.report(self.code, assign.value, f"`{target.value}` is not built from `torch.optim` here: "
                       "PopTorch runs only `SGD`, `Adam`, `AdamW`, `RMSprop` and `LAMB` (`poptorch.optim`); "
                       "a custom optimizer keeps only its attribute values", fixed=False)


RULE = PoptorchOptim()
