"""What the desktop imports before its window can show: Helm's own modules, not the MCP SDK (a
third of a second) nor the http kind's client, which wait until something uses them; nor the
JSON Schema validator (the first manifest read, once the window is painted) or the signature
library (the first catalogue verified)."""

from __future__ import annotations

import subprocess
import sys


def test_the_window_imports_neither_the_mcp_sdk_nor_httpx() -> None:
    code = "import sys, app.window; print(sorted({m.split('.')[0] for m in sys.modules} & {'mcp', 'httpx'}))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "[]"


def test_the_window_imports_no_acp_sdk_until_the_agents_tab_is_shown() -> None:
    code = "import sys, app.window; print(sorted({'acp', 'broker.agents'} & set(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "[]"


def test_a_command_of_one_group_imports_neither_the_agents_nor_the_mcp_sdk(tmp_path) -> None:
    # `helm workspace add` builds that group's parser alone: a script calling it in a loop does
    # not wait for the SDKs of groups it never uses (most of a second at every call).
    code = (
        "import sys; from app.cli import main\n"
        f"code = main(['--home', {str(tmp_path / 'home')!r}, 'workspace', 'add', 'ws', {str(tmp_path)!r}])\n"
        "print(code, sorted({m.split('.')[0] for m in sys.modules} & {'acp', 'mcp', 'httpx'}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip().splitlines()[-1] == "0 []"


def test_the_window_imports_neither_jsonschema_nor_cryptography() -> None:
    code = (
        "import sys, app.window; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'jsonschema', 'cryptography'}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "[]"
