"""`ledger`: LedgerAgent (Uddin et al., arXiv:2606.20529) as a tauguard strategy."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from tauguard_strategies.ledger.schemas import LEDGER_TYPES
from tauguard_strategies.ledger.session import LedgerSession
from tauguard.strategy_api.guard import GuardSession, SessionContext, Strategy


class LedgerOptions(BaseModel):
    """Options of the ledger strategy (``--strategy-option KEY=VALUE``)."""

    model_config = ConfigDict(extra="forbid")

    render: bool = Field(
        default=True,
        description="put the rendered ledger into an LLM agent's prompt; false keeps only the gate (an ablation)",
    )


class LedgerStrategy(Strategy):
    """LedgerAgent: typed ledger of read results + deterministic predicates gating writes (no LLM call)."""

    options_model = LedgerOptions
    session_class = LedgerSession
    options: LedgerOptions

    def new_session(self, context: SessionContext) -> GuardSession:
        if context.domain not in LEDGER_TYPES:
            raise ValueError(f"the ledger strategy supports {', '.join(LEDGER_TYPES)}; not '{context.domain}'")
        return LedgerSession(context.domain, context.tool_types, render_ledger=self.options.render)
