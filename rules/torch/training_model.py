from typing import List

import libcst as cst

from porter import cstutil
from porter.rule import FIX, TORCH, Example, Rule
from porter.rules.torch._analysis.loop import TrainStep, pass_in, plan
from porter.context import code_of
from porter.statements import insert_module_class, remove_statement, rename
from porter.cstutil import simple_assign
from porter.scopes import loads, top_statement
from porter.rules.torch._analysis.util import (
    asked_accumulation, asked_device_iterations, autocast_block, nn_module_spelling, strip_devices, tensor_variables,
)

_BEFORE = '''import torch
import torch.nn as nn
import poptorch

model = nn.Linear(10, 2)
criterion = nn.CrossEntropyLoss()
opts = poptorch.Options()
loader = poptorch.DataLoader(opts, dataset, batch_size=16)
optimizer = poptorch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(3):
    for x, y in loader:
        optimizer.zero_grad()
        out = model(x)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()
        print(loss.item())
'''

_AFTER = '''import torch
import torch.nn as nn
import poptorch


class TrainingModelWithLoss(nn.Module):
    """`model` with the loss computed in `forward`, as `poptorch.trainingModel` needs."""

    def __init__(self, model, criterion):
        super().__init__()
        self.model = model
        self.criterion = criterion

    def forward(self, x, y):
        out = self.model(x)
        loss = self.criterion(out, y)
        return out, loss


model = nn.Linear(10, 2)
criterion = nn.CrossEntropyLoss()
opts = poptorch.Options()
loader = poptorch.DataLoader(opts, dataset, batch_size=16)
optimizer = poptorch.optim.SGD(model.parameters(), lr=0.1)

training_model = poptorch.trainingModel(
    TrainingModelWithLoss(model, criterion), options=opts, optimizer=optimizer
)
for epoch in range(3):
    for x, y in loader:
        out, loss = training_model(x, y)
        print(loss.item())
'''

_PER_EPOCH = '''import torch
import torch.nn.functional as F
import poptorch


def train(model, loader, optimizer, epoch):
    model.train()
    for data, target in loader:
        output = model(data)
        loss = F.nll_loss(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main():
    model = Net()
    opts = poptorch.Options()
    loader = poptorch.DataLoader(opts, dataset, batch_size=64)
    optimizer = poptorch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(1, 11):
        train(model, loader, optimizer, epoch)
'''

_PER_EPOCH_AFTER = '''import torch
import torch.nn.functional as F
import poptorch


class TrainingModelWithLoss(torch.nn.Module):
    """`model` with the loss computed in `forward`, as `poptorch.trainingModel` needs."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, data, target):
        output = self.model(data)
        loss = F.nll_loss(output, target)
        return output, loss


def train(model, loader, optimizer, epoch, training_model):
    model.train()
    for data, target in loader:
        output, loss = training_model(data, target)


def main():
    model = Net()
    opts = poptorch.Options()
    loader = poptorch.DataLoader(opts, dataset, batch_size=64)
    optimizer = poptorch.optim.Adam(model.parameters(), lr=1e-3)
    training_model = poptorch.trainingModel(
        TrainingModelWithLoss(model), options=opts, optimizer=optimizer
    )
    for epoch in range(1, 11):
        train(model, loader, optimizer, epoch, training_model)
'''

_CLIPPED = '''import torch

for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
'''

# The clip takes the parameters the optimizer is built from, by the L2 norm: PopTorch's optimizer
# does it, with `max_grad_norm` (IPU304 makes a `torch.optim` optimizer a `poptorch.optim` one).
_CLIPPED_BY_NORM = '''import torch
import torch.nn as nn
import poptorch

MAX_NORM = 1.0
model = nn.Linear(8, 2)
criterion = nn.CrossEntropyLoss()
optimizer = poptorch.optim.Adam(model.parameters(), lr=1e-3)
for x, y in loader:
    optimizer.zero_grad()
    out = model(x)
    loss = criterion(out, y)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
    optimizer.step()
'''

