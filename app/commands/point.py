"""``helm decision-point set|show|clear``: the organisation's policy decision point, as the user
sets it until a machine policy does (``broker.decision_point``, ``broker.teams``).

The key is read from the terminal or stdin, never from argv, and kept in the credential store;
settings hold only the name it is kept under.
"""

from __future__ import annotations

import argparse
from typing import Any

from app.commands.common import add_home_option, credentials, home, print_json, read_secret
from broker import teams
from broker.decision_point import parse_decision_point, point_json
from broker.visible import visible

KEY_REF = "teams/decision_point/key"


def register(sub: Any) -> None:
    p = sub.add_parser("decision-point", help="the organisation's policy decision point (HELM Kernel)")
    actions = p.add_subparsers(dest="point_action", metavar="set|show|clear", required=True)
    put = actions.add_parser("set", help="ask this decision point about agents' requests (key on stdin)")
    put.add_argument("url", help="its base URL (https; http only on loopback)")
    put.add_argument("--tenant", required=True, help="X-Helm-Tenant-ID")
    put.add_argument("--principal", required=True, help="X-Helm-Principal-ID, and the body's principal")
    put.add_argument("--writes", action="store_true", help="ask it before every write too")
    add_home_option(put)
    put.set_defaults(handler=_set)
    show = actions.add_parser("show", help="print the decision point in effect")
    show.add_argument("--json", action="store_true")
    add_home_option(show)
    show.set_defaults(handler=_show)
    clear = actions.add_parser("clear", help="stop asking the decision point (its key is deleted)")
    add_home_option(clear)
    clear.set_defaults(handler=_clear)


def _set(args: argparse.Namespace) -> int:
    raw = {"url": args.url, "tenant_id": args.tenant, "principal_id": args.principal,
           "key_ref": KEY_REF, "writes": args.writes}  # fmt: skip
    config = parse_decision_point(raw)  # wrong settings are refused before the key is asked for
    key = read_secret("Decision point key: ")
    credentials(args).set(KEY_REF, key)
    teams.set_decision_point(home(args), config)
    asks = "agents' permission requests and every write" if config.writes else "agents' permission requests"
    print(visible(f"decision point {config.url}: asked about {asks}"))
    return 0


def _show(args: argparse.Namespace) -> int:
    config = teams.decision_point(home(args).settings())
    if args.json:
        print_json(None if config is None else point_json(config))
    elif config is None:
        print("no decision point: Helm's own rules and your answers decide")
    else:
        writes = "yes" if config.writes else "no"
        print(
            visible(
                f"{config.url}  tenant {config.tenant_id}  principal {config.principal_id}  writes: {writes}"
            )
        )
    return 0


def _clear(args: argparse.Namespace) -> int:
    config = teams.decision_point(home(args).settings())
    teams.set_decision_point(home(args), None)
    if config is not None:
        credentials(args).delete(config.key_ref)
    print("decision point cleared")
    return 0
