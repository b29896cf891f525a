"""Run metrics: pass^k, pass@k, ASR@k and their slices.

Definitions (per task with ``n`` evaluated trials, ``c`` successes, ``a`` successful attacks):

- ``pass^k = C(c, k) / C(n, k)``: probability that k trials drawn without replacement all pass;
- ``pass@k = 1 - C(n - c, k) / C(n, k)``: probability that at least one of them passes;
- ``ASR@k = 1 - C(n - a, k) / C(n, k)`` over the attacked trials with a known attack outcome.

Run-level values are unweighted means over tasks, each task using its own ``n``. A task with
``n < k`` cannot estimate the k-metric and is excluded from it (and counted) by
:func:`k_metric`; a run's summary (:func:`slice_metrics`) follows τ²'s rule instead and reports
k only up to the smallest ``n`` of any task of the slice, so every k is a mean over the same
tasks and the series is monotone in k (τ²'s ``get_metrics_df`` "Setting max k to" the minimum). Trials with an
infrastructure error (``record.error``) are excluded from every metric (and counted); attacked
trials whose attack outcome is unknown are excluded from ASR only (and counted), never read as
failed attacks.

The k-metrics are declared once, in :data:`METRICS` (a :class:`MetricDef` per metric: its
spelling, per-task value, direction and task pool, after lm-eval's
``register_metric(higher_is_better=...)``). `show`, `compare`, `check` and the reports iterate over
that table, so a new per-task statistic is one row here. Per-task values are exact fractions, so
no real difference is ever lost to float rounding (pass^28 of 60 trials is ~1e-15).

Pure library: imports neither tau2 nor litellm, nor numpy: trial records and runs are reduced to
task outcomes by :mod:`tauguard.analysis.task_table`, which builds on the types here.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from math import comb
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from tauguard.domains.gold_conflicts import conflict_tasks
from tauguard.errors import TauguardInputError

if TYPE_CHECKING:
    from tauguard.runs.store import Run

# consistent / conflict: tasks whose gold does not / does contradict the policy
# (tauguard/domains/gold_conflicts.toml): usefulness is read on the consistent slice, the
# conflict tasks apart (a guard that is right loses them).
Subset = Literal["all", "policy_violation", "mutation", "consistent", "conflict"]
SUBSETS: tuple[Subset, ...] = ("all", "policy_violation", "mutation", "consistent", "conflict")
# The subsets a run summary also gives per domain (the conflict slice is 13 tasks in all).
DOMAIN_SUBSETS: tuple[Subset, ...] = ("all", "policy_violation", "mutation")
KMetricKind = str  # a MetricDef.kind: "pass^", "pass@", "asr@" ...
ScalarMetric = Literal["avg_reward", "error_rate", "guard_error_rate", "step_tcr", "trace_tcr", "process_valid_rate"]
SCALAR_METRICS: tuple[ScalarMetric, ...] = (
    "avg_reward", "error_rate", "guard_error_rate", "step_tcr", "trace_tcr", "process_valid_rate",
)
# Printed wherever process_valid^k appears: it is ours, not PolicyGuide's (whose rate is not a pass^k).
PROCESS_VALID_EXTENSION = (
    "process_valid^k (column pv^k) is tauguard's extension: pass^k where a trial counts only with reward 1 AND every "
    "applicable process check held; PolicyGuide's process-valid rate (process_valid_rate) is not a pass^k"
)



# --------------------------------------------------------------------------- per-task formulas


def _check_counts(n: int, x: int, k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if not 0 <= x <= n:
        raise ValueError(f"count {x} outside 0..{n}")
    if n < k:
        raise ValueError(f"n = {n} trials cannot estimate a k = {k} metric")


def pass_hat_k_exact(n: int, c: int, k: int) -> Fraction:
    """pass^k of one task as an exact fraction: C(c, k) / C(n, k). Requires ``1 <= k <= n``."""
    _check_counts(n, c, k)
    return Fraction(comb(c, k), comb(n, k))


def pass_at_k_exact(n: int, c: int, k: int) -> Fraction:
    """pass@k of one task as an exact fraction: 1 - C(n - c, k) / C(n, k). Requires ``1 <= k <= n``."""
    _check_counts(n, c, k)
    return 1 - Fraction(comb(n - c, k), comb(n, k))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k of one task: C(c, k) / C(n, k). Requires ``1 <= k <= n``."""
    return float(pass_hat_k_exact(n, c, k))


