"""``helm agent add|list|remove|run|sessions|verify``: coding agents over ACP, inside Helm's boundary.

``add NAME --command CMD [--arg A]... (--key-env VAR | --no-key) [--allow-reads]`` (or the whole
command line after ``--``: ``add NAME --no-key -- CMD ARG...``) stores a profile; the key is read
from stdin or a prompt (never argv) into the credential store.
``add NAME --package SPEC [--key-env VAR]`` installs an adapter from Helm's signed catalogue
first and stores a profile that starts it (``agent_provision``); ``verify`` checks an install.
``run NAME --workspace W [--project P]... [--write] [--json] [--resume ID] PROMPT`` runs one
prompt turn and streams the transcript; each question is asked on the terminal, y/N with No the
default, and end of input means No. Ctrl-C, SIGTERM and SIGHUP each cancel the turn and stop the
agent with everything it started. Exit code: 0 when the agent ends its turn, 1 on a refusal, a
cancel (Ctrl-C, SIGTERM, SIGHUP) or an error.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
from dataclasses import asdict
from typing import Any, TextIO

from app.commands import agent_provision
from app.commands.agent_terminal import StdinLines, TerminalQuestions, safe
from app.commands.common import add_home_option, credentials, fail, home, print_json, read_secret, run
from broker.agents import (
    AgentEvent,
    AgentHost,
    AgentSession,
    MessageChunk,
    SessionRequest,
    past_sessions,
    profiles,
)
from broker.agents.profiles import AgentProfile

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Each cancels the turn, then the agent is stopped (its whole group and all it started)."""


def register(sub: Any) -> None:
    p = sub.add_parser("agent", help="add, list, remove and run coding agents (ACP)")
    s = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    _register_add(s)
    ls = s.add_parser("list", help="list agents")
    ls.add_argument("--json", action="store_true", help="print JSON")
    add_home_option(ls)
    ls.set_defaults(handler=_list)
    rm = s.add_parser("remove", help="remove an agent and its stored key")
    rm.add_argument("name")
    add_home_option(rm)
    rm.set_defaults(handler=_remove)
    _register_run(s)
    agent_provision.register_verify(s)
    agent_provision.register_launcher(s)
    past = s.add_parser("sessions", help="list past sessions (to continue one with run --resume)")
    past.add_argument("--json", action="store_true", help="print JSON")
    add_home_option(past)
    past.set_defaults(handler=_sessions)


def _register_add(s: Any) -> None:
    add = s.add_parser(
        "add", help="add (or replace) an agent",
        epilog="Or give the whole command line after --: helm agent add NAME --no-key -- CMD ARG...",
    )  # fmt: skip
    add.add_argument("name")
    source = add.add_mutually_exclusive_group()
    source.add_argument("--command", metavar="CMD", help="the agent's program (started without a shell)")
    agent_provision.add_package_option(source)
    add.add_argument("--arg", action="append", default=[], metavar="A", help="one argument (repeat)")
    add.set_defaults(command_line=[])  # the words after a bare --, if any (app.cli)
    key = add.add_mutually_exclusive_group()
    key.add_argument("--key-env", metavar="VAR", help="the variable that receives the agent's key")
    key.add_argument("--no-key", action="store_true", help="the agent needs no key")
    add.add_argument(
        "--allow-reads", action="store_true",
        help="let the policy allow the agent's read requests inside its folders without asking",
    )  # fmt: skip
    add_home_option(add)
    add.set_defaults(handler=_add)


def _register_run(s: Any) -> None:
    r = s.add_parser("run", help="run one prompt turn and stream the transcript")
    r.add_argument("name")
    r.add_argument("--workspace", "-w", required=True)
    r.add_argument(
        "--project", "-p", action="append", default=[], metavar="P",
        help="work in this project of the workspace (repeat; default: the workspace root)",
    )  # fmt: skip
    r.add_argument("--write", action="store_true", help="allow changes to files (each one is confirmed)")
    r.add_argument("--json", action="store_true", help="one JSON event per line")
    r.add_argument("--resume", metavar="SESSION", help="continue a past session (helm agent sessions)")
    r.add_argument("prompt")
    add_home_option(r)
    r.set_defaults(handler=_run)


def _command_line(args: argparse.Namespace) -> tuple[str, ...]:
    """The agent's command line: after ``--``, or ``--command`` with its ``--arg``s; for a
    catalogue package, a stand-in until the install names the real one."""
    if args.command_line:
        if args.command is not None or args.package is not None or args.arg:
            fail("give the agent's command line once: after --, or with --command and --arg")
        return tuple(args.command_line)
    if args.command is None and args.package is None:
        fail("say which agent to run: --command CMD, --package NAME, or -- CMD ARG...")
    if args.package is not None and args.arg:
        fail("--arg is for --command agents; an installed adapter is started by Helm")
    return (args.command or "helm", *args.arg)


def _add(args: argparse.Namespace) -> int:
    command = _command_line(args)
    if args.package is None and not (args.key_env or args.no_key):
        fail("say where the agent's key goes (--key-env VAR) or that it needs none (--no-key)")
    profile = AgentProfile(args.name, command, args.key_env, args.allow_reads)
    store = profiles.AGENTS.store(home(args), credentials(args))
    store.check(profile)  # report a wrong profile before asking for a key
    key = read_secret(f"Key for {args.name} (put in ${args.key_env}): ") if args.key_env else None
    if args.package is not None:
        command = tuple(agent_provision.install(args))
        profile = AgentProfile(args.name, command, args.key_env, args.allow_reads)
    store.save(profile, {"key": key})
    print(f"agent {args.name} saved" + (" (key in the credential store)" if key else ""))
    if args.package is not None:
        print("agent command: " + " ".join(command))
    return 0


