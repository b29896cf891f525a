"""`action-guard`: PolicyGuard/ToolGuard-style per-tool checklists verified before each WRITE."""

from __future__ import annotations

from tauguard_strategies.action_guard.options import ActionGuardOptions
from tauguard_strategies.action_guard.schema import checklist_files
from tauguard_strategies.action_guard.session import ActionGuardSession
from tauguard.errors import TauguardInputError
from tauguard.strategy_api.guard import GuardSession, SessionContext, Strategy


class ChecklistsMissing(TauguardInputError):
    """The action guard is used on a domain without a single checklist (it would check nothing)."""


def check_checklists(domain: str) -> None:
    """Raise :class:`ChecklistsMissing` when ``domain`` has no checklist at all (a write without
    one is allowed, but a domain without any would run unguarded while looking guarded)."""
    if not checklist_files(domain):
        raise ChecklistsMissing(
            f"strategy action-guard: domain '{domain}' has no checklists (strategies/action_guard/checklists/{domain}/<tool>.toml)"
        )


class ActionGuardStrategy(Strategy):
    """PolicyGuard/ToolGuard style: per-tool checklist verified before each WRITE (LLM verifier with --guard-llm, else compiled checks)."""

    options_model = ActionGuardOptions
    session_class = ActionGuardSession
    options: ActionGuardOptions

    def check_domains(self, domains: list[str]) -> None:
        """Every domain of the run has checklists (one line naming the first that has none)."""
        for domain in domains:
            check_checklists(domain)

    def new_session(self, context: SessionContext) -> GuardSession:
        check_checklists(context.domain)
        return ActionGuardSession(context, self.options)
