from typing import List, Optional, Set, Tuple

import libcst as cst

from porter.rule import FIX, TORCH, Example, Rule
from porter.rules.torch._analysis.loop import plan
from porter.cstutil import assigned_name, expr_call, method_of, name_of, remove_arg
from porter import scopes
from porter.scopes import is_module_function, loads, owner_body
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
from torch.cuda.amp import autocast

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
        # An autocast factory made once with functools.partial, entered where it is passed to.
        Example(
            """\
            import functools
            import torch


            def evaluate(model, loader, amp):
                for x in loader:
                    with amp():
                        out = model(x)


            amp = functools.partial(torch.autocast, device_type="cuda", dtype=torch.bfloat16)
            evaluate(model, loader, amp)
            """,
            """\
            import functools
            import torch


            def evaluate(model, loader):
                for x in loader:
                    out = model(x)


            evaluate(model, loader)
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
        when every use is a ``with`` item (removed above) or an argument of a function that only enters
        it (the argument and the parameter go too); reported on its line otherwise."""
        dropped = set()
        for name, creation in autocast_names(ctx):
            uses = _loads_of(ctx, scopes.owner(ctx, creation), name, creation)
            passed = [use for use in uses if not _with_item(ctx, use)]
            targets = [_passed_to(ctx, use) for use in passed]
            if not all(targets):
                ctx.report(self.code, creation, f"`{name}` is a CUDA autocast used other than as a `with` item: "
                           f"remove it and its uses by hand; {FLOAT32}", fixed=False)
                continue
            remove_statement(ctx, creation)
            for use, (function, param) in zip(passed, targets):
                arg = ctx.parent(use)
                call = ctx.parent(arg)
                index = list(call.args).index(arg)
                ctx.replace(call, lambda node, index=index: remove_arg(node, index))
                if (id(function), param) not in dropped:
                    dropped.add((id(function), param))
                    ctx.replace(function.params, lambda node, param=param: _without_param(node, param))
            functions = sorted({f"`{function.name.value}()`" for function, _ in targets})
            also = f", and the parameter of {', '.join(functions)} it was passed to" if functions else ""
            ctx.report(self.code, creation, f"`{name}` (CUDA autocast) removed with its `with` uses{also}: {FLOAT32}",
                       fixed=True)

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


def _loads_of(ctx, scope, name: str, creation) -> List[cst.Name]:
    """The reads of the ``name`` that ``scope`` binds, also in the functions it holds that do not
    bind a ``name`` of their own."""
    found = []
    for use in loads(owner_body(scope)):
        if use.value != name or ctx.statement_of(use) is creation or isinstance(ctx.parent(use), cst.Param):
            continue
        owner = scopes.owner(ctx, use)
        if owner is not scope and name in _bound_in(ctx, owner):
            continue
        found.append(use)
    return found


def _bound_in(ctx, function: cst.FunctionDef) -> Set[str]:
    params = function.params
    names = {param.name.value for param in (*params.params, *params.kwonly_params, *params.posonly_params)}
    return names | {bound for _, bound, _ in scopes.assignments(ctx, function)}


def _passed_to(ctx, use: cst.Name) -> Optional[Tuple[cst.FunctionDef, str]]:
    """The module function and its parameter ``use`` is passed to, when that function only enters
    the parameter as a ``with`` item (each of which IPU309 removes), else None."""
    arg = ctx.parent(use)
    call = ctx.parent(arg)
    if not isinstance(arg, cst.Arg) or arg.star or not isinstance(call, cst.Call) or name_of(call.func) is None:
        return None
    function = next((f for f in ctx.nodes(cst.FunctionDef) if f.name.value == call.func.value
                     and is_module_function(ctx, f)), None)
    if function is None:
        return None
    params = [param.name.value for param in function.params.params]
    if arg.keyword is not None:
        param = arg.keyword.value
    else:
        index = [a for a in call.args if a.keyword is None].index(arg)
        param = params[index] if index < len(params) else None
    uses = _loads_of(ctx, function, param, None) if param is not None else []
    if uses and all(_with_item(ctx, n) and is_autocast(ctx, _entered(ctx, n)) for n in uses):
        return function, param
    return None


def _without_param(node: cst.Parameters, name: str) -> cst.Parameters:
    params = [param for param in node.params if param.name.value != name]
    kwonly = [param for param in node.kwonly_params if param.name.value != name]
    if params and node.star_arg is cst.MaybeSentinel.DEFAULT and not kwonly and node.star_kwarg is None:
        params[-1] = params[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return node.with_changes(params=params, kwonly_params=kwonly)


def _entered(ctx, use: cst.Name) -> cst.BaseExpression:
    """The ``with`` item ``use`` stands in: ``amp()`` for a factory, ``amp_ctx`` itself."""
    parent = ctx.parent(use)
    return parent if isinstance(parent, cst.Call) and parent.func is use else use


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
