"""One approval decision, its messages, and approval bound to what the user reviewed.

The decision table is pure; the rest runs the real broker on a real home, with the real
tests/servers/tdt_like.py MCP server for pinned tools.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from broker import ApprovalChanged, Broker, CallContext, Standing
from broker.approval import check, decide
from broker.errors import ManifestError
from broker.extensions import approve, review, set_enabled
from broker.kinds.base import Issue
from broker.kinds.mcp import MCP
from broker.kinds.mcp.adapter import McpKind
from broker.manifest import Manifest
from broker.settings import Approval, InstalledExtension
from tests.helpers import manifest_dict, new_broker, setup_extension, write_extension
from tests.unit.kinds.mcp_setup import TDT_LIKE, add_stdio, mcp_extension

FILES = {"id": "notes", "kind": "files", "root": "workspace", "paths": ["*.md"], "operations": ["list"]}
MANIFEST = Manifest(manifest_dict([FILES]), Path("/ext"))
OTHER = Manifest(manifest_dict([FILES | {"paths": ["**"]}]), Path("/ext"))
BROKEN = ManifestError([Issue("$.id", "missing")])


def installed(*, enabled: bool = True, digest: str | None = MANIFEST.digest()) -> InstalledExtension:
    approval = None if digest is None else Approval(digest, "2026-01-01T00:00:00+00:00")
    return InstalledExtension("com.example.test", Path("/ext"), enabled, approval)


@pytest.mark.parametrize(
    ("record", "manifest", "standing", "says"),
    [
        pytest.param(None, None, Standing.NOT_INSTALLED, "helm ext install -w ws", id="not-installed"),
        pytest.param(installed(), BROKEN, Standing.INVALID, "helm ext lint", id="invalid"),
        pytest.param(
            installed(digest=None), MANIFEST, Standing.NEVER_APPROVED,
            "not approved yet: run `helm ext approve -w ws com.example.test`", id="never-approved",
        ),
        pytest.param(
            installed(), OTHER, Standing.STALE, "`helm ext approve -w ws com.example.test`", id="stale"
        ),
        pytest.param(
            installed(enabled=False), MANIFEST, Standing.DISABLED,
            "`helm ext enable -w ws com.example.test`", id="disabled",
        ),
        pytest.param(installed(), MANIFEST, Standing.CURRENT, "is approved", id="current"),
    ],
)  # fmt: skip
def test_the_decision_names_where_an_extension_stands_and_how_to_fix_it(
    record: InstalledExtension | None, manifest: Any, standing: Standing, says: str
) -> None:
    decision = decide("ws", "com.example.test", record, manifest)
    assert decision.standing is standing
    assert says in decision.message
    assert decision.allows_calls is (standing is Standing.CURRENT)


@pytest.mark.parametrize(
    ("record", "manifest"),
    [(None, MANIFEST), (installed(), None)],
    ids=["no-record", "no-manifest"],
)
def test_either_fact_missing_is_not_installed(record: InstalledExtension | None, manifest: Any) -> None:
    decision = decide("ws", "com.example.test", record, manifest)
    assert decision.standing is Standing.NOT_INSTALLED
    assert not decision.allows_calls and not decision.approved and not decision.needs_review
    assert decision.pins("notes") == {}


def test_a_disabled_extension_that_also_changed_asks_for_approval_first() -> None:
    decision = decide("ws", "com.example.test", installed(enabled=False), OTHER)
    assert decision.standing is Standing.STALE
    assert decision.needs_review and not decision.approved


@pytest.fixture
async def broker(tmp_path: Path) -> Any:
    async with new_broker(tmp_path / "home") as b:
        yield b


async def refusal(broker: Broker, ctx: CallContext) -> str:
    result = await broker.call(ctx, "notes", "list", {})
    assert result["error"]["code"] == "refused"
    return str(result["error"]["message"])


async def test_each_connection_gets_what_its_approval_pinned_and_nothing_else(
    broker: Broker, tmp_path: Path
) -> None:
    ctx = await setup_extension(broker, tmp_path, manifest_dict([FILES]))
    with broker.home.update() as settings:
        record = settings.workspace("ws").extensions[ctx.extension].approval
        assert record is not None
        record.pins.update({"notes": {"tools": {"a": "sha"}}, "damaged": ["not", "an", "object"]})
    decision = check(broker.home.settings().workspace("ws"), ctx.extension)
    assert decision.allows_calls
    assert decision.pins("notes") == {"tools": {"a": "sha"}}
    assert decision.pins("damaged") == {}  # a pin that is not an object pins nothing
    assert decision.pins("other") == {}


async def test_an_extension_not_yet_approved_has_no_pins(broker: Broker, tmp_path: Path) -> None:
    ctx = await setup_extension(broker, tmp_path, manifest_dict([FILES]), approved=False)
    decision = check(broker.home.settings().workspace("ws"), ctx.extension)
    assert decision.standing is Standing.NEVER_APPROVED
    assert decision.pins("notes") == {}


async def test_after_a_declined_install_calls_say_how_to_approve(broker: Broker, tmp_path: Path) -> None:
    ctx = await setup_extension(broker, tmp_path, manifest_dict([FILES]), approved=False)
    message = await refusal(broker, ctx)
    assert "not approved yet" in message
    assert "helm ext approve -w ws com.example.test" in message
    assert "changed since" not in message


async def test_an_id_that_is_not_installed_says_not_installed(broker: Broker, tmp_path: Path) -> None:
    ctx = await setup_extension(broker, tmp_path, manifest_dict([FILES]))
    message = await refusal(broker, CallContext("ws", "com.example.stranger", "test"))
    assert "is not installed in workspace ws" in message
    assert "enabled" not in message
    set_enabled(broker.home, "ws", ctx.extension, False)
    assert "helm ext enable -w ws com.example.test" in await refusal(broker, ctx)


async def test_a_manifest_changed_while_under_review_is_not_approved(broker: Broker, tmp_path: Path) -> None:
    ctx = await setup_extension(broker, tmp_path, manifest_dict([FILES]), approved=False)
    reviewed = await review(broker, "ws", ctx.extension)
    write_extension(tmp_path / "ext" / ctx.extension, manifest_dict([FILES | {"paths": ["**"]}]))
    with pytest.raises(ApprovalChanged, match="changed while you reviewed it"):
        await approve(broker, reviewed)
    assert broker.home.settings().workspace("ws").extensions[ctx.extension].approval is None
    assert "not approved yet" in await refusal(broker, ctx)


async def test_a_tool_changed_while_under_review_is_not_approved(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "odd", TDT_LIKE)
        ctx = await mcp_extension(broker, tmp_path, "odd", ["tdt_workspace_status", "mutate"], approved=False)
        reviewed = await review(broker, "ws", ctx.extension)
        kind = await broker.kind(MCP)
        assert isinstance(kind, McpKind)
        session = await kind.session(broker.home.settings().workspace("ws"), "odd")
        await session.call_tool("mutate", {})  # the server changes a declared tool's schema
        with pytest.raises(ApprovalChanged, match="tool tdt_workspace_status: input schema changed"):
            await approve(broker, reviewed)
        assert broker.home.settings().workspace("ws").extensions[ctx.extension].approval is None
        result = await broker.call(ctx, "m", "tdt_workspace_status", {})
    assert result["error"]["code"] == "refused"


async def test_approval_stores_the_pins_the_user_reviewed(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "odd", TDT_LIKE)
        ctx = await mcp_extension(broker, tmp_path, "odd", ["tdt_workspace_status"], approved=False)
        reviewed = await review(broker, "ws", ctx.extension)
        approval = await approve(broker, reviewed)
    assert approval.pins == reviewed.pins
    assert approval.digest == reviewed.digest
    assert set(approval.pins["m"]["tools"]) == {"tdt_workspace_status"}
