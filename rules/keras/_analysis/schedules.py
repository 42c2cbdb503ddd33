"""NumPy arrays a Keras class keeps on its instance (a diffusion model's noise schedule,
``self.alphas_bar = np.cumprod(1.0 - self.betas)``) and hands to TensorFlow in the code Keras
compiles (``tf.gather(self.alphas_bar, t)`` in ``train_step``): TensorFlow makes a constant of the
array's own dtype there, float64 for NumPy's default."""
from typing import Iterator, List, NamedTuple, Optional

import libcst as cst

from porter.context import FileContext, bound_names, walk
from porter.rules._tf.arrays import FLOAT64, ArrayData
from porter.rules._tf.tfdata import float64_data
from porter.rules.keras._analysis.losses import is_self
from porter.rules.keras._analysis.util import keras_subclasses, reached_methods, self_attribute_values
from porter.scopes import bindings_of, called_method_returns, instance_class

# The methods Keras runs traced, in a compiled function, and (through `self`) what they call.
_TRACED_METHODS = ("train_step", "test_step", "predict_step", "call")
# How many attributes deep an array made of others (`self.alphas_bar` of `self.betas`) is followed.
_DEPTH = 3


class ArrayRead(NamedTuple):
    attribute: cst.Attribute  # `self.alphas_bar`, an argument of a TensorFlow call
    call: cst.Call  # `tf.gather(self.alphas_bar, t)`
    method: cst.FunctionDef  # the traced method that holds it
    data: ArrayData  # what the attribute holds: float64 NumPy data


def float64_arrays_in_steps(ctx: FileContext) -> Iterator[ArrayRead]:
    """Each attribute of a Keras class's instance that every assignment in the class makes a
    float64 NumPy array, given first to a TensorFlow call in a method Keras traces."""
    for owner in keras_subclasses(ctx).values():
        for method in reached_methods(owner, _TRACED_METHODS).values():
            for call in walk(method.body):
                if not isinstance(call, cst.Call) or not (ctx.qualified_name(call.func) or "").startswith(
                        "tensorflow."):
                    continue
                # The first argument: TensorFlow converts it with its own dtype (`tf.gather(params, ...)`),
                # where it converts the others to the first one's (`tf.matmul(x, self.mask)`).
                value = call.args[0].value if call.args and call.args[0].keyword is None else None
                if isinstance(value, cst.Attribute) and is_self(value.value):
                    data = _float64_attribute(ctx, value, _DEPTH)
                    if data is not None:
                        yield ArrayRead(value, call, method, data)


def numpy_float64(ctx: FileContext, value: cst.BaseExpression) -> Optional[ArrayData]:
    """What ``value`` holds when it is float64 host data, by the array flow
    (``float64_data``), or NumPy code of an attribute that holds a float64 NumPy array
    (``np.sqrt(self.alphas_bar)`` in the class that makes ``self.alphas_bar``)."""
    data = float64_data(ctx, value)
    return data if data is not None else _float64_value(ctx, value, _DEPTH)


def float64_instance_array(ctx: FileContext, expr: cst.BaseExpression) -> Optional[ArrayData]:
    """What ``expr`` holds, read outside the class, when it is a float64 NumPy array an instance of
    a class of the file keeps (a replay buffer's ``self.states = np.zeros((capacity, 4))``): the
    attribute (``buffer.states``), a slice of it (``buffer.states[indices]``), or the variable a
    method of the class returns it to (``states, actions = buffer.get()``, each ``return`` giving
    ``self.states`` there); else None."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    if isinstance(expr, cst.Attribute):
        owner_class = instance_class(ctx, expr.value)
        kept = _kept_attribute(owner_class, expr.attr.value) if owner_class is not None else None
        return _float64_attribute(ctx, kept, _DEPTH) if kept is not None else None
    bindings = bindings_of(ctx, expr) if isinstance(expr, cst.Name) else []
    if len(bindings) != 1 or not isinstance(bindings[0][0], cst.SimpleStatementLine):
        return None
    assign = next((small for small in bindings[0][0].body if isinstance(small, cst.Assign) and len(small.targets) == 1
                   and expr.value in bound_names(small.targets[0].target)), None)
    if assign is None:
        return None
    _, returned = called_method_returns(ctx, assign.value)
    found = [_returned_attribute(ctx, value, assign.targets[0].target, expr.value) for value in returned]
    return found[0] if found and all(data is not None for data in found) else None


def _kept_attribute(owner_class: cst.ClassDef, name: str) -> Optional[cst.Attribute]:
    """A ``self.<name>`` the class assigns (the node its other assignments are found from)."""
    return next((node for node in walk(owner_class) if isinstance(node, cst.Attribute) and is_self(node.value)
                 and node.attr.value == name), None)


def _returned_attribute(ctx: FileContext, value: cst.BaseExpression, target: cst.BaseExpression,
                        name: str) -> Optional[ArrayData]:
    """What the variable ``name``, bound by ``target`` (a name, or a tuple unpacked) to what a
    ``return`` gives (``value``), holds when that is a float64 array kept on ``self``."""
    if isinstance(target, (cst.Tuple, cst.List)):
        names: List[Optional[str]] = [element.value.value if isinstance(element.value, cst.Name) else None
                                      for element in target.elements]
        if not isinstance(value, (cst.Tuple, cst.List)) or len(value.elements) != len(names) or name not in names:
            return None
        value = value.elements[names.index(name)].value
    elif not (isinstance(target, cst.Name) and target.value == name):
        return None
    if not (isinstance(value, cst.Attribute) and is_self(value.value)):
        return None
    return _float64_attribute(ctx, value, _DEPTH)


def _float64_attribute(ctx: FileContext, attribute: cst.Attribute, depth: int) -> Optional[ArrayData]:
    """What ``self.<attr>`` holds when every value the class assigns it is float64 NumPy data."""
    values = self_attribute_values(ctx, attribute)
    found = [_float64_value(ctx, value, depth) for value in values]
    return found[0] if found and all(data is not None for data in found) else None


def _float64_value(ctx: FileContext, value: cst.BaseExpression, depth: int) -> Optional[ArrayData]:
    """``value`` as float64 NumPy data: what the array flow knows (``np.linspace(...)``, a local
    variable), or NumPy code of another such attribute (``np.cumprod(1.0 - self.betas)``): NumPy
    promotes to float64 whatever the other operands, when no TensorFlow call is among them."""
    data = float64_data(ctx, value)
    if data is not None:
        return data if data.kind == FLOAT64 else None
    if isinstance(value, cst.Attribute) and is_self(value.value) and depth > 0:
        return _float64_attribute(ctx, value, depth - 1)
    if depth == 0 or not _numpy_code(ctx, value):
        return None
    for node in walk(value):
        if isinstance(node, cst.Attribute) and is_self(node.value):
            data = _float64_attribute(ctx, node, depth - 1)
            if data is not None:
                return data
    return None


def _numpy_code(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """Arithmetic or a NumPy call at the top, and no call of anything but NumPy in it."""
    if not isinstance(value, (cst.BinaryOperation, cst.UnaryOperation, cst.Call)):
        return False
    calls = [node for node in walk(value) if isinstance(node, cst.Call)]
    return all((ctx.qualified_name(call.func) or "").startswith("numpy.") for call in calls)
