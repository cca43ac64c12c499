"""The calls the CLI, the UI and the agent runner make: each loads and verifies the catalogue first.

``load_catalogue`` checks the Ed25519 signature before anything else happens, so a catalogue
that fails it stops every one of these calls before a single byte is downloaded.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from broker.agents.provision.catalogue import Adapter
from broker.agents.provision.provisioner import Installed, Launch, Provisioner, Verification, node_path
from broker.agents.provision.registry import InstallLimits, new_client
from broker.agents.provision.signing import CatalogueSource, load_catalogue


@dataclass(frozen=True)
class Options:
    """Where the catalogue and the registry are; the defaults are Helm's shipped catalogue and
    ``HELM_NPM_REGISTRY`` (or the public npm registry)."""

    source: CatalogueSource | None = None
    registry_url: str | None = None
    limits: InstallLimits | None = None


@dataclass(frozen=True)
class Added:
    adapter: Adapter
    installed: Installed
    launch: Launch


@contextlib.asynccontextmanager
async def provisioner(home: Path, options: Options | None = None) -> AsyncIterator[Provisioner]:
    """A ``Provisioner`` on the verified catalogue, with its own HTTP client for the call."""
    options = options or Options()
    catalogue = load_catalogue(options.source)
    async with new_client() as client:
        yield Provisioner(home, catalogue, client, registry_url=options.registry_url, limits=options.limits)


async def add(home: Path, spec: str, options: Options | None = None) -> Added:
    """Install the catalogue adapter ``spec`` names (adapter name, package or package@version)."""
    async with provisioner(home, options) as p:
        adapter = p.catalogue.find(spec)
        node_path()  # no point downloading what cannot run here
        installed = await p.install(adapter.name)
        launch = await p.ensure(adapter.name)
    return Added(adapter, installed, launch)


async def verify(home: Path, name: str, options: Options | None = None) -> Verification:
    """Re-hash ``name``'s install against its receipt; nothing is changed or downloaded."""
    async with provisioner(home, options) as p:
        return await p.verify(name)


async def ensure(home: Path, name: str, options: Options | None = None) -> Launch:
    """Before each start: verify ``name``, provision it again if tampered or missing, say how to run it."""
    async with provisioner(home, options) as p:
        return await p.ensure(name)


async def remove(home: Path, name: str, options: Options | None = None) -> bool:
    """Delete ``name``'s installs (the catalogue is still verified: it names what may exist)."""
    async with provisioner(home, options) as p:
        return await p.remove(name)
