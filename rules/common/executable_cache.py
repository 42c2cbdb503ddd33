import json

from porter.rules.common._analysis.poplarflags import add_tf_flag, flag_is_set
from porter.rule import FIX, KERAS, TF1, TORCH, Example, Rule
from porter.rules.torch._analysis.speed import OptionCall, add_to_existing

_FLAG = "--executable_cache_path="


class ExecutableCache(Rule):
    code = "IPU012"
    name = "executable-cache"
    kind = FIX
    frameworks = frozenset({KERAS, TF1, TORCH})
    summary = "`--executable-cache DIR`: cache compiled executables (`--executable_cache_path` in `TF_POPLAR_FLAGS`)."
    rationale = (
        "Compiling a model for the IPU takes from seconds to many minutes, and every run compiles it "
        "again unless the executable is cached: TensorFlow caches it with the `--executable_cache_path` "
        "flag of `TF_POPLAR_FLAGS` (Targeting the IPU from TensorFlow 2, \"TF_POPLAR_FLAGS environment "
        "variable\": the cache is set only through the environment, which is read when TensorFlow is "
        "imported). With `--executable-cache DIR` the flag "
        "is appended to the variable (flags already set are kept) before the first TensorFlow import; "
        "PopTorch gets `opts.enableExecutableCaching(DIR)` (PopTorch User Guide, \"Options\")."
    )
    examples = (
        Example(
            """\
            import numpy as np
            import tensorflow as tf

            model = tf.keras.Sequential()
            """,
            """\
            import numpy as np
            import os
            os.environ["TF_POPLAR_FLAGS"] = os.environ.get("TF_POPLAR_FLAGS", "") + " --executable_cache_path=./cache"
            import tensorflow as tf

            model = tf.keras.Sequential()
            """,
            options={"executable_cache": "./cache"},
        ),
        Example(
            '''\
            """Train."""
            import os

            from tensorflow import keras
            ''',
            '''\
            """Train."""
            import os

            os.environ["TF_POPLAR_FLAGS"] = os.environ.get("TF_POPLAR_FLAGS", "") + " --executable_cache_path=/tmp/ipu"
            from tensorflow import keras
            ''',
            options={"executable_cache": "/tmp/ipu"},
        ),
        Example(
            """\
            import poptorch
            import torch

            opts = poptorch.Options()
            opts.replicationFactor(2)
            """,
            """\
            import poptorch
            import torch

            opts = poptorch.Options()
            opts.enableExecutableCaching("/tmp/exe")
            opts.replicationFactor(2)
            """,
            options={"executable_cache": "/tmp/exe"},
        ),
        Example("""\
            import tensorflow as tf

            model = tf.keras.Sequential()
            """, reported=False),
        Example(
            """\
            import os
            os.environ["TF_POPLAR_FLAGS"] = "--executable_cache_path=/data/cache"
            import tensorflow as tf
            """,
            reported=False, options={"executable_cache": "./cache"},
        ),
    )

    def run(self, ctx) -> None:
        if TORCH in ctx.frameworks:
            add_to_existing(ctx, self)  # options IPU302 creates get it there
        folder = ctx.config.executable_cache
        if not folder or flag_is_set(ctx, _FLAG) or not ctx.frameworks & {KERAS, TF1}:
            return
        anchor = add_tf_flag(ctx, _FLAG + folder)
        if anchor is None:
            ctx.report(self.code, ctx.module, "TensorFlow is only imported inside functions: set "
                       f"`TF_POPLAR_FLAGS` (append `{_FLAG + folder}`) before the first import runs", fixed=False)
        else:
            ctx.report(self.code, anchor, f"`TF_POPLAR_FLAGS` gets `{_FLAG}{folder}` before TensorFlow is "
                       "imported: compiled executables are cached there and reused by later runs", fixed=True)

    @staticmethod
    def option_call(config, training: bool):
        """PopTorch's cache: ``opts.enableExecutableCaching(DIR)``."""
        folder = config.executable_cache
        if not folder:
            return None
        return OptionCall("enableExecutableCaching", json.dumps(folder), f"compiled executables cached in {folder}")


RULE = ExecutableCache()
