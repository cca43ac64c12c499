"""MCP Apps on the desktop: the double-iframe host page, its bridge and the app's frame.

``AppHost`` makes an ``AppFrame`` per running app: it checks the app (``broker.apps.verify``),
then runs an ``AppView`` — Helm's host page with its isolated-world relay (``page``) holding the
app's sandboxed frame, served by an off-the-record profile whose policy (``policy``) lets no
network out. ``dialogs`` holds the questions apps make Helm ask; ``add`` the "Add app…" flow.
"""
