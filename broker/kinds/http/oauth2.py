"""OAuth2 tokens for service profiles (placeholder until sign-in lands)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import httpx

from broker.errors import CallError, ErrorCode
from broker.kinds.base import KindEnv
from broker.kinds.http.profiles import ServiceProfile


class OAuthTokens:
    def __init__(self, env: KindEnv, client: Callable[[], httpx.AsyncClient]) -> None:
        self.env = env
        self.client = client

    def check(self, profile: ServiceProfile, conn: Mapping[str, Any]) -> None:
        raise CallError(ErrorCode.NOT_AUTHORIZED, f"service {profile.name!r} is not connected")

    async def access_token(self, profile: ServiceProfile, conn: Mapping[str, Any]) -> str:
        self.check(profile, conn)
        return ""
