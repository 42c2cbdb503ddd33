"""The emulated PopTorch (tests/emulation/poptorch_emu.py): one test per constraint of reference
section 4, each raising on the bad case and passing the good one."""

import sys

import pytest

torch = pytest.importorskip("torch")

from emulation import emulated_ipu  # noqa: E402


@pytest.fixture
def poptorch():
    with emulated_ipu(tensorflow=False) as state:
        import poptorch
        poptorch.state = state
        yield poptorch
    assert "poptorch" not in sys.modules


class WithLoss(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x, y):
        out = self.linear(x)
        return out, torch.nn.functional.cross_entropy(out, y)


class WithoutLoss(WithLoss):
    def forward(self, x, y=None):
        return self.linear(x)


def batch(n=8):
    generator = torch.Generator().manual_seed(1)
    return torch.randn(n, 4, generator=generator), torch.randint(0, 3, (n,), generator=generator)


def test_removed_after_the_block():
    with emulated_ipu(tensorflow=False):
        import poptorch  # noqa: F401
    assert "poptorch" not in sys.modules and "poptorch.optim" not in sys.modules


def test_setters_chain_and_return_self(poptorch):
    opts = poptorch.Options()
    assert opts.deviceIterations(2).replicationFactor(1).randomSeed(3).useIpuModel(True) is opts
    assert opts.enableExecutableCaching("/tmp/cache").outputMode(poptorch.OutputMode.All) is opts
    assert (opts.device_iterations, opts.random_seed, opts.executable_cache_dir) == (2, 3, "/tmp/cache")


def test_gradient_accumulation_returns_the_training_sub_object(poptorch):
    opts = poptorch.Options()
    returned = opts.Training.gradientAccumulation(4)
    assert returned is opts.Training and returned is not opts
    assert not hasattr(returned, "deviceIterations")


def test_random_seed_asserts_int_and_seeds_torch(poptorch):
    with pytest.raises(AssertionError):
        poptorch.Options().randomSeed(1.5)
    poptorch.Options().randomSeed(5)
    first = torch.rand(1)
    torch.manual_seed(5)
    assert torch.equal(first, torch.rand(1))


def test_anchor_mode_is_gone(poptorch):
    assert not hasattr(poptorch.Options(), "anchorMode")
    assert not hasattr(poptorch, "AnchorMode")


def test_output_mode_return_period_only_with_every_n(poptorch):
    with pytest.raises(ValueError):
        poptorch.Options().outputMode(poptorch.OutputMode.All, 2)
    poptorch.Options().outputMode(poptorch.OutputMode.EveryN, 2)


def test_options_frozen_after_first_use(poptorch):
    opts = poptorch.Options()
    opts.deviceIterations(2)
    poptorch.DataLoader(opts, torch.utils.data.TensorDataset(*batch(8)), batch_size=2)
    with pytest.raises(AttributeError, match="Can't modify frozen Options"):
        opts.deviceIterations(4)
    with pytest.raises(AttributeError, match="Can't modify frozen Options"):
        opts.Training.gradientAccumulation(2)


def test_clone_is_modifiable(poptorch):
    opts = poptorch.Options()
    poptorch.trainingModel(WithLoss(), opts)
    clone = opts.clone()
    clone.Training.gradientAccumulation(1)
    assert clone.deviceIterations(3) is clone


def test_dataloader_options_first_and_asserted(poptorch):
    dataset = torch.utils.data.TensorDataset(*batch(8))
    with pytest.raises(TypeError):
        poptorch.DataLoader(dataset, batch_size=2)  # no options: the dataset is missing
    with pytest.raises(AssertionError):
        poptorch.DataLoader(dataset, dataset, batch_size=2)
    assert len(poptorch.DataLoader(poptorch.Options(), dataset, batch_size=2)) == 4


def test_dataloader_drops_last_by_default_with_the_combined_batch(poptorch):
    dataset = torch.utils.data.TensorDataset(*batch(20))
    opts = poptorch.Options().deviceIterations(2)
    opts.Training.gradientAccumulation(2)
    loader = poptorch.DataLoader(opts, dataset, batch_size=2)
    assert loader.combinedBatchSize == 8
    assert [len(x) for x, _ in loader] == [8, 8]
    kept = poptorch.DataLoader(poptorch.Options(), dataset, batch_size=8, drop_last=False)
    assert [len(x) for x, _ in kept] == [8, 8, 4]


