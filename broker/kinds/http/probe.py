"""The Test button of a token service: one GET to a path the user chooses (default ``/``).

It reports the HTTP status with its standard phrase, the TLS version and that the certificate
was accepted — or what stopped the request: a TLS problem in the TLS library's words (an
expired, self-signed or mismatched certificate), a timeout, no answer at all. The answer's body
is never read past its headers and never shown. The token goes into its header and nowhere
else: every text here is Helm's own, the status phrase is the standard one (never the
server's reason phrase, which could echo anything), and the TLS verdict names the certificate.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterator, Mapping
from http import HTTPStatus
from typing import TYPE_CHECKING

import httpx

from broker.errors import ProfileError
from broker.kinds.spec import Outcome

if TYPE_CHECKING:
    from broker.kinds.http.adapter import HttpKind

PROBE_SECONDS = 10.0
MAX_PATH_CHARS = 2048
NOT_SHOWN = "The answer's body is not shown."
TLS_REASONS = {
    "WRONG_VERSION_NUMBER": "the server does not speak TLS there (should the base URL be http://?)",
    "TLSV1_ALERT_PROTOCOL_VERSION": "the server speaks only an old TLS version",
    "SSLV3_ALERT_HANDSHAKE_FAILURE": "the server and Helm have no TLS cipher in common",
}
"""The TLS library's reasons for the failures people meet, in words; others are spelled out."""


def probe_url(base_url: str, path: str) -> tuple[str, str | None]:
    """The URL to GET (the base URL followed by ``path``), or what is wrong with ``path``."""
    if not path.startswith("/"):
        return "", "start the path with /"
    if len(path) > MAX_PATH_CHARS or any(c.isspace() or ord(c) < 32 or c == "#" for c in path):
        return "", "the path must be one line without spaces or #, at most 2048 characters"
    if any(seg in (".", "..") for seg in path.split("?")[0].split("/")):
        return "", "the path must not contain . or .. segments"
    url = base_url.rstrip("/") + path
    base, target = httpx.URL(base_url), httpx.URL(url)
    if (target.scheme, target.host, target.port) != (base.scheme, base.host, base.port):
        return "", "the path must stay on the service's base URL"
    return url, None


async def probe(kind: HttpKind, name: str, inputs: Mapping[str, str]) -> Outcome:
    """Settings → Services → Test: GET ``inputs["test_path"]`` with the service's token."""
    try:
        profile = kind.profiles.get(name)
    except ProfileError as err:
        return Outcome(False, str(err))
    if profile is None:
        return Outcome(False, f"no service profile named {name!r}")
    if profile.auth != "token":
        return Outcome(False, "Test checks a token service; an OAuth2 service is checked by Connect.")
    url, problem = probe_url(profile.base_url, inputs.get("test_path") or "/")
    if problem is not None:
        return Outcome(False, f"Cannot test that path: {problem}.")
    token = kind.profiles.secret(name, "token")
    headers = profile.signed(token)[0] if token else {}
    sent = f"Sent GET {url} " + (
        f"with the token in the {profile.token_header} header." if token else "without a token (none stored)."
    )
    outcome = await _get(kind.client(), url, headers)
    return Outcome(outcome.ok, outcome.message, (sent, *outcome.details, NOT_SHOWN))


async def _get(client: httpx.AsyncClient, url: str, headers: Mapping[str, str]) -> Outcome:
    try:
        async with asyncio.timeout(PROBE_SECONDS):
            response = await client.send(client.build_request("GET", url, headers=headers), stream=True)
            try:
                return _answered(response.status_code, _tls(response))
            finally:
                await response.aclose()  # the body is never read
    except TimeoutError:
        return Outcome(False, f"No answer within {PROBE_SECONDS:g} s.")
    except httpx.TimeoutException:
        return Outcome(False, f"No answer within {PROBE_SECONDS:g} s.")
    except (httpx.HTTPError, OSError) as exc:
        return _failed(exc)


def _answered(status: int, tls: str) -> Outcome:
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "(a status HTTP does not define)"
    said = f"HTTP {status} {phrase}"
    if 200 <= status < 300:
        return Outcome(True, f"The service answered: {said}.", (tls,))
    if status in (401, 403):
        hint = "the service refused the token: check it, and its header and format"
    elif 300 <= status < 400:
        hint = "a redirect, which Helm never follows: check the base URL"
    elif status == 404:
        hint = "nothing at that path: try a path the service's documentation names"
    else:
        hint = "the service answered with an error"
    return Outcome(False, f"{said}: {hint}.", (tls,))


def _tls(response: httpx.Response) -> str:
    stream = response.extensions.get("network_stream")
    tls = stream.get_extra_info("ssl_object") if stream is not None else None
    if not isinstance(tls, ssl.SSLObject):
        return "Not encrypted: plain http, allowed only on this computer."
    return f"TLS: {tls.version() or 'TLS'}, the certificate was accepted."


def _failed(exc: BaseException) -> Outcome:
    for cause in _causes(exc):
        if isinstance(cause, ssl.SSLCertVerificationError):
            return Outcome(False, f"TLS problem: the certificate was refused ({cause.verify_message}).")
        if isinstance(cause, ssl.SSLError):
            reason = cause.reason or "the handshake failed"
            return Outcome(
                False, f"TLS problem: {TLS_REASONS.get(reason, reason.replace('_', ' ').lower())}."
            )
    return Outcome(False, "The service could not be reached, or it broke off the connection.")


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: BaseException | None = exc
    for _ in range(10):  # a bounded walk down the chain of causes
        if seen is None:
            return
        yield seen
        seen = seen.__cause__ or seen.__context__
