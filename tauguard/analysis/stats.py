"""Paired statistics for comparing two runs task by task.

- :func:`adjusted_mean_ci` / :func:`adjusted_mean_cis`: the CI of a mean paired difference that
  `compare` and `check` decide on: Bonett & Price's adjusted Wald interval for paired
  proportions (2012), generalised to per-task differences in [-1, 1]. Two pseudo-tasks with
  differences +1 and -1 are added, so the interval never collapses to a point when every observed
  difference is 0 (the percentile bootstrap then gives [0, 0]); its coverage is checked by
  ``bench/bench_ci_coverage.py`` (docs/compare_and_check.md).
- :func:`minimum_detectable_difference`: the |Δ| a design detects with a given power.
- :func:`paired_bootstrap_ci` / :func:`bootstrap_mean_ci`: percentile CI of the mean per-task
  difference, resampling tasks with replacement (the same tasks for both runs, hence on the
  differences), optionally stratified so each stratum (domain) keeps its size. Vectorised: no
  Python loop per resample; :func:`bootstrap_mean_cis` bootstraps several columns (metrics,
  ks) over the same tasks with the same draws. :func:`merge_small_strata` merges strata too small to stratify on.
- :func:`sign_flip_test` / :func:`sign_flip_tests`: two-sided sign-flip permutation test of the mean difference, exact
  (all sign patterns) when the number of non-zero differences is small, Monte Carlo otherwise.
- :func:`mcnemar`: exact McNemar test (two-sided binomial on the discordant pairs) and mid-p.
- :func:`holm`: Holm step-down adjusted p-values.
- :func:`min_tasks_to_reject`: the fewest tasks with which the exact sign-flip test can reject.

Ties are decided exactly or relative to the data's own scale, never by an absolute epsilon:
per-task differences of pass^k at large k are real and can be far below 1e-12.

Only numpy is imported: scipy takes 0.2 s (scipy.special) to over a second (scipy.stats) to
import, which would dominate `tauguard compare`'s wall time; McNemar's binomial tail is summed
exactly in integers instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike
from pydantic import BaseModel

# Bound on the number of float elements materialised at once (about 32 MB of float64).
_CHUNK_ELEMENTS = 4_000_000
# Sign-flip enumeration is exact up to this many non-zero differences (2**16 patterns, ~30 ms);
# beyond, 10,000 Monte Carlo patterns are both faster and accurate to about 0.005 at p = 0.05.
EXACT_MAX_NONZERO = 16


class BootstrapCI(BaseModel):
    """A percentile bootstrap confidence interval of a mean difference."""

    estimate: float
    low: float
    high: float
    confidence: float
    n_resamples: int
    stratified: bool
    seed: int | None  # None when the caller passed a generator or a seed sequence


def _as_rng(seed: int | Sequence[int] | np.random.Generator | None) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def _row_groups(values: np.ndarray, groups: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The rows of the item groups of ``values`` (n, M) and how many items each group holds.

    ``groups`` labels the items; items with one label must have identical rows. Without labels
    the groups are the distinct rows.
    """
    if groups is None:
        unique, counts = np.unique(values, axis=0, return_counts=True)
        return unique, counts
    _, first, inverse, counts = np.unique(groups, return_index=True, return_inverse=True, return_counts=True)
    rows = values[first]
    if not np.array_equal(rows[inverse.reshape(-1)], values):
        raise ValueError("items with the same group label must have identical values")
    return rows, counts


