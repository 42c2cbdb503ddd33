"""The project's layout, as the rule contract states it: each rule module is named after its rule
and sits in the folder of its code's framework range, and a code prefix selects one framework."""

import pytest

from porter.config import Config
from porter.engine import port
from porter.rule import all_rules

# The hundreds digit of a code -> the folder of rules/ its rule lives in.
FOLDER_OF_RANGE = {"0": "common", "1": "keras", "2": "tf1", "3": "torch"}


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_a_rule_module_is_named_after_its_rule_in_the_folder_of_its_range(rule):
    package, folder, module = type(rule).__module__.rsplit(".", 2)
    assert package == "porter.rules"
    assert module == rule.name.replace("-", "_")
    assert folder == FOLDER_OF_RANGE[rule.code[3]]


# --select IPU1 means "Keras" and --ignore IPU3 "not PyTorch": the PopTorch speed options belong to
# IPU3xx rules, so neither of those runs touches a PopTorch script.
_TAGGER = '''import poptorch
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(300, 128)
        self.classify = nn.Linear(128, 5)

    def forward(self, x):
        return self.classify(torch.tanh(self.embed(x)))


tagger = Tagger()
sgd = torch.optim.SGD(tagger.parameters(), lr=0.05)
options = poptorch.Options()
trainer = poptorch.trainingModel(tagger, options, sgd)
'''
_SPEED = {"ipus": 2, "pipeline_stages": 2, "gradient_accumulation": 4, "device_iterations": 4}


@pytest.mark.parametrize("select, ignore", [(("IPU1",), ()), ((), ("IPU3",))])
def test_the_keras_codes_leave_a_poptorch_script_alone(select, ignore):
    result = port(_TAGGER, Config(select=select, ignore=ignore, **_SPEED))
    assert result.error is None
    assert result.source == _TAGGER
    assert result.findings == ()


def test_the_pytorch_codes_port_its_speed_options():
    result = port(_TAGGER, Config(select=("IPU3",), **_SPEED))
    assert result.error is None
    assert result.source == _TAGGER.replace(
        "tagger = Tagger()\n",
        "tagger = Tagger()\npoptorch.BeginBlock(tagger.embed, ipu_id=0)\n"
        "poptorch.BeginBlock(tagger.classify, ipu_id=1)\n",
    ).replace("torch.optim.SGD", "poptorch.optim.SGD").replace(
        "options = poptorch.Options()\n",
        "options = poptorch.Options()\noptions.deviceIterations(4)\noptions.Training.gradientAccumulation(4)\n",
    )
    assert [(finding.code, finding.line) for finding in result.findings] == [
        ("IPU316", 16), ("IPU304", 17), ("IPU315", 18), ("IPU316", 18)]
