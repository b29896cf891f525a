"""Paired comparison of runs: alignment on (domain, task_id) and per-k statistics.

The first run is the baseline; every other run (a candidate) is compared to it. For each k
shared by both runs the comparison gives baseline and candidate pass^k over the tasks both runs
can estimate at that k, the difference Δ = candidate - baseline with a paired bootstrap CI
(stratified by domain when the tasks span several), a sign-flip permutation p-value, and
Holm-adjusted p-values for every k but the declared primary one. A McNemar test on "all n
trials passed" per task complements them.

Pure library: imports neither tau2 nor litellm.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from tauguard.metrics import (
    KMetricKind,
    MetricSpec,
    Subset,
    TaskOutcome,
    k_metric,
    run_is_simulated,
    select,
    task_outcomes,
)
from tauguard.errors import TauguardInputError
from tauguard.records import SIMULATION_NOTE
from tauguard.stats import holm, mcnemar, paired_bootstrap_ci, sign_flip_test
from tauguard.store import Run

Conclusion = Literal["better", "worse", "no detectable difference"]
Change = Literal["improved", "regressed", "unchanged"]

_KIND_CODE: dict[str, int] = {"pass^": 0, "pass@": 1, "asr@": 2}
_TIE = 1e-12  # per-task differences this small are float noise, i.e. unchanged


class CompareError(TauguardInputError):
    """Runs cannot be compared (no common task, no common k, bad primary k); one-line message."""


class RunRef(BaseModel):
    """Identifies a compared run."""

    run_id: str
    path: str
    strategy: str
    simulated: bool
    agent_llm: str
    user_llm: str
    domains: list[str]
    trials: int  # trials per task the run asked for


def run_ref(run: Run) -> RunRef:
    """A :class:`RunRef` for a loaded run."""
    m = run.manifest
    return RunRef(
        run_id=m.run_id,
        path=str(run.path),
        strategy=m.strategy,
        simulated=run_is_simulated(run),
        agent_llm=m.agent_llm,
        user_llm=m.user_llm,
        domains=list(m.domains),
        trials=m.trials,
    )


class TaskPair(BaseModel):
    """One task as seen by both runs."""

    baseline: TaskOutcome
    candidate: TaskOutcome

    @property
    def domain(self) -> str:
        """The task's domain."""
        return self.baseline.domain

    def usable(self, k: int) -> bool:
        """Whether both runs have at least k evaluated trials of the task."""
        return self.baseline.trials >= k and self.candidate.trials >= k


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


def align(baseline: Sequence[TaskOutcome], candidate: Sequence[TaskOutcome]) -> Alignment:
    """Match task outcomes on (domain, task_id); tasks with no evaluated trial on a side are dropped."""
    base = {o.key: o for o in baseline}
    cand = {o.key: o for o in candidate}
    pairs: list[TaskPair] = []
    no_trials = 0
    for key in sorted(base.keys() & cand.keys()):
        if base[key].trials == 0 or cand[key].trials == 0:
            no_trials += 1
            continue
        pairs.append(TaskPair(baseline=base[key], candidate=cand[key]))
    return Alignment(
        pairs=pairs,
        dropped=Dropped(
            only_in_baseline=len(base.keys() - cand.keys()),
            only_in_candidate=len(cand.keys() - base.keys()),
            no_evaluated_trials=no_trials,
        ),
    )


class KComparison(BaseModel):
    """Baseline vs candidate on one k-metric, over the tasks both runs can estimate."""

    metric: str  # e.g. "pass^4"
    k: int
    primary: bool
    tasks: int  # tasks compared
    dropped_n_lt_k: int  # aligned tasks with fewer than k evaluated trials in either run
    baseline: float
    candidate: float
    delta: float  # candidate - baseline
    ci_low: float
    ci_high: float
    confidence: float
    stratified: bool  # bootstrap stratified by domain
    p_permutation: float  # two-sided sign-flip permutation p of the per-task differences
    permutation_exact: bool
    p_holm: float  # Holm-adjusted over the non-primary ks; equals p_permutation for the primary k
    improved: int  # tasks whose per-task metric went up
    regressed: int
    unchanged: int
    verdict: Conclusion


