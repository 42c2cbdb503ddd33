import libcst as cst

from porter.context import code_of, walk
from porter.cstutil import expr_call, remove_arg, simple_assign
from porter.rule import FIX, TORCH, Example, Rule
from porter.statements import remove_statement
from porter.rules.torch._analysis.util import (
    CUDA_COUNT, GPU_AVAILABLE, cuda_value, is_autocast, is_cuda_string, is_device, qualified, strip_device_call,
)

_NOT_CUDA_DEVICE = ("torch.cuda.amp.", "torch.cuda.is_available", "torch.cuda.device_count")
_LOAD = "torch.load"

_BEFORE = '''import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.backends.cudnn.benchmark = True
model = Net().to(device)
for x, y in loader:
    x, y = x.to(device), y.to(device)
    out = model(x.cuda().to(torch.float16))
torch.cuda.synchronize()
'''
_AFTER = '''import torch

device = torch.device("cpu")
model = Net()
for x, y in loader:
    out = model(x.to(torch.float16))
'''


class RemoveCuda(Rule):
    code = "IPU307"
    name = "remove-cuda"
    kind = FIX
    frameworks = frozenset({TORCH})
    # The comments and blank lines of the statements it removes are carried past those IPU305 removed.
    after = ("IPU305",)
    summary = "Keep the model and data on the CPU: remove `.cuda()`, `.to(device)` and CUDA calls."
    rationale = (
        "PopTorch installs the CPU build of torch: `torch.cuda.is_available()` is False and `.cuda()` fails. "
        "Models and inputs stay on the CPU and the PopTorch wrappers move the data. "
        "`.cuda()` and `.to(device)` go (`.to(dtype)` stays), the device selection becomes "
        "`torch.device(\"cpu\")` (other uses of `device` keep working), `if torch.cuda.is_available():` "
        "branches keep their else branch, and `torch.backends.cudnn`/`torch.backends.cuda` flags and "
        "`torch.cuda.synchronize`/`empty_cache`/`manual_seed_all` calls are removed; NVIDIA Transformer "
        "Engine modules (CUDA only) are reported."
    )
    examples = (
        # Device indices and ranks, f-strings, checkpoints mapped to the GPU, the accelerator API.
        Example(
            """\
import torch

device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"
state = torch.load(args.checkpoint, map_location=f"cuda:{args.gpu}")
model = Net().to(local_rank)
for images, target in loader:
    images = images.cuda(args.gpu, non_blocking=True)
    loss = criterion(model(images), target.to(self.gpu_id))
""",
            """\
import torch

device = "cpu"
state = torch.load(args.checkpoint, map_location="cpu")
model = Net()
for images, target in loader:
    loss = criterion(model(images), target)
""",
        ),
        Example(_BEFORE, _AFTER),
        Example(
            """\
            import torch

            if torch.cuda.is_available():
                model = model.cuda()
            else:
                print('cpu')
            """,
            """\
            import torch

            print('cpu')
            """,
        ),
        Example(
            """\
            import torch

            use_cuda = not args.no_cuda and torch.cuda.is_available()
            x = torch.zeros(3, device='cuda')
            """,
            """\
            import torch

            use_cuda = False
            x = torch.zeros(3)
            """,
        ),
        Example(
            """\
            import torch

            if torch.cuda.device_count() > 1:
                print('GPUs')
            model = Net()
            """,
            """\
            import torch

            model = Net()
            """,
        ),
        Example(
            """\
            import torch

            torch.cuda.reset_peak_memory_stats()
            x = x.pin_memory()
            print(torch.cuda.max_memory_allocated())
            """,
            """\
            import torch

            print(torch.cuda.max_memory_allocated())
            """,
        ),
        Example("""\
            import torch

            x = torch.ones(2).to(torch.float16)
            y = x.to(dtype=torch.float32)
            """,
                reported=False),
        # NVIDIA Transformer Engine modules need CUDA: reported where they are built.
        Example("""\
            import torch
            import transformer_engine.pytorch as te

            projection = te.Linear(768, 768)
            """, reported=True),
    )

    def run(self, ctx) -> None:
        handled = set()
        for if_stmt in ctx.nodes(cst.If):
            value = cuda_value(ctx, if_stmt.test)
            if value is None or ctx.block_of(if_stmt) is None or not isinstance(if_stmt.body, cst.IndentedBlock):
                continue
            orelse = if_stmt.orelse
            test = code_of(ctx, if_stmt.test)
            if value:
                ctx.unwrap(if_stmt)
                dropped = if_stmt.orelse
                message = f"`if {test}:` always holds on an IPU host (no CUDA): only its body is kept"
            elif isinstance(orelse, cst.Else) and isinstance(orelse.body, cst.IndentedBlock):
                ctx.replace(if_stmt, _else_branch)
                ctx.unwrap(if_stmt)
                dropped = if_stmt.body
                message = f"`if {test}:` never holds on an IPU host (no CUDA): only its else branch is kept"
            elif orelse is None:
                remove_statement(ctx, if_stmt)
                dropped = if_stmt
                message = f"`if {test}:` never holds on an IPU host (no CUDA): removed"
            else:
                continue
            handled.update(id(node) for node in walk(if_stmt.test))
            if dropped is not None:
                handled.update(id(node) for node in walk(dropped))
            ctx.report(self.code, if_stmt, message, fixed=True)
        for choice in ctx.nodes(cst.IfExp):
            value = cuda_value(ctx, choice.test)
            if value is None or id(choice) in handled or any(
                    isinstance(node, cst.Call) and qualified(ctx, node.func) == "torch.device"
                    for node in ctx.ancestors(choice)):
                continue  # `torch.device("cuda" if ... else "cpu")` is the device statement's
            kept, dropped = (choice.body, choice.orelse) if value else (choice.orelse, choice.body)
            ctx.replace(choice, lambda node, value=value: node.body if value else node.orelse)
            handled.update(id(node) for part in (choice.test, dropped) for node in walk(part))
            ctx.report(self.code, choice, f"`{code_of(ctx, choice.test)}` is {value} on an IPU host: only "
                       f"`{code_of(ctx, kept)}` is kept", fixed=True)
        for statement in ctx.nodes(cst.SimpleStatementLine):
            if id(statement) not in handled and self._statement(ctx, statement):
                handled.update(id(node) for node in walk(statement))
        for call in ctx.nodes(cst.Call):
            if id(call) in handled:
                continue
            if strip_device_call(ctx, call, call) is not None:
                ctx.replace(call, lambda node, call=call: strip_device_call(ctx, call, node) or node)
                ctx.report(self.code, call.func.attr, f"{_moved(call)} removed: the model and data stay on the "
                           "CPU, PopTorch moves them to the IPU", fixed=True)
            elif qualified(ctx, call.func) in GPU_AVAILABLE:
                ctx.replace(call, cst.Name("False"))
                ctx.report(self.code, call, f"`{qualified(ctx, call.func)}()` is False on an IPU host", fixed=True)
            elif qualified(ctx, call.func) == _LOAD and self._loads_to_gpu(ctx, call):
                ctx.replace(call, _map_to_cpu)
                ctx.report(self.code, call, "`torch.load` maps the tensors to the CPU (`map_location=\"cpu\"`): "
                           "an IPU host has no CUDA device, PopTorch copies the weights to the IPU", fixed=True)
            elif (qualified(ctx, call.func) or "").startswith(_ACCELERATOR):
                ctx.report(self.code, call, f"`{qualified(ctx, call.func)}()` does not exist in the torch that "
                           "PopTorch uses (an AttributeError): keep the model and data on the CPU", fixed=False)
            elif _cuda_api(qualified(ctx, call.func) or "") and qualified(ctx, call.func) != CUDA_COUNT:
                ctx.report(self.code, call, f"`{qualified(ctx, call.func)}()` fails without CUDA (PopTorch uses the "
                           "CPU build of torch): remove it", fixed=False)
            elif (qualified(ctx, call.func) or "").startswith(_TRANSFORMER_ENGINE) and not is_autocast(ctx, call):
                ctx.report(self.code, call, f"`{qualified(ctx, call.func)}` is NVIDIA Transformer Engine, which needs "
                           "CUDA: use the `torch.nn` module it stands for (`torch.nn.Linear`, `LayerNorm`...)",
                           fixed=False)
            else:
                for index, arg in enumerate(call.args):
                    if arg.keyword is not None and arg.keyword.value == "device" and is_cuda_string(arg.value):
                        ctx.replace(call, lambda node, index=index: _drop_arg(node, index))
                        ctx.report(self.code, arg, "`device='cuda'` removed", fixed=True)

    @staticmethod
    def _loads_to_gpu(ctx, call: cst.Call) -> bool:
        location = next((arg for arg in call.args if arg.keyword is not None
                         and arg.keyword.value == "map_location"), None)
        return location is not None and is_device(ctx, location.value) and not (
            isinstance(location.value, cst.SimpleString) and location.value.evaluated_value == "cpu")

    def _statement(self, ctx, statement) -> bool:
        """Whole statements: CUDA calls, cudnn flags, device selection, `x = x.to(device)`."""
        call = expr_call(statement)
        if call is not None:
            full = qualified(ctx, call.func) or ""
            if _cuda_api(full) or (strip_device_call(ctx, call, call) is not None and _trivial(ctx, None, call)):
                remove_statement(ctx, statement)
                ctx.report(self.code, statement, f"`{code_of(ctx, call.func)}(...)` removed (no CUDA on an IPU "
                           "host)", fixed=True)
                return True
            return False
        small = statement.body[0] if len(statement.body) == 1 else None
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            full = qualified(ctx, small.targets[0].target) or ""
            if full.startswith(("torch.backends.cudnn.", "torch.backends.cuda.")):
                remove_statement(ctx, statement)
                ctx.report(self.code, statement, f"`{full} = ...` removed (a CUDA setting)", fixed=True)
                return True
        assign = simple_assign(statement)
        if assign is None:
            return False
        target, value = assign
        if isinstance(value, cst.Call) and qualified(ctx, value.func) == "torch.device" and value.args \
                and _mentions_cuda(ctx, value):
            ctx.replace(value, lambda node: node.with_changes(args=[cst.Arg(cst.SimpleString('"cpu"'))]))
            ctx.report(self.code, value, "the device is the CPU: PopTorch moves the data to the IPU", fixed=True)
            return True
        if is_cuda_string(value) and isinstance(target, cst.Name):
            ctx.replace(value, cst.SimpleString('"cpu"'))
            ctx.report(self.code, value, "the device is the CPU: PopTorch moves the data to the IPU", fixed=True)
            return True
        if cuda_value(ctx, value) is False:
            ctx.replace(value, cst.Name("False"))
            ctx.report(self.code, value, "`torch.cuda.is_available()` is False on an IPU host", fixed=True)
            return True
        if _trivial(ctx, target, value):
            remove_statement(ctx, statement)
            calls = [node for node in walk(value) if isinstance(node, cst.Call)]
            ctx.report(self.code, statement, f"{_moved(calls[0])} removed: the data stays on the CPU, PopTorch "
                       "moves it to the IPU", fixed=True)
            return True
        return False


