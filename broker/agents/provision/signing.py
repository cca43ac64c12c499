"""The catalogue's Ed25519 signature: verified over the exact bytes before anything is parsed.

Helm ships three files in ``resources/agents/``: ``catalogue.json``, its signature
``catalogue.sig`` and the public key ``catalogue.pub`` (PEM). The signature file is JSON::

    {"algorithm": "ed25519", "key_id": "<16 hex>", "signature": "<base64 of 64 bytes>"}

(``broker.signatures``, the one Ed25519 implementation; this module words its refusals for
the adapter catalogue.) The private key never enters the
repository: the release step signs with a key read from a file or standard input
(``packaging/agents_catalogue.py``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from broker import signatures
from broker.agents.provision.catalogue import Catalogue, parse_catalogue
from broker.agents.provision.errors import CatalogueError, SignatureError
from broker.signatures import Problem, key_id, public_pem, sign

__all__ = [
    "CatalogueSource",
    "key_id",
    "load_catalogue",
    "public_key",
    "public_pem",
    "sign",
    "verify_signature",
]

_MAX_CATALOGUE = 8 * 1024 * 1024
_MAX_SIGNATURE = 4096


@dataclass(frozen=True)
class CatalogueSource:
    """Where a catalogue, its signature and the key trusted to have signed it are."""

    catalogue: Path
    signature: Path
    public_key: bytes  # PEM

    @classmethod
    def shipped(cls) -> CatalogueSource:
        folder = Path(str(resources.files("resources") / "agents"))
        key = _read(folder / "catalogue.pub", _MAX_SIGNATURE, "the trusted catalogue key")
        return cls(folder / "catalogue.json", folder / "catalogue.sig", key)


def load_catalogue(source: CatalogueSource | None = None) -> Catalogue:
    """The catalogue, once its signature verifies; otherwise ``SignatureError`` and nothing else."""
    source = source or CatalogueSource.shipped()
    data = _read(source.catalogue, _MAX_CATALOGUE, "the adapter catalogue")
    signature = _read(source.signature, _MAX_SIGNATURE, "the catalogue's signature")
    verify_signature(data, signature, public_key(source.public_key))
    return parse_catalogue(data, hashlib.sha256(data).hexdigest())


def verify_signature(data: bytes, signature_file: bytes, key: Ed25519PublicKey) -> None:
    """``broker.signatures.verify``, its refusal worded for the adapter catalogue."""
    try:
        signatures.verify(data, signature_file, key)
    except signatures.BadSignature as bad:
        raise SignatureError(_refusal(bad, key)) from None


def _refusal(bad: signatures.BadSignature, key: Ed25519PublicKey) -> str:
    match bad.problem:
        case Problem.ALGORITHM:
            return f"the catalogue's signature uses {bad.detail!r}; Helm accepts only ed25519"
        case Problem.OTHER_KEY:
            return (
                f"the adapter catalogue was signed with key {bad.detail}, but this Helm trusts only key "
                f"{key_id(key)}: refusing it (install adapters from a Helm release's own catalogue)"
            )
        case Problem.INVALID:
            return (
                "the adapter catalogue's signature does not verify: it was changed after signing. "
                "Nothing was downloaded; reinstall Helm to restore its catalogue"
            )
        case Problem.LENGTH:
            return "the catalogue's signature has the wrong length: refusing the catalogue"
        case _:
            return "the catalogue's signature file is malformed: refusing the catalogue"


def public_key(pem: bytes) -> Ed25519PublicKey:
    try:
        return signatures.public_key(pem)
    except signatures.BadSignature as bad:
        raise SignatureError(f"the trusted catalogue key is {bad.detail}") from None


def _read(path: Path, limit: int, what: str) -> bytes:
    try:
        with path.open("rb") as fh:
            data = fh.read(limit + 1)
    except FileNotFoundError:
        error: type[CatalogueError] = SignatureError if path.suffix in (".sig", ".pub") else CatalogueError
        raise error(f"{what} is missing ({path.name}): refusing to install adapters") from None
    except OSError as exc:
        raise CatalogueError(f"cannot read {what} ({path.name}: {exc.strerror})") from None
    if len(data) > limit:
        raise CatalogueError(f"{what} is larger than {limit} bytes: refusing it")
    return data