def test_training_model_runs_forward_backward_and_step(poptorch):
    model = WithLoss()
    reference = WithLoss()
    x, y = batch()
    training = poptorch.trainingModel(model, poptorch.Options(), torch.optim.SGD(model.parameters(), lr=0.1))
    out, loss = training(x, y)
    optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    ref_loss = torch.nn.functional.cross_entropy(reference.linear(x), y)
    ref_loss.backward()
    optimizer.step()
    assert loss.item() == pytest.approx(ref_loss.item())
    assert torch.allclose(model.linear.weight, reference.linear.weight)
    assert poptorch.state.training_losses == [pytest.approx(ref_loss.item())]


def test_training_model_requires_the_loss_from_forward(poptorch):
    x, y = batch()
    with pytest.raises(RuntimeError, match="must compute and return the loss"):
        poptorch.trainingModel(WithoutLoss())(x, y)
    poptorch.trainingModel(WithLoss())(x, y)


def test_identity_loss_needs_a_reduction(poptorch):
    with pytest.raises(TypeError):
        poptorch.identity_loss(torch.ones(2))
    with pytest.raises(ValueError):
        poptorch.identity_loss(torch.ones(2), reduction="average")
    assert poptorch.identity_loss(torch.ones(2), reduction="sum").item() == 2


def test_identity_loss_marks_a_non_scalar_loss(poptorch):
    class Marked(WithLoss):
        def forward(self, x, y):
            out = self.linear(x)
            loss = torch.nn.functional.cross_entropy(out, y, reduction="none")
            return out, poptorch.identity_loss(loss, reduction="none")

    poptorch.trainingModel(Marked())(*batch())


def test_two_independent_losses_are_refused(poptorch):
    class Two(WithLoss):
        def forward(self, x, y):
            out = self.linear(x)
            return out.sum(), out.mean()

    with pytest.raises(RuntimeError, match="Multiple independent losses"):
        poptorch.trainingModel(Two())(*batch())


def test_second_training_wrap_refused_until_destroyed(poptorch):
    model = WithLoss()
    first = poptorch.trainingModel(model)
    with pytest.raises(RuntimeError, match="Model has already been wrapped in 'poptorch.trainingModel'"):
        poptorch.trainingModel(model)
    first.destroy()
    poptorch.trainingModel(model)


def test_inference_model_refuses_gradient_accumulation(poptorch):
    opts = poptorch.Options()
    opts.Training.gradientAccumulation(4)
    with pytest.raises(RuntimeError, match="gradientAccumulation to 1"):
        poptorch.inferenceModel(WithoutLoss(), opts)
    out = poptorch.inferenceModel(WithoutLoss(), poptorch.Options())(batch()[0])
    assert out.shape == (8, 3) and not out.requires_grad


def test_inference_model_takes_no_optimizer(poptorch):
    with pytest.raises(TypeError):
        poptorch.inferenceModel(WithoutLoss(), poptorch.Options(), torch.optim.SGD([torch.zeros(1)], lr=1))


def test_unsupported_optimizer_asserts(poptorch):
    model = WithLoss()
    with pytest.raises(AssertionError, match="Unsupported optimizer type"):
        poptorch.trainingModel(model, optimizer=torch.optim.Adagrad(model.parameters()))
    for optimizer in (torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW, torch.optim.RMSprop):
        poptorch.trainingModel(WithLoss(), optimizer=optimizer(model.parameters(), lr=0.1))


def test_amsgrad_refused(poptorch):
    model = WithLoss()
    with pytest.raises(ValueError, match="Only non-amsgrad Adam/AdamW optimizers are supported."):
        poptorch.optim.Adam(model.parameters(), lr=0.1, amsgrad=True)
    with pytest.raises(ValueError, match="Only non-amsgrad"):
        poptorch.trainingModel(model, optimizer=torch.optim.AdamW(model.parameters(), amsgrad=True))
    poptorch.optim.AdamW(model.parameters(), lr=0.1, amsgrad=False)


