"""What Settings → Connections needs from the broker, as typed protocols, and the real thing.

The pages talk to these protocols only. ``BrokerConnections`` is the implementation on a running
``Broker``: one ``KindSection`` per kind that has profiles and a form (``KindSpec.profiles``,
``KindSpec.form``), in the kinds' order — its profiles through the kind's ``ProfileStore``, its
Test button through the kind's ``probe``. OAuth2 sign-in is a separate ``OAuthConnector``;
without one, the Services page says sign-in is not available.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from broker.broker import Broker
from broker.kinds import KINDS
from broker.kinds.forms import ProfileForm
from broker.kinds.spec import KindSpec, Outcome
from broker.policy import decide as policy_decide
from broker.policy import in_force
from broker.profiles import ProfileStore


@dataclass(frozen=True)
class StoreInfo:
    description: str
    is_keychain: bool


class ProfileSection(Protocol):
    """One tab's profiles: stored as plain JSON objects, secrets kept apart."""

    def names(self) -> list[str]: ...

    def get(self, name: str) -> dict[str, Any] | None: ...

    def has_secret(self, name: str) -> bool: ...

    def save(self, name: str, raw: dict[str, Any], secrets: dict[str, str | None]) -> None:
        """Validate and store; a secret of ``None`` keeps the stored one. Raises HelmError."""
        ...

    def remove(self, name: str) -> None: ...

    async def test(self, name: str, inputs: Mapping[str, str]) -> Outcome:
        """The kind's Test button on ``name`` with the form's ``test_inputs``."""
        ...

    def managed(self) -> str:
        """What the organisation's policy manages in these profiles, for the user ("" if nothing)."""
        ...


class OAuthConnector(Protocol):
    """OAuth2 sign-in for service profiles."""

    def redirect_uri(self, name: str) -> str: ...

    def status(self, name: str) -> str:
        """Words for the user: "not connected", "connected (scopes)"…"""
        ...

    async def connect(self, name: str, progress: Callable[[str], None] | None = None) -> Outcome: ...

    async def cancel(self, name: str) -> None:
        """Stop a sign-in that is waiting for the browser."""
        ...

    async def disconnect(self, name: str) -> Outcome: ...


class ConnectionsBackend(Protocol):
    oauth: OAuthConnector | None

    @property
    def sections(self) -> Mapping[str, ProfileSection]:
        """By kind name (``http``, ``mcp``, ``db``…), in the kinds' order."""
        ...

    def store(self) -> StoreInfo: ...


Probe = Callable[[str, Mapping[str, str]], Awaitable[Outcome]]
"""A profile's Test button: (profile name, the form's test fields) → what it found."""


class FormSection:
    """``ProfileSection`` over one ``ProfileStore`` and its form; Test through ``probe``.

    Kinds' tabs are ``KindSection``; Settings → Agents uses it for the agent profiles."""

    def __init__(self, profiles: ProfileStore[Any], form: ProfileForm, probe: Probe | None = None) -> None:
        self.profiles = profiles
        self.form = form
        self.probe = probe

    def names(self) -> list[str]:
        return self.profiles.names()

    def get(self, name: str) -> dict[str, Any] | None:
        return self.profiles.raw(name)

    def has_secret(self, name: str) -> bool:
        return self.profiles.has_secret(name, *self.form.secrets)

    def save(self, name: str, raw: dict[str, Any], secrets: dict[str, str | None]) -> None:
        profile = self.profiles.spec.parse(name, raw)
        self.profiles.save(profile, {key: self._secret(name, key, given) for key, given in secrets.items()})

    def _secret(self, name: str, key: str, given: str | None) -> str | None:
        """What the user typed, or the stored secret when the field was left empty."""
        return (self.profiles.secret(name, key) if given is None else given) or None

    def managed(self) -> str:
        notes = policy_decide.managed(in_force())
        return notes.get("all") or notes.get(self.profiles.spec.section, "")

    def remove(self, name: str) -> None:
        self.profiles.remove(name)

    async def test(self, name: str, inputs: Mapping[str, str]) -> Outcome:
        if self.probe is None:
            return Outcome(False, f"a {self.profiles.spec.noun} has nothing to test")
        return await self.probe(name, inputs)


class KindSection(FormSection):
    """``ProfileSection`` for one kind on a running broker."""

    def __init__(self, broker: Broker, spec: KindSpec[Any, Any, Any]) -> None:
        if spec.profiles is None or spec.form is None:
            raise ValueError(f"the {spec.name} kind has no profiles or no form")
        self.broker = broker
        self.spec = spec
        super().__init__(spec.profiles.store(broker.home, broker.credentials), spec.form, self._probe)

    async def _probe(self, name: str, inputs: Mapping[str, str]) -> Outcome:
        if self.spec.probe is None:
            return Outcome(False, f"a {self.spec.name} profile has nothing to test")
        return await self.spec.probe(await self.broker.kind(self.spec), name, inputs)


class BrokerConnections:
    """``ConnectionsBackend`` on a running broker."""

    def __init__(self, broker: Broker, oauth: OAuthConnector | None = None) -> None:
        self.broker = broker
        self.sections: dict[str, ProfileSection] = {
            name: KindSection(broker, spec)
            for name, spec in KINDS.items()
            if spec.profiles is not None and spec.form is not None
        }
        self.oauth = oauth

    def store(self) -> StoreInfo:
        return StoreInfo(self.broker.credentials.description, self.broker.credentials.is_keychain)
