"""Rules for torch."""
