"""Fitted rates with their uncertainty: a Jeffreys interval on the observed share and a shrunk
estimate for the profile.

A rate fitted from c faults in n opportunities is written as the posterior mean under a beta
prior centred on the catalog's realistic rate p0 (the packaged ``realistic`` profile's value for
that fault or field) with pseudo-count m (``PRIOR_STRENGTH``, default 4 opportunities):

    rate = (c + m * p0) / (n + m)

so a fault seen 1 time in 1 opportunity is not written as 1.0, nor one seen 0 times in 2 as 0:
with few opportunities the rate stays near p0, with many it follows c / n. A field the realistic
profile gives no rate (0 or absent: e.g. ``conflict_refusal``, a fault it leaves out) is shrunk
under Jeffreys' prior Beta(1/2, 1/2) instead: (c + 1/2) / (n + 1). The interval is the 95 %
Jeffreys interval of c / n (the Beta(c + 1/2, n - c + 1/2) quantiles; 0 or 1 at c = 0 or n, as
Brown, Cai & DasGupta 2001 recommend), the observed share's uncertainty before any prior.
"""

from __future__ import annotations

from pydantic import BaseModel

PRIOR_STRENGTH = 4.0  # m: opportunities the prior weighs as
CONFIDENCE = 0.95


class FittedRate(BaseModel):
    """One fitted rate: its evidence, interval, prior and the shrunk value written to the profile."""

    count: int
    opportunities: int
    observed: float  # count / opportunities (0 with none)
    low: float  # Jeffreys interval of the observed share
    high: float
    prior: float | None  # p0 (None: Jeffreys' prior, no realistic rate)
    prior_strength: float
    rate: float  # the shrunk estimate the sim uses


def jeffreys(count: int, total: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The Jeffreys interval of ``count / total`` ((0, 1) with no observations)."""
    from scipy.stats import beta

    if total <= 0:
        return 0.0, 1.0
    tail = (1.0 - confidence) / 2.0
    low = 0.0 if count == 0 else float(beta.ppf(tail, count + 0.5, total - count + 0.5))
    high = 1.0 if count == total else float(beta.ppf(1.0 - tail, count + 0.5, total - count + 0.5))
    return low, high


def fitted_rate(count: int, total: int, prior: float | None, strength: float = PRIOR_STRENGTH) -> FittedRate:
    """The shrunk rate of ``count`` in ``total`` (module rule) with its interval."""
    low, high = jeffreys(count, total)
    if prior is not None and prior > 0:
        rate = (count + strength * prior) / (total + strength)
    else:
        prior = None
        rate = (count + 0.5) / (total + 1.0)
    return FittedRate(count=count, opportunities=total, observed=count / total if total else 0.0, low=low, high=high,
                      prior=prior, prior_strength=strength, rate=rate)


def realistic_prior(field: str) -> float | None:
    """The packaged realistic profile's rate for a fault id or a top-level field (None: it sets none)."""
    from tauguard.faults.profiles import load_profile

    profile = load_profile("realistic")
    if field in profile.rates:
        return profile.rates[field]
    value = getattr(profile, field, None) if field in type(profile).model_fields else None
    return float(value) if isinstance(value, (int, float)) and value > 0 else None
