"""Rooms: the ``echo`` kind's profiles (a greeting; a token kept in the credential store)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from broker.errors import ProfileError
from broker.profiles import ProfileSpec, SavePlan


@dataclass(frozen=True)
class Room:
    name: str
    greeting: str

    def to_json(self) -> dict[str, Any]:
        return {"greeting": self.greeting}


def parse(name: str, raw: Any) -> Room:
    greeting = raw.get("greeting") if isinstance(raw, dict) else None
    if not isinstance(greeting, str) or not greeting:
        raise ProfileError(f"room {name!r}: the greeting must be text")
    return Room(name, greeting)


def plan_save(room: Room, given: Mapping[str, str | None], previous: Room | None) -> SavePlan[Room]:
    if not given.get("token"):
        raise ProfileError(f"room {room.name!r} needs a token")
    return SavePlan(room, {"token": given["token"]})


ROOMS = ProfileSpec(section="rooms", noun="room", parse=parse, secrets=("token",), plan_save=plan_save)
