"""Starts a program after leaving a mark that it was started: ``started_marker.py MARK ARGV...``.

What an MCP profile runs in the policy tests, so a test can tell that the policy kept a server
from ever starting (no mark) from a server that started and answered (a mark).
"""

import os
import sys
from pathlib import Path

Path(sys.argv[1]).write_text("started", encoding="utf-8")
os.execv(sys.argv[2], sys.argv[2:])
