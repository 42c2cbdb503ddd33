"""The PyTorch -> PopTorch port on whole scripts: every un-ported fixture gets changes or
warnings, every expected output gets none of the changes, an already ported script gets nothing."""

from pathlib import Path

import pytest

from porter.config import Config
from porter.engine import port

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "torch"
INPUTS = sorted(p for p in FIXTURES.glob("*.py") if not p.name.endswith(".expected.py"))
PORTED = {"already_ported"}


def _port(path: Path, **config):
    result = port(path.read_text(encoding="utf-8"), Config(**config))
    assert result.error is None
    return result


@pytest.mark.parametrize("path", [p for p in INPUTS if p.stem not in PORTED], ids=lambda p: p.stem)
def test_unported_fixture_is_reported(path):
    result = _port(path)
    assert result.findings
    assert result.changed or any(not finding.fixed for finding in result.findings)


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_expected_output_needs_no_change(path):
    result = _port(path.with_name(path.stem + ".expected.py"))
    assert not result.changed
    assert not [finding for finding in result.findings if finding.fixed]


def test_already_ported_script_is_left_alone():
    result = _port(FIXTURES / "already_ported.py")
    assert not result.changed
    assert not result.findings


def test_every_training_model_is_created_outside_loops():
    for path in INPUTS:
        lines = path.with_name(path.stem + ".expected.py").read_text().splitlines()
        for number, line in enumerate(lines):
            if "poptorch.trainingModel(" in line or "poptorch.inferenceModel(" in line:
                indent = len(line) - len(line.lstrip())
                enclosing = [l for l in lines[:number] if l.strip() and len(l) - len(l.lstrip()) < indent]
                assert not (enclosing and enclosing[-1].lstrip().startswith(("for ", "while "))), (path, number)


AMP_STEP = '''import torch
import poptorch

scaler = torch.cuda.amp.GradScaler()
opts = poptorch.Options()
optimizer = poptorch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda"):
        out = model(x)
        loss = criterion(out, y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
'''


def test_amp_step_becomes_a_training_model():
    result = port(AMP_STEP, Config(select=("IPU305", "IPU309")))
    assert result.error is None
    assert "out, loss = training_model(x, y)" in result.source
    assert "scaler" not in result.source and "autocast" not in result.source
    assert "backward" not in result.source
    codes = {finding.code for finding in result.findings}
    assert {"IPU305", "IPU309"} <= codes
    assert any("float32" in finding.message for finding in result.findings if finding.code == "IPU309")


def test_amp_alone_gives_the_plain_step():
    result = port(AMP_STEP, Config(select=("IPU309",)))
    assert "    loss.backward()\n    optimizer.step()\n" in result.source
    assert "scaler" not in result.source


def test_ipus_set_the_replication_factor():
    source = "import torch\nfrom torch.utils.data import DataLoader\n\nloader = DataLoader(ds, batch_size=4)\n"
    result = port(source, Config(ipus=4))
    assert "opts = poptorch.Options()\nopts.replicationFactor(4)\nloader = poptorch.DataLoader(opts, ds" \
        in result.source


def test_options_name_avoids_an_existing_opts():
    source = ("import argparse\nimport torch\nfrom torch.utils.data import DataLoader\n\n"
              "opts = argparse.ArgumentParser().parse_args()\nloader = DataLoader(ds, batch_size=opts.bs)\n")
    result = port(source)
    assert "opts2 = poptorch.Options()" in result.source
    assert "poptorch.DataLoader(opts2, ds, batch_size=opts.bs)" in result.source


ACCUMULATING = '''import torch
import poptorch

opts = poptorch.Options()
opts.Training.gradientAccumulation(8)
model.eval()
with torch.no_grad():
    for x, y in test_loader:
        out = model(x)
'''


def test_inference_gets_its_own_options_when_training_accumulates():
    result = port(ACCUMULATING, Config(select=("IPU302", "IPU306")))
    assert result.error is None
    assert ("inference_opts = poptorch.Options()\n"
            "inference_model = poptorch.inferenceModel(model.eval(), options=inference_opts)\n") in result.source
    assert port(result.source, Config(select=("IPU302", "IPU306"))).source == result.source


SCORED_ON_BOTH = '''import torch
from torch.utils.data import DataLoader


def accuracy(net, loader):
    net.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (net(x).argmax(1) == y).sum().item()
    return correct


def main(net, train_set, val_set):
    train_loader = DataLoader(train_set, batch_size=16, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=16)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    criterion = torch.nn.CrossEntropyLoss()
    net.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        optimizer.step()
    print(accuracy(net, val_loader), accuracy(net, train_loader))
'''


def test_a_loader_that_feeds_training_and_evaluation_is_reported_when_training_accumulates():
    # The inference model is compiled for batches of 16; the training options give it 16 x 2.
    result = port(SCORED_ON_BOTH, Config(gradient_accumulation=2))
    assert "    val_loader = poptorch.DataLoader(inference_opts, val_set, batch_size=16)\n" in result.source
    shared = [(finding.code, finding.line, finding.message.split(":")[0]) for finding in result.findings
              if "feeds training and evaluation" in finding.message]
    assert shared == [("IPU303", 15, "`train_loader` feeds training and evaluation")]
    assert not any("feeds training and evaluation" in finding.message
                   for finding in port(SCORED_ON_BOTH, Config()).findings)


