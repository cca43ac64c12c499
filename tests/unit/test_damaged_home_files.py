"""A file in Helm's home that Helm cannot read is reported and kept exactly as it was.

(settings.json, layout.json, widget-settings.json, stopped.json, the state files and the agents'
ledger have their own tests beside their features.)
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from broker.agents import history
from broker.credentials import FileStore
from broker.errors import CredentialStoreError, SettingsError
from broker.settings import Home

DAMAGED = ('{"version": 1, "sessions": [', '{"version": 1, "sessions": {"s1": {}}}', "[]")


@pytest.mark.parametrize("text", DAMAGED)
def test_a_damaged_agent_sessions_file_is_reported_and_kept_when_a_session_is_remembered(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / history.FILE
    path.write_text(text, encoding="utf-8")
    session = history.PastSession.now("s2", "echo", "main", (), "hello")
    with pytest.raises(SettingsError, match="left as it is"):
        history.remember(tmp_path, session)
    with pytest.raises(SettingsError, match="left as it is"):
        history.forget(tmp_path, "s1")
    assert path.read_text("utf-8") == text


@pytest.mark.parametrize("text", ['{"version": 1, "secrets": {', '{"version": 1, "secrets": {"k": 3}}'])
def test_a_damaged_credentials_file_is_reported_and_kept_when_a_secret_is_stored(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "credentials.json"
    path.write_text(text, encoding="utf-8")
    os.chmod(path, 0o600)
    with pytest.raises(CredentialStoreError, match="left as it is"):
        FileStore(path).set("services/gh/token", "s3cret")
    assert path.read_text("utf-8") == text


DEEP = '{"version": 1, "x": ' + "[" * 100_000 + "]" * 100_000 + "}"


def test_a_deeply_nested_credentials_file_is_reported_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "credentials.json"
    path.write_text(DEEP, encoding="utf-8")
    os.chmod(path, 0o600)
    with pytest.raises(CredentialStoreError, match=r"nested more than 512 deep.*left as it is"):
        FileStore(path).get("services/gh/token")
    assert path.read_text("utf-8") == DEEP


def test_a_credentials_file_that_is_not_utf8_is_reported_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "credentials.json"
    path.write_bytes(b'{"version": 1, "secrets": {"k": "\xff"}}')
    os.chmod(path, 0o600)
    with pytest.raises(CredentialStoreError, match="is not UTF-8; it was left as it is"):
        FileStore(path).set("k", "v")
    assert path.read_bytes() == b'{"version": 1, "secrets": {"k": "\xff"}}'


def test_a_deeply_nested_agent_sessions_file_is_reported_and_kept(tmp_path: Path) -> None:
    path = tmp_path / history.FILE
    path.write_text(DEEP, encoding="utf-8")
    with pytest.raises(SettingsError, match="left as it is"):
        history.past_sessions(tmp_path)
    assert path.read_text("utf-8") == DEEP


def test_a_deeply_nested_settings_file_is_reported_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(DEEP, encoding="utf-8")
    with pytest.raises(SettingsError, match=r"nested more than 512 deep.*left as it is"):
        Home(tmp_path).settings()
    assert path.read_text("utf-8") == DEEP
