import libcst as cst

from porter.rule import TORCH, WARN, Example, Rule
from porter.rules.torch._analysis.util import in_dead_cuda_branch, qualified

_WRAPPERS = {"torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.DistributedDataParallel",
             "torch.nn.parallel.data_parallel.DataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"}


class WarnDistributed(Rule):
    code = "IPU310"
    name = "torch-distributed"
    kind = WARN
    frameworks = frozenset({TORCH})
    summary = "Report `DataParallel`, `DistributedDataParallel` and `torch.distributed`."
    rationale = (
        "PopTorch replicates a model over IPUs itself: `opts.replicationFactor(n)` is the single-host "
        "equivalent of `torch.nn.DataParallel`; several hosts use PopRun/PopDist. CUDA data parallelism and "
        "process groups must be removed by hand (`--ipus N` sets the "
        "replication factor)."
    )
    examples = (
        Example("""\
            import torch

            model = torch.nn.DataParallel(model)
            """),
        Example("""\
            import torch.distributed as dist

            dist.init_process_group('nccl')
            """),
        Example("""\
            import torch

            model = torch.nn.Linear(2, 2)
            """, reported=False),
        Example("""\
            import torch

            if torch.cuda.device_count() > 1:
                model = torch.nn.DataParallel(model)
            """,
                reported=False),
    )

    def run(self, ctx) -> None:
        for call in ctx.nodes(cst.Call):
            full = qualified(ctx, call.func) or ""
            if (full in _WRAPPERS or full.startswith("torch.distributed.")) and in_dead_cuda_branch(ctx, call):
                continue
            if full in _WRAPPERS:
                ctx.report(self.code, call, f"`{full.rsplit('.', 1)[-1]}` does not run on the IPU: remove it and "
                           "replicate with `opts.replicationFactor(n)` (`--ipus N`)", fixed=False)
            elif full.startswith("torch.distributed."):
                ctx.report(self.code, call, f"`{full}` (CUDA/NCCL process groups): use "
                           "`opts.replicationFactor(n)` on one host, PopRun/PopDist across hosts", fixed=False)


RULE = WarnDistributed()
