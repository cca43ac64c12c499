"""MCP Apps in Helm: a server's ``ui://`` HTML, run in Helm's sandbox under Helm's rules.

An app added to a workspace is an extension Helm writes itself (``broker.apps.spec``): one
``mcp`` connection to the app's server whose operations and writes are exactly the tools
visible to the app, and an ``app`` section pinning the HTML's sha256, the declared CSP and
permissions and the resource domains the user allowed. So the broker's one path — rate limit,
caps, the approval, confirmation of every write, audit — applies to the app's ``tools/call``
unchanged. ``discovery`` lists and reads apps, ``review`` builds what the user approves and
adds the app, ``verify`` checks an app before it opens, ``rpc`` answers the app's JSON-RPC.

This package is imported by manifest validation (``spec``); its other modules are imported
where used, so reading a manifest does not load the MCP library.
"""
