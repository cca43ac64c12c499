"""The broker's pipeline: everything checked before a kind is reached, and the write flow.

Through the real broker on a real home; the files kind is the working kind these tests use.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from broker import Broker, CallContext, Decision
from broker.extensions import install, review_and_approve, set_enabled
from broker.kinds.db.profiles import DATABASES, DbProfile
from tests.helpers import ScriptedConfirmer, manifest_dict, new_broker, setup_extension, write_extension

FILES = {
    "id": "notes",
    "kind": "files",
    "root": "workspace",
    "paths": ["notes/*.md"],
    "operations": ["list", "read", "write"],
}


@pytest.fixture
async def broker(tmp_path: Path) -> Any:
    async with new_broker(tmp_path / "home") as b:
        yield b


@pytest.fixture
async def ctx(broker: Broker, tmp_path: Path) -> CallContext:
    ctx = await setup_extension(broker, tmp_path, manifest_dict([FILES], write=True))
    notes = tmp_path / "root" / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("hello\n")
    return ctx


def code(result: dict[str, Any]) -> str | None:
    return None if result["ok"] else result["error"]["code"]


async def test_a_declared_read_reaches_the_kind(broker: Broker, ctx: CallContext) -> None:
    result = await broker.call(ctx, "notes", "read", {"path": "notes/a.md"})
    assert result == {
        "ok": True,
        "error": None,
        "data": {"path": "notes/a.md", "text": "hello\n", "sha256": hashlib.sha256(b"hello\n").hexdigest()},
    }


async def test_an_unknown_workspace_is_not_configured(broker: Broker, ctx: CallContext) -> None:
    other = CallContext("nowhere", ctx.extension, ctx.instance)
    assert code(await broker.call(other, "notes", "list", {})) == "not_configured"


@pytest.mark.parametrize("damage", ["{not json", '{"version": 9}', "[" * 100_000])
async def test_damaged_settings_say_helms_settings_cannot_be_read_not_that_the_workspace_is_missing(
    broker: Broker, ctx: CallContext, damage: str
) -> None:
    broker.home.settings_path.write_text(damage, encoding="utf-8")
    result = await broker.call(ctx, "notes", "read", {"path": "notes/a.md"})
    assert result["error"]["code"] == "unavailable"
    assert result["error"]["message"] == (
        "Helm's settings cannot be read: settings.json in Helm's home folder is damaged "
        "(the user must fix it or move it away)"
    )
    assert broker.home.settings_path.read_text("utf-8") == damage


@pytest.mark.parametrize(
    ("connection", "operation", "args", "why"),
    [
        pytest.param("undeclared", "list", {}, "'undeclared' is not declared", id="undeclared-connection"),
        pytest.param("notes", "delete", {}, "operation 'delete' is not declared", id="undeclared-operation"),
        pytest.param("notes", "list", [1, 2], "must be a JSON object", id="args-not-an-object"),
        pytest.param("notes", "list", {"x": float("nan")}, "plain JSON values", id="args-not-json"),
    ],
)
async def test_undeclared_calls_and_bad_arguments_are_refused(
    broker: Broker, ctx: CallContext, connection: str, operation: str, args: Any, why: str
) -> None:
    result = await broker.call(ctx, connection, operation, args)
    assert code(result) == "refused" and why in result["error"]["message"]


async def test_an_extension_not_installed_or_disabled_is_refused(broker: Broker, ctx: CallContext) -> None:
    stranger = CallContext(ctx.workspace, "com.example.stranger", ctx.instance)
    assert code(await broker.call(stranger, "notes", "list", {})) == "refused"
    set_enabled(broker.home, ctx.workspace, ctx.extension, False)
    assert code(await broker.call(ctx, "notes", "list", {})) == "refused"


async def test_an_unapproved_extension_is_refused(broker: Broker, tmp_path: Path) -> None:
    m = manifest_dict([FILES], write=True) | {"id": "com.example.unapproved"}
    ctx = await setup_extension(broker, tmp_path, m, approved=False)
    result = await broker.call(ctx, "notes", "list", {})
    assert code(result) == "refused"
    assert "approv" in result["error"]["message"]


async def test_a_changed_manifest_needs_a_new_approval(
    broker: Broker, ctx: CallContext, tmp_path: Path
) -> None:
    assert (await broker.call(ctx, "notes", "list", {}))["ok"]
    folder = tmp_path / "ext" / ctx.extension
    changed = manifest_dict([FILES | {"paths": ["**"]}], write=True)
    write_extension(folder, changed)
    assert code(await broker.call(ctx, "notes", "list", {})) == "refused"
    install(broker.home, ctx.workspace, folder)
    await review_and_approve(broker, ctx.workspace, ctx.extension)
    assert (await broker.call(ctx, "notes", "list", {}))["ok"]


@pytest.mark.parametrize(
    "change", [{"name": "Helm (built-in) system update"}, {"version": "99.0.0"}], ids=["name", "version"]
)
async def test_a_renamed_or_re_versioned_extension_needs_a_new_approval_before_any_write_dialog(
    broker: Broker, ctx: CallContext, tmp_path: Path, change: dict[str, str]
) -> None:
    folder = tmp_path / "ext" / ctx.extension
    write_extension(folder, manifest_dict([FILES], write=True) | change)
    confirm = ScriptedConfirmer()
    result = await broker.request(ctx, "notes", "write", write_args(), confirm)
    assert code(result) == "refused" and "review" in result["error"]["message"]
    assert confirm.shown == []  # no dialog ever named it by its new name
    assert broker.standing(ctx.workspace, ctx.extension).needs_review
    await review_and_approve(broker, ctx.workspace, ctx.extension)
    assert (await broker.request(ctx, "notes", "write", write_args(), confirm))["ok"]
    name = change.get("name", "Test extension")
    assert confirm.shown[0].who == f"{name} ({ctx.extension})"


async def test_a_manifest_replaced_by_one_of_the_same_size_and_time_is_noticed(
    broker: Broker, ctx: CallContext, tmp_path: Path
) -> None:
    assert (await broker.call(ctx, "notes", "list", {}))["ok"]
    file = tmp_path / "ext" / ctx.extension / "manifest.json"
    before = file.stat()
    text = file.read_text("utf-8").replace('"notes/*.md"', '"*/*.md****"')  # wider, same size
    new = file.with_name("manifest.new")
    new.write_text(text, "utf-8")
    os.utime(new, ns=(before.st_atime_ns, before.st_mtime_ns))  # as a save in the same clock tick
    os.replace(new, file)
    assert (file.stat().st_size, file.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert code(await broker.call(ctx, "notes", "list", {})) == "refused"


async def test_a_call_message_over_256_kib_is_too_large(broker: Broker, ctx: CallContext) -> None:
    big = {"path": "notes/a.md", "pad": "x" * (256 * 1024)}
    assert code(await broker.call(ctx, "notes", "read", big)) == "too_large"
    text = await broker.request_json(ctx, "notes", "read", json.dumps(big), ScriptedConfirmer())
    assert code(json.loads(text)) == "too_large"


async def test_arguments_with_a_duplicate_key_are_refused(broker: Broker, ctx: CallContext) -> None:
    text = await broker.request_json(
        ctx, "notes", "read", '{"path": "notes/a.md", "path": "notes/b.md"}', ScriptedConfirmer()
    )
    assert code(json.loads(text)) == "refused"


async def test_the_61st_call_in_a_minute_is_rate_limited(broker: Broker, ctx: CallContext) -> None:
    for _ in range(60):
        assert (await broker.call(ctx, "notes", "list", {}))["ok"]
    result = await broker.call(ctx, "notes", "list", {})
    assert code(result) == "rate_limited"
    assert 0 < result["error"]["retryAfter"] <= 60
    other = CallContext(ctx.workspace, ctx.extension, "another-frame")
    assert (await broker.call(other, "notes", "list", {}))["ok"]


async def test_the_same_extension_id_in_another_workspace_has_its_own_budget(
    broker: Broker, ctx: CallContext, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    imposter = await setup_extension(broker, elsewhere, manifest_dict([FILES], write=True), workspace="ws2")
    assert (imposter.extension, imposter.instance) == (ctx.extension, ctx.instance)
    for _ in range(60):
        await broker.call(imposter, "notes", "list", {})
    assert code(await broker.call(imposter, "notes", "list", {})) == "rate_limited"
    assert (await broker.call(ctx, "notes", "list", {}))["ok"]


async def test_non_scalar_values_in_arguments_no_query_uses_are_refused(
    broker: Broker, tmp_path: Path
) -> None:
    db = tmp_path / "t.db"
    sqlite3.connect(db).close()
    profile = DbProfile(name="local", engine="sqlite", path=str(db))
    DATABASES.store(broker.home, broker.credentials).save(profile)
    query = {"one": {"sql": "SELECT ? AS v", "params": ["v"]}}
    conn = {"id": "app", "kind": "db", "service": "local", "engine": "sqlite", "queries": query}
    ctx = await setup_extension(broker, tmp_path, manifest_dict([conn]) | {"id": "com.example.db"})
    fine = await broker.call(ctx, "app", "one", {"v": 1, "unused": "text"})
    nested = await broker.call(ctx, "app", "one", {"v": 1, "unused": {"deep": [1]}})
    assert fine["data"]["rows"] == [[1]]
    assert code(nested) == "refused"
    assert "'unused' must be a string, a number, a boolean or null" in nested["error"]["message"]


# -- writes --------------------------------------------------------------------------------


def write_args(text: str = "changed\n") -> dict[str, Any]:
    return {"path": "notes/a.md", "text": text, "expected_sha256": hashlib.sha256(b"hello\n").hexdigest()}


async def test_a_write_without_a_token_returns_confirmation_required(
    broker: Broker, ctx: CallContext, tmp_path: Path
) -> None:
    assert code(await broker.call(ctx, "notes", "write", write_args())) == "confirmation_required"
    assert (tmp_path / "root" / "notes" / "a.md").read_text() == "hello\n"


async def test_a_confirmed_write_is_sent_once(broker: Broker, ctx: CallContext, tmp_path: Path) -> None:
    summary = await broker.describe_write(ctx, "notes", "write", write_args())
    assert summary.title == "Confirm file change"
    assert (await broker.call(ctx, "notes", "write", write_args(), confirmation=summary.token))["ok"]
    assert (tmp_path / "root" / "notes" / "a.md").read_text() == "changed\n"
    reused = await broker.call(ctx, "notes", "write", write_args("again\n"), confirmation=summary.token)
    assert code(reused) == "confirmation_required"
    assert (tmp_path / "root" / "notes" / "a.md").read_text() == "changed\n"


async def test_arguments_changed_after_confirming_return_confirmation_required(
    broker: Broker, ctx: CallContext, tmp_path: Path
) -> None:
    summary = await broker.describe_write(ctx, "notes", "write", write_args("what the user saw\n"))
    result = await broker.call(
        ctx, "notes", "write", write_args("something else\n"), confirmation=summary.token
    )
    assert code(result) == "confirmation_required"
    assert (tmp_path / "root" / "notes" / "a.md").read_text() == "hello\n"


async def test_an_expired_token_returns_confirmation_required(
    broker: Broker, ctx: CallContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = await broker.describe_write(ctx, "notes", "write", write_args())
    monkeypatch.setattr(broker.tokens, "_clock", lambda: float("inf"))
    result = await broker.call(ctx, "notes", "write", write_args(), confirmation=summary.token)
    assert code(result) == "confirmation_required"
    assert "expired" in result["error"]["message"]
    assert (tmp_path / "root" / "notes" / "a.md").read_text() == "hello\n"


async def test_a_token_minted_for_another_extension_or_workspace_is_refused(
    broker: Broker, ctx: CallContext, tmp_path: Path
) -> None:
    other_ext = await setup_extension(
        broker, tmp_path, manifest_dict([FILES], write=True) | {"id": "com.example.other"}
    )
    (tmp_path / "ws2").mkdir()
    from broker.workspaces import add_workspace

    add_workspace(broker.home, "ws2", tmp_path / "root")
    install(broker.home, "ws2", tmp_path / "ext" / ctx.extension)
    await review_and_approve(broker, "ws2", ctx.extension)
    other_ws = CallContext("ws2", ctx.extension, ctx.instance)
    for minted_for in (other_ext, other_ws):
        summary = await broker.describe_write(minted_for, "notes", "write", write_args())
        result = await broker.call(ctx, "notes", "write", write_args(), confirmation=summary.token)
        assert code(result) == "confirmation_required"
    assert (tmp_path / "root" / "notes" / "a.md").read_text() == "hello\n"


async def test_a_token_minted_for_another_operation_is_refused(broker: Broker, tmp_path: Path) -> None:
    two = [FILES, FILES | {"id": "notes2"}]
    ctx = await setup_extension(broker, tmp_path, manifest_dict(two, write=True))
    (tmp_path / "root" / "notes").mkdir()
    (tmp_path / "root" / "notes" / "a.md").write_text("hello\n")
    summary = await broker.describe_write(ctx, "notes2", "write", write_args())
    assert (
        code(await broker.call(ctx, "notes", "write", write_args(), confirmation=summary.token))
        == "confirmation_required"
    )


async def test_the_request_flow_confirms_declines_and_audits(
    broker: Broker, ctx: CallContext, tmp_path: Path
) -> None:
    declined = await broker.request(ctx, "notes", "write", write_args(), ScriptedConfirmer(Decision.DECLINED))
    assert code(declined) == "declined"
    expired = await broker.request(ctx, "notes", "write", write_args(), ScriptedConfirmer(Decision.EXPIRED))
    assert code(expired) == "confirmation_required"
    assert (tmp_path / "root" / "notes" / "a.md").read_text() == "hello\n"
    confirmer = ScriptedConfirmer(Decision.CONFIRMED)
    assert (await broker.request(ctx, "notes", "write", write_args(), confirmer))["ok"]
    assert confirmer.shown[0].diff is not None and "+changed" in confirmer.shown[0].diff
    decisions = [(r.decision, r.outcome) for r in broker.audit.records()]
    assert decisions == [
        ("declined", "nothing sent"),
        ("expired", "nothing sent"),
        ("confirmed", "sending"),
        ("confirmed", "ok"),
    ]
    who = {(r.requester, r.extension, r.instance, r.file) for r in broker.audit.records()}
    assert who == {("extension", ctx.extension, ctx.instance, "ws/notes/a.md")}


async def test_a_canary_secret_never_reaches_settings_logs_or_envelopes(
    broker: Broker, ctx: CallContext, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    canary = "CANARY-7f3a9b-SECRET"
    broker.credentials.set("services/x/token", canary)
    caplog.set_level(logging.DEBUG)
    results = [
        await broker.call(ctx, "notes", op, {"path": "notes/a.md"}) for op in ("list", "read", "write")
    ]
    assert canary not in json.dumps(results)
    assert canary not in caplog.text
    assert canary not in (tmp_path / "home" / "settings.json").read_text()
    assert canary not in "".join(
        p.read_text(errors="replace") for p in (tmp_path / "root").rglob("*") if p.is_file()
    )
