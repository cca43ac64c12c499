"""The bundle's program: the ``helm`` command line, and the demo's own servers.

Helm starts the demo's MCP servers as ``[sys.executable, <script>]``. In a bundle
``sys.executable`` is this program, so a first argument that names one of the bundled demo
server scripts runs that script with the bundle's Python. Nothing else is run this way: any
other argument is Helm's command line as usual.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path


def demo_server(argv: list[str]) -> Path | None:
    if len(argv) < 2 or not argv[1].endswith(".py"):
        return None
    import resources

    servers = resources.path("demo", "servers").resolve()
    script = Path(argv[1]).resolve()
    return script if script.parent == servers and script.is_file() else None


def main() -> int:
    script = demo_server(sys.argv)
    if script is not None:
        sys.argv = [str(script), *sys.argv[2:]]
        runpy.run_path(str(script), run_name="__main__")
        return 0
    from app.cli import main as helm

    return helm()


if __name__ == "__main__":
    sys.exit(main())
