"""Extension manifests: loading, validation (schema + cross-field rules), review and digest.

Validation reports every problem at once, each with its JSON path (``$.connections[1].calls``)
and in Helm's words (``broker.schema_words``). The JSON Schema holds every rule about one field
or one call: the manifest's own part is ``resources/manifest.schema.json``, each kind adds its
connection's ``$defs`` (``KindSpec.schema``, composed in ``schema()``; the published file carries
the same, for editors — ``scripts/write_schema.py`` writes it). The rules that span fields live
with each kind (``KindSpec.lint``) plus the generic ones here, and run on every connection whose
fields they read, so a problem in one field never hides another. A valid manifest's connections
are parsed once, into each kind's frozen connection model (``KindSpec.parse``). The schema does
not validate again a manifest file it found valid before, when ``load`` is given the home's kept
verdicts (``broker.verdicts``).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import resources
from broker.apps import spec as app_spec
from broker.apps.spec import AppSpec
from broker.errors import ManifestError
from broker.jsonutil import DuplicateKeyError, digest, loads_strict
from broker.kinds import KINDS
from broker.kinds.base import Connection, ConnectionReview, Issue
from broker.orchestrate import spec as orchestrate_spec
from broker.orchestrate.spec import Orchestrate
from broker.schema_words import issues_of
from broker.verdicts import Verdicts, installed_version

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

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

    @functools.cached_property
    def connections(self) -> tuple[Connection, ...]:
        """Each declared connection as its kind's typed model, parsed once."""
        return tuple(KINDS[c["kind"]].parse(c) for c in self.raw.get("connections", []))

    @functools.cached_property
    def _by_id(self) -> dict[str, Connection]:
        return {conn.id: conn for conn in self.connections}

    @functools.cached_property
    def app(self) -> AppSpec | None:
        """The MCP App this manifest runs (its ``app`` section), None for an extension: the one
        place Helm decides whether an extension is an app."""
        return app_spec.parse_app(self.raw)

    @functools.cached_property
    def orchestrate(self) -> Orchestrate | None:
        """The build this tool may start (its ``orchestrate`` section), None when it declares none."""
        return orchestrate_spec.parse(self.raw)

    @property
    def settings_form(self) -> Mapping[str, Any]:
        return dict(self.raw.get("settings", {}))

    def connection(self, connection_id: str) -> Connection | None:
        return self._by_id.get(connection_id)

    def operations(self, conn: Connection) -> Mapping[str, bool]:
        return conn.operations

    def review(self) -> Review:
        return Review(
            id=self.id,
            name=self.name,
            version=self.version,
            may_write=self.may_write,
            connections=tuple(KINDS[c.kind].review(c) for c in self.connections),
            digest=self.digest(),
            orchestrate=self.orchestrate,
        )

    def digest(self) -> str:
        """Digest of everything plugin review shows; an approval is bound to it."""
        return self._digest

    @functools.cached_property
    def _digest(self) -> str:
        reviewed = {
            "id": self.id,
            "name": self.name,  # what every dialog names it by: renaming it needs a review
            "version": self.version,
            "permissions": self.raw.get("permissions", {}),
            "connections": self.raw.get("connections", []),
        }
        if "orchestrate" in self.raw:  # the build a tool may start: its prompt and where it runs
            reviewed["orchestrate"] = self.raw["orchestrate"]
        if self.app is not None:  # an MCP App: its pinned HTML, CSP and allowed domains
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
    orchestrate: Orchestrate | None = None
    """The build the tool may start (``broker.orchestrate``): its template and where it runs."""


@functools.cache
def published_schema() -> dict[str, Any]:
    """``resources/manifest.schema.json`` as shipped (for editors)."""
    loaded: dict[str, Any] = json.loads(resources.path("manifest.schema.json").read_text("utf-8"))
    return loaded


def schema() -> dict[str, Any]:
    """The manifest JSON Schema of the kinds registered now: the published manifest part, with
    each kind's ``$defs`` and a ``kind`` enum and ``allOf`` branch per kind."""
    return _compiled()[0]


def _validator() -> Validator:
    return _compiled()[1]


_COMPOSED: dict[tuple[int, ...], tuple[dict[str, Any], str]] = {}
_COMPILED: dict[tuple[int, ...], tuple[dict[str, Any], Validator]] = {}


def _registry() -> tuple[int, ...]:
    return tuple(id(spec) for spec in KINDS.values())  # the registry changes only in tests


def _composed_schema() -> tuple[dict[str, Any], str]:
    """The composed schema of the kinds registered now and its digest (which a kept verdict is
    bound to), made once; without jsonschema."""
    key = _registry()
    found = _COMPOSED.get(key)
    if found is None:
        composed = _composed()
        found = _COMPOSED[key] = (composed, digest(composed))
    return found


def _compiled() -> tuple[dict[str, Any], Validator]:
    """The composed schema and its validator, made on the first manifest the schema validates
    (jsonschema is imported then, not when Helm starts). The schema is Helm's own: the tests
    check that it is a valid JSON Schema with every kind (and with the test kind added), so a
    start does not check it again against the metaschema, which costs more than validating
    every manifest."""
    key = _registry()
    found = _COMPILED.get(key)
    if found is None:
        import jsonschema

        composed = _composed_schema()[0]
        cls = jsonschema.validators.validator_for(composed)
        found = _COMPILED[key] = (composed, cls(composed))
    return found


