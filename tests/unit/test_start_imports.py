"""What the desktop imports before its window can show: Helm's own modules, not the MCP SDK (a
third of a second) nor the http kind's client, which wait until something uses them."""

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
