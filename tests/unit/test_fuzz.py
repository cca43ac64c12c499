"""Property tests and a fuzz pass over the decisions that guard the boundary.

* canonical JSON and the argument digest: equal requests give equal digests, different ones
  different digests (key order, Unicode normalisation forms, -0.0/0, big integers, floats);
* the envelope builders: every kind's shape for every error code;
* ``Broker.request_json`` with random and hostile JSON text and wrong parameter types, through
  a real broker with a files, a SQLite db, an http and an mcp connection: the answer is always
  an envelope as UTF-8 JSON, never an exception, and memory stays bounded.

Hypothesis runs derandomized under CI with no example database (tests/conftest.py).
"""

from __future__ import annotations

import asyncio
import json
import math
import sqlite3
import tracemalloc
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broker import Broker, CallContext, CallError, Decision, ErrorCode, envelope
from broker.jsonutil import canonical, digest, loads_strict
from broker.kinds import KINDS
from broker.kinds.db.profiles import DATABASES, DbProfile
from broker.ratelimit import CallAdmission
from broker.tokens import Binding, Redemption, TokenBook
from tests.helpers import ScriptedConfirmer, manifest_dict, new_broker, setup_extension

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**300), max_value=10**300)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=25,
)


def same(a: Any, b: Any) -> bool:
    """Equal as JSON, strictly: types kept apart (1, 1.0, True) and -0.0 apart from 0.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return math.copysign(1.0, a) == math.copysign(1.0, b) and a == b
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


def reordered(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [reordered(v) for v in value]
    return value


@given(json_values)
def test_an_equal_request_has_an_equal_digest_whatever_its_key_order_or_spacing(value: Any) -> None:
    resent = json.loads(json.dumps(reordered(value), indent=1))
    assert digest(resent) == digest(value) == digest(reordered(value))


@given(json_values)
def test_canonical_text_loses_nothing_so_different_requests_get_different_digests(value: Any) -> None:
    assert same(loads_strict(canonical(value)), value)


@given(json_values, json_values)
def test_two_requests_share_a_digest_only_when_they_are_the_same_json(a: Any, b: Any) -> None:
    assert (digest(a) == digest(b)) == same(loads_strict(canonical(a)), loads_strict(canonical(b)))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        pytest.param(0.0, -0.0, id="zero-and-negative-zero"),
        pytest.param(1, 1.0, id="int-and-float"),
        pytest.param(1, True, id="int-and-bool"),
        pytest.param(2**64, 2**64 + 1, id="big-ints"),
        pytest.param(0.1 + 0.2, 0.3, id="nearby-floats"),
        pytest.param([1, 2], [2, 1], id="list-order"),
        pytest.param({"a": 1}, {"a": "1"}, id="number-and-string"),
        pytest.param("\u00e9", "e\u0301", id="nfc-and-nfd"),
    ],
)
def test_different_requests_have_different_digests(a: Any, b: Any) -> None:
    assert digest({"args": a}) != digest({"args": b})


@given(st.text(min_size=1))
def test_unicode_normalisation_forms_are_different_requests(text: str) -> None:
    nfc, nfd = unicodedata.normalize("NFC", text), unicodedata.normalize("NFD", text)
    assert (digest({"text": nfc}) == digest({"text": nfd})) == (nfc == nfd)


@given(json_values, json_values)
def test_a_token_redeems_only_for_the_request_it_was_minted_for(a: Any, b: Any) -> None:
    book = TokenBook()
    binding = Binding("ws", "ext", "conn", "op", digest(a))
    token, _ = book.mint(binding)
    verdict = book.redeem(token, Binding("ws", "ext", "conn", "op", digest(b)))
    assert (verdict is Redemption.VALID) == same(loads_strict(canonical(a)), loads_strict(canonical(b)))


# -- envelopes -----------------------------------------------------------------------------

SHAPES = {
    "http": {"ok", "status", "data", "error"},
    "tdt-mcp": {"api_version", "ok", "data", "coverage", "warnings", "error"},
}


@given(
    st.sampled_from(sorted(KINDS)),
    st.sampled_from(list(ErrorCode)),
    st.text(),
    json_values,
    st.none() | st.integers(100, 599),
    st.none() | st.floats(0.001, 60.0),
    st.booleans(),
)
def test_every_kind_builds_its_failure_shape_for_every_error_code(
    kind: str, code: ErrorCode, message: str, data: Any, status: int | None, retry: float | None, write: bool
) -> None:
    err = CallError(code, message, data=data, status=status, retry_after=retry)
    result = envelope.failure(kind, err, write=write)
    assert set(result) == SHAPES.get(kind, {"ok", "data", "error"})
    assert result["ok"] is False
    waits = f" (call again in {math.ceil(retry)} s)" if kind == "tdt-mcp" and retry is not None else ""
    assert result["error"]["code"] == code.value and result["error"]["message"] == message + waits
    if kind == "tdt-mcp":  # TDT's error keys exactly; a rate limit's wait is in its message
        assert set(result["error"]) == {"code", "message", "retry"} and result["api_version"] == 1
        assert result["error"]["retry"] in {"safe", "reread", "inspect_outcome"}
        assert not write or result["error"]["retry"] != "safe" or code is ErrorCode.RATE_LIMITED
    else:
        assert ("retryAfter" in result["error"]) == (retry is not None)
    if kind == "http":
        assert result["status"] == status
    assert same(json.loads(json.dumps(result))["data"], data)


@given(st.sampled_from(sorted(KINDS)), json_values, st.none() | st.integers(200, 299))
def test_every_kind_builds_its_success_shape(kind: str, data: Any, status: int | None) -> None:
    result = envelope.success(kind, data, status=status)
    assert set(result) == SHAPES.get(kind, {"ok", "data", "error"})
    assert result["ok"] is True and result["error"] is None and result["data"] is data


# -- request_json ----------------------------------------------------------------------------

CONNECTIONS = [
    {"id": "notes", "kind": "files", "root": "workspace", "paths": ["*.md"],
     "operations": ["list", "read", "write"]},
    {"id": "app", "kind": "db", "service": "local", "engine": "sqlite", "queries": {
        "rows": {"sql": "SELECT id, v FROM t WHERE id = ?", "params": ["id"]},
        "set": {"sql": "UPDATE t SET v = ? WHERE id = ?", "params": ["v", "id"], "write": True}}},
    {"id": "gh", "kind": "http", "service": "github", "calls": {
        "issue": {"method": "GET", "path": "/issues/{number}", "query": {"q": "{q}"}}}},
    {"id": "m", "kind": "mcp", "server": "later", "operations": ["echo"]},
]  # fmt: skip
PARAMETERS = ["path", "paths", "text", "expected_sha256", "project", "id", "v", "number", "q", "x"]
HOSTILE = [
    "[" * 200_000,
    '{"a":' * 50_000 + "1" + "}" * 50_000,
    '{"path": ' + "[" * 900 + "]" * 900 + "}",
    '{"id": ' + "9" * 5000 + "}",
    '{"id": ' + "9" * 4000 + "}",
    '{"id": 1e999}',
    '{"id": -1e999, "v": 1}',
    '{"id": NaN}',
    '{"id": Infinity}',
    '{"path": "\\ud800"}',
    '{"v": "\\udfff\\ud800", "id": 1}',
    '{"path": "a.md", "path": "b.md"}',
    '{"id": -0, "v": -0.0}',
    '{"id": 1, "v": {"deep": [1, {"x": null}]}}',
    '{"paths": "a.md"}',
    '{"paths": [1, null, {}]}',
    '{"text": 5, "path": [], "expected_sha256": {}}',
    '{"number": "..", "q": "\\u0000"}',
    '{"number": "' + "x" * 5000 + '"}',
    '{"' + "k" * 100_000 + '": 1}',
    "{" + ",".join(f'"k{i}": {i}' for i in range(15_000)) + "}",
    "[1, 2]",
    "null",
    '"text"',
    "",
    "{",
    "\ufeff{}",
    "x" * (256 * 1024 + 1),
]


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[asyncio.Runner, Broker, CallContext]]:
    db = tmp_path / "t.db"
    with sqlite3.connect(db) as conn:
        conn.executescript("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'a');")
    conn.close()
    with asyncio.Runner() as runner:
        broker = new_broker(tmp_path / "home")
        runner.run(broker.__aenter__())
        broker.admission = CallAdmission(per_minute=10**9)  # fuzz the call, not the rate limit
        DATABASES.store(broker.home, broker.credentials).save(
            DbProfile(name="local", engine="sqlite", path=str(db))
        )
        ctx = runner.run(setup_extension(broker, tmp_path, manifest_dict(CONNECTIONS, write=True)))
        (tmp_path / "root" / "a.md").write_text("hello\n")
        yield runner, broker, ctx
        runner.run(broker.aclose())


def answer(runner: asyncio.Runner, broker: Broker, ctx: CallContext, *call: Any) -> dict[str, Any]:
    confirm = ScriptedConfirmer(Decision.DECLINED)
    text = runner.run(broker.request_json(ctx, *call, confirm))
    assert isinstance(text, str)
    text.encode("utf-8")  # valid UTF-8 text, whatever came in
    result = json.loads(text)
    assert isinstance(result, dict) and isinstance(result.get("ok"), bool)
    if not result["ok"]:
        assert result["error"]["code"] in {c.value for c in ErrorCode}
        assert isinstance(result["error"]["message"], str)
    return result


def outcome(result: dict[str, Any]) -> str:
    return "ok" if result["ok"] else str(result["error"]["code"])


names = st.sampled_from([c["id"] for c in CONNECTIONS]) | st.text(max_size=20)
operations = st.sampled_from(["list", "read", "write", "rows", "set", "issue", "echo"]) | st.text(max_size=20)
hostile_values = json_values | st.sampled_from(
    [[], {}, "..", "../../etc/passwd", "a.md", 2**63, -(2**63) - 1, 1e308]
)
arguments = st.dictionaries(st.sampled_from(PARAMETERS) | st.text(max_size=5), hostile_values, max_size=5)
json_texts = (
    arguments.map(json.dumps)
    | st.text(max_size=200)
    | st.sampled_from(HOSTILE[:-2])
    | json_values.map(lambda v: json.dumps(v, ensure_ascii=False))
)
wrong_types = st.none() | st.integers() | st.binary(max_size=10) | st.lists(st.integers(), max_size=2)

FUZZ = settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(names, operations, json_texts)
def test_request_json_always_answers_with_an_envelope(
    world: tuple[asyncio.Runner, Broker, CallContext], connection: str, operation: str, args_json: str
) -> None:
    answer(*world, connection, operation, args_json)


@FUZZ
@given(st.integers(0, 2), wrong_types)
def test_request_json_refuses_parameters_of_the_wrong_type(
    world: tuple[asyncio.Runner, Broker, CallContext], position: int, wrong: Any
) -> None:
    call: list[Any] = ["notes", "list", "{}"]
    call[position] = wrong
    assert answer(*world, *call)["error"]["code"] == "refused"


def test_hostile_json_text_is_refused_within_bounded_memory(
    world: tuple[asyncio.Runner, Broker, CallContext],
) -> None:
    for text in HOSTILE:  # warm up: kinds loaded, caches filled
        answer(*world, "app", "rows", text)
    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        codes = {outcome(answer(*world, conn, op, text)) for text in HOSTILE
                 for conn, op in (("app", "rows"), ("notes", "read"), ("gh", "issue"))}  # fmt: skip
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert codes <= {"ok", "refused", "too_large", "not_configured"}
    assert peak - base < 64 * 1024 * 1024
    assert current - base < 4 * 1024 * 1024
