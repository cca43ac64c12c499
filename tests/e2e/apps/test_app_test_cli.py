"""``helm app test`` as CI runs it: a real process, an official example or a misbehaving app
opened headless as the dashboard opens it, a line per call, refusal and console error, the
app's text, and the exit code — with nothing saved in the Helm home."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.apps.examples import EXAMPLES, example_entry
from tests.e2e.dev.terminal_kit import REPO
from tests.helpers import new_broker
from tests.servers import services
from tests.servers.services import mcp_app_command
from tests.support import require
from tests.unit.apps.app_setup import BOARD
from tests.unit.kinds.mcp_setup import add_stdio

T = r"^\d\d:\d\d:\d\d\.\d{3} "
MISBEHAVES = """<script type="module">
await window.board.ready;
await window.board.call("add_item", { text: "from the app" }).catch(() => {});
console.error("the board could not save its item");
</script>"""


def app_test(home: Path, root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """The command run in ``root`` (the server's working folder), as a user's CI runs it."""
    command = [sys.executable, "-m", "app.cli", "app", "test", "--home", str(home), *argv]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        command, cwd=root, env=env, capture_output=True, text=True, timeout=180, check=False
    )


def home_with(tmp: Path, server: str, command: list[str]) -> tuple[Path, Path, dict[str, bytes]]:
    """A Helm home with one MCP server and no workspace, a folder to run in, and the home's files."""
    home, root = tmp / "home", tmp / "root"
    root.mkdir()
    add_stdio(new_broker(home), server, command)
    return home, root, files(home)


def files(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file()}


def test_an_official_example_that_renders_its_tools_result_passes_and_prints_its_text(tmp_path: Path) -> None:
    require(services.node(), "the MCP Apps examples need node")
    require(EXAMPLES.is_dir(), "the MCP Apps examples are not installed in .test-deps/apps-examples")
    command = [services.node() or "node", str(example_entry("basic-vanillajs")), "--stdio"]
    home, root, before = home_with(tmp_path, "vanilla", command)
    done = app_test(home, root, "--server", "vanilla", "ui://get-time/mcp-app.html", "--read", "get-time")
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr
    assert any(re.match(T + r"call    app\.get-time \d+ ms ok$", line) for line in lines)
    text = next(i for i, line in enumerate(lines) if re.match(T + "text    ", line))
    assert "Server Time:" in "\n".join(lines[text : text + 4])
    assert re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", "\n".join(lines[text:])), "the tool's result shows"
    assert lines[-1].endswith("result  PASS: the app rendered; 1 call(s), nothing failed or was refused")
    assert files(home) == before, "no workspace, approval, activity or state is saved"


@pytest.mark.usefixtures("mcp_app_server")
def test_an_app_that_writes_and_logs_an_error_fails_with_the_write_declined_and_both_reported(
    tmp_path: Path,
) -> None:
    extra = tmp_path / "misbehaves.html"
    extra.write_text(MISBEHAVES, encoding="utf-8")
    home, root, before = home_with(tmp_path, "board", mcp_app_command("--extra", str(extra)))
    done = app_test(home, root, "--server", "board", BOARD)
    lines = done.stdout.splitlines()
    assert done.returncode == 1, done.stdout + done.stderr
    assert any(re.match(T + r"call    app\.show_board \d+ ms ok$", line) for line in lines)
    assert any(re.match(T + r"write   declined app\.add_item: helm app test declines every write", line)
               for line in lines)  # fmt: skip
    assert any(re.match(T + r"call    app\.add_item \d+ ms declined: ", line) for line in lines)
    assert any(re.match(T + r"error   the board could not save its item \(", line) for line in lines)
    assert any(re.match(T + r"text    Board$", line) for line in lines)
    assert lines[-1].endswith("result  FAIL: the app rendered; 2 problem(s)")
    assert files(home) == before, "no workspace, approval, activity or state is saved"
