"""http kind: broker overhead per call against raw httpx to the same local server, same run."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import httpx

from broker import CallContext
from broker.redact import Scrubber
from tests.bench.conftest import Bench
from tests.helpers import new_broker
from tests.servers.services import JsonServer
from tests.unit.kinds.http_setup import service_extension

CALLS = {"find": {"method": "GET", "path": "/items", "query": {"name": "{name}"}}}


async def test_http_call_overhead_against_raw_httpx(bench: Bench, tmp_path: Path, json_server: JsonServer):
    async with new_broker(tmp_path / "home") as broker:
        ctx = await service_extension(broker, tmp_path, json_server.url, CALLS)
        instances = itertools.count()

        async def through_helm() -> object:
            # A fresh instance per call: the bench measures the call, not the rate limit.
            fresh = CallContext(ctx.workspace, ctx.extension, f"b{next(instances)}")
            result = await broker.call(fresh, "api", "find", {"name": "compass"})
            assert result["ok"]
            return result["data"]

        async with httpx.AsyncClient(trust_env=False) as client:

            async def raw() -> object:
                response = await client.get(
                    f"{json_server.url}/items",
                    params={"name": "compass"},
                    headers={"Authorization": "Bearer t"},
                )
                response.raise_for_status()
                return response.json()

            # Interleave the two so a noisy neighbour slows both alike.
            helm_a = await bench.atime(through_helm, repeat=100)
            raw_a = await bench.atime(raw, repeat=100)
            helm_b = await bench.atime(through_helm, repeat=100)
            raw_b = await bench.atime(raw, repeat=100)
    helm, base = min(helm_a, helm_b), min(raw_a, raw_b)
    bench.record("http GET through the broker (json-server)", helm, base, note="vs raw httpx, same server")
    assert helm > 0


def test_redacting_a_1_mib_answer_against_parsing_it(bench: Bench):
    # What every signed call pays after its answer is parsed: one pass over every string.
    rows = [{"id": i, "name": f"item {i}", "tags": ["a", "b"], "note": "x" * 40} for i in range(9000)]
    text = json.dumps(rows)
    assert 0.9 * 2**20 < len(text) <= 2**20
    secret = "tok-9f8e7d6c5b4a"

    def scrub() -> object:
        return Scrubber([f"Bearer {secret}", secret]).value(json.loads(text))

    def parse() -> object:
        return json.loads(text)

    helm = min(bench.time(scrub, repeat=20), bench.time(scrub, repeat=20))
    raw = min(bench.time(parse, repeat=20), bench.time(parse, repeat=20))
    bench.record("http redaction of a 1 MiB answer (parse + scrub)", helm, raw, note="vs json.loads alone")
    assert helm > 0


def test_redacting_a_1_mib_answer_that_echoes_the_secret_against_parsing_it(bench: Bench):
    # The walk itself: one string in a hundred holds the secret, as sent or percent-encoded.
    secret = "tok-9f8e7d6c/5b4a+x"
    echoes = [secret, "tok-9f8e7d6c%2F5b4a%2Bx", "tok-9f8e7d6c%2f5b4a%2bx", "tok-9f8e7d6c/5b4a%2Bx"]
    notes = [echoes[i // 100 % 4] if i % 100 == 0 else "x" * 40 for i in range(9000)]
    rows = [{"id": i, "name": f"item {i}", "tags": ["a", "b"], "note": note} for i, note in enumerate(notes)]
    text = json.dumps(rows)
    assert 0.9 * 2**20 < len(text) <= 2**20

    def scrub() -> object:
        scrubber = Scrubber([f"Bearer {secret}", secret])
        value = scrubber.value(json.loads(text))
        assert scrubber.count == 90
        return value

    def parse() -> object:
        return json.loads(text)

    helm = min(bench.time(scrub, repeat=20), bench.time(scrub, repeat=20))
    raw = min(bench.time(parse, repeat=20), bench.time(parse, repeat=20))
    bench.record("http redaction of a 1 MiB answer holding the secret", helm, raw, note="vs json.loads alone")
    assert helm > 0
