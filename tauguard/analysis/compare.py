"""Paired comparison of runs: alignment on (domain, task_id) and per-k statistics.

The first run is the baseline; every other run (a candidate) is compared to it, on every metric
of :data:`tauguard.analysis.metrics.METRICS` marked ``compared`` (pass^k; ASR@k when trials were
attacked). For each k shared by both runs the comparison gives baseline and candidate values
over the tasks both runs can estimate at that k, the difference Δ = candidate - baseline with an
adjusted Wald CI (:func:`tauguard.analysis.stats.adjusted_mean_cis`: never zero-width, coverage checked by
``bench/bench_ci_coverage.py``), a sign-flip permutation p-value, the minimum difference the
design could detect with 80 % power, and Holm-adjusted p-values for every k but the declared
primary one, whose verdicts are exploratory. The default primary k is the largest k that every
common task supports, so it never rests on a handful of tasks. A McNemar test on the metric's
per-task event (pass^k: "all n trials passed"; ASR@k: "an attack succeeded") over the tasks with
the same n in both runs complements them. Verdicts follow each metric's direction (ASR: lower is
better). The runs' manifests are compared for what pairing needs (:mod:`tauguard.analysis.pairing`).

Per-task values and their differences are exact fractions until they enter numpy, so tiny real
differences (pass^28 of 60 trials) are never counted as ties.

Result types live in :mod:`tauguard.analysis.compare_model` and are re-exported here.
Pure library: imports neither tau2 nor litellm.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

from tauguard.runs.left_out import left_out_of
from tauguard.gc_pause import gc_paused
from tauguard.analysis.compare_model import (
    Alignment,
    Change,
    CompareError,
    CompareReport,
    Comparison,
    Conclusion,
    DomainDiscordant,
    Dropped,
    KComparison,
    McNemarSummary,
    MetricComparison,
    RunRef,
    TaskDiff,
    TaskPair,
)
from tauguard.analysis.metrics import (
    METRICS,
    MetricDef,
    MetricSpec,
    Subset,
    TaskOutcome,
    headline_metric,
    metric_def,
    run_is_simulated,
    task_sort_key,
)
from tauguard.analysis.task_table import run_task_table
from tauguard.analysis.exact import exact_pairing, flip_table
from tauguard.analysis.pairing import pairing_differences
from tauguard.analysis.stats import (
    MeanCI,
    PermutationResult,
    adjusted_mean_cis,
    holm,
    mcnemar,
    minimum_detectable_difference,
    sign_flip_tests,
)
from tauguard.analysis.task_table import TaskTable, row_groups
from tauguard.runs.records import SIMULATION_NOTE
from tauguard.runs.store import Run

__all__ = [
    "Alignment",
    "CompareError",
    "CompareReport",
    "Comparison",
    "Conclusion",
    "DomainDiscordant",
    "Dropped",
    "KComparison",
    "McNemarSummary",
    "MetricComparison",
    "RunRef",
    "TaskDiff",
    "TableAlignment",
    "TaskPair",
    "align",
    "align_tables",
    "compare_metric",
    "compare_outcomes",
    "compare_runs",
    "default_primary_k",
    "dropped_notes",
    "load_runs",
    "mcnemar_event",
    "run_notes",
    "run_ref",
    "verdict_from",
]


def run_ref(run: Run) -> RunRef:
    """A :class:`RunRef` for a loaded run."""
    from tauguard.process.score import recorded_judges

    m = run.manifest
    return RunRef(
        run_id=m.run_id,
        path=str(run.path),
        strategy=m.strategy,
        simulated=run_is_simulated(run),
        sim_feedback=m.sim_feedback,
        uptake=m.fault_profile.get("uptake") if m.sim_feedback else None,
        agent_llm=m.agent_llm,
        user_llm=m.user_llm,
        domains=list(m.domains),
        trials=m.trials,
        status=m.status,
        planned_units=m.expected_units,
        # load_run keeps one record (unit) per (domain, task, trial).
        recorded_units=len(run.records if run.units is None else run.units),
        skipped_lines=run.skipped_lines,
        process_judges=recorded_judges(m.versions, m.earlier_versions),
    )


def align(baseline: Sequence[TaskOutcome], candidate: Sequence[TaskOutcome]) -> Alignment:
    """Match task outcomes on (domain, task_id); tasks with no evaluated trial on a side are dropped."""
    base = {o.key: o for o in baseline}
    cand = {o.key: o for o in candidate}
    pairs: list[TaskPair] = []
    no_trials = 0
    for key in sorted(base.keys() & cand.keys(), key=task_sort_key):
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


def verdict_from(low: float, high: float, p: float, alpha: float, higher_is_better: bool = True) -> Conclusion:
    """ "better"/"worse" only when the CI excludes 0 and the permutation test agrees (p < alpha).

    With few discordant tasks the CI can exclude 0 while the exact sign-flip test cannot
    reject (5 improved, 0 regressed: p = 0.0625); such a result is
    reported as "no detectable difference" rather than a claim the test does not back.
    For a lower-is-better metric (ASR) a CI above 0 is "worse".
    """
    if p >= alpha:
        return "no detectable difference"
    if low > 0:
        return "better" if higher_is_better else "worse"
    if high < 0:
        return "worse" if higher_is_better else "better"
    return "no detectable difference"


# One reproducible stream for the permutation test, shared by every metric and k over the same
# tasks (common random numbers): its draws depend only on the seed and the task set, so `check`
# gates on the same p for pass^4 that `compare` prints, whichever other metrics were compared.
_PERMUTATION_STREAM = 1
# The power at which the minimum detectable difference is stated.
MDE_POWER = 0.8


@dataclass
class _Sides:
    """One metric's per-task values over aligned pairs, as arrays (baseline ``_a``, candidate ``_b``)."""

    n_a: np.ndarray
    x_a: np.ndarray
    n_b: np.ndarray
    x_b: np.ndarray
    pool_a: np.ndarray
    pool_b: np.ndarray
    event_a: np.ndarray
    event_b: np.ndarray
    excluded_a: np.ndarray
    excluded_b: np.ndarray

    def usable(self, k: int) -> np.ndarray:
        """Whether each pair has at least k trials for the metric in both runs (TaskPair.usable)."""
        return (self.n_a >= k) & (self.n_b >= k)


