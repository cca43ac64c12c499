"""``{name}`` placeholders in manifest templates (http paths, query values and bodies, a tool's
build prompt)."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping

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


def as_text(value: object) -> str:
    """How a scalar argument reads inside a text template: a string as it is, anything else in
    its JSON spelling (``true``, ``20``, ``1.5``)."""
    if isinstance(value, str):
        return value
    return json.dumps(value)


def fill_text(template: str, args: Mapping[str, object]) -> tuple[str, tuple[str, ...]]:
    """``template`` with each placeholder replaced by its argument as text, and the names of the
    placeholders no argument fills (missing or null); those are left as written."""
    missing: list[str] = []

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        value = args.get(name)
        if value is None:
            missing.append(name)
            return match.group(0)
        return as_text(value)

    return PLACEHOLDER.sub(fill, template), tuple(dict.fromkeys(missing))
