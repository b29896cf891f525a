"""`audit`'s view on the two axes: what a guard's holds on real writes mean, with and without labels.

With hand labels (the labelled real-write benchmark's format, :mod:`tauguard.benchmark.real_writes`:
each write ``complies`` / ``violates`` / ``ambiguous`` with the clause ids that decide it), per guard:
catches by violated clause and the holds (false holds and catches) by cause, each with its Wilson
95 % interval (:func:`tauguard.benchmark.audit.wilson`). The cause of a hold is read from the
guard's decision by one rule: a rule id naming a confirmation (``confirm`` in it) is
*confirmation*; otherwise a VERIFY (the guard asks for a read before acting) is *read*; a REVISE or
BLOCK (a rule judged the arguments or the state) is *predicate*.

Without labels nobody knows whether a held write complied: a hold is not an error. The neutral
checks' view is printed instead: the writes the process rubric's checks (write contract, neutral
dialogue judge; :mod:`tauguard.process`) find violating, by check and clause, and per guard how
many of those it held against how many of the writes they do not flag.

Imports neither tau2 nor litellm.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from tauguard.benchmark.audit import LabelledDecision, Rate, wilson
from tauguard.benchmark.real_writes import LabelledWrite
from tauguard.process.score import conversation_from_messages
from tauguard.runs.records import TrialRecord
from tauguard.trajectories.audit import AuditReport

CAUSES = ("confirmation", "read", "predicate")
WriteKey = tuple[str, int, int, str]  # task id, trial, message index, call id
NO_LABELS = (
    "no hand labels for this run's writes: a hold is not an error. Without labels nobody knows whether a held "
    "write complied; the gold-class columns above are proxies, wrong both ways. The neutral checks' view follows "
    "(give --labels FILE, the benchmark's JSONL format, to measure false holds and catches)."
)


def hold_cause(verdict: str, rule_id: str | None) -> str:
    """confirmation, read or predicate (the module docstring's rule)."""
    if rule_id and "confirm" in rule_id.lower():
        return "confirmation"
    return "read" if verdict == "VERIFY" else "predicate"


class ClauseRate(BaseModel):
    """Held of the labelled violating writes of one clause."""

    clause_id: str
    catches: Rate


class LabelBreakdown(BaseModel):
    """One guard's labelled holds by clause and by cause."""

    strategy: str
    catches_by_clause: list[ClauseRate] = Field(default_factory=list)
    false_holds_by_cause: dict[str, Rate] = Field(default_factory=dict)  # cause -> held of complying writes
    catches_by_cause: dict[str, Rate] = Field(default_factory=dict)  # cause -> held of violating writes


class NeutralRow(BaseModel):
    """One guard's holds on the writes the neutral checks flag and on the others."""

    strategy: str
    held_flagged: Rate
    held_unflagged: Rate


class NeutralView(BaseModel):
    """The neutral checks' view of a run's writes."""

    writes: int  # audited writes
    flagged: int  # of them, flagged violating by a neutral check (a write failing two checks: once)
    by_check: dict[str, int] = Field(default_factory=dict)
    by_clause: dict[str, int] = Field(default_factory=dict)
    guards: list[NeutralRow] = Field(default_factory=list)


class AuditAxes(BaseModel):
    """What `audit` adds on the two axes."""

    labelled: bool
    labels: list[LabelBreakdown] = Field(default_factory=list)
    neutral: NeutralView | None = None
    statement: str | None = None  # NO_LABELS when no write of the run is labelled


def _breakdown(strategy: str, decisions: Sequence[LabelledDecision], clauses: dict[str, list[str]]) -> LabelBreakdown:
    violating = [d for d in decisions if d.label == "violates"]
    by_clause: dict[str, list[LabelledDecision]] = defaultdict(list)
    for d in violating:
        by_clause[(clauses.get(d.id) or ["(no clause)"])[0]].append(d)
    out = LabelBreakdown(strategy=strategy, catches_by_clause=[
        ClauseRate(clause_id=c, catches=wilson(sum(d.held for d in ds), len(ds))) for c, ds in sorted(by_clause.items())
    ])
    for label, target in (("complies", out.false_holds_by_cause), ("violates", out.catches_by_cause)):
        pool = [d for d in decisions if d.label == label]
        causes = Counter(hold_cause(d.verdict, d.rule_id) for d in pool if d.held)
        for cause in CAUSES:
            target[cause] = wilson(causes[cause], len(pool))
    return out


def event_messages(messages: Sequence[dict[str, Any]]) -> list[int]:
    """The message index of each event of :func:`tauguard.process.score.conversation_from_messages`
    (a call, a text turn, a tool result), so a process check's event step finds its recorded call."""
    out: list[int] = []
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role in ("assistant", "user"):
            out += [i] * (len(msg.get("tool_calls") or []) + (1 if msg.get("content") else 0))
        elif role == "tool":
            out.append(i)
    return out


def flagged_writes(records: Sequence[TrialRecord]) -> dict[WriteKey, list[tuple[str, str]]]:
    """(task, trial, message index, call id) -> [(check, clause)] of the writes the stored process
    reports flag (``blocked_write`` left out: it is about a guard, not the agent). The message index
    is part of the key: some agents reuse a call id when they retry a write."""
    out: dict[WriteKey, list[tuple[str, str]]] = defaultdict(list)
    for rec in records:
        if rec.process is None or rec.simulation is None or rec.error is not None:
            continue
        failures = [f for f in rec.process.failures if f.check != "blocked_write"]
        if not failures:
            continue
        messages = rec.simulation.get("messages") or []
        events = conversation_from_messages(messages).events
        where = event_messages(messages)
        for f in failures:
            call = events[f.step].tool_call if 0 <= f.step < len(events) else None
            if call is not None:
                out[(rec.task_id, rec.trial, where[f.step], call.id)].append((f.check, f.clause_id))
    return out


def audit_axes(report: AuditReport, records: Sequence[TrialRecord], labels: Sequence[LabelledWrite]) -> AuditAxes:
    """The labelled breakdowns when the run's writes are labelled; else the plain statement. The
    neutral checks' view either way."""
    flags = flagged_writes(records)
    checks = Counter(check for found in flags.values() for check, _ in found)
    clauses_n = Counter(clause for found in flags.values() for _, clause in found)
    neutral = NeutralView(writes=report.writes, flagged=len(flags), by_check=dict(checks.most_common()),
                          by_clause=dict(clauses_n.most_common()))
    for s in report.strategies:
        held = {(w.task_id, w.trial, w.step, w.call_id) for w in s.held_writes if w.held}
        held_flagged = len(held & flags.keys())
        neutral.guards.append(NeutralRow(
            strategy=s.strategy, held_flagged=wilson(held_flagged, len(flags)),
            held_unflagged=wilson(len(held) - held_flagged, max(0, s.writes - len(flags))),
        ))
    labelled = [s for s in report.strategies if s.labels is not None]
    if not labelled:
        return AuditAxes(labelled=False, neutral=neutral, statement=NO_LABELS)
    clauses = {label.id: label.clauses for label in labels}
    return AuditAxes(labelled=True, neutral=neutral, labels=[
        _breakdown(s.strategy, s.labels.decisions, clauses) for s in labelled if s.labels is not None
    ])


def _rate(r: Rate) -> str:
    if r.rate is None:
        return f"-/{r.writes}"
    return f"{r.held}/{r.writes} = {r.rate:.3f} [{r.low:.3f}, {r.high:.3f}]"


def render_audit_axes(axes: AuditAxes, fmt: str) -> str:
    """The text `audit` prints after its report."""
    from tauguard.tables import fit_table

    tablefmt = "github" if fmt == "markdown" else "simple"
    lines: list[str] = [""]
    if axes.labelled:
        lines.append("labelled holds by cause (confirmation: the rule names a confirmation; read: a VERIFY; predicate: "
                     "a REVISE or BLOCK), Wilson 95 %:")
        rows = [{"strategy": b.strategy, **{f"false holds: {c}": _rate(b.false_holds_by_cause[c]) for c in CAUSES},
                 **{f"catches: {c}": _rate(b.catches_by_cause[c]) for c in CAUSES}} for b in axes.labels]
        lines.append(fit_table(rows, headers="keys", tablefmt=tablefmt, disable_numparse=True))
        lines.append("catches by violated clause (the label's first clause), Wilson 95 %:")
        rows = [{"strategy": b.strategy, "clause": c.clause_id, "caught": _rate(c.catches)}
                for b in axes.labels for c in b.catches_by_clause]
        lines.append(fit_table(rows, headers="keys", tablefmt=tablefmt, disable_numparse=True))
    elif axes.statement:
        lines.append(axes.statement)
    n = axes.neutral
    if n is not None:
        lines.append("")
        lines.append(f"the neutral checks' view (process rubric: write contract, neutral dialogue judge; no guard's verdict): "
                     f"{n.flagged} of {n.writes} writes flagged violating"
                     + (f" (by check: {', '.join(f'{k} {v}' for k, v in n.by_check.items())}; by clause: "
                        f"{', '.join(f'{k} {v}' for k, v in n.by_clause.items())})" if n.flagged else ""))
        rows = [{"strategy": g.strategy, "held of flagged writes": _rate(g.held_flagged),
                 "held of unflagged writes": _rate(g.held_unflagged)} for g in n.guards]
        lines.append(fit_table(rows, headers="keys", tablefmt=tablefmt, disable_numparse=True))
        lines.append("(a check's flag is not a label either: the checks see the write contract and the dialogue, not every clause)")
    return "\n".join(lines)
