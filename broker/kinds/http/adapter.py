"""The http kind: named calls to a service profile, sent with httpx under the contract's limits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from broker.errors import CallError, ErrorCode, ProfileError
from broker.kinds.base import Call, KindEnv, WriteDetails
from broker.kinds.http import HTTP, transport
from broker.kinds.http.connect import ConnectSession, connect_status, disconnect, start_connect
from broker.kinds.http.oauth2 import OAuthTokens
from broker.kinds.http.profiles import SERVICES, ServiceProfile
from broker.kinds.http.render import Rendered, check, render
from broker.kinds.http.rules import HttpConnection
from broker.kinds.http.shape import HTTP_ENVELOPE
from broker.redact import scrubbed
from broker.settings import Workspace


class HttpKind:
    """One per broker: a shared httpx client and the OAuth2 token keeper."""

    def __init__(self, env: KindEnv) -> None:
        self.env = env
        self.profiles = SERVICES.store(env.home, env.credentials)
        self._client: httpx.AsyncClient | None = None
        self.tokens = OAuthTokens(env, self.client)

    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = transport.new_client()
        return self._client

    # -- OAuth2 sign-in (``broker.kinds.http.connect``) -------------------------------------
    async def connect(self, service: str, workspace: str) -> ConnectSession:
        """Begin the sign-in of ``service`` for ``workspace``: the session to open and await."""
        return await start_connect(self.env.home, self.env.credentials, service, workspace)

    def sign_in_status(self, service: str) -> dict[str, Any]:
        """Whether ``service`` is connected, and with which scopes (no secrets)."""
        return connect_status(self.env.credentials, service)

    def disconnect(self, service: str) -> None:
        """Forget the sign-in of ``service``; the profile stays."""
        disconnect(self.env.home, self.env.credentials, service)

    # -- the Kind protocol -----------------------------------------------------------------
    async def pin(self, workspace: Workspace, conn: HttpConnection) -> Mapping[str, Any]:
        return {}

    def _profile(self, call: Call[HttpConnection]) -> ServiceProfile:
        name = call.connection.service
        try:
            profile = self.profiles.get(name, call.settings)
        except ProfileError as exc:
            raise CallError(
                ErrorCode.NOT_CONFIGURED, f"the service profile {name!r} is invalid; add it again"
            ) from exc
        if profile is None:
            raise CallError(
                ErrorCode.NOT_CONFIGURED,
                f"no service profile named {name!r}; add it in Settings → Connections → Services",
            )
        refusal = self.profiles.refusal(profile)  # the organisation's policy, also for a write sent late
        if refusal is not None:
            raise CallError(ErrorCode.REFUSED, refusal)
        return profile

    def _prepare(self, call: Call[HttpConnection]) -> tuple[ServiceProfile, Rendered]:
        decl = call.connection.calls[call.operation]
        # Arguments first: a bad call is refused before Helm looks anything up.
        check(decl, call.args)
        profile = self._profile(call)
        return profile, render(profile.base_url, decl, call.args)

    async def describe(self, call: Call[HttpConnection]) -> WriteDetails:
        profile, req = self._prepare(call)
        if profile.auth == "oauth2":
            self.tokens.check(profile, call.connection)
        url = str(req.url)
        body = req.body_text
        request = f"{req.method} {url}" + ("" if body is None else f"\n\n{body}")
        return HTTP.confirm.details(
            fields=(("Service", profile.name), ("Method", req.method), ("URL", url)),
            request=request,
            binding={"service": profile.name, "method": req.method, "url": url, "body": body},
        )

    async def execute(self, call: Call[HttpConnection]) -> dict[str, Any]:
        profile, req = self._prepare(call)
        headers, secrets = await self._credentials(profile, call.connection)
        return await scrubbed(self.env, call, secrets, self._send(profile.name, req, headers))

    async def _send(self, name: str, req: Rendered, headers: Mapping[str, str]) -> dict[str, Any]:
        answer = await transport.exchange(
            self.client(), req.method, req.url, headers=headers, content=req.body, what=f"service {name!r}"
        )
        return result(answer)

    async def _credentials(
        self, profile: ServiceProfile, conn: HttpConnection
    ) -> tuple[dict[str, str], tuple[str, ...]]:
        """The header that signs the request, and every form of the secret in it (to scrub)."""
        if profile.auth == "oauth2":
            access = await self.tokens.access_token(profile, conn)
            return {"Authorization": f"Bearer {access}"}, (f"Bearer {access}", access)
        token = self.profiles.secret(profile.name, "token")
        if not token:
            return {}, ()  # a profile added without a token (a public API)
        return profile.signed(token)

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()


def result(answer: transport.Answer) -> dict[str, Any]:
    """The envelope for a complete answer: JSON on 2xx, a contract error otherwise."""
    status = answer.status
    if 300 <= status < 400:
        raise CallError(
            ErrorCode.REDIRECT,
            f"the service answered with a redirect ({status}); Helm does not follow redirects",
            status=status,
        )
    if not 200 <= status < 300:
        raise CallError(
            ErrorCode.HTTP_ERROR,
            f"the service answered HTTP {status}",
            status=status,
            data=transport.json_or_none(answer),
        )
    if not answer.body.strip():
        return HTTP_ENVELOPE.success(None, status)  # 204 and other empty answers
    return HTTP_ENVELOPE.success(transport.parse_json(answer), status)
