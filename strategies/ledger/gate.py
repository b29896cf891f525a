"""The policy gate: every predicate of the proposed WRITE, combined into one GuardDecision.

The most severe finding decides (BLOCK > REVISE > VERIFY; ties go to the first predicate in
registration order). The decision names the clause (rule_id, and the verbatim clause text in
the reason), the ledger values it used (evidence), and what would make the call compliant
(remediation; for VERIFY the reads, also as ``evidence["required_reads"]``; for REVISE the
compliant arguments in ``revised_arguments`` when they are determined).
"""

from __future__ import annotations

from typing import Any

from tauguard_strategies.ledger import clauses
from tauguard_strategies.ledger.ledger import LedgerBase
from tauguard_strategies.ledger.predicates import Finding, GateContext, NeedFact, for_tool
from tauguard_strategies.ledger.readmap import DomainMap, ReadHint
from tauguard.conversation import ToolCallView
from tauguard.guard import GuardDecision, ReadRequest, Verdict

SEVERITY = {Verdict.VERIFY: 1, Verdict.REVISE: 2, Verdict.BLOCK: 3}
# A predicate that cannot read the call's arguments leaves them to the tool's own validation.
_MALFORMED = (KeyError, TypeError, ValueError, AttributeError, IndexError)


def _need_finding(need: NeedFact) -> Finding:
    state = "not observed" if need.fact.state == "missing" else "stale (changed by a write since it was read)"
    hints = [need.hint] if need.hint is not None else []
    how = need.hint.describe() if need.hint is not None else f"a read tool that returns {need.fact.path}"
    return Finding(verdict=Verdict.VERIFY, detail=f"{need.fact.path} is {state}",
                   remediation=f"read first: {how}", required_reads=hints)


def evaluate(domain: str, dmap: DomainMap, ledger: LedgerBase, call: ToolCallView) -> GuardDecision:
    """The gate's decision on ``call`` given the current ledger."""
    book = clauses.load(domain)
    predicates = for_tool(domain, call.name)
    not_observable = [c.id for c in book.clause if call.name in c.tools and c.enforcement == "not_observable"]
    if not predicates:
        return GuardDecision(verdict=Verdict.ALLOW, reason=f"no ledger predicate gates {call.name}",
                             evidence={"checked": [], "not_observable": not_observable})
    checked: list[str] = []
    skipped: list[dict[str, str]] = []
    found: list[tuple[str, Finding, dict[str, Any]]] = []
    facts: dict[str, Any] = {}
    for pred in predicates:
        ctx = GateContext(call=call, ledger=ledger, dmap=dmap)
        try:
            finding = pred.fn(ctx)
        except NeedFact as need:
            finding = _need_finding(need)
        except _MALFORMED as exc:
            skipped.append({"rule_id": pred.rule_id, "error": f"{type(exc).__name__}: {exc}"})
            continue
        facts.update(ctx.facts)
        if finding is None:
            checked.append(pred.rule_id)
        else:
            found.append((pred.rule_id, finding, ctx.facts))
    evidence: dict[str, Any] = {"checked": checked, "not_observable": not_observable}
    if skipped:
        evidence["skipped"] = skipped
    if not found:
        evidence["ledger"] = facts
        reason = "ledger predicates hold: " + (", ".join(checked) or "(none)")
        if skipped:
            reason += "; not checked (arguments unreadable, left to the tool): " + ", ".join(s["rule_id"] for s in skipped)
        return GuardDecision(verdict=Verdict.ALLOW, reason=reason, evidence=evidence)
    rule_id, primary, primary_facts = max(found, key=lambda f: SEVERITY[f[1].verdict])  # max keeps the first of ties
    evidence["ledger"] = primary_facts
    evidence["findings"] = [{"rule_id": r, "verdict": f.verdict.value, "detail": f.detail} for r, f, _ in found]
    remediation = primary.remediation
    reads: list[ReadHint] = []
    if primary.verdict == Verdict.VERIFY:
        for _, f, _ in found:
            reads += [h for h in f.required_reads if h not in reads]
        evidence["required_reads"] = [h.model_dump() for h in reads]
        extra = [h.describe() for h in reads if h not in primary.required_reads]
        if extra:
            remediation += "; also read: " + ", ".join(extra)
    clause = book.get(rule_id)
    return GuardDecision(
        verdict=primary.verdict,
        rule_id=rule_id,
        reason=f'Policy ({book.source.rsplit("/", 1)[-1]}): "{clause.text.strip()}" Ledger: {primary.detail}.',
        remediation=remediation,
        evidence=evidence,
        revised_arguments=primary.revised_arguments if primary.verdict == Verdict.REVISE else None,
        required_reads=[ReadRequest(**h.model_dump()) for h in reads],
    )
