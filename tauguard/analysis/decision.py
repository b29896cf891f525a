"""The gate's decision rules, shared by `check`, `compare` and `power`.

One function per rule, applied element-wise, so that `power` simulates datasets and decides them
with the very rule `check` applies to the one dataset it has:

- :func:`non_inferior`: the adjusted CI's bound on the bad side stays within the margin.
- :func:`exact_pass`: a deterministic pair of runs regressed no more (task, trial) outcomes than allowed.

Pure library: numpy only.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def non_inferior(low: ArrayLike, high: ArrayLike, margin: float, higher_is_better: bool = True) -> np.ndarray:
    """Whether Δ = candidate − baseline is shown no worse than ``margin``: the lower CI bound is
    above −margin (higher is better), or the upper bound below +margin (lower is better, e.g. ASR)."""
    if higher_is_better:
        return np.asarray(low, dtype=float) > -margin
    return np.asarray(high, dtype=float) < margin


def exact_pass(regressed: int, max_regressions: int) -> bool:
    """Whether an outcome-by-outcome comparison passes: at most ``max_regressions`` regressions."""
    return regressed <= max_regressions
