"""k-metric curves per run with bootstrap CI bands over tasks.

Point values come from :func:`tauguard.analysis.metrics.k_metric`, so they equal `tauguard show`'s. The
bands are percentile bootstrap CIs of the mean over tasks, stratified by domain, drawn with one
random stream per (slice, k) shared by every run: when runs hold the same tasks (the paired
design of `compare`), every resample picks the same tasks in every run.

Pure library: imports neither tau2 nor litellm.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from tauguard.analysis.metrics import KMetricKind, TaskOutcome, k_metric
from tauguard.report.model import Curve, CurvePoint
from tauguard.analysis.stats import bootstrap_mean_distribution


def _stream(seed: int, slice_key: str, kind: str, k: int) -> np.random.Generator:
    # A stable integer per slice and metric (zlib.crc32, not hash(), which is salted per process).
    return np.random.default_rng([seed, zlib.crc32(f"{slice_key}|{kind}".encode()), k])


def curve(
    run_id: str,
    outcomes: Sequence[TaskOutcome],
    kind: KMetricKind,
    max_k: int,
    *,
    slice_key: str,
    seed: int = 0,
    n_resamples: int = 2000,
    confidence: float = 0.95,
) -> Curve:
    """One run's ``kind`` metric for k = 1..max_k on already-selected task outcomes."""
    pool = [o for o in outcomes if o.is_attacked] if kind == "asr@" else [o for o in outcomes if o.trials > 0]
    alpha = 1 - confidence
    points = []
    for k in range(1, max_k + 1):
        kv = k_metric(outcomes, kind, k)
        used = [(o.domain, o.value(kind, k)) for o in pool]
        values = np.array([v for _, v in used if v is not None], dtype=float)
        strata = np.array([d for d, v in used if v is not None])
        low = high = None
        if values.size:
            dist = bootstrap_mean_distribution(
                values,
                strata=strata if np.unique(strata).size > 1 else None,
                n_resamples=n_resamples,
                seed=_stream(seed, slice_key, kind, k),
            )
            low, high = (float(q) for q in np.quantile(dist, [alpha / 2, 1 - alpha / 2]))
        points.append(CurvePoint(k=k, value=kv.value, low=low, high=high, tasks=kv.tasks))
    return Curve(run_id=run_id, points=points)
