"""Helm's own ``helm`` subcommands: one module per group, each with ``register(subparsers)``.

Each connection kind's group (``helm service``, ``helm mcp``, ``helm db``…) lives in the kind's
folder and is registered from its spec (``broker.kinds.cli``); ``common.TERMINAL`` is what those
groups get from the command line.
"""
