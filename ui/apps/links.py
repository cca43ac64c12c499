"""A link an app wants opened, as the browser will get it: what the dialog shows is what opens.

``broker.urls.link_decision`` refuses what could mislead a reader and names the host. Here the
link is normalised by ``QUrl`` — the parser that hands it to the browser — into its fully
encoded form (characters a URL may not hold percent-encoded), and that form is what the dialog
shows and what the browser is given, parsed strictly, so the two cannot differ. The host shown
is ``QUrl``'s; a link whose host ``QUrl`` reads differently from Helm's decision (``0`` read
as ``0.0.0.0``, say), or whose normal form does not parse back to itself, is refused.
"""

from __future__ import annotations

from dataclasses import dataclass

from broker.urls import link_decision
from ui.qt import QDesktopServices, QUrl

ENCODED = QUrl.ComponentFormattingOption.FullyEncoded


@dataclass(frozen=True)
class Link:
    """A link ready to ask about: ``url`` is shown and opened, ``host`` shown on its own line."""

    url: str
    host: str


def parsed(text: str) -> QUrl:
    """``text`` as the browser will get it (strict parsing: nothing is guessed or repaired)."""
    return QUrl(text, QUrl.ParsingMode.StrictMode)


def prepare_link(text: str) -> Link | str:
    """The link to show and open, or why Helm refuses it."""
    decision = link_decision(text)
    if decision.problem is not None:
        return decision.problem
    url = QUrl(decision.url, QUrl.ParsingMode.TolerantMode)  # encodes what a path may not hold
    if not url.isValid() or url.scheme() not in ("https", "http") or url.userInfo():
        return "the link is not a valid http or https URL"
    shown = url.toString(ENCODED)
    again = parsed(shown)
    host = again.host(ENCODED)
    if again.toString(ENCODED) != shown or host != decision.host or link_decision(shown).host != host:
        return "the link does not read the same way each time it is parsed"
    return Link(shown, host)


def system_browser(url: str) -> None:
    """Open a prepared link's ``url`` exactly (it parses back to itself)."""
    QDesktopServices.openUrl(parsed(url))
