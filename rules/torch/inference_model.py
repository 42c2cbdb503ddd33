import libcst as cst

from porter import cstutil
from porter.rule import FIX, TORCH, Example, Rule
from porter.rules.torch._analysis.loop import pass_in, plan
from porter.rules.torch._analysis.util import backward_calls

_BEFORE = '''import torch
import poptorch

opts = poptorch.Options()
model.eval()
correct = 0
with torch.no_grad():
    for images, labels in test_loader:
        output = model(images)
        correct += (output.argmax(dim=1) == labels).sum().item()
'''
_AFTER = '''import torch
import poptorch

opts = poptorch.Options()
model.eval()
correct = 0
inference_model = poptorch.inferenceModel(model.eval(), options=opts)
with torch.no_grad():
    for images, labels in test_loader:
        output = inference_model(images)
        correct += (output.argmax(dim=1) == labels).sum().item()
'''
_PER_EPOCH = '''import torch
import poptorch


def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            out = model(x)


def main():
    opts = poptorch.Options()
    model = Net()
    for epoch in range(5):
        evaluate(model, test_loader)
'''
_PER_EPOCH_AFTER = '''import torch
import poptorch


def evaluate(model, loader, inference_model):
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            out = inference_model(x)


def main():
    opts = poptorch.Options()
    model = Net()
    inference_model = poptorch.inferenceModel(model.eval(), options=opts)
    for epoch in range(5):
        evaluate(model, test_loader, inference_model)
'''


class InferenceModel(Rule):
    code = "IPU306"
    name = "inference-model"
    kind = FIX
    frameworks = frozenset({TORCH})
    # The inference model takes IPU302's options and comes after the training model it shares weights with.
    after = ("IPU302", "IPU305")
    summary = "Run evaluation loops with a `poptorch.inferenceModel`, created once."
    rationale = (
        "On the IPU the model runs through a compiled `poptorch.inferenceModel(model.eval(), options=opts)` "
        "(PopTorch User Guide, \"Model wrapping functions\"). In a `model.eval()` + "
        "`torch.no_grad()`/`inference_mode()` block (or "
        "a `@torch.no_grad()` function), and for a trained model evaluated under `no_grad` after its "
        "training loop, the model calls go to an inference model created once (in the caller, passed in, "
        "when the evaluation is in a function called once per epoch). When the script also trains, the "
        "training model is detached (`detachFromDevice()`) before each evaluation (only once it has run, "
        "when the evaluation can come first, or when it is detached at more than one place) and the inference model after it when training goes on, so "
        "each finds a free IPU (the pattern of Graphcore's PyTorch tutorials). The wrapper keeps the training "
        "flag the model had "
        "when it was wrapped, so the model is wrapped in eval mode (and put back in training mode "
        "when it also trains). The options must have gradient accumulation 1: the "
        "options the porter creates have; options that accumulate get a separate inference `Options()` "
        "(IPU302)."
    )
    examples = (
        Example(_BEFORE, _AFTER),
        Example(_PER_EPOCH, _PER_EPOCH_AFTER),
        Example("""\
            import torch
            import poptorch

            inference_model = poptorch.inferenceModel(model)
            model.eval()
            with torch.no_grad():
                out = inference_model(x)
            """, reported=False),
    )

    def run(self, ctx) -> None:
        p = plan(ctx)
        cpu_training = _trains_on_cpu(ctx, p)
        for evaluation in p.evaluations:
            if evaluation.problem is not None:
                ctx.report(self.code, evaluation.calls[0], evaluation.problem, fixed=False)
                continue
            ctx.add_import("poptorch", code="IPU301")
            name, placement = evaluation.name, evaluation.placement
            for call in evaluation.calls:
                ctx.replace(call.func, cst.Name(name))
            options = f", options={p.inference_opts or p.opts}" if p.opts else ""
            model = placement.values[evaluation.model]
            trained = sorted({release.training for release in evaluation.releases if release.training})
            # The wrapper copies the model's training flag when it is made and never syncs it
            # (PopTorch User Guide, "Model wrapping functions"): wrap the model in eval mode, then
            # put it back for its training.
            creation = [cstutil.statement(f"{name} = poptorch.inferenceModel({model}.eval(){options})")]
            if trained:
                creation.append(cstutil.statement(f"{model}.train()"))
            creations = [] if evaluation.reuses else creation
            for release in evaluation.releases:
                detach = [self._detach(release)] if release.training else []
                if release.site is placement.before:
                    creations = [*detach, *creations]
                elif detach:
                    ctx.insert_before(release.site, detach)
                if release.inference:
                    ctx.insert_after(release.site, [cstutil.statement(f"{name}.detachFromDevice()")])
            if creations:
                ctx.insert_before(placement.before, creations)
            pass_in(ctx, placement, name, name, self.code)
            detach = f"; `{trained[0]}` is detached first" if trained else ""
            fresh = ""
            if cpu_training:
                # The wrapper holds the weights it copied when it compiled: CPU steps since then
                # are not on the device until they are copied (PopTorch User Guide, "trainingModel").
                ctx.insert_before(evaluation.anchor, [cstutil.statement(
                    f"if {name}.isCompiled():\n    {name}.copyWeightsToDevice()\n")])
                fresh = (f"; the model trains on the CPU, so `{name}.copyWeightsToDevice()` gives it the "
                         "current weights before each evaluation")
            shared = _shares_block(p, evaluation)
            ctx.report(self.code, evaluation.calls[0].func,
                       f"`{evaluation.model}(...)` runs as `{name}`, a `poptorch.inferenceModel` created "
                       f"once{detach}{fresh}{shared}", fixed=True)

    @staticmethod
    def _detach(release) -> cst.BaseStatement:
        training = release.training
        if release.guarded:
            return cstutil.statement(f"if {training}.isCompiled() and {training}.isAttachedToDevice():\n"
                                     f"    {training}.detachFromDevice()\n")
        return cstutil.statement(f"{training}.detachFromDevice()")


def _shares_block(p, evaluation) -> str:
    """A note when the same block evaluates other models too: each inference model attaches to
    its own IPU when it first runs (PopTorch User Guide, "Model wrapping functions")."""
    others = [e.name for e in p.evaluations if e.anchor is evaluation.anchor and e is not evaluation
              and e.problem is None]
    if not others:
        return ""
    return (f"; `{others[0]}` runs in the same block and each inference model holds an IPU: run with as many "
            f"IPUs, or call `{evaluation.name}.detachFromDevice()` before the other runs")


def _trains_on_cpu(ctx, p) -> bool:
    """Whether some training step stays on the CPU after the port: a step IPU305 leaves as it is,
    or a ``backward()`` outside every step it rewrites."""
    return any(not step.rewritten for step in p.steps) or len(backward_calls(ctx)) > len(p.rewrites)


RULE = InferenceModel()
