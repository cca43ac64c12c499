"""Serving ``session/request_permission``: policy verdict, the question if ASK, audit, answer.

Every request goes through ``policy.decide``; one that Helm's rules do not refuse is then put to
the organisation's decision point, when one is set (``broker.decision_point``): anything but its
ALLOW refuses, and an ALLOW leaves Helm's verdict (the user's question included) as it was.
After a cancel, every request is answered ``cancelled`` (as ACP requires). The verdict, the
user's answer (if asked) and Helm's reply are recorded in the audit log under one decision id,
and streamed as a ``PermissionDecided`` event.
A question still open when the agent ends is recorded and streamed too (decision ``cancelled``),
before the turn's failure.
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from acp import schema

from broker.agents import fsguard, policy
from broker.agents.events import PermissionDecided, clip, content_digest, tool_content_text
from broker.agents.policy import Option, PermissionAnswer, PermissionFacts, PolicyDecision, Verdict
from broker.agents.questions import PermissionQuestion, clip_diff
from broker.agents.state import ENDED, SessionState, ToolFacts, new_decision_id
from broker.decision_point import PointRequest, PointVerdict, agent_classes
from broker.fs.diff import line_diff
from broker.policy import decide as org
from broker.policy import in_force
from broker.summary import Decision

OPERATION = "session/request_permission"
MAX_OPTIONS = 20


def facts_for(state: SessionState, call: schema.ToolCallUpdate, options: list[Any]) -> PermissionFacts:
    """What is asked, from the request and what the session already knows of this tool call."""
    known = state.tools.get(call.tool_call_id) or ToolFacts("", "", "", ())
    locations = tuple(clip(loc.path, 4096) for loc in call.locations or []) or known.locations
    if org.allow_always(in_force()) is not None:  # the organisation's policy: never offered
        options = [o for o in options if o.kind != "allow_always"]
    return PermissionFacts(
        kind=call.kind or known.kind or "other",
        title=clip(call.title or known.title or "(a tool call without a title)", 500),
        locations=locations,
        options=tuple(Option(o.option_id, clip(o.name, 200), o.kind) for o in options[:MAX_OPTIONS]),
        content=content_digest(call.content) or known.digest,
    )


def _diff(call: schema.ToolCallUpdate) -> str:
    parts = [
        line_diff(item.path, item.old_text or "", item.new_text)
        for item in call.content or []
        if isinstance(item, schema.FileEditToolCallContent)
    ]
    return clip_diff("".join(parts))


async def _ask(
    state: SessionState, facts: PermissionFacts, call: schema.ToolCallUpdate, did: str
) -> PermissionAnswer:
    known = state.tools.get(call.tool_call_id)
    question = PermissionQuestion(
        decision_id=did,
        agent=state.profile.name,
        workspace=state.workspace.name,
        title=state.scrub(facts.title),
        kind=facts.kind,
        content=state.scrub(tool_content_text(call.content) or (known.content if known else "")),
        diff=state.scrub(await asyncio.to_thread(_diff, call)),
        options=facts.options,
    )
    decision, picked = await state.ask(state.asker(question))
    return policy.resolve_answer(facts, decision, picked)


def _answer_for(verdict: PolicyDecision, facts: PermissionFacts) -> PermissionAnswer:
    kind = next((o.kind for o in facts.options if o.id == verdict.option_id), "cancelled")
    if verdict.verdict is Verdict.ALLOW:
        return PermissionAnswer(Decision.CONFIRMED, verdict.option_id, kind)
    return PermissionAnswer(Decision.DECLINED, verdict.option_id, kind)


def _decision_word(verdict: PolicyDecision, answer: PermissionAnswer) -> str:
    if verdict.verdict is Verdict.ALLOW:
        return "allowed"
    if verdict.verdict is Verdict.DENY:
        return "refused"
    return answer.decision.value


def _response(answer: PermissionAnswer) -> schema.RequestPermissionResponse:
    if answer.option_id is None:
        return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))
    return schema.RequestPermissionResponse(
        outcome=schema.AllowedOutcome(outcome="selected", option_id=answer.option_id)
    )


def _verdict(state: SessionState, facts: PermissionFacts) -> PolicyDecision:
    if state.cancelled.is_set():
        return PolicyDecision(Verdict.DENY, "the turn was cancelled")  # ACP: answer cancelled
    if state.ended.is_set():
        return PolicyDecision(Verdict.DENY, ENDED)
    why = state.organisation(facts.kind in policy.WRITE_KINDS)
    if why is not None:
        return policy.deny(facts, why)
    return policy.decide(facts, state.rules, state.grants, lambda p: fsguard.inside(p, state.roots))


def _reason(
    state: SessionState, facts: PermissionFacts, verdict: PolicyDecision, answer: PermissionAnswer, did: str
) -> str:
    if answer.sticky:
        state.grants[facts.grant_key] = did
        return "the user allowed this tool call always, for this session only"
    if verdict.grant is not None:
        return f"allowed always for this session (grant {verdict.grant})"
    return verdict.reason


async def _asked_point(
    state: SessionState, facts: PermissionFacts, call: schema.ToolCallUpdate, verdict: PolicyDecision
) -> tuple[PolicyDecision, PointVerdict | None]:
    """Helm's verdict once the decision point has had its say (it is not asked about what
    Helm's rules refuse anyway)."""
    if state.point is None or verdict.verdict is Verdict.DENY:
        return verdict, None
    point = await state.point.ask(point_request(state, facts, call))
    if point is None or point.allowed:
        return verdict, point
    return policy.deny(facts, point.refusal()), point


