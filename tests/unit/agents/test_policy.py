"""The permission policy: every verdict path, and Helm's answer after asking (pure, no I/O)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker.agents import fsguard
from broker.agents.fsguard import Root
from broker.agents.policy import (
    Option,
    PermissionFacts,
    PolicyDecision,
    Rules,
    Verdict,
    decide,
    resolve_answer,
)
from broker.summary import Decision

ONCE = Option("once", "Allow", "allow_once")
ALWAYS = Option("always", "Always allow", "allow_always")
REJECT = Option("no", "Reject", "reject_once")
REJECT_ALWAYS = Option("never", "Never", "reject_always")
ALL = (ONCE, ALWAYS, REJECT)
ROOT = "/work/root"


def facts(kind: str = "execute", options: tuple[Option, ...] = ALL, locations: tuple[str, ...] = ()):
    return PermissionFacts(kind, "Run the tests", locations, options)


def inside(path: str) -> bool:
    return path.startswith(ROOT + "/")


def verdict(f: PermissionFacts, *, write: bool = False, reads: bool = False, grants=None) -> PolicyDecision:
    return decide(f, Rules(write=write, allow_reads=reads), grants or {}, inside)


@pytest.mark.parametrize(
    ("f", "kw", "expected"),
    [
        pytest.param(facts(), {}, (Verdict.ASK, None), id="a-shell-command-is-asked"),
        pytest.param(facts("fetch"), {"write": True}, (Verdict.ASK, None), id="a-fetch-is-asked"),
        pytest.param(facts("edit"), {}, (Verdict.DENY, "no"), id="an-edit-without-write-is-denied"),
        pytest.param(facts("delete"), {}, (Verdict.DENY, "no"), id="a-delete-without-write-is-denied"),
        pytest.param(facts("edit"), {"write": True}, (Verdict.ASK, None), id="an-edit-with-write-is-asked"),
        pytest.param(facts(options=(REJECT,)), {}, (Verdict.DENY, "no"), id="no-allow-option-is-denied"),
        pytest.param(facts(options=()), {}, (Verdict.DENY, None), id="no-option-at-all-is-cancelled"),
        pytest.param(
            facts(options=(ONCE, Option("once", "Reject", "reject_once"))), {}, (Verdict.DENY, None),
            id="options-sharing-an-id-are-cancelled",
        ),
        pytest.param(
            facts("edit", options=(ONCE,)), {}, (Verdict.DENY, None), id="deny-without-reject-is-cancelled"
        ),
        pytest.param(
            facts("edit", options=(ONCE, REJECT_ALWAYS)), {}, (Verdict.DENY, "never"),
            id="deny-uses-reject-always-when-it-is-the-only-reject",
        ),
        pytest.param(
            facts("read", locations=(f"{ROOT}/a.py",)), {"reads": True}, (Verdict.ALLOW, "once"),
            id="a-read-inside-the-roots-is-allowed-when-reads-are-allowed",
        ),
        pytest.param(
            facts("read", locations=(f"{ROOT}/a.py",)), {}, (Verdict.ASK, None),
            id="a-read-is-asked-when-reads-are-not-allowed",
        ),
        pytest.param(
            facts("read", locations=(f"{ROOT}/a.py", "/etc/passwd")), {"reads": True}, (Verdict.ASK, None),
            id="a-read-outside-the-roots-is-asked",
        ),
        pytest.param(facts("read"), {"reads": True}, (Verdict.ASK, None), id="a-read-of-no-file-is-asked"),
        pytest.param(
            facts("search", locations=(f"{ROOT}/a.py",)), {"reads": True}, (Verdict.ASK, None),
            id="only-read-kinds-are-low-risk",
        ),
    ],
)  # fmt: skip
def test_verdicts(f: PermissionFacts, kw: dict[str, bool], expected: tuple[Verdict, str | None]):
    got = verdict(f, **kw)
    assert (got.verdict, got.option_id) == expected
    assert got.reason


def test_a_sticky_grant_allows_the_same_tool_call_with_allow_once_and_names_the_grant():
    f = facts()
    got = verdict(f, grants={f.grant_key: "d-1"})
    assert (got.verdict, got.option_id, got.grant) == (Verdict.ALLOW, "once", "d-1")


def test_a_sticky_grant_covers_only_the_exact_request():
    f = PermissionFacts("edit", "Edit", (f"{ROOT}/a.py",), ALL, content="d1")
    others = [
        PermissionFacts("execute", "Run rm -rf", (), ALL),
        PermissionFacts("delete", "Edit", (f"{ROOT}/a.py",), ALL, content="d1"),
        PermissionFacts("edit", "Edit", (f"{ROOT}/b.py",), ALL, content="d1"),
        PermissionFacts("edit", "Edit", (f"{ROOT}/a.py",), ALL, content="d2"),
        PermissionFacts("edit", "Edit", (f"{ROOT}/a.py", f"{ROOT}/b.py"), ALL, content="d1"),
    ]
    assert verdict(f, write=True, grants={f.grant_key: "d-1"}).verdict is Verdict.ALLOW
    for other in others:
        assert verdict(other, write=True, grants={f.grant_key: "d-1"}).verdict is Verdict.ASK


def test_the_roots_are_checked_before_a_grant():
    f = PermissionFacts("read", "Read file", ("/home/me/.ssh/id_ed25519",), ALL)
    got = verdict(f, reads=True, grants={f.grant_key: "d-1"})
    assert (got.verdict, got.grant) == (Verdict.ASK, None)


def test_a_sticky_grant_does_not_override_a_run_without_writes():
    f = facts("edit")
    assert verdict(f, grants={f.grant_key: "d-1"}).verdict is Verdict.DENY


@pytest.mark.parametrize(
    ("decision", "picked", "options", "expected"),
    [
        pytest.param(Decision.CONFIRMED, "once", ALL, (Decision.CONFIRMED, "once", False), id="allow-once"),
        pytest.param(
            Decision.CONFIRMED, "always", ALL, (Decision.CONFIRMED, "once", True),
            id="allow-always-is-helms-grant-and-answers-allow-once",
        ),
        pytest.param(
            Decision.CONFIRMED, "always", (ALWAYS, REJECT), (Decision.CONFIRMED, "always", True),
            id="allow-always-when-it-is-the-only-allow",
        ),
        pytest.param(Decision.CONFIRMED, "no", ALL, (Decision.DECLINED, "no", False), id="a-reject-pick"),
        pytest.param(Decision.CONFIRMED, None, ALL, (Decision.DECLINED, "no", False), id="a-closed-question"),
        pytest.param(
            Decision.CONFIRMED, "invented", ALL, (Decision.DECLINED, "no", False), id="an-option-not-offered"
        ),
        pytest.param(Decision.EXPIRED, None, ALL, (Decision.EXPIRED, "no", False), id="a-timeout-rejects"),
        pytest.param(
            Decision.DECLINED, None, (ONCE,), (Decision.DECLINED, None, False), id="no-reject-is-cancelled"
        ),
    ],
)  # fmt: skip
def test_answers_after_asking(decision, picked, options, expected):
    answer = resolve_answer(facts(options=options), decision, picked)
    assert (answer.decision, answer.option_id, answer.sticky) == expected


KINDS = st.sampled_from(["allow_once", "allow_always", "reject_once", "reject_always"])
OPTIONS = st.lists(st.builds(Option, st.text(max_size=3), st.text(max_size=3), KINDS), max_size=5)


@given(
    options=OPTIONS,
    kind=st.sampled_from(["read", "edit", "delete", "move", "execute", "fetch", "other"]),
    write=st.booleans(),
    reads=st.booleans(),
    decision=st.sampled_from(list(Decision)),
    picked=st.one_of(st.none(), st.text(max_size=3)),
)
def test_helm_never_answers_with_an_allow_the_user_did_not_pick_or_the_policy_did_not_give(
    options, kind, write, reads, decision, picked
):
    f = facts(kind, tuple(options), (f"{ROOT}/x",))
    got = verdict(f, write=write, reads=reads)
    kinds = {o.id: o.kind for o in options}
    if f.ambiguous:
        assert got.option_id is None
        assert resolve_answer(f, decision, picked).option_id is None
        return
    if got.verdict is Verdict.DENY:
        assert got.option_id is None or kinds[got.option_id].startswith("reject")
    answer = resolve_answer(f, decision, picked)
    if answer.option_id is not None and kinds[answer.option_id].startswith("allow"):
        assert decision is Decision.CONFIRMED
        assert kinds.get(picked or "", "").startswith("allow")
    if answer.option_id is None:
        assert answer.option_kind == "cancelled"


SEGMENTS = st.sampled_from(["a", "b.py", "..", ".", "", "root", ".ssh", "id_ed25519", "root2", "~"])
PATHS = st.one_of(
    st.lists(SEGMENTS, max_size=4).map(lambda parts: "/".join([ROOT, *parts])),
    st.lists(SEGMENTS, max_size=4).map(lambda parts: "/" + "/".join(parts)),
    st.lists(SEGMENTS, max_size=3).map("/".join),
    st.text(max_size=12),
)
FACTS = st.builds(
    PermissionFacts,
    kind=st.sampled_from(["read", "edit", "delete", "move", "execute", "fetch", "other"]),
    title=st.sampled_from(["Read file", "Edit", ""]),
    locations=st.lists(PATHS, max_size=3).map(tuple),
    options=st.just(ALL),
    content=st.sampled_from(["", "d1"]),
)


@given(granted=st.lists(FACTS, max_size=4), asked=FACTS, write=st.booleans(), reads=st.booleans())
def test_no_grant_ever_allows_a_path_outside_the_roots(
    granted: list[PermissionFacts], asked: PermissionFacts, write: bool, reads: bool
):
    roots = (Root("Workspace", "ws", Path(ROOT)),)
    grants = {f.grant_key: f"d-{i}" for i, f in enumerate([*granted, asked])}
    got = decide(asked, Rules(write=write, allow_reads=reads), grants, lambda p: fsguard.inside(p, roots))
    if got.verdict is Verdict.ALLOW:
        assert all(fsguard.inside(path, roots) for path in asked.locations)
        assert got.grant is None or asked.grant_key in grants
    if any(not fsguard.inside(path, roots) for path in asked.locations):
        assert got.verdict is not Verdict.ALLOW


@pytest.mark.parametrize("kind", ["edit", "delete", "move"])
def test_every_kind_of_file_change_is_refused_in_a_run_that_allows_no_changes(kind: str) -> None:
    decided = verdict(facts(kind, locations=(f"{ROOT}/a",)), write=False, reads=True)
    assert (decided.verdict, decided.option_id) == (Verdict.DENY, REJECT.id)
    assert verdict(facts(kind, locations=(f"{ROOT}/a",)), write=True, reads=True).verdict is Verdict.ASK
