"""``helm``: the GUI with no subcommand; every action scriptable as a subcommand."""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import PackageNotFoundError, version

from app.commands import agent, app, audit, call, db, dev, ext, mcp, project, service, workspace
from app.commands.common import CommandFailed, add_home_option
from broker.errors import CredentialStoreError, SettingsError
from broker.visible import visible

GROUPS = [workspace, project, ext, app, audit, call, service, dev, mcp, db, agent]


def helm_version() -> str:
    try:
        return version("helm-desktop")
    except PackageNotFoundError:
        return "0+unknown"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="helm",
        description="Helm hosts extensions and brokers every call they make. "
        "Without a command, it opens the desktop app.",
    )
    p.add_argument("--version", action="version", version=f"helm {helm_version()}")
    add_home_option(p, top=True)
    p.add_argument("--self-test", action="store_true", help=argparse.SUPPRESS)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for group in GROUPS:
        group.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    handler = getattr(args, "handler", None)
    if args.self_test:
        from app.selftest import main as self_test  # Qt is imported only for the GUI

        return self_test(args)
    if handler is None:
        from app.gui import main as gui_main  # Qt is imported only for the GUI

        return gui_main(args)
    try:
        code: int = handler(args)
    except CommandFailed as exc:
        print(visible(f"helm: {exc}"), file=sys.stderr)  # messages may quote a server or a manifest
        return 1
    except (SettingsError, CredentialStoreError) as exc:
        print(visible(f"helm: {exc}"), file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
