"""The catalogue of known agent adapters: what Helm may install, pinned tarball by tarball.

Format (``catalogue.json``, format 1), signed as a whole (see ``signing``)::

    {
      "format": 1,
      "adapters": {
        NAME: {
          "title": "Claude Code",
          "package": "@zed-industries/claude-code-acp",
          "version": "0.16.2",
          "integrity": "sha512-…",            the package's own tarball
          "entry": "dist/index.js",           the script Node runs, inside the package
          "key_env": "ANTHROPIC_API_KEY",     the key variable the agent reads, or null
          "tree": [                           every tarball of the resolved dependency tree
            {"path": "node_modules/@zed-industries/claude-code-acp",
             "name": "@zed-industries/claude-code-acp", "version": "0.16.2",
             "integrity": "sha512-…", "optional": false, "os": [], "cpu": [], "libc": []},
            …
          ]
        }
      }
    }

``path`` is where the package lands under the install folder, exactly as in an npm lockfile;
the last ``node_modules/`` segment must be ``name`` (aliases are refused). An adapter's
``digest`` is the sha256 of its canonical JSON: a receipt records it, so an install made from
a different pin no longer counts as current.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from broker.agents.provision.errors import CatalogueError
from broker.agents.provision.host import Host
from broker.agents.provision.sri import Integrity

FORMAT = 1
_SEGMENT = r"[a-z0-9][a-z0-9._~-]{0,213}"
_PACKAGE = rf"(?:@{_SEGMENT}/)?{_SEGMENT}"
PACKAGE_NAME = re.compile(rf"^{_PACKAGE}$")
_TREE_PATH = re.compile(rf"^node_modules/({_PACKAGE})(?:/node_modules/({_PACKAGE}))*$")
ADAPTER_NAME = re.compile(r"^[a-z][a-z0-9-]{0,39}$")
_VERSION = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+(?:[-+][0-9A-Za-z.+-]{1,100})?$")
_ENTRY = re.compile(r"^(?!.*(?:^|/)\.\.?(?:/|$))[A-Za-z0-9._@+-]+(?:/[A-Za-z0-9._@+-]+)*$")
_ENV = re.compile(r"^[A-Z_][A-Z0-9_]{0,63}$")
_MAX_TREE = 5000


@dataclass(frozen=True)
class Pinned:
    """One tarball of an adapter's tree, and where it is extracted."""

    path: str
    name: str
    version: str
    integrity: Integrity
    optional: bool = False
    os: tuple[str, ...] = ()
    cpu: tuple[str, ...] = ()
    libc: tuple[str, ...] = ()

    def applies_to(self, host: Host) -> bool:
        return host.meets(self.os, self.cpu, self.libc)


@dataclass(frozen=True)
class Adapter:
    name: str
    title: str
    package: str
    version: str
    integrity: Integrity
    entry: str
    key_env: str | None
    tree: tuple[Pinned, ...]
    digest: str

    @property
    def package_path(self) -> str:
        return f"node_modules/{self.package}"

    def tree_for(self, host: Host) -> tuple[Pinned, ...]:
        """The tarballs to install here; a required package built for another platform fails."""
        chosen = []
        for pin in self.tree:
            if pin.applies_to(host):
                chosen.append(pin)
            elif not pin.optional:
                raise CatalogueError(
                    f"{self.name}: {pin.name}@{pin.version} does not support this machine "
                    f"({host.os}/{host.cpu}); this adapter cannot be installed here"
                )
        return tuple(chosen)


@dataclass(frozen=True)
class Catalogue:
    adapters: Mapping[str, Adapter]
    digest: str  # sha256 hex of the signed catalogue bytes

    def adapter(self, name: str) -> Adapter:
        try:
            return self.adapters[name]
        except KeyError:
            raise CatalogueError(f"no adapter named {name!r} in Helm's catalogue ({self.known()})") from None

    def known(self) -> str:
        return "known: " + (", ".join(sorted(self.adapters)) or "none")

    def find(self, spec: str) -> Adapter:
        """An adapter by its catalogue name, its package name, or ``package@version``."""
        if spec in self.adapters:
            return self.adapters[spec]
        package, version = split_spec(spec)
        for adapter in self.adapters.values():
            if adapter.package != package:
                continue
            if version is not None and version != adapter.version:
                raise CatalogueError(
                    f"Helm's catalogue pins {package}@{adapter.version}, not {version}: "
                    "only the pinned version can be verified"
                )
            return adapter
        raise CatalogueError(f"{spec!r} is not in Helm's signed catalogue of adapters ({self.known()})")


def split_spec(spec: str) -> tuple[str, str | None]:
    """``@scope/name@1.2.3`` → (``@scope/name``, ``1.2.3``); no version → None."""
    at = spec.rfind("@")
    if at > 0:
        return spec[:at], spec[at + 1 :]
    return spec, None


