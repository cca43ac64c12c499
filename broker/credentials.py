"""Where Helm keeps secrets: the OS keychain, or a 0600 file when there is none.

Secrets are addressed by key (``service/github/token``, ``db/local/password``…). The keychain
is used through ``keyring`` when its active backend is secure — a backend with priority below
1 (plaintext, null, "fail") is treated as no keychain. The fallback is
``<home>/credentials.json``, created 0600; Helm refuses to use one whose mode lets others
read it or whose owner is someone else, rather than silently reading or fixing it.

Nothing here logs or echoes a secret; error messages name the key, never the value.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import threading
from pathlib import Path
from typing import Protocol

from broker.atomic import write_atomic
from broker.errors import CredentialStoreError
from broker.jsonutil import loads_strict


class CredentialStore(Protocol):
    """Get, set and delete secrets by key."""

    @property
    def description(self) -> str:
        """Which store is in use, in words a user understands."""
        ...

    @property
    def is_keychain(self) -> bool: ...

    def get(self, key: str) -> str | None: ...

    def set(self, key: str, secret: str) -> None: ...

    def delete(self, key: str) -> None: ...


class KeyringStore:
    """The OS keychain via ``keyring``, namespaced per Helm home."""

    is_keychain = True

    def __init__(self, home: Path, backend: object) -> None:
        self._backend = backend
        digest = hashlib.sha256(str(home.resolve()).encode()).hexdigest()[:12]
        self._service = f"helm:{digest}"
        self.description = f"OS keychain ({type(backend).__name__})"

    def get(self, key: str) -> str | None:
        try:
            value = self._backend.get_password(self._service, key)  # type: ignore[attr-defined]
        except Exception as exc:
            raise CredentialStoreError(f"the keychain could not read {key!r}") from exc
        return None if value is None else str(value)

    def set(self, key: str, secret: str) -> None:
        try:
            self._backend.set_password(self._service, key, secret)  # type: ignore[attr-defined]
        except Exception as exc:
            raise CredentialStoreError(f"the keychain could not store {key!r}") from exc

    def delete(self, key: str) -> None:
        import keyring.errors

        try:
            self._backend.delete_password(self._service, key)  # type: ignore[attr-defined]
        except keyring.errors.PasswordDeleteError:
            return
        except Exception as exc:
            raise CredentialStoreError(f"the keychain could not delete {key!r}") from exc


class FileStore:
    """``credentials.json`` in the Helm home, 0600, owned by the user, written atomically."""

    is_keychain = False

    def __init__(self, path: Path) -> None:
        self.path = path
        self.description = f"file {path} (0600) — no secure OS keychain was found"
        self._lock = threading.Lock()

    def _check(self) -> None:
        try:
            st = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            return
        if not stat.S_ISREG(st.st_mode):
            raise CredentialStoreError(f"{self.path} is not a regular file; Helm will not use it")
        if st.st_uid != os.getuid():
            raise CredentialStoreError(f"{self.path} belongs to another user; Helm will not use it")
        if st.st_mode & 0o077:
            raise CredentialStoreError(
                f"{self.path} can be read by others (mode {stat.S_IMODE(st.st_mode):o}); "
                "Helm will not use it. Check who read it, rotate the secrets in it, then "
                "run: chmod 600 " + str(self.path)
            )

    def _load(self) -> dict[str, str]:
        self._check()
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            reason = (
                "is not UTF-8" if isinstance(exc, UnicodeDecodeError) else f"cannot be read ({exc.strerror})"
            )
            raise CredentialStoreError(f"{self.path} {reason}; it was left as it is") from exc
        try:
            data = loads_strict(text)
        except ValueError as exc:
            raise CredentialStoreError(
                f"{self.path} is not valid JSON ({exc}); it was left as it is"
            ) from exc
        secrets = data.get("secrets") if isinstance(data, dict) else None
        if not isinstance(secrets, dict) or not all(isinstance(v, str) for v in secrets.values()):
            raise CredentialStoreError(f"{self.path} is malformed; it was left as it is")
        return secrets

    def _save(self, secrets: dict[str, str]) -> None:
        data = json.dumps({"version": 1, "secrets": secrets}, indent=2, sort_keys=True)
        write_atomic(self.path, data.encode("utf-8"), mode=0o600)

    def get(self, key: str) -> str | None:
        with self._lock:
            return self._load().get(key)

    def set(self, key: str, secret: str) -> None:
        with self._lock:
            secrets = self._load()
            secrets[key] = secret
            self._save(secrets)

    def delete(self, key: str) -> None:
        with self._lock:
            secrets = self._load()
            if secrets.pop(key, None) is not None:
                self._save(secrets)


def secure_keyring_backend() -> object | None:
    """The active keyring backend if it is secure (priority >= 1), else None."""
    skip_macos_api()
    try:
        import keyring
        import keyring.backends.chainer

        backend = keyring.get_keyring()
        if isinstance(backend, keyring.backends.chainer.ChainerBackend):
            usable: list[object] = [b for b in backend.backends if _priority(b) >= 1]
            return usable[0] if usable else None
        return backend if _priority(backend) >= 1 else None
    except Exception:  # noqa: BLE001 - a broken keyring install means "no keychain"
        return None


MACOS_API = "keyring.backends.macOS.api"


def skip_macos_api() -> None:
    """Elsewhere than on macOS, keep keyring from importing its macOS backend's bindings.

    Finding a backend imports every backend, and those bindings look for macOS's libraries with
    ``ctypes.util.find_library``, which on Linux runs ldconfig, gcc and ld three times over: 40
    processes, about 0.3 s of both cores, at each start and each command that reads a secret.
    That backend cannot work off macOS anyway (its priority raises either way), so an import
    that fails at once (``sys.modules[name] = None``) finds the same backend."""
    if sys.platform != "darwin":
        sys.modules.setdefault(MACOS_API, None)  # type: ignore[arg-type]  # None: "cannot import"


def _priority(backend: object) -> float:
    try:
        return float(backend.priority)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - priority raises when the backend is unusable
        return -1.0


def open_store(home: Path, *, use_keychain: bool = True) -> CredentialStore:
    """The best available store for ``home``: the keychain if secure, else the 0600 file."""
    backend = secure_keyring_backend() if use_keychain else None
    if backend is not None:
        return KeyringStore(home, backend)
    return FileStore(home / "credentials.json")
