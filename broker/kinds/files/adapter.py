"""The files kind: list, read and a confirmed write under a workspace or project root.

Arguments are validated before any file is touched. Both the validation (which matches paths
against the globs) and the file work run in a worker thread, so the event loop never waits on
the disk or on glob matching; every file is reached through the file guard (``guard``).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from broker.envelope import PLAIN
from broker.errors import CallError, ErrorCode
from broker.fs.diff import line_diff
from broker.fs.guard import FileGuard, GuardRoot, Root, checked_sha256, encode_text
from broker.fs.reading import MAX_BATCH_PATHS, read_batch, read_text
from broker.fs.safe import OpenRoot, RelPath, parse_path, refused
from broker.fs.writing import replace_file
from broker.kinds.base import JSON, Call, KindEnv, WriteDetails
from broker.kinds.files import FILES
from broker.kinds.files.globs import LIST_MATCH_STEPS, MATCH_STEPS, GlobSet
from broker.kinds.files.listing import list_files
from broker.kinds.files.rules import FilesConnection
from broker.kinds.files.wildcard import Budget
from broker.settings import Workspace

_ALLOWED_ARGS = {
    "list": frozenset({"project"}),
    "read": frozenset({"project", "path", "paths"}),
    "write": frozenset({"project", "path", "text", "expected_sha256"}),
}


def resolve_root(conn: FilesConnection, workspace: Workspace, args: Mapping[str, JSON]) -> Root:
    if conn.root == "workspace":
        if "project" in args:
            raise refused("this connection works in the workspace; do not pass project")
        return Root("Workspace", workspace.name, workspace.root)
    project = args.get("project")
    if not isinstance(project, str) or not project:
        raise refused("project is required: the id of a project registered with helm project add")
    folder = workspace.projects.get(project)
    if folder is None:
        raise CallError(ErrorCode.NOT_CONFIGURED, f"no project {project!r} is registered in this workspace")
    return Root("Project", project, folder)


@dataclass(frozen=True)
class Request:
    """A validated files call: the operation, its root, its globs and its paths."""

    op: str
    root: Root
    globs: GlobSet
    budget: Budget
    path: RelPath | None = None
    paths: tuple[RelPath, ...] = ()
    text: str = ""
    data: bytes = b""
    expected_sha256: str = ""


def _allowed(globs: GlobSet, path: RelPath, budget: Budget) -> RelPath:
    if not globs.matches(path.segments, budget):
        raise refused(f"{path.text!r} does not match a path declared by this connection")
    return path


def _batch(globs: GlobSet, value: JSON, budget: Budget) -> tuple[RelPath, ...]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_BATCH_PATHS:
        raise refused(f"paths must be a list of 1 to {MAX_BATCH_PATHS} paths")
    paths = tuple(_allowed(globs, parse_path(p, f"paths[{i}]"), budget) for i, p in enumerate(value))
    if len({p.text for p in paths}) != len(paths):
        raise refused("paths must not repeat a path")
    return paths


def _write_args(args: Mapping[str, JSON]) -> tuple[str, bytes, str]:
    data = encode_text(args.get("text"))
    return str(args["text"]), data, checked_sha256(args.get("expected_sha256"))


def parse_request(call: Call[FilesConnection]) -> Request:
    """Validate every argument (no file I/O; the globs' work is bounded) and resolve the root."""
    op, args = call.operation, call.args
    unknown = sorted(set(args) - _ALLOWED_ARGS.get(op, frozenset()))
    if unknown:
        raise refused(f"unknown argument(s) for {op}: {', '.join(unknown)}")
    globs = call.connection.globs
    root = resolve_root(call.connection, call.workspace, args)
    budget = Budget(LIST_MATCH_STEPS if op == "list" else MATCH_STEPS)
    if op == "list":
        return Request(op, root, globs, budget)
    if op == "read":
        if ("path" in args) == ("paths" in args):
            raise refused("give either path (one file) or paths (1 to 100 files)")
        if "paths" in args:
            return Request(op, root, globs, budget, paths=_batch(globs, args["paths"], budget))
        return Request(op, root, globs, budget, path=_allowed(globs, parse_path(args["path"]), budget))
    if op == "write":
        path = _allowed(globs, parse_path(args.get("path")), budget)
        text, data, expected = _write_args(args)
        return Request(op, root, globs, budget, path=path, text=text, data=data, expected_sha256=expected)
    raise refused(f"the files kind has no operation {op!r}")


def _with_root[T](req: Request, home: Path, work: Callable[[OpenRoot, FileGuard], T]) -> T:
    guard = FileGuard([GuardRoot(req.root.folder, req.root.what)], home)
    with guard.opened() as root:
        return work(root, guard)


def _run(req: Request, home: Path) -> JSON:
    if req.op == "list":
        return _with_root(req, home, lambda root, _: list_files(root, req.globs, req.budget))
    if req.op == "read" and req.path is None:
        return _with_root(req, home, lambda root, _: read_batch(root, req.paths))
    assert req.path is not None  # parse_request gives read and write a path
    path = req.path
    if req.op == "read":
        return _with_root(req, home, lambda root, _: read_text(root, path).as_json())
    sha = _with_root(
        req, home, lambda root, g: replace_file(root, path, req.data, req.expected_sha256, g.ledger)
    )
    return {"path": path.text, "sha256": sha}


def _describe(req: Request, home: Path) -> WriteDetails:
    assert req.path is not None
    path = req.path
    current = _with_root(req, home, lambda root, _: read_text(root, path))
    new_sha = hashlib.sha256(req.data).hexdigest()
    request = (
        f"Replace {path.text} in {req.root.label.lower()} {req.root.name}\n"
        f"expected sha256 {req.expected_sha256}\n"
        f"new sha256 {new_sha} ({len(req.data)} bytes)"
    )
    # Not an error here: describe also runs when a token is redeemed, and a missing or stale
    # token must be reported as such. The write itself returns conflict and changes nothing.
    if current.sha256 != req.expected_sha256:
        request += "\nThe file changed since it was read: this write will return conflict."
    binding = {
        "root": str(req.root.folder),
        "project": req.root.name if req.root.label == "Project" else None,
        "path": path.text,
        "expected_sha256": req.expected_sha256,
        "text": req.text,
    }
    return FILES.confirm.details(
        fields=((req.root.label, req.root.name), ("Path", path.text)),
        request=request,
        binding=binding,
        diff=line_diff(path.text, current.text, req.text),
        file=f"{req.root.name}/{path.text}",
    )


class FilesKind:
    """The adapter of the files kind (see ``broker.kinds.base.Kind``)."""

    def __init__(self, env: KindEnv) -> None:
        self._env = env

    async def pin(self, workspace: Workspace, conn: FilesConnection) -> Mapping[str, JSON]:
        return {}

    async def describe(self, call: Call[FilesConnection]) -> WriteDetails:
        return await asyncio.to_thread(self._describe_now, call)

    def _describe_now(self, call: Call[FilesConnection]) -> WriteDetails:
        req = parse_request(call)
        if req.op != "write":
            raise refused(f"{req.op!r} is not a write")
        return _describe(req, self._env.home.path)

    async def execute(self, call: Call[FilesConnection]) -> dict[str, Any]:
        data = await asyncio.to_thread(lambda: _run(parse_request(call), self._env.home.path))
        return PLAIN.success(data, None)

    async def aclose(self) -> None:
        return None
