"""The broker's public surface stays small and deliberate: ``broker.__all__`` changes only on
purpose, each entry point is documented for the caller it serves, and kinds are reached through
their typed spec, never by name."""

from __future__ import annotations

import inspect

import broker
from broker import Broker

PUBLIC = {
    "ApprovalChanged", "ApprovalDecision", "Broker", "CallContext", "CallError", "Confirmer",
    "CredentialStoreError", "Decision", "ErrorCode", "HelmError", "Manifest", "ManifestError",
    "Prepared", "ProfileError", "Review", "SettingsError", "Standing", "WritePipeline",
    "WriteSummary", "WriteTarget",
    "Requester", "ExtensionFrame", "AppInstance", "AgentRequester", "HelmItself",
}  # fmt: skip


def test_the_public_names_are_exactly_the_documented_ones_and_all_import() -> None:
    assert set(broker.__all__) == PUBLIC
    assert len(broker.__all__) == len(PUBLIC)
    assert all(getattr(broker, name, None) is not None for name in broker.__all__)


def test_each_entry_point_of_a_call_says_whom_it_is_for() -> None:
    doc = broker.__doc__ or ""
    for entry, caller in (("request_json", "web bridge"), ("request(", "helm call"), ("call(", "Confirm")):
        assert f"Broker.{entry}" in doc
        assert caller in doc
    for name in ("call", "request", "request_json", "describe_write", "kind", "database"):
        assert inspect.getdoc(getattr(Broker, name)), f"Broker.{name} has no docstring"


def test_a_kind_is_reached_through_its_spec_not_by_name() -> None:
    public = {name for name in vars(Broker) if not name.startswith("_")}
    assert "adapter" not in public
    assert "kind" in public
