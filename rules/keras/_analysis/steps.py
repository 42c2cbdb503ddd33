"""Custom training loops as a script has them: functions that open a ``tf.GradientTape`` (the
steps) and the ``for`` loops that call them. ``porter.rules.keras._analysis.custom_loop`` plans their
rewrite (IPU111); ``porter.rules.keras._analysis.model_plan`` asks which statements of a block the
strategy scope must also cover when they are rewritten: the loops, and the optimizers and metrics
they use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Set

import libcst as cst

from porter.context import FileContext, SharedKey, walk

TAPES = ("tensorflow.GradientTape", "tensorflow.autodiff.GradientTape")
IN_SCOPE_PREFIXES = ("keras.optimizers.", "keras.metrics.")

_STEP_FUNCTIONS: SharedKey[Dict[str, cst.FunctionDef]] = SharedKey("keras-step-functions")


def active(ctx: FileContext) -> bool:
    """Custom loops are rewritten when a steps-per-execution value is asked for."""
    return ctx.config.steps_per_execution is not None


@dataclass
class StepCall:
    function: cst.FunctionDef
    call: cst.Call
    statement: cst.BaseStatement  # the statement of the loop body that holds the call
    loop: cst.For


def step_functions(ctx: FileContext) -> Dict[str, cst.FunctionDef]:
    """Functions of the file (not methods) that open a ``tf.GradientTape``."""
    def find() -> Dict[str, cst.FunctionDef]:
        found: Dict[str, cst.FunctionDef] = {}
        for call, _ in ctx.calls_to(*TAPES):
            function = ctx.enclosing_function(call)
            if function is None or ctx.enclosing(function, cst.ClassDef) is not None:
                continue
            found.setdefault(function.name.value, function)
        return found

    return ctx.shared(_STEP_FUNCTIONS, find)


def step_calls(ctx: FileContext) -> List[StepCall]:
    """Calls of a step function directly in the body of a ``for`` loop."""
    functions = step_functions(ctx)
    found = []
    if not functions:
        return found
    for call in ctx.nodes(cst.Call):
        if not (isinstance(call.func, cst.Name) and call.func.value in functions):
            continue
        if ctx.qualified_name(call.func) is not None:
            continue
        statement = ctx.statement_of(call)
        block = ctx.parent(statement) if statement is not None else None
        loop = ctx.parent(block) if isinstance(block, cst.IndentedBlock) else None
        if isinstance(loop, cst.For) and loop.body is block:
            found.append(StepCall(functions[call.func.value], call, statement, loop))
    return found


def scope_statements(ctx: FileContext, block) -> List[cst.BaseStatement]:
    """Statements of ``block`` that the strategy scope must also cover when loops are rewritten:
    loops calling a step function, and optimizer/metric constructions."""
    if not active(ctx) or not step_functions(ctx):
        return []
    loops: Set[int] = {id(step.loop) for step in step_calls(ctx)}
    found = []
    for statement in block.body:
        for node in walk(statement):
            if id(node) in loops:
                found.append(statement)
                break
            if isinstance(node, cst.Call):
                name = ctx.keras_name(node.func) or ""
                if name.startswith(IN_SCOPE_PREFIXES) and isinstance(statement, cst.SimpleStatementLine):
                    found.append(statement)
                    break
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                break
    return found
