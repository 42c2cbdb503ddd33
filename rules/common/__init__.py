"""Rules for common."""
