"""Why a connection to a server failed, in words for the user: refused, DNS, TLS, timeout.

"unavailable" alone names nothing. The kinds say which service, server or database failed and
``cause`` adds why, read from the exception chain a network library raised. It never quotes the
exception's own text, which can hold a URL, a host name or a server's words.
"""

from __future__ import annotations

import errno
import socket
import ssl

REFUSED = "the connection was refused (nothing listens there, or a firewall said no)"
DNS = "its host name could not be found (DNS)"
TLS_CERTIFICATE = "its TLS certificate was not accepted"
TLS = "the TLS handshake failed"
TIMED_OUT = "the connection timed out"
RESET = "the connection was cut off"
UNREACHABLE = "the network or the host cannot be reached"
UNKNOWN = "it could not be reached"

_ERRNO = {
    errno.ECONNREFUSED: REFUSED,
    errno.ETIMEDOUT: TIMED_OUT,
    errno.ECONNRESET: RESET,
    errno.EPIPE: RESET,
    errno.ECONNABORTED: RESET,
    errno.ENETUNREACH: UNREACHABLE,
    errno.EHOSTUNREACH: UNREACHABLE,
    errno.ENETDOWN: UNREACHABLE,
}


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 20:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _one(exc: BaseException) -> str | None:
    if isinstance(exc, ssl.SSLCertVerificationError):
        return TLS_CERTIFICATE
    if isinstance(exc, ssl.SSLError):
        return TLS
    if isinstance(exc, socket.gaierror):
        return DNS
    if isinstance(exc, ConnectionRefusedError):
        return REFUSED
    if isinstance(exc, TimeoutError):
        return TIMED_OUT
    if isinstance(exc, ConnectionResetError | BrokenPipeError | ConnectionAbortedError):
        return RESET
    if isinstance(exc, OSError) and exc.errno in _ERRNO:
        return _ERRNO[exc.errno]
    return None


def cause(exc: BaseException) -> str:
    """The first cause in ``exc``'s chain that Helm can name (``UNKNOWN`` when none)."""
    for link in _chain(exc):
        named = _one(link)
        if named is not None:
            return named
    return UNKNOWN
