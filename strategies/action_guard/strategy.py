"""`action-guard`: PolicyGuard/ToolGuard-style per-tool checklists verified before each WRITE."""

from __future__ import annotations

from tauguard_strategies.action_guard.options import ActionGuardOptions
from tauguard_strategies.action_guard.session import ActionGuardSession
from tauguard.guard import GuardSession, SessionContext, Strategy


class ActionGuardStrategy(Strategy):
    """Per-tool checklist verified before each WRITE (LLM verifier with --guard-llm, else compiled checks)."""

    name = "action-guard"
    description = (
        "PolicyGuard/ToolGuard style: per-tool checklist verified before each WRITE "
        "(LLM verifier with --guard-llm, else compiled checks)."
    )
    hooks = ("before_write",)

    def new_session(self, context: SessionContext) -> GuardSession:
        # Strategy options (from the command line) override the run's context options.
        options = ActionGuardOptions.model_validate({**context.options, **self.options})
        return ActionGuardSession(context, options)
