"""Open-link, property-tested: the text the dialog shows is exactly what opens, and the host shown
on its own line is the host opened.

Links are built from parts drawn from a hostile alphabet — user info, backslashes, line breaks,
tabs, bidi and zero-width characters, percent signs, IPv6 brackets, full-width and ideographic
dots, non-ASCII letters — and go through Helm's whole path: the decision
(``broker.urls.link_decision``), the normal form (``ui.apps.links``), the dialog, and the system
browser's ``openUrl``, which is recorded instead of run. Hypothesis runs derandomized under CI.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pytestqt.qtbot import QtBot

from ui.apps.dialogs import OpenLinkDialog
from ui.apps.links import ENCODED, Link, prepare_link, system_browser
from ui.qt import QDesktopServices, QUrl

FUZZ = settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])

HOSTILE = "\\@:/?#%[]. \n\t\r\x00\x1b\u00a0\u202e\u200b\u3002\uff0e\uff41é\u0130"
PLAIN_HOST = "abcxyz019-."
PLAIN_PATH = "abz09/._~-?=&+%;,!$'()*@:#é[]{}|^`\"<>"


def mostly(common: st.SearchStrategy[str], rare: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """``common`` three times in four, ``rare`` otherwise."""
    return st.one_of(common, common, common, rare)


links = st.builds(
    lambda scheme, sep, user, host, port, path: f"{scheme}{sep}{user}{host}{port}{path}",
    mostly(st.sampled_from(["https", "http", "HTTPS", "hTTp"]), st.sampled_from(["javascript", "ftp", ""])),
    mostly(st.just("://"), st.sampled_from([":/", ":", ":///", ":\\\\", "://\\"])),
    mostly(st.just(""), st.sampled_from(["user@", "a:b@", "bank.example@", "bank.example\\@", "%40@"])),
    mostly(
        st.sampled_from(["example.com", "bank.example", "127.0.0.1", "[::1]", "xn--bcher-kva.example"])
        | st.text(alphabet=PLAIN_HOST, min_size=1, max_size=12),
        st.text(alphabet="ab.-" + HOSTILE, max_size=8),
    ),
    st.sampled_from(["", "", "", ":443", ":8080", ":0", ":99999", ":x"]),
    mostly(
        st.text(alphabet=PLAIN_PATH, max_size=24).map(lambda p: "/" + p),
        st.text(alphabet="ab/" + HOSTILE, max_size=12),
    ),
)  # fmt: skip


plausible = st.builds(
    lambda scheme, host, port, path: f"{scheme}://{host}{port}{path}",
    st.sampled_from(["https", "http", "HTTPS"]),
    st.sampled_from(["example.com", "127.0.0.1", "[::1]", "[2001:db8::1]", "xn--bcher-kva.example"])
    | st.text(alphabet=PLAIN_HOST, min_size=1, max_size=12),
    st.sampled_from(["", ":443", ":8080"]),
    st.text(alphabet=PLAIN_PATH, max_size=32).map(lambda p: "/" + p),
)
"""Links that mostly pass, with every character a path may hold, escaped or not."""


class Browser:
    """The system browser, recorded: the QUrl Helm hands it."""

    def __init__(self) -> None:
        self.opened: list[QUrl] = []

    def __call__(self, url: QUrl) -> bool:
        self.opened.append(QUrl(url))
        return True


@FUZZ
@given(text=plausible | links)
@example(text="https://accounts.bank.example" + "\n" * 12 + "@evil.example/")
@example(text="https://good.example\\@evil.example/")
@example(text="https://Example.COM/%7e?q=%41#top")
def test_the_link_shown_is_the_link_opened_and_its_host_the_host_opened(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    link = prepare_link(text)
    if not isinstance(link, Link):
        assert link, "a refusal says why"
        return
    dialog = OpenLinkDialog("Board", link, guard_ms=0)
    qtbot.addWidget(dialog)
    shown, host_shown = dialog.link.toPlainText(), dialog.host.text()
    browser = Browser()
    with monkeypatch.context() as patch:
        patch.setattr(QDesktopServices, "openUrl", browser)
        system_browser(link.url)
    (opened,) = browser.opened
    assert shown == opened.toString(ENCODED)
    assert host_shown == opened.host(ENCODED) == urlsplit(shown).hostname
    assert opened.userInfo() == "" and "@" not in opened.authority()
    assert opened.scheme() in ("https", "http")
    assert shown.isascii() and shown.isprintable() and "\\" not in shown


@pytest.mark.parametrize(
    ("text", "why"),
    [
        pytest.param(
            "https://accounts.bank.example" + "\n" * 12 + "@evil.example/", "whitespace", id="newlines"
        ),
        pytest.param("https://good.example\\@evil.example/", "backslash", id="backslash"),
        pytest.param("https://accounts.bank.example@evil.example/", "user name or password", id="userinfo"),
        pytest.param("https://bank.example\u202e/", "invisible", id="bidi"),
        pytest.param("https://b\u00fccher.example/", "plain host name", id="non-ascii-host"),
        pytest.param("https://bank\u3002example/", "plain host name", id="ideographic-dot"),
        pytest.param("javascript:alert(1)", "http and https links only", id="javascript"),
    ],
)
def test_a_link_that_could_read_as_another_is_refused_with_the_reason(text: str, why: str) -> None:
    refused = prepare_link(text)
    assert isinstance(refused, str) and why in refused
