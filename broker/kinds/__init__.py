"""The registry of connection kinds: every package under ``broker/kinds/`` that exports ``SPECS``.

Adding a kind is adding its folder (docs/architecture.md has the checklist); nothing here
names a kind. ``KINDS`` maps the manifest's ``kind`` to its ``KindSpec``, in the kinds' order.
``registered(spec)`` adds a kind for the length of a ``with`` block (tests use it for a kind
that lives in tests/).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from broker.kinds.spec import KindSpec

AnySpec = KindSpec[Any, Any, Any]


def _discovered() -> list[AnySpec]:
    specs: list[AnySpec] = []
    for module in pkgutil.iter_modules(__path__, f"{__name__}."):
        if module.ispkg:
            specs += getattr(importlib.import_module(module.name), "SPECS", ())
    return specs


def _ordered(specs: list[AnySpec]) -> dict[str, AnySpec]:
    return {spec.name: spec for spec in sorted(specs, key=lambda s: (s.order, s.name))}


KINDS: dict[str, AnySpec] = _ordered(_discovered())


@contextmanager
def registered(spec: AnySpec) -> Iterator[AnySpec]:
    """``spec`` is a kind until the block ends (the registry object itself changes, so every
    module that imported ``KINDS`` sees it)."""
    if spec.name in KINDS:
        raise ValueError(f"a kind named {spec.name!r} is registered already")
    before = dict(KINDS)
    KINDS.clear()
    KINDS.update(_ordered([*before.values(), spec]))
    try:
        yield spec
    finally:
        KINDS.clear()
        KINDS.update(before)


def window_part(role: str) -> Any | None:
    """The factory of the window part ``role`` (``spec.WINDOW_ROLES``) from the first kind
    that supplies it, in the kinds' order; None when no installed kind does."""
    for spec in KINDS.values():
        part = spec.window_part(role)
        if part is not None:
            return part
    return None
