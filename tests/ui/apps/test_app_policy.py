"""Where an app's frames may go and what they may load: the pure decisions."""

from __future__ import annotations

import pytest

from ui.apps.policy import (
    APP_PATH,
    REPORT_PATH,
    app_csp,
    app_hosts,
    decide_navigation,
    decide_request,
    loaded_url,
    loader_url,
)

HOSTS = app_hosts("ws", "mcp-app.board.0123456789ab")
IMAGE = "ResourceTypeImage"
XHR = "ResourceTypeXhr"
CDN = "https://cdn.example.com"
WILD = "https://*.cdn.example.com"


def test_the_two_frames_of_an_app_have_different_origins_and_differ_per_workspace() -> None:
    other = app_hosts("ws2", "mcp-app.board.0123456789ab")
    assert len({HOSTS.page, HOSTS.app, HOSTS.loader}) == 3
    assert {HOSTS.page, HOSTS.app, HOSTS.loader}.isdisjoint({other.page, other.app, other.loader})


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
        pytest.param("helm-load", HOSTS.loader, -1, IMAGE, (), True, id="own-loader"),
        pytest.param("helm-load", "0" * 32, -1, IMAGE, (CDN,), False, id="another-apps-loader"),
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
    loader = f"helm-load://{HOSTS.loader}"
    for name, local in (("img-src", "data: blob:"), ("font-src", "data:"), ("media-src", "data: blob:")):
        assert directives[name] == f"{local} https://cdn.example.com {loader}"
    assert "x.com" not in csp
    assert directives["frame-ancestors"] == f"helm-ext://{HOSTS.page}"
    assert directives["report-uri"] == f"{loader}{REPORT_PATH}"


def test_the_app_csp_starts_no_worker() -> None:
    # A worker's importScripts of an allowed domain would go to the loader like the page's own
    # script (tests/e2e/apps/test_app_workers.py), so workers stay closed with domains allowed too.
    for allowed in ((), (CDN,)):
        directives = dict(d.split(" ", 1) for d in app_csp(HOSTS, allowed).split("; "))
        assert (directives["worker-src"], directives["child-src"]) == ("'none'", "'none'")


def test_an_app_with_no_allowed_domain_has_no_loader_in_its_policy() -> None:
    directives = dict(d.split(" ", 1) for d in app_csp(HOSTS, ()).split("; "))
    assert directives["img-src"] == "data: blob:"
    assert "helm-load" not in directives["script-src"]


def test_an_allowed_get_goes_to_the_loader_with_its_whole_url() -> None:
    url = f"{CDN}/lib/a%20b.js?v=1&x=%2F"
    decision = decide_request("https", "cdn.example.com", -1, "ResourceTypeScript", HOSTS, (CDN,), url)
    assert decision.allowed and decision.redirect.startswith(f"helm-load://{HOSTS.loader}/https/")
    path = decision.redirect.removeprefix(f"helm-load://{HOSTS.loader}")
    assert loaded_url(path) == url


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "OPTIONS"])
def test_only_get_reaches_an_allowed_domain(method: str) -> None:
    decision = decide_request("https", "cdn.example.com", -1, IMAGE, HOSTS, (CDN,), f"{CDN}/p.png", method)
    assert not decision.allowed and not decision.redirect
    assert "GET only" in decision.reason


@pytest.mark.parametrize("path", ["/", "/ftp/host/x", "/https", "/javascript/alert(1)", REPORT_PATH])
def test_a_loader_path_that_is_no_http_url_stands_for_nothing(path: str) -> None:
    assert loaded_url(path) is None


def test_a_relative_url_in_a_loaded_stylesheet_resolves_to_the_loader_again() -> None:
    from urllib.parse import urljoin

    sheet = loader_url(HOSTS, f"{CDN}/css/site.css")
    font = urljoin(sheet.replace("helm-load://", "https://", 1), "../fonts/a.woff2")
    assert loaded_url(font.split(HOSTS.loader, 1)[1]) == f"{CDN}/fonts/a.woff2"


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


@pytest.mark.parametrize(
    ("kind", "method", "path", "expected"),
    [
        pytest.param("ResourceTypeImage", "GET", "/https/cdn.example.com/a.png", True, id="image"),
        pytest.param("ResourceTypeScript", "GET", "/https/cdn.example.com/a.js", True, id="script"),
        pytest.param("ResourceTypeCspReport", "POST", REPORT_PATH, True, id="report"),
        pytest.param(
            "ResourceTypeCspReport", "POST", "/https/cdn.example.com/x", False, id="report-elsewhere"
        ),
        pytest.param("ResourceTypeXhr", "GET", "/https/cdn.example.com/a.json", False, id="fetch"),
        pytest.param("ResourceTypeXhr", "POST", REPORT_PATH, False, id="fetch-posing-as-a-report"),
        pytest.param("ResourceTypeWorker", "GET", "/https/cdn.example.com/w.js", False, id="worker"),
        pytest.param("ResourceTypeSubFrame", "GET", "/https/cdn.example.com/", False, id="frame"),
        pytest.param("ResourceTypeImage", "POST", "/https/cdn.example.com/a.png", False, id="post"),
    ],
)
def test_the_loader_takes_only_subresource_gets_and_the_engines_reports_whatever_the_policy_says(
    kind: str, method: str, path: str, expected: bool
) -> None:
    url = f"helm-load://{HOSTS.loader}{path}"
    assert decide_request("helm-load", HOSTS.loader, -1, kind, HOSTS, (CDN,), url, method).allowed is expected
