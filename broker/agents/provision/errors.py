"""The errors of agent provisioning, part of Helm's one hierarchy (``broker.errors.HelmError``).

``ProvisionError`` is the root; every message is written by Helm and names what failed and
what to do, never a library message that could carry a URL with credentials::

    ProvisionError
    ├── CatalogueError        the catalogue is unreadable, malformed, or lacks the adapter
    │   └── SignatureError    the catalogue's Ed25519 signature does not verify: nothing is fetched
    ├── DownloadError         the registry failed, timed out, or sent too much or too little
    ├── IntegrityError        a tarball's sha512 is not the one the catalogue pins
    └── ArchiveError          a verified tarball holds a path Helm refuses to extract

Foreign errors (httpx, OSError, tarfile) are translated where the library is called.
"""

from __future__ import annotations

from broker.errors import HelmError


class ProvisionError(HelmError):
    """Provisioning an agent adapter failed; nothing half-installed is left visible."""


class CatalogueError(ProvisionError):
    """The adapter catalogue cannot be used, or does not list what was asked for."""


class SignatureError(CatalogueError):
    """The catalogue's signature is missing, malformed or made by a key Helm does not trust."""


class DownloadError(ProvisionError):
    """A tarball could not be downloaded whole within Helm's size and time bounds."""


class IntegrityError(ProvisionError):
    """A downloaded tarball does not match the sha512 integrity the signed catalogue pins."""


class ArchiveError(ProvisionError):
    """A tarball holds an entry Helm will not extract (an escaping path, too many files…)."""
