"""The screens of Helm's look, each in light and in dark: Get started beside the dashboard,
Activity, Preferences, Settings → Services after a real Test, and the dialogs it is given.

Used by ``screenshots.py`` on its sample home. The Test button GETs a small HTTP server this
module runs on 127.0.0.1 for the moment it is needed.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from broker.broker import Broker
from broker.kinds.http.profiles import SERVICES, ServiceProfile
from ui.main_window import MainWindow
from ui.preferences import Preferences
from ui.preferences_dialog import PreferencesDialog
from ui.qt import QWidget
from ui.settings.backend import BrokerConnections
from ui.settings.connections import ConnectionsPage
from ui.theme import Theme
from ui.theme_data import Appearance

Save = Callable[[QWidget, Path, str, tuple[int, int] | None], Awaitable[Path]]
SCHEMES = (("", Appearance.LIGHT), ("-dark", Appearance.DARK))


class _Ok(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.headers.get("Authorization") else 401)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, format: str, *args: object) -> None:
        return


@contextlib.contextmanager
def service() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


Dialogs = Mapping[str, tuple[Callable[[], QWidget], tuple[int, int]]]
"""Dialogs shot again in dark (``screenshots.py`` shoots them in light): name → (a new one, its size)."""


async def look_screens(
    out: Path, window: MainWindow, broker: Broker, save: Save, dialogs: Dialogs
) -> list[Path]:
    """Every screen of this module, in both schemes; the look is light again afterwards."""
    written: list[Path] = []
    theme = Theme.of()
    with service() as url:
        local = ServiceProfile("local", url)
        SERVICES.store(broker.home, broker.credentials).save(local, {"token": "sample"})  # sample data
        for suffix, appearance in SCHEMES:
            window.model.preferences.set(Preferences(appearance))  # as Preferences would keep it
            theme.follow(window.model.preferences.get())
            written += await _screens(out, suffix, window, broker, save)
            for name, (make, size) in dialogs.items() if suffix else ():
                dialog = make()
                written.append(await save(dialog, out, f"{name}{suffix}", size))
                dialog.deleteLater()
    window.model.preferences.set(Preferences())
    theme.follow(Preferences(Appearance.LIGHT))
    return written


async def _screens(out: Path, suffix: str, window: MainWindow, broker: Broker, save: Save) -> list[Path]:
    window.first_steps.panel.show()
    window.tabs.setCurrentWidget(window.dashboard)
    written = [await save(window, out, f"get-started{suffix}", (1280, 760))]
    window.tabs.setCurrentWidget(window.activity)
    written.append(await save(window, out, f"activity{suffix}", (1280, 760)))
    window.tabs.setCurrentWidget(window.dashboard)
    prefs = PreferencesDialog(window.model.preferences)
    written.append(await save(prefs, out, f"preferences{suffix}", None))
    prefs.deleteLater()
    written.append(await _services_test(out, suffix, broker, save))
    written += await _palette(out, suffix, window, save)
    return written


async def _palette(out: Path, suffix: str, window: MainWindow, save: Save) -> list[Path]:
    """The command palette (Ctrl+K): every command, then a search, then one that finds nothing."""
    palette = window.open_palette()
    written = [await save(palette, out, f"command-palette{suffix}", None)]
    palette.search.setText("conn")
    written.append(await save(palette, out, f"command-palette-search{suffix}", None))
    palette.search.setText("zzqx")
    written.append(await save(palette, out, f"command-palette-no-match{suffix}", None))
    palette.reject()
    return written


async def _services_test(out: Path, suffix: str, broker: Broker, save: Save) -> Path:
    page = ConnectionsPage(BrokerConnections(broker))
    services = page.pages["http"]
    names = [services.list.item(i).text() for i in range(services.list.count())]
    services.list.setCurrentRow(names.index("local"))
    services.test_inputs["test_path"].setText("/user")
    test = services.start_test()
    if test is not None:
        await test
    path = await save(page, out, f"settings-services-test{suffix}", (920, 620))
    page.deleteLater()
    return path
