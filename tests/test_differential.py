"""Differential tests: every whole-script pair trains to the same losses on the CPU (the original)
and on the emulated IPU (the port), step by step (tests/emulation/harness.py).

* The samples in tests/data/emulation_samples prove the harness: their `.expected.py` files are
  correct ports written by hand.
* BROKEN turns a correct port into a plausible wrong one; the same check must fail on it.
* Every fixture pair under fixtures/ that trains is run the same way. Its `NAME.run.json` gives the
  command line and data sizes, `"skip"` says why a fixture is not run (it does not train), and
  `"xfail"` names a known porter bug (strict: the test fails once the bug is fixed, so the marker
  gets removed)."""

from pathlib import Path

import pytest

from emulation import harness
from repo_util import STRATEGY_MODULE, STRATEGY_SCRIPT, cli, write

pytest.importorskip("tensorflow")
pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "tests" / "data" / "emulation_samples"
FIXTURES = ROOT / "fixtures"


def originals(folder):
    return sorted(path for path in folder.rglob("*.py")
                  if not path.name.endswith(".expected.py")
                  and path.with_name(path.name[:-3] + ".expected.py").exists())


def expected(path):
    return path.with_name(path.name[:-3] + ".expected.py")


def check(original, port, spec):
    ours, theirs = harness.run_pair(original, port, spec)
    return harness.compare(ours, theirs, spec), ours, theirs


@pytest.mark.parametrize("original", originals(SAMPLES), ids=lambda path: path.stem)
def test_sample_port_trains_like_the_original(original):
    spec = harness.load_spec(original)
    problems, ours, theirs = check(original, expected(original), spec)
    assert problems == []
    assert len(theirs.losses) >= 4


# (sample, [(text in the correct port, replacement)], what the emulation must catch)
BROKEN = [
    ("keras_mlp", [(", drop_remainder=True", "")], "not fully defined"),
    ("keras_mlp", [("    ipu_config.configure_ipu_system()\n", "")], "configured"),
    ("keras_mlp", [("with strategy.scope():", "with tf.device('/cpu:0'):")],
     "never ran anything on the (emulated) IPU"),
    ("tf1_mlp", [("[args.batch_size, 784]", "[None, 784]")], "fully defined shape"),
    ("tf1_mlp", [("loss_value, = sess.run(compiled, feed_dict=feed)",
                  "loss_value, = sess.run(compiled[:0] + [tf.constant(2.5)], feed_dict=feed)")],
     "original loss"),
    ("torch_mlp", [("poptorch.trainingModel(TrainingModelWithLoss(model),", "poptorch.trainingModel(model,"),
                   ("            output, loss = training_model(images, labels)\n",
                    "            output = training_model(images)\n            loss = F.nll_loss(output, labels)\n")],
     "must compute and return the loss"),
    ("torch_mlp", [("batch_size=args.batch_size, shuffle=True)", "batch_size=args.batch_size // 2, shuffle=True)")],
     "losses in the original"),
    # issue 15: the emulation says "this would fail"
    ("keras_mlp", [("    with strategy.scope():\n        model = build_model(args.hidden)",
                    "    if True:\n        model = build_model(args.hidden)"),
                   ("        model.evaluate(test_ds)", "    with strategy.scope():\n        model.evaluate(test_ds)")],
     "training steps on the CPU"),
    ("keras_mlp", [("model.fit(train_ds, epochs=args.epochs)",
                    "model.fit(train_ds, epochs=args.epochs, steps_per_epoch=5)")],
     "use the repeat() function"),
    ("keras_mlp", [("tf.keras.layers.Dropout(0.2),", "tf.keras.layers.Lambda(lambda t: tf.math.real(tf.complex(t, t))),")],
     "No registered 'Complex' OpKernel for 'IPU'"),
    ("tf1_mlp", [("    with ipu.scopes.ipu_scope(\"/device:IPU:0\"):\n        compiled = ipu.ipu_compiler.compile("
                  "lambda x, y: model_fn(x, y, args.lr), [images, labels])",
                  "    compiled = model_fn(images, labels, args.lr)"),
                 ("loss_value, = sess.run(compiled, feed_dict=feed)", "loss_value, _ = sess.run(compiled, feed_dict=feed)")],
     "ran 16 training steps on the CPU"),
    ("torch_mlp", [("batch_size=args.batch_size, shuffle=True)", "batch_size=48, shuffle=True, drop_last=False)")],
     "Shape mismatch for input 0: expected [48, 1, 28, 28] but got [16, 1, 28, 28]"),
    ("speed/gradient_tape_loop", [("batch(BATCH_SIZE, drop_remainder=True)", "batch(BATCH_SIZE)")],
     "is not fully defined"),
    # issue 14: a test-set fetch of the compiled training step trains on the test data
    ("tf1/mnist_test_accuracy", [("sess.run(eval_accuracy,", "sess.run(loss,")], "update the weights"),
    # issue 13: partial batches left in the inputs of Keras training
    ("keras/mnist_partial_batches", [("trim_to_multiple(x_test, 32), trim_to_multiple(y_test, 32)", "x_test, y_test")],
     "partial batch"),
    ("keras/mnist_partial_batches", [("trim_to_multiple(part(array, split_at, None), multiple, smallest)",
                                      "part(array, split_at, None)")],
     "129 samples are not divisible"),
    # labels kept as a Python list are samples, not a list of inputs; validation lists are trimmed too
    ("keras/csv_rows_as_lists", [("if isinstance(data, (list, tuple)) and not is_list_of_samples(data):",
                                  "if isinstance(data, (list, tuple)):")], "has no len()"),
    ("keras/csv_rows_as_lists", [("validation_data=(trim_to_multiple(val_x, args.batch_size),\n"
                                  "                                   trim_to_multiple(val_y, args.batch_size))",
                                  "validation_data=(val_x, val_y)")], "63 samples are not divisible"),
    ("keras/helper_batched_dataset", [("dataset.batch(batch_size, drop_remainder=True)", "dataset.batch(batch_size)")],
     "is not fully defined"),
    ("keras/image_folder_classifier", [(".unbatch().batch(16, drop_remainder=True)", "")], "is not fully defined"),
]


