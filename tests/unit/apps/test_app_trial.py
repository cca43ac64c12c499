"""``helm app test``'s decisions and its bad input: ``--args`` against the opening tool's input
schema, the tools marked as only reading, what fails a run; and the command's clear errors
before anything starts (an unknown server, JSON that is not an object) or before the app opens
(an unknown URI, a wrong ``--read``), against the MCP App server built with the real SDK."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.apptest import Trial, prepare, throwaway_home
from app.cli import main
from app.commands.common import CommandFailed
from broker.apps import trial
from broker.apps.errors import AppError
from broker.apps.meta import AppTool, Csp
from broker.apps.review import AppReview
from broker.credentials import FileStore
from broker.mcp.discovery import UiDocument
from broker.settings import Home
from tests.helpers import new_broker
from tests.servers.services import mcp_app_command
from tests.unit.apps.app_setup import BOARD
from tests.unit.kinds.mcp_setup import add_stdio

SCHEMA = {
    "type": "object",
    "properties": {
        "metric": {"type": "string", "enum": ["retention", "revenue"], "default": "retention"},
        "cohorts": {"type": "integer", "minimum": 3, "maximum": 24, "default": 12},
        "url": {"type": "string"},
        "filters": {"type": "object"},
    },
    "required": ["url"],
}


def reviewed(schema: dict[str, Any] | None = SCHEMA, *, opener_writes: bool = True) -> AppReview:
    opener = AppTool("open", "", ("model", "app"), not opener_writes, "ui://a/b")
    return AppReview(
        workspace="test", server="s", uri="ui://a/b", name="A", description="",
        document=UiDocument("ui://a/b", b"<p>a</p>", Csp(), (), None),
        reads=(AppTool("look", "", ("app",), True, None),),
        writes=(AppTool("save", "", ("app",), False, None),),
        hidden=(), resources=(), opener=opener if schema is not None else None,
        opener_schema=schema or {},
    )  # fmt: skip


def test_args_become_the_settings_the_app_opens_with_over_the_forms_defaults() -> None:
    settings = trial.opening_settings(reviewed(), {"url": "/tmp/a.pdf", "cohorts": 6})
    assert settings == {"url": "/tmp/a.pdf", "cohorts": 6}


@pytest.mark.parametrize(
    ("given", "message"),
    [
        pytest.param({}, "--args do not fit the input schema of open: $.url: ", id="required-missing"),
        pytest.param({"url": "x", "cohorts": 99}, "$.cohorts: ", id="above-its-maximum"),
        pytest.param({"url": 5}, "$.url: ", id="wrong-type"),
        pytest.param(
            {"url": "x", "colour": "red"},
            "colour: not an argument of open (its settings: ",
            id="not-an-argument",
        ),
        pytest.param(
            {"url": "x", "filters": {}},
            "filters: Helm's settings cannot hold this argument",
            id="a-type-settings-cannot-hold",
        ),
    ],
)
def test_args_that_do_not_fit_the_opening_tool_are_refused_with_what_is_wrong(
    given: dict[str, Any], message: str
) -> None:
    with pytest.raises(AppError, match=r"^--args") as refused:
        trial.opening_settings(reviewed(), given)
    assert message in str(refused.value)


def test_args_are_not_checked_against_a_tool_that_needs_an_argument_the_settings_cannot_hold() -> None:
    needs_filters = {**SCHEMA, "required": ["url", "filters"]}
    assert trial.opening_settings(reviewed(needs_filters), {"cohorts": 6}) == {"cohorts": 6}
    with pytest.raises(AppError, match="colour: not an argument of open"):
        trial.opening_settings(reviewed(needs_filters), {"colour": "red"})


def test_args_for_an_app_that_opens_with_no_tool_are_refused() -> None:
    assert trial.opening_settings(reviewed(None), {}) == {}
    with pytest.raises(AppError, match="no tool is linked to it"):
        trial.opening_settings(reviewed(None), {"url": "x"})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("{url: 1}", "--args is not JSON: ", id="not-json"),
        pytest.param(
            "[1, 2]", "--args must be a JSON object (the tool's arguments by name), not a list", id="a-list"
        ),
        pytest.param('"x"', "not a string", id="a-string"),
    ],
)
def test_args_that_are_not_a_json_object_are_refused(text: str, message: str) -> None:
    with pytest.raises(AppError) as refused:
        trial.parse_arguments(text)
    assert message in str(refused.value)


def test_all_reads_marks_every_tool_helm_would_confirm_and_read_refuses_a_tool_that_is_not_one() -> None:
    assert trial.marked(reviewed(), ["look"], all_reads=True) == ("open", "save")
    assert trial.marked(reviewed(opener_writes=False), [], all_reads=True) == ("save",)
    assert trial.marked(reviewed(), ["save", "save"], all_reads=False) == ("save",)
    with pytest.raises(AppError, match="look: not a tool of the app that Helm would confirm"):
        trial.marked(reviewed(), ["look"], all_reads=False)


@pytest.mark.parametrize(
    ("level", "message", "source", "fails"),
    [
        pytest.param(2, "Uncaught TypeError: x", "helm-ext://h/app.html", True, id="uncaught"),
        pytest.param(2, "could not save", "userscript:helm-app-console", True, id="console-error"),
        pytest.param(1, "deprecated", "helm-ext://h/app.html", False, id="a-warning"),
        pytest.param(
            2,
            "Potential permissions policy violation: camera is not allowed in this document.",
            "",
            False,
            id="the-permissions-helm-withholds",
        ),
        pytest.param(
            2,
            "Potential permissions policy violation: camera",
            "app.js",
            True,
            id="the-same-words-from-a-script",
        ),
    ],
)
def test_a_console_error_of_the_page_fails_the_run_and_helms_own_sandbox_notes_do_not(
    level: int, message: str, source: str, fails: bool
) -> None:
    assert trial.console_error(level, message, source) is fails


def test_a_run_passes_only_when_the_app_rendered_with_no_problem_and_no_call_left_running() -> None:
    assert trial.TrialOutcome(opened=True, initialized=True, rendered=True, calls=2).passed
    assert not trial.TrialOutcome(opened=True, initialized=True).passed
    assert not trial.TrialOutcome(opened=True, initialized=True, rendered=True, pending=1).passed
    failed = trial.TrialOutcome(
        opened=True, initialized=True, rendered=True, problems=["call app.x declined"]
    )
    assert failed.summary() == "FAIL: the app rendered; 1 problem(s)"
    assert trial.TrialOutcome().summary() == "FAIL: the app did not open; 0 problem(s)"


def test_quiet_is_settled_only_after_the_settle_time_since_the_last_activity() -> None:
    quiet = trial.Quiet(10.0)
    assert not quiet.settled(10.9, 1.0)
    quiet.busy(10.5)
    assert not quiet.settled(11.4, 1.0) and quiet.settled(11.5, 1.0)


# -- the command's errors ------------------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    monkeypatch.setattr("app.apptest.open_store", lambda path: FileStore(path / "credentials.json"))
    broker = new_broker(h)
    add_stdio(broker, "board", mcp_app_command())
    return h


def test_an_unknown_server_or_args_that_are_not_json_end_before_anything_starts(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["app", "test", "--home", str(home), "--server", "nope", BOARD])
    unknown = capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:
        main(["app", "test", "--home", str(home), "--server", "board", BOARD, "--args", "[1]"])
    bad_json = capsys.readouterr().err
    assert code == 1 and "helm: no MCP server named 'nope'" in unknown and str(home) in unknown
    assert usage.value.code == 2
    assert (
        "argument --args: --args must be a JSON object (the tool's arguments by name), not a list" in bad_json
    )


def trial_for(home: Path, tmp: Path, uri: str = BOARD, **given: Any) -> Trial:
    fields: dict[str, Any] = {"arguments": {}, "reads": (), "all_reads": False} | given
    return Trial(home, FileStore(home / "credentials.json"), "board", uri, tmp, **fields)


@pytest.mark.usefixtures("mcp_app_server")
@pytest.mark.parametrize(
    ("uri", "given", "message"),
    [
        pytest.param(
            "ui://helm-test/none",
            {},
            "offers no app 'ui://helm-test/none'; see `helm app list --server board`",
            id="unknown-uri",
        ),
        pytest.param(
            BOARD,
            {"reads": ("list_items",)},
            "list_items: not a tool of the app that Helm would confirm",
            id="a-read-marked",
        ),
        pytest.param(
            BOARD,
            {"arguments": {"title": "x"}},
            "title: not an argument of show_board",
            id="args-the-tool-does-not-take",
        ),
        pytest.param(
            BOARD,
            {"allow": ("https://cdn.example.com",)},
            "https://cdn.example.com: not a resource domain the app declares",
            id="a-domain-not-declared",
        ),
    ],
)
async def test_bad_input_is_refused_before_the_app_opens_and_the_users_home_is_left_as_it_was(
    home: Path, tmp_path: Path, uri: str, given: dict[str, Any], message: str
) -> None:
    before = (home / "settings.json").read_bytes()
    run = trial_for(home, tmp_path, uri, **given)
    throwaway = throwaway_home(run, tmp_path / "throwaway")
    async with new_broker(throwaway.path) as broker:
        with pytest.raises(CommandFailed) as refused:
            await prepare(broker, run)
    assert message in str(refused.value)
    assert (home / "settings.json").read_bytes() == before
    assert Home(home).settings().workspaces == {}
