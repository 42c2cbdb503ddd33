import libcst as cst

from porter.rule import FIX, KERAS, TF1, Example, Rule


class IpuImport(Rule):
    """Reach the IPU module through its own import, never through ``tf.python.ipu``."""

    code = "IPU101"
    name = "ipu-import"
    kind = FIX
    frameworks = frozenset({KERAS, TF1})
    summary = "Import the IPU module with `from tensorflow.python import ipu`."
    rationale = (
        "The IPU module only works when imported directly (`from tensorflow.python import ipu`), "
        "not reached through the top-level `tf` module (Graphcore's \"Keras tutorial: How to run on IPU\", "
        "\"Import the TensorFlow IPU module\"). Every rule that writes IPU code asks for this import, and it "
        "is reported under this code; this "
        "rule also rewrites attribute access such as `tf.python.ipu.config` to `ipu.config`."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf

            cfg = tf.python.ipu.config.IPUConfig()
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            cfg = ipu.config.IPUConfig()
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            cfg = ipu.config.IPUConfig()
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        for attribute in ctx.nodes(cst.Attribute):
            if ctx.qualified_name(attribute) != "tensorflow.python.ipu":
                continue
            if ctx.aliases.get("ipu", "tensorflow.python.ipu") != "tensorflow.python.ipu":
                continue  # `ipu` already names something else in this file
            ctx.replace(attribute, cst.Name("ipu"))
            ctx.add_import("tensorflow.python", "ipu", code=self.code)
            ctx.report(self.code, attribute, "`tf.python.ipu` becomes `ipu`", fixed=True)


RULE = IpuImport()
