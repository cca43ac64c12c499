"""What an update adds to what was approved, in words: each kind's fields, an app's CSP domains,
and nothing that changes in the approved part of a manifest goes unmentioned."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from broker.catalogue import capabilities
from broker.manifest import Manifest
from broker.manifest import load as load_manifest
from tests.helpers import manifest_dict, write_extension

GH: dict[str, Any] = {
    "id": "gh",
    "kind": "http",
    "service": "github",
    "oauth2": {
        "authorizeUrl": "https://github.com/login/oauth/authorize",
        "tokenUrl": "https://github.com/login/oauth/access_token",
        "scopes": ["read:user"],
    },
    "calls": {"me": {"method": "GET", "path": "/user"}},
}
DB: dict[str, Any] = {
    "id": "tasks",
    "kind": "db",
    "service": "local",
    "engine": "sqlite",
    "queries": {"open": {"sql": "SELECT 1"}},
}
MCP: dict[str, Any] = {"id": "time", "kind": "mcp", "server": "time", "operations": ["get_time"]}


def manifest(tmp_path: Path, folder: str, connections: list[dict[str, Any]], **extra: Any) -> Manifest:
    return load_manifest(write_extension(tmp_path / folder, manifest_dict(connections, **extra)))


def words(
    tmp_path: Path, old: list[dict[str, Any]], new: list[dict[str, Any]], *, write: bool = False
) -> tuple[str, ...]:
    before, after = manifest(tmp_path, "a", old), manifest(tmp_path, "b", new, write=write)
    return capabilities.diff(before, after).lines()


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(
            GH,
            dict(GH, oauth2=dict(GH["oauth2"], scopes=["read:user", "repo"])),
            "[gh] new OAuth2 scope repo",
            id="scope",
        ),
        pytest.param(
            GH,
            dict(
                GH,
                calls={
                    **GH["calls"],
                    "create": {"method": "POST", "path": "/repos/{r}/issues", "write": True},
                },
            ),
            "[gh] new call create: POST /repos/{r}/issues (writes, asks you each time)",
            id="write-call",
        ),
        pytest.param(
            DB,
            dict(DB, queries={**DB["queries"], "all": {"sql": "SELECT * FROM tasks"}}),
            "[tasks] new query all: SELECT * FROM tasks",
            id="query",
        ),
        pytest.param(
            MCP, dict(MCP, operations=["get_time", "convert_time"]), "[time] new tool convert_time", id="tool"
        ),
        pytest.param(MCP, dict(MCP, writes=["set_time"]), "[time] new write tool set_time", id="write-tool"),
        pytest.param(MCP, dict(MCP, server="clock"), "[time] server changed from time to clock", id="server"),
        pytest.param(
            DB,
            dict(DB, queries={"open": {"sql": "SELECT 2"}}),
            "[tasks] query open changed: now SELECT 2",
            id="changed-query",
        ),
    ],
)
def test_each_kind_s_growth_is_named_in_words(
    tmp_path: Path, old: dict[str, Any], new: dict[str, Any], expected: str
) -> None:
    write = any(c.get("write") for c in new.get("calls", {}).values()) or bool(new.get("writes"))
    assert expected in words(tmp_path, [old], [new], write=write)


def test_an_app_s_new_csp_domain_and_html_are_named(tmp_path: Path) -> None:
    app = {
        "server": "srv",
        "uri": "ui://x",
        "sha256": "a" * 64,
        "csp": {"connectDomains": ["https://a.example"]},
    }
    conn = {"id": "app", "kind": "mcp", "server": "srv", "operations": ["t"]}
    before = manifest(tmp_path, "a", [conn], app=app)
    grown = dict(app, sha256="b" * 64, csp={"connectDomains": ["https://a.example", "https://b.example"]})
    after = manifest(tmp_path, "b", [conn], app=grown)
    lines = capabilities.diff(before, after).lines()
    assert "app: new CSP connect domain https://b.example" in lines
    assert f"app: app HTML changed from {'a' * 64} to {'b' * 64}" in lines


def test_removals_alone_are_no_new_capabilities(tmp_path: Path) -> None:
    two = dict(GH, calls={**GH["calls"], "repos": {"method": "GET", "path": "/user/repos"}})
    lines = words(tmp_path, [two, MCP], [GH])
    assert lines == ("no new capabilities", "[gh] call repos removed", "connection [time] removed")


def test_a_renamed_or_re_versioned_extension_with_the_same_connections_adds_nothing(tmp_path: Path) -> None:
    before = manifest(tmp_path, "a", [MCP])
    after = manifest(tmp_path, "b", [MCP], name="Renamed", version="2.0.0")
    diff = capabilities.diff(before, after)
    assert not diff.grows and diff.lines() == ("no new capabilities",)


def test_the_summary_lists_every_connection_and_what_it_may_do(tmp_path: Path) -> None:
    lines = capabilities.summary(manifest(tmp_path, "a", [GH, DB]))
    assert lines[0] == "reads only"
    assert "[gh] http — service github" in lines and "  read me: GET /user" in lines
    assert "[tasks] db — database local (sqlite)" in lines
