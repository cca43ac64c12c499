"""The desktop side of coding agents: the Agents page, its transcript and its questions."""

from ui.agents.page import AgentsPage

__all__ = ["AgentsPage"]
