import libcst as cst

from porter.rule import TF1, WARN, Example, Rule
from porter.rules._tf.ops import IMAGE_DECODING, NO_KERNEL, PYTHON_CALLS, STRING_DECODING
from porter.rules.tf1._analysis.graph import calls_named, compiled_by_port, runs_on_ipu, tf_call_name

# Ops with no IPU kernel (the op filter of the IPU device) and ops on strings and Python calls
# (Targeting the IPU from TensorFlow 1, "Unsupported operations").
_UNSUPPORTED = {*NO_KERNEL, *IMAGE_DECODING, *PYTHON_CALLS, *STRING_DECODING}
_STRING_MODULES = ("strings.",)


class UnsupportedOps(Rule):
    code = "IPU212"
    name = "unsupported-ops"
    kind = WARN
    frameworks = frozenset({TF1})
    # Also checks what IPU202 and IPU208 compile in this port (fixtures/tf1/spectral_tone_classifier.py:
    # examples run one rule alone).
    after = ("IPU202", "IPU208")
    summary = "Ops with no IPU kernel (FFT, complex numbers, strings, image decoding, Python calls) in IPU code."
    rationale = (
        "The IPU device has no kernel for `Angle, Complex, ComplexAbs, Conj, FFT*, IFFT*, Imag, Real, "
        "NonMaxSuppressionV4` and for ops on strings or decoding images; an unsupported op makes "
        "compilation fail (Targeting the IPU from TensorFlow 1, \"Unsupported operations\"). In an IPU scope, "
        "a function it compiles, or a graph this port compiles (and the functions it calls), "
        "they are reported: compute them on the host, in the `tf.data` pipeline or in "
        "`ipu.scopes.outside_compilation_scope()`. Support of ops not listed there is not known."
    )
    examples = (
        Example(
            """\
            import tensorflow.compat.v1 as tf
            from tensorflow.python import ipu


            def model(x):
                spectrum = tf.signal.fft(tf.complex(x, 0.0))
                return tf.math.real(spectrum)


            with ipu.scopes.ipu_scope("/device:IPU:0"):
                out = ipu.ipu_compiler.compile(model, inputs=[x])
            """,
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf

            dataset = dataset.map(lambda path: tf.image.decode_jpeg(tf.io.read_file(path)))
            with tf.device("cpu"):
                spectrum = tf.signal.fft(signal)
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        compiled = compiled_by_port(ctx)
        for call in calls_named(ctx, _UNSUPPORTED) + self._string_ops(ctx):
            name = tf_call_name(ctx, call)
            if runs_on_ipu(ctx, call) or compiled(call):
                ctx.report(self.code, call, f"`tf.{name}` has no IPU kernel: compute it on the host "
                           "(in the tf.data pipeline, or in `ipu.scopes.outside_compilation_scope()`)", fixed=False)


    @staticmethod
    def _string_ops(ctx):
        """``tf.strings.*`` calls."""
        return [call for call in ctx.nodes(cst.Call) if isinstance(call.func, cst.Attribute)
                and isinstance(call.func.value, cst.Attribute) and call.func.value.attr.value == "strings"
                and (tf_call_name(ctx, call) or "").startswith(_STRING_MODULES)]


RULE = UnsupportedOps()
