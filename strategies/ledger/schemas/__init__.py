"""Typed ledger schemas per domain (the entities each domain policy talks about)."""

from __future__ import annotations

from tauguard_strategies.ledger.ledger import LedgerBase
from tauguard_strategies.ledger.schemas.airline import AirlineLedger
from tauguard_strategies.ledger.schemas.retail import RetailLedger
from tauguard_strategies.ledger.schemas.telecom import TelecomLedger

LEDGER_TYPES: dict[str, type[LedgerBase]] = {
    "airline": AirlineLedger,
    "retail": RetailLedger,
    "telecom": TelecomLedger,
}


def new_ledger(domain: str) -> LedgerBase:
    """An empty ledger for ``domain``."""
    if domain not in LEDGER_TYPES:
        raise ValueError(f"the ledger strategy has no schema for domain '{domain}'")
    return LEDGER_TYPES[domain](domain=domain)


__all__ = ["LEDGER_TYPES", "AirlineLedger", "RetailLedger", "TelecomLedger", "new_ledger"]
