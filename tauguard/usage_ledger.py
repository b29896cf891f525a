"""The per-simulation usage ledger: the calls, tokens, cost, cache hits, retries and waits each role booked.

Every LLM call of a simulation is booked here as it happens (:func:`book`), by
:mod:`tauguard.llm_call` (calls, tokens, cost) and by :mod:`tauguard.provider` (cache
hits, retries, waits); both import this module, so neither imports the other for it. One ledger
per running simulation, in a context variable (threads and nested :func:`metered` blocks each
see their own).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from pydantic import BaseModel

from tauguard.strategy_api.guard import GuardUsage


class RoleUsage(BaseModel):
    """Cost and tokens of one role (agent, user, guard, attacker) in one trial.

    What the ledger fills and what a record stores (``TrialRecord.usage``, persisted in
    every record: a field added here is a record-schema change).
    """

    cost: float | None = 0.0  # None when the provider reported no cost; cache hits cost 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    cache_hits: int = 0  # calls answered from --cache (included in calls)
    retries: int = 0  # failed attempts retried (provider discipline)
    waited_s: float = 0.0  # seconds spent in the rate limiter and backing off


_LEDGER: contextvars.ContextVar["UnitLedger | None"] = contextvars.ContextVar("tauguard_ledger", default=None)


class UnitLedger:
    """Per-role usage of one simulation, booked as calls happen."""

    def __init__(self) -> None:
        self.roles: dict[str, RoleUsage] = {}
        self.scripted = 0  # answers from the scripted loopback server (SCRIPTED_FINGERPRINT)
        self._lock = threading.Lock()

    def book(self, role: str, **amounts: float) -> None:
        """Add ``amounts`` (RoleUsage field -> number) to ``role``."""
        with self._lock:
            usage = self.roles.setdefault(role, RoleUsage())
            for name, amount in amounts.items():
                current = getattr(usage, name)
                setattr(usage, name, (current or 0) + amount if name == "cost" else current + amount)

    def merged(self, usage: dict[str, RoleUsage]) -> dict[str, RoleUsage]:
        """``usage`` (counted from the conversation and guard events) with the ledger's cache
        hits, retries and waits added, and the roles only the ledger saw (e.g. ``attacker``)."""
        out = dict(usage)
        with self._lock:
            for role, booked in self.roles.items():
                if role not in out:
                    out[role] = booked.model_copy()
                    continue
                out[role] = out[role].model_copy(
                    update={"cache_hits": booked.cache_hits, "retries": booked.retries, "waited_s": booked.waited_s}
                )
        return out


@contextmanager
def metered() -> Iterator[UnitLedger]:
    """Book the calls made inside the ``with`` block in a fresh ledger (the enclosing one, if
    any, sees none of them); the audit uses it to count each hook's calls."""
    ledger = UnitLedger()
    token = _LEDGER.set(ledger)
    try:
        yield ledger
    finally:
        _LEDGER.reset(token)


def guard_usage(ledger: UnitLedger, role: str = "guard") -> GuardUsage:
    """The calls, tokens and cost ``ledger`` booked for ``role``, as a :class:`GuardUsage`."""
    booked = ledger.roles.get(role)
    if booked is None:
        return GuardUsage()
    return GuardUsage(llm_calls=booked.calls, prompt_tokens=booked.prompt_tokens,
                      completion_tokens=booked.completion_tokens, cost=booked.cost or 0.0)


def start_unit() -> UnitLedger:
    """A fresh ledger for the simulation running in this thread."""
    ledger = UnitLedger()
    _LEDGER.set(ledger)
    return ledger


def current() -> UnitLedger | None:
    """The ledger of the simulation running in this thread, if any."""
    return _LEDGER.get()


def book(role: str, **amounts: float) -> None:
    """Book ``amounts`` for ``role`` in the current simulation's ledger (none: dropped)."""
    ledger = _LEDGER.get()
    if ledger is not None:
        ledger.book(role, **amounts)
