"""A TDT-like MCP server over stdio that speaks the TDT envelope and misbehaves on purpose.

Run: ``python -m tests.servers.tdt_like [--workspace ROOT mcp serve] [--profile everyday]`` (as
Helm starts a TDT child: the other arguments are ignored). It is plain JSON-RPC on
stdin/stdout (no SDK), so every misbehaviour is exact: ``crash`` exits mid-call, ``hang`` blocks
without reading (it ignores cancellation and pings), ``stall`` never answers one request but
keeps serving, ``flood`` writes one huge line, ``shout`` a huge notification that names no
request, ``mutate`` changes a tool's schema and announces it, ``ask_sampling`` sends the client
a sampling request and reports the reply. Read tools answer with a TDT envelope in both
structuredContent and text; ``*_apply`` tools echo what they received.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from typing import Any

EVERYDAY = "--profile" in sys.argv and sys.argv[sys.argv.index("--profile") + 1] == "everyday"
MANY = int(sys.argv[sys.argv.index("--many-tools") + 1]) if "--many-tools" in sys.argv else 0
"""How many more tools to offer (a large catalogue), each with a long description."""
OBJECT: dict[str, Any] = {"type": "object", "properties": {}}
state: dict[str, Any] = {"status_schema": dict(OBJECT), "next_id": 1000}


def envelope(data: Any, ok: bool = True, error: Any = None) -> dict[str, Any]:
    return {"api_version": 1, "ok": ok, "data": data, "coverage": {"truncated": False, "omissions": []},
            "warnings": [], "error": error}  # fmt: skip


def tools() -> list[dict[str, Any]]:
    reads = ["tdt_workspace_status", "tdt_brain_names_preview", "crash", "hang", "stall", "flood",
             "shout", "mutate", "ask_sampling", "fail", "plain", "env", "tdt_failing"]  # fmt: skip
    out = [{"name": n, "description": f"{n} tool", "inputSchema": OBJECT} for n in reads]
    out[0]["inputSchema"] = state["status_schema"]
    if EVERYDAY:
        out += [{"name": n, "description": f"{n} (everyday)", "inputSchema": OBJECT}
                for n in ("tdt_brain_names_apply", "tdt_constitution_save")]  # fmt: skip
    out += [{"name": f"extra_{i}", "description": "d" * 250, "inputSchema": OBJECT} for i in range(MANY)]
    return out


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(rid: Any, value: dict[str, Any]) -> None:
    send({"jsonrpc": "2.0", "id": rid, "result": value})


def tool_result(rid: Any, env: dict[str, Any]) -> None:
    result(rid, {"content": [{"type": "text", "text": json.dumps(env)}], "structuredContent": env})


def read_message() -> dict[str, Any] | None:
    line = sys.stdin.readline()
    if not line:
        return None
    message: dict[str, Any] = json.loads(line)
    return message


def flood_streamed(rid: Any, size: int) -> None:
    """One answer of ``size`` bytes of text on one line, written in 1 MiB pieces (this server
    never holds it whole)."""
    piece = "x" * (1024 * 1024)
    head = '{"jsonrpc":"2.0","id":' + json.dumps(rid) + ',"result":{"content":[{"type":"text","text":"'
    sys.stdout.write(head)
    for _ in range(size // len(piece)):
        sys.stdout.write(piece)
    sys.stdout.write('"}]}}\n')
    sys.stdout.flush()


def call(rid: Any, name: str, args: dict[str, Any]) -> None:
    if name == "tdt_workspace_status":
        tool_result(rid, envelope({"projects": 2, "reminders": 1}))
    elif name == "tdt_brain_names_preview":
        plan = {"renames": [{"from": "a.md", "to": "b.md"}]}
        proposal = hashlib.sha256(json.dumps(plan).encode()).hexdigest()
        tool_result(rid, envelope({**plan, "proposal_sha256": proposal}))
    elif name.endswith(("_apply", "_save")):
        tool_result(rid, envelope({"received": args}))
    elif name == "tdt_failing":
        tool_result(
            rid, envelope(None, False, {"code": "stale_revision", "message": "reread", "retry": "reread"})
        )
    elif name == "crash":
        os._exit(3)
    elif name == "hang":
        if "pid_file" in args:  # a grandchild in our process group, to prove the group is killed
            child = subprocess.Popen(["sleep", "600"])
            with open(args["pid_file"], "w") as f:
                f.write(str(child.pid))
        time.sleep(3600)  # blocks: no cancellation, no ping answered
    elif name == "stall":
        pass  # never answers this request, keeps serving others
    elif name == "flood" and args.get("stream"):
        flood_streamed(rid, int(args["size"]))
    elif name == "flood":
        text = "x" * int(args.get("size", 2 * 1024 * 1024))
        body = json.dumps({"content": [{"type": "text", "text": text}]})
        if args.get("id_last"):
            sys.stdout.write('{"result":' + body + ',"jsonrpc":"2.0","id":' + json.dumps(rid) + "}\n")
        else:
            sys.stdout.write('{"jsonrpc":"2.0","id":' + json.dumps(rid) + ',"result":' + body + "}\n")
        sys.stdout.flush()
    elif name == "shout":
        noise = {"level": "info", "data": "y" * (17 * 1024 * 1024)}  # over the listing bound too
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": noise})
    elif name == "mutate":
        state["status_schema"] = {"type": "object", "properties": {"everything": {"type": "boolean"}}}
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        result(rid, {"content": [{"type": "text", "text": "mutated"}]})
    elif name == "ask_sampling":
        ask = state["next_id"] = state["next_id"] + 1
        send({"jsonrpc": "2.0", "id": ask, "method": "sampling/createMessage",
              "params": {"messages": [], "maxTokens": 1}})  # fmt: skip
        reply = read_message()
        result(rid, {"content": [{"type": "text", "text": "reply"}], "structuredContent": {"reply": reply}})
    elif name == "fail":
        result(rid, {"content": [{"type": "text", "text": "it broke"}], "isError": True})
    elif name == "plain":
        result(rid, {"content": [{"type": "text", "text": "not an envelope"}]})
    elif name == "env":
        result(rid, {"content": [{"type": "text", "text": "env"}], "structuredContent": dict(os.environ)})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": f"no tool {name}"}})


def main() -> None:
    while (message := read_message()) is not None:
        method, rid = message.get("method"), message.get("id")
        if method == "initialize":
            result(rid, {"protocolVersion": message["params"]["protocolVersion"],
                         "capabilities": {"tools": {"listChanged": True}},
                         "serverInfo": {"name": "tdt-like", "version": "1"}})  # fmt: skip
        elif method == "ping":
            result(rid, {})
        elif method == "tools/list":
            result(rid, {"tools": tools()})
        elif method == "tools/call":
            params = message["params"]
            call(rid, params["name"], params.get("arguments") or {})
        elif rid is not None and method is not None:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no such method"}})


if __name__ == "__main__":
    main()
