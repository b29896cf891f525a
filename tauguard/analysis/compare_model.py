"""Result types of a paired comparison of runs (`tauguard compare`, `tauguard check`).

The logic that fills them is in :mod:`tauguard.analysis.compare`, which re-exports every name here.
Pure data: imports neither tau2 nor litellm, nor numpy.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from tauguard.runs.left_out import LeftOut
from tauguard.errors import TauguardInputError
from tauguard.analysis.metrics import MetricDef, Subset, TaskOutcome
from tauguard.analysis.pairing import PairingDifference

Conclusion = Literal["better", "worse", "no detectable difference"]
Change = Literal["improved", "regressed", "unchanged"]

FlipChange = Literal["improved", "regressed"]


class Flip(BaseModel):
    """One (task, trial) whose outcome differs between the baseline and the candidate."""

    domain: str
    task_id: str
    trial: int
    baseline: bool  # the outcome (e.g. "passed") in the baseline
    candidate: bool
    change: FlipChange
    # A task whose gold contradicts the policy (tauguard/domains/gold_conflicts.toml): a guard that
    # refuses the violating gold write loses it by being right.
    gold_conflict: bool = False


class FlipTable(BaseModel):
    """Every (task, trial) outcome of two deterministic runs, compared one by one."""

    metric: str  # the metric whose per-trial outcome is compared, e.g. "pass^4"
    outcome: str  # the per-trial outcome, e.g. "trial passed (reward 1)"
    higher_is_better: bool
    compared: int  # (task, trial) units with the outcome known in both runs
    improved: int
    regressed: int
    unchanged: int
    # Units left out: an infrastructure error (or unknown outcome) on a side, or recorded in one run only.
    not_compared: int = 0
    flips: list[Flip] = Field(default_factory=list)

    @property
    def regressed_on_conflicts(self) -> int:
        """Regressions on documented gold-conflict tasks (reported apart from the others)."""
        return sum(f.change == "regressed" and f.gold_conflict for f in self.flips)


class CompareError(TauguardInputError):
    """Runs cannot be compared (no common task, no common k, bad primary k); one-line message."""


class RunRef(BaseModel):
    """Identifies a compared run, with what it recorded against what it planned."""

    run_id: str
    path: str
    strategy: str
    simulated: bool
    agent_llm: str
    user_llm: str
    domains: list[str]
    trials: int  # trials per task the run asked for
    status: str = "completed"  # the manifest's status: running, completed, interrupted, failed
    planned_units: int = 0  # (task, trial) units the manifest plans
    recorded_units: int = 0  # distinct (task, trial) units with a record (infra errors included)
    skipped_lines: int = 0  # unparsable record lines the loader ignored
    # The sim agent's reaction to guards ("oracle" = from the gold plan: an upper bound) and uptake.
    sim_feedback: str | None = None
    uptake: float | None = None
    # The dialogue judge(s) the manifest says scored the process checks; None: not recorded
    # (a run made before manifests named it).
    process_judges: list[str] | None = None

    @property
    def complete(self) -> bool:
        """Whether the run finished and recorded every planned unit."""
        return self.status == "completed" and self.recorded_units >= self.planned_units

    def completeness(self) -> str:
        """e.g. ``4 of 30 planned units recorded, status running``."""
        return f"{self.recorded_units} of {self.planned_units} planned units recorded, status {self.status}"


class TaskPair(BaseModel):
    """One task as seen by both runs."""

    baseline: TaskOutcome
    candidate: TaskOutcome

    @property
    def domain(self) -> str:
        """The task's domain."""
        return self.baseline.domain

    def usable(self, k: int, metric: MetricDef | None = None) -> bool:
        """Whether both runs have at least k trials of the task for the metric (default: evaluated trials)."""
        if metric is None:
            return self.baseline.trials >= k and self.candidate.trials >= k
        return metric.n(self.baseline) >= k and metric.n(self.candidate) >= k


class Dropped(BaseModel):
    """Tasks left out of a comparison, by reason."""

    only_in_baseline: int = 0
    only_in_candidate: int = 0
    no_evaluated_trials: int = 0  # in both runs, but every trial of one run hit an infra error


class Alignment(BaseModel):
    """Tasks of two runs matched on (domain, task_id)."""

    pairs: list[TaskPair]
    dropped: Dropped

    @property
    def max_common_k(self) -> int:
        """Largest k at which at least one task has k evaluated trials in both runs."""
        return max((min(p.baseline.trials, p.candidate.trials) for p in self.pairs), default=0)

    @property
    def full_common_k(self) -> int:
        """Largest k at which every aligned task has k evaluated trials in both runs."""
        return min((min(p.baseline.trials, p.candidate.trials) for p in self.pairs), default=0)


