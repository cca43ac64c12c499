"""What changed between two reviews of a manifest, as lines for a person (no I/O).

``helm dev`` approves a manifest, the author edits it, and the next review is about the edit:
these lines say what is new, gone or different — per connection, each read and write, and
whether the extension may write — so the question is about the change, not the whole review.
"""

from __future__ import annotations

from broker.kinds.base import ConnectionReview, ReviewItem
from broker.manifest import Review


def _item(item: ReviewItem) -> str:
    tag = "WRITE" if item.write else "read"
    return f"{tag} {item.label}" + (f" ({item.detail})" if item.detail else "")


def _connection(conn: ConnectionReview) -> str:
    return f"{conn.kind} — {conn.target}"


def review_changes(old: Review, new: Review) -> tuple[str, ...]:
    """Lines like ``[gh] + WRITE close: PATCH /issues/{n}``; empty when nothing a user
    reviews differs."""
    lines: list[str] = []
    if old.may_write != new.may_write:
        lines.append(f"may write: {'yes' if old.may_write else 'no'} → {'yes' if new.may_write else 'no'}")
    if old.orchestrate != new.orchestrate:
        was = dict(old.orchestrate.review_lines()) if old.orchestrate is not None else {}
        now = dict(new.orchestrate.review_lines()) if new.orchestrate is not None else {}
        for label in dict.fromkeys([*was, *now]):
            if was.get(label) != now.get(label):
                lines.append(
                    f"build {label.lower()}: {was.get(label, '(none)')} → {now.get(label, '(none)')}"
                )
    before = {c.id: c for c in old.connections}
    after = {c.id: c for c in new.connections}
    for cid in sorted(before.keys() - after.keys()):
        lines.append(f"[{cid}] removed ({_connection(before[cid])})")
    for conn in new.connections:
        previous = before.get(conn.id)
        if previous is None:
            lines.append(f"[{conn.id}] added: {_connection(conn)}")
            lines += [f"[{conn.id}] + {_item(i)}" for i in conn.items]
            continue
        lines += _connection_changes(previous, conn)
    return tuple(lines)


def _connection_changes(old: ConnectionReview, new: ConnectionReview) -> list[str]:
    lines = []
    if _connection(old) != _connection(new):
        lines.append(f"[{new.id}] now {_connection(new)} (was {_connection(old)})")
    was = [_item(i) for i in old.items]
    now = [_item(i) for i in new.items]
    lines += [f"[{new.id}] - {text}" for text in was if text not in now]
    lines += [f"[{new.id}] + {text}" for text in now if text not in was]
    lines += [f"[{new.id}] ! new warning: {w}" for w in new.warnings if w not in old.warnings]
    return lines
