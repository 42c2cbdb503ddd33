"""The names a training loop binds are the wrapper's arguments, whatever builtin they shadow
(`input`, `iter`, `len`), in tuple targets and whole batches read by subscripts alike."""

import pytest

from porter.config import Config
from porter.engine import port

LOOP = """\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader


def main():
    model = nn.Linear(4, 2)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(dataset, batch_size=8)
    for epoch in range(2):
        {loop}
            optimizer.zero_grad()
            output = model({inputs})
            loss = criterion(output, {target})
            loss.backward()
            optimizer.step()
"""


@pytest.mark.parametrize("loop, inputs, target, forward, call", [
    ("for input, target in loader:", "input", "target",
     "def forward(self, input, target):", "output, loss = training_model(input, target)"),
    ("for iter, (len, target) in enumerate(loader):", "len", "target",
     "def forward(self, len, target):", "output, loss = training_model(len, target)"),
    ("for batch in loader:", "batch[0]", "batch[1]",
     "def forward(self, batch):", "output, loss = training_model(batch)"),
    ('for batch in loader:', 'batch["x"]', 'batch["y"]',
     "def forward(self, batch):", "output, loss = training_model(batch)"),
])
def test_loop_names_become_the_wrappers_arguments(loop, inputs, target, forward, call):
    source = LOOP.format(loop=loop, inputs=inputs, target=target)
    result = port(source, Config())
    assert result.error is None
    assert f"    {forward}\n        output = self.model({inputs})\n" in result.source
    assert f"            {call}\n" in result.source
    assert port(result.source, Config()).source == result.source
