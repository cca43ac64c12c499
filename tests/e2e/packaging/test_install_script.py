"""The bundle's ``install.sh``: the launcher and icons in the user's data folder, then gone."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def bundle_folder(target: Path) -> Path:
    """The files build-linux.sh puts beside the program, and a program that prints its name."""
    target.mkdir()
    shutil.copy(ROOT / "packaging" / "linux" / "install.sh", target)
    shutil.copy(ROOT / "packaging" / "linux" / "helm.desktop", target)
    shutil.copy(ROOT / "resources" / "icons" / "helm.png", target)
    shutil.copy(ROOT / "resources" / "icons" / "helm.svg", target)
    shutil.copytree(ROOT / "resources" / "icons" / "hicolor", target / "icons")
    program = target / "helm"
    program.write_text("#!/bin/sh\necho helm-from-bundle\n")
    program.chmod(0o755)
    return target


def install(folder: Path, home: Path, *args: str) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    subprocess.run([str(folder / "install.sh"), *args], env=env, check=True, capture_output=True)


def test_install_adds_a_launcher_for_this_folder_with_its_icons_and_uninstall_removes_them(
    tmp_path: Path,
) -> None:
    folder = bundle_folder(tmp_path / "helm 0.1.0")
    home = tmp_path / "user"
    install(folder, home)

    share = home / ".local" / "share"
    installed = [
        share / "applications" / "helm.desktop",
        share / "icons" / "hicolor" / "scalable" / "apps" / "helm.svg",
        home / ".local" / "bin" / "helm",
        *(share / "icons" / "hicolor" / f"{n}x{n}" / "apps" / "helm.png" for n in (16, 24, 32, 48, 256, 512)),
    ]
    assert all(path.exists() for path in installed)
    entry = configparser.ConfigParser(interpolation=None)
    entry.read(installed[0])
    assert entry["Desktop Entry"]["Exec"] == f'"{folder}/helm"'
    assert entry["Desktop Entry"]["Icon"] == "helm"
    linked = subprocess.run([installed[2]], capture_output=True, text=True, check=True)
    assert linked.stdout == "helm-from-bundle\n"

    install(folder, home, "--uninstall")
    assert not any(path.exists() or path.is_symlink() for path in installed)
    assert not list((share / "icons").rglob("helm.png"))
    assert (folder / "helm").is_file()  # the bundle itself stays
