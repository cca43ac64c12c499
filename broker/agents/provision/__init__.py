"""Verifiable provisioning of ACP agent adapters published on the npm registry.

Helm ships a catalogue of known adapters, signed with Ed25519, that pins every tarball of each
adapter's dependency tree by sha512. Installing downloads and checks each tarball before
extracting it, never runs an install script, and makes the finished tree visible atomically
with a receipt of its digest; every start re-verifies the receipt and re-provisions a tampered
install. See docs/agents.md ("Provisioning agent adapters").
"""

from broker.agents.provision.api import Added, Options, add, ensure, remove, verify
from broker.agents.provision.catalogue import Adapter, Catalogue, Pinned
from broker.agents.provision.errors import (
    ArchiveError,
    CatalogueError,
    DownloadError,
    IntegrityError,
    ProvisionError,
    SignatureError,
)
from broker.agents.provision.host import Host
from broker.agents.provision.provisioner import Installed, Launch, Provisioner, State, Verification
from broker.agents.provision.registry import InstallLimits, registry_url
from broker.agents.provision.signing import CatalogueSource, load_catalogue

__all__ = [
    "Adapter",
    "Added",
    "ArchiveError",
    "Catalogue",
    "CatalogueError",
    "CatalogueSource",
    "DownloadError",
    "Host",
    "InstallLimits",
    "Installed",
    "IntegrityError",
    "Launch",
    "Options",
    "Pinned",
    "ProvisionError",
    "Provisioner",
    "SignatureError",
    "State",
    "Verification",
    "add",
    "ensure",
    "load_catalogue",
    "registry_url",
    "remove",
    "verify",
]
