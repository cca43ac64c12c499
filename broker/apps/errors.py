"""Errors of MCP Apps, part of Helm's one hierarchy (``broker.errors.HelmError``)."""

from __future__ import annotations

from collections.abc import Sequence

from broker.errors import HelmError


class AppError(HelmError):
    """An app cannot be added or opened; the message says why and what to do."""


class AppChanged(AppError):
    """What the server offers differs from what the user approved; ``changes`` says how."""

    def __init__(self, message: str, changes: Sequence[str]) -> None:
        super().__init__(message)
        self.changes = tuple(changes)
