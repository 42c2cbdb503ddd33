import libcst as cst

from porter import cstutil
from porter.cstutil import is_false, is_true, keyword, positional, with_args
from porter.rule import FIX, TORCH, Example, Rule
from porter.rules.torch._analysis.loop import plan
from porter.rules.torch._analysis.util import DATALOADER, calls_to
from porter.rules.torch._analysis.speed import evaluation_loaders


class PoptorchDataLoader(Rule):
    code = "IPU303"
    name = "poptorch-dataloader"
    kind = FIX
    frameworks = frozenset({TORCH})
    summary = "Use `poptorch.DataLoader(opts, dataset, ...)` instead of `torch.utils.data.DataLoader`."
    rationale = (
        "`poptorch.DataLoader` takes the `poptorch.Options` first and batches for the device iterations, "
        "replicas and gradient accumulation those options set; a plain DataLoader may silently change the "
        "effective batch size (PopTorch User Guide, \"Efficient data batching\"). Every argument is kept "
        "except `pin_memory` (CUDA only). PopTorch drops the last partial batch by default "
        "(`drop_last=True`): this is reported for each loader, and an explicit `drop_last=False` is kept and "
        "reported, "
        "since the last batch then has another shape and is compiled again."
    )
    examples = (
        Example(
            """\
            import torch
            import poptorch

            opts = poptorch.Options()
            loader = torch.utils.data.DataLoader(ds, batch_size=32, shuffle=True, pin_memory=True)
            """,
            """\
            import torch
            import poptorch

            opts = poptorch.Options()
            loader = poptorch.DataLoader(opts, ds, batch_size=32, shuffle=True)
            """,
        ),
        Example(
            """\
            import poptorch
            from torch.utils.data import DataLoader

            opts = poptorch.Options()
            loader = DataLoader(
                ds,
                batch_size=8,
                drop_last=False,
            )
            """,
            """\
            import poptorch
            from torch.utils.data import DataLoader

            opts = poptorch.Options()
            loader = poptorch.DataLoader(
                opts,
                ds,
                batch_size=8,
                drop_last=False,
            )
            """,
        ),
        Example(
            """\
            import poptorch
            from torch.utils.data import DataLoader

            opts = poptorch.Options()
            loader = DataLoader(ds,
                                batch_size=8,
                                shuffle=True)
            """,
            """\
            import poptorch
            from torch.utils.data import DataLoader

            opts = poptorch.Options()
            loader = poptorch.DataLoader(opts,
                                         ds,
                                         batch_size=8,
                                         shuffle=True)
            """,
        ),
        Example(
            """\
            import poptorch
            from torch.utils.data import DataLoader

            opts = poptorch.Options()
            loader = DataLoader(ds, batch_size=8,
                                shuffle=True)
            """,
            """\
            import poptorch
            from torch.utils.data import DataLoader

            opts = poptorch.Options()
            loader = poptorch.DataLoader(opts, ds, batch_size=8,
                                         shuffle=True)
            """,
        ),
        Example("""\
            import torch
            import poptorch

            opts = poptorch.Options()
            loader = poptorch.DataLoader(opts, ds, batch_size=32)
            """, reported=False),
    )

    def run(self, ctx) -> None:
        p = plan(ctx)
        # Loaders that only feed evaluation take the inference options when the port creates them
        # (the training options accumulate gradients, which would multiply their batches).
        evaluating = evaluation_loaders(ctx) if p.inference_opts and not p.opts_exists else set()
        for call in calls_to(ctx, *DATALOADER):
            parent = ctx.parent(call)
            target = parent.targets[0].target if isinstance(parent, cst.Assign) and len(parent.targets) == 1 else None
            opts = p.inference_opts if isinstance(target, cst.Name) and target.value in evaluating else p.opts
            if len(positional(call)) > 3:
                ctx.report(self.code, call, "`DataLoader` with more than 3 positional arguments: pass them by "
                           "keyword and use `poptorch.DataLoader(opts, dataset, ...)`", fixed=False)
                continue
            drop_last = keyword(call, "drop_last")
            ctx.replace(call, lambda node, opts=opts: self._convert(node, opts))
            ctx.add_import("poptorch", code="IPU301")
            message = "`DataLoader` becomes `poptorch.DataLoader`"
            if keyword(call, "pin_memory") is not None:
                message += " without `pin_memory` (CUDA only)"
            if drop_last is None:
                message += "; it drops the last partial batch (`drop_last=True` by default)"
            ctx.report(self.code, call, message, fixed=True)
            if drop_last is not None and not is_true(drop_last.value):
                what = "`drop_last=False`" if is_false(drop_last.value) else "`drop_last`"
                ctx.report(self.code, drop_last, f"{what} kept: a last partial batch has another shape and is "
                           "compiled again; prefer `drop_last=True` (the PopTorch default)", fixed=False)

    @staticmethod
    def _convert(node: cst.Call, opts) -> cst.Call:
        options = cst.Arg(cst.Name(opts) if opts else cstutil.expression("poptorch.Options()"))
        args = [arg for arg in node.args if not (arg.keyword is not None and arg.keyword.value == "pin_memory")]
        func = "poptorch.DataLoader"
        new = with_args(node, [options, *args]).with_changes(func=cstutil.expression(func))
        if isinstance(node.whitespace_before_args, cst.ParenthesizedWhitespace):
            return new
        # Arguments aligned under the opening parenthesis move with it (only: `opts` takes the
        # first argument's place, and that argument goes to a line of its own when they are one a line).
        shift = len(func) - len(cst.Module([]).code_for_node(node.func))
        return new.with_changes(args=[_shift(arg, shift) for arg in new.args])


def _shift(arg: cst.Arg, shift: int) -> cst.Arg:
    comma = arg.comma
    if not isinstance(comma, cst.Comma) or not isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace):
        return arg
    space = comma.whitespace_after
    width = max(0, len(space.last_line.value) + shift)
    return arg.with_changes(comma=comma.with_changes(
        whitespace_after=space.with_changes(last_line=cst.SimpleWhitespace(" " * width))))


RULE = PoptorchDataLoader()
