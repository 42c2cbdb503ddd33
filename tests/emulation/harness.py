"""Differential runs: a GPU/CPU script on the CPU against its IPU port on the emulated IPU.

`run_pair(original, port, spec)` runs both scripts in this process (TensorFlow is imported once),
with the same seeds, small synthetic data and the arguments of the fixture's `NAME.run.json`, and
records the losses step by step:

* Keras: `logs["loss"]` at the end of every batch the callbacks see, keyed by (fit call, epoch,
  batch); with `steps_per_execution=N` the port reports every N-th batch, so the keys of the port
  must be a subset of the original's and include the last batch of each epoch;
* TF1: every floating-point scalar fetched by `Session.run`, and how many runs update the weights
  (a port whose evaluation fetches train runs more of them than the original);
* PyTorch: the original's values passed to `backward()`; the port's values returned by
  `poptorch.trainingModel` (as recorded by the emulated executor).

`compare(original, port, spec)` returns the list of problems (empty when the port is right).

`NAME.run.json` (all keys optional):
    "argv": ["--epochs", "1"]             command line (scripts with an argparse main())
    "data": {"train": 256, "test": 64}    sizes of the synthetic keras/torchvision datasets
    "files": {...}                        data files the script reads: npz/npy arrays, csv tables,
                                          tfrecords, literal text (see data.write_files)
    "modules": {"corpus": [lines]}        helper modules the script imports
    "shrink": [[old, new], ...]           text replaced in both scripts before they run (hard-coded
                                          sizes, epochs); each must occur in both
    "stdout": "loss ([0-9.]+)"            the losses are what this regex finds in the printed output
                                          (custom loops without fit or backward)
    "difference": {"kind": ..., "reason": ...}   the port trains differently on purpose:
                                          "trimmed" (drops a partial batch), "replication" or
                                          "accumulation" (bigger optimizer steps), "random" (same
                                          training, other random draws: losses close, not equal),
                                          "per_execution" (a per-batch callback changes training once
                                          per execution: the same batches, other losses)
    "ipu_only": "why"                     the input is IPU code already: only the port runs, on the
                                          emulated IPU, which must accept it and see it train
    "cpu_training": "why"                 the port trains on the CPU on purpose (a partial port by
                                          design): its CPU training steps are not a problem
    "skip": "why"                         nothing to run (no training, a partial port by design)
    "xfail": "why"                        a known porter bug, named precisely (strict in the tests)
"""

import contextlib
import io
import json
import math
import os
import random
import re
import runpy
import sys
import tempfile
from pathlib import Path

import numpy as np

from . import data as synthetic
from .tf_ipu import _fetched_ops, _updates_weights
from .state import STATE


class ScriptRun:
    def __init__(self, framework):
        self.framework = framework
        self.losses = []          # [(key, value)] in order
        self.error = None         # the exception that ended the script, if any
        self.configured = 0
        self.strategies = 0
        self.used_ipu = False
        self.ipu_executions = 0       # steps run on the emulated IPU
        self.cpu_training_steps = 0   # training steps run on the CPU
        self.training_runs = 0        # TF1: session runs that update the weights (on any device)
        self.ipu_errors = []
        self.notes = []
        self.outfeed_items = 0
        self.output = ""

    def __repr__(self):
        return "ScriptRun(%s, %d losses, error=%r, ipu_errors=%r)" % (
            self.framework, len(self.losses), self.error, self.ipu_errors)


def load_spec(path):
    sidecar = path.with_name(path.name[:-3] + ".run.json")
    spec = json.loads(sidecar.read_text()) if sidecar.exists() else {}
    options = path.with_name(path.name[:-3] + ".options.json")
    if "skip" not in spec and "ipu_only" not in spec and options.exists():
        selected = {key: value for key, value in json.loads(options.read_text()).items()
                    if key in ("select", "ignore")}
        if selected:
            spec["skip"] = ("ported with a subset of the rules (%s in %s): the expected output is not a "
                            "complete port" % (selected, options.name))
    return spec


def framework_of(source):
    if "import torch" in source or "from torch" in source:
        return "torch"
    if "compat.v1" in source and ("Session(" in source or "placeholder(" in source):
        return "tf1"
    if "tf.Session(" in source or "tf.placeholder(" in source:
        return "tf1"
    return "keras"


