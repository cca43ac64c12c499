"""The organisation's policy, which outranks the user: where it comes from, what it says, and
the decisions Helm takes from it.

* ``broker.policy.source`` — the machine's policy file (``/etc/helm/policy.json``) and
  ``HELM_POLICY``, trusted only when root alone could have written them; ``in_force()`` is the
  ``PolicyState`` now, re-read when a file changes.
* ``broker.policy.model`` — ``Policy``, the typed rules (``resources/policy.schema.json``).
* ``broker.policy.decide`` — one pure function per question (may this extension run, this call
  go on, this agent start…), each a ``Refusal`` or None.
* ``broker.policy.enforce`` — the broker's steps that ask it beside the declaration (built-in
  calls, a confirmed write about to be sent, the audit record of a refusal) and
  ``PolicyWatch``, which stops what a new policy forbids (``Broker.policy_stops``).

docs/teams.md is the administrator's guide.
"""

from broker.policy.decide import WORDS, Refusal
from broker.policy.model import Policy
from broker.policy.source import PolicySource, PolicyState, RefusedFile, in_force

__all__ = ["WORDS", "Policy", "PolicySource", "PolicyState", "Refusal", "RefusedFile", "in_force"]
