"""Which policy files Helm trusts, and what ``helm policy show`` and ``helm policy check`` say.

A policy file is trusted only when root alone could have written it; any other is refused
loudly, and while it is refused nothing runs. Real files, really chowned and chmodded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from broker.policy import PolicySource, in_force
from broker.policy.model import JsonlSinkRule, SyslogSinkRule
from broker.policy.source import check_file
from tests.unit.policy.policy_setup import NOBODY, PolicyFile

FULL = {
    "extensions": {"allow": [{"id": "com.example.board", "digest": "a" * 64}], "catalogues": ["corp"]},
    "kinds": {"http": {"write": False}, "files": {}},
    "services": {"base_urls": ["https://api.example.com/*"], "oauth_urls": ["https://auth.example.com/*"]},
    "mcp": {"commands": ["/usr/bin/npx"], "urls": ["https://mcp.example.com/*"]},
    "databases": {"hosts": ["db.example.com"], "engines": ["postgres"]},
    "agents": {"allow": [{"package": "claude-code"}, {"command": "/usr/local/bin/agent"}], "write": False,
               "allow_always": False},
    "apps": {"servers": [{"command": "/usr/bin/node"}], "resource_domains": False},
    "dev_mode": False,
    "catalogues": [{"name": "corp", "url": "https://c.example.com/index.json",
                    "public_key": "A" * 43 + "=", "required": True}],
    "audit_sinks": [{"type": "jsonl", "path": "/var/log/helm/audit.jsonl"},
                    {"type": "syslog", "transport": "tcp", "address": "127.0.0.1:6514", "facility": "audit",
                     "activity": True}],
    "decision_point": {"url": "https://pdp.example.com", "tenant_id": "t1", "principal_id": "p1",
                       "key_ref": "pdp-key", "writes": True},
}  # fmt: skip


def helm(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *argv],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=60,
    )


def test_a_root_owned_file_no_one_else_can_write_is_in_force_with_every_rule_typed(policy: PolicyFile):
    path = policy.write(FULL)
    state = in_force()
    assert state.refused == ()
    (p,) = state.policies
    assert p.source == path
    assert p.kinds is not None and not p.kinds["http"].write and p.kinds["files"].write
    assert p.agents.allow_always is False and p.dev_mode is False
    assert p.audit_sinks == (
        JsonlSinkRule("/var/log/helm/audit.jsonl"),
        SyslogSinkRule("tcp", "127.0.0.1:6514", "audit", activity=True),
    )
    assert p.catalogues[0].name == "corp" and p.catalogues[0].required
    assert p.decision_point is not None and p.decision_point.key_ref == "pdp-key" and p.decision_point.writes


def test_policy_show_prints_the_policy_in_effect(policy: PolicyFile):
    policy.write(FULL)
    shown = helm("policy", "show")
    assert shown.returncode == 0, shown.stderr
    assert f"policy in force from {policy.path}" in shown.stdout
    assert "kinds.http: {write: no}" in shown.stdout
    assert "dev_mode: no" in shown.stdout
    assert "audit_sinks: {type: jsonl, path: /var/log/helm/audit.jsonl, activity: no}" in shown.stdout
    assert "decision_point.tenant_id: t1" in shown.stdout
    as_json = json.loads(helm("policy", "show", "--json").stdout)
    assert as_json["policies"][0]["services"]["oauth_urls"] == ["https://auth.example.com/*"]
    assert as_json["policies"][0]["extensions"]["catalogues"] == ["corp"]


def test_policy_show_without_a_policy_says_there_is_none(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("HELM_POLICY", raising=False)
    shown = helm("policy", "show")
    assert shown.returncode == 0
    assert "no organisation policy" in shown.stdout and "/etc/helm/policy.json" in shown.stdout


@pytest.mark.parametrize(
    ("mode", "why"),
    [
        pytest.param(0o664, "writable by its group (mode 664)", id="group-writable"),
        pytest.param(0o646, "writable by everyone (mode 646)", id="other-writable"),
        pytest.param(0o666, "writable by its group and everyone (mode 666)", id="both"),
    ],
)
def test_a_file_others_can_write_is_refused(policy: PolicyFile, mode: int, why: str):
    policy.write({"dev_mode": False}, mode=mode)
    (refused,) = in_force().refused
    assert why in refused.reason
    assert in_force().policies == ()


def test_a_user_owned_file_is_refused_loudly_and_nothing_runs(policy: PolicyFile):
    path = policy.write({"dev_mode": True})
    os.chown(path, NOBODY, NOBODY)
    state = in_force()
    assert state.policies == () and state.managed
    assert f"owned by user id {NOBODY}, not by root" in state.refused[0].reason
    shown = helm("policy", "show")
    assert shown.returncode == 1
    assert f"Helm refuses the policy file {path}" in shown.stderr and "nothing runs" in shown.stderr
    dev = helm("dev", str(path.parent))
    assert dev.returncode == 1
    assert "refused by your organisation's policy (policy file)" in dev.stderr


@pytest.mark.parametrize(
    ("owner", "mode", "why"),
    [
        pytest.param(0, 0o777, "is writable by its group and everyone (mode 777)", id="writable-folder"),
        pytest.param(NOBODY, 0o755, f"is owned by user id {NOBODY}, not by root", id="user-folder"),
    ],
)
def test_a_folder_above_it_that_others_can_write_refuses_it(
    policy: PolicyFile, owner: int, mode: int, why: str
):
    policy.write({})
    folder = policy.path.parent
    os.chown(folder, owner, owner)
    os.chmod(folder, mode)
    (refused,) = in_force().refused
    assert f"its folder {folder} {why}" in refused.reason


def test_a_sticky_root_folder_is_trusted_as_no_one_can_replace_roots_file(policy: PolicyFile):
    policy.write({})
    os.chmod(policy.path.parent, 0o1777)
    assert in_force().refused == () and len(in_force().policies) == 1


def test_a_symbolic_link_is_refused(policy: PolicyFile, tmp_path: Path):
    real = policy.write({})
    link = policy.path.with_name("linked.json")
    link.symlink_to(real)
    (refused,) = PolicySource((link,)).state().refused
    assert "symbolic link" in refused.reason


def test_helm_policy_naming_a_missing_file_is_refused_not_ignored(
    policy: PolicyFile, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("HELM_POLICY", str(policy.path))
    (refused,) = in_force().refused
    assert "HELM_POLICY names it, but it does not exist" in refused.reason


def test_an_invalid_file_is_refused_and_check_lists_every_problem_at_once(policy: PolicyFile):
    doc = {
        "kinds": {"htp": {}},
        "mcp": {"commands": ["npx"]},
        "services": {"base_urls": ["https://*x.example.com"]},
        "agents": {"allow": [{"package": "a", "command": "/b"}]},
        "audit_sinks": [{"type": "syslog", "transport": "udp"}],
        "decision_point": {
            "url": "http://pdp.example.com",
            "tenant_id": "t",
            "principal_id": "p",
            "key_ref": "k",
        },
        "extra": 1,
    }
    path = policy.write(doc)
    assert "not a valid policy" in in_force().refused[0].reason
    paths = {i.path for i in check_file(path)}
    assert paths == {
        "$.kinds.htp", "$.mcp.commands[0]", "$.services.base_urls[0]", "$.agents.allow[0]",
        "$.audit_sinks[0].address", "$.decision_point.url", "$.extra",
    }  # fmt: skip
    checked = helm("policy", "check", str(path))
    assert checked.returncode == 1
    assert (
        "7 problem(s)" in checked.stderr and "$.kinds.htp: 'htp' is not a kind of this Helm" in checked.stderr
    )


def test_check_accepts_a_valid_file_wherever_it_is(tmp_path: Path):
    draft = tmp_path / "draft.json"
    draft.write_text(json.dumps({"version": 1, **FULL}))
    os.chmod(draft, 0o666)  # a draft: who owns it matters only where it is deployed
    checked = helm("policy", "check", str(draft))
    assert checked.returncode == 0, checked.stderr
    assert "a valid policy" in checked.stdout


def test_a_file_that_is_not_json_is_one_problem(tmp_path: Path):
    draft = tmp_path / "draft.json"
    draft.write_text("{nope")
    (issue,) = check_file(draft)
    assert issue.path == "$" and "not valid JSON" in issue.message


def test_a_changed_file_applies_at_the_next_look_and_a_removed_one_lifts_it(policy: PolicyFile):
    policy.write({"dev_mode": False})
    assert in_force().policies[0].dev_mode is False
    policy.write({"dev_mode": True})
    assert in_force().policies[0].dev_mode is True
    os.chmod(policy.path, 0o666)  # a mode change alone is seen too
    assert in_force().refused
    policy.remove()
    assert not in_force().managed


def test_an_unchanged_file_is_not_read_again(policy: PolicyFile, monkeypatch: pytest.MonkeyPatch):
    policy.write({})
    first = in_force()
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail("read again"))
    assert in_force() is first


def test_helm_ext_install_refuses_what_the_policy_forbids_and_says_which_rule(
    tmp_path: Path, policy: PolicyFile
):
    root = tmp_path / "root"
    root.mkdir()
    folder = tmp_path / "ext"
    folder.mkdir()
    (folder / "manifest.json").write_text(
        json.dumps(
            {
                "id": "com.example.board",
                "name": "Board",
                "version": "1.0.0",
                "kind": "widget",
                "entry": "index.html",
                "connections": [],
            }
        )
    )
    (folder / "index.html").write_text("<p>board</p>")
    home = ["--home", str(tmp_path / "home")]
    assert helm("workspace", "add", "ws", str(root), *home).returncode == 0
    policy.write({"extensions": {"allow": [{"id": "com.example.other"}]}})
    installed = helm("ext", "install", str(folder), "-w", "ws", "--approve", *home)
    assert installed.returncode == 3
    assert (
        "com.example.board was not installed: refused by your organisation's policy (extensions.allow)"
        in (installed.stderr)
    )