def verdict_from(low: float, high: float, p: float, alpha: float) -> Conclusion:
    """ "better"/"worse" only when the CI excludes 0 and the permutation test agrees (p < alpha).

    With few discordant tasks the percentile bootstrap can exclude 0 while the exact
    sign-flip test cannot reject (5 improved, 0 regressed: p = 0.0625); such a result is
    reported as "no detectable difference" rather than a claim the test does not back.
    """
    if p >= alpha:
        return "no detectable difference"
    if low > 0:
        return "better"
    if high < 0:
        return "worse"
    return "no detectable difference"


def _rng_seed(seed: int, kind: str, k: int, stream: int) -> list[int]:
    # One independent, reproducible stream per (metric, k, purpose): the CI of pass^4 does not
    # depend on which other ks were compared, so `check` and `compare` agree for the same seed.
    return [seed, _KIND_CODE[kind], k, stream]


def compare_metric(
    pairs: Sequence[TaskPair],
    spec: MetricSpec,
    *,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    primary: bool = False,
) -> KComparison:
    """Compare one k-metric (``pass^k`` or ``pass@k``) over aligned task pairs.

    Only pairs with at least k evaluated trials in both runs enter. Raises :class:`CompareError`
    when none does.
    """
    if spec.k is None or spec.kind not in ("pass^", "pass@"):
        raise CompareError(f"metric {spec.name} cannot be compared per task; use pass^K or pass@K")
    kind: KMetricKind = spec.kind  # type: ignore[assignment]
    k = spec.k
    used = [p for p in pairs if p.usable(k)]
    if not used:
        raise CompareError(f"no common task has {k} evaluated trials in both runs, so {spec.name} cannot be compared")
    a = np.array([p.baseline.value(kind, k) for p in used], dtype=float)
    b = np.array([p.candidate.value(kind, k) for p in used], dtype=float)
    domains = np.array([p.domain for p in used])
    stratify = np.unique(domains).size > 1
    ci = paired_bootstrap_ci(
        a,
        b,
        strata=domains if stratify else None,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=np.random.default_rng(_rng_seed(seed, kind, k, 0)),
    )
    diffs = b - a
    perm = sign_flip_test(diffs, n_resamples=n_resamples, seed=np.random.default_rng(_rng_seed(seed, kind, k, 1)))
    return KComparison(
        metric=spec.name,
        k=k,
        primary=primary,
        tasks=len(used),
        dropped_n_lt_k=len(pairs) - len(used),
        baseline=float(a.mean()),
        candidate=float(b.mean()),
        delta=float(diffs.mean()),
        ci_low=ci.low,
        ci_high=ci.high,
        confidence=confidence,
        stratified=stratify,
        p_permutation=perm.p_value,
        permutation_exact=perm.exact,
        p_holm=perm.p_value,
        improved=int(np.count_nonzero(diffs > _TIE)),
        regressed=int(np.count_nonzero(diffs < -_TIE)),
        unchanged=int(np.count_nonzero(np.abs(diffs) <= _TIE)),
        verdict=verdict_from(ci.low, ci.high, perm.p_value, 1 - confidence),
    )


class DomainDiscordant(BaseModel):
    """McNemar discordant counts of one domain."""

    domain: str
    tasks: int
    b: int  # only the baseline passed all trials
    c: int  # only the candidate passed all trials


class McNemarSummary(BaseModel):
    """McNemar on the per-task outcome "all n trials passed", discordant counts pooled over domains."""

    k: int  # the task set: tasks with at least k evaluated trials in both runs (k = primary k)
    tasks: int
    b: int
    c: int
    p_exact: float
    p_midp: float
    per_domain: list[DomainDiscordant]


def mcnemar_all_passed(pairs: Sequence[TaskPair], k: int) -> McNemarSummary:
    """McNemar over the pairs usable at k, on "every evaluated trial passed" per run."""
    used = [p for p in pairs if p.usable(k)]
    per: dict[str, DomainDiscordant] = {}
    for p in used:
        dom = per.setdefault(p.domain, DomainDiscordant(domain=p.domain, tasks=0, b=0, c=0))
        dom.tasks += 1
        a_pass = p.baseline.successes == p.baseline.trials
        b_pass = p.candidate.successes == p.candidate.trials
        dom.b += a_pass and not b_pass
        dom.c += b_pass and not a_pass
    b = sum(d.b for d in per.values())
    c = sum(d.c for d in per.values())
    res = mcnemar(b, c)
    return McNemarSummary(
        k=k,
        tasks=len(used),
        b=b,
        c=c,
        p_exact=res.p_exact,
        p_midp=res.p_midp,
        per_domain=[per[d] for d in sorted(per)],
    )


