"""The errors of extension catalogues, part of Helm's one hierarchy (``broker.errors.HelmError``).

Every message is Helm's own: it names the catalogue and what was refused, and never quotes a
library message that could carry a URL with credentials or a key::

    CatalogueFault
    ├── CatalogueSetupError   the user's list of catalogues is wrong (unknown name, bad URL, bad key)
    ├── IndexRefused          the index is unreachable, unsigned, badly signed, malformed or older
    │                         than one this Helm has already seen (a rollback)
    ├── ReleaseRefused        the index does not offer that version, or withdrew it
    └── ArchiveRefused        an archive's sha256, size, contents or manifest is not what the index pins

Nothing is unpacked until the index's signature and the archive's sha256 are verified; a
refusal leaves the home as it was.
"""

from __future__ import annotations

from broker.errors import HelmError


class CatalogueFault(HelmError):
    """Something about an extension catalogue failed; nothing was installed or changed."""


class CatalogueSetupError(CatalogueFault):
    """The catalogue the user named or is adding cannot be used as given."""


class IndexRefused(CatalogueFault):
    """The catalogue's index cannot be trusted or read: Helm uses none of it."""


class ReleaseRefused(CatalogueFault):
    """The index does not offer what was asked for (no such extension or version, or withdrawn)."""


class ArchiveRefused(CatalogueFault):
    """A downloaded archive is not exactly what the signed index pins."""
