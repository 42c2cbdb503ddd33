"""After the port of a PyTorch script, no CUDA-only call stays in the file without a finding on its
line: each is removed, rewritten for the CPU host, or reported where it is."""

import difflib
import re
from pathlib import Path

import pytest

from porter.config import Config
from porter.engine import port

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "torch"
# Calls that need a CUDA device (the availability tests and the AMP names, which IPU307 and IPU309
# handle, work on the CPU build of torch).
CUDA_ONLY = re.compile(r"""\.cuda\(|torch\.cuda\.(?!is_available\(|device_count\(|amp\b)"""
                       r"""|device\s*=\s*["']cuda|["']cuda:""")
INPUTS = sorted(path for path in FIXTURES.glob("*.py") if not path.name.endswith(".expected.py"))


def original_lines(source: str, ported: str):
    """Line number in the port -> line number in the source, for the lines the port kept as they were."""
    matcher = difflib.SequenceMatcher(a=source.splitlines(), b=ported.splitlines(), autojunk=False)
    kept = {}
    for block in matcher.get_matching_blocks():
        for offset in range(block.size):
            kept[block.b + offset + 1] = block.a + offset + 1
    return kept


def unreported_cuda(source: str):
    result = port(source, Config())
    assert result.error is None
    reported = {finding.line for finding in result.findings}
    kept = original_lines(source, result.source)
    left = []
    for number, line in enumerate(result.source.splitlines(), 1):
        if CUDA_ONLY.search(line) and not line.lstrip().startswith(("import ", "from ", "#")):
            if kept.get(number) not in reported:
                left.append((kept.get(number), line.strip()))
    return left


@pytest.mark.parametrize("path", INPUTS, ids=lambda path: path.stem)
def test_no_cuda_call_is_left_without_a_finding(path):
    assert unreported_cuda(path.read_text()) == []


def test_the_check_sees_a_cuda_call_left_silently():
    # `torch.cuda.set_device` is reported by IPU307; a CUDA string on a line no rule touches is not.
    source = ('import torch\n\ntorch.cuda.set_device(0)\nstream = make_stream("cuda:1")\n'
              'model = Net().cuda()\n')
    assert unreported_cuda(source) == [(4, 'stream = make_stream("cuda:1")')]
