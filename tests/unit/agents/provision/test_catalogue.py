"""The signed catalogue: signature first, then every pin checked; nothing downloaded otherwise."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given
from hypothesis import strategies as st

from broker.agents import provision
from broker.agents.provision import CatalogueError, Host, SignatureError
from broker.agents.provision.signing import public_pem
from broker.agents.provision.store import Store
from tests.unit.agents.provision.conftest import Demo


def _flip_a_byte(demo: Demo) -> None:
    data = bytearray(demo.source.catalogue.read_bytes())
    at = data.index(b'"1.0.0"') + 1
    data[at] = ord("9")  # the pinned version changes: the signature no longer covers it
    demo.source.catalogue.write_bytes(bytes(data))


def _sign_with_another_key(demo: Demo) -> None:
    demo.key = Ed25519PrivateKey.generate()
    trusted = demo.source.public_key
    demo.resign({"echo": demo.entry})
    demo.source = replace(demo.source, public_key=trusted)


def _garble_signature(demo: Demo) -> None:
    demo.source.signature.write_text('{"algorithm": "ed25519", "key_id": "x", "signature": "!!"}')


def _remove_signature(demo: Demo) -> None:
    demo.source.signature.unlink()


def _trust_another_key(demo: Demo) -> None:
    demo.source = replace(demo.source, public_key=public_pem(Ed25519PrivateKey.generate().public_key()))


BAD_SIGNATURES = [
    _flip_a_byte,
    _sign_with_another_key,
    _garble_signature,
    _remove_signature,
    _trust_another_key,
]


@pytest.mark.parametrize("spoil", BAD_SIGNATURES, ids=lambda f: f.__name__.strip("_"))
async def test_a_bad_catalogue_signature_is_refused_before_any_download(demo: Demo, spoil: Any) -> None:
    spoil(demo)

    with pytest.raises(SignatureError, match=r"refus|does not verify"):
        await provision.add(demo.home, "echo", demo.options())
    assert demo.registry.requests == []
    assert not Store(demo.home).root.exists()


async def test_a_start_with_a_bad_signature_does_not_reprovision(demo: Demo) -> None:
    await provision.add(demo.home, "echo", demo.options())
    requests = len(demo.registry.requests)
    _flip_a_byte(demo)

    with pytest.raises(SignatureError):
        await provision.ensure(demo.home, "echo", demo.options())
    assert len(demo.registry.requests) == requests


def test_the_signature_error_names_both_keys(demo: Demo) -> None:
    _sign_with_another_key(demo)

    with pytest.raises(SignatureError, match=r"signed with key [0-9a-f]{16}, but this Helm trusts only key"):
        provision.load_catalogue(demo.source)


def test_every_malformed_pin_is_reported_with_its_path(demo: Demo) -> None:
    demo.entry["tree"][1]["integrity"] = "sha1-" + "A" * 27 + "="
    demo.entry["tree"][1]["path"] = "node_modules/../../etc"
    demo.entry["entry"] = "../outside.js"
    demo.resign({"echo": demo.entry})

    with pytest.raises(CatalogueError) as caught:
        provision.load_catalogue(demo.source)
    message = str(caught.value)
    assert "adapters.echo.tree[1].integrity" in message
    assert "adapters.echo.tree[1].path" in message
    assert "adapters.echo.entry" in message


def test_the_adapters_own_pin_must_match_its_tree(demo: Demo) -> None:
    demo.entry["version"] = "1.0.1"
    demo.resign({"echo": demo.entry})

    with pytest.raises(CatalogueError, match="must hold node_modules/@helm-test/echo-acp"):
        provision.load_catalogue(demo.source)


@pytest.mark.parametrize(
    ("spec", "found"),
    [("echo", "echo"), ("@helm-test/echo-acp", "echo"), ("@helm-test/echo-acp@1.0.0", "echo")],
)
def test_an_adapter_is_found_by_name_package_or_pinned_version(demo: Demo, spec: str, found: str) -> None:
    assert provision.load_catalogue(demo.source).find(spec).name == found


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("@helm-test/echo-acp@2.0.0", "pins @helm-test/echo-acp@1.0.0"),
        ("left-pad", "not in Helm's signed catalogue"),
    ],
)
def test_an_unpinned_spec_is_refused(demo: Demo, spec: str, message: str) -> None:
    with pytest.raises(CatalogueError, match=message):
        provision.load_catalogue(demo.source).find(spec)


async def test_a_required_package_for_another_platform_fails_before_download(demo: Demo) -> None:
    demo.entry["tree"][2]["optional"] = False
    demo.entry["tree"][3]["optional"] = False
    demo.resign({"echo": demo.entry})

    with pytest.raises(CatalogueError, match="does not support this machine"):
        await provision.add(demo.home, "echo", demo.options())
    assert demo.registry.tarball_requests() == []


def test_the_shipped_catalogue_verifies_with_the_shipped_key() -> None:
    catalogue = provision.load_catalogue()

    assert {"claude-code", "codex"} <= set(catalogue.adapters)
    for adapter in catalogue.adapters.values():
        assert adapter.tree_for(Host("linux", "x64", "glibc"))


@pytest.mark.parametrize(
    ("values", "mine", "allowed"),
    [
        ([], "linux", True),
        (["linux"], "linux", True),
        (["darwin", "win32"], "linux", False),
        (["!win32"], "linux", True),
        (["!linux"], "linux", False),
        (["!linux", "linux"], "linux", False),
    ],
)
def test_platform_constraints_follow_npm(values: list[str], mine: str, allowed: bool) -> None:
    assert Host(mine, "x64", "glibc").meets(values, [], []) is allowed


@given(st.lists(st.sampled_from(["linux", "darwin", "win32", "!linux", "!darwin"]), max_size=4))
def test_an_exclusion_of_this_platform_always_wins(values: list[str]) -> None:
    host = Host("linux", "x64", "glibc")
    if "!linux" in values:
        assert not host.meets(values, [], [])