class AsrComparison(BaseModel):
    """ASR@k of both runs over the common tasks (lower is better for the guard)."""

    k: int
    baseline: float | None
    candidate: float | None
    delta: float | None
    baseline_tasks: int
    candidate_tasks: int
    baseline_unknown_trials: int  # attacked trials with unknown outcome, excluded
    candidate_unknown_trials: int


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


def _task_diff(pair: TaskPair, k: int) -> TaskDiff:
    a = pair.baseline.value("pass^", k) if pair.usable(k) else None
    b = pair.candidate.value("pass^", k) if pair.usable(k) else None
    delta = b - a if a is not None and b is not None else None
    change: Change | None = None
    if delta is not None:
        change = "improved" if delta > _TIE else "regressed" if delta < -_TIE else "unchanged"
    return TaskDiff(
        domain=pair.domain,
        task_id=pair.baseline.task_id,
        policy_violation_task=pair.baseline.policy_violation_task,
        baseline_trials=pair.baseline.trials,
        baseline_successes=pair.baseline.successes,
        candidate_trials=pair.candidate.trials,
        candidate_successes=pair.candidate.successes,
        k=k,
        baseline=a,
        candidate=b,
        delta=delta,
        change=change,
    )


class Comparison(BaseModel):
    """A candidate run compared to the baseline."""

    baseline: RunRef
    candidate: RunRef
    simulated: bool
    subset: Subset
    domain: str | None  # domain filter, None = all domains
    domains: list[str]  # domains of the compared tasks
    common_tasks: int  # aligned tasks with evaluated trials in both runs
    dropped: Dropped
    notes: list[str]  # why tasks were dropped, in words
    ks: list[int]
    primary_k: int
    results: list[KComparison]
    mcnemar: McNemarSummary
    asr: list[AsrComparison] | None = None
    tasks: list[TaskDiff] = Field(default_factory=list)

    def result(self, k: int) -> KComparison:
        """The pass^k result for k."""
        for r in self.results:
            if r.k == k:
                return r
        raise KeyError(k)


def _slice_label(subset: Subset, domain: str | None) -> str:
    parts = [] if subset == "all" else [f"{subset} tasks"]
    if domain:
        parts.append(f"domain {domain}")
    return f" ({', '.join(parts)})" if parts else ""


