from typing import List, Optional, Sequence, Tuple

import libcst as cst

from porter.context import dotted_name, walk
from porter.cstutil import argument
from porter.rule import FIX, TF1, Example, Rule, snippet
from porter.rules.tf1._analysis.graph import (IPU_COMPILE, compiled_now, find_calls, names_bound, set_body_hook)
from porter.scopes import local_function

IPU_SHARD = "tensorflow.python.ipu.scopes.ipu_shard"
# Calls that make weights and the big matrix work: they weigh more in the size estimate.
_HEAVY = {"dense", "conv1d", "conv2d", "conv3d", "conv2d_transpose", "separable_conv2d", "matmul", "einsum",
          "get_variable", "Variable", "Dense", "Conv1D", "Conv2D", "Conv3D", "embedding_lookup",
          "batch_normalization", "lstm", "gru", "dynamic_rnn", "Embedding", "LSTM", "GRU"}
_HEAVY_WEIGHT = 3
# Training: the gradients and the weight updates follow the shards of their forward ops
# (Targeting the IPU from TensorFlow 1, "Sharding a graph"); so do the other `tf.train` calls
# (global step, learning-rate schedules).
# An outfeed's `enqueue` (the results leaving the loop) stays after the shards too.
_TRAINING = {"minimize", "apply_gradients", "compute_gradients", "gradients", "group", "enqueue"}
_HEAD = """\
import tensorflow.compat.v1 as tf
from tensorflow.python import ipu


"""
_TRAIN = """\
    train_op = tf.train.AdamOptimizer().minimize(loss)
    return loss, train_op


"""
_COMPILE_XY = """\
with ipu.scopes.ipu_scope("/device:IPU:0"):
    [loss] = ipu.ipu_compiler.compile(model_fn, inputs=[x, y])
"""
_COMPILE_X = """\
with ipu.scopes.ipu_scope("/device:IPU:0"):
    [out] = ipu.ipu_compiler.compile(model_fn, inputs=[x])
"""
_DEFINITIONS = (cst.FunctionDef, cst.ClassDef)
_LOOPS = ("tensorflow.python.ipu.loops.repeat", "tensorflow.python.ipu.loops.while_loop")
_HOW = ("put its layers in `with ipu.scopes.ipu_shard(i):` blocks by hand, shard 0 first "
        "(Targeting the IPU from TensorFlow 1, \"Sharding a graph\")")


