"""An organisation's policy decision point, asked before an agent acts (and, optionally, before
every write), as well as Helm's own rules.

The contract is HELM's Kernel: ``POST {url}/api/v1/evaluate`` with ``Authorization: Bearer
<key>``, ``X-Helm-Tenant-ID`` and ``X-Helm-Principal-ID``; the body is ``{principal, action:
"EXECUTE_TOOL", resource, context: {tool, args, session_id, risk_class, effect_class, …}}``; the
answer is ``{"verdict": "ALLOW" | "DENY" | "ESCALATE" | "PENDING", "decision_id", "receipt_id"}``.

Fail closed: only an exact ``ALLOW`` with both ids lets the request go on — and then the user's
own confirmation still comes. DENY, ESCALATE and PENDING refuse; so does a status other than
2xx, a body that is not that object, a transport error, a missing key, or no answer within
``timeout`` (10 s). ``evaluate`` never raises: every failure is a ``PointVerdict`` of ``ERROR``
with Helm's own words for it, and the key appears in no message, log or argument (it is read
from the credential store, ``key_ref``, at each request).

Where it is asked: ``broker.agents.permissions`` (every permission request Helm's rules do not
refuse) and ``broker.writes`` (every write, when ``writes`` is set), one decision in each path.
The verdict and the decision point's ids go into the audit record (``AuditRecord.point_*``).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from broker.credentials import CredentialStore
from broker.errors import CredentialStoreError, SettingsError
from broker.settings import Home
from broker.urls import url_problem

log = logging.getLogger("helm.decision_point")

TIMEOUT = 10.0
VERDICTS = frozenset({"ALLOW", "DENY", "ESCALATE", "PENDING"})
ERROR = "ERROR"
MAX_ANSWER_BYTES = 64 * 1024
MAX_ID_CHARS = 256
_KEYS = frozenset({"url", "tenant_id", "principal_id", "key_ref", "writes"})


@dataclass(frozen=True)
class DecisionPointConfig:
    """Where the decision point is and who Helm is to it; ``key_ref`` names its key in the
    credential store. ``writes``: ask it before every write too."""

    url: str
    tenant_id: str
    principal_id: str
    key_ref: str
    writes: bool = False
    managed: bool = False


def parse_decision_point(
    raw: Any, where: str = "decision_point", *, managed: bool = False
) -> DecisionPointConfig:
    """The decision point ``raw`` describes; ``SettingsError`` naming every problem."""
    if not isinstance(raw, Mapping):
        raise SettingsError(f"{where} must be a JSON object")
    problems = [f"{where}.{k} is not a setting of a decision point" for k in sorted(set(raw) - _KEYS)]
    url = raw.get("url")
    wrong = url_problem(url, allow_query=False) if isinstance(url, str) else "must be a URL"
    if wrong:
        problems.append(f"{where}.url {wrong}")
    for key in ("tenant_id", "principal_id", "key_ref"):
        value = raw.get(key)
        if not isinstance(value, str) or not value or len(value) > MAX_ID_CHARS or not value.isprintable():
            problems.append(f"{where}.{key} must be printable text of 1 to {MAX_ID_CHARS} characters")
    if not isinstance(raw.get("writes", False), bool):
        problems.append(f"{where}.writes must be true or false")
    if problems:
        raise SettingsError("; ".join(problems))
    return DecisionPointConfig(
        str(url).rstrip("/"), raw["tenant_id"], raw["principal_id"], raw["key_ref"],
        raw.get("writes", False) is True, managed,
    )  # fmt: skip


def point_json(config: DecisionPointConfig) -> dict[str, Any]:
    return {
        "url": config.url,
        "tenant_id": config.tenant_id,
        "principal_id": config.principal_id,
        "key_ref": config.key_ref,
        "writes": config.writes,
    }


@dataclass(frozen=True)
class PointRequest:
    """What is asked: ``resource`` (``tool.acp.<agent>.<kind>``, ``tool.helm.<kind>.<connection>``),
    the tool and its arguments, the session, the risk (T0 to T3) and effect (E0 to E4) classes, and
    more ``context`` (workspace, requester, …)."""

    resource: str
    tool: str
    args: Mapping[str, Any]
    session_id: str
    risk_class: str
    effect_class: str
    context: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PointVerdict:
    """The answer: ``verdict`` is one of the contract's four, or ``ERROR`` (``problem`` says why)."""

    verdict: str
    decision_id: str = ""
    receipt_id: str = ""
    problem: str = ""

    @property
    def allowed(self) -> bool:
        return self.verdict == "ALLOW"

    def refusal(self) -> str:
        """Why the request was refused, for the user and the audit record."""
        if self.verdict == ERROR:
            return f"refused: your organisation's decision point gave no usable answer ({self.problem})"
        said = {"DENY": "denied it", "ESCALATE": "escalated it", "PENDING": "has not decided yet"}
        return (
            f"refused: your organisation's decision point {said[self.verdict]} (decision {self.decision_id})"
        )

    def audit(self) -> dict[str, str]:
        """The audit record's fields for this verdict."""
        return {
            "point_verdict": self.verdict,
            "point_decision_id": self.decision_id,
            "point_receipt_id": self.receipt_id,
        }


