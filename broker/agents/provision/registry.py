"""Tarball downloads from an npm registry, hashed as they stream and bounded in size and time.

The registry is not trusted: every byte is checked against the sha512 the signed catalogue pins,
so a mirror (``HELM_NPM_REGISTRY``) changes where bytes come from, never what is accepted. A
download that stops early, grows past its bound or outlives its deadline raises, and the
partial file is removed by the caller's staging folder, never extracted.
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from broker.agents.provision.catalogue import Pinned
from broker.agents.provision.errors import DownloadError, IntegrityError, ProvisionError

DEFAULT_REGISTRY = "https://registry.npmjs.org/"
REGISTRY_ENV = "HELM_NPM_REGISTRY"
MIB = 1024 * 1024


@dataclass(frozen=True)
class InstallLimits:
    """Bounds on one installation; the defaults hold the known adapters several times over."""

    max_tarball: int = 256 * MIB
    max_download: int = 1024 * MIB
    max_unpacked: int = 2048 * MIB
    max_files: int = 200_000
    tarball_seconds: float = 300.0
    parallel: int = 6


@dataclass
class InstallBudget:
    """What one installation has used so far, shared by its downloads and extractions."""

    limits: InstallLimits
    downloaded: int = 0
    unpacked: int = 0
    files: int = 0
    stopped: bool = False  # set when the installation is abandoned

    @property
    def max_files(self) -> int:
        return self.limits.max_files

    @property
    def max_unpacked(self) -> int:
        return self.limits.max_unpacked


def registry_url(environ: Mapping[str, str] | None = None) -> str:
    """The registry to download from: ``HELM_NPM_REGISTRY`` if set, else the public npm registry."""
    env = os.environ if environ is None else environ
    return check_registry_url(env.get(REGISTRY_ENV) or DEFAULT_REGISTRY)


def check_registry_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.username or parts.password:
        raise ProvisionError(f"{REGISTRY_ENV}: a registry URL with credentials in it is not supported")
    if parts.scheme != "https" and not (parts.scheme == "http" and _loopback(parts.hostname)):
        raise ProvisionError(f"{REGISTRY_ENV}: the registry must be an https:// URL (http only on loopback)")
    if not parts.hostname:
        raise ProvisionError(f"{REGISTRY_ENV}: {url!r} is not a registry URL")
    return url if url.endswith("/") else url + "/"


def _loopback(host: str | None) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host or "").is_loopback
    except ValueError:
        return False


def new_client() -> httpx.AsyncClient:
    """The HTTP client for registry downloads: bounded waits, a few redirects (mirrors use them)."""
    return httpx.AsyncClient(
        timeout=httpx.Timeout(30.0, connect=15.0), follow_redirects=True, max_redirects=5
    )


def tarball_url(base: str, name: str, version: str) -> str:
    """npm's tarball address: ``<registry>/@scope/name/-/name-1.2.3.tgz``."""
    return f"{base}{name}/-/{name.rpartition('/')[2]}-{version}.tgz"


class Registry:
    """Downloads pinned tarballs from one registry through the caller's ``httpx.AsyncClient``."""

    def __init__(self, client: httpx.AsyncClient, base_url: str | None = None) -> None:
        self._client = client
        self.base_url = check_registry_url(base_url) if base_url else registry_url()

    async def download(self, pin: Pinned, dest: Path, budget: InstallBudget) -> int:
        """Write ``pin``'s tarball to ``dest`` (created new) and verify it; return its size."""
        label = f"{pin.name}@{pin.version}"
        hasher = hashlib.sha512()
        try:
            async with asyncio.timeout(budget.limits.tarball_seconds):
                size = await self._stream(pin, dest, hasher, budget)
        except TimeoutError:
            raise DownloadError(
                f"{label}: the download took longer than {budget.limits.tarball_seconds:.0f} s"
            ) from None
        except OSError as exc:
            raise DownloadError(f"{label}: cannot save the tarball ({exc.strerror})") from None
        except httpx.HTTPError as exc:
            raise DownloadError(
                f"{label}: the download from {urlsplit(self.base_url).hostname} failed "
                f"({type(exc).__name__}); nothing was installed"
            ) from None
        if not pin.integrity.matches(hasher.digest()):
            raise IntegrityError(
                f"{label}: the tarball's sha512 is not the one Helm's catalogue pins; it was "
                "discarded unopened (the registry or a proxy served different bytes)"
            )
        return size

    async def _stream(self, pin: Pinned, dest: Path, hasher: hashlib._Hash, budget: InstallBudget) -> int:
        label = f"{pin.name}@{pin.version}"
        url = tarball_url(self.base_url, pin.name, pin.version)
        async with self._client.stream("GET", url) as response:
            if response.status_code != 200:
                raise DownloadError(f"{label}: the registry answered HTTP {response.status_code}")
            size = 0
            with dest.open("xb") as fh:
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    budget.downloaded += len(chunk)
                    _check_bounds(label, size, budget)
                    hasher.update(chunk)
                    fh.write(chunk)
        return size


def _check_bounds(label: str, size: int, budget: InstallBudget) -> None:
    if size > budget.limits.max_tarball:
        raise DownloadError(f"{label}: the tarball is larger than {budget.limits.max_tarball // MIB} MiB")
    if budget.downloaded > budget.limits.max_download:
        raise DownloadError(
            f"the adapter's tarballs add up to more than {budget.limits.max_download // MIB} MiB"
        )
