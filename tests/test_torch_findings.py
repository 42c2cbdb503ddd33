"""Findings on PyTorch steps the porter leaves alone name what stops the port, precisely."""

import textwrap

from porter.config import Config
from porter.engine import port


def messages(source: str, code: str):
    result = port(textwrap.dedent(source), Config())
    assert result.error is None
    return [finding.message for finding in result.findings if finding.code == code]


def test_a_conditional_step_is_gradient_accumulation():
    assert messages("""\
        import torch

        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) / 4
            loss.backward()
            if (i + 1) % 4 == 0:
                optimizer.step()
                optimizer.zero_grad()
        """, "IPU305") == [
        "the optimizer steps only under a condition, after several `backward()` calls (gradient accumulation): "
        "rewrite this step by hand with `poptorch.trainingModel` and `opts.Training.gradientAccumulation(n)`"]


def test_a_backward_in_an_optimizer_closure_is_named_so():
    assert messages("""\
        import torch

        optimizer = torch.optim.LBFGS(model.parameters())
        for x, y in loader:
            def closure():
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward()
                return loss
            optimizer.step(closure)
        """, "IPU305") == [
        "`backward()` runs in the optimizer closure `closure` (`optimizer.step(closure)`, as LBFGS needs): "
        "PopTorch optimizers take no closure; rewrite this step by hand with the loss in the model's "
        "`forward` and `poptorch.trainingModel`"]


def test_a_clip_between_backward_and_step_gets_no_accumulation_hint():
    found = messages("""\
        import torch

        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        """, "IPU305")
    assert len(found) == 1 and "accumulation" not in found[0] and "max_grad_norm=" in found[0]
