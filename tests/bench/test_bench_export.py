"""The audit export: what it adds to recording one audit record, with three sinks in effect, one
of them down.

Helm's figure is the export's tap on its own (``AuditExporter.audit``: the sinks read from
settings, the entry built, three appends to bounded queues) with a JSON Lines file, a syslog
receiver over UDP and a TCP receiver that is not there; the baseline is the fsynced audit record
it follows. The sinks' own work (the export file's fsync, the sockets, the down one's retries)
happens on their threads, off the call path.
"""

from __future__ import annotations

import socket
from pathlib import Path

from broker.audit import AuditLog
from broker.export import AuditExporter, parse_sink
from tests.bench.conftest import Bench
from tests.bench.test_bench_audit import RECORD
from tests.support import LOOPBACK, free_port


def test_exporting_an_audit_record_to_three_sinks_one_down_costs_the_record_little(
    bench: Bench, tmp_path: Path
) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as receiver:
        receiver.bind((LOOPBACK, 0))
        sinks = (
            parse_sink({"type": "jsonl", "path": str(tmp_path / "export.jsonl")}),
            parse_sink(
                {"type": "syslog", "transport": "udp", "address": f"{LOOPBACK}:{receiver.getsockname()[1]}"}
            ),
            parse_sink({"type": "syslog", "transport": "tcp", "address": f"{LOOPBACK}:{free_port()}"}),
        )
        exporter = AuditExporter(lambda: sinks, bound=100_000)
        log = AuditLog(tmp_path / "audit.jsonl")
        try:
            timings: dict[str, list[float]] = {"with": [], "without": []}
            for _ in range(3):  # interleaved, so a noisy neighbour slows both alike
                timings["with"].append(bench.time(lambda: exporter.audit(RECORD), repeat=300))
                timings["without"].append(bench.time(lambda: log.record(RECORD), repeat=100))
        finally:
            exporter.close(0.5)
    bench.record(
        "audit export: the tap, 3 sinks (1 down)", min(timings["with"]), min(timings["without"]),
        note="vs the fsynced audit record it follows",
    )  # fmt: skip
