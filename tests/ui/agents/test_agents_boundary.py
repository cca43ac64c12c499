"""The Agents page at Helm's boundary, against the real broker and the scripted ACP agent:
sticky grants, questions nobody answers, agents that crash, hang or die mid-question, reads the
policy allows, writes the run does not allow, folders outside the chosen project, floods."""

from __future__ import annotations

import os
import signal
from dataclasses import replace
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from broker.audit import AuditLog, AuditRecord
from broker.workspaces import add_project
from tests.ui.agents.kit import (
    ask,
    finished,
    own_page,
    page,
    question,
    said,
    send,
    setup,
    until_text,
)
from tests.unit.agents.agent_setup import SHORT, Setup
from ui.agents.page import AgentsPage
from ui.dialogs.agent_permission import PermissionDialog
from ui.qt import Qt

__all__ = ["page", "setup"]


def audit_records(setup: Setup) -> list[AuditRecord]:
    return list(AuditLog(setup.home.path / "audit.jsonl").records())


def dialogs_of(page: AgentsPage) -> list[object]:
    shown: list[object] = []
    page.questions.opened.connect(shown.append)
    return shown


def test_allow_always_is_not_asked_again_in_that_session_but_a_new_session_asks_again(
    page: AgentsPage, run: Any, qtbot: QtBot
) -> None:
    shown = dialogs_of(page)
    send(page, [ask(), ask()])

    async def always() -> str:
        dialog = await question(page)
        assert isinstance(dialog, PermissionDialog)
        qtbot.mouseClick(dialog.allow_buttons["always"], Qt.MouseButton.LeftButton)
        return await finished(page)

    text = run(always())
    assert len(shown) == 1
    lines = said(text, "Permission: Run the tests")
    assert len(lines) == 2
    assert "allowed by you — always, for this session" in lines[0]
    assert "allowed by Helm's policy" in lines[1] and "always for this session (grant " in lines[1]
    assert text.count("permission: selected once") == 2

    page.new_button.click()
    send(page, [ask()])

    async def refuse() -> str:
        dialog = await question(page)
        assert isinstance(dialog, PermissionDialog)
        qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
        return await finished(page)

    assert "permission: selected no" in run(refuse())
    assert len(shown) == 2


def test_a_question_nobody_answers_closes_by_itself_and_is_refused(
    qtbot: QtBot, setup: Setup, run: Any
) -> None:
    with own_page(qtbot, setup, run, replace(SHORT, question_timeout=0.5)) as page:
        send(page, [ask()])

        async def wait() -> tuple[list[int], str]:
            dialog = await question(page)
            closed: list[int] = []
            dialog.finished.connect(closed.append)
            return closed, await finished(page)

        closed, text = run(wait())
    assert closed and page.questions.dialog is None
    assert "permission: selected no" in text
    assert said(text, "Permission: Run the tests [execute] — refused (no answer in time)")


def test_without_a_reject_option_a_refusal_answers_cancelled_never_an_allow(
    page: AgentsPage, run: Any, qtbot: QtBot
) -> None:
    send(page, [ask(options=[["once", "Yes", "allow_once"], ["always", "Always", "allow_always"]])])

    async def refuse() -> str:
        dialog = await question(page)
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)
        return await finished(page)

    text = run(refuse())
    assert "permission: cancelled" in text
    assert "permission: selected" not in text
    assert said(text, "Permission: Run the tests [execute] — refused")


ENDED = "refused: the agent ended before the question was answered"


@pytest.mark.parametrize("question_kind", ["permission", "write"])
def test_an_agent_killed_while_its_question_is_open_closes_the_question_and_says_it_was_refused_once(
    page: AgentsPage, setup: Setup, run: Any, question_kind: str
) -> None:
    target = setup.root / "notes.md"
    if question_kind == "permission":
        step, line, operation = (
            ask(),
            f"Permission: Run the tests [execute] — {ENDED}",
            "session/request_permission",
        )
    else:
        page.picker.write.setChecked(True)
        step, line, operation = (
            {"write": str(target), "content": "new"},
            f"Not written: {target} — {ENDED}",
            "fs/write_text_file",
        )
    send(page, [{"pid": 1}, step])

    async def kill() -> tuple[list[int], str]:
        dialog = await question(page)
        closed: list[int] = []
        dialog.finished.connect(closed.append)
        await until_text(page, " pgid ")
        pid = int(page.transcript.toPlainText().split("pid ")[1].split()[0])
        os.kill(pid, signal.SIGKILL)
        return closed, await finished(page)

    closed, text = run(kill())
    assert closed and page.questions.dialog is None
    assert said(text, "The agent failed:") == [
        "The agent failed: the agent stopped during the turn (exit code -9)"
    ]
    assert [x for x in text.splitlines() if ENDED in x] == [line]
    assert text.index(line) < text.index("The agent failed:")
    records = [r for r in audit_records(setup) if r.operation == operation]
    assert [r.decision for r in records] == ["cancelled"]
    assert not target.exists()
    assert page.session is None and page.picker.isEnabled()


