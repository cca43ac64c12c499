"""The transcript's coloured lines read on the scheme Helm shows, and follow a change of it."""

from __future__ import annotations

import pytest

from ui.agents.story import Style
from ui.agents.transcript import Transcript
from ui.preferences import Preferences
from ui.qt import QApplication
from ui.theme import Theme
from ui.theme_data import Appearance, Scheme, contrast


def last_colour(transcript: Transcript) -> str:
    """The text colour of the last line written (the document ends with an empty line)."""
    block = transcript.document().lastBlock().previous()
    assert block.text(), "a line was written"
    return block.begin().fragment().charFormat().foreground().color().name()


@pytest.mark.parametrize("scheme", list(Scheme))
def test_every_style_of_the_transcript_reads_on_the_schemes_background(
    qapp: QApplication, theme: Theme, scheme: Scheme
) -> None:
    theme.follow(Preferences(Appearance(scheme.value)))
    transcript = Transcript()
    surface = theme.look.colours.surface
    for style in Style:
        if style is Style.AGENT:
            continue  # the palette's own text colour
        transcript.note(f"a {style.name} line", style)
        transcript.flush()
        assert contrast(last_colour(transcript), surface) >= 4.5, style


def test_text_written_after_the_scheme_changes_takes_the_new_colours(
    qapp: QApplication, theme: Theme
) -> None:
    transcript = Transcript()
    transcript.note("refused in light", Style.REFUSED)
    transcript.flush()
    light = last_colour(transcript)
    theme.follow(Preferences(Appearance(Scheme.DARK.value)))
    transcript.note("refused in dark", Style.REFUSED)
    transcript.flush()
    assert last_colour(transcript) != light
    assert contrast(last_colour(transcript), theme.look.colours.surface) >= 4.5
