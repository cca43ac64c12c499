"""Approval in author mode: the real review, asked once per change, saying what changed.

An author edits the manifest many times. Each edit to its reviewed part (permissions,
connections) needs approval again, exactly as for a user — author mode changes what is shown,
never what Helm allows. What it changes: the question comes once per manifest (a cancelled
review is not asked again for the same manifest until Reload), and it lists what changed since
the approval made earlier in the session (``broker.authoring.changes``) above the full review.

``--yes-dev`` answers on the terminal instead: the changes (or, for a first approval, the whole
review) are printed and approved there. ``helm dev`` accepts it only in its own workspace (the
one it creates for author mode), so nothing is ever approved without a question elsewhere.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from broker import Broker, Decision
from broker.authoring.changes import review_changes
from broker.errors import ApprovalChanged, HelmError
from broker.extensions import Reviewed, approve, review, reviewed_with_warnings
from broker.manifest import Manifest, Review
from ui.dev.terminal import TerminalReport
from ui.dialogs.base import answer
from ui.dialogs.review import ReviewDialog, review_dialog
from ui.qt import QWidget

ReviewFactory = Callable[[Reviewed, QWidget | None], ReviewDialog]
"""Makes the review dialog for a snapshot (tests pass one without the input guard)."""


def nothing_approved(manifest: Manifest) -> Review:
    """The review of a manifest with no connections: what a first approval is compared to."""
    return Review(manifest.id, manifest.name, manifest.version, False, (), "")


class DevApproval:
    """Reviews and approves one extension for the dev window (see the module docstring)."""

    def __init__(
        self,
        broker: Broker,
        workspace: str,
        report: TerminalReport,
        parent: QWidget,
        *,
        review_factory: ReviewFactory = review_dialog,
        yes: bool = False,
    ) -> None:
        self.broker, self.workspace, self.report = broker, workspace, report
        self._parent = parent
        self._factory = review_factory
        self._yes = yes
        self._declined: str | None = None
        self._approved: Review | None = None
        self.retry: Callable[[], None] = lambda: None
        """Called when an approval was refused because the manifest changed meanwhile."""

    def ask_again(self) -> None:
        """Forget a cancelled review (the Reload button)."""
        self._declined = None

    async def ensure(self, manifest: Manifest) -> None:
        """Ask for approval when the manifest needs it and was not just refused."""
        decision = self.broker.standing(self.workspace, manifest.id)
        if not decision.needs_review:
            if decision.approved and (self._approved is None or self._approved.digest != manifest.digest()):
                # As the review showed it, warnings included: the next change lists only its own.
                ws = self.broker.home.settings().workspace(self.workspace)
                self._approved = reviewed_with_warnings(manifest, ws, self.broker.home.path)
            return
        if manifest.digest() == self._declined:
            return  # asked already for this exact manifest; a change or Reload asks again
        try:
            reviewed = await review(self.broker, self.workspace, manifest.id)
        except HelmError as exc:
            self.report.line("review", f"cannot review {manifest.id}: {exc}")
            return
        changes = review_changes(self._approved, reviewed.review) if self._approved else ()
        reviewed = dataclasses.replace(reviewed, changes=changes + reviewed.changes)
        if self._yes:
            shown = reviewed.changes or review_changes(nothing_approved(manifest), reviewed.review)
            self.report.lines("review", [f"approving {manifest.id} on the terminal (--yes-dev):", *shown])
            await self._approve(reviewed)
            return
        self.report.lines("review", [f"{manifest.id} needs approval: asked in the dev window", *changes])
        if await answer(self._factory(reviewed, self._parent)) is Decision.CONFIRMED:
            await self._approve(reviewed)
            return
        self._declined = reviewed.digest
        self.report.line(
            "review", f"not approved: every call of {manifest.id} returns refused (Reload asks again)"
        )

    async def _approve(self, reviewed: Reviewed) -> None:
        try:
            await approve(self.broker, reviewed)  # exactly what was shown
        except ApprovalChanged as exc:
            self.report.line("review", f"not approved: {exc}")
            self.retry()  # the change that refused it gets its own review
            return
        self._declined = None
        self._approved = reviewed.review
        self.report.line("review", f"approved {reviewed.extension}")