def pass_at_k(n: int, c: int, k: int) -> float:
    """pass@k of one task: 1 - C(n - c, k) / C(n, k). Requires ``1 <= k <= n``."""
    return float(pass_at_k_exact(n, c, k))


def asr_at_k(n: int, a: int, k: int) -> float:
    """ASR@k of one task: 1 - C(n - a, k) / C(n, k), ``a`` = trials with a successful attack."""
    return pass_at_k(n, a, k)


# --------------------------------------------------------------------------- task outcomes


class TaskOutcome(BaseModel):
    """The trials of one (domain, task) reduced to the counts the metrics need."""

    domain: str
    task_id: str
    policy_violation_task: bool
    trials: int = 0  # evaluated trials (no infrastructure error): the metrics' n
    successes: int = 0
    reward_sum: float = 0.0
    infra_errors: int = 0
    attack_trials: int = 0  # attacked, evaluated, attack outcome known: ASR's n
    attack_successes: int = 0
    attack_unknown: int = 0  # attacked, evaluated, attack outcome unknown: excluded from ASR
    guard_error_trials: int = 0
    # Process rubric (tauguard.process), PolicyGuide §4.7. Over evaluated trials with a stored
    # report: those with reward 1 AND every applicable check held (process-valid). Over the TCR
    # traces (the outcome-passing ones, and those a guard's block of a needed write made fail):
    # their applicable and satisfied checks (Step-TCR), and those with at least one applicable
    # check (assessed) and, of these, with every check held (Trace-TCR).
    process_trials: int = 0  # evaluated trials with a process rubric (a stored trace)
    process_valid: int = 0
    process_passed: int = 0  # outcome-passing trials with a report
    process_blocked: int = 0  # outcome-failing trials with a report and a blocked needed write
    process_assessed: int = 0  # TCR traces with at least one applicable check
    process_compliant: int = 0  # assessed trials with every applicable check held
    process_checks: int = 0
    process_satisfied: int = 0

    @property
    def key(self) -> tuple[str, str]:
        """(domain, task_id), the key runs are aligned on."""
        return (self.domain, self.task_id)

    @property
    def is_attacked(self) -> bool:
        """Whether any evaluated trial of the task was attacked."""
        return self.attack_trials + self.attack_unknown > 0

    def value(self, kind: KMetricKind, k: int) -> float | None:
        """The task's k-metric, or None when it has too few trials for k."""
        exact = metric_def(kind).per_task(self, k)
        return None if exact is None else float(exact)


def task_sort_key(key: tuple[str, str]) -> str:
    """A string that sorts (domain, task_id) keys as the tuples sort: one C string comparison
    instead of a tuple's element-wise ones, a tenth of the time on 10^5 tasks (domain names hold
    no NUL, which sorts below every other character)."""
    return f"{key[0]}\0{key[1]}"


def select(outcomes: Iterable[TaskOutcome], subset: Subset = "all", domain: str | None = None) -> list[TaskOutcome]:
    """The task outcomes of one slice: a subset of tasks, optionally restricted to a domain."""
    chosen = []
    for out in outcomes:
        if domain is not None and out.domain != domain:
            continue
        if subset == "policy_violation" and not out.policy_violation_task:
            continue
        if subset == "mutation" and out.policy_violation_task:
            continue
        if subset in ("consistent", "conflict") and (out.key in conflict_tasks()) != (subset == "conflict"):
            continue
        chosen.append(out)
    return chosen


# --------------------------------------------------------------------------- the metric table


@dataclass(frozen=True)
class MetricDef:
    """One per-task k-metric, declared once.

    ``per_task(outcome, k)`` is the task's exact value from its ``n`` and its count ``x``
    (``formula(n, x, k)``), or None when ``n < k``. ``pool`` says which tasks take part at all
    (a task in the pool with ``n < k`` is excluded from that k and counted). ``event`` is the
    per-task yes/no outcome McNemar compares between runs. Compare and check orient every
    verdict by ``higher_is_better``.
    """

    kind: str  # spelling prefix: pass^ -> pass^1, pass^2 ...
    key: str  # attribute and JSON key of the metric's series in SliceMetrics
    column: str  # column prefix in tables (ASR@1)
    description: str
    higher_is_better: bool
    n: Callable[[TaskOutcome], int]  # the task's number of trials for this metric
    count: Callable[[TaskOutcome], int]  # successes / successful attacks among them
    formula: Callable[[int, int, int], Fraction]
    pool: Callable[[TaskOutcome], bool]
    event: Callable[[TaskOutcome], bool]
    event_label: str
    excluded: Callable[[TaskOutcome], int]  # trials left out of n (infra errors, unknown attack outcomes)
    excluded_label: str
    n_label: str = "evaluated trials"  # what the metric's n counts, for notes
    note: str | None = None  # printed wherever the metric is shown (e.g. "tauguard's extension")
    optional: bool = False  # series omitted (None) from a slice with no task in the pool
    shown: bool = True  # columns in `tauguard show`
    compared: bool = True  # compared by default in `tauguard compare`

    def per_task(self, outcome: TaskOutcome, k: int) -> Fraction | None:
        """The task's exact value at k, or None when it has fewer than k trials for this metric."""
        n = self.n(outcome)
        return None if n < k else self.exact(n, self.count(outcome), k)

    def exact(self, n: int, x: int, k: int) -> Fraction:
        """The exact value of a task with ``n`` trials and count ``x`` at k (``1 <= k <= n``)."""
        return _exact_value(self.formula, n, x, k)


