"""``helm policy``: the organisation's policy in effect, and a check of a policy file.

``helm policy show`` prints every policy file Helm reads (the machine's and ``HELM_POLICY``),
with each rule as Helm applies it (defaults written out; ``null`` restricts nothing), and every
file it refuses with why: exit 0 when every file that exists is in force, 1 when one is refused
(then nothing runs until it is fixed). ``helm policy check FILE`` validates a file against
``resources/policy.schema.json`` and lists every problem at once with its JSON path (exit 1);
where the file is and who owns it is checked where it is deployed, by ``show``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from app.commands.common import print_json
from broker.policy import source
from broker.policy.source import PolicySource
from broker.visible import visible


def register(sub: Any) -> None:
    p = sub.add_parser("policy", help="the organisation's policy: show the one in effect, check a file")
    s = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = s.add_parser("show", help="print the policy in effect (and any policy file Helm refuses)")
    show.add_argument("--json", action="store_true", help="print it as JSON")
    show.set_defaults(handler=_show)
    check = s.add_parser("check", help="validate a policy file against its schema (every problem at once)")
    check.add_argument("file", type=Path)
    check.set_defaults(handler=_check)


def _show(args: argparse.Namespace) -> int:
    reader = PolicySource()
    state = reader.state()
    files = [str(p) for p, _ in reader.paths()]
    if args.json:
        print_json(
            {
                "files": files,
                "policies": [p.to_json() for p in state.policies],
                "refused": [{"file": str(r.path), "reason": r.reason} for r in state.refused],
            }
        )
        return 1 if state.refused else 0
    for refused in state.refused:
        print(visible(f"helm: {refused.message}"), file=sys.stderr)
    if not state.managed:
        print(f"no organisation policy: Helm reads {' and '.join(files)}, and none exists")
        return 0
    for policy in state.policies:
        print(f"policy in force from {policy.source}:")
        for line in _lines(policy.to_json()):
            print(visible(line))
    return 1 if state.refused else 0


def _lines(doc: dict[str, Any]) -> list[str]:
    out = []
    for key, value in doc.items():
        if key == "source":
            continue
        if isinstance(value, dict) and value:
            for sub, inner in value.items():
                out.append(f"  {key}.{sub}: {_word(inner)}")
        else:
            out.append(f"  {key}: {_word(value)}")
    return out


def _word(value: Any) -> str:
    if value is None:
        return "any (no restriction)"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        if not value:
            return "none"
        return ", ".join(_word(v) if not isinstance(v, str) else v for v in value)
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(f"{k}: {_word(v) if not isinstance(v, str) else v}" for k, v in value.items())
            + "}"
        )
    return str(value)


def _check(args: argparse.Namespace) -> int:
    issues = source.check_file(args.file)
    if not issues:
        print(f"{args.file}: a valid policy")
        return 0
    print(visible(f"{args.file}: {len(issues)} problem(s)"), file=sys.stderr)
    for issue in issues:
        print(visible(f"  {issue.path}: {issue.message}"), file=sys.stderr)
    return 1
