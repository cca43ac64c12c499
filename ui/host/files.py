"""Which file of an extension folder a ``helm-ext`` URL names, and its MIME type.

Pure filesystem logic, no Qt. A URL path maps to a regular file inside the extension folder
or to nothing: no ``..``, no hidden tricks with encoded separators, no symlinks anywhere on
the way (a symlink could point out of the folder, and extension folders have no need for one).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

MAX_SERVED_BYTES = 32 * 1024 * 1024

# Decisions as data: the types a browser needs to run a page; anything else is served as
# opaque bytes (with nosniff, so the browser will not guess).
MIME_TYPES: dict[str, str] = {
    ".html": "text/html; charset=utf-8",
    ".htm": "text/html; charset=utf-8",
    ".js": "text/javascript",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/plain; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".ico": "image/x-icon",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
    ".mp3": "audio/mpeg",
    ".mp4": "video/mp4",
    ".webm": "video/webm",
    ".wasm": "application/wasm",
}
DEFAULT_MIME_TYPE = "application/octet-stream"


def mime_type(name: str) -> str:
    return MIME_TYPES.get(PurePosixPath(name).suffix.lower(), DEFAULT_MIME_TYPE)


@dataclass(frozen=True, slots=True)
class Served:
    data: bytes
    mime: str


@dataclass(frozen=True, slots=True)
class NotServed:
    reason: str


def url_path_parts(url_path: str) -> tuple[str, ...] | None:
    """The segments of a URL path, or None if any segment could leave or confuse the folder."""
    parts = []
    for raw in url_path.split("/"):
        if raw == "":
            continue
        seg = unquote(raw, errors="strict") if "%" in raw else raw
        if seg in {".", ".."} or "/" in seg or "\\" in seg or "\x00" in seg:
            return None
        parts.append(seg)
    return tuple(parts) if parts else None


def read_served(root: Path, url_path: str, limit: int = MAX_SERVED_BYTES) -> Served | NotServed:
    """The bytes of the file ``url_path`` names under ``root``, or why not."""
    try:
        parts = url_path_parts(url_path)
    except UnicodeDecodeError:
        return NotServed("path is not UTF-8")
    if parts is None:
        return NotServed("path is empty or leaves the extension folder")
    current = root
    for seg in parts[:-1]:
        current = current / seg
        try:
            st = current.lstat()
        except OSError:
            return NotServed("no such file")
        if not stat.S_ISDIR(st.st_mode):
            return NotServed("not a folder (symlinks are refused)")
    target = current / parts[-1]
    try:
        # O_NOFOLLOW refuses a symlink as the last segment even if it appeared a moment ago.
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return NotServed("no such file (symlinks are refused)")
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
        os.close(fd)
        return NotServed("not a regular file" if not stat.S_ISREG(st.st_mode) else "too large")
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        return NotServed("file too large to serve")
    return Served(data, mime_type(parts[-1]))
