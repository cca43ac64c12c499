"""``helm agent …``: profiles in-process; ``helm agent run`` end to end as a subprocess."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.cli import main
from broker.credentials import FileStore
from tests.support import REPO
from tests.unit.agents.agent_setup import AGENT, KEY, alive, reaped

ASK = {"ask": {"id": "t", "title": "Run \x1b[2J ls", "kind": "execute",
               "options": [["a", "Allow", "allow_once"], ["r", "Reject", "reject_once"]]}}  # fmt: skip


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    monkeypatch.setenv("HELM_HOME", str(h))
    monkeypatch.setattr("app.commands.common.open_store", lambda path: FileStore(path / "credentials.json"))
    return h


def run(capsys: pytest.CaptureFixture[str], *argv: str, stdin: str = "") -> tuple[int, str, str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdin", io.StringIO(stdin))
        code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_add_keeps_the_key_in_the_credential_store_and_list_shows_the_agent(
    home: Path, capsys: pytest.CaptureFixture[str]
):
    code, out, _ = run(
        capsys, "agent", "add", "a", "--command", "node", "--arg", "agent.js", "--key-env", "MY_AGENT_KEY",
        stdin=f"{KEY}\n",
    )  # fmt: skip
    _, listed, _ = run(capsys, "agent", "list")
    settings = (home / "settings.json").read_text()
    assert code == 0
    assert "key in the credential store" in out
    assert json.loads(settings)["agents"] == {
        "version": 1,
        "profiles": {"a": {"command": ["node", "agent.js"], "key_env": "MY_AGENT_KEY", "allow_reads": False}},
    }
    assert KEY not in settings
    assert FileStore(home / "credentials.json").get("agents/a/key") == KEY
    assert listed == "a\tnode agent.js  (key in $MY_AGENT_KEY)\n"


def test_add_refuses_a_loader_variable_before_asking_for_the_key(
    home: Path, capsys: pytest.CaptureFixture[str]
):
    code, _, err = run(capsys, "agent", "add", "a", "--command", "x", "--key-env", "NODE_OPTIONS")
    assert code == 3
    assert "load or run" in err


def test_add_needs_either_a_key_variable_or_no_key(home: Path, capsys: pytest.CaptureFixture[str]):
    code, _, err = run(capsys, "agent", "add", "a", "--command", "x")
    assert code == 1
    assert "--key-env VAR" in err
    assert not (home / "settings.json").exists() or "agents" not in (home / "settings.json").read_text()


def _profile(home: Path, name: str) -> object:
    return json.loads((home / "settings.json").read_text())["agents"]["profiles"][name]["command"]


def test_add_takes_arguments_that_start_with_a_dash(home: Path, capsys: pytest.CaptureFixture[str]):
    code, _, err = run(capsys, "agent", "add", "a", "--command", "my-agent", "--arg", "--stdio", "--no-key")
    assert (code, err) == (0, "")
    assert _profile(home, "a") == ["my-agent", "--stdio"]


def test_add_takes_the_whole_command_line_after_a_double_dash(home: Path, capsys: pytest.CaptureFixture[str]):
    code, _, _ = run(capsys, "agent", "add", "a", "--no-key", "--", "npx", "-y", "some-acp", "--acp")
    assert code == 0
    assert _profile(home, "a") == ["npx", "-y", "some-acp", "--acp"]


def test_add_refuses_two_command_lines_and_names_the_forms_when_there_is_none(
    home: Path, capsys: pytest.CaptureFixture[str]
):
    twice = run(capsys, "agent", "add", "a", "--no-key", "--command", "x", "--", "y")
    neither = run(capsys, "agent", "add", "a", "--no-key")
    assert twice[0] == neither[0] == 1
    assert "command line once" in twice[2]
    assert "--command CMD, --package NAME, or -- CMD ARG" in neither[2]


def test_remove_forgets_the_agent_and_its_key(home: Path, capsys: pytest.CaptureFixture[str]):
    run(capsys, "agent", "add", "a", "--command", "x", "--key-env", "A_KEY", stdin="k\n")
    code, _, _ = run(capsys, "agent", "remove", "a")
    again, _, err = run(capsys, "agent", "remove", "a")
    assert code == 0
    assert again == 3
    assert "no agent named 'a'" in err
    assert FileStore(home / "credentials.json").get("agents/a/key") is None


@pytest.fixture
def cli_home(tmp_path: Path) -> tuple[Path, Path]:
    h, root = tmp_path / "home", tmp_path / "root"
    root.mkdir()
    for argv in (["workspace", "add", "ws", str(root)],
                 ["agent", "add", "s", "--command", sys.executable, "--arg", AGENT, "--no-key"]):  # fmt: skip
        assert main(["--home", str(h), *argv]) == 0
    return h, root


def helm_run(
    home: Path, steps: list, *extra: str, stdin: str | None = ""
) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "app.cli", "agent", "run", "s", "-w", "ws", *extra, json.dumps(steps)]
    return subprocess.run(
        argv, env={**os.environ, "HELM_HOME": str(home)}, cwd=REPO, input=stdin, text=True,
        capture_output=True, timeout=60, stdin=None if stdin is not None else subprocess.DEVNULL,
    )  # fmt: skip


def test_run_asks_on_the_terminal_shows_agent_text_safely_and_exits_0_at_end_turn(
    cli_home: tuple[Path, Path],
):
    done = helm_run(cli_home[0], [{"say": "hi \x1b[31mred"}, ASK, {"terminal": "rm\x1b[2J"}], stdin="y\n")
    assert done.returncode == 0
    assert "[terminal refused] 'rm\\x1b[2J'" in done.stdout
    assert "hi \\x1b[31mred" in done.stdout
    assert "\x1b" not in done.stdout + done.stderr
    assert "Run \\x1b[2J ls" in done.stderr
    assert "Allow? [y/N]" in done.stderr
    assert "permission: selected a" in done.stdout
    assert "[turn ended: end_turn]" in done.stdout


def test_run_never_prints_or_audits_the_agents_key_from_a_path_an_option_name_or_split_chunks(
    cli_home: tuple[Path, Path], tmp_path: Path
):
    home = cli_home[0]
    subprocess.run(
        [sys.executable, "-m", "app.cli", "agent", "add", "k", "--command", sys.executable, "--arg", AGENT,
         "--key-env", "AGENT_KEY"],
        env={**os.environ, "HELM_HOME": str(home)}, cwd=REPO, input=f"{KEY}\n", text=True, check=True,
        capture_output=True, timeout=60,
    )  # fmt: skip
    ask = {"ask": {"id": "t", "title": "Run", "kind": "execute",
                   "options": [["a", f"Allow {KEY}", "allow_once"], ["r", "No", "reject_once"]]}}  # fmt: skip
    steps = [{"read": f"{tmp_path}/{KEY}/x"}, ask, {"chunks": [KEY[:6], KEY[6:]]}]
    argv = [sys.executable, "-m", "app.cli", "agent", "run", "k", "-w", "ws", json.dumps(steps)]
    done = subprocess.run(
        argv, env={**os.environ, "HELM_HOME": str(home)}, cwd=REPO, input="y\n", text=True,
        capture_output=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Allow [key removed]" in done.stderr
    assert "[key removed]" in done.stdout
    for text in (done.stdout, done.stderr, (home / "audit.jsonl").read_text()):
        assert KEY not in text


def test_run_treats_end_of_input_as_no_and_exits_1_on_refusal(cli_home: tuple[Path, Path]):
    done = helm_run(cli_home[0], [ASK, {"stop": "refusal"}], stdin=None)
    assert done.returncode == 1
    assert "(no answer: No)" in done.stderr
    assert "permission: selected r" in done.stdout


def test_run_prints_one_json_event_per_line(cli_home: tuple[Path, Path]):
    done = helm_run(cli_home[0], [{"say": "hi"}, {"plan": [["step", "high", "pending"]]}], "--json")
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0
    assert [e["type"] for e in events] == ["session_started", "message", "plan", "turn_ended"]


def test_run_exits_1_with_the_exit_code_and_stderr_of_a_crashed_agent(cli_home: tuple[Path, Path]):
    done = helm_run(cli_home[0], [{"crash": 7, "stderr": "it broke\n"}])
    assert done.returncode == 1
    assert "(exit code 7)" in done.stderr
    assert "it broke" in done.stderr


def test_ctrl_c_cancels_the_turn_and_exits_1(cli_home: tuple[Path, Path]):
    argv = [
        sys.executable,
        "-m",
        "app.cli",
        "agent",
        "run",
        "s",
        "-w",
        "ws",
        json.dumps([{"wait_cancel": 1}]),
    ]
    env = {**os.environ, "HELM_HOME": str(cli_home[0])}
    with subprocess.Popen(argv, env=env, cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as proc:  # fmt: skip
        assert proc.stdout is not None
        assert proc.stdout.readline() == "waiting for cancel\n"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1
    assert "cancelling the turn" in err
    assert "[turn ended: cancelled]" in out


def test_run_starts_each_agent_message_on_its_own_line(cli_home: tuple[Path, Path]):
    done = helm_run(cli_home[0], [{"say": "write ok"}, {"say": "done"}])
    assert done.returncode == 0
    assert "write ok\ndone" in done.stdout


def test_chunks_of_one_message_continue_it_and_a_chunk_without_an_id_never_breaks_the_line(
    capsys: pytest.CaptureFixture[str],
):
    from app.commands.agent import TextTranscript
    from broker.agents import MessageChunk

    show = TextTranscript().show
    for text, mid in [("wri", "a"), ("te ok", "a"), ("done", "b"), (" and", ""), (" more", "c")]:
        show(MessageChunk(text, message_id=mid))
    assert capsys.readouterr().out == "write ok\ndone and more"


def test_however_helm_is_stopped_the_agent_and_everything_it_started_end(cli_home: tuple[Path, Path]):
    # An agent that ignores cancel and SIGTERM, with a child in its group and a daemon outside it;
    # one `helm agent run` per way of stopping Helm, side by side (each waits out the agent's grace).
    steps = [{"pid": 1}, {"daemon": {}}, {"hang": {"child": True, "ignore_term": True}}]
    argv = [sys.executable, "-m", "app.cli", "agent", "run", "s", "-w", "ws", "--json", json.dumps(steps)]
    env = {**os.environ, "HELM_HOME": str(cli_home[0])}
    pipes = {"stdin": subprocess.DEVNULL, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    stops = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    with reaped([]) as every_pid, contextlib.ExitStack() as stack:
        runs = [
            stack.enter_context(subprocess.Popen(argv, env=env, cwd=REPO, text=True, **pipes)) for _ in stops
        ]
        started: list[list[int]] = []
        for proc in runs:
            assert proc.stdout is not None
            pids: list[int] = []
            for line in proc.stdout:
                text = json.loads(line).get("text", "")
                if text.split()[:1] in (["pid"], ["daemon"], ["child"]):
                    pids.append(int(text.split()[1]))
                if text.startswith("child"):
                    break
            every_pid.extend(pids)
            started.append(pids)
        for pids in started:
            assert len(pids) == 3 and all(alive(pid) for pid in pids)
        for proc, sig in zip(runs, stops, strict=True):
            proc.send_signal(sig)
        for proc, sig, pids in zip(runs, stops, started, strict=True):
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == 1, sig.name
            assert "helm: " in err, sig.name
            assert gone(pids), sig.name


def gone(pids: list[int]) -> bool:
    """Whether every one of ``pids`` has ended (a killed process may take a moment to)."""
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not any(alive(pid) for pid in pids)


def test_a_quiet_agent_is_said_on_stderr_with_how_to_cancel(capsys: pytest.CaptureFixture[str]):
    from app.commands.agent import TextTranscript
    from broker.agents import AgentQuiet

    TextTranscript().show(AgentQuiet("claude", 30))
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == "\n[quiet] claude has said nothing for 30 s; Ctrl-C cancels the turn\n"
