"""Manifest rules and review for mcp and tdt-mcp connections."""

from __future__ import annotations

from typing import Any

import pytest

from broker.kinds.mcp import rules
from broker.manifest import validate
from tests.helpers import manifest_dict


def issues(conn: dict[str, Any], *, write: bool = True) -> list[tuple[str, str]]:
    return [(i.path, i.message) for i in validate(manifest_dict([conn], write=write))]


@pytest.mark.parametrize("kind", ["mcp", "tdt-mcp"])
def test_a_tool_in_both_lists_is_reported_at_its_writes_path(kind: str):
    conn = {"id": "c", "kind": kind, "server": "s", "operations": ["a", "b"], "writes": ["b"]}
    if kind == "tdt-mcp":
        del conn["server"]
    found = issues(conn)
    assert ("$.connections[0].writes[0]", "tool 'b' is in both operations and writes") in found


def test_a_connection_without_tools_is_reported():
    conn = {"id": "c", "kind": "mcp", "server": "s", "operations": []}
    assert any(path.startswith("$.connections[0]") for path, _ in issues(conn))


def test_a_valid_mcp_connection_has_no_issues():
    conn = {"id": "c", "kind": "mcp", "server": "s", "operations": ["a"], "writes": ["w"]}
    assert issues(conn) == []


def test_operations_maps_each_tool_to_whether_it_writes():
    conn = {"id": "c", "kind": "mcp", "server": "s", "operations": ["a"], "writes": ["w"]}
    assert rules.operations(conn) == {"a": False, "w": True}


def test_review_of_an_mcp_connection_carries_the_write_warning():
    conn = {"id": "c", "kind": "mcp", "server": "gh", "operations": ["a"], "writes": ["w"]}
    review = rules.review(rules.parse(conn))
    assert review.target == "MCP server gh"
    assert review.warnings == (rules.REVIEW_WARNING,)
    assert [i.label for i in review.writes] == ["tool w"]


def test_review_of_a_tdt_connection_names_the_workspace_server():
    review = rules.review(rules.parse({"id": "t", "kind": "tdt-mcp", "operations": ["tdt_workspace_status"]}))
    assert review.target == "the workspace's TDT server"
    assert review.warnings == ()
