"""Extension manifests: loading, validation (schema + cross-field rules), review and digest.

Validation reports every problem at once, each with its JSON path (``$.connections[1].calls``).
The JSON Schema (``resources/manifest.schema.json``) covers shapes and limits; the rules that
span fields live with each kind (``broker/kinds/<kind>/rules.py``) plus the generic ones here.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

import resources
from broker.apps import spec as app_spec
from broker.errors import ManifestError
from broker.jsonutil import DuplicateKeyError, digest, loads_strict
from broker.kinds import KINDS
from broker.kinds.base import ConnectionReview, Issue

MANIFEST_FILE = "manifest.json"
MAX_MANIFEST_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Manifest:
    """A validated manifest. ``raw`` is the parsed JSON; ``folder`` the extension's root."""

    raw: Mapping[str, Any]
    folder: Path

    @property
    def id(self) -> str:
        return str(self.raw["id"])

    @property
    def name(self) -> str:
        return str(self.raw["name"])

    @property
    def version(self) -> str:
        return str(self.raw["version"])

    @property
    def kind(self) -> str:
        return str(self.raw["kind"])

    @property
    def entry(self) -> str:
        return str(self.raw["entry"])

    @property
    def may_write(self) -> bool:
        return bool(self.raw.get("permissions", {}).get("write", False))

    @property
    def connections(self) -> list[Mapping[str, Any]]:
        return list(self.raw.get("connections", []))

    @property
    def settings_form(self) -> Mapping[str, Any]:
        return dict(self.raw.get("settings", {}))

    def connection(self, connection_id: str) -> Mapping[str, Any] | None:
        for conn in self.connections:
            if conn["id"] == connection_id:
                return conn
        return None

    def operations(self, conn: Mapping[str, Any]) -> Mapping[str, bool]:
        return KINDS[conn["kind"]].rules.operations(conn)

    def review(self) -> Review:
        return Review(
            id=self.id,
            name=self.name,
            version=self.version,
            may_write=self.may_write,
            connections=tuple(KINDS[c["kind"]].rules.review(c) for c in self.connections),
            digest=self.digest(),
        )

    def digest(self) -> str:
        """Digest of everything plugin review shows; an approval is bound to it."""
        return self._digest

    @functools.cached_property
    def _digest(self) -> str:
        reviewed = {
            "id": self.id,
            "permissions": self.raw.get("permissions", {}),
            "connections": self.raw.get("connections", []),
        }
        if "app" in self.raw:  # an MCP App: its pinned HTML, CSP and allowed domains
            reviewed["app"] = self.raw["app"]
        return digest(reviewed)


@dataclass(frozen=True)
class Review:
    """What the user reviews and approves; ``digest`` binds the approval to it."""

    id: str
    name: str
    version: str
    may_write: bool
    connections: tuple[ConnectionReview, ...]
    digest: str


@functools.cache
def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(resources.path("manifest.schema.json").read_text("utf-8"))
    return loaded


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    cls = jsonschema.validators.validator_for(schema())
    cls.check_schema(schema())
    validator: jsonschema.protocols.Validator = cls(schema())
    return validator


def json_path(parts: Any) -> str:
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def _schema_issues(raw: Any) -> Iterator[Issue]:
    for err in _validator().iter_errors(raw):
        # Report the deepest causes of a failed if/then or oneOf, not the wrapper.
        leaves = [e for e in err.context] if err.context else [err]
        for leaf in leaves:
            yield Issue(json_path(leaf.absolute_path), leaf.message)


def _rule_issues(raw: Mapping[str, Any], broken: set[str]) -> Iterator[Issue]:
    seen: dict[str, int] = {}
    permissions = raw.get("permissions")
    may_write = isinstance(permissions, dict) and permissions.get("write") is True
    for i, conn in enumerate(raw.get("connections", [])):
        path = f"$.connections[{i}]"
        if path in broken:
            continue  # its shape is wrong; the schema issues say why
        if conn["id"] in seen:
            yield Issue(
                f"{path}.id",
                f"duplicate connection id {conn['id']!r} (also at $.connections[{seen[conn['id']]}])",
            )
        seen.setdefault(conn["id"], i)
        rules = KINDS[conn["kind"]].rules
        yield from rules.lint(conn, path, raw)
        writes = [op for op, w in rules.operations(conn).items() if w]
        if writes and not may_write:
            yield Issue(
                path,
                f"declares write operation(s) {', '.join(sorted(writes))}: the manifest "
                'must also declare "permissions": { "write": true }',
            )


def validate(raw: Any) -> list[Issue]:
    """Every problem of a parsed manifest, schema first; cross-field rules when shapes are right."""
    issues = sorted(set(_schema_issues(raw)), key=lambda i: (i.path, i.message))
    if not isinstance(raw, dict) or not isinstance(raw.get("connections", []), list):
        return issues
    broken = {p for i in issues if (p := _connection_path(i.path)) is not None}
    app = [] if any(i.path.startswith("$.app") for i in issues) else list(app_spec.lint(raw))
    return issues + list(_rule_issues(raw, broken)) + app + _size_issues(raw)


def _size_issues(raw: Mapping[str, Any]) -> list[Issue]:
    """A size hint is for the dashboard, where only widgets sit."""
    if "size" in raw and raw.get("kind") == "tool":
        return [
            Issue("$.size", "only widgets have a size on the dashboard (a tool fills its tab): remove it")
        ]
    return []


def _connection_path(path: str) -> str | None:
    if not path.startswith("$.connections["):
        return None
    return path[: path.index("]") + 1]


def parse(text: str | bytes) -> Any:
    try:
        return loads_strict(text)
    except DuplicateKeyError as exc:
        raise ManifestError([Issue("$", str(exc))]) from exc
    except ValueError as exc:
        raise ManifestError([Issue("$", f"not valid JSON: {exc}")]) from exc


def load(folder: Path) -> Manifest:
    """Read and validate ``folder/manifest.json``; raise ManifestError listing every problem."""
    file = folder / MANIFEST_FILE
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise ManifestError([Issue("$", f"{MANIFEST_FILE} not found in {folder}")]) from None
    except OSError as exc:
        raise ManifestError([Issue("$", f"cannot read {file}: {exc.strerror}")]) from exc
    if len(data) > MAX_MANIFEST_BYTES:
        raise ManifestError([Issue("$", "manifest.json is larger than 1 MiB")])
    raw = parse(data)
    issues = validate(raw)
    entry = raw.get("entry") if isinstance(raw, dict) else None
    if not issues and isinstance(entry, str) and not (folder / entry).is_file():
        issues.append(Issue("$.entry", f"{entry} does not exist in the extension folder"))
    if issues:
        raise ManifestError(issues)
    return Manifest(raw, folder.resolve())
