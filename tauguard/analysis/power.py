"""Power planning by simulation from a pilot run: tasks × trials for a Δpass^k, and the run's MDE.

The pilot run's per-task success rates ``p_i = c_i / n_i`` stand for the task population. A
simulated pair of runs draws ``tasks`` tasks from the pilot's (with replacement), gives each
``trials`` independent trials per run, computes pass^k per task (C(c,k)/C(n,k)) and decides as
`tauguard compare` does with its adjusted CI (:func:`tauguard.analysis.stats.adjusted_mean_cis`): a
difference is detected when the CI excludes 0 on the side of the true Δ and at least
:func:`tauguard.analysis.stats.min_tasks_to_reject` tasks differ (fewer could never give the sign-flip
test p < α). Power is the share of simulated pairs with a detection.

The candidate's per-task rates:

- without a second run, a change of whole tasks, as guards make: for Δ < 0 each task breaks
  (rate 0) with probability ``r = -Δ / E[p^k]``, for Δ > 0 each task is fixed (rate 1) with
  probability ``r = Δ / E[1 - p^k]``, so the population Δpass^k is exactly Δ;
- with a second run (``--vs``), its own per-task rates ``q_i`` (the tasks both runs have), scaled
  towards or beyond them, ``p_i + λ (q_i - p_i)`` clipped to [0, 1], with λ found so that the
  population Δ is the requested one (λ = 1: the observed difference).

Trials are independent given the rates; sim runs on one seed are more alike than that, so the
estimate is conservative for them. Pure library: numpy only, no tau2 or litellm.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import comb

import numpy as np
from pydantic import BaseModel, Field

from tauguard.analysis.decision import non_inferior
from tauguard.analysis.metrics import MetricDef, TaskOutcome
from tauguard.analysis.stats import adjusted_bounds, min_tasks_to_reject
from tauguard.errors import TauguardInputError

# Task counts tried when searching for the fewest tasks that reach the target power.
MAX_TASKS = 5_000
TRIAL_MULTIPLES = (1, 2, 4)  # trials per task tried: k, 2k, 4k
GATE_MAX_TRIAL_MULTIPLE = 16  # trials per task tried within a domain's tasks: k .. 16k


class PowerError(TauguardInputError):
    """A power question that cannot be answered (bad Δ, no pilot task); one-line message."""


class DesignPower(BaseModel):
    """The estimated power of one design."""

    tasks: int
    trials: int
    power: float


class PowerPlan(BaseModel):
    """`tauguard power`'s answer."""

    run_id: str
    vs_run_id: str | None = None
    simulated: bool
    metric: str  # e.g. "pass^4"
    k: int
    delta: float  # the population Δpass^k planned for
    target_power: float
    confidence: float
    simulations: int
    seed: int
    pilot_tasks: int
    pilot_trials: int  # the smallest evaluated trial count of a pilot task
    # The model's population pass^k: the mean of (c/n)^k, what a simulated task's trials estimate.
    # Above the pilot's own τ² estimate (pilot_value) when rates are between 0 and 1 (Jensen).
    baseline_value: float
    pilot_value: float | None = None  # the pilot's pass^k, τ²'s C(c,k)/C(n,k) over tasks with >= k trials
    designs: list[DesignPower] = Field(default_factory=list)  # per trial count: fewest tasks reaching the target
    current: DesignPower  # the run as it stands, at Δ
    mde: float | None  # smallest |Δ| (same sign) the run as it stands detects with the target power
    available_tasks: int | None = None  # tasks the pilot's domains have (None: not known)
    # When every design needs more tasks than the domains have: the fewest trials at the domains' tasks.
    within_tasks: DesignPower | None = None
    notes: list[str] = Field(default_factory=list)


def _pass_table(trials: int, k: int) -> np.ndarray:
    return np.array([comb(c, k) / comb(trials, k) for c in range(trials + 1)])


def _population(p: np.ndarray, k: int) -> float:
    return float(np.mean(p**k))


def _pilot_pass_hat(tasks: Sequence[TaskOutcome], k: int) -> float | None:
    """The pilot's pass^k as `show` gives it (None when no task has k trials)."""
    values = [comb(o.successes, k) / comb(o.trials, k) for o in tasks if o.trials >= k]
    return float(np.mean(values)) if values else None


