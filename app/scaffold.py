"""``helm ext new``: a new widget or tool from the templates in ``resources/scaffold``.

Templates are plain files with ``__NAME__``-style placeholders. Each placeholder is escaped
for the file it lands in (JSON string, HTML text, plain Markdown), so a name with quotes or
angle brackets still gives a manifest that lints clean and a page that shows the name as text.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import resources
from broker.manifest import schema

KINDS = ("widget", "tool")
SCAFFOLD = resources.path("scaffold")
TYPINGS = resources.path("helm.d.ts")

# Decisions as data: which template file goes where. Kind-specific files come from
# ``scaffold/<kind>/``, shared ones from ``scaffold/common/``.
FILES: tuple[tuple[str, str], ...] = (
    ("{kind}/manifest.json", "manifest.json"),
    ("{kind}/index.html", "index.html"),
    ("{kind}/main.js", "main.js"),
    ("common/style.css", "style.css"),
    ("common/README.md", "README.md"),
)

_ESCAPES: dict[str, Callable[[str], str]] = {
    ".json": lambda s: json.dumps(s, ensure_ascii=False)[1:-1],
    ".html": lambda s: html.escape(s, quote=True),
}


class ScaffoldError(Exception):
    """The scaffold cannot be written (the folder is not empty, the id is not valid…)."""


@dataclass(frozen=True)
class NewExtension:
    folder: Path
    kind: str
    id: str
    name: str
    files: tuple[Path, ...]


def default_id(folder: Path) -> str:
    slug = re.sub(r"[^a-z0-9-]+", "-", folder.resolve().name.lower()).strip("-")
    if not slug or not slug[0].isalnum():
        slug = "extension"
    return f"com.example.{slug}"


def default_name(folder: Path) -> str:
    words = re.split(r"[-_.\s]+", folder.resolve().name)
    return " ".join(w.capitalize() for w in words if w) or "New extension"


def check_id(ext_id: str) -> None:
    pattern = schema()["properties"]["id"]["pattern"]
    if len(ext_id) > 128 or re.fullmatch(pattern, ext_id) is None:
        raise ScaffoldError(
            f"{ext_id!r} is not a valid extension id: use reverse-DNS in lower case, "
            "for example com.example.notes"
        )


def check_name(name: str) -> None:
    if not 1 <= len(name) <= 100:
        raise ScaffoldError("the name must have 1 to 100 characters")


def _as_is(value: str) -> str:
    return value


_PLACEHOLDER = re.compile(r"__([A-Z]+?)(_HTML)?__")


def render(template: str, suffix: str, values: Mapping[str, str]) -> str:
    """Fill the placeholders in one pass (a value that looks like a placeholder stays as is)."""
    escape = _ESCAPES.get(suffix, _as_is)

    def fill(match: re.Match[str]) -> str:
        value = values.get(match.group(1))
        if value is None:
            return match.group(0)
        return html.escape(value, quote=True) if match.group(2) else escape(value)

    return _PLACEHOLDER.sub(fill, template)


def create(folder: Path, kind: str, *, ext_id: str | None = None, name: str | None = None) -> NewExtension:
    """Write a new extension into ``folder`` (created if missing; refused if not empty)."""
    if kind not in KINDS:
        raise ScaffoldError(f"kind must be one of {', '.join(KINDS)}")
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise ScaffoldError(f"{folder} is not an empty folder; Helm will not overwrite anything")
    ext_id = ext_id or default_id(folder)
    name = name or default_name(folder)
    check_id(ext_id)
    check_name(name)
    values = {"SCHEMA": str(schema()["$id"]), "ID": ext_id, "NAME": name, "KIND": kind}
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for source, target in FILES:
        template = (SCAFFOLD / source.format(kind=kind)).read_text(encoding="utf-8")
        dest = folder / target
        dest.write_text(render(template, dest.suffix, values), encoding="utf-8")
        written.append(dest)
    typings = folder / "helm.d.ts"
    typings.write_text(TYPINGS.read_text(encoding="utf-8"), encoding="utf-8")
    written.append(typings)
    return NewExtension(folder, kind, ext_id, name, tuple(written))
