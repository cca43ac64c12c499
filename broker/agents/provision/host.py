"""The machine an adapter is installed for, named the way npm's ``os``/``cpu``/``libc`` fields are.

Packages with native parts (codex-acp's binary, sharp's image library) publish one optional
package per platform; the catalogue pins all of them and Helm installs the ones whose
constraints this host meets, as npm would.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Sequence
from dataclasses import dataclass

_OS = {"linux": "linux", "darwin": "darwin", "win32": "win32"}
_CPU = {
    "x86_64": "x64",
    "amd64": "x64",
    "aarch64": "arm64",
    "arm64": "arm64",
    "armv7l": "arm",
    "armv6l": "arm",
    "i386": "ia32",
    "i686": "ia32",
    "x86": "ia32",
}


@dataclass(frozen=True)
class Host:
    os: str
    cpu: str
    libc: str | None = None

    @classmethod
    def current(cls) -> Host:
        os_name = _OS.get(sys.platform, sys.platform)
        cpu = _CPU.get(platform.machine().lower(), platform.machine().lower())
        libc = None
        if os_name == "linux":
            libc = "glibc" if platform.libc_ver()[0] == "glibc" else "musl"
        return cls(os_name, cpu, libc)

    def meets(self, os: Sequence[str], cpu: Sequence[str], libc: Sequence[str]) -> bool:
        """npm's rule for each field: ``!x`` excludes x; any plain value makes it a whitelist."""
        return _allows(os, self.os) and _allows(cpu, self.cpu) and _allows(libc, self.libc)

    def to_json(self) -> dict[str, str | None]:
        return {"os": self.os, "cpu": self.cpu, "libc": self.libc}


def _allows(values: Sequence[str], mine: str | None) -> bool:
    if not values:
        return True
    if mine is None:  # libc is only meaningful on Linux; npm ignores it elsewhere
        return True
    if f"!{mine}" in values:
        return False
    plain = [v for v in values if not v.startswith("!")]
    return not plain or mine in plain
