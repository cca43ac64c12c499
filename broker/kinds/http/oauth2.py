"""OAuth2 (authorization code + PKCE S256) for service profiles: grants, token requests, refresh.

A grant — the access and refresh tokens, their expiry, the token URL and the scopes the
service granted — is kept as JSON in the credential store under ``services/<name>/oauth``,
never in settings. The sign-in itself is in ``broker.kinds.http.connect``.

Rules a call must pass (``OAuthTokens.check``): the profile has its sign-in URLs and is
connected with its token URL (else ``not_authorized``); the connection declares ``oauth2``
with exactly the profile's two URLs, and every scope it declares was granted (else
``refused``). The access token is refreshed shortly before it expires, at the profile's token
URL only, one refresh per service at a time; a refresh the service answers with
``invalid_grant`` forgets the grant (``not_authorized``) and keeps the profile, so the user
only has to Connect again.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import httpx

from broker.credentials import CredentialStore
from broker.errors import CallError, ErrorCode
from broker.kinds.base import KindEnv
from broker.kinds.http import transport
from broker.kinds.http.profiles import SERVICES, ServiceProfile
from broker.kinds.http.rules import HttpConnection

REFRESH_MARGIN = 60.0
"""Seconds before expiry at which Helm refreshes the access token."""

HELM_PARAMS = frozenset(
    {
        "response_type",
        "client_id",
        "redirect_uri",
        "state",
        "code_challenge",
        "code_challenge_method",
        "scope",
    }
)


@dataclass(frozen=True)
class Grant:
    access_token: str
    refresh_token: str | None
    expires_at: float | None
    token_url: str
    authorize_url: str
    client_id: str
    scopes: tuple[str, ...]

    def expiring(self, now: float) -> bool:
        return self.expires_at is not None and self.expires_at - now < REFRESH_MARGIN

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "scopes": list(self.scopes)})

    @classmethod
    def from_json(cls, text: str) -> Grant | None:
        try:
            raw = json.loads(text)
            return cls(**{**raw, "scopes": tuple(raw["scopes"])})
        except (ValueError, TypeError, KeyError):
            return None  # unreadable: treat as not connected


def load_grant(store: CredentialStore, service: str) -> Grant | None:
    text = store.get(SERVICES.secret_key(service, "oauth"))
    return None if text is None else Grant.from_json(text)


def save_grant(store: CredentialStore, service: str, grant: Grant) -> None:
    store.set(SERVICES.secret_key(service, "oauth"), grant.to_json())


def forget_grant(store: CredentialStore, service: str) -> None:
    store.delete(SERVICES.secret_key(service, "oauth"))


# -- PKCE and the authorize URL ----------------------------------------------------------------
def pkce_pair() -> tuple[str, str]:
    """A code verifier (43 characters of base64url) and its S256 challenge."""
    verifier = secrets.token_urlsafe(32)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def authorize_url(
    base: str, *, client_id: str, redirect_uri: str, state: str, challenge: str, scopes: Iterable[str]
) -> str:
    """The manifest's authorizeUrl with its provider parameters kept and Helm's own set."""
    parts = urlsplit(base)
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in HELM_PARAMS]
    ours = [
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", redirect_uri),
        ("state", state),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
        ("scope", " ".join(scopes)),
    ]
    query = urlencode(kept + ours, quote_via=quote)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


# -- token requests ------------------------------------------------------------------------
@dataclass(frozen=True)
class TokenAnswer:
    access_token: str
    refresh_token: str | None
    expires_at: float | None
    scopes: tuple[str, ...] | None
    """None when the service did not say (then it granted what was asked)."""


class TokenRefused(Exception):
    """The token endpoint answered with an OAuth2 error (``error`` is its code, if valid)."""

    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


async def token_request(client: httpx.AsyncClient, token_url: str, form: Mapping[str, str]) -> TokenAnswer:
    """POST a grant to the token endpoint (client_secret_post); raise TokenRefused or CallError."""
    answer = await transport.exchange(client, "POST", token_url, data=form, what="the sign-in service")
    if answer.status in (400, 401):
        body = transport.json_or_none(answer)
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, str) and error.replace("_", "").isalpha() and len(error) < 64:
            raise TokenRefused(error)
        raise TokenRefused("invalid_request")
    if not 200 <= answer.status < 300:
        raise CallError(ErrorCode.UNAVAILABLE, f"the sign-in service answered HTTP {answer.status}")
    body = transport.parse_json(answer)
    if not isinstance(body, dict) or not isinstance(body.get("access_token"), str):
        raise CallError(ErrorCode.UNAVAILABLE, "the sign-in service sent no access token")
    token_type = body.get("token_type", "bearer")
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        raise CallError(ErrorCode.UNAVAILABLE, "the sign-in service sent a token type Helm cannot use")
    expires_in = body.get("expires_in")
    expires_at = time.time() + float(expires_in) if isinstance(expires_in, int | float) else None
    scope = body.get("scope")
    refresh = body.get("refresh_token")
    return TokenAnswer(
        body["access_token"],
        refresh if isinstance(refresh, str) else None,
        expires_at,
        tuple(scope.split()) if isinstance(scope, str) else None,
    )


def client_form(profile: ServiceProfile, store: CredentialStore) -> dict[str, str]:
    form = {"client_id": str(profile.client_id)}
    secret = store.get(SERVICES.secret_key(profile.name, "client_secret"))
    if secret:
        form["client_secret"] = secret
    return form


# -- the call-time keeper -------------------------------------------------------------------
class OAuthTokens:
    """Checks that a call may use a profile's grant, and refreshes it when due."""

    def __init__(self, env: KindEnv, client: Callable[[], httpx.AsyncClient]) -> None:
        self.env = env
        self.client = client
        self._locks: dict[str, asyncio.Lock] = {}

    def check(self, profile: ServiceProfile, conn: HttpConnection) -> Grant:
        name = profile.name
        urls = profile.sign_in_urls
        if urls is None:
            raise CallError(
                ErrorCode.NOT_AUTHORIZED,
                f"service {name!r} has no sign-in URLs; the user sets them in Settings → Connections → "
                "Services, then connects it",
            )
        grant = load_grant(self.env.credentials, name)
        if grant is None or grant.client_id != profile.client_id or grant.token_url != urls[1]:
            raise CallError(
                ErrorCode.NOT_AUTHORIZED,
                f"service {name!r} is not connected; connect it in Settings → Connections → Services",
            )
        declared = conn.oauth2
        if declared is None:
            raise CallError(
                ErrorCode.REFUSED,
                f"service {name!r} signs in with OAuth2; this connection does not declare oauth2",
            )
        if (declared.authorize_url, declared.token_url) != urls:
            raise CallError(
                ErrorCode.REFUSED,
                f"this connection's authorizeUrl and tokenUrl are not the ones the user set for "
                f"service {name!r}",
            )
        missing = sorted(set(declared.scopes) - set(grant.scopes))
        if missing:
            raise CallError(
                ErrorCode.REFUSED,
                f"service {name!r} did not grant the scope(s) {' '.join(missing)}; connect it again",
            )
        return grant

    async def access_token(self, profile: ServiceProfile, conn: HttpConnection) -> str:
        grant = self.check(profile, conn)
        if not grant.expiring(time.time()):
            return grant.access_token
        lock = self._locks.setdefault(profile.name, asyncio.Lock())
        async with lock:
            current = self.check(profile, conn)
            if current != grant or not current.expiring(time.time()):
                return current.access_token  # refreshed while this call waited
            return (await self._refresh(profile, current)).access_token

    async def _refresh(self, profile: ServiceProfile, grant: Grant) -> Grant:
        store = self.env.credentials
        if grant.refresh_token is None:
            if grant.expires_at is not None and grant.expires_at > time.time():
                return grant  # still valid for a moment, and nothing to refresh with
            forget_grant(store, profile.name)
            raise CallError(
                ErrorCode.NOT_AUTHORIZED, f"the sign-in to {profile.name!r} expired; connect again"
            )
        form = {
            "grant_type": "refresh_token",
            "refresh_token": grant.refresh_token,
            **client_form(profile, store),
        }
        try:
            # Only ever the profile's token URL (check() made sure the grant came from it too).
            answer = await token_request(self.client(), str(profile.token_url), form)
        except TokenRefused as exc:
            if exc.error == "invalid_grant":
                forget_grant(store, profile.name)
            raise CallError(
                ErrorCode.NOT_AUTHORIZED,
                f"the sign-in to {profile.name!r} expired or was revoked ({exc.error}); connect again",
            ) from exc
        scopes = grant.scopes if answer.scopes is None else answer.scopes
        if not set(scopes) <= set(grant.scopes):
            forget_grant(store, profile.name)
            raise CallError(
                ErrorCode.NOT_AUTHORIZED,
                f"the refreshed sign-in to {profile.name!r} has scopes nobody declared; connect again",
            )
        fresh = Grant(
            answer.access_token,
            answer.refresh_token or grant.refresh_token,
            answer.expires_at,
            grant.token_url,
            grant.authorize_url,
            grant.client_id,
            tuple(scopes),
        )
        save_grant(store, profile.name, fresh)
        return fresh