_CLIPPED_BY_NORM_AFTER = '''import torch
import torch.nn as nn
import poptorch


class TrainingModelWithLoss(nn.Module):
    """`model` with the loss computed in `forward`, as `poptorch.trainingModel` needs."""

    def __init__(self, model, criterion):
        super().__init__()
        self.model = model
        self.criterion = criterion

    def forward(self, x, y):
        out = self.model(x)
        loss = self.criterion(out, y)
        return out, loss


MAX_NORM = 1.0
model = nn.Linear(8, 2)
criterion = nn.CrossEntropyLoss()
optimizer = poptorch.optim.Adam(model.parameters(), lr=1e-3, max_grad_norm=MAX_NORM)
training_model = poptorch.trainingModel(
    TrainingModelWithLoss(model, criterion), optimizer=optimizer
)
for x, y in loader:
    out, loss = training_model(x, y)
'''

# PopTorch clips by the L2 norm only.
_CLIPPED_BY_INF_NORM = _CLIPPED_BY_NORM.replace("MAX_NORM)", "MAX_NORM, norm_type=float('inf'))")
# The optimizer is created before its max_norm is known: it cannot take it.
_CLIPPED_BY_LATE_NORM = _CLIPPED_BY_NORM.replace("MAX_NORM = 1.0\n", "").replace("for x", "MAX_NORM = 1.0\nfor x")

_TWO_LOSSES = '''import torch

for real in loader:
    optimizer_d.zero_grad()
    loss_d = criterion(disc(real), ones)
    loss_d.backward()
    optimizer_d.step()
    optimizer_g.zero_grad()
    loss_g = criterion(disc(gen(noise)), ones)
    loss_g.backward()
    optimizer_g.step()
'''

_ENGINE = '''import torch
import deepspeed

engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters())
for x, y in loader:
    loss = engine(x, y)
    engine.backward(loss)
    engine.step()
'''

_PORTED = '''import torch
import poptorch

training_model = poptorch.trainingModel(TrainingModelWithLoss(model), options=opts, optimizer=optimizer)
for x, y in loader:
    out, loss = training_model(x, y)
'''


# A target shifted on the host and a model returning (output, state): the shift stays on the host,
# before the call, as one more input; a metric on the output stays after it.
_SHIFTED = '''import torch
import torch.nn as nn
import poptorch

opts = poptorch.Options()
loader = poptorch.DataLoader(opts, dataset, batch_size=16)
optimizer = poptorch.optim.Adam(model.parameters(), lr=1e-3)

for epoch in range(3):
    for src, tgt in loader:
        tgt_input = tgt[:, :-1]
        optimizer.zero_grad()
        logits, hidden = model(src, tgt_input)
        _, preds = torch.max(logits, -1)
        tgt_out = tgt[:, 1:]
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
        loss.backward()
        optimizer.step()
        print((preds == tgt_out).float().mean().item())
'''

_SHIFTED_AFTER = '''import torch
import torch.nn as nn
import poptorch


class TrainingModelWithLoss(nn.Module):
    """`model` with the loss computed in `forward`, as `poptorch.trainingModel` needs."""

    def __init__(self, model, loss_fn):
        super().__init__()
        self.model = model
        self.loss_fn = loss_fn

    def forward(self, src, tgt_input, tgt_out):
        logits, hidden = self.model(src, tgt_input)
        loss = self.loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
        return logits, hidden, loss


opts = poptorch.Options()
loader = poptorch.DataLoader(opts, dataset, batch_size=16)
optimizer = poptorch.optim.Adam(model.parameters(), lr=1e-3)

training_model = poptorch.trainingModel(
    TrainingModelWithLoss(model, loss_fn), options=opts, optimizer=optimizer
)
for epoch in range(3):
    for src, tgt in loader:
        tgt_input = tgt[:, :-1]
        tgt_out = tgt[:, 1:]
        logits, hidden, loss = training_model(src, tgt_input, tgt_out)
        _, preds = torch.max(logits, -1)
        print((preds == tgt_out).float().mean().item())
'''

# A loss scaled after it is computed (`loss / accum_steps`) is scaled in the wrapper too.
_SCALED = '''import torch
import torch.nn.functional as F
import poptorch

model.train()
for x, y in loader:
    output = model(x)
    loss = F.nll_loss(output, y)
    loss = loss / accum_steps
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
'''