class _Model:
    """Baseline and candidate per-task rates for a target Δ (see the module docstring)."""

    def __init__(self, p: np.ndarray, q: np.ndarray | None, k: int) -> None:
        self.p, self.q, self.k = p, q, k

    # Scales λ of the second run's per-task change: fine up to 1, then geometric. Clipping at
    # 0 and 1 makes Δ(λ) non-monotone (tasks that got worse hit 0 first), so it is searched on a grid.
    _LAMBDAS = np.concatenate([np.linspace(0, 1, 201), np.geomspace(1.01, 1e3, 200)])

    def _delta_at(self, lam: float) -> float:
        assert self.q is not None
        return _population(np.clip(self.p + lam * (self.q - self.p), 0, 1), self.k) - _population(self.p, self.k)

    def max_delta(self, sign: int) -> float:
        """The largest |Δ| of that sign the model can produce."""
        base = _population(self.p, self.k)
        if self.q is None:
            return base if sign < 0 else 1 - base
        return max(0.0, max(sign * self._delta_at(lam) for lam in self._LAMBDAS))

    def candidate(self, delta: float) -> tuple[np.ndarray, float]:
        """Per-task candidate rates and, without a second run, the per-task break/fix probability."""
        base = _population(self.p, self.k)
        if self.q is None:
            r = -delta / base if delta < 0 else delta / (1 - base)
            return self.p, float(r)
        sign = 1 if delta > 0 else -1
        # The first grid λ reaching |Δ|, refined by bisection against its predecessor.
        hi = next(i for i, lam in enumerate(self._LAMBDAS) if sign * self._delta_at(lam) >= abs(delta) - 1e-12)
        lo_lam, hi_lam = (self._LAMBDAS[hi - 1] if hi else 0.0), self._LAMBDAS[hi]
        for _ in range(60):
            mid = (lo_lam + hi_lam) / 2
            lo_lam, hi_lam = (mid, hi_lam) if sign * self._delta_at(mid) < abs(delta) else (lo_lam, mid)
        return np.clip(self.p + hi_lam * (self.q - self.p), 0, 1), 0.0


def _power(
    model: _Model, delta: float, tasks: int, trials: int, *, simulations: int, confidence: float, rng: np.random.Generator
) -> float:
    """Share of simulated pairs of runs in which the difference is detected on Δ's side."""
    table = _pass_table(trials, model.k)
    q_all, r = model.candidate(delta)
    idx = rng.integers(0, model.p.size, size=(simulations, tasks))
    p, q = model.p[idx], q_all[idx]
    if model.q is None:
        changed = rng.random((simulations, tasks)) < r
        q = np.where(changed, 0.0 if delta < 0 else 1.0, p)
    d = table[rng.binomial(trials, q)] - table[rng.binomial(trials, p)]
    # The adjusted Wald CI of tauguard.analysis.stats.adjusted_mean_cis, vectorised over the simulations.
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    centre = d.sum(axis=1) / (tasks + 2)
    var = np.maximum(0.0, (np.square(d).sum(axis=1) + 2) / (tasks + 2) - centre**2)
    half = z * np.sqrt(var / (tasks + 2))
    side = (centre - half > 0) if delta > 0 else (centre + half < 0)
    enough = np.count_nonzero(d, axis=1) >= min_tasks_to_reject(1 - confidence)
    return float(np.mean(side & enough))


def _fewest_tasks(model: _Model, delta: float, trials: int, target: float, **kw: object) -> DesignPower | None:
    """The fewest tasks (up to :data:`MAX_TASKS`) reaching ``target`` at this trial count.

    Doubling from 6 tasks, then bisection: the designs tried stay near the answer, so a plan
    for a large effect never simulates thousands of tasks.
    """
    lo, hi = 0, 6
    while True:
        got = _power(model, delta, hi, trials, **kw)  # type: ignore[arg-type]
        if got >= target:
            break
        if hi >= MAX_TASKS:
            return None
        lo, hi = hi, min(2 * hi, MAX_TASKS)
    hi_power = got
    while hi - lo > 1:
        mid = (lo + hi) // 2
        got = _power(model, delta, mid, trials, **kw)  # type: ignore[arg-type]
        if got >= target:
            hi, hi_power = mid, got
        else:
            lo = mid
    return DesignPower(tasks=hi, trials=trials, power=hi_power)


