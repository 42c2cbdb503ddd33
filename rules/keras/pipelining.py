from typing import List, Optional, Tuple

import libcst as cst

from porter import throughput
from porter.context import bound_names, code_of
from porter.cstutil import argument, single_small, statement
from porter.rules.keras._analysis.fit import (MODEL_LOADERS, TrainingCall, int_value, keras_or_legacy,
                                              loaded_binding, loaded_source, reaching_bindings, training_calls)
from porter.rules.keras._analysis.model_plan import gpu_number, keras_extensions_off, library_network, model_plan
from porter.rules.keras._analysis.util import keras_subclasses
from porter.rules.common._analysis.pipeline import balanced, input_shape, layer_parameters, stage_totals
from porter.rule import FIX, KERAS, NOTE, Example, Rule
from porter.rules.keras.ipu_import import IpuImport
from porter.scopes import loads, local_calls, parameter_names, single_value

_SEQUENTIAL = ("keras.Sequential", "keras.models.Sequential")
_FUNCTIONAL = ("keras.Model", "keras.models.Model")
_INPUTS = ("keras.Input", "keras.layers.Input", "keras.layers.InputLayer")
_OPTIONS = ("set_pipelining_options", "set_gradient_accumulation_options")

_SEQUENTIAL_BEFORE = '''import tensorflow as tf


def main():
    model = tf.keras.Sequential([
        tf.keras.layers.Flatten(input_shape=(28, 28)),
        tf.keras.layers.Dense(256, activation="relu"),
        tf.keras.layers.Dense(128, activation="relu"),
        tf.keras.layers.Dense(10),
    ])
    model.compile(optimizer="adam", loss="mse")
    model.fit(x, y, batch_size=32)
'''
_SEQUENTIAL_AFTER = _SEQUENTIAL_BEFORE.replace('''    model.compile(''', '''    model.set_pipeline_stage_assignment([0, 0, 1, 1])
    model.set_pipelining_options(gradient_accumulation_steps_per_replica=8,
                                 pipeline_schedule=ipu.ops.pipelining_ops.PipelineSchedule.Grouped)
    model.compile(''').replace("import tensorflow as tf\n", "import tensorflow as tf\nfrom tensorflow.python import ipu\n")

_FUNCTIONAL_BEFORE = '''from tensorflow import keras


def build(classes):
    inputs = keras.Input(shape=(32,))
    x = keras.layers.Dense(64, activation="relu")(inputs)
    x = keras.layers.Dropout(0.2)(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(classes)(x)
    return keras.Model(inputs, outputs)


model = build(10)
model.compile(optimizer="sgd", loss="mse")
'''
_FUNCTIONAL_AFTER = '''from tensorflow import keras
from tensorflow.python import ipu


def build(classes):
    inputs = keras.Input(shape=(32,))
    with keras.ipu.PipelineStage(0):
        x = keras.layers.Dense(64, activation="relu")(inputs)
        x = keras.layers.Dropout(0.2)(x)
    with keras.ipu.PipelineStage(1):
        x = keras.layers.Dense(64, activation="relu")(x)
        outputs = keras.layers.Dense(classes)(x)
    return keras.Model(inputs, outputs)


model = build(10)
model.set_pipelining_options(gradient_accumulation_steps_per_replica=4,
                             pipeline_schedule=ipu.ops.pipelining_ops.PipelineSchedule.Interleaved)
model.compile(optimizer="sgd", loss="mse")
'''

# TensorFlow Addons optimizers with decoupled weight decay: their class overrides `minimize`.
_MINIMIZE_OVERRIDES = ("tensorflow_addons.optimizers.AdamW", "tensorflow_addons.optimizers.SGDW")
_WEIGHT_DECAY_EXTENDER = "tensorflow_addons.optimizers.extend_with_decoupled_weight_decay"


def _given(entry: TrainingCall) -> bool:
    """The model ``entry`` runs is a parameter of its function: made by the caller."""
    return isinstance(entry.owner, cst.FunctionDef) and entry.model in parameter_names(entry.owner)


# Model methods whose override the IPU Keras extensions refuse on a pipelined model only (Targeting
# the IPU from TensorFlow 2, "Keras with IPUs"); `train_step` they refuse on any model (IPU103).
_PIPELINED_HOOKS = ("test_step", "predict_step")


def _pipelined_refusals(ctx, construction: Optional[cst.Call]) -> List[str]:
    """The methods of ``_PIPELINED_HOOKS`` that the class of the file ``construction`` makes a
    model of overrides, itself or through a base class of the file."""
    classes = keras_subclasses(ctx)
    pending = [construction.func.value] if construction is not None and isinstance(construction.func, cst.Name) else []
    found: List[str] = []
    seen = set()
    while pending:
        name = pending.pop()
        cls = classes.get(name)
        if cls is None or name in seen:
            continue
        seen.add(name)
        found += [statement.name.value for statement in cls.body.body if isinstance(statement, cst.FunctionDef)
                  and statement.name.value in _PIPELINED_HOOKS and statement.name.value not in found]
        pending += [base.value.value for base in cls.bases if isinstance(base.value, cst.Name)]
    return found


def _minimize_override(ctx, entry: TrainingCall) -> Optional[cst.Call]:
    """The optimizer ``compile`` (``entry``) is given, made in the call or in a variable just before,
    when its class overrides ``minimize``: ``tfa.optimizers.AdamW(...)``, or a class made by
    ``extend_with_decoupled_weight_decay`` (``AdamWD = extend_with_decoupled_weight_decay(Adam)``)."""
    given = argument(entry.call, "optimizer", 0)
    made = single_value(ctx, given.value) if given is not None else None
    if not isinstance(made, cst.Call):
        return None
    maker = single_value(ctx, made.func)
    if isinstance(maker, cst.Call) and ctx.qualified_name(maker.func) == _WEIGHT_DECAY_EXTENDER:
        return made
    return made if ctx.qualified_name(maker) in _MINIMIZE_OVERRIDES else None


def _unpacked_position(assign: cst.Assign, name: str) -> Optional[int]:
    """The place of ``name`` in the tuple ``assign`` unpacks (1 for ``base, model = ...``), else None."""
    target = assign.targets[0].target if len(assign.targets) == 1 else None
    if not isinstance(target, (cst.Tuple, cst.List)):
        return None
    names = [element.value.value if isinstance(element.value, cst.Name) else None for element in target.elements]
    return names.index(name) if name in names else None


def _on_tensors(value: cst.BaseExpression, tensors: set) -> bool:
    """``value`` makes a layer of the model from its tensors: a call (``base(x)``,
    ``preprocess_input(x)``), arithmetic (``x / 255.0``) or a slice (``x[:, 0]``) of them."""
    if isinstance(value, cst.Subscript):
        return isinstance(value.value, cst.Name) and value.value.value in tensors
    return isinstance(value, (cst.Call, cst.BinaryOperation, cst.UnaryOperation)) and any(
        name.value in tensors for name in loads(value))


def _borrowed_input(construction: cst.Call) -> Optional[cst.BaseExpression]:
    """The inputs of ``keras.Model(inputs=base.input, outputs=...)`` when they are another model's
    (``base.input``, ``base.inputs``), else None."""
    given = argument(construction, "inputs", 0)
    value = given.value if given is not None else None
    if isinstance(value, cst.Attribute) and value.attr.value in ("input", "inputs"):
        return value
    return None


