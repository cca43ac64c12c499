"""The extension host's decisions: origins, requests, navigation, the page policy."""

from __future__ import annotations

import pytest

from ui.host.policy import (
    content_security_policy,
    decide_navigation,
    decide_request,
    entry_url,
    extension_host,
)

OWN = extension_host("ws", "com.example.notes")


def test_each_extension_and_workspace_gets_its_own_stable_host() -> None:
    assert extension_host("ws", "com.example.notes") == OWN
    assert extension_host("ws", "com.example.other") != OWN
    assert extension_host("other-ws", "com.example.notes") != OWN
    assert len(OWN) == 32
    assert OWN.isalnum()
    assert OWN.lower() == OWN


def test_the_entry_url_is_on_the_extensions_origin_with_its_path_encoded() -> None:
    assert entry_url(OWN, "pages/my page.html") == f"helm-ext://{OWN}/pages/my%20page.html"


@pytest.mark.parametrize(
    ("scheme", "host", "allowed"),
    [
        pytest.param("helm-ext", OWN, True, id="own-origin"),
        pytest.param("HELM-EXT", OWN.upper(), True, id="own-origin-any-case"),
        pytest.param("data", "", True, id="data-url"),
        pytest.param("blob", "", True, id="blob-url"),
        pytest.param("helm-ext", extension_host("ws", "x"), False, id="another-extension"),
        pytest.param("http", "127.0.0.1", False, id="http"),
        pytest.param("https", "example.com", False, id="https"),
        pytest.param("ws", "127.0.0.1", False, id="websocket"),
        pytest.param("file", "", False, id="file"),
        pytest.param("qrc", "", False, id="qt-resource"),
        pytest.param("chrome", "gpu", False, id="chrome-page"),
        pytest.param("", "", False, id="no-scheme"),
    ],
)
def test_requests_reach_only_the_extensions_own_origin(scheme: str, host: str, allowed: bool) -> None:
    assert decide_request(scheme, host, OWN).allowed is allowed


@pytest.mark.parametrize(
    ("scheme", "host", "main_frame", "allowed"),
    [
        pytest.param("helm-ext", OWN, True, True, id="own-page"),
        pytest.param("helm-ext", OWN, False, False, id="own-page-in-a-subframe"),
        pytest.param("helm-ext", extension_host("ws", "x"), True, False, id="another-extension"),
        pytest.param("https", "example.com", True, False, id="the-web"),
        pytest.param("data", "", True, False, id="data-document"),
        pytest.param("about", "", False, False, id="about-blank-subframe"),
    ],
)
def test_only_the_main_frame_navigates_and_only_at_home(
    scheme: str, host: str, main_frame: bool, allowed: bool
) -> None:
    assert decide_navigation(scheme, host, OWN, main_frame).allowed is allowed


def test_the_page_policy_closes_every_fetch_directive_but_the_pages_own_files() -> None:
    directives = dict(d.split(" ", 1) for d in content_security_policy().split("; "))
    assert directives["default-src"] == "'none'"
    assert directives["script-src"] == "'self'"
    for closed in (
        "connect-src",
        "frame-src",
        "child-src",
        "worker-src",
        "object-src",
        "base-uri",
        "form-action",
        "frame-ancestors",
        "manifest-src",
    ):
        assert directives[closed] == "'none'", closed
    assert "unsafe-eval" not in content_security_policy()
    assert "http" not in content_security_policy()