def test_poptorch_optimizers_take_the_reference_signatures(poptorch):
    params = list(WithLoss().parameters())
    sgd = poptorch.optim.SGD(params, 0.1, momentum=0.9, loss_scaling=128.0, velocity_scaling=1.0,
                             use_combined_accum=False, accum_type=torch.float16, max_grad_norm=1.0)
    assert sgd.param_groups[0]["momentum"] == 0.9
    assert poptorch.optim.SGD(params, 0.1).param_groups[0]["momentum"] == 0
    poptorch.optim.RMSprop(params, lr=0.1, use_tf_variant=True, loss_scaling=2.0)
    poptorch.optim.AdamW(params, lr=0.1, bias_correction=False)
    with pytest.raises(TypeError):
        poptorch.optim.SGD(params)  # lr is required


def test_lamb_trains(poptorch):
    model = WithLoss()
    training = poptorch.trainingModel(model, optimizer=poptorch.optim.LAMB(model.parameters(), lr=0.01))
    losses = [training(*batch())[1].item() for _ in range(5)]
    assert losses[-1] < losses[0]


def test_default_optimizer_is_sgd_lr_0_01(poptorch):
    training = poptorch.trainingModel(WithLoss())
    assert isinstance(training._optimizer, poptorch.optim.SGD)
    assert training._optimizer.param_groups[0]["lr"] == 0.01


def test_set_optimizer_is_how_a_new_learning_rate_reaches_the_device(poptorch):
    def train(set_optimizer):
        model = WithLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        training = poptorch.trainingModel(model, optimizer=optimizer)
        training(*batch())
        for group in optimizer.param_groups:
            group["lr"] = 0.0
        if set_optimizer:
            training.setOptimizer(optimizer)
        before = model.linear.weight.clone()
        training(*batch())
        return torch.equal(before, model.linear.weight)

    assert train(set_optimizer=True)       # lr 0 reached the device: weights unchanged
    assert not train(set_optimizer=False)  # the device still uses lr 0.1


def test_device_iterations_take_one_step_per_iteration(poptorch):
    opts = poptorch.Options().deviceIterations(2)
    model = WithLoss()
    training = poptorch.trainingModel(model, opts, torch.optim.SGD(model.parameters(), lr=0.1))
    x, y = batch(8)
    out, loss = training(x, y)
    assert out.shape == (4, 3) and loss.dim() == 0  # OutputMode.Final: the last iteration only
    assert len(poptorch.state.training_losses) == 2
    with pytest.raises(ValueError, match="not divisible"):
        poptorch.trainingModel(WithLoss(), poptorch.Options().deviceIterations(2))(*batch(5))


def test_output_mode_all_returns_every_iteration(poptorch):
    opts = poptorch.Options().deviceIterations(2).outputMode(poptorch.OutputMode.All)
    out, loss = poptorch.trainingModel(WithLoss(), opts)(*batch(8))
    assert out.shape == (8, 3) and loss.shape == (2,)


def test_detach_needs_a_compiled_attached_model(poptorch):
    training = poptorch.trainingModel(WithLoss())
    with pytest.raises(RuntimeError):
        training.detachFromDevice()
    training(*batch())
    training.detachFromDevice()
    assert not training.isAttachedToDevice()
    with pytest.raises(RuntimeError):
        training.detachFromDevice()
    training(*batch())  # a call re-attaches
    assert training.isAttachedToDevice()


def test_begin_block_and_block(poptorch):
    model = WithLoss()
    assert poptorch.BeginBlock(model.linear, ipu_id=1) is model.linear
    with pytest.raises(TypeError):
        poptorch.BeginBlock(lambda x: x)
    with poptorch.Block(ipu_id=0):
        pass


class TwoStage(WithLoss):
    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(3, 3)

    def forward(self, x, y):
        out = self.head(self.linear(x))
        return out, torch.nn.functional.cross_entropy(out, y)


def test_ipu_count_is_a_power_of_two(poptorch):
    with pytest.raises(RuntimeError, match="not a power of 2"):
        poptorch.trainingModel(WithLoss(), poptorch.Options().replicationFactor(3))
    poptorch.trainingModel(WithLoss(), poptorch.Options().replicationFactor(3).autoRoundNumIPUs(True))
    poptorch.trainingModel(WithLoss(), poptorch.Options().replicationFactor(4))


