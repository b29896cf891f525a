"""The per-simulation guard session: gate each WRITE against its tool's checklist.

Action-scoped by design (PolicyGuard, Kang et al., 2026, as characterised in PolicyGuide,
/work/shared/papers/workflow-guide_policyguide.md, Related work): it reads the whole
conversation at each mutating call but keeps no workflow position and gives no guidance
between calls. Its only state is how often each tool has been held.
"""

from __future__ import annotations

from collections import Counter

from tauguard_strategies.action_guard.schema import Checklist, domain_checklists
from tauguard_strategies.action_guard.compiled import is_skipped, verify_compiled
from tauguard_strategies.action_guard.llm_verifier import verify_llm
from tauguard_strategies.action_guard.options import ActionGuardOptions
from tauguard_strategies.action_guard.outcome import VerifierResult
from tauguard_strategies.action_guard.verdict import decide
from tauguard.strategy_api.conversation import Conversation, ToolCallView
from tauguard.dialogue.guards import dialogue_judge
from tauguard.strategy_api.guard import GuardDecision, GuardSession, SessionContext, Verdict


def transfer_advice(tool: str, holds: int) -> str:
    """The remediation suffix once a tool has been held ``holds`` times."""
    return (
        f"{tool} has now been held {holds} times in this conversation: stop retrying it, call "
        "transfer_to_human_agents and tell the user they are being transferred to a human agent."
    )


class ActionGuardSession(GuardSession):
    """Gates WRITE calls with the compiled checks or the LLM verifier."""

    def __init__(self, context: SessionContext, options: ActionGuardOptions) -> None:
        self.context = context
        self.options = options
        self.checklists: dict[str, Checklist] = domain_checklists(context.domain)
        self.holds: Counter[str] = Counter()
        use_llm = options.backend == "llm" or (options.backend == "auto" and bool(context.guard_llm))
        if use_llm and not context.guard_llm:
            raise ValueError("action-guard backend=llm needs a guard model (--guard-llm)")
        self.backend = "llm" if use_llm else "compiled"
        self.judge = dialogue_judge(options.dialogue, context)

    def _verify(self, checklist: Checklist, call: ToolCallView, conversation: Conversation) -> VerifierResult:
        if self.backend == "llm":
            assert self.context.guard_llm is not None
            result = verify_llm(self.context.guard_llm, self.context.guard_llm_args, self.context.policy, checklist, call, conversation)
            # Skipped items are dropped from the LLM's judgement too, so both backends honour the option.
            for outcome in result.outcomes:
                if is_skipped(outcome.id, self.options.skip_items):
                    outcome.status = "unchecked"
            return result
        return verify_compiled(self.context.domain, checklist, call, conversation, self.options.skip_items, self.judge)

    def before_write(self, call: ToolCallView, conversation: Conversation) -> GuardDecision:
        """Verify ``call`` against its checklist; after N holds of a tool, advise a transfer."""
        checklist = self.checklists.get(call.name)
        if checklist is None:
            return GuardDecision.allow(f"no checklist for {call.name}")
        result = self._verify(checklist, call, conversation)
        decision = decide(checklist, result, self.options.failure_policy, self.options.on_missing)
        if decision.verdict == Verdict.ALLOW:
            return decision
        self.holds[call.name] += 1
        holds = self.holds[call.name]
        decision.evidence["holds_for_tool"] = holds
        if holds >= self.options.max_blocks_per_tool:
            advice = transfer_advice(call.name, holds)
            decision.remediation = f"{decision.remediation} {advice}".strip() if decision.remediation else advice
        return decision
