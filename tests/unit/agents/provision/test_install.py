"""Installing adapters from a local registry: verified tarballs, atomic installs, receipts."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import tarfile

import pytest

from broker.agents import provision
from broker.agents.provision import (
    ArchiveError,
    DownloadError,
    IntegrityError,
    State,
)
from broker.agents.provision.store import Store
from broker.audit import AuditLog
from tests.unit.agents.provision.conftest import HOST, OTHER_OS, Demo
from tests.unit.agents.provision.npm_registry import npm_tarball, sri


def assert_nothing_installed(demo: Demo) -> None:
    store = Store(demo.home)
    assert store.ledger() == {}
    assert list(store.installs.iterdir()) == []
    assert list(store.staging.iterdir()) == []


async def test_installed_adapter_runs_with_node_and_finds_its_dependency(demo: Demo) -> None:
    added = await provision.add(demo.home, "@helm-test/echo-acp", demo.options())

    out = subprocess.run(
        [*added.launch.argv, "there"], capture_output=True, text=True, timeout=30, check=True
    )
    assert out.stdout == "hello there"
    assert added.launch.node.endswith("node")
    assert added.installed.tarballs == 3  # the other platform's package is left out


async def test_install_downloads_only_the_packages_this_machine_needs(demo: Demo) -> None:
    await provision.add(demo.home, "echo", demo.options())

    fetched = demo.registry.tarball_requests()
    assert len(fetched) == 3
    assert not any(f"native-{OTHER_OS}" in path for path in fetched)
    tool = Store(demo.home).installs.glob(f"*/node_modules/@helm-test/native-{HOST.os}/bin/tool")
    assert os.access(next(tool), os.X_OK), "a native binary keeps its execute bit"
    entry = next(Store(demo.home).installs.glob("*/node_modules/@helm-test/echo-acp/index.js"))
    assert os.access(entry, os.X_OK), "a package's bin is made executable, as npm does"
    plain = next(Store(demo.home).installs.glob("*/node_modules/@helm-test/greeting/index.js"))
    assert not os.access(plain, os.X_OK)


async def test_install_writes_receipt_and_ledger(demo: Demo) -> None:
    added = await provision.add(demo.home, "echo", demo.options())

    store = Store(demo.home)
    entry = store.ledger()["echo"]
    assert entry.version == "1.0.0" and entry.install == added.installed.folder.name
    receipt = json.loads((added.installed.folder / "receipt.json").read_text())
    catalogue_bytes = demo.source.catalogue.read_bytes()
    assert receipt["catalogue_sha256"] == hashlib.sha256(catalogue_bytes).hexdigest()
    assert receipt["tree_sha512"] == added.installed.tree and receipt["tree_sha512"].startswith("sha512-")
    assert (await provision.verify(demo.home, "echo", demo.options())).state is State.OK


@pytest.mark.parametrize("how", ["registry serves other bytes", "catalogue pins other bytes"])
async def test_a_tarball_that_does_not_match_its_pin_is_never_extracted(demo: Demo, how: str) -> None:
    greeting = demo.registry.packages[("@helm-test/greeting", "1.0.0")]
    evil = npm_tarball("@helm-test/greeting", "1.0.0", {"index.js": "exports.greet = () => 'pwned';\n"})
    if how == "registry serves other bytes":
        greeting.serve = evil
    else:
        demo.entry["tree"][1]["integrity"] = sri(evil)
        demo.resign({"echo": demo.entry})

    with pytest.raises(IntegrityError, match=r"@helm-test/greeting@1\.0\.0"):
        await provision.add(demo.home, "echo", demo.options())
    assert_nothing_installed(demo)


async def test_a_truncated_download_never_becomes_an_install(demo: Demo) -> None:
    demo.registry.packages[("@helm-test/greeting", "1.0.0")].mode = "truncate"

    with pytest.raises(DownloadError, match=r"greeting@1\.0\.0"):
        await provision.add(demo.home, "echo", demo.options())
    assert_nothing_installed(demo)


async def test_a_tarball_over_the_size_bound_is_refused(demo: Demo) -> None:
    demo.registry.packages[("@helm-test/greeting", "1.0.0")].serve = os.urandom(64 * 1024)

    with pytest.raises(DownloadError, match="larger than"):
        await provision.add(demo.home, "echo", demo.options(max_tarball=32 * 1024))
    assert_nothing_installed(demo)


async def test_a_registry_that_hangs_times_out(demo: Demo) -> None:
    demo.registry.packages[("@helm-test/greeting", "1.0.0")].mode = "hang"

    with pytest.raises(DownloadError, match="longer than"):
        await provision.add(demo.home, "echo", demo.options(tarball_seconds=0.5))
    assert_nothing_installed(demo)


@pytest.mark.parametrize(
    ("member", "message"),
    [("package/../../escape.js", "escapes"), ("/etc/evil", "unsafe path"), ("package/a\\b", "unsafe path")],
)
async def test_a_verified_tarball_with_an_escaping_path_is_refused(
    demo: Demo, member: str, message: str
) -> None:
    bad = _tarball_with_member(member)
    greeting = demo.registry.packages[("@helm-test/greeting", "1.0.0")]
    greeting.data = bad
    demo.entry["tree"][1]["integrity"] = sri(bad)
    demo.resign({"echo": demo.entry})

    with pytest.raises(ArchiveError, match=message):
        await provision.add(demo.home, "echo", demo.options())
    assert_nothing_installed(demo)
    assert not (demo.home.parent / "escape.js").exists()


async def test_links_in_a_tarball_are_skipped(demo: Demo) -> None:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, body in (
            ("package/package.json", b"{}"),
            ("package/index.js", b"exports.greet = (n) => n;"),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
        link = tarfile.TarInfo("package/passwd")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
    _replace_greeting(demo, out.getvalue())

    added = await provision.add(demo.home, "echo", demo.options())
    greeting = added.installed.folder / "node_modules/@helm-test/greeting"
    assert sorted(p.name for p in greeting.iterdir()) == ["index.js", "package.json"]


async def test_the_audit_log_records_each_install(demo: Demo) -> None:
    await provision.add(demo.home, "echo", demo.options())

    records = list(AuditLog(demo.home / "audit.jsonl").records())
    assert [(r.connection, r.decision, r.outcome) for r in records] == [("echo", "installed", "ok")]


def _replace_greeting(demo: Demo, data: bytes) -> None:
    demo.registry.packages[("@helm-test/greeting", "1.0.0")].data = data
    demo.entry["tree"][1]["integrity"] = sri(data)
    demo.resign({"echo": demo.entry})


def _tarball_with_member(name: str) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        info = tarfile.TarInfo(name)
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    return out.getvalue()