class PointAsker(Protocol):
    """Whatever asks the decision point in effect (``DecisionPoints``; a test's own)."""

    async def ask(self, request: PointRequest, *, write: bool = False) -> PointVerdict | None: ...


AGENT_CLASSES = {
    "think": ("T0", "E0"), "switch_mode": ("T1", "E0"),
    "read": ("T1", "E1"), "search": ("T1", "E1"), "fetch": ("T2", "E1"),
    "edit": ("T2", "E2"), "move": ("T2", "E2"), "delete": ("T3", "E3"), "execute": ("T3", "E4"),
}  # fmt: skip
"""The risk (T0 to T3) and effect (E0 to E4) classes of an agent's tool call, by its ACP kind: E0
nothing changes, E1 something is read, E2 a change the user can review and undo, E3 a change
that destroys, E4 anything at all (a command). A kind not listed (``other``) is the worst."""
WRITE_CLASSES = {"files": ("T2", "E2")}
"""A write's classes by kind: a file change is E2, any other write (a service, a database,
an MCP tool) E3, since Helm cannot take it back."""
UNKNOWN_CLASSES = ("T3", "E4")


def agent_classes(kind: str) -> tuple[str, str]:
    return AGENT_CLASSES.get(kind, UNKNOWN_CLASSES)


def write_classes(kind: str) -> tuple[str, str]:
    return WRITE_CLASSES.get(kind, ("T2", "E3"))


def _failed(problem: str) -> PointVerdict:
    return PointVerdict(ERROR, problem=problem)