def compare_outcomes(
    baseline: Sequence[TaskOutcome],
    candidate: Sequence[TaskOutcome],
    *,
    baseline_ref: RunRef,
    candidate_ref: RunRef,
    primary_k: int | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    subset: Subset = "all",
    domain: str | None = None,
) -> Comparison:
    """Compare a candidate's task outcomes to the baseline's on pass^k for every common k.

    Raises :class:`CompareError` when the runs share no task, no k, or ``primary_k`` is not shared.
    """
    base = select(baseline, subset, domain)
    cand = select(candidate, subset, domain)
    alignment = align(base, cand)
    names = f"{baseline_ref.run_id} and {candidate_ref.run_id}"
    where = _slice_label(subset, domain)
    if not alignment.pairs and alignment.dropped.no_evaluated_trials == 0:
        raise CompareError(f"runs {names} have no task in common{where}")
    k_max = alignment.max_common_k
    if k_max == 0:
        raise CompareError(f"runs {names} share no k{where}: no common task has an evaluated trial in both runs")
    ks = list(range(1, k_max + 1))
    if primary_k is None:
        primary_k = k_max
    elif primary_k not in ks:
        raise CompareError(f"primary k {primary_k} is not available: runs {names} share k = 1..{k_max}{where}")

    results = [
        compare_metric(
            alignment.pairs,
            MetricSpec(kind="pass^", k=k),
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
            primary=k == primary_k,
        )
        for k in ks
    ]
    secondary = [r for r in results if not r.primary]
    for r, p in zip(secondary, holm([r.p_permutation for r in secondary]), strict=True):
        r.p_holm = p
        r.verdict = verdict_from(r.ci_low, r.ci_high, p, 1 - r.confidence)

    d = alignment.dropped
    notes: list[str] = []
    if d.only_in_baseline or d.only_in_candidate:
        notes.append(
            f"{d.only_in_baseline} task(s) only in the baseline and {d.only_in_candidate} only in the "
            "candidate: not compared"
        )
    if d.no_evaluated_trials:
        notes.append(
            f"{d.no_evaluated_trials} common task(s) have no evaluated trial in one run "
            "(all infrastructure errors): not compared"
        )
    for r in results:
        if r.dropped_n_lt_k:
            notes.append(
                f"k={r.k}: {r.dropped_n_lt_k} task(s) have fewer than {r.k} evaluated trials in a run: excluded"
            )

    asr: list[AsrComparison] | None = None
    base_pairs = [p.baseline for p in alignment.pairs]
    cand_pairs = [p.candidate for p in alignment.pairs]
    if any(o.is_attacked for o in base_pairs + cand_pairs):
        asr = []
        for k in ks:
            ka, kb = k_metric(base_pairs, "asr@", k), k_metric(cand_pairs, "asr@", k)
            asr.append(
                AsrComparison(
                    k=k,
                    baseline=ka.value,
                    candidate=kb.value,
                    delta=kb.value - ka.value if ka.value is not None and kb.value is not None else None,
                    baseline_tasks=ka.tasks,
                    candidate_tasks=kb.tasks,
                    baseline_unknown_trials=sum(o.attack_unknown for o in base_pairs),
                    candidate_unknown_trials=sum(o.attack_unknown for o in cand_pairs),
                )
            )

    return Comparison(
        baseline=baseline_ref,
        candidate=candidate_ref,
        simulated=baseline_ref.simulated or candidate_ref.simulated,
        subset=subset,
        domain=domain,
        domains=sorted({p.domain for p in alignment.pairs}),
        common_tasks=len(alignment.pairs),
        dropped=d,
        notes=notes,
        ks=ks,
        primary_k=primary_k,
        results=results,
        mcnemar=mcnemar_all_passed(alignment.pairs, primary_k),
        asr=asr,
        tasks=[_task_diff(p, primary_k) for p in alignment.pairs],
    )


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


def compare_runs(
    runs: Sequence[Run],
    *,
    primary_k: int | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    subset: Subset = "all",
    domain: str | None = None,
) -> CompareReport:
    """Compare every run after the first to the first (the baseline).

    Raises :class:`CompareError` (one-line message) when a pair of runs cannot be compared.
    """
    if len(runs) < 2:
        raise CompareError("compare needs at least two runs: a baseline and a candidate")
    if n_resamples < 1:
        raise CompareError("the number of resamples must be >= 1")
    if seed < 0:
        raise CompareError("the seed must be >= 0")
    base_run = runs[0]
    base_out = task_outcomes(base_run.records)
    base_ref = run_ref(base_run)
    comparisons = [
        compare_outcomes(
            base_out,
            task_outcomes(run.records),
            baseline_ref=base_ref,
            candidate_ref=run_ref(run),
            primary_k=primary_k,
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
            subset=subset,
            domain=domain,
        )
        for run in runs[1:]
    ]
    simulated = any(c.simulated for c in comparisons)
    return CompareReport(
        simulated=simulated,
        simulation_note=SIMULATION_NOTE if simulated else None,
        seed=seed,
        n_resamples=n_resamples,
        confidence=confidence,
        subset=subset,
        domain=domain,
        comparisons=comparisons,
    )


def load_runs(paths: Sequence[str | Path]) -> list[Run]:
    """Load run directories; raises :class:`tauguard.store.RunLoadError` with a one-line reason."""
    from tauguard.store import RunLoadError, load_run

    runs = []
    for path in paths:
        try:
            runs.append(load_run(path))
        except OSError as exc:
            # Unreadable records file (permissions, a directory in its place ...).
            raise RunLoadError(f"cannot read run {path}: {exc.strerror or exc}") from None
    return runs
