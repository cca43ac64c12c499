"""Helm's loader on its own: what it fetches from an allowed resource domain, and how, against a
real content server on 127.0.0.1 that records every request."""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from broker.apps import loader
from broker.errors import CallError, ErrorCode
from tests.servers.cdn import PIXEL, Cdn, cdn


@pytest.fixture(scope="module")
def allowed() -> Iterator[Cdn]:
    with cdn(big=loader.MAX_RESOURCE_BYTES + 1) as server:
        yield server


@pytest.fixture(scope="module")
def other() -> Iterator[Cdn]:
    with cdn() as server:
        yield server


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with loader.new_client() as made:
        yield made


async def load(client: httpx.AsyncClient, url: str, allowed: tuple[str, ...]) -> loader.Loaded:
    into = loader.Loaded()
    data = await loader.loader(client, allowed, into)({"url": url})
    assert data == {"type": into.media, "bytes": len(into.body)}
    return into


async def test_an_allowed_resource_loads_with_its_type_by_get_with_no_cookie_or_credentials(
    allowed: Cdn, client: httpx.AsyncClient
) -> None:
    first = await load(client, f"{allowed.origin}/pixel.png?a=1", (allowed.origin,))
    await load(client, f"{allowed.origin}/lib.js", (allowed.origin,))  # after a Set-Cookie
    assert (first.body, first.media) == (PIXEL, "image/png")
    sent = [s for s in allowed.seen if s.path in ("/pixel.png?a=1", "/lib.js")]
    assert [s.method for s in sent] == ["GET", "GET"]
    for seen in sent:
        assert not {"cookie", "authorization", "referer", "origin"} & seen.headers.keys()
        assert seen.headers["user-agent"] == "Helm"


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("{other}/pixel.png", id="another-origin"),
        pytest.param("http://user:secret@127.0.0.1:{port}/pixel.png", id="user-info"),
        pytest.param("ftp://127.0.0.1:{port}/pixel.png", id="not-http"),
        pytest.param("http://127.0.0.1:1{port}/pixel.png", id="another-port"),
    ],
)
async def test_a_url_of_no_allowed_origin_is_refused_unsent(
    url: str, allowed: Cdn, other: Cdn, client: httpx.AsyncClient
) -> None:
    before = len(allowed.seen) + len(other.seen)
    with pytest.raises(CallError) as refused:
        await load(client, url.format(other=other.origin, port=allowed.port), (allowed.origin,))
    assert refused.value.code is ErrorCode.REFUSED
    assert len(allowed.seen) + len(other.seen) == before


async def test_a_redirect_to_another_origin_is_refused_and_not_followed(
    allowed: Cdn, other: Cdn, client: httpx.AsyncClient
) -> None:
    allowed.hop_to = f"{other.origin}/pixel.png"
    with pytest.raises(CallError) as refused:
        await load(client, f"{allowed.origin}/hop.png", (allowed.origin,))
    assert refused.value.code is ErrorCode.REFUSED and other.origin in refused.value.message
    assert other.seen == []


async def test_a_redirect_within_allowed_origins_is_followed(
    allowed: Cdn, other: Cdn, client: httpx.AsyncClient
) -> None:
    allowed.hop_to = f"{other.origin}/pixel.png"
    loaded = await load(client, f"{allowed.origin}/hop.png", (allowed.origin, other.origin))
    assert loaded.body == PIXEL and loaded.redirects == [f"{other.origin}/pixel.png"]


async def test_a_resource_over_the_bound_is_too_large(allowed: Cdn, client: httpx.AsyncClient) -> None:
    with pytest.raises(CallError) as refused:
        await load(client, f"{allowed.origin}/big.png", (allowed.origin,))
    assert refused.value.code is ErrorCode.TOO_LARGE
    assert refused.value.message == "the response is larger than 8 MiB"


@pytest.mark.parametrize(
    ("path", "code"),
    [
        pytest.param("/page.html", ErrorCode.REFUSED, id="html-is-no-subresource"),
        pytest.param("/missing.png", ErrorCode.HTTP_ERROR, id="not-found"),
    ],
)
async def test_an_answer_that_is_no_subresource_is_refused(
    path: str, code: ErrorCode, allowed: Cdn, client: httpx.AsyncClient
) -> None:
    with pytest.raises(CallError) as refused:
        await load(client, f"{allowed.origin}{path}", (allowed.origin,))
    assert refused.value.code is code


