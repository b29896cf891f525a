"""`ledger` strategy: LedgerAgent (Uddin et al., "LedgerAgent: Structured State for
Policy-Adherent Tool-Calling Agents", arXiv:2606.20529).

A typed ledger filled only from successful read-tool returns is rendered into the agent's
prompt, and every WRITE call is checked against predicates over it before it runs, with no
extra model call. Public API:

- :class:`LedgerStrategy` (registered as ``ledger``) and :class:`LedgerSession`;
- :func:`gate.evaluate` (the gate), :func:`render.render`, :func:`update.absorb`;
- :mod:`clauses` (the cited policy clauses), :mod:`predicates` (the checks). The gold-plan
  no-false-block sweep is core's, for every strategy: ``tauguard probes sweep --strategy ledger``.
"""

from __future__ import annotations

from tauguard_strategies.ledger.session import LedgerSession
from tauguard_strategies.ledger.strategy import LedgerStrategy

__all__ = ["LedgerSession", "LedgerStrategy"]
