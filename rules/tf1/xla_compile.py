from typing import List, Optional, Tuple

import libcst as cst

from porter.context import bound_names, walk
from porter.rule import FIX, TF1, Example, Rule
from porter.tf1util import (IPU_COMPILE, cpu_bound_kind, graph_inputs, ipu_bound_scopes, is_operation,
                            local_function, returned_values, session_calls)

_HOW = ("put the computation in a function that returns its tensors, then its operations, and call "
        "`ipu.ipu_compiler.compile(fn, inputs=[...])` in the IPU scope")


class XlaCompile(Rule):
    code = "IPU202"
    name = "xla-compile"
    kind = FIX
    frameworks = frozenset({TF1})
    summary = "Compile the computation of the IPU scope with `ipu.ipu_compiler.compile`."
    rationale = (
        "On the IPU a TF1 graph runs efficiently only when compiled with "
        "`ipu.ipu_compiler.compile(computation, inputs)` inside `ipu_scope` (reference 3.1; seeds 002, "
        "004). When the scope calls a function of the file (`loss, train_op = model_fn(x, y)`), that "
        "call is compiled: graph inputs (placeholders, `get_next()` tensors) become `inputs`, other "
        "arguments stay in a `lambda`. `compile` returns the tensors only, as a list (operations run "
        "as their control dependencies), so the result is unpacked into the same names and each "
        "operation name becomes the op of the first tensor: `sess.run` calls keep working unchanged. "
        "When the computation is not one such call, or the returned values are unclear, the porter "
        "says what to do instead of guessing."
    )
    examples = (
        Example(
            "import tensorflow.compat.v1 as tf\nfrom tensorflow.python import ipu\n\n\n"
            "def model_fn(x, y):\n"
            "    logits = tf.layers.dense(x, 10)\n"
            "    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)\n"
            "    train_op = tf.train.AdamOptimizer().minimize(loss)\n"
            "    return loss, train_op\n\n\n"
            "x = tf.placeholder(tf.float32, [32, 784])\n"
            "y = tf.placeholder(tf.int32, [32])\n"
            "with ipu.scopes.ipu_scope(\"/device:IPU:0\"):\n"
            "    loss, train_op = model_fn(x, y)  # one training step\n",
            "import tensorflow.compat.v1 as tf\nfrom tensorflow.python import ipu\n\n\n"
            "def model_fn(x, y):\n"
            "    logits = tf.layers.dense(x, 10)\n"
            "    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)\n"
            "    train_op = tf.train.AdamOptimizer().minimize(loss)\n"
            "    return loss, train_op\n\n\n"
            "x = tf.placeholder(tf.float32, [32, 784])\n"
            "y = tf.placeholder(tf.int32, [32])\n"
            "with ipu.scopes.ipu_scope(\"/device:IPU:0\"):\n"
            "    [loss] = ipu.ipu_compiler.compile(model_fn, inputs=[x, y])  # one training step\n"
            "    train_op = loss.op  # runs the whole compiled step\n",
        ),
        Example(
            "import tensorflow.compat.v1 as tf\n\n\n"
            "def step(images, lr):\n"
            "    loss = tf.reduce_mean(tf.layers.dense(images, 1))\n"
            "    return tf.train.GradientDescentOptimizer(lr).minimize(loss)\n\n\n"
            "def main(args):\n"
            "    images = tf.data.make_one_shot_iterator(make_dataset()).get_next()\n"
            "    with tf.device(\"/gpu:0\"):\n"
            "        train = step(images, args.lr)\n",
            "import tensorflow.compat.v1 as tf\nfrom tensorflow.python import ipu\n\n\n"
            "def step(images, lr):\n"
            "    loss = tf.reduce_mean(tf.layers.dense(images, 1))\n"
            "    return tf.train.GradientDescentOptimizer(lr).minimize(loss)\n\n\n"
            "def main(args):\n"
            "    images = tf.data.make_one_shot_iterator(make_dataset()).get_next()\n"
            "    with tf.device(\"/gpu:0\"):\n"
            "        train = ipu.ipu_compiler.compile(lambda images: step(images, args.lr), inputs=[images])\n",
        ),
        Example(
            "import tensorflow.compat.v1 as tf\nfrom tensorflow.python import ipu\n\n"
            "x = tf.placeholder(tf.float32, [8, 4])\n"
            "with ipu.scopes.ipu_scope(\"/device:IPU:0\"):\n"
            "    h = tf.layers.dense(x, 4)\n"
            "    out = tf.nn.softmax(h)\n",
        ),
        Example(
            "import tensorflow.compat.v1 as tf\n\n"
            "x = tf.placeholder(tf.float32, [8, 4])\n"
            "y = tf.layers.dense(x, 4)\n"
            "with tf.Session() as sess:\n"
            "    sess.run(y, {x: batch})\n",
        ),
        Example(
            "import tensorflow.compat.v1 as tf\nfrom tensorflow.python import ipu\n\n\n"
            "def model_fn(x):\n"
            "    return tf.layers.dense(x, 4)\n\n\n"
            "x = tf.placeholder(tf.float32, [8, 4])\n"
            "with ipu.scopes.ipu_scope(\"/device:IPU:0\"):\n"
            "    [out] = ipu.ipu_compiler.compile(model_fn, inputs=[x])\n",
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        scopes = ipu_bound_scopes(ctx)
        if not scopes:
            if not any(True for _ in ctx.calls_to(IPU_COMPILE)):
                self._no_scope(ctx)
            return
        for scope in scopes:
            body = [s for s in scope.body.body if cpu_bound_kind(ctx, s) is None]
            if not body or any(isinstance(node, cst.Call) and ctx.qualified_name(node.func) == IPU_COMPILE
                               for statement in body for node in walk(statement)):
                continue
            problem = self._compile(ctx, scope, body)
            if problem is not None:
                ctx.report(self.code, scope.items[0].item,
                           f"the graph built in this scope is not compiled for the IPU ({problem}): {_HOW}",
                           fixed=False)

    def _no_scope(self, ctx) -> None:
        sessions = session_calls(ctx)
        if sessions:
            ctx.report(self.code, sessions[0], "no graph is built for the IPU: build the model in "
                       "`with ipu.scopes.ipu_scope(\"/device:IPU:0\"):` and compile it with "
                       "`ipu.ipu_compiler.compile(fn, inputs=[...])`", fixed=False)

    def _compile(self, ctx, scope: cst.With, body) -> Optional[str]:
        """Compile the one call the scope makes; or say why not."""
        if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
            return "it is not a single call to a function of this file"
        assign = body[0].body[0]
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.value, cst.Call)
                and isinstance(assign.value.func, cst.Name)):
            return "it is not a single call to a function of this file whose result is kept"
        call = assign.value
        function = local_function(ctx, call.func.value, scope)
        if function is None:
            return f"`{call.func.value}` is not a function of this file"
        values = returned_values(function)
        targets = self._targets(assign.targets[0].target)
        if values is None or targets is None or len(targets) != len(values) or (
                len(values) > 1 and not isinstance(assign.targets[0].target, (cst.Tuple, cst.List))):
            return f"what `{call.func.value}` returns is not clear"
        is_op = [is_operation(ctx, value, function) for value in values]
        if any(is_op[i] and not is_op[i + 1] for i in range(len(is_op) - 1)):
            return f"`{call.func.value}` returns an operation before a tensor; operations must come last"
        tensors = [name for name, op in zip(targets, is_op) if not op]
        ops = [name for name, op in zip(targets, is_op) if op]
        if not tensors and len(ops) > 1:
            return f"`{call.func.value}` returns several operations and no tensor"
        computation, inputs = self._computation(ctx, scope, call)
        compiled = f"ipu.ipu_compiler.compile({computation}, inputs=[{', '.join(inputs)}])"
        if not tensors:
            text = f"{ops[0]} = {compiled}"
        elif len(tensors) == 1:
            text = f"[{tensors[0]}] = {compiled}"
        else:
            text = f"{', '.join(tensors)} = {compiled}"
        new = cst.parse_statement(text).body[0]
        ctx.replace(assign, new)
        ctx.add_import("tensorflow.python", "ipu", code=self.code)
        message = f"`{call.func.value}(...)` is compiled with `ipu.ipu_compiler.compile`"
        extra = [name for name in ops if name != "_"] if tensors else []
        if extra:
            ctx.insert_after(body[0], [
                cst.parse_statement(f"{name} = {tensors[0]}.op  # runs the whole compiled step\n")
                for name in extra])
            message += f"; {', '.join(f'`{name}`' for name in extra)} now runs it through `{tensors[0]}.op`"
        ctx.report(self.code, call, message, fixed=True)
        return None

    @staticmethod
    def _targets(target) -> Optional[List[str]]:
        if isinstance(target, cst.Name):
            return [target.value]
        if isinstance(target, (cst.Tuple, cst.List)) and all(
                isinstance(element.value, cst.Name) for element in target.elements):
            return [element.value.value for element in target.elements]
        return None

    @staticmethod
    def _computation(ctx, scope: cst.With, call: cst.Call) -> Tuple[str, List[str]]:
        """The function to compile and its inputs: the graph inputs among the arguments."""
        known = graph_inputs(ctx, ctx.enclosing_function(scope) or ctx.module)
        inputs: List[str] = []
        plain = True
        for arg in call.args:
            if arg.keyword is None and not arg.star and isinstance(arg.value, cst.Name) and arg.value.value in known:
                if arg.value.value not in inputs:
                    inputs.append(arg.value.value)
                    continue
            plain = False
        if plain:
            return call.func.value, inputs
        source = cst.Module(body=[]).code_for_node(call.with_changes(lpar=(), rpar=()))
        return f"lambda {', '.join(inputs)}: {source}" if inputs else f"lambda: {source}", inputs


RULE = XlaCompile()
