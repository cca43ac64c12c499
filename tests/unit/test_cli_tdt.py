"""``helm call`` against the real TDT: a preview seen by one process is applied by another."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from app.cli import main
from tests.helpers import manifest_dict, write_extension
from tests.servers.tdt import TdtWorkspace

CONN = {
    "id": "tdt",
    "kind": "tdt-mcp",
    "operations": ["tdt_brain_names_preview", "tdt_brain_names_status"],
    "writes": ["tdt_brain_names_apply"],
}


def helm(home: Path, *argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HELM_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )


def test_a_preview_from_one_helm_call_is_applied_by_another_and_shown(
    tmp_path: Path, tdt_workspace: TdtWorkspace, tdt_program: list[str]
) -> None:
    home = tmp_path / "home"
    folder = write_extension(tmp_path / "ext", manifest_dict([CONN], write=True))
    for argv in (
        ("workspace", "add", "w", str(tdt_workspace.root)),
        ("workspace", "everyday", "w", "on"),
        ("workspace", "tdt-command", "w", "--", *tdt_program),
        ("ext", "install", str(folder), "-w", "w", "--approve"),
    ):
        assert main(["--home", str(home), *argv]) == 0  # set-up in-process; each call is a process
    call = ("call", "-w", "w", "-e", "com.example.test", "tdt")
    preview = json.loads(helm(home, *call, "tdt_brain_names_preview").stdout)
    proposal = preview["data"]["proposal_sha256"]
    args = json.dumps({"expected_sha256": proposal})
    declined = helm(home, *call, "tdt_brain_names_apply", "--args", args, stdin="\n")
    applied = helm(home, *call, "tdt_brain_names_apply", "--args", args, stdin="y\n")
    unknown = helm(home, *call, "tdt_brain_names_apply", "--args", json.dumps({"expected_sha256": "1" * 64}))
    status = json.loads(
        helm(
            home, *call, "tdt_brain_names_status", "--args", json.dumps({"proposal_sha256": proposal})
        ).stdout
    )
    assert json.loads(declined.stdout)["error"]["code"] == "declined"
    assert applied.returncode == 0, applied.stderr
    assert f"brain/knowledge/{tdt_workspace.legacy_note}" in applied.stderr  # the dialog showed the preview
    assert f"from tdt_brain_names_preview, hash {proposal}" in applied.stderr
    assert json.loads(applied.stdout)["data"]["status"] == "completed"
    assert json.loads(unknown.stdout)["error"]["code"] == "refused"
    assert "Send this write?" not in unknown.stderr  # refused before any question
    assert status["data"]["status"] == "completed"
    assert not (tdt_workspace.root / "brain" / "knowledge" / tdt_workspace.legacy_note).exists()