def _mentions_cuda(ctx, node) -> bool:
    return any(is_cuda_string(n) or (isinstance(n, cst.Call) and qualified(ctx, n.func) in GPU_AVAILABLE)
               or isinstance(n, cst.IfExp) for n in walk(node))


def _trivial(ctx, target, value) -> bool:
    """True when stripping the device calls leaves ``target = target`` (or a bare expression)."""
    if isinstance(value, cst.Tuple):
        if not isinstance(target, cst.Tuple) or len(target.elements) != len(value.elements):
            return False
        return all(_trivial(ctx, t.value, v.value) for t, v in zip(target.elements, value.elements))
    if not isinstance(value, cst.Call):
        return False
    stripped = strip_device_call(ctx, value, value)
    if stripped is None:
        return False
    if isinstance(stripped, cst.Call) and strip_device_call(ctx, stripped, stripped) is not None:
        stripped = strip_device_call(ctx, stripped, stripped)
    if target is None:
        return isinstance(stripped, (cst.Name, cst.Attribute))
    return code_of(ctx, stripped) == code_of(ctx, target)


def _cuda_api(full: str) -> bool:
    """``torch.cuda.*`` calls about the GPU (synchronize, empty_cache, manual_seed_all, memory
    statistics...), not AMP (IPU309) nor the availability tests (kept as False / 0)."""
    return full.startswith("torch.cuda.") and not full.startswith(_NOT_CUDA_DEVICE)


def _map_to_cpu(node: cst.Call) -> cst.Call:
    return node.with_changes(args=[
        arg.with_changes(value=cst.SimpleString('"cpu"')) if arg.keyword is not None
        and arg.keyword.value == "map_location" else arg for arg in node.args])


_ACCELERATOR = "torch.accelerator."
_TRANSFORMER_ENGINE = "transformer_engine."


def _moved(call: cst.Call) -> str:
    return "`.cuda()`" if call.func.attr.value == "cuda" else "`.to(device)`"


def _drop_arg(node: cst.Call, index: int) -> cst.Call:
    return remove_arg(node, index)


def _else_branch(node: cst.If) -> cst.If:
    """The else branch as the body, so that unwrapping the statement keeps it."""
    return node.with_changes(body=node.orelse.body, orelse=None)


RULE = RemoveCuda()
