"""Service profiles: the base URL and how Helm signs requests for one service.

A profile lives in the settings section ``services`` as a plain JSON object::

    {"base_url": "https://api.example.com/v1", "auth": "token",
     "token_header": "Authorization", "token_format": "bearer"}
    {"base_url": "https://api.example.com", "auth": "oauth2", "client_id": "abc",
     "authorize_url": "https://auth.example.com/authorize?access_type=offline",
     "token_url": "https://auth.example.com/token"}

An OAuth2 profile's two sign-in URLs are the user's, like its base URL: Helm opens only its
``authorize_url`` and posts the code, the client secret and refresh tokens only to its
``token_url``; an extension declaring other URLs is refused. A profile saved before Helm kept
them has neither: it loads, but cannot connect or sign calls until the user sets them (Helm
never takes them from a manifest).

Secrets never go there. They live in the credential store under ``services/<name>/token``
(a token profile), ``services/<name>/client_secret`` and ``services/<name>/oauth`` (the tokens
an OAuth2 sign-in obtained, as JSON). ``SERVICES`` is the kind's ``ProfileSpec``: read and
change profiles through ``SERVICES.store(home, credentials)``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal
from urllib.parse import urlsplit

from broker.errors import ProfileError
from broker.names import NAME_RULE, valid_name
from broker.profiles import ProfileSpec, Reach, SavePlan
from broker.urls import url_problem

HEADER = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$")
# Headers Helm sets or that would change how the request is framed or routed.
RESERVED_HEADERS = frozenset(
    {"host", "content-length", "content-type", "transfer-encoding", "connection", "accept",
     "accept-encoding", "cookie", "te", "upgrade", "expect", "proxy-authorization"}
)  # fmt: skip

Auth = Literal["token", "oauth2"]
TokenFormat = Literal["bearer", "raw"]


@dataclass(frozen=True)
class ServiceProfile:
    name: str
    base_url: str
    auth: Auth = "token"
    token_header: str = "Authorization"  # noqa: S105 - a header name, not a secret
    token_format: TokenFormat = "bearer"  # noqa: S105 - a format name, not a secret
    client_id: str | None = None
    authorize_url: str | None = None
    token_url: str | None = None

    def to_json(self) -> dict[str, Any]:
        raw: dict[str, Any] = {"base_url": self.base_url, "auth": self.auth}
        if self.auth == "token":
            raw |= {"token_header": self.token_header, "token_format": self.token_format}
        else:
            raw["client_id"] = self.client_id
            urls = {"authorize_url": self.authorize_url, "token_url": self.token_url}
            raw |= {k: v for k, v in urls.items() if v is not None}
        return raw

    def signed(self, token: str) -> tuple[dict[str, str], tuple[str, ...]]:
        """The header carrying ``token`` for this token profile, and each form of the secret
        in it (for scrubbing)."""
        value = f"Bearer {token}" if self.token_format == "bearer" else token  # noqa: S105
        return {self.token_header: value}, (value, token)

    @property
    def sign_in_urls(self) -> tuple[str, str] | None:
        """(authorize URL, token URL) of an OAuth2 profile, or None until the user sets both."""
        if self.authorize_url is None or self.token_url is None:
            return None
        return self.authorize_url, self.token_url

    @classmethod
    def from_json(cls, name: str, raw: Any) -> ServiceProfile:
        if not isinstance(raw, dict):
            raise ProfileError(f"service {name!r}: the profile must be a JSON object")
        auth = raw.get("auth", "token")
        profile = cls(
            name=name,
            base_url=raw.get("base_url", ""),
            auth=auth,
            token_header=raw.get("token_header", "Authorization"),
            token_format=raw.get("token_format", "bearer"),
            client_id=raw.get("client_id"),
            authorize_url=raw.get("authorize_url"),
            token_url=raw.get("token_url"),
        )
        profile.check()
        return profile

    def check(self) -> None:
        """Raise ProfileError naming what is wrong with this profile."""
        where = f"service {self.name!r}"
        if not valid_name(self.name):
            raise ProfileError(f"{where}: {NAME_RULE}")
        base_problem = base_url_problem(self.base_url)
        if base_problem is not None:
            raise ProfileError(f"{where}: the base URL {base_problem}")
        if self.auth not in ("token", "oauth2"):
            raise ProfileError(f"{where}: auth must be token or oauth2")
        if self.auth == "token":
            if not isinstance(self.token_header, str) or not HEADER.match(self.token_header):
                raise ProfileError(f"{where}: the token header must be a plain header name")
            if self.token_header.lower() in RESERVED_HEADERS:
                raise ProfileError(f"{where}: Helm sets the {self.token_header} header itself")
            if self.token_format not in ("bearer", "raw"):
                raise ProfileError(f"{where}: the token format must be bearer or raw")
        elif not isinstance(self.client_id, str) or not self.client_id.strip() or len(self.client_id) > 512:
            raise ProfileError(f"{where}: an OAuth2 profile needs a client id")
        else:
            _refuse_urls(where, sign_in_url_problems(self.authorize_url, self.token_url, required=False))


def base_url_problem(url: Any) -> str | None:
    """https (http only on loopback), no credentials, query or fragment; a path is allowed."""
    if not isinstance(url, str):
        return "must be a URL"
    problem = url_problem(url, allow_query=False)
    if problem is not None:
        return problem
    path = urlsplit(url).path
    if any(seg in (".", "..") for seg in path.split("/")) or "%" in path:
        return "must not contain . or .. segments or percent-escapes"
    return None


def sign_in_url_problems(authorize_url: Any, token_url: Any, *, required: bool = True) -> dict[str, str]:
    """What is wrong with an OAuth2 profile's sign-in URLs: field name → message.

    The rules a manifest's ``authorizeUrl``/``tokenUrl`` follow: https (http only on
    loopback), no credentials or fragment, and no query in the token URL. ``required=False``
    lets a profile saved before Helm kept them load (without them it cannot connect).
    """
    found = {}
    fields = (
        ("authorize_url", "authorize URL", authorize_url, True),
        ("token_url", "token URL", token_url, False),
    )
    for key, label, url, allow_query in fields:
        if url is None:
            if required:
                found[key] = f"the {label} is needed for OAuth2 sign-in"
            continue
        problem = url_problem(url, allow_query=allow_query) if isinstance(url, str) else "must be a URL"
        if problem is not None:
            found[key] = f"the {label} {problem}"
    return found


def _refuse_urls(where: str, problems: dict[str, str]) -> None:
    if problems:
        raise ProfileError(f"{where}: " + "; ".join(problems.values()))


def normalize_base_url(url: str) -> str:
    """The base URL without a trailing slash (call paths always start with one)."""
    return url.rstrip("/")


def parse(name: str, raw: Any) -> ServiceProfile:
    return ServiceProfile.from_json(name, raw)


def plan_save(
    profile: ServiceProfile, given: Mapping[str, str | None], previous: ServiceProfile | None
) -> SavePlan[ServiceProfile]:
    """A token profile keeps its token; an OAuth2 profile needs both sign-in URLs and keeps its
    client secret. Replacing an OAuth2 profile with the same client id, base URL and sign-in
    URLs keeps its sign-in, so a user can update the client secret without connecting again;
    any other change (setting the URLs of an older profile included) drops it."""
    profile = replace(profile, base_url=normalize_base_url(profile.base_url))
    if profile.auth == "token":
        secrets = {"token": given.get("token"), "client_secret": None, "oauth": None}
        return SavePlan(profile, secrets)
    problems = sign_in_url_problems(profile.authorize_url, profile.token_url)
    _refuse_urls(f"service {profile.name!r}", problems)
    plan: dict[str, str | None] = {"client_secret": given.get("client_secret"), "token": None}
    if previous is None or previous.to_json() != profile.to_json():
        plan["oauth"] = None
    return SavePlan(profile, plan)


def reaches(profile: ServiceProfile) -> tuple[Reach, ...]:
    """Its base URL and, for OAuth2, the two sign-in URLs (for the organisation's policy)."""
    urls = [u for u in (profile.authorize_url, profile.token_url) if u is not None]
    return (Reach("service_url", profile.base_url), *(Reach("oauth_url", u) for u in urls))


SERVICES = ProfileSpec(
    section="services",
    noun="service",
    parse=parse,
    secrets=("token", "client_secret", "oauth"),
    plan_save=plan_save,
    reaches=reaches,
)