def edited(path, edits, folder):
    """A copy of the script at `path` with each (old, new) text replaced."""
    text = path.read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    copy = folder / (path.name[:-len(".expected.py")] + ".broken.py")
    copy.write_text(text)
    return copy


@pytest.mark.parametrize("sample, edits, caught", BROKEN,
                         ids=["%s-%s" % (sample.split("/")[-1], caught.split()[0]) for sample, _, caught in BROKEN])
def test_broken_port_fails_the_same_check(tmp_path, sample, edits, caught):
    original = SAMPLES / (sample + ".py")
    if not original.exists():
        original = FIXTURES / (sample + ".py")
    problems, _, _ = check(original, edited(expected(original), edits, tmp_path), harness.load_spec(original))
    assert problems, "the harness accepted a broken port"
    assert any(caught in problem for problem in problems), problems


# the port keeps training on the CPU and evaluates with an inferenceModel made before the training
CPU_TRAINING = [
    ("        output, loss = training_model(images, labels)\n",
     "        optimizer.zero_grad()\n        output = model(images)\n"
     "        loss = F.nll_loss(output, labels)\n        loss.backward()\n        optimizer.step()\n"),
    ("        training_model.detachFromDevice()\n", ""),
    ("        inference_model.detachFromDevice()\n", ""),
]
WEIGHTS_COPIED = [("        test(model, device, test_loader, inference_model)\n",
                   "        inference_model.copyWeightsToDevice()\n"
                   "        test(model, device, test_loader, inference_model)\n")]


def test_cpu_training_reaches_an_inference_model_only_when_copied(tmp_path):
    original = FIXTURES / "torch" / "mnist_cnn.py"
    spec = dict(harness.load_spec(original), stdout=r"test: average loss ([0-9.]+)",
                cpu_training="trains on the CPU on purpose: the evaluations are compared")
    ours = harness.run_script(original, spec, emulate=False)
    stale = harness.run_script(edited(expected(original), CPU_TRAINING, tmp_path), spec, emulate=True)
    assert harness.compare(ours, stale, spec) == [
        "step 1: original loss %r, port loss %r" % (ours.losses[1][1], stale.losses[1][1])]
    assert stale.losses[1][1] == stale.losses[0][1]  # the device still held the first epoch's weights
    copied = harness.run_script(edited(expected(original), CPU_TRAINING + WEIGHTS_COPIED, tmp_path), spec,
                                emulate=True)
    assert harness.compare(ours, copied, spec) == []
    assert copied.cpu_training_steps == stale.cpu_training_steps == 8


def test_a_scripts_mixed_precision_policy_ends_with_its_run(tmp_path):
    # Scripts run in the test process one after another: a float16 policy left behind would make
    # the next script's original and port compute in float16, and part.
    script = write(tmp_path, "policy.py", "from tensorflow.keras import mixed_precision\n\n"
                   "mixed_precision.set_global_policy(\"mixed_float16\")\n")
    run = harness.run_script(script, {}, emulate=False)
    from emulation import import_tensorflow
    assert run.error is None
    assert import_tensorflow()[1].mixed_precision.global_policy().name == "float32"


def fixture_params():
    params = []
    for original in originals(FIXTURES):
        spec = harness.load_spec(original)
        marks = []
        if spec.get("skip"):
            marks.append(pytest.mark.skip(reason=spec["skip"]))
        elif spec.get("xfail"):
            marks.append(pytest.mark.xfail(reason=spec["xfail"], strict=True))
        params.append(pytest.param(original, id="%s/%s" % (original.parent.name, original.stem), marks=marks))
    return params


@pytest.mark.parametrize("original", fixture_params())
def test_fixture_port_trains_like_the_original(original):
    spec = harness.load_spec(original)
    if spec.get("ipu_only"):
        port = harness.run_script(expected(original), spec, emulate=True)
        assert harness.check_ipu_script(port) == []
        return
    problems, _, _ = check(original, expected(original), spec)
    assert problems == []


def test_a_project_whose_strategy_comes_from_another_module_trains_on_the_ipu(tmp_path):
    # A project ported as a folder: its script enters the scope of the strategy a function of its
    # `common` module returns (repo_util). Each side runs with its own `common`, the port's with
    # the ported one, whose function returns the IPU strategy the script's model code runs in.
    write(tmp_path / "repo", "common.py", STRATEGY_MODULE)
    write(tmp_path / "repo", "train.py", STRATEGY_SCRIPT)
    assert cli(["repo", "--out-dir", "ported"], cwd=tmp_path).exit_code == 0
    ours = harness.run_script(tmp_path / "repo/train.py", {"modules": {"common": STRATEGY_MODULE}}, emulate=False)
    ported_module = (tmp_path / "ported/common.py").read_text()
    theirs = harness.run_script(tmp_path / "ported/train.py", {"modules": {"common": ported_module}}, emulate=True)
    assert harness.compare(ours, theirs, {}) == []
    assert len(theirs.losses) == 8
    # The script's port alone, with the original `common`, would train on the CPU: the check sees it.
    unported = harness.run_script(tmp_path / "ported/train.py", {"modules": {"common": STRATEGY_MODULE}}, emulate=True)
    assert "the port created no IPUStrategy" in harness.compare(ours, unported, {})
