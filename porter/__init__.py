"""ipu-port: port GPU/CPU TensorFlow and PyTorch training scripts to Graphcore IPUs."""

__version__ = "0.1.0"
