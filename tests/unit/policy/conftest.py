"""The ``policy`` fixture of every policy test (``policy_setup.PolicyFile``)."""

from tests.unit.policy.policy_setup import policy

__all__ = ["policy"]
