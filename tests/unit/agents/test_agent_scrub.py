"""An agent's key never leaves its process: not in paths, titles, option names, split chunks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker.agents import AgentEvent, FileAccess, MessageChunk, ThoughtChunk, TurnEnded
from broker.agents.scrub import KEY_REMOVED, ChunkScrubber
from tests.unit.agents.agent_setup import KEY, FakeAsker, Setup, make_setup, said, session, turn


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    s = make_setup(tmp_path)
    s.add_agent(key=KEY)
    return s


async def test_the_key_is_removed_from_paths_titles_option_names_and_chunks_split_anywhere(
    setup: Setup, tmp_path: Path
):
    secret_dir = tmp_path / KEY
    secret_dir.mkdir()
    (secret_dir / "x").write_text("x\n")
    ask = {"ask": {"id": "t", "title": f"Run with {KEY}", "kind": "execute",
                   "options": [["a", f"Allow {KEY}", "allow_once"], ["r", "No", "reject_once"]]}}  # fmt: skip
    steps = [
        {"read": str(secret_dir / "x")},
        ask,
        {"chunks": [f"the key is {KEY[:7]}", KEY[7:12], f"{KEY[12:]}, said in three parts"]},
        {"think": KEY[:3]},
        {"think": KEY[3:]},
    ]
    asker = FakeAsker(lambda q: "a")
    async with setup.host() as host:
        events = await turn(session(host, asker=asker), steps)
    shown = json.dumps([e.as_json() for e in events], ensure_ascii=False)
    audit = (setup.home.path / "audit.jsonl").read_text()
    question = asker.asked[0].as_text()
    for text in (shown, audit, question):
        assert KEY not in text
    assert f"Allow {KEY_REMOVED}" in question
    assert f"Run with {KEY_REMOVED}" in question
    assert f"the key is {KEY_REMOVED}, said in three parts" in "".join(said(events))
    assert "".join(e.text for e in events if isinstance(e, ThoughtChunk)) == KEY_REMOVED
    read = next(e for e in events if isinstance(e, FileAccess))
    assert KEY_REMOVED in read.path
    assert isinstance(events[-1], TurnEnded)


@given(
    before=st.text(alphabet="ab-7", max_size=8),
    after=st.text(alphabet="ab-7", max_size=8),
    cuts=st.lists(st.integers(0, 40), max_size=5),
    other=st.booleans(),
)
def test_a_key_cut_into_chunks_anywhere_is_never_shown_whole(
    before: str, after: str, cuts: list[int], other: bool
):
    text = before + KEY + after + KEY[:5]
    points = sorted({min(c, len(text)) for c in cuts})
    parts = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    scrubber = ChunkScrubber(KEY)
    out: list[AgentEvent] = []
    for part in parts:
        out += scrubber.events(MessageChunk(part))
        if other:  # a thought between two message chunks does not join them, and passes them on
            out += scrubber.events(ThoughtChunk("."))
    out += scrubber.events(TurnEnded("end_turn"))
    joined = "".join(e.text for e in out if isinstance(e, MessageChunk))
    assert isinstance(out[-1], TurnEnded)
    if not other:
        assert joined == text.replace(KEY, KEY_REMOVED)
    assert all(KEY not in e.text for e in out if isinstance(e, MessageChunk))
