"""The PyTorch loop analysis (porter.rules.torch._analysis.loop.plan), directly: what it finds
for a training loop, an evaluation loop, and a training loop in a function called once per
epoch, before any rule rewrites them."""

import textwrap

import libcst as cst

from porter.config import Config
from porter.context import FileContext, code_of
from porter.rules.torch._analysis.loop import model_names, plan


def context(source: str, **options) -> FileContext:
    return FileContext(cst.parse_module(textwrap.dedent(source)), Config(**options))


def text(ctx: FileContext, node: cst.CSTNode) -> str:
    """The code of ``node`` without its indentation and leading blank lines."""
    return code_of(ctx, node).strip()


MODULE_LOOP = """\
import torch
import torch.nn.functional as F

model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for images, labels in loader:
    optimizer.zero_grad()
    output = model(images)
    loss = F.nll_loss(output, labels, weight=class_weights)
    loss.backward()
    optimizer.step()
print("done")
"""


def test_training_loop_gives_one_step_with_its_parts():
    ctx = context(MODULE_LOOP)
    result = plan(ctx)
    assert len(result.steps) == 1
    step = result.steps[0]
    assert step.problem is None and step.rewritten
    assert (step.model, step.optimizer, step.output, step.loss_name) == ("model", "optimizer", "output", "loss")
    assert text(ctx, step.forward) == "output = model(images)"
    assert text(ctx, step.loss) == "loss = F.nll_loss(output, labels, weight=class_weights)"
    assert text(ctx, step.backward) == "loss.backward()"
    assert text(ctx, step.step) == "optimizer.step()"
    assert [text(ctx, statement) for statement in step.zero_grads] == ["optimizer.zero_grad()"]
    # per batch: the loop's variables; captured: what the loss reads from outside the loop
    assert step.inputs == ["images", "labels"]
    assert step.captured == ["class_weights"]
    assert (step.scaler, step.autocast, step.clip, step.self_loss) == (None, None, False, False)
    assert (step.name, step.wrapper) == ("training_model", "TrainingModelWithLoss")
    # the training model is created once, at module level, right before the loop
    placement = step.placement
    assert placement.owner is ctx.module
    assert placement.before is ctx.nodes(cst.For)[0]
    assert placement.values == {"model": "model", "optimizer": "optimizer", "class_weights": "class_weights"}
    assert (placement.function, placement.calls) == (None, [])
    assert result.evaluations == []
    assert (result.opts, result.opts_exists, result.inference_opts) == ("opts", False, None)
    assert model_names(ctx) == {"model"}


UNSEEN_MODEL = """\
import torch.nn.functional as F


def train(net, loader, optimizer):
    for images, labels in loader:
        images = images.float()
        optimizer.zero_grad()
        features = net(images)
        logits = head(features)
        loss = F.cross_entropy(logits, labels)
        loss.backward()
        optimizer.step()
"""


def test_with_no_model_in_sight_the_call_before_the_loss_is_the_model_unless_it_reads_a_network_output():
    # `images.float()` is still the batch: `net(images)` is taken for the model.
    cast_only = UNSEEN_MODEL.replace("        features = net(images)\n        logits = head(features)\n",
                                     "        logits = net(images)\n")
    assert [step.model for step in plan(context(cast_only)).steps] == ["net"]
    # `head(features)` reads what the network `net` made: a head on the model's output, not the model.
    assert [(step.model, step.problem is None) for step in plan(context(UNSEEN_MODEL)).steps] == [("", False)]


def test_generated_names_avoid_the_names_the_file_uses():
    ctx = context(MODULE_LOOP.replace('print("done")', "training_model = opts = None"))
    result = plan(ctx)
    assert result.steps[0].name == "training_model2"
    assert result.opts == "opts2"


def test_a_step_with_code_between_backward_and_step_is_left_with_a_reason():
    ctx = context(MODULE_LOOP.replace(
        "    optimizer.step()", "    torch.nn.utils.clip_grad_value_(model.parameters(), 1.0)\n    optimizer.step()"))
    step = plan(ctx).steps[0]
    assert not step.rewritten
    assert step.clip
    assert text(ctx, step.problem_anchor) == "torch.nn.utils.clip_grad_value_(model.parameters(), 1.0)"
    assert step.problem == (
        "code between `backward()` and `step()` (`torch.nn.utils.clip_grad_value_(model.parameters(), 1.0)`) "
        "cannot run inside `poptorch.trainingModel`: the step is left as it is; move the loss into the "
        "model's `forward` and use `poptorch.trainingModel` by hand. `poptorch.optim` optimizers take "
        "`max_grad_norm=` for gradient clipping by norm.")


def test_a_clip_by_norm_of_the_trained_parameters_moves_into_the_optimizer():
    ctx = context(MODULE_LOOP.replace(
        "    optimizer.step()", "    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n    optimizer.step()"))
    step = plan(ctx).steps[0]
    assert step.rewritten
    assert step.clip_norm == "1.0"
    assert text(ctx, step.clip_creation) == "torch.optim.SGD(model.parameters(), lr=0.1)"


def test_a_clip_by_norm_of_other_parameters_is_left_with_a_reason():
    ctx = context(MODULE_LOOP.replace(
        "    optimizer.step()", "    torch.nn.utils.clip_grad_norm_(head.parameters(), 1.0)\n    optimizer.step()"))
    step = plan(ctx).steps[0]
    assert not step.rewritten
    assert "(it clips other parameters than `model`'s)" in step.problem


