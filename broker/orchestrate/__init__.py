"""Builds: a ``tool`` extension starts a governed coding-agent session on its declared prompt.

Helm's design of the contract's ``orchestrate`` line (docs/orchestrate.md). ``spec`` is the
manifest's ``orchestrate`` section; ``builds`` the question the user answers and the builds
started; ``kind`` the built-in connection ``$orchestrate`` (``helm.orchestrate.build`` and
``helm.orchestrate.status``) that runs inside the broker's one admission, its write through the
one write pipeline and its session through the agents' boundary. No Qt here.
"""