def _mde(model: _Model, sign: int, tasks: int, trials: int, target: float, **kw: object) -> float | None:
    reach = model.max_delta(sign)
    if _power(model, sign * reach, tasks, trials, **kw) < target:  # type: ignore[arg-type]
        return None
    lo, hi = 0.0, reach
    for _ in range(12):  # |Δ| to about 1e-4 of the reachable range
        mid = (lo + hi) / 2
        if _power(model, sign * mid, tasks, trials, **kw) >= target:  # type: ignore[arg-type]
            hi = mid
        else:
            lo = mid
    return hi


def plan_power(
    pilot: Sequence[TaskOutcome],
    *,
    run_id: str,
    simulated: bool,
    k: int,
    delta: float | None,
    versus: Sequence[TaskOutcome] | None = None,
    vs_run_id: str | None = None,
    target_power: float = 0.8,
    confidence: float = 0.95,
    simulations: int = 1_000,
    seed: int = 0,
    available_tasks: int | None = None,
) -> PowerPlan:
    """Tasks × trials for 80 % (``target_power``) power to detect Δpass^k = ``delta``, and the pilot's MDE.

    ``delta`` may be omitted with ``versus``: the observed difference is planned for. With
    ``available_tasks`` (the tasks the domains have), a design that needs more is flagged, and the
    fewest trials per task at the available tasks that reach the target are offered instead. Raises
    :class:`PowerError` with one line for a Δ that is 0, outside (-1, 1) or not reachable from
    the pilot's rates, or a pilot without evaluated trials.
    """
    if k < 1:
        raise PowerError(f"k must be >= 1, got {k}")
    if not 0 < target_power < 1:
        raise PowerError(f"power must be in (0, 1), got {target_power:g}")
    if simulations < 100:
        raise PowerError(f"simulations must be >= 100, got {simulations}")
    tasks = [o for o in pilot if o.trials > 0]
    if not tasks:
        raise PowerError(f"run {run_id} has no task with an evaluated trial to plan from")
    notes: list[str] = []
    q = None
    if versus is not None:
        other = {o.key: o for o in versus if o.trials > 0}
        common = [o for o in tasks if o.key in other]
        if not common:
            raise PowerError(f"runs {run_id} and {vs_run_id} have no task with evaluated trials in common")
        if len(common) < len(tasks):
            notes.append(f"{len(tasks) - len(common)} pilot task(s) not in {vs_run_id} left out")
        tasks = common
        q = np.array([other[o.key].successes / other[o.key].trials for o in tasks])
    p = np.array([o.successes / o.trials for o in tasks])
    model = _Model(p, q, k)
    base = _population(p, k)
    if delta is None:
        if q is None:
            raise PowerError("give --delta (the difference in pass^k to detect), or --vs RUN to plan for the observed one")
        delta = _population(q, k) - base
        notes.append(f"Δ = {delta:+.3f}: the observed difference of {vs_run_id} from {run_id} (pilot rates)")
        if delta == 0:
            raise PowerError(f"runs {run_id} and {vs_run_id} have the same pilot pass^{k}; give --delta")
    if not -1 < delta < 1 or delta == 0:
        raise PowerError(f"invalid --delta {delta:g}; allowed: a non-zero difference in pass^k between -1 and 1")
    sign = 1 if delta > 0 else -1
    reach = model.max_delta(sign)
    if abs(delta) > reach + 1e-12:
        raise PowerError(
            f"Δpass^{k} = {delta:+.3f} is not reachable from {run_id}'s per-task rates (model pass^{k} {base:.3f}): "
            f"at most {sign * reach:+.3f} in that direction"
            + (f" ({vs_run_id}'s per-task change goes the other way)" if q is not None and reach == 0 else "")
        )
    pilot_trials = min(o.trials for o in tasks)
    rng = np.random.default_rng(seed)
    kw = {"simulations": simulations, "confidence": confidence, "rng": rng}
    designs = []
    for mult in TRIAL_MULTIPLES:
        found = _fewest_tasks(model, delta, k * mult, target_power, **kw)
        if found is None:
            notes.append(f"{k * mult} trials per task: not even {MAX_TASKS} tasks reach {target_power:.0%} power")
        else:
            designs.append(found)
    within = None
    if available_tasks is not None:
        over = [d for d in designs if d.tasks > available_tasks]
        for d in over:
            notes.append(
                f"{d.trials} trials per task: {d.tasks} tasks needed, more than the {available_tasks} the domains have"
            )
        if len(over) == len(designs):
            for mult in range(1, GATE_MAX_TRIAL_MULTIPLE + 1):
                got = _power(model, delta, available_tasks, k * mult, **kw)  # type: ignore[arg-type]
                if got >= target_power:
                    within = DesignPower(tasks=available_tasks, trials=k * mult, power=got)
                    break
            notes.append(
                f"within the domains' {available_tasks} tasks: "
                + (f"{within.trials} trials per task reach {within.power:.0%} power (more trials, or the same "
                   "tasks on more seeds, instead of more tasks)" if within is not None else
                   f"no trial count up to {GATE_MAX_TRIAL_MULTIPLE * k} reaches {target_power:.0%} power")
            )
    current_trials = max(pilot_trials, k)
    if pilot_trials < k:
        notes.append(f"the pilot has only {pilot_trials} trial(s) on some task; its design is taken at {k} trials")
    current = DesignPower(
        tasks=len(tasks), trials=current_trials, power=_power(model, delta, len(tasks), current_trials, **kw)  # type: ignore[arg-type]
    )
    return PowerPlan(
        run_id=run_id,
        vs_run_id=vs_run_id,
        simulated=simulated,
        metric=f"pass^{k}",
        k=k,
        delta=delta,
        target_power=target_power,
        confidence=confidence,
        simulations=simulations,
        seed=seed,
        pilot_tasks=len(tasks),
        pilot_trials=pilot_trials,
        baseline_value=base,
        pilot_value=_pilot_pass_hat(tasks, k),
        designs=designs,
        current=current,
        mde=_mde(model, sign, len(tasks), current_trials, target_power, **kw),
        available_tasks=available_tasks,
        within_tasks=within,
        notes=notes,
    )


