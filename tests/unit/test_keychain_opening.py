"""The credential store the desktop starts with: looked up in a worker thread, used as the
store it finds once that is done."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from app.keychain import OpeningStore
from broker.credentials import CredentialStore, FileStore
from broker.errors import CredentialStoreError


def test_the_lookup_runs_in_its_own_thread_and_the_store_found_is_used(tmp_path: Path) -> None:
    threads: list[str] = []

    def opener() -> CredentialStore:
        threads.append(threading.current_thread().name)
        return FileStore(tmp_path / "credentials.json")

    store = OpeningStore(opener)
    store.start()
    store.set("service/x/token", "s3cret")
    assert store.get("service/x/token") == "s3cret"
    assert not store.is_keychain and "credentials.json" in store.description
    store.delete("service/x/token")
    assert store.get("service/x/token") is None
    assert threads == ["keychain"], "looked up once, not on the caller's thread"


def test_a_store_used_before_the_lookup_started_starts_it_and_waits(tmp_path: Path) -> None:
    store = OpeningStore(lambda: FileStore(tmp_path / "credentials.json"))
    assert store.get("absent") is None


def test_a_failed_lookup_fails_each_use_with_its_own_error() -> None:
    def opener() -> CredentialStore:
        raise CredentialStoreError("no store")

    store = OpeningStore(opener)
    store.start()
    with pytest.raises(CredentialStoreError, match="no store"):
        store.get("k")
