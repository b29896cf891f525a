"""k-metric curves per run with CI bands over tasks.

Point values come from :func:`tauguard.analysis.metrics.k_metric`, so they equal `tauguard show`'s. The
bands are the adjusted Wald interval of the mean over tasks (:func:`tauguard.analysis.stats.adjusted_rate_ci`),
the method of `compare`'s Δ intervals: never zero-width (six all-pass tasks give [0.646, 1.000],
where the percentile bootstrap gave [1.000, 1.000]). No random draws, so no seed.

Pure library: imports neither tau2 nor litellm.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tauguard.analysis.metrics import KMetricKind, TaskOutcome, k_metric
from tauguard.report.model import Curve, CurvePoint
from tauguard.analysis.stats import adjusted_rate_ci


def curve(
    run_id: str,
    outcomes: Sequence[TaskOutcome],
    kind: KMetricKind,
    max_k: int,
    *,
    confidence: float = 0.95,
) -> Curve:
    """One run's ``kind`` metric for k = 1..max_k on already-selected task outcomes."""
    pool = [o for o in outcomes if o.is_attacked] if kind == "asr@" else [o for o in outcomes if o.trials > 0]
    points = []
    for k in range(1, max_k + 1):
        kv = k_metric(outcomes, kind, k)
        values = np.array([v for v in (o.value(kind, k) for o in pool) if v is not None], dtype=float)
        low = high = None
        if values.size:
            ci = adjusted_rate_ci(values, confidence=confidence)
            low, high = ci.low, ci.high
        points.append(CurvePoint(k=k, value=kv.value, low=low, high=high, tasks=kv.tasks))
    return Curve(run_id=run_id, points=points)
