"""Helm's broker errors: one hierarchy, documented here.

``HelmError`` is the root. Two families hang from it:

* ``CallError`` carries one of the contract's error codes (``ErrorCode``) and ends a
  single call. Kind adapters raise it; the broker turns it into the kind's envelope in
  exactly one place (``broker.envelope``). Its message is written by Helm, never copied from
  a library exception, so it cannot carry a secret.
* ``AgentError`` ends a coding-agent session (start-up deadline, crash, protocol error); it
  carries the agent's exit code and the tail of its stderr, scrubbed of the agent's key.
* Configuration errors (``ManifestError``, ``SettingsError``, ``CredentialStoreError``,
  ``ProfileError``, ``PolicyError``) are raised to the user of the CLI or the UI, with a
  message that says what is wrong and where.
* ``HomeWriteError`` (also an ``OSError``): Helm could not write one of its own files in its
  home (a full disk, a read-only home); the message names the file and the cause, and says
  that the file on disk is unchanged. ``AuditWriteError`` is the one of an audit record: nothing
  of the record is in the log.
* ``ApprovalChanged``: what the user reviewed is no longer what would be approved (the
  manifest or a pinned MCP tool changed while the review was open); nothing was approved.

Foreign exceptions (httpx, asyncpg, OSError…) are translated at the boundary of the module
that calls the library: ``raise CallError(...) from exc``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    """Every error code an extension can receive (connection contract v1, plus rate_limited)."""

    REFUSED = "refused"
    NOT_CONFIGURED = "not_configured"
    NOT_AUTHORIZED = "not_authorized"
    UNAVAILABLE = "unavailable"
    TIMEOUT = "timeout"
    TOO_LARGE = "too_large"
    TOO_MANY_ROWS = "too_many_rows"
    NOT_JSON = "not_json"
    REDIRECT = "redirect"
    HTTP_ERROR = "http_error"
    TOOL_ERROR = "tool_error"
    QUERY_FAILED = "query_failed"
    CONFLICT = "conflict"
    DECLINED = "declined"
    CONFIRMATION_REQUIRED = "confirmation_required"
    RATE_LIMITED = "rate_limited"


class HelmError(Exception):
    """Root of every error the broker raises on purpose."""


class CallError(HelmError):
    """Ends one call with a contract error code.

    ``data`` is what the envelope's ``data`` carries (an http error body, an MCP result with
    isError); ``status`` is the HTTP status for the http kind; ``retry_after`` (seconds) is set
    for ``rate_limited``. ``detail`` is for the user only, never in an envelope: what a server
    that failed to start wrote on stderr, shown by ``helm mcp tools`` and the Test button.
    """

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        data: Any = None,
        status: int | None = None,
        retry_after: float | None = None,
        detail: str = "",
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.status = status
        self.retry_after = retry_after
        self.detail = detail

    def __repr__(self) -> str:
        return f"CallError({self.code.value!r}, {self.message!r})"


class PolicyRefusal(CallError):
    """A call the organisation's policy refuses (``refused``); ``rule`` names the rule, so the
    broker can record the refusal in the audit log."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(ErrorCode.REFUSED, message)
        self.rule = rule


class ManifestError(HelmError):
    """A manifest failed validation; ``issues`` lists every problem with its JSON path."""

    def __init__(self, issues: list[Any]) -> None:
        self.issues = issues
        lines = "\n".join(f"{i.path}: {i.message}" for i in issues)
        super().__init__(f"invalid manifest ({len(issues)} problem(s)):\n{lines}")


class SettingsError(HelmError):
    """The settings file is unreadable, corrupt, of an unknown version, or a change is invalid."""


class ProfileError(SettingsError):
    """A service, MCP server or database profile is invalid."""


class PolicyError(SettingsError):
    """The organisation's policy refuses what was asked (installing or approving an extension,
    author mode); the message says "refused by your organisation's policy" and the rule."""


class HomeWriteError(HelmError, OSError):
    """Helm could not write one of its own files: ``filename`` and ``strerror`` say which and why.

    An ``OSError`` too (with the cause's ``errno``), so a caller that handles disk errors keeps
    handling it; its text is one line for the user.
    """

    def __init__(self, path: object, cause: OSError, what: str = "the file on disk is unchanged") -> None:
        super().__init__(cause.errno or 0, cause.strerror or str(cause), str(path))
        self.what = what

    def __str__(self) -> str:
        return f"cannot write {self.filename}: {self.strerror} ({self.what})"


class AuditWriteError(HomeWriteError):
    """A record could not be written to the audit log (nothing of it is there)."""


class ApprovalChanged(HelmError):
    """An approval was refused because the extension changed after the user reviewed it."""


class FixtureError(HelmError):
    """A fixture file of ``helm dev --replay`` / ``helm ext test`` cannot be read or is not in
    the documented format; the message names the file and the JSON path."""


class CredentialStoreError(HelmError):
    """The credential store cannot be used safely (e.g. a fallback file with a wrong mode)."""


class AgentError(HelmError):
    """A coding agent could not start, broke the protocol, or exited during a session.

    ``exit_code`` is the process's exit status when it has exited (negative: the signal that
    ended it); ``stderr_tail`` the last ~4 KB it wrote to stderr, with its key removed.
    """

    def __init__(self, message: str, *, exit_code: int | None = None, stderr_tail: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail

    def __str__(self) -> str:
        text = self.message
        if self.exit_code is not None:
            text += f" (exit code {self.exit_code})"
        if self.stderr_tail:
            text += "\n--- the agent's stderr (last lines) ---\n" + self.stderr_tail
        return text
