"""Extracting one verified npm tarball into the staging tree: ``broker.tarball``'s safe
extraction (every rule is there), its refusals as ``ArchiveError``, then npm's one step at
install time — the package's ``bin`` files made executable (publishers often pack them without
the bit; codex-acp's native binary, for one). No link is created: Helm runs the adapter's entry
with Node itself.
"""

from __future__ import annotations

import json
from pathlib import Path

from broker import tarball
from broker.agents.provision.errors import ArchiveError
from broker.agents.provision.registry import InstallBudget


def extract(tgz: Path, dest: Path, label: str, budget: InstallBudget) -> None:
    """Unpack ``tgz`` into ``dest`` (created here); ``label`` names the package in errors."""
    try:
        tarball.extract(tgz, dest, label, budget)
        mark_executables(dest, label)
    except tarball.UnsafeArchive as exc:
        raise ArchiveError(str(exc)) from None


def mark_executables(dest: Path, label: str) -> None:
    """Make the package's ``bin`` files executable, as npm does when it links them."""
    try:
        manifest = json.loads((dest / "package.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return  # a package without a readable package.json has no bin to mark
    bins = manifest.get("bin") if isinstance(manifest, dict) else None
    targets = [bins] if isinstance(bins, str) else list(bins.values()) if isinstance(bins, dict) else []
    for target in targets:
        relative = tarball.member_path(f"package/{target}", label) if isinstance(target, str) else None
        path = dest.joinpath(*relative) if relative else None
        if path is not None and path.is_file() and not path.is_symlink():
            path.chmod(0o755)
