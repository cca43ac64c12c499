"""Settings → Connections on a real Helm home: forms that check as you type, Save, Test."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from broker import Broker
from tests.helpers import new_broker
from ui.qt import Qt
from ui.settings.backend import BrokerConnections
from ui.settings.connections import ConnectionsPage
from ui.settings.page import ProfilePage


@pytest.fixture
def broker(tmp_path: Path, run: Any) -> Iterator[Broker]:
    b = new_broker(tmp_path / "home")
    b.home.ensure()
    yield b
    run(b.aclose())


@pytest.fixture
def page(qtbot: QtBot, broker: Broker) -> ConnectionsPage:
    p = ConnectionsPage(BrokerConnections(broker))
    qtbot.addWidget(p)
    p.resize(900, 600)
    p.show()
    return p


def type_into(qtbot: QtBot, page: ProfilePage, key: str, text: str) -> None:
    edit = page.fields[key].edit
    assert edit is not None
    edit.clear()
    qtbot.keyClicks(edit, text)


def choose(page: ProfilePage, key: str, value: str) -> None:
    combo = page.fields[key].combo
    assert combo is not None
    combo.setCurrentIndex(combo.findData(value))


def problem(page: ProfilePage, key: str) -> str | None:
    f = page.fields[key]
    return None if f.error.isHidden() else f.error.text()


def settings_json(broker: Broker) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(broker.home.settings_path.read_text("utf-8"))
    return loaded


def test_the_credential_store_is_named_with_a_warning_for_the_0600_file(page: ConnectionsPage) -> None:
    assert "credentials.json" in page.store_label.text()
    assert page.store_warning.isVisible()
    assert "0600" in page.store_warning.text()


def test_a_service_url_is_checked_as_the_user_types(qtbot: QtBot, page: ConnectionsPage) -> None:
    services = page.pages["http"]
    type_into(qtbot, services, "name", "github")
    type_into(qtbot, services, "base_url", "http://api.example.com")
    assert "https" in (problem(services, "base_url") or "")
    assert not services.save_button.isEnabled()
    type_into(qtbot, services, "base_url", "https://api.example.com/v3")
    assert problem(services, "base_url") is None
    assert services.save_button.isEnabled()


def test_a_bad_name_and_a_reserved_header_say_what_is_wrong(qtbot: QtBot, page: ConnectionsPage) -> None:
    services = page.pages["http"]
    type_into(qtbot, services, "name", "my service!")
    type_into(qtbot, services, "token_header", "Content-Type")
    assert "letters, digits" in (problem(services, "name") or "")
    assert "Helm sets Content-Type itself" in (problem(services, "token_header") or "")


def test_saving_a_token_service_keeps_the_token_out_of_settings(
    qtbot: QtBot, page: ConnectionsPage, broker: Broker
) -> None:
    services = page.pages["http"]
    type_into(qtbot, services, "name", "github")
    type_into(qtbot, services, "base_url", "https://api.example.com")
    type_into(qtbot, services, "token", "s3cret-token-value")
    qtbot.mouseClick(services.save_button, Qt.MouseButton.LeftButton)
    assert "Saved github" in services.status.text()
    stored = settings_json(broker)["services"]["github"]
    assert stored == {
        "base_url": "https://api.example.com",
        "auth": "token",
        "token_header": "Authorization",
        "token_format": "bearer",
    }
    assert "s3cret-token-value" not in broker.home.settings_path.read_text("utf-8")
    assert broker.credentials.get("services/github/token") == "s3cret-token-value"
    assert services.fields["token"].edit is not None
    assert services.fields["token"].edit.text() == ""
    assert "leave empty to keep" in services.fields["token"].edit.placeholderText()


def test_resaving_with_an_empty_token_field_keeps_the_stored_token(
    qtbot: QtBot, page: ConnectionsPage, broker: Broker
) -> None:
    services = page.pages["http"]
    type_into(qtbot, services, "name", "github")
    type_into(qtbot, services, "base_url", "https://api.example.com")
    type_into(qtbot, services, "token", "first")
    qtbot.mouseClick(services.save_button, Qt.MouseButton.LeftButton)
    type_into(qtbot, services, "base_url", "https://api.example.com/v2")
    qtbot.mouseClick(services.save_button, Qt.MouseButton.LeftButton)
    assert settings_json(broker)["services"]["github"]["base_url"] == "https://api.example.com/v2"
    assert broker.credentials.get("services/github/token") == "first"


def test_no_token_saves_a_public_service_forgets_its_old_token_and_shows_as_no_token_again(
    qtbot: QtBot, page: ConnectionsPage, broker: Broker
) -> None:
    services = page.pages["http"]
    type_into(qtbot, services, "name", "weather")
    type_into(qtbot, services, "base_url", "https://api.example.com")
    type_into(qtbot, services, "token", "old-token")
    qtbot.mouseClick(services.save_button, Qt.MouseButton.LeftButton)
    choose(services, "auth", "none")
    hidden = services.fields["token"].container.isHidden()
    qtbot.mouseClick(services.save_button, Qt.MouseButton.LeftButton)
    assert hidden
    assert "Saved weather" in services.status.text()
    assert settings_json(broker)["services"]["weather"]["auth"] == "token"
    assert broker.credentials.get("services/weather/token") is None
    assert services.test_button.isVisible()
    services.load("weather")
    assert services.fields["auth"].value() == "none"


def test_oauth2_asks_for_a_client_id_and_the_sign_in_urls_and_shows_the_redirect_uri(
    qtbot: QtBot, page: ConnectionsPage, broker: Broker
) -> None:
    services = page.pages["http"]
    type_into(qtbot, services, "name", "calendar")
    type_into(qtbot, services, "base_url", "https://cal.example.com")
    choose(services, "auth", "oauth2")
    assert services.oauth_box is not None
    assert not services.oauth_box.isHidden()
    assert services.fields["token"].container.isHidden()
    assert not services.save_button.isEnabled()
    type_into(qtbot, services, "client_id", "abc")
    type_into(qtbot, services, "authorize_url", "https://auth.example.com/authorize?access_type=offline")
    assert not services.save_button.isEnabled()
    type_into(qtbot, services, "token_url", "http://auth.example.com/token")
    assert "must be https" in (problem(services, "token_url") or "")
    type_into(qtbot, services, "token_url", "https://auth.example.com/token")
    assert services.save_button.isEnabled()
    assert "/oauth/callback" in services.redirect.text()
    assert not services.connect_button.isEnabled()
    qtbot.mouseClick(services.save_button, Qt.MouseButton.LeftButton)
    assert settings_json(broker)["services"]["calendar"] == {
        "base_url": "https://cal.example.com",
        "auth": "oauth2",
        "client_id": "abc",
        "authorize_url": "https://auth.example.com/authorize?access_type=offline",
        "token_url": "https://auth.example.com/token",
    }
    assert services.fields["token_url"].value() == "https://auth.example.com/token"


def test_an_mcp_token_variable_that_changes_how_programs_run_is_refused(
    qtbot: QtBot, page: ConnectionsPage
) -> None:
    mcp = page.pages["mcp"]
    type_into(qtbot, mcp, "name", "time")
    type_into(qtbot, mcp, "command", "mcp-server-time")
    type_into(qtbot, mcp, "token_env", "LD_PRELOAD")
    assert "changes how programs load or run" in (problem(mcp, "token_env") or "")
    type_into(qtbot, mcp, "token_env", "TIME_TOKEN")
    assert problem(mcp, "token_env") is None


def test_an_mcp_url_must_be_https(qtbot: QtBot, page: ConnectionsPage) -> None:
    mcp = page.pages["mcp"]
    choose(mcp, "transport", "http")
    assert mcp.fields["command"].container.isHidden()
    type_into(qtbot, mcp, "name", "remote")
    type_into(qtbot, mcp, "url", "http://mcp.example.com/mcp")
    assert "https" in (problem(mcp, "url") or "")


def test_the_mcp_test_button_lists_the_servers_tools(
    qtbot: QtBot, page: ConnectionsPage, broker: Broker, run: Any, mcp_time_command: list[str]
) -> None:
    mcp = page.pages["mcp"]
    type_into(qtbot, mcp, "name", "time")
    type_into(qtbot, mcp, "command", mcp_time_command[0])
    type_into(qtbot, mcp, "args", " ".join(mcp_time_command[1:]))
    qtbot.mouseClick(mcp.save_button, Qt.MouseButton.LeftButton)
    assert settings_json(broker)["mcp_servers"]["time"]["command"] == mcp_time_command
    assert mcp.test_button.isEnabled()
    task = mcp.start_test()
    assert task is not None

    async def done() -> Any:
        return await task

    result = run(done(), 60)
    assert result.ok, result.message
    items = [mcp.details.item(i).text() for i in range(mcp.details.count())]
    assert any(line.startswith("get_current_time") for line in items)
    assert "tool(s)" in mcp.status.text()


def test_a_sqlite_path_must_be_an_existing_absolute_file(
    qtbot: QtBot, page: ConnectionsPage, tmp_path: Path
) -> None:
    dbs = page.pages["db"]
    type_into(qtbot, dbs, "name", "local")
    type_into(qtbot, dbs, "path", "app.db")
    assert "full path" in (problem(dbs, "path") or "")
    type_into(qtbot, dbs, "path", str(tmp_path / "missing.db"))
    assert "no file" in (problem(dbs, "path") or "")
    assert dbs.fields["host"].container.isHidden()


def test_server_database_fields_say_what_is_wrong(qtbot: QtBot, page: ConnectionsPage) -> None:
    dbs = page.pages["db"]
    choose(dbs, "engine", "postgres")
    type_into(qtbot, dbs, "name", "pg")
    type_into(qtbot, dbs, "host", "postgres://db.example.com")
    type_into(qtbot, dbs, "port", "99999")
    assert "not a URL" in (problem(dbs, "host") or "")
    assert "1 to 65535" in (problem(dbs, "port") or "")
    assert not dbs.save_button.isEnabled()


def test_the_database_test_button_connects_to_a_real_sqlite_file(
    qtbot: QtBot, page: ConnectionsPage, tmp_path: Path, run: Any
) -> None:
    file = tmp_path / "app.db"
    sqlite3.connect(file).close()
    dbs = page.pages["db"]
    type_into(qtbot, dbs, "name", "local")
    type_into(qtbot, dbs, "path", str(file))
    qtbot.mouseClick(dbs.save_button, Qt.MouseButton.LeftButton)
    task = dbs.start_test()
    assert task is not None

    async def done() -> Any:
        return await task

    result = run(done(), 20)
    assert result.ok, result.message
    assert str(file) in dbs.status.text()


def test_the_file_picker_fills_the_path_without_blocking(
    qtbot: QtBot, page: ConnectionsPage, tmp_path: Path
) -> None:
    file = tmp_path / "picked.db"
    sqlite3.connect(file).close()
    picker = page.pages["db"].choose_file()
    qtbot.addWidget(picker)
    assert picker.isVisible()
    picker.fileSelected.emit(str(file))
    picker.close()
    assert page.pages["db"].fields["path"].value() == str(file)


def test_removing_a_profile_removes_its_secret(qtbot: QtBot, page: ConnectionsPage, broker: Broker) -> None:
    services = page.pages["http"]
    type_into(qtbot, services, "name", "github")
    type_into(qtbot, services, "base_url", "https://api.example.com")
    type_into(qtbot, services, "token", "tok")
    qtbot.mouseClick(services.save_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(services.remove_button, Qt.MouseButton.LeftButton)
    assert "github" not in settings_json(broker)["services"]
    assert broker.credentials.get("services/github/token") is None
    assert services.list.count() == 0


def test_what_the_user_typed_is_echoed_back_as_plain_text(qtbot: QtBot, page: ConnectionsPage) -> None:
    mcp = page.pages["mcp"]
    type_into(qtbot, mcp, "token_env", "<b>x</b>")
    label = mcp.fields["token_env"].error
    assert label.text().startswith("<b>x</b> ")
    assert label.textFormat() == Qt.TextFormat.PlainText