def point_request(state: SessionState, facts: PermissionFacts, call: schema.ToolCallUpdate) -> PointRequest:
    """What the decision point is asked: ``tool.acp.<agent>.<kind>``, the tool call's title and
    input (the agent's key removed), the session and the classes of its kind."""
    risk, effect = agent_classes(facts.kind)
    agent = state.profile.name
    raw = call.raw_input
    return PointRequest(
        resource=f"tool.acp.{agent}.{facts.kind}",
        tool=state.scrub(facts.title),
        args=_scrubbed(raw, state.scrub) if isinstance(raw, dict) else {},
        session_id=state.session_id,
        risk_class=risk,
        effect_class=effect,
        context={
            "workspace": state.workspace.name,
            "agent": agent,
            "kind": facts.kind,
            "locations": [state.scrub(p) for p in facts.locations],
            "tool_call_id": state.scrub(call.tool_call_id),
        },
    )


def _scrubbed(value: Any, scrub: Any) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub(str(k)): _scrubbed(v, scrub) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v, scrub) for v in value]
    return value


async def serve_permission(
    state: SessionState, call: schema.ToolCallUpdate, options: list[Any]
) -> schema.RequestPermissionResponse:
    """Helm's answer to one ``session/request_permission``."""
    with state.asking():
        return await _serve(state, call, options)


async def _serve(
    state: SessionState, call: schema.ToolCallUpdate, options: list[Any]
) -> schema.RequestPermissionResponse:
    facts = facts_for(state, call, options)
    did = new_decision_id()
    verdict, point = await _asked_point(state, facts, call, _verdict(state, facts))
    if verdict.verdict is Verdict.ASK:
        answer = await _ask(state, facts, call, did)
    else:
        answer = _answer_for(verdict, facts)
    if verdict.verdict is Verdict.ASK and state.ended.is_set() and answer.decision is not Decision.CONFIRMED:
        # Nobody is left to answer: the question is refused with the agent, and says so.
        answer, reason, word = PermissionAnswer(Decision.DECLINED, None, "cancelled"), ENDED, "cancelled"
    else:
        reason = _reason(state, facts, verdict, answer, did)
        word = _decision_word(verdict, answer)
    title = state.scrub(facts.title)
    digest = hashlib.sha256(call.model_dump_json(by_alias=True).encode()).hexdigest()
    state.record(
        OPERATION,
        word,
        answer.option_kind,
        title=title,
        request_digest=digest,
        decision_id=did,
        reason=reason,
        **({} if point is None else point.audit()),
    )
    kind, option = facts.kind, answer.option_kind
    state.emit(
        PermissionDecided(did, title, kind, verdict.verdict.value, word, option, reason, answer.sticky)
    )
    return _response(answer)
