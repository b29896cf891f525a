"""The documented range of every numeric option (docs/bounds.md is generated from this table).

A value outside its range is refused before any work with one line naming the value and the
range: the ranges keep memory and time bounded (``-k 1e9`` or ``--resamples 1e9`` would
exhaust memory long before they finished) and keep values meaningful (a NaN or negative rate
limit is no limit at all). Pure data: no tau2, no litellm.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from tauguard.errors import TauguardInputError


class Bound(NamedTuple):
    """An inclusive range ``low..high`` of one option, and why the upper end is where it is."""

    low: float
    high: float
    why: str

    def check(self, value: float, flag: str) -> None:
        """Raise ``TauguardInputError`` (a ``ValueError``) with one line when ``value`` is NaN, infinite or out of range."""
        if isinstance(value, float) and not math.isfinite(value):
            raise TauguardInputError(f"{flag} must be a finite number in {self.describe()}, got {value}")
        if not self.low <= value <= self.high:
            raise TauguardInputError(f"{flag} must be in {self.describe()}, got {value:g}")

    def describe(self) -> str:
        """``[low, high]`` with integers shown as integers."""
        return f"[{self.low:g}, {self.high:g}]"


# option -> range; the keys are the flags as the user types them (config keys in brackets).
BOUNDS: dict[str, Bound] = {
    "-k/--trials": Bound(1, 1000, "pass^k beyond k = 1000 is not estimable from one run"),
    "--num-tasks": Bound(1, 100_000, "more than any split holds"),
    "--workers": Bound(1, 1024, "processes (or cluster jobs in flight)"),
    "--concurrency": Bound(1, 4096, "simulations in flight, each holding a conversation in memory"),
    "--rate-limit RPM / TPM": Bound(1e-3, 1e12, "requests or tokens per minute; NaN, 0 and negatives are refused"),
    "--max-cost": Bound(1e-6, 1e7, "USD"),
    "--seed (run)": Bound(0, 2_000_000, "trial seeds are seed x 1000 + trial and must fit a 32-bit seed"),
    "--max-steps": Bound(1, 100_000, "τ² orchestrator steps per simulation"),
    "max_retries (config)": Bound(0, 100, "retries per completion"),
    "max_errors (config)": Bound(1, 1_000_000, "infrastructure errors before a run stops"),
    "max_guard_retries (config)": Bound(0, 100, "held calls per turn"),
    "--resamples": Bound(1, 200_000, "bootstrap / Monte Carlo draws; memory grows with draws x tasks"),
    "--confidence": Bound(0.5, 0.999, "CI level"),
    "--margin": Bound(0, 1, "a difference of rates"),
    "--seed (statistics)": Bound(0, 2**32 - 1, "numpy seeds are 32-bit"),
    "--primary-k": Bound(1, 1000, "as -k"),
    "--min-tasks": Bound(1, 100_000, "as --num-tasks"),
    "--C": Bound(1e-6, 1e6, "inverse regularisation strength"),
}


def bound(flag: str) -> Bound:
    """The range of one option (a KeyError is a programming error: every option is listed)."""
    return BOUNDS[flag]


def markdown_table() -> str:
    """The table of docs/bounds.md."""
    rows = ["| option | range (inclusive) | why |", "|---|---|---|"]
    rows += [f"| `{flag}` | {b.describe()} | {b.why} |" for flag, b in BOUNDS.items()]
    return "\n".join(rows)


def parse_proportion(text: str, flag: str) -> float:
    """``text`` as a number within [0, 1] (e.g. one ``--uptake`` value), else one-line
    :class:`TauguardInputError` naming the flag, the value and the range."""
    try:
        value = float(text)
    except ValueError:
        raise TauguardInputError(f"{flag} must be numbers within [0, 1], got '{text}'") from None
    if not 0.0 <= value <= 1.0:  # also refuses NaN
        raise TauguardInputError(f"{flag} must be within [0, 1], got {text}")
    return value
