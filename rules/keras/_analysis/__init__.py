"""What the Keras rules share: the model plan, fit calls, custom loops, IPU layers."""
