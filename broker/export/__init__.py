"""Audit and activity export: records leave the machine for the systems an organisation runs.

``AuditExporter`` (``broker.export.exporter``) takes each audit record once the home's log has
it, and each activity record, and sends them through bounded queues to the sinks in effect:
JSON Lines files and syslog receivers (``broker.export.config``), in the versioned format of
``broker.export.records``. The policy hands its own sinks in as plain ``SinkConfig`` objects
(``AuditExporter.set_managed``); the user's come from settings (``broker.teams``).
"""

from broker.export.config import JsonlSinkConfig, SinkConfig, SyslogSinkConfig, parse_sink
from broker.export.exporter import AuditExporter, SinkStatus

__all__ = ["AuditExporter", "JsonlSinkConfig", "SinkConfig", "SinkStatus", "SyslogSinkConfig", "parse_sink"]
