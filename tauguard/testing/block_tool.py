"""Test-only strategy: blocks every call to one named WRITE tool.

It proves the hook contract end to end: the held call never reaches the environment, the
inner agent receives the decision as the call's error result, and the event is recorded.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from tauguard.strategy_api.conversation import Conversation, ToolCallView
from tauguard.strategy_api.guard import GuardDecision, GuardSession, SessionContext, Strategy, Verdict


class _BlockToolSession(GuardSession):
    def __init__(self, tool: str) -> None:
        self.tool = tool

    def before_write(self, call: ToolCallView, conversation: Conversation) -> GuardDecision:
        if call.name != self.tool:
            return GuardDecision.allow()
        return GuardDecision(
            verdict=Verdict.BLOCK,
            reason=f"the test strategy blocks every call to {self.tool}",
            remediation="tell the user this action cannot be performed",
            rule_id="test.block_tool",
        )


class BlockToolOptions(BaseModel):
    """Options of the block-tool strategy."""

    model_config = ConfigDict(extra="forbid")

    tool: str = Field(default="cancel_reservation", min_length=1, description="the WRITE tool whose every call is blocked")


class BlockToolStrategy(Strategy):
    """Test-only: blocks one named tool (option tool=NAME) to prove the hook contract."""

    options_model = BlockToolOptions
    session_class = _BlockToolSession
    hidden = True  # registered like any strategy, but not listed by default
    options: BlockToolOptions

    def check_domains(self, domains: list[str]) -> None:
        """The blocked tool must be a WRITE tool of every domain of the run."""
        from tauguard.tau2_adapter import compat as t2
        from tauguard.strategy_api.registry import StrategyOptionsError

        for domain in domains:
            writes = sorted(n for n, kind in t2.tool_types(domain)[0].items() if kind == "WRITE")
            if self.options.tool not in writes:
                raise StrategyOptionsError(
                    f"option tool={self.options.tool!r} is not a WRITE tool of {domain}; allowed: {', '.join(writes)}"
                )

    def new_session(self, context: SessionContext) -> GuardSession:
        return _BlockToolSession(self.options.tool)