class DecisionPointClient:
    """Asks one decision point; ``timeout`` bounds the whole exchange (10 s)."""

    def __init__(
        self, config: DecisionPointConfig, credentials: CredentialStore, *, timeout: float = TIMEOUT
    ) -> None:
        self.config, self.credentials, self.timeout = config, credentials, timeout

    def body(self, request: PointRequest) -> dict[str, Any]:
        context = {
            **request.context,
            "tool": request.tool,
            "args": dict(request.args),
            "session_id": request.session_id,
            "risk_class": request.risk_class,
            "effect_class": request.effect_class,
        }
        return {
            "principal": self.config.principal_id,
            "action": "EXECUTE_TOOL",
            "resource": request.resource,
            "context": context,
        }

    async def evaluate(self, request: PointRequest) -> PointVerdict:
        """The decision point's verdict on ``request`` (never raises but for cancellation)."""
        try:
            key = await asyncio.to_thread(self.credentials.get, self.config.key_ref)
        except CredentialStoreError:
            return _failed("its key could not be read from the credential store")
        if not key:
            return _failed(f"its key {self.config.key_ref!r} is not in the credential store")
        try:
            async with asyncio.timeout(self.timeout):
                status, answer = await self._post(key, self.body(request))
        except TimeoutError:
            return _failed(f"no answer within {self.timeout:g} s")
        except (
            OSError,
            ValueError,
            TypeError,
            RecursionError,
        ) as exc:  # httpx's errors are translated in _post
            log.warning("the decision point could not be asked: %s", type(exc).__name__)
            return _failed("it could not be reached")
        if not 200 <= status < 300:
            return _failed(f"it answered with HTTP status {status}")
        return parse_answer(answer)

    async def _post(self, key: str, body: dict[str, Any]) -> tuple[int, bytes]:
        import httpx  # only when a decision point is asked: the window starts without it

        headers = {
            "Authorization": f"Bearer {key}",
            "X-Helm-Tenant-ID": self.config.tenant_id,
            "X-Helm-Principal-ID": self.config.principal_id,
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        content = json.dumps(body, ensure_ascii=False).encode("utf-8")
        try:
            async with (
                httpx.AsyncClient(timeout=self.timeout, follow_redirects=False, trust_env=False) as client,
                client.stream(
                    "POST", f"{self.config.url}/api/v1/evaluate", content=content, headers=headers
                ) as res,
            ):
                data = bytearray()
                async for chunk in res.aiter_raw():
                    data += chunk
                    if len(data) > MAX_ANSWER_BYTES:
                        return res.status_code, b""  # too large: not an answer
                return res.status_code, bytes(data)
        except httpx.TimeoutException as exc:
            raise TimeoutError from exc
        except httpx.HTTPError as exc:  # never its text: it could quote the request
            raise OSError(type(exc).__name__) from None


def parse_answer(data: bytes) -> PointVerdict:
    """The verdict in a 2xx answer's body, or ERROR when it is not exactly the contract's."""
    try:
        answer = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return _failed("its answer is not JSON")
    if not isinstance(answer, dict):
        return _failed("its answer is not a JSON object")
    verdict, ids = answer.get("verdict"), (answer.get("decision_id"), answer.get("receipt_id"))
    if not isinstance(verdict, str) or verdict not in VERDICTS:
        return _failed("its answer has no verdict ALLOW, DENY, ESCALATE or PENDING")
    if not all(isinstance(i, str) and i and len(i) <= MAX_ID_CHARS and i.isprintable() for i in ids):
        return _failed("its answer lacks a decision_id or a receipt_id")
    return PointVerdict(verdict, str(ids[0]), str(ids[1]))


class DecisionPoints:
    """The decision point in effect: the organisation's (``set_managed``), else the user's from
    settings, read at each question (None: none is set)."""

    def __init__(self, home: Home, credentials: CredentialStore, *, timeout: float = TIMEOUT) -> None:
        self.home, self.credentials, self.timeout = home, credentials, timeout
        self.managed: DecisionPointConfig | None = None

    def set_managed(self, config: DecisionPointConfig | None) -> None:
        self.managed = config

    def config(self) -> DecisionPointConfig | None:
        """The configuration in effect (``SettingsError`` when the user's cannot be read)."""
        if self.managed is not None:
            return self.managed
        from broker.policy.managed import decision_point as organisations
        from broker.teams import decision_point

        managed = organisations()
        if managed is not None:  # the organisation's outranks the user's
            return managed

        return decision_point(self.home.settings())

    async def ask(self, request: PointRequest, *, write: bool = False) -> PointVerdict | None:
        """The verdict on ``request``; None when no decision point is to be asked (for a write:
        none, or one that does not ask about writes). Settings that cannot be read refuse."""
        try:
            config = self.config()
        except SettingsError:
            return _failed("its settings cannot be read")
        if config is None or (write and not config.writes):
            return None
        return await DecisionPointClient(config, self.credentials, timeout=self.timeout).evaluate(request)
