"""A tool's orchestrate section: validation with clear errors, the review digest, the prompt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from broker.errors import CallError, ErrorCode, SettingsError
from broker.manifest import Manifest, validate
from broker.orchestrate.spec import MAX_INPUT_CHARS, MAX_PROMPT_CHARS, Orchestrate
from broker.settings import Home
from broker.visible import visible
from broker.workspaces import add_workspace, set_build_agent
from tests.helpers import manifest_dict

PROMPT = "Implement task {task} ({title}) of {project}; tests first."


def tool(**orchestrate: Any) -> dict[str, Any]:
    section = {"prompt": PROMPT, "root": "project", **orchestrate}
    return manifest_dict([], kind="tool", permissions={"orchestrate": True}, orchestrate=section)


def messages(raw: dict[str, Any]) -> list[tuple[str, str]]:
    return [(i.path, i.message) for i in validate(raw)]


def test_a_tool_with_a_granted_build_is_valid_and_parsed() -> None:
    raw = tool(write=True)
    assert validate(raw) == []
    assert Manifest(raw, Path(".")).orchestrate == Orchestrate(PROMPT, "project", True)


WS = {"prompt": "x", "root": "workspace"}


@pytest.mark.parametrize(
    ("change", "path", "words"),
    [
        pytest.param({"permissions": {}}, "$.orchestrate", '"orchestrate": true', id="no-permission"),
        pytest.param({"kind": "widget"}, "$.orchestrate", "only a tool", id="widget"),
        pytest.param({"orchestrate": None}, "$.permissions.orchestrate", "needs an", id="alone"),
        pytest.param({"orchestrate": {**WS, "root": "home"}}, "$.orchestrate.root", "", id="bad-root"),
        pytest.param(
            {"orchestrate": {"root": "workspace"}}, "$.orchestrate.prompt", "is required", id="no-prompt"
        ),
        pytest.param({"orchestrate": {**WS, "prompt": ""}}, "$.orchestrate.prompt", "", id="empty"),
        pytest.param(
            {"orchestrate": {**WS, "command": "rm"}}, "$.orchestrate.command", "unknown field", id="key"
        ),
        pytest.param(
            {"orchestrate": {**WS, "write": "yes"}}, "$.orchestrate.write", "", id="write-not-boolean"
        ),
    ],
)
def test_a_wrong_orchestrate_section_is_reported_at_its_path(
    change: dict[str, Any], path: str, words: str
) -> None:
    raw = tool()
    raw.update(change)
    if raw.get("orchestrate") is None:
        del raw["orchestrate"]
    found = messages(raw)
    assert any(p == path and words in m for p, m in found), found


def test_every_problem_is_reported_at_once() -> None:
    raw = tool()
    raw.update(kind="widget", permissions={})
    assert {m for _p, m in messages(raw)} >= {
        'only a tool can start builds: "kind" must be "tool"',
        'starts builds: the manifest must also declare "permissions": { "orchestrate": true }',
    }


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"prompt": "Delete everything"}, id="prompt"),
        pytest.param({"root": "workspace"}, id="root"),
        pytest.param({"write": True}, id="write"),
    ],
)
def test_a_changed_build_needs_a_new_approval(change: dict[str, Any]) -> None:
    before = Manifest(tool(), Path("."))
    after = Manifest(tool(**change), Path("."))
    assert before.digest() != after.digest()


def test_a_manifest_without_a_build_keeps_its_digest_whatever_orchestrate_would_be() -> None:
    plain = manifest_dict([])
    assert Manifest(plain, Path(".")).digest() == Manifest(dict(plain), Path(".")).digest()
    assert "orchestrate" not in plain
    assert Manifest(plain, Path(".")).review().orchestrate is None


def test_the_prompt_is_filled_from_the_input_scalars() -> None:
    spec = Orchestrate(
        "Task {task} ({n}, urgent: {urgent}, weight {w}) in {project}; keep {braces} and {}", "project"
    )
    given = {
        "task": "T-1",
        "n": 3,
        "urgent": True,
        "w": 1.5,
        "project": "web",
        "braces": "{x}",
        "extra": None,
    }
    text = spec.fill(given)
    assert text == "Task T-1 (3, urgent: true, weight 1.5) in web; keep {x} and {}"


def test_an_input_string_of_exactly_the_longest_length_fills_the_prompt() -> None:
    longest = "x" * MAX_INPUT_CHARS
    assert Orchestrate("{task}", "workspace").fill({"task": longest}) == longest


@pytest.mark.parametrize(
    ("spec", "lines"),
    [
        pytest.param(
            Orchestrate("Build {task}", "project"),
            (
                ("Prompt template", "Build {task}"),
                ("Runs in", "the project the tool names (input.project)"),
                ("Agent may change files", "no"),
            ),
            id="project-no-write-by-default",
        ),
        pytest.param(
            Orchestrate("Tidy", "workspace", True),
            (
                ("Prompt template", "Tidy"),
                ("Runs in", "the workspace root"),
                ("Agent may change files", "yes, each change confirmed"),
            ),
            id="workspace-write",
        ),
    ],
)
def test_review_shows_the_template_where_it_runs_and_whether_the_agent_may_write(
    spec: Orchestrate, lines: tuple[tuple[str, str], ...]
) -> None:
    assert spec.review_lines() == lines


@pytest.mark.parametrize(
    ("given", "words"),
    [
        pytest.param({"task": "T-1"}, "lacks 'project'", id="missing"),
        pytest.param({"task": "T-1", "project": None}, "lacks 'project'", id="null"),
        pytest.param({"task": ["T-1"], "project": "web"}, "input 'task' must be a string", id="list"),
        pytest.param({"task": {"id": 1}, "project": "web"}, "input 'task' must be a string", id="object"),
        pytest.param({"task": "x" * 4097, "project": "web"}, "longer than 4096", id="too-long"),
        pytest.param(["T-1"], "JSON object", id="not-an-object"),
    ],
)
def test_an_input_that_cannot_fill_the_prompt_is_refused(given: Any, words: str) -> None:
    with pytest.raises(CallError) as caught:
        Orchestrate("Task {task} in {project}", "project").fill(given)
    assert caught.value.code is ErrorCode.REFUSED
    assert words in caught.value.message


def test_the_build_agent_is_a_workspace_setting_of_a_known_agent(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    home.ensure()
    (tmp_path / "root").mkdir()
    add_workspace(home, "ws", tmp_path / "root")
    with pytest.raises(SettingsError, match="no agent named 'nobody'"):
        set_build_agent(home, "ws", "nobody")
    with home.update() as settings:
        settings.agents["claude"] = {"command": ["claude-code-acp"]}
    set_build_agent(home, "ws", "claude")
    assert Home(home.path).settings().workspace("ws").build_agent == "claude"
    set_build_agent(home, "ws", None)
    assert Home(home.path).settings().workspace("ws").build_agent is None


def test_hidden_characters_of_the_input_reach_the_agent_as_the_dialog_shows_them() -> None:
    given = {"task": "T-1\u202e1-T", "project": "web\x1b[2J\r\u2028\u200b", "title": "a\nb\tc"}
    text = Orchestrate(PROMPT, "project").fill(given)
    assert text == (
        "Implement task T-1[U+202E]1-T (a\nb\tc) of web[U+001B][2J[U+000D][U+2028][U+200B]; tests first."
    )
    assert visible(text) == text  # what the dialog shows is exactly what the agent gets


def test_a_prompt_filled_past_its_bound_is_refused_counting_what_the_dialog_shows() -> None:
    hidden = "\u202e" * 4096  # each shown, and sent, as eight characters
    at_bound = Orchestrate("{a}" * (MAX_PROMPT_CHARS // (8 * 4096)), "workspace")
    assert len(at_bound.fill({"a": hidden})) == MAX_PROMPT_CHARS
    with pytest.raises(CallError) as caught:
        Orchestrate(at_bound.prompt + ".", "workspace").fill({"a": hidden})
    assert caught.value.code is ErrorCode.REFUSED
    assert f"longer than {MAX_PROMPT_CHARS} characters" in caught.value.message
