"""Rules for tf1."""
