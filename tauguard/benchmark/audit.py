"""Guard decisions on real writes against the labelled real-write benchmark.

``tauguard audit`` asks a guard, before every recorded write, what it would decide. Joined with
the benchmark's labels (:mod:`tauguard.benchmark.real_writes`) that gives, per guard:

- **false holds**: held complying writes / complying writes, in passed and in failed simulations;
- **catches**: held violating writes / violating writes;
- Wilson 95 % intervals on both (scipy's ``binomtest(...).proportion_ci(method="wilson")``);
- the false holds by cause (rule id), and each caught and missed violation by id.

"Held" is the guard's first decision (VERIFY, REVISE or BLOCK; a guard error is counted apart);
with ``--follow-reads`` the decision after performing the reads a VERIFY asked for is reported
separately, because a real agent need not perform them. Imports neither tau2 nor litellm.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from pydantic import BaseModel, Field

from tauguard.benchmark.real_writes import LabelledWrite

WriteKey = tuple[str, int, int, str]  # task id, trial, message index, call id


class Rate(BaseModel):
    """k of n, with its Wilson 95 % interval."""

    held: int = 0
    writes: int = 0
    rate: float | None = None
    low: float | None = None
    high: float | None = None


def wilson(k: int, n: int) -> Rate:
    """``k / n`` with the Wilson score interval at 95 % (None fields when n is 0)."""
    if n == 0:
        return Rate(held=k, writes=n)
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return Rate(held=k, writes=n, rate=k / n, low=float(ci.low), high=float(ci.high))


class LabelledDecision(BaseModel):
    """One labelled write and the guard's decision on it."""

    id: str
    label: str
    passed: bool
    verdict: str
    rule_id: str | None = None
    reason: str = ""
    held: bool
    held_after_reads: bool | None = None
    guard_error: bool = False


class LabelAudit(BaseModel):
    """One guard's decisions on the labelled writes of one or more runs."""

    strategy: str
    labelled: int = 0  # labelled writes found among the audited ones
    unmatched: int = 0  # labelled writes of the run's simulations the replay did not reach
    false_holds: Rate = Field(default_factory=Rate)
    false_holds_passed: Rate = Field(default_factory=Rate)
    false_holds_failed: Rate = Field(default_factory=Rate)
    catches: Rate = Field(default_factory=Rate)
    ambiguous_held: Rate = Field(default_factory=Rate)
    false_holds_after_reads: Rate | None = None
    catches_after_reads: Rate | None = None
    guard_errors: int = 0
    false_holds_by_rule: dict[str, int] = Field(default_factory=dict)
    decisions: list[LabelledDecision] = Field(default_factory=list)

    @property
    def caught(self) -> list[str]:
        """Ids of the violating writes the guard held."""
        return [d.id for d in self.decisions if d.label == "violates" and d.held]

    @property
    def caught_after_reads(self) -> list[str]:
        """Ids of the violating writes still held once the reads a VERIFY named were performed."""
        return [d.id for d in self.decisions if d.label == "violates" and d.held_after_reads]

    @property
    def missed(self) -> list[str]:
        """Ids of the violating writes the guard allowed."""
        return [d.id for d in self.decisions if d.label == "violates" and not d.held]


class _Audited(Protocol):
    task_id: str
    trial: int
    step: int
    call_id: str
    verdict: str
    rule_id: str | None
    reason: str
    verdict_after_reads: str | None

    @property
    def held(self) -> bool: ...


class _Record(Protocol):
    task_id: str
    trial: int
    success: bool | None
    simulation: dict[str, Any] | None