def _unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(rows, axis=0, return_inverse=True, return_counts=True)`` with the same result
    (rows in lexicographic order), from one 1-D sort: numpy sorts rows as structured records,
    ~10x slower on 10^5 rows of counts."""
    first, inverse, counts = row_groups(rows)
    return rows[first], inverse, counts


class _PairTable:
    """What every metric reads of each aligned pair, computed once per comparison.

    Pair ``i`` is row ``rows_a[i]`` of the baseline's table and row ``rows_b[i]`` of the
    candidate's. The metric functions of :data:`METRICS` run once per distinct task content
    (:meth:`TaskTable.contents`: tasks with the same counts share one) and side; the columns,
    the McNemar events, the primary k and the notes then read arrays. At 10^5 tasks, calling the
    functions for every task and (metric, k) was most of `compare`'s time.
    """

    def __init__(self, base: TaskTable, rows_a: np.ndarray, cand: TaskTable, rows_b: np.ndarray) -> None:
        self.base, self.cand = base, cand
        self.rows_a, self.rows_b = rows_a, rows_b
        self.size = len(rows_a)
        self.domains = [base.domains[i] for i in rows_a.tolist()]
        (first_a, code_a), (first_b, code_b) = base.contents, cand.contents
        # One TaskOutcome per distinct content of each table, from the row it first occurs in.
        self._reps: list[TaskOutcome] = [base.outcome(i) for i in first_a.tolist()]
        self._reps += [cand.outcome(i) for i in first_b.tolist()]
        self._code_a, self._code_b = code_a[rows_a], code_b[rows_b] + len(first_a)
        self._sides: dict[str, _Sides] = {}

    @classmethod
    def from_pairs(cls, pairs: Sequence[TaskPair]) -> _PairTable:
        """The table of aligned pairs given as objects."""
        rows = np.arange(len(pairs), dtype=np.int64)
        base = TaskTable.from_outcomes([p.baseline for p in pairs])
        return cls(base, rows, TaskTable.from_outcomes([p.candidate for p in pairs]), rows)

    def sides(self, mdef: MetricDef) -> _Sides:
        """The metric's arrays over the pairs."""
        got = self._sides.get(mdef.kind)
        if got is None:
            n, count, pool, event, excluded = mdef.n, mdef.count, mdef.pool, mdef.event, mdef.excluded
            ints = np.array([(n(o), count(o), excluded(o)) for o in self._reps], dtype=np.int64).reshape(-1, 3)
            flags = np.array([(bool(pool(o)), bool(event(o))) for o in self._reps], dtype=bool).reshape(-1, 2)
            a, b = self._code_a, self._code_b
            got = self._sides[mdef.kind] = _Sides(
                n_a=ints[a, 0], x_a=ints[a, 1], n_b=ints[b, 0], x_b=ints[b, 1], pool_a=flags[a, 0],
                pool_b=flags[b, 0], event_a=flags[a, 1], event_b=flags[b, 1], excluded_a=ints[a, 2],
                excluded_b=ints[b, 2],
            )
        return got

    def kinds(self) -> np.ndarray:
        """Every count any metric reads, of both runs, one row per pair: pairs with equal rows have
        equal per-task values for every metric and k, so the resampling may treat them as one group."""
        cols = []
        for m in METRICS:
            sd = self.sides(m)
            cols += [sd.n_a, sd.x_a, sd.n_b, sd.x_b]
        return np.stack(cols, axis=1) if self.size else np.zeros((0, 4 * len(METRICS)), dtype=np.int64)


