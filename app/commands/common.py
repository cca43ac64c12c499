"""Plumbing shared by every subcommand: the home, the broker, secrets, output and exit codes.

Exit codes: 0 success, 1 the action failed (an error envelope, a refused change), 2 a usage
error (argparse's own), 3 Helm's settings or credential store cannot be used (a wrong or
missing profile included). ``TERMINAL`` hands the same plumbing to the kinds' command groups
(``broker.kinds.cli.CliIO``).
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import sys
import webbrowser
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, NoReturn

from broker import Broker
from broker.credentials import CredentialStore, open_store
from broker.settings import Home
from broker.visible import json_visible, visible

Handler = Callable[[argparse.Namespace], int]


class CommandFailed(Exception):
    """Ends a command with a message on stderr and exit code 1."""


def home_path(args: argparse.Namespace) -> Path:
    return Home.chosen_path(getattr(args, "home", None))


def home(args: argparse.Namespace) -> Home:
    h = Home(home_path(args))
    h.ensure()
    return h


def credentials(args: argparse.Namespace) -> CredentialStore:
    return open_store(home_path(args))


def open_broker(args: argparse.Namespace) -> Broker:
    path = home_path(args)
    return Broker(path, credentials=open_store(path))


def run(coro: Coroutine[Any, Any, int]) -> int:
    return asyncio.run(coro)


def read_secret(prompt: str, *, allow_empty: bool = False) -> str:
    """A secret from the terminal (no echo) or, when stdin is not a terminal, its first line.

    Secrets are never taken from argv: other users can read a process's arguments.
    """
    value = getpass.getpass(prompt) if sys.stdin.isatty() else sys.stdin.readline().rstrip("\r\n")
    if not value and not allow_empty:
        raise CommandFailed("no secret given (type it at the prompt or pipe it on stdin)")
    return value


def ask_yes_no(question: str) -> bool:
    """Ask on the terminal; anything but y/yes (including no terminal answer) is No."""
    print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


def print_json(value: Any) -> None:
    """JSON on stdout; hidden characters in its strings (ESC, C1 controls, bidi, separators)
    are written as ``\\uXXXX`` escapes, so data from a server cannot act on the terminal."""
    print(json_visible(json.dumps(value, indent=2, ensure_ascii=False)))


def fail(message: str) -> NoReturn:
    raise CommandFailed(message)


def add_home_option(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
    """``--home``, accepted before or after the subcommand (a subcommand's default must not
    override a value given before it)."""
    parser.add_argument(
        "--home",
        metavar="DIR",
        default=None if top else argparse.SUPPRESS,
        help="Helm home folder (default: $HELM_HOME or ~/.helm)",
    )


class Terminal:
    """The command line's side of a kind's commands (``broker.kinds.cli.CliIO``)."""

    def home(self, args: argparse.Namespace) -> Home:
        return home(args)

    def credentials(self, args: argparse.Namespace) -> CredentialStore:
        return credentials(args)

    def open_broker(self, args: argparse.Namespace) -> Broker:
        return open_broker(args)

    def read_secret(self, prompt: str, *, allow_empty: bool = False) -> str:
        return read_secret(prompt, allow_empty=allow_empty)

    def say(self, text: str) -> None:
        print(visible(text), flush=True)

    def warn(self, text: str) -> None:
        print(visible(text), file=sys.stderr, flush=True)

    def print_json(self, value: Any) -> None:
        print_json(value)

    def fail(self, message: str) -> NoReturn:
        fail(message)

    def run(self, coro: Coroutine[Any, Any, int]) -> int:
        return run(coro)

    def open_url(self, url: str) -> None:
        webbrowser.open(url)

    def add_home_option(self, parser: argparse.ArgumentParser) -> None:
        add_home_option(parser)


TERMINAL = Terminal()
