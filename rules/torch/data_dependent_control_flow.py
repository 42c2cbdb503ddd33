from typing import Set

import libcst as cst

from porter.context import walk
from porter.rule import TORCH, WARN, Example, Rule
from porter.scopes import loads
from porter.cstutil import name_of
from porter.rules.torch._analysis.util import forward_methods, forward_tensors

# Tensor metadata: fixed when PopTorch traces, whatever the values (`x.is_cuda`, `x.dim()`...).
_STATIC_ATTRIBUTES = ("shape", "ndim", "dtype", "device", "training", "size", "dim", "numel", "is_cuda", "is_cpu",
                      "is_sparse", "is_quantized", "is_floating_point", "is_complex", "is_contiguous",
                      "requires_grad", "get_device", "layout")


class WarnControlFlow(Rule):
    code = "IPU314"
    name = "data-dependent-control-flow"
    kind = WARN
    frameworks = frozenset({TORCH})
    summary = "Report `if`/`while` in `forward` that depend on tensor values."
    rationale = (
        "PopTorch traces `forward` once: a branch or loop that depends on the values of the input tensors "
        "is frozen to the path the first batch took (PopTorch User Guide, \"Constraints\"). Use tensor "
        "operations "
        "(`torch.where`, masks) instead; tests on shapes, `None` or `self.training` are fine."
    )
    examples = (
        # Device metadata, as multi-GPU examples test it: not a value of the data.
        Example("""\
            import torch.nn as nn


            class Generator(nn.Module):
                def forward(self, input):
                    if input.is_cuda and self.ngpu > 1:
                        return nn.parallel.data_parallel(self.main, input, range(self.ngpu))
                    return self.main(input)
            """, reported=False),
        Example("""\
            import torch


            class Net(torch.nn.Module):
                def forward(self, x):
                    if x.sum() > 0:
                        x = -x
                    return x
            """),
        Example("""\
            import torch


            class Net(torch.nn.Module):
                def forward(self, x, labels=None):
                    if labels is None or x.shape[0] == 1:
                        return x
                    return x, labels
            """, reported=False),
    )

    def run(self, ctx) -> None:
        for function in forward_methods(ctx):
            tensors = forward_tensors(function)
            for node in walk(function.body):
                if isinstance(node, (cst.If, cst.While, cst.IfExp)) and self._depends(node.test, tensors):
                    kind = {cst.If: "if", cst.While: "while", cst.IfExp: "conditional expression"}[type(node)]
                    ctx.report(self.code, node.test, f"`{kind}` on tensor values in `forward` is frozen to the first "
                               "batch's path when PopTorch compiles: use `torch.where` or masks", fixed=False)

    @staticmethod
    def _depends(test: cst.BaseExpression, tensors: Set[str]) -> bool:
        skipped: Set[int] = set()
        for node in walk(test):
            if isinstance(node, cst.Attribute) and node.attr.value in _STATIC_ATTRIBUTES:
                skipped.update(id(n) for n in walk(node))
            elif isinstance(node, cst.Call) and name_of(node.func) in ("len", "isinstance", "hasattr"):
                skipped.update(id(n) for n in walk(node))
            elif isinstance(node, cst.Comparison) and all(
                    isinstance(target.operator, (cst.Is, cst.IsNot)) for target in node.comparisons):
                skipped.update(id(n) for n in walk(node))
        return any(name.value in tensors and id(name) not in skipped for name in loads(test))


RULE = WarnControlFlow()
