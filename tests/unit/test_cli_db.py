"""``helm db add|list|remove|test`` on real SQLite files and a real PostgreSQL server."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pytest

from app.cli import main
from tests.servers.databases import DatabaseServer


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    monkeypatch.setenv("HELM_HOME", str(h))
    return h


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_sqlite_profile_is_added_listed_tested_and_removed(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "app.db"
    sqlite3.connect(db).close()
    code, out, _ = run(capsys, "db", "add", "local", "--engine", "sqlite", "--path", str(db))
    assert code == 0
    assert "database local added" in out
    code, out, _ = run(capsys, "db", "list", "--json")
    assert json.loads(out) == [{"name": "local", "engine": "sqlite", "where": str(db)}]
    assert run(capsys, "db", "test", "local")[0] == 0
    assert run(capsys, "db", "remove", "local")[0] == 0
    code, out, _ = run(capsys, "db", "list")
    assert "no database profiles" in out


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["--engine", "sqlite", "--host", "h", "--path", "/x.db"], id="sqlite-with-host"),
        pytest.param(["--engine", "postgres", "--host", "h", "--user", "u"], id="no-database"),
        pytest.param(
            ["--engine", "mysql", "--host", "http://h/", "--database", "d", "--user", "u"], id="url-host"
        ),
    ],
)
def test_wrong_profiles_are_refused(home: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "db", "add", "x", *argv, "--no-check", "--no-password")
    assert code == 1
    assert err.startswith("helm: ")


def test_a_postgres_password_comes_from_stdin_and_never_reaches_the_settings(
    home: Path,
    postgres_server: DatabaseServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pw = postgres_server.password("helm_ro")
    monkeypatch.setattr("sys.stdin", io.StringIO(pw + "\n"))
    code, out, err = run(
        capsys, "db", "add", "pg", "--engine", "postgres", "--host", postgres_server.host,
        "--port", str(postgres_server.port), "--database", "helm", "--user", "helm_ro",
    )  # fmt: skip
    assert code == 0, err
    assert "Helm can read database pg" in out
    assert "warning" not in err
    assert pw not in (home / "settings.json").read_text()


def test_adding_a_superuser_profile_warns(
    home: Path,
    postgres_server: DatabaseServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(postgres_server.password("helm_admin") + "\n"))
    code, _, err = run(
        capsys, "db", "add", "pg", "--engine", "postgres", "--host", postgres_server.host,
        "--port", str(postgres_server.port), "--database", "helm", "--user", "helm_admin",
    )  # fmt: skip
    assert code == 0
    assert "warning: the role is a superuser" in err


def test_a_profile_that_cannot_connect_is_saved_and_reported(
    home: Path, postgres_server: DatabaseServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        capsys, "db", "add", "pg", "--engine", "postgres", "--host", postgres_server.host,
        "--port", str(postgres_server.port), "--database", "helm", "--user", "helm_ro", "--no-password",
    )  # fmt: skip
    assert code == 1
    assert "could not sign in" in err
    assert run(capsys, "db", "test", "pg")[0] == 1