def _seed_everything(seed, framework):
    random.seed(seed)
    np.random.seed(seed)
    if framework == "torch":
        import torch
        torch.manual_seed(seed)
    else:
        from . import import_tensorflow
        tf, keras = import_tensorflow()
        keras.backend.clear_session()
        keras.utils.set_random_seed(seed)


class _Patches:
    def __init__(self):
        from . import Patcher
        self.patcher = Patcher()

    def __enter__(self):
        return self.patcher

    def __exit__(self, *exc):
        self.patcher.undo()
        return False


def _record_keras(patcher, run):
    from . import import_tensorflow
    tf, keras = import_tensorflow()
    original_fit = keras.Model.fit
    calls = [0]

    class Recorder(keras.callbacks.Callback):
        def __init__(self, call):
            super().__init__()
            self.call = call
            self.epoch = 0

        def on_epoch_begin(self, epoch, logs=None):
            self.epoch = epoch

        def on_train_batch_end(self, batch, logs=None):
            if logs and "loss" in logs:
                run.losses.append(((self.call, self.epoch, batch), float(logs["loss"])))

    def fit(self, *args, **kwargs):
        calls[0] += 1
        callbacks = list(kwargs.pop("callbacks", None) or [])
        kwargs["callbacks"] = callbacks + [Recorder(calls[0])]
        return original_fit(self, *args, **kwargs)

    patcher.attr(keras.Model, "fit", fit)
    patch_keras_datasets(patcher, run.sizes)


def patch_keras_datasets(patcher, sizes):
    """Every loaded `...datasets.<name>` module (tf.keras, tf_keras, keras 3) gets the synthetic
    `load_data`."""
    loaders = synthetic.keras_loaders(sizes)
    for module_name, module in list(sys.modules.items()):
        parts = module_name.split(".")
        if len(parts) >= 2 and parts[-2] == "datasets" and parts[-1] in loaders \
                and hasattr(module, "load_data"):
            patcher.attr(module, "load_data", loaders[parts[-1]])


def _record_session(patcher, run, tf):
    session_class = tf.compat.v1.Session.__mro__[1]  # BaseSession
    original_run = session_class.run

    def session_run(self, fetches, *args, **kwargs):
        result = original_run(self, fetches, *args, **kwargs)
        if _updates_weights(self.graph, _fetched_ops(self.graph, fetches)):
            run.training_runs += 1
        for value in _flat(result):
            if isinstance(value, (float, np.floating)) or (
                    isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind == "f"):
                run.losses.append((len(run.losses), float(value)))
        return result

    patcher.attr(session_class, "run", session_run)
    original_init = tf.compat.v1.Session.__init__

    def session_init(self, target="", graph=None, config=None):
        # the original pins ops to a GPU this machine does not have: let them fall back to the CPU
        config = config if config is not None else tf.compat.v1.ConfigProto()
        config.allow_soft_placement = True
        original_init(self, target, graph, config)

    patcher.attr(tf.compat.v1.Session, "__init__", session_init)


def _flat(value):
    if isinstance(value, (list, tuple)):
        return [item for element in value for item in _flat(element)]
    if isinstance(value, dict):
        return [item for element in value.values() for item in _flat(element)]
    return [value]


@contextlib.contextmanager
def _deterministic_ops():
    """Stateful random ops in a parallel Dataset.map draw in thread order unless ops are
    deterministic: without this two runs of the same script differ. Switched off afterwards (it
    makes unseeded random ops fail)."""
    from tensorflow.python.framework import config
    was_enabled = config.is_op_determinism_enabled()
    config.enable_op_determinism()
    try:
        yield
    finally:
        if not was_enabled:
            config.disable_op_determinism()


@contextlib.contextmanager
def _global_policy_kept(keras):
    """A script's `mixed_precision.set_global_policy(...)` holds for the whole process: the next
    script run by the same test process would build its layers in float16. Put back the policy
    there was."""
    before = keras.mixed_precision.global_policy()
    try:
        yield
    finally:
        keras.mixed_precision.set_global_policy(before)


