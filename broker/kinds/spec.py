"""``KindSpec``: everything Helm knows about one connection kind, exported by the kind's folder.

The rest of Helm iterates the registry of specs (``broker.kinds.KINDS``) and never names a
kind: the manifest parses and lints connections and composes its JSON Schema from them, plugin
review shows their review lines, the broker runs their adapter and wraps results in their
envelope, the confirm dialog takes their title and sentence, Settings → Connections draws
their form, and ``helm`` registers their command group. docs/architecture.md walks through
adding a kind.

Type parameters: ``C`` the kind's connection model, ``P`` its profile model (``Any`` for a
kind without profiles), ``K`` its running adapter — ``await Broker.kind(spec)`` returns a ``K``.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from broker.envelope import PLAIN, EnvelopeShape
from broker.kinds.base import JSON, Connection, ConnectionReview, Issue, KindEnv, WriteDetails

if TYPE_CHECKING:
    from broker.kinds.cli import CliIO
    from broker.kinds.forms import ProfileForm
    from broker.profiles import ProfileModel, ProfileSpec
    from broker.settings import Workspace


@dataclass(frozen=True)
class ConfirmText:
    """What is constant about a kind's confirmation dialog: the contract's title, the sentence
    after the extension's name, what the request box is called, which fields the request box
    already shows in full (the dialog shows them there once), and whether the box wraps its
    lines (a URL keeps to one line and scrolls sideways)."""

    title: str
    wants: str
    request_label: str
    in_request: tuple[str, ...] = ()
    wrap_request: bool = True

    def details(
        self,
        fields: tuple[tuple[str, str], ...],
        request: str,
        binding: Mapping[str, JSON],
        diff: str | None = None,
        file: str = "",
    ) -> WriteDetails:
        """A write's dialog content under this kind's title (see ``WriteDetails``)."""
        return WriteDetails(self.title, fields, request, binding, diff, file)


@dataclass(frozen=True)
class Outcome:
    """The answer to a button (Test, Connect…): ok, one line for the user, and details."""

    ok: bool
    message: str
    details: tuple[str, ...] = ()


WINDOW_ROLES = {
    "oauth": "the browser sign-in of the kind's profiles: (broker, the window's workspace) → an "
    "OAuthConnector (ui/settings/backend.py)",
    "explorer": "the DB explorer window's backend: (broker) → an ExplorerBackend (ui/db_explorer.py)",
}
"""The parts of the window a kind may supply (``KindSpec.window_parts``), by role."""

CliRegister = Callable[[Any, "CliIO"], None]
"""``register(subparsers, io)``: adds the kind's ``helm`` command group."""
ReviewWarnings = Callable[[Any, "Workspace", Path], tuple[str, ...]]
"""(connection, the workspace it is approved in, Helm's home) → review warnings."""


@dataclass(frozen=True)
class KindSpec[C: Connection, P: ProfileModel, K]:
    """One kind (see the module docstring). Only ``adapter`` and ``cli`` are imported late, by
    name, so reading manifests does not load every kind's libraries."""

    name: str
    """The manifest's ``kind``."""
    order: int
    """Where the kind comes in lists, tabs and the schema (lowest first)."""
    parse: Callable[[Mapping[str, JSON]], C]
    """A schema-valid connection declaration → the kind's frozen connection model."""
    lint: Callable[[Mapping[str, JSON], str, Mapping[str, JSON]], Iterable[Issue]]
    """(declaration, its JSON path, the manifest) → the problems the schema cannot express."""
    review: Callable[[C], ConnectionReview]
    """What plugin review shows for one connection."""
    schema: Mapping[str, JSON]
    """The kind's ``$defs`` in the manifest JSON Schema; ``schema_def`` names the connection's."""
    schema_def: str
    adapter: str
    """``"package.module:Class"``: the running part, a ``Kind[C]`` built from a ``KindEnv``."""
    confirm: ConfirmText
    envelope: EnvelopeShape = PLAIN
    scalar_args: bool = False
    """Every argument of a call must be a string, number, boolean or null — also the ones no
    placeholder uses (http, db). The broker refuses anything else before the kind is reached."""
    profiles: ProfileSpec[P] | None = None
    form: ProfileForm | None = None
    hints: Callable[[C, str, Mapping[str, JSON]], tuple[str, ...]] | None = None
    """(connection, operation, arguments) → what author mode points out about a call Helm
    answers anyway: a placeholder with no value, an argument nothing uses (``helm dev``)."""
    probe: Callable[[K, str, Mapping[str, str]], Awaitable[Outcome]] | None = None
    """The Test button of a profile: (the running kind, profile name, the form's
    ``test_inputs``) → what it found."""
    cli: str | None = None
    """``"package.module:register"`` (a ``CliRegister``), imported when ``helm`` builds its parser."""
    warnings: str | None = None
    """``"package.module:function"`` (a ``ReviewWarnings``): what review warns about a connection
    in the user's own workspace (a root that holds Helm's home), which the manifest cannot say."""
    window_parts: Mapping[str, str] = field(default_factory=dict)
    """What the kind adds to Helm's window, by role, each ``"package.module:factory"``
    imported when the window is built (``broker.kinds.window_part``; the roles are listed in
    ``WINDOW_ROLES``). Without the kind, the window has no such part."""

    def named_modules(self) -> tuple[str, ...]:
        """The modules this kind imports by name ("module:attr" above): an installer must ship
        them, as nothing else imports them."""
        targets = (self.adapter, self.cli, self.warnings, *self.window_parts.values())
        return tuple(t.partition(":")[0] for t in targets if t is not None)

    def window_part(self, role: str) -> Any | None:
        target = self.window_parts.get(role)
        return None if target is None else _imported(target)

    def load(self) -> Callable[[KindEnv], K]:
        factory: Callable[[KindEnv], K] = _imported(self.adapter)
        return factory

    def review_warnings(self, conn: C, workspace: Workspace, home: Path) -> tuple[str, ...]:
        if self.warnings is None:
            return ()
        check: ReviewWarnings = _imported(self.warnings)
        return check(conn, workspace, home)

    def load_cli(self) -> CliRegister | None:
        if self.cli is None:
            return None
        register: CliRegister = _imported(self.cli)
        return register


def _imported(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)
