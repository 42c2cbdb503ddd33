import libcst as cst

from porter import cstutil, scopes
from porter.cstutil import argument, expr_call, method_of, name_of, single_small
from porter.rule import FIX, TORCH, Example, Rule
from porter.rules.torch._analysis.loop import plan, scheduler_names
from porter.rules.torch._analysis.speed import loader_names
from porter.rules.torch._analysis.util import asked_device_iterations
from porter.context import code_of, walk

_BEFORE = '''import torch
import poptorch

optimizer = poptorch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
training_model = poptorch.trainingModel(model, options=opts, optimizer=optimizer)
for epoch in range(10):
    for x, y in loader:
        out, loss = training_model(x, y)
    scheduler.step()
    if epoch == 5:
        for group in optimizer.param_groups:
            group["lr"] = 0.01
'''
_AFTER = _BEFORE.replace(
    "    scheduler.step()\n", "    scheduler.step()\n    training_model.setOptimizer(optimizer)\n"
).replace('            group["lr"] = 0.01\n', '            group["lr"] = 0.01\n        training_model.setOptimizer(optimizer)\n')

_PER_BATCH = '''import torch
import poptorch

optimizer = poptorch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=100)
training_model = poptorch.trainingModel(model, options=opts, optimizer=optimizer)
for epoch in range(10):
    for x, y in loader:
        out, loss = training_model(x, y)
        scheduler.step()
'''


