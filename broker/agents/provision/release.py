"""Building catalogue entries from npm lockfiles, for the release step that signs the catalogue.

The release step (``packaging/agents_catalogue.py``) asks npm to resolve each adapter's tree
(``npm install --package-lock-only --ignore-scripts``: nothing is run or even downloaded but the
metadata) and turns the lockfile into pins with this module. Everything npm recorded is kept
that Helm needs to install the same tree: each package's path, version, sha512 integrity,
whether it is optional, and its platform constraints. What Helm cannot pin is refused here,
at release time, rather than discovered on a user's machine.
"""

from __future__ import annotations

import json
from typing import Any

from broker.agents.provision.catalogue import PACKAGE_NAME, parse_catalogue
from broker.agents.provision.errors import CatalogueError

LOCKFILE_VERSIONS = (2, 3)


def catalogue_entry(source: dict[str, Any], lock: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The catalogue entry for one adapter of ``catalogue.in.json``, and warnings to read."""
    package = str(source["package"])
    packages = _packages(lock)
    root = packages.get(f"node_modules/{package}")
    if root is None:
        raise CatalogueError(f"{package}: the lockfile does not hold the package itself")
    tree, warnings = [], []
    for path, raw in sorted(packages.items()):
        if not path or raw.get("dev") or raw.get("inBundle"):
            continue  # the project itself, dev-only packages, and files inside another tarball
        tree.append(_pin(path, raw))
        if raw.get("hasInstallScript"):
            warnings.append(f"{path} has an install script, which Helm never runs: check it works without")
    entry = {
        "title": str(source.get("title", package)),
        "package": package,
        "version": str(root["version"]),
        "integrity": _sha512(root.get("integrity"), package),
        "entry": entry_script(root, package, source.get("bin")),
        "key_env": source.get("key_env"),
        "tree": tree,
    }
    return entry, warnings


def build_catalogue(entries: dict[str, dict[str, Any]]) -> bytes:
    """The catalogue file's bytes; parsed back, so a release never signs what Helm would refuse."""
    data = (json.dumps({"format": 1, "adapters": entries}, indent=2, ensure_ascii=False) + "\n").encode(
        "utf-8"
    )
    parse_catalogue(data, "")
    return data


def entry_script(root: dict[str, Any], package: str, bin_name: str | None) -> str:
    bins = root.get("bin") or {}
    if isinstance(bins, str):
        bins = {package.rpartition("/")[2]: bins}
    if bin_name is None and len(bins) == 1:
        bin_name = next(iter(bins))
    if bin_name not in bins:
        raise CatalogueError(f"{package}: name one of its executables with 'bin' ({', '.join(sorted(bins))})")
    return str(bins[bin_name]).removeprefix("./")


def _packages(lock: dict[str, Any]) -> dict[str, dict[str, Any]]:
    if lock.get("lockfileVersion") not in LOCKFILE_VERSIONS:
        raise CatalogueError(f"a lockfile of version {LOCKFILE_VERSIONS} is needed (npm 7 or later)")
    packages = lock.get("packages")
    if not isinstance(packages, dict):
        raise CatalogueError("the lockfile has no 'packages'")
    return packages


def _pin(path: str, raw: dict[str, Any]) -> dict[str, Any]:
    name = path.rpartition("node_modules/")[2]
    if raw.get("link") or not PACKAGE_NAME.match(name):
        raise CatalogueError(f"{path}: a linked or oddly named package cannot be pinned")
    if raw.get("name", name) != name:
        raise CatalogueError(f"{path}: an aliased package ({raw['name']}) cannot be pinned")
    resolved = str(raw.get("resolved", ""))  # npm leaves it out for its configured registry
    if resolved and not (resolved.endswith(".tgz") and resolved.startswith(("https://", "http://"))):
        raise CatalogueError(f"{path}: only registry tarballs can be pinned (resolved: {resolved!r})")
    pin: dict[str, Any] = {
        "path": path,
        "name": name,
        "version": str(raw["version"]),
        "integrity": _sha512(raw.get("integrity"), path),
    }
    if raw.get("optional"):
        pin["optional"] = True
    for field in ("os", "cpu", "libc"):
        if raw.get(field):
            pin[field] = list(raw[field])
    return pin


def _sha512(integrity: Any, where: str) -> str:
    tokens = str(integrity or "").split()
    sha512 = [t for t in tokens if t.startswith("sha512-")]
    if len(sha512) != 1:
        raise CatalogueError(
            f"{where}: the registry gives no sha512 integrity ({integrity!r}); it cannot be pinned"
        )
    return sha512[0]