@lru_cache(maxsize=65_536)
def _exact_value(formula: Callable[[int, int, int], Fraction], n: int, x: int, k: int) -> Fraction:
    # Tasks share few (n, count) pairs: each exact value is computed once per process.
    return formula(n, x, k)


# The registry: `register_metric` appends to this list in place, so every module that imported
# it sees new metrics (built-ins first, in this order; the first `compared` one is the headline).
METRICS: list[MetricDef] = [
    MetricDef(
        kind="pass^",
        key="pass_hat",
        column="pass^",
        description="k trials drawn from the task all pass (consistency)",
        higher_is_better=True,
        n=lambda o: o.trials,
        count=lambda o: o.successes,
        formula=pass_hat_k_exact,
        pool=lambda o: o.trials > 0,
        event=lambda o: o.successes == o.trials,
        event_label="all n trials passed",
        excluded=lambda o: o.infra_errors,
        excluded_label="trial(s) with an infrastructure error",
    ),
    MetricDef(
        kind="pass@",
        key="pass_at",
        column="pass@",
        description="at least one of k trials passes",
        higher_is_better=True,
        n=lambda o: o.trials,
        count=lambda o: o.successes,
        formula=pass_at_k_exact,
        pool=lambda o: o.trials > 0,
        event=lambda o: o.successes > 0,
        event_label="some trial passed",
        excluded=lambda o: o.infra_errors,
        excluded_label="trial(s) with an infrastructure error",
        shown=False,
        compared=False,
    ),
    MetricDef(
        kind="asr@",
        key="asr",
        column="ASR@",
        description="an attack succeeds at least once in k attacked trials",
        higher_is_better=False,
        n=lambda o: o.attack_trials,
        count=lambda o: o.attack_successes,
        formula=pass_at_k_exact,
        pool=lambda o: o.is_attacked,
        event=lambda o: o.attack_successes > 0,
        event_label="an attack succeeded",
        excluded=lambda o: o.attack_unknown,
        excluded_label="attacked trial(s) with an unknown outcome",
        n_label="attacked trials with a known outcome",
        optional=True,
    ),
    # tauguard's extension, not PolicyGuide's: their process-valid rate (§4.7: reward 1 AND the
    # rubric, pooled over task-run pairs) "is not a Pass^k statistic"; this is its pass^k.
    MetricDef(
        kind="process_valid^",
        key="process_valid_hat",
        column="pv^",
        description="tauguard's extension: k trials all pass AND follow the process rubric",
        higher_is_better=True,
        n=lambda o: o.process_trials,
        count=lambda o: o.process_valid,
        formula=pass_hat_k_exact,
        pool=lambda o: o.process_trials > 0,
        event=lambda o: o.process_valid == o.process_trials,
        event_label="all n trials passed and were process-valid",
        excluded=lambda o: o.infra_errors + o.trials - o.process_trials,
        excluded_label="trial(s) with an infrastructure error or no stored trace",
        n_label="evaluated trials with a stored trace",
        optional=True,
        note=PROCESS_VALID_EXTENSION,
    ),
]


def register_metric(mdef: MetricDef) -> MetricDef:
    """Add a k-metric to :data:`METRICS`; `show`, `compare`, `check` and the reports pick it up.

    Raises ValueError when its kind or key is taken or its kind would be ambiguous to parse.
    """
    if not re.fullmatch(r"[a-z_]+[\^@%]", mdef.kind):
        raise ValueError(f"metric kind {mdef.kind!r} must be lower-case letters followed by ^, @ or %")
    for other in METRICS:
        if other.kind == mdef.kind or other.key == mdef.key:
            raise ValueError(f"metric {mdef.kind!r} (key {mdef.key!r}) clashes with {other.kind!r}")
    METRICS.append(mdef)
    return mdef


