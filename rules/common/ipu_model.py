from porter.rules.common._analysis.poplarflags import add_tf_flag, flag_is_set
from porter.rule import FIX, KERAS, TF1, TORCH, Example, Rule
from porter.rules.torch._analysis.speed import OptionCall, add_to_existing

_FLAG = "--use_ipu_model"


class IpuModel(Rule):
    code = "IPU013"
    name = "ipu-model"
    kind = FIX
    frameworks = frozenset({KERAS, TF1, TORCH})
    summary = "`--ipu-model`: run on the IPU Model simulator (`--use_ipu_model` in `TF_POPLAR_FLAGS`)."
    rationale = (
        "The IPU Model simulates the IPU on the host: the port can be tried without IPU hardware, and "
        "memory problems can be debugged (Targeting the IPU from TensorFlow 1, \"Running on the IPU Model "
        "simulator\"). TensorFlow selects it with the `--use_ipu_model` flag "
        "of `TF_POPLAR_FLAGS`, appended to the variable so that other flags are kept, before TensorFlow is "
        "imported (Targeting the IPU from TensorFlow 2, \"TF_POPLAR_FLAGS environment variable\"); PopTorch "
        "with `opts.useIpuModel(True)` (PopTorch User Guide, \"Options\")."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential()
            """,
            """\
            import os
            os.environ["TF_POPLAR_FLAGS"] = os.environ.get("TF_POPLAR_FLAGS", "") + " --use_ipu_model"
            import tensorflow as tf

            model = tf.keras.Sequential()
            """,
            options={"ipu_model": True},
        ),
        Example(
            """\
            import poptorch
            import torch

            opts = poptorch.Options()
            """,
            """\
            import poptorch
            import torch

            opts = poptorch.Options()
            opts.useIpuModel(True)
            """,
            options={"ipu_model": True},
        ),
        Example("""\
            import tensorflow as tf

            model = tf.keras.Sequential()
            """, reported=False),
        Example(
            """\
            import os
            os.environ["TF_POPLAR_FLAGS"] = "--use_ipu_model"
            import tensorflow as tf
            """,
            reported=False, options={"ipu_model": True},
        ),
    )

    def run(self, ctx) -> None:
        if TORCH in ctx.frameworks:
            add_to_existing(ctx, self)  # options IPU302 creates get it there
        if not ctx.config.ipu_model or flag_is_set(ctx, _FLAG) or not ctx.frameworks & {KERAS, TF1}:
            return
        anchor = add_tf_flag(ctx, _FLAG)
        if anchor is None:
            ctx.report(self.code, ctx.module, "TensorFlow is only imported inside functions: set "
                       f"`TF_POPLAR_FLAGS` (append `{_FLAG}`) before the first import runs", fixed=False)
        else:
            ctx.report(self.code, anchor, "`TF_POPLAR_FLAGS` gets `--use_ipu_model` before TensorFlow is "
                       "imported: the script runs on the IPU Model simulator, not on IPU hardware", fixed=True)

    @staticmethod
    def option_call(config, training: bool):
        """PopTorch's simulator: ``opts.useIpuModel(True)``."""
        if not config.ipu_model:
            return None
        return OptionCall("useIpuModel", "True", "runs on the IPU Model simulator")


RULE = IpuModel()
