"""Ecosystem run: real training scripts, ported and run on the emulated IPU, with stand-in data.

    .venv/bin/python benchmarks/ecosystem.py PATH... [--json OUT] [--timeout S] [-j N] [--markdown]
                                                  [--port-command CMD]

PATH: files or folders of .py and .ipynb (a notebook runs as its code cells joined, its magics
skipped). For every script that trains or predicts (Keras fit/evaluate/predict, a GradientTape loop,
a PyTorch backward() or evaluation loop, a TF1 session), in a temporary folder of its own:

1. the original runs for a few steps on the CPU, in a fresh subprocess (benchmarks/ecosystem_runner.py:
   no network, stand-in datasets, caps on epochs, batches and loop steps, no arguments);
2. the file is ported with the installed CLI as a user types it (`ipu-port FILE -o OUT --format
   json`; `--port-command` replaces it, with {input} and {output} in it, for the tool's own tests);
3. the port runs the same way with the emulated IPU installed, which counts the steps that ran on
   the IPU (`ipu_executions`) and the training steps that ran on the CPU (`cpu_training_steps`).

Each file gets one record and a verdict: `ok` (the port ran, on the IPU, and trained nothing on the
CPU), `reported` (it did not, and the porter said so with a [manual] finding), `silent-failure`
(it did not, and the porter said nothing: a porter defect), `excluded` (the original does not run
here: it needs data, a package or a GPU, or it does not train; the reason is kept). The input files
are only read; every temporary folder is removed and every process group ended.

While the emulation does not yet count `ipu_executions` (0 for every run), a run that used the
emulated IPU at all (`used_ipu`) counts as one execution; the record keeps both.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNNER = HERE / "ecosystem_runner.py"
PYTHON = sys.executable
IPU_PORT = str(Path(PYTHON).with_name("ipu-port"))
DEFAULT_PORT_COMMAND = [IPU_PORT, "{input}", "-o", "{output}", "--format", "json"]
TORCHVISION_REASON = "torchvision is not installed (no CPU wheel matches torch 2.13.0)"
NOT_TRAINING = ("does not train or predict (no Keras fit/evaluate/predict, GradientTape loop, PyTorch "
                "backward or evaluation loop, or TF1 session)")
FIELDS = ("path", "kind", "original", "original_reason", "port", "port_error", "ipu_executions",
          "cpu_training_steps", "manual_findings", "verdict")


# finding the scripts ---------------------------------------------------------------------------

def scripts_under(paths):
    found = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted(item for item in path.rglob("*")
                            if item.suffix in (".py", ".ipynb") and item.is_file())
        elif path.suffix in (".py", ".ipynb"):
            found.append(path)
    return found


def notebook_code(text):
    """The code cells of a notebook joined into one script. IPython magics and shell lines
    (`%...`, `!...`, with their backslash continuations) become `pass`; a cell of another language
    (`%%bash`, `%%writefile`, ...) is left out, a `%%time` or `%%capture` cell keeps its body."""
    try:
        cells = json.loads(text).get("cells", [])
    except ValueError:
        return ""
    chunks = []
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        lines = ("".join(source) if isinstance(source, list) else source).splitlines()
        if lines and lines[0].startswith("%%"):
            if lines[0].split()[0] not in PYTHON_CELL_MAGICS:
                continue
            lines = lines[1:]
        chunks.append("\n".join(_without_magics(lines)))
    return "\n\n".join(chunks) + "\n"


PYTHON_CELL_MAGICS = ("%%time", "%%timeit", "%%capture")


def _without_magics(lines):
    """Each magic line, and each backslash continuation of one, becomes `pass` at the indentation
    of the magic's first line."""
    indent = None
    for line in lines:
        if indent is None and re.match(r"\s*[%!]", line):
            indent = line[:len(line) - len(line.lstrip())]
        if indent is None:
            yield line
            continue
        yield indent + "pass  # magic"
        if not line.rstrip().endswith("\\"):
            indent = None