class Sharding(Rule):
    code = "IPU207"
    name = "tf1-sharding"
    kind = FIX
    frameworks = frozenset({TF1})
    # Shards what IPU202 compiles in this port (TF1_COMPILED).
    after = ("IPU202",)
    summary = "With `--shards N`, split the compiled TF1 computation over N IPUs with `ipu.scopes.ipu_shard`."
    rationale = (
        "A model too big for one IPU is sharded: its graph is split into parts, each on its own IPU, "
        "with `with ipu.scopes.ipu_shard(i):` inside the computation `ipu.ipu_compiler.compile` compiles "
        "(Targeting the IPU from TensorFlow 1, \"Sharding a graph\"). With `--shards N` (a power of two, at "
        "most "
        "`--ipus`), the top-level statements of that function (the user's, or the one IPU202 makes) are "
        "split, in order, into N contiguous blocks of about the same size (a layer, a matmul or a "
        "variable counts three calls, a call to a nested function what its body counts, any other call "
        "one; nested definitions stay first), and IPU203 selects N IPUs (an existing "
        "`auto_select_ipus` literal below N becomes N). The training statements at the end (`minimize`, "
        "`apply_gradients`, the optimizer, other `tf.train` calls) and a `return` of names stay after "
        "the blocks: gradients take the shard of their forward ops; a `return` that computes (`return "
        "tf.layers.dense(h, 10)`) goes in the last block. A computation the porter cannot split (one "
        "call to a function from elsewhere, fewer statements than shards, an early `return`) is reported "
        "instead; a computation that already uses `ipu_shard` is left alone."
    )
    examples = (
        Example(
            _HEAD + snippet("""\
                def model_fn(x, y):
                    h = tf.layers.dense(x, 256, activation=tf.nn.relu)
                    logits = tf.layers.dense(h, 10)
                    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
                """) + _TRAIN + _COMPILE_XY,
            _HEAD + snippet("""\
                def model_fn(x, y):
                    with ipu.scopes.ipu_shard(0):
                        h = tf.layers.dense(x, 256, activation=tf.nn.relu)
                    with ipu.scopes.ipu_shard(1):
                        logits = tf.layers.dense(h, 10)
                        loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
                """) + _TRAIN + _COMPILE_XY,
            options={"shards": 2, "ipus": 2},
        ),
        Example(
            _HEAD + snippet("""\
                def main(steps):
                    def body(x):
                        h = tf.layers.dense(x, 64)
                        out = tf.layers.dense(h, 1)
                        return outfeed.enqueue(out)

                    def loop():
                        return ipu.loops.repeat(steps, body, [], infeed)

                    with ipu.scopes.ipu_scope("/device:IPU:0"):
                        run = ipu.ipu_compiler.compile(loop, inputs=[])
                    cfg = ipu.config.IPUConfig()
                    cfg.auto_select_ipus = 1
                """),
            _HEAD + snippet("""\
                def main(steps):
                    def body(x):
                        with ipu.scopes.ipu_shard(0):
                            h = tf.layers.dense(x, 64)
                        with ipu.scopes.ipu_shard(1):
                            out = tf.layers.dense(h, 1)
                        return outfeed.enqueue(out)

                    def loop():
                        return ipu.loops.repeat(steps, body, [], infeed)

                    with ipu.scopes.ipu_scope("/device:IPU:0"):
                        run = ipu.ipu_compiler.compile(loop, inputs=[])
                    cfg = ipu.config.IPUConfig()
                    cfg.auto_select_ipus = 2
                """),
            options={"shards": 2, "ipus": 2},
        ),
        Example(
            _HEAD + snippet("""\
                def model_fn(x):
                    h = tf.layers.dense(x, 64)
                    return tf.layers.dense(h, 10)


                """)
            + _COMPILE_X,
            _HEAD + snippet("""\
                def model_fn(x):
                    with ipu.scopes.ipu_shard(0):
                        h = tf.layers.dense(x, 64)
                    with ipu.scopes.ipu_shard(1):
                        return tf.layers.dense(h, 10)


                """) + _COMPILE_X,
            options={"shards": 2, "ipus": 2},
        ),
        Example(
            _HEAD + snippet("""\
                def model_fn(x):
                    return resnet.build(x)


                """) + _COMPILE_X,
            options={"shards": 2, "ipus": 2},
        ),
        Example(
            _HEAD + snippet("""\
                def model_fn(x):
                    with ipu.scopes.ipu_shard(0):
                        h = tf.layers.dense(x, 64)
                    with ipu.scopes.ipu_shard(1):
                        out = tf.layers.dense(h, 10)
                    return out


                """) + _COMPILE_X,
            reported=False, options={"shards": 2, "ipus": 2},
        ),
        Example(
            _HEAD + snippet("""\
                def model_fn(x):
                    h = tf.layers.dense(x, 64)
                    return tf.layers.dense(h, 10)


                """)
            + _COMPILE_X,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        shards = ctx.config.shards
        if shards < 2:
            return
        done = set()
        for call in find_calls(ctx, IPU_COMPILE):
            computation = argument(call, "computation", 0)
            function = self._function_of(ctx, computation.value, call) if computation is not None else None
            if function is None:
                ctx.report(self.code, call, f"the computation compiled here is not a function of this file, "
                           f"so it is not split over {shards} IPUs: {_HOW}", fixed=False)
            else:
                self._shard_function(ctx, function, shards, done)
        for kind, node, name in compiled_now(ctx):  # what IPU202 compiles in this port
            if kind == "function":
                self._shard_function(ctx, node, shards, done)
            elif kind == "statements":
                self._shard_statements(ctx, node, name, shards)
        if done or compiled_now(ctx):
            self._check_ipus_selected(ctx, shards)

    def _check_ipus_selected(self, ctx, shards: int) -> None:
        """An existing ``cfg.auto_select_ipus = K`` with K < N selects N IPUs, one per shard."""
        for assign in ctx.nodes(cst.Assign):
            target = assign.targets[0].target if len(assign.targets) == 1 else None
            if isinstance(target, cst.Attribute) and target.attr.value == "auto_select_ipus" and \
                    isinstance(assign.value, cst.Integer) and int(assign.value.value) < shards:
                if ctx.replace(assign.value, assign.value.with_changes(value=str(shards))):
                    ctx.report(self.code, assign.value, f"`auto_select_ipus` becomes {shards} (was "
                               f"{assign.value.value}): one IPU per shard", fixed=True)

    @staticmethod
    def _function_of(ctx, computation: cst.BaseExpression, call: cst.Call) -> Optional[cst.FunctionDef]:
        """The function of the file ``computation`` runs: ``model_fn`` or ``lambda x: model_fn(x, lr)``."""
        if isinstance(computation, cst.Lambda) and isinstance(computation.body, cst.Call):
            computation = computation.body.func
        if not isinstance(computation, cst.Name):
            return None
        found = local_function(ctx, computation.value, call)
        if found is not None:
            return found
        # A function defined in a block of the same function (``def model_fn`` in the IPU scope).
        owner = ctx.enclosing_function(call)
        candidates = [node for node in ctx.nodes(cst.FunctionDef) if node.name.value == computation.value
                      and ctx.enclosing_function(node) is owner]
        return candidates[0] if len(candidates) == 1 else None

    def _shard_function(self, ctx, function: cst.FunctionDef, shards: int, done: set) -> None:
        if id(function) in done:
            return
        done.add(id(function))
        name = function.name.value
        if not isinstance(function.body, cst.IndentedBlock):
            ctx.report(self.code, function.name, f"`{name}` is on one line, so it is not split over {shards} "
                       f"IPUs: {_HOW}", fixed=False)
            return
        body = list(function.body.body)
        if any(ctx.qualified_name(node.func) == IPU_SHARD for statement in body for node in walk(statement)
               if isinstance(node, cst.Call)):
            return  # sharded already
        if body and _is_docstring(body[0]):
            body = body[1:]
        returns = [node for statement in body for node in walk(statement)
                   if isinstance(node, cst.Return) and ctx.enclosing_function(node) is function]
        if returns and not (len(returns) == 1 and any(node is returns[0] for node in walk(body[-1]))):
            ctx.report(self.code, function.name, f"`{name}` returns early, so it is not split over {shards} IPUs: "
                       f"{_HOW}", fixed=False)
            return
        returned = body[-1] if returns else None
        if returns:
            body = body[:-1]
        head, groups, tail = split(body, shards)
        if returned is not None and not tail and isinstance(returned, cst.SimpleStatementLine) and any(
                isinstance(node, cst.Call) for node in walk(returned)) and not _is_training(returned):
            body, returned = [*body, returned], None  # `return layer(h)` computes: it goes in the last shard
            head, groups, tail = split(body, shards)
        if groups is None:
            forward = body[len(head):len(body) - len(tail)]
            loop_body = self._loop_body(ctx, forward or ([returned] if returned else []))
            if loop_body is not None:  # `return ipu.loops.repeat(n, body, ...)`: shard the loop's body
                self._shard_function(ctx, loop_body, shards, done)
                return
            ctx.report(self.code, function.name, self._too_small(name, forward, shards, returned), fixed=False)
            return
        if not all(ctx.allowed(statement) for group in groups for statement in group):
            return  # a suppression comment stops the rule inside: no partial split
        for index, group in enumerate(groups):
            ctx.wrap(group[0], group[-1], lambda statements, index=index: shard_block(index, statements))
        ctx.add_import("tensorflow.python", "ipu", code=self.code)
        ctx.report(self.code, function.name, self._split_message(name, groups, tail), fixed=True)

    @staticmethod
    def _loop_body(ctx, statements) -> Optional[cst.FunctionDef]:
        """The function of the file an ``ipu.loops.repeat``/``while_loop`` in the one statement
        ``statements`` runs as its body."""
        if len(statements) != 1:
            return None
        for node in walk(statements[0]):
            if isinstance(node, cst.Call) and ctx.qualified_name(node.func) in _LOOPS:
                body = argument(node, "body", 1)
                if body is not None and isinstance(body.value, cst.Name):
                    return local_function(ctx, body.value.value, node)
        return None

    def _shard_statements(self, ctx, statements: List[cst.BaseStatement], name: str, shards: int) -> None:
        """The statements IPU202 moves into the function ``name``: split them when it builds it."""
        head, groups, tail = split(statements, shards)
        if groups is None:
            forward = statements[len(head):len(statements) - len(tail)]
            ctx.report(self.code, statements[0], self._too_small(name, forward, shards), fixed=False)
            return

        def hook(updated: List[cst.BaseStatement]) -> List[cst.BaseStatement]:
            new_head, new_groups, new_tail = split(updated, shards)
            if new_groups is None:
                return updated
            return [*new_head, *(shard_block(index, group) for index, group in enumerate(new_groups)), *new_tail]

        set_body_hook(ctx, statements[0], hook)
        ctx.add_import("tensorflow.python", "ipu", code=self.code)
        ctx.report(self.code, statements[0], self._split_message(name, groups, tail), fixed=True)

    @staticmethod
    def _too_small(name: str, forward, shards: int, returned=None) -> str:
        if returned is not None and any(isinstance(node, cst.Call) for node in walk(returned)):
            forward = [*forward, returned]  # the return computes too
        if len(forward) == 1:
            calls = [node for node in walk(forward[0]) if isinstance(node, cst.Call)]
            inside_first = {id(node) for node in walk(calls[0])} if calls else set()
            if calls and all(id(node) in inside_first for node in calls):  # f(g(x)): one opaque call
                callee = dotted_name(calls[0].func)
                what = f"one call (`{callee}(...)`)" if callee else "one call"
                return (f"`{name}` computes its result in {what}, which the porter cannot split over {shards} "
                        f"IPUs: {_HOW}")
        if not forward:
            return f"`{name}` computes nothing to split over {shards} IPUs: {_HOW}"
        count = f"{len(forward)} statement{'s' if len(forward) != 1 else ''}"
        return f"`{name}` computes its result in {count}, too few to split over {shards} IPUs: {_HOW}"

    @staticmethod
    def _split_message(name: str, groups, tail) -> str:
        parts = []
        for index, group in enumerate(groups):
            bound: List[str] = []
            for statement in group:
                bound += [item for item in _bound_in_order(statement) if item not in bound]
            if bound:
                shown = ", ".join(f"`{item}`" for item in bound[:3]) + (", ..." if len(bound) > 3 else "")
            else:
                returns = any(isinstance(node, cst.Return) for node in walk(group[-1]))
                shown = "the returned value" if returns and len(group) == 1 else (
                    f"{len(group)} statement{'s' if len(group) != 1 else ''}")
            parts.append(f"shard {index} {'computes ' if index == 0 else ''}{shown}")
        message = f"`{name}` is split over {len(groups)} IPUs with `ipu.scopes.ipu_shard`: " + "; ".join(parts)
        if tail:
            bound = [item for statement in tail for item in _bound_in_order(statement)]
            what = ", ".join(f"`{item}`" for item in bound) if bound else "the training step"
            verb = "stay" if len(bound) > 1 else "stays"
            message += f"; {what} {verb} after the shards (gradients take the shard of their forward ops)"
        return message


def split(statements: Sequence[cst.BaseStatement], shards: int):
    """``(head, groups, tail)``: the definitions at the start that stay before the shards (nested
    functions, classes, imports), the statements after them in ``shards`` contiguous groups of
    about the same size, and the training statements at the end that stay after them; groups is
    None when there are too few statements."""
    statements = list(statements)
    start = 0
    while start < len(statements) and isinstance(statements[start], _DEFINITIONS):
        start += 1
    end = len(statements)
    while end > start and _is_training(statements[end - 1]):
        end -= 1
    head, forward, tail = statements[:start], statements[start:end], statements[end:]
    if len(forward) < shards:
        return head, None, tail
    helpers = {statement.name.value: _weight(statement.body) for statement in head
               if isinstance(statement, cst.FunctionDef)}  # a call to a nested function weighs its body
    weights = [_weight(statement, helpers) for statement in forward]
    bounds = _partition(weights, shards)
    return head, [forward[low:high] for low, high in bounds], tail


def _partition(weights: List[int], parts: int) -> List[Tuple[int, int]]:
    """Contiguous ``[low, high)`` ranges, none empty, minimising the largest sum (then the sum of
    squares, then splitting as early as possible): a small dynamic programme."""
    count = len(weights)
    prefix = [0]
    for weight in weights:
        prefix.append(prefix[-1] + weight)
    # best[k][i]: (largest, squares, cuts) for the first i weights in k parts
    best = [[None] * (count + 1) for _ in range(parts + 1)]
    best[0][0] = (0, 0, ())
    for k in range(1, parts + 1):
        for i in range(k, count - (parts - k) + 1):
            choice = None
            for j in range(k - 1, i):
                previous = best[k - 1][j]
                if previous is None:
                    continue
                size = prefix[i] - prefix[j]
                candidate = (max(previous[0], size), previous[1] + size * size, previous[2] + (j,))
                if choice is None or candidate[:2] < choice[:2]:
                    choice = candidate
            best[k][i] = choice
    cuts = list(best[parts][count][2]) + [count]
    return [(cuts[index], cuts[index + 1]) for index in range(parts)]


def _weight(statement: cst.CSTNode, helpers=None) -> int:
    weight = 0
    for node in walk(statement):
        if isinstance(node, cst.Call):
            callee = dotted_name(node.func) or ""
            if helpers and callee in helpers:
                weight += helpers[callee]
            else:
                weight += _HEAVY_WEIGHT if callee.rsplit(".", 1)[-1] in _HEAVY else 1
    return max(weight, 1)


def _is_training(statement: cst.CSTNode) -> bool:
    """A statement that makes the optimizer, the gradients or the training op."""
    for node in walk(statement):
        if isinstance(node, cst.Call):
            dotted = dotted_name(node.func) or ""
            callee = dotted.rsplit(".", 1)[-1]
            if callee in _TRAINING or callee.endswith("Optimizer") or ".train." in f".{dotted}":
                return True
    return False


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def _bound_in_order(statement: cst.BaseStatement) -> List[str]:
    names = names_bound(statement)
    ordered = []
    for node in walk(statement):
        if isinstance(node, cst.Name) and node.value in names and node.value not in ordered:
            ordered.append(node.value)
    return ordered


def shard_block(index: int, statements: List[cst.BaseStatement]) -> cst.With:
    """``with ipu.scopes.ipu_shard(index):`` around ``statements``; the comments and blank lines
    above the first statement go above the block."""
    block = cst.parse_statement(f"with ipu.scopes.ipu_shard({index}):\n    pass\n")
    assert isinstance(block, cst.With)
    statements = list(statements)
    above = getattr(statements[0], "leading_lines", ())
    if above:
        statements[0] = statements[0].with_changes(leading_lines=())
    return block.with_changes(body=block.body.with_changes(body=statements), leading_lines=above)


RULE = Sharding()
