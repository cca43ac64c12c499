"""Who is calling: the identity the bridge derives from the calling frame."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CallContext:
    """Workspace, extension and extension instance of a call.

    The host builds it from the frame and channel a call arrives on, never from anything the
    page sends. ``instance`` names one running frame of the extension (a widget on the
    dashboard, a tool page, the CLI); the rate limit is counted per instance.
    """

    workspace: str
    extension: str
    instance: str = "cli"
