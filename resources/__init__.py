"""Helm's bundled resources: the manifest schema, the page-side shim, icons, the demo."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent


def path(*parts: str) -> Path:
    """The path of a bundled resource (it need not exist)."""
    return ROOT.joinpath(*parts)
