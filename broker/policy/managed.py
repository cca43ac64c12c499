"""What the organisation's policy adds that the user cannot take away: its audit sinks and its
decision point, as the audit export (``broker.export``) and the decision point client
(``broker.decision_point``) take them.

Both read ``in_force()`` when they are used (a stat of each policy file), so a policy that
arrives, changes or goes applies to the next record exported and the next question asked,
in every Helm process, the window and ``helm`` alike. When several policies are in force (the
machine's file and ``HELM_POLICY``), every sink of each is used, and the machine's decision
point is asked, else the next file's.
"""

from __future__ import annotations

import logging
from dataclasses import asdict

from broker.decision_point import DecisionPointConfig, parse_decision_point
from broker.errors import SettingsError
from broker.export import SinkConfig
from broker.export.config import parse_sink
from broker.policy.source import PolicyState, in_force

log = logging.getLogger("helm.policy")


def audit_sinks(state: PolicyState | None = None) -> tuple[SinkConfig, ...]:
    """Every audit sink the policies in force name, marked managed (the user cannot remove
    them). The schema checked them already; one that still cannot be used is left out."""
    found: list[SinkConfig] = []
    for policy in (state or in_force()).policies:
        for i, rule in enumerate(policy.audit_sinks, 1):
            where = f"{policy.source}: audit_sinks[{i - 1}]"
            try:
                found.append(parse_sink(asdict(rule), where, name=f"policy sink {i}", managed=True))
            except SettingsError as err:  # the schema refuses nearly all of these first
                log.error("the organisation's audit sink cannot be used: %s", err)
    return tuple(found)


def decision_point(state: PolicyState | None = None) -> DecisionPointConfig | None:
    """The decision point the first policy in force that names one names, or None."""
    for policy in (state or in_force()).policies:
        rule = policy.decision_point
        if rule is not None:
            return parse_decision_point(asdict(rule), f"{policy.source}: decision_point", managed=True)
    return None