def bootstrap_mean_distributions(
    values: ArrayLike,
    *,
    strata: ArrayLike | None = None,
    groups: ArrayLike | None = None,
    n_resamples: int = 10_000,
    seed: int | Sequence[int] | np.random.Generator | None = 0,
) -> np.ndarray:
    """Bootstrap distributions, shape ``(n_resamples, M)``, of the column means of ``values`` (n, M).

    Every column is resampled with the same draws (common random numbers): resample r picks the
    same tasks for every column, so the CIs of several metrics or ks over one task set are
    consistent with each other. The draws depend only on the seed, the strata and ``groups``:
    with the same ``groups`` labels, a column gets the same distribution alone as among others.
    Each resample draws, within every stratum, as many items as the stratum holds, with
    replacement; the statistic is the mean over all items, so strata keep their weight.

    The draws are made on the distinct rows, not on the items: the resample's sum only depends
    on how many times each distinct row was drawn, and for a stratum of ``n_s`` items of which
    ``n_u`` carry row ``u`` these counts are Multinomial(n_s, n_u / n_s). That is the same
    distribution as drawing ``n_s`` item indices, at a cost that grows with the number of distinct
    rows (a few dozen for pass^k of 4 trials) instead of with the number of items. ``groups``
    (one label per item; items with one label must have identical rows) fixes the grouping;
    without it the groups are the distinct rows of ``values``.
    """
    v = np.asarray(values, dtype=float)
    if v.ndim == 1:
        v = v[:, None]
    if v.ndim != 2 or v.shape[0] == 0:
        raise ValueError("values must be a non-empty 1-d or 2-d array (items x columns)")
    if n_resamples < 1:
        raise ValueError("n_resamples must be >= 1")
    rng = _as_rng(seed)
    labels = None if groups is None else np.asarray(groups)
    if strata is None:
        parts = [(v, labels)]
    else:
        lab = np.asarray(strata)
        parts = [(v[lab == s], None if labels is None else labels[lab == s]) for s in np.unique(lab)]
    totals = np.zeros((n_resamples, v.shape[1]))
    for g, g_labels in parts:
        rows, counts = _row_groups(g, g_labels)
        # Chunk the resamples so that strata with many distinct rows never allocate
        # resamples x rows at once; the loop runs over chunks (usually one), never single resamples.
        per_chunk = max(1, _CHUNK_ELEMENTS // rows.shape[0])
        for start in range(0, n_resamples, per_chunk):
            stop = min(n_resamples, start + per_chunk)
            drawn = rng.multinomial(g.shape[0], counts / g.shape[0], size=stop - start).astype(float)
            # Column by column: a matrix product over several columns may round differently
            # from one over a single column, and a column's CI must not depend on its neighbours.
            for j in range(v.shape[1]):
                totals[start:stop, j] += drawn @ rows[:, j]
    means: np.ndarray = totals / v.shape[0]
    return means


def bootstrap_mean_distribution(
    diffs: ArrayLike,
    *,
    strata: ArrayLike | None = None,
    n_resamples: int = 10_000,
    seed: int | Sequence[int] | np.random.Generator | None = 0,
) -> np.ndarray:
    """Bootstrap distribution (length ``n_resamples``) of the mean of ``diffs`` (see :func:`bootstrap_mean_distributions`)."""
    d = np.asarray(diffs, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise ValueError("diffs must be a non-empty 1-d array")
    return bootstrap_mean_distributions(d, strata=strata, n_resamples=n_resamples, seed=seed)[:, 0]


def paired_bootstrap_ci(
    baseline: ArrayLike,
    candidate: ArrayLike,
    *,
    strata: ArrayLike | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int | Sequence[int] | np.random.Generator | None = 0,
) -> BootstrapCI:
    """Percentile CI of mean(candidate - baseline) by a paired (optionally stratified) bootstrap.

    ``baseline[i]`` and ``candidate[i]`` are the same task in both runs; resampling picks task
    indices once for both, which for the mean is the same as resampling the differences.
    """
    a = np.asarray(baseline, dtype=float)
    b = np.asarray(candidate, dtype=float)
    if a.shape != b.shape:
        raise ValueError("baseline and candidate must have the same length (aligned tasks)")
    return bootstrap_mean_ci(b - a, strata=strata, n_resamples=n_resamples, confidence=confidence, seed=seed)


def bootstrap_mean_ci(
    diffs: ArrayLike,
    *,
    strata: ArrayLike | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int | Sequence[int] | np.random.Generator | None = 0,
) -> BootstrapCI:
    """Percentile CI of the mean of per-task differences (computed by the caller, e.g. exactly)."""
    d = np.asarray(diffs, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise ValueError("diffs must be a non-empty 1-d array")
    return bootstrap_mean_cis(d, strata=strata, n_resamples=n_resamples, confidence=confidence, seed=seed)[0]


def bootstrap_mean_cis(
    diffs: ArrayLike,
    *,
    strata: ArrayLike | None = None,
    groups: ArrayLike | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int | Sequence[int] | np.random.Generator | None = 0,
) -> list[BootstrapCI]:
    """Percentile CIs of the column means of ``diffs`` (tasks x columns), one per column.

    All columns share the bootstrap draws (:func:`bootstrap_mean_distributions`, which also
    explains ``groups``).
    """
    d = np.asarray(diffs, dtype=float)
    if d.ndim == 1:
        d = d[:, None]
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    dist = bootstrap_mean_distributions(d, strata=strata, groups=groups, n_resamples=n_resamples, seed=seed)
    alpha = 1 - confidence
    lows, highs = np.quantile(dist, [alpha / 2, 1 - alpha / 2], axis=0)
    stratified = strata is not None and np.unique(np.asarray(strata)).size > 1
    return [
        BootstrapCI(
            estimate=float(np.ascontiguousarray(d[:, j]).mean()),
            low=float(lows[j]),
            high=float(highs[j]),
            confidence=confidence,
            n_resamples=n_resamples,
            stratified=stratified,
            seed=seed if isinstance(seed, int) else None,
        )
        for j in range(d.shape[1])
    ]


class MeanCI(BaseModel):
    """An adjusted Wald CI of a mean paired difference (see :func:`adjusted_mean_ci`)."""

    estimate: float  # the plain mean difference
    low: float
    high: float
    se: float  # the adjusted standard error the interval is built on
    confidence: float
    tasks: int


def _z(confidence: float) -> float:
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def adjusted_mean_cis(diffs: ArrayLike, *, confidence: float = 0.95) -> list[MeanCI]:
    """Adjusted Wald CIs of the column means of ``diffs`` (tasks x columns, values in [-1, 1]).

    Bonett & Price (2012, "Adjusted Wald confidence interval for a difference of binomial
    proportions based on paired data") add one pseudo-pair to each discordant cell. For
    per-task differences ``d_i`` in [-1, 1] that is two pseudo-tasks with ``d = +1`` and
    ``d = -1``: with ``m`` tasks, centre ``c = sum(d) / (m + 2)``, variance
    ``v = (sum(d**2) + 2) / (m + 2) - c**2``, interval ``c ± z sqrt(v / (m + 2))`` clipped to
    [-1, 1]. For 0/1 outcomes (pass^k at k = n) it is exactly their interval. Unlike the
    percentile bootstrap it never has zero width: six tasks that all tie give [-0.35, +0.35],
    not [0, 0], so a gate cannot pass on evidence that could not have shown a loss.
    """
    d = np.asarray(diffs, dtype=float)
    if d.ndim == 1:
        d = d[:, None]
    if d.ndim != 2 or d.shape[0] == 0:
        raise ValueError("diffs must be a non-empty 1-d or 2-d array (tasks x columns)")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    if np.any(np.abs(d) > 1 + 1e-12):
        raise ValueError("per-task differences must lie in [-1, 1]")
    m = d.shape[0]
    # Column by column, contiguous: a column's interval must not depend on its neighbours' rounding.
    cols = [np.ascontiguousarray(d[:, j]) for j in range(d.shape[1])]
    sums = np.array([float(c.sum()) for c in cols])
    sums_sq = np.array([float(np.square(c).sum()) for c in cols])
    low, high, se = adjusted_bounds(sums, sums_sq, m, confidence=confidence)
    return [
        MeanCI(
            estimate=float(cols[j].mean()),
            low=float(low[j]),
            high=float(high[j]),
            se=float(se[j]),
            confidence=confidence,
            tasks=m,
        )
        for j in range(d.shape[1])
    ]


def adjusted_bounds(
    sums: ArrayLike, sums_sq: ArrayLike, tasks: int, *, confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The adjusted Wald bounds (low, high) and standard error from the sums of per-task
    differences and of their squares over ``tasks`` tasks, element-wise.

    The one formula behind :func:`adjusted_mean_cis` and the simulations of
    :mod:`tauguard.analysis.power` (many simulated datasets at once), so that the planner decides
    exactly as `compare` and `check` do.
    """
    s = np.asarray(sums, dtype=float)
    s2 = np.asarray(sums_sq, dtype=float)
    centre = s / (tasks + 2)
    var = np.maximum(0.0, (s2 + 2) / (tasks + 2) - centre**2)
    se = np.sqrt(var / (tasks + 2))
    z = _z(confidence)
    return np.maximum(-1.0, centre - z * se), np.minimum(1.0, centre + z * se), se


def adjusted_rate_ci(values: ArrayLike, *, confidence: float = 0.95) -> MeanCI:
    """The same adjusted interval for the mean of per-task values in [0, 1] (one run's pass^k over tasks).

    The values are mapped to [-1, 1] (``2x - 1``), given :func:`adjusted_mean_cis`'s two
    pseudo-tasks (there: one task at 0 and one at 1) and mapped back, so `show`, the report's bands
    and `compare`'s Δ intervals are one method. It never has zero width: six tasks that all pass
    give [0.646, 1.000], not the percentile bootstrap's [1.000, 1.000].
    """
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise ValueError("values must be a non-empty 1-d array")
    if np.any(x < -1e-12) or np.any(x > 1 + 1e-12):
        raise ValueError("per-task values must lie in [0, 1]")
    ci = adjusted_mean_cis(2 * x - 1, confidence=confidence)[0]
    return MeanCI(
        estimate=float(x.mean()), low=(ci.low + 1) / 2, high=(ci.high + 1) / 2, se=ci.se / 2,
        confidence=confidence, tasks=ci.tasks,
    )


def adjusted_mean_ci(diffs: ArrayLike, *, confidence: float = 0.95) -> MeanCI:
    """The adjusted Wald CI of the mean of per-task differences (see :func:`adjusted_mean_cis`)."""
    d = np.asarray(diffs, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise ValueError("diffs must be a non-empty 1-d array")
    return adjusted_mean_cis(d, confidence=confidence)[0]


def minimum_detectable_difference(se: float, *, confidence: float = 0.95, power: float = 0.8) -> float:
    """The smallest |Δ| a two-sided test at 1 - ``confidence`` detects with ``power``: (z_{1-α/2} + z_power)·se.

    The normal approximation behind every sample-size formula; ``se`` is the standard error of
    the mean difference (:attr:`MeanCI.se`). `tauguard power` estimates it by simulation instead.
    """
    if not 0 < power < 1:
        raise ValueError("power must be in (0, 1)")
    return (_z(confidence) + NormalDist().inv_cdf(power)) * se


_MERGED = "\x00merged"  # label of the stratum small strata are merged into (no real domain)


def merge_small_strata(labels: ArrayLike, min_size: int = 2) -> tuple[np.ndarray | None, list[str]]:
    """Strata fit to stratify a bootstrap on, and the labels that were too small.

    A stratum of one task has a bootstrap variance of 0, so stratifying on it claims certainty
    about that stratum (three domains of one task each give a CI of one point). Strata with
    fewer than ``min_size`` items are merged into one stratum; if that merged stratum is itself
    too small, it joins the smallest remaining stratum. Returns ``(None, small)`` when fewer
    than two strata are left: the bootstrap is then unstratified.
    """
    lab = np.asarray(labels).astype(str)
    values, counts = np.unique(lab, return_counts=True)
    small = [str(v) for v, c in zip(values, counts, strict=True) if c < min_size]
    merged = lab.copy()
    if small:
        mask = np.isin(lab, small)
        big = sorted((int(c), str(v)) for v, c in zip(values, counts, strict=True) if c >= min_size)
        merged = merged.astype(object)
        if mask.sum() >= min_size or not big:
            merged[mask] = _MERGED
        else:
            merged[mask] = big[0][1]
    if np.unique(merged.astype(str)).size < 2:
        return None, small
    return merged.astype(str), small


def min_tasks_to_reject(alpha: float) -> int:
    """The fewest tasks with which the two-sided exact sign-flip test can reach p < alpha.

    With m non-zero differences its smallest p is 2 / 2**m, so fewer tasks can never show a
    difference, whatever the data: 6 at alpha = 0.05, 8 at 0.01.
    """
    if not 0 < alpha < 1:
        raise ValueError("alpha must be in (0, 1)")
    m = 1
    while 2.0 / 2**m >= alpha:
        m += 1
    return m


class PermutationResult(BaseModel):
    """A two-sided sign-flip permutation test of the mean difference."""

    statistic: float  # observed mean difference
    p_value: float
    exact: bool  # every sign pattern enumerated
    n_resamples: int  # patterns evaluated (2**m when exact)


def _exact_sign_flip(d: np.ndarray) -> PermutationResult:
    # Every sign pattern of the non-zero differences (zeros do not change under a flip).
    observed = float(d.sum())
    nz = np.abs(d[d != 0])
    m = nz.size
    if m == 0:
        return PermutationResult(statistic=0.0, p_value=1.0, exact=True, n_resamples=1)
    threshold = abs(observed) - 1e-9 * float(nz.sum())
    total = 1 << m
    hits = 0
    per_chunk = max(1, _CHUNK_ELEMENTS // m)
    bits = np.arange(m, dtype=np.int64)
    for start in range(0, total, per_chunk):
        codes = np.arange(start, min(total, start + per_chunk), dtype=np.int64)
        signs = 1.0 - 2.0 * ((codes[:, None] >> bits) & 1)
        hits += int(np.count_nonzero(np.abs(signs @ nz) >= threshold))
    return PermutationResult(statistic=observed / d.size, p_value=hits / total, exact=True, n_resamples=total)


def sign_flip_test(
    diffs: ArrayLike,
    *,
    n_resamples: int = 10_000,
    seed: int | Sequence[int] | np.random.Generator | None = 0,
    exact_max_nonzero: int = EXACT_MAX_NONZERO,
) -> PermutationResult:
    """Two-sided sign-flip permutation p-value for H0: per-task differences symmetric about 0.

    Under H0 each difference is as likely to carry either sign, so the null distribution of the
    sum is that of ±|d_i|. Zero differences do not change under a flip and are left out of the
    enumeration, which is exact when at most ``exact_max_nonzero`` differences are non-zero.
    Otherwise ``n_resamples`` random patterns give p = (hits + 1) / (n_resamples + 1), which
    never reports p = 0. A null sum counts as extreme when ``|sum| >= |observed|`` up to 1e-9 of
    the data's scale (the sum of |d_i|), so float rounding cannot turn a tie into a miss and
    differences of any magnitude (1e-15 at pass^28 of 60 trials) are tested like any other.
    """
    d = np.asarray(diffs, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise ValueError("diffs must be a non-empty 1-d array")
    return sign_flip_tests(d, n_resamples=n_resamples, seed=seed, exact_max_nonzero=exact_max_nonzero)[0]


def sign_flip_tests(
    diffs: ArrayLike,
    *,
    groups: ArrayLike | None = None,
    n_resamples: int = 10_000,
    seed: int | Sequence[int] | np.random.Generator | None = 0,
    exact_max_nonzero: int = EXACT_MAX_NONZERO,
) -> list[PermutationResult]:
    """:func:`sign_flip_test` of every column of ``diffs`` (tasks x columns).

    Columns tested by Monte Carlo share the random sign patterns (common random numbers). The
    patterns are drawn on groups of tasks with identical rows: for a group of ``n_u`` tasks the
    number of them flipped to + is Binomial(n_u, 1/2), the same distribution as flipping each
    task's sign, at a cost that grows with the number of groups rather than tasks. ``groups``
    fixes the grouping as in :func:`bootstrap_mean_distributions` (the draws then depend only on
    the seed and the groups, so a column gets the same p alone as among others); without it the
    groups are the distinct rows.
    """
    d = np.asarray(diffs, dtype=float)
    if d.ndim == 1:
        d = d[:, None]
    if d.ndim != 2 or d.shape[0] == 0:
        raise ValueError("diffs must be a non-empty 1-d or 2-d array (tasks x columns)")
    results: list[PermutationResult | None] = [None] * d.shape[1]
    monte_carlo = []
    for j in range(d.shape[1]):
        if np.count_nonzero(d[:, j]) <= exact_max_nonzero:
            results[j] = _exact_sign_flip(np.ascontiguousarray(d[:, j]))
        else:
            monte_carlo.append(j)
    if monte_carlo:
        rng = _as_rng(seed)
        rows, counts = _row_groups(d, None if groups is None else np.asarray(groups))
        cols = [np.ascontiguousarray(d[:, j]) for j in monte_carlo]  # each summed as a 1-d array
        threshold = [abs(float(c.sum())) - 1e-9 * float(np.abs(c).sum()) for c in cols]
        hits = np.zeros(len(monte_carlo), dtype=np.int64)
        per_chunk = max(1, _CHUNK_ELEMENTS // rows.shape[0])
        for start in range(0, n_resamples, per_chunk):
            n_rows = min(n_resamples, start + per_chunk) - start
            signed = (2 * rng.binomial(counts, 0.5, size=(n_rows, counts.size)) - counts).astype(float)
            for i, j in enumerate(monte_carlo):  # column by column, as in the bootstrap
                hits[i] += np.count_nonzero(np.abs(signed @ rows[:, j]) >= threshold[i])
        for j, h in zip(monte_carlo, hits, strict=True):
            results[j] = PermutationResult(
                statistic=float(np.ascontiguousarray(d[:, j]).sum()) / d.shape[0],
                p_value=(int(h) + 1) / (n_resamples + 1),
                exact=False,
                n_resamples=n_resamples,
            )
    return [r for r in results if r is not None]


class McNemarResult(BaseModel):
    """Exact McNemar test on discordant pairs.

    ``b``: pairs where only the first (baseline) passed; ``c``: only the second (candidate).
    """

    b: int
    c: int
    p_exact: float  # two-sided exact binomial p (b ~ Binomial(b + c, 1/2))
    p_midp: float  # mid-p: the exact p minus the probability of the observed table


def mcnemar(b: int, c: int) -> McNemarResult:
    """Exact two-sided McNemar p and mid-p from the discordant counts.

    With n = b + c and m = min(b, c): p = min(1, 2 P(X <= m)), mid-p = min(1, 2 P(X <= m) - P(X = m))
    for X ~ Binomial(n, 1/2). b = c gives 1 for both; b + c = 0 (no discordant pair) gives 1.
    """
    if b < 0 or c < 0:
        raise ValueError("discordant counts must be >= 0")
    n = b + c
    if n == 0 or b == c:
        return McNemarResult(b=b, c=c, p_exact=1.0, p_midp=1.0)
    m = min(b, c)
    # Exact integer arithmetic: sum_{i <= m} C(n, i) / 2**n, no special-function import.
    term = 1  # C(n, 0)
    below = 0  # sum_{i < m} C(n, i)
    for i in range(m):
        below += term
        term = term * (n - i) // (i + 1)
    scale = 2**n
    p_exact = Fraction(2 * (below + term), scale)
    p_midp = Fraction(2 * below + term, scale)
    return McNemarResult(b=b, c=c, p_exact=min(1.0, float(p_exact)), p_midp=min(1.0, float(p_midp)))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order.

    Sorted ascending, p_(i) is scaled by (m - i) (i from 0), made monotone non-decreasing and
    capped at 1: a hypothesis is rejected at level alpha iff its adjusted p <= alpha.
    """
    p = np.asarray(p_values, dtype=float)
    m = p.size
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    adjusted = np.empty(m)
    adjusted[order] = scaled
    return [float(x) for x in adjusted]