def code_of(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    return notebook_code(text) if path.suffix == ".ipynb" else text


def _imports(source, module):
    return re.search(r"^\s*(import|from)\s+%s\b" % module, source, re.M) is not None


def kind_of(source):
    """What the script does that a port must move to the IPU, or None when it neither trains nor
    predicts."""
    tensorflow = _imports(source, "tensorflow") or _imports(source, "keras") or _imports(source, "tf_keras")
    if _imports(source, "torch"):
        if ".backward(" in source:
            return "torch"
        # an evaluation loop: a model in eval mode fed from a DataLoader (a module that only
        # defines a model with an eval-mode helper runs nothing)
        if "no_grad" in source and re.search(r"\.eval\(\)", source) and "DataLoader" in source:
            return "torch-eval"
    if not tensorflow:
        return None
    if "Session(" in source and re.search(r"compat\.v1|placeholder\(|tf\.train\.", source):
        return "tf1"
    if re.search(r"\.(fit|fit_generator|evaluate|predict)\(", source):
        return "keras"
    if "GradientTape" in source:
        return "tf2-loop"
    return None


# running ---------------------------------------------------------------------------------------

def tensorflow_1(source):
    """A TensorFlow 1.x script: the 1.x graph API on the top-level module (`tf.placeholder`,
    `tf.Session`, ...), which TensorFlow 2 keeps only under `tf.compat.v1`."""
    return re.search(r"\btf\.(placeholder|Session|InteractiveSession|global_variables_initializer|"
                     r"train\.[A-Z]\w*Optimizer)\(", source) is not None


def run_script(script, cwd, emulate, timeout, search, tf1=False):
    """One smoke run in a fresh process group; the group is ended whatever happens."""
    result_file = Path(cwd).parent / ("%s.result.json" % Path(cwd).name)
    command = [PYTHON, str(RUNNER), str(script), "--result", str(result_file)]
    command += ["--emulate"] if emulate else []
    command += ["--tensorflow-1"] if tf1 else []
    for folder in search:
        command += ["--search", str(folder)]
    # TMPDIR inside the file's own temporary folder: what the run leaves there (autograph's
    # generated modules, which only an orderly exit would delete) goes with the folder
    environment = dict(os.environ, TMPDIR=str(Path(cwd).parent / "tmp"), PYTHONDONTWRITEBYTECODE="1",
                       MPLBACKEND="Agg", TF_CPP_MIN_LOG_LEVEL="2", TF_USE_LEGACY_KERAS="1",
                       PYTHONHASHSEED="0")
    process = subprocess.Popen(command, cwd=cwd, env=environment, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    try:
        process.wait(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        end_group(process)
    if timed_out:
        return {"status": "timeout", "error": "no result within %g s" % timeout}
    if not result_file.exists():
        return {"status": "failed", "error": "the run ended without a result (exit code %s)"
                % process.returncode}
    return json.loads(result_file.read_text())


def end_group(process):
    """Kill the run's process group (its data loader workers, servers, ...) and reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


def port_file(source_copy, output, port_command, timeout):
    """Port with the CLI; returns (outcome, error, manual findings), outcome "ported",
    "unchanged" or "refused"."""
    command = [part.replace("{input}", str(source_copy)).replace("{output}", str(output))
               for part in port_command]
    try:
        completed = subprocess.run(command, cwd=source_copy.parent, capture_output=True, text=True,
                                   timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return "refused", "the porter did not finish within %g s" % timeout, 0
    report = _json_report(completed.stdout)
    entry = (report.get("files") or [{}])[0]
    manual = sum(1 for finding in entry.get("findings", []) if not finding.get("fixed"))
    if entry.get("error") or completed.returncode not in (0, 1) or not output.exists():
        error = entry.get("error") or (completed.stderr.strip().splitlines() or ["exit %d" % completed.returncode])[-1]
        return "refused", error, manual
    if report and not entry.get("changed"):
        return "unchanged", None, manual
    return "ported", None, manual


def _json_report(text):
    try:
        report = json.loads(text)
    except ValueError:
        return {}
    return report if isinstance(report, dict) else {}


def runnable_copy(path, folder, name):
    """The script to run, in `folder`: a notebook becomes its code cells, in a module named so that
    it does not stand in for a package of the notebook's name (keras_tuner.ipynb imports
    keras_tuner)."""
    stem = Path(name).stem
    target = folder / (stem + ("_notebook.py" if Path(name).suffix == ".ipynb" else ".py"))
    target.write_text(code_of(path), encoding="utf-8")
    return target


def examine(path, root, timeout, port_command):
    """The record of one file."""
    source = code_of(path)
    record = dict.fromkeys(FIELDS)
    record.update(path=display_path(path, root), kind=kind_of(source), ipu_executions=0,
                  cpu_training_steps=0, manual_findings=0)
    if record["kind"] is None:
        record.update(original="skipped", original_reason=NOT_TRAINING, verdict="excluded")
        return record
    if _imports(source, "torchvision"):
        record.update(original="skipped", original_reason=TORCHVISION_REASON, verdict="excluded")
        return record
    with tempfile.TemporaryDirectory(prefix="ecosystem-") as temporary:
        temporary = Path(temporary)
        for name in ("original", "port", "porting", "tmp"):
            (temporary / name).mkdir()
        search = [path.resolve().parent]
        tf1 = tensorflow_1(source)
        original = run_script(runnable_copy(path, temporary / "original", path.name),
                              temporary / "original", False, timeout, search, tf1)
        record["original"] = {"capped": "ran"}.get(original["status"], original["status"])
        if record["original"] != "ran":
            record.update(original_reason=exclusion_reason(original), verdict="excluded")
            return record
        copy = temporary / "porting" / path.name
        shutil.copyfile(path, copy)
        ported = temporary / "porting" / ("ported" + path.suffix)
        outcome, error, manual = port_file(copy, ported, port_command, timeout)
        record.update(manual_findings=manual, port_error=error)
        if outcome != "ported":
            record["port"] = outcome
        else:
            port = run_script(runnable_copy(ported, temporary / "port", path.name),
                              temporary / "port", True, timeout, search, tf1)
            record["port"] = {"capped": "ran"}.get(port["status"], port["status"])
            record["port_error"] = port.get("error") or first_emulation_error(port)
            record["ipu_executions"] = ipu_work(port)
            record["cpu_training_steps"] = port.get("cpu_training_steps", 0)
    record["verdict"] = verdict(record)
    return record


def display_path(path, root):
    try:
        return str(path.resolve().relative_to(root))
    except ValueError:
        return path.name


def first_emulation_error(run):
    errors = run.get("emulation_errors") or []
    return errors[0] if errors else None


def ipu_work(run):
    """Steps the port ran on the emulated IPU. Until the emulation counts them, a run that used
    the IPU at all counts as one."""
    executions = run.get("ipu_executions", 0)
    return executions or (1 if run.get("used_ipu") else 0)


def exclusion_reason(run):
    error = run.get("error") or ""
    if run["status"] == "timeout":
        return "the original did not finish within the time limit"
    if run.get("downloads"):
        return "needs data (%s)" % run["downloads"][0]
    missing = re.search(r"No module named '([^']+)", error)
    if missing:
        if missing.group(1).split(".")[0] == "torchvision":
            return TORCHVISION_REASON
        return "needs a package: %s" % missing.group(1)
    if "no attribute 'contrib'" in error:
        return "needs a package: tensorflow.contrib"
    if error == "SystemExit: 2":
        return "needs command-line arguments"
    if re.search(r"cuda|CUDA|GPU|nccl|NCCL", error):
        return "needs a GPU: " + error
    if re.search(r"No such file|not found|does not exist|NotFoundError", error):
        return "needs data (a file): " + error
    return "fails on the CPU: " + error


def verdict(record):
    """ok / reported / silent-failure for a file whose original ran."""
    on_ipu = (record["port"] == "ran" and record["ipu_executions"] > 0
              and record["cpu_training_steps"] == 0)
    if on_ipu:
        return "ok"
    return "reported" if record["manual_findings"] else "silent-failure"


# reporting -------------------------------------------------------------------------------------

def summarize(records):
    reasons = [record["original_reason"] or "" for record in records if record["verdict"] == "excluded"]
    verdicts = Counter(record["verdict"] for record in records)
    return {
        "files": len(records),
        "trains": sum(1 for record in records if record["kind"] is not None),
        "originals_ran": sum(1 for record in records if record["original"] == "ran"),
        "ok": verdicts["ok"],
        "reported": verdicts["reported"],
        "silent_failures": verdicts["silent-failure"],
        "excluded": verdicts["excluded"],
        "excluded_by_reason": _by_count(Counter(map(reason_group, reasons))),
        "missing_packages": _by_count(Counter(reason.split(": ", 1)[1] for reason in reasons
                                              if reason.startswith("needs a package: "))),
    }


def _by_count(counter):
    return dict(sorted(counter.items(), key=lambda item: (-item[1], item[0])))


def reason_group(reason):
    """The reason without its details (the error line, the package, the download), for counting."""
    for prefix in ("needs data", "needs a GPU", "fails on the CPU", "needs a package"):
        if reason.startswith(prefix):
            return prefix
    return reason


def markdown(report):
    summary = report["summary"]
    lines = ["| files | trains | originals ran | ok | reported | silent failures | excluded |",
             "|---|---|---|---|---|---|---|",
             "| %(files)d | %(trains)d | %(originals_ran)d | %(ok)d | %(reported)d | %(silent_failures)d "
             "| %(excluded)d |" % summary, "", "| excluded because | files |", "|---|---|"]
    lines += ["| %s | %d |" % (reason, count) for reason, count in summary["excluded_by_reason"].items()]
    if summary["missing_packages"]:
        lines += ["", "Missing packages: " + ", ".join("%s (%d)" % item for item in summary["missing_packages"].items())]
    silent = [record for record in report["files"] if record["verdict"] == "silent-failure"]
    lines += ["", "Silent failures: %d" % len(silent)]
    lines += ["- `%s` (%s): port %s, %s" % (record["path"], record["kind"], record["port"],
                                            record["port_error"] or "ipu_executions %d, cpu_training_steps %d"
                                            % (record["ipu_executions"], record["cpu_training_steps"]))
              for record in silent]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", metavar="PATH")
    parser.add_argument("--json", metavar="OUT", help="write the records and the summary here")
    parser.add_argument("--timeout", type=float, default=120, metavar="S", help="seconds per run (120)")
    parser.add_argument("-j", "--jobs", type=int, default=1, metavar="N", help="files at a time (1)")
    parser.add_argument("--markdown", action="store_true", help="print the summary table and the silent failures")
    parser.add_argument("--port-command", metavar="CMD",
                        help="port with this command ({input}, {output}) instead of ipu-port")
    options = parser.parse_args(argv)
    port_command = shlex.split(options.port_command) if options.port_command else DEFAULT_PORT_COMMAND
    files = scripts_under(options.paths)
    root = Path(os.path.commonpath([str(Path(path).resolve()) for path in options.paths]))
    root = root if root.is_dir() else root.parent
    started = time.monotonic()

    def one(path):
        record = examine(path, root, options.timeout, port_command)
        print("%-16s %s" % (record["verdict"], record["path"]), file=sys.stderr, flush=True)
        return record

    with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
        records = list(pool.map(one, files))
    report = {"files": records, "summary": summarize(records)}
    report["summary"]["seconds"] = round(time.monotonic() - started)
    if options.json:
        Path(options.json).write_text(json.dumps(report, indent=2) + "\n")
    print(markdown(report) if options.markdown else json.dumps(report["summary"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