# --------------------------------------------------------------------------- can the gate pass?


class GateDesign(BaseModel):
    """Whether a non-inferiority gate's design can pass an unchanged strategy, and which design would.

    An unchanged strategy is a candidate whose per-task rates are the baseline's own (true Δ = 0).
    The gate should pass it: a design that passes it rarely (a wide interval against a tight margin)
    fails every candidate, good or bad, and teaches users to switch the gate off.
    """

    metric: str
    k: int
    margin: float
    confidence: float
    target: float  # the probability of passing an unchanged strategy the design must reach
    simulations: int
    seed: int
    tasks: int
    trials: int
    pass_probability: float  # of this design, by simulation with the gate's own rule
    # The smallest margin at which this design passes an unchanged strategy with the target probability.
    smallest_margin: float
    needed: DesignPower | None = None  # fewest tasks at this trial count reaching the target (None: > MAX_TASKS)
    available_tasks: int | None = None  # tasks the run's domains have (None: not known)
    # When ``needed`` exceeds the available tasks: the fewest trials at the available tasks that reach it.
    within_tasks: DesignPower | None = None

    @property
    def feasible(self) -> bool:
        """Whether this design passes an unchanged strategy with at least the target probability."""
        return self.pass_probability >= self.target

    def advice(self) -> str:
        """One line: which design would reach the target (or that none within the domain does)."""
        parts = []
        if self.needed is not None and (self.available_tasks is None or self.needed.tasks <= self.available_tasks):
            parts.append(f"{self.needed.tasks} tasks × {self.needed.trials} trials would ({self.needed.power:.0%})")
        elif self.within_tasks is not None:
            parts.append(
                f"{self.within_tasks.tasks} tasks × {self.within_tasks.trials} trials would ({self.within_tasks.power:.0%}; "
                f"the domains have {self.available_tasks} tasks, so add trials or seeds, not tasks)"
            )
        else:
            have = f"the domains' {self.available_tasks} tasks" if self.available_tasks else f"{MAX_TASKS} tasks"
            parts.append(f"no design within {have} and {GATE_MAX_TRIAL_MULTIPLE}k trials reaches it")
        parts.append(f"this design passes it at margin ≥ {self.smallest_margin:.3f}")
        return "; ".join(parts)



def _rate_table(mdef: MetricDef, trials: int, k: int) -> np.ndarray:
    return np.array([float(mdef.exact(trials, c, k)) for c in range(trials + 1)])


