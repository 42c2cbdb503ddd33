import libcst as cst

from porter.cstutil import statement
from porter.rule import FIX, TORCH, Example, Rule
from porter.rules.torch._analysis.speed import OptionCall, add_to_existing, block_plan
from porter.rules.torch.poptorch_import import PoptorchImport

_BEFORE = '''import poptorch
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 512)
        self.fc2 = nn.Linear(512, 256)
        self.fc3 = nn.Linear(256, 10)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
opts = poptorch.Options()
training_model = poptorch.trainingModel(model, opts, optimizer)
'''
_AFTER = _BEFORE.replace("model = Net()\n", "model = Net()\npoptorch.BeginBlock(model.fc1, ipu_id=0)\n"
                         "poptorch.BeginBlock(model.fc2, ipu_id=1)\n").replace(
    "opts = poptorch.Options()\n", "opts = poptorch.Options()\nopts.Training.gradientAccumulation(8)\n")
_PIPELINED = {"ipus": 4, "pipeline_stages": 2, "gradient_accumulation": 8}


class PoptorchPipelining(Rule):
    code = "IPU316"
    name = "poptorch-pipelining"
    kind = FIX
    frameworks = frozenset({TORCH})
    summary = ("`--pipeline-stages S`: split the trained model into S stages with `poptorch.BeginBlock`; "
               "`--gradient-accumulation G`: `opts.Training.gradientAccumulation(G)`.")
    rationale = (
        "A model too big for one IPU, or one that is faster spread out, is pipelined: its submodules form "
        "S stages on S IPUs that work on different batches at once. `poptorch.BeginBlock(submodule, "
        "ipu_id=i)` marks where each stage begins, in the order `forward` runs the submodules (PopTorch "
        "User Guide, sections \"poptorch.BeginBlock\" and \"Pipelined execution\"). The port annotates the submodules of the model whose parameters the optimizer "
        "trains, in the order `forward` first calls them, with contiguous stages balanced by the "
        "parameters of `nn.Linear`, `nn.Conv2d`... when their sizes are literals (else by count); a model "
        "that cannot be split statically (not a class of this file, fewer submodules than stages) is "
        "reported. A pipelined training model needs gradient accumulation over at least as many batches "
        "as it has stages, and a pipelined inference model as many device iterations (same section): "
        "`--gradient-accumulation G` sets `opts.Training.gradientAccumulation(G)` on the training options "
        "only, since an inference model refuses accumulation (PopTorch User Guide, \"Efficient data "
        "batching\", section \"poptorch.Options.Training.gradientAccumulation\"), and an inference model "
        "with fewer device iterations than stages is reported. The Keras counterpart is IPU110."
    )
    examples = (
        Example(_BEFORE, _AFTER, options=_PIPELINED),
        Example(
            "import poptorch\nimport torch\n\nmodel = torch.load(\"net.pt\")\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n",
            options=_PIPELINED,
        ),
        Example(_AFTER, reported=False, options=_PIPELINED),
        Example(_BEFORE, reported=False),
    )

    def run(self, ctx) -> None:
        stages = ctx.config.pipeline_stages
        if not stages and not ctx.config.gradient_accumulation:
            return
        add_to_existing(ctx, self)  # options IPU302 creates get the accumulation there
        if stages:
            self._split(ctx, stages)

    @staticmethod
    def option_call(config, training: bool):
        accumulation = config.gradient_accumulation
        if not (training and accumulation):
            return None
        return OptionCall("Training.gradientAccumulation", str(accumulation),
                          f"gradients accumulated over {accumulation} batches")

    def _split(self, ctx, stages: int) -> None:
        plan, problem = block_plan(ctx, stages)
        if problem is not None:
            ctx.report(self.code, ctx.module, problem, fixed=False)
        if plan is None:
            return
        if (ctx.config.device_iterations or 1) < stages and any(
                ctx.qualified_name(call.func) == "torch.no_grad" or (isinstance(call.func, cst.Attribute)
                                                                      and call.func.attr.value == "eval")
                for call in ctx.nodes(cst.Call)):
            ctx.report(self.code, plan.anchor, f"a pipelined inference model needs at least {stages} device "
                       f"iterations, one per stage (PopTorch User Guide, \"Pipelined execution\"): port with "
                       f"`--device-iterations {stages}` or "
                       "more, or give the inference options `deviceIterations`", fixed=False)
        lines = [statement(f"poptorch.BeginBlock({plan.model}.{attribute}, ipu_id={stage})")
                 for attribute, stage in plan.starts]
        ctx.insert_after(plan.anchor, lines)
        ctx.add_import("poptorch", code=PoptorchImport.code)
        sizes = ", ".join(map(str, plan.counts))
        detail = (f" ({', '.join(f'{total:,}' for total in plan.parameters)} parameters)" if plan.parameters
                  else " (balanced by count: the parameter counts could not be read)")
        ctx.report(self.code, plan.anchor, f"`{plan.model}` split into {stages} pipeline stages of {sizes} "
                   f"submodules{detail} with `poptorch.BeginBlock`", fixed=True)


RULE = PoptorchPipelining()
