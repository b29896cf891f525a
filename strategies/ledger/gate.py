"""The policy gate: every predicate of the proposed WRITE, combined into one GuardDecision.

The predicates' findings are combined by :func:`tauguard.strategy_api.guard.combine` (the most severe
decides; ties go to the first predicate in registration order). What is the ledger's own:
a missing or stale fact becomes a VERIFY naming the read that observes it, a predicate
that cannot read the call's arguments is skipped (left to the tool's own validation), the
reason quotes the deciding clause verbatim, and the evidence holds the ledger values the
deciding predicate used (``ledger``) and the clauses checked or not observable.
"""

from __future__ import annotations

from typing import Any

from tauguard.domains.contract import contract
from tauguard_strategies.ledger import clauses
from tauguard_strategies.ledger.ledger import LedgerBase
from tauguard_strategies.ledger.predicates import GateContext, NeedFact, for_tool
from tauguard_strategies.ledger.readmap.base import DomainMap
from tauguard.strategy_api.conversation import ToolCallView
from tauguard.strategy_api.guard import GuardDecision, RuleFinding, Verdict, combine, held

# A predicate that cannot read the call's arguments leaves them to the tool's own validation.
_MALFORMED = (KeyError, TypeError, ValueError, AttributeError, IndexError)


def _need_finding(need: NeedFact) -> RuleFinding:
    state = "not observed" if need.fact.state == "missing" else "stale (changed by a write since it was read)"
    hints = [need.hint] if need.hint is not None else []
    how = need.hint.describe() if need.hint is not None else f"a read tool that returns {need.fact.path}"
    return RuleFinding(verdict=Verdict.VERIFY, detail=f"{need.fact.path} is {state}",
                       remediation=f"read first: {how}", required_reads=hints)


def _stated_identity(domain: str) -> bool:
    """Whether the domain's write contract lets a stated user id (with an owner read) identify the user."""
    c = contract(domain)
    return any(way.stated is not None for way in c.identification.ways)


def evaluate(domain: str, dmap: DomainMap, ledger: LedgerBase, call: ToolCallView, user_text: str = "",
             pending: tuple[ToolCallView, ...] = ()) -> GuardDecision:
    """The gate's decision on ``call`` given the current ledger (and, for a stated user id, what the
    user said; ``pending``: the calls before ``call`` in its agent message)."""
    book = clauses.load(domain)
    predicates = for_tool(domain, call.name)
    not_observable = [c.id for c in book.clause if call.name in c.tools and c.enforcement == "not_observable"]
    if not predicates:
        return GuardDecision(verdict=Verdict.ALLOW, reason=f"no ledger predicate gates {call.name}",
                             evidence={"checked": [], "not_observable": not_observable})
    checked: list[str] = []
    skipped: list[dict[str, str]] = []
    found: list[RuleFinding] = []
    used: list[dict[str, Any]] = []  # the ledger values each finding's predicate read
    facts: dict[str, Any] = {}
    for pred in predicates:
        ctx = GateContext(call=call, ledger=ledger, dmap=dmap, user_text=user_text, stated_identity=_stated_identity(domain),
                          pending=pending)
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
            found.append(finding.model_copy(update={"rule_id": pred.rule_id}))
            used.append(ctx.facts)
    evidence: dict[str, Any] = {"checked": checked, "not_observable": not_observable}
    if skipped:
        evidence["skipped"] = skipped
    holding = held(found)
    evidence["ledger"] = next(u for f, u in zip(found, used) if f is holding[0]) if holding else facts
    reason = "ledger predicates hold: " + (", ".join(checked) or "(none)")
    if skipped:
        reason += "; not checked (arguments unreadable, left to the tool): " + ", ".join(s["rule_id"] for s in skipped)
    decision = combine(found, allow_reason=reason, evidence=evidence)
    if holding:
        clause = book.get(holding[0].rule_id)
        source = book.source.rsplit("/", 1)[-1]
        decision.reason = f'Policy ({source}): "{clause.text.strip()}" Ledger: {holding[0].detail}.'
    return decision
