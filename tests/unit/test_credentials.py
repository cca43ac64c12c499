"""The credential store: keychain when secure, else a 0600 file that Helm refuses when unsafe."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import keyring.backend
import pytest

from broker.credentials import FileStore, KeyringStore, open_store, secure_keyring_backend
from broker.errors import CredentialStoreError
from tests.support import REPO


def test_the_file_store_is_created_0600_and_round_trips(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "credentials.json")
    store.set("services/gh/token", "s3cret")
    assert stat.S_IMODE((tmp_path / "credentials.json").stat().st_mode) == 0o600
    assert FileStore(tmp_path / "credentials.json").get("services/gh/token") == "s3cret"
    store.delete("services/gh/token")
    assert store.get("services/gh/token") is None
    store.delete("never-set")  # deleting nothing is fine


def test_a_fallback_file_readable_by_others_is_refused(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "credentials.json")
    store.set("k", "v")
    os.chmod(tmp_path / "credentials.json", 0o644)
    with pytest.raises(CredentialStoreError, match="can be read by others") as info:
        store.get("k")
    assert "v" not in str(info.value).split("chmod")[0].replace(str(tmp_path), "")


def test_a_fallback_file_owned_by_someone_else_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "credentials.json"
    FileStore(path).set("k", "v")
    if os.getuid() != 0:
        pytest.skip("changing a file's owner needs root")
    os.chown(path, 65534, 65534)
    with pytest.raises(CredentialStoreError, match="another user"):
        FileStore(path).get("k")


def test_a_symlinked_fallback_file_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere.json"
    FileStore(real).set("k", "v")
    (tmp_path / "credentials.json").symlink_to(real)
    with pytest.raises(CredentialStoreError, match="not a regular file"):
        FileStore(tmp_path / "credentials.json").get("k")


class _Plaintext(keyring.backend.KeyringBackend):
    priority = 0.5  # type: ignore[assignment]

    def get_password(self, service: str, username: str) -> str | None:
        return None

    def set_password(self, service: str, username: str, password: str) -> None:
        raise AssertionError("an insecure backend must never receive a secret")

    def delete_password(self, service: str, username: str) -> None:
        return None


class _Secure(keyring.backend.KeyringBackend):
    priority = 5  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.data: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.data.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.data[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.data.pop((service, username), None)


def _use(monkeypatch: pytest.MonkeyPatch, backend: Any) -> None:
    monkeypatch.setattr(keyring, "get_keyring", lambda: backend)


def test_a_backend_below_priority_one_means_no_keychain(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _use(monkeypatch, _Plaintext())
    assert secure_keyring_backend() is None
    store = open_store(tmp_path)
    assert not store.is_keychain
    assert "0600" in store.description
    store.set("k", "v")  # goes to the file, never to the plaintext backend
    assert (tmp_path / "credentials.json").exists()


def test_a_secure_backend_is_used_and_namespaced_per_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    backend = _Secure()
    _use(monkeypatch, backend)
    a, b = open_store(tmp_path / "a"), open_store(tmp_path / "b")
    assert isinstance(a, KeyringStore) and a.is_keychain and "keychain" in a.description
    a.set("k", "from-a")
    assert b.get("k") is None
    assert a.get("k") == "from-a"
    assert not (tmp_path / "a" / "credentials.json").exists()


def test_the_real_secret_service_keychain_stores_secrets(tmp_path: Path) -> None:
    from tests.support import require

    require(
        os.environ.get("HELM_TEST_KEYRING") == "1",
        "a Secret Service keychain (gnome-keyring in a dbus session)",
    )
    store = open_store(tmp_path)
    assert store.is_keychain, store.description
    store.set("canary", "real-keychain-secret")
    assert open_store(tmp_path).get("canary") == "real-keychain-secret"
    store.delete("canary")
    assert store.get("canary") is None


FIND_LIBRARY_CALLS = """
import ctypes.util, sys
calls = []
real = ctypes.util.find_library
ctypes.util.find_library = lambda name: calls.append(name) or real(name)
from broker.credentials import secure_keyring_backend
backend = secure_keyring_backend()
print(type(backend).__name__, len(calls))
"""


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS's backend is the keychain there")
def test_finding_the_real_keychain_runs_no_library_search(tmp_path: Path) -> None:
    """keyring's macOS bindings search for macOS's libraries when imported (ldconfig, gcc and ld,
    three times): Helm keeps them unimported elsewhere and still finds the same keychain."""
    from tests.support import require

    require(
        os.environ.get("HELM_TEST_KEYRING") == "1",
        "a Secret Service keychain (gnome-keyring in a dbus session)",
    )
    out = subprocess.run(
        [sys.executable, "-c", FIND_LIBRARY_CALLS], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout.split()
    assert out == ["Keyring", "0"]
