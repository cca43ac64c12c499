"""A hostile page tries every way out of its frame; a canary on 127.0.0.1 hears nothing."""

from __future__ import annotations

import urllib.request
from pathlib import Path
from typing import Any

from tests.e2e.host.canary import canary
from tests.e2e.host.kit import EchoHandler, copy_page, evaluate, wait_ready
from ui.host import ExtensionProfile, extension_host


def test_the_canary_counts_a_request_that_reaches_it() -> None:
    with canary() as c:
        with urllib.request.urlopen(f"http://127.0.0.1:{c.port}/control", timeout=5) as reply:
            assert reply.read() == b"canary"
        assert c.count == 1


def test_a_hostile_page_reaches_nothing_but_its_own_files(run: Any, frames: Any, tmp_path: Path) -> None:
    other_folder = copy_page("other", tmp_path / "other")
    other = ExtensionProfile(other_folder, extension_host("ws", "com.example.other"))
    view = frames(copy_page("hostile", tmp_path / "hostile"), EchoHandler())
    downloads: list[str] = []

    def download_seen(download: Any) -> None:
        # Helm's own handler runs first and cancels; anything else got through.
        if download.state() != download.DownloadState.DownloadCancelled:
            downloads.append(download.downloadFileName())

    view._test_profile.profile.downloadRequested.connect(download_seen)
    navigations: list[str] = []
    view.page.urlChanged.connect(lambda url: navigations.append(url.toString()))
    with canary() as c:

        async def scenario() -> tuple[Any, Any]:
            await wait_ready(view, fragment=f"port={c.port}&other={other.host}")
            escaped = await evaluate(view, "hostile.escape()")
            escaped["permissions"] = await evaluate(view, "hostile.permissions()")
            await evaluate(view, "hostile.leave()")
            # A round trip through the bridge after the attempts: the page is still ours.
            after = await evaluate(view, "helm.call('c', 'ping', {}).then(r => [location.href, r.ok])")
            return escaped, after

        escaped, after = run(scenario(), timeout=60)
        hits = list(c.hits)
    other.deleteLater()
    got_through = {name: ok for name, ok in escaped["got_through"].items() if name != "ownImage"}
    assert [name for name, ok in got_through.items() if ok is True] == []
    assert escaped["got_through"]["ownImage"] is True, "the page must still load its own files"
    assert hits == []
    assert escaped["permissions"] == [False] * 7, "every permission request is answered: denied"
    assert downloads == [], "downloads are cancelled before they start"
    assert escaped["violations"] > 0, "the Content-Security-Policy must refuse the attempts itself"
    location, answered = after
    assert location.split("#")[0] == view.url
    assert answered is True
    assert all(url.startswith(f"helm-ext://{view._test_profile.host}/") for url in navigations)
