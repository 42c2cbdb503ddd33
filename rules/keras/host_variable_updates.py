from typing import Dict, List, Set, Tuple

import libcst as cst

from porter.context import code_of, walk
from porter.rule import ERROR, FIX, KERAS, Example, Rule
from porter.rules.keras._analysis.custom_loop import loop_plans, tensorflow_alias
from porter.rules.keras._analysis.host_updates import HOST_SCALARS, final_return, movable_updates, updating_helper
from porter.rules.keras._analysis.inline_step import inline_steps

_ASSIGNS = frozenset({"assign", "assign_add", "assign_sub", "set_weights"})
_EMA = "tensorflow.train.ExponentialMovingAverage"
# Code that runs elsewhere than in the loop's body, when it runs.
_DEFINITIONS = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


# A target network beside the online one its step trains (a DQN's, BYOL's, a mean teacher's).
_TARGET_STEP = """\
import tensorflow as tf

online = tf.keras.Sequential([tf.keras.layers.Dense(2)])
target = tf.keras.Sequential([tf.keras.layers.Dense(2)])
optimizer = tf.keras.optimizers.Adam()


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((online(x) - y - target(x)) ** 2)
    grads = tape.gradient(loss, online.trainable_variables)
    optimizer.apply_gradients(zip(grads, online.trainable_variables))
    return loss


"""


class HostVariableUpdates(Rule):
    code = "IPU167"
    name = "host-variable-updates"
    kind = FIX
    after = ("IPU111",)  # the step it moves updates into is the one IPU111 compiles
    frameworks = frozenset({KERAS})
    summary = ("Move the weight updates a custom loop makes on the host right after its compiled step (a target "
               "network's average, weight clipping) to the end of the step; report the others (moving averages, "
               "optimizer steps, updates that read what changes between steps): they run eagerly, outside the IPU "
               "program.")
    rationale = (
        "A custom training loop runs on the IPU what its step computes when the step is a "
        "`@tf.function(jit_compile=True)` called through `strategy.run` (Targeting the IPU from TensorFlow 2, "
        "\"On-device loops\"). Variables made in the IPU strategy's scope live on the IPU; code of the loop's "
        "body that updates them outside the step (`target.set_weights(online.get_weights())`, a Polyak average "
        "`t.assign(tau * o + (1 - tau) * t)`, WGAN clipping `w.assign(tf.clip_by_value(w, ...))`, "
        "`ema.apply(...)`, `optimizer.apply_gradients(...)` of gradients accumulated by hand) runs eagerly, op by "
        "op, on each pass of the loop, and none of it is part of the compiled step IPU111 makes. It belongs at "
        "the end of the step (after its optimizer step), or in a compiled function of its own run through "
        "`strategy.run`. The porter moves `assign` updates (`assign_add`, `assign_sub`, `for` loops of them, and "
        "calls of a plain function of the file that only makes them) "
        "there when that is exact: they directly follow the call of the step in the loop's body, on every pass; "
        "the step is called from that one place and ends in a `return` of names; every name they read is seen "
        "the same in the step and does not change between calls. They then run once per step, also in the "
        "on-device loop of `--steps-per-execution`. A learning rate the loop assigns (`optimizer.learning_rate.assign(...)`) is one scalar "
        "the host writes between executions and is not reported, nor is a counter it steps "
        "(`ckpt.step.assign_add(1)`), nor are weights copied by `set_weights` every "
        "N steps (under an `if`), nor is work in the loop around the one that calls the step (once an epoch)."
    )
    examples = (
        # A Polyak average of a target network after each step: moved to the end of the step, before its
        # `return`, where it runs once per step on the IPU.
        Example(_TARGET_STEP + """\
for x, y in dataset:
    loss = train_step(x, y)
    for t, o in zip(target.weights, online.weights):
        t.assign(0.005 * o + 0.995 * t)
""", _TARGET_STEP.replace("    return loss", """\
    for t, o in zip(target.weights, online.weights):
        t.assign(0.005 * o + 0.995 * t)
    return loss""") + """\
for x, y in dataset:
    loss = train_step(x, y)
"""),
        # The same average written as a plain function of the file: its call moves, the function stays.
        Example(_TARGET_STEP + """\
def soft_update(targets, sources, tau):
    for t, o in zip(targets, sources):
        t.assign(tau * o + (1 - tau) * t)


for x, y in dataset:
    loss = train_step(x, y)
    soft_update(target.variables, online.variables, 0.005)
""", _TARGET_STEP.replace("    return loss", """\
    soft_update(target.variables, online.variables, 0.005)
    return loss""") + """\
def soft_update(targets, sources, tau):
    for t, o in zip(targets, sources):
        t.assign(tau * o + (1 - tau) * t)


for x, y in dataset:
    loss = train_step(x, y)
"""),
        # The rate of the average changes between calls (the step would see it as it was traced), and
        # WGAN clipping under an `if`: left where they are, reported at the update.
        Example(_TARGET_STEP + """\
for step, (x, y) in enumerate(dataset):
    loss = train_step(x, y)
    tau = min(0.1, 1.0 / (step + 1))
    for t, o in zip(target.weights, online.weights):
        t.assign(tau * o + (1 - tau) * t)
    if step % 5 == 0:
        for w in online.trainable_variables:
            w.assign(tf.clip_by_value(w, -0.01, 0.01))
"""),
        # Gradients accumulated by the step, applied by the host every fourth step: reported at the
        # optimizer step.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            optimizer = tf.keras.optimizers.SGD(0.01)
            sums = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]


            @tf.function
            def accumulate(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                for total, grad in zip(sums, tape.gradient(loss, model.trainable_variables)):
                    total.assign_add(grad / 4)
                return loss


            for i, (x, y) in enumerate(dataset):
                accumulate(x, y)
                if i % 4 == 3:
                    optimizer.apply_gradients(zip(sums, model.trainable_variables))
            """,
        ),
        # A learning rate set by the loop, a checkpoint's step counter, a target network copied every 100
        # steps, and synchronised once an epoch in the loop around the one that calls the step: valid
        # host work, not reported.
        Example(_TARGET_STEP + """\
for epoch in range(10):
    for step, (x, y) in enumerate(dataset):
        optimizer.learning_rate.assign(1e-3 * 0.99 ** step)
        loss = train_step(x, y)
        checkpoint.step.assign_add(1)
        if step % 100 == 0:
            target.set_weights(online.get_weights())
    target.set_weights(online.get_weights())
""", reported=False),
        # An update a comment keeps out of the port: left where it is, not copied into the step.
        Example(_TARGET_STEP + """\
for x, y in dataset:
    loss = train_step(x, y)
    for t, o in zip(target.weights, online.weights):  # ipu-port: ignore[IPU167]
        t.assign(0.005 * o + 0.995 * t)
""", reported=False),
        # Gradients a helper returns, summed in a Python list and applied every fourth step: the inline
        # step IPU111 reports as a whole (it reads the sum of an earlier pass), optimizer step included.
        Example("""\
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.01)


