"""Typed ledger schemas per domain (the entities each domain policy talks about).

A domain's schema is the module ``schemas/<domain>.py`` and its ``LEDGER`` type, found by name
(adding a domain adds the file, nothing here).
"""

from __future__ import annotations

from tauguard_strategies.domain_modules import load_domain_modules
from tauguard_strategies.ledger.ledger import LedgerBase


def _ledger_types() -> dict[str, type[LedgerBase]]:
    types: dict[str, type[LedgerBase]] = {}
    for domain, module in load_domain_modules(__name__).items():
        ledger = getattr(module, "LEDGER", None)
        if not (isinstance(ledger, type) and issubclass(ledger, LedgerBase)):
            raise TypeError(f"{module.__name__}: LEDGER must be the domain's LedgerBase subclass")
        types[domain] = ledger
    return types


LEDGER_TYPES: dict[str, type[LedgerBase]] = _ledger_types()


def new_ledger(domain: str) -> LedgerBase:
    """An empty ledger for ``domain``."""
    if domain not in LEDGER_TYPES:
        raise ValueError(f"the ledger strategy has no schema for domain '{domain}'")
    return LEDGER_TYPES[domain](domain=domain)


__all__ = ["LEDGER_TYPES", "new_ledger"]
