"""The ``helm`` subcommands: one module per group, each with ``register(subparsers)``."""
