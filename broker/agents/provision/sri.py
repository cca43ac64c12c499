"""npm's Subresource Integrity strings, restricted to what Helm accepts: one sha512 digest.

npm writes ``integrity`` as ``sha512-<base64>``; older packages may carry only ``sha1-…``,
which Helm refuses (a sha1 pin is not a pin). Comparison is constant-time.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from dataclasses import dataclass

_SRI = re.compile(r"^sha512-([A-Za-z0-9+/]{86}==)$")


@dataclass(frozen=True)
class Integrity:
    """A sha512 digest, written and read as an SRI string."""

    digest: bytes

    @classmethod
    def parse(cls, text: str) -> Integrity:
        match = _SRI.match(text) if isinstance(text, str) else None
        if match is None:
            raise ValueError("integrity must be one npm SRI string 'sha512-<base64 of 64 bytes>'")
        try:
            digest = base64.b64decode(match.group(1), validate=True)
        except binascii.Error:
            raise ValueError("integrity has malformed base64") from None
        return cls(digest)

    @classmethod
    def of(cls, data: bytes) -> Integrity:
        return cls(hashlib.sha512(data).digest())

    def matches(self, digest: bytes) -> bool:
        return hmac.compare_digest(self.digest, digest)

    def __str__(self) -> str:
        return "sha512-" + base64.b64encode(self.digest).decode("ascii")