_SCALED_AFTER = '''import torch
import torch.nn.functional as F
import poptorch


class TrainingModelWithLoss(torch.nn.Module):
    """`model` with the loss computed in `forward`, as `poptorch.trainingModel` needs."""

    def __init__(self, model, accum_steps):
        super().__init__()
        self.model = model
        self.accum_steps = accum_steps

    def forward(self, x, y):
        output = self.model(x)
        loss = F.nll_loss(output, y)
        loss = loss / self.accum_steps
        return output, loss


model.train()
training_model = poptorch.trainingModel(
    TrainingModelWithLoss(model, accum_steps), optimizer=optimizer
)
for x, y in loader:
    output, loss = training_model(x, y)
'''

_READ_AFTER = '''import torch

model.train()
for x, y in loader:
    optimizer.zero_grad()
    out = model(x)
    probs = out.softmax(-1)
    loss = criterion(probs.log(), y)
    loss.backward()
    optimizer.step()
    print(probs.max())
'''

# Four micro-batches per call: the training model returns the output of the last one only, so the
# metric that compares it with the whole batch is reported.
_LAST_MICRO_BATCH, _LAST_MICRO_BATCH_AFTER = (
    text.replace("opts = poptorch.Options()\n", "opts = poptorch.Options()\nopts.deviceIterations(4)\n")
    .replace("print(loss.item())", "print(loss.item(), (out.argmax(1) == y).sum().item())")
    for text in (_BEFORE, _AFTER))

# The call right before the loss is of another variable (`weights_fn`), not of the model: the model
# call is the one further up; the weights, read from the batch alone, stay on the host as an input.
_OTHER_CALL = '''import torch
import torch.nn.functional as F
import poptorch

model.train()
for x, y in loader:
    optimizer.zero_grad()
    logits = model(x)
    w = weights_fn(y)
    loss = (F.cross_entropy(logits, y, reduction="none") * w).mean()
    loss.backward()
    optimizer.step()
'''

_OTHER_CALL_AFTER = '''import torch
import torch.nn.functional as F
import poptorch


class TrainingModelWithLoss(torch.nn.Module):
    """`model` with the loss computed in `forward`, as `poptorch.trainingModel` needs."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x, y, w):
        logits = self.model(x)
        loss = (F.cross_entropy(logits, y, reduction="none") * w).mean()
        return logits, loss


model.train()
training_model = poptorch.trainingModel(TrainingModelWithLoss(model), optimizer=optimizer)
for x, y in loader:
    w = weights_fn(y)
    logits, loss = training_model(x, y, w)
'''

# A frozen feature extractor runs before the model the optimizer trains (`head`, called in the loss):
# it stays on the host, and `head` is wrapped, not `backbone`.
_FROZEN_BACKBONE = '''import torch
import poptorch

optimizer = poptorch.optim.Adam(head.parameters(), lr=1e-3)
for x, y in loader:
    optimizer.zero_grad()
    feats = backbone(x)
    loss = criterion(head(feats), y)
    loss.backward()
    optimizer.step()
'''

_FROZEN_BACKBONE_AFTER = '''import torch
import poptorch


class TrainingModelWithLoss(torch.nn.Module):
    """`head` with the loss computed in `forward`, as `poptorch.trainingModel` needs."""

    def __init__(self, head, criterion):
        super().__init__()
        self.head = head
        self.criterion = criterion

    def forward(self, feats, y):
        loss = self.criterion(self.head(feats), y)
        return loss


optimizer = poptorch.optim.Adam(head.parameters(), lr=1e-3)
training_model = poptorch.trainingModel(
    TrainingModelWithLoss(head, criterion), optimizer=optimizer
)
for x, y in loader:
    feats = backbone(x)
    loss = training_model(feats, y)
'''

# The model (`net.train()`) is called only inside another call, right before the loss: reported,
# not guessed (`scale_fn` is not the model).
_NO_KNOWN_MODEL = '''import torch


def fit(net, loader, opt, criterion, scale_fn):
    net.train()
    for x, y in loader:
        opt.zero_grad()
        out = scale_fn(net(x))
        loss = criterion(out, y)
        loss.backward()
        opt.step()
'''

# A comment right above removed statements goes with them when their whole paragraph goes
# (`# Step weights`); one above a paragraph that keeps a statement stays (`# Reset the gradients`).
_COMMENTED = '''import torch
import torch.nn.functional as F
import poptorch

model.train()
for x, y in loader:
    # Reset the gradients
    optimizer.zero_grad()
    output = model(x)
    # Loss and its gradients
    loss = F.nll_loss(output, y)
    loss.backward()

    # Step weights
    optimizer.step()
    # Log the loss
    print(loss.item())
'''

