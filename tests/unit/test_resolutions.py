"""The broker's resolution keeps a call's decision only while what it was decided on stays the
same: each reading it depends on (the settings, the manifest, the policy, the kind registry)
changed after a first call must decide the next one afresh, and the arguments are checked at
every call.

Through the real broker on a real home; the files kind is the working kind.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from broker import Broker, CallContext, approval, resolution
from broker.extensions import set_enabled
from broker.kinds import KINDS
from tests.helpers import manifest_dict, write_extension
from tests.unit.policy.policy_setup import PolicyFile, policy
from tests.unit.test_broker import FILES, broker, code, ctx

__all__ = ["broker", "ctx", "policy"]  # the fixtures: a real broker, a files extension, a policy file

READ = {"path": "notes/a.md"}
WRITE = {"path": "notes/a.md", "text": "after\n"}


@pytest.fixture
def decisions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The extensions whose standing was decided, one entry per decision."""
    decided: list[str] = []
    check = approval.check

    def counted(workspace: Any, extension: str, *args: Any) -> approval.ApprovalDecision:
        decided.append(extension)
        return check(workspace, extension, *args)

    monkeypatch.setattr(resolution.approval, "check", counted)
    return decided


async def test_the_next_call_of_an_operation_is_not_decided_again_but_its_arguments_are_checked(
    broker: Broker, ctx: CallContext, decisions: list[str]
) -> None:
    assert (await broker.call(ctx, "notes", "read", READ))["ok"]
    assert (await broker.call(ctx, "notes", "read", READ))["ok"]
    assert decisions == [ctx.extension]
    refused = await broker.call(ctx, "notes", "read", {"path": "notes/a.md", "pad": float("nan")})
    assert code(refused) == "refused" and "plain JSON" in refused["error"]["message"]
    big = await broker.call(ctx, "notes", "read", {"path": "notes/a.md", "pad": "x" * (256 * 1024)})
    assert code(big) == "too_large"
    assert decisions == [ctx.extension]
    assert (await broker.call(ctx, "notes", "list", {}))["ok"]  # another operation: its own decision
    assert (await broker.call(ctx, "notes", "read", READ))["ok"]  # both are kept
    assert decisions == [ctx.extension] * 2


async def test_a_kept_decision_gives_each_call_its_own_caller_arguments_and_readings(
    broker: Broker, ctx: CallContext
) -> None:
    first = broker._resolve(ctx, "notes", "read", READ)
    other = CallContext(ctx.workspace, ctx.extension, "another-frame")
    again = broker._resolve(other, "notes", "read", {"path": "notes/b.md"})
    assert again.ctx is other and again.call.ctx is other
    assert again.call.args == {"path": "notes/b.md"} and first.call.args == READ
    assert again.call.settings is broker.home.settings() and again.call.policy is not None
    for _ in range(2):  # a write reads its settings and policy again once confirmed, kept or not
        write = broker._resolve(ctx, "notes", "write", WRITE).call
        assert write.write and write.settings is None and write.policy is None


class Scene(NamedTuple):
    broker: Broker
    ctx: CallContext
    folder: Path
    """The extension's folder."""
    policy: PolicyFile


def _disable(scene: Scene) -> None:
    set_enabled(scene.broker.home, scene.ctx.workspace, scene.ctx.extension, False)


def _widen_manifest(scene: Scene) -> None:  # changed since its approval: it needs a review
    write_extension(scene.folder, manifest_dict([FILES | {"paths": ["**"]}], write=True))


def _remove_manifest(scene: Scene) -> None:
    (scene.folder / "manifest.json").unlink()


def _forbid_kind(scene: Scene) -> None:
    scene.policy.write({"kinds": {"http": {}}})


@pytest.mark.parametrize(
    "change",
    [_disable, _widen_manifest, _remove_manifest, _forbid_kind],
    ids=["settings", "manifest", "manifest removed", "policy"],
)
async def test_a_change_of_any_reading_after_a_call_decides_the_next_call_afresh(
    broker: Broker,
    ctx: CallContext,
    tmp_path: Path,
    policy: PolicyFile,
    decisions: list[str],
    change: Callable[[Scene], None],
) -> None:
    assert (await broker.call(ctx, "notes", "read", READ))["ok"]
    change(Scene(broker, ctx, tmp_path / "ext" / ctx.extension, policy))
    assert code(await broker.call(ctx, "notes", "read", READ)) == "refused"
    assert decisions == [ctx.extension] * 2
    assert broker._resolutions._decided == {}  # nothing made on the old readings is kept


@pytest.mark.parametrize(
    ("rules", "operation", "args"),
    [({"kinds": {"http": {}}}, "read", READ), ({"kinds": {"files": {"write": False}}}, "write", WRITE)],
    ids=["forbids the extension", "forbids the call"],
)
async def test_a_policy_deployed_after_a_call_refuses_the_next_one_in_its_name_and_audits_it(
    broker: Broker,
    ctx: CallContext,
    policy: PolicyFile,
    rules: dict[str, Any],
    operation: str,
    args: dict[str, Any],
) -> None:
    first = await broker.call(ctx, "notes", operation, args)
    assert first["ok"] or code(first) == "confirmation_required"
    policy.write(rules)
    refused = await broker.call(ctx, "notes", operation, args)
    assert code(refused) == "refused"
    assert "refused by your organisation's policy" in refused["error"]["message"]
    assert [r.outcome for r in broker.audit.records()].count("policy") == 1


async def test_a_refusal_is_never_kept(broker: Broker, ctx: CallContext, decisions: list[str]) -> None:
    set_enabled(broker.home, ctx.workspace, ctx.extension, False)
    assert code(await broker.call(ctx, "notes", "read", READ)) == "refused"
    set_enabled(broker.home, ctx.workspace, ctx.extension, True)
    assert (await broker.call(ctx, "notes", "read", READ))["ok"]
    assert decisions == [ctx.extension] * 2


async def test_settings_damaged_after_a_call_say_so_at_the_next_call(
    broker: Broker, ctx: CallContext
) -> None:
    assert (await broker.call(ctx, "notes", "read", READ))["ok"]
    broker.home.settings_path.write_text("{ damaged", encoding="utf-8")
    result = await broker.call(ctx, "notes", "read", READ)
    assert code(result) == "unavailable" and result["error"]["message"] == resolution.SETTINGS_UNREADABLE


async def test_a_kind_registered_anew_checks_the_arguments_by_its_own_rules(
    broker: Broker, ctx: CallContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    nested = {"path": "notes/a.md", "options": {"nested": True}}
    first = await broker.call(ctx, "notes", "read", nested)  # the files kind takes any JSON value
    assert "must be a string" not in first["error"]["message"]
    monkeypatch.setitem(KINDS, "files", dataclasses.replace(KINDS["files"], scalar_args=True))
    refused = await broker.call(ctx, "notes", "read", nested)
    assert code(refused) == "refused" and "'options' must be a string" in refused["error"]["message"]


async def test_the_kept_decisions_are_bounded(
    broker: Broker, ctx: CallContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resolution, "KEEP_DECIDED", 2)
    for operation, args in (("read", READ), ("list", {}), ("read", READ), ("list", {}), ("write", {})):
        broker._resolve(ctx, "notes", operation, args)
        assert len(broker._resolutions._decided) <= 2
