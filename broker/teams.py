"""The user's own audit sinks and decision point: the ``teams`` section of settings.json.

::

    "teams": {"version": 1,
              "audit_sinks": {NAME: {"type": "jsonl", "path": ...} | {"type": "syslog", ...}},
              "decision_point": {"url": ..., "tenant_id": ..., "principal_id": ...,
                                 "key_ref": ..., "writes": false} | null}

The same shapes an organisation's policy uses (``broker.export.config``,
``broker.decision_point``); what the policy sets comes first and the user cannot remove it.
Every change is validated before it is written, so a sink Helm cannot use is never saved.
"""

from __future__ import annotations

from typing import Any

from broker.decision_point import DecisionPointConfig, parse_decision_point, point_json
from broker.errors import SettingsError
from broker.export.config import SinkConfig, parse_sink, sink_json
from broker.names import NAME_RULE, valid_name
from broker.settings import Home, Settings

SINKS = "audit_sinks"
POINT = "decision_point"


def audit_sinks(settings: Settings) -> tuple[SinkConfig, ...]:
    """The user's sinks, by name (``SettingsError`` naming every sink that is wrong)."""
    raw = settings.teams.get(SINKS, {})
    if not isinstance(raw, dict):
        raise SettingsError(f"teams.{SINKS} must be a JSON object")
    sinks, problems = [], []
    for name, sink in sorted(raw.items()):
        try:
            sinks.append(parse_sink(sink, f"teams.{SINKS}.{name}", name=name))
        except SettingsError as err:
            problems.append(str(err))
    if problems:
        raise SettingsError("; ".join(problems))
    return tuple(sinks)


def add_sink(home: Home, name: str, raw: dict[str, Any]) -> SinkConfig:
    """Add (or replace) the user's sink ``name``; the sink as parsed."""
    if not valid_name(name):
        raise SettingsError(f"{name!r} is not a valid sink name ({NAME_RULE})")
    sink = parse_sink(raw, name, name=name)
    with home.update() as settings:
        settings.teams.setdefault(SINKS, {})[name] = sink_json(sink)
    return sink


def remove_sink(home: Home, name: str) -> None:
    with home.update() as settings:
        sinks = settings.teams.get(SINKS, {})
        if name not in sinks:
            raise SettingsError(f"no audit sink named {name!r} (your organisation's sinks cannot be removed)")
        del sinks[name]
        if not sinks:
            del settings.teams[SINKS]


def decision_point(settings: Settings) -> DecisionPointConfig | None:
    """The user's decision point, or None."""
    raw = settings.teams.get(POINT)
    return None if raw is None else parse_decision_point(raw, f"teams.{POINT}")


def set_decision_point(home: Home, config: DecisionPointConfig | None) -> None:
    with home.update() as settings:
        if config is None:
            settings.teams.pop(POINT, None)
        else:
            settings.teams[POINT] = point_json(config)