class SetOptimizer(Rule):
    code = "IPU308"
    name = "set-optimizer"
    kind = FIX
    frameworks = frozenset({TORCH})
    summary = "Call `training_model.setOptimizer(optimizer)` after every learning-rate change."
    rationale = (
        "The optimizer runs inside the compiled training program: a change made to the Python optimizer "
        "(`scheduler.step()`, `param_group[\"lr\"] = ...`) reaches the IPU only through "
        "`poptorch_model.setOptimizer(optimizer)`, as Graphcore's applications do (PopTorch User Guide, "
        "\"Optimizers\"). With `--device-iterations K` one call runs K optimizer steps at one learning "
        "rate: a scheduler stepped after every batch, in the loop of the training step, is reported, since its "
        "schedule now advances once per K batches (unless its step counts come from `len(...)` of a loader, "
        "which counts the calls) (PopTorch User Guide, \"Efficient data batching\")."
    )
    examples = (
        Example(_BEFORE, _AFTER),
        # An optimizer rebuilt in the loop reaches the training model created before it.
        Example(
            """\
            import torch
            import poptorch

            optimizer = poptorch.optim.AdamW(model.parameters(), lr=0.01)
            training_model = poptorch.trainingModel(model, options=opts, optimizer=optimizer)
            for epoch in range(10):
                for x, y in loader:
                    out, loss = training_model(x, y)
                if epoch == 5:
                    optimizer = poptorch.optim.AdamW(model.parameters(), lr=0.001)
            """,
            """\
            import torch
            import poptorch

            optimizer = poptorch.optim.AdamW(model.parameters(), lr=0.01)
            training_model = poptorch.trainingModel(model, options=opts, optimizer=optimizer)
            for epoch in range(10):
                for x, y in loader:
                    out, loss = training_model(x, y)
                if epoch == 5:
                    optimizer = poptorch.optim.AdamW(model.parameters(), lr=0.001)
                    training_model.setOptimizer(optimizer)
            """,
        ),
        Example(_AFTER, reported=False),
        # A scheduler stepped per batch, with K batches per call: reported, the schedule runs K times slower.
        Example(_PER_BATCH, _PER_BATCH.replace("        scheduler.step()\n",
                                               "        scheduler.step()\n        training_model.setOptimizer(optimizer)\n"),
                options={"device_iterations": 4}),
        # ... but not when it counts the steps of the loader, which counts the calls.
        Example(_PER_BATCH.replace("T_max=100", "T_max=10 * len(loader)").replace(
            "        scheduler.step()\n", "        scheduler.step()\n        training_model.setOptimizer(optimizer)\n"),
            reported=False, options={"device_iterations": 4}),
        # ... while a count of batches from the dataset's length does not: reported.
        Example(_PER_BATCH.replace("T_max=100", "T_max=10 * (len(train_set) // 32)"),
                _PER_BATCH.replace("T_max=100", "T_max=10 * (len(train_set) // 32)").replace(
                    "        scheduler.step()\n", "        scheduler.step()\n        training_model.setOptimizer(optimizer)\n"),
                options={"device_iterations": 4}),
        # The scheduler reaches the training function as a parameter, as the transfer-learning
        # tutorial's `train_model(model, criterion, optimizer, scheduler)` takes it (once IPU305
        # ports the step, `training_model.setOptimizer(optimizer)` follows `scheduler.step()`).
        Example(
            """\
            import torch


            def train_model(model, criterion, optimizer, scheduler, epochs):
                for epoch in range(epochs):
                    for images, labels in loader:
                        optimizer.zero_grad()
                        logits = model(images)
                        loss = criterion(logits, labels)
                        loss.backward()
                        optimizer.step()
                    scheduler.step()


            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            decay = torch.optim.lr_scheduler.StepLR(optimizer, step_size=7)
            train_model(model, criterion, optimizer, decay, 25)
            """,
            reported=True,
        ),
    )

    def run(self, ctx) -> None:
        p = plan(ctx)
        existing = {}
        for name, call in p.existing_training:
            optimizer = argument(call, "optimizer", 2)
            if optimizer is not None:
                existing.setdefault(id(scopes.owner(ctx, call)), (name, code_of(ctx, optimizer.value)))
        schedulers = scheduler_names(ctx)
        optimizers = {step.optimizer for step in p.rewrites} | {code for _, code in existing.values()}
        for statement in ctx.nodes(cst.SimpleStatementLine):
            rebuilt = self._rebuilt_optimizer(ctx, statement, optimizers)
            if rebuilt is not None:
                self._after(ctx, p, existing, statement, rebuilt, f"`{rebuilt.value}` is rebuilt")
                continue
            call = expr_call(statement)
            scheduler = name_of(method_of(call, "step"))
            if scheduler in schedulers:
                optimizer = argument(schedulers[scheduler], "optimizer", 0)
                self._after(ctx, p, existing, statement, optimizer.value if optimizer else None,
                            f"`{scheduler}.step()`")
                self._report_per_batch_schedule(ctx, p, statement, scheduler, schedulers[scheduler])
            elif scheduler is not None and _passed_scheduler(ctx, statement, scheduler, schedulers):
                # its optimizer is named in the caller: the one visible here is the training model's
                self._after(ctx, p, existing, statement, None, f"`{scheduler}.step()`")
            elif self._sets_lr(statement):
                target = self._target(statement).value
                loop = ctx.enclosing(statement, cst.For)
                if self._in_group_loop(ctx, statement) and name_of(loop.target) == name_of(target):
                    self._after(ctx, p, existing, loop, loop.iter.value, "the learning-rate change")
                elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Attribute) \
                        and target.value.attr.value == "param_groups":
                    self._after(ctx, p, existing, statement, target.value.value, "the learning-rate change")

    def _report_per_batch_schedule(self, ctx, p, statement, scheduler, creation) -> None:
        """With K device iterations one call of the training model runs K optimizer steps at the
        learning rate it holds (PopTorch User Guide, "Efficient data batching"): a scheduler stepped
        in the loop of the training step, once per batch, now steps once per K batches. A schedule
        sized by `len(...)` of a loader (one the file makes, or the one the loop runs over) follows
        it: `poptorch.DataLoader` counts the calls. `len(dataset) // batch_size` does not."""
        iterations = asked_device_iterations(ctx)
        loop = next((a for a in ctx.ancestors(statement) if isinstance(a, (cst.For, cst.While))), None)
        if iterations < 2 or loop is None:
            return
        loaders = loader_names(ctx) | ({name_of(loop.iter)} if isinstance(loop, cst.For) else set())
        if any(isinstance(node, cst.Call) and name_of(node.func) == "len" and len(node.args) == 1
               and name_of(node.args[0].value) in loaders for node in walk(creation)):
            return
        # the training step the port writes in this loop, or a training model the script calls in it
        training = next((step.name for step in p.rewrites
                         if any(ancestor is loop for ancestor in ctx.ancestors(step.backward))), None) \
            or next((name for name, _ in p.existing_training
                     if any(isinstance(node, cst.Call) and name_of(node.func) == name for node in walk(loop.body))),
                    None)
        if training is None:
            return
        ctx.report(self.code, statement, f"`{scheduler}.step()` follows each batch in the loop of the training "
                   f"step, but `{training}` runs {iterations} batches per call (`deviceIterations({iterations})`) "
                   f"at one learning rate: the schedule now advances once per {iterations} batches, {iterations} "
                   f"times slower; divide the scheduler's step counts (`step_size`, `T_max`, `total_steps`, "
                   f"warm-up steps) by {iterations}, or port without `--device-iterations`", fixed=False)

    @staticmethod
    def _rebuilt_optimizer(ctx, statement, optimizers):
        """The name, when ``statement`` builds a new optimizer for a training model in a loop."""
        small = single_small(statement)
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Call)):
            return None
        target = small.targets[0].target
        if not isinstance(target, cst.Name) or target.value not in optimizers:
            return None
        return target if ctx.enclosing(statement, cst.For) is not None or ctx.enclosing(statement, cst.While) else None

    @staticmethod
    def _target(statement):
        small = single_small(statement)
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            return small.targets[0].target
        if isinstance(small, cst.AugAssign):
            return small.target
        return None

    def _sets_lr(self, statement) -> bool:
        target = self._target(statement)
        if not isinstance(target, cst.Subscript) or len(target.slice) != 1:
            return False
        index = target.slice[0].slice
        return isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString) \
            and index.value.evaluated_value == "lr"

    @staticmethod
    def _in_group_loop(ctx, statement) -> bool:
        loop = ctx.enclosing(statement, cst.For)
        return loop is not None and isinstance(loop.iter, cst.Attribute) and loop.iter.attr.value == "param_groups"

    def _after(self, ctx, p, existing, statement, optimizer, what) -> None:
        if statement is None or ctx.block_of(statement) is None:
            return
        siblings = list(ctx.siblings(statement))
        following = siblings[siblings.index(statement) + 1:]
        if following and method_of(expr_call(following[0]), "setOptimizer") is not None:
            return
        owner = scopes.owner(ctx, statement)
        training = p.training_in(owner) or existing.get(id(owner))
        if training is None:
            if any(not step.rewritten for step in p.steps):
                ctx.report(self.code, statement, f"after porting the training step, call "
                           f"`training_model.setOptimizer(optimizer)` after {what}", fixed=False)
            return
        name, default = training
        optimizer_code = code_of(ctx, optimizer) if optimizer is not None else default
        ctx.insert_after(statement, [cstutil.statement(f"{name}.setOptimizer({optimizer_code})")])
        ctx.report(self.code, statement, f"`{name}.setOptimizer({optimizer_code})` after {what}: the IPU gets the "
                   "new learning rate", fixed=True)


def _passed_scheduler(ctx, statement, name: str, schedulers) -> bool:
    """``name`` is a parameter of the module function around ``statement`` that every call of
    the function gives a learning-rate scheduler (``train_model(model, optimizer, scheduler)``)."""
    function = ctx.enclosing_function(statement)
    if not scopes.is_module_function(ctx, function):
        return False
    names = [param.name.value for param in function.params.params]
    calls = scopes.local_calls(ctx, function)
    if name not in names or not calls:
        return False
    given = [argument(call, name, names.index(name)) for call in calls]
    return all(arg is not None and name_of(arg.value) in schedulers for arg in given)


RULE = SetOptimizer()
