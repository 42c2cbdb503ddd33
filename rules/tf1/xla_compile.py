from typing import List, Optional, Tuple

import libcst as cst

from porter.context import walk
from porter.rule import FIX, TF1, Example, Rule
from porter.scopes import fresh_name, local_function
from porter.rules.tf1._analysis.graph import (IPU_COMPILE, body_hook, cpu_bound_kind, device_of, graph_inputs,
                            hoistable, ipu_bound_scopes, is_operation, names_bound, names_used,
                            note_compiled, returned_values)
from porter.rules.tf1._analysis.step import (compiled_lines, evaluation_runs, host_graph_after, makes_variables,
                                             ops_note, output_kind)

_UNMOVABLE = (cst.Return, cst.Yield, cst.Global, cst.Nonlocal, cst.Break, cst.Continue, cst.Await)
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
        "`ipu.ipu_compiler.compile(computation, inputs)` inside `ipu_scope` (Targeting the IPU from "
        "TensorFlow 1, \"Compiling the graph for the IPU\"). When the scope calls a function of the file "
        "(`loss, train_op = model_fn(x, y)`), that "
        "call is compiled: graph inputs (placeholders, `get_next()` tensors) become `inputs`, other "
        "arguments stay in a `lambda`. `compile` returns the tensors only, as a list (operations run "
        "as their control dependencies), so the result is unpacked into the same names and each "
        "operation name becomes the op of the first tensor: `sess.run` calls keep working unchanged (a run "
        "that fetches those tensors without the operation trains too: it is reported). "
        "Several statements become a function `model_fn` defined in the scope and compiled there, when "
        "what goes in (graph inputs) and what comes out (tensors and operations used after the scope) "
        "is clear. Otherwise the porter says what to do instead of guessing."
    )
    examples = (
        Example(
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu


            def model_fn(x, y):
                logits = tf.layers.dense(x, 10)
                loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
                train_op = tf.train.AdamOptimizer().minimize(loss)
                return loss, train_op


            x = tf.placeholder(tf.float32, [32, 784])
            y = tf.placeholder(tf.int32, [32])
            with ipu.scopes.ipu_scope("/device:IPU:0"):
                loss, train_op = model_fn(x, y)  # one training step
            """,
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu


            def model_fn(x, y):
                logits = tf.layers.dense(x, 10)
                loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
                train_op = tf.train.AdamOptimizer().minimize(loss)
                return loss, train_op


            x = tf.placeholder(tf.float32, [32, 784])
            y = tf.placeholder(tf.int32, [32])
            with ipu.scopes.ipu_scope("/device:IPU:0"):
                [loss] = ipu.ipu_compiler.compile(model_fn, inputs=[x, y])  # one training step
                train_op = loss.op  # runs the whole compiled step
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf


            def step(images, lr):
                loss = tf.reduce_mean(tf.layers.dense(images, 1))
                return tf.train.GradientDescentOptimizer(lr).minimize(loss)


            def main(args):
                images = tf.data.make_one_shot_iterator(make_dataset()).get_next()
                with tf.device("/gpu:0"):
                    train = step(images, args.lr)
            """,
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu


            def step(images, lr):
                loss = tf.reduce_mean(tf.layers.dense(images, 1))
                return tf.train.GradientDescentOptimizer(lr).minimize(loss)


            def main(args):
                images = tf.data.make_one_shot_iterator(make_dataset()).get_next()
                with tf.device("/gpu:0"):
                    train = ipu.ipu_compiler.compile(lambda images: step(images, args.lr), inputs=[images])
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu


            def main():
                x = tf.placeholder(tf.float32, [8, 4])
                # the model
                with ipu.scopes.ipu_scope("/device:IPU:0"):
                    h = tf.layers.dense(x, 4)
                    probabilities = tf.nn.softmax(h)
                with tf.Session() as sess:
                    print(sess.run(probabilities, {x: batch}))
            """,
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu


            def main():
                x = tf.placeholder(tf.float32, [8, 4])
                # the model
                with ipu.scopes.ipu_scope("/device:IPU:0"):
                    def model_fn(x):
                        h = tf.layers.dense(x, 4)
                        probabilities = tf.nn.softmax(h)
                        return probabilities

                    [probabilities] = ipu.ipu_compiler.compile(model_fn, inputs=[x])
                with tf.Session() as sess:
                    print(sess.run(probabilities, {x: batch}))
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu

            x = tf.placeholder(tf.float32, [8, 4])
            with ipu.scopes.ipu_scope("/device:IPU:0"):
                dense = tf.layers.Dense(4)
                out = dense(x)
            print(dense.kernel)
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu


            def model_fn(x):
                return tf.layers.dense(x, 4)


            x = tf.placeholder(tf.float32, [8, 4])
            with ipu.scopes.ipu_scope("/device:IPU:0"):
                [out] = ipu.ipu_compiler.compile(model_fn, inputs=[x])
            """,
            reported=False,
        ),
        Example(
            # a test model built after the scope on a test input is reported: the session would run it on the CPU
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu


            def model(x, reuse=False):
                with tf.variable_scope("model", reuse=reuse):
                    return tf.layers.dense(x, 1, name="out")


            x = tf.placeholder(tf.float32, [16, 4])
            y = tf.placeholder(tf.float32, [16, 1])
            test_x = tf.placeholder(tf.float32, [16, 4])
            with ipu.scopes.ipu_scope("/device:IPU:0"):
                loss = tf.losses.mean_squared_error(y, model(x))
                train_op = tf.train.AdamOptimizer().minimize(loss)
            test_prediction = model(test_x, reuse=True)

            with tf.Session() as sess:
                sess.run(train_op, {x: batch[0], y: batch[1]})
                print(sess.run(test_prediction, {test_x: test}))
            """,
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu


            def model(x, reuse=False):
                with tf.variable_scope("model", reuse=reuse):
                    return tf.layers.dense(x, 1, name="out")


            x = tf.placeholder(tf.float32, [16, 4])
            y = tf.placeholder(tf.float32, [16, 1])
            test_x = tf.placeholder(tf.float32, [16, 4])
            with ipu.scopes.ipu_scope("/device:IPU:0"):
                def model_fn(y, x):
                    loss = tf.losses.mean_squared_error(y, model(x))
                    train_op = tf.train.AdamOptimizer().minimize(loss)
                    return train_op

                train_op = ipu.ipu_compiler.compile(model_fn, inputs=[y, x])
            test_prediction = model(test_x, reuse=True)

            with tf.Session() as sess:
                sess.run(train_op, {x: batch[0], y: batch[1]})
                print(sess.run(test_prediction, {test_x: test}))
            """,
        ),
    )

    def run(self, ctx) -> None:
        scopes = ipu_bound_scopes(ctx)
        if not scopes:
            return  # IPU208 compiles a step built without a device scope
        for scope in scopes:
            if not isinstance(scope.body, cst.IndentedBlock):
                ctx.report(self.code, scope.items[0].item, f"the graph built in this scope is not compiled for "
                           f"the IPU: {_HOW}", fixed=False)
                continue
            statements = list(scope.body.body)
            if any(isinstance(node, cst.Call) and ctx.qualified_name(node.func) == IPU_COMPILE
                   for statement in statements for node in walk(statement)):
                continue
            hoisted, _ = hoistable(ctx, statements)
            body = [statement for statement in statements if statement not in hoisted]
            if all(isinstance(statement, cst.SimpleStatementLine) and all(
                    isinstance(small, cst.Pass) for small in statement.body) for statement in body):
                continue
            if all(makes_variables(ctx, statement) for statement in body):
                continue  # variables that a compiled step reads (IPU208 puts them there)
            if any(cpu_bound_kind(ctx, statement) is not None for statement in body) or (
                    hoisted and device_of(ctx, scope.items[0].item)[0] != "gpu0"):
                problem = "graph inputs are created in it"
            elif self._is_single_call(body):
                problem = self._compile_call(ctx, scope, body[0])
            else:
                problem = self._extract(ctx, scope, body)
            if problem is not None:
                ctx.report(self.code, scope.items[0].item,
                           f"the graph built in this scope is not compiled for the IPU ({problem}): {_HOW}",
                           fixed=False)

    @staticmethod
    def _is_single_call(body) -> bool:
        if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
            return False
        assign = body[0].body[0]
        return (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.value, cst.Call)
                and isinstance(assign.value.func, cst.Name))

    def _compile_call(self, ctx, scope: cst.With, line: cst.SimpleStatementLine) -> Optional[str]:
        """``targets = fn(args)`` with ``fn`` a function of this file: compile that call."""
        assign = line.body[0]
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
        new = compiled_lines(computation, inputs, tensors, ops)
        ctx.replace(assign, new[0].body[0])
        if new[1:]:
            ctx.insert_after(line, new[1:])
        ctx.add_import("tensorflow.python", "ipu", code=self.code)
        ctx.report(self.code, call, f"`{call.func.value}(...)` is compiled with `ipu.ipu_compiler.compile`"
                   + ops_note(tensors, ops), fixed=True)
        note_compiled(ctx, "function", function, call.func.value)
        self._report_evaluation(ctx, scope, call.func.value, tensors, ops)
        return None

    def _report_evaluation(self, ctx, scope: cst.With, function: str, tensors: List[str], ops: List[str]) -> None:
        """A run that fetches the compiled step's tensors without its training op trains too; a
        graph built after the scope on other graph inputs (a test model) stays on the CPU."""
        owner = ctx.enclosing_function(scope) or ctx.module
        host_graph = host_graph_after(ctx, owner, [scope]) if ops else None
        if host_graph is not None:
            ctx.report(self.code, host_graph[0], host_graph[1], fixed=False)
        for run in evaluation_runs(ctx, scope, tensors, ops):
            ctx.report(self.code, run, f"this run fetches outputs of the compiled `{function}` without "
                       f"{', '.join(f'`{op}`' for op in ops)}, and fetching them trains: compile the forward part "
                       "apart (a function without the optimizer, under `tf.variable_scope(..., reuse=True)`) "
                       "and fetch that here", fixed=False)

    def _extract(self, ctx, scope: cst.With, body) -> Optional[str]:
        """Several statements: move them into a function compiled in the scope, when what goes in
        (graph inputs) and what comes out (names used after the scope) is clear."""
        if any(isinstance(node, _UNMOVABLE) for statement in body for node in walk(statement)):
            return "its statements return, yield or jump"
        owner = ctx.enclosing_function(scope) or ctx.module
        graph_input_names = graph_inputs(ctx, owner)
        bound: List[str] = []
        for statement in body:
            bound += [name for name in sorted(names_bound(statement)) if name not in bound]
        if any(name in graph_input_names for name in bound):
            return "it rebinds a graph input"
        params = [name for name in self._names_in_order(body) if name in graph_input_names]
        used_after = self._used_after(ctx, scope, owner)
        outputs = [name for name in bound if name in used_after]
        if not outputs:
            stored = [target for statement in body for node in walk(statement) if isinstance(node, cst.AssignTarget)
                      for target in [node.target] if isinstance(target, (cst.Attribute, cst.Subscript))]
            if stored:
                return f"its results go to attributes such as `{cst.Module(body=[]).code_for_node(stored[0])}`"
            return "nothing it computes is used after it"
        kinds = {}
        for name in outputs:
            kind = output_kind(ctx, body, name)
            if kind is None:
                return f"`{name}` is used after the scope but is not clearly a tensor or an operation"
            kinds[name] = kind
        tensors = [name for name in outputs if kinds[name] == "tensor"]
        ops = [name for name in outputs if kinds[name] == "op"]
        if not tensors and len(ops) > 1:
            return "it makes several operations and no tensor"
        function = fresh_name(ctx, "model_fn", "ipu_model_fn", "ipu_graph_fn")
        returned = ", ".join(tensors + ops)

        def build(statements):
            statements = body_hook(ctx, body[0])(statements)
            template = cst.parse_statement(f"def {function}({', '.join(params)}):\n    return {returned}\n")
            return template.with_changes(body=template.body.with_changes(body=[*statements, *template.body.body]))

        if not ctx.wrap(body[0], body[-1], build):
            return "its statements cannot be moved into a function"
        compiled = compiled_lines(function, params, tensors, ops)
        compiled[0] = compiled[0].with_changes(leading_lines=[cst.EmptyLine(indent=False)])
        ctx.insert_after(body[-1], compiled)
        ctx.add_import("tensorflow.python", "ipu", code=self.code)
        ctx.report(self.code, body[0], f"the graph built in the IPU scope becomes `{function}`, compiled "
                   f"with `ipu.ipu_compiler.compile`" + ops_note(tensors, ops), fixed=True)
        note_compiled(ctx, "statements", body, function)
        self._report_evaluation(ctx, scope, function, tensors, ops)
        return None

    @staticmethod
    def _names_in_order(body) -> List[str]:
        seen: List[str] = []
        for statement in body:
            for node in walk(statement):
                if isinstance(node, cst.Name) and node.value not in seen:
                    seen.append(node.value)
        return seen

    @staticmethod
    def _used_after(ctx, scope: cst.With, owner) -> set:
        """Names used by the statements after ``scope`` (and after the blocks around it) in ``owner``."""
        used = set()
        node = scope
        while node is not owner and node is not None:
            if isinstance(node, cst.BaseStatement) and ctx.block_of(node) is not None:
                siblings = list(ctx.siblings(node))
                for later in siblings[siblings.index(node) + 1:]:
                    used |= names_used(later)
            node = ctx.parent(node)
        return used

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
