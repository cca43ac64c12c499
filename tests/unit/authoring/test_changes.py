"""What changed between two reviews, said per connection, read and write."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from broker.authoring.changes import review_changes
from broker.manifest import Review
from broker.manifest import load as load_manifest
from tests.helpers import manifest_dict, write_extension

NOTES: dict[str, Any] = {
    "id": "notes",
    "kind": "files",
    "root": "workspace",
    "paths": ["*.md"],
    "operations": ["list"],
}
GH: dict[str, Any] = {"id": "gh", "kind": "http", "service": "github",
                      "calls": {"issues": {"method": "GET", "path": "/issues"}}}  # fmt: skip


def review_of(tmp: Path, name: str, connections: list[dict[str, Any]], write: bool = False) -> Review:
    return load_manifest(write_extension(tmp / name, manifest_dict(connections, write=write))).review()


def test_an_unchanged_review_has_no_changes(tmp_path: Path) -> None:
    assert review_changes(review_of(tmp_path, "a", [NOTES]), review_of(tmp_path, "b", [NOTES])) == ()


def test_added_removed_and_changed_items_are_each_one_line(tmp_path: Path) -> None:
    notes_rw = {**NOTES, "operations": ["list", "write"]}
    gh2 = {**GH, "service": "gitlab"}
    old = review_of(tmp_path, "a", [NOTES, GH])
    new = review_of(tmp_path, "b", [notes_rw, gh2, {**NOTES, "id": "docs"}], write=True)
    assert review_changes(old, new) == (
        "may write: no → yes",
        "[notes] + WRITE files *.md (replace existing files — confirmed each time)",
        "[gh] now http — service gitlab (was http — service github)",
        "[docs] added: files — files in the workspace",
        "[docs] + read files *.md (list)",
    )
    assert "[docs] removed (files — files in the workspace)" in review_changes(new, old)
