"""From item outcomes to a GuardDecision (the hook contract's verdict).

Missing evidence on any item -> VERIFY (read or ask first); evidence contradicting an item
-> the verdict the item declares (REVISE or BLOCK for A items; D items only VERIFY). The
most severe item decides. A verifier that produced no usable verdict follows the failure
policy: ``closed`` holds the call (VERIFY), ``open`` lets it through.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from tauguard_strategies.action_guard.schema import Checklist
from tauguard_strategies.action_guard.outcome import ItemOutcome, VerifierResult
from tauguard.guard import GUARD_ERROR_RULE, GuardDecision, ReadRequest, Verdict

SEVERITY = {Verdict.ALLOW: 0, Verdict.VERIFY: 1, Verdict.REVISE: 2, Verdict.BLOCK: 3}
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


def _render_read(read: dict[str, Any]) -> str:
    args = ", ".join(f"{k}={json.dumps(v)}" for k, v in read.get("arguments", {}).items())
    return f"{read.get('name')}({args})"


def decide(
    checklist: Checklist, result: VerifierResult, failure_policy: FailurePolicy = "closed", on_missing: OnMissing = "verify"
) -> GuardDecision:
    """The decision on one call from a backend's result.

    ``on_missing="allow"`` holds a call only when evidence contradicts an item (missing
    evidence is recorded as ``unverified`` but does not hold the call).
    """
    base: dict[str, Any] = {"backend": result.backend, "tool": checklist.tool}
    if result.failure is not None:
        if failure_policy == "open":
            return GuardDecision(
                verdict=Verdict.ALLOW,
                reason=f"guard verifier failed ({result.failure}); failure policy is open",
                rule_id=FAILURE_RULE,
                evidence={**base, "failure": result.failure},
                usage=result.usage,
                raw=result.raw,
            )
        requirements = "; ".join(i.requirement for i in checklist.items)
        return GuardDecision(
            verdict=Verdict.VERIFY,
            reason=f"the guard could not verify this call ({result.failure}), so it is held (fail-closed)",
            remediation=f"make sure these requirements hold, then try the call again: {requirements}",
            rule_id=FAILURE_RULE,
            evidence={**base, "failure": result.failure},
            usage=result.usage,
            raw=result.raw,
        )

    judged = [(o, item_verdict(checklist, o, on_missing)) for o in result.outcomes]
    failed = sorted([(o, v) for o, v in judged if v != Verdict.ALLOW], key=lambda ov: -SEVERITY[ov[1]])
    evidence = {
        **base,
        "met": [o.id for o, _ in judged if o.status == "met"],
        "unchecked": [o.id for o, _ in judged if o.status == "unchecked"],
        "unverified": [o.id for o, v in judged if o.status == "missing" and v == Verdict.ALLOW],
        "failed": [
            {"id": o.id, "kind": o.kind, "status": o.status, "verdict": v.value, "detail": o.detail, "evidence": o.evidence}
            for o, v in failed
        ],
    }
    if not failed:
        return GuardDecision(
            verdict=Verdict.ALLOW,
            reason=(
                f"{len(evidence['met'])} checklist item(s) met, {len(evidence['unchecked'])} not checked, "
                f"{len(evidence['unverified'])} without evidence"
            ),
            evidence=evidence,
            usage=result.usage,
            raw=result.raw,
        )

    top_outcome, top = failed[0]
    reads = [r for o, _ in failed for r in o.suggested_reads]
    unique_reads = list({json.dumps(r, sort_keys=True): r for r in reads}.values())
    evidence["suggested_reads"] = unique_reads
    remediation = result.remediation.strip()
    if not remediation:
        steps: list[str] = []
        for outcome, _ in failed:
            # Missing evidence: the check's detail says what to read or ask. A violation:
            # the item's own remediation says what to do instead.
            item = checklist.item(outcome.id)
            own = item.remediation if item is not None else ""
            text = own if (outcome.status == "violated" and own) else (outcome.detail or own)
            if text and text not in steps:
                steps.append(text)
        remediation = "; ".join(steps)
        if unique_reads:
            remediation += ". Suggested reads: " + ", ".join(_render_read(r) for r in unique_reads)
    revised = next((o.revised_arguments for o, v in failed if v == Verdict.REVISE and o.revised_arguments), None)
    return GuardDecision(
        verdict=top,
        reason="; ".join(f"[{o.id}] {o.detail or o.status}" for o, _ in failed),
        remediation=remediation,
        rule_id=top_outcome.id,
        evidence=evidence,
        revised_arguments=revised if top == Verdict.REVISE else None,
        required_reads=[ReadRequest(tool=r["name"], arguments=r.get("arguments")) for r in unique_reads] if top == Verdict.VERIFY else [],
        usage=result.usage,
        raw=result.raw,
    )
