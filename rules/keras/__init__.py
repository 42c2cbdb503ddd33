"""Rules for keras."""