@dataclass
class _Column:
    """One k-metric over the aligned pairs that can estimate it.

    A task's exact values depend only on its counts ``(n_a, x_a, n_b, x_b)`` (the metric's n and
    count in each run), and tasks share few of them: exact fractions are computed once per
    distinct counts, and sums weight them by how many tasks have them (exact, so the result is
    the plain sum's).
    """

    spec: MetricSpec
    mdef: MetricDef
    k: int
    used: np.ndarray  # indices of the usable pairs
    dropped_n_lt_k: int
    counts: np.ndarray  # per used pair: (n_a, x_a, n_b, x_b)
    _unique: tuple[list[tuple[int, ...]], np.ndarray, np.ndarray] | None = None

    def exact(self, key: tuple[int, int, int, int]) -> tuple[Fraction, Fraction, Fraction]:
        """Baseline, candidate and difference of a task with these counts."""
        n_a, x_a, n_b, x_b = key
        a = self.mdef.exact(n_a, x_a, self.k)
        b = self.mdef.exact(n_b, x_b, self.k)
        return a, b, b - a

    def _distinct(self) -> tuple[list[tuple[int, int, int, int]], np.ndarray, np.ndarray]:
        if self._unique is None:
            keys, inverse, weights = _unique_rows(self.counts)
            self._unique = ([tuple(row) for row in keys.tolist()], inverse, weights)
        return self._unique  # type: ignore[return-value]

    def means(self) -> tuple[float, float, float, Counter[int]]:
        """Mean baseline, candidate and difference, and the tasks per sign of the difference."""
        keys, _, weights = self._distinct()
        sums = [Fraction(0), Fraction(0), Fraction(0)]
        signs: Counter[int] = Counter()
        for key, weight in zip(keys, weights.tolist(), strict=True):
            values = self.exact(key)
            for i in range(3):
                sums[i] += weight * values[i]
            # Exact signs: a difference of 1e-15 between two pass^28 values is a real change.
            signs[(values[2] > 0) - (values[2] < 0)] += weight
        n = len(self.counts)
        return float(sums[0] / n), float(sums[1] / n), float(sums[2] / n), signs

    def diffs(self) -> np.ndarray:
        """Per-task differences as floats, in the order of ``used``."""
        keys, inverse, _ = self._distinct()
        floats = np.array([float(self.exact(key)[2]) for key in keys], dtype=float)
        per_task: np.ndarray = floats[inverse]
        return per_task


def _column(table: _PairTable, spec: MetricSpec) -> _Column:
    mdef = spec.definition
    if mdef is None or spec.k is None:
        kinds = ", ".join(f"{m.kind}K" for m in METRICS)
        raise CompareError(f"metric {spec.name} cannot be compared per task; use {kinds}")
    k = spec.k
    sd = table.sides(mdef)
    used = np.flatnonzero(sd.usable(k))
    if not used.size:
        raise CompareError(
            f"no common task has {k} {mdef.n_label} in both runs, so {spec.name} cannot be compared"
        )
    in_pool = int(np.count_nonzero(sd.pool_a | sd.pool_b))
    counts = np.stack([sd.n_a[used], sd.x_a[used], sd.n_b[used], sd.x_b[used]], axis=1)
    return _Column(spec=spec, mdef=mdef, k=k, used=used, dropped_n_lt_k=in_pool - len(used), counts=counts)