def _graph_mode_for_this_run(patcher, stack, tf):
    """`tf.compat.v1.disable_eager_execution()` (or `disable_v2_behavior()`) would switch eager
    execution off in the whole test process, for good: the script runs in a graph of its own
    instead, which Keras trains in as in graph mode, and which is left when the run ends."""
    def graph_mode():
        stack.enter_context(tf.Graph().as_default())

    for name in ("disable_eager_execution", "disable_v2_behavior"):
        patcher.attr(tf.compat.v1, name, graph_mode)


def _no_tensorboard(patcher, keras):
    """TensorBoard is not installed for the tests: its callback records nothing here."""
    class TensorBoard(keras.callbacks.Callback):
        def __init__(self, *args, **kwargs):
            super().__init__()

    for module_name, module in list(sys.modules.items()):
        if module_name.endswith("callbacks") and getattr(module, "TensorBoard", None) is not None \
                and module_name.split(".")[0] in ("tf_keras", "keras"):
            patcher.attr(module, "TensorBoard", TensorBoard)


@contextlib.contextmanager
def _tf1_graph(patcher, seed):
    """Run a TF1 script in a fresh graph without switching eager execution off for the process;
    the v1 behaviour switches the script asks for are applied and undone afterwards."""
    from . import import_tensorflow
    tf, _ = import_tensorflow()
    from tensorflow.python import tf2

    switched = []

    def disable_v2_behavior():
        tf2.disable()
        tf.compat.v1.disable_resource_variables()
        tf.compat.v1.disable_control_flow_v2()
        tf.compat.v1.disable_v2_tensorshape()
        switched.append(True)

    def disable_resource_variables():
        tf.compat.v1.disable_resource_variables()
        switched.append(True)

    v1 = sys.modules["tensorflow.compat.v1"] if "tensorflow.compat.v1" in sys.modules else tf.compat.v1
    for module in {id(v1): v1, id(tf.compat.v1): tf.compat.v1}.values():
        patcher.attr(module, "disable_eager_execution", lambda: None)
        patcher.attr(module, "disable_v2_behavior", disable_v2_behavior)
    graph = tf.Graph()
    try:
        with graph.as_default():
            tf.compat.v1.set_random_seed(seed)
            yield tf
    finally:
        if switched:
            tf2.enable()
            tf.compat.v1.enable_resource_variables()
            tf.compat.v1.enable_control_flow_v2()
            tf.compat.v1.enable_v2_tensorshape()


def _record_torch(patcher, run):
    import torch
    original_backward = torch.Tensor.backward

    def backward(self, *args, **kwargs):
        if self.dim() == 0:
            run.backward_values.append(float(self.detach()))
        return original_backward(self, *args, **kwargs)

    patcher.attr(torch.Tensor, "backward", backward)
    original_init = torch.utils.data.DataLoader.__init__

    def loader_init(self, *args, **kwargs):
        # worker processes change nothing in what is loaded; keep the test in one process
        kwargs["num_workers"] = 0
        kwargs.pop("persistent_workers", None)
        kwargs.pop("prefetch_factor", None)
        kwargs["pin_memory"] = False
        return original_init(self, *args, **kwargs)

    patcher.attr(torch.utils.data.DataLoader, "__init__", loader_init)
    if not synthetic.torchvision_available():
        for name, module in synthetic.fake_torchvision(run.sizes).items():
            patcher.module(name, module)


def _older_tensorflow_names(patcher, tf):
    """Let an original written for TensorFlow 2.0 or 2.1 run on this TensorFlow: its strategies'
    `experimental_run_v2` is `run` (only for originals: a port must not need this)."""
    if not hasattr(tf.distribute.Strategy, "experimental_run_v2"):
        patcher.attr(tf.distribute.Strategy, "experimental_run_v2", tf.distribute.Strategy.run)


def _cpu_for_cuda(patcher):
    """Let a GPU original run on this CPU-only torch: `.cuda()` and `.to("cuda")` keep tensors
    and modules on the CPU (only for originals: a port must not need this)."""
    import torch

    def on_cpu(value):
        if isinstance(value, torch.device) and value.type == "cuda":
            return torch.device("cpu")
        if isinstance(value, str) and value.startswith("cuda"):
            return "cpu"
        return value

    for owner in (torch.Tensor, torch.nn.Module):
        original_to = owner.to

        def to(self, *args, _original=original_to, **kwargs):
            args = tuple(on_cpu(arg) for arg in args)
            if "device" in kwargs:
                kwargs["device"] = on_cpu(kwargs["device"])
            kwargs.pop("non_blocking", None)
            return _original(self, *args, **kwargs)

        patcher.attr(owner, "to", to)
        patcher.attr(owner, "cuda", lambda self, *args, **kwargs: self)
    patcher.attr(torch.cuda, "synchronize", lambda *args, **kwargs: None)


