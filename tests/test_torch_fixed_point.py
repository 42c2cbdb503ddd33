"""One port reaches the fixed point on PyTorch scripts in the styles that made IPU305/IPU306 change
their own output again: benchmark scripts that train several prepared models in functions, engine
tests (``engine.backward(loss); engine.step()``), and model-zoo tests that build many models in
parametrized pytest functions. Each script is ported, the port must parse, carry what is asserted,
and come back unchanged from a second port."""

import ast
import textwrap

import pytest

from porter.config import Config
from porter.engine import port

# accelerate's benchmark style: a baseline and an integration run, prepared models and optimizers,
# autocast blocks around the forward, torch.compile, an evaluation helper called before and after.
BENCHMARK = '''\
import functools

import torch
import torch.nn as nn
from accelerate import Accelerator


def evaluate_model(model, dataloader):
    model.eval()
    for batch in dataloader:
        with torch.no_grad():
            outputs = model(batch["x"])
    model.train()
    return outputs


def train_baseline(model, optimizer, train_loader, eval_loader):
    model = torch.compile(model)
    before = evaluate_model(model, eval_loader)
    model.train()
    for batch in train_loader:
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            batch = batch.to("cuda")
            outputs = model(batch["x"])
        loss = nn.functional.cross_entropy(outputs, batch["y"])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return before, evaluate_model(model, eval_loader)


def train_integration(model, second, optimizer, second_optimizer, train_loader):
    accelerator = Accelerator(mixed_precision="fp8")
    model, second, optimizer, second_optimizer = accelerator.prepare(model, second, optimizer, second_optimizer)
    autocast = functools.partial(torch.autocast, device_type="cuda", dtype=torch.bfloat16)
    for batch in train_loader:
        with autocast():
            outputs = model(batch["x"])
            loss = nn.functional.cross_entropy(outputs, batch["y"])
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
    model.eval()
    second.eval()
    with torch.no_grad():
        first_out = model(batch["x"])
        second_out = second(batch["x"])
    assert torch.allclose(first_out, second_out)
'''

# DeepSpeed's unit-test style: the engine owns the model, the optimizer and the step.
ENGINE_TEST = '''\
import pytest
import torch
import deepspeed


class SimpleModel(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.linear = torch.nn.Linear(hidden, hidden)
        self.loss = torch.nn.CrossEntropyLoss()

    def forward(self, x, y):
        return self.loss(self.linear(x), y)


@pytest.mark.parametrize("stage", [1, 2, 3])
def test_zero(stage):
    model = SimpleModel(10)
    model, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(),
                                          config={"zero_optimization": {"stage": stage}})
    loader = random_dataloader(model, 50, 10, model.device)
    for n, batch in enumerate(loader):
        loss = model(batch[0], batch[1])
        model.backward(loss)
        model.step()


def test_plain_then_engine():
    model = SimpleModel(10)
    optimizer = torch.optim.Adam(model.parameters())
    for x, y in random_dataloader(model, 50, 10, "cuda"):
        loss = model(x, y)
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        model(x, y)


def test_sgd(hidden=12):
    model = SimpleModel(hidden)
    sgd = torch.optim.SGD(model.parameters(), lr=0.1)
    for step, (inputs, labels) in enumerate(random_dataloader(model, 20, hidden, "cpu")):
        sgd.zero_grad()
        loss = model(inputs, labels)
        loss.backward()
        sgd.step()
'''

# timm's model-test style: many models per parametrized test, `.backward()` on outputs, a per-step
# evaluation next to a final one, two models compared in one no_grad block.
MODEL_ZOO_TEST = '''\
import pytest
import torch
import timm

MODELS = ["resnet18", "vit_tiny_patch16_224"]
torch.backends.cudnn.benchmark = True


@pytest.mark.parametrize("model_name", MODELS)
@pytest.mark.parametrize("batch_size", [1, 2])
def test_model_backward(model_name, batch_size):
    model = timm.create_model(model_name, pretrained=False, num_classes=42)
    model.train()
    inputs = torch.randn((batch_size, 3, 32, 32))
    outputs = model(inputs)
    if isinstance(outputs, tuple):
        outputs = torch.cat(outputs)
    outputs.mean().backward()
    for n, x in model.named_parameters():
        assert x.grad is not None, f"No gradient for {n}"


@pytest.mark.parametrize("model_name", MODELS)
def test_model_against_reference(model_name):
    model = timm.create_model(model_name)
    reference = timm.create_model(model_name)
    model.eval()
    reference.eval()
    inputs = torch.randn(1, 3, 32, 32)
    with torch.no_grad():
        outputs = model(inputs)
        expected = reference(inputs)
    assert torch.allclose(outputs, expected)


def test_train_then_validate(net, optimizer, loader, validation):
    criterion = torch.nn.CrossEntropyLoss()
    for epoch in range(2):
        for x, y in loader:
            out = net(x)
            loss = criterion(out, y)
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            net(validation)
    with torch.no_grad():
        final = net(validation)
'''


