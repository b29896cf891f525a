"""From item outcomes to a GuardDecision (the hook contract's verdict).

Each item's outcome becomes a :class:`~tauguard.strategy_api.guard.RuleFinding` whose verdict is what
the outcome calls for: missing evidence -> VERIFY (read or ask first), or ALLOW with
``on_missing="allow"``; evidence contradicting an item -> the verdict the item declares
(REVISE or BLOCK for A items; D items only VERIFY). :func:`tauguard.strategy_api.guard.combine` decides.
What is the action guard's own: the met / unchecked / unverified item lists, the LLM
verifier's remediation taking precedence, and the failure policy for a verifier that
produced no usable verdict (``closed`` holds the call with VERIFY, ``open`` lets it through).
"""

from __future__ import annotations

from typing import Any, Literal

from tauguard_strategies.action_guard.schema import Checklist
from tauguard_strategies.action_guard.outcome import ItemOutcome, VerifierResult
from tauguard.strategy_api.guard import GUARD_ERROR_RULE, GuardDecision, RuleFinding, Verdict, combine

# Decisions forced by a verifier failure carry the project-wide guard-error rule prefix, so
# runs count them in the guard error rate.
FAILURE_RULE = f"{GUARD_ERROR_RULE}.action_guard_verifier"

FailurePolicy = Literal["closed", "open"]
OnMissing = Literal["verify", "allow"]


def item_verdict(checklist: Checklist, outcome: ItemOutcome, on_missing: OnMissing = "verify") -> Verdict:
    """The verdict one item's outcome calls for."""
    if outcome.status in ("met", "unchecked"):
        return Verdict.ALLOW
    if outcome.status == "missing":
        return Verdict.VERIFY if on_missing == "verify" else Verdict.ALLOW
    item = checklist.item(outcome.id)
    return item.on_violation if item is not None else Verdict.VERIFY


def finding(checklist: Checklist, outcome: ItemOutcome, verdict: Verdict) -> RuleFinding:
    """The shared finding of one item's outcome.

    Missing evidence: the check's detail says what to read or ask. A violation: the item's
    own remediation says what to do instead.
    """
    item = checklist.item(outcome.id)
    own = item.remediation if item is not None else ""
    return RuleFinding(
        rule_id=outcome.id,
        verdict=verdict,
        detail=outcome.detail or outcome.status,
        remediation=own if (outcome.status == "violated" and own) else (outcome.detail or own),
        revised_arguments=outcome.revised_arguments,
        required_reads=outcome.required_reads,
        evidence=outcome.evidence,
    )


def _failure(checklist: Checklist, result: VerifierResult, failure_policy: FailurePolicy, base: dict[str, Any]) -> GuardDecision:
    evidence = {**base, "failure": result.failure}
    if failure_policy == "open":
        return GuardDecision(
            verdict=Verdict.ALLOW,
            reason=f"guard verifier failed ({result.failure}); failure policy is open",
            rule_id=FAILURE_RULE, evidence=evidence, usage=result.usage, raw=result.raw,
        )
    requirements = "; ".join(i.requirement for i in checklist.items)
    return GuardDecision(
        verdict=Verdict.VERIFY,
        reason=f"the guard could not verify this call ({result.failure}), so it is held (fail-closed)",
        remediation=f"make sure these requirements hold, then try the call again: {requirements}",
        rule_id=FAILURE_RULE, evidence=evidence, usage=result.usage, raw=result.raw,
    )


def decide(
    checklist: Checklist, result: VerifierResult, failure_policy: FailurePolicy = "closed", on_missing: OnMissing = "verify"
) -> GuardDecision:
    """The decision on one call from a backend's result.

    ``on_missing="allow"`` holds a call only when evidence contradicts an item (missing
    evidence is recorded as ``unverified`` but does not hold the call).
    """
    base: dict[str, Any] = {"backend": result.backend, "tool": checklist.tool}
    if result.failure is not None:
        return _failure(checklist, result, failure_policy, base)
    judged = [(o, item_verdict(checklist, o, on_missing)) for o in result.outcomes]
    evidence = {
        **base,
        "met": [o.id for o, _ in judged if o.status == "met"],
        "unchecked": [o.id for o, _ in judged if o.status == "unchecked"],
        "unverified": [o.id for o, v in judged if o.status == "missing" and v == Verdict.ALLOW],
    }
    allow_reason = (
        f"{len(evidence['met'])} checklist item(s) met, {len(evidence['unchecked'])} not checked, "
        f"{len(evidence['unverified'])} without evidence"
    )
    decision = combine([finding(checklist, o, v) for o, v in judged], allow_reason=allow_reason, evidence=evidence)
    if decision.verdict != Verdict.ALLOW and result.remediation.strip():
        decision.remediation = result.remediation.strip()  # the LLM verifier's own advice
    decision.usage, decision.raw = result.usage, result.raw
    return decision
