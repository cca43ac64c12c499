"""The running ``echo`` kind: answers with what was said, in the room's words."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from broker.envelope import PLAIN
from broker.errors import CallError, ErrorCode, ProfileError
from broker.kinds.base import Call, KindEnv, WriteDetails
from broker.settings import Workspace
from tests.kinds.echo import ECHO
from tests.kinds.echo.profiles import ROOMS, Room
from tests.kinds.echo.rules import EchoConnection


class EchoKind:
    def __init__(self, env: KindEnv) -> None:
        self.rooms = ROOMS.store(env.home, env.credentials)

    def _room(self, call: Call[EchoConnection]) -> Room:
        try:
            return self.rooms.load(call.connection.room)
        except ProfileError as exc:
            raise CallError(ErrorCode.NOT_CONFIGURED, f"no room named {call.connection.room!r}") from exc

    async def pin(self, workspace: Workspace, conn: EchoConnection) -> Mapping[str, Any]:
        return {}

    async def describe(self, call: Call[EchoConnection]) -> WriteDetails:
        room = self._room(call)
        said = json.dumps(dict(call.args), sort_keys=True)
        return ECHO.confirm.details(
            fields=(("Room", room.name), ("Phrase", call.operation)),
            request=f"{call.operation} {said}",
            binding={"room": room.name, "phrase": call.operation, "args": dict(call.args)},
        )

    async def execute(self, call: Call[EchoConnection]) -> dict[str, Any]:
        room = self._room(call)
        return PLAIN.success(
            {"greeting": room.greeting, "said": call.operation, "args": dict(call.args)}, None
        )

    async def aclose(self) -> None:
        return None
