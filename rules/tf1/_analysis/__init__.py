"""What the TF1 rules share: the graph and session analysis."""
