"""``helm``: the GUI with no subcommand; every action scriptable as a subcommand.

The desktop is the common case and its start is timed by users: ``helm`` alone (with
``--home`` or ``--self-test`` at most) opens it without importing any subcommand, whose
modules pull in every kind's libraries. A command of one of Helm's own groups (``helm workspace
add …``) builds the parser of that group only, so it does not wait for the agents' or MCP's
SDKs to import; anything else (a kind's group, help, a mistake) builds the full parser.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence


VALUE_OPTIONS = frozenset({"--arg"})
"""Options whose value is often a dash word (``--arg -y``, ``--arg --stdio``): argparse would read
it as an option of its own, so each is joined to its value before parsing."""

COMMAND_LINE_ACTIONS = frozenset({("mcp", "add"), ("agent", "add")})
"""Actions that take a program's whole command line after a bare ``--`` (``helm mcp add time --
uvx mcp-server-time``), given to the handler as ``args.command_line``."""

COMMANDS = {
    "workspace": "workspace", "project": "project", "ext": "ext", "catalogue": "catalogue", "app": "app",
    "audit": "audit", "decision-point": "point", "call": "call", "dev": "dev", "agent": "agent",
    "policy": "policy",
}  # fmt: skip
"""Helm's own subcommand groups → the module of ``app.commands`` that registers each (with a
``register(subparsers)``); each connection kind adds its group too (``KindSpec.cli``)."""


def helm_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("helm-desktop")
    except PackageNotFoundError:
        return "0+unknown"


def parser(group: str | None = None) -> argparse.ArgumentParser:
    """Helm's parser: every group, or only ``group`` (a key of ``COMMANDS``) when it is given."""
    from app.commands.common import TERMINAL, add_home_option
    from broker.kinds import KINDS

    p = argparse.ArgumentParser(
        prog="helm",
        description="Helm hosts extensions and brokers every call they make. "
        "Without a command, it opens the desktop app.",
    )
    p.add_argument("--version", action="version", version=f"helm {helm_version()}")
    add_home_option(p, top=True)
    p.add_argument("--self-test", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--verbose", action="store_true", help="also show the web engine's and Qt's own messages")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS.values() if group is None else (COMMANDS[group],):
        importlib.import_module(f"app.commands.{module}").register(sub)
    if group is not None:
        return p
    for spec in KINDS.values():
        register = spec.load_cli()
        if register is not None:
            register(sub, TERMINAL)
    return p


def joined_values(argv: Sequence[str]) -> list[str]:
    """``argv`` with every ``--arg VALUE`` written ``--arg=VALUE``, up to a bare ``--`` (after it
    every word is a command line's own)."""
    out: list[str] = []
    words = iter(argv)
    for word in words:
        if word == "--":
            out.append(word)
            out.extend(words)
            break
        value = next(words, None) if word in VALUE_OPTIONS else None
        out.append(word if value is None else f"{word}={value}")
    return out


def split_command_line(words: list[str]) -> tuple[list[str], list[str] | None]:
    """The words before a bare ``--`` and the command line after it, for the actions of
    ``COMMAND_LINE_ACTIONS``; any other command keeps its ``--`` for argparse. (A positional
    would do, but argparse fills a ``*`` positional too early when an option follows the name.)"""
    if "--" not in words:
        return words, None
    cut = words.index("--")
    plain: list[str] = []
    after_home = False
    for word in words[:cut]:
        if not after_home and not word.startswith("-"):
            plain.append(word)
        after_home = word == "--home"
    if tuple(plain[:2]) not in COMMAND_LINE_ACTIONS:
        return words, None
    return words[:cut], words[cut + 1 :]


def command_group(words: Sequence[str]) -> str | None:
    """The group of Helm's own that ``words`` (the command line before any bare ``--``) names,
    or None when they name none, ask for help or the version at the top, or start otherwise."""
    after_home = False
    for word in words:
        if word == "--":
            return None
        if after_home:
            after_home = False
        elif word == "--home":
            after_home = True
        elif word.startswith("--home="):
            continue
        elif word.startswith("-"):
            return None  # a top-level option other than --home: the full parser says what it means
        else:
            return word if word in COMMANDS else None
    return None


def desktop_args(argv: Sequence[str]) -> argparse.Namespace | None:
    """The options of a desktop start, or None when ``argv`` asks for anything else (a
    command, help, the version, a mistake): the full parser handles those."""
    p = argparse.ArgumentParser(prog="helm", add_help=False, exit_on_error=False)
    p.add_argument("--home", default=None)
    p.add_argument("--self-test", action="store_true")
    p.add_argument("--verbose", action="store_true")
    try:
        args, rest = p.parse_known_args(list(argv))
    except argparse.ArgumentError:
        return None
    return None if rest else args


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if list(argv) == ["--version"]:  # as the full parser says it, without importing every command
        print(f"helm {helm_version()}")
        return 0
    args = desktop_args(argv)
    if args is not None:
        return start_desktop(args)
    words, command_line = split_command_line(joined_values(argv))
    args = parser(command_group(words)).parse_args(words)
    if command_line is not None:
        args.command_line = command_line
    return run_command(args)


def start_desktop(args: argparse.Namespace) -> int:
    """The desktop (or its self-test), with the engine's own messages only under ``--verbose``."""
    from app.enginelog import quiet_engine, stderr_lines  # Qt is imported only for the GUI

    quiet_engine(args.verbose, stderr_lines())
    if args.self_test:
        from app.selftest import main as self_test

        return self_test(args)
    from app.gui import main as gui_main

    return gui_main(args)


def run_command(args: argparse.Namespace) -> int:
    from app.commands.common import CommandFailed
    from broker.errors import CredentialStoreError, HomeWriteError, SettingsError
    from broker.visible import visible

    handler = getattr(args, "handler", None)
    if args.self_test or handler is None:
        return start_desktop(args)
    try:
        code: int = handler(args)
    except CommandFailed as exc:
        print(visible(f"helm: {exc}"), file=sys.stderr)  # messages may quote a server or a manifest
        return 1
    except (SettingsError, CredentialStoreError, HomeWriteError) as exc:
        print(visible(f"helm: {exc}"), file=sys.stderr)
        return 3
    except OSError as exc:  # a disk error no command turned into its own message
        where = f"{exc.filename}: " if exc.filename else ""
        print(visible(f"helm: {where}{exc.strerror or exc}"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
