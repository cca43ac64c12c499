"""The catalogue's Ed25519 signature: verified over the exact bytes before anything is parsed.

Helm ships three files in ``resources/agents/``: ``catalogue.json``, its signature
``catalogue.sig`` and the public key ``catalogue.pub`` (PEM). The signature file is JSON::

    {"algorithm": "ed25519", "key_id": "<16 hex>", "signature": "<base64 of 64 bytes>"}

``key_id`` is the first 16 hex digits of the sha256 of the raw public key; it only makes the
error clear when a catalogue was signed with another key. The private key never enters the
repository: the release step signs with a key read from a file or standard input
(``packaging/agents_catalogue.py``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from broker.agents.provision.catalogue import Catalogue, parse_catalogue
from broker.agents.provision.errors import CatalogueError, SignatureError

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
    algorithm, claimed_id, signature = _parse_signature(signature_file)
    if algorithm != "ed25519":
        raise SignatureError(f"the catalogue's signature uses {algorithm!r}; Helm accepts only ed25519")
    if claimed_id != key_id(key):
        raise SignatureError(
            f"the adapter catalogue was signed with key {claimed_id}, but this Helm trusts only key "
            f"{key_id(key)}: refusing it (install adapters from a Helm release's own catalogue)"
        )
    try:
        key.verify(signature, data)
    except InvalidSignature:
        raise SignatureError(
            "the adapter catalogue's signature does not verify: it was changed after signing. "
            "Nothing was downloaded; reinstall Helm to restore its catalogue"
        ) from None


def sign(data: bytes, private_key: Ed25519PrivateKey) -> bytes:
    """The signature file for ``data`` (the release step and tests call this)."""
    record = {
        "algorithm": "ed25519",
        "key_id": key_id(private_key.public_key()),
        "signature": base64.b64encode(private_key.sign(data)).decode("ascii"),
    }
    return (json.dumps(record, indent=2) + "\n").encode("ascii")


def key_id(key: Ed25519PublicKey) -> str:
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def public_key(pem: bytes) -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(pem)
    except ValueError:
        raise SignatureError("the trusted catalogue key is not a PEM public key") from None
    if not isinstance(key, Ed25519PublicKey):
        raise SignatureError("the trusted catalogue key is not an Ed25519 key")
    return key


def public_pem(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def _parse_signature(raw: bytes) -> tuple[str, str, bytes]:
    try:
        record = json.loads(raw.decode("ascii"))
        signature = base64.b64decode(record["signature"], validate=True)
        algorithm, claimed = str(record["algorithm"]), str(record["key_id"])
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, binascii.Error):
        raise SignatureError("the catalogue's signature file is malformed: refusing the catalogue") from None
    if len(signature) != 64:
        raise SignatureError("the catalogue's signature has the wrong length: refusing the catalogue")
    return algorithm, claimed, signature


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