def _write_modules(modules, folder):
    """Helper modules a fixture imports (e.g. its dataset class), from `.run.json`. A helper may
    stand in for an installed package (`keras`): what was imported of that package is set aside
    for the run (`_restore_modules` puts it back)."""
    for name, source in modules.items():
        with open(os.path.join(folder, name + ".py"), "w") as handle:
            handle.write(source if isinstance(source, str) else "\n".join(source) + "\n")
    return {module: sys.modules.pop(module) for module in list(sys.modules) if _of_helpers(module, modules)}


def _of_helpers(module, helpers):
    return any(module == name or module.startswith(name + ".") for name in helpers)


def _restore_modules(helpers, set_aside):
    """Forget the helpers and the submodules imported through them; bring back what they hid."""
    for module in [module for module in sys.modules if _of_helpers(module, helpers)]:
        sys.modules.pop(module, None)
    sys.modules.update(set_aside)


def run_script(path, spec, emulate, seed=0):
    """Run one script; `emulate` installs the emulated IPU first."""
    from . import emulated_ipu
    path = path.resolve()
    source = path.read_text(encoding="utf-8")
    shrink = spec.get("shrink", [])
    framework = framework_of(source)
    run = ScriptRun(framework)
    run.sizes = spec.get("data", {})
    run.backward_values = []
    argv = [str(path)] + list(spec.get("argv", []))
    old_argv, old_cwd = sys.argv, os.getcwd()
    stdout = io.StringIO()
    with tempfile.TemporaryDirectory() as workdir:
        with contextlib.ExitStack() as stack:
            if emulate:
                state = stack.enter_context(emulated_ipu(tensorflow=framework != "torch",
                                                         torch=framework == "torch"))
            else:
                STATE.reset()
            # the recording patches go over the emulation's and come off first
            patcher = stack.enter_context(_Patches())
            if framework != "torch":
                stack.enter_context(_deterministic_ops())
            _seed_everything(seed, framework)
            if framework == "torch":
                _record_torch(patcher, run)
                if not emulate:
                    _cpu_for_cuda(patcher)
            else:
                from . import import_tensorflow
                tf, keras = import_tensorflow()
                stack.enter_context(_global_policy_kept(keras))
                _no_tensorboard(patcher, keras)
                if framework == "keras":
                    _graph_mode_for_this_run(patcher, stack, tf)
                if not emulate:
                    _older_tensorflow_names(patcher, tf)
            if framework == "keras":
                _record_keras(patcher, run)
            elif framework == "tf1":
                tf = stack.enter_context(_tf1_graph(patcher, seed))
                _record_session(patcher, run, tf)
                patch_keras_datasets(patcher, run.sizes)
            synthetic.write_files(spec.get("files", {}), workdir)
            helpers = spec.get("modules", {})
            set_aside = _write_modules(helpers, workdir)
            sys.path.insert(0, workdir)
            if shrink:
                path = _shrunk_copy(path, source, shrink, workdir)
            sys.argv = argv
            os.chdir(workdir)
            try:
                with contextlib.redirect_stdout(stdout):
                    runpy.run_path(str(path), run_name="__main__")
            except SystemExit as exit_:
                if exit_.code not in (None, 0):
                    run.error = exit_
            except BaseException as error:  # the script's failure is the result
                run.error = error
            finally:
                sys.argv = old_argv
                os.chdir(old_cwd)
                sys.path.remove(workdir)
                _restore_modules(helpers, set_aside)
            if emulate:
                run.configured = len(state.configured)
                run.strategies = len(state.strategies)
                run.used_ipu = state.used_ipu
                run.ipu_executions = state.ipu_executions
                run.cpu_training_steps = state.cpu_training_steps
                run.ipu_errors = list(state.errors)
                run.notes = list(state.notes)
                run.outfeed_items = state.outfeed_items
                if framework == "torch":
                    run.losses = list(enumerate(state.training_losses))
    if framework == "torch" and not emulate:
        run.losses = list(enumerate(run.backward_values))
    run.output = stdout.getvalue()
    if spec.get("stdout"):
        # custom training loops report their losses only in what they print
        run.losses = [(index, float(value)) for index, value in
                      enumerate(re.findall(spec["stdout"], run.output))]
    return run


