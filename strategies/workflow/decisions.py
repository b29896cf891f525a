"""Decision nodes decided from tool results, without an LLM.

A decision node may name action-guard checklist items (``Node.checks``); their deterministic
checks are the one implementation of each tool-fact rule (the policy clock, the cancellation
basis, the allowance), and a dialogue fact such as the stated reason comes from the same
dialogue judge the guide uses. The node is met when every named item of the proposed write is
met; an item of another write's checklist (a shared decision) does not apply.
"""

from __future__ import annotations

from tauguard_strategies.action_guard.checks import CHECKS
from tauguard_strategies.action_guard.checks.base import CheckContext
from tauguard_strategies.action_guard.evidence import Evidence
from tauguard_strategies.action_guard.outcome import ItemOutcome
from tauguard_strategies.action_guard.schema import ChecklistItem, domain_checklists
from tauguard_strategies.workflow.graph import Node
from tauguard.strategy_api.conversation import Conversation, ToolCallView
from tauguard.dialogue import DialogueJudge


def unmet(domain: str, node: Node, call: ToolCallView, conversation: Conversation, judge: DialogueJudge) -> tuple[ChecklistItem, ItemOutcome] | None:
    """The node's item the proposed ``call`` does not meet, with its outcome (None: all met).

    A violated item (the evidence contradicts it: the policy forbids the write) comes before
    a missing one (a fact still to read or ask), so the guide refuses what no read can mend.
    """
    checklist = domain_checklists(domain).get(call.name)
    if checklist is None:
        return None
    items = [i for i in checklist.items if i.id in node.checks and i.check is not None]
    if not items:
        return None
    evidence = Evidence.from_conversation(conversation)
    first: tuple[ChecklistItem, ItemOutcome] | None = None
    for item in items:
        assert item.check is not None
        ctx = CheckContext(domain=domain, call=call, checklist=checklist, evidence=evidence, params=item.params, judge=judge)
        outcome = CHECKS.get(item.check)(ctx)
        if outcome.status == "violated":
            return item, outcome  # what the policy forbids outranks a fact still to read
        if outcome.status != "met" and first is None:
            first = item, outcome
    return first
