"""Ledger predicates per domain; importing this package registers them all.

A domain's predicates are the module ``predicates/<domain>.py``, found by name (adding a domain
adds the file, nothing here); importing it registers them.
"""

from __future__ import annotations

from tauguard_strategies.domain_modules import load_domain_modules
from tauguard_strategies.ledger.predicates.base import (
    Finding,
    GateContext,
    NeedFact,
    Predicate,
    predicates,
)

# Registration: each domain's module registers its predicates when imported.
load_domain_modules(__name__)


def for_tool(domain: str, tool: str) -> list[Predicate]:
    """The predicates gating ``tool`` in ``domain``, in registration order."""
    return [p for _, p in predicates.items() if p.domain == domain and p.tool == tool]


def all_predicates() -> list[Predicate]:
    """Every registered predicate."""
    return [p for _, p in predicates.items()]


__all__ = ["Finding", "GateContext", "NeedFact", "Predicate", "all_predicates", "for_tool"]
