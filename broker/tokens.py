"""One-time confirmation tokens for writes.

A token is minted when Helm describes a write and is bound to the workspace, extension,
connection, operation and the digest of the exact request (``WriteDetails.binding``). It is
valid for five minutes (or the lifetime it was minted with) and can be used once. Redeeming
returns a decision, never raises.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

TOKEN_TTL_SECONDS = 300.0
MAX_PENDING = 1024


@dataclass(frozen=True, slots=True)
class Binding:
    workspace: str
    extension: str
    connection: str
    operation: str
    request_digest: str


class Redemption(StrEnum):
    VALID = "valid"
    UNKNOWN = "unknown"  # never minted, already used, or evicted
    EXPIRED = "expired"
    MISMATCH = "mismatch"  # minted for another call or other arguments


@dataclass(frozen=True, slots=True)
class _UnredeemedToken:
    binding: Binding
    expires: float


class TokenBook:
    """Mints and redeems tokens; the clock is injectable for tests."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, ttl: float = TOKEN_TTL_SECONDS) -> None:
        self._clock = clock
        self._ttl = ttl
        self._pending: dict[str, _UnredeemedToken] = {}

    def mint(self, binding: Binding, ttl: float | None = None) -> tuple[str, float]:
        """A new token for ``binding`` and the number of seconds it stays valid (``ttl``, or
        the book's five minutes)."""
        self._evict()
        token = secrets.token_urlsafe(32)
        lifetime = self._ttl if ttl is None else ttl
        self._pending[token] = _UnredeemedToken(binding, self._clock() + lifetime)
        return token, lifetime

    def redeem(self, token: str, binding: Binding) -> Redemption:
        """Use ``token`` for ``binding``. Any redemption attempt consumes the token."""
        pending = self._pending.pop(token, None)
        if pending is None:
            return Redemption.UNKNOWN
        if self._clock() >= pending.expires:
            return Redemption.EXPIRED
        if not secrets.compare_digest(_key(pending.binding), _key(binding)):
            return Redemption.MISMATCH
        return Redemption.VALID

    def expired(self, token: str) -> bool:
        pending = self._pending.get(token)
        return pending is None or self._clock() >= pending.expires

    def discard(self, token: str) -> None:
        self._pending.pop(token, None)

    def _evict(self) -> None:
        now = self._clock()
        for tok in [t for t, p in self._pending.items() if now >= p.expires]:
            del self._pending[tok]
        while len(self._pending) >= MAX_PENDING:
            del self._pending[next(iter(self._pending))]


def _key(b: Binding) -> str:
    return "\x00".join((b.workspace, b.extension, b.connection, b.operation, b.request_digest))
