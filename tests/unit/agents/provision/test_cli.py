"""``helm agent add NAME --package SPEC``, ``helm agent verify NAME`` and the profile launcher."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import main
from app.commands import agent_provision
from broker.agents.provision import CatalogueSource
from broker.agents.provision.store import Store
from broker.audit import AuditLog
from tests.unit.agents.provision.conftest import Demo


@pytest.fixture
def cli(demo: Demo, monkeypatch: pytest.MonkeyPatch) -> Demo:
    """The CLI reads only Helm's shipped catalogue: here it is the test's, signed by the test's key."""
    monkeypatch.setattr(CatalogueSource, "shipped", classmethod(lambda cls: demo.source))
    monkeypatch.setenv("HELM_NPM_REGISTRY", demo.registry.url)
    return demo


def helm(demo: Demo, *args: str) -> int:
    return main([*args, "--home", str(demo.home)])


def test_add_installs_and_prints_the_profile_command(cli: Demo, capsys: pytest.CaptureFixture[str]) -> None:
    assert helm(cli, "agent", "add", "my-echo", "--package", "@helm-test/echo-acp@1.0.0") == 0

    out = capsys.readouterr().out
    assert "3 tarballs verified" in out
    assert out.splitlines()[-1].endswith(f"agent start-adapter echo --home {cli.home.resolve()}")


def test_verify_exits_1_when_the_install_was_tampered_with(
    cli: Demo, capsys: pytest.CaptureFixture[str]
) -> None:
    helm(cli, "agent", "add", "my-echo", "--package", "echo")
    assert helm(cli, "agent", "verify", "echo") == 0
    entry = next(Store(cli.home).installs.glob("*/node_modules/@helm-test/echo-acp/index.js"))
    entry.write_text("process.exit(0)\n")

    assert helm(cli, "agent", "verify", "echo") == 1
    assert "echo: tampered" in capsys.readouterr().out


def test_verify_exits_1_when_nothing_is_installed(cli: Demo, capsys: pytest.CaptureFixture[str]) -> None:
    assert helm(cli, "agent", "verify", "echo") == 1
    assert "echo: missing" in capsys.readouterr().out


def test_add_with_a_package_outside_the_catalogue_fails(
    cli: Demo, capsys: pytest.CaptureFixture[str]
) -> None:
    assert helm(cli, "agent", "add", "x", "--package", "left-pad") == 1
    assert "not in Helm's signed catalogue" in capsys.readouterr().err
    assert cli.registry.requests == []


def test_add_with_a_bad_catalogue_signature_fails_before_any_download(
    cli: Demo, capsys: pytest.CaptureFixture[str]
) -> None:
    cli.source.catalogue.write_bytes(cli.source.catalogue.read_bytes().replace(b"1.0.0", b"1.0.1"))

    assert helm(cli, "agent", "add", "my-echo", "--package", "echo") == 1
    assert "does not verify" in capsys.readouterr().err
    assert cli.registry.requests == []


def test_the_launcher_reprovisions_a_tampered_install_then_runs_node(
    cli: Demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    helm(cli, "agent", "add", "my-echo", "--package", "echo")
    tampered = next(Store(cli.home).installs.glob("*/node_modules/@helm-test/echo-acp/index.js"))
    tampered.write_text("process.exit(0)\n")
    started: list[list[str]] = []

    def stand_in(program: str, argv: list[str]) -> None:
        started.append(argv)
        raise SystemExit(0)

    monkeypatch.setattr(agent_provision, "replace_process", stand_in)
    with pytest.raises(SystemExit):
        helm(cli, "agent", "start-adapter", "echo")

    [argv] = started
    assert argv[0].endswith("node") and Path(argv[1]).read_text().startswith("const greeting")
    assert not tampered.exists()
    assert [r.decision for r in AuditLog(cli.home / "audit.jsonl").records()][-1] == "reprovisioned"