def test_pipelined_training_needs_accumulation_for_every_stage(poptorch):
    model = TwoStage()
    poptorch.BeginBlock(model.linear, ipu_id=0)
    poptorch.BeginBlock(model.head, ipu_id=1)
    opts = poptorch.Options()
    opts.Training.gradientAccumulation(2)
    with pytest.raises(RuntimeError, match="gradientAccumulation must be at least 3"):
        poptorch.trainingModel(model, opts)
    opts = poptorch.Options()
    opts.Training.gradientAccumulation(4)
    training = poptorch.trainingModel(model, opts)
    out, loss = training(*batch(8))
    assert out.shape == (2, 3)  # OutputMode.Final: the last micro-batch


def test_pipelined_inference_needs_device_iterations_for_every_stage(poptorch):
    model = TwoStage()
    poptorch.BeginBlock(model.head, ipu_id=1)
    with pytest.raises(RuntimeError, match="deviceIterations must be at least 2"):
        poptorch.inferenceModel(model, poptorch.Options())
    poptorch.inferenceModel(model, poptorch.Options().deviceIterations(2))


# where the work ran, weights and shapes (issue 15, gaps 1 and 3) --------------------------------

def cpu_step(model, x, y, lr=0.5):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    optimizer.zero_grad()
    model(x, y)[1].backward()
    optimizer.step()


def test_model_calls_and_cpu_optimizer_steps_are_counted(poptorch):
    model = WithLoss()
    training = poptorch.trainingModel(model, poptorch.Options().deviceIterations(2))
    training(*batch(8))
    training(*batch(8))
    poptorch.inferenceModel(WithoutLoss())(batch(8)[0])
    assert (poptorch.state.ipu_executions, poptorch.state.cpu_training_steps) == (3, 0)
    cpu_step(WithLoss(), *batch(8))
    assert (poptorch.state.ipu_executions, poptorch.state.cpu_training_steps) == (3, 1)


def test_cpu_training_after_compiling_is_invisible_until_copied_to_the_device(poptorch):
    model = WithLoss()
    inference = poptorch.inferenceModel(model)
    x, y = batch(8)
    before = inference(x, y)[0]
    cpu_step(model, x, y)
    assert torch.equal(inference(x, y)[0], before)  # the device still holds the compiled weights
    inference.copyWeightsToDevice()
    after = inference(x, y)[0]
    assert not torch.equal(after, before)
    assert torch.allclose(after, model(x, y)[0])


def test_training_model_overwrites_cpu_training_it_never_saw(poptorch):
    model = WithLoss()
    training = poptorch.trainingModel(model, optimizer=torch.optim.SGD(model.parameters(), lr=0.0))
    x, y = batch(8)
    training(x, y)
    trained = model.linear.weight.detach().clone()
    cpu_step(model, x, y)
    training(x, y)  # lr 0: the device's weights come back unchanged
    assert torch.equal(model.linear.weight, trained)


def test_inference_model_of_a_trained_model_follows_the_training_wrapper(poptorch):
    model = WithLoss()
    training = poptorch.trainingModel(model, optimizer=torch.optim.SGD(model.parameters(), lr=0.5))
    inference = poptorch.inferenceModel(model)
    x, y = batch(8)
    before = inference(x, y)[0]
    training(x, y)
    after = inference(x, y)[0]
    assert not torch.equal(after, before)
    assert torch.allclose(after, model.linear(x))


def test_input_shapes_are_frozen_by_the_first_call(poptorch):
    inference = poptorch.inferenceModel(WithoutLoss())
    inference(batch(8)[0])
    with pytest.raises(poptorch.Error, match=r"Shape mismatch for input 0: expected \[8, 4\] but got "
                                             r"\[4, 4\]\.\nThis error occurred because the inputs"):
        inference(batch(4)[0])
    with pytest.raises(poptorch.Error, match="Dtype mismatch"):
        inference(batch(8)[0].double())
    training = poptorch.trainingModel(WithLoss())
    training(*batch(8))
    with pytest.raises(poptorch.Error, match="Shape mismatch"):
        training(*batch(4))
    training.destroy()
    poptorch.trainingModel(training._model)(*batch(4))  # a new wrapper compiles for the new shape


def test_lazy_modules_get_their_weights_at_the_first_call(poptorch):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.LazyLinear(3))
    inference = poptorch.inferenceModel(model)
    x = batch(8)[0]
    assert torch.equal(inference(x), model(x))
    assert torch.equal(inference(x), model(x))
