import libcst as cst

from porter import cstutil, scopes
from porter.rule import FIX, TORCH, Example, Rule
from porter.rules.torch._analysis.loop import plan
from porter.scopes import common_point, top_statement
from porter.statements import first_code_statement
from porter.rules.torch._analysis.util import DATALOADER, calls_to, selected
from porter.rules.torch._analysis.speed import option_line, replication_factor
from porter.rules.common import executable_cache, ipu_model
from porter.rules.torch import device_iterations, poptorch_pipelining

_BEFORE = '''import torch
from torch.utils.data import DataLoader


def main():
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=32)
'''
_AFTER = '''import torch
from torch.utils.data import DataLoader
import poptorch


def main():
    opts = poptorch.Options()
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=32)
'''

# The rules whose option goes on the options this rule creates, in the order the calls are written.
_OPTION_RULES = (device_iterations.RULE, poptorch_pipelining.RULE, executable_cache.RULE, ipu_model.RULE)


class PoptorchOptions(Rule):
    code = "IPU302"
    name = "poptorch-options"
    kind = FIX
    frameworks = frozenset({TORCH})
    summary = "Create one `opts = poptorch.Options()` where the data loaders and models are built."
    rationale = (
        "`poptorch.DataLoader`, `poptorch.trainingModel` and `poptorch.inferenceModel` all take a "
        "`poptorch.Options`; the loader and the model must share the batching options or the batch split "
        "will not match (PopTorch User Guide, \"Options\", \"Efficient data batching\"). The options are "
        "created once, before the first "
        "loader or model in the scope that builds them (module level when that is several functions); "
        "`--ipus N` adds `opts.replicationFactor(N)` (data parallelism over N IPUs). Options are frozen once "
        "used, so everything is set right after creation."
    )
    examples = (
        Example(_BEFORE, _AFTER),
        Example(
            """\
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds)
            """,
            """\
            import torch
            from torch.utils.data import DataLoader
            import poptorch

            opts = poptorch.Options()
            loader = DataLoader(ds)
            """,
        ),
        Example("""\
            import torch
            import poptorch

            opts = poptorch.Options()
            loader = poptorch.DataLoader(opts, ds)
            """, reported=False),
        Example("""\
            import torch

            x = torch.zeros(2)
            """, reported=False),
    )

    def run(self, ctx) -> None:
        p = plan(ctx)
        if p.inference_opts is not None and p.opts_exists:
            self._inference_options(ctx, p)
        if p.opts_exists or p.opts is None:
            return
        uses = [(scopes.owner(ctx, call), call) for call in calls_to(ctx, *DATALOADER)]
        uses += [(step.placement.owner, step.placement.before) for step in p.rewrites]
        uses += [(e.placement.owner, e.placement.before) for e in p.evaluations if e.problem is None]
        if not uses:
            return
        owners = {id(owner) for owner, _ in uses}
        before = None
        if len(owners) == 1:
            before = common_point(ctx, [node for _, node in uses], uses[0][0])
        if before is None:
            before = _module_point(ctx, [node for owner, node in uses if isinstance(owner, cst.Module)])
        if before is None:
            return
        lines = self._lines(ctx, p.opts, anchor=before)
        if p.inference_opts is not None:  # accumulation asked for (IPU316): inference gets its own options
            lines += self._lines(ctx, p.inference_opts, training=False)
            ctx.report(self.code, before, f"added `{p.inference_opts} = poptorch.Options()` for inference: "
                       f"`{p.opts}` accumulates gradients, which an inference model cannot use", fixed=True)
        ctx.insert_before(before, lines)
        ctx.add_import("poptorch", code="IPU301")
        replicas = replication_factor(ctx.config)
        extra = f" with `replicationFactor({replicas})`" if replicas > 1 else ""
        ctx.report(self.code, before, f"added `{p.opts} = poptorch.Options()`{extra}", fixed=True)


    @staticmethod
    def _lines(ctx, name, training=True, anchor=None):
        """The options and, right after (options freeze once used), the calls the options ask for:
        replication (IPUs over pipeline stages) here, the speed options under their own codes."""
        lines = [cstutil.statement(f"{name} = poptorch.Options()")]
        replicas = replication_factor(ctx.config)
        if replicas > 1:
            lines.append(cstutil.statement(f"{name}.replicationFactor({replicas})"))
        for rule in _OPTION_RULES:
            call = rule.option_call(ctx.config, training)
            if call is None or not selected(ctx, rule.code):
                continue
            lines.append(option_line(name, call))
            if anchor is not None:
                ctx.report(rule.code, anchor, f"`{name}.{call.method}({call.arguments})`: {call.message}", fixed=True)
        return lines

    def _inference_options(self, ctx, p) -> None:
        """The training options accumulate gradients: inference gets its own options."""
        evaluation = next(e for e in p.evaluations if e.problem is None)
        before = evaluation.placement.before
        ctx.insert_before(before, self._lines(ctx, p.inference_opts, training=False))
        ctx.report(self.code, before, f"added `{p.inference_opts} = poptorch.Options()` for the inference model: "
                   f"`{p.opts}` sets gradient accumulation, which an inference model cannot use", fixed=True)


def _module_point(ctx, module_uses):
    """Module-level options (the uses are in several functions): before the first module-level
    statement that runs code, or before the first module-level use if that comes earlier."""
    body = list(ctx.module.body)
    first = first_code_statement(ctx)
    if first is None:
        return None
    start = body.index(first)
    candidates = [s for s in body[start:] if not isinstance(s, (cst.FunctionDef, cst.ClassDef))][:1]
    candidates += [top_statement(ctx, node, ctx.module) for node in module_uses]
    candidates = [c for c in candidates if c is not None]
    return min(candidates, key=body.index) if candidates else first


RULE = PoptorchOptions()
