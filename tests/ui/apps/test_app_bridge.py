"""The app's bridge: what the host page posts reaches Helm until the bridge is closed."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from ui.apps.page import MAX_MESSAGE_CHARS, AppBridge


def test_a_closed_app_bridge_passes_nothing_more_from_the_page_to_helm(qtbot: QtBot) -> None:
    received: list[str] = []
    refused: list[tuple[str, int]] = []
    connected: list[bool] = []
    bridge = AppBridge(received.append, lambda method, chars: refused.append((method, chars)))
    bridge.pageReady.connect(lambda: connected.append(True))
    bridge.post('{"jsonrpc":"2.0","method":"ui/initialize"}')
    bridge.close()
    bridge.post('{"jsonrpc":"2.0","method":"tools/call"}')
    bridge.post("x" * (MAX_MESSAGE_CHARS + 1))
    bridge.refused("tools/call", 10)
    bridge.ready()
    assert bridge.closed
    assert received == ['{"jsonrpc":"2.0","method":"ui/initialize"}']
    assert (refused, connected) == ([], [])