@pytest.mark.parametrize(
    ("header", "media"),
    [
        ("image/svg+xml", "image/svg+xml"),
        ("text/css; charset=utf-8", "text/css"),
        ("Text/JavaScript", "text/javascript"),
        ("font/woff2", "font/woff2"),
        ("application/octet-stream", "application/octet-stream"),
        ("text/html", None),
        ("application/json", None),
        ("text/plain", None),
        ("", None),
    ],
)
def test_the_types_a_subresource_may_have(header: str, media: str | None) -> None:
    assert loader.content_type(header) == media


@pytest.mark.parametrize(
    ("url", "sources", "expected"),
    [
        ("https://cdn.example.com/a.js", ("https://cdn.example.com",), "https://cdn.example.com"),
        ("https://CDN.example.com:443/a.js", ("https://cdn.example.com",), "https://cdn.example.com"),
        ("https://a.cdn.example.com/x", ("https://*.cdn.example.com",), "https://a.cdn.example.com"),
        ("https://cdn.example.com/x", ("https://*.cdn.example.com",), None),
        ("https://cdn.example.com.evil.com/x", ("https://cdn.example.com",), None),
        ("http://cdn.example.com/x", ("https://cdn.example.com",), None),
        ("https://cdn.example.com:8443/x", ("https://cdn.example.com",), None),
        ("https://cdn.example.com/x", ("https://cdn.example.com/path",), None),
    ],
)
def test_which_urls_are_of_an_allowed_origin(
    url: str, sources: tuple[str, ...], expected: str | None
) -> None:
    assert loader.allowed_origin(url, sources) == expected


async def test_a_named_origin_is_fetched_at_the_address_it_resolved_to_with_its_name_as_host(
    allowed: Cdn, client: httpx.AsyncClient
) -> None:
    named = f"http://localhost:{allowed.port}"
    into = await load(client, f"{named}/pixel.png?via=name", (named,))
    seen = next(s for s in allowed.seen if s.path == "/pixel.png?via=name")
    assert into.body == PIXEL
    assert seen.headers["host"] == f"localhost:{allowed.port}"


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1", "10.1.2.3", "192.168.1.20", "172.16.0.9", "169.254.169.254", "100.64.0.1", "0.0.0.0",
     "::1", "fe80::1", "fd00::5", "::ffff:127.0.0.1", "224.0.0.251"],
)  # fmt: skip
async def test_a_named_domain_that_resolves_to_a_local_or_private_address_is_refused_unsent(
    address: str, allowed: Cdn, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A domain the user allowed that rebinds its name to this machine or its network: the
    # resolver is the one part replaced (no user's DNS does this on purpose), the server is real.
    async def rebinding(host: str, port: int) -> set[loader.Address]:
        return {ipaddress.ip_address("93.184.215.14"), ipaddress.ip_address(address)}

    monkeypatch.setattr(loader, "resolve", rebinding)
    named = f"https://cdn.example:{allowed.port}"  # refused before any connection
    before = len(allowed.seen)
    with pytest.raises(CallError) as refused:
        await load(client, f"{named}/pixel.png", (named,))
    assert refused.value.code is ErrorCode.REFUSED
    assert "resolves to a local or private address" in refused.value.message
    assert len(allowed.seen) == before


async def test_a_redirect_to_an_allowed_name_is_checked_at_its_address_too(
    allowed: Cdn, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def local(host: str, port: int) -> set[loader.Address]:
        return {ipaddress.ip_address("127.0.0.1")}

    monkeypatch.setattr(loader, "resolve", local)
    named = f"https://cdn.example:{allowed.port}"  # refused before any connection
    allowed.hop_to = f"{named}/pixel.png?after=hop"
    with pytest.raises(CallError) as refused:
        await load(client, f"{allowed.origin}/hop.png", (allowed.origin, named))
    assert "resolves to a local or private address" in refused.value.message
    assert "/pixel.png?after=hop" not in allowed.paths()


def test_only_public_addresses_are_public() -> None:
    public = ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "::ffff:93.184.215.14"]
    local = ["127.0.0.2", "10.0.0.1", "::", "::ffff:10.0.0.1", "ff02::1", "198.18.0.1", "240.0.0.1"]
    assert all(loader.is_public(ipaddress.ip_address(a)) for a in public)
    assert not any(loader.is_public(ipaddress.ip_address(a)) for a in local)
    hosts = ("127.0.0.1", "::1", "localhost", "a.localhost", "cdn.example")
    assert [loader.named_by_address(h) for h in hosts] == [True, True, True, True, False]
