"""The desktop side of coding agents: the Agents tab and page, its transcript and its questions.

``ui.agents.tab`` is what the window imports: it needs nothing of the ACP SDK until the tab is
first shown. ``ui.agents.page`` is the page itself.
"""