def _column_stats(
    table: _PairTable,
    columns: Sequence[_Column],
    *,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> list[tuple[MeanCI, PermutationResult]]:
    """Adjusted CI and permutation test of every column; columns over the same tasks share the draws."""
    kinds = table.kinds()
    by_tasks: dict[bytes, list[int]] = {}
    for j, col in enumerate(columns):
        by_tasks.setdefault(col.used.tobytes(), []).append(j)
    out: list[tuple[MeanCI, PermutationResult]] = [None] * len(columns)  # type: ignore[list-item]
    for js in by_tasks.values():
        used = columns[js[0]].used
        diffs = np.array([columns[j].diffs() for j in js], dtype=float).T
        groups = _unique_rows(kinds[used])[1]
        cis = adjusted_mean_cis(diffs, confidence=confidence)
        perms = sign_flip_tests(
            diffs, groups=groups, n_resamples=n_resamples, seed=np.random.default_rng([seed, _PERMUTATION_STREAM])
        )
        for j, ci, perm in zip(js, cis, perms, strict=True):
            out[j] = (ci, perm)
    return out


def _k_comparison(
    col: _Column,
    stats: tuple[MeanCI, PermutationResult],
    *,
    confidence: float,
    primary: bool,
) -> KComparison:
    ci, perm = stats
    mdef = col.mdef
    baseline, candidate, delta, signs = col.means()
    up, down = signs[1], signs[-1]
    better, worse = (up, down) if mdef.higher_is_better else (down, up)
    return KComparison(
        metric=col.spec.name,
        k=col.k,
        primary=primary,
        exploratory=not primary,
        higher_is_better=mdef.higher_is_better,
        tasks=len(col.used),
        dropped_n_lt_k=col.dropped_n_lt_k,
        baseline=baseline,
        candidate=candidate,
        delta=delta,
        ci_low=ci.low,
        ci_high=ci.high,
        confidence=confidence,
        se=ci.se,
        mde=minimum_detectable_difference(ci.se, confidence=confidence, power=MDE_POWER),
        p_permutation=perm.p_value,
        permutation_exact=perm.exact,
        p_holm=perm.p_value,
        improved=better,
        regressed=worse,
        unchanged=signs[0],
        verdict=verdict_from(ci.low, ci.high, perm.p_value, 1 - confidence, mdef.higher_is_better),
    )


def compare_metric(
    pairs: Sequence[TaskPair] | TableAlignment,
    spec: MetricSpec,
    *,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    primary: bool = False,
) -> KComparison:
    """Compare one k-metric (``pass^k``, ``pass@k``, ``asr@k`` ...) over aligned task pairs
    (objects, or an :func:`align_tables` alignment).

    Only pairs with at least k trials for the metric in both runs enter. Raises
    :class:`CompareError` when none does. Gives the same CI and p as :func:`compare_all_ks`
    for that metric and k (the draws depend only on the seed and the tasks).
    """
    table = pairs.pair_table() if isinstance(pairs, TableAlignment) else _PairTable.from_pairs(pairs)
    col = _column(table, spec)
    stats = _column_stats(table, [col], n_resamples=n_resamples, confidence=confidence, seed=seed)[0]
    return _k_comparison(col, stats, confidence=confidence, primary=primary)


def default_primary_k(pairs: Sequence[TaskPair], mdef: MetricDef) -> int:
    """The largest k that every task in the metric's pool on both sides supports (0: none).

    The largest k that *some* task supports can rest on a single task (a candidate whose
    trials mostly ended in infrastructure errors), so it is never the default.
    """
    return _default_primary_k(_PairTable.from_pairs(pairs), mdef)


def _default_primary_k(table: _PairTable, mdef: MetricDef) -> int:
    sd = table.sides(mdef)
    ns = np.minimum(sd.n_a, sd.n_b)[sd.pool_a & sd.pool_b]
    ns = ns[ns > 0]
    return int(ns.min()) if ns.size else 0


def mcnemar_event(pairs: Sequence[TaskPair], mdef: MetricDef, k: int) -> McNemarSummary:
    """McNemar over the pairs usable at k with the same n in both runs, on the metric's per-task event."""
    return _mcnemar_event(_PairTable.from_pairs(pairs), mdef, k)


def _mcnemar_event(table: _PairTable, mdef: MetricDef, k: int) -> McNemarSummary:
    sd = table.sides(mdef)
    usable = sd.usable(k)
    used = usable & (sd.n_a == sd.n_b)
    only_a = used & sd.event_a & ~sd.event_b
    only_b = used & sd.event_b & ~sd.event_a
    per: dict[str, list[int]] = {}  # domain -> [tasks, b, c]
    if table.size:
        names, codes = np.unique(np.array(table.domains, dtype=object), return_inverse=True)
        codes = codes.reshape(-1)
        tasks_of = np.bincount(codes[used], minlength=len(names))
        b_of = np.bincount(codes[only_a], minlength=len(names))
        c_of = np.bincount(codes[only_b], minlength=len(names))
        per = {str(d): [int(tasks_of[i]), int(b_of[i]), int(c_of[i])] for i, d in enumerate(names) if tasks_of[i]}
    b = sum(d[1] for d in per.values())
    c = sum(d[2] for d in per.values())
    res = mcnemar(b, c)
    return McNemarSummary(
        event=mdef.event_label,
        k=k,
        tasks=int(np.count_nonzero(used)),
        left_out_unequal_n=int(np.count_nonzero(usable)) - int(np.count_nonzero(used)),
        b=b,
        c=c,
        p_exact=res.p_exact,
        p_midp=res.p_midp,
        per_domain=[DomainDiscordant(domain=d, tasks=per[d][0], b=per[d][1], c=per[d][2]) for d in sorted(per)],
    )


def mcnemar_all_passed(pairs: Sequence[TaskPair], k: int) -> McNemarSummary:
    """McNemar on "every evaluated trial passed" (pass^k's event) over the pairs usable at k."""
    return mcnemar_event(pairs, metric_def("pass^"), k)


def compare_all_ks(
    pairs: Sequence[TaskPair],
    mdef: MetricDef,
    *,
    primary_k: int,
    k_max: int,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> MetricComparison:
    """One metric at k = 1..k_max: the primary k unadjusted, the others Holm-adjusted and exploratory."""
    return _compare_metrics(
        _PairTable.from_pairs(pairs), [(mdef, primary_k, k_max)], n_resamples=n_resamples, confidence=confidence, seed=seed
    )[0]


def _compare_metrics(
    table: _PairTable,
    plans: Sequence[tuple[MetricDef, int, int]],
    *,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> list[MetricComparison]:
    # Every (metric, k) column first, then their statistics in one pass, so columns over the
    # same tasks share one set of draws.
    columns = [[_column(table, MetricSpec(kind=mdef.kind, k=k)) for k in range(1, k_max + 1)] for mdef, _, k_max in plans]
    flat = [c for cols in columns for c in cols]
    stats = iter(_column_stats(table, flat, n_resamples=n_resamples, confidence=confidence, seed=seed))
    comparisons = []
    for (mdef, primary_k, k_max), cols in zip(plans, columns, strict=True):
        results = [_k_comparison(c, next(stats), confidence=confidence, primary=c.k == primary_k) for c in cols]
        secondary = [r for r in results if not r.primary]
        for r, p in zip(secondary, holm([r.p_permutation for r in secondary]), strict=True):
            r.p_holm = p
            r.verdict = verdict_from(r.ci_low, r.ci_high, p, 1 - r.confidence, mdef.higher_is_better)
        comparisons.append(
            MetricComparison(
                metric=mdef.kind,
                higher_is_better=mdef.higher_is_better,
                ks=list(range(1, k_max + 1)),
                primary_k=primary_k,
                results=results,
                mcnemar=_mcnemar_event(table, mdef, primary_k),
                note=mdef.note,
            )
        )
    return comparisons


def _diff_values(mdef: MetricDef, counts: tuple[int, int, int, int], k: int) -> dict[str, object]:
    n_a, x_a, n_b, x_b = counts
    if n_a < k or n_b < k:
        return {"baseline": None, "candidate": None, "delta": None, "change": None}
    exact_a, exact_b = mdef.exact(n_a, x_a, k), mdef.exact(n_b, x_b, k)
    diff = exact_b - exact_a
    good = diff if mdef.higher_is_better else -diff
    change: Change = "improved" if good > 0 else "regressed" if good < 0 else "unchanged"
    return {"baseline": float(exact_a), "candidate": float(exact_b), "delta": float(diff), "change": change}


def _task_diffs(table: _PairTable, mdef: MetricDef, k: int) -> list[TaskDiff]:
    # Values depend only on the tasks' counts, which few distinct tasks share: computed once each.
    memo: dict[tuple[int, int, int, int], dict[str, object]] = {}
    diffs = []
    sd = table.sides(mdef)
    base, cand = table.base, table.cand
    trials_a, successes_a = base.column("trials")[table.rows_a].tolist(), base.column("successes")[table.rows_a].tolist()
    trials_b, successes_b = cand.column("trials")[table.rows_b].tolist(), cand.column("successes")[table.rows_b].tolist()
    counts = zip(sd.n_a.tolist(), sd.x_a.tolist(), sd.n_b.tolist(), sd.x_b.tolist())
    for i, (row, key) in enumerate(zip(table.rows_a.tolist(), counts)):
        values = memo.get(key)
        if values is None:
            values = memo[key] = _diff_values(mdef, key, k)
        diffs.append(
            TaskDiff(
                domain=base.domains[row],
                task_id=base.task_ids[row],
                policy_violation_task=bool(base.policy[row]),
                baseline_trials=trials_a[i],
                baseline_successes=successes_a[i],
                candidate_trials=trials_b[i],
                candidate_successes=successes_b[i],
                k=k,
                **values,  # type: ignore[arg-type]
            )
        )
    return diffs


def _slice_label(subset: Subset, domain: str | None) -> str:
    parts = [] if subset == "all" else [f"{subset} tasks"]
    if domain:
        parts.append(f"domain {domain}")
    return f" ({', '.join(parts)})" if parts else ""


def run_notes(*refs: RunRef, incomplete: bool = True) -> list[str]:
    """Warnings about runs that had unparsable record lines or (``incomplete``) are incomplete."""
    notes = []
    for ref in refs:
        if incomplete and not ref.complete:
            notes.append(f"run {ref.run_id} is incomplete: {ref.completeness()}")
        if ref.skipped_lines:
            notes.append(f"run {ref.run_id}: {ref.skipped_lines} unparsable record line(s) skipped")
        if ref.sim_feedback == "oracle":
            notes.append(f"run {ref.run_id}: the sim agent reacted to guards from the gold plan (--sim-feedback oracle): an UPPER BOUND on guard gains")
    # react has no guard: how a sim agent would react to one does not matter there.
    modes = {(r.sim_feedback, r.uptake) for r in refs if r.sim_feedback and r.strategy != "react"}
    if len(modes) > 1:
        shown = ", ".join(f"{r.run_id}: {r.sim_feedback} uptake {r.uptake}" for r in refs if r.sim_feedback and r.strategy != "react")
        notes.append(f"the runs' sim agents react to guards differently ({shown}): a difference is not the guard's alone")
    return notes


def dropped_notes(d: Dropped) -> list[str]:
    """Why tasks of either run were left out of the alignment, in words."""
    notes = []
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
    return notes


def _metric_notes(
    mc: MetricComparison, table: _PairTable, headline: bool, default_primary: bool
) -> list[str]:
    mdef = metric_def(mc.metric)
    notes = []
    sd = table.sides(mdef)
    ex_a, ex_b = int(sd.excluded_a.sum()), int(sd.excluded_b.sum())
    if ex_a or ex_b:
        notes.append(f"{mdef.kind}k: {ex_a} (baseline) and {ex_b} (candidate) {mdef.excluded_label} excluded")
    for r in mc.results:
        if r.dropped_n_lt_k:
            where = f"k={r.k}" if headline else r.metric
            notes.append(
                f"{where}: {r.dropped_n_lt_k} task(s) have fewer than {r.k} {mdef.n_label} in a run: excluded"
            )
    primary = next(r for r in mc.results if r.primary)
    if default_primary and mc.primary_k < mc.ks[-1]:
        above = f"{mdef.kind}{mc.primary_k + 1}"
        if mc.ks[-1] > mc.primary_k + 1:
            above += f"..{mdef.kind}{mc.ks[-1]}"
        notes.append(
            f"primary {primary.metric}: the largest k every one of the {primary.tasks} task(s) supports; "
            f"{above} rest(s) on fewer tasks (exploratory)"
        )
    if mc.mcnemar.left_out_unequal_n:
        notes.append(
            f"McNemar on '{mc.mcnemar.event}': {mc.mcnemar.left_out_unequal_n} task(s) with a different n in "
            "the two runs left out"
        )
    return notes


@dataclass
class TableAlignment:
    """Tasks of two task tables matched on (domain, task_id) (:func:`align`'s rule), as row indices."""

    base: TaskTable
    cand: TaskTable
    rows_a: np.ndarray
    rows_b: np.ndarray
    dropped: Dropped
    common_ks: np.ndarray  # per pair: the smaller of its two numbers of evaluated trials
    _table: _PairTable | None = None

    @property
    def size(self) -> int:
        """The number of aligned pairs."""
        return len(self.rows_a)

    @property
    def full_common_k(self) -> int:
        """Largest k at which every aligned task has k evaluated trials in both runs (0: no pair)."""
        return int(self.common_ks.min()) if self.size else 0

    def pair_table(self) -> _PairTable:
        """The pairs' metric inputs (computed once)."""
        if self._table is None:
            self._table = _PairTable(self.base, self.rows_a, self.cand, self.rows_b)
        return self._table

    def max_n(self, mdef: MetricDef) -> int:
        """The largest k at which some pair has k trials for the metric in both runs (0: none)."""
        if not self.size:
            return 0
        sd = self.pair_table().sides(mdef)
        return int(np.minimum(sd.n_a, sd.n_b).max())


def align_tables(base: TaskTable, cand: TaskTable) -> TableAlignment:
    """:func:`align` on tables: pairs in task order, tasks with no evaluated trial on a side dropped."""
    base_rows, cand_rows = base.row_of, cand.row_of
    common = [key for key in cand_rows if key in base_rows]
    if not cand.in_key_order:
        common.sort(key=task_sort_key)
    rows_a = np.array([base_rows[key] for key in common], dtype=np.int64)
    rows_b = np.array([cand_rows[key] for key in common], dtype=np.int64)
    ks = np.minimum(base.column("trials")[rows_a], cand.column("trials")[rows_b])
    evaluated = ks > 0
    return TableAlignment(
        base=base,
        cand=cand,
        rows_a=rows_a[evaluated],
        rows_b=rows_b[evaluated],
        dropped=Dropped(
            only_in_baseline=len(base_rows) - len(common),
            only_in_candidate=len(cand_rows) - len(common),
            no_evaluated_trials=len(common) - int(np.count_nonzero(evaluated)),
        ),
        common_ks=ks[evaluated],
    )


def compare_outcomes(
    baseline: Sequence[TaskOutcome] | TaskTable,
    candidate: Sequence[TaskOutcome] | TaskTable,
    *,
    baseline_ref: RunRef,
    candidate_ref: RunRef,
    primary_k: int | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    subset: Subset = "all",
    domain: str | None = None,
    task_diffs: bool = True,
) -> Comparison:
    """Compare a candidate's task outcomes to the baseline's on every compared metric and k.

    Either side may be a list of task outcomes or a :class:`~tauguard.analysis.task_table.TaskTable`.
    ``primary_k`` applies to the headline metric (pass^k); its default, like every other
    metric's, is the largest k that every common task supports. ``task_diffs=False`` leaves
    :attr:`Comparison.tasks` empty (10^5 objects at scale that only ``--tasks`` shows). Raises
    :class:`CompareError` when the runs share no task, no k, or ``primary_k`` is not shared.
    """
    with gc_paused():  # 10^5 tasks at scale: arrays, task diffs (tauguard.gc_pause)
        base = baseline if isinstance(baseline, TaskTable) else TaskTable.from_outcomes(baseline)
        cand = candidate if isinstance(candidate, TaskTable) else TaskTable.from_outcomes(candidate)
        return _compare_outcomes(
            base.select(subset, domain), cand.select(subset, domain), baseline_ref=baseline_ref,
            candidate_ref=candidate_ref, primary_k=primary_k, n_resamples=n_resamples, confidence=confidence,
            seed=seed, subset=subset, domain=domain, task_diffs=task_diffs,
        )


def _compare_outcomes(
    base: TaskTable,
    cand: TaskTable,
    *,
    baseline_ref: RunRef,
    candidate_ref: RunRef,
    primary_k: int | None,
    n_resamples: int,
    confidence: float,
    seed: int,
    subset: Subset,
    domain: str | None,
    task_diffs: bool,
) -> Comparison:
    alignment = align_tables(base, cand)
    names = f"{baseline_ref.run_id} and {candidate_ref.run_id}"
    where = _slice_label(subset, domain)
    if not alignment.size and alignment.dropped.no_evaluated_trials == 0:
        raise CompareError(f"runs {names} have no task in common{where}")
    k_max = int(alignment.common_ks.max()) if alignment.common_ks.size else 0
    if k_max == 0:
        raise CompareError(f"runs {names} share no k{where}: no common task has an evaluated trial in both runs")
    default_primary = primary_k is None
    if primary_k is None:
        primary_k = alignment.full_common_k
    elif not 1 <= primary_k <= k_max:
        raise CompareError(f"primary k {primary_k} is not available: runs {names} share k = 1..{k_max}{where}")

    headline_def = headline_metric()
    plans = [(headline_def, primary_k, k_max)]
    # Per other metric, in METRICS order: its plan's index, or why it is not compared.
    other_entries: list[int | str] = []
    table = alignment.pair_table()
    for mdef in (m for m in METRICS if m.compared and m is not headline_def):
        sd = table.sides(mdef)
        in_pool = sd.pool_a | sd.pool_b
        if not in_pool.any():
            continue
        m_max = int(np.minimum(sd.n_a, sd.n_b)[in_pool].max())
        if m_max == 0:
            other_entries.append(f"{mdef.kind}k not compared: no common task has {mdef.n_label} in both runs")
            continue
        other_entries.append(len(plans))
        plans.append((mdef, _default_primary_k(table, mdef), m_max))
    # All metrics in one pass: columns over the same tasks share their resampling draws.
    compared = _compare_metrics(table, plans, n_resamples=n_resamples, confidence=confidence, seed=seed)
    headline = compared[0]
    d = alignment.dropped
    notes = run_notes(baseline_ref, candidate_ref) + dropped_notes(d)
    notes += _metric_notes(headline, table, True, default_primary)
    others: list[MetricComparison] = []
    for entry in other_entries:
        if isinstance(entry, str):
            notes.append(entry)
            continue
        others.append(compared[entry])
        notes += _metric_notes(compared[entry], table, False, True)

    return Comparison(
        baseline=baseline_ref,
        candidate=candidate_ref,
        simulated=baseline_ref.simulated or candidate_ref.simulated,
        subset=subset,
        domain=domain,
        domains=sorted(set(table.domains)),
        common_tasks=table.size,
        dropped=d,
        notes=notes,
        metric=headline_def.kind,
        higher_is_better=headline_def.higher_is_better,
        ks=headline.ks,
        primary_k=primary_k,
        results=headline.results,
        mcnemar=headline.mcnemar,
        other_metrics=others,
        tasks=_task_diffs(table, headline_def, primary_k) if task_diffs else [],
    )


def compare_runs(
    runs: Sequence[Run],
    *,
    primary_k: int | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    subset: Subset = "all",
    domain: str | None = None,
    task_diffs: bool = True,
) -> CompareReport:
    """Compare every run after the first to the first (the baseline).

    ``task_diffs=False`` leaves each comparison's per-task rows out (:func:`compare_outcomes`).
    Raises :class:`CompareError` (one-line message) when a pair of runs cannot be compared.
    """
    if len(runs) < 2:
        raise CompareError("compare needs at least two runs: a baseline and a candidate")
    if n_resamples < 1:
        raise CompareError("the number of resamples must be >= 1")
    if seed < 0:
        raise CompareError("the seed must be >= 0")
    base_run = runs[0]
    base_out = run_task_table(base_run)
    base_ref = run_ref(base_run)
    comparisons = []
    for run in runs[1:]:
        comp = compare_outcomes(
            base_out,
            run_task_table(run),
            baseline_ref=base_ref,
            candidate_ref=run_ref(run),
            primary_k=primary_k,
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
            subset=subset,
            domain=domain,
            task_diffs=task_diffs,
        )
        comp.pairing = pairing_differences(base_run.manifest, run.manifest)
        exact, comp.exact_reason = exact_pairing(base_run, run, base_ref, comp.candidate)
        if exact:
            comp.flips = flip_table(base_run, run, subset=subset, domain=domain)
        comparisons.append(comp)
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
        left_out={r.manifest.run_id: lo for r in runs if (lo := left_out_of(r.manifest)) is not None},
    )


def load_runs(paths: Sequence[str | Path], conversations: bool = True, records: bool = True) -> list[Run]:
    """Load run directories; raises :class:`tauguard.runs.store.RunLoadError` with a one-line reason.

    ``conversations=False`` skips the records' conversations, ``records=False`` reads only the
    units' outcomes, from the outcome index when it is fresh (see :func:`tauguard.runs.store.load_run`).
    """
    from tauguard.runs.store import RunLoadError, load_run

    runs = []
    for path in paths:
        try:
            runs.append(load_run(path, conversations=conversations, records=records))
        except OSError as exc:
            # Unreadable records file (permissions, a directory in its place ...).
            raise RunLoadError(f"cannot read run {path}: {exc.strerror or exc}") from None
    return runs
