from typing import List

import libcst as cst

from porter.context import walk
from porter.rule import FIX, TF1, Example, Rule
from porter.scopes import fresh_name
from porter.rules.tf1._analysis.graph import (IPU_COMPILE, IPU_DEVICE, find_calls, ipu_bound_scopes, names_used,
                                              note_compiled, session_calls, tf_module)
from porter.rules.tf1._analysis.step import (Blocked, Step, analyse_step, builds_training, compiled_lines,
                                             forward_slice, host_graph_after, private_variables, reads_scope_names,
                                             step_owners, training_part, variables_by_name)


class CompileStep(Rule):
    code = "IPU208"
    name = "compile-step"
    kind = FIX
    frameworks = frozenset({TF1})
    # IPU202 compiles the graphs built in device scopes; this rule the graphs built without one.
    after = ("IPU202",)
    summary = "Compile a TF1 training step built without a device scope, and evaluate with a forward-only compile."
    rationale = (
        "Most TF1 scripts build their graph line by line, placeholders first, then the model, the loss and "
        "`train_op = optimizer.minimize(loss)`, then run it in a session. On the IPU that step must be a "
        "function compiled with `ipu.ipu_compiler.compile(fn, inputs=[...])` inside "
        "`ipu.scopes.ipu_scope(\"/device:IPU:0\")` (Targeting the IPU from TensorFlow 1, \"Compiling the graph "
        "for the IPU\"; Graphcore's TF1 porting tutorial). When the statements from the graph inputs to the "
        "training op (and the evaluation tensors right after it) are one block of graph construction, the block "
        "becomes that function: placeholders and `get_next()` tensors are its inputs (`feed_dict` keeps "
        "feeding them), the tensors the script uses afterwards are its outputs, and the training op becomes "
        "`loss.op`, which runs the whole compiled step. Variables, optimizers and helper functions made in the "
        "block stay in front of the function, so `sess.run(W)`, savers and initializers keep working. "
        "A compiled step trains whenever any of its outputs is fetched, so a run that fetches outputs "
        "without the training op (test accuracy, a loss on other data) fetches a second, forward-only compile "
        "of the same model instead, which shares the variables (made in front of it, or by name under "
        "`reuse=True`) and does not train. A step function of the file called on the graph inputs "
        "(`loss, train_op = training_loop_body(x, y)`) is compiled as it is. When a statement prevents any "
        "of this (a summary in the graph, a tensor built above the placeholders, a variable the second build "
        "would make anew), the porter says which one and what to do. Summaries of the outputs stay on the host, "
        "and need nothing more when every run that fetches them fetches the training op too. A second graph "
        "built after the step on other graph inputs (a test model on a test iterator) is not part of the "
        "compiled step: the porter reports it, since the session would run it on the CPU."
    )
    examples = (
        Example(
            """\
            import tensorflow.compat.v1 as tf

            x = tf.placeholder(tf.float32, [32, 4])
            y = tf.placeholder(tf.float32, [32, 1])
            w = tf.get_variable("w", [4, 1])
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
            train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)

            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for batch in batches:
                    sess.run([train_op, loss], feed_dict={x: batch[0], y: batch[1]})
                print(sess.run(loss, feed_dict={x: test[0], y: test[1]}))
            """,
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu

            x = tf.placeholder(tf.float32, [32, 4])
            y = tf.placeholder(tf.float32, [32, 1])
            with ipu.scopes.ipu_scope("/device:IPU:0"):
                w = tf.get_variable("w", [4, 1])

                def model_fn(x, y):
                    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
                    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
                    return loss, train_op

                [loss] = ipu.ipu_compiler.compile(model_fn, inputs=[x, y])
                train_op = loss.op  # runs the whole compiled step

                def eval_fn(x, y):
                    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
                    return loss

                [eval_loss] = ipu.ipu_compiler.compile(eval_fn, inputs=[x, y])

            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for batch in batches:
                    sess.run([train_op, loss], feed_dict={x: batch[0], y: batch[1]})
                print(sess.run(eval_loss, feed_dict={x: test[0], y: test[1]}))
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf


            def training_loop_body(x, y):
                logits = tf.layers.dense(x, 10)
                loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
                train_op = tf.train.AdamOptimizer().minimize(loss)
                return [loss, train_op]


            def main():
                x, y = make_iterator().get_next()
                loss, train_op = training_loop_body(x, y)
                with tf.Session() as sess:
                    sess.run(tf.global_variables_initializer())
                    sess.run([loss, train_op])
            """,
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu


            def training_loop_body(x, y):
                logits = tf.layers.dense(x, 10)
                loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
                train_op = tf.train.AdamOptimizer().minimize(loss)
                return [loss, train_op]


            def main():
                x, y = make_iterator().get_next()
                with ipu.scopes.ipu_scope("/device:IPU:0"):
                    [loss] = ipu.ipu_compiler.compile(training_loop_body, inputs=[x, y])
                    train_op = loss.op  # runs the whole compiled step
                with tf.Session() as sess:
                    sess.run(tf.global_variables_initializer())
                    sess.run([loss, train_op])
            """,
        ),
        Example(
            # a test placeholder only the evaluation reads is no input of the training step
            """\
            import tensorflow.compat.v1 as tf

            x = tf.placeholder(tf.float32, [32, 4])
            y = tf.placeholder(tf.float32, [32, 1])
            test_x = tf.placeholder(tf.float32, [32, 4])
            w = tf.get_variable("w", [4, 1])
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
            train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
            test_prediction = tf.matmul(test_x, w)

            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(train_op, feed_dict={x: batch[0], y: batch[1]})
                print(sess.run(test_prediction, feed_dict={test_x: test}))
            """,
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu

            x = tf.placeholder(tf.float32, [32, 4])
            y = tf.placeholder(tf.float32, [32, 1])
            test_x = tf.placeholder(tf.float32, [32, 4])
            with ipu.scopes.ipu_scope("/device:IPU:0"):
                w = tf.get_variable("w", [4, 1])

                def model_fn(x, y):
                    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
                    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
                    return train_op

                train_op = ipu.ipu_compiler.compile(model_fn, inputs=[x, y])

                def eval_fn(test_x):
                    test_prediction = tf.matmul(test_x, w)
                    return test_prediction

                [eval_test_prediction] = ipu.ipu_compiler.compile(eval_fn, inputs=[test_x])

            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(train_op, feed_dict={x: batch[0], y: batch[1]})
                print(sess.run(eval_test_prediction, feed_dict={test_x: test}))
            """,
        ),
        Example(
            # a test model built again on the test iterator is reported: the session would run it on the CPU
            """\
            import tensorflow.compat.v1 as tf


            def model(x, reuse=False):
                with tf.variable_scope("model", reuse=reuse):
                    return tf.layers.dense(x, 1, name="out")


            x, y = train_iterator.get_next()
            test_x, test_y = test_iterator.get_next()
            loss = tf.losses.mean_squared_error(y, model(x))
            train_op = tf.train.AdamOptimizer().minimize(loss)
            test_loss = tf.losses.mean_squared_error(test_y, model(test_x, reuse=True))

            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(train_op)
                print(sess.run(test_loss))
            """,
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu


            def model(x, reuse=False):
                with tf.variable_scope("model", reuse=reuse):
                    return tf.layers.dense(x, 1, name="out")


            x, y = train_iterator.get_next()
            test_x, test_y = test_iterator.get_next()
            with ipu.scopes.ipu_scope("/device:IPU:0"):
                def model_fn(y, x):
                    loss = tf.losses.mean_squared_error(y, model(x))
                    train_op = tf.train.AdamOptimizer().minimize(loss)
                    return train_op

                train_op = ipu.ipu_compiler.compile(model_fn, inputs=[y, x])
            test_loss = tf.losses.mean_squared_error(test_y, model(test_x, reuse=True))

            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(train_op)
                print(sess.run(test_loss))
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf

            x = tf.placeholder(tf.float32, [8, 4])
            w = tf.get_variable("w", [4, 1])
            loss = tf.reduce_sum(tf.matmul(x, w))
            tf.summary.scalar("loss", loss)
            train_op = tf.train.AdamOptimizer().minimize(loss)
            with tf.Session() as sess:
                sess.run(train_op, {x: batch})
            """,
        ),
        Example(
            # a summary of the loss fetched with the training op reads the compiled output on the host
            """\
            import tensorflow.compat.v1 as tf

            x = tf.placeholder(tf.float32, [8, 4])
            w = tf.get_variable("w", [4, 1])
            loss = tf.reduce_sum(tf.matmul(x, w))
            train_op = tf.train.AdamOptimizer().minimize(loss)
            tf.summary.scalar("loss", loss)
            merged = tf.summary.merge_all()
            with tf.Session() as sess:
                summary, _ = sess.run([merged, train_op], {x: batch})
            """,
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu

            x = tf.placeholder(tf.float32, [8, 4])
            with ipu.scopes.ipu_scope("/device:IPU:0"):
                w = tf.get_variable("w", [4, 1])

                def model_fn(x):
                    loss = tf.reduce_sum(tf.matmul(x, w))
                    train_op = tf.train.AdamOptimizer().minimize(loss)
                    return loss, train_op

                [loss] = ipu.ipu_compiler.compile(model_fn, inputs=[x])
                train_op = loss.op  # runs the whole compiled step
            tf.summary.scalar("loss", loss)
            merged = tf.summary.merge_all()
            with tf.Session() as sess:
                summary, _ = sess.run([merged, train_op], {x: batch})
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf

            images = tf.placeholder(tf.float32, [16, 784])
            with tf.device("/gpu:0"):
                # IPU201 and IPU202 port a graph built in a device scope
                loss = tf.reduce_mean(tf.layers.dense(images, 1))
                train_op = tf.train.AdamOptimizer().minimize(loss)
            with tf.Session() as sess:
                sess.run(train_op, {images: batch})
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        if ipu_bound_scopes(ctx) or find_calls(ctx, IPU_COMPILE) or not session_calls(ctx):
            return  # IPU202 compiles the graph of the device scopes; without a session there is no TF1 graph to run
        found = False
        for owner in step_owners(ctx):
            step = analyse_step(ctx, owner)
            if step is None:
                continue
            found = True
            if isinstance(step, Blocked):
                ctx.report(self.code, step.anchor, "the training step built here is not compiled for the IPU: "
                           f"{step.reason}", fixed=False)
            else:
                self._compile(ctx, step)
        if not found:
            ctx.report(self.code, session_calls(ctx)[0], "no graph is built for the IPU: build the model in "
                       "`with ipu.scopes.ipu_scope(\"/device:IPU:0\"):` and compile it with "
                       "`ipu.ipu_compiler.compile(fn, inputs=[...])`", fixed=False)

    def _compile(self, ctx, step: Step) -> None:
        function = fresh_name(ctx, "model_fn", "ipu_model_fn", "ipu_graph_fn")
        evaluation = self._evaluation(ctx, step, function)
        if evaluation is not None:  # what only the evaluation fetches stays off the training step
            step.tensors = [name for name in step.tensors if name in step.trained]
            step.moved = training_part(step)
            step.inputs = _inputs_read(step.inputs, step.moved)  # a test input alone would have to be fed
        moved = {id(statement) for statement in step.moved}
        hoisted = {id(statement) for statement in step.hoisted}
        scopes = self._variable_scopes(ctx, step)
        forward = {id(statement) for statement in step.forward}

        def build(statements):
            originals = _originals(ctx, step.statements, statements)
            above = statements[0].leading_lines  # the block's comments go above the IPU scope
            statements = [statements[0].with_changes(leading_lines=()), *statements[1:]]
            kept = [new for new, old in zip(statements, originals) if old is None or id(old) in hoisted]
            body = [new for new, old in zip(statements, originals) if old is not None and id(old) in moved]
            # a statement of both functions keeps its comments in the training step only
            in_forward = [new.with_changes(leading_lines=[line for line in new.leading_lines
                                                          if line.comment and id(old) not in moved])
                          for new, old in zip(statements, originals) if old is not None and id(old) in forward]
            scope = cst.parse_statement(f'with ipu.scopes.ipu_scope("{IPU_DEVICE}"):\n    pass\n')
            computation = self._computation(step, function)
            lines = list(kept)
            if computation == function:
                lines += self._function(function, step.inputs, body, step.tensors + self._returned_ops(ctx, step),
                                        scopes[0])
            lines += self._compile_lines(computation, step.inputs, step.tensors, step.ops)
            if evaluation is not None:
                lines += self._function(evaluation[0], evaluation[1], in_forward, step.eval_outputs, scopes[1])
                lines += self._compile_lines(evaluation[0], evaluation[1], evaluation[2], [])
            lines[0] = lines[0].with_changes(leading_lines=[line for line in lines[0].leading_lines if line.comment])
            return scope.with_changes(body=scope.body.with_changes(body=lines), leading_lines=above)

        if step.front and not ctx.move_before(step.statements[0], step.front, list):
            ctx.report(self.code, step.front[0], "the training step built here is not compiled for the IPU: this "
                       "graph input cannot move in front of the graph", fixed=False)
            return
        if not ctx.wrap(step.statements[0], step.statements[-1], build):
            ctx.report(self.code, step.statements[0], "the training step built here is not compiled for the IPU: "
                       "its statements cannot be moved into a function", fixed=False)
            return
        ctx.add_import("tensorflow.python", "ipu", code=self.code)
        self._wrap_early_variables(ctx, step)
        if evaluation is not None:
            for run in step.eval_runs:
                for name in (node for node in _names(run) if id(node) in step.eval_names):
                    ctx.replace(name, cst.Name(evaluation[3][name.value]))
        ctx.report(self.code, step.statements[0], self._message(step, self._computation(step, function), evaluation),
                   fixed=True)
        note_compiled(ctx, "statements", step.moved, function)
        self._report_other_uses(ctx, step)
        self._report_host_graph(ctx, step)

    def _evaluation(self, ctx, step: Step, function: str):
        """(name, inputs, outputs, {output: evaluation name}) of the forward-only compile, or None."""
        if not step.eval_outputs:
            return None
        step.forward = forward_slice(ctx, step.moved, step.eval_outputs)
        training = next((statement for statement in step.forward if builds_training(ctx, statement)), None)
        problem = "its computation includes the training op" if training is not None else None
        if training is not None and step.call is not None:
            problem = (f"`{step.call.func.value}` builds the forward pass and the training op together: give the "
                       "forward pass a function of its own")
        if problem is None:
            private = private_variables(ctx, step.forward)
            if private is not None:
                problem = (f"a second, forward-only build would not share the variables: "
                           f"`{cst.Module(body=[]).code_for_node(private[0].func)}` here, {private[1]}; make them "
                           "in front of the model or by name")
        step.reuse = variables_by_name(ctx, step.forward) if problem is None else None
        finder = reads_scope_names(ctx) if step.reuse == "unnamed" else None
        if finder is not None:
            problem = ("its layers are named by counters, which restart only in a new variable scope, and "
                       f"`{cst.Module(body=[]).code_for_node(finder.func)}` finds variables by scope name")
        if problem is not None:
            step.forward = []
            for run in step.eval_runs:
                ctx.report(self.code, run, f"this run fetches outputs of the compiled training step without the "
                           f"training op, and fetching them trains; the evaluation cannot be compiled apart "
                           f"({problem})", fixed=False)
            return None
        taken = {function}
        name = fresh_name(ctx, "eval_fn", "ipu_eval_fn", taken=taken)
        taken.add(name)
        renamed = {}
        for output in step.eval_outputs:
            renamed[output] = fresh_name(ctx, f"eval_{output}", taken=taken)
            taken.add(renamed[output])
        outputs = [renamed[output] for output in step.eval_outputs]
        return name, _inputs_read(step.inputs, step.forward), outputs, renamed

    def _wrap_early_variables(self, ctx, step: Step) -> None:
        """Variables made above the graph inputs go into an IPU scope where they are: the compiled
        step reads them on the IPU (each run of consecutive ones gets one scope)."""
        runs: List[List[cst.BaseStatement]] = []
        for statement in step.early:
            siblings = list(ctx.siblings(statement))
            if runs and siblings.index(statement) == siblings.index(runs[-1][-1]) + 1:
                runs[-1].append(statement)
            else:
                runs.append([statement])
        for run in runs:
            def build(statements):
                scope = cst.parse_statement(f'with ipu.scopes.ipu_scope("{IPU_DEVICE}"):\n    pass\n')
                return scope.with_changes(body=scope.body.with_changes(body=statements))

            if ctx.wrap(run[0], run[-1], build):
                ctx.report(self.code, run[0], "variables the compiled step reads are made in "
                           "`ipu.scopes.ipu_scope`, on the IPU", fixed=True)

    @staticmethod
    def _returned_ops(ctx, step: Step) -> List[str]:
        """A compiled function returns one operation, after its tensors: several training ops that
        always run together are grouped."""
        if len(step.ops) == 1:
            return list(step.ops)
        return [f"{tf_module(ctx)}.group({', '.join(step.ops)})"]

    @staticmethod
    def _variable_scopes(ctx, step: Step):
        """The ``with`` lines around the training and the evaluation builds, so that the second build
        reuses the variables the first one made by name."""
        tf = tf_module(ctx)
        if step.reuse == "unnamed":  # layer counters restart only in a named scope entered again
            return f'with {tf}.variable_scope("model"):', f'with {tf}.variable_scope("model", reuse=True):'
        if step.reuse == "named":
            return None, f"with {tf}.variable_scope({tf}.get_variable_scope(), reuse=True):"
        return None, None

    @staticmethod
    def _function(name: str, params: List[str], body, returned: List[str], scope_line=None):
        template = cst.parse_statement(f"def {name}({', '.join(params)}):\n    return {', '.join(returned)}\n")
        statements = [statement.deep_clone() for statement in body]
        if statements:  # no blank line at the top of the function; comments stay
            comments = [line for line in statements[0].leading_lines if line.comment is not None]
            statements[0] = statements[0].with_changes(leading_lines=comments)
        if scope_line is not None:
            scope = cst.parse_statement(f"{scope_line}\n    pass\n")
            statements = [scope.with_changes(body=scope.body.with_changes(body=statements))]
        definition = template.with_changes(body=template.body.with_changes(body=[*statements, *template.body.body]),
                                           leading_lines=[cst.EmptyLine(indent=False)])
        return [definition]

    @staticmethod
    def _computation(step: Step, function: str) -> str:
        """The step function of the file itself when the block calls it on the graph inputs alone."""
        if step.call is not None and [arg.value.value if isinstance(arg.value, cst.Name) else None
                                      for arg in step.call.args if arg.keyword is None and not arg.star] \
                == step.inputs and len(step.call.args) == len(step.inputs):
            return step.call.func.value
        return function

    @staticmethod
    def _compile_lines(computation: str, inputs: List[str], tensors: List[str], ops: List[str]):
        lines = compiled_lines(computation, inputs, tensors, ops)
        return [lines[0].with_changes(leading_lines=[cst.EmptyLine(indent=False)]), *lines[1:]]

    @staticmethod
    def _message(step: Step, function: str, evaluation) -> str:
        op = " and ".join(f"`{name}`" for name in step.ops)
        text = (f"the graph from the graph inputs to {op} becomes `{function}`," if step.call is None or
                function != step.call.func.value else f"`{function}(...)` is")
        text += " compiled with `ipu.ipu_compiler.compile` in `ipu.scopes.ipu_scope`"
        if step.tensors:
            text += f"; {op} {'runs' if len(step.ops) == 1 else 'run'} it through `{step.tensors[0]}.op`"
        if evaluation is not None:
            text += (f"; runs that fetch {', '.join(f'`{name}`' for name in step.eval_outputs)} without {op} "
                     f"fetch `{evaluation[0]}`, a forward-only compile sharing the variables, so that they do "
                     f"not train")
            if step.reuse == "unnamed":
                text += ("; both build the model in `variable_scope(\"model\")`, where its unnamed layers get the "
                         "same variables: their names start with `model/` (a checkpoint of the original needs "
                         "that prefix)")
        return text

    def _report_other_uses(self, ctx, step: Step) -> None:
        seen = set()
        for name in step.other_uses:
            if name.value in seen:
                continue
            seen.add(name.value)
            ctx.report(self.code, name, f"`{name.value}` now comes out of the compiled training step, and what "
                       f"is built on it or fetched through it here runs that step (and trains): build this with "
                       f"the graph, before the session, and fetch it directly with `sess.run`, so that the "
                       f"port compiles its evaluation apart", fixed=False)

    def _report_host_graph(self, ctx, step: Step) -> None:
        """A second graph built on other graph inputs (a test model on a test iterator) is not part of
        the compiled step: the session would run it on the CPU while the step runs on the IPU."""
        found = host_graph_after(ctx, step.owner, step.statements)
        if found is not None:
            ctx.report(self.code, found[0], found[1], fixed=False)


def _originals(ctx, block, statements):
    """The statement of ``block`` each of the edited ``statements`` comes from (None for a statement
    another rule inserted), matched in order."""
    found = []
    pending = list(block)
    for statement in statements:
        bare = statement.with_changes(leading_lines=())
        match = next((index for index, old in enumerate(pending) if statement is ctx.updated(old)
                      or bare.deep_equals(ctx.updated(old).with_changes(leading_lines=()))), None)
        found.append(pending[match] if match is not None else None)
        if match is not None:
            del pending[:match + 1]
    return found


def _inputs_read(inputs: List[str], statements: List[cst.BaseStatement]) -> List[str]:
    """The graph ``inputs`` that ``statements`` read, in order."""
    used = {name for statement in statements for name in names_used(statement)}
    return [name for name in inputs if name in used]


def _names(node: cst.CSTNode):
    return [sub for sub in walk(node) if isinstance(sub, cst.Name)]


RULE = CompileStep()
