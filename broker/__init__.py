"""Helm's broker: pure asyncio, no Qt. Everything a caller needs is exported here.

async with Broker(home) as broker:
    envelope = await broker.request(ctx, "gh", "issues", {"owner": "me"}, confirm)
"""

from broker.broker import Broker
from broker.context import CallContext
from broker.errors import (
    CallError,
    CredentialStoreError,
    ErrorCode,
    HelmError,
    ManifestError,
    ProfileError,
    SettingsError,
)
from broker.manifest import Manifest, Review
from broker.summary import Confirmer, Decision, WriteSummary

__all__ = [
    "Broker",
    "CallContext",
    "CallError",
    "Confirmer",
    "CredentialStoreError",
    "Decision",
    "ErrorCode",
    "HelmError",
    "Manifest",
    "ManifestError",
    "ProfileError",
    "Review",
    "SettingsError",
    "WriteSummary",
]
