from porter.rule import FIX, TORCH, Example, Rule
from porter.rules.torch._analysis.speed import OptionCall, add_to_existing

_BEFORE = '''import torch
import poptorch

opts = poptorch.Options()
loader = poptorch.DataLoader(opts, data)
'''
_AFTER = _BEFORE.replace("opts = poptorch.Options()\n", "opts = poptorch.Options()\nopts.deviceIterations(16)\n")


class DeviceIterations(Rule):
    code = "IPU315"
    name = "device-iterations"
    kind = FIX
    frameworks = frozenset({TORCH})
    summary = "`--device-iterations K`: K batches per device execution (`opts.deviceIterations(K)`)."
    rationale = (
        "By default a PopTorch model runs one batch each time it is called and goes back to the host "
        "between batches; `opts.deviceIterations(K)` runs K batches on the IPU in each call, and the "
        "`poptorch.DataLoader` built with the same options hands the model K batches per replica at once "
        "(PopTorch User Guide, \"Efficient data batching\", sections \"poptorch.Options.deviceIterations\" "
        "and \"poptorch.DataLoader\"). The call goes right after the options are created, because options "
        "are frozen once a data loader or a model uses them (PopTorch User Guide, \"Options\"): on the "
        "options the port creates (IPU302) and on every `poptorch.Options()` of the script that does not "
        "set `deviceIterations` already. The Keras counterpart is `steps_per_execution` (IPU108)."
    )
    examples = (
        Example(_BEFORE, _AFTER, options={"device_iterations": 16}),
        Example(_AFTER, reported=False, options={"device_iterations": 8}),
        Example(_BEFORE, reported=False),
    )

    def run(self, ctx) -> None:
        if ctx.config.device_iterations:
            add_to_existing(ctx, self)  # options IPU302 creates get it there

    @staticmethod
    def option_call(config, training: bool):
        iterations = config.device_iterations
        if not iterations:
            return None
        return OptionCall("deviceIterations", str(iterations), f"{iterations} batches per device execution")


RULE = DeviceIterations()
