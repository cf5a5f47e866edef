"""Rules: one module per rule, listed in :mod:`shaderlint.rules.registry`."""
