"""``{name}`` placeholders in manifest templates (http paths, query values and bodies)."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

NAME = r"[A-Za-z_][A-Za-z0-9_]{0,63}"
PLACEHOLDER = re.compile(r"\{(" + NAME + r")\}")
WHOLE = re.compile(r"^\{(" + NAME + r")\}$")


def names(template: str) -> list[str]:
    return PLACEHOLDER.findall(template)


def unused_arguments(args: Iterable[str], used: Collection[str], where: str) -> tuple[str, ...]:
    """A hint for each argument name nothing in ``used`` takes (author mode)."""
    return tuple(f"argument {name!r} is not used by {where}" for name in args if name not in used)


def whole(value: str) -> str | None:
    """The argument name if ``value`` is exactly one placeholder, else None."""
    m = WHOLE.match(value)
    return m.group(1) if m else None
