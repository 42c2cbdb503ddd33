"""What the PyTorch rules share: the training-loop analysis, device helpers, speed options."""
