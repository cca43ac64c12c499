"""A frame stays on its own origin: every navigation away is refused, asked or not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.host.kit import EchoHandler, copy_page, evaluate, wait_ready
from ui.aio import emitted
from ui.host.view import LEFT_HOME
from ui.qt import QUrl

# Navigations the engine does not ask Helm about (no request is needed to make them), or asks
# about too late to keep the page; each must be cancelled by Helm's guard in the page.
UNASKED = {
    "about:blank": "location = 'about:blank'",
    "about:srcdoc": "location.href = 'about:srcdoc'",
    "blob": "location = URL.createObjectURL(new Blob(['<p>elsewhere</p>'], {type: 'text/html'}))",
    "window.open in this frame": "window.open('about:blank', '_self')",
    "a link": "(() => { const a = document.createElement('a'); a.href = 'about:blank';"
    " document.body.append(a); a.click(); })()",
    "meta refresh": "(() => { const m = document.createElement('meta'); m.httpEquiv = 'refresh';"
    " m.content = '0; url=about:blank'; document.head.append(m); })()",
    "after document.open": "(document.open(), document.close(), location.replace('about:blank'))",
}
CANCELLED = (
    "new Promise((resolve) => { navigation.addEventListener('navigateerror',"
    " (e) => resolve(e.error && e.error.name), {once: true}); {attempt}; })"
)


@pytest.fixture
def home(run: Any, frames: Any, tmp_path: Path) -> Any:
    view = frames(copy_page("probe", tmp_path / "ext"), EchoHandler())
    view.show()
    view.visited = []
    view.page.urlChanged.connect(lambda url: view.visited.append(url.toString()))
    run(wait_ready(view))
    run(evaluate(view, "(window.stayed = 'here')"))
    return view


def test_navigations_away_that_helm_is_not_asked_about_are_cancelled(run: Any, home: Any) -> None:
    async def scenario() -> dict[str, Any]:
        return {
            name: await evaluate(home, CANCELLED.replace("{attempt}", attempt), timeout=10)
            for name, attempt in UNASKED.items()
        }

    assert run(scenario(), timeout=90) == dict.fromkeys(UNASKED, "AbortError")
    assert run(evaluate(home, "[window.stayed, location.href]")) == ["here", home.url]
    assert [url for url in home.visited if not url.startswith(home.url)] == []


def test_data_javascript_and_history_urls_cannot_take_the_frame_away(run: Any, home: Any) -> None:
    async def scenario() -> tuple[Any, Any, Any]:
        refused = emitted(home.page.console, 10, lambda _level, message, *_: "data URL" in message)
        await evaluate(home, "(location = 'data:text/html,<p>elsewhere</p>', 0)")
        _level, data, *_ = await refused
        javascript = await evaluate(
            home,
            "new Promise((resolve) => { document.addEventListener('securitypolicyviolation',"
            " (e) => resolve(e.violatedDirective), {once: true}); location = 'javascript:window.ran = 1'; })",
        )
        history = await evaluate(
            home,
            "(() => { try { history.pushState({}, '', 'about:blank'); return 'pushed'; }"
            " catch (e) { return e.name; } })()",
        )
        return data, javascript, history

    data, javascript, history = run(scenario())
    assert "Not allowed to navigate top frame to data URL" in data
    assert javascript.startswith("script-src")
    assert history == "SecurityError"
    state = run(
        evaluate(home, "[window.stayed, window.ran, location.href, navigation.entries().map(e => e.url)]")
    )
    assert state == ["here", None, home.url, [home.url]]


def test_a_document_from_elsewhere_that_arrives_anyway_is_stopped_and_hidden(run: Any, home: Any) -> None:
    async def scenario() -> None:
        # A load Helm itself starts is not guarded by the page: the last layer must catch it.
        left = emitted(home.page.urlChanged, 10)
        settled = emitted(home.page.loadFinished, 10)
        home.page.load(QUrl("about:blank"))
        (url,) = await left
        assert url.toString() == "about:blank"
        await settled
        assert home.refusal.isVisible()
        assert not home.web.isVisible()
        ready = emitted(home.ready, 20)
        home.reload()
        await ready

    run(scenario())
    assert home.refusal.text() == LEFT_HOME
    assert not home.refusal.isVisible()
    assert run(evaluate(home, "location.href")) == home.url
