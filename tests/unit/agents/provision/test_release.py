"""The release step: npm resolves an adapter's tree, the script pins and signs it, Helm installs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from broker.agents import provision
from broker.agents.provision import CatalogueError, CatalogueSource, Options
from broker.agents.provision.release import catalogue_entry
from broker.agents.provision.signing import public_pem
from tests.support import require
from tests.unit.agents.provision.conftest import HOST, OTHER_OS, publish_echo
from tests.unit.agents.provision.npm_registry import LocalRegistry

ROOT = Path(__file__).resolve().parents[4]
SCRIPT = ROOT / "packaging" / "agents_catalogue.py"


def _script(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], input=stdin, capture_output=True, timeout=120, cwd=ROOT
    )


def _pem(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


async def test_a_catalogue_resolved_and_signed_by_the_release_script_installs(
    registry: LocalRegistry, key: Ed25519PrivateKey, tmp_path: Path
) -> None:
    require("npm", "the release step resolves trees with npm")
    publish_echo(registry)
    source = {"echo": {"title": "Echo", "package": "@helm-test/echo-acp", "version": "1.0.0"}}
    (tmp_path / "in.json").write_text(json.dumps({"adapters": source}))
    (tmp_path / "catalogue.pub").write_bytes(public_pem(key.public_key()))
    out = tmp_path / "catalogue.json"

    resolved = _script(
        "resolve", "--input", str(tmp_path / "in.json"), "--output", str(out), "--registry", registry.url
    )
    assert resolved.returncode == 0, resolved.stderr.decode()
    signed = _script(
        "sign",
        "--key-file",
        "-",
        "--catalogue",
        str(out),
        "--public-key",
        str(tmp_path / "catalogue.pub"),
        stdin=_pem(key),
    )
    assert signed.returncode == 0, signed.stderr.decode()

    catalogue = CatalogueSource(out, tmp_path / "catalogue.sig", public_pem(key.public_key()))
    added = await provision.add(tmp_path / "home", "echo", Options(catalogue, registry.url))
    assert added.adapter.entry == "index.js"
    platforms = {p.name: (p.os, p.optional) for p in added.adapter.tree if p.os}
    assert platforms == {
        f"@helm-test/native-{HOST.os}": ((HOST.os,), True),
        f"@helm-test/native-{OTHER_OS}": ((OTHER_OS,), True),
    }
    assert added.installed.tarballs == 3


def test_signing_with_a_key_helm_does_not_ship_fails_and_writes_no_signature(
    key: Ed25519PrivateKey, tmp_path: Path
) -> None:
    (tmp_path / "catalogue.json").write_text('{"format": 1, "adapters": {}}\n')
    (tmp_path / "catalogue.pub").write_bytes(public_pem(Ed25519PrivateKey.generate().public_key()))
    key_file = tmp_path / "key.pem"
    key_file.write_bytes(_pem(key))

    result = _script(
        "sign", "--key-file", str(key_file), "--catalogue", str(tmp_path / "catalogue.json"),
        "--public-key", str(tmp_path / "catalogue.pub"),
    )  # fmt: skip

    assert result.returncode == 1
    assert b"this Helm trusts only key" in result.stderr
    assert not (tmp_path / "catalogue.sig").exists()


def test_keygen_writes_a_private_key_only_its_owner_reads(tmp_path: Path) -> None:
    result = _script(
        "keygen", "--private-out", str(tmp_path / "k.pem"), "--public-out", str(tmp_path / "k.pub")
    )

    assert result.returncode == 0
    assert (tmp_path / "k.pem").stat().st_mode & 0o777 == 0o600
    assert b"PRIVATE" not in result.stdout + (tmp_path / "k.pub").read_bytes()
    assert _script("keygen", "--private-out", str(tmp_path / "k.pem")).returncode != 0, "never overwritten"


def _lock(**extra: Any) -> dict[str, Any]:
    sha = "sha512-" + "A" * 86 + "=="
    return {
        "lockfileVersion": 3,
        "packages": {
            "": {"name": "x"},
            "node_modules/a": {"version": "1.0.0", "integrity": sha, "bin": {"a": "./cli.js"}},
            **extra,
        },
    }


@pytest.mark.parametrize(
    ("package", "message"),
    [
        ({"version": "1.0.0", "integrity": "sha1-" + "A" * 27 + "="}, "no sha512 integrity"),
        ({"name": "evil", "version": "1.0.0", "integrity": "sha512-" + "A" * 86 + "=="}, "aliased"),
        ({"version": "1.0.0", "resolved": "git+ssh://git@example.com/b.git#abc"}, "only registry tarballs"),
    ],
)
def test_a_lockfile_entry_helm_cannot_pin_is_refused_at_release(
    package: dict[str, Any], message: str
) -> None:
    with pytest.raises(CatalogueError, match=message):
        catalogue_entry({"package": "a", "version": "1.0.0"}, _lock(**{"node_modules/b": package}))


def test_bundled_and_dev_packages_are_not_pinned_and_install_scripts_are_flagged() -> None:
    sha = "sha512-" + "B" * 86 + "=="
    lock = _lock(**{
        "node_modules/a/node_modules/inside": {"version": "1.0.0", "inBundle": True},
        "node_modules/devonly": {"version": "1.0.0", "dev": True, "integrity": sha},
        "node_modules/native": {"version": "1.0.0", "integrity": sha, "hasInstallScript": True},
    })  # fmt: skip

    entry, warnings = catalogue_entry({"package": "a", "version": "1.0.0"}, lock)

    assert [p["path"] for p in entry["tree"]] == ["node_modules/a", "node_modules/native"]
    assert entry["entry"] == "cli.js"
    assert warnings == [
        "node_modules/native has an install script, which Helm never runs: check it works without"
    ]
