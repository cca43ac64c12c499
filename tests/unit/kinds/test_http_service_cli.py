"""``helm service add|list|remove``: secrets from stdin only, never in settings or output."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from app.cli import main
from broker.credentials import FileStore

TOKEN = "cli-token-1a2b3c"


def helm(home: Path, monkeypatch: pytest.MonkeyPatch, *argv: str, stdin: str = "") -> int:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    # Without a keychain the CLI's store is the 0600 file, the one these tests read back.
    monkeypatch.setattr("app.commands.common.open_store", lambda path: FileStore(path / "credentials.json"))
    return main([*argv, "--home", str(home)])


def test_add_reads_the_token_from_stdin_and_keeps_it_out_of_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    home = tmp_path / "home"
    argv = ("service", "add", "gh", "--base-url", "https://api.example.com/", "--token-format", "raw")
    assert helm(home, monkeypatch, *argv, stdin=f"{TOKEN}\n") == 0
    assert FileStore(home / "credentials.json").get("services/gh/token") == TOKEN
    settings = json.loads((home / "settings.json").read_text())
    assert settings["services"]["gh"] == {
        "base_url": "https://api.example.com",
        "auth": "token",
        "token_header": "Authorization",
        "token_format": "raw",
    }
    assert helm(home, monkeypatch, "service", "list", "--json") == 0
    out = capsys.readouterr().out
    assert TOKEN not in out
    assert helm(home, monkeypatch, "service", "remove", "gh") == 0
    assert FileStore(home / "credentials.json").get("services/gh/token") is None


@pytest.mark.parametrize(
    "url",
    [
        "http://api.example.com",
        "https://user:pw@api.example.com",
        "https://api.example.com/#x",
        "https://h/?q=1",
    ],
)
def test_add_refuses_a_base_url_that_is_not_https_or_has_tricks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
):
    assert helm(tmp_path / "home", monkeypatch, "service", "add", "x", "--base-url", url, "--no-token") == 1


OAUTH2 = ("--oauth2", "--client-id", "abc", "--authorize-url", "https://auth.example.com/authorize?x=1",
          "--token-url", "https://auth.example.com/token")  # fmt: skip


def test_an_oauth2_profile_keeps_its_sign_in_urls_and_takes_an_empty_secret_for_a_public_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    home = tmp_path / "home"
    argv = ("service", "add", "cal", "--base-url", "http://localhost:9", *OAUTH2)
    assert helm(home, monkeypatch, *argv, stdin="\n") == 0
    settings = json.loads((home / "settings.json").read_text())
    assert settings["services"]["cal"] == {
        "base_url": "http://localhost:9",
        "auth": "oauth2",
        "client_id": "abc",
        "authorize_url": "https://auth.example.com/authorize?x=1",
        "token_url": "https://auth.example.com/token",
    }
    assert FileStore(home / "credentials.json").get("services/cal/client_secret") is None
    capsys.readouterr()
    assert helm(home, monkeypatch, "service", "list") == 0
    assert "sign-in at https://auth.example.com/authorize?x=1, token https://auth.example.com/token" in (
        capsys.readouterr().out
    )


@pytest.mark.parametrize(
    ("drop", "message"),
    [("--authorize-url", "--oauth2 needs --authorize-url"), ("--token-url", "--oauth2 needs --token-url")],
)
def test_an_oauth2_profile_without_both_sign_in_urls_is_refused(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    drop: str,
    message: str,
):
    at = OAUTH2.index(drop)
    argv = ("service", "add", "cal", "--base-url", "https://api.example.com", *OAUTH2[:at], *OAUTH2[at + 2 :])
    assert helm(tmp_path / "home", monkeypatch, *argv, stdin="secret\n") == 1
    assert message in capsys.readouterr().err
    assert not (tmp_path / "home" / "settings.json").exists()


def test_a_token_url_with_a_query_is_refused_before_the_secret_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    argv = ("service", "add", "cal", "--base-url", "https://api.example.com", *OAUTH2[:-1],
            "https://auth.example.com/token?client=1")  # fmt: skip
    assert helm(tmp_path / "home", monkeypatch, *argv, stdin="") == 1
    assert "the token URL must not contain a query" in capsys.readouterr().err


def test_a_service_added_with_no_token_says_so_when_added_and_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    url = "https://api.example.com"
    assert helm(home, monkeypatch, "service", "add", "open", "--base-url", url, "--no-token") == 0
    assert helm(home, monkeypatch, "service", "add", "gh", "--base-url", url, stdin=f"{TOKEN}\n") == 0
    added = capsys.readouterr().out.splitlines()
    assert added[0] == "service open saved with no token: its requests carry no credentials"
    assert added[1].startswith("service gh saved (token); secrets in ")
    assert helm(home, monkeypatch, "service", "list") == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed == [f"gh\ttoken\t{url}\tbearer token in Authorization", f"open\ttoken\t{url}\tno token"]
    assert helm(home, monkeypatch, "service", "list", "--json") == 0
    assert [row["token"] for row in json.loads(capsys.readouterr().out)] == [True, False]
