"""Ed25519 detached signatures over exact bytes: the one implementation Helm signs and verifies with.

Both signed things Helm reads use it: the agents' adapter catalogue (``broker.agents.provision``)
and the extension catalogues users add (``broker.catalogue``). A signature file is JSON::

    {"algorithm": "ed25519", "key_id": "<16 hex>", "signature": "<base64 of 64 bytes>"}

``key_id`` is the first 16 hex digits of the sha256 of the raw public key; it only makes the
error clear when something was signed with another key. ``verify`` raises ``BadSignature``
with a ``Problem`` saying which check failed; each caller words the message for its own user
(what was refused, what to do). Nothing here parses what was signed: the bytes are verified
before anyone reads them.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from enum import StrEnum
from typing import TYPE_CHECKING

from broker.errors import HelmError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

# cryptography is imported by each function that needs it: Helm's window shows catalogues
# without verifying anything, and the library costs more to import than the window to build.

SIGNATURE_BYTES = 64


class Problem(StrEnum):
    """Which check a signature failed."""

    MALFORMED = "the signature file is malformed"
    LENGTH = "the signature has the wrong length"
    ALGORITHM = "the signature uses another algorithm than ed25519"
    OTHER_KEY = "the signature was made with another key"
    INVALID = "the signature does not verify: the bytes changed after signing"
    NOT_A_KEY = "the key is not a PEM Ed25519 key"


class BadSignature(HelmError):
    """A signature or key failed a check; ``problem`` says which, ``detail`` adds facts
    (the claimed key id, the algorithm) that are safe to show."""

    def __init__(self, problem: Problem, detail: str = "") -> None:
        super().__init__(problem.value + (f" ({detail})" if detail else ""))
        self.problem = problem
        self.detail = detail


def verify(data: bytes, signature_file: bytes, key: Ed25519PublicKey) -> None:
    """Return when ``signature_file`` is ``key``'s signature of exactly ``data``; else raise."""
    algorithm, claimed_id, signature = parse_signature(signature_file)
    if algorithm != "ed25519":
        raise BadSignature(Problem.ALGORITHM, algorithm)
    if claimed_id != key_id(key):
        raise BadSignature(Problem.OTHER_KEY, claimed_id)
    from cryptography.exceptions import InvalidSignature

    try:
        key.verify(signature, data)
    except InvalidSignature:
        raise BadSignature(Problem.INVALID) from None


def sign(data: bytes, private_key: Ed25519PrivateKey) -> bytes:
    """The signature file for ``data``."""
    record = {
        "algorithm": "ed25519",
        "key_id": key_id(private_key.public_key()),
        "signature": base64.b64encode(private_key.sign(data)).decode("ascii"),
    }
    return (json.dumps(record, indent=2) + "\n").encode("ascii")


def key_id(key: Ed25519PublicKey) -> str:
    from cryptography.hazmat.primitives import serialization

    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def public_key(pem: bytes) -> Ed25519PublicKey:
    """The Ed25519 public key in ``pem``; ``BadSignature(NOT_A_KEY)`` otherwise."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        key = serialization.load_pem_public_key(pem)
    except (ValueError, TypeError):
        raise BadSignature(Problem.NOT_A_KEY, "not a PEM public key") from None
    if not isinstance(key, Ed25519PublicKey):
        raise BadSignature(Problem.NOT_A_KEY, "not an Ed25519 key")
    return key


def public_pem(key: Ed25519PublicKey) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def private_key(pem: bytes) -> Ed25519PrivateKey:
    """The Ed25519 private key in ``pem`` (unencrypted PKCS#8); the message never quotes it."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError):
        raise BadSignature(Problem.NOT_A_KEY, "not an unencrypted PEM private key") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise BadSignature(Problem.NOT_A_KEY, "not an Ed25519 key")
    return key


def private_pem(key: Ed25519PrivateKey) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def parse_signature(raw: bytes) -> tuple[str, str, bytes]:
    """(algorithm, claimed key id, signature bytes) of a signature file."""
    try:
        record = json.loads(raw.decode("ascii"))
        signature = base64.b64decode(record["signature"], validate=True)
        algorithm, claimed = str(record["algorithm"]), str(record["key_id"])
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, binascii.Error):
        raise BadSignature(Problem.MALFORMED) from None
    if len(signature) != SIGNATURE_BYTES:
        raise BadSignature(Problem.LENGTH)
    return algorithm, claimed, signature
