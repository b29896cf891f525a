"""The one way tauguard's own code calls an LLM, and the per-role account of a simulation.

:func:`complete` is what LLM-backed guards, the classifier, the workflow verifier and the
attack planner call instead of ``litellm.completion``: it applies the process's provider
discipline (shared per-model rate limits, retries with backoff, the ``--cache``; see
:mod:`tauguard.execution.provider`) and books the call under its role. tau2's agent and
user completions go through the same discipline (``provider.install``) as roles
``agent`` and ``user``.

A simulation opens a :class:`UnitLedger` (:func:`start_unit`); every call made in its
thread is booked there by role: calls, tokens and cost of :func:`complete` calls, plus,
for every role, cache hits, retries and seconds waited in the rate limiter. A cache hit
costs $0 (it was paid for when first stored).

Imports litellm only when a call is made.
"""

from __future__ import annotations

import contextvars
import os
import threading
from typing import Any

from tauguard.guard import GuardUsage
from tauguard.records import RoleUsage

_LEDGER: contextvars.ContextVar["UnitLedger | None"] = contextvars.ContextVar("tauguard_ledger", default=None)


class UnitLedger:
    """Per-role usage of one simulation, booked as calls happen."""

    def __init__(self) -> None:
        self.roles: dict[str, RoleUsage] = {}
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


def is_cache_hit(response: Any) -> bool:
    """Whether ``response`` came from the ``--cache`` rather than the provider."""
    hidden = getattr(response, "_hidden_params", None) or {}
    return bool(hidden.get("cache_hit"))


def usage_of(response: Any) -> GuardUsage:
    """Tokens and cost of one completion; $0 for a cache hit or a model without a price."""
    import litellm

    usage = getattr(response, "usage", None)
    cost = 0.0
    if not is_cache_hit(response):
        try:
            cost = float(litellm.completion_cost(completion_response=response) or 0.0)
        except Exception:  # noqa: BLE001 -- unknown model names (local servers) have no price
            cost = 0.0
    return GuardUsage(
        llm_calls=1,
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        cost=cost,
    )


def complete(role: str, model: str, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
    """``litellm.completion`` under the run's rate limits, retries and cache, booked under
    ``role``. Raises what the provider raised (:class:`~tauguard.execution.provider.ProviderUnavailable`
    after the last retry)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch at import
    import litellm

    from tauguard.execution.provider import state

    litellm.suppress_debug_info = True  # no provider banners on stderr for handled failures
    response = state().call(litellm.completion, role=role, model=model, messages=messages, **kwargs)
    usage = usage_of(response)
    book(role, calls=1, prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens, cost=usage.cost)
    return response
