"""The policy for an agent's ``session/request_permission``: one pure function, one verdict.

``decide`` turns what the agent asked (``PermissionFacts``), what this run allows (``Rules``)
and this session's sticky grants into a ``PolicyDecision``: ALLOW (with the option to select),
DENY (with the reject option to select, or none: the answer is then ``cancelled``), or ASK the
user. ``resolve_answer`` turns the user's pick into what Helm answers. There is no setting that
allows everything: every request gets its own verdict.

Fail closed:
* an allow is only ever an option the agent offered with an ``allow_*`` kind;
* with no reject option offered, a refusal is ``cancelled``, never an allow; so is any answer
  when two options share an id (the agent could read the id as either);
* a sticky grant ("allow always") is Helm's own, for this session only: the agent is answered
  ``allow_once`` whenever it offered one, so it has nothing to remember beyond the session;
* a grant covers the exact request it was given for (kind, title, content and paths, not a
  title the agent may reuse), and the roots are checked before any grant: a request naming a
  path outside the roots is always asked, whatever was allowed before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from broker.summary import Decision

ALLOW_KINDS = ("allow_once", "allow_always")
REJECT_KINDS = ("reject_once", "reject_always")
WRITE_KINDS = frozenset({"edit", "delete", "move"})
READ_KINDS = frozenset({"read"})

type GrantKey = tuple[str, ...]


class Verdict(StrEnum):
    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"


@dataclass(frozen=True)
class Option:
    """One answer the agent offered: its id, its label and its ACP kind."""

    id: str
    name: str
    kind: str


@dataclass(frozen=True)
class PermissionFacts:
    """What the agent asks to do: the tool call's kind, title and paths, and the options.

    ``content`` is what else the request carries (its text, its diffs), as one string: part of
    what a grant covers.
    """

    kind: str
    title: str
    locations: tuple[str, ...]
    options: tuple[Option, ...]
    content: str = ""

    @property
    def ambiguous(self) -> bool:
        """Two options share an id: an answer could not say which one Helm meant."""
        return len({o.id for o in self.options}) != len(self.options)

    @property
    def grant_key(self) -> GrantKey:
        """What an "allow always" covers: this exact request (kind, title, content, paths)."""
        return (self.kind, self.title, self.content, *self.locations)


@dataclass(frozen=True)
class Rules:
    """What this run allows: writes at all, and low-risk reads without asking."""

    write: bool
    allow_reads: bool


@dataclass(frozen=True)
class PolicyDecision:
    """The verdict, why, and the option to answer with (None: ``cancelled``)."""

    verdict: Verdict
    reason: str
    option_id: str | None = None
    grant: str | None = None
    """The decision id of the sticky grant this ALLOW relies on."""


@dataclass(frozen=True)
class PermissionAnswer:
    """What Helm answers after asking: the option (None: ``cancelled``) and what happened."""

    decision: Decision
    option_id: str | None
    option_kind: str
    sticky: bool = False


def _first(options: tuple[Option, ...], kinds: tuple[str, ...]) -> Option | None:
    for kind in kinds:
        for option in options:
            if option.kind == kind:
                return option
    return None


def deny(facts: PermissionFacts, reason: str) -> PolicyDecision:
    reject = _first(facts.options, REJECT_KINDS)
    return PolicyDecision(Verdict.DENY, reason, None if reject is None else reject.id)


def decide(
    facts: PermissionFacts, rules: Rules, grants: Mapping[GrantKey, str], inside: Callable[[str], bool]
) -> PolicyDecision:
    """The verdict for one permission request (pure: ``inside`` only compares paths).

    The roots come before any grant: a request that names a path outside them is asked.
    """
    if facts.ambiguous:
        return PolicyDecision(Verdict.DENY, "the agent offered two options with the same id")
    allow = _first(facts.options, ALLOW_KINDS)
    if allow is None:
        return deny(facts, "the agent offered no option that allows it")
    if facts.kind in WRITE_KINDS and not rules.write:
        return deny(facts, "this run does not allow changes to files")
    if not all(inside(path) for path in facts.locations):
        return PolicyDecision(Verdict.ASK, "it names a path outside the agent's folders: the user decides")
    grant = grants.get(facts.grant_key)
    if grant is not None:
        return PolicyDecision(Verdict.ALLOW, "allowed always for this session", allow.id, grant)
    if facts.kind in READ_KINDS and rules.allow_reads and facts.locations:
        return PolicyDecision(Verdict.ALLOW, "a read inside the agent's folders (reads allowed)", allow.id)
    return PolicyDecision(Verdict.ASK, "the user decides")


def resolve_answer(facts: PermissionFacts, decision: Decision, picked: str | None) -> PermissionAnswer:
    """Helm's answer to the agent once the user has answered (or not) an ASK."""
    option = None if facts.ambiguous else next((o for o in facts.options if o.id == picked), None)
    if decision is not Decision.CONFIRMED or option is None or option.kind not in ALLOW_KINDS:
        reject = None if facts.ambiguous else _first(facts.options, REJECT_KINDS)
        refused = Decision.DECLINED if decision is Decision.CONFIRMED else decision
        if reject is None:
            return PermissionAnswer(refused, None, "cancelled")
        return PermissionAnswer(refused, reject.id, reject.kind)
    if option.kind == "allow_always":
        once = _first(facts.options, ("allow_once",))
        chosen = once or option
        return PermissionAnswer(Decision.CONFIRMED, chosen.id, chosen.kind, sticky=True)
    return PermissionAnswer(Decision.CONFIRMED, option.id, option.kind)
