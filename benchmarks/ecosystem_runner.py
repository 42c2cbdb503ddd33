"""Run one training script for a few steps, in this fresh process, the way `ecosystem.py` needs it.

    python ecosystem_runner.py [--emulate] [--tensorflow-1] [--search DIR] --result OUT.json SCRIPT

Started by `benchmarks/ecosystem.py` with the working directory a temporary folder. Before the
script runs (unchanged, as `__main__`, with no command-line arguments) it installs:

- no network: sockets refuse to connect, and whatever would download (`keras.utils.get_file`,
  `urllib.request`, `requests`, `torch.hub`) raises `NeedsData` at once; every attempt is recorded,
  so a script that catches the error still counts as needing data;
- the stand-ins of ecosystem_standins.py: data sets, packages that only fetch data or only display,
  Keras 2 for `import keras`;
- with `--tensorflow-1`: `import tensorflow` gives `tensorflow.compat.v1`, v2 behaviour off;
- caps: Keras `fit` runs at most 2 epochs of at most 4 batches, `evaluate`/`predict` at most 4
  batches of a dataset; PyTorch data loaders yield at most 4 batches per pass; custom loops
  (eager `GradientTape.gradient`, `Session.run`, torch `backward`) stop the script after
  STEP_BUDGET steps with `Capped`, which counts as a run that went well;
- with `--emulate`: the emulated IPU of `tests/emulation` (`tensorflow.python.ipu`, `keras.ipu`,
  `ipu_tensorflow_addons`, `poptorch`).

OUT.json receives {"status": "ran" | "capped" | "failed", "error", "traceback", "downloads",
"ipu_executions", "cpu_training_steps", "used_ipu", "emulation_errors"}. The process then ends at
once (os._exit), so threads or workers the script started cannot keep it alive."""

import argparse
import builtins
import contextlib
import inspect
import itertools
import json
import os
import re
import runpy
import socket
import sys
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))  # the emulation is importable as `emulation`, as in the tests
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ecosystem_standins import DOWNLOADS, install_finders, keras_loaders, refuse  # noqa: E402

BATCH_CAP = 4        # batches per Keras epoch / evaluate / predict, and per pass over a DataLoader
EPOCH_CAP = 2        # Keras epochs per fit
STEP_BUDGET = 20     # custom-loop steps (eager gradients, Session.run, torch backward) per script


class Capped(BaseException):
    """The step budget is spent: the script has shown that it runs (a BaseException, so that a
    script's own `except Exception` does not swallow it)."""


STEPS = [0]


def block_network(patcher):
    for name in ("connect", "connect_ex"):
        patcher.attr(socket.socket, name, refuse("network connection"))
    patcher.attr(socket, "create_connection", refuse("network connection"))
    patcher.attr(socket, "getaddrinfo", refuse("network name lookup"))
    import urllib.request
    patcher.attr(urllib.request, "urlopen", refuse("urllib.request.urlopen"))
    patcher.attr(urllib.request, "urlretrieve", refuse("urllib.request.urlretrieve"))


def block_downloads(patcher, source):
    """The download helpers of the frameworks the script uses (imported here only when it does)."""
    if re.search(r"^\s*(import|from)\s+requests\b", source, re.M):
        import requests
        patcher.attr(requests.Session, "request", refuse("requests"))
    for module_name, module in list(sys.modules.items()):
        if module_name.split(".")[0] in ("keras", "tf_keras", "tensorflow") \
                and callable(getattr(module, "get_file", None)):
            patcher.attr(module, "get_file", refuse("keras.utils.get_file"))
    if "torch" in sys.modules:
        import torch.hub
        for name in ("load", "load_state_dict_from_url", "download_url_to_file"):
            patcher.attr(torch.hub, name, refuse("torch.hub." + name))


def spend_step():
    STEPS[0] += 1
    if STEPS[0] > STEP_BUDGET:
        raise Capped()


def counting(original):
    def counted(*args, **kwargs):
        spend_step()
        return original(*args, **kwargs)
    return counted


