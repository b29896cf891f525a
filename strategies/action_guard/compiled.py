"""The compiled backend: deterministic checks (ToolGuard-style) over the conversation.

Used when no guard model is configured (e.g. with the sim). Items without a check id are
reported as ``unchecked``; only the LLM verifier judges them.
"""

from __future__ import annotations

from fnmatch import fnmatch

from tauguard_strategies.action_guard.schema import Checklist
from tauguard_strategies.action_guard.checks import CHECKS, CheckContext
from tauguard_strategies.action_guard.evidence import Evidence
from tauguard_strategies.action_guard.outcome import ItemOutcome, VerifierResult
from tauguard.strategy_api.conversation import Conversation, ToolCallView
from tauguard.dialogue import NEUTRAL, DialogueJudge


def is_skipped(item_id: str, skip: list[str]) -> bool:
    """Whether an item id matches one of the ``skip`` patterns (fnmatch globs)."""
    return any(fnmatch(item_id, pattern) for pattern in skip)


def verify_compiled(
    domain: str,
    checklist: Checklist,
    call: ToolCallView,
    conversation: Conversation,
    skip: list[str] | None = None,
    judge: DialogueJudge = NEUTRAL,
) -> VerifierResult:
    """Run every item's deterministic check against the conversation before ``call``
    (dialogue items asked of ``judge``)."""
    evidence = Evidence.from_conversation(conversation)
    outcomes: list[ItemOutcome] = []
    for item in checklist.items:
        if item.check is None or is_skipped(item.id, skip or []):
            outcomes.append(ItemOutcome(id=item.id, kind=item.kind, status="unchecked"))
            continue
        ctx = CheckContext(domain=domain, call=call, checklist=checklist, evidence=evidence, params=item.params, judge=judge)
        try:
            result = CHECKS[item.check](ctx)
        except Exception as exc:  # noqa: BLE001 -- a faulty check is a guard failure, not a crash of the run
            return VerifierResult(backend="compiled", outcomes=outcomes, failure=f"check {item.check} raised {exc!r}")
        outcomes.append(result.model_copy(update={"id": item.id, "kind": item.kind}))
    return VerifierResult(backend="compiled", outcomes=outcomes)
