"""Ops the IPU device has no kernel for (the op filter of the IPU device, and the documented
"Unsupported operations"), as TensorFlow spells them after ``tf.``: what the Keras and TF1 rules
share."""

# FFTs and complex numbers: `FFT*, IFFT*, Complex, Angle, Real, Imag, Conj` are filtered out of the
# IPU device, each TensorFlow spelling mapped to the op it makes.
FFT_OPS = {
    "signal.fft": "FFT", "signal.fft2d": "FFT2D", "signal.fft3d": "FFT3D",
    "signal.ifft": "IFFT", "signal.ifft2d": "IFFT2D", "signal.ifft3d": "IFFT3D",
    "spectral.fft": "FFT", "spectral.fft2d": "FFT2D", "spectral.fft3d": "FFT3D",
    "spectral.ifft": "IFFT", "spectral.ifft2d": "IFFT2D", "spectral.ifft3d": "IFFT3D",
    "fft": "FFT", "fft2d": "FFT2D", "fft3d": "FFT3D", "ifft": "IFFT", "ifft2d": "IFFT2D", "ifft3d": "IFFT3D",
}
COMPLEX_OPS = {
    "complex": "Complex", "math.angle": "Angle", "angle": "Angle", "math.real": "Real", "real": "Real",
    "math.imag": "Imag", "imag": "Imag", "math.conj": "Conj", "conj": "Conj",
}
NMS_OPS = {"image.non_max_suppression_padded": "NonMaxSuppressionV4"}
# Decoding images: an op on strings (the documentation's example is `JpegDecode`).
IMAGE_DECODING = {
    "image.decode_jpeg": "DecodeJpeg", "image.decode_png": "DecodePng", "image.decode_image": "DecodeImage",
    "io.decode_jpeg": "DecodeJpeg", "io.decode_png": "DecodePng", "io.decode_image": "DecodeImage",
}
# Python calls, and decoding other strings.
PYTHON_CALLS = {"py_func", "py_function", "numpy_function"}
STRING_DECODING = {"io.decode_raw", "io.decode_csv", "decode_raw", "decode_csv"}

NO_KERNEL = {**FFT_OPS, **COMPLEX_OPS, **NMS_OPS}
# Ops that make complex values from real ones, or real ones from complex values (RFFT, IRFFT): not
# in the op filter, but their complex values are read or made only by ops that are (`ComplexAbs` for
# `tf.abs`, `Real`, `Imag`, `Complex`).
COMPLEX_MAKERS = {
    "signal.rfft": "RFFT", "signal.rfft2d": "RFFT2D", "signal.rfft3d": "RFFT3D",
    "signal.irfft": "IRFFT", "signal.irfft2d": "IRFFT2D", "signal.irfft3d": "IRFFT3D",
    "signal.stft": "RFFT", "signal.inverse_stft": "IRFFT",
}
# Other decoders of strings (the TF1 rule does not list them).
OTHER_DECODING = {
    "image.decode_bmp": "DecodeBmp", "image.decode_gif": "DecodeGif", "image.decode_and_crop_jpeg": "DecodeAndCropJpeg",
    "io.decode_bmp": "DecodeBmp", "io.decode_gif": "DecodeGif", "io.decode_and_crop_jpeg": "DecodeAndCropJpeg",
    "audio.decode_wav": "DecodeWav",
}
