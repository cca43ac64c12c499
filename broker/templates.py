"""``{name}`` placeholders in manifest templates (http paths, query values and bodies)."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

NAME = r"[A-Za-z_][A-Za-z0-9_]{0,63}"
PLACEHOLDER = re.compile(r"\{(" + NAME + r")\}")
WHOLE = re.compile(r"^\{(" + NAME + r")\}$")


def placeholder_problem(template: str) -> str | None:
    """Why a template's braces are malformed, or None. Braces appear only as ``{name}``."""
    rest = PLACEHOLDER.sub("", template)
    if "{" in rest or "}" in rest:
        return "braces must form placeholders like {name} (a letter or _, then letters, digits, _)"
    return None


def names(template: str) -> list[str]:
    return PLACEHOLDER.findall(template)


def unused_arguments(args: Iterable[str], used: Collection[str], where: str) -> tuple[str, ...]:
    """A hint for each argument name nothing in ``used`` takes (author mode)."""
    return tuple(f"argument {name!r} is not used by {where}" for name in args if name not in used)


def whole(value: str) -> str | None:
    """The argument name if ``value`` is exactly one placeholder, else None."""
    m = WHOLE.match(value)
    return m.group(1) if m else None
