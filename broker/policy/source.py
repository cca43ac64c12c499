"""Where the organisation's policy comes from, and whether Helm may trust the file.

The machine-wide file is ``/etc/helm/policy.json`` on Linux (``MACHINE_PATHS`` has the other
systems'; packaging/README.md says how MDM tools put it there). ``HELM_POLICY`` names one more
file, read as well: it adds rules and cannot take the machine's away (tests and trying a policy
out use it).

A policy file is trusted only when no one but root could have written it: it is a regular file
(not a symbolic link) owned by root with no group or other write bit, and every folder above it
is owned by root and writable by no one else — but for a root-owned folder with the sticky bit
(``/tmp``), where no one can replace a file they do not own. Any other file is **refused**, and
so is one that is not valid JSON or not valid against ``resources/policy.schema.json``. A file
that exists says an organisation manages this machine, so a refused file does not mean "no
policy": while a file is refused, nothing runs (no extension call, agent, MCP server or dev mode)
and every refusal names the file and why, until it is fixed. Helm itself starts and says so.

``PolicySource.state()`` stats each file on every use and reads it again only when it changed
(its inode, size, times, mode or owner), so a policy that changes applies to the next call.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import resources
from broker.jsonutil import DuplicateKeyError, loads_strict
from broker.kinds.base import Issue
from broker.policy.model import Policy, parse
from broker.schema_words import issues_of

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

ENV = "HELM_POLICY"
MACHINE_PATHS: Mapping[str, Path] = {
    "linux": Path("/etc/helm/policy.json"),
    "darwin": Path("/Library/Application Support/Helm/policy.json"),
    "win32": Path(os.environ.get("PROGRAMDATA", r"C:\ProgramData")) / "Helm" / "policy.json",
}
MAX_BYTES = 1024 * 1024
SCHEMA_FILE = "policy.schema.json"


def machine_path() -> Path:
    """The machine-wide policy file of this system."""
    return MACHINE_PATHS.get(sys.platform, MACHINE_PATHS["linux"])


@dataclass(frozen=True)
class RefusedFile:
    """A policy file Helm does not trust or cannot read, and why (for a person)."""

    path: Path
    reason: str

    @property
    def message(self) -> str:
        return (
            f"Helm refuses the policy file {self.path}: {self.reason}. Until it is fixed, nothing "
            "runs (ask whoever manages this computer)"
        )


@dataclass(frozen=True)
class PolicyState:
    """The policies in force now and the files refused; no file at all: both empty."""

    policies: tuple[Policy, ...] = ()
    refused: tuple[RefusedFile, ...] = ()

    @property
    def managed(self) -> bool:
        """An organisation manages this machine (a policy file exists, trusted or not)."""
        return bool(self.policies or self.refused)


NO_POLICY = PolicyState()


# -- checking a file ---------------------------------------------------------------------
@cache
def _validator() -> Validator:
    import jsonschema  # only once a policy file is there to read

    schema: dict[str, Any] = json.loads(resources.path(SCHEMA_FILE).read_text("utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def schema_issues(raw: Any) -> list[Issue]:
    """Every problem of a parsed policy document at once, each with its JSON path: the
    schema's, and a kind this Helm does not have (a typo would allow nothing of it)."""
    from broker.kinds import KINDS  # the registry imports every kind's rules

    found = {issue for err in _validator().iter_errors(raw) for issue in issues_of(err)}
    kinds = raw.get("kinds") if isinstance(raw, dict) else None
    for name in kinds if isinstance(kinds, dict) else ():
        if name not in KINDS:
            found.add(
                Issue(f"$.kinds.{name}", f"{name!r} is not a kind of this Helm (known: {', '.join(KINDS)})")
            )
    return sorted(found, key=lambda i: (i.path, i.message))


def check_text(data: bytes) -> tuple[Any, list[Issue]]:
    """The document and every problem in it (JSON first: a document that does not parse has
    only that problem)."""
    if len(data) > MAX_BYTES:
        return None, [Issue("$", "the policy file is larger than 1 MiB")]
    try:
        raw = loads_strict(data)
    except DuplicateKeyError as exc:
        return None, [Issue("$", str(exc))]
    except (ValueError, RecursionError) as exc:
        return None, [Issue("$", f"not valid JSON: {exc}")]
    return raw, schema_issues(raw)


