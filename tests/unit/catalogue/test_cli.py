"""The catalogue from the command line, as a publisher and a user run it: keygen, pack, add-release,
sign, catalogue add, ext install --catalogue, ext update (declined, then approved), rollback."""

from __future__ import annotations

import base64
import io
import json
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import pytest
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from app.cli import main
from broker import approval, signatures
from broker.settings import Home
from tests.helpers import write_extension
from tests.unit.catalogue.conftest import EXT, FILES, Served, board
from tests.unit.policy.policy_setup import PolicyFile


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


class Helm(Protocol):
    def __call__(self, *argv: str, home: Path, stdin: str = "") -> Done: ...


@pytest.fixture
def helm(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Helm:
    """``helm`` run in this process (the parser and handlers users run), its output captured."""

    def run(*argv: str, home: Path, stdin: str = "") -> Done:
        monkeypatch.setenv("HELM_HOME", str(home))
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        capsys.readouterr()
        code = main(list(argv))
        out, err = capsys.readouterr()
        assert "PRIVATE KEY" not in out + err
        return Done(code, out, err)

    return run


def test_a_publisher_signs_a_catalogue_and_a_user_installs_updates_and_steps_back(
    tmp_path: Path, served: Served, helm: Helm
) -> None:
    home, catalogue = tmp_path / "home", tmp_path / "catalogue"
    key, pub = tmp_path / "signing.key", tmp_path / "signing.pub"
    assert (
        helm("catalogue", "keygen", "--private-out", str(key), "--public-out", str(pub), home=home).returncode
        == 0
    )
    assert stat.S_IMODE(key.stat().st_mode) == 0o600

    def publish(version: str, **changes: object) -> None:
        source = write_extension(tmp_path / "src" / version, board(version, **changes))
        out = tmp_path / f"{version}.tar.gz"
        assert helm("ext", "pack", str(source), "--out", str(out), home=home).returncode == 0
        assert helm("catalogue", "add-release", str(catalogue), str(out), home=home).returncode == 0
        assert helm("catalogue", "sign", str(catalogue), "--key-file", str(key), home=home).returncode == 0

    publish("1.0.0")
    (tmp_path / "root").mkdir()
    assert helm("workspace", "add", "ws", str(tmp_path / "root"), home=home).returncode == 0
    added = helm("catalogue", "add", "acme", served.url, "--key", str(pub), home=home)
    assert added.returncode == 0, added.stderr
    assert "index serial 1 verified" in added.stdout
    shown = helm("catalogue", "show", "acme", home=home).stdout
    assert f"{EXT}@1.0.0  active" in shown and "    [notes] files — files in the workspace" in shown

    installed = helm("ext", "install", EXT, "--catalogue", "acme", "-w", "ws", home=home, stdin="y\n")
    assert installed.returncode == 0, installed.stderr
    assert "signature, archive sha256 and manifest verified" in installed.stdout
    assert "[notes] files — files in the workspace" in installed.stdout  # the usual review
    assert f"installed and approved {EXT} in ws" in installed.stdout

    publish("1.1.0", connections=[dict(FILES, paths=["notes/*.md", "secrets/*"])])
    declined = helm("ext", "update", "-w", "ws", home=home, stdin="n\n")
    assert declined.returncode == 1
    assert "Update com.example.board 1.0.0 → 1.1.0 (catalogue acme)" in declined.stdout
    assert "  - [notes] new glob secrets/*" in declined.stdout
    assert "1.0.0 keeps running as approved" in declined.stdout
    assert _installed_version(home) == "1.0.0"

    approved = helm("ext", "update", "-w", "ws", home=home, stdin="y\n")
    assert approved.returncode == 0, approved.stderr
    assert _installed_version(home) == "1.1.0"
    assert helm("ext", "update", "-w", "ws", home=home).stdout.strip() == "no updates"

    back = helm("ext", "rollback", "-w", "ws", EXT, home=home)
    assert back.returncode == 0, back.stderr
    assert _installed_version(home) == "1.0.0"
    listed = json.loads(helm("ext", "list", "-w", "ws", "--json", home=home).stdout)
    assert [(r["version"], r["state"]) for r in listed] == [("1.0.0", "approved")]


def _installed_version(home: Path) -> str:
    settings = json.loads((home / "settings.json").read_text())
    path = Path(settings["workspaces"]["ws"]["extensions"][EXT]["path"])
    return str(json.loads((path / "manifest.json").read_text())["version"])


def test_a_signing_key_other_users_can_read_is_refused(tmp_path: Path, helm: Helm) -> None:
    key, pub = tmp_path / "k", tmp_path / "k.pub"
    assert (
        helm(
            "catalogue", "keygen", "--private-out", str(key), "--public-out", str(pub), home=tmp_path
        ).returncode
        == 0
    )
    again = helm("catalogue", "keygen", "--private-out", str(key), "--public-out", str(pub), home=tmp_path)
    assert again.returncode == 1 and "never writes a key over another" in again.stderr
    key.chmod(0o644)
    (tmp_path / "cat").mkdir()
    signed = helm("catalogue", "sign", str(tmp_path / "cat"), "--key-file", str(key), home=tmp_path)
    assert signed.returncode == 1
    assert "readable by other users: chmod 600 it first" in signed.stderr
    assert not (tmp_path / "cat" / "index.sig").exists()


def test_a_catalogue_whose_index_does_not_verify_is_not_added(
    tmp_path: Path, served: Served, helm: Helm
) -> None:
    other = tmp_path / "other.pub"
    helm(
        "catalogue", "keygen", "--private-out", str(tmp_path / "o"), "--public-out", str(other), home=tmp_path
    )
    added = helm("catalogue", "add", "acme", served.url, "--key", str(other), home=tmp_path / "home")
    assert added.returncode == 1
    assert "catalogue acme: its index" in added.stderr
    assert "acme" not in helm("catalogue", "list", home=tmp_path / "home").stdout


def test_http_is_refused_for_a_catalogue_off_loopback(tmp_path: Path, helm: Helm) -> None:
    helm(
        "catalogue",
        "keygen",
        "--private-out",
        str(tmp_path / "k"),
        "--public-out",
        str(tmp_path / "p"),
        home=tmp_path,
    )
    added = helm(
        "catalogue", "add", "acme", "http://example.com/cat/", "--key", str(tmp_path / "p"), home=tmp_path
    )
    assert added.returncode == 1
    assert "must be https" in added.stderr


def test_a_policy_names_the_catalogue_and_allows_only_what_came_from_it(
    tmp_path: Path, served: Served, helm: Helm, policy: PolicyFile
) -> None:
    home, catalogue = tmp_path / "home", tmp_path / "catalogue"
    key, pub = tmp_path / "signing.key", tmp_path / "signing.pub"
    assert (
        helm("catalogue", "keygen", "--private-out", str(key), "--public-out", str(pub), home=home).returncode
        == 0
    )
    source = write_extension(tmp_path / "src", board("1.0.0"))
    archive = tmp_path / "board.tar.gz"
    assert helm("ext", "pack", str(source), "--out", str(archive), home=home).returncode == 0
    assert helm("catalogue", "add-release", str(catalogue), str(archive), home=home).returncode == 0
    assert helm("catalogue", "sign", str(catalogue), "--key-file", str(key), home=home).returncode == 0
    raw_key = signatures.public_key(pub.read_bytes()).public_bytes(Encoding.Raw, PublicFormat.Raw)
    corp = {"name": "corp", "url": served.url, "public_key": base64.b64encode(raw_key).decode()}
    policy.write({"extensions": {"catalogues": ["corp"]}, "catalogues": [corp]})
    (tmp_path / "root").mkdir()
    assert helm("workspace", "add", "ws", str(tmp_path / "root"), home=home).returncode == 0

    from_folder = helm("ext", "install", str(source), "-w", "ws", "--approve", home=home)
    assert from_folder.returncode != 0
    assert "(extensions.catalogues)" in from_folder.stderr
    assert EXT not in Home(home).settings().workspace("ws").extensions  # nothing was installed

    # The user never added "corp": the policy's catalogue is the one Helm installs from.
    installed = helm("ext", "install", EXT, "--catalogue", "corp", "-w", "ws", home=home, stdin="y\n")
    assert installed.returncode == 0, installed.stderr
    assert f"installed and approved {EXT} in ws" in installed.stdout
    ws = Home(home).settings().workspace("ws")
    assert ws.extensions[EXT].origin == "corp"
    assert approval.check(ws, EXT).allows_calls  # its calls run, under the policy in force
    policy.write({"extensions": {"catalogues": ["other"]}, "catalogues": [corp]})
    assert not approval.check(Home(home).settings().workspace("ws"), EXT).allows_calls