def _shrunk_copy(path, source, shrink, folder):
    for old, new in shrink:
        if old not in source:
            raise ValueError("%s: the shrink text %r does not occur" % (path.name, old))
        source = source.replace(old, new)
    copy = Path(folder) / path.name
    copy.write_text(source, encoding="utf-8")
    return copy


def run_pair(original_path, port_path, spec=None, seed=0):
    spec = load_spec(original_path) if spec is None else spec
    return (run_script(original_path, spec, emulate=False, seed=seed),
            run_script(port_path, spec, emulate=True, seed=seed))


def _close(a, b, rel):
    return math.isclose(a, b, rel_tol=rel, abs_tol=rel * 1e-3)


def compare(original, port, spec=None, rel=1e-5):
    """Problems that make the port wrong (an empty list when it is right)."""
    spec = spec or {}
    problems = []
    if original.error is not None:
        problems.append("the original failed on the CPU: %s" % describe(original.error))
    if port.error is not None:
        problems.append("the port failed on the emulated IPU: %s" % describe(port.error))
    for error in port.ipu_errors:
        if error is not port.error:
            problems.append("the port hit an emulated IPU error: %s" % describe(error))
    if not original.losses:
        problems.append("the original recorded no losses: nothing to compare (does it train?)")
    if problems:
        return problems
    if port.framework != "torch" and not port.configured:
        problems.append("the port never configured the IPU system")
    problems += _where_it_ran(port, spec, "port")
    if port.framework == "tf1" and port.training_runs > original.training_runs:
        problems.append("the port ran %d session runs that update the weights, the original %d: a fetch "
                        "that only evaluates in the original trains in the port"
                        % (port.training_runs, original.training_runs))
    if port.framework == "keras" and not port.strategies:
        problems.append("the port created no IPUStrategy")
    difference = spec.get("difference")
    documented = _DOCUMENTED_NOTES.get((difference or {}).get("kind"), ())
    notes = [note for note in port.notes if not any(word in note for word in documented)]
    if difference:
        problems += _check_difference(original, port, difference, rel)
        if notes:
            problems.append("the emulation noted more than the documented difference: %s" % "; ".join(notes))
        return problems
    if notes:
        problems.append("the emulation noted what a CPU run does not show (%s), and the fixture's "
                        ".run.json documents no such difference" % "; ".join(notes))
    if _by_batch(port):
        return problems + _compare_keras(original.losses, port.losses, rel)
    ours, theirs = [value for _, value in original.losses], [value for _, value in port.losses]
    if len(ours) != len(theirs):
        problems.append("%d losses in the original, %d in the port" % (len(ours), len(theirs)))
    for step, (a, b) in enumerate(zip(ours, theirs)):
        if not _close(a, b, rel):
            problems.append("step %d: original loss %r, port loss %r" % (step, a, b))
            break
    return problems


def describe(error):
    """An exception with its message (TensorFlow's errors keep it out of their repr)."""
    if error.args and error.args[0] is not None:
        return repr(error)
    return "%s: %s" % (type(error).__name__, error)


def check_ipu_script(port):
    """Problems of a script that is already IPU code (no CPU original): it must run cleanly on
    the emulated IPU and train there."""
    problems = []
    if port.error is not None:
        problems.append("the script failed on the emulated IPU: %s" % describe(port.error))
    problems += ["the script hit an emulated IPU error: %s" % describe(error)
                 for error in port.ipu_errors if error is not port.error]
    if not problems:
        problems += _where_it_ran(port, {}, "script")
    if not problems and not port.losses and not port.outfeed_items:
        problems.append("the script recorded no losses (and enqueued nothing to an outfeed)")
    return problems


