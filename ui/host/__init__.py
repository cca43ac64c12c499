"""The extension host: sandboxed web frames whose only way out is ``helm.call``.

Call ``prepare_engine()`` before the QApplication exists (it registers the ``helm-ext`` scheme
and sends the engine's own connections nowhere), then make one ``ExtensionProfile`` per extension and one
``ExtensionView`` per running instance. Writes are confirmed by the ``Confirmer`` the view is
given; the desktop uses ``ui.dialogs.confirm.DialogConfirmer`` (Helm's own dialog).

The names below are imported on first use: the engine set-up and the start-up check need only
the frame's own modules, and start-up runs them before the broker is imported.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ui.host.egress import DeadEnd, close_egress
from ui.host.scheme import register_scheme

if TYPE_CHECKING:
    from ui.host.bridge import Bridge, CallHandler
    from ui.host.policy import content_security_policy, entry_url, extension_host
    from ui.host.profile import ExtensionProfile
    from ui.host.view import ExtensionView

__all__ = [
    "Bridge",
    "CallHandler",
    "DeadEnd",
    "ExtensionProfile",
    "ExtensionView",
    "content_security_policy",
    "entry_url",
    "extension_host",
    "prepare_engine",
]

_LAZY = {
    "Bridge": "ui.host.bridge",
    "CallHandler": "ui.host.bridge",
    "ExtensionProfile": "ui.host.profile",
    "ExtensionView": "ui.host.view",
    "content_security_policy": "ui.host.policy",
    "entry_url": "ui.host.policy",
    "extension_host": "ui.host.policy",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ui.host' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def prepare_engine() -> DeadEnd:
    """Engine set-up that must happen before the QApplication is created.

    Keep the returned ``DeadEnd`` for the life of the process.
    """
    register_scheme()
    return close_egress()
