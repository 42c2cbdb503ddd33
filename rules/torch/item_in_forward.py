import libcst as cst

from porter.context import walk
from porter.rule import TORCH, WARN, Example, Rule
from porter.scopes import loads
from porter.cstutil import method_of, name_of
from porter.rules.torch._analysis.util import forward_methods, forward_tensors

_SHAPES = ("size", "dim", "numel", "shape", "ndim")


class WarnItemInForward(Rule):
    code = "IPU312"
    name = "item-in-forward"
    kind = WARN
    frameworks = frozenset({TORCH})
    summary = "Report `.item()`, `.tolist()` and `int(tensor)`/`float(tensor)` inside `forward`."
    rationale = (
        "Inside the compiled `forward` a tensor has no value on the host: `.item()` or `int(tensor)` fails "
        "with `Could not run 'aten::_local_scalar_dense' ... 'Meta' backend` (graphcore/poptorch issue #16 on "
        "GitHub). "
        "Keep the computation in tensors, or do it outside the model."
    )
    examples = (
        Example("""\
            import torch


            class Net(torch.nn.Module):
                def forward(self, x):
                    scale = x.max().item()
                    return x / scale
            """),
        Example("""\
            import torch


            class Net(torch.nn.Module):
                def forward(self, x):
                    n = int(x.size(0))
                    return x.view(n, -1) * float(self.scale)
            """, reported=False),
        Example("""\
            import torch


            class Net(torch.nn.Module):
                def forward(self, x, lengths):
                    return x[:, :int(lengths.max())]
            """),
    )

    def run(self, ctx) -> None:
        for function in forward_methods(ctx):
            tensors = forward_tensors(function)
            for node in walk(function.body):
                if not isinstance(node, cst.Call):
                    continue
                if method_of(node, "item", "tolist") is not None and not node.args:
                    ctx.report(self.code, node, f"`.{node.func.attr.value}()` inside `forward` reads a device value: "
                               "keep it a tensor (or move it out of the model)", fixed=False)
                elif name_of(node.func) in ("int", "float", "bool") and len(node.args) == 1 \
                        and not _static(node.args[0].value) \
                        and any(name.value in tensors for name in loads(node.args[0].value)):
                    ctx.report(self.code, node, f"`{node.func.value}(tensor)` inside `forward` reads a device value: "
                               "keep it a tensor (or move it out of the model)", fixed=False)


def _static(node) -> bool:
    """Shapes, lengths and literals are known when compiling."""
    for child in walk(node):
        if isinstance(child, cst.Attribute) and child.attr.value in _SHAPES:
            return True
        if isinstance(child, cst.Call) and name_of(child.func) == "len":
            return True
    return isinstance(node, (cst.Integer, cst.Float, cst.SimpleString))


RULE = WarnItemInForward()
