import libcst as cst

from porter.context import code_of
from porter.cstutil import remove_arg, simple_assign
from porter.rule import FIX, TORCH, Example, Rule
from porter.statements import remove_statement
from porter.rules.torch._analysis.util import ACCELERATOR, accelerators, qualified
from porter.rules.torch.remove_amp import FLOAT32

# `prepare` and its one-object forms; each returns what it is given on one CPU process, wrapped.
_PREPARE = ("prepare", "prepare_model", "prepare_optimizer", "prepare_data_loader", "prepare_scheduler")

_BEFORE = '''import torch
from accelerate import Accelerator

accelerator = Accelerator(mixed_precision="fp16")
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for x, y in loader:
    out = model(x)
'''
_AFTER = '''import torch
from accelerate import Accelerator

accelerator = Accelerator()
for x, y in loader:
    out = model(x)
'''


class Accelerate(Rule):
    code = "IPU317"
    name = "accelerate"
    kind = FIX
    frameworks = frozenset({TORCH})
    summary = "Hugging Face `accelerate`: drop `prepare` and mixed precision, report gradient accumulation."
    rationale = (
        "On an IPU host the script runs as one process on CPU torch, where `accelerate.Accelerator` is a "
        "single-device helper: `prepare(...)` would hand back the model, optimizer and loader wrapped "
        "(an `AcceleratedOptimizer` that `poptorch.trainingModel` cannot take), so it goes and the names keep "
        "what was passed in; `mixed_precision=` goes (the port trains in float32: float16 on the IPU is "
        "`.half()` plus `loss_scaling` on the `poptorch.optim` optimizer, PopTorch User Guide, \"16-bit float "
        "support\"). `accelerator.backward(loss)` is `loss.backward()` for IPU305, `accelerator.device` is the "
        "CPU (IPU307), and `print`, `gather` and `wait_for_everyone` work unchanged on one process. Gradient "
        "accumulation (`gradient_accumulation_steps=`, `accelerator.accumulate`) is reported: PopTorch "
        "accumulates with `opts.Training.gradientAccumulation(n)`."
    )
    examples = (
        Example(_BEFORE, _AFTER),
        Example(
            """\
            import torch
            from accelerate import Accelerator

            accelerator = Accelerator()
            ddp_model = accelerator.prepare_model(model)
            """,
            """\
            import torch
            from accelerate import Accelerator

            accelerator = Accelerator()
            ddp_model = model
            """,
        ),
        Example("""\
            import torch
            from accelerate import Accelerator

            accelerator = Accelerator(gradient_accumulation_steps=4)
            for x, y in loader:
                with accelerator.accumulate(model):
                    out = model(x)
            """, reported=True),
        Example("""\
            import torch
            from accelerate import Accelerator

            accelerator = Accelerator()
            accelerator.print("done")
            """, reported=False),
    )

    def run(self, ctx) -> None:
        names = accelerators(ctx)
        for call in ctx.nodes(cst.Call):
            func = call.func
            if qualified(ctx, func) == ACCELERATOR:
                self._creation(ctx, call)
            elif isinstance(func, cst.Attribute) and code_of(ctx, func.value) in names:
                if func.attr.value in _PREPARE:
                    self._prepare(ctx, call)
                elif func.attr.value == "accumulate":
                    ctx.report(self.code, call, f"`{code_of(ctx, func)}(...)` accumulates gradients over several "
                               "batches: the PopTorch training model steps every batch; set "
                               "`opts.Training.gradientAccumulation(n)` and remove this block", fixed=False)

    def _creation(self, ctx, call: cst.Call) -> None:
        for index, arg in enumerate(call.args):
            keyword = arg.keyword.value if arg.keyword is not None else None
            if keyword == "mixed_precision":
                ctx.replace(call, lambda node, index=index: remove_arg(node, index))
                ctx.report(self.code, arg, f"`mixed_precision` removed: {FLOAT32}", fixed=True)
            elif keyword == "gradient_accumulation_steps":
                ctx.report(self.code, arg, "`gradient_accumulation_steps`: the PopTorch training model steps every "
                           "batch; set `opts.Training.gradientAccumulation(n)` instead", fixed=False)

    def _prepare(self, ctx, call: cst.Call) -> None:
        statement = ctx.statement_of(call)
        assign = simple_assign(statement)
        args = [arg.value for arg in call.args]
        if assign is None or assign[1] is not call or not args or any(arg.keyword or arg.star for arg in call.args):
            ctx.report(self.code, call, f"`{call.func.attr.value}(...)` wraps the model, optimizer and loader for "
                       "CUDA processes: use them unwrapped (PopTorch needs the `torch.optim` optimizer itself)",
                       fixed=False)
            return
        target = code_of(ctx, assign[0]).strip("() ")
        passed = ", ".join(code_of(ctx, arg) for arg in args)
        if target.rstrip(",") == passed:
            remove_statement(ctx, statement)
        else:
            value = args[0] if len(args) == 1 else cst.Tuple([cst.Element(arg) for arg in args], lpar=(), rpar=())
            ctx.replace(call, value)
        ctx.report(self.code, call, f"`{call.func.attr.value}(...)` removed: one process on the IPU host needs no "
                   "wrapping, and PopTorch takes the model, the `torch.optim` optimizer and the loader themselves",
                   fixed=True)


RULE = Accelerate()
