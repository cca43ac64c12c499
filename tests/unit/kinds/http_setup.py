"""Shared set-up for http kind tests: a service profile and an extension calling it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from broker import Broker, CallContext
from broker.kinds.http.profiles import SERVICES, ServiceProfile
from tests.helpers import manifest_dict, setup_extension

TOKEN = "tok-9f8e7d6c5b4a"


async def service_extension(
    broker: Broker,
    tmp_path: Path,
    base_url: str,
    calls: dict[str, Any],
    *,
    token: str | None = TOKEN,
    token_format: str = "bearer",
    token_header: str = "Authorization",
    write: bool = False,
    service: str = "svc",
) -> CallContext:
    profile = ServiceProfile(service, base_url, "token", token_header, token_format)  # type: ignore[arg-type]
    SERVICES.store(broker.home, broker.credentials).save(profile, {"token": token})
    conn = {"id": "api", "kind": "http", "service": service, "calls": calls}
    return await setup_extension(broker, tmp_path, manifest_dict([conn], write=write))


def code(result: dict[str, Any]) -> str | None:
    return None if result["ok"] else result["error"]["code"]


def leaks(result: Any, *secrets: str) -> bool:
    text = json.dumps(result)
    return any(s in text for s in secrets)
