"""Fixtures: a local npm registry with a small adapter published, and a catalogue signed for it
with a key generated for the test (the real signing key never exists on a test machine)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from broker.agents.provision import CatalogueSource, Host, InstallLimits, Options
from broker.agents.provision.signing import public_pem, sign
from tests.unit.agents.provision.npm_registry import LocalRegistry, Package, sri

HOST = Host.current()
OTHER_OS = "win32" if HOST.os != "win32" else "linux"

ENTRY_JS = """\
const greeting = require("@helm-test/greeting");
process.stdout.write(greeting.greet(process.argv[2] || "Helm"));
"""


@pytest.fixture
def registry() -> Iterator[LocalRegistry]:
    reg = LocalRegistry()
    reg.start()
    yield reg
    reg.stop()


@pytest.fixture
def key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def pin(path: str, package: Package, **extra: Any) -> dict[str, Any]:
    return {
        "path": path,
        "name": package.name,
        "version": package.version,
        "integrity": sri(package.data),
        **extra,
    }


def adapter_entry(root: Package, tree: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "title": "Echo",
        "package": root.name,
        "version": root.version,
        "integrity": sri(root.data),
        "entry": "index.js",
        "key_env": None,
        "tree": [pin(f"node_modules/{root.name}", root), *tree],
        **extra,
    }


def write_catalogue(folder: Path, key: Ed25519PrivateKey, adapters: dict[str, Any]) -> CatalogueSource:
    folder.mkdir(parents=True, exist_ok=True)
    data = (json.dumps({"format": 1, "adapters": adapters}, indent=2) + "\n").encode()
    (folder / "catalogue.json").write_bytes(data)
    (folder / "catalogue.sig").write_bytes(sign(data, key))
    (folder / "catalogue.pub").write_bytes(public_pem(key.public_key()))
    return CatalogueSource(folder / "catalogue.json", folder / "catalogue.sig", public_pem(key.public_key()))


@dataclass
class Demo:
    """An adapter ``echo`` (1.0.0) with one dependency and two platform packages, published."""

    registry: LocalRegistry
    key: Ed25519PrivateKey
    home: Path
    source: CatalogueSource
    entry: dict[str, Any]
    folder: Path

    def options(self, **limits: Any) -> Options:
        return Options(self.source, self.registry.url, InstallLimits(**limits) if limits else None)

    def resign(self, adapters: dict[str, Any]) -> None:
        self.source = write_catalogue(self.folder, self.key, adapters)


def publish_echo(registry: LocalRegistry, version: str = "1.0.0") -> dict[str, Any]:
    native_name, foreign_name = f"@helm-test/native-{HOST.os}", f"@helm-test/native-{OTHER_OS}"
    native = registry.publish(
        native_name, "1.0.0", {"bin/tool": b"\x7fELF-ish"}, os=[HOST.os], cpu=[HOST.cpu]
    )
    foreign = registry.publish(foreign_name, "1.0.0", {"bin/tool": b"MZ"}, os=[OTHER_OS])
    greeting = registry.publish(
        "@helm-test/greeting", "1.0.0", {"index.js": "exports.greet = (n) => `hello ${n}`;\n"}
    )
    root = registry.publish(
        "@helm-test/echo-acp",
        version,
        {"index.js": ENTRY_JS},
        bin={"echo-acp": "index.js"},
        dependencies={"@helm-test/greeting": "1.0.0"},
        optionalDependencies={native_name: "1.0.0", foreign_name: "1.0.0"},
    )
    return adapter_entry(
        root,
        [
            pin("node_modules/@helm-test/greeting", greeting),
            pin(f"node_modules/{native.name}", native, optional=True, os=[HOST.os], cpu=[HOST.cpu]),
            pin(f"node_modules/{foreign.name}", foreign, optional=True, os=[OTHER_OS]),
        ],
    )


@pytest.fixture
def demo(registry: LocalRegistry, key: Ed25519PrivateKey, tmp_path: Path) -> Demo:
    entry = publish_echo(registry)
    folder = tmp_path / "catalogue"
    source = write_catalogue(folder, key, {"echo": entry})
    return Demo(registry, key, tmp_path / "home", source, entry, folder)
