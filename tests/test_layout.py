"""The project's layout, as the rule contract states it: each rule module is named after its rule
and sits in the folder of its code's framework range, and a code prefix selects one framework."""

import ast
import re
from pathlib import Path

import libcst as cst
import pytest

from porter.config import Config
from porter.context import FileContext
from porter.engine import port
from porter.report import NOTICES
from porter.rule import all_rules
from porter.rules.torch._analysis.util import selected

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


# Rule codes are declared by the rules alone: the core and the analysis the rules share take a code
# (or a rule) from the rule that calls them. The porter's own notices (a notebook cell that does not
# parse, an unused suppression) belong to no rule: the core declares those.
_ROOT = Path(__file__).resolve().parent.parent
_CODE = re.compile(r"IPU[0-9]{3}")


def _helper_modules():
    folders = [_ROOT / "porter", _ROOT / "rules" / "_tf", *sorted((_ROOT / "rules").glob("*/_analysis"))]
    return [path for folder in folders for path in sorted(folder.rglob("*.py"))]


def _code_literals(path: Path):
    """(line, code) of every string literal in the module that is a rule code."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _CODE.fullmatch(node.value)]


def test_helper_modules_are_found():
    names = {path.relative_to(_ROOT).as_posix() for path in _helper_modules()}
    assert {"porter/context.py", "rules/_tf/tfdata.py", "rules/torch/_analysis/speed.py",
            "rules/keras/_analysis/fit.py", "rules/tf1/_analysis/graph.py",
            "rules/common/_analysis/pipeline.py"} <= names


def test_no_rule_code_is_written_outside_its_rule():
    found = [f"{path.relative_to(_ROOT)}:{line}: {code}" for path in _helper_modules()
             for line, code in _code_literals(path) if code not in NOTICES]
    assert found == []


def test_a_code_literal_in_a_helper_is_caught(tmp_path):
    helper = tmp_path / "helper.py"
    helper.write_text('"""Shared by IPU305."""\nCODE = "IPU305"\nHELP = "select IPU1 or IPU103"\n', encoding="utf-8")
    assert _code_literals(helper) == [(2, "IPU305")]


def test_the_shared_analysis_asks_for_a_rule_by_name():
    module = cst.parse_module("import torch\n")
    assert selected(FileContext(module, Config()), "poptorch-options")
    assert not selected(FileContext(module, Config(ignore=("IPU302",))), "poptorch-options")
    assert not selected(FileContext(module, Config(select=("IPU1",))), "poptorch-pipelining")
    with pytest.raises(KeyError):
        selected(FileContext(module, Config()), "poptorch-option")


def test_the_porter_code_has_no_pyflakes_warning():
    """Unused names and shadowed imports in the porter's own code hide mistakes; the ports are
    checked with the same tool (tests/test_undefined_names.py). The tests and the emulation import
    modules for their side effects, so they are left out."""
    from pyflakes.api import checkPath
    from pyflakes.reporter import Reporter
    import io

    root = Path(__file__).resolve().parent.parent
    out = io.StringIO()
    reporter = Reporter(out, out)
    warnings = sum(checkPath(str(path), reporter) for folder in ("porter", "rules", "benchmarks")
                   for path in sorted((root / folder).rglob("*.py")))
    assert warnings == 0, out.getvalue()
