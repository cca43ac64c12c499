"""Run in a copy of Helm whose folder of one kind was deleted: every other module imports, the
test-only echo kind still validates, is called and confirms a write through the broker, and
Helm's main window is built, without the parts the deleted kind supplied.

Usage: ``python -m tests.unit.kind_removed_child HOME TMP`` from the copy's root; prints one
JSON line (what failed to import, the kinds the registry found, the echo call's envelopes).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import pkgutil
import sys
from pathlib import Path
from typing import Any


def import_everything() -> dict[str, str]:
    """Import every module of broker/, app/ and ui/; what fails, with its error."""
    failed: dict[str, str] = {}
    for top in ("broker", "app", "ui"):
        package = importlib.import_module(top)
        for found in pkgutil.walk_packages(package.__path__, f"{top}."):
            try:
                importlib.import_module(found.name)
            except Exception as exc:
                failed[found.name] = f"{type(exc).__name__}: {exc}"
    return failed


async def call_echo(home: Path, tmp: Path) -> list[dict[str, Any]]:
    from broker import Broker
    from broker.credentials import FileStore
    from broker.kinds import registered
    from tests.helpers import ScriptedConfirmer, manifest_dict, setup_extension
    from tests.kinds.echo import ECHO

    room = {"id": "e", "kind": "echo", "room": "lobby", "operations": ["hello"], "writes": ["hey"]}
    with registered(ECHO):
        async with Broker(home, credentials=FileStore(home / "credentials.json")) as broker:
            assert ECHO.profiles is not None
            rooms = ECHO.profiles.store(broker.home, broker.credentials)
            rooms.save(ECHO.profiles.parse("lobby", {"greeting": "hi"}), {"token": "t"})
            ctx = await setup_extension(broker, tmp, manifest_dict([room], write=True))
            read = await broker.request(ctx, "e", "hello", {"to": "you"}, ScriptedConfirmer())
            write = await broker.request(ctx, "e", "hey", {"loud": True}, ScriptedConfirmer())
    return [read, write]


def build_window(home: Path) -> dict[str, Any]:
    """Helm's main window, built (not shown) on a broker: its menu, and whether it has a
    sign-in and a DB explorer (the parts kinds supply)."""
    from app.window import Window
    from broker import Broker
    from broker.credentials import FileStore
    from tests.helpers import ScriptedConfirmer
    from ui.qt import QApplication

    app = QApplication.instance() or QApplication([])
    broker = Broker(home, credentials=FileStore(home / "credentials.json"))
    window = Window(broker, ScriptedConfirmer())
    try:
        built = window.window
        return {
            "menu": sorted(built.menu_actions),
            "oauth": built.connections.oauth is not None,  # type: ignore[attr-defined]
            "explorer": built.open_db_explorer() is not None,
        }
    finally:
        window.window.close()
        window.window.deleteLater()
        app.processEvents()


def main(home: Path, tmp: Path) -> None:
    import broker
    from broker.kinds import KINDS

    failed = import_everything()
    report = {
        "broker": broker.__file__,
        "failed": failed,
        "kinds": sorted(KINDS),
        "echo": asyncio.run(call_echo(home, tmp)),
        "window": build_window(tmp / "window-home"),
        "demo": list(importlib.import_module("app.demo").widgets()),
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