_COMMENTED_AFTER = '''import torch
import torch.nn.functional as F
import poptorch


class TrainingModelWithLoss(torch.nn.Module):
    """`model` with the loss computed in `forward`, as `poptorch.trainingModel` needs."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x, y):
        output = self.model(x)
        loss = F.nll_loss(output, y)
        return output, loss


model.train()
training_model = poptorch.trainingModel(TrainingModelWithLoss(model), optimizer=optimizer)
for x, y in loader:
    # Reset the gradients
    output, loss = training_model(x, y)

    # Log the loss
    print(loss.item())
'''


class TrainingModel(Rule):
    code = "IPU305"
    name = "training-model"
    kind = FIX
    frameworks = frozenset({TORCH})
    # The training model takes the options IPU302 creates, in front of the same statement.
    after = ("IPU302",)
    summary = "Run the training step with `poptorch.trainingModel`, the loss computed in `forward`."
    rationale = (
        "PopTorch runs forward, backward and the optimizer step as one compiled program: the wrapped "
        "module's `forward` must compute and return the loss, and `loss.backward()`, `optimizer.step()` "
        "and `zero_grad()` go (PopTorch User Guide, \"From PyTorch to PopTorch\"). The standard step becomes "
        "a "
        "wrapper module returning `(output, loss)`, a `poptorch.trainingModel(wrapper, options=opts, "
        "optimizer=optimizer)` created once (in the caller when the loop is in a function called once per "
        "epoch, passed in as a parameter, so no epoch recompiles), and `output, loss = training_model(x, "
        "y)` in the loop. Statements between the model call and the loss go with the loss when they read "
        "the model or its output, stay on the host before the call (one more input) when they do not "
        "(`tgt_out = tgt[1:]`), and stay after it when the loss does not read them (metrics); a model "
        "returning a tuple (`output, hidden = model(x, hidden)`) returns it from the wrapper too. The AMP "
        "form (`autocast` + `GradScaler`, see IPU309) is recognised too. Clipping by the L2 norm between "
        "`backward()` and `step()`, `clip_grad_norm_(model.parameters(), max_norm)` of the parameters the "
        "optimizer is built from, becomes the optimizer's `max_grad_norm=max_norm` (`poptorch.optim`, "
        "PopTorch User Guide, \"Optimizers\"), which clips the gradients inside the training step. Other code "
        "between `backward()` and `step()` (clipping by value or of other parameters, `.grad` inspection), "
        "several backward passes in one loop (GANs), gradient accumulation by hand and training engines "
        "(DeepSpeed's `engine.backward(loss)`; `engine.step()`) are not rewritten but reported; "
        "`accelerator.backward(loss)` is `loss.backward()`. A training model that runs several micro-batches "
        "per call (device iterations, gradient accumulation) returns the output of the last one only "
        "(`OutputMode.Final`, PopTorch User Guide, \"Efficient data batching\"): a read of the output "
        "after the call, such as a training accuracy against the whole batch, is reported."
    )
    examples = (
        # The loss has no name: the porter cannot move it into the model's `forward`, and says why.
        Example(
            """\
            import torch


            def train(model, loader, optimizer, criterion):
                for images, labels in loader:
                    optimizer.zero_grad()
                    criterion(model(images), labels).backward()
                    optimizer.step()
            """,
        ),
        # No model in sight (no `.parameters()`, `.train()`...): the call right before the loss may
        # be a head on the model's output, so none is taken for the model; reported.
        Example(
            """\
            import torch.nn.functional as F


            def train(net, loader, optimizer, head):
                for images, labels in loader:
                    optimizer.zero_grad()
                    features = net(images)
                    logits = head(features)
                    loss = F.cross_entropy(logits, labels)
                    loss.backward()
                    optimizer.step()
            """,
        ),
        Example(_BEFORE, _AFTER),
        Example(_PER_EPOCH, _PER_EPOCH_AFTER),
        Example(_SHIFTED, _SHIFTED_AFTER),
        Example(_SCALED, _SCALED_AFTER),
        Example(_OTHER_CALL, _OTHER_CALL_AFTER),
        Example(_FROZEN_BACKBONE, _FROZEN_BACKBONE_AFTER),
        Example(_NO_KNOWN_MODEL, reported=True),
        Example(_COMMENTED, _COMMENTED_AFTER),
        # `probs` feeds the loss from the output and is read later: it cannot hide in the wrapper.
        Example(_READ_AFTER, reported=True),
        Example(_LAST_MICRO_BATCH, _LAST_MICRO_BATCH_AFTER, options={"device_iterations": 4}),
        Example(_CLIPPED, reported=True),
        Example(_CLIPPED_BY_NORM, _CLIPPED_BY_NORM_AFTER),
        Example(_CLIPPED_BY_INF_NORM, reported=True),
        Example(_CLIPPED_BY_LATE_NORM, reported=True),
        Example(_TWO_LOSSES, reported=True),
        Example(_ENGINE, reported=True),
        Example(_PORTED, reported=False),
    )

    def run(self, ctx) -> None:
        p = plan(ctx)
        for step in p.steps:
            if step.problem is not None:
                ctx.report(self.code, step.problem_anchor, step.problem, fixed=False)
                continue
            self._rewrite(ctx, step, p.opts)

    def _rewrite(self, ctx, step: TrainStep, opts) -> None:
        ctx.add_import("poptorch", code="IPU301")
        placement = step.placement
        # The loop: one call of the training model.
        targets = f"{step.output}, {step.loss_name}" if step.output else step.loss_name
        anchor = step.autocast or step.forward or step.loss
        inputs = ", ".join(step.inputs)
        if step.self_loss:
            target, call = simple_assign(step.loss)
            targets = code_of(ctx, target)
            inputs = code_of(ctx, strip_devices(ctx, call).with_changes(func=cst.Name("f")))[2:-1]
        line = cstutil.statement(f"{targets} = {step.name}({inputs})")
        ctx.replace(anchor, line.with_changes(leading_lines=anchor.leading_lines))
        if step.hoisted:
            # the blank lines above the model call stay above the first statement moved there
            ctx.move_before(anchor, step.hoisted, lambda moved: [
                s.with_changes(leading_lines=[line for line in s.leading_lines if line.comment]) for s in moved])
        removed = [s for s in (*step.between, step.loss, step.backward, step.clip_statement, *step.unscales, step.step,
                               step.update, *step.zero_grads)
                   if s is not None and s is not anchor and (step.autocast is None or s is not step.loss)]
        remove_statement(ctx, *removed, *_emptied_autocast_blocks(ctx, removed), own_comments=True)
        # The training model, created once.
        values = placement.values
        args = ", ".join(values[name] for name in [step.model, *step.captured])
        options = f", options={opts}" if opts else ""
        wrapped = values[step.model] if step.self_loss else f"{step.wrapper}({args})"
        arguments = f"{wrapped}{options}, optimizer={values[step.optimizer]}"
        indent = ctx.module.default_indent
        depth = sum(isinstance(a, cst.IndentedBlock) for a in ctx.ancestors(placement.before))
        if len(indent) * depth + len(step.name) + len(arguments) + 27 > 99:
            arguments = f"\n{indent}{arguments}\n"  # continuation lines are relative to the block
        creation = cstutil.statement(f"{step.name} = poptorch.trainingModel({arguments})")
        ctx.insert_before(placement.before, [creation])
        pass_in(ctx, placement, step.name, step.name, self.code)
        where = "passed to `{}()`".format(placement.function.name.value) if placement.function else "created once"
        if step.self_loss:
            ctx.report(self.code, step.backward, f"the training step runs as `{step.name}({inputs})`: "
                       f"`poptorch.trainingModel` ({where}); `{step.model}.forward` computes the loss", fixed=True)
            return
        # The wrapper module, next to the model classes.
        self._insert_wrapper(ctx, step)
        if step.clip_creation is not None:
            self._clip_in_optimizer(ctx, step)
        ctx.report(self.code, step.backward, f"the training step runs as `{step.name}({inputs})`: "
                   f"`poptorch.trainingModel` ({where}) with the loss computed in `{step.wrapper}.forward`",
                   fixed=True)
        self._report_last_micro_batch(ctx, step)

    def _report_last_micro_batch(self, ctx, step: TrainStep) -> None:
        """A training model that runs several micro-batches per call returns the output of the last one
        only (`OutputMode.Final`): a metric that compares it with the whole batch no longer lines up."""
        per_call = _micro_batches_per_call(ctx)
        use = _output_read_after(ctx, step) if per_call > 1 else None
        if use is None:
            return
        ctx.report(self.code, use, f"`{step.output}` holds the output of the last micro-batch only: "
                   f"`{step.name}` runs {per_call} micro-batches per call and returns the last one "
                   "(`poptorch.OutputMode.Final`), while the batch holds all of them; compare it with the "
                   f"last micro-batch (`{step.inputs[-1]}[-len({step.output}):]`), or set "
                   "`outputMode(poptorch.OutputMode.All)` on the options and reduce the loss, now one per "
                   "micro-batch, with `.mean()`", fixed=False)

    def _clip_in_optimizer(self, ctx, step: TrainStep) -> None:
        """PopTorch runs backward and step in one call: the optimizer clips the gradients."""
        norm = cstutil.keyword_arg("max_grad_norm", cstutil.expression(step.clip_norm))
        ctx.replace(step.clip_creation, lambda creation: cstutil.append_args(creation, norm))
        ctx.report(self.code, step.clip_statement, "`clip_grad_norm_` between `backward()` and `step()` becomes "
                   f"`max_grad_norm={step.clip_norm}` of the optimizer: PopTorch clips the gradients in the "
                   "training step", fixed=True)

    def _insert_wrapper(self, ctx, step: TrainStep) -> None:
        mapping = {name: f"self.{name}" for name in [step.model, *step.captured]}
        lines = []
        for statement in (step.forward, *step.between, step.loss):
            if statement is None:
                continue
            statement = rename(strip_devices(ctx, statement), mapping)
            statement = statement.with_changes(leading_lines=(), trailing_whitespace=cst.TrailingWhitespace())
            lines.append(cst.Module(body=[statement]).code.rstrip("\n"))
        returned = f"{step.output}, {step.loss_name}" if step.output else step.loss_name
        indent = ctx.module.default_indent
        body = "\n".join(f"{indent * 2}{line}" for text in lines for line in text.splitlines())
        tensors = tensor_variables(ctx, step.placement.owner)
        init = "".join(
            f'{indent * 2}self.register_buffer("{name}", {name})\n' if name in tensors
            else f"{indent * 2}self.{name} = {name}\n"
            for name in [step.model, *step.captured])
        code = (
            f"class {step.wrapper}({nn_module_spelling(ctx)}):\n"
            f'{indent}"""`{step.model}` with the loss computed in `forward`, as `poptorch.trainingModel` needs."""\n\n'
            f"{indent}def __init__(self, {', '.join([step.model, *step.captured])}):\n"
            f"{indent * 2}super().__init__()\n{init}\n"
            f"{indent}def forward(self, {', '.join(step.inputs)}):\n{body}\n"
            f"{indent * 2}return {returned}\n"
        )
        wrapper = cstutil.statements(code)[0]
        insert_module_class(ctx, wrapper, top_statement(ctx, step.placement.before, ctx.module))


