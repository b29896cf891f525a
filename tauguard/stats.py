"""Paired statistics for comparing two runs task by task.

- :func:`paired_bootstrap_ci` / :func:`bootstrap_mean_ci`: percentile CI of the mean per-task
  difference, resampling tasks with replacement (the same tasks for both runs, hence on the
  differences), optionally stratified so each stratum (domain) keeps its size. Vectorised: no
  Python loop per resample. :func:`merge_small_strata` merges strata too small to stratify on.
- :func:`sign_flip_test`: two-sided sign-flip permutation test of the mean difference, exact
  (all sign patterns) when the number of non-zero differences is small, Monte Carlo otherwise.
- :func:`mcnemar`: exact McNemar test (two-sided binomial on the discordant pairs) and mid-p.
- :func:`holm`: Holm step-down adjusted p-values.
- :func:`min_tasks_to_reject`: the fewest tasks with which the exact sign-flip test can reject.

Ties are decided exactly or relative to the data's own scale, never by an absolute epsilon:
per-task differences of pass^k at large k are real and can be far below 1e-12.

Only numpy and scipy.special are imported: scipy.stats takes over a second to import, which
would dominate `tauguard compare`'s wall time.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike
from pydantic import BaseModel
from scipy.special import bdtr

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


def bootstrap_mean_distribution(
    diffs: ArrayLike,
    *,
    strata: ArrayLike | None = None,
    n_resamples: int = 10_000,
    seed: int | Sequence[int] | np.random.Generator | None = 0,
) -> np.ndarray:
    """Bootstrap distribution (length ``n_resamples``) of the mean of ``diffs``.

    Each resample draws, within every stratum, as many items as the stratum holds, with
    replacement. The statistic is the mean over all items, so strata keep their weight.
    """
    d = np.asarray(diffs, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise ValueError("diffs must be a non-empty 1-d array")
    if n_resamples < 1:
        raise ValueError("n_resamples must be >= 1")
    rng = _as_rng(seed)
    groups = [d] if strata is None else [d[np.asarray(strata) == s] for s in np.unique(np.asarray(strata))]
    totals = np.zeros(n_resamples)
    for g in groups:
        # Chunk the resamples so that huge strata do not allocate resamples x size at once;
        # the loop runs over chunks (usually one), never over single resamples.
        per_chunk = max(1, _CHUNK_ELEMENTS // g.size)
        for start in range(0, n_resamples, per_chunk):
            stop = min(n_resamples, start + per_chunk)
            idx = rng.integers(0, g.size, size=(stop - start, g.size))
            totals[start:stop] += g[idx].sum(axis=1)
    return totals / d.size


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
    diffs = np.asarray(diffs, dtype=float)
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    dist = bootstrap_mean_distribution(diffs, strata=strata, n_resamples=n_resamples, seed=seed)
    alpha = 1 - confidence
    low, high = np.quantile(dist, [alpha / 2, 1 - alpha / 2])
    stratified = strata is not None and np.unique(np.asarray(strata)).size > 1
    return BootstrapCI(
        estimate=float(diffs.mean()),
        low=float(low),
        high=float(high),
        confidence=confidence,
        n_resamples=n_resamples,
        stratified=stratified,
        seed=seed if isinstance(seed, int) else None,
    )


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


def _count_extreme(abs_nonzero: np.ndarray, signs: np.ndarray, threshold: float) -> int:
    sums = np.abs(signs @ abs_nonzero)
    return int(np.count_nonzero(sums >= threshold))


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
    observed = float(d.sum())
    nz = np.abs(d[d != 0])
    m = nz.size
    if m == 0:
        return PermutationResult(statistic=0.0, p_value=1.0, exact=True, n_resamples=1)
    threshold = abs(observed) - 1e-9 * float(nz.sum())
    if m <= exact_max_nonzero:
        total = 1 << m
        hits = 0
        per_chunk = max(1, _CHUNK_ELEMENTS // m)
        bits = np.arange(m, dtype=np.int64)
        for start in range(0, total, per_chunk):
            codes = np.arange(start, min(total, start + per_chunk), dtype=np.int64)
            signs = 1.0 - 2.0 * ((codes[:, None] >> bits) & 1)
            hits += _count_extreme(nz, signs, threshold)
        return PermutationResult(statistic=observed / d.size, p_value=hits / total, exact=True, n_resamples=total)
    rng = _as_rng(seed)
    hits = 0
    per_chunk = max(1, _CHUNK_ELEMENTS // m)
    for start in range(0, n_resamples, per_chunk):
        rows = min(n_resamples, start + per_chunk) - start
        signs = 1.0 - 2.0 * rng.integers(0, 2, size=(rows, m))
        hits += _count_extreme(nz, signs, threshold)
    return PermutationResult(
        statistic=observed / d.size,
        p_value=(hits + 1) / (n_resamples + 1),
        exact=False,
        n_resamples=n_resamples,
    )


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
    cdf_m = float(bdtr(m, n, 0.5))
    cdf_below = float(bdtr(m - 1, n, 0.5)) if m > 0 else 0.0
    pmf_m = cdf_m - cdf_below
    return McNemarResult(b=b, c=c, p_exact=min(1.0, 2 * cdf_m), p_midp=min(1.0, 2 * cdf_m - pmf_m))


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
