from typing import List, Optional

import libcst as cst

from porter.context import code_of
from porter.cstutil import argument
from porter.rule import TORCH, WARN, Example, Rule
from porter.rules.torch._analysis.util import qualified

_RECURRENT = {"torch.nn.LSTM": "LSTM", "torch.nn.GRU": "GRU", "torch.nn.RNN": "RNN",
              "torch.nn.modules.rnn.LSTM": "LSTM", "torch.nn.modules.rnn.GRU": "GRU", "torch.nn.modules.rnn.RNN": "RNN"}
# Positions in `nn.LSTM(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional)`.
_NUM_LAYERS, _DROPOUT, _BIDIRECTIONAL = 2, 5, 6


class RecurrentLayers(Rule):
    code = "IPU318"
    name = "recurrent-layers"
    kind = WARN
    frameworks = frozenset({TORCH})
    summary = "Report `nn.LSTM`/`GRU`/`RNN` with `num_layers > 1`, `dropout > 0` or `bidirectional=True`."
    rationale = (
        "PopTorch supports `torch.nn.LSTM`, `GRU` and `RNN` only as one unidirectional layer without "
        "dropout: `num_layers > 1`, `dropout > 0` and `bidirectional=True` are not supported (PopTorch User "
        "Guide, \"Supported operations\", recurrent layers). The porter reports the layer and what to write: "
        "one single-layer module per layer with an `nn.Dropout` between them, and a second module over the "
        "reversed sequence for a bidirectional layer. A value held in a variable is reported with the "
        "condition under which it matters."
    )
    examples = (
        Example("""\
            import torch.nn as nn

            rnn = nn.LSTM(256, 512, num_layers=2, dropout=0.2)
            """),
        Example("""\
            import torch.nn as nn

            rnn = nn.GRU(ninp, nhid, nlayers, dropout=dropout)
            """),
        Example("""\
            import torch.nn as nn

            rnn = nn.LSTM(256, 512, num_layers=1, batch_first=True)
            """, reported=False),
    )

    def run(self, ctx) -> None:
        for call in ctx.nodes(cst.Call):
            layer = _RECURRENT.get(qualified(ctx, call.func) or "")
            if layer is None:
                continue
            problems = _unsupported(ctx, call)
            if len(problems) == 1 and problems[0].startswith("`dropout"):
                # One layer: PyTorch applies dropout between layers only, so it does nothing here.
                ctx.report(self.code, call, f"PopTorch runs `nn.{layer}` without dropout and this one has "
                           f"{problems[0]}: remove it, a single layer applies no dropout (PyTorch drops out "
                           "between layers only)", fixed=False)
            elif problems:
                ctx.report(self.code, call, f"PopTorch runs `nn.{layer}` only as one unidirectional layer without "
                           f"dropout, and this one has {' and '.join(problems)}: build one `nn.{layer}(..., "
                           f"num_layers=1)` per layer (input size: the previous layer's hidden size{_twice(problems)}) "
                           "and apply `nn.Dropout` between them in `forward`", fixed=False)


def _unsupported(ctx, call: cst.Call) -> List[str]:
    """What of the call PopTorch does not support, said as the code says it."""
    found = []
    layers = _value(call, "num_layers", _NUM_LAYERS)
    if layers is not None and _above(layers, 1):
        found.append(_said(ctx, "num_layers", layers, "> 1"))
    dropout = _value(call, "dropout", _DROPOUT)
    if dropout is not None and _above(dropout, 0):
        found.append(_said(ctx, "dropout", dropout, "> 0"))
    bidirectional = _value(call, "bidirectional", _BIDIRECTIONAL)
    if bidirectional is not None and not (isinstance(bidirectional, cst.Name) and bidirectional.value == "False"):
        found.append(_said(ctx, "bidirectional", bidirectional, "is true"))
    return found


def _value(call: cst.Call, name: str, position: int) -> Optional[cst.BaseExpression]:
    arg = argument(call, name, position)
    return arg.value if arg is not None and not arg.star else None


def _above(node: cst.BaseExpression, bound: float) -> bool:
    """False only for a literal at or below ``bound``: a variable may hold more."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return float(node.evaluated_value) > bound
    return not isinstance(node, cst.Name) or node.value not in ("None", "False")


def _said(ctx, name: str, node: cst.BaseExpression, condition: str) -> str:
    if isinstance(node, (cst.Integer, cst.Float)) or (isinstance(node, cst.Name) and node.value == "True"):
        return f"`{name}={code_of(ctx, node)}`"
    return f"`{name}={code_of(ctx, node)}` (when `{code_of(ctx, node)}` {condition})"


def _twice(problems: List[str]) -> str:
    bidirectional = any(problem.startswith("`bidirectional") for problem in problems)
    return (", twice it after a bidirectional layer; the backward direction is a second module run over "
            "`torch.flip` of the sequence, its outputs concatenated") if bidirectional else ""


RULE = RecurrentLayers()