def cap_keras(patcher, tf, keras_module):
    model_class = keras_module.Model

    class StopAfterBatches(keras_module.callbacks.Callback):
        """Ends each epoch after BATCH_CAP batches (the flag it sets is cleared at the epoch's end,
        so a stop asked by the script's own callbacks still ends the fit)."""

        def __init__(self):
            super().__init__()
            self.stopped_here = False

        def on_train_batch_end(self, batch, logs=None):
            if batch + 1 >= BATCH_CAP and not self.model.stop_training:
                self.model.stop_training = self.stopped_here = True

        def on_epoch_end(self, epoch, logs=None):
            if self.stopped_here:
                self.model.stop_training = self.stopped_here = False

    original_fit = model_class.fit
    signature = inspect.signature(original_fit)

    def fit(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        arguments = bound.arguments
        initial = arguments.get("initial_epoch") or 0
        arguments["epochs"] = min(arguments.get("epochs", 1), initial + EPOCH_CAP)
        arguments["callbacks"] = list(arguments.get("callbacks") or []) + [StopAfterBatches()]
        return original_fit(*bound.args, **bound.kwargs)

    patcher.attr(model_class, "fit", fit)
    for method in ("evaluate", "predict"):
        patcher.attr(model_class, method, _dataset_taking(tf, getattr(model_class, method)))


def _dataset_taking(tf, original):
    """evaluate/predict of a tf.data dataset read at most BATCH_CAP batches of it."""
    def method(self, x=None, *args, **kwargs):
        if isinstance(x, tf.data.Dataset) and kwargs.get("steps") is None:
            cardinality = int(x.cardinality())
            if cardinality < 0 or cardinality > BATCH_CAP:
                x = x.take(BATCH_CAP)
        return original(self, x, *args, **kwargs)
    return method


def install_tensorflow(patcher, source, emulate):
    from emulation import harness, import_tensorflow
    tf, keras_module = import_tensorflow()
    stand_in_datasets(patcher)
    harness._no_tensorboard(patcher, keras_module)
    cap_keras(patcher, tf, keras_module)
    patcher.attr(tf.GradientTape, "gradient", _eager_counting(tf, tf.GradientTape.gradient))
    if "Session(" in source:
        recorded = harness.ScriptRun("tf1")  # what the harness records of each run; only its counts are kept
        harness._record_session(patcher, recorded, tf)  # soft placement: ops pinned to a GPU fall back
        session_class = tf.compat.v1.Session.__mro__[1]
        patcher.attr(session_class, "run", counting(session_class.run))
    return tf


def stand_in_datasets(patcher):
    """Every loaded `...datasets.<name>` module of Keras gets the stand-in `load_data`."""
    loaders = keras_loaders()
    for module_name, module in list(sys.modules.items()):
        parts = module_name.split(".")
        if len(parts) >= 2 and parts[-2] == "datasets" and parts[-1] in loaders \
                and hasattr(module, "load_data"):
            patcher.attr(module, "load_data", loaders[parts[-1]])


def tensorflow_1(tf):
    """A TensorFlow 1.x script (`tf.placeholder`, `tf.Session` on the top-level module) imports
    `tensorflow` as `tensorflow.compat.v1` with the v2 behaviour off: the API of the IPU's
    TensorFlow 1.15."""
    tf.compat.v1.disable_v2_behavior()
    sys.modules["tensorflow"] = tf.compat.v1


def _eager_counting(tf, original):
    """A gradient taken eagerly is one step of a custom loop; traced ones (tf.function) are not."""
    def gradient(self, *args, **kwargs):
        if tf.executing_eagerly():
            spend_step()
        return original(self, *args, **kwargs)
    return gradient


def install_torch(patcher, emulate):
    import torch
    from emulation import harness
    loader = torch.utils.data.DataLoader
    original_iter = loader.__iter__
    patcher.attr(loader, "__iter__", lambda self: itertools.islice(original_iter(self), BATCH_CAP))
    patcher.attr(torch.Tensor, "backward", counting(torch.Tensor.backward))
    if not emulate:
        harness._cpu_for_cuda(patcher)  # a GPU original runs here on the CPU; a port must not need it


def uses_tensorflow(source):
    return re.search(r"^\s*(import|from)\s+(tensorflow|keras|tf_keras)\b", source, re.M) is not None


def uses_torch(source):
    return re.search(r"^\s*(import|from)\s+torch\b", source, re.M) is not None


def first_line(error):
    text = str(error).strip().splitlines()
    return "%s: %s" % (type(error).__name__, text[0] if text else "")


def run(script, emulate, search, tf1):
    from emulation import Patcher, STATE, emulated_ipu
    source = Path(script).read_text(encoding="utf-8", errors="replace")
    result = {"status": "ran", "error": None, "traceback": None}
    patcher = Patcher()
    with contextlib.ExitStack() as stack:
        if emulate:
            stack.enter_context(emulated_ipu(tensorflow=uses_tensorflow(source), torch=uses_torch(source)))
        else:
            STATE.reset()
        if uses_tensorflow(source):
            tf = install_tensorflow(patcher, source, emulate)
            if tf1:
                tensorflow_1(tf)
        if uses_torch(source):
            install_torch(patcher, emulate)
        block_network(patcher)
        block_downloads(patcher, source)
        install_finders(tensorflow=uses_tensorflow(source))  # after the frameworks' own imports
        patcher.attr(builtins, "display", lambda *args, **kwargs: None)  # notebooks' display()
        sys.argv = [script]
        # the script's folder first, as Python has it (helper modules beside the original)
        sys.path[0:0] = [os.getcwd()] + search
        try:
            runpy.run_path(script, run_name="__main__")
        except Capped:
            result["status"] = "capped"
        except SystemExit as exit_:
            if exit_.code not in (None, 0):
                result.update(status="failed", error="SystemExit: %s" % (exit_.code,))
        except BaseException as error:  # the script's failure is the result
            result.update(status="failed", error=first_line(error),
                          traceback="".join(traceback.format_exception(error))[-4000:])
        result.update(downloads=DOWNLOADS, ipu_executions=STATE.ipu_executions,
                      cpu_training_steps=STATE.cpu_training_steps, used_ipu=STATE.used_ipu,
                      emulation_errors=[first_line(error) for error in STATE.errors])
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("script")
    parser.add_argument("--result", required=True)
    parser.add_argument("--emulate", action="store_true")
    parser.add_argument("--search", action="append", default=[])
    parser.add_argument("--tensorflow-1", action="store_true")
    options = parser.parse_args()
    try:
        result = run(options.script, options.emulate, options.search, options.tensorflow_1)
    except BaseException as error:  # the runner itself failed (e.g. an import of the emulation)
        result = {"status": "failed", "error": "runner: " + first_line(error),
                  "traceback": traceback.format_exc()[-4000:], "downloads": DOWNLOADS}
    with open(options.result, "w") as handle:
        json.dump(result, handle, default=str)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
