"""Ledger predicates per domain; importing this package registers them all."""

from __future__ import annotations

from tauguard_strategies.ledger.predicates import airline, retail, telecom  # noqa: F401  (registration)
from tauguard_strategies.ledger.predicates.base import (
    Finding,
    GateContext,
    NeedFact,
    Predicate,
    predicates,
)


def for_tool(domain: str, tool: str) -> list[Predicate]:
    """The predicates gating ``tool`` in ``domain``, in registration order."""
    return [p for _, p in predicates.items() if p.domain == domain and p.tool == tool]


def all_predicates() -> list[Predicate]:
    """Every registered predicate."""
    return [p for _, p in predicates.items()]


__all__ = ["Finding", "GateContext", "NeedFact", "Predicate", "all_predicates", "for_tool"]
