"""The schema is as strict as lint: every rule about one field is in the published schema (what
an editor checks), lint keeps only the rules that span fields, and every message is Helm's.

Each single-field rule is checked three ways: an editor's plain JSON Schema validator rejects
the field, Helm reports it with its message at its path, and no kind's lint makes it. For the
glob, path, template and URL rules, the rule as lint had it is the oracle of a property test.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import unquote

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker.kinds import KINDS
from broker.manifest import published_schema, validate
from broker.templates import PLACEHOLDER
from broker.urls import url_problem
from tests.helpers import manifest_dict

EDITOR = jsonschema.Draft202012Validator(published_schema())
AT = "$.connections[0]"
OAUTH = {"authorizeUrl": "https://auth.example/a", "tokenUrl": "https://auth.example/t"}


def http_call(call: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": "api", "kind": "http", "service": "svc", "calls": {"c": call}, **extra}


def glob(value: str) -> dict[str, Any]:
    return {"id": "fs", "kind": "files", "root": "workspace", "paths": [value], "operations": ["list"]}


def path_call(value: str) -> dict[str, Any]:
    return http_call({"method": "GET", "path": value})


def sign_in(field: str, url: str) -> dict[str, Any]:
    return http_call({"method": "GET", "path": "/x"}, oauth2={**OAUTH, field: url})


SQL = {"id": "app", "kind": "db", "service": "main", "engine": "sqlite",
       "queries": {"q": {"sql": "SELECT 1\x00"}}}  # fmt: skip
BRACES = "braces must form placeholders like {name} (a letter or _, then letters, digits, _)"
RELATIVE = "must be relative (no leading /, ~ or drive)"
NO_TOOLS = {"id": "m", "kind": "mcp", "server": "s", "operations": []}

SINGLE_FIELD = [
    pytest.param(http_call({"method": "GET", "path": "/x", "write": True}), f"{AT}.calls.c.method",
                 "a write call must use POST, PUT, PATCH or DELETE", id="write-get"),
    pytest.param(http_call({"method": "DELETE", "path": "/x"}), f"{AT}.calls.c.method",
                 'PUT, PATCH and DELETE change data: mark the call "write": true', id="read-delete"),
    pytest.param(http_call({"method": "POST", "path": "/x"}), f"{AT}.calls.c.body",
                 "a read POST must declare its body", id="read-post-without-body"),
    pytest.param(http_call({"method": "GET", "path": "/x", "body": {}}), f"{AT}.calls.c.body",
                 "a GET call cannot have a body", id="get-with-body"),
    pytest.param(path_call("x"), f"{AT}.calls.c.path", "must start with exactly one /", id="path-relative"),
    pytest.param(path_call("//evil/x"), f"{AT}.calls.c.path", "must start with exactly one /", id="path-//"),
    pytest.param(path_call("/x?a=1"), f"{AT}.calls.c.path",
                 "must not contain ?, #, backslashes, spaces or control characters (use query)", id="path-?"),
    pytest.param(path_call("/a/%2E./b"), f"{AT}.calls.c.path", "must not contain . or .. segments",
                 id="path-encoded-dots"),
    pytest.param(path_call("/a/{x"), f"{AT}.calls.c.path", BRACES, id="path-{"),
    pytest.param(http_call({"method": "GET", "path": "/x", "query": {"q": "{1}"}}), f"{AT}.calls.c.query.q",
                 BRACES, id="query-brace"),
    pytest.param(sign_in("authorizeUrl", "http://auth.example/a"), f"{AT}.oauth2.authorizeUrl",
                 "must be https; http is permitted only for 127.0.0.1 and localhost", id="url-http"),
    pytest.param(sign_in("authorizeUrl", "https://u:p@auth.example/a"), f"{AT}.oauth2.authorizeUrl",
                 "must not contain credentials", id="url-credentials"),
    pytest.param(sign_in("authorizeUrl", "https://auth.example/a#f"), f"{AT}.oauth2.authorizeUrl",
                 "must not contain a fragment", id="url-fragment"),
    pytest.param(sign_in("tokenUrl", "https://auth.example/t?x=1"), f"{AT}.oauth2.tokenUrl",
                 "must not contain a query", id="url-query"),
    pytest.param(sign_in("tokenUrl", "https://auth.example:0/t"), f"{AT}.oauth2.tokenUrl",
                 "must name a host, with a port from 1 to 65535 if any", id="url-port-0"),
    pytest.param(glob("a\\b"), f"{AT}.paths[0]", "must not contain NUL or backslashes", id="glob-backslash"),
    pytest.param(glob("~/x"), f"{AT}.paths[0]", RELATIVE, id="glob-home"),
    pytest.param(glob("c:x"), f"{AT}.paths[0]", RELATIVE, id="glob-drive"),
    pytest.param(glob("a//b"), f"{AT}.paths[0]", "must not have empty segments (//) or a trailing /",
                 id="glob-empty-segment"),
    pytest.param(glob("a/../b"), f"{AT}.paths[0]", "must not contain . or .. segments", id="glob-dots"),
    pytest.param(glob("a/**b"), f"{AT}.paths[0]", "** must be a whole segment", id="glob-**"),
    pytest.param(glob("a/[ab]"), f"{AT}.paths[0]", "only * and ? are wildcards; [ ] { } are not allowed",
                 id="glob-brackets"),
    pytest.param(NO_TOOLS, f"{AT}.operations", "declare at least one tool", id="mcp-no-tool"),
    pytest.param(SQL, f"{AT}.queries.q.sql", "contains a NUL character", id="sql-nul"),
]  # fmt: skip


def raw_manifest(conn: dict[str, Any]) -> dict[str, Any]:
    return manifest_dict([conn], write=True)


def editor_paths(raw: Any) -> set[str]:
    """Where a plain JSON Schema validator (an editor) finds problems, with the fields a
    ``required`` error names."""
    paths = set()
    for err in EDITOR.iter_errors(raw):
        at = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
        paths.add(at)
        if err.validator == "required":
            paths |= {f"{at}.{name}" for name in err.validator_value}
    return paths


def lint_messages(raw: dict[str, Any]) -> set[str]:
    conn = raw["connections"][0]
    return {i.message for i in KINDS[conn["kind"]].lint(conn, AT, raw)}


@pytest.mark.parametrize(("conn", "path", "message"), SINGLE_FIELD)
def test_a_rule_about_one_field_is_in_the_schema_an_editor_reads_and_not_in_lint(
    conn: dict[str, Any], path: str, message: str
) -> None:
    raw = raw_manifest(conn)
    assert path in editor_paths(raw)
    assert (path, message) in [(i.path, i.message) for i in validate(raw)]
    assert message not in lint_messages(raw)


def test_a_tool_has_no_size_and_an_app_is_a_widget_in_the_schema() -> None:
    tool = manifest_dict([], kind="tool", size="small")
    assert "$.size" in editor_paths(tool)
    assert [(i.path, i.message) for i in validate(tool)] == [
        ("$.size", "only widgets have a size on the dashboard (a tool fills its tab): remove it")
    ]


CROSS_FIELD = [
    pytest.param(manifest_dict([glob("a/*"), glob("b/*")]), "$.connections[1].id", id="duplicate-id"),
    pytest.param(manifest_dict([glob("a/*") | {"operations": ["write"]}]), AT, id="write-without-permission"),
    pytest.param(manifest_dict([NO_TOOLS | {"operations": ["a"], "writes": ["a"]}], write=True),
                 f"{AT}.writes[0]", id="tool-read-and-write"),
    pytest.param(manifest_dict([SQL | {"queries": {"q": {"sql": "SELECT ?"}}}]), f"{AT}.queries.q.params",
                 id="sql-placeholders-and-params"),
]  # fmt: skip


@pytest.mark.parametrize(("raw", "path"), CROSS_FIELD)
def test_rules_that_span_fields_stay_in_lint_where_the_schema_cannot_say_them(raw: Any, path: str) -> None:
    assert editor_paths(raw) == set()
    assert path in [i.path for i in validate(raw)]


def patterns(node: Any) -> Iterator[Mapping[str, Any]]:
    if isinstance(node, Mapping):
        if "pattern" in node:
            yield node
        for value in node.values():
            yield from patterns(value)
    elif isinstance(node, list):
        for value in node:
            yield from patterns(value)


def test_every_pattern_in_the_schema_says_what_is_wrong_in_helms_words() -> None:
    found = list(patterns(published_schema()))
    assert len(found) > 20
    assert [p["pattern"] for p in found if not p.get("patternErrorMessage")] == []


RAW_WORDING = (
    "does not match", "is not one of", "is a required property", "Additional properties",
    "is not of type", "is too long", "is too short", "should be non-empty", "False schema",
)  # fmt: skip


def test_no_message_is_jsonschemas_own_wording() -> None:
    broken = manifest_dict(
        [glob("/x"), http_call({"method": "FETCH", "path": "x", "extra": 1}), {"id": "d", "kind": "db"}],
        id="Not An Id", version="1", kind="gadget", entry="/x.txt", settings={"1x": {"type": "colour"}},
        size={"minWidth": 10}, permissions={"write": "yes"}, extra=True,
    )  # fmt: skip
    messages = [i.message for i in validate(broken)]
    assert len(messages) >= 12
    assert [m for m in messages if any(words in m for words in RAW_WORDING)] == []
    found = validate(broken)
    assert any(i.path == "$.extra" and i.message.startswith("unknown field (known: ") for i in found)
    typo = validate(manifest_dict([], entyr="x"))
    assert [(i.path, i.message) for i in typo] == [("$.entyr", "unknown field; did you mean 'entry'?")]


def test_one_fields_problem_hides_no_other_problem() -> None:
    conn = glob("a\\../b") | {"operations": ["list", "write"]}
    found = [(i.path, i.message) for i in validate(manifest_dict([conn, glob("x/*") | {"id": "fs"}]))]
    assert (f"{AT}.paths[0]", "must not contain NUL or backslashes") in found
    assert (f"{AT}.paths[0]", "must not contain . or .. segments") not in found  # a\.. is one segment
    assert any(p == AT and "permissions" in m for p, m in found)  # the shape error hides no rule
    assert ("$.connections[1].id", "duplicate connection id 'fs' (also at $.connections[0])") in found


# -- the rules as lint had them: the schema must say no wherever they said no -------------------


def old_glob_problem(value: str) -> bool:
    if "\x00" in value or "\\" in value or value.startswith(("/", "~")) or value[1:2] == ":":
        return True
    for segment in value.split("/"):
        if segment in ("", ".", "..") or ("**" in segment and segment != "**"):
            return True
        if any(c in segment for c in "[]{}"):
            return True
    return False


def old_template_problem(value: str) -> bool:
    rest = PLACEHOLDER.sub("", value)
    return "{" in rest or "}" in rest


def old_path_problem(value: str) -> bool:
    if not value.startswith("/") or value.startswith("//"):
        return True
    if any(c in value for c in "?#\\") or any(ord(c) < 0x21 or ord(c) == 0x7F for c in value):
        return True
    return any(unquote(s) in (".", "..") for s in value.split("/")[1:]) or old_template_problem(value)


def schema_rejects(definition: str, value: str) -> bool:
    resolved = {"$ref": f"#/$defs/{definition}", "$defs": published_schema()["$defs"]}
    return not jsonschema.Draft202012Validator(resolved).is_valid(value)


GLOBS = st.text(alphabet="ab*?/.~:\\[]{}\x00 %2eE", min_size=1, max_size=12)
PATHS = st.text(alphabet="/ab.%2eE{}x_1?#\\ \x7f", min_size=1, max_size=14)
URLS = st.builds(
    lambda scheme, auth, host, port, rest: f"{scheme}{auth}{host}{port}{rest}",
    st.sampled_from(["https://", "HTTPS://", "http://", "ftp://", "https:/", ""]),
    st.sampled_from(["", "u@", "u:p@"]),
    st.sampled_from(["a.example", "127.0.0.1", "LocalHost", "[::1]", "127.0.0.1.evil", "", "a b", "x]"]),
    st.sampled_from(["", ":0", ":1", ":443", ":65535", ":65536", ":x", ":"]),
    st.sampled_from(["", "/", "/p?q=1", "/p#f", "#", "?", "/p\\q", "/\x01"]),
)


@given(GLOBS)
def test_the_schema_refuses_exactly_the_globs_lint_refused(value: str) -> None:
    assert schema_rejects("filesGlob", value) == old_glob_problem(value)


@given(PATHS)
def test_the_schema_refuses_exactly_the_call_paths_lint_refused(value: str) -> None:
    path_schema = published_schema()["$defs"]["httpCall"]["properties"]["path"]
    rejected = not jsonschema.Draft202012Validator(path_schema).is_valid(value)
    assert rejected == old_path_problem(value)


@given(st.text(alphabet="{}ab_1 ", max_size=10))
def test_the_schema_refuses_exactly_the_templates_lint_refused(value: str) -> None:
    assert schema_rejects("httpTemplate", value) == old_template_problem(value)


@given(URLS)
def test_the_schema_refuses_every_sign_in_url_the_url_rule_refuses(value: str) -> None:
    if url_problem(value) is not None:
        assert schema_rejects("signInUrl", value)


def test_sign_in_urls_the_url_rule_accepts_pass_the_schema() -> None:
    for value in (
        "https://a.example/x?y=1",
        "http://127.0.0.1:9/a",
        "http://LOCALHOST/a",
        "https://[::1]:8443/",
    ):
        assert url_problem(value) is None
        assert not schema_rejects("signInUrl", value)


def test_the_manifest_rules_are_unchanged_for_a_valid_manifest() -> None:
    raw = manifest_dict([glob("docs/**/*.md"), path_call("/repos/{owner}/issues")])
    assert validate(copy.deepcopy(raw)) == []
    assert editor_paths(raw) == set()