def test_a_step_without_selected_ipu305_is_found_but_not_rewritten():
    ctx = context(MODULE_LOOP, ignore=("IPU305",))
    step = plan(ctx).steps[0]
    assert step.problem is None
    assert not step.selected and not step.rewritten
    assert step.name == ""
    assert plan(ctx).rewrites == []


EVALUATION = """\
import torch

model = load_model()
model.eval()
total = 0
with torch.no_grad():
    for images, labels in loader:
        scores = model(images)
        total += (scores.argmax(1) == labels).sum().item()
"""


def test_evaluation_loop_gives_an_inference_model_created_before_it():
    ctx = context(EVALUATION)
    result = plan(ctx)
    assert result.steps == []
    assert len(result.evaluations) == 1
    evaluation = result.evaluations[0]
    with_statement = ctx.nodes(cst.With)[0]
    assert evaluation.anchor is with_statement
    assert evaluation.model == "model"
    assert [text(ctx, call) for call in evaluation.calls] == ["model(images)"]
    assert evaluation.owner is ctx.module
    assert (evaluation.problem, evaluation.name, evaluation.reuses) == (None, "inference_model", False)
    assert evaluation.placement.before is with_statement
    assert evaluation.placement.values == {"model": "model"}
    # no training model to detach before it
    assert evaluation.releases == []
    assert result.inference_opts is None


def test_a_model_never_switched_to_eval_mode_is_not_an_evaluation():
    ctx = context(EVALUATION.replace("model.eval()\n", ""))
    assert plan(ctx).evaluations == []


PER_EPOCH = """\
import torch
import torch.nn.functional as F


def train(net, opt, loader):
    for number, (x, y) in enumerate(loader):
        loss = F.mse_loss(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if number % 100 == 0:
            print(number, loss.item())


def evaluate(net, loader):
    net.eval()
    with torch.no_grad():
        return [net(x) for x, _ in loader]


def main():
    model = Net()
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(3):
        train(model, optimizer, train_loader)
        evaluate(model, test_loader)
"""


def test_loop_in_a_function_called_once_per_epoch_is_created_by_its_caller():
    ctx = context(PER_EPOCH)
    train, evaluate, main = ctx.nodes(cst.FunctionDef)
    epochs = ctx.nodes(cst.For)[-1]
    result = plan(ctx)
    step = result.steps[0]
    assert step.problem is None
    assert step.owner is train
    assert (step.model, step.optimizer, step.output) == ("net", "opt", None)
    assert step.forward is None  # the model is called inside the loss
    assert step.inputs == ["x", "y"] and step.captured == []
    # created in main(), before the epoch loop, and passed to train() as a new parameter
    placement = step.placement
    assert placement.owner is main and placement.before is epochs
    assert placement.function is train
    assert [text(ctx, call) for call in placement.calls] == ["train(model, optimizer, train_loader)"]
    assert placement.values == {"net": "model", "opt": "optimizer"}
    assert result.training_in(train) == ("training_model", "opt")
    assert result.training_in(main) == ("training_model", "optimizer")


def test_evaluation_in_a_function_called_once_per_epoch_detaches_the_training_model():
    ctx = context(PER_EPOCH)
    evaluate, main = ctx.nodes(cst.FunctionDef)[1:]
    evaluation = plan(ctx).evaluations[0]
    assert evaluation.owner is evaluate
    assert evaluation.model == "net"
    assert [text(ctx, call) for call in evaluation.calls] == ["net(x)"]
    assert evaluation.name == "inference_model"
    placement = evaluation.placement
    assert placement.owner is main and placement.function is evaluate
    assert placement.values == {"net": "model"}
    # evaluated between two epochs of training: the training model is detached before the call,
    # the inference model after it
    [release] = evaluation.releases
    assert text(ctx, release.site) == "evaluate(model, test_loader)"
    assert (release.training, release.guarded, release.inference) == ("training_model", False, True)


def test_function_called_from_two_loops_in_different_functions_is_left_with_a_reason():
    ctx = context(PER_EPOCH + """\


def finetune():
    for epoch in range(2):
        train(model, optimizer, other_loader)
""")
    step = plan(ctx).steps[0]
    assert not step.rewritten
    assert step.problem == "`train()` is called from several functions: create the training model once and pass it in"


def test_the_model_is_the_variable_whose_parameters_the_callers_optimizer_takes():
    """``backbone`` is used as a model (``backbone.parameters()``) but the optimizer the caller
    passes in trains ``head``: the frozen backbone's call right before the loss is not the model's."""
    ctx = context("""\
        import torch


        def train(backbone, classifier, loader, optimizer, criterion):
            for x, y in loader:
                optimizer.zero_grad()
                feats = backbone(x)
                loss = criterion(classifier(feats), y)
                loss.backward()
                optimizer.step()


        def main():
            backbone = make_backbone()
            for param in backbone.parameters():
                param.requires_grad = False
            head = torch.nn.Linear(16, 3)
            optimizer = torch.optim.SGD([{"params": head.parameters()}], lr=0.1)
            for epoch in range(3):
                train(backbone, head, loader, optimizer, criterion)
        """)
    step = plan(ctx).steps[0]
    assert step.rewritten
    assert (step.model, step.forward, step.inputs) == ("classifier", None, ["feats", "y"])
