"""The extension host: sandboxed web frames whose only way out is ``helm.call``.

Call ``prepare_engine()`` before the QApplication exists (it registers the ``helm-ext`` scheme
and sends the engine's own connections nowhere), then make one ``ExtensionProfile`` per extension and one
``ExtensionView`` per running instance. Writes are confirmed by the ``Confirmer`` the view is
given; the desktop uses ``ui.dialogs.confirm.DialogConfirmer`` (Helm's own dialog).
"""

from __future__ import annotations

from ui.host.bridge import Bridge, CallHandler
from ui.host.egress import DeadEnd, close_egress
from ui.host.policy import content_security_policy, entry_url, extension_host
from ui.host.profile import ExtensionProfile
from ui.host.scheme import register_scheme
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


def prepare_engine() -> DeadEnd:
    """Engine set-up that must happen before the QApplication is created.

    Keep the returned ``DeadEnd`` for the life of the process.
    """
    register_scheme()
    return close_egress()
