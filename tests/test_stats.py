"""Paired statistics against scipy and hand-worked cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from tauguard.analysis.stats import (
    bootstrap_mean_cis,
    bootstrap_mean_distribution,
    bootstrap_mean_distributions,
    holm,
    mcnemar,
    paired_bootstrap_ci,
    sign_flip_test,
    sign_flip_tests,
)

# Fixed vectors: per-task pass^k-like values of two runs over 40 tasks.
_RNG = np.random.default_rng(20240611)
BASE = _RNG.choice([0.0, 0.25, 0.5, 0.75, 1.0], size=40)
CAND = np.clip(BASE + _RNG.choice([-0.25, 0.0, 0.0, 0.25, 0.5], size=40), 0, 1)


# --------------------------------------------------------------------------- bootstrap


def test_bootstrap_ci_matches_scipy_paired_percentile() -> None:
    ours = paired_bootstrap_ci(BASE, CAND, n_resamples=20_000, seed=1)
    ref = sps.bootstrap(
        (BASE, CAND),
        lambda a, b, axis: np.mean(b, axis=axis) - np.mean(a, axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=20_000,
        method="percentile",
        confidence_level=0.95,
        rng=np.random.default_rng(2),
    )
    assert ours.estimate == pytest.approx(float(np.mean(CAND - BASE)))
    # Different random streams: endpoints agree up to Monte Carlo error (sd of Δ here ~ 0.04).
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=0.008)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=0.008)
    assert ours.low < ours.estimate < ours.high
    assert not ours.stratified


def test_bootstrap_is_reproducible_by_seed() -> None:
    a = paired_bootstrap_ci(BASE, CAND, n_resamples=2_000, seed=7)
    b = paired_bootstrap_ci(BASE, CAND, n_resamples=2_000, seed=7)
    c = paired_bootstrap_ci(BASE, CAND, n_resamples=2_000, seed=8)
    assert (a.low, a.high) == (b.low, b.high)
    assert (a.low, a.high) != (c.low, c.high)
    assert a.seed == 7


def test_stratified_bootstrap_keeps_stratum_sizes() -> None:
    # Stratum x: every difference 1 (2 tasks); stratum y: every difference 0 (8 tasks).
    # Resampling within strata always yields mean 2/10; pooled resampling would not.
    diffs = np.array([1.0, 1.0] + [0.0] * 8)
    strata = np.array(["x", "x"] + ["y"] * 8)
    dist = bootstrap_mean_distribution(diffs, strata=strata, n_resamples=5_000, seed=0)
    assert np.allclose(dist, 0.2)
    pooled = bootstrap_mean_distribution(diffs, n_resamples=5_000, seed=0)
    assert pooled.std() > 0.05
    ci = paired_bootstrap_ci(np.zeros(10), diffs, strata=strata, n_resamples=1_000)
    assert ci.stratified and ci.low == pytest.approx(0.2) and ci.high == pytest.approx(0.2)


def test_stratified_bootstrap_variance_is_within_strata() -> None:
    # Two strata whose means differ a lot: stratification removes the between-strata variance,
    # so its CI is narrower than the pooled one.
    rng = np.random.default_rng(3)
    diffs = np.concatenate([rng.normal(0.5, 0.1, 30), rng.normal(-0.5, 0.1, 30)])
    strata = np.repeat(["a", "b"], 30)
    strat = paired_bootstrap_ci(np.zeros(60), diffs, strata=strata, n_resamples=4_000, seed=0)
    pooled = paired_bootstrap_ci(np.zeros(60), diffs, n_resamples=4_000, seed=0)
    assert (strat.high - strat.low) < 0.5 * (pooled.high - pooled.low)


def test_bootstrap_chunking_covers_every_resample(monkeypatch: pytest.MonkeyPatch) -> None:
    import tauguard.analysis.stats as st

    monkeypatch.setattr(st, "_CHUNK_ELEMENTS", 100)  # forces many chunks
    dist = bootstrap_mean_distribution(np.arange(40.0), n_resamples=1_001, seed=0)
    assert dist.shape == (1_001,) and np.all(dist > 0)


def _index_bootstrap(values: np.ndarray, strata: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    # Slow reference: draw every item's index, stratum by stratum.
    rng = np.random.default_rng(seed)
    total = np.zeros(n_resamples)
    for s in np.unique(strata):
        g = values[strata == s]
        total += g[rng.integers(0, g.size, size=(n_resamples, g.size))].sum(axis=1)
    return total / values.size


def test_grouped_bootstrap_matches_item_index_resampling() -> None:
    # Draws on groups of equal values (multinomial counts) must give the distribution of
    # drawing item indices: compare quantiles up to Monte Carlo error.
    rng = np.random.default_rng(5)
    values = rng.choice([-1.0, -0.5, 0.0, 0.0, 0.25, 1.0], size=90)
    strata = np.repeat(["a", "b", "c"], [10, 30, 50])
    ours = bootstrap_mean_distribution(values, strata=strata, n_resamples=40_000, seed=1)
    ref = _index_bootstrap(values, strata, 40_000, 2)
    qs = [0.025, 0.25, 0.5, 0.75, 0.975]
    assert np.quantile(ours, qs) == pytest.approx(np.quantile(ref, qs), abs=0.01)
    assert ours.std() == pytest.approx(ref.std(), rel=0.03)
    assert ours.mean() == pytest.approx(values.mean(), abs=0.003)


def test_columns_share_draws_and_match_single_column_runs() -> None:
    # Common random numbers: with the same group labels, a column's CI is the same alone as
    # among others, and columns resampled together move together.
    rng = np.random.default_rng(6)
    kinds = rng.integers(0, 6, size=80)
    table = rng.normal(size=(6, 3))
    values = table[kinds]
    strata = np.where(np.arange(80) < 30, "x", "y")
    together = bootstrap_mean_cis(values, strata=strata, groups=kinds, n_resamples=3_000, seed=4)
    for j in range(3):
        alone = bootstrap_mean_cis(values[:, j], strata=strata, groups=kinds, n_resamples=3_000, seed=4)[0]
        assert (alone.low, alone.high) == (together[j].low, together[j].high)
    dist = bootstrap_mean_distributions(np.column_stack([values[:, 0], 2 * values[:, 0]]), n_resamples=500, seed=0)
    assert dist[:, 1] == pytest.approx(2 * dist[:, 0])
    perm_together = sign_flip_tests(values, groups=kinds, n_resamples=2_000, seed=3, exact_max_nonzero=4)
    perm_alone = sign_flip_tests(values[:, 1], groups=kinds, n_resamples=2_000, seed=3, exact_max_nonzero=4)
    assert perm_alone[0].p_value == perm_together[1].p_value and not perm_alone[0].exact
    with pytest.raises(ValueError, match="identical"):
        bootstrap_mean_cis(values, groups=np.zeros(80), n_resamples=10)


def test_bootstrap_rejects_misaligned_input() -> None:
    with pytest.raises(ValueError):
        paired_bootstrap_ci([0.0, 1.0], [1.0], n_resamples=10)


# --------------------------------------------------------------------------- permutation


def _scipy_perm(x: np.ndarray, y: np.ndarray, n_resamples: float) -> float:
    res = sps.permutation_test(
        (y, x),
        lambda a, b, axis: np.mean(a - b, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        rng=np.random.default_rng(0),
    )
    return float(res.pvalue)


@pytest.mark.parametrize("n", [6, 10, 13])
def test_sign_flip_exact_matches_scipy(n: int) -> None:
    x, y = BASE[:n], CAND[:n]
    ours = sign_flip_test(y - x)
    assert ours.exact
    assert ours.p_value == pytest.approx(_scipy_perm(x, y, np.inf), abs=1e-12)


def test_sign_flip_monte_carlo_matches_scipy() -> None:
    ours = sign_flip_test(CAND - BASE, n_resamples=20_000, seed=0, exact_max_nonzero=5)
    assert not ours.exact and ours.n_resamples == 20_000
    ref = _scipy_perm(BASE, CAND, 20_000)
    assert ours.p_value == pytest.approx(ref, abs=0.01)


def test_sign_flip_hand_cases() -> None:
    # All zero: nothing can be more extreme; p = 1.
    assert sign_flip_test(np.zeros(5)).p_value == 1.0
    # Three equal positive differences: only the all-plus and all-minus patterns reach |sum| = 3.
    assert sign_flip_test(np.array([1.0, 1.0, 1.0, 0.0])).p_value == pytest.approx(2 / 8)
    # Symmetric data: observed sum 0, p = 1.
    assert sign_flip_test(np.array([0.5, -0.5])).p_value == 1.0


def test_sign_flip_monte_carlo_never_reports_zero() -> None:
    res = sign_flip_test(np.ones(60), n_resamples=500, seed=0)
    assert res.p_value == pytest.approx(1 / 501)


# --------------------------------------------------------------------------- McNemar


@pytest.mark.parametrize(
    ("b", "c", "p_exact", "p_midp"),
    [
        (10, 2, 2 * 79 / 4096, 2 * 13 / 4096 + 66 / 4096),  # P(X<=2) = (1+12+66)/2^12
        (2, 10, 2 * 79 / 4096, 2 * 13 / 4096 + 66 / 4096),
        (5, 5, 1.0, 1.0),
        (0, 7, 2 / 128, 1 / 128),
        (0, 0, 1.0, 1.0),
    ],
)
def test_mcnemar_hand_cases(b: int, c: int, p_exact: float, p_midp: float) -> None:
    res = mcnemar(b, c)
    assert (res.b, res.c) == (b, c)
    assert res.p_exact == pytest.approx(p_exact, rel=1e-12)
    assert res.p_midp == pytest.approx(p_midp, rel=1e-12)


@pytest.mark.parametrize(
    ("b", "c"), [(10, 2), (5, 5), (0, 7), (3, 9), (1, 30), (17, 11), (40, 60), (700, 790), (1290, 1200)]
)
def test_mcnemar_matches_scipy_binomtest(b: int, c: int) -> None:
    ref = sps.binomtest(b, b + c, 0.5, alternative="two-sided").pvalue
    assert mcnemar(b, c).p_exact == pytest.approx(ref, rel=1e-9)
    assert mcnemar(b, c).p_midp <= mcnemar(b, c).p_exact
    m, n = min(b, c), b + c
    mid = 2 * sps.binom.cdf(m, n, 0.5) - sps.binom.pmf(m, n, 0.5)
    assert mcnemar(b, c).p_midp == pytest.approx(min(1.0, mid), rel=1e-9)


def test_mcnemar_rejects_negative_counts() -> None:
    with pytest.raises(ValueError):
        mcnemar(-1, 3)


# --------------------------------------------------------------------------- Holm


def test_holm_hand_case() -> None:
    # Sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> monotone 0.06.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_caps_at_one_and_handles_edge_sizes() -> None:
    assert holm([0.6, 0.5]) == pytest.approx([1.0, 1.0])
    assert holm([0.2]) == [0.2]
    assert holm([]) == []


# --------------------------------------------------------------------------- adjusted Wald CI (issue 24)


def _bonett_price(n12: int, n21: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    # Bonett & Price (2012), eq. for the adjusted Wald interval of p12 - p21 from the table's
    # discordant counts, written from the paper's notation (not from tauguard's code).
    p12, p21 = (n12 + 1) / (n + 2), (n21 + 1) / (n + 2)
    z = sps.norm.ppf(1 - (1 - confidence) / 2)
    half = z * np.sqrt((p12 + p21 - (p12 - p21) ** 2) / (n + 2))
    return max(-1.0, p12 - p21 - half), min(1.0, p12 - p21 + half)


@pytest.mark.parametrize(("up", "down", "n", "confidence"), [(0, 0, 6, 0.95), (5, 0, 5, 0.95), (3, 7, 40, 0.95), (12, 2, 50, 0.99)])
def test_adjusted_ci_is_bonett_price_on_binary_differences(up: int, down: int, n: int, confidence: float) -> None:
    from tauguard.analysis.stats import adjusted_mean_ci

    # Candidate-only passes are +1 (n21 in the candidate-minus-baseline orientation).
    diffs = np.array([1.0] * up + [-1.0] * down + [0.0] * (n - up - down))
    ci = adjusted_mean_ci(diffs, confidence=confidence)
    low, high = _bonett_price(up, down, n, confidence)
    assert (ci.low, ci.high) == (pytest.approx(low), pytest.approx(high))
    assert ci.estimate == pytest.approx(diffs.mean()) and ci.tasks == n


def test_adjusted_ci_never_collapses_and_rejects_out_of_range_values() -> None:
    from tauguard.analysis.stats import adjusted_mean_ci, adjusted_mean_cis

    tied = adjusted_mean_ci(np.zeros(6))
    # The percentile bootstrap of six ties is [0, 0]; the adjusted CI keeps a real loss possible.
    assert bootstrap_mean_cis(np.zeros(6), n_resamples=500)[0].high == 0.0
    assert tied.low == pytest.approx(-sps.norm.ppf(0.975) * np.sqrt(2) / 8) and tied.high == -tied.low
    # Fractional differences (pass^1 of 4 trials): the same formula on sum(d) and sum(d^2).
    d = np.array([0.25, -0.5, 0.0, 0.75, 0.0, 0.0, -0.25, 0.5])
    centre = d.sum() / 10
    se = np.sqrt(((d**2).sum() + 2) / 10 - centre**2) / np.sqrt(10)
    ci = adjusted_mean_cis(np.column_stack([d, np.zeros(8)]))[0]
    assert (ci.low, ci.high, ci.se) == (pytest.approx(centre - 1.959964 * se), pytest.approx(centre + 1.959964 * se), pytest.approx(se))
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        adjusted_mean_ci(np.array([2.0, 0.0]))


def test_minimum_detectable_difference_matches_statsmodels() -> None:
    from statsmodels.stats.power import NormalIndPower

    from tauguard.analysis.stats import minimum_detectable_difference

    se, n = 0.03, 50
    sd = se * np.sqrt(n)
    # statsmodels solves the effect size (in sd units) of a one-sample z-test (ratio=0) with 80 % power.
    effect = NormalIndPower().solve_power(effect_size=None, nobs1=n, alpha=0.05, power=0.8, ratio=0.0)
    assert minimum_detectable_difference(se, confidence=0.95, power=0.8) == pytest.approx(effect * sd, rel=1e-3)
    with pytest.raises(ValueError):
        minimum_detectable_difference(se, power=1.0)


def test_adjusted_rate_ci_is_the_paired_interval_on_2x_minus_1_and_never_zero_width() -> None:
    from tauguard.analysis.stats import adjusted_mean_ci, adjusted_rate_ci

    six = adjusted_rate_ci([1.0] * 6)
    assert six.estimate == 1.0 and six.high == 1.0 and six.low == pytest.approx(0.6458, abs=1e-4)
    values = [0.0, 0.25, 1.0, 1.0, 0.5]
    paired = adjusted_mean_ci([2 * v - 1 for v in values])
    one = adjusted_rate_ci(values)
    assert (one.low, one.high) == pytest.approx(((paired.low + 1) / 2, (paired.high + 1) / 2))
    with pytest.raises(ValueError):
        adjusted_rate_ci([1.2])