def _unchanged_lows(
    p: np.ndarray, mdef: MetricDef, k: int, tasks: int, trials: int, *, confidence: float, simulations: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """The adjusted CI's bounds over simulated pairs of runs whose per-task rates are both ``p``."""
    rng = np.random.default_rng([seed, tasks, trials])
    table = _rate_table(mdef, trials, k)
    rates = p[rng.integers(0, p.size, size=(simulations, tasks))]
    d = table[rng.binomial(trials, rates)] - table[rng.binomial(trials, rates)]
    low, high, _ = adjusted_bounds(d.sum(axis=1), np.square(d).sum(axis=1), tasks, confidence=confidence)
    return low, high


def unchanged_pass_probability(
    p: np.ndarray, mdef: MetricDef, k: int, tasks: int, trials: int, *, margin: float,
    confidence: float = 0.95, simulations: int = 1_000, seed: int = 0,
) -> float:
    """The probability that `check`'s non-inferiority rule (:func:`~tauguard.analysis.decision.non_inferior`)
    passes a candidate with the baseline's per-task rates ``p``, at ``tasks`` × ``trials``."""
    low, high = _unchanged_lows(p, mdef, k, tasks, trials, confidence=confidence, simulations=simulations, seed=seed)
    return float(np.mean(non_inferior(low, high, margin, mdef.higher_is_better)))


def gate_design(
    p: Sequence[float] | np.ndarray,
    mdef: MetricDef,
    k: int,
    *,
    tasks: int,
    trials: int,
    margin: float,
    confidence: float = 0.95,
    target: float = 0.8,
    simulations: int = 1_000,
    seed: int = 0,
    available_tasks: int | None = None,
) -> GateDesign:
    """Whether ``tasks`` × ``trials`` lets a non-inferiority gate at ``margin`` pass an unchanged strategy
    with probability ``target``, and the fewest tasks (or, beyond ``available_tasks``, trials) that would.

    ``p`` are the baseline's per-task rates of the metric's per-trial event (successes / trials).
    """
    rates = np.asarray(p, dtype=float)
    if rates.size == 0:
        raise PowerError("no task to plan the gate's design from")
    kw = {"confidence": confidence, "simulations": simulations, "seed": seed}

    def prob(m: int, n: int) -> float:
        return unchanged_pass_probability(rates, mdef, k, m, n, margin=margin, **kw)  # type: ignore[arg-type]

    low, high = _unchanged_lows(rates, mdef, k, tasks, trials, **kw)  # type: ignore[arg-type]
    bad_side = -low if mdef.higher_is_better else high
    # P(bad side < margin) >= target  <=>  margin > the target-quantile of the bad-side bound.
    smallest = float(np.quantile(bad_side, target))
    here = float(np.mean(non_inferior(low, high, margin, mdef.higher_is_better)))
    design = GateDesign(
        metric=f"{mdef.kind}{k}", k=k, margin=margin, confidence=confidence, target=target,
        simulations=simulations, seed=seed, tasks=tasks, trials=trials, pass_probability=here,
        smallest_margin=max(0.0, smallest), available_tasks=available_tasks,
    )
    if design.feasible:
        return design
    design.needed = _fewest(lambda m: prob(m, trials), trials, target)
    if available_tasks is not None and (design.needed is None or design.needed.tasks > available_tasks):
        for mult in range(max(1, -(-trials // k)) + 1, GATE_MAX_TRIAL_MULTIPLE + 1):
            got = prob(available_tasks, k * mult)
            if got >= target:
                design.within_tasks = DesignPower(tasks=available_tasks, trials=k * mult, power=got)
                break
    return design


def _fewest(prob: Callable[[int], float], trials: int, target: float) -> DesignPower | None:
    """The fewest tasks (up to :data:`MAX_TASKS`) at which ``prob`` reaches the target; doubling, then bisection."""
    lo, hi = 0, 6
    while (got := prob(hi)) < target:
        if hi >= MAX_TASKS:
            return None
        lo, hi = hi, min(2 * hi, MAX_TASKS)
    best = got
    while hi - lo > 1:
        mid = (lo + hi) // 2
        got = prob(mid)
        if got >= target:
            hi, best = mid, got
        else:
            lo = mid
    return DesignPower(tasks=hi, trials=trials, power=best)
