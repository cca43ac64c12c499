"""Sinks and the decision point as the user sets them: every problem at once, with its path; the
command line adds, lists and removes sinks; the settings file keeps them in its ``teams`` section."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from broker import teams
from broker.decision_point import parse_decision_point
from broker.errors import SettingsError
from broker.export.config import JsonlSinkConfig, SyslogSinkConfig, parse_sink, sink_json, split_address
from broker.settings import Home


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        pytest.param({"type": "gelf"}, 'sink.type must be "jsonl" or "syslog"', id="type"),
        pytest.param({"type": "jsonl", "path": "rel/x.jsonl"}, "sink.path must be absolute", id="relative"),
        pytest.param(
            {"type": "syslog", "transport": "tls", "address": "h:1"}, "sink.transport", id="transport"
        ),
        pytest.param(
            {"type": "syslog", "transport": "tcp", "address": "h:0"}, "must be host:port", id="port"
        ),
        pytest.param(
            {"type": "syslog", "transport": "unix", "address": "dev/log"}, "absolute path", id="unix"
        ),
    ],
)
def test_a_wrong_sink_is_refused_with_its_path(raw: dict[str, object], said: str) -> None:
    with pytest.raises(SettingsError, match=said):
        parse_sink(raw)


def test_every_problem_of_a_sink_is_named_at_once() -> None:
    raw = {
        "type": "syslog",
        "transport": "tcp",
        "address": "h:1",
        "facility": "kern",
        "activity": "yes",
        "x": 1,
    }
    with pytest.raises(SettingsError) as caught:
        parse_sink(raw, "teams.audit_sinks.s")
    said = str(caught.value)
    for part in (
        "teams.audit_sinks.s.x is not a setting",
        "teams.audit_sinks.s.activity",
        "teams.audit_sinks.s.facility",
    ):
        assert part in said


@pytest.mark.parametrize(
    ("address", "parsed"),
    [("logs.example:6514", ("logs.example", 6514)), ("[::1]:514", ("::1", 514)), ("logs", ("logs", 514)),
     ("[::1]x", None), ("a b:1", None), ("h:99999", None)],
)  # fmt: skip
def test_addresses(address: str, parsed: tuple[str, int] | None) -> None:
    assert split_address(address) == parsed


def test_a_sink_round_trips_through_its_json() -> None:
    for raw in (
        {"type": "jsonl", "path": "/var/log/helm.jsonl", "activity": True},
        {"type": "syslog", "transport": "udp", "address": "[::1]:514", "facility": "audit"},
        {"type": "syslog", "transport": "unix", "address": "/run/log.sock"},
    ):
        assert sink_json(parse_sink(raw)) == raw


def test_a_decision_point_names_every_problem_and_needs_https_away_from_loopback() -> None:
    with pytest.raises(SettingsError) as caught:
        parse_decision_point(
            {"url": "http://pdp.example", "tenant_id": "", "key_ref": "k", "writes": 1, "x": 0}
        )
    said = str(caught.value)
    for part in (
        "decision_point.x",
        "decision_point.url must be https",
        "tenant_id",
        "principal_id",
        "writes",
    ):
        assert part in said
    ok = parse_decision_point(
        {"url": "https://pdp.example/", "tenant_id": "t", "principal_id": "p", "key_ref": "k"}
    )
    assert (ok.url, ok.writes) == ("https://pdp.example", False)


def helm(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args, "--home", str(home)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_the_command_line_adds_lists_and_removes_sinks(tmp_path: Path) -> None:
    home = tmp_path / "home"
    added = helm(home, "audit", "sink", "add", "siem", "--syslog", "tcp", "127.0.0.1:6514", "--activity")
    assert added.returncode == 0, added.stderr
    assert "syslog over tcp to 127.0.0.1:6514 (and activity)" in added.stdout
    assert helm(home, "audit", "sink", "add", "file", "--jsonl", str(tmp_path / "a.jsonl")).returncode == 0
    wrong = helm(home, "audit", "sink", "add", "bad", "--jsonl", "relative.jsonl")
    assert wrong.returncode != 0 and "must be absolute" in wrong.stderr
    listed = helm(home, "audit", "sink", "list", "--json")
    assert json.loads(listed.stdout) == {
        "file": {"type": "jsonl", "path": str(tmp_path / "a.jsonl")},
        "siem": {"type": "syslog", "transport": "tcp", "address": "127.0.0.1:6514", "activity": True},
    }
    assert helm(home, "audit", "sink", "remove", "siem").returncode == 0
    assert helm(home, "audit", "sink", "remove", "siem").returncode != 0
    [sink] = teams.audit_sinks(Home(home).settings())
    assert isinstance(sink, JsonlSinkConfig) and sink.name == "file"
    assert "nothing recorded yet" in helm(home, "audit").stdout  # plain ``helm audit`` still shows the log


def test_a_hand_edited_sink_that_is_wrong_is_reported_by_name(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    teams.add_sink(home, "ok", {"type": "syslog", "transport": "udp", "address": "127.0.0.1:514"})
    raw = json.loads(home.settings_path.read_text())
    raw["teams"]["audit_sinks"]["bad"] = {"type": "syslog", "transport": "udp"}
    home.settings_path.write_text(json.dumps(raw))
    with pytest.raises(SettingsError, match=r"teams\.audit_sinks\.bad\.address"):
        teams.audit_sinks(home.settings())
    raw["teams"]["audit_sinks"].pop("bad")
    home.settings_path.write_text(json.dumps(raw))
    assert [type(s) for s in teams.audit_sinks(home.settings())] == [SyslogSinkConfig]


def stored_key(home: Path) -> str | None:
    """The decision point's key as a new Helm process finds it in the credential store (as the
    command line does: this process may hold another keyring backend, set by an earlier test)."""
    read = "import json, sys; from pathlib import Path; from broker.credentials import open_store; "
    read += "print(json.dumps(open_store(Path(sys.argv[1])).get('teams/decision_point/key')))"
    done = subprocess.run([sys.executable, "-c", read, str(home)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    value: str | None = json.loads(done.stdout)
    return value


def test_the_command_line_sets_the_decision_point_with_its_key_from_stdin_only(tmp_path: Path) -> None:
    home, key = tmp_path / "home", "pdp-cli-key-0c9d"
    argv = [sys.executable, "-m", "app.cli", "decision-point", "set", "https://pdp.example", "--tenant", "t1",
            "--principal", "desk", "--writes", "--home", str(home)]  # fmt: skip
    done = subprocess.run(argv, input=key + "\n", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "every write" in done.stdout
    shown = helm(home, "decision-point", "show", "--json")
    assert json.loads(shown.stdout) == {
        "url": "https://pdp.example", "tenant_id": "t1", "principal_id": "desk",
        "key_ref": "teams/decision_point/key", "writes": True,
    }  # fmt: skip
    assert stored_key(home) == key
    assert key not in (home / "settings.json").read_text() + done.stdout + done.stderr + shown.stdout
    wrong = helm(home, "decision-point", "set", "http://pdp.example", "--tenant", "t", "--principal", "p")
    assert wrong.returncode != 0 and "must be https" in wrong.stderr
    assert helm(home, "decision-point", "clear").returncode == 0
    assert "no decision point" in helm(home, "decision-point", "show").stdout
    assert stored_key(home) is None
