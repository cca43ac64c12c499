"""Profiles: what the user sets up once (a service, an MCP server, a database, an agent) and
extensions or agents then use by name. One interface for every kind of profile.

A kind declares its profiles with a ``ProfileSpec[P]``: its settings section, the words for
messages, how to ``parse`` a stored profile into its frozen model ``P`` (which has a ``name``
and a ``to_json()``), the secrets it may keep, and ``plan_save``, the kind's rules for a save
(what only a save requires, and which secrets to keep, replace or forget). ``ProfileStore[P]``
does the rest, the same way for every kind::

    store = ProfileStore(HTTP_PROFILES, home, credentials)
    store.names()                      # sorted names, valid or not
    store.raw("gh")                    # the stored JSON (for a form), or None
    store.get("gh")                    # the parsed profile, None when absent (ProfileError: invalid)
    store.load("gh")                   # the parsed profile (ProfileError: absent or invalid)
    store.all()                        # every valid profile, by name
    store.check(profile)               # what save would refuse, before asking for secrets
    store.save(profile, {"token": t})  # validate, keep its secrets, store it; returns it as stored
    store.remove("gh")                 # the profile and every secret it kept
    store.secret("gh", "token"); store.has_secret("gh", "token")

Settings hold the profile as ``to_json()`` in the section (``broker.settings``); secrets live
only in the credential store, under ``<section>/<name>/<secret>``. A save writes the secrets
first, then the profile, so a profile never points at a secret that was not stored.

A secret is read from the credential store once per stored form of its profile: a keychain read
is a D-Bus round trip of about 13 ms, which every signed call would otherwise pay. Every save
or removal, from any process, rewrites the settings file, so the next read after one asks the
store again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from broker.credentials import CredentialStore
from broker.errors import ProfileError, SettingsError
from broker.names import NAME_RULE, valid_name
from broker.settings import Home, Settings

if TYPE_CHECKING:
    from broker.policy import PolicyState


class ProfileModel(Protocol):
    """A validated profile: frozen, named, and stored as ``to_json()``."""

    @property
    def name(self) -> str: ...

    def to_json(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class SavePlan[P: ProfileModel]:
    """What a save stores: the profile (normalized) and each secret's new value (None:
    forget it). A secret the plan does not name is left as it is."""

    profile: P
    secrets: Mapping[str, str | None]


Reaching = Literal["service_url", "oauth_url", "mcp_command", "mcp_url", "db_host", "db_engine"]


@dataclass(frozen=True)
class Reach:
    """One thing a profile makes Helm reach: a URL it sends to, a program it starts, a database
    host or engine. The organisation's policy (``broker.policy``) allows or refuses each."""

    what: Reaching
    value: str


def _keep_secrets[P: ProfileModel](
    profile: P, given: Mapping[str, str | None], previous: P | None
) -> SavePlan[P]:
    return SavePlan(profile, dict(given))


@dataclass(frozen=True)
class ProfileSpec[P: ProfileModel]:
    """How one kind keeps its profiles (see the module docstring)."""

    section: str
    """The settings.json section, and the credential-store prefix of its secrets."""
    noun: str
    """One profile, for messages: "service", "MCP server", "database profile", "agent"."""
    parse: Callable[[str, Any], P]
    """A stored profile (name, JSON) → the model; raises ProfileError saying what is wrong."""
    secrets: tuple[str, ...] = ()
    """Every secret a profile may keep; removing the profile forgets them all."""
    plan_save: Callable[[P, Mapping[str, str | None], P | None], SavePlan[P]] = _keep_secrets
    """(profile, the secrets given, the profile stored before or None) → what to store;
    raises ProfileError for what only a save requires (a token the profile needs…)."""
    missing_hint: str = ""
    """Added to "no <noun> named …" (may use ``{name}``): how to add one."""
    reaches: Callable[[P], tuple[Reach, ...]] | None = None
    """What a profile reaches (its URLs, its program), for the organisation's policy."""

    def secret_key(self, name: str, secret: str) -> str:
        return f"{self.section}/{name}/{secret}"

    def store(self, home: Home, credentials: CredentialStore | None = None) -> ProfileStore[P]:
        return ProfileStore(self, home, credentials)


