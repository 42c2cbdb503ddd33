import libcst as cst

from porter.rule import FIX, TORCH, Example, Rule
from porter.rules.torch._analysis.loop import needs_poptorch
from porter.rules.torch._analysis.util import DATALOADER, calls_to


class PoptorchImport(Rule):
    code = "IPU301"
    name = "poptorch-import"
    kind = FIX
    frameworks = frozenset({TORCH})
    summary = "Import PopTorch with `import poptorch`."
    rationale = (
        "Every PopTorch API the port writes (`poptorch.Options`, `poptorch.DataLoader`, `poptorch.optim`, "
        "`poptorch.trainingModel`, `poptorch.inferenceModel`) lives in the `poptorch` package (PopTorch User "
        "Guide). The rules that write PopTorch code ask for the import and it is reported under this "
        "code; this rule also adds it to a script that uses `poptorch.` names without importing it."
    )
    examples = (
        Example(
            """\
            import torch

            opts = poptorch.Options()
            """,
            """\
            import torch
            import poptorch

            opts = poptorch.Options()
            """,
        ),
        Example(
            """\
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, batch_size=8)
            """,
            """\
            import torch
            from torch.utils.data import DataLoader
            import poptorch

            loader = DataLoader(ds, batch_size=8)
            """,
        ),
        Example("""\
            import torch
            import poptorch

            opts = poptorch.Options()
            """, reported=False),
        Example("""\
            import torch

            x = torch.ones(3)
            """, reported=False),
    )

    def run(self, ctx) -> None:
        if "poptorch" in ctx.aliases:
            return
        uses_name = any(node.value == "poptorch" for node in ctx.nodes(cst.Name))
        converts = bool(calls_to(ctx, *DATALOADER))
        if uses_name or converts or needs_poptorch(ctx):
            ctx.add_import("poptorch", code=self.code)


RULE = PoptorchImport()
