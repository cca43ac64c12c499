"""Agent adapters from Helm's signed catalogue, on the command line.

``helm agent add NAME --package SPEC`` installs the adapter SPEC names (a catalogue name such as
``claude-code``, its npm package, or ``package@version`` with the pinned version) and prints
the command an agent profile runs. ``helm agent verify NAME`` re-hashes the install against
its receipt: exit 0 when it matches, 1 when it is missing, tampered with or from an older pin.

An agent profile's command is ``helm agent start-adapter NAME --home HOME`` (hidden from
``--help``): every start verifies the receipt, provisions a tampered install again, records
that in the audit log, then replaces itself with ``node <entry>`` — same process, same process
group, same standard streams — so whatever starts the profile gets the verified adapter.

The pieces are separate so the ``agent`` command group can take them in: ``add_package_option``
for its ``add``, ``register_verify`` and ``register_launcher`` for its subcommands.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from app.commands.common import add_home_option, fail, home_path
from broker.agents import provision
from broker.agents.provision import ProvisionError, State

LAUNCHER = "start-adapter"
MB = 1_000_000


def register(sub: Any) -> None:
    """The ``agent`` group with just the adapter commands."""
    p = sub.add_parser("agent", help="coding agents: adapters from Helm's signed catalogue")
    s = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = s.add_parser("add", help="install an agent adapter from Helm's signed catalogue")
    add.add_argument("name")
    add_package_option(add, required=True)
    add_home_option(add)
    add.set_defaults(handler=add_package)
    register_verify(s)
    register_launcher(s)


def add_package_option(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
    parser.add_argument(
        "--package",
        metavar="SPEC",
        required=required,
        help="an adapter from Helm's signed catalogue: claude-code, codex, or its npm package",
    )


def register_verify(sub: Any) -> None:
    p = sub.add_parser("verify", help="check an installed adapter against its receipt (exit 1 if not)")
    p.add_argument("name", help="the adapter (claude-code, codex)")
    add_home_option(p)
    p.set_defaults(handler=verify)


def register_launcher(sub: Any) -> None:
    p = sub.add_parser(LAUNCHER)  # no help: not listed, it is only ever in a profile
    p.add_argument("name")
    add_home_option(p)
    p.set_defaults(handler=start_adapter)


def add_package(args: argparse.Namespace) -> int:
    """Install the adapter and print the profile command that starts it."""
    command = install(args)
    print("agent command: " + " ".join(command))
    return 0


def install(args: argparse.Namespace) -> list[str]:
    """Install the adapter ``args.package`` names, print what was installed, and return the
    command an agent profile runs to start it."""
    added = _provision(provision.add(home_path(args), args.package))
    i = added.installed
    print(
        f"installed {added.adapter.title} ({added.adapter.package}@{i.version}): {i.tarballs} tarballs "
        f"verified, {i.downloaded / MB:.1f} MB downloaded, {i.files} files, {i.bytes / MB:.1f} MB"
    )
    if i.pruned:
        print(f"removed older installs: {', '.join(i.pruned)}")
    return launcher_argv(home_path(args), added.adapter.name)


def verify(args: argparse.Namespace) -> int:
    result = _provision(provision.verify(home_path(args), args.name))
    print(f"{args.name}: {result.state.value} — {result.detail}")
    if result.state is State.TAMPERED:
        print("it will be provisioned again at the next start", file=sys.stderr)
    return 0 if result.ok else 1


def start_adapter(args: argparse.Namespace) -> int:
    """Verify (re-provisioning if needed), then become ``node <entry>``."""
    launch = _provision(provision.ensure(home_path(args), args.name))
    if launch.event != "verified":
        print(f"helm: {args.name} was {launch.event} before starting", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    replace_process(launch.node, launch.argv)
    return 1  # reached only when ``replace_process`` is a test's stand-in


def launcher_argv(home: Path, name: str) -> list[str]:
    """The agent profile command: this Helm, started again as the launcher of ``name``."""
    helm = [sys.executable] if getattr(sys, "frozen", False) else [sys.executable, "-m", "app.cli"]
    return [*helm, "agent", LAUNCHER, name, "--home", str(home.resolve())]


def replace_process(program: str, argv: list[str]) -> None:
    os.execv(program, argv)  # noqa: S606 - exec, no shell: the agent takes over this process


def _provision[T](work: Coroutine[Any, Any, T]) -> T:
    try:
        result = asyncio.run(work)
    except ProvisionError as exc:
        fail(str(exc))
    return result