def _list(args: argparse.Namespace) -> int:
    found = profiles.AGENTS.store(home(args)).all()
    if args.json:
        print_json([{"name": p.name, **p.to_json()} for p in found])
        return 0
    if not found:
        print("no agents (add one with: helm agent add NAME --command CMD --no-key)")
    for p in found:
        extra = (f"  (key in ${p.key_env})" if p.key_env else "") + (
            "  (reads allowed)" if p.allow_reads else ""
        )
        print(f"{p.name}\t{' '.join(p.command)}{extra}")
    return 0


def _remove(args: argparse.Namespace) -> int:
    profiles.AGENTS.store(home(args), credentials(args)).remove(args.name)
    print(f"agent {args.name} removed")
    return 0


def _sessions(args: argparse.Namespace) -> int:
    found = past_sessions(home(args).path)
    if args.json:
        print_json([asdict(s) for s in found])
        return 0
    if not found:
        print("no past sessions")
    for s in found:
        where = s.workspace + (f" ({', '.join(s.projects)})" if s.projects else "")
        print(f"{s.id}\t{s.started_at}\t{s.agent}\t{where}\t{safe(s.title)}")
    return 0


def _run(args: argparse.Namespace) -> int:
    request = SessionRequest(args.name, args.workspace, tuple(args.project), args.write, args.resume)
    return run(_run_session(args, request))


async def _run_session(args: argparse.Namespace, request: SessionRequest) -> int:
    loop = asyncio.get_running_loop()
    stops: list[signal.Signals] = []
    stopped = asyncio.Event()

    def on_stop(sig: signal.Signals) -> None:
        what = "cancelling the turn" if sig is signal.SIGINT else f"{sig.name}: stopping the agent"
        print(f"\nhelm: {what}…", file=sys.stderr)
        stops.append(sig)
        stopped.set()

    # However Helm is stopped, the agent and everything it started end, warm agents included:
    # the handlers stay until the host has stopped every agent.
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, on_stop, sig)
    try:
        async with AgentHost(home(args), credentials(args)) as host, StdinLines.open() as lines:
            questions = TerminalQuestions(lines)
            session = host.session(request, asker=questions.permission, confirmer=questions.write)
            return await _stream_turn(args, session, stopped)
    finally:
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)


async def _stream_turn(args: argparse.Namespace, session: AgentSession, stopped: asyncio.Event) -> int:
    """Stream one turn; each stop signal cancels it (the session is closed in any case)."""
    show = _show_json if args.json else TextTranscript().show
    code = 1

    async def cancel_on_stop() -> None:
        while True:
            await stopped.wait()
            stopped.clear()
            await session.cancel()

    canceller = asyncio.create_task(cancel_on_stop(), name="helm.agent.stop")
    try:
        async for event in session.run(args.prompt):
            show(event)
            code = 0 if event.type == "turn_ended" and event.as_json()["stop_reason"] == "end_turn" else 1
    finally:
        await session.close()
        canceller.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await canceller
    return code


def _show_json(event: AgentEvent) -> None:
    print(json.dumps(event.as_json(), ensure_ascii=False), flush=True)


def _out(text: str, stream: TextIO | None = None) -> None:
    out = sys.stdout if stream is None else stream  # the stream of now, not of the import
    out.write(safe(text))
    out.flush()


class TextTranscript:
    """The turn as text on the terminal: a message continues until the agent starts another."""

    def __init__(self) -> None:
        self.last: MessageChunk | None = None  # the message chunk shown last, if it was last

    def show(self, event: AgentEvent) -> None:
        if isinstance(event, MessageChunk):
            agent = event.role == "agent"
            start = "\n" if agent and event.starts_new_message(self.last) else ""
            _out(start + event.text if agent else f"\n> {event.text}\n")
            self.last = event if agent else None
            return
        self.last = None
        _show_other(event)


def _show_other(event: AgentEvent) -> None:
    data = event.as_json()
    kind = event.type
    if kind == "thought":
        _out(f"\n(thinking) {data['text']}\n")
    elif kind == "tool_call":
        label = data["title"] or data["id"]
        _out(f"\n[tool] {label} {data['kind']} {data['status']}".rstrip() + "\n")
    elif kind == "plan":
        _out("\n[plan]\n" + "".join(f"  [{e['status']}] {e['content']}\n" for e in data["entries"]))
    elif kind == "permission":
        _out(f"\n[permission] {data['title']}: {data['decision']} → {data['answer']} ({data['reason']})\n")
    elif kind == "file":
        _out(f"\n[file] {data['operation']} {data['path']}: {data['decision']}, {data['outcome']}\n")
    elif kind == "quiet":
        _out(
            f"\n[quiet] {data['agent']} has said nothing for {data['seconds']} s; Ctrl-C cancels the turn\n",
            sys.stderr,
        )
    elif kind == "terminal":
        _out(f"\n[terminal refused] {data['command']}\n")
    elif kind == "session_started":
        _out(f"[session {data['session_id']}] {data['note']}\n".replace("] \n", "]\n"), sys.stderr)
    elif kind == "turn_ended":
        _out(f"\n[turn ended: {data['stop_reason']}]\n")
    elif kind == "failed":
        _show_failure(data)


def _show_failure(data: dict[str, Any]) -> None:
    text = f"\nhelm: {data['message']}"
    if data["exit_code"] is not None:
        text += f" (exit code {data['exit_code']})"
    if data["stderr_tail"]:
        text += "\n--- the agent's stderr (last lines) ---\n" + data["stderr_tail"]
    _out(text.rstrip("\n") + "\n", sys.stderr)
