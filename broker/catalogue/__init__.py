"""Signed extension catalogues: install from them, update with re-consent, step back one version.

A catalogue is a folder (served over https, http on loopback, or read from disk) holding a
signed index (``index``) and the extensions' archives (``archive``). Users add one by its URL
and the Ed25519 public key its publisher gives them (``store``); ``configured`` is the list
Helm installs from — the user's, plus any others given to it (an organisation's policy).
Every index is verified before it is read and every archive before it is unpacked
(``source``); updates land only once approved (``updates``); publishers build and sign
catalogues with ``publish``. Errors: ``errors``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from broker.catalogue.errors import (
    ArchiveRefused,
    CatalogueFault,
    CatalogueSetupError,
    IndexRefused,
    ReleaseRefused,
)
from broker.catalogue.index import Index, Release, Status
from broker.catalogue.store import CatalogueEntry, CatalogueStore


def configured(home: Path, extra: Mapping[str, CatalogueEntry] | None = None) -> dict[str, CatalogueEntry]:
    """The catalogues Helm may install from: the user's (``<home>/catalogues.json``) plus
    ``extra``, which win on a shared name (see ``CatalogueStore.configured``)."""
    return CatalogueStore(home).configured(extra)


__all__ = [
    "ArchiveRefused",
    "CatalogueEntry",
    "CatalogueFault",
    "CatalogueSetupError",
    "CatalogueStore",
    "Index",
    "IndexRefused",
    "Release",
    "ReleaseRefused",
    "Status",
    "configured",
]
