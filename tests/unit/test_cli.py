"""The ``helm`` command line: usage errors, lint, review, install with y/N, call, audit."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app import cli
from app.cli import desktop_args, main
from broker import atomic
from tests.helpers import manifest_dict, write_extension

FILES = {
    "id": "notes",
    "kind": "files",
    "root": "workspace",
    "paths": ["*.md"],
    "operations": ["list", "read", "write"],
}


def helm(*argv: str, stdin: str = "", home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HELM_HOME": str(home)} if home else dict(os.environ)
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    monkeypatch.setenv("HELM_HOME", str(h))
    return h


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["nosuch"], id="unknown-command"),
        pytest.param(["workspace"], id="missing-action"),
        pytest.param(["workspace", "add", "only-name"], id="missing-argument"),
        pytest.param(["call", "--workspace", "w", "c", "op"], id="missing-option"),
    ],
)
def test_usage_errors_exit_2_with_a_message(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "usage:" in capsys.readouterr().err


@pytest.mark.parametrize("group", ["workspace", "project", "ext", "audit", "call"])
def test_every_command_has_help(group: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([group, "--help"])
    assert info.value.code == 0
    assert "usage: helm" in capsys.readouterr().out


def test_version_prints_the_version() -> None:
    result = helm("--version")
    assert result.returncode == 0
    assert result.stdout.startswith("helm ")


def test_lint_prints_every_error_with_its_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = manifest_dict([FILES | {"paths": ["/etc/*", "a/../b"]}, {"id": "x", "kind": "db"}])
    write_extension(tmp_path / "ext", bad)
    code, _, err = run(capsys, "ext", "lint", str(tmp_path / "ext"))
    assert code == 1
    assert "$.connections[0].paths[0]: must be relative" in err
    assert "$.connections[0].paths[1]: must not contain . or .. segments" in err
    assert "$.connections[1].engine: is required" in err
    good = write_extension(tmp_path / "good", manifest_dict([FILES], write=True))
    assert run(capsys, "ext", "lint", str(good))[0] == 0


def test_review_lists_writes_separately(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mcp = {
        "id": "gh",
        "kind": "mcp",
        "server": "github",
        "operations": ["list_issues"],
        "writes": ["create_issue"],
    }
    folder = write_extension(tmp_path / "ext", manifest_dict([FILES, mcp], write=True))
    code, out, _ = run(capsys, "ext", "review", str(folder))
    assert code == 0
    assert "May write: yes" in out
    assert "WRITE  tool create_issue" in out
    assert "read   tool list_issues" in out
    assert "Helm cannot know which tools of a server write data" in out
    writes = out.split("Writes (each one asks for your confirmation):")[1]
    assert "create_issue" in writes and "list_issues" not in writes


def _setup(home: Path, tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.md").write_text("hello\n")
    assert main(["workspace", "add", "w", str(root)]) == 0
    folder = write_extension(tmp_path / "ext", manifest_dict([FILES], write=True))
    return root, folder


def test_install_asks_and_defaults_to_no(home: Path, tmp_path: Path) -> None:
    _, folder = _setup(home, tmp_path)
    result = helm("ext", "install", str(folder), "--workspace", "w", stdin="\n", home=home)
    assert result.returncode == 1
    assert "NOT approved" in result.stdout
    call = helm("call", "-w", "w", "-e", "com.example.test", "notes", "list", home=home)
    assert call.returncode == 1
    assert json.loads(call.stdout)["error"]["code"] == "refused"
    result = helm("ext", "install", str(folder), "--workspace", "w", stdin="y\n", home=home)
    assert result.returncode == 0
    call = helm("call", "-w", "w", "-e", "com.example.test", "notes", "list", home=home)
    assert call.returncode == 0
    assert json.loads(call.stdout)["data"]["files"] == [{"path": "a.md", "size": 6}]


def test_call_asks_before_a_write_and_defaults_to_no(home: Path, tmp_path: Path) -> None:
    root, folder = _setup(home, tmp_path)
    assert helm("ext", "install", str(folder), "-w", "w", "--approve", home=home).returncode == 0
    read = json.loads(
        helm(
            "call",
            "-w",
            "w",
            "-e",
            "com.example.test",
            "notes",
            "read",
            "--args",
            '{"path": "a.md"}',
            home=home,
        ).stdout
    )
    args = json.dumps({"path": "a.md", "text": "changed\n", "expected_sha256": read["data"]["sha256"]})
    declined = helm("call", "-w", "w", "-e", "com.example.test", "notes", "write", "--args", args, home=home)
    assert declined.returncode == 1
    assert "Confirm file change" in declined.stderr
    assert json.loads(declined.stdout)["error"]["code"] == "declined"
    assert (root / "a.md").read_text() == "hello\n"
    confirmed = helm(
        "call", "-w", "w", "-e", "com.example.test", "notes", "write", "--args", args, stdin="y\n", home=home
    )
    assert confirmed.returncode == 0, confirmed.stderr
    assert (root / "a.md").read_text() == "changed\n"
    audit = helm("audit", "--json", home=home)
    records = [(r["requester"], r["decision"], r["outcome"], r["file"]) for r in json.loads(audit.stdout)]
    assert records == [
        ("extension", "declined", "nothing sent", "w/a.md"),
        ("extension", "confirmed", "sending", "w/a.md"),
        ("extension", "confirmed", "ok", "w/a.md"),
    ]
    assert "(asked by extension com.example.test, file w/a.md)" in helm("audit", home=home).stdout


def test_call_rejects_arguments_that_are_not_a_json_object(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "call", "-w", "w", "-e", "x", "c", "op", "--args", "[1]")
    assert code == 1
    assert "JSON object" in err


def test_a_corrupt_settings_file_is_reported_with_exit_3(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home.mkdir()
    (home / "settings.json").write_text("{oops")
    code, _, err = run(capsys, "workspace", "list")
    assert code == 3
    assert "not valid JSON" in err
    assert (home / "settings.json").read_text() == "{oops"


def test_lists_as_json(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _setup(home, tmp_path)
    assert main(["project", "add", "-w", "w", "web", str(tmp_path)]) == 0
    capsys.readouterr()
    _, out, _ = run(capsys, "workspace", "list", "--json")
    rows: list[dict[str, Any]] = json.loads(out)
    assert rows[0]["name"] == "w" and rows[0]["projects"] == ["web"]


@pytest.mark.parametrize(
    ("argv", "desktop"),
    [
        pytest.param([], {"home": None, "self_test": False, "verbose": False}, id="bare"),
        pytest.param(["--home", "h"], {"home": "h", "self_test": False, "verbose": False}, id="home"),
        pytest.param(
            ["--home=h", "--self-test"], {"home": "h", "self_test": True, "verbose": False}, id="self-test"
        ),
        pytest.param(["--verbose"], {"home": None, "self_test": False, "verbose": True}, id="verbose"),
        pytest.param(["--home"], None, id="home-without-a-value"),
        pytest.param(["--help"], None, id="help"),
        pytest.param(["--version"], None, id="version"),
        pytest.param(["ext", "lint", "x"], None, id="command"),
        pytest.param(["--home", "h", "audit"], None, id="command-after-home"),
    ],
)
def test_only_a_desktop_start_skips_the_full_parser(argv: list[str], desktop: dict[str, Any] | None) -> None:
    args = desktop_args(argv)
    assert (None if args is None else vars(args)) == desktop


def test_the_desktop_start_imports_no_subcommand() -> None:
    code = (
        "import sys; from app.cli import desktop_args; desktop_args(['--home', 'h']); "
        "print(sorted(m for m in sys.modules if m.startswith(('app.commands', 'broker', 'ui'))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize("errno_", [errno.ENOSPC, errno.EROFS])
def test_a_full_disk_or_read_only_home_is_one_line_naming_the_file_and_nothing_is_half_written(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    errno_: int,
) -> None:  # fmt: skip
    (tmp_path / "ws").mkdir()
    (tmp_path / "web").mkdir()
    assert run(capsys, "workspace", "add", "main", str(tmp_path / "ws"))[0] == 0
    before = (home / "settings.json").read_bytes()

    def broken(fd: int, data: bytes) -> int:
        raise OSError(errno_, os.strerror(errno_))

    monkeypatch.setattr(atomic.os, "write", broken)
    code, out, err = run(capsys, "project", "add", "-w", "main", "web", str(tmp_path / "web"))
    assert code == 3 and out == ""
    cause = os.strerror(errno_)
    assert err == f"helm: cannot write {home / 'settings.json'}: {cause} (the file on disk is unchanged)\n"
    assert (home / "settings.json").read_bytes() == before
    assert sorted(p.name for p in home.iterdir()) == [".settings.lock", "settings.json"]


def test_a_home_that_cannot_be_made_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("HELM_HOME", str(tmp_path / "file" / "home"))
    (tmp_path / "ws").mkdir()
    code, _out, err = run(capsys, "workspace", "add", "main", str(tmp_path / "ws"))
    assert code != 0
    assert err == f"helm: {tmp_path / 'file' / 'home'}: Not a directory\n"


def test_helm_dev_app_keeps_the_engines_own_lines_off_the_terminal_unless_verbose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import app.appdev
    import app.enginelog

    calls: list[tuple[str, bool]] = []
    monkeypatch.setattr(
        app.enginelog, "quiet_engine", lambda verbose, _lines: calls.append(("quiet", verbose))
    )
    monkeypatch.setattr(app.appdev, "run_app_dev", lambda _args, _ws: calls.append(("window", False)) or 0)
    monkeypatch.chdir(tmp_path)
    for verbose in ((), ("--verbose",)):
        calls.clear()
        argv = ["dev", "--server", "s", "--app", "ui://s/a", "--home", str(tmp_path / "h"), *verbose]
        assert main(argv) == 0
        assert calls == [("quiet", bool(verbose)), ("window", False)]  # quiet before Qt starts


@pytest.mark.parametrize(
    ("words", "group"),
    [
        (["workspace", "list"], "workspace"),
        (["--home", "/h", "agent", "run", "a"], "agent"),
        (["--home=/h", "ext", "list"], "ext"),
        (["decision-point", "show"], "decision-point"),
        (["--home", "workspace", "workspace", "list"], "workspace"),  # a home folder named like a group
        (["mcp", "add", "time"], None),  # a kind's group: every kind's parser is built
        (["--verbose", "workspace", "list"], None),
        (["-h"], None),
        (["--", "workspace"], None),
        (["nonsense"], None),
        ([], None),
    ],
)
def test_only_a_group_of_helms_own_named_first_builds_a_parser_of_its_own(
    words: list[str], group: str | None
) -> None:
    assert cli.command_group(words) == group


def test_a_group_built_alone_parses_and_answers_as_in_the_full_parser(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for build in (lambda: cli.parser("workspace"), cli.parser):
        with pytest.raises(SystemExit) as exit_:
            build().parse_args(["workspace", "frobnicate"])
        assert exit_.value.code == 2
        assert "invalid choice: 'frobnicate'" in capsys.readouterr().err


def test_each_group_of_helms_own_is_registered_by_the_module_named_for_it() -> None:
    for group in cli.COMMANDS:
        sub = next(a for a in cli.parser(group)._actions if a.dest == "command")
        assert list(sub.choices) == [group]  # type: ignore[attr-defined]
