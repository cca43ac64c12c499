"""The room form (Settings → Connections → Rooms, ``helm echo add``) and its Test button."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

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
from broker.kinds.spec import Outcome

if TYPE_CHECKING:
    from tests.kinds.echo.adapter import EchoKind

FIELDS = (
    FormField("name", "Name", placeholder="lobby"),
    FormField("greeting", "Greeting", placeholder="hello", help="what the room answers with"),
    FormField("token", "Token", "secret"),
)


def check(values: Values) -> FormCheck:
    problems: dict[str, str] = {}
    check_name(values, problems)
    if not values.get("greeting"):
        problems["greeting"] = "say how the room greets"
    one_line(values, "token", problems, "token")
    return done({"greeting": values.get("greeting", "")}, problems)


FORM = ProfileForm("Rooms", FIELDS, check, plain_values)


async def probe(kind: EchoKind, name: str, _inputs: Mapping[str, str]) -> Outcome:
    room = kind.rooms.load(name)
    return Outcome(True, f"room {name} answers {room.greeting!r}")