def check_file(path: Path) -> list[Issue]:
    """What ``helm policy check`` reports: every problem of the file's contents (its owner
    and mode are checked where it is deployed, by ``load``)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return [Issue("$", f"cannot read {path}: {exc.strerror}")]
    return check_text(data)[1]


def unsafe(path: Path) -> str | None:
    """Why a file at ``path`` could have been written by someone other than root (None: it
    could not). POSIX only: on Windows the folder's ACL is the deployment's to set."""
    if os.name != "posix":
        return None
    try:
        st = os.lstat(path)
    except OSError as exc:
        return f"it cannot be read ({exc.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link (deploy the file itself)"
    if not stat.S_ISREG(st.st_mode):
        return "it is not a regular file"
    if st.st_uid != 0:
        return f"it is owned by user id {st.st_uid}, not by root"
    if st.st_mode & 0o022:
        return f"it is writable by {_who(st.st_mode)} (mode {stat.S_IMODE(st.st_mode):o})"
    for folder in path.absolute().parents:
        try:
            fst = os.stat(folder)
        except OSError as exc:
            return f"its folder {folder} cannot be read ({exc.strerror})"
        if fst.st_uid != 0:
            return f"its folder {folder} is owned by user id {fst.st_uid}, not by root"
        if fst.st_mode & 0o022 and not fst.st_mode & stat.S_ISVTX:
            return (
                f"its folder {folder} is writable by {_who(fst.st_mode)} (mode {stat.S_IMODE(fst.st_mode):o})"
            )
    return None


def _who(mode: int) -> str:
    both = mode & 0o020 and mode & 0o002
    return "its group and everyone" if both else "its group" if mode & 0o020 else "everyone"


def load(path: Path) -> Policy | RefusedFile:
    """The policy in ``path``, or why Helm refuses it."""
    why = unsafe(path)
    if why is not None:
        return RefusedFile(path, why)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return RefusedFile(path, f"it cannot be read ({exc.strerror})")
    raw, issues = check_text(data)
    if issues:
        listed = "; ".join(f"{i.path}: {i.message}" for i in issues[:5])
        more = f" (and {len(issues) - 5} more)" if len(issues) > 5 else ""
        return RefusedFile(path, f"it is not a valid policy ({listed}{more}; see `helm policy check`)")
    return parse(path, raw)


# -- following the files -------------------------------------------------------------------
Stamp = tuple[int, int, int, int, int, int]


def _stamp(path: str) -> Stamp | None:
    # Every call asks: a missing file is told by ``access`` (no exception to build), and only a
    # file that is there is stat-ed.
    if not os.access(path, os.F_OK, follow_symlinks=False):
        return None
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError:
        return (-1, -1, -1, -1, -1, -1)  # unreadable: ``load`` says why
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode, st.st_uid)


Files = tuple[tuple[Path, str, bool], ...]
"""Each policy file: its path, the same as text (stat-ed at every call), whether it must exist."""


class PolicySource:
    """The policy files of this machine (and ``HELM_POLICY``), re-read when they change.

    ``paths`` fixes the files (tests); by default the machine's file and ``HELM_POLICY``,
    looked up at each ``state()`` so a change of the variable counts too.
    """

    def __init__(self, paths: tuple[Path, ...] | None = None) -> None:
        self._fixed: Files | None = None if paths is None else tuple((p, str(p), False) for p in paths)
        self._files: tuple[str | None, Files] | None = None
        self._loaded: dict[Path, tuple[Stamp | None, Policy | RefusedFile | None]] = {}
        self._state: tuple[Files, tuple[Stamp | None, ...], PolicyState] | None = None

    def paths(self) -> tuple[tuple[Path, bool], ...]:
        """Each file and whether it must exist (``HELM_POLICY`` names a file that must)."""
        return tuple((path, must) for path, _, must in self._current())

    def _current(self) -> Files:
        if self._fixed is not None:
            return self._fixed
        named = os.environ.get(ENV) or None
        if self._files is None or self._files[0] != named:
            machine = machine_path()
            extra = ((Path(named), named, True),) if named else ()
            self._files = (named, ((machine, str(machine), False), *extra))
        return self._files[1]

    def state(self) -> PolicyState:
        """The policies in force now (each file stat-checked, read again only on a change)."""
        files = self._current()
        stamps = tuple([_stamp(text) for _, text, _ in files])  # a list is built inline, a generator is not
        if self._state is not None and self._state[0] is files and self._state[1] == stamps:
            return self._state[2]
        policies: list[Policy] = []
        refused: list[RefusedFile] = []
        for (path, _, must), stamp in zip(files, stamps, strict=True):
            found = self._load(path, stamp)
            if found is None and must:
                found = RefusedFile(path, f"{ENV} names it, but it does not exist")
            if isinstance(found, Policy):
                policies.append(found)
            elif found is not None:
                refused.append(found)
        state = PolicyState(tuple(policies), tuple(refused))
        if self._state is not None and self._state[2] == state:
            state = self._state[2]  # the same policy: the same object (``Broker.policy_stops``)
        self._state = (files, stamps, state)
        return state

    def _load(self, path: Path, stamp: Stamp | None) -> Policy | RefusedFile | None:
        cached = self._loaded.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        found = None if stamp is None else load(path)
        self._loaded[path] = (stamp, found)
        return found


_DEFAULT = PolicySource()


def in_force() -> PolicyState:
    """The policy in force on this machine now: the one reading every part of Helm shares,
    as they share the machine's file (a process-wide cache of a machine-wide file)."""
    return _DEFAULT.state()
