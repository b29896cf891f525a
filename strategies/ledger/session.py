"""The per-simulation ledger session: the hooks of the guard contract."""

from __future__ import annotations

from tauguard_strategies.ledger import gate, render
from tauguard_strategies.ledger.ledger import LedgerBase
from tauguard_strategies.ledger.schemas import new_ledger
from tauguard_strategies.ledger.readmap import domain_map
from tauguard_strategies.ledger.update import absorb
from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView
from tauguard.strategy_api.guard import GuardDecision, GuardSession


class LedgerSession(GuardSession):
    """Keeps the typed ledger of one simulation, renders it, and gates WRITE calls.

    No model is called: ledger updates, rendering and the gate are deterministic.
    """

    def __init__(self, domain: str, tool_types: dict[str, str], render_ledger: bool = True) -> None:
        self.domain = domain
        self.tool_types = dict(tool_types)
        self.render_ledger = render_ledger
        self.dmap = domain_map(domain)
        self.ledger: LedgerBase = new_ledger(domain)

    def after_tool(self, result: ConversationEvent, conversation: Conversation) -> None:
        """Absorb a successful read; record a successful write and mark what it touched stale."""
        absorb(self.ledger, self.dmap, self.tool_types, result)

    def before_write(self, call: ToolCallView, conversation: Conversation) -> GuardDecision:
        """Check the call against every predicate of its tool."""
        said = "\n".join(e.content or "" for e in conversation.events if e.kind == "user_message")
        return gate.evaluate(self.domain, self.dmap, self.ledger, call, user_text=said, pending=tuple(conversation.pending_calls()))

    def render_context(self) -> str | None:
        """The full ledger, rendered deterministically (None when rendering is switched off)."""
        return render.render(self.ledger) if self.render_ledger else None
