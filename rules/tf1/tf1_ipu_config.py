import libcst as cst

from porter.rules.keras._analysis.model_plan import IPU_CONFIG_MARKERS
from porter.rule import FIX, TF1, Example, Rule
from porter.rules.tf1._analysis.graph import calls_by_last_name, find_calls, session_calls
from porter.rules.keras.ipu_config import config_name, config_statements


class IpuConfig(Rule):
    code = "IPU203"
    name = "tf1-ipu-config"
    kind = FIX
    frameworks = frozenset({TF1})
    summary = "Configure the IPU system (`IPUConfig`, `auto_select_ipus`, `configure_ipu_system()`) before the session."
    rationale = (
        "A TF1 graph gets its IPU device only once the system is configured: `cfg = "
        "ipu.config.IPUConfig()`, `cfg.auto_select_ipus = N`, `cfg.configure_ipu_system()` "
        "(Graphcore's TensorFlow 1 tutorial \"Porting a simple example\", \"IPU Configuration\"). The "
        "configuration goes right before the first session is created, with the number of IPUs from `--ipus` "
        "(from `--shards` when the graph is sharded). "
        "A file that already configures the IPU "
        "(also with the old `ipu.utils` API, which IPU010 upgrades) is left alone."
    )
    examples = (
        Example(
            """\
            import tensorflow.compat.v1 as tf


            def main():
                loss = build_graph()

                # train
                with tf.Session() as sess:
                    sess.run(loss)
            """,
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu


            def main():
                loss = build_graph()

                ipu_config = ipu.config.IPUConfig()
                ipu_config.auto_select_ipus = 1
                ipu_config.configure_ipu_system()
                # train
                with tf.Session() as sess:
                    sess.run(loss)
            """,
        ),
        Example(
            """\
            import tensorflow as tf

            loss = build_graph()
            sess = tf.compat.v1.Session()
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            loss = build_graph()
            ipu_config = ipu.config.IPUConfig()
            ipu_config.auto_select_ipus = 1
            ipu_config.configure_ipu_system()
            sess = tf.compat.v1.Session()
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu

            cfg = ipu.config.IPUConfig()
            cfg.auto_select_ipus = 2
            cfg.configure_ipu_system()
            sess = tf.Session()
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu

            cfg = ipu.utils.create_ipu_config()
            cfg = ipu.utils.auto_select_ipus(cfg, 1)
            ipu.utils.configure_ipu_system(cfg)
            sess = tf.Session()
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        sessions = session_calls(ctx)
        if not sessions or has_ipu_configuration(ctx):
            return
        statement = ctx.statement_of(sessions[0])
        # A sharded graph (IPU207, `--shards N`) runs on N IPUs.
        ipus = ctx.config.shards if ctx.config.shards > 1 else ctx.config.ipus
        new = config_statements(config_name(ctx), ipus)
        if ctx.insert_before(statement, new):
            ctx.add_import("tensorflow.python", "ipu", code=self.code)
            sharded = " (one per shard)" if ctx.config.shards > 1 else ""
            ctx.report(self.code, sessions[0], f"IPU system configured with {ipus} IPU{'s' if ipus != 1 else ''}"
                       f"{sharded} before the session", fixed=True)
        else:
            ctx.report(self.code, sessions[0], "configure the IPU system before this session: "
                       "`cfg = ipu.config.IPUConfig()`, `cfg.auto_select_ipus = N`, `cfg.configure_ipu_system()`",
                       fixed=False)


def has_ipu_configuration(ctx) -> bool:
    """True when the file configures the IPU system already: ``IPUConfig``, ``configure_ipu_system``
    (a function, or the method of a config made elsewhere), or the old ``ipu.utils`` API."""
    return bool(find_calls(ctx, *IPU_CONFIG_MARKERS)) or any(
        isinstance(call.func, cst.Attribute) for call in calls_by_last_name(ctx, "configure_ipu_system"))


RULE = IpuConfig()
