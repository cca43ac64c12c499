"""Connecting an OAuth2 service profile: the sign-in, as a pure-asyncio API for the UI and CLI.

Usage (Settings → Connections → Services → Connect, or ``helm service connect``)::

    session = await start_connect(home, credentials, "calendar", "my-workspace")
    async with session:                         # closes the listener however it ends
        show(session.redirect_uri)              # the URI to register with the OAuth client
        open_browser(session.authorize_url)     # the system browser, never a web view
        grant = await session.wait(300)         # raises ConnectError (timeout, refusal…)
    # or, from a Cancel button: await session.cancel()  → a pending wait() raises ConnectError

``start_connect`` works out what to ask for (``connect_plan``): the union of the scopes that
the workspace's enabled, approved extensions declare for the service. The two URLs are the
profile's, set by the user: every one of those extensions must declare exactly them, or
Connect is refused — an extension never chooses where the browser goes or where the client
secret is posted. It opens a one-shot listener on 127.0.0.1 (an OS-assigned port,
``/oauth/callback``) and builds the authorize URL with PKCE S256 and a random state. ``wait``
receives the code, exchanges it at the profile's token URL (client_secret_post), refuses a
grant with scopes nobody declared (and does not keep it), and stores the grant in the
credential store. Connecting again replaces the grant and keeps the profile.
"""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

import httpx

from broker import approval
from broker.credentials import CredentialStore
from broker.errors import CallError, HelmError, SettingsError
from broker.kinds.http import transport
from broker.kinds.http.loopback import CallbackListener
from broker.kinds.http.oauth2 import (
    Grant,
    TokenRefused,
    authorize_url,
    client_form,
    forget_grant,
    load_grant,
    pkce_pair,
    save_grant,
    token_request,
)
from broker.kinds.http.profiles import SERVICES, ServiceProfile
from broker.kinds.http.rules import HttpConnection
from broker.manifest import load as load_manifest
from broker.settings import Home
from broker.verdicts import Verdicts


class ConnectError(HelmError):
    """A sign-in could not start or did not complete; the message says why, for the user."""


@dataclass(frozen=True)
class ConnectPlan:
    authorize_url: str
    token_url: str
    scopes: tuple[str, ...]
    extensions: tuple[str, ...]


def connect_plan(home: Home, service: str, workspace: str) -> ConnectPlan:
    """What Connect asks for: the declarations of the workspace's enabled, approved extensions."""
    own = _sign_in_urls(_oauth_profile(home, service))  # the user's; without them nothing to plan
    try:
        ws = home.settings().workspace(workspace)
    except SettingsError as exc:
        raise ConnectError(str(exc)) from exc
    urls: dict[tuple[str, str], list[str]] = {}
    scopes: set[str] = set()
    verdicts = Verdicts.in_home(home.path)  # the manifests are read as every call reads them
    for ext_id in sorted(ws.extensions):
        decision = approval.check(ws, ext_id, lambda folder: load_manifest(folder, verdicts))
        if not decision.allows_calls or decision.manifest is None:
            continue  # disabled, not approved, or changed since: its declarations do not count
        for conn in decision.manifest.connections:
            if isinstance(conn, HttpConnection) and conn.service == service and conn.oauth2 is not None:
                urls.setdefault((conn.oauth2.authorize_url, conn.oauth2.token_url), []).append(ext_id)
                scopes.update(conn.oauth2.scopes)
    if not urls:
        raise ConnectError(
            f"no enabled, approved extension in workspace {workspace!r} declares OAuth2 "
            f"for service {service!r}"
        )
    _refuse_other_urls(service, own, urls)
    return ConnectPlan(*own, tuple(sorted(scopes)), tuple(sorted(set(urls[own]))))


def _refuse_other_urls(
    service: str, own: tuple[str, str], declared: dict[tuple[str, str], list[str]]
) -> None:
    """Every extension must declare the profile's own two URLs (the user's, not the author's)."""
    others = {urls: ids for urls, ids in declared.items() if urls != own}
    if not others:
        return
    their = "; ".join(
        f"{', '.join(sorted(set(ids)))}: authorize {a}, token {t}" for (a, t), ids in others.items()
    )
    raise ConnectError(
        f"extensions declare other sign-in URLs for service {service!r} than its profile ({their}). "
        f"The profile has authorize {own[0]}, token {own[1]}, and Helm signs in only there; if the "
        "extension is right, change the profile in Settings → Connections → Services"
    )


def _sign_in_urls(profile: ServiceProfile) -> tuple[str, str]:
    urls = profile.sign_in_urls
    if urls is None:
        raise ConnectError(
            f"service {profile.name!r} has no sign-in URLs yet: set its authorize URL and token URL in "
            f"Settings → Connections → Services (or helm service add {profile.name} --oauth2 "
            "--authorize-url URL --token-url URL …); Helm does not take them from an extension"
        )
    return urls