@tf.function
def gradients(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    return loss, tape.gradient(loss, model.trainable_variables)


summed = None
for i, (x, y) in enumerate(dataset):
    loss, grads = gradients(x, y)
    summed = grads if summed is None else [a + g for a, g in zip(summed, grads)]
    if i % 4 == 3:
        optimizer.apply_gradients(zip(summed, model.trainable_variables))
        summed = None
""", reported=False),
    )

    def run(self, ctx) -> None:
        if tensorflow_alias(ctx) is None:
            return  # TensorFlow 1.x run eagerly (`tf` being `compat.v1`) has no TF2 steps to compile
        averages = _moving_averages(ctx)
        loops = _compiled_loops(ctx)
        # What moves into a step, and the loops of other steps (an inline step's loop in the loop of a
        # step called once a task), are not this loop's host work.
        elsewhere = set().union(*(moved for _, _, moved in loops)) | {id(loop) for loop, _, _ in loops}
        elsewhere |= self._move_into_steps(ctx)
        for loop, steps, _ in loops:
            for call in _host_updates(ctx, loop, averages, elsewhere - {id(loop)}):
                every_step = _every_pass(ctx, call, loop)
                if not every_step and call.func.attr.value == "set_weights":
                    continue  # weights copied every N steps (a hard target update): a transfer, no eager math
                ctx.report(self.code, call, _message(ctx, call, steps, every_step), fixed=False)

    def _move_into_steps(self, ctx) -> Set[int]:
        """Move the updates that directly follow a compiled step's call to the end of the step, before
        its ``return``, where they run once per step on the IPU; the ids of the statements moved."""
        moved: Set[int] = set()
        for plan in loop_plans(ctx):
            if plan.problem is not None:
                continue
            statements = movable_updates(ctx, plan.step)
            if not statements:
                continue
            if not ctx.move_before(final_return(plan.step.function), statements, list):
                if plan.mode == "device":  # the on-device loop replaced the loop on the promise of this move
                    ctx.report(self.code, statements[0], "this update could not be moved to the end of "
                               f"`{plan.step.function.name.value}` and the on-device loop replaced the loop that "
                               "ran it: put it back at the end of the step", fixed=False, severity=ERROR)
                continue
            moved.update(id(statement) for statement in statements)
            what = ", ".join(f"`{_shortened(code_of(ctx, call.func))}(...)`" for statement in statements
                             for call in _update_calls(ctx, statement))
            ctx.report(self.code, statements[0], f"{what} moved from the loop to the end of "
                       f"`{plan.step.function.name.value}`, after its optimizer step: it updates the variables "
                       f"on the IPU once per step, in the compiled step", fixed=True)
        return moved


def _update_calls(ctx, statement: cst.BaseStatement) -> List[cst.Call]:
    return [node for node in walk(statement) if isinstance(node, cst.Call) and (
        isinstance(node.func, cst.Attribute) and node.func.attr.value in _ASSIGNS or updating_helper(ctx, node))]


def _compiled_loops(ctx) -> List[Tuple[cst.CSTNode, str, Set[int]]]:
    """Each loop whose step IPU111 compiles, once: the loop, its steps as the report names them, and
    the statements that move into a step (a step written inline) or that IPU111 reports (an inline
    step it leaves for a person). A loop left for a person is reported as a whole, by IPU111."""
    found: Dict[int, Tuple[cst.CSTNode, List[str], Set[int]]] = {}
    for plan in loop_plans(ctx):
        if plan.problem is None:
            _, names, _ = found.setdefault(id(plan.step.loop), (plan.step.loop, [], set()))
            name = f"`{plan.step.function.name.value}`"
            if name not in names:
                names.append(name)  # a GAN loop calls two steps
    reported: Set[int] = set()  # an inline step IPU111 leaves for a person, with its optimizer step
    for step in inline_steps(ctx):
        if step.problem is not None:
            reported.update(id(statement) for statement in step.statements)
            continue
        _, names, moved = found.setdefault(id(step.loop), (step.loop, [], set()))
        names.append("the step written inline in this loop")
        moved.update(id(statement) for statement in step.statements)
    return [(loop, " and ".join(names), moved | reported) for loop, names, moved in found.values()]


def _moving_averages(ctx) -> Set[str]:
    """Names bound to a ``tf.train.ExponentialMovingAverage``, whose ``apply`` updates its shadow variables."""
    names: Set[str] = set()
    for call, _ in ctx.calls_to(_EMA):
        parent = ctx.parent(call)
        if isinstance(parent, cst.Assign):
            names.update(target.target.value for target in parent.targets if isinstance(target.target, cst.Name))
    return names


def _host_updates(ctx, loop: cst.CSTNode, averages: Set[str], elsewhere: Set[int]) -> List[cst.Call]:
    """The calls of the loop's body (not of functions it defines, nor of the ``elsewhere`` nodes)
    that update variables."""
    found: List[cst.Call] = []
    for statement in loop.body.body:
        for node in walk(statement, skip=_DEFINITIONS):
            # A plain function of the file that only updates variables (`soft_update(...)`) runs them on the host too.
            if (isinstance(node, cst.Call) and (_updates_variables(node.func, averages) or updating_helper(ctx, node))
                    and not _scalar_or_value(ctx, node) and not _under(ctx, node, loop, elsewhere)):
                found.append(node)
    return found


def _scalar_or_value(ctx, call: cst.Call) -> bool:
    """A counter the host steps (``ckpt.step.assign_add(1)``: one scalar, valid between executions), or
    an ``assign`` whose answer the code keeps (``df = df.assign(...)``: a pandas frame, no variable)."""
    numbers = (cst.Integer, cst.Float)
    counter = len(call.args) == 1 and isinstance(call.args[0].value, numbers)
    return counter or isinstance(ctx.parent(call), (cst.Assign, cst.AnnAssign, cst.AugAssign))


def _under(ctx, node: cst.CSTNode, loop: cst.CSTNode, nodes: Set[int]) -> bool:
    """Whether one of ``nodes`` holds ``node``, below ``loop``."""
    for ancestor in ctx.ancestors(node):
        if ancestor is loop:
            return False
        if id(ancestor) in nodes:
            return True
    return False


def _updates_variables(func: cst.BaseExpression, averages: Set[str]) -> bool:
    if not isinstance(func, cst.Attribute):
        return False
    method = func.attr.value
    if method in _ASSIGNS:
        return not (isinstance(func.value, cst.Attribute) and func.value.attr.value in HOST_SCALARS)
    if method == "apply_gradients":
        return True
    return method == "apply" and isinstance(func.value, cst.Name) and func.value.value in averages


def _every_pass(ctx, call: cst.Call, loop: cst.CSTNode) -> bool:
    """Whether the call runs on each pass of the loop's body (under no `if`), as the step does."""
    for ancestor in ctx.ancestors(call):
        if ancestor is loop:
            return True
        if isinstance(ancestor, (cst.If, cst.Try, cst.While)):
            return False
    return True


def _message(ctx, call: cst.Call, steps: str, every_step: bool) -> str:
    what = _shortened(code_of(ctx, call.func))
    optimizer = isinstance(call.func, cst.Attribute) and call.func.attr.value == "apply_gradients"
    done = ("is an optimizer step the loop takes on the host" if optimizer
            else "updates variables on the host")
    # Under an `if` (every N steps) the update cannot join the step, which runs on every pass.
    where = ("move it to the end of the step (after its optimizer step), or " if every_step else "")
    return (f"`{what}(...)` {done}, between the compiled calls of {steps}: it runs eagerly, op by op, on the "
            f"variables the IPU holds, outside the compiled step; {where}run it in a "
            f"`@tf.function(jit_compile=True)` function through `strategy.run`, given as arguments the values "
            f"that change between calls")


def _shortened(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


RULE = HostVariableUpdates()
