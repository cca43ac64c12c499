"""A full disk, for real: every kind of save on a small tmpfs the test mounts (as root, as in CI).

The filesystem is mounted in a private mount namespace of the helper (``unshare``), so it is
gone with the helper whatever happens. See ``full_disk_child`` for what is checked.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="mounting needs root")
def test_every_save_on_a_full_disk_fails_clearly_changes_nothing_and_works_once_space_is_freed(
    tmp_path: Path,
) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    script = 'mount -t tmpfs -o size=1m,mode=0700 helm-full-disk "$1" && exec "$2" -m "$3" "$1"'
    argv = [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        script,
        "sh",
        str(disk),
        sys.executable,
        "tests.unit.full_disk_child",
    ]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
    assert os.listdir(disk) == []  # the small filesystem never showed outside the helper
