"""A scripted ACP agent built on the SDK's agent side; it misbehaves on purpose when told to.

Run: ``python tests/servers/acp/scripted_agent.py [--load --state DIR] [--hang-at-start]``.
Each prompt is a JSON list of steps the agent performs in order, reporting every outcome as
an agent message, e.g. ``[{"read": "/abs/path"}, {"say": "done"}]``:

* ``say``/``think`` TEXT; ``chunks`` [TEXT, ...] (one message in several chunks);
  ``tool`` {id, title, kind, status, locations, diff} (a tool call),
  ``tool_update`` {id, status}; ``plan`` [[content, priority, status], ...];
* ``read`` PATH (+ ``line``, ``limit``) → "read ok: TEXT" / "read error: MESSAGE";
* ``write`` PATH + ``content`` → "write ok" / "write error: MESSAGE";
* ``ask`` {id, title, kind, options: [[id, name, kind], ...], locations, diff, input}
  → "permission: selected ID" / "permission: cancelled";
* ``terminal`` CMD (+ ``args``) → asks the client for a terminal (Helm never offers one);
* ``flood`` N (+ ``size``) → N message chunks; ``big_line`` N → one raw N-byte line;
* ``crash`` CODE (+ ``stderr`` TEXT) → writes TEXT to stderr and exits mid-turn;
* ``hang`` {child: bool, ignore_term: bool} → starts a grandchild (sleep) and never answers,
  ignoring session/cancel (and SIGTERM when told);
* ``daemon`` {hold: bool} → starts a grandchild that forks, calls ``setsid`` (leaving the
  agent's process group) and sleeps; its parent exits at once, so it leaves the agent's process
  tree too. It reports "daemon PID". With ``hold`` it keeps the agent's stdout and stderr open,
  otherwise it closes them as a daemon does;
* ``pause`` SECONDS → says nothing for that long, then goes on;
* ``wait_cancel`` → ends the turn with "cancelled" once session/cancel arrives;
* ``env`` / ``cwd`` / ``pid`` → reports its environment (JSON) / folder / process ids;
* ``stop`` REASON → the turn's stop reason (default end_turn).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

if "--hang-at-start" in sys.argv:
    sys.stderr.write("starting slowly\n")  # before the imports: a test's deadline may be short
    sys.stderr.flush()

import acp
from acp import schema

ARGS = sys.argv[1:]
LOAD = "--load" in ARGS
STATE = Path(ARGS[ARGS.index("--state") + 1]) if "--state" in ARGS else None


DAEMON = """
import os, sys, time
write = int(sys.argv[1])
if os.fork():
    os._exit(0)