def _micro_batches_per_call(ctx) -> int:
    """The micro-batches one call of a training model runs: device iterations x gradient accumulation,
    as the options of the port set them (PopTorch User Guide, "Efficient data batching")."""
    return asked_device_iterations(ctx) * asked_accumulation(ctx)


def _output_read_after(ctx, step: TrainStep):
    """The first read of the step's model output that stays on the host, in the loop of the step."""
    anchor = step.forward
    loop = next((a for a in ctx.ancestors(anchor) if isinstance(a, (cst.For, cst.While))), None) \
        if step.output and anchor is not None else None
    if loop is None:
        return None
    moved = {id(statement) for statement in (step.forward, *step.between, step.loss) if statement is not None}
    for name in loads(loop.body):
        if name.value == step.output and not any(id(a) in moved for a in ctx.ancestors(name)):
            return name
    return None


def _emptied_autocast_blocks(ctx, removed) -> List[cst.With]:
    """The autocast-only ``with`` blocks (IPU309 unwraps them) all of whose statements go: they go
    too, rather than leave a ``pass`` behind."""
    gone = {id(statement) for statement in removed}
    blocks = {id(block): block for block in (ctx.parent(ctx.block_of(statement)) for statement in removed)
              if autocast_block(ctx, block)}
    return [block for block in blocks.values() if all(id(inner) in gone for inner in block.body.body)]


RULE = TrainingModel()
