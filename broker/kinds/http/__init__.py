"""The ``http`` kind: named calls to a service profile (a base URL and a token, or OAuth2).

Its parts: ``rules`` (the connection model, lint and review), ``render`` (a call and its
arguments → the exact request), ``profiles`` (service profiles), ``form`` and ``cli`` (Settings
and ``helm service``), ``connect`` and ``oauth2`` (sign-in), ``probe`` (the Test button),
``adapter`` (the running kind).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from broker.kinds.http import form, profiles, rules
from broker.kinds.http.schema import SCHEMA
from broker.kinds.http.shape import HTTP_ENVELOPE
from broker.kinds.spec import ConfirmText, KindSpec

if TYPE_CHECKING:
    from broker.kinds.http.adapter import HttpKind

HTTP: KindSpec[rules.HttpConnection, profiles.ServiceProfile, HttpKind] = KindSpec(
    name="http",
    order=10,
    parse=rules.parse,
    lint=rules.lint,
    review=rules.review,
    hints=rules.hints,
    schema=SCHEMA,
    schema_def="http",
    adapter="broker.kinds.http.adapter:HttpKind",
    confirm=ConfirmText(
        "Confirm request",
        "wants to send a request",
        "Request",
        in_request=("Method", "URL"),
        wrap_request=False,
    ),
    envelope=HTTP_ENVELOPE,
    scalar_args=True,
    profiles=profiles.SERVICES,
    form=form.FORM,
    probe=form.probe,
    cli="broker.kinds.http.cli:register",
    window_parts={"oauth": "ui.kinds.http.oauth:BrokerOAuth"},
)

SPECS = (HTTP,)
