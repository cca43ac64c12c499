"""The http kind's profile form: base URL and token, or OAuth2 sign-in (see ``broker.kinds.forms``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from broker.kinds.forms import (
    FormCheck,
    FormField,
    ProfileForm,
    Values,
    check_name,
    done,
    one_line,
    plain_values,
)
from broker.kinds.http import profiles
from broker.kinds.spec import Outcome

if TYPE_CHECKING:
    from broker.kinds.http.adapter import HttpKind

FIELDS = (
    FormField("name", "Name", placeholder="github"),
    FormField("base_url", "Base URL", placeholder="https://api.example.com"),
    FormField(
        "auth",
        "Sign-in",
        "choice",
        (("token", "Token"), ("oauth2", "OAuth2"), ("none", "No token (a public API)")),
        default="token",
    ),
    FormField("token_header", "Token header", when=("auth", "token"), default="Authorization"),
    FormField(
        "token_format",
        "Token format",
        "choice",
        (("bearer", "Bearer <token>"), ("raw", "<token> as it is")),
        when=("auth", "token"),
        default="bearer",
    ),
    FormField("token", "Token", "secret", when=("auth", "token"), placeholder="paste the token"),
    FormField("client_id", "Client id", when=("auth", "oauth2")),
    FormField(
        "authorize_url",
        "Authorize URL",
        when=("auth", "oauth2"),
        placeholder="https://auth.example.com/authorize (from the service's documentation)",
    ),
    FormField(
        "token_url", "Token URL", when=("auth", "oauth2"), placeholder="https://auth.example.com/token"
    ),
    FormField(
        "client_secret",
        "Client secret",
        "secret",
        when=("auth", "oauth2"),
        placeholder="empty for a public client",
    ),
)


def check(values: Values) -> FormCheck:
    problems: dict[str, str] = {}
    check_name(values, problems)
    base = values.get("base_url", "").strip()
    base_problem = profiles.base_url_problem(base)
    if base_problem:
        problems["base_url"] = "the base URL " + base_problem
    auth = values.get("auth", "token")
    if auth == "none":  # stored as a token profile with no token, as helm service add --no-token
        return done({"base_url": base, **NO_TOKEN}, problems)
    raw: dict[str, Any] = {"base_url": base, "auth": auth}
    if auth == "token":
        raw |= _token(values, problems)
    else:
        raw |= _oauth2(values, problems)
    return done(raw, problems)


NO_TOKEN = {"auth": "token", "token_header": "Authorization", "token_format": "bearer"}


def values_from(raw: Mapping[str, Any]) -> dict[str, str]:
    """A token profile that holds no token shows as "No token" (``has_token`` says which)."""
    values = plain_values({k: v for k, v in raw.items() if k != "has_token"})
    if raw.get("auth") == "token" and raw.get("has_token") is False:
        values["auth"] = "none"
    return values


def _token(values: Values, problems: dict[str, str]) -> dict[str, Any]:
    header = values.get("token_header", "").strip() or "Authorization"
    if not profiles.HEADER.match(header):
        problems["token_header"] = "a header name: letters, digits and - only"  # noqa: S105 - a message, not a secret
    elif header.lower() in profiles.RESERVED_HEADERS:
        problems["token_header"] = f"Helm sets {header} itself; choose another header"
    one_line(values, "token", problems, "token")
    return {"token_header": header, "token_format": values.get("token_format", "bearer")}


def _oauth2(values: Values, problems: dict[str, str]) -> dict[str, Any]:
    client_id = values.get("client_id", "").strip()
    if not client_id:
        problems["client_id"] = "enter the client id of your OAuth client"
    elif len(client_id) > 512:
        problems["client_id"] = "the client id is longer than 512 characters"
    urls = {key: values.get(key, "").strip() or None for key in ("authorize_url", "token_url")}
    problems |= profiles.sign_in_url_problems(urls["authorize_url"], urls["token_url"])
    return {"client_id": client_id, **urls}


TEST_FIELDS = (
    FormField(
        "test_path",
        "Path",
        default="/",
        placeholder="/",
        help="what Test GETs under the base URL (a path that needs the token checks the token)",
    ),
)

FORM = ProfileForm(
    "Services",
    FIELDS,
    check,
    values_from,
    test_label="Test",
    test_fields=TEST_FIELDS,
    test_unless=("auth", "oauth2"),
)


async def probe(kind: HttpKind, name: str, inputs: Mapping[str, str]) -> Outcome:
    """The Test button of a token service (``broker.kinds.http.probe``, loaded when clicked)."""
    from broker.kinds.http.probe import probe as get

    return await get(kind, name, inputs)