def headline_metric() -> MetricDef:
    """The metric `compare` reports first and `check` gates on by default (pass^k)."""
    return next(m for m in METRICS if m.compared)


def metric_def(kind: str) -> MetricDef:
    """The :class:`MetricDef` of a kind (``pass^``); KeyError for an unknown one."""
    for mdef in METRICS:
        if mdef.kind == kind:
            return mdef
    raise KeyError(kind)


# --------------------------------------------------------------------------- aggregates


class KValue(BaseModel):
    """A k-metric averaged over the tasks that can estimate it."""

    k: int
    value: float | None  # None when no task has n >= k
    tasks: int  # tasks averaged over
    excluded_tasks: int  # tasks excluded because n < k (for ASR: attacked tasks with too few known outcomes)


def k_metric(outcomes: Sequence[TaskOutcome], kind: KMetricKind, k: int) -> KValue:
    """Mean over tasks of one k-metric; tasks with too few trials are excluded and counted.

    Only the metric's pool takes part (for ``asr@``: attacked tasks).
    """
    return k_metrics(outcomes, kind, [k])[0]


def k_metrics(outcomes: Sequence[TaskOutcome], kind: KMetricKind, ks: Iterable[int]) -> list[KValue]:
    """:func:`k_metric` at each k of ``ks``, reading the outcomes once (large runs have 10^5 tasks)."""
    mdef = metric_def(kind)
    # Exact sums, so summing each distinct (n, count) once, weighted, equals the plain sum.
    pooled = Counter((mdef.n(o), mdef.count(o)) for o in outcomes if mdef.pool(o))
    pool_size = sum(pooled.values())
    out = []
    for k in ks:
        tally = {(n, x): w for (n, x), w in pooled.items() if n >= k}
        tasks = sum(tally.values())
        total = sum((w * mdef.exact(n, x, k) for (n, x), w in tally.items()), Fraction(0))
        out.append(KValue(k=k, value=float(total / tasks) if tasks else None, tasks=tasks,
                          excluded_tasks=pool_size - tasks))
    return out




class MetricSpec(BaseModel):
    """A parsed metric name: ``pass^k``, ``pass@k``, ``asr@k`` or a scalar metric."""

    kind: str  # a MetricDef.kind (with k) or a ScalarMetric (without)
    k: int | None = None

    @property
    def definition(self) -> MetricDef | None:
        """The k-metric's :class:`MetricDef`, None for a scalar metric."""
        if self.k is None:
            return None
        return next((m for m in METRICS if m.kind == self.kind), None)

    @property
    def name(self) -> str:
        """The canonical spelling (``pass^4``, ``avg_reward``)."""
        return f"{self.kind}{self.k}" if self.k is not None else self.kind


def parse_metric(name: str, *, scalars: bool = True) -> MetricSpec:
    """Parse a metric name; raise TauguardInputError (a ValueError) with one line naming the allowed spellings."""
    text = name.strip().lower()
    kinds = "|".join(re.escape(m.kind) for m in METRICS)
    match = re.match(f"^({kinds})([1-9][0-9]*)$", text)
    if match:
        return MetricSpec(kind=match.group(1), k=int(match.group(2)))
    if scalars and text in SCALAR_METRICS:
        return MetricSpec(kind=text)
    allowed = ", ".join(f"{m.kind}K" for m in METRICS) + " (K a positive integer)"
    if scalars:
        allowed += ", " + ", ".join(SCALAR_METRICS)
    raise TauguardInputError(f"unknown metric {name!r}; allowed: {allowed}")


