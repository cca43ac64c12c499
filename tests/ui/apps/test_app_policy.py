"""Where an app's frames may go and what they may load: the pure decisions."""

from __future__ import annotations

import pytest

from ui.apps.policy import APP_PATH, app_csp, app_hosts, decide_navigation, decide_request

HOSTS = app_hosts("ws", "mcp-app.board.0123456789ab")
IMAGE = "ResourceTypeImage"
XHR = "ResourceTypeXhr"
CDN = "https://cdn.example.com"
WILD = "https://*.cdn.example.com"


def test_the_two_frames_of_an_app_have_different_origins_and_differ_per_workspace() -> None:
    other = app_hosts("ws2", "mcp-app.board.0123456789ab")
    assert HOSTS.page != HOSTS.app
    assert {HOSTS.page, HOSTS.app}.isdisjoint({other.page, other.app})


@pytest.mark.parametrize(
    ("scheme", "host", "port", "kind", "allowed", "expected"),
    [
        pytest.param("helm-ext", HOSTS.app, -1, "ResourceTypeSubFrame", (), True, id="own-app"),
        pytest.param("helm-ext", "0" * 32, -1, IMAGE, (), False, id="another-extension"),
        pytest.param("http", "127.0.0.1", 9, XHR, ("http://127.0.0.1:9",), False, id="connect-never"),
        pytest.param("https", "cdn.example.com", -1, IMAGE, (), False, id="resource-not-allowed"),
        pytest.param("https", "cdn.example.com", -1, IMAGE, (CDN,), True, id="allowed-image"),
        pytest.param("https", "cdn.example.com", -1, XHR, (CDN,), False,
                     id="allowed-domain-but-fetch"),
        pytest.param("https", "a.cdn.example.com", -1, IMAGE, (WILD,), True, id="wildcard"),
        pytest.param("https", "cdn.example.com", -1, IMAGE, (WILD,), False, id="wildcard-not-apex"),
        pytest.param("https", "cdn.example.com", 8443, IMAGE, (CDN,), False, id="other-port"),
        pytest.param("https", "evil.com", -1, IMAGE, ("https://evil.com; img-src *",), False, id="odd"),
    ],
)  # fmt: skip
def test_requests_of_an_app(
    scheme: str, host: str, port: int, kind: str, allowed: tuple[str, ...], expected: bool
) -> None:
    assert decide_request(scheme, host, port, kind, HOSTS, allowed).allowed is expected


def test_the_app_csp_has_no_network_and_only_allowed_resource_domains() -> None:
    csp = app_csp(HOSTS, ("https://cdn.example.com", "https://x.com; connect-src *"))
    directives = dict(d.split(" ", 1) for d in csp.split("; "))
    assert directives["connect-src"] == "'none'"
    assert directives["frame-src"] == "'none'"
    assert directives["img-src"] == "data: blob: https://cdn.example.com"
    assert "x.com" not in csp
    assert directives["frame-ancestors"] == f"helm-ext://{HOSTS.page}"


@pytest.mark.parametrize(
    ("scheme", "host", "path", "main", "expected"),
    [
        pytest.param("helm-ext", HOSTS.page, "/", True, True, id="host-page"),
        pytest.param("helm-ext", HOSTS.app, APP_PATH, False, True, id="app-in-its-frame"),
        pytest.param("helm-ext", HOSTS.app, APP_PATH, True, False, id="app-as-main-frame"),
        pytest.param("helm-ext", HOSTS.page, "/", False, False, id="host-page-in-a-frame"),
        pytest.param("https", "example.com", "/", False, False, id="frame-elsewhere"),
        pytest.param("about", "", "blank", False, False, id="about-blank"),
    ],
)
def test_navigation_of_an_app(scheme: str, host: str, path: str, main: bool, expected: bool) -> None:
    assert decide_navigation(scheme, host, path, main, HOSTS).allowed is expected