# the expected output still carries a warning: a person must port the step (or name its loss), or the LSTM layers,
# or remove DistributedDataParallel, torch.compile, float64 and data-dependent control flow (gated_experts_ddp)
MANUAL = {"cpu_training_fresh_eval", "lstm_language_model", "unnamed_loss", "gated_experts_ddp"}


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_check_mode_exit_codes(path):
    from click.testing import CliRunner

    from porter.cli import main

    options = ["--ipus", "4"] if path.with_name(path.stem + ".options.json").exists() else []
    expected = path.with_name(path.stem + ".expected.py")
    unported = CliRunner().invoke(main, ["--check", *options, str(path)])
    ported = CliRunner().invoke(main, ["--check", *options, str(expected)])
    assert unported.exit_code == (0 if path.stem in PORTED else 1)
    assert ported.exit_code == (1 if path.stem in MANUAL else 0)


def test_readme_pytorch_example_is_what_the_tool_prints():
    from porter.api import port_text
    from porter.report import finding_line, unified_diff

    readme = (FIXTURES.parent.parent / "README.md").read_text(encoding="utf-8")

    def block(after: str, language: str) -> str:
        return readme.split(after, 1)[1].split(f"```{language}\n", 1)[1].split("```", 1)[0]

    outcome = port_text("train.py", block("A GPU PyTorch script", "python"), Config())
    assert unified_diff(outcome) == block("The PyTorch diff", "diff")
    findings = "".join(finding_line("train.py", finding) + "\n" for finding in outcome.findings)
    assert findings == block("and its findings", "text")


BASELINE_THEN_EPOCHS = '''import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()


def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


def main():
    model = Net()
    optimizer = torch.optim.Adam(model.parameters())
    print("baseline", evaluate(model, val_loader))
    for epoch in range(3):
        print(evaluate(model, val_loader))
        train(model, train_loader, optimizer)
'''


def test_models_are_created_once_and_detached_around_each_evaluation():
    result = port(BASELINE_THEN_EPOCHS)
    assert result.error is None
    main = result.source.split("def main():")[1]
    assert main.count("poptorch.inferenceModel(") == 1 and main.count("poptorch.trainingModel(") == 1
    assert main.index("inferenceModel(") < main.index('print("baseline"') < main.index("trainingModel(")
    # the evaluation in the loop comes before the first training: the detach is guarded
    assert ("        if training_model.isCompiled() and training_model.isAttachedToDevice():\n"
            "            training_model.detachFromDevice()\n"
            "        print(evaluate(model, val_loader, inference_model))\n"
            "        inference_model.detachFromDevice()\n"
            "        train(model, train_loader, optimizer, training_model)\n") in main
    assert 'print("baseline", evaluate(model, val_loader, inference_model))\n    inference_model.detachFromDevice()' \
        in main
    assert port(result.source).source == result.source


EVALUATED_EACH_EPOCH_AND_AFTER = """import torch


def evaluate(model, x):
    model.eval()
    with torch.no_grad():
        return model(x)


model = torch.nn.Linear(4, 1)
criterion = torch.nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(5):
    for inputs, labels in loader:
        optimizer.zero_grad()
        loss = criterion(model(inputs), labels)
        loss.backward()
        optimizer.step()
    evaluate(model, val_x)
print(evaluate(model, val_x), evaluate(model, test_x))
"""


def test_a_training_model_detached_at_several_places_is_detached_only_while_attached():
    # the evaluation after the loop follows the one in it (detaching a detached model raises),
    # and one statement evaluating twice detaches once
    result = port(EVALUATED_EACH_EPOCH_AND_AFTER)
    assert result.error is None
    guarded = "if training_model.isCompiled() and training_model.isAttachedToDevice():\n"
    assert ("        loss = training_model(inputs, labels)\n    " + guarded
            + "        training_model.detachFromDevice()\n    evaluate(model, val_x, inference_model)\n"
            "    inference_model.detachFromDevice()\n" + guarded + "    training_model.detachFromDevice()\n"
            "print(evaluate(model, val_x, inference_model), evaluate(model, test_x, inference_model))\n"
            ) in result.source
    assert result.source.count("detachFromDevice()") == 3
    assert port(result.source).source == result.source


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_expected_outputs_are_python_36_code(path):
    import libcst as cst

    source = path.with_name(path.stem + ".expected.py").read_text(encoding="utf-8")
    cst.parse_module(source, config=cst.PartialParserConfig(python_version="3.6"))


def test_a_model_is_wrapped_for_training_once():
    loop = ("for x, y in {loader}:\n    optimizer.zero_grad()\n    loss = model(x, y)\n    loss.backward()\n"
            "    optimizer.step()\n")
    source = ("import torch\n\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
              + loop.format(loader="pretrain_loader") + "\n" + loop.format(loader="finetune_loader"))
    result = port(source)
    assert result.error is None
    assert result.source.count("poptorch.trainingModel(model,") == 1
    assert any(f.code == "IPU305" and not f.fixed and "already wrapped" in f.message for f in result.findings)


AMP_CLIPPED = """\
import torch
import torch.nn as nn

model = nn.Linear(10, 2)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.cuda.amp.GradScaler()
for x, y in loader:
    optimizer.zero_grad()
    with torch.cuda.amp.autocast():
        out = model(x)
        loss = criterion(out, y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
"""


def test_an_amp_step_that_unscales_for_its_clip_trains_with_max_grad_norm_in_one_port():
    result = port(AMP_CLIPPED, Config())
    assert result.error is None
    assert "optimizer = poptorch.optim.AdamW(model.parameters(), lr=1e-3, max_grad_norm=1.0)" in result.source
    assert "    out, loss = training_model(x, y)\n" in result.source
    assert "scaler" not in result.source and "clip_grad_norm_" not in result.source