def ported(source):
    result = port(source, Config())
    assert result.error is None, result.error
    ast.parse(result.source)
    again = port(result.source, Config())
    assert again.error is None, again.error
    assert again.source == result.source
    return result


def lines_of(result, code):
    return [(finding.line, finding.fixed) for finding in result.findings if finding.code == code]


def test_benchmark_script_reaches_the_fixed_point_in_one_port():
    result = ported(BENCHMARK)
    # Both steps are rewritten, the autocast blocks around them are gone (directly and through the
    # partial), and accelerate's prepare and fp8 mixed precision with them.
    assert lines_of(result, "IPU305") == [(26, True), (40, True)]
    assert "autocast" not in result.source.split("def train_baseline")[1]
    assert "accelerator.prepare" not in result.source and 'mixed_precision="fp8"' not in result.source
    # The two models of the integration run are each moved to an inference model.
    assert "first_out = inference_model2(batch[\"x\"])" in result.source
    assert "second_out = inference_model3(batch[\"x\"])" in result.source


def test_engine_test_reaches_the_fixed_point_and_names_the_engine():
    result = ported(ENGINE_TEST)
    engine, plain, again = (finding for finding in result.findings if finding.code == "IPU305")
    assert (engine.line, engine.fixed) == (24, False)
    assert engine.message.startswith("`model` is a training engine (`model.backward(loss)`, `model.step()`")
    # The same name in other test functions is another model, wrapped again without complaint.
    assert (plain.line, plain.fixed) == (33, True) and (again.line, again.fixed) == (45, True)


def test_model_zoo_test_reaches_the_fixed_point():
    result = ported(MODEL_ZOO_TEST)
    assert "expected = inference_model2(inputs)" in result.source
    # The validation inside the epoch loop and the final one share one inference model.
    assert result.source.count("poptorch.inferenceModel(net.eval()") == 1
    assert "            inference_model3(validation)" in result.source
    assert "        final = inference_model3(validation)" in result.source


@pytest.mark.parametrize("source, message", [
    ('''\
        import torch

        def predict(path, x):
            with torch.no_grad():
                model = torch.load(path)
                model.eval()
                out = model(x)
            return out
        ''', "`model` is assigned inside the `with` block that uses it; assign `model` before that block, then "
             "create the inference model once, between the two"),
    ('''\
        import torch

        for name in names:
            model = build(name)
            model.eval()
            with torch.no_grad():
                out = model(x)
        ''', "`model` is assigned inside the loop; create the inference model once, before the loop"),
])
def test_inference_model_says_where_the_model_is_assigned(source, message):
    result = ported(textwrap.dedent(source))
    assert [f.message for f in result.findings if f.code == "IPU306"] == [message]


def test_models_are_swapped_once_around_a_loop_of_evaluation_batches():
    result = ported(textwrap.dedent('''\
        import torch

        def fit(model, optimizer, train_loader, eval_loader):
            for epoch in range(3):
                model.train()
                for x, y in train_loader:
                    loss = torch.nn.functional.mse_loss(model(x), y)
                    loss.backward()
                    optimizer.step()
                model.eval()
                for x, y in eval_loader:
                    with torch.no_grad():
                        out = model(x)
                    print(out.mean())
        '''))
    assert ("        model.eval()\n"
            "        training_model.detachFromDevice()\n"
            "        for x, y in eval_loader:\n"
            "            with torch.no_grad():\n"
            "                out = inference_model(x)\n"
            "            print(out.mean())\n"
            "        inference_model.detachFromDevice()\n") in result.source


def test_an_autocast_block_left_empty_by_the_rewrite_goes():
    result = ported(textwrap.dedent('''\
        import torch

        for x, y in loader:
            with torch.autocast("cuda"):
                out = model(x)
            with torch.autocast("cuda"):
                loss = torch.nn.functional.mse_loss(out, y)
            loss.backward()
            optimizer.step()
        '''))
    assert result.source.endswith("for x, y in loader:\n    out, loss = training_model(x, y)\n")


def test_a_model_the_port_evaluates_is_a_model_in_every_function():
    # The inferenceModel(net.eval()) the port writes for test_a makes `net` a model for a second
    # port, which then finds the model call feeding test_b's loss: the first port must find it too.
    result = ported(textwrap.dedent('''\
        import torch

        def test_a(net, opt, loader, crit, x):
            for xb, yb in loader:
                opt.zero_grad()
                out = net(xb)
                loss = crit(out, yb) * 0.5
                loss.backward()
                opt.step()
            with torch.no_grad():
                assert net(x).shape == x.shape

        def test_b(net, opt, loader, crit):
            for xb, yb in loader:
                loss = crit(net(xb), yb)
                loss.backward()
                opt.step()
        '''))
    assert lines_of(result, "IPU305") == [(8, True), (16, True)]
    assert result.source.endswith("    for xb, yb in loader:\n        loss = training_model2(xb, yb)\n")
