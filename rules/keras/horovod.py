"""IPU116: Horovod's Keras and TensorFlow API, ported as the one process an IPU host runs."""

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from porter import throughput
from porter.context import bound_name, code_of, dotted_name, walk
from porter.cstutil import argument, expr_call, expression, keyword
from porter.rule import FIX, KERAS, Example, Rule
from porter.statements import remove_statement, unwrap_call

# What each Horovod function is on one process, by its last name.
_RANKS = frozenset({"rank", "local_rank", "cross_rank"})
_SIZES = frozenset({"size", "local_size", "cross_size"})
# Set-up and synchronisation that one process does not need: the statement goes.
_STATEMENTS = frozenset({"init", "shutdown", "broadcast_variables", "broadcast_global_variables", "join"})
# Wrappers and collectives that give back their first argument on one process.
_IDENTITY = {"DistributedOptimizer": "optimizer", "DistributedGradientTape": "gradtape", "allreduce": "tensor",
             "broadcast": "tensor", "allgather": "tensor"}
# Callbacks that do nothing on one process: they leave the callback list.
_IDLE_CALLBACKS = frozenset({"BroadcastGlobalVariablesCallback", "MetricAverageCallback"})


class Horovod(Rule):
    code = "IPU116"
    name = "horovod"
    kind = FIX
    frameworks = frozenset({KERAS})
    summary = "Port Horovod (`hvd.init`, `DistributedOptimizer`, its callbacks, rank and size) to the one process of an IPU host."
    rationale = (
        "Horovod runs one process per GPU and all-reduces their gradients; the IPU's `ipu.horovod` module was "
        "removed in SDK 3.1 (Targeting the IPU from TensorFlow 2, \"API changes\", Release 3.1), and on one "
        "host the IPU spreads training over IPUs by replication in one process (port with `--ipus N`), across "
        "hosts with PopDist. The port is the script Horovod runs with one process: `hvd.init()` and "
        "variable broadcasts go, `hvd.DistributedOptimizer(opt)` and `hvd.DistributedGradientTape(tape)` are "
        "`opt` and `tape`, `allreduce`/`broadcast`/`allgather` of one process give back their tensor, the "
        "broadcast and metric-averaging callbacks leave the callback list, `hvd.rank()` is 0 (a block only rank 0 "
        "runs stays, one only other ranks run goes) and `hvd.size()` is 1. With replication (`--ipus N`), "
        "`hvd.size()` is left and reported: a learning rate or batch scaled by the number of workers must be "
        "scaled by the replicas, and `steps_per_epoch` counts the batches of all of them. What else Horovod "
        "does (learning-rate warm-up callbacks, gradient accumulation with `backward_passes_per_step`, elastic "
        "training) is reported, and the import stays until nothing uses it."
    )
    examples = (
        Example(
            """\
            import horovod.tensorflow.keras as hvd
            import tensorflow as tf

            hvd.init()
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            optimizer = tf.keras.optimizers.SGD(0.01 * hvd.size())
            optimizer = hvd.DistributedOptimizer(optimizer)
            model.compile(optimizer=optimizer, loss="mse")
            callbacks = [hvd.callbacks.BroadcastGlobalVariablesCallback(0), hvd.callbacks.MetricAverageCallback()]
            if hvd.rank() == 0:
                callbacks.append(tf.keras.callbacks.ModelCheckpoint("checkpoint.h5"))
            model.fit(x, y, batch_size=16, callbacks=callbacks, verbose=1 if hvd.rank() == 0 else 0)
            """,
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            optimizer = tf.keras.optimizers.SGD(0.01 * 1)
            model.compile(optimizer=optimizer, loss="mse")
            callbacks = []
            callbacks.append(tf.keras.callbacks.ModelCheckpoint("checkpoint.h5"))
            model.fit(x, y, batch_size=16, callbacks=callbacks, verbose=1)
            """,
        ),
        # A custom step: the tape and the variable broadcast of one process (and the `if` that only guarded it).
        Example(
            """\
            import horovod.tensorflow as hvd
            import tensorflow as tf


            def step(model, optimizer, x, y, first):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                tape = hvd.DistributedGradientTape(tape)
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                if first:
                    hvd.broadcast_variables(model.variables, root_rank=0)
                return loss
            """,
            """\
            import tensorflow as tf


            def step(model, optimizer, x, y, first):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss
            """,
        ),
        # A warm-up callback changes the learning rate: reported, and the import stays.
        Example(
            """\
            import horovod.tensorflow.keras as hvd
            import tensorflow as tf

            callbacks = [hvd.callbacks.LearningRateWarmupCallback(initial_lr=0.1, warmup_epochs=3)]
            """,
            reported=True,
        ),
        # Horovod used outside a call the port rewrites: reported, and the import stays.
        Example(
            """\
            import horovod.tensorflow.keras as hvd
            import tensorflow as tf

            compression = hvd.Compression.fp16
            """,
            reported=True,
        ),
        # With replication the number of workers becomes the number of replicas: reported.
        Example(
            """\
            import horovod.tensorflow.keras as hvd
            import tensorflow as tf

            optimizer = tf.keras.optimizers.SGD(0.01 * hvd.size())
            """,
            reported=True, options={"ipus": 4},
        ),
        Example(
            """\
            import tensorflow as tf

            optimizer = tf.keras.optimizers.SGD(0.01)
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        replicated = throughput.config_replicas(ctx.config) > 1
        handled: Set[int] = set()
        reported: Set[int] = set()
        self._dropped: Dict[int, Tuple[cst.List, Set[int]]] = {}  # callback lists: the positions that go
        for call in ctx.nodes(cst.Call):
            function = _horovod_function(ctx, call)
            if function is None:
                continue
            if any(ctx.is_removed(ancestor) for ancestor in ctx.ancestors(call)):
                handled.add(id(call))  # in GPU set-up another rule removed
            elif self._port(ctx, call, function, replicated):
                handled.add(id(call))
            else:
                self._report(ctx, call, function, replicated)
                reported.add(id(call))
        for holder, positions in self._dropped.values():
            ctx.replace(holder, lambda node, positions=positions: _list_without(node, positions))
        self._remove_imports(ctx, handled, reported)

    def _port(self, ctx, call: cst.Call, function: str, replicated: bool) -> bool:
        """Rewrite one call of Horovod as one process runs it; False when it is left."""
        if function in _RANKS:
            return self._rank(ctx, call)
        if function in _SIZES and not replicated:
            ctx.replace(call, expression("1"))
            ctx.report(self.code, call, f"`{code_of(ctx, call)}` is 1: the port runs one process", fixed=True)
            return True
        if function in _STATEMENTS:
            return self._drop_statement(ctx, call, "one process needs no set-up or synchronisation with others")
        if function in _IDENTITY:
            return self._unwrap(ctx, call, _IDENTITY[function])
        if function in _IDLE_CALLBACKS:
            return self._drop_callback(ctx, call)
        return False

    def _rank(self, ctx, call: cst.Call) -> bool:
        """``hvd.rank()`` is 0: a test of rank 0 is decided, the block it guards kept or dropped."""
        comparison = ctx.parent(call)
        decided = _rank_test(comparison, call) if isinstance(comparison, cst.Comparison) else None
        if decided is None:
            ctx.replace(call, expression("0"))
            ctx.report(self.code, call, f"`{code_of(ctx, call)}` is 0: the port runs one process", fixed=True)
            return True
        holder = ctx.parent(comparison)
        if isinstance(holder, cst.If) and holder.test is comparison and holder.orelse is None:
            if decided:
                ctx.unwrap(holder)
            else:
                remove_statement(ctx, holder)
        elif isinstance(holder, cst.IfExp) and holder.test is comparison:
            ctx.replace(holder, lambda node: node.body if decided else node.orelse)
        elif decided and isinstance(holder, cst.BooleanOperation) and isinstance(holder.operator, cst.And):
            # `step % 10 == 0 and hvd.rank() == 0` is its other side.
            kept_side = "right" if holder.left is comparison else "left"
            ctx.replace(holder, lambda node: getattr(node, kept_side))
        else:
            ctx.replace(comparison, expression("True" if decided else "False"))
        ctx.report(self.code, call, f"`{code_of(ctx, comparison)}` is {decided}: the port runs one process, rank 0",
                   fixed=True)
        return True

    def _drop_statement(self, ctx, call: cst.Call, why: str) -> bool:
        statement = ctx.statement_of(call)
        if expr_call(statement) is not call:
            return False
        guard = _guard_of(ctx, statement)
        if guard is not None and all(_horovod_statement(ctx, line) for line in guard.body.body):
            # `if first_batch: hvd.broadcast_variables(...)`: nothing is left to guard.
            if not ctx.is_removed(guard):
                remove_statement(ctx, guard)
        else:
            remove_statement(ctx, statement)
        ctx.report(self.code, call, f"`{code_of(ctx, call)}` removed: {why}", fixed=True)
        return True

    def _unwrap(self, ctx, call: cst.Call, parameter: str) -> bool:
        """``hvd.DistributedOptimizer(opt)`` -> ``opt``; ``opt = hvd.DistributedOptimizer(opt)`` goes."""
        wrapped = argument(call, parameter, 0)
        others = [arg for arg in call.args if arg is not wrapped]
        accumulation = keyword(call, "backward_passes_per_step")
        if wrapped is None or wrapped.star or accumulation is not None and not _is_one(accumulation.value) or any(
                arg.star for arg in others):
            return False
        unwrap_call(ctx, call, parameter)
        wrapped_kind = {"optimizer": "optimizer", "gradtape": "tape"}.get(parameter, "tensor")
        ctx.report(self.code, call, f"`{code_of(ctx, call.func)}(...)` removed: one process has nothing to average "
                   f"with, so the {wrapped_kind} it wraps is used as it is", fixed=True)
        return True

    def _drop_callback(self, ctx, call: cst.Call) -> bool:
        """A callback of one process that does nothing: out of its list, or its ``append`` goes."""
        parent = ctx.parent(call)
        holder = ctx.parent(parent) if isinstance(parent, cst.Element) else None
        if isinstance(holder, cst.List):
            self._dropped.setdefault(id(holder), (holder, set()))[1].add(_position(holder, parent))
            ctx.report(self.code, call, f"`{code_of(ctx, call.func)}` removed: it synchronises processes, and the "
                       "port runs one", fixed=True)
            return True
        # `callbacks.append(hvd.callbacks.MetricAverageCallback())`: the statement goes.
        method = ctx.parent(ctx.parent(parent)) if isinstance(parent, cst.Arg) else None
        appended = ctx.parent(parent) if isinstance(method, cst.Attribute) and method.attr.value == "append" else None
        return appended is not None and self._drop_statement(ctx, appended,
                                                             "a callback that does nothing on one process")

    def _report(self, ctx, call: cst.Call, function: str, replicated: bool) -> None:
        if function in _SIZES and replicated:
            replicas = throughput.config_replicas(ctx.config)
            message = (f"`{code_of(ctx, call)}` counted the Horovod workers; the port runs one process replicated over "
                       f"{replicas} IPU replicas: put {replicas} where it scales a learning rate or a global batch, and "
                       "the unscaled count in `steps_per_epoch` (Keras splits those steps between the replicas), then "
                       "remove the Horovod import")
        elif function.startswith("LearningRate"):
            message = (f"`{code_of(ctx, call.func)}` changes the learning rate by the number of Horovod workers: on one "
                       "process it holds the rate at `initial_lr`; remove it when that is the optimizer's rate, else "
                       "use `tf.keras.callbacks.LearningRateScheduler`, then remove the Horovod import")
        else:
            message = (f"`{code_of(ctx, call.func)}` is Horovod, which the IPU's TensorFlow does not have (`ipu.horovod` "
                       "was removed in SDK 3.1): write what one process does instead, then remove the Horovod import; "
                       "replicate over IPUs with `--ipus N`, or use PopDist across hosts")
        ctx.report(self.code, call, message, fixed=False)

    def _remove_imports(self, ctx, handled: Set[int], reported: Set[int]) -> None:
        """Each ``import horovod...`` statement goes when every use of the names it binds was ported;
        a use neither ported nor reported (``hvd.Compression.fp16``) is reported, once a statement."""
        for statement_node in ctx.nodes(cst.SimpleStatementLine):
            names = _horovod_import_names(statement_node)
            if not names or not ctx.allowed(statement_node):
                continue
            uses = [node for node in ctx.nodes(cst.Name) if node.value in names
                    and ctx.statement_of(node) is not statement_node]
            left = [node for node in uses if not _within(ctx, node, handled)]
            if not left:
                remove_statement(ctx, statement_node)
                continue
            seen: Set[int] = set()
            for node in left:
                statement_of_use = ctx.statement_of(node)
                if _within(ctx, node, reported) or id(statement_of_use) in seen:
                    continue
                seen.add(id(statement_of_use))
                used = ctx.parent(node) if isinstance(ctx.parent(node), cst.Attribute) else node
                ctx.report(self.code, node, f"`{code_of(ctx, used)}` is Horovod, which the IPU's TensorFlow does not "
                           "have (`ipu.horovod` was removed in SDK 3.1): write what one process does instead, then "
                           "remove the Horovod import", fixed=False)


def _horovod_function(ctx, call: cst.Call) -> Optional[str]:
    qualified = ctx.qualified_name(call.func)
    if qualified is None or not qualified.startswith("horovod."):
        return None
    return qualified.rsplit(".", 1)[-1]


def _rank_test(comparison: cst.Comparison, call: cst.Call) -> Optional[bool]:
    """What ``hvd.rank() == 0`` (``!= 0``, ``> 0``, ``0 == hvd.rank()``) is on rank 0, else None."""
    if len(comparison.comparisons) != 1:
        return None
    target = comparison.comparisons[0]
    other = target.comparator if comparison.left is call else comparison.left
    if not (comparison.left is call or target.comparator is call) or not _is_zero(other):
        return None
    operator = target.operator
    if isinstance(operator, cst.Equal):
        return True
    if isinstance(operator, cst.NotEqual) or isinstance(operator, cst.GreaterThan) and comparison.left is call:
        return False
    return None


def _guard_of(ctx, statement: cst.BaseStatement) -> Optional[cst.If]:
    """The ``if`` without ``else`` whose body holds ``statement``, when its test calls nothing."""
    block = ctx.parent(statement)
    guard = ctx.parent(block) if isinstance(block, cst.IndentedBlock) else None
    if isinstance(guard, cst.If) and guard.orelse is None and guard.body is block and not any(
            isinstance(node, cst.Call) for node in walk(guard.test)):
        return guard
    return None


def _horovod_statement(ctx, statement: cst.BaseStatement) -> bool:
    """``hvd.broadcast_variables(...)``, ``hvd.init()``: a statement that only calls Horovod set-up."""
    call = expr_call(statement)
    return call is not None and _horovod_function(ctx, call) in _STATEMENTS


def _is_zero(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Integer) and node.value == "0"


def _is_one(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Integer) and node.value == "1"


def _position(holder: cst.List, element: cst.Element) -> int:
    return next(index for index, item in enumerate(holder.elements) if item is element)


def _list_without(node: cst.List, dropped: Set[int]) -> cst.List:
    kept = _without(node.elements, dropped)
    if not kept:
        return cst.List([])  # no blank line left between the brackets
    return node.with_changes(elements=kept)


def _without(elements, dropped: Set[int]) -> List[cst.BaseElement]:
    kept = [element for index, element in enumerate(elements) if index not in dropped]
    if kept and len(elements) - 1 in dropped:
        # The last element goes: the new last one keeps the comma (and line break) the list ended with.
        kept[-1] = kept[-1].with_changes(comma=elements[-1].comma)
    return kept


def _horovod_import_names(statement_node: cst.SimpleStatementLine) -> Set[str]:
    """The names an ``import horovod...`` (or ``from horovod... import``) statement binds, when it
    imports Horovod only, else an empty set."""
    if len(statement_node.body) != 1 or not isinstance(statement_node.body[0], (cst.Import, cst.ImportFrom)):
        return set()
    node = statement_node.body[0]
    if isinstance(node, cst.ImportFrom):
        if node.relative or not (dotted_name(node.module) or "").startswith("horovod") or isinstance(
                node.names, cst.ImportStar):
            return set()
    elif not all((dotted_name(alias.name) or "").startswith("horovod") for alias in node.names):
        return set()
    return {bound_name(alias) for alias in node.names}


def _within(ctx, node: cst.CSTNode, calls: Set[int]) -> bool:
    return any(id(ancestor) in calls for ancestor in ctx.ancestors(node))


RULE = Horovod()
