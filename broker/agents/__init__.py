"""Governed coding agents: ACP agents run inside Helm's boundary."""
