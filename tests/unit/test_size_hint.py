"""A widget's optional size hint: the schema checks its shape, a rule keeps it to widgets, and
it is not part of what the user approves."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from broker.manifest import load, validate

BASE: dict[str, Any] = {
    "id": "com.example.widget",
    "name": "Widget",
    "version": "1.2.3",
    "kind": "widget",
    "entry": "index.html",
}


def paths(raw: dict[str, Any]) -> list[str]:
    return [i.path for i in validate(raw)]


@pytest.mark.parametrize(
    "size",
    ["small", "medium", "large", {"minWidth": 320}, {"minHeight": 200}, {"minWidth": 640, "minHeight": 480}],
)
def test_a_named_size_or_a_minimum_is_accepted(size: Any) -> None:
    assert validate({**BASE, "size": size}) == []


@pytest.mark.parametrize(
    "size",
    [
        pytest.param("huge", id="unknown-name"),
        pytest.param({}, id="empty-object"),
        pytest.param({"minWidth": 50}, id="too-narrow"),
        pytest.param({"minHeight": 5000}, id="too-tall"),
        pytest.param({"minWidth": "320px"}, id="not-a-number"),
        pytest.param({"width": 320}, id="unknown-key"),
        pytest.param(3, id="a-number"),
    ],
)
def test_a_size_of_the_wrong_shape_is_reported_at_its_path(size: Any) -> None:
    issues = validate({**BASE, "size": size})
    assert issues and all(i.path.startswith("$.size") for i in issues)


def test_a_tool_may_not_have_a_size() -> None:
    issues = validate({**BASE, "kind": "tool", "size": "small"})
    assert [(i.path, i.message) for i in issues] == [
        ("$.size", "only widgets have a size on the dashboard (a tool fills its tab): remove it")
    ]


def test_changing_the_size_needs_no_new_approval(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<p>x</p>", encoding="utf-8")
    raw = copy.deepcopy(BASE)
    (tmp_path / "manifest.json").write_text(json.dumps(raw), encoding="utf-8")
    before = load(tmp_path).digest()
    (tmp_path / "manifest.json").write_text(json.dumps({**raw, "size": "large"}), encoding="utf-8")
    assert load(tmp_path).digest() == before
