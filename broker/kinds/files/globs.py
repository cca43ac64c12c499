"""The path globs of a files connection, compiled once per manifest.

A glob is a ``/``-separated relative pattern. In one segment ``*`` matches any run of
characters and ``?`` one character; a segment that is exactly ``**`` matches any number of
folders (zero or more). A trailing ``**`` means "every file below this folder", so
``docs/**`` is read as ``docs/**/*``.

Dotfiles: a wildcard never matches a leading dot. ``*``, ``?`` and ``**`` skip names that start
with ``.`` (so ``**`` does not descend into ``.git`` and ``*.json`` does not match
``.secret.json``); write the dot literally to reach them (``.tdt-project/**``, ``.*.json``).

A glob without ``**`` whose segments have at most one star each is also one regular expression
over the whole path (``[^/]`` for ``?`` and ``[^/]*`` for ``*``, so no star reaches into the
next segment; ``.`` in a glob of one segment); ``matches`` runs that in one C call. Its repeats
are its stars, one per segment at most, and a star can end at one place only from which the
rest of its segment and the ``/`` after it match, so backtracking never multiplies across
segments: the engine's work is at most the path's length times the glob's. A path of one name
goes straight to the expression of the globs of one segment, and where each of those is ``*``
and plain text (``*.md``) to two string tests that say what it says: the name ends with one of
those texts and does not start with a dot. It costs the same steps.

Otherwise matching runs as a small set of states ``(glob, segment)`` advanced one path segment at a time;
one segment is matched against one name without backtracking (``wildcard``). The same machine
drives the folder walk of ``list``: a folder is entered only while some glob can still match
below it, and where every glob expects a literal name the walk opens that name directly instead
of listing the folder.

All the matching of one call is paid from one ``Budget`` (``MATCH_STEPS``, ``LIST_MATCH_STEPS``;
one step: a glob segment tried against one name, or one string comparison inside it); a call
that would need more gets ``too_large``. Ordinary globs take one to three steps per name.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from broker.jsonutil import digest
from broker.kinds.files.wildcard import Budget, OneStar, Wildcard, compile_wildcard, segment_regex

MATCH_STEPS = 1_000_000
"""The glob-matching steps a read or write call may take (all its paths together)."""
LIST_MATCH_STEPS = 10_000_000
"""The glob-matching steps a list call may take: its work grows with the tree it walks."""

State = tuple[int, int]
"""(index of the glob, index of the next segment it expects)."""
States = frozenset[State]

EMPTY: States = frozenset()

FileTest = Callable[[str, Budget], bool]
"""Whether a file of this name, in a folder reached with given states, matches a glob."""
FileFilter = Callable[[Sequence[str], Budget], Iterable[str]]
"""The names of files, among those of one folder, that match a glob there."""
_FILE_TESTS_MAX = 1024


@dataclass(frozen=True)
class Literal:
    """A segment without wildcards: itself, exactly."""

    text: str

    def matches(self, name: str, budget: Budget) -> bool:
        budget.spend(1)
        return name == self.text


@dataclass(frozen=True)
class Segment:
    text: str
    any_depth: bool
    literal: bool
    matcher: Literal | OneStar | Wildcard


def _segment(text: str) -> Segment:
    if text == "**":
        return Segment(text, True, False, Literal(text))  # never asked: ** is handled by states
    if "*" not in text and "?" not in text:
        return Segment(text, False, True, Literal(text))
    return Segment(text, False, False, compile_wildcard(text))


def _compile(glob: str) -> tuple[Segment, ...]:
    parts = glob.split("/")
    if parts[-1] == "**":
        parts.append("*")
    # "**/**" means what "**" means; one state instead of two keeps stepping cheap.
    parts = [p for i, p in enumerate(parts) if not (p == "**" and i > 0 and parts[i - 1] == "**")]
    return tuple(_segment(p) for p in parts)


class GlobSet:
    """The compiled allowlist of one connection."""

    def __init__(self, globs: Sequence[str]) -> None:
        self.globs = tuple(globs)
        self._segs = tuple(_compile(g) for g in self.globs)
        self.start = self._closure((g, 0) for g in range(len(self._segs)))
        self._file_tests: dict[States, FileTest | None] = {}
        self._file_filters: dict[States, FileFilter | None] = {}
        self.regexes = _whole_path(self._segs)
        """The globs as regular expressions over the whole path, by number of segments, when
        they allow it."""
        self._whole = None
        self._one: tuple[Callable[[str], re.Match[str] | None], tuple[str, ...], int] | None = None
        """For a path of one name, taken before the lookup by length: the expression of the
        globs of one segment, the texts after their stars when each is ``*`` and then plain
        text (``*.md``; see ``_suffixes``), and their cost."""
        if self.regexes is not None:
            self._whole = {n: (r.fullmatch, cost) for n, (r, cost) in self.regexes.items()}
            if 1 in self._whole:
                fullmatch, cost = self._whole[1]
                ones = [segs[0].text for segs in self._segs if len(segs) == 1]
                self._one = (fullmatch, _suffixes(ones), cost)

    def _closure(self, states: Iterable[State]) -> States:
        out: set[State] = set()
        stack = list(states)
        while stack:
            state = stack.pop()
            if state in out:
                continue
            out.add(state)
            g, i = state
            segs = self._segs[g]
            if i < len(segs) and segs[i].any_depth:
                stack.append((g, i + 1))  # ** may match zero folders
        return frozenset(out)

    def step(self, states: States, name: str, budget: Budget) -> States:
        """The states after consuming one path segment ``name``."""
        nxt: set[State] = set()
        for g, i in states:
            segs = self._segs[g]
            if i >= len(segs):
                continue
            seg = segs[i]
            if seg.any_depth:
                budget.spend(1)
                if not name.startswith("."):
                    nxt.add((g, i))
            elif seg.matcher.matches(name, budget):
                nxt.add((g, i + 1))
        return self._closure(nxt) if nxt else EMPTY

    def file_matches(self, states: States, name: str, budget: Budget) -> bool:
        """Whether a file ``name`` in a folder reached with ``states`` matches a glob.

        The same as ``accepts(step(states, name))`` without building the next states: the
        last segment of a compiled glob is never ``**``, so only a last-segment match counts.
        """
        test = self.file_test(states)
        return test is not None and test(name, budget)

    def file_test(self, states: States) -> FileTest | None:
        """``file_matches`` for one folder's states, looked up once per folder rather than once
        per file (None: no file in that folder can match)."""
        if states in self._file_tests:
            return self._file_tests[states]
        last = [
            segs[i].matcher.matches
            for g, i in sorted(states)
            if i == len(segs := self._segs[g]) - 1 and not segs[i].any_depth
        ]
        if not last:
            test: FileTest | None = None
        elif len(last) == 1:
            test = last[0]
        else:
            test = lambda name, budget: any(m(name, budget) for m in last)  # noqa: E731
        if len(self._file_tests) < _FILE_TESTS_MAX:  # calls run in threads: a dict set is atomic
            self._file_tests[states] = test
        return test

    def file_filter(self, states: States) -> FileFilter | None:
        """``file_test`` for all the files of one folder at once: where every glob that can
        match there ends in a one-star segment, one C-level pass over the names (each name
        costs what ``file_test`` would charge for it)."""
        if states in self._file_filters:
            return self._file_filters[states]
        test = self.file_test(states)
        last = [segs[i] for g, i in states if i == len(segs := self._segs[g]) - 1 and not segs[i].any_depth]
        found: FileFilter | None = None
        if test is not None and all(isinstance(seg.matcher, OneStar) for seg in last):
            found = _one_pass(last)
        elif test is not None:
            found = lambda names, budget: [n for n in names if test(n, budget)]  # noqa: E731
        if len(self._file_filters) < _FILE_TESTS_MAX:
            self._file_filters[states] = found
        return found

    def accepts(self, states: States) -> bool:
        """Whether a file reached with these states matches a glob."""
        return any(i == len(self._segs[g]) for g, i in states)

    def live(self, states: States) -> bool:
        """Whether a folder reached with these states can contain a match."""
        return any(i < len(self._segs[g]) for g, i in states)

    def literal_names(self, states: States) -> list[str] | None:
        """The names every live state expects, if all of them are literal; else None."""
        names: set[str] = set()
        for g, i in states:
            segs = self._segs[g]
            if i >= len(segs):
                continue
            if not segs[i].literal:
                return None
            names.add(segs[i].text)
        return sorted(names)

    def matches(self, segments: Sequence[str], budget: Budget) -> bool:
        """Whether the path of these segments matches a glob."""
        one = self._one
        if one is not None and len(segments) == 1:  # a name: no join, no lookup by length
            fullmatch, suffixes, cost = one
            budget.left -= cost
            if budget.left < 0:
                budget.overdrawn()
            name = segments[0]
            if suffixes:  # what the expression says, in two string tests instead of its call
                return name.endswith(suffixes) and name[0] != "."  # no suffix is empty
            return fullmatch(name) is not None
        if self._whole is not None:  # one C call for the whole path
            found = self._whole.get(len(segments))
            if found is None:
                budget.spend(1)
                return False  # no glob has that many segments
            fullmatch, cost = found
            budget.left -= cost  # what the state machine would take at most
            if budget.left < 0:
                budget.overdrawn()
            return fullmatch("/".join(segments)) is not None
        states = self.start
        for name in segments:
            states = self.step(states, name, budget)
            if not states:
                return False
        return self.accepts(states)


def _suffixes(texts: Sequence[str]) -> tuple[str, ...]:
    """The text after the star of each segment (of a glob with one star a segment at most),
    when every one is ``*`` followed by at least one character of plain text; else empty. Such a
    segment matches a name that ends with that text and does not start with a dot (its star,
    perhaps empty, leads), so the name is never empty."""
    if all(len(t) > 1 and t[0] == "*" and "?" not in t for t in texts):
        return tuple(t[1:] for t in texts)
    return ()


def _one_pass(last: list[Segment]) -> FileFilter:
    """One regular expression for the last segments ``last`` (one star each at most)."""
    texts = sorted({seg.text for seg in last})
    pattern = re.compile("|".join(f"(?:{segment_regex(t)})" for t in texts), re.DOTALL)
    fullmatch = pattern.fullmatch
    cost = sum(seg.matcher.cost for seg in last if isinstance(seg.matcher, OneStar))

    def found(names: Sequence[str], budget: Budget) -> Iterable[str]:
        budget.spend(cost * len(names))
        return filter(fullmatch, names)

    return found


def _whole_path(globs: Sequence[tuple[Segment, ...]]) -> dict[int, tuple[re.Pattern[str], int]] | None:
    """The globs as regular expressions over the whole path, one per number of segments, with
    the steps one path costs; None when a glob has ``**`` or a segment of more than one star.

    A glob of one segment uses ``.`` for its wildcards (the engine runs a star of ``.`` faster);
    one of more segments uses ``[^/]``, so that no star reaches into the next segment.
    """
    parts: dict[int, list[str]] = {}
    costs: dict[int, int] = {}
    for segs in globs:
        any_char = "." if len(segs) == 1 else "[^/]"
        texts = []
        cost = 0
        for seg in segs:
            if seg.literal:
                texts.append(re.escape(seg.text))
                cost += 1
            elif isinstance(seg.matcher, OneStar):
                texts.append(segment_regex(seg.text, any_char))
                cost += seg.matcher.cost
            else:
                return None  # ** or a segment of many stars: the state machine
        parts.setdefault(len(segs), []).append("/".join(texts))
        costs[len(segs)] = costs.get(len(segs), 0) + cost
    return {
        n: (
            re.compile(alts[0] if len(alts) == 1 else "|".join(f"(?:{a})" for a in alts), re.DOTALL),
            costs[n],
        )
        for n, alts in parts.items()
    }


_CACHE: dict[str, GlobSet] = {}
_CACHE_MAX = 512
_CACHE_LOCK = threading.Lock()  # calls are parsed in worker threads


def globs_for(conn: Mapping[str, Any]) -> GlobSet:
    """The compiled globs of a connection, cached by the digest of its declaration."""
    key = digest(dict(conn))
    with _CACHE_LOCK:
        compiled = _CACHE.get(key)
        if compiled is None:
            if len(_CACHE) >= _CACHE_MAX:
                _CACHE.pop(next(iter(_CACHE)))  # oldest first: manifests rarely change
            compiled = _CACHE[key] = GlobSet([str(g) for g in conn["paths"]])
    return compiled
