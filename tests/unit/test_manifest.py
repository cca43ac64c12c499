"""Manifest validation: the schema and every cross-field rule of the contract, with JSON paths."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from broker.errors import ManifestError
from broker.manifest import load, schema, validate

BASE: dict[str, Any] = {
    "id": "com.example.widget",
    "name": "Widget",
    "version": "1.2.3",
    "kind": "widget",
    "entry": "index.html",
}


def with_conn(conn: dict[str, Any], *, write: bool = False) -> dict[str, Any]:
    m = copy.deepcopy(BASE)
    m["connections"] = [conn]
    if write:
        m["permissions"] = {"write": True}
    return m


def http(calls: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": "gh", "kind": "http", "service": "github", "calls": calls, **extra}


def db(queries: dict[str, Any], engine: str = "sqlite") -> dict[str, Any]:
    return {"id": "app", "kind": "db", "service": "local", "engine": engine, "queries": queries}


def files(paths: list[str], ops: list[str] | None = None) -> dict[str, Any]:
    return {
        "id": "sp",
        "kind": "files",
        "root": "project",
        "paths": paths,
        "operations": ops or ["list", "read"],
    }


def paths_of(manifest: Any) -> list[str]:
    return [i.path for i in validate(manifest)]


# The contract's own examples must be valid.
CONTRACT_EXAMPLES = [
    pytest.param(
        [
            {"id": "tdt", "kind": "tdt-mcp", "operations": ["tdt_workspace_status", "tdt_reminder_list"]},
            http(
                {
                    "issues": {
                        "method": "GET",
                        "path": "/repos/{owner}/{repo}/issues",
                        "query": {"per_page": "{limit}", "state": "open"},
                    }
                }
            ),
        ],
        False,
        id="declare-connections",
    ),
    pytest.param(
        [
            {
                "id": "linear",
                "kind": "http",
                "service": "linear",
                "calls": {
                    "teams": {
                        "method": "POST",
                        "path": "/graphql",
                        "body": {
                            "query": "query($first: Int) { teams(first: $first) { nodes { id name } } }",
                            "variables": {"first": "{limit}"},
                        },
                    }
                },
            }
        ],
        False,
        id="graphql-read",
    ),
    pytest.param(
        [
            http(
                {
                    "close": {
                        "method": "PATCH",
                        "path": "/repos/{owner}/{repo}/issues/{number}",
                        "body": {"state": "closed"},
                        "write": True,
                    }
                }
            )
        ],
        True,
        id="http-write",
    ),
    pytest.param(
        [
            {
                "id": "cal",
                "kind": "http",
                "service": "calendar",
                "oauth2": {
                    "authorizeUrl": "https://auth.example.com/authorize?access_type=offline",
                    "tokenUrl": "https://auth.example.com/token",
                    "scopes": ["calendar.read"],
                },
                "calls": {"events": {"method": "GET", "path": "/events"}},
            }
        ],
        False,
        id="oauth2",
    ),
    pytest.param(
        [{"id": "gh", "kind": "mcp", "server": "github", "operations": ["list_issues", "get_issue"]}],
        False,
        id="mcp",
    ),
    pytest.param([files([".tdt-project/tdt-software-production/**"])], False, id="files"),
    pytest.param(
        [
            db(
                {
                    "recent": {
                        "sql": "SELECT id, title, status FROM tickets WHERE status = $1 "
                        "ORDER BY id DESC LIMIT $2",
                        "params": ["status", "limit"],
                    }
                },
                engine="postgres",
            )
        ],
        False,
        id="db-read",
    ),
    pytest.param(
        [
            db(
                {
                    "close": {
                        "sql": "UPDATE tickets SET status = 'closed' WHERE id = $1",
                        "params": ["id"],
                        "write": True,
                    }
                },
                engine="postgres",
            )
        ],
        True,
        id="db-write",
    ),
]


@pytest.mark.parametrize(("connections", "write"), CONTRACT_EXAMPLES)
def test_contract_examples_are_valid(connections: list[dict[str, Any]], write: bool) -> None:
    m = copy.deepcopy(BASE)
    m["connections"] = connections
    if write:
        m["permissions"] = {"write": True}
    assert validate(m) == []


def test_the_schema_is_valid_json_schema_with_an_id() -> None:
    s = schema()
    jsonschema.Draft202012Validator.check_schema(s)
    assert s["$id"].startswith("https://")


RULES = [
    pytest.param(
        http({f"c{i}": {"method": "GET", "path": "/x"} for i in range(17)}),
        False,
        "$.connections[0].calls",
        id="more-than-16-calls",
    ),
    pytest.param(http({}), False, "$.connections[0].calls", id="no-calls"),
    pytest.param(
        db({f"q{i}": {"sql": "SELECT 1"} for i in range(33)}),
        False,
        "$.connections[0].queries",
        id="more-than-32-queries",
    ),
    pytest.param(
        files([f"a{i}/*" for i in range(17)]), False, "$.connections[0].paths", id="more-than-16-globs"
    ),
    pytest.param(files([]), False, "$.connections[0].paths", id="no-globs"),
    pytest.param(
        http(
            {"e": {"method": "GET", "path": "/e"}},
            oauth2={
                "authorizeUrl": "https://a.example/auth",
                "tokenUrl": "https://a.example/token",
                "scopes": [f"s{i}" for i in range(33)],
            },
        ),
        False,
        "$.connections[0].oauth2.scopes",
        id="more-than-32-scopes",
    ),
    pytest.param(
        http({"w": {"method": "POST", "path": "/x", "body": {}, "write": True}}),
        False,
        "$.connections[0]",
        id="http-write-without-permission",
    ),
    pytest.param(
        db({"w": {"sql": "DELETE FROM t", "write": True}}),
        False,
        "$.connections[0]",
        id="db-write-without-permission",
    ),
    pytest.param(
        files(["*.md"], ["read", "write"]), False, "$.connections[0]", id="files-write-without-permission"
    ),
    pytest.param(
        {"id": "m", "kind": "mcp", "server": "s", "operations": ["a"], "writes": ["b"]},
        False,
        "$.connections[0]",
        id="mcp-write-without-permission",
    ),
    pytest.param(
        {"id": "m", "kind": "mcp", "server": "s", "operations": ["a", "b"], "writes": ["b"]},
        True,
        "$.connections[0].writes[0]",
        id="tool-in-both-lists",
    ),
    pytest.param(
        http({"g": {"method": "GET", "path": "/a/{owner"}}),
        False,
        "$.connections[0].calls.g.path",
        id="malformed-path-placeholder",
    ),
    pytest.param(
        http({"g": {"method": "GET", "path": "/a", "query": {"q": "{1x}"}}}),
        False,
        "$.connections[0].calls.g.query.q",
        id="malformed-query-placeholder",
    ),
    pytest.param(
        http({"g": {"method": "GET", "path": "a/b"}}),
        False,
        "$.connections[0].calls.g.path",
        id="path-without-leading-slash",
    ),
    pytest.param(
        http({"g": {"method": "GET", "path": "//evil.example/x"}}),
        False,
        "$.connections[0].calls.g.path",
        id="path-with-double-slash",
    ),
    pytest.param(
        http({"g": {"method": "GET", "path": "/a/../admin"}}),
        False,
        "$.connections[0].calls.g.path",
        id="path-with-dotdot",
    ),
    pytest.param(
        http({"g": {"method": "GET", "path": "/a/./b"}}),
        False,
        "$.connections[0].calls.g.path",
        id="path-with-dot",
    ),
    pytest.param(
        http({"g": {"method": "GET", "path": "/a/%2e%2e/b"}}),
        False,
        "$.connections[0].calls.g.path",
        id="path-with-encoded-dotdot",
    ),
    pytest.param(
        http({"g": {"method": "GET", "path": "/a?x=1"}}),
        False,
        "$.connections[0].calls.g.path",
        id="path-with-query",
    ),
    pytest.param(
        http({"g": {"method": "DELETE", "path": "/a"}}),
        False,
        "$.connections[0].calls.g.method",
        id="delete-not-marked-write",
    ),
    pytest.param(
        http({"g": {"method": "GET", "path": "/a", "write": True}}),
        True,
        "$.connections[0].calls.g.method",
        id="write-with-get",
    ),
    pytest.param(
        http({"g": {"method": "POST", "path": "/a"}}),
        False,
        "$.connections[0].calls.g.body",
        id="read-post-without-body",
    ),
    pytest.param(
        http({"g": {"method": "GET", "path": "/a", "body": {"x": 1}}}),
        False,
        "$.connections[0].calls.g.body",
        id="get-with-body",
    ),
    pytest.param(
        http(
            {"e": {"method": "GET", "path": "/e"}},
            oauth2={"authorizeUrl": "http://auth.example/authorize", "tokenUrl": "https://a.example/t"},
        ),
        False,
        "$.connections[0].oauth2.authorizeUrl",
        id="plain-http-authorize-url",
    ),
    pytest.param(
        http(
            {"e": {"method": "GET", "path": "/e"}},
            oauth2={"authorizeUrl": "https://user:pw@auth.example/a", "tokenUrl": "https://a.example/t"},
        ),
        False,
        "$.connections[0].oauth2.authorizeUrl",
        id="url-with-credentials",
    ),
    pytest.param(
        http(
            {"e": {"method": "GET", "path": "/e"}},
            oauth2={"authorizeUrl": "https://auth.example/a#frag", "tokenUrl": "https://a.example/t"},
        ),
        False,
        "$.connections[0].oauth2.authorizeUrl",
        id="url-with-fragment",
    ),
    pytest.param(
        http(
            {"e": {"method": "GET", "path": "/e"}},
            oauth2={"authorizeUrl": "https://auth.example/a", "tokenUrl": "https://a.example/t?x=1"},
        ),
        False,
        "$.connections[0].oauth2.tokenUrl",
        id="token-url-with-query",
    ),
    pytest.param(files(["/etc/*"]), False, "$.connections[0].paths[0]", id="absolute-glob"),
    pytest.param(files(["a/../b/*"]), False, "$.connections[0].paths[0]", id="glob-with-dotdot"),
    pytest.param(files(["./a/*"]), False, "$.connections[0].paths[0]", id="glob-with-dot"),
    pytest.param(files(["a\\b"]), False, "$.connections[0].paths[0]", id="glob-with-backslash"),
    pytest.param(files(["a/**b/c"]), False, "$.connections[0].paths[0]", id="double-star-inside-segment"),
    pytest.param(
        db({"q": {"sql": "SELECT * FROM t WHERE a = ?", "params": []}}),
        False,
        "$.connections[0].queries.q.params",
        id="sqlite-placeholder-count",
    ),
    pytest.param(
        db({"q": {"sql": "SELECT * FROM t WHERE a = $1", "params": ["a"]}}),
        False,
        "$.connections[0].queries.q.sql",
        id="sqlite-with-postgres-placeholder",
    ),
    pytest.param(
        db({"q": {"sql": "SELECT * FROM t WHERE a = ?", "params": ["a"]}}, engine="postgres"),
        False,
        "$.connections[0].queries.q.sql",
        id="postgres-with-question-mark",
    ),
    pytest.param(
        db({"q": {"sql": "SELECT $1, $3", "params": ["a", "b", "c"]}}, engine="postgres"),
        False,
        "$.connections[0].queries.q.params",
        id="postgres-gap-in-placeholders",
    ),
    pytest.param(
        db({"q": {"sql": "SELECT * FROM t WHERE a = :a", "params": ["a"]}}),
        False,
        "$.connections[0].queries.q.sql",
        id="sqlite-named-parameter",
    ),
    pytest.param(
        db({"q": {"sql": "SELECT 1; DROP TABLE t"}}),
        False,
        "$.connections[0].queries.q.sql",
        id="two-statements",
    ),
    pytest.param(
        db({"q": {"sql": "SELECT 'unterminated"}}),
        False,
        "$.connections[0].queries.q.sql",
        id="unterminated-string",
    ),
]


@pytest.mark.parametrize(("conn", "write", "expected_path"), RULES)
def test_each_contract_rule_is_reported_at_its_path(
    conn: dict[str, Any], write: bool, expected_path: str
) -> None:
    assert expected_path in paths_of(with_conn(conn, write=write))


@pytest.mark.parametrize(
    ("sql", "params", "engine"),
    [
        pytest.param(
            "SELECT '?' , \"?\" FROM t WHERE a = ? -- ?\n", ["a"], "sqlite", id="sqlite-quoted-question-marks"
        ),
        pytest.param("SELECT $$ $1 ; $$, $1 /* $2 ; */", ["a"], "postgres", id="postgres-dollar-quotes"),
        pytest.param("SELECT 'it''s; fine' WHERE a = ?;", ["a"], "mysql", id="trailing-semicolon"),
        pytest.param(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < ?) SELECT x FROM c",
            ["n"],
            "sqlite",
            id="recursive-cte",
        ),
    ],
)
def test_placeholders_inside_strings_and_comments_do_not_count(
    sql: str, params: list[str], engine: str
) -> None:
    assert validate(with_conn(db({"q": {"sql": sql, "params": params}}, engine=engine))) == []


def test_every_problem_is_reported_at_once() -> None:
    m = copy.deepcopy(BASE)
    m["id"] = "Not An Id"
    m["connections"] = [
        files(["/abs"]),
        http({"g": {"method": "GET", "path": "/../x"}}),
        {"id": "sp", "kind": "files", "root": "nowhere", "paths": ["a"], "operations": ["list"]},
    ]
    paths = paths_of(m)
    assert "$.id" in paths
    assert "$.connections[0].paths[0]" in paths
    assert "$.connections[1].calls.g.path" in paths
    assert "$.connections[2].root" in paths


def test_duplicate_connection_ids_are_refused() -> None:
    m = copy.deepcopy(BASE)
    m["connections"] = [files(["a/*"]), files(["b/*"])]
    assert "$.connections[1].id" in paths_of(m)


def test_unknown_fields_and_kinds_are_refused() -> None:
    m = with_conn({"id": "x", "kind": "ftp"})
    assert "$.connections[0].kind" in paths_of(m)
    m = copy.deepcopy(BASE) | {"extra": 1}
    assert paths_of(m) == ["$.extra"]


def test_a_manifest_with_duplicate_keys_is_refused(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text('{"id": "com.a.b", "id": "com.c.d"}')
    with pytest.raises(ManifestError, match="duplicate key 'id'"):
        load(tmp_path)


def test_a_missing_entry_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text(json.dumps(BASE))
    with pytest.raises(ManifestError) as info:
        load(tmp_path)
    assert [i.path for i in info.value.issues] == ["$.entry"]


def test_the_digest_changes_when_a_reviewed_part_changes(tmp_path: Path) -> None:
    m = with_conn(files(["a/*"]))
    (tmp_path / "index.html").write_text("x")
    (tmp_path / "manifest.json").write_text(json.dumps(m))
    first = load(tmp_path).digest()
    m["description"] = "Described anew"  # not reviewed: same digest
    (tmp_path / "manifest.json").write_text(json.dumps(m))
    assert load(tmp_path).digest() == first
    for part, value in (("name", "Helm (built-in) system update"), ("version", "99.0.0")):
        m[part] = value  # every dialog names it by these: reviewed
        (tmp_path / "manifest.json").write_text(json.dumps(m))
        assert load(tmp_path).digest() != first
        first = load(tmp_path).digest()
    m["connections"][0]["paths"].append("b/*")
    (tmp_path / "manifest.json").write_text(json.dumps(m))
    assert load(tmp_path).digest() != first
