"""`react`: no guard. The inner agent (tau2's LLMAgent or the sim agent) acts alone."""

from __future__ import annotations

from tauguard.strategy_api.guard import GuardSession, SessionContext, Strategy


class ReactStrategy(Strategy):
    """No guard: the inner agent acts alone (baseline)."""

    def new_session(self, context: SessionContext) -> GuardSession | None:
        return None
