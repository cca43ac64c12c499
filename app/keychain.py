"""The credential store, looked up in a worker thread while the window comes up.

Finding the keychain means importing ``keyring`` with every backend it knows and asking D-Bus
which one answers: a tenth of a second the window need not wait for, since nothing reads a
secret before a frame calls or Settings opens. ``OpeningStore`` is the store at once; the
lookup runs in its own thread, and the first use waits for it (a moment at most, at start-up).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future

from broker.credentials import CredentialStore

OPEN_SECONDS = 30.0
"""Longest the first use waits for the lookup (a keychain that does not answer D-Bus)."""


class OpeningStore:
    """A ``CredentialStore`` whose real store is opened by ``opener`` in a worker thread."""

    def __init__(self, opener: Callable[[], CredentialStore]) -> None:
        self._store: Future[CredentialStore] = Future()
        self._thread = threading.Thread(target=self._open, args=(opener,), name="keychain", daemon=True)
        self._starting = threading.Lock()
        self._started = False

    def start(self) -> None:
        """Begin the lookup (once; later calls do nothing)."""
        with self._starting:
            if not self._started:
                self._started = True
                self._thread.start()

    def _open(self, opener: Callable[[], CredentialStore]) -> None:
        try:
            self._store.set_result(opener())
        except Exception as exc:  # noqa: BLE001 - the first use raises it, whatever it is
            self._store.set_exception(exc)

    def opened(self) -> CredentialStore:
        """The store, once the lookup is done (started here if nothing started it yet)."""
        self.start()
        return self._store.result(timeout=OPEN_SECONDS)

    @property
    def description(self) -> str:
        return self.opened().description

    @property
    def is_keychain(self) -> bool:
        return self.opened().is_keychain

    def get(self, key: str) -> str | None:
        return self.opened().get(key)

    def set(self, key: str, secret: str) -> None:
        self.opened().set(key, secret)

    def delete(self, key: str) -> None:
        self.opened().delete(key)
