"""Attack reporting: ASR@k per tactic and per violated clause, and the utility/safety view
(pass^k on the benign tasks next to ASR@k on the attacked ones). Pure library: no tau2, no litellm."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from pydantic import BaseModel, Field

from tauguard.analysis.metrics import KValue, k_metric, max_trials
from tauguard.analysis.task_table import outcomes_from_units
from tauguard.runs.outcome_index import UnitOutcome, record_tally, unit_outcome
from tauguard.runs.records import TrialRecord


class AttackGroup(BaseModel):
    """ASR@k over the attacked trials of one group (a tactic, or a clause)."""

    group: str
    tasks: int  # attacked tasks
    trials: int  # attacked trials with a known outcome
    successes: int  # of those, successful attacks
    unknown: int  # attacked trials with an unknown outcome (excluded)
    asr: list[KValue] = Field(default_factory=list)


class UtilitySafety(BaseModel):
    """One run's utility (benign tasks) and safety (attacked tasks)."""

    run_id: str
    strategy: str
    tactic: str | None
    benign_tasks: int
    pass_hat: list[KValue] = Field(default_factory=list)  # benign tasks only
    attacked_tasks: int
    attacked_pass_hat: list[KValue] = Field(default_factory=list)  # tau2 reward on attacked tasks
    asr: list[KValue] = Field(default_factory=list)
    unknown: int = 0


class AttackReport(BaseModel):
    """The attack part of a run summary."""

    by_tactic: list[AttackGroup]
    by_clause: list[AttackGroup]
    utility_safety: UtilitySafety


# A trial as the breakdowns see it: its outcome, attack tactic and targeted clause (None, None
# when it was not attacked).
AttackTrial = tuple[UnitOutcome, str | None, str | None]
_Trial = AttackTrial


def _groups(trials: Sequence[_Trial], key: Callable[[_Trial], str], max_k: int) -> list[AttackGroup]:
    out = []
    for name in sorted({key(t) for t in trials}):
        outcomes = outcomes_from_units(t[0] for t in trials if key(t) == name)
        out.append(
            AttackGroup(
                group=name,
                tasks=len(outcomes),
                trials=sum(o.attack_trials for o in outcomes),
                successes=sum(o.attack_successes for o in outcomes),
                unknown=sum(o.attack_unknown for o in outcomes),
                asr=[k_metric(outcomes, "asr@", k) for k in range(1, max_k + 1)],
            )
        )
    return out


def _utility_safety(evaluated: Sequence[_Trial], run_id: str, strategy: str) -> UtilitySafety:
    outcomes = outcomes_from_units(t[0] for t in evaluated)
    k_max = max_trials(outcomes)
    benign = [o for o in outcomes if not o.is_attacked]
    attacked = [o for o in outcomes if o.is_attacked]
    tactics = sorted({t[1] for t in evaluated if t[1] is not None})
    ks = range(1, k_max + 1)
    return UtilitySafety(
        run_id=run_id,
        strategy=strategy,
        tactic=",".join(tactics) or None,
        benign_tasks=len(benign),
        pass_hat=[k_metric(benign, "pass^", k) for k in ks],
        attacked_tasks=len(attacked),
        attacked_pass_hat=[k_metric(attacked, "pass^", k) for k in ks],
        asr=[k_metric(attacked, "asr@", k) for k in ks],
        unknown=sum(o.attack_unknown for o in attacked),
    )


def _trials(records: Iterable[TrialRecord]) -> list[_Trial]:
    out: list[_Trial] = []
    for r in records:
        t = record_tally(r)
        out.append((unit_outcome(r), t.attack_tactic, t.attack_clause))
    return out


def utility_safety(records: Sequence[TrialRecord], run_id: str = "", strategy: str = "") -> UtilitySafety:
    """pass^k over the benign (never attacked) tasks and ASR@k over the attacked ones."""
    return _utility_safety([t for t in _trials(records) if not t[0].error], run_id, strategy)


def attack_report_trials(evaluated: Sequence[AttackTrial], run_id: str = "", strategy: str = "") -> AttackReport | None:
    """The attack breakdowns of a run from its evaluated trials, or None when no trial was attacked."""
    attacked = [t for t in evaluated if t[0].attacked]
    if not attacked:
        return None
    k_max = max_trials(outcomes_from_units(t[0] for t in attacked))
    return AttackReport(
        by_tactic=_groups(attacked, lambda t: t[1] if t[1] is not None else "(not recorded)", k_max),
        by_clause=_groups(attacked, lambda t: t[2] if t[2] is not None else "(not recorded)", k_max),
        utility_safety=_utility_safety(evaluated, run_id, strategy),
    )


def attack_report(records: Sequence[TrialRecord], run_id: str = "", strategy: str = "") -> AttackReport | None:
    """The attack breakdowns of a run, or None when no trial was attacked."""
    return attack_report_trials([t for t in _trials(records) if not t[0].error], run_id, strategy)