os.setsid()
os.write(write, str(os.getpid()).encode())
os.close(write)
if sys.argv[2] == "close":
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
time.sleep(600)
"""


class Scripted:
    def __init__(self) -> None:
        self.conn: Any = None
        self.cancelled: dict[str, asyncio.Event] = {}
        self.writer: asyncio.StreamWriter | None = None
        self.client_caps: Any = None
        self.mcp_servers: Any = None
        self.said = 0

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> schema.InitializeResponse:
        if "--hang-at-start" in ARGS:
            await asyncio.sleep(3600)
        self.client_caps = kwargs.get("client_capabilities")
        caps = schema.AgentCapabilities(load_session=LOAD)
        return schema.InitializeResponse(protocol_version=protocol_version, agent_capabilities=caps)

    async def new_session(self, cwd: str, **kwargs: Any) -> schema.NewSessionResponse:
        sid = uuid.uuid4().hex
        self.mcp_servers = kwargs.get("mcp_servers")
        if STATE is not None:
            (STATE / sid).write_text(cwd)
        self.cancelled[sid] = asyncio.Event()
        return schema.NewSessionResponse(session_id=sid)

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> schema.LoadSessionResponse:
        if STATE is None or not (STATE / session_id).exists():
            raise acp.RequestError(-32002, "Resource not found", {"details": f"no session {session_id}"})
        self.cancelled[session_id] = asyncio.Event()
        await self.say(session_id, f"history of {session_id}")
        return schema.LoadSessionResponse()

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.cancelled.setdefault(session_id, asyncio.Event()).set()

    async def say(self, sid: str, text: str) -> None:
        """One agent message (its own ``messageId``, as agents mark where a message starts)."""
        self.said += 1
        chunk = acp.update_agent_message_text(text).model_copy(update={"message_id": f"m{self.said}"})
        await self.conn.session_update(sid, chunk)

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> schema.PromptResponse:
        self.cancelled.setdefault(session_id, asyncio.Event()).clear()
        steps = json.loads(prompt[0].text)
        stop = "end_turn"
        for step in steps:
            result = await self.step(session_id, step)
            if result is not None:
                stop = result
                break
        return schema.PromptResponse(stop_reason=stop)  # type: ignore[arg-type]

    async def step(self, sid: str, step: dict[str, Any]) -> str | None:
        (op, value), *_ = step.items()
        handler = getattr(self, f"do_{op}")
        result: str | None = await handler(sid, value, step)
        return result

    async def do_say(self, sid: str, value: str, step: dict[str, Any]) -> None:
        await self.say(sid, value)

    async def do_chunks(self, sid: str, value: list[str], step: dict[str, Any]) -> None:
        """One agent message sent as several chunks (one ``messageId``)."""
        self.said += 1
        for text in value:
            chunk = acp.update_agent_message_text(text).model_copy(update={"message_id": f"m{self.said}"})
            await self.conn.session_update(sid, chunk)

    async def do_pause(self, sid: str, value: float, step: dict[str, Any]) -> None:
        """Say nothing for ``value`` seconds, then go on (an agent thinking hard, or stuck)."""
        await asyncio.sleep(value)

    async def do_think(self, sid: str, value: str, step: dict[str, Any]) -> None:
        await self.conn.session_update(sid, acp.update_agent_thought_text(value))

    async def do_tool(self, sid: str, value: dict[str, Any], step: dict[str, Any]) -> None:
        content = [acp.tool_diff_content(**value["diff"])] if "diff" in value else None
        locations = [schema.ToolCallLocation(path=p) for p in value.get("locations", [])]
        update = acp.start_tool_call(
            value["id"], value["title"], kind=value.get("kind"), status=value.get("status", "pending"),
            content=content, locations=locations,
        )  # fmt: skip
        await self.conn.session_update(sid, update)

    async def do_tool_update(self, sid: str, value: dict[str, Any], step: dict[str, Any]) -> None:
        await self.conn.session_update(sid, acp.update_tool_call(value["id"], status=value["status"]))

    async def do_plan(self, sid: str, value: list[list[str]], step: dict[str, Any]) -> None:
        entries = [acp.plan_entry(c, priority=p, status=s) for c, p, s in value]  # type: ignore[arg-type]
        await self.conn.session_update(sid, acp.update_plan(entries))

    async def do_read(self, sid: str, value: str, step: dict[str, Any]) -> None:
        try:
            got = await self.conn.read_text_file(sid, value, line=step.get("line"), limit=step.get("limit"))
        except acp.RequestError as exc:
            await self.say(sid, f"read error: {exc}")
            return
        await self.say(sid, f"read ok: {got.content}")

    async def do_write(self, sid: str, value: str, step: dict[str, Any]) -> None:
        try:
            await self.conn.write_text_file(sid, value, step["content"])
        except acp.RequestError as exc:
            await self.say(sid, f"write error: {exc}")
            return
        await self.say(sid, "write ok")

    async def do_ask(self, sid: str, value: dict[str, Any], step: dict[str, Any]) -> None:
        options = [schema.PermissionOption(option_id=i, name=n, kind=k) for i, n, k in value["options"]]
        content = [acp.tool_diff_content(**value["diff"])] if "diff" in value else None
        locations = [schema.ToolCallLocation(path=p) for p in value.get("locations", [])]
        call = schema.ToolCallUpdate(
            tool_call_id=value["id"], title=value.get("title"), kind=value.get("kind"),
            content=content, locations=locations or None, raw_input=value.get("input"),
        )  # fmt: skip
        response = await self.conn.request_permission(sid, call, options)
        outcome = response.outcome
        if isinstance(outcome, schema.AllowedOutcome):
            await self.say(sid, f"permission: selected {outcome.option_id}")
        else:
            await self.say(sid, "permission: cancelled")

    async def do_terminal(self, sid: str, value: str, step: dict[str, Any]) -> None:
        try:
            await self.conn.create_terminal(sid, value, args=step.get("args"))
        except acp.RequestError as exc:
            await self.say(sid, f"terminal error: {exc}")
            return
        await self.say(sid, "terminal ok")

    async def do_flood(self, sid: str, value: int, step: dict[str, Any]) -> None:
        text = "x" * step.get("size", 10)
        for _ in range(value):
            await self.say(sid, text)

    async def do_big_line(self, sid: str, value: int, step: dict[str, Any]) -> None:
        assert self.writer is not None
        self.writer.write(b'{"jsonrpc":"2.0","method":"session/update","params":"' + b"y" * value + b'"}\n')
        await self.writer.drain()
        await asyncio.sleep(3600)

    async def do_crash(self, sid: str, value: int, step: dict[str, Any]) -> None:
        sys.stderr.write(step.get("stderr", ""))
        sys.stderr.flush()
        os._exit(value)

    async def do_hang(self, sid: str, value: dict[str, Any], step: dict[str, Any]) -> None:
        if value.get("ignore_term"):
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if value.get("child"):
            # The grandchild stays in the agent's process group; it must not outlive the agent.
            child = subprocess.Popen(["sleep", "600"])
            await self.say(sid, f"child {child.pid}")
        while True:
            await asyncio.sleep(3600)

    async def do_daemon(self, sid: str, value: dict[str, Any], step: dict[str, Any]) -> None:
        read, write = os.pipe()
        starter = subprocess.Popen(
            [sys.executable, "-c", DAEMON, str(write), "hold" if value.get("hold") else "close"],
            stdin=subprocess.DEVNULL, pass_fds=(write,),
        )  # fmt: skip
        os.close(write)
        starter.wait()
        with os.fdopen(read) as pipe:
            await self.say(sid, f"daemon {pipe.read().strip()}")

    async def do_wait_cancel(self, sid: str, value: Any, step: dict[str, Any]) -> str:
        await self.say(sid, "waiting for cancel\n")
        await asyncio.wait_for(self.cancelled[sid].wait(), 60)
        return "cancelled"

    async def do_env(self, sid: str, value: Any, step: dict[str, Any]) -> None:
        await self.say(sid, json.dumps(dict(os.environ)))

    async def do_caps(self, sid: str, value: Any, step: dict[str, Any]) -> None:
        caps = self.client_caps.model_dump(mode="json", by_alias=True, exclude_none=True)
        await self.say(sid, json.dumps({"capabilities": caps, "mcp_servers": self.mcp_servers}))

    async def do_env_sha256(self, sid: str, value: str, step: dict[str, Any]) -> None:
        await self.say(sid, hashlib.sha256(os.environ.get(value, "").encode()).hexdigest())

    async def do_cwd(self, sid: str, value: Any, step: dict[str, Any]) -> None:
        await self.say(sid, os.getcwd())

    async def do_pid(self, sid: str, value: Any, step: dict[str, Any]) -> None:
        await self.say(sid, f"pid {os.getpid()} pgid {os.getpgid(0)}")

    async def do_stop(self, sid: str, value: str, step: dict[str, Any]) -> str:
        return value


async def serve(agent: Scripted) -> None:
    """Run ``agent`` on this process's stdin and stdout until the client goes."""
    reader, writer = await acp.stdio_streams(limit=64 * 1024 * 1024)
    agent.writer = writer
    await acp.run_agent(agent, writer, reader)  # type: ignore[arg-type]


if __name__ == "__main__":
    asyncio.run(serve(Scripted()))
