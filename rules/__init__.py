"""The porter's rules: one module per rule, grouped by framework. See ``porter.rule``."""
