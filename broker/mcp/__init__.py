"""MCP servers as Helm talks to them, shared by the ``mcp`` and ``tdt-mcp`` kinds and MCP Apps.

``profiles`` (the servers the user adds), ``servers`` (the broker's live sessions, one per
workspace and server), ``session``, ``pool``, ``stdio`` and ``httpcap`` (sessions with the
contract's limits), ``pins`` (tool definitions an approval pins), ``results`` (a tool's answer
checked and sized), ``discovery`` (a server's apps and their HTML). No kind is imported here:
removing a kind leaves MCP Apps whole.
"""
