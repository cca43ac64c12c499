"""``helm ext new``: a widget or tool that lints clean and whose page calls helm."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.cli import main
from app.scaffold import KINDS, ScaffoldError, create
from broker.manifest import load, schema

# Ways to put a string into a page as markup; the scaffold must use none of them.
MARKUP_SINKS = ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "DOMParser", "eval(")


@pytest.mark.parametrize("kind", KINDS)
def test_a_new_extension_lints_clean_and_points_at_the_published_schema(kind: str, tmp_path: Path) -> None:
    made = create(tmp_path / "notes", kind)

    manifest = load(made.folder)

    assert manifest.kind == kind
    assert manifest.id == "com.example.notes"
    assert manifest.raw["$schema"] == schema()["$id"]


@pytest.mark.parametrize("kind", KINDS)
def test_the_page_calls_a_declared_connection_and_renders_with_text_nodes_only(
    kind: str, tmp_path: Path
) -> None:
    made = create(tmp_path / "x", kind)
    manifest = load(made.folder)
    script = (made.folder / "main.js").read_text("utf-8")
    html = (made.folder / "index.html").read_text("utf-8")

    connection = re.search(r"const CONNECTION = '([^']+)'", script)
    assert connection is not None
    conn = manifest.connection(connection.group(1))
    assert conn is not None
    called = set(re.findall(r"helm\.call\(CONNECTION, '([a-z_]+)'", script))
    assert called, "the page makes no helm.call"
    assert called <= set(manifest.operations(conn))
    assert "textContent" in script
    code = re.sub(r"//.*", "", script)  # the comments may name what not to do
    assert not [sink for sink in MARKUP_SINKS if sink in code]
    assert '<script src="main.js"' in html
    assert "<script>" not in html


def test_names_are_escaped_for_the_file_they_land_in(tmp_path: Path) -> None:
    name = 'Ops "board" <b>&</b> __ID__'
    made = create(tmp_path / "x", "widget", ext_id="org.acme.board", name=name)

    assert load(made.folder).name == name
    page = (made.folder / "index.html").read_text("utf-8")
    assert "<b>" not in page
    assert "&lt;b&gt;&amp;&lt;/b&gt;" in page
    assert "__ID__" in page  # a value is never filled in twice


def test_the_new_extension_carries_the_typings(tmp_path: Path) -> None:
    made = create(tmp_path / "x", "tool")
    shipped = Path(__file__).parents[2] / "resources" / "helm.d.ts"
    assert (made.folder / "helm.d.ts").read_text("utf-8") == shipped.read_text("utf-8")
    assert '/// <reference path="./helm.d.ts" />' in (made.folder / "main.js").read_text("utf-8")


def test_a_folder_with_anything_in_it_is_left_untouched(tmp_path: Path) -> None:
    folder = tmp_path / "busy"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine", encoding="utf-8")

    with pytest.raises(ScaffoldError, match="not an empty folder"):
        create(folder, "widget")
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]


@pytest.mark.parametrize("bad", ["Notes", "notes", "com..x", "com.example.", "com.ex ample.x"])
def test_an_invalid_id_is_refused_before_anything_is_written(bad: str, tmp_path: Path) -> None:
    with pytest.raises(ScaffoldError, match="not a valid extension id"):
        create(tmp_path / "x", "widget", ext_id=bad)
    assert not (tmp_path / "x").exists()


def test_helm_ext_new_writes_the_extension_and_helm_ext_lint_accepts_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "team-board"
    assert main(["ext", "new", str(folder), "--kind", "widget", "--id", "org.acme.board"]) == 0
    assert "helm dev" in capsys.readouterr().out
    assert json.loads((folder / "manifest.json").read_text("utf-8"))["name"] == "Team Board"

    assert main(["ext", "lint", str(folder)]) == 0
    assert main(["ext", "new", str(folder), "--kind", "tool"]) == 1
    assert "not an empty folder" in capsys.readouterr().err