def _where_it_ran(port, spec, what):
    """A port does its work on the IPU, and trains on the CPU only when its spec says why."""
    problems = []
    if not port.ipu_executions:
        problems.append("the %s never ran anything on the (emulated) IPU" % what)
    if port.cpu_training_steps and not spec.get("cpu_training"):
        problems.append("the %s ran %d training steps on the CPU, not on the (emulated) IPU"
                        % (what, port.cpu_training_steps))
    return problems


def _by_batch(run):
    """Losses recorded by the Keras callback, keyed by (fit call, epoch, batch)."""
    return bool(run.losses) and isinstance(run.losses[0][0], tuple)


def _compare_keras(original, port, rel):
    problems = []
    ours = dict(original)
    theirs = dict(port)
    if not theirs:
        return ["the port recorded no losses"]
    extra = sorted(set(theirs) - set(ours))
    if extra:
        problems.append("the port trained steps the original did not: %s" % (extra[:5],))
    last = {}
    for call, epoch, batch in ours:
        last[(call, epoch)] = max(batch, last.get((call, epoch), -1))
    ported_last = {}
    for call, epoch, batch in theirs:
        ported_last[(call, epoch)] = max(batch, ported_last.get((call, epoch), -1))
    if last != ported_last:
        problems.append("epochs end at different batches: original %s, port %s" % (last, ported_last))
    for key in sorted(set(ours) & set(theirs)):
        if not _close(ours[key], theirs[key], rel):
            problems.append("fit %d, epoch %d, batch %d: original loss %r, port loss %r"
                            % (key + (ours[key], theirs[key])))
            break
    return problems


# words of the emulation's notes that a documented difference explains
# (replicas and accumulation both make one optimizer step average more micro-batches)
_DOCUMENTED_NOTES = {"replication": ("replica", "accumulat"), "accumulation": ("accumulat", "replica")}


def _check_difference(original, port, difference, rel=1e-5):
    kind = difference.get("kind")
    if not difference.get("reason"):
        return ["a documented difference needs a reason"]
    if kind == "trimmed":
        # the port drops the partial batch the original trained on: fewer steps, and until the
        # original reaches its first partial batch both train on the same data
        if len(port.losses) >= len(original.losses):
            return ["documented as trimmed, but the port ran %d steps and the original %d"
                    % (len(port.losses), len(original.losses))]
        if _by_batch(port):
            epoch = original.losses[0][0][:2]
            first = [key for key, _ in original.losses if key[:2] == epoch]
            ours, theirs = dict(original.losses), dict(port.losses)
            common = [key for key in first if key in theirs]
            ported = [key for key in theirs if key[:2] == epoch]
            if not common or max(ported)[2] >= max(first)[2]:
                return ["documented as trimmed, but the port's first epoch is not shorter"]
            for key in common:
                if not _close(ours[key], theirs[key], rel):
                    return ["trimmed: fit %d, epoch %d, batch %d differs before the partial batch: "
                            "original %r, port %r" % (key + (ours[key], theirs[key]))]
        return []
    if kind in _DOCUMENTED_NOTES:
        if not any(word in note for note in port.notes for word in _DOCUMENTED_NOTES[kind]):
            return ["documented as %s, but the emulation saw none" % kind]
        if not all(math.isfinite(value) for _, value in port.losses):
            return ["the port's losses are not finite"]
        return []
    if kind == "per_execution":
        # a per-batch callback changes training (the learning rate) once per execution of
        # steps_per_execution batches, as the port reports: the losses part after the first
        # execution, but the port runs the batches the original runs, and trains
        ours, theirs = dict(original.losses), dict(port.losses)
        if not theirs or not set(theirs) <= set(ours) or max(theirs) != max(ours):
            return ["documented as per_execution, but the port ran other batches than the original"]
        if not all(math.isfinite(value) for value in theirs.values()):
            return ["the port's losses are not finite"]
        return []
    if kind == "random":
        # the same training with other random draws (dropout masks): close, not equal
        tolerance = difference.get("rel", 0.05)
        if _by_batch(port):
            return [problem.replace("loss", "loss (rel %g)" % tolerance, 1)
                    for problem in _compare_keras(original.losses, port.losses, tolerance)]
        return compare(original, port, {}, rel=tolerance)
    return ["unknown difference kind %r" % (kind,)]