def _composed() -> dict[str, Any]:
    composed = copy.deepcopy(published_schema())
    defs = composed["$defs"]
    for spec in KINDS.values():
        defs.update(copy.deepcopy(dict(spec.schema)))
    defs["connection"]["properties"]["kind"] = {"enum": list(KINDS)}
    defs["connection"]["allOf"] = [
        {"if": {"properties": {"kind": {"const": name}}}, "then": {"$ref": f"#/$defs/{spec.schema_def}"}}
        for name, spec in KINDS.items()
    ]
    return composed


def _schema_issues(raw: Any) -> Iterator[Issue]:
    for err in _validator().iter_errors(raw):
        yield from issues_of(err)


def _rule_issues(raw: Mapping[str, Any]) -> Iterator[Issue]:
    """The rules that span fields, on every connection whose fields they read are readable —
    also one with a schema problem elsewhere, so one error never hides another."""
    seen: dict[str, int] = {}
    permissions = raw.get("permissions")
    may_write = isinstance(permissions, dict) and permissions.get("write") is True
    connections = raw.get("connections", [])
    for i, conn in enumerate(connections if isinstance(connections, list) else []):
        path = f"$.connections[{i}]"
        if not isinstance(conn, dict):
            continue
        cid = conn.get("id")
        if isinstance(cid, str) and cid in seen:
            yield Issue(f"{path}.id", f"duplicate connection id {cid!r} (also at $.connections[{seen[cid]}])")
        if isinstance(cid, str):
            seen.setdefault(cid, i)
        spec = KINDS.get(conn["kind"]) if isinstance(conn.get("kind"), str) else None
        if spec is None:
            continue
        yield from spec.lint(conn, path, raw)
        writes = _writes(spec, conn)
        if writes and not may_write:
            yield Issue(
                path,
                f"declares write operation(s) {', '.join(sorted(writes))}: the manifest "
                'must also declare "permissions": { "write": true }',
            )


def _writes(spec: Any, conn: Mapping[str, Any]) -> list[str]:
    """The write operations a connection declares, as far as its declaration can be read."""
    try:
        operations: Mapping[str, bool] = spec.parse(conn).operations
    except (KeyError, TypeError, AttributeError, ValueError):
        return []  # its shape is wrong: the schema's problems say where
    return [op for op, write in operations.items() if write]


def validate(raw: Any) -> list[Issue]:
    """Every problem of a parsed manifest at once: the schema's (every field's own rules) and
    the rules that span fields."""
    return _with_rules(raw, set(_schema_issues(raw)))


def _with_rules(raw: Any, found: set[Issue]) -> list[Issue]:
    """``found`` (the schema's problems) and the problems of the rules beside it, sorted."""
    if isinstance(raw, dict):
        found |= set(_rule_issues(raw))
        found |= set(orchestrate_spec.lint(raw))
        if not any(i.path.startswith("$.app") for i in found):
            found |= set(app_spec.lint(raw))
    return sorted(found, key=lambda i: (i.path, i.message))


def parse(text: str | bytes) -> Any:
    try:
        return loads_strict(text)
    except DuplicateKeyError as exc:
        raise ManifestError([Issue("$", str(exc))]) from exc
    except ValueError as exc:
        raise ManifestError([Issue("$", f"not valid JSON: {exc}")]) from exc


def load(folder: Path, verdicts: Verdicts | None = None) -> Manifest:
    """Read and validate ``folder/manifest.json``; raise ManifestError listing every problem.

    ``verdicts``: the home's kept verdicts (``broker.verdicts``). A file whose exact bytes the
    schema found valid before is not validated by it again, and a valid one is kept; every
    other check runs all the same, so the manifest returned is the same with and without."""
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
    key = _verdict_key(data) if verdicts is not None else None
    known = verdicts is not None and key is not None and key in verdicts
    issues = _with_rules(raw, set() if known else set(_schema_issues(raw)))
    entry = raw.get("entry") if isinstance(raw, dict) else None
    if not issues and isinstance(entry, str) and not (folder / entry).is_file():
        issues.append(Issue("$.entry", f"{entry} does not exist in the extension folder"))
    if issues:
        raise ManifestError(issues)
    manifest = Manifest(raw, folder.resolve())
    manifest.connections  # noqa: B018 - parsed now, once, not at the first call
    if verdicts is not None and key is not None and not known:
        verdicts.add(key)
    return manifest


def _verdict_key(data: bytes) -> str | None:
    """What the verdict on a manifest file is kept under: a digest of everything the schema's
    validation reads; None when a version cannot be read (then no verdict is kept or used)."""
    helm, validator = installed_version("helm-desktop"), installed_version("jsonschema")
    if helm is None or validator is None:
        return None
    manifest = hashlib.sha256(data).hexdigest()
    return digest(
        {"manifest": manifest, "schema": _composed_schema()[1], "helm": helm, "jsonschema": validator}
    )