def parse_catalogue(data: bytes, digest: str) -> Catalogue:
    """Parse signed catalogue bytes; every problem is reported at once with its JSON path."""
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise CatalogueError(f"the adapter catalogue is not valid JSON ({exc})") from None
    issues: list[str] = []
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise CatalogueError(f"the adapter catalogue must be a JSON object with format {FORMAT}")
    adapters = raw.get("adapters")
    if not isinstance(adapters, dict):
        raise CatalogueError("the adapter catalogue's 'adapters' must be a JSON object")
    parsed = {}
    for name, entry in adapters.items():
        adapter = _adapter(str(name), entry, issues)
        if adapter is not None:
            parsed[adapter.name] = adapter
    if issues:
        raise CatalogueError("invalid adapter catalogue:\n" + "\n".join(issues))
    return Catalogue(parsed, digest)


def entry_digest(entry: Any) -> str:
    canonical = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _adapter(name: str, raw: Any, issues: list[str]) -> Adapter | None:
    where = f"adapters.{name}"
    if not isinstance(raw, dict):
        issues.append(f"{where}: must be a JSON object")
        return None
    before = len(issues)
    _check(ADAPTER_NAME.match(name), f"{where}: a name is lowercase letters, digits and '-'", issues)
    package = _text(raw, "package", PACKAGE_NAME, where, issues)
    version = _text(raw, "version", _VERSION, where, issues)
    integrity = _integrity(raw.get("integrity"), f"{where}.integrity", issues)
    entry = _text(raw, "entry", _ENTRY, where, issues)
    title = raw.get("title", name)
    _check(isinstance(title, str) and 0 < len(title) <= 80, f"{where}.title: 1 to 80 characters", issues)
    key_env = raw.get("key_env")
    _check(key_env is None or (isinstance(key_env, str) and _ENV.match(key_env)), f"{where}.key_env", issues)
    tree = _tree(raw.get("tree"), f"{where}.tree", issues)
    if len(issues) > before or integrity is None:
        return None
    adapter = Adapter(name, str(title), package, version, integrity, entry, key_env, tree, entry_digest(raw))
    _check_root(adapter, where, issues)
    return adapter


def _check_root(adapter: Adapter, where: str, issues: list[str]) -> None:
    root = [p for p in adapter.tree if p.path == adapter.package_path]
    ok = len(root) == 1 and root[0].version == adapter.version and root[0].integrity == adapter.integrity
    _check(
        ok, f"{where}.tree: must hold {adapter.package_path} at the adapter's version and integrity", issues
    )
    _check(
        not (root and root[0].optional), f"{where}.tree: the adapter's own package cannot be optional", issues
    )


def _tree(raw: Any, where: str, issues: list[str]) -> tuple[Pinned, ...]:
    if not isinstance(raw, list) or not 0 < len(raw) <= _MAX_TREE:
        issues.append(f"{where}: a list of 1 to {_MAX_TREE} pinned packages")
        return ()
    pins = []
    for i, item in enumerate(raw):
        pin = _pinned(item, f"{where}[{i}]", issues)
        if pin is not None:
            pins.append(pin)
    paths = [p.path for p in pins]
    _check(len(set(paths)) == len(paths), f"{where}: a path appears twice", issues)
    return tuple(pins)


def _pinned(raw: Any, where: str, issues: list[str]) -> Pinned | None:
    if not isinstance(raw, dict):
        issues.append(f"{where}: must be a JSON object")
        return None
    before = len(issues)
    path = _text(raw, "path", _TREE_PATH, where, issues)
    name = _text(raw, "name", PACKAGE_NAME, where, issues)
    version = _text(raw, "version", _VERSION, where, issues)
    integrity = _integrity(raw.get("integrity"), f"{where}.integrity", issues)
    _check(path.endswith(f"node_modules/{name}"), f"{where}.path: must end with node_modules/{name}", issues)
    optional = raw.get("optional", False)
    _check(isinstance(optional, bool), f"{where}.optional: true or false", issues)
    fields = {f: _names(raw.get(f, []), f"{where}.{f}", issues) for f in ("os", "cpu", "libc")}
    if len(issues) > before or integrity is None:
        return None
    return Pinned(path, name, version, integrity, bool(optional), fields["os"], fields["cpu"], fields["libc"])


def _text(raw: dict[str, Any], key: str, pattern: re.Pattern[str], where: str, issues: list[str]) -> str:
    value = raw.get(key)
    if isinstance(value, str) and pattern.match(value):
        return value
    issues.append(f"{where}.{key}: missing or malformed ({value!r:.80})")
    return ""


def _integrity(value: Any, where: str, issues: list[str]) -> Integrity | None:
    try:
        return Integrity.parse(value)
    except ValueError as exc:
        issues.append(f"{where}: {exc}")
        return None


def _names(value: Any, where: str, issues: list[str]) -> tuple[str, ...]:
    ok = isinstance(value, list) and all(
        isinstance(v, str) and re.match(r"^!?[a-z0-9_]{1,20}$", v) for v in value
    )
    _check(ok, f"{where}: a list of platform names", issues)
    return tuple(value) if ok else ()


def _check(condition: object, message: str, issues: list[str]) -> None:
    if not condition:
        issues.append(message)
