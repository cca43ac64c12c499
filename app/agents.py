"""Coding agents in Helm's window: the Agents tab and Settings → Agents, and what they run on.

The composition of the agents' parts: the ``AgentHost`` behind the Agents tab (made when the
tab is first shown, closed with the window), and the agent profiles, the catalogue installer
and the Check button behind Settings → Agents. ``broker.agents`` (and the ACP SDK it imports)
is imported only when one of them is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from broker import Broker
from broker.errors import SettingsError
from ui.agents.tab import AgentsTab
from ui.main_window import MainWindow
from ui.qt import QWidget

if TYPE_CHECKING:
    from broker.agents import AgentHost


def add_agents(window: MainWindow, broker: Broker) -> AgentsTab:
    """The Agents tab, and "Settings — Agents…" in the Helm menu."""
    tab = AgentsTab(lambda: agent_host(broker), window)
    window.add_page(tab, "Agents", "agents")
    window.home_changed.connect(lambda _names: tab.follow_home())
    window.policy_changed.connect(tab.follow_policy)
    window.add_menu_window(
        "agents_settings", "Settings — Agents…", lambda: agent_settings(broker, tab, window)
    )
    return tab


def agent_host(broker: Broker) -> tuple[AgentHost, str]:
    """The coding agents' host; with the default limits (and why) when the environment's are wrong."""
    from broker.agents import AgentHost, Limits

    try:
        limits = Limits.from_env()
    except SettingsError as err:
        return AgentHost(
            broker.home, broker.credentials, limits=Limits(), writes=broker.writes, point=broker.points
        ), f"{err}; using 60 s"
    return AgentHost(
        broker.home, broker.credentials, limits=limits, writes=broker.writes, point=broker.points
    ), ""


def agent_settings(broker: Broker, tab: AgentsTab, parent: QWidget | None = None) -> QWidget:
    """Settings → Agents on the broker's home and credential store."""
    from broker.agents.form import AGENT_FORM, probe
    from broker.agents.profiles import AGENTS
    from ui.agents.settings import AgentSettings
    from ui.settings.backend import FormSection, StoreInfo

    home, credentials = broker.home, broker.credentials
    store = AGENTS.store(home, credentials)
    section = FormSection(store, AGENT_FORM, lambda name, _inputs: probe(home.path, store, name))
    info = StoreInfo(credentials.description, credentials.is_keychain)
    window = AgentSettings(section, lambda spec: install_adapter(broker, spec), info, parent)
    window.page.changed.connect(lambda: tab.page.reload() if tab.page is not None else None)
    return window


async def install_adapter(broker: Broker, spec: str) -> list[str]:
    """Install the catalogue adapter ``spec`` names; the command a profile runs to start it."""
    from app.commands.agent_provision import launcher_argv
    from broker.agents import provision

    added = await provision.add(broker.home.path, spec)
    return launcher_argv(broker.home.path, added.adapter.name)
