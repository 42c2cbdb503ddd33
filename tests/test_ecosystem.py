"""benchmarks/ecosystem.py, the ecosystem run, on small scripts of the project's own
(tests/ecosystem_scripts): a port that runs on the emulated IPU is `ok`, a port that never reaches
the IPU is a `silent-failure` (the porter is replaced by one that copies the script unchanged), a
script that downloads its data is `excluded`, and a run leaves the inputs and the temporary folder
as it found them."""

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("tensorflow")

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "benchmarks" / "ecosystem.py"
SCRIPTS = Path(__file__).resolve().parent / "ecosystem_scripts"
NOT_TRAINING = ("does not train or predict (no Keras fit/evaluate/predict, GradientTape loop, PyTorch "
                "backward or evaluation loop, or TF1 session)")


def load_tool():
    spec = importlib.util.spec_from_file_location("ecosystem", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def digests():
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in SCRIPTS.iterdir()}


def run_tool(tmp_path, *arguments):
    """The tool as a user runs it, with its temporary folders under tmp_path/tmp."""
    temporary = tmp_path / "tmp"
    temporary.mkdir(exist_ok=True)
    out = tmp_path / ("report%d.json" % len(list(tmp_path.glob("report*.json"))))
    completed = subprocess.run(
        [sys.executable, str(TOOL), *arguments, "--json", str(out), "--timeout", "120"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(temporary)})
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert list(temporary.iterdir()) == []  # every temporary folder removed
    return json.loads(out.read_text()), completed.stdout


def record(path, kind, original="ran", original_reason=None, port=None, port_error=None, ipu_executions=0,
           cpu_training_steps=0, manual_findings=0, verdict="excluded"):
    return {"path": path, "kind": kind, "original": original, "original_reason": original_reason,
            "port": port, "port_error": port_error, "ipu_executions": ipu_executions,
            "cpu_training_steps": cpu_training_steps, "manual_findings": manual_findings,
            "verdict": verdict}


def test_ok_excluded_and_skipped(tmp_path):
    before = digests()
    report, _ = run_tool(tmp_path, str(SCRIPTS / "keras_digits.py"), str(SCRIPTS / "keras_download.py"),
                         str(SCRIPTS / "plain_helpers.py"), "-j", "2")
    assert digests() == before  # the inputs are only read
    digits, download, plain = report["files"]
    assert digits["ipu_executions"] >= 1  # the emulation's count (or 1 while it only says "used")
    assert digits == record("keras_digits.py", "keras", port="ran", verdict="ok",
                            ipu_executions=digits["ipu_executions"])
    assert download == record("keras_download.py", "keras", original="failed",
                              original_reason="needs data (keras.utils.get_file)")
    assert plain == record("plain_helpers.py", None, original="skipped", original_reason=NOT_TRAINING)
    summary = dict(report["summary"])
    summary.pop("seconds")
    assert summary == {"files": 3, "trains": 2, "originals_ran": 1, "ok": 1, "reported": 0,
                       "silent_failures": 0, "excluded": 2,
                       "excluded_by_reason": {"does not train or predict (no Keras fit/evaluate/predict, "
                                              "GradientTape loop, PyTorch backward or evaluation loop, "
                                              "or TF1 session)": 1, "needs data": 1},
                       "missing_packages": {}}


def test_a_tf1_session_script_runs_and_its_compiled_port_runs_on_the_ipu(tmp_path):
    # the original's session runs are recorded by the emulation harness too: a field the harness
    # adds to what it records must not make every TF1 original "fail on the CPU"
    report, _ = run_tool(tmp_path, str(SCRIPTS / "tf1_session_regression.py"))
    [regression] = report["files"]
    assert regression["ipu_executions"] >= 1
    assert regression == record("tf1_session_regression.py", "tf1", port="ran", verdict="ok",
                                ipu_executions=regression["ipu_executions"])


def test_a_port_that_never_reaches_the_ipu_is_a_silent_failure(tmp_path):
    weakened = "%s %s {input} {output}" % (sys.executable, SCRIPTS / "unchanged_port.py")
    report, printed = run_tool(tmp_path, str(SCRIPTS / "keras_digits.py"), "--port-command", weakened,
                               "--markdown")
    # the unchanged port trains on the CPU: 2 epochs of 4 batches (the runner's caps), nothing on the IPU
    assert report["files"] == [record("keras_digits.py", "keras", port="ran", cpu_training_steps=8,
                                      verdict="silent-failure")]
    assert printed.splitlines()[:3] == [
        "| files | trains | originals ran | ok | reported | silent failures | excluded |",
        "|---|---|---|---|---|---|---|",
        "| 1 | 1 | 1 | 0 | 0 | 1 | 0 |"]
    assert printed.splitlines()[-2:] == [
        "Silent failures: 1",
        "- `keras_digits.py` (keras): port ran, ipu_executions 0, cpu_training_steps 8"]


def test_kinds_and_notebook_code():
    tool = load_tool()
    assert tool.kind_of("import torch\nloss.backward()\n") == "torch"
    evaluation = "import torch\nmodel.eval()\nwith torch.no_grad():\n    for x in loader:\n        model(x)\n"
    assert tool.kind_of(evaluation) is None  # no DataLoader: nothing feeds it
    assert tool.kind_of("loader = torch.utils.data.DataLoader(data)\n" + evaluation) == "torch-eval"
    assert tool.kind_of("import tensorflow as tf\nx = tf.compat.v1.placeholder()\ntf.compat.v1.Session()\n") == "tf1"
    assert tool.kind_of("import tensorflow as tf\nwith tf.GradientTape() as tape:\n    pass\n") == "tf2-loop"
    assert tool.kind_of("import numpy\nmodel.fit(x)\n") is None
    notebook = {"cells": [{"cell_type": "markdown", "source": ["# title"]},
                          {"cell_type": "code", "source": ["!pip install x\n", "%matplotlib inline\n",
                                                           "import tensorflow as tf"]},
                          {"cell_type": "code", "source": "  %time model.fit(x)\nprint(1)"},
                          {"cell_type": "code", "source": "%%bash\nls data"},
                          {"cell_type": "code", "source": "%%time\n!tool run \\\n    --flag\nprint(2)"}]}
    assert tool.notebook_code(json.dumps(notebook)) == (
        "pass  # magic\npass  # magic\nimport tensorflow as tf\n\n  pass  # magic\nprint(1)\n\n"
        "pass  # magic\npass  # magic\nprint(2)\n")


def test_exclusion_reasons():
    tool = load_tool()
    reason = tool.exclusion_reason
    assert reason({"status": "timeout"}) == "the original did not finish within the time limit"
    assert reason({"status": "failed", "error": "ModuleNotFoundError: No module named 'torchvision'"}) \
        == "torchvision is not installed (no CPU wheel matches torch 2.13.0)"
    assert reason({"status": "failed", "error": "ModuleNotFoundError: No module named 'pandas'"}) \
        == "needs a package: pandas"
    assert reason({"status": "failed", "error": "OSError: x", "downloads": ["urllib.request.urlopen"]}) \
        == "needs data (urllib.request.urlopen)"
    assert reason({"status": "failed", "error": "AssertionError: Torch not compiled with CUDA enabled"}) \
        == "needs a GPU: AssertionError: Torch not compiled with CUDA enabled"
