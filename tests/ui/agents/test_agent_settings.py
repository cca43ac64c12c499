"""Settings → Agents on a real Helm home: add, change and remove agents, keys in the credential
store, adapters installed from a signed catalogue on a local registry, and the Helm menu."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from app.agents import add_agents, agent_settings
from broker import Broker
from broker.agents.provision import CatalogueSource
from broker.workspaces import add_workspace
from tests.ui.settings.test_connections import broker, choose, problem, settings_json, type_into
from tests.ui.test_main_window import make_window
from tests.unit.agents.provision.conftest import Demo, demo, key, registry
from ui.agents.settings import AgentProfilesPage, AgentSettings
from ui.agents.tab import AgentsTab
from ui.qt import QWidget

__all__ = ["broker", "demo", "key", "registry"]

KEY = "sk-agent-key-5f2c9e1a"


@pytest.fixture
def settings(qtbot: QtBot, broker: Broker) -> Iterator[AgentProfilesPage]:
    tab = AgentsTab(no_host)  # never shown: its page is not made
    qtbot.addWidget(tab)
    window = agent_settings(broker, tab)
    assert isinstance(window, AgentSettings)
    qtbot.addWidget(window)
    window.show()
    yield window.page
    window.close()


def no_host() -> Any:
    raise AssertionError("the Agents tab was not shown, so it makes no host")


async def finished[T](task: asyncio.Task[T]) -> T:
    return await task


def fill(qtbot: QtBot, page: AgentProfilesPage, **values: str) -> None:
    for field, value in values.items():
        if page.fields[field].combo is not None:
            choose(page, field, value)
        else:
            type_into(qtbot, page, field, value)


def test_an_agent_is_saved_with_its_key_in_the_credential_store_never_in_settings(
    qtbot: QtBot, broker: Broker, settings: AgentProfilesPage
) -> None:
    fill(qtbot, settings, name="claude", command="claude-code-acp", args="--stdio 'a b'",
         key_env="ANTHROPIC_API_KEY", key=KEY, allow_reads="yes")  # fmt: skip
    assert settings.save_button.isEnabled()
    settings.save_button.click()
    assert settings.status.text() == "Saved claude."
    assert settings_json(broker)["agents"]["profiles"]["claude"] == {
        "command": ["claude-code-acp", "--stdio", "a b"], "key_env": "ANTHROPIC_API_KEY", "allow_reads": True,
    }  # fmt: skip
    assert KEY not in broker.home.settings_path.read_text("utf-8")
    assert broker.credentials.get("agents/claude/key") == KEY
    # Loaded again: the key is not shown, and a save with it left empty keeps it.
    settings.load("claude")
    assert settings.fields["key"].value() == ""
    choose(settings, "allow_reads", "no")
    settings.save_button.click()
    assert broker.credentials.get("agents/claude/key") == KEY
    assert settings_json(broker)["agents"]["profiles"]["claude"]["allow_reads"] is False


def test_removing_an_agent_forgets_its_key(qtbot: QtBot, broker: Broker, settings: AgentProfilesPage) -> None:
    fill(qtbot, settings, name="claude", command="claude-code-acp", key_env="ANTHROPIC_API_KEY", key=KEY)
    settings.save_button.click()
    with qtbot.waitSignal(settings.changed, timeout=2000):
        settings.remove_button.click()
    assert settings.status.text() == "Removed claude."
    assert settings_json(broker)["agents"]["profiles"] == {}
    assert broker.credentials.get("agents/claude/key") is None
    assert settings.list.count() == 0


@pytest.mark.parametrize(
    ("values", "field", "says"),
    [
        pytest.param({"key": KEY}, "key", "name the variable that receives", id="key-without-variable"),
        pytest.param({"key_env": "MY_KEY"}, "key_env", "enter the key for $MY_KEY", id="no-key"),
        pytest.param({"key_env": "LD_PRELOAD", "key": KEY}, "key_env", "changes how programs", id="loader"),
        pytest.param({"args": "'open"}, "args", "a quote is not closed", id="open-quote"),
    ],
)  # fmt: skip
def test_a_wrong_form_says_what_is_wrong_and_cannot_be_saved(
    qtbot: QtBot, broker: Broker, settings: AgentProfilesPage, values: dict[str, str], field: str, says: str
) -> None:
    fill(qtbot, settings, name="claude", command="my-agent", **values)
    assert says in (problem(settings, field) or "")
    assert not settings.save_button.isEnabled()
    settings.save()
    assert broker.home.settings().agents == {}


def test_an_adapter_from_the_catalogue_is_installed_then_saved_and_checked(
    qtbot: QtBot, broker: Broker, settings: AgentProfilesPage, cli: Demo, run: Any
) -> None:
    fill(qtbot, settings, name="echo-agent", source="package", package="echo")
    settings.save_button.click()
    assert settings.installing is not None
    assert "Installing echo" in settings.status.text()
    run(finished(settings.installing), timeout=60)
    command = settings_json(broker)["agents"]["profiles"]["echo-agent"]["command"]
    assert command[-4:] == ["start-adapter", "echo", "--home", str(broker.home.path.resolve())]
    assert settings.fields["source"].value() == "package"
    task = settings.start_test()
    assert task is not None
    outcome = run(finished(task))
    assert outcome.ok and outcome.message.startswith("echo: ok")


def test_an_adapter_outside_the_catalogue_is_refused_and_nothing_is_saved(
    qtbot: QtBot, broker: Broker, settings: AgentProfilesPage, cli: Demo, run: Any
) -> None:
    fill(qtbot, settings, name="pad", source="package", package="left-pad")
    settings.save_button.click()
    assert settings.installing is not None
    run(finished(settings.installing), timeout=30)
    assert "not in Helm's signed catalogue" in settings.status.text()
    assert broker.home.settings().agents == {}
    assert cli.registry.requests == []


def test_the_helm_menu_opens_settings_agents_and_a_saved_agent_appears_on_the_agents_page(
    qtbot: QtBot, broker: Broker, tmp_path: Path, run: Any
) -> None:
    (tmp_path / "root").mkdir()
    add_workspace(broker.home, "main", tmp_path / "root")
    window = make_window(qtbot, broker, lambda frame, parent: QWidget(parent))  # type: ignore[arg-type]
    tab = add_agents(window, broker)
    run(finished(tab.load()))
    assert tab.page is not None and tab.page.picker.agent.count() == 0
    titles = [a.text() for a in window.menuBar().actions()[0].menu().actions()]  # type: ignore[union-attr]
    assert titles.index("Settings — Agents…") == titles.index("Settings — Connections…") + 1
    window.menu_actions["agents_settings"].trigger()
    settings = window.windows["agents_settings"]
    assert isinstance(settings, AgentSettings)
    fill(qtbot, settings.page, name="local", command="my-agent")
    settings.page.save_button.click()
    assert [tab.page.picker.agent.itemText(i) for i in range(tab.page.picker.agent.count())] == ["local"]
    run(tab.aclose())


@pytest.fixture
def cli(demo: Demo, monkeypatch: pytest.MonkeyPatch) -> Demo:
    """Helm's shipped catalogue is the test's, signed by the test's key; its registry is local."""
    monkeypatch.setattr(CatalogueSource, "shipped", classmethod(lambda cls: demo.source))
    monkeypatch.setenv("HELM_NPM_REGISTRY", demo.registry.url)
    return demo