def index_labels(records: Iterable[_Record], labels: Sequence[LabelledWrite]) -> tuple[dict[WriteKey, tuple[LabelledWrite, bool]], int]:
    """(write key -> (label, simulation passed)) for the labelled writes of ``records``, and how
    many labels name a simulation of the run but a call it does not hold."""
    by_sim: dict[str, list[LabelledWrite]] = {}
    for label in labels:
        if label.source.simulation_id:
            by_sim.setdefault(label.source.simulation_id, []).append(label)
    index: dict[WriteKey, tuple[LabelledWrite, bool]] = {}
    stray = 0
    for rec in records:
        sim = rec.simulation or {}
        mine = by_sim.get(str(sim.get("id") or ""), [])
        messages = sim.get("messages") or []
        for label in mine:
            w = label.write
            calls = messages[w.message_index].get("tool_calls") if w.message_index < len(messages) else None
            call = calls[w.call_index] if isinstance(calls, list) and w.call_index < len(calls) else None
            if not isinstance(call, dict) or call.get("name") != w.name:
                stray += 1
                continue
            index[(rec.task_id, rec.trial, w.message_index, str(call.get("id") or ""))] = (label, bool(rec.success))
    return index, stray


def label_audit(strategy: str, writes: Iterable[_Audited], index: dict[WriteKey, tuple[LabelledWrite, bool]],
                stray: int = 0, follow_reads: bool = False, guard_error_rule: str = "guard.error") -> LabelAudit | None:
    """The guard's false holds and catches on the labelled writes (None when none is labelled)."""
    decisions: list[LabelledDecision] = []
    seen: set[WriteKey] = set()
    for w in writes:
        key = (w.task_id, w.trial, w.step, w.call_id)
        if key not in index or key in seen:
            continue
        seen.add(key)
        label, passed = index[key]
        error = bool(w.rule_id) and str(w.rule_id).startswith(guard_error_rule)
        decisions.append(LabelledDecision(
            id=label.id, label=label.label or "ambiguous", passed=passed, verdict=w.verdict, rule_id=w.rule_id,
            reason=w.reason, held=w.held and not error, guard_error=error,
            held_after_reads=(w.verdict_after_reads or w.verdict) != "ALLOW" if follow_reads else None,
        ))
    if not decisions:
        return None
    return summarize(strategy, decisions, unmatched=stray + len(index) - len(seen), follow_reads=follow_reads)


def summarize(strategy: str, decisions: list[LabelledDecision], unmatched: int = 0, follow_reads: bool = False) -> LabelAudit:
    """Rates and the by-cause table of a list of labelled decisions (pooled over runs if needed)."""
    comply = [d for d in decisions if d.label == "complies"]
    violate = [d for d in decisions if d.label == "violates"]
    ambiguous = [d for d in decisions if d.label == "ambiguous"]

    def held(ds: list[LabelledDecision], after: bool = False) -> int:
        return sum(bool(d.held_after_reads) if after else d.held for d in ds)

    audit = LabelAudit(
        strategy=strategy,
        labelled=len(decisions),
        unmatched=unmatched,
        false_holds=wilson(held(comply), len(comply)),
        false_holds_passed=wilson(held([d for d in comply if d.passed]), sum(d.passed for d in comply)),
        false_holds_failed=wilson(held([d for d in comply if not d.passed]), sum(not d.passed for d in comply)),
        catches=wilson(held(violate), len(violate)),
        ambiguous_held=wilson(held(ambiguous), len(ambiguous)),
        guard_errors=sum(d.guard_error for d in decisions),
        false_holds_by_rule=dict(Counter(d.rule_id or "(no rule id)" for d in comply if d.held).most_common()),
        decisions=decisions,
    )
    if follow_reads:
        audit.false_holds_after_reads = wilson(held(comply, True), len(comply))
        audit.catches_after_reads = wilson(held(violate, True), len(violate))
    return audit


def pool(audits: Sequence[LabelAudit]) -> list[LabelAudit]:
    """Per strategy, one audit over the decisions of several runs."""
    by: dict[str, list[LabelAudit]] = {}
    for a in audits:
        by.setdefault(a.strategy, []).append(a)
    return [
        summarize(name, [d for a in parts for d in a.decisions], unmatched=sum(a.unmatched for a in parts),
                  follow_reads=any(a.false_holds_after_reads is not None for a in parts))
        for name, parts in by.items()
    ]


def rate_text(r: Rate | None) -> str:
    """``12/240 = 0.050 [0.029, 0.085]`` (or ``-``)."""
    if r is None or r.rate is None:
        return "-"
    return f"{r.held}/{r.writes} = {r.rate:.3f} [{r.low:.3f}, {r.high:.3f}]"
