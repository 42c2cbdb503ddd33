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
]


@pytest.mark.parametrize("sample, edits, caught", BROKEN,
                         ids=["%s-%s" % (sample, caught.split()[0]) for sample, _, caught in BROKEN])
def test_broken_port_fails_the_same_check(tmp_path, sample, edits, caught):
    original = SAMPLES / (sample + ".py")
    text = expected(original).read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    broken = tmp_path / (sample + ".broken.py")
    broken.write_text(text)
    problems, _, _ = check(original, broken, harness.load_spec(original))
    assert problems, "the harness accepted a broken port"
    assert any(caught in problem for problem in problems), problems


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
