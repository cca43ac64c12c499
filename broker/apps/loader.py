"""Helm's loader: the resource domains a user allowed at an app's review, fetched by Helm.

Helm's web engine has no route to the network (``ui.host.egress``). An app's frame asks for an
image, font, stylesheet, script or media file of an allowed resource domain; Helm's request
filter sends that request to the loader instead (``ui.apps.loader``), and the loader fetches it
here, on the broker's side, as a built-in call of the app (``broker.builtin``): the same
admission as every call of the app (the instance's rate limit and in-flight cap, the kill
switch) and one Activity record, its operation naming the origin (``load https://cdn.example``).
So Stop refuses every further load, and cancels one under way.

The loader is no open proxy: it fetches

* only URLs of the origins the user allowed (``meta.origin``, ``matches``), nothing else;
* only with GET, no body, no cookie (a jar that takes none), no ``Authorization`` (no
  ``.netrc`` or proxy from the environment), no referrer: the request carries ``Accept``,
  ``Accept-Encoding`` and Helm's ``User-Agent``, nothing the app wrote;
* following a redirect only to an allowed origin (each target checked again), at most
  ``MAX_REDIRECTS``;
* from a named domain, only at a public address: the name is resolved here, every address it
  has must be public (not loopback, private, link-local, shared or reserved), and the request
  goes to that address (the name in ``Host`` and TLS's SNI, the certificate checked against it),
  so a domain that rebinds its name to 127.0.0.1 or the local network between two loads reaches
  nothing there. An origin the review showed as an address (``http://127.0.0.1:8000``) or as
  ``localhost`` is that address, as the user allowed it;
* at most ``MAX_RESOURCE_BYTES`` (on the wire and decompressed), within ``LOAD_SECONDS``;
* a ``200`` answer whose type is one a subresource is (``RESOURCE_TYPES``: images, fonts, CSS,
  JavaScript, audio and video); HTML, JSON, text and the rest are refused. The frame gets the
  body with that type alone: no header of the server's (``Set-Cookie`` above all) reaches it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from broker.activity import Activity
from broker.apps import meta
from broker.builtin import APP_HOST_CONNECTION, Handler
from broker.context import CallContext
from broker.envelope import failure
from broker.errors import CallError, ErrorCode

if TYPE_CHECKING:  # the window imports this module; httpx waits until a load (test_start_imports)
    import httpx

MAX_RESOURCE_BYTES = 8 * 1024 * 1024
"""The largest resource the loader fetches (an app's HTML gets as much, ``meta.MAX_APP_BYTES``)."""
LOAD_SECONDS = 20.0
"""One load — connecting, every redirect, every byte — within this."""
CONNECT_SECONDS = 5.0
MAX_REDIRECTS = 5
CONNECTION = APP_HOST_CONNECTION
OPERATION = "load"
TYPE_PREFIXES = ("image/", "font/", "audio/", "video/")
RESOURCE_TYPES = frozenset(
    {"text/css", "text/javascript", "application/javascript", "application/x-javascript",
     "application/ecmascript", "text/ecmascript", "application/font-woff", "application/font-woff2",
     "application/x-font-woff", "application/x-font-ttf", "application/x-font-otf",
     "application/font-sfnt", "application/vnd.ms-fontobject", "application/ogg",
     "application/octet-stream", "application/wasm"}
)  # fmt: skip
"""Besides ``TYPE_PREFIXES``: what a subresource is served as. ``application/octet-stream`` is
what storage buckets give fonts; the frame gets every body with ``nosniff``, so a script or a
stylesheet of another type is not run or applied."""
REDIRECTS = frozenset({301, 302, 303, 307, 308})


def matches(source: str, scheme: str, host: str, port: int) -> bool:
    """Whether ``scheme://host:port`` (port -1 or 0: the scheme's default) is of ``source``, a
    plain origin (``meta.origin``: an optional ``*.`` before the host matches its subdomains)."""
    want_scheme, _, rest = source.partition("://")
    want_host, _, want_port = rest.partition(":")
    default = 443 if scheme == "https" else 80
    if want_scheme != scheme or (port if port > 0 else default) != (int(want_port) if want_port else default):
        return False
    if want_host.startswith("*."):
        return host.endswith(want_host[1:]) and host != want_host[2:]
    return host == want_host


def allowed_sources(domains: Iterable[str]) -> tuple[str, ...]:
    """The allowed resource domains that are plain origins (anything else stays blocked)."""
    return tuple(sorted({o for d in domains if (o := meta.origin(d)) is not None}))


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of an http(s) URL without user info; None for anything else."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or not host or "@" in parts.netloc:
        return None
    default = 443 if parts.scheme == "https" else 80
    return f"{parts.scheme}://{host}" + (f":{port}" if port not in (None, default) else "")


def allowed_origin(url: str, allowed: Iterable[str]) -> str | None:
    """The origin of ``url`` when it is one the user allowed, else None."""
    found = origin_of(url)
    if found is None:
        return None
    parts = urlsplit(found)
    port = parts.port or 0
    sources = allowed_sources(allowed)
    return found if any(matches(s, parts.scheme, parts.hostname or "", port) for s in sources) else None


def content_type(header: str) -> str | None:
    """The media type of a ``Content-Type`` a subresource may have, lower case; else None."""
    media = header.split(";")[0].strip().lower()
    return media if media in RESOURCE_TYPES or media.startswith(TYPE_PREFIXES) else None


@dataclass
class Loaded:
    """What one load brought: the body and its media type, for the frame (never in an envelope)."""

    body: bytes = b""
    media: str = ""
    redirects: list[str] = field(default_factory=list)


def new_client() -> httpx.AsyncClient:
    """The loader's client: no cookie jar, nothing from the environment, no redirect followed
    by itself (``broker.kinds.http.transport``)."""
    import httpx

    from broker.kinds.http import transport

    return transport.new_client("*/*", httpx.Timeout(LOAD_SECONDS, connect=CONNECT_SECONDS))


type Address = ipaddress.IPv4Address | ipaddress.IPv6Address


async def resolve(host: str, port: int) -> set[Address]:
    """Every address ``host`` has (the system's resolver, within ``CONNECT_SECONDS``)."""
    loop = asyncio.get_running_loop()
    async with asyncio.timeout(CONNECT_SECONDS):
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return {ipaddress.ip_address(str(info[4][0]).partition("%")[0]) for info in infos}


def is_public(address: Address) -> bool:
    """Whether ``address`` is on the public internet (an IPv4-mapped one judged as IPv4)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_global and not address.is_multicast


def named_by_address(host: str) -> bool:
    """Whether ``host`` is an address, or ``localhost``: what the user allowed is that address."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


async def pinned(url: str) -> tuple[str, dict[str, str], dict[str, Any]]:
    """Where to send a GET of ``url`` (an allowed origin's, ``origin_of`` not None): the URL
    with its host replaced by the one public address it goes to, the ``Host`` header and the
    TLS server name that keep the name. An origin named by its address is sent as it is."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if named_by_address(host):
        return url, {}, {}
    origin = origin_of(url)
    try:
        addresses = await resolve(host, parts.port or (443 if parts.scheme == "https" else 80))
    except TimeoutError:
        raise CallError(
            ErrorCode.TIMEOUT, f"the name of {origin} did not resolve within {CONNECT_SECONDS:g} s"
        ) from None
    except (OSError, ValueError):
        raise CallError(ErrorCode.UNAVAILABLE, f"the name of {origin} could not be resolved") from None
    if not addresses:
        raise CallError(ErrorCode.UNAVAILABLE, f"the name of {origin} could not be resolved")
    if not all(is_public(a) for a in addresses):
        raise CallError(
            ErrorCode.REFUSED,
            f"{origin} resolves to a local or private address; Helm loads a named resource "
            "domain only from public addresses",
        )
    address = min(addresses, key=lambda a: (a.version, int(a)))  # IPv4 first, then a fixed one
    netloc = f"[{address}]" if address.version == 6 else str(address)
    if parts.port is not None:
        netloc += f":{parts.port}"
    target = urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))
    headers = {"Host": parts.netloc.lower()}
    extensions: dict[str, Any] = {}
    if parts.scheme == "https":
        # Connections are pooled by address: one checked for another name at the same address
        # must not carry this load, so a TLS connection of a named domain serves one load.
        extensions["sni_hostname"] = host
        headers["Connection"] = "close"
    return target, headers, extensions


def operation(origin: str) -> str:
    """The operation of a load in Activity: ``load`` and the origin (never the path)."""
    return f"{OPERATION} {origin}"


def loader(client: httpx.AsyncClient, allowed: Iterable[str], into: Loaded) -> Handler:
    """The handler of one load: ``{url}`` → ``{type, bytes}``, the body left in ``into``."""
    sources = allowed_sources(allowed)

    async def load(args: Mapping[str, Any]) -> dict[str, Any]:
        from broker.kinds.http import transport

        url = args.get("url")
        if not isinstance(url, str) or allowed_origin(url, sources) is None:
            raise CallError(ErrorCode.REFUSED, "not a URL of a resource domain you allowed for this app")
        for _ in range(MAX_REDIRECTS + 1):
            target, host, extensions = await pinned(url)
            answer = await transport.exchange(
                client, "GET", target, headers=host, extensions=extensions, limit=MAX_RESOURCE_BYTES,
                seconds=LOAD_SECONDS, what=f"resource domain {origin_of(url)}",
            )  # fmt: skip
            if answer.status not in REDIRECTS:
                break
            target = urljoin(url, answer.location)
            if allowed_origin(target, sources) is None:
                where = origin_of(target) or "a URL that is not http(s)"
                raise CallError(
                    ErrorCode.REFUSED, f"it redirected to {where}, which is not allowed for this app"
                )
            into.redirects.append(target)
            url = target
        else:
            raise CallError(ErrorCode.REFUSED, f"more than {MAX_REDIRECTS} redirects")
        if answer.status != 200:
            raise CallError(ErrorCode.HTTP_ERROR, f"it answered {answer.status}", status=answer.status)
        media = content_type(answer.content_type)
        if media is None:
            shown = answer.content_type.split(";")[0].strip()[:100] or "no type"
            raise CallError(
                ErrorCode.REFUSED, f"it sent {shown!r}, not an image, font, style, script or media"
            )
        into.body, into.media = answer.body, media
        return {"type": media, "bytes": len(answer.body)}

    return load


def record_blocked(activity: Activity, ctx: CallContext, origin: str, why: str) -> None:
    """A load blocked before it reached the loader (the app's policy, the request filter): one
    ``refused`` record in Activity, through its one hook, naming the origin."""
    watch = activity.begin(ctx, CONNECTION, operation(origin))
    err = CallError(ErrorCode.REFUSED, f"Helm blocked a load from {origin}: {why}")
    activity.end(watch, failure("", err))