def _attribute_name(ctx, name: cst.Name) -> bool:
    """``name`` is the attribute of a dotted name (the ``keras`` of ``tf.keras``), not a variable."""
    parent = ctx.parent(name)
    return isinstance(parent, cst.Attribute) and parent.attr is name


def _keras_kind(ctx, call: cst.CSTNode) -> Optional[str]:
    if not isinstance(call, cst.Call):
        return None
    return keras_or_legacy(ctx, call.func)


def _layer_kind(name: Optional[str]) -> Optional[str]:
    if name is not None and name.startswith("keras.layers."):
        return name[len("keras.layers."):]
    return None


class Pipelining(Rule):
    code = "IPU110"
    name = "pipelining"
    kind = FIX
    frameworks = frozenset({KERAS})
    # Stages are not put in a block another rule wraps (the strategy scope of IPU011 and IPU103).
    after = ("IPU011", "IPU103")
    summary = ("`--pipeline-stages S`: split the model into S stages (`set_pipeline_stage_assignment` or "
               "`keras.ipu.PipelineStage`) and set the pipelining options.")
    rationale = (
        "A model too big for one IPU, or one that is faster spread out, is pipelined: its layers form S "
        "stages on S IPUs that work on different batches at once, with gradient accumulation (Graphcore's "
        "Keras tutorial, \"Pipelining\"). A Sequential model gets `set_pipeline_stage_assignment` with one "
        "stage per layer, "
        "contiguous stages balanced by parameter count when the layers and input shape can be read "
        "statically (else by layer count, with a note when a layer is a whole network of a library, a TF "
        "Hub layer or a Keras application, whose stage then holds nearly all the work); a functional model "
        "gets `with keras.ipu.PipelineStage(i):` blocks around its layer calls, and around the calls on its input "
        "before them (a backbone, an augmentation model, a `preprocess_input`, `inputs / 255.0`), or, when its layer calls "
        "are split over S GPUs by `with tf.device(\"/gpu:k\"):` blocks, one stage per GPU, the split the script chose: "
        "a pipelined model needs every layer "
        "in a stage, so a model made from another model's input (`keras.Model(base.input, ...)`), whose layers were "
        "called where that model was built, is reported. A model compiled in a function is followed to the "
        "function that builds it through the only call that gives it; a functional model built at the top level "
        "(a notebook's cells), whose layer calls the strategy scope takes, is reported. Both get "
        "`set_pipelining_options(gradient_accumulation_steps_per_"
        "replica=G, pipeline_schedule=...)` before the first `compile`, as the tutorial does; G is checked "
        "against the schedule (grouped: a multiple of 2 x S, interleaved: of S). `--gradient-accumulation` "
        "without stages gives `set_gradient_accumulation_options`. Models that cannot be split statically "
        "(subclassed, loaded) are reported (with the `test_step`/`predict_step` override their class must lose "
        "first: the extensions refuse it on a pipelined model), and so is a model read with `load_model` and trained without a new "
        "`compile` (a saved model keeps no pipelining or gradient accumulation options: Graphcore's Keras guide, "
        "\"Saving and loading Keras models\"), and so are the models of a port whose strategy runs without the IPU "
        "Keras extensions (a `train_step` override, IPU103), which have no pipelining or gradient accumulation "
        "options. A model compiled with an optimizer that overrides `minimize` (TensorFlow Addons' `AdamW`, "
        "`SGDW`, a class `extend_with_decoupled_weight_decay` makes) gets neither and is reported: Keras on the "
        "IPU rejects such an optimizer with gradient accumulation or pipelining (Targeting the IPU from "
        "TensorFlow 2, \"Keras with IPUs\"). PopTorch models are pipelined by IPU316."
    )
    examples = (
        Example(_SEQUENTIAL_BEFORE, _SEQUENTIAL_AFTER,
                options={"ipus": 2, "pipeline_stages": 2, "gradient_accumulation": 8}),
        Example(_FUNCTIONAL_BEFORE, _FUNCTIONAL_AFTER,
                options={"ipus": 2, "pipeline_stages": 2, "gradient_accumulation": 4,
                         "pipeline_schedule": "interleaved"}),
        # A model split over two GPUs by hand: each GPU's block is a stage (the strategy-scope rule,
        # not run here, removes the `tf.device` scopes).
        Example(
            """\
            import tensorflow as tf
            from tensorflow import keras


            def build():
                inputs = keras.Input(shape=(8,))
                with tf.device("/gpu:0"):
                    x = keras.layers.Dense(16)(inputs)
                    x = keras.layers.Dense(16)(x)
                with tf.device("/gpu:1"):
                    outputs = keras.layers.Dense(1)(x)
                return keras.Model(inputs, outputs)


            model = build()
            model.compile(optimizer="adam", loss="mse")
            """,
            """\
            import tensorflow as tf
            from tensorflow import keras
            from tensorflow.python import ipu


            def build():
                inputs = keras.Input(shape=(8,))
                with tf.device("/gpu:0"):
                    with keras.ipu.PipelineStage(0):
                        x = keras.layers.Dense(16)(inputs)
                        x = keras.layers.Dense(16)(x)
                with tf.device("/gpu:1"):
                    with keras.ipu.PipelineStage(1):
                        outputs = keras.layers.Dense(1)(x)
                return keras.Model(inputs, outputs)


            model = build()
            model.set_pipelining_options(gradient_accumulation_steps_per_replica=4,
                                         pipeline_schedule=ipu.ops.pipelining_ops.PipelineSchedule.Grouped)
            model.compile(optimizer="adam", loss="mse")
            """,
            options={"ipus": 2, "pipeline_stages": 2, "gradient_accumulation": 4},
        ),
        # A frozen backbone called on the input, then a head, in a builder that returns the model and
        # the backbone: the backbone call (and the preprocessing before it) gets a stage too.
        Example(
            """\
            import tensorflow as tf


            def build(classes):
                base = tf.keras.applications.MobileNetV2(include_top=False, weights="imagenet")
                base.trainable = False
                inputs = tf.keras.Input(shape=(160, 160, 3))
                x = tf.keras.applications.mobilenet_v2.preprocess_input(inputs)
                x = base(x, training=False)
                x = tf.keras.layers.GlobalAveragePooling2D()(x)
                outputs = tf.keras.layers.Dense(classes)(x)
                return tf.keras.Model(inputs, outputs), base


            model, base = build(5)
            model.compile(optimizer="adam", loss="mse")
            """,
            """\
            import tensorflow as tf
            from tensorflow import keras
            from tensorflow.python import ipu


            def build(classes):
                base = tf.keras.applications.MobileNetV2(include_top=False, weights="imagenet")
                base.trainable = False
                inputs = tf.keras.Input(shape=(160, 160, 3))
                with keras.ipu.PipelineStage(0):
                    x = tf.keras.applications.mobilenet_v2.preprocess_input(inputs)
                    x = base(x, training=False)
                with keras.ipu.PipelineStage(1):
                    x = tf.keras.layers.GlobalAveragePooling2D()(x)
                    outputs = tf.keras.layers.Dense(classes)(x)
                return tf.keras.Model(inputs, outputs), base


            model, base = build(5)
            model.set_pipelining_options(gradient_accumulation_steps_per_replica=4,
                                         pipeline_schedule=ipu.ops.pipelining_ops.PipelineSchedule.Grouped)
            model.compile(optimizer="adam", loss="mse")
            """,
            options={"ipus": 2, "pipeline_stages": 2, "gradient_accumulation": 4},
        ),
        # The model is reloaded after training under the same name: the compile gets the model built
        # before it, which is split.
        Example(
            """\
            from tensorflow import keras


            def build():
                inputs = keras.Input(shape=(8,))
                x = keras.layers.Dense(16, activation="relu")(inputs)
                outputs = keras.layers.Dense(1)(x)
                return keras.Model(inputs, outputs)


            model = build()
            model.compile(optimizer="adam", loss="mse")
            model.save("best.h5")
            model = keras.models.load_model("best.h5")
            """,
            """\
            from tensorflow import keras
            from tensorflow.python import ipu


            def build():
                inputs = keras.Input(shape=(8,))
                with keras.ipu.PipelineStage(0):
                    x = keras.layers.Dense(16, activation="relu")(inputs)
                with keras.ipu.PipelineStage(1):
                    outputs = keras.layers.Dense(1)(x)
                return keras.Model(inputs, outputs)


            model = build()
            model.set_pipelining_options(gradient_accumulation_steps_per_replica=4,
                                         pipeline_schedule=ipu.ops.pipelining_ops.PipelineSchedule.Grouped)
            model.compile(optimizer="adam", loss="mse")
            model.save("best.h5")
            model = keras.models.load_model("best.h5")
            """,
            options={"ipus": 2, "pipeline_stages": 2, "gradient_accumulation": 4},
        ),
        # A functional model built at the top level, as notebooks do: the strategy scope takes those
        # statements, so the stages are left to a person.
        Example(
            """\
            import tensorflow as tf

            base = tf.keras.applications.MobileNetV2(include_top=False, weights="imagenet")
            inputs = tf.keras.Input(shape=(160, 160, 3))
            x = base(inputs, training=False)
            outputs = tf.keras.layers.Dense(2)(tf.keras.layers.GlobalAveragePooling2D()(x))
            model = tf.keras.Model(inputs, outputs)
            model.compile(optimizer="adam", loss="mse")
            """,
            options={"ipus": 2, "pipeline_stages": 2, "gradient_accumulation": 4},
        ),
        # The model is compiled in a function its only caller gives it to: split where it is built, and
        # its options set where the caller makes it, before any compile of it runs.
        Example(
            """\
            from tensorflow import keras


            def build():
                inputs = keras.Input(shape=(16,))
                x = keras.layers.Dense(32, activation="relu")(inputs)
                outputs = keras.layers.Dense(1)(x)
                return keras.Model(inputs, outputs)


            def train(model, x, y):
                model.compile(optimizer="adam", loss="mse")
                model.fit(x, y, batch_size=8)


            def main(x, y):
                model = build()
                train(model, x, y)
            """,
            """\
            from tensorflow import keras
            from tensorflow.python import ipu


            def build():
                inputs = keras.Input(shape=(16,))
                with keras.ipu.PipelineStage(0):
                    x = keras.layers.Dense(32, activation="relu")(inputs)
                with keras.ipu.PipelineStage(1):
                    outputs = keras.layers.Dense(1)(x)
                return keras.Model(inputs, outputs)


            def train(model, x, y):
                model.compile(optimizer="adam", loss="mse")
                model.fit(x, y, batch_size=8)


            def main(x, y):
                model = build()
                model.set_pipelining_options(gradient_accumulation_steps_per_replica=4,
                                             pipeline_schedule=ipu.ops.pipelining_ops.PipelineSchedule.Grouped)
                train(model, x, y)
            """,
            options={"ipus": 2, "pipeline_stages": 2, "gradient_accumulation": 4},
        ),
        # Arithmetic on the input (`inputs / 255.0`, a layer of its own) before the backbone: staged too.
        Example(
            """\
            from tensorflow import keras


            def build(backbone):
                inputs = keras.Input(shape=(64, 64, 3))
                x = inputs / 255.0
                x = backbone(x, training=False)
                x = keras.layers.GlobalAveragePooling2D()(x)
                outputs = keras.layers.Dense(10)(x)
                return keras.Model(inputs, outputs)


            model = build(keras.applications.MobileNetV2(include_top=False, weights="imagenet"))
            model.compile(optimizer="adam", loss="mse")
            """,
            """\
            from tensorflow import keras
            from tensorflow.python import ipu


            def build(backbone):
                inputs = keras.Input(shape=(64, 64, 3))
                with keras.ipu.PipelineStage(0):
                    x = inputs / 255.0
                    x = backbone(x, training=False)
                with keras.ipu.PipelineStage(1):
                    x = keras.layers.GlobalAveragePooling2D()(x)
                    outputs = keras.layers.Dense(10)(x)
                return keras.Model(inputs, outputs)


            model = build(keras.applications.MobileNetV2(include_top=False, weights="imagenet"))
            model.set_pipelining_options(gradient_accumulation_steps_per_replica=4,
                                         pipeline_schedule=ipu.ops.pipelining_ops.PipelineSchedule.Grouped)
            model.compile(optimizer="adam", loss="mse")
            """,
            options={"ipus": 2, "pipeline_stages": 2, "gradient_accumulation": 4},
        ),
        # A head on the output of a backbone, the model made from the backbone's input: the backbone's
        # layers were called where it was built, out of any stage; reported, not split.
        Example(
            """\
            from tensorflow import keras


            def build(classes):
                base = keras.applications.VGG16(include_top=False, input_shape=(224, 224, 3))
                x = keras.layers.Flatten()(base.output)
                x = keras.layers.Dense(256, activation="relu")(x)
                outputs = keras.layers.Dense(classes)(x)
                return keras.Model(inputs=base.input, outputs=outputs)


            model = build(5)
            model.compile(optimizer="adam", loss="mse")
            """,
            options={"ipus": 2, "pipeline_stages": 2, "gradient_accumulation": 4},
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("net.h5")
            model.compile(loss="mse")
            """,
            options={"ipus": 2, "pipeline_stages": 2, "gradient_accumulation": 4},
        ),
        # Two functions, each compiling a model of its own under the same name: both get the option.
        Example(
            """\
            import tensorflow as tf


            def regressor():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer="adam", loss="mse")
                return model


            def classifier():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
                return model
            """,
            """\
            import tensorflow as tf


            def regressor():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=4)
                model.compile(optimizer="adam", loss="mse")
                return model


            def classifier():
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=4)
                model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
                return model
            """,
            options={"gradient_accumulation": 4},
        ),
        # A Keras application held as one layer: split by layer count, with a note that its stage
        # holds nearly all the work.
        Example(
            """\
            import tensorflow as tf

            backbone = tf.keras.applications.MobileNetV2(input_shape=(96, 96, 3), include_top=False)
            model = tf.keras.Sequential([backbone, tf.keras.layers.GlobalAveragePooling2D(), tf.keras.layers.Dense(10)])
            model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
            """,
            """\
            import tensorflow as tf
            from tensorflow.python import ipu

            backbone = tf.keras.applications.MobileNetV2(input_shape=(96, 96, 3), include_top=False)
            model = tf.keras.Sequential([backbone, tf.keras.layers.GlobalAveragePooling2D(), tf.keras.layers.Dense(10)])
            model.set_pipeline_stage_assignment([0, 1, 1])
            model.set_pipelining_options(gradient_accumulation_steps_per_replica=4,
                                         pipeline_schedule=ipu.ops.pipelining_ops.PipelineSchedule.Grouped)
            model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
            """,
            options={"ipus": 2, "pipeline_stages": 2, "gradient_accumulation": 4},
        ),
        # An optimizer that overrides `minimize` is refused with gradient accumulation: reported, and
        # no option is set.
        Example(
            """\
            import tensorflow as tf
            import tensorflow_addons as tfa

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(optimizer=tfa.optimizers.AdamW(weight_decay=1e-4), loss="mse")
            """,
            options={"gradient_accumulation": 4},
        ),
        # The same through a class `extend_with_decoupled_weight_decay` makes, given in a variable.
        Example(
            """\
            import tensorflow as tf
            from tensorflow_addons.optimizers import extend_with_decoupled_weight_decay

            DecayedSGD = extend_with_decoupled_weight_decay(tf.keras.optimizers.SGD)
            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            optimizer = DecayedSGD(weight_decay=1e-4, learning_rate=0.1)
            model.compile(optimizer=optimizer, loss="mse")
            """,
            options={"gradient_accumulation": 4},
        ),
        # TensorFlow Addons' LAMB keeps `minimize`: gradient accumulation is set.
        Example(
            """\
            import tensorflow as tf
            import tensorflow_addons as tfa

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(optimizer=tfa.optimizers.LAMB(1e-3), loss="mse")
            """,
            """\
            import tensorflow as tf
            import tensorflow_addons as tfa

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=4)
            model.compile(optimizer=tfa.optimizers.LAMB(1e-3), loss="mse")
            """,
            options={"gradient_accumulation": 4},
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.compile(loss="mse")
            """,
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            model.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=4)
            model.compile(loss="mse")
            """,
            options={"gradient_accumulation": 4},
        ),
        Example(
            """\
            from tensorflow import keras

            net = keras.Sequential()
            net.add(keras.layers.Dense(64, input_shape=(16,)))
            net.add(keras.layers.Dense(64))
            net.add(keras.layers.Dense(1))
            net.compile(loss="mse")
            """,
            """\
            from tensorflow import keras
            from tensorflow.python import ipu

            net = keras.Sequential()
            net.add(keras.layers.Dense(64, input_shape=(16,)))
            net.add(keras.layers.Dense(64))
            net.add(keras.layers.Dense(1))
            net.set_pipeline_stage_assignment([0, 1, 1])
            net.set_pipelining_options(gradient_accumulation_steps_per_replica=8,
                                       pipeline_schedule=ipu.ops.pipelining_ops.PipelineSchedule.Sequential)
            net.compile(loss="mse")
            """,
            options={"ipus": 2, "pipeline_stages": 2, "gradient_accumulation": 8, "pipeline_schedule": "sequential"},
        ),
        # The script sets the model's accumulation itself, to another count than the option's: its
        # options are kept (a second call would override them), and the option is said not to apply.
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=8)
            model.compile(optimizer="sgd", loss="mse", steps_per_execution=8)
            """,
            options={"gradient_accumulation": 4},
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=4)
            model.compile(optimizer="sgd", loss="mse", steps_per_execution=8)
            """,
            reported=False, options={"gradient_accumulation": 4},
        ),
        # A model read with `load_model` and trained without a new `compile`: a saved model keeps no
        # pipelining or accumulation options, and the port does not compile it again.
        Example(
            """\
            import tensorflow as tf


            def load_or_build(path):
                if path:
                    return tf.keras.models.load_model(path)
                return tf.keras.Sequential([tf.keras.layers.Dense(1)])


            model = load_or_build("net.h5")
            model.fit(x, y, batch_size=8)
            """,
            options={"gradient_accumulation": 4},
        ),
        # Loaded in one branch, built in the other: the loaded model is reported.
        Example(
            """\
            import tensorflow as tf

            if resume:
                model = tf.keras.models.load_model("net.h5")
            else:
                model = tf.keras.models.load_model("base.h5")
                model.compile(loss="mse")
            model.fit(x, y, batch_size=8)
            """,
            """\
            import tensorflow as tf

            if resume:
                model = tf.keras.models.load_model("net.h5")
            else:
                model = tf.keras.models.load_model("base.h5")
                model.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=4)
                model.compile(loss="mse")
            model.fit(x, y, batch_size=8)
            """,
            options={"gradient_accumulation": 4},
        ),
        Example(
            """\
            import tensorflow as tf

            model = tf.keras.models.load_model("net.h5")
            model.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=4)
            model.compile(loss="mse", steps_per_execution=4)
            model.fit(x, y, batch_size=8)
            """,
            reported=False,
            options={"gradient_accumulation": 4},
        ),
        # A model class overrides `train_step`: the strategy runs without the IPU Keras extensions
        # (IPU103), whose models have no pipelining or gradient accumulation options.
        Example(
            """\
            import tensorflow as tf


            class Distiller(tf.keras.Model):
                def train_step(self, data):
                    return {}


            teacher = tf.keras.Sequential([tf.keras.layers.Dense(64), tf.keras.layers.Dense(10)])
            teacher.compile(loss="mse")
            """,
            options={"ipus": 2, "pipeline_stages": 2, "gradient_accumulation": 4},
        ),
        # A model of a class that overrides `test_step`: split by hand, and the override must go first
        # (the extensions refuse it on a pipelined model).
        Example(
            """\
            import tensorflow as tf


            class Scored(tf.keras.Model):
                def test_step(self, data):
                    return {}


            inputs = tf.keras.Input(shape=(8,))
            model = Scored(inputs, tf.keras.layers.Dense(1)(tf.keras.layers.Dense(64)(inputs)))
            model.compile(loss="mse")
            """,
            options={"ipus": 2, "pipeline_stages": 2, "gradient_accumulation": 4},
        ),
        Example(_SEQUENTIAL_BEFORE, reported=False),
        Example(_SEQUENTIAL_AFTER, reported=False,
                options={"ipus": 2, "pipeline_stages": 2, "gradient_accumulation": 8}),
    )

    def run(self, ctx) -> None:
        config = ctx.config
        stages, accumulation = config.pipeline_stages, config.gradient_accumulation
        if not stages and not accumulation:
            return
        calls = training_calls(ctx)
        configured = self._configured(ctx)
        without_extensions = keras_extensions_off(ctx)
        seen: set = set()  # (function, model name): a `model` made in each function is a model of its own
        reported_kept: set = set()  # the models whose own options were said to be kept
        built: set = set()  # (function, model name) of the variables holding the models set up so far
        for entry in calls:
            if entry.method != "compile" or (id(entry.owner), entry.model) in seen or (
                    _given(entry) and entry.model in {name for _, name in seen}):
                continue  # a model given to the function was set up where it was made
            seen.add((id(entry.owner), entry.model))
            owner, model = self._binding(ctx, entry)
            if owner is not None and (id(owner), model) in built:
                continue  # compiled again, where it was first compiled in a function it was given to
            built.add((id(owner), model))
            if entry.model in configured:
                self._report_kept_options(ctx, entry.model, reported_kept)
                continue
            if entry.statement is None or ctx.block_of(entry.statement) is None:
                continue
            if without_extensions is not None:
                self._report_without_extensions(ctx, entry, without_extensions, stages)
                continue
            minimizer = _minimize_override(ctx, entry)
            if minimizer is not None:
                self._report_minimize_override(ctx, entry, minimizer, stages)
                continue
            lines: List[cst.BaseStatement] = []
            if stages:
                if not self._stages(ctx, entry, stages, lines, owner, model):
                    continue
                lines.append(statement(
                    f"{model}.set_pipelining_options(gradient_accumulation_steps_per_replica={accumulation},\n"
                    f"{' ' * (len(model) + 24)}pipeline_schedule=ipu.ops.pipelining_ops.PipelineSchedule."
                    f"{throughput.schedule_member(config)})\n"))
                ctx.add_import("tensorflow.python", "ipu", code=IpuImport.code)
                message = (f"pipelining options set before `compile`: {accumulation} batches accumulated per weight "
                           f"update, {config.pipeline_schedule} schedule")
            else:
                lines.append(statement(f"{model}.set_gradient_accumulation_options("
                                       f"gradient_accumulation_steps_per_replica={accumulation})"))
                message = f"gradient accumulation over {accumulation} batches set before `compile`"
            made = self._made_in_caller(ctx, entry, owner, model)
            if made is not None:  # set where the caller makes it: before every compile, whichever runs first
                ctx.insert_after(made, lines)
                ctx.report(self.code, made, message.replace("before `compile`", f"where `{model}` is made, before "
                                                            "it is compiled"), fixed=True)
                continue
            ctx.insert_before(entry.statement, lines)
            ctx.report(self.code, entry.call.func.attr, message, fixed=True)
        if without_extensions is None:
            self._report_loaded(ctx, calls, configured)

    def _report_loaded(self, ctx, calls: List[TrainingCall], configured: set) -> None:
        """A model read with ``load_model`` and run with no ``compile`` after loading: the options
        above are set before a ``compile``, and a saved model keeps neither its pipelining nor its
        gradient accumulation options (Graphcore's Keras guide, "Saving and loading Keras models").
        The port does not compile it again (that would give ``fit`` a fresh optimizer), so it runs
        unpipelined, or without accumulation, unless a person sets the options after loading."""
        config = ctx.config
        stages, accumulation = config.pipeline_stages, config.gradient_accumulation
        said = set()
        for entry in calls:
            if (id(entry.owner), entry.model) in said or entry.model in configured or (
                    entry.method != "fit" and not stages):
                continue
            loaded = loaded_binding(ctx, entry, calls)
            if loaded is None:
                continue
            said.add((id(entry.owner), entry.model))
            source = loaded_source(ctx, loaded)
            if stages:
                wanted = f"`--pipeline-stages {stages}`"
                setting = (f"`{entry.model}.set_pipelining_options(gradient_accumulation_steps_per_replica="
                           f"{accumulation}, pipeline_schedule=ipu.ops.pipelining_ops.PipelineSchedule."
                           f"{throughput.schedule_member(config)})` (and its stages, if the saved model has none)")
            else:
                wanted = f"`--gradient-accumulation {accumulation}`"
                setting = (f"`{entry.model}.set_gradient_accumulation_options(gradient_accumulation_steps_per_"
                           f"replica={accumulation})`")
            ctx.report(self.code, entry.call.func.attr, f"`{entry.model}` {source} and is not compiled again "
                       f"before `{entry.method}`: a saved model keeps no pipelining or gradient accumulation "
                       f"options, so {wanted} does not reach it; after loading, call {setting}, then compile it "
                       f"with `steps_per_execution` a multiple of {accumulation}", fixed=False)

    def _report_without_extensions(self, ctx, entry: TrainingCall, why: str, stages: Optional[int]) -> None:
        """Pipelining and gradient accumulation are IPU Keras extension methods, which the models
        of ``IPUStrategy(enable_keras_extensions=False)`` do not have: calling them would fail."""
        wanted = "pipelining" if stages else "gradient accumulation"
        method = "set_pipelining_options" if stages else "set_gradient_accumulation_options"
        ctx.report(self.code, entry.call.func.attr,
                   f"`{entry.model}` gets no {wanted}: the port trains it in `IPUStrategy(enable_keras_extensions="
                   f"False)`, since {why}, and its models have no `{method}`; to get it, remove the override (its "
                   "step as the model's `call` and a compiled loss) and port again (Graphcore's Keras tutorial, "
                   "\"Pipelining\")", fixed=False)

    def _report_minimize_override(self, ctx, entry: TrainingCall, optimizer: cst.Call, stages: Optional[int]) -> None:
        """Keras on the IPU refuses an optimizer that overrides ``minimize`` once the model accumulates
        gradients or is pipelined (a ValueError when it checks the optimizer): no option is set."""
        wanted = "pipelining" if stages else "gradient accumulation"
        ctx.report(self.code, optimizer,
                   f"`{entry.model}` gets no {wanted}: its optimizer `{code_of(ctx, optimizer.func)}` overrides "
                   "`minimize` (TensorFlow Addons' decoupled weight decay), and Keras on the IPU rejects such an "
                   f"optimizer with {wanted} (a ValueError); to get it, compile with an optimizer that does not "
                   "override `minimize` (a Keras optimizer, or `ipu_tensorflow_addons.keras.optimizers."
                   "LAMBIpuOptimizer(weight_decay_rate=...)`, a different update) and port again "
                   "(Targeting the IPU from TensorFlow 2, \"Keras with IPUs\")", fixed=False)

    def _report_kept_options(self, ctx, model: str, reported: set) -> None:
        """``model`` sets its own accumulation or pipelining options, which the port keeps (a second
        call would override them): when they are not what the options ask for, say that the options
        are not applied, as IPU108 does for a script's own ``steps_per_execution``."""
        config = ctx.config
        stages, accumulation = config.pipeline_stages, config.gradient_accumulation
        own = self._own_options(ctx, model)
        if own is None or model in reported:
            return
        count = argument(own, "gradient_accumulation_steps_per_replica", 0)
        pipelined = own.func.attr.value == "set_pipelining_options"
        if (count is not None and int_value(count.value) == (accumulation or 1)) and (pipelined or not stages):
            return
        reported.add(model)
        asked = f"`--pipeline-stages {stages}`" if stages and not pipelined else f"`--gradient-accumulation {accumulation}`"
        ctx.report(self.code, own, f"`{model}` keeps the script's `{code_of(ctx, own)}`: {asked} is not applied "
                   "to this model; change the script's options to use it", fixed=False, severity=NOTE)

    @staticmethod
    def _own_options(ctx, model: str) -> Optional[cst.Call]:
        """The script's first ``model.set_pipelining_options(...)`` or ``set_gradient_accumulation_
        options(...)``, the pipelining one first."""
        calls = [call for call in ctx.nodes(cst.Call) if isinstance(call.func, cst.Attribute)
                 and call.func.attr.value in _OPTIONS and isinstance(call.func.value, cst.Name)
                 and call.func.value.value == model]
        calls.sort(key=lambda call: _OPTIONS.index(call.func.attr.value))
        return calls[0] if calls else None

    @staticmethod
    def _configured(ctx) -> set:
        found = set()
        for call in ctx.nodes(cst.Call):
            func = call.func
            if (isinstance(func, cst.Attribute) and func.attr.value in (*_OPTIONS, "set_pipeline_stage_assignment")
                    and isinstance(func.value, cst.Name)):
                found.add(func.value.value)
        return found

    # --------------------------------------------------------------------- finding the model
    def _stages(self, ctx, entry: TrainingCall, stages: int, lines: List[cst.BaseStatement], owner,
                model: str) -> bool:
        construction, function = self._construction(ctx, entry, owner, model)
        kind = _keras_kind(ctx, construction) if construction is not None else None
        if kind in _SEQUENTIAL:
            return self._sequential(ctx, entry, construction, stages, lines, model)
        if kind in _FUNCTIONAL and function is not None:
            borrowed = _borrowed_input(construction)
            if borrowed is not None:
                ctx.report(self.code, entry.call.func.attr, f"`{entry.model}` starts from `{code_of(ctx, borrowed)}`, "
                           "the input of another model, whose layers were called where that model was built, out of "
                           "any pipeline stage: a pipelined model needs every layer in a stage; build the model on a "
                           "`keras.Input` and call the other model on it in a `with keras.ipu.PipelineStage(0):` "
                           "block, then put the other layer calls in stages (Graphcore's Keras tutorial, "
                           "\"Pipelining\")", fixed=False)
                return False
            return self._functional(ctx, entry, function, stages)
        if kind in _FUNCTIONAL:  # built at the top level, whose statements the strategy scope takes
            ctx.report(self.code, entry.call.func.attr, f"`{entry.model}` is a functional model built at the top "
                       "level (of the script, or in a notebook's cells), where the port does not split layer calls "
                       "into pipeline stages (it puts the top level in the strategy scope): put them in "
                       "`with keras.ipu.PipelineStage(i):` blocks by hand, every layer call (a backbone's too) in "
                       "one (Graphcore's Keras tutorial, \"Pipelining\")", fixed=False)
            return False
        if construction is not None and keras_or_legacy(ctx, construction.func) in MODEL_LOADERS:
            self._report_loaded_compile(ctx, entry, stages)
            return False
        refused = _pipelined_refusals(ctx, construction)
        caveat = (f"; first remove its class's override of {' and '.join(f'`{name}`' for name in refused)}, which "
                  "the IPU Keras extensions refuse on a pipelined model (a RuntimeError when it runs)") if refused else ""
        ctx.report(self.code, entry.call.func.attr, f"`{entry.model}` cannot be split into pipeline stages "
                   "statically (not a Sequential or functional model built in this file): assign its layers to "
                   "stages by hand with `keras.ipu.PipelineStage` or `set_pipeline_stage_assignment` "
                   f"(Graphcore's Keras tutorial, \"Pipelining\"){caveat}", fixed=False)
        return False

    def _report_loaded_compile(self, ctx, entry: TrainingCall, stages: int) -> None:
        """A model read with ``load_model`` and compiled again: its layers are not visible statically,
        and a saved model keeps no pipelining options, so both are left to a person."""
        config = ctx.config
        ctx.report(self.code, entry.call.func.attr, f"`{entry.model}` comes from `load_model`: the porter cannot see "
                   f"its layers, so they are not split into {stages} stages, and a saved model keeps no "
                   "pipelining options; before this `compile`, assign its layers to stages "
                   f"(`{entry.model}.get_pipeline_stage_assignment()`, a `pipeline_stage` for each, then "
                   f"`{entry.model}.set_pipeline_stage_assignment(...)`) and call "
                   f"`{entry.model}.set_pipelining_options(gradient_accumulation_steps_per_replica="
                   f"{config.gradient_accumulation}, pipeline_schedule=ipu.ops.pipelining_ops.PipelineSchedule."
                   f"{throughput.schedule_member(config)})` (Graphcore's Keras guide, \"Saving and loading Keras "
                   "models\")", fixed=False)

    def _construction(self, ctx, entry: TrainingCall, owner, model: str
                      ) -> Tuple[Optional[cst.Call], Optional[cst.FunctionDef]]:
        """The call that builds the compiled model, and the function that holds its layers, for the
        variable ``model`` of ``owner`` that holds it where it is made (``_binding``)."""
        plan = model_plan(ctx)
        assigns = self._assigns(ctx, owner, model) if owner is not None else []
        receiver = entry.call.func.value if isinstance(entry.call.func, cst.Attribute) else None
        if owner is entry.owner and isinstance(receiver, cst.Name):
            # the assignment that reaches this compile, not a later one (a model reloaded after training)
            reaching = {id(bound) for bound, _ in reaching_bindings(ctx, receiver, owner)}
            assigns = [assign for assign in assigns if id(ctx.statement_of(assign)) in reaching] or assigns
        value = assigns[-1].value if assigns else None
        position = _unpacked_position(assigns[-1], model) if assigns else None
        function = owner if isinstance(owner, cst.FunctionDef) else None
        for _ in range(3):  # follow builder functions: model = build() -> return keras.Model(...)
            if not isinstance(value, cst.Call):
                return None, None
            if isinstance(value.func, cst.Name) and (value.func.value in plan.builders or (
                    ctx.qualified_name(value.func) is None and self._function(ctx, value.func.value) is not None
                    and _keras_kind(ctx, value) is None)):
                function = self._function(ctx, value.func.value)
                value = self._returned_model(ctx, function, position) if function is not None else None
                position = None
                continue
            break
        if isinstance(value, cst.Call) and _keras_kind(ctx, value) in _FUNCTIONAL:
            # keras.Model(*model_fn()): the layers are in model_fn
            star = next((arg for arg in value.args if arg.star == "*"), None)
            if star is not None and isinstance(star.value, cst.Call) and isinstance(star.value.func, cst.Name):
                function = self._function(ctx, star.value.func.value)
        return value if isinstance(value, cst.Call) else None, function

    @staticmethod
    def _assigns(ctx, owner, name: str) -> List[cst.Assign]:
        """The assignments of ``name`` in ``owner`` (a function or the module)."""
        return [assign for assign in ctx.nodes(cst.Assign)
                if (ctx.enclosing_function(assign) or ctx.module) is owner
                and any(name in bound_names(target.target) for target in assign.targets)]

    def _made_in_caller(self, ctx, entry: TrainingCall, owner, model: str) -> Optional[cst.BaseStatement]:
        """The statement of the caller that makes the model a function is given and compiles, else None."""
        if owner is None or owner is entry.owner:
            return None
        assigns = self._assigns(ctx, owner, model)
        made = ctx.statement_of(assigns[-1]) if assigns else None
        return made if made is not None and ctx.block_of(made) is not None else None

    def _binding(self, ctx, entry: TrainingCall):
        """``(owner, name)`` of the variable that holds the compiled model where it is made: the
        caller's, for a model a function is given (``None`` when the porter cannot follow it)."""
        owner, model = entry.owner, entry.model
        if (isinstance(owner, cst.FunctionDef) and model in parameter_names(owner)
                and not self._assigns(ctx, owner, model)):
            return self._caller_binding(ctx, owner, model)
        return owner, model

    @staticmethod
    def _caller_binding(ctx, function: cst.FunctionDef, parameter: str):
        """``(owner, name)`` of the variable the only caller of ``function`` passes as ``parameter``
        (``train_head(model, ...)`` in ``main``), else ``(None, parameter)``."""
        calls = local_calls(ctx, function)
        if len(calls) != 1:
            return None, parameter
        given = argument(calls[0], parameter, parameter_names(function).index(parameter))
        if given is None or given.star or not isinstance(given.value, cst.Name):
            return None, parameter
        return ctx.enclosing_function(calls[0]) or ctx.module, given.value.value

    @staticmethod
    def _function(ctx, name: str) -> Optional[cst.FunctionDef]:
        for statement_ in ctx.module.body:
            if isinstance(statement_, cst.FunctionDef) and statement_.name.value == name:
                return statement_
        return None

    @staticmethod
    def _returned_model(ctx, function: cst.FunctionDef, position: Optional[int] = None) -> Optional[cst.Call]:
        """The model ``function`` returns; ``position``: its place in a returned tuple
        (``return model, base_model`` unpacked by ``model, base = build()``)."""
        plan = model_plan(ctx)
        for node in ctx.nodes(cst.Return):
            if ctx.enclosing_function(node) is not function or node.value is None:
                continue
            returned = node.value
            if position is not None and isinstance(returned, cst.Tuple) and position < len(returned.elements):
                returned = returned.elements[position].value
            if isinstance(returned, cst.Call):
                return returned
            if isinstance(returned, cst.Name):
                for assign in plan.model_assignments:
                    if ctx.enclosing_function(assign) is function and any(
                            returned.value in bound_names(target.target) for target in assign.targets):
                        return assign.value if isinstance(assign.value, cst.Call) else None
        return None

    # -------------------------------------------------------------------------- Sequential
    def _sequential(self, ctx, entry, construction: cst.Call, stages: int, lines, model: str) -> bool:
        layers_arg = construction.args[0].value if construction.args else self._added_layers(ctx, construction)
        if not isinstance(layers_arg, (cst.List, cst.Tuple)):
            ctx.report(self.code, entry.call.func.attr, f"`{entry.model}`: the layers of this Sequential model are "
                       "not a list the porter can read; call `set_pipeline_stage_assignment` by hand", fixed=False)
            return False
        shape = None
        layers: List[cst.BaseExpression] = []
        for element in layers_arg.elements:
            kind = _keras_kind(ctx, element.value)
            if kind in _INPUTS:
                shape = input_shape(element.value, kind.rsplit(".", 1)[-1])
                continue
            layers.append(element.value)
        parameters = self._parameters(ctx, layers, shape)
        assignment = balanced(parameters, len(layers), stages)
        if assignment is None:
            ctx.report(self.code, entry.call.func.attr, f"`{entry.model}` has {len(layers)} layers, fewer than the "
                       f"{stages} pipeline stages asked for", fixed=False)
            return False
        lines.append(statement(f"{model}.set_pipeline_stage_assignment({assignment})"))
        ctx.report(self.code, construction, self._split_message(assignment, parameters, stages), fixed=True)
        self._report_whole_network(ctx, layers, assignment)
        return True

    def _report_whole_network(self, ctx, layers: List[cst.BaseExpression], assignment: List[int]) -> None:
        """A layer that is a whole network of a library (``hub.KerasLayer(url)``, a Keras application)
        is one layer to the split: its stage holds nearly all the work, which the count of layers
        does not show."""
        for index, layer in enumerate(layers):
            if library_network(ctx, single_value(ctx, layer)):
                ctx.report(self.code, layer, f"`{code_of(ctx, layer)}` is a whole network held as one layer, which "
                           f"the pipeline cannot split: stage {assignment[index]} holds all of it, so the stages are "
                           "far from balanced and pipelining gains little; if the model fits on one IPU, replicate "
                           "it instead (`--ipus N` without `--pipeline-stages`)", fixed=False, severity=NOTE)
                return

    @staticmethod
    def _added_layers(ctx, construction: cst.Call) -> Optional[cst.List]:
        """``model = keras.Sequential()`` then ``model.add(layer)`` calls in the same function: the
        layers as a list, or None when the model escapes before them (passed, returned...)."""
        assign = ctx.parent(construction)
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1
                and isinstance(assign.targets[0].target, cst.Name)):
            return None
        name = assign.targets[0].target.value
        owner = ctx.enclosing_function(assign)
        layers = []
        for call in ctx.nodes(cst.Call):
            func = call.func
            if (isinstance(func, cst.Attribute) and func.attr.value == "add" and isinstance(func.value, cst.Name)
                    and func.value.value == name and ctx.enclosing_function(call) is owner and len(call.args) == 1):
                layers.append(cst.Element(call.args[0].value))
        return cst.List(layers) if layers else None

    @staticmethod
    def _split_message(assignment, parameters, stages) -> str:
        counts = [assignment.count(stage) for stage in range(stages)]
        text = f"layers split into {stages} pipeline stages of {', '.join(map(str, counts))} layers"
        if parameters is not None:
            totals = stage_totals(assignment, parameters, stages)
            text += f" ({', '.join(f'{total:,}' for total in totals)} parameters)"
        else:
            text += " (balanced by layer count: the parameter counts could not be read)"
        return text

    @staticmethod
    def _parameters(ctx, layers, shape) -> Optional[List[int]]:
        counts = []
        for index, layer in enumerate(layers):
            kind = _layer_kind(_keras_kind(ctx, layer))
            if kind is None:
                return None
            if shape is None and index == 0:
                shape = input_shape(layer, kind)
            if shape is None:
                return None
            result = layer_parameters(layer, kind, shape)
            if result is None or result[1] is None:
                return None
            count, shape = result
            counts.append(count)
        return counts

    # -------------------------------------------------------------------------- functional
    def _functional(self, ctx, entry, function: cst.FunctionDef, stages: int) -> bool:
        body = list(function.body.body)
        if any(self._is_stage(ctx, node) for node in ctx.nodes(cst.With)
               if ctx.enclosing_function(node) is function):
            return True  # already split
        marks = [self._layer_statement(ctx, line) for line in body]
        self._mark_input_calls(ctx, body, marks)
        indices = [index for index, mark in enumerate(marks) if mark is not None]
        if not indices and self._gpu_blocks_as_stages(ctx, function, body, stages):
            return True
        if len(indices) < stages or not all(isinstance(line, cst.SimpleStatementLine)
                                            for line in body[indices[0]:indices[-1] + 1]):
            ctx.report(self.code, entry.call.func.attr, f"the layer calls of `{function.name.value}` cannot be "
                       f"split into {stages} stages statically: put them in `with keras.ipu.PipelineStage(i):` "
                       "blocks by hand", fixed=False)
            return False
        keras_name = self._keras_module(ctx)
        if keras_name is None:
            ctx.report(self.code, entry.call.func.attr, f"the layer calls of `{function.name.value}` are not split "
                       "into pipeline stages: the name `keras` is taken in this file, so `keras.ipu.PipelineStage` "
                       "cannot be written; put them in `with keras.ipu.PipelineStage(i):` blocks by hand", fixed=False)
            return False
        span = body[indices[0]:indices[-1] + 1]
        layer_marks = marks[indices[0]:indices[-1] + 1]
        parameters = self._chain_parameters(ctx, body, indices)
        count = sum(1 for mark in layer_marks if mark is not None)
        if parameters is not None:
            weights = []
            layer_index = 0
            for mark in layer_marks:
                if mark is None:
                    weights.append(0)
                else:
                    weights.append(parameters[layer_index] * (count + 1) + 1)
                    layer_index += 1
        else:
            weights = [1 if mark is not None else 0 for mark in layer_marks]
        from porter.rules.common._analysis.pipeline import split

        assignment = split(weights, stages)
        if assignment is None:
            return False
        block = ctx.block_of(span[0])
        start, end = body.index(span[0]), body.index(span[-1])
        if block is None or any(not (end < other.start or start > other.end) for other in ctx.wraps.get(id(block), ())):
            ctx.report(self.code, entry.call.func.attr, f"the layer calls of `{function.name.value}` share their "
                       "block with other code the port moves: put them in `with keras.ipu.PipelineStage(i):` "
                       "blocks by hand", fixed=False)
            return False
        for stage in range(stages):
            members = [line for line, at in zip(span, assignment) if at == stage]
            ctx.wrap(members[0], members[-1], self._stage_block(keras_name, stage))
        layer_stages = [at for at, mark in zip(assignment, layer_marks) if mark is not None]
        ctx.report(self.code, span[0], f"`{function.name.value}`: " + self._split_message(
            layer_stages, parameters, stages) + ", in `keras.ipu.PipelineStage` blocks", fixed=True)
        self._report_whole_network(ctx, [getattr(mark, "func", mark) for mark in layer_marks if mark is not None],
                                   layer_stages)
        return True

    def _gpu_blocks_as_stages(self, ctx, function: cst.FunctionDef, body, stages: int) -> bool:
        """The layer calls of ``function`` split over ``stages`` GPUs by hand, each GPU's in its
        ``with tf.device("/gpu:k"):`` blocks (which the strategy-scope rule removes): the body of
        each block becomes a ``keras.ipu.PipelineStage`` block, the stages in the order of the
        GPUs, exactly the split the script chose. False (nothing done) for another shape."""
        blocks = [(gpu_number(ctx, line.items[0].item), line) for line in body
                  if isinstance(line, cst.With) and len(line.items) == 1]
        numbers = sorted({number for number, _ in blocks if number is not None})
        keras_name = self._keras_module(ctx)
        if len(numbers) != stages or any(number is None for number, _ in blocks) or keras_name is None or any(
                not isinstance(block.body, cst.IndentedBlock) for _, block in blocks):
            return False
        # A stage with no layer is refused; so is a layer of no stage (outside the blocks, ``indices``).
        if not all(any(self._layer_statement(ctx, line) is not None for line in block.body.body)
                   for _, block in blocks):
            return False
        for number, block in blocks:
            inner = block.body.body
            ctx.wrap(inner[0], inner[-1], self._stage_block(keras_name, numbers.index(number)))
        order = ", ".join(f"GPU {number} -> stage {stage}" for stage, number in enumerate(numbers))
        ctx.report(self.code, blocks[0][1], f"`{function.name.value}`: the layer calls of each GPU's `tf.device` "
                   f"block make one pipeline stage ({order}), in `keras.ipu.PipelineStage` blocks", fixed=True)
        return True

    def _mark_input_calls(self, ctx, body, marks: List[Optional[cst.Call]]) -> None:
        """Mark, as layers, the statements before the first Keras layer call that call something on
        the model's input or on what such a call made: ``x = augment(inputs)``,
        ``x = preprocess_input(x)``, ``x = base_model(x, training=False)``. Their layers (a
        Sequential, a whole backbone, the ops of a preprocessing function) need a stage like the
        others: a pipelined model with a layer of no stage is refused."""
        first = next((index for index, mark in enumerate(marks) if mark is not None), len(body))
        tensors = set()
        for index, line in enumerate(body[:first]):
            small = single_small(line)
            if not isinstance(small, cst.Assign):
                continue
            kind = _keras_kind(ctx, small.value)
            if kind in _INPUTS:
                tensors.update(name for target in small.targets for name in bound_names(target.target))
            elif kind not in _FUNCTIONAL + _SEQUENTIAL and _on_tensors(small.value, tensors):
                marks[index] = small.value
                tensors.update(name for target in small.targets for name in bound_names(target.target))

    @staticmethod
    def _stage_block(keras_name: str, stage: int):
        def build(statements):
            return cst.With(
                items=[cst.WithItem(cst.parse_expression(f"{keras_name}.ipu.PipelineStage({stage})"))],
                body=cst.IndentedBlock(body=statements),
            )

        return build

    @staticmethod
    def _is_stage(ctx, with_node: cst.With) -> bool:
        for item in with_node.items:
            if isinstance(item.item, cst.Call):
                name = ctx.keras_name(item.item.func) or ""
                if name.endswith("PipelineStage") or (
                        isinstance(item.item.func, cst.Attribute) and item.item.func.attr.value == "PipelineStage"):
                    return True
        return False

    def _keras_module(self, ctx) -> Optional[str]:
        for local, full in ctx.aliases.items():
            if full in ("tensorflow.keras", "keras", "tensorflow.python.keras"):
                return local
        if "keras" in ctx.aliases or any(name.value == "keras" and not _attribute_name(ctx, name)
                                         for name in ctx.nodes(cst.Name)):
            return None  # the name `keras` is something else here
        ctx.add_import("tensorflow", "keras", code=IpuImport.code)
        return "keras"

    def _layer_statement(self, ctx, line: cst.BaseStatement) -> Optional[cst.Call]:
        """The layer call of ``x = keras.layers.Dense(...)(x)`` (or ``keras.layers.add([...])``)."""
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            return None
        small = line.body[0]
        value = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
        if not isinstance(value, cst.Call):
            return None
        layer = value.func if isinstance(value.func, cst.Call) else value
        kind = _layer_kind(_keras_kind(ctx, layer))
        if kind is None or kind in ("Input", "InputLayer"):
            return None
        return layer

    def _chain_parameters(self, ctx, body, indices) -> Optional[List[int]]:
        """Parameter counts when the layers form a chain ``x = Layer(...)(previous)`` from an input
        ``keras.Input(shape=...)`` of the same function."""
        shapes = {}
        for line in body[:indices[0]]:
            small = line.body[0] if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else None
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                kind = _keras_kind(ctx, small.value)
                if kind in _INPUTS:
                    found = input_shape(small.value, kind.rsplit(".", 1)[-1])
                    if found is not None:
                        shapes[small.targets[0].target.value] = found
        counts = []
        for index in indices:
            small = body[index].body[0]
            if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)
                    and isinstance(small.value, cst.Call) and isinstance(small.value.func, cst.Call)):
                return None
            call = small.value
            if len(call.args) != 1 or not isinstance(call.args[0].value, cst.Name):
                return None
            shape = shapes.get(call.args[0].value.value)
            layer = call.func
            kind = _layer_kind(_keras_kind(ctx, layer))
            if shape is None or kind is None:
                return None
            result = layer_parameters(layer, kind, shape)
            if result is None or result[1] is None:
                return None
            counts.append(result[0])
            shapes[small.targets[0].target.value] = result[1]
        return counts


RULE = Pipelining()