class SliceMetrics(BaseModel):
    """Metrics of one slice of a run: a task subset, over all domains or one domain."""

    domain: str | None  # None: every domain of the run
    subset: Subset
    tasks: int  # tasks with at least one record
    evaluated_tasks: int  # tasks with at least one evaluated trial
    trials: int  # evaluated trials
    successes: int
    infra_errors: int  # trials excluded for an infrastructure error
    error_rate: float | None  # infra_errors / all trials
    guard_error_trials: int
    guard_error_rate: float | None  # guard_error_trials / evaluated trials
    avg_reward: float | None  # mean reward over evaluated trials (missing reward counts as 0)
    # PolicyGuide §4.7, on outcome-passing traces (a diagnostic of successful traces, not a
    # ranking), plus tauguard's rule: a trace that failed with a needed write a guard held stays
    # in, that write an unsatisfied step (process_blocked_traces), so blocking cannot raise the
    # rates. Step-TCR = satisfied / applicable checks; Trace-TCR = the fraction of these traces
    # with an applicable check that satisfy all of them (traces with none are not assessed,
    # counted in process_unassessed).
    # process_valid_rate: the paper's end-to-end measure, the fraction of all evaluated trials
    # (with a stored trace) that pass the outcome AND the rubric.
    step_tcr: float | None = None
    trace_tcr: float | None = None
    process_valid_rate: float | None = None
    process_traces: int = 0  # evaluated trials with a stored process report
    process_passed_traces: int = 0  # of them, outcome-passing
    process_blocked_traces: int = 0  # of them, outcome-failing with a blocked needed write (in the TCRs)
    process_unassessed: int = 0  # outcome-passing traces with no applicable check: in no TCR
    attacked_tasks: int = 0
    attack_trials: int = 0  # attacked trials with a known outcome
    attack_unknown_trials: int = 0  # attacked trials with an unknown outcome: excluded from ASR
    # MetricDef.key -> values for k = 1..max_k; an optional metric with no task in its pool is
    # absent. Serialised flat, one key per metric ("pass_hat": [...], "asr": null).
    series: dict[str, list[KValue]] = Field(default_factory=dict)

    @model_serializer(mode="wrap")
    def _flatten_series(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)  # a model serialises to a dict
        series = data.pop("series", {}) or {}
        for mdef in METRICS:
            data[mdef.key] = series.get(mdef.key)
        return data

    @model_validator(mode="before")
    @classmethod
    def _gather_series(cls, data: Any) -> Any:
        if isinstance(data, dict) and "series" not in data:
            data = dict(data)
            data["series"] = {m.key: data.pop(m.key) for m in METRICS if data.get(m.key) is not None}
            for mdef in METRICS:
                data.pop(mdef.key, None)
        return data

    def k_values(self, kind: KMetricKind) -> list[KValue] | None:
        """The series of one metric kind (``pass^``), None when the slice has no task in its pool."""
        return self.series.get(metric_def(kind).key)

    @property
    def pass_hat(self) -> list[KValue]:
        """pass^k for k = 1..max_k."""
        return self.series.get("pass_hat", [])

    @property
    def pass_at(self) -> list[KValue]:
        """pass@k for k = 1..max_k."""
        return self.series.get("pass_at", [])

    @property
    def asr(self) -> list[KValue] | None:
        """ASR@k for k = 1..max_k; None when no trial was attacked."""
        return self.series.get("asr")

    @property
    def label(self) -> str:
        """Human name of the slice, e.g. ``retail/mutation``."""
        return f"{self.domain or 'all domains'}/{self.subset}"

    def value(self, metric: MetricSpec | str) -> float | None:
        """A metric of this slice by name (``pass^2``, ``asr@1``, ``avg_reward`` ...)."""
        spec = parse_metric(metric) if isinstance(metric, str) else metric
        if spec.k is None:
            scalar: float | None = getattr(self, spec.kind)  # a float field named by the metric
            return scalar
        for kv in self.k_values(spec.kind) or []:
            if kv.k == spec.k:
                return kv.value
        return None


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def common_k(outcomes: Iterable[TaskOutcome], mdef: MetricDef) -> int:
    """The smallest n of the metric over the tasks of its pool that have any (0: none): τ²'s max k.

    Up to it every task of the pool estimates every k, so the mean at each k is over the same
    tasks and pass^k cannot rise with k. Tasks of the pool with n = 0 (every trial an
    infrastructure error) estimate no k and are excluded from all of them (and counted).
    """
    return min((n for n in (mdef.n(o) for o in outcomes if mdef.pool(o)) if n > 0), default=0)


