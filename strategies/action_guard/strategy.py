"""`action-guard`: PolicyGuard/ToolGuard-style per-tool checklists verified before each WRITE."""

from __future__ import annotations

from tauguard_strategies.action_guard.options import ActionGuardOptions
from tauguard_strategies.action_guard.session import ActionGuardSession
from tauguard.strategy_api.guard import GuardSession, SessionContext, Strategy


class ActionGuardStrategy(Strategy):
    """PolicyGuard/ToolGuard style: per-tool checklist verified before each WRITE (LLM verifier with --guard-llm, else compiled checks)."""

    options_model = ActionGuardOptions
    session_class = ActionGuardSession
    options: ActionGuardOptions

    def new_session(self, context: SessionContext) -> GuardSession:
        return ActionGuardSession(context, self.options)
