"""Whether an extension is an MCP App is decided in one place: ``Manifest.app``."""

from __future__ import annotations

import re
from pathlib import Path

from broker.apps.spec import AppSpec
from tests.helpers import new_broker
from tests.unit.apps.app_setup import BOARD, added, app_home

ROOT = Path(__file__).resolve().parents[3]
HOME_OF_THE_DECISION = {"broker/manifest.py", "broker/apps/spec.py"}
COMPARES_ONLY = {"broker/catalogue/capabilities.py"}
"""Reads the raw section to tell an update's changes field by field, once ``Manifest.app`` has
said it is an app; it decides nothing."""
RAW_APP = re.compile(
    r"""parse_app\(|spec_of\(|raw\.get\(["']app["']\)|raw\[["']app["']\]|["']app["'] in [\w.]*raw"""
)


async def test_an_added_app_is_typed_in_its_manifest_and_an_extension_is_not(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        ext_id = await added(broker)
        app = broker.manifest("ws", ext_id).app
    assert isinstance(app, AppSpec)
    assert (app.server, app.uri) == ("board", BOARD)
    assert ("list_items", False) in app.tools and ("add_item", True) in app.tools


def test_no_module_but_the_manifest_reads_the_raw_app_section() -> None:
    readers = sorted(
        str(path.relative_to(ROOT))
        for folder in ("broker", "ui", "app")
        for path in (ROOT / folder).rglob("*.py")
        if RAW_APP.search(path.read_text("utf-8"))
    )
    assert set(readers) <= HOME_OF_THE_DECISION | COMPARES_ONLY, readers
