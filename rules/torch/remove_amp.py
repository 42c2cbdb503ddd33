from typing import Set

import libcst as cst

from porter.rule import FIX, TORCH, Example, Rule
from porter.rules.torch._analysis.loop import plan
from porter.cstutil import assigned_name, expr_call, method_of, name_of
from porter import scopes
from porter.scopes import loads, owner_body
from porter.statements import remove_statement
from porter.rules.torch._analysis.util import GRAD_SCALER, autocast_names, is_autocast, qualified

FLOAT32 = ("the port trains in float32; for float16 on the IPU cast the model and inputs with `.half()` and "
           "give the `poptorch.optim` optimizer `loss_scaling=...` (and `accum_type=torch.float16`) "
           "(PopTorch User Guide, \"16-bit float support\")")
_SCALER_METHODS = ("scale", "step", "update", "unscale_")

_BEFORE = '''import torch
from torch.cuda.amp import GradScaler, autocast

scaler = GradScaler()
for x, y in loader:
    optimizer.zero_grad()
    with autocast():
        out = model(x)
        loss = criterion(out, y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
'''
_AFTER = '''import torch
from torch.cuda.amp import GradScaler, autocast

for x, y in loader:
    optimizer.zero_grad()
    out = model(x)
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()
'''


class RemoveAmp(Rule):
    code = "IPU309"
    name = "remove-amp"
    kind = FIX
    frameworks = frozenset({TORCH})
    # The comments and blank lines of the statements it removes go above the options IPU302 inserts.
    after = ("IPU302",)
    summary = "Remove CUDA automatic mixed precision (`autocast`, `GradScaler`): plain float32 steps."
    rationale = (
        "There is no `torch.cuda.amp` on the IPU and `poptorch.autocast` was removed in SDK 3.1 "
        "(PopTorch User Guide, \"16-bit float support\"). `autocast` blocks are removed (their bodies kept) "
        "and the "
        "GradScaler step becomes the plain `loss.backward(); optimizer.step()`, which IPU305 then runs as "
        "a `poptorch.trainingModel`. The port trains in float32: float16 on the IPU is a manual `.half()` "
        "of the model and inputs plus `loss_scaling` on the `poptorch.optim` optimizer."
    )
    examples = (
        Example(_BEFORE, _AFTER),
        Example(
            """\
            import torch

            with torch.no_grad(), torch.autocast('cuda'):
                out = model(x)
            """,
            """\
            import torch

            with torch.no_grad():
                out = model(x)
            """,
        ),
        Example("""\
            import torch

            with torch.no_grad():
                out = model(x)
            """, reported=False),
    )

    def run(self, ctx) -> None:
        owned: Set[int] = set()
        for step in plan(ctx).rewrites:
            owned.update(id(s) for s in (step.autocast, step.backward, step.step, step.update) if s is not None)
        for with_stmt in ctx.nodes(cst.With):
            items = [item for item in with_stmt.items if is_autocast(ctx, item.item)]
            if not items:
                continue
            ctx.report(self.code, with_stmt, f"`autocast` removed: {FLOAT32}", fixed=True)
            if id(with_stmt) in owned:
                continue
            if len(items) == len(with_stmt.items):
                ctx.unwrap(with_stmt)
            else:
                drop = [with_stmt.items.index(item) for item in items]
                ctx.replace(with_stmt, lambda node, drop=drop: _drop_items(node, drop))
        self._remove_autocast_names(ctx)
        for name, creation in self._scalers(ctx):
            uses = [n for n in ctx.nodes(cst.Name) if n.value == name]
            plain = [self._scaler_statement(ctx, n, name) for n in uses]
            if not all(plain[1:]):
                ctx.report(self.code, creation, f"`{name}` (GradScaler) has other uses: remove them by hand; "
                           f"{FLOAT32}", fixed=False)
                continue
            remove_statement(ctx, creation)
            ctx.report(self.code, creation, f"`GradScaler` removed: {FLOAT32}", fixed=True)
            for statement in plain[1:]:
                if id(statement) in owned:
                    continue
                call = expr_call(statement)
                receiver = method_of(call, *_SCALER_METHODS)
                if method_of(call, "backward") is not None:
                    ctx.replace(call.func.value, lambda node: node.args[0].value)
                elif name_of(receiver) == name and call.func.attr.value == "step":
                    ctx.replace(call, lambda node: cst.Call(cst.Attribute(node.args[0].value, cst.Name("step"))))
                else:
                    remove_statement(ctx, statement)

    def _remove_autocast_names(self, ctx) -> None:
        """``amp = functools.partial(torch.autocast, ...)`` / ``amp_ctx = torch.autocast(...)``: removed
        when every use is a ``with`` item (removed above), reported on its line otherwise."""
        for name, creation in autocast_names(ctx):
            scope = scopes.owner(ctx, creation)
            uses = [n for n in loads(owner_body(scope)) if n.value == name and ctx.statement_of(n) is not creation]
            if all(_with_item(ctx, use) for use in uses):
                remove_statement(ctx, creation)
                ctx.report(self.code, creation, f"`{name}` (CUDA autocast) removed with its `with` uses: {FLOAT32}",
                           fixed=True)
            else:
                ctx.report(self.code, creation, f"`{name}` is a CUDA autocast used other than as a `with` item: "
                           f"remove it and its uses by hand; {FLOAT32}", fixed=False)

    @staticmethod
    def _scalers(ctx):
        for statement in ctx.nodes(cst.SimpleStatementLine):
            name = assigned_name(statement)
            value = statement.body[0].value if name else None
            if isinstance(value, cst.Call) and qualified(ctx, value.func) in GRAD_SCALER:
                yield name, statement

    @staticmethod
    def _scaler_statement(ctx, use, name):
        """The statement of ``scaler.scale(loss).backward()``, ``scaler.step(opt)``,
        ``scaler.update()``, ``scaler.unscale_(opt)``; the creation; or None for other uses."""
        statement = ctx.statement_of(use)
        call = expr_call(statement)
        if assigned_name(statement) == name:
            return statement
        if call is None:
            return None
        receiver = method_of(call, "backward")
        if receiver is not None and name_of(method_of(receiver, "scale")) == name and len(receiver.args) == 1:
            return statement
        if name_of(method_of(call, "step", "unscale_")) == name and len(call.args) == 1:
            return statement
        if name_of(method_of(call, "update")) == name and not call.args:
            return statement
        return None


def _with_item(ctx, use: cst.Name) -> bool:
    """``use`` is a ``with`` item (``with amp_ctx:``) or called as one (``with amp():``)."""
    parent = ctx.parent(use)
    if isinstance(parent, cst.Call) and parent.func is use and not parent.args:
        use, parent = parent, ctx.parent(parent)
    return isinstance(parent, cst.WithItem) and parent.item is use


def _drop_items(node: cst.With, drop) -> cst.With:
    items = [item for index, item in enumerate(node.items) if index not in drop]
    items[-1] = items[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return node.with_changes(items=items)


RULE = RemoveAmp()
