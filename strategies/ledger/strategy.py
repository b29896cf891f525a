"""`ledger`: LedgerAgent (Uddin et al., arXiv:2606.20529) as a tauguard strategy."""

from __future__ import annotations

from typing import Any

from tauguard_strategies.ledger.schemas import LEDGER_TYPES
from tauguard_strategies.ledger.session import LedgerSession
from tauguard.guard import GuardSession, SessionContext, Strategy


def _flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() not in ("0", "false", "no", "off")
    return bool(value)


class LedgerStrategy(Strategy):
    """LedgerAgent: typed ledger of read results + deterministic predicates gating writes (no LLM call).

    Options: ``render`` (default true) puts the rendered ledger into an LLM agent's prompt;
    ``render=false`` keeps only the gate (an ablation).
    """

    name = "ledger"
    description = "LedgerAgent: typed ledger of read results + deterministic predicates gating writes (no LLM call)."
    hooks = ("before_write", "after_tool", "render_context")

    def new_session(self, context: SessionContext) -> GuardSession:
        if context.domain not in LEDGER_TYPES:
            raise ValueError(f"the ledger strategy supports {', '.join(LEDGER_TYPES)}; not '{context.domain}'")
        return LedgerSession(context.domain, context.tool_types, render_ledger=_flag(self.options.get("render", True)))