def test_a_terminal_request_is_refused_and_shown_as_its_own_plain_line_and_not_audited(
    page: AgentsPage, setup: Setup, run: Any
) -> None:
    command = {"terminal": "rm\u202e", "args": ["-rf", "<b>all</b>", "\x1b[2J"]}
    send(page, [command, {"say": "after"}])
    text = run(finished(page))
    assert said(text, "Helm refused to run a command") == [
        "Helm refused to run a command for the agent (Helm offers no terminal): "
        "'rm[U+202E]' -rf '<b>all</b>' '[U+001B][2J'"
    ]
    assert "terminal error: Method not found" in text  # the agent was told no, as before
    assert said(text, "Helm refused") == said(text, "Helm refused to run a command")
    assert audit_records(setup) == []  # the broker audits no terminal request, so neither does the page


def test_a_crash_mid_turn_shows_the_exit_code_and_the_end_of_stderr_and_the_next_prompt_starts_again(
    page: AgentsPage, run: Any
) -> None:
    noise = "".join(f"line {i:05d} of noise\n" for i in range(2000))  # far more than the tail kept
    send(page, [{"say": "working"}, {"crash": 3, "stderr": noise + "Traceback: it broke\n"}])
    text = run(finished(page))
    assert said(text, "The agent failed:")[0].endswith("(exit code 3)")
    tail = text.split("What it wrote to stderr (last lines):\n")[1]
    assert tail.rstrip().endswith("Traceback: it broke")
    assert "line 00000 of noise" not in tail and len(tail) <= 5000
    assert page.session is None
    send(page, [{"say": "again"}])
    assert "\nagain" in run(finished(page))


def test_an_agent_that_does_not_start_in_time_is_stopped_and_reported_with_its_stderr(
    qtbot: QtBot, setup: Setup, run: Any
) -> None:
    setup.add_agent("slow", "--hang-at-start")
    with own_page(qtbot, setup, run, replace(SHORT, startup=1.0)) as page:
        page.picker.agent.setCurrentIndex(page.picker.agent.findData("slow"))
        send(page, [{"say": "hi"}])
        text = run(finished(page))
    failed = said(text, "The agent failed:")
    assert failed == ["The agent failed: the agent did not start within 1 s (initialize and session/new) "
                      "(exit code -15)"]  # fmt: skip
    assert "What it wrote to stderr (last lines):\nstarting slowly" in text
    assert page.session is None


def test_a_project_session_runs_in_the_project_and_cannot_read_the_rest_of_the_workspace_by_any_path(
    page: AgentsPage, setup: Setup, run: Any
) -> None:
    project = setup.root / "app"
    project.mkdir()
    (project / "main.py").write_text("print('inside')\n")
    (setup.root / "secret.txt").write_text("outside the project\n")
    (project / "link.txt").symlink_to(setup.root / "secret.txt")
    add_project(setup.home, "ws", "app", project)
    page.reload()
    page.picker.folder.setCurrentIndex(page.picker.folder.findData("app"))
    escape = str(project / ".." / "secret.txt")
    send(
        page,
        [
            {"cwd": 1},
            {"read": str(project / "main.py")},
            {"read": escape},
            {"read": str(setup.root / "secret.txt")},
            {"read": str(project / "link.txt")},
        ],
    )
    text = run(finished(page))
    answers = text.split("You: ")[1].split("\n", 1)[1]  # after the prompt, which names the paths
    assert answers.startswith(f"{project}\nRead {project / 'main.py'}\n")  # its working folder, then the read
    assert "read ok: print('inside')" in text
    assert "outside the project" not in text
    assert len(said(text, "Helm refused to read")) == 3


def test_without_allow_changes_a_write_is_refused_and_no_question_is_shown(
    page: AgentsPage, setup: Setup, run: Any
) -> None:
    shown = dialogs_of(page)
    target = setup.root / "notes.md"
    target.write_text("kept\n")
    assert not page.picker.write.isChecked()
    send(page, [{"write": str(target), "content": "changed\n"}, ask("Edit notes.md", "edit")])
    text = run(finished(page))
    assert shown == []
    assert target.read_text() == "kept\n"
    assert "write error:" in text and said(text, f"Helm refused to write {target}")
    assert "permission: selected no" in text
    assert said(text, "Permission: Edit notes.md [edit] — refused by Helm's policy")


def test_a_read_question_is_allowed_by_policy_only_for_an_agent_whose_profile_allows_reads(
    page: AgentsPage, setup: Setup, run: Any
) -> None:
    setup.add_agent("reader", allow_reads=True)
    page.reload()
    shown = dialogs_of(page)
    read = [ask("Read a.py", "read", locations=[str(setup.root / "a.py")])]
    page.picker.agent.setCurrentIndex(page.picker.agent.findData("reader"))
    send(page, read)
    text = run(finished(page))
    assert shown == []
    assert "permission: selected once" in text
    assert said(text, "Permission: Read a.py [read] — allowed by Helm's policy")

    page.picker.agent.setCurrentIndex(page.picker.agent.findData("scripted"))
    send(page, read)

    async def refuse() -> None:
        dialog = await question(page)
        dialog.reject()
        await finished(page)

    run(refuse())
    assert len(shown) == 1


def test_a_flood_of_updates_is_all_shown(page: AgentsPage, run: Any) -> None:
    send(page, [{"flood": 3000, "size": 7}, {"say": "\nthe end"}])
    text = run(finished(page))
    body = text.split("You: ")[1].split("\n", 1)[1]
    assert body.replace("\n", "").count("x") == 3000 * 7
    assert body.index("the end") > body.rindex("x")
