"""Kinds that live in tests: built by following docs/architecture.md ("How to add a kind")."""
