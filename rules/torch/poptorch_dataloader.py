from typing import Optional, Set

import libcst as cst

from porter import cstutil
from porter.context import code_of
from porter.cstutil import argument, is_false, is_true, keyword, name_of, positional, with_args
from porter.scopes import is_module_function, local_calls
from porter.rule import FIX, TORCH, Example, Rule
from porter.rules.torch._analysis.loop import plan
from porter.rules.torch._analysis.util import DATALOADER, calls_to
from porter.rules.torch._analysis.speed import evaluation_loaders, shared_loaders


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
        "since the last batch then has another shape and is compiled again. A sum over the batches of a loader "
        "that now drops its last batch, divided by `len(loader.dataset)`, counts samples the loop no longer "
        "sees: it is reported, with the loader (also through the function parameter it is passed as). When "
        "training accumulates gradients, loaders only evaluation reads take the inference options; a loader "
        "that feeds both (a training accuracy, `evaluate(model, train_loader)`) is reported: its combined "
        "batches have another shape than the inference model's, and input shapes are fixed (PopTorch User "
        "Guide, \"Constraints\")."
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
        # The average divides by every sample, while the loader now drops its last partial batch.
        Example(
            """\
            import torch
            import poptorch

            opts = poptorch.Options()
            test_loader = torch.utils.data.DataLoader(test_set, batch_size=100)


            def accuracy(loader):
                correct = 0
                for x, y in loader:
                    correct += (inference_model(x).argmax(1) == y).sum().item()
                return correct / len(loader.dataset)


            print(accuracy(test_loader))
            """,
            """\
            import torch
            import poptorch

            opts = poptorch.Options()
            test_loader = poptorch.DataLoader(opts, test_set, batch_size=100)


            def accuracy(loader):
                correct = 0
                for x, y in loader:
                    correct += (inference_model(x).argmax(1) == y).sum().item()
                return correct / len(loader.dataset)


            print(accuracy(test_loader))
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
        shared = shared_loaders(ctx) if p.inference_opts and not p.opts_exists else set()
        dropping: Set[str] = set()  # loader variables that drop the last partial batch after the port
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
                if isinstance(target, cst.Name):
                    dropping.add(target.value)
            ctx.report(self.code, call, message, fixed=True)
            if isinstance(target, cst.Name) and target.value in shared:
                ctx.report(self.code, call, f"`{target.value}` feeds training and evaluation: made with `{opts}`, "
                           "whose gradient accumulation multiplies its batches, it gives the inference model "
                           f"(options `{p.inference_opts}`) batches of another shape, which fail; evaluate with a "
                           f"loader of its own, `poptorch.DataLoader({p.inference_opts}, <the same dataset>, ...)`",
                           fixed=False)
            if drop_last is not None and not is_true(drop_last.value):
                what = "`drop_last=False`" if is_false(drop_last.value) else "`drop_last`"
                ctx.report(self.code, drop_last, f"{what} kept: a last partial batch has another shape and is "
                           "compiled again; prefer `drop_last=True` (the PopTorch default)", fixed=False)
        self._report_dataset_averages(ctx, dropping)

    def _report_dataset_averages(self, ctx, dropping: Set[str]) -> None:
        """A sum over the batches divided by `len(loader.dataset)` also counts the samples of the last
        partial batch, which the loader now drops: the average comes out too small."""
        reported = set()  # one finding per loader and function: the divisions of a summary line go together
        for call in ctx.nodes(cst.Call):
            loader = _dataset_length_of(call)
            source = _dropping_loader(ctx, call, loader, dropping) if loader and _is_divisor(ctx, call) else None
            key = (id(ctx.enclosing_function(call)), loader)
            if source is None or key in reported:
                continue
            reported.add(key)
            passed = f" (passed as `{loader}`)" if source != loader else ""
            ctx.report(self.code, call, f"`{code_of(ctx, call)}` counts every sample, but `{source}`{passed}, a "
                       "`poptorch.DataLoader`, drops the last partial batch: unless the dataset length "
                       "divides by the combined batch (batch size x device iterations x replicas x gradient "
                       "accumulation), this average is too small; divide by the samples the loop sees "
                       "(add `len(...)` of each batch to a counter)", fixed=False)

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


def _dataset_length_of(call: cst.Call) -> Optional[str]:
    """`loader` in `len(loader.dataset)`."""
    if name_of(call.func) != "len" or len(call.args) != 1:
        return None
    value = call.args[0].value
    if isinstance(value, cst.Attribute) and value.attr.value == "dataset":
        return name_of(value.value)
    return None


def _is_divisor(ctx, node: cst.CSTNode) -> bool:
    """`... / node`, `... // node` or `x /= node`."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.BinaryOperation):
        return parent.right is node and isinstance(parent.operator, (cst.Divide, cst.FloorDivide))
    return isinstance(parent, cst.AugAssign) and parent.value is node \
        and isinstance(parent.operator, (cst.DivideAssign, cst.FloorDivideAssign))


def _dropping_loader(ctx, node: cst.CSTNode, name: str, dropping: Set[str]) -> Optional[str]:
    """The dropping loader `name` holds: that variable, or the one callers pass to the parameter
    `name` of the enclosing module-level function."""
    function = ctx.enclosing_function(node)
    params = [param.name.value for param in function.params.params] if function is not None else []
    if name not in params:
        return name if name in dropping else None
    if not is_module_function(ctx, function):
        return None
    for call in local_calls(ctx, function):
        arg = argument(call, name, params.index(name))
        if arg is not None and name_of(arg.value) in dropping:
            return arg.value.value
    return None


def _shift(arg: cst.Arg, shift: int) -> cst.Arg:
    comma = arg.comma
    if not isinstance(comma, cst.Comma) or not isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace):
        return arg
    space = comma.whitespace_after
    width = max(0, len(space.last_line.value) + shift)
    return arg.with_changes(comma=comma.with_changes(
        whitespace_after=space.with_changes(last_line=cst.SimpleWhitespace(" " * width))))


RULE = PoptorchDataLoader()
