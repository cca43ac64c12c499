"""How a change to a file is confirmed, for every caller of the file guard (the files kind's
writes and coding agents' alike): the dialog's title and words, and the kind the audit names."""

from __future__ import annotations

from broker.kinds.spec import ConfirmText

FILE_CHANGE = ConfirmText("Confirm file change", "wants to change a file", "Change")
FILES_KIND = "files"
"""The kind a file write is recorded under, whoever asked for it."""
