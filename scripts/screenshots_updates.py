"""The Updates window and an update's review: a catalogue made on the sample home.

Used by ``screenshots.py``: a catalogue folder signed with a key made for the run, the sample
"Tasks" extension installed from it at 1.0.0 and approved, then 1.1.0 published with a new glob
and writes, so the window shows what the update adds and its review shows it on top.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from broker import signatures
from broker.broker import Broker
from broker.catalogue import archive, publish, updates
from broker.catalogue.store import CatalogueEntry, CatalogueStore
from broker.extensions import install, review_and_approve
from ui.dialogs.review import review_dialog
from ui.qt import QWidget
from ui.updates_view import UpdatesView

Save = Callable[[QWidget, Path, str, tuple[int, int] | None], Awaitable[Path]]
TASKS = "com.example.tasks"


def _release(root: Path, key: Ed25519PrivateKey, version: str, paths: list[str], write: bool) -> None:
    source = root / "src" / version
    source.mkdir(parents=True)
    ops = ["list", "read", "write"] if write else ["list", "read"]
    notes = {"id": "notes", "kind": "files", "root": "workspace", "paths": paths, "operations": ops}
    raw: dict[str, Any] = {
        "id": TASKS, "name": "Tasks", "version": version, "kind": "widget", "entry": "index.html",
        "connections": [notes],
    }  # fmt: skip
    if write:
        raw["permissions"] = {"write": True}
    (source / "manifest.json").write_text(json.dumps(raw), encoding="utf-8")
    (source / "index.html").write_text("<!doctype html><p>tasks</p>", encoding="utf-8")
    manifest, data = archive.pack(source)
    packed = root / archive.archive_name(manifest)
    packed.write_bytes(data)
    publish.add_release(root / "catalogue", packed)
    publish.sign(root / "catalogue", key)


async def updates_screens(out: Path, broker: Broker, root: Path, save: Save) -> list[Path]:
    here = root / "catalogue-demo"
    (here / "catalogue").mkdir(parents=True)
    key = Ed25519PrivateKey.generate()
    entry = CatalogueEntry("acme", str(here / "catalogue"), signatures.public_pem(key.public_key()).decode())
    with CatalogueStore(broker.home.path).update() as state:
        state.catalogues["acme"] = entry
    _release(here, key, "1.0.0", ["notes/*.md"], write=False)
    fetched = await updates.fetch(broker.home.path, entry, TASKS)
    install(broker.home, "main", fetched.manifest.folder, fetched.catalogue)
    updates.record_install(broker.home.path, "main", fetched)
    await review_and_approve(broker, "main", TASKS)
    _release(here, key, "1.1.0", ["notes/*.md", "tasks/**/*.md"], write=True)
    view = UpdatesView(broker, lambda: "main")
    found = await view.check()
    written = [await save(view, out, "updates", (720, 460))]
    if found is not None and found.updates:
        (update,) = found.updates
        reviewed = await updates.review_update(broker, update)
        dialog = review_dialog(reviewed, update=update.diff.lines(), guard_ms=0)
        written.append(await save(dialog, out, "review-update", None))
        dialog.close()
    view.close()
    return written
