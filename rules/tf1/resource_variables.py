import libcst as cst

from porter.rule import FIX, TF1, Example, Rule
from porter.rules.tf1._analysis.graph import calls_by_last_name, calls_named, runs_on_ipu, tf_call_name, tf_module

_CREATORS = {"Variable", "VariableV1", "get_variable"}


class ResourceVariables(Rule):
    code = "IPU204"
    name = "resource-variables"
    kind = FIX
    frameworks = frozenset({TF1})
    summary = "Make graph variables resource variables (`tf.get_variable_scope().set_use_resource(True)`)."
    rationale = (
        "The IPU only holds resource variables: a TF1 ref variable (`tf.Variable(...)`, or "
        "`tf.get_variable` outside a resource scope) used on the IPU fails with \"Cannot assign a "
        "device ... no supported kernel for IPU devices\" (Targeting the IPU from TensorFlow 1, \"Adding "
        "variables\"). "
        "`ipu_scope` makes the variables created inside it resource variables; for the ones created "
        "outside it the porter sets the variable scope to resource variables once, before the first "
        "variable is created (in the same graph), and reports each `tf.Variable` call."
    )
    examples = (
        Example(
            """\
            import tensorflow.compat.v1 as tf

            x = tf.placeholder(tf.float32, [8, 4])
            # weights
            w = tf.Variable(tf.zeros([4, 2]))
            b = tf.get_variable("b", [2])
            """,
            """\
            import tensorflow.compat.v1 as tf

            x = tf.placeholder(tf.float32, [8, 4])
            tf.get_variable_scope().set_use_resource(True)
            # weights
            w = tf.Variable(tf.zeros([4, 2]))
            b = tf.get_variable("b", [2])
            """,
        ),
        Example(
            """\
            import tensorflow as tf


            def train():
                with tf.Graph().as_default():
                    with tf.compat.v1.variable_scope("model"):
                        w = tf.compat.v1.get_variable("w", [4, 2])
            """,
            """\
            import tensorflow as tf


            def train():
                with tf.Graph().as_default():
                    tf.compat.v1.get_variable_scope().set_use_resource(True)
                    with tf.compat.v1.variable_scope("model"):
                        w = tf.compat.v1.get_variable("w", [4, 2])
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf

            tf.get_variable_scope().set_use_resource(True)
            w = tf.Variable(tf.zeros([4, 2]))
            """,
            reported=False,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu

            with ipu.scopes.ipu_scope("/device:IPU:0"):
                w = tf.get_variable("w", [4, 2])
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        creations = [call for call in calls_named(ctx, _CREATORS) if not runs_on_ipu(ctx, call)]
        if not creations or self._already_resource(ctx):
            return
        target = self._top_statement(ctx, creations[0])
        if target is None:
            return
        line = cst.parse_statement(f"{tf_module(ctx)}.get_variable_scope().set_use_resource(True)\n")
        if not ctx.insert_before(target, [line]):
            return
        plain = sum(1 for call in creations if tf_call_name(ctx, call) != "get_variable")
        also = (f"; the {plain} `tf.Variable` call{'s' if plain != 1 else ''} among them make{'' if plain != 1 else 's'} "
                "resource variables too (`tf.get_variable` is the TF1 spelling the IPU guide uses)") if plain else ""
        ctx.report(self.code, creations[0], "variables are resource variables from here on "
                   f"(`set_use_resource(True)`): the IPU cannot hold ref variables{also}", fixed=True)

    @staticmethod
    def _already_resource(ctx) -> bool:
        return bool(calls_by_last_name(ctx, "set_use_resource"))

    @staticmethod
    def _top_statement(ctx, call):
        """The outermost statement around ``call`` within its function and its graph."""
        found = None
        for ancestor in ctx.ancestors(call):
            if isinstance(ancestor, (cst.Module, cst.FunctionDef)):
                break
            if isinstance(ancestor, cst.IndentedBlock) and isinstance(ctx.parent(ancestor), cst.With):
                scope = ctx.parent(ancestor)
                if any(isinstance(item.item, cst.Call) and isinstance(item.item.func, cst.Attribute)
                       and item.item.func.attr.value == "as_default" for item in scope.items):
                    break
            if isinstance(ancestor, cst.BaseStatement) and ctx.block_of(ancestor) is not None:
                found = ancestor
        return found


RULE = ResourceVariables()