class ProfileStore[P: ProfileModel]:
    """The profiles of one kind in one Helm home (see the module docstring). Without a
    credential store it can only read profiles (their secrets need the store)."""

    def __init__(self, spec: ProfileSpec[P], home: Home, credentials: CredentialStore | None = None) -> None:
        self.spec = spec
        self.home = home
        self._credentials = credentials
        # The last parsed profile per name, with the stored JSON it came from: the home hands
        # out the same objects until the file changes, so a repeated get does not parse again.
        self._parsed: dict[str, tuple[object, P]] = {}
        # The secrets read, each with the stored JSON of its profile at the time (see above).
        self._secrets: dict[tuple[str, str], tuple[object, str | None]] = {}

    @property
    def credentials(self) -> CredentialStore:
        if self._credentials is None:
            raise RuntimeError("this profile store was opened without the credential store")
        return self._credentials

    # -- reading ---------------------------------------------------------------------------
    def _section(self, settings: Settings | None = None) -> dict[str, dict[str, Any]]:
        return (self.home.settings() if settings is None else settings).profiles(self.spec.section)

    def names(self) -> list[str]:
        return sorted(self._section())

    def raw(self, name: str) -> dict[str, Any] | None:
        raw = self._section().get(name)
        return None if raw is None else dict(raw)

    def get(self, name: str, settings: Settings | None = None) -> P | None:
        """The parsed profile, None when absent (ProfileError: invalid); from ``settings``
        when given (a call's reading), else from the file as it is now."""
        raw = self._section(settings).get(name)
        if raw is None:
            return None
        cached = self._parsed.get(name)
        if cached is not None and cached[0] is raw:
            return cached[1]
        profile = self.spec.parse(name, raw)
        self._parsed[name] = (raw, profile)
        return profile

    def load(self, name: str) -> P:
        profile = self.get(name)
        if profile is None:
            raise ProfileError(self.missing(name))
        return profile

    def all(self) -> list[P]:
        """Every valid profile, by name (an invalid one is left out: ``get`` says what is wrong)."""
        found = []
        for name in self.names():
            try:
                profile = self.get(name)
            except ProfileError:
                continue
            if profile is not None:
                found.append(profile)
        return found

    def missing(self, name: str) -> str:
        return f"no {self.spec.noun} named {name!r}" + self.spec.missing_hint.format(name=name)

    def secret(self, name: str, secret: str) -> str | None:
        try:
            stored: object | None = self._section().get(name)
        except SettingsError:
            stored = None  # unreadable settings: ask the store, remember nothing
        key = (name, secret)
        known = self._secrets.get(key)
        if stored is not None and known is not None and known[0] is stored:
            return known[1]
        value = self.credentials.get(self.spec.secret_key(name, secret))
        if stored is not None:
            self._secrets[key] = (stored, value)
        return value

    def has_secret(self, name: str, *secrets: str) -> bool:
        """Whether any of ``secrets`` (default: every secret of the kind) is stored."""
        return any(self.secret(name, s) for s in secrets or self.spec.secrets)

    # -- changing --------------------------------------------------------------------------
    def check(self, profile: P) -> P:
        """Raise ProfileError for what ``save`` would refuse whatever the secrets; the
        profile as it would be stored."""
        if not valid_name(profile.name):
            raise ProfileError(f"{self.spec.noun} name {profile.name!r} is not valid: {NAME_RULE}")
        stored = self.spec.parse(profile.name, profile.to_json())
        refusal = self.refusal(stored)
        if refusal is not None:
            raise ProfileError(refusal)
        return stored

    def refusal(self, profile: P, policy: PolicyState | None = None) -> str | None:
        """Why the organisation's policy (``policy``: the one in force now unless given) refuses
        what ``profile`` reaches (None: it does not)."""
        if self.spec.reaches is None:
            return None
        # The policy imports this module (it reads profiles' reaches): imported here, when needed.
        if policy is None:
            from broker.policy import in_force

            policy = in_force()
        if not policy.managed:  # no policy file: nothing is refused, no reach needs working out
            return None
        from broker.policy import decide

        found = decide.profile(policy, self.spec.reaches(profile), f"{self.spec.noun} {profile.name!r}")
        return None if found is None else found.message

    def save(self, profile: P, secrets: Mapping[str, str | None] | None = None) -> P:
        """Add or replace ``profile`` with its secrets (a value of None or "" forgets one)."""
        self.check(profile)
        try:
            previous = self.get(profile.name)
        except ProfileError:
            previous = None  # an invalid stored profile is simply replaced
        plan = self.spec.plan_save(profile, secrets or {}, previous)
        stored = self.check(plan.profile)
        self._forget_secrets(stored.name)
        for secret, value in plan.secrets.items():
            if value:
                self.credentials.set(self.spec.secret_key(stored.name, secret), value)
            else:
                self.credentials.delete(self.spec.secret_key(stored.name, secret))
        with self.home.update() as settings:
            settings.profiles(self.spec.section)[stored.name] = stored.to_json()
        return stored

    def remove(self, name: str) -> None:
        self._forget_secrets(name)
        with self.home.update() as settings:
            if settings.profiles(self.spec.section).pop(name, None) is None:
                raise ProfileError(self.missing(name))
        for secret in self.spec.secrets:
            self.credentials.delete(self.spec.secret_key(name, secret))

    def _forget_secrets(self, name: str) -> None:
        for key in [k for k in self._secrets if k[0] == name]:
            del self._secrets[key]