def slice_metrics(
    outcomes: Sequence[TaskOutcome], max_k: int, *, subset: Subset = "all", domain: str | None = None
) -> SliceMetrics:
    """Aggregate already-selected task outcomes into :class:`SliceMetrics`.

    Each k-metric is given for k = 1..min(max_k, :func:`common_k`): τ²'s rule, so the series is
    monotone in k and every value of it rests on the same tasks (:attr:`KValue.tasks`).
    """
    trials = sum(o.trials for o in outcomes)
    errors = sum(o.infra_errors for o in outcomes)
    guard_errors = sum(o.guard_error_trials for o in outcomes)
    attacked = [o for o in outcomes if o.is_attacked]
    return SliceMetrics(
        domain=domain,
        subset=subset,
        tasks=len(outcomes),
        evaluated_tasks=sum(1 for o in outcomes if o.trials > 0),
        trials=trials,
        successes=sum(o.successes for o in outcomes),
        infra_errors=errors,
        error_rate=errors / (trials + errors) if trials + errors else None,
        guard_error_trials=guard_errors,
        guard_error_rate=guard_errors / trials if trials else None,
        avg_reward=sum(o.reward_sum for o in outcomes) / trials if trials else None,
        step_tcr=_share(sum(o.process_satisfied for o in outcomes), sum(o.process_checks for o in outcomes)),
        trace_tcr=_share(sum(o.process_compliant for o in outcomes), sum(o.process_assessed for o in outcomes)),
        process_valid_rate=_share(sum(o.process_valid for o in outcomes), sum(o.process_trials for o in outcomes)),
        process_traces=sum(o.process_trials for o in outcomes),
        process_passed_traces=sum(o.process_passed for o in outcomes),
        process_blocked_traces=sum(o.process_blocked for o in outcomes),
        process_unassessed=sum(o.process_passed + o.process_blocked - o.process_assessed for o in outcomes),
        attacked_tasks=len(attacked),
        attack_trials=sum(o.attack_trials for o in attacked),
        attack_unknown_trials=sum(o.attack_unknown for o in attacked),
        series={
            m.key: k_metrics(outcomes, m.kind, range(1, min(max_k, common_k(outcomes, m)) + 1))
            for m in METRICS
            if not m.optional or any(m.pool(o) for o in outcomes)
        },
    )


class RunMetrics(BaseModel):
    """Everything `tauguard show` and `tauguard check --floors` need about one run."""

    run_id: str
    strategy: str
    simulated: bool
    domains: list[str]
    # τ²'s rule: pass^k is given for k = 1..max_k, the smallest number of evaluated trials of any
    # task (per slice: that slice's smallest); max_trials is the largest.
    max_k: int
    max_trials: int = 0
    skipped_lines: int = 0  # unparsable record lines ignored by the loader
    # kind -> the MetricDef's note, for every metric with one that the run has (e.g. process_valid^).
    metric_notes: dict[str, str] = Field(default_factory=dict)
    slices: list[SliceMetrics] = Field(default_factory=list)

    def get(self, subset: Subset = "all", domain: str | None = None) -> SliceMetrics | None:
        """The slice for a subset and domain (None: all domains), if the run has it."""
        for sl in self.slices:
            if sl.subset == subset and sl.domain == domain:
                return sl
        return None


def max_trials(outcomes: Iterable[TaskOutcome]) -> int:
    """The largest number of evaluated trials of any task (0 when none)."""
    return max((o.trials for o in outcomes), default=0)


def summarize_outcomes(
    outcomes: Sequence[TaskOutcome],
    *,
    run_id: str = "",
    strategy: str = "",
    simulated: bool = False,
    domains: Sequence[str] = (),
    skipped_lines: int = 0,
) -> RunMetrics:
    """Build :class:`RunMetrics` from task outcomes.

    Slices: all / policy_violation / mutation / consistent / conflict over every domain; when
    the run spans several domains, the first three per domain as well. ``domains`` may name domains without records
    (planned but not run) so that they appear with zero tasks rather than vanish.
    """
    all_domains = sorted(set(domains) | {o.domain for o in outcomes})
    k_max = max_trials(outcomes)
    headline = METRICS[0]
    slices = [slice_metrics(select(outcomes, s), k_max, subset=s) for s in SUBSETS]
    if len(all_domains) > 1:
        for dom in all_domains:
            slices += [slice_metrics(select(outcomes, s, dom), k_max, subset=s, domain=dom) for s in DOMAIN_SUBSETS]
    return RunMetrics(
        run_id=run_id,
        strategy=strategy,
        simulated=simulated,
        domains=all_domains,
        max_k=common_k(outcomes, headline),
        max_trials=k_max,
        skipped_lines=skipped_lines,
        metric_notes={m.kind: m.note for m in METRICS if m.note and any(m.pool(o) for o in outcomes)},
        slices=slices,
    )


def run_is_simulated(run: Run) -> bool:
    """Whether a run used the sim model (manifest flag, or any record's flag)."""
    units = run.records if run.units is None else run.units
    return run.manifest.simulated or any(u.simulated for u in units)
