"""The `action-guard` strategy: an action-scoped guard in the style of PolicyGuard and ToolGuard.

Before each agent WRITE it verifies the call against its tool's checklist
(``checklists/<domain>/<tool>.toml``): with an LLM verifier when a guard model is given,
otherwise with deterministic checks over the conversation's tool results and messages.
"""

from tauguard_strategies.action_guard.schema import (
    Checklist,
    ChecklistItem,
    domain_checklists,
    load_checklist,
)
from tauguard_strategies.action_guard.options import ActionGuardOptions
from tauguard_strategies.action_guard.session import ActionGuardSession
from tauguard_strategies.action_guard.strategy import ActionGuardStrategy

__all__ = [
    "ActionGuardOptions",
    "ActionGuardSession",
    "ActionGuardStrategy",
    "Checklist",
    "ChecklistItem",
    "domain_checklists",
    "load_checklist",
]