class KComparison(BaseModel):
    """Baseline vs candidate on one k-metric, over the tasks both runs can estimate."""

    metric: str  # e.g. "pass^4"
    k: int
    primary: bool
    exploratory: bool = False  # a secondary k: its verdict is not a confirmatory claim
    higher_is_better: bool = True
    tasks: int  # tasks compared
    dropped_n_lt_k: int  # aligned tasks with fewer than k evaluated trials in either run
    baseline: float
    candidate: float
    delta: float  # candidate - baseline
    ci_low: float
    ci_high: float
    confidence: float
    # The adjusted Wald CI's standard error, and the smallest |Δ| this design detects with 80 %
    # power at 1 - confidence ((z_{1-α/2} + z_0.8)·se, a normal approximation).
    se: float = 0.0
    mde: float = 0.0
    p_permutation: float  # two-sided sign-flip permutation p of the per-task differences
    permutation_exact: bool
    p_holm: float  # Holm-adjusted over the non-primary ks; equals p_permutation for the primary k
    improved: int  # tasks whose per-task metric moved in the better direction
    regressed: int
    unchanged: int
    verdict: Conclusion


class DomainDiscordant(BaseModel):
    """McNemar discordant counts of one domain."""

    domain: str
    tasks: int
    b: int  # only the baseline had the event
    c: int  # only the candidate had the event


class McNemarSummary(BaseModel):
    """McNemar on a per-task yes/no outcome, discordant counts pooled over domains.

    Only tasks with the same number of trials in both runs enter: "all n trials passed" is a
    different event at n = 4 and n = 8.
    """

    event: str = "all n trials passed"
    k: int  # the task set: tasks with at least k trials in both runs (k = primary k)
    tasks: int
    left_out_unequal_n: int = 0  # usable at k, but with a different n in the two runs
    b: int
    c: int
    p_exact: float
    p_midp: float
    per_domain: list[DomainDiscordant]


class MetricComparison(BaseModel):
    """One metric compared at every shared k."""

    metric: str  # the MetricDef kind, e.g. "asr@"
    higher_is_better: bool
    ks: list[int]
    primary_k: int
    results: list[KComparison]
    mcnemar: McNemarSummary
    note: str | None = None  # the MetricDef's note (process_valid^: "tauguard's extension ...")


class TaskDiff(BaseModel):
    """One task's primary-k metric in both runs."""

    domain: str
    task_id: str
    policy_violation_task: bool
    baseline_trials: int
    baseline_successes: int
    candidate_trials: int
    candidate_successes: int
    k: int
    baseline: float | None  # None when a run has fewer than k evaluated trials
    candidate: float | None
    delta: float | None
    change: Change | None


class Comparison(BaseModel):
    """A candidate run compared to the baseline.

    ``metric``, ``ks``, ``primary_k``, ``results`` and ``mcnemar`` describe the headline metric
    (pass^k); every other compared metric (ASR@k when trials were attacked) is in ``other_metrics``.
    """

    baseline: RunRef
    candidate: RunRef
    simulated: bool
    subset: Subset
    domain: str | None  # domain filter, None = all domains
    domains: list[str]  # domains of the compared tasks
    common_tasks: int  # aligned tasks with evaluated trials in both runs
    dropped: Dropped
    notes: list[str]  # why tasks were dropped, in words
    metric: str = "pass^"
    higher_is_better: bool = True
    ks: list[int]
    primary_k: int
    results: list[KComparison]
    mcnemar: McNemarSummary
    other_metrics: list[MetricComparison] = Field(default_factory=list)
    tasks: list[TaskDiff] = Field(default_factory=list)
    # Manifest fields pairing needs on which the runs differ (tauguard.analysis.pairing); empty = paired.
    pairing: list[PairingDifference] = Field(default_factory=list)
    # Deterministic sim runs that differ only in the strategy (tauguard.analysis.exact): every flipped
    # (task, trial), the table `check` gates on; None when the runs do not qualify (``exact_reason`` says why).
    flips: FlipTable | None = None
    exact_reason: str | None = None

    @property
    def paired(self) -> bool:
        """Whether the runs agree on every manifest field a paired comparison needs."""
        return not self.pairing

    def pairing_warnings(self) -> list[str]:
        """One line per pairing difference (without the ``warning:`` prefix)."""
        return [d.warning(self.baseline.run_id, self.candidate.run_id) for d in self.pairing]

    def result(self, k: int) -> KComparison:
        """The headline metric's result for k."""
        for r in self.results:
            if r.k == k:
                return r
        raise KeyError(k)

    def metric_comparisons(self) -> list[MetricComparison]:
        """Every compared metric, the headline first."""
        headline = MetricComparison(
            metric=self.metric,
            higher_is_better=self.higher_is_better,
            ks=self.ks,
            primary_k=self.primary_k,
            results=self.results,
            mcnemar=self.mcnemar,
        )
        return [headline, *self.other_metrics]


class CompareReport(BaseModel):
    """Every candidate compared to the baseline (the first run)."""

    simulated: bool
    simulation_note: str | None
    seed: int
    n_resamples: int
    confidence: float
    subset: Subset
    domain: str | None
    comparisons: list[Comparison]
    # imported runs: run id -> what the import left out of the file (tauguard.runs.left_out)
    left_out: dict[str, LeftOut] = Field(default_factory=dict)
