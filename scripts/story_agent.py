"""An ACP agent that plays one fixed story, whatever the prompt says: for screenshots.

    python scripts/story_agent.py STEPS.json

It is the tests' scripted agent (``tests/servers/acp/scripted_agent.py``, whose steps are
documented there) with its steps read from a file instead of from the prompt, so a screenshot
shows a prompt a person would type, and with writes that report nothing themselves.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import acp
from acp import schema

from tests.servers.acp.scripted_agent import Scripted, serve

STEPS: list[dict[str, Any]] = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))


class Story(Scripted):
    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> schema.PromptResponse:
        self.cancelled.setdefault(session_id, asyncio.Event()).clear()
        for step in STEPS:
            stop = await self.step(session_id, step)
            if stop is not None:
                return schema.PromptResponse(stop_reason=stop)  # type: ignore[arg-type]
        return schema.PromptResponse(stop_reason="end_turn")

    async def do_ask(self, sid: str, value: dict[str, Any], step: dict[str, Any]) -> None:
        # Quietly too: the transcript shows Helm's verdict.
        options = [schema.PermissionOption(option_id=i, name=n, kind=k) for i, n, k in value["options"]]
        call = schema.ToolCallUpdate(tool_call_id=value["id"], title=value["title"], kind=value["kind"])
        await self.conn.request_permission(sid, call, options)

    async def do_write(self, sid: str, value: str, step: dict[str, Any]) -> None:
        # Quietly: Helm's transcript already says how the write went.
        try:
            await self.conn.write_text_file(sid, value, step["content"])
        except acp.RequestError:
            await self.say(sid, "\nThe change was not made.")


if __name__ == "__main__":
    asyncio.run(serve(Story()))