def _oauth_profile(home: Home, service: str) -> ServiceProfile:
    store = SERVICES.store(home)
    profile = store.get(service)
    if profile is None:
        raise ConnectError(f"no service named {service!r}")
    refusal = store.refusal(profile)  # the organisation's policy: no sign-in where it forbids
    if refusal is not None:
        raise ConnectError(refusal)
    if profile.auth != "oauth2":
        raise ConnectError(f"service {service!r} uses a token, not OAuth2 sign-in")
    return profile


class ConnectSession:
    """One sign-in in progress. ``redirect_uri`` and ``authorize_url`` are ready at once."""

    def __init__(
        self,
        store: CredentialStore,
        profile: ServiceProfile,
        plan: ConnectPlan,
        listener: CallbackListener,
        verifier: str,
        url: str,
        client: httpx.AsyncClient | None,
    ) -> None:
        self._store, self._profile, self.plan = store, profile, plan
        self._listener, self._verifier = listener, verifier
        self.redirect_uri = listener.redirect_uri
        self.authorize_url = url
        self._client = client
        self._cancelled = False

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.cancel()

    async def cancel(self) -> None:
        """Stop waiting and close the listener; a pending ``wait`` raises ConnectError."""
        self._cancelled = True
        await self._listener.close()

    async def wait(self, seconds: float = 300.0) -> Grant:
        """Wait for the browser's redirect, then exchange the code and keep the grant."""
        try:
            callback = await self._listener.wait(seconds)
        except TimeoutError as exc:
            raise ConnectError(f"no answer from the sign-in within {seconds:g} s; try again") from exc
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not self._cancelled or (task is not None and task.cancelling()):
                raise
            raise ConnectError("the sign-in was cancelled") from None
        if callback.error is not None or callback.code is None:
            error = callback.error if (callback.error or "").replace("_", "").isalnum() else "error"
            raise ConnectError(f"the service did not complete the sign-in ({error})")
        return await self._exchange(callback.code)

    async def _exchange(self, code: str) -> Grant:
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect_uri,
            "code_verifier": self._verifier,
            **client_form(self._profile, self._store),
        }
        client = self._client or transport.new_client()
        try:
            answer = await token_request(client, self.plan.token_url, form)
        except TokenRefused as exc:
            raise ConnectError(f"the service refused the sign-in code ({exc.error})") from exc
        except CallError as exc:
            raise ConnectError(f"the sign-in could not be completed: {exc.message}") from exc
        finally:
            if self._client is None:
                await client.aclose()
        granted = self.plan.scopes if answer.scopes is None else answer.scopes
        extra = sorted(set(granted) - set(self.plan.scopes))
        if extra:
            raise ConnectError(
                f"the service granted scope(s) no extension declared ({' '.join(extra)}); "
                "Helm did not keep this sign-in"
            )
        grant = Grant(
            answer.access_token,
            answer.refresh_token,
            answer.expires_at,
            self.plan.token_url,
            self.plan.authorize_url,
            str(self._profile.client_id),
            tuple(sorted(granted)),
        )
        save_grant(self._store, self._profile.name, grant)
        return grant


async def start_connect(
    home: Home,
    store: CredentialStore,
    service: str,
    workspace: str,
    *,
    client: httpx.AsyncClient | None = None,
) -> ConnectSession:
    """Begin a sign-in: check the profile, work out the plan, open the listener."""
    profile = _oauth_profile(home, service)
    plan = connect_plan(home, service, workspace)
    state = secrets.token_urlsafe(32)
    verifier, challenge = pkce_pair()
    listener = await CallbackListener.open(state)
    url = authorize_url(
        plan.authorize_url,
        client_id=str(profile.client_id),
        redirect_uri=listener.redirect_uri,
        state=state,
        challenge=challenge,
        scopes=plan.scopes,
    )
    return ConnectSession(store, profile, plan, listener, verifier, url, client)


def connect_status(store: CredentialStore, service: str) -> dict[str, Any]:
    """Whether a service is connected, and with which scopes (no secrets)."""
    grant = load_grant(store, service)
    if grant is None:
        return {"connected": False, "summary": "not connected"}
    return {
        "connected": True,
        "scopes": list(grant.scopes),
        "expires_at": grant.expires_at,
        "summary": f"connected ({' '.join(grant.scopes) or 'no scopes'})",
    }


def disconnect(home: Home, store: CredentialStore, service: str) -> None:
    _oauth_profile(home, service)
    forget_grant(store, service)
