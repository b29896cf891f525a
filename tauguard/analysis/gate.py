"""The gate of `tauguard check`: one engine evaluating a list of criteria against a baseline
run and/or absolute floors.

The engine (:func:`run_gate`) builds a :class:`GateContext` and evaluates every criterion in turn;
a criterion is any callable ``(GateContext) -> list[GateCriterion]``, each result carrying a
name, a decision (``passed``) and a one-line reason (``message``). The built-in criteria are
completeness, the baseline check and the floors; further criteria (e.g. compliance and
usefulness axes) plug in through ``run_gate(..., criteria=[...])`` or :func:`register_criterion`.
The gate passes when every criterion's every result passes.

The baseline check has two forms, and the report says which one was used and why:

- **exact** (:mod:`tauguard.analysis.exact`): when both runs are deterministic sim runs that differ
  only in the strategy, their (task, trial) outcomes are compared one by one; the check fails when
  more than ``max_regressions`` outcomes regressed (default 0). No interval is needed.
- **statistical**, otherwise (or with ``statistical=True``). Before gating in non-inferiority mode,
  the engine checks that the design can pass an unchanged strategy (true Δ = 0) at the margin with
  at least 80 % probability (:func:`tauguard.analysis.power.gate_design`, the same rule by
  simulation); if not it raises :class:`GateDesignError` (exit 2) naming a design that could,
  instead of failing every candidate.

Statistical checks (``mode``), on pass^K, pass@K or asr@K (any k-metric of
:data:`tauguard.analysis.metrics.METRICS`; default pass^k at the largest k every common task supports):

- ``non-inferiority`` (default): passes when the CI bound of Δ = candidate - baseline on the
  bad side (lower for pass^k, upper for ASR@k) stays within ``margin``: the candidate is shown
  to be no worse than the baseline by more than the margin. A wide CI therefore fails.
- ``regression``: fails when compare's verdict is "worse": the CI excludes 0 on the bad side
  and the sign-flip permutation p is below 1 - confidence.

Both fail when fewer than ``min_tasks`` tasks can be compared (default: the fewest with which
the sign-flip test can reject at all, 6 at 95 %), and the gate fails when the run or baseline
is incomplete (not ``completed``, or fewer recorded than planned units) unless ``allow_partial``.

Floors are absolute thresholds on one run's metrics, read from a TOML file::

    schema_version = 1

    [[floor]]
    metric = "pass^1"        # pass^K, pass@K, asr@K, avg_reward, error_rate, guard_error_rate
    min = 0.8                # exactly one of min / max
    per_domain = true        # one check per domain of the run (else the whole run)
    subset = "all"           # all | policy_violation | mutation
    # domain = "retail"      # a single domain instead of per_domain
    # allow_missing = false  # pass when the run has no data for the metric (else fail)
    # name = "retail floor"  # label in reports

Pure library: imports neither tau2 nor litellm.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from tauguard.analysis.compare import (
    CompareError,
    KComparison,
    RunRef,
    TableAlignment,
    align_tables,
    compare_metric,
    dropped_notes,
    run_notes,
    run_ref,
)
from tauguard.datafiles import DataFileError, load_toml
from tauguard.errors import TauguardInputError
from tauguard.analysis.metrics import (
    METRICS,
    MetricSpec,
    RunMetrics,
    SliceMetrics,
    Subset,
    headline_metric,
    parse_metric,
)
from tauguard.analysis.axes import AxesGate
from tauguard.analysis.decision import exact_pass, non_inferior
from tauguard.analysis.exact import FlipTable, exact_pairing, flip_summary, flip_table
from tauguard.analysis.power import GateDesign, PowerError, gate_design
from tauguard.analysis.task_table import run_task_table
from tauguard.analysis.summary import summarize_run
from tauguard.analysis.pairing import PairingDifference, pairing_differences
from tauguard.analysis.stats import min_tasks_to_reject
from tauguard.runs.records import SIMULATION_NOTE
from tauguard.runs.store import Run

GateMode = Literal["non-inferiority", "regression"]
GateForm = Literal["exact", "statistical"]
# The kinds of the built-in criteria; a plugged-in criterion may use its own kind.
CheckKind = Literal["non-inferiority", "regression", "exact", "floor", "completeness", "superiority"]
# The probability with which a statistical design must pass an unchanged strategy.
DESIGN_TARGET = 0.8
# A mean of 4/5 must meet a floor of 0.8 despite float rounding; relative, so that a floor on a
# tiny value (pass^28 of 60 trials is ~1e-15) is not met by 0.
_REL_SLACK = 1e-9


class GateInputError(TauguardInputError):
    """Bad gate input (metric name, floors file, missing runs); one-line message, exit 2."""


class GateDesignError(GateInputError):
    """The design cannot pass an unchanged strategy at the margin (exit 2, never a failed gate)."""

    def __init__(self, message: str, design: GateDesign) -> None:
        super().__init__(message)
        self.design = design


class UnpairedRunsError(GateInputError):
    """The run and the baseline differ in a manifest field pairing needs (exit 2 unless allowed)."""

    def __init__(self, message: str, differences: list[PairingDifference], warnings: list[str]) -> None:
        super().__init__(message)
        self.differences = differences
        self.warnings = warnings  # one line per difference, without the "warning:" prefix


# --------------------------------------------------------------------------- floors schema


class Floor(BaseModel):
    """One absolute threshold on a run metric."""

    model_config = ConfigDict(extra="forbid")

    metric: str
    min: float | None = None
    max: float | None = None
    subset: Subset = "all"
    domain: str | None = None
    per_domain: bool = False
    allow_missing: bool = False
    name: str | None = None

    @field_validator("metric")
    @classmethod
    def _known_metric(cls, value: str) -> str:
        return parse_metric(value).name

    @model_validator(mode="after")
    def _one_bound(self) -> Floor:
        if (self.min is None) == (self.max is None):
            raise ValueError("give exactly one of min or max")
        if self.domain is not None and self.per_domain:
            raise ValueError("domain and per_domain are mutually exclusive")
        return self

    def describe(self) -> str:
        """e.g. ``pass^1 >= 0.8``."""
        return f"{self.metric} >= {self.min:g}" if self.min is not None else f"{self.metric} <= {self.max:g}"


class FloorsConfig(BaseModel):
    """A floors file: ``schema_version`` and a list of ``[[floor]]`` tables."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_version: Literal[1] = 1
    floors: list[Floor] = Field(default_factory=list, alias="floor")
    # The gate on both axes (tauguard.analysis.axes_gate), evaluated with --baseline.
    axes: AxesGate | None = None


def load_floors(path: str | Path) -> FloorsConfig:
    """Read and validate a floors TOML file; raises :class:`GateInputError` with one line."""
    try:
        config = load_toml(Path(path), FloorsConfig)
    except DataFileError as exc:
        raise GateInputError(f"floors {exc}") from None
    if not config.floors:
        raise GateInputError(f"floors file {path} defines no [[floor]]")
    return config


# --------------------------------------------------------------------------- results


class GateCriterion(BaseModel):
    """One gate check (a JUnit test case): a name, a decision and a one-line reason."""

    name: str
    kind: str  # a CheckKind for the built-in criteria
    metric: str
    slice: str  # e.g. "all domains/all", "retail/mutation"
    passed: bool
    observed: float | None  # the metric (floors), Δ (baseline checks), recorded units (completeness)
    threshold: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    message: str


class GateReport(BaseModel):
    """Outcome of `tauguard check`."""

    passed: bool
    simulated: bool
    simulation_note: str | None
    run: RunRef
    baseline: RunRef | None = None
    mode: GateMode | None = None
    margin: float | None = None
    min_tasks: int | None = None
    seed: int | None = None
    n_resamples: int | None = None
    comparison: KComparison | None = None
    # Manifest fields pairing needs on which run and baseline differ (gated only with allow_unpaired).
    pairing: list[PairingDifference] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # dropped tasks, skipped lines, incomplete runs
    # How the baseline was gated ("exact": outcome by outcome; "statistical": by an interval) and why.
    gate: GateForm | None = None
    gate_reason: str | None = None
    max_regressions: int | None = None  # exact gate: regressed outcomes allowed
    flips: FlipTable | None = None  # exact gate: every flipped (task, trial)
    design: GateDesign | None = None  # statistical non-inferiority: can the design pass an unchanged strategy?
    checks: list[GateCriterion]

    @property
    def failed(self) -> list[GateCriterion]:
        """The checks that failed."""
        return [c for c in self.checks if not c.passed]


# --------------------------------------------------------------------------- completeness


def completeness_check(ref: RunRef, role: str) -> GateCriterion:
    """Fail a run that is not completed or recorded fewer units than it planned.

    A run killed part-way (manifest still ``running``, or record lines lost) would otherwise
    pass floors and baseline gates on the few tasks it did record.
    """
    passed = ref.complete
    if passed:
        message = f"{role} run {ref.run_id}: {ref.completeness()}"
    else:
        message = f"{role} run {ref.run_id} is incomplete: {ref.completeness()} (use --allow-partial to gate it anyway)"
    return GateCriterion(
        name=f"complete {role} run {ref.run_id}",
        kind="completeness",
        metric="recorded_units",
        slice="all domains/all",
        passed=passed,
        observed=float(ref.recorded_units),
        threshold=float(ref.planned_units),
        message=message,
    )


# --------------------------------------------------------------------------- baseline check


def _allowed_metrics(alignment: TableAlignment) -> str:
    parts = []
    for mdef in METRICS:
        k_max = alignment.max_n(mdef)
        if k_max == 1:
            parts.append(f"{mdef.kind}1")
        elif k_max > 1:
            parts.append(f"{mdef.kind}1..{mdef.kind}{k_max}")
    return ", ".join(parts)


def default_min_tasks(confidence: float) -> int:
    """Default minimum of compared tasks for a baseline gate: the fewest with which the
    sign-flip test can reject at 1 - confidence (6 at 95 %); fewer can never show a difference."""
    return min_tasks_to_reject(1 - confidence)


def check_baseline(
    run: Run,
    baseline: Run,
    *,
    metric: str | None = None,
    margin: float = 0.05,
    mode: GateMode = "non-inferiority",
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    subset: Subset = "all",
    min_tasks: int | None = None,
    design_target: float | None = DESIGN_TARGET,
    available_tasks: int | None = None,
) -> tuple[GateCriterion, KComparison, list[str], GateDesign | None]:
    """Gate the run against the baseline on one metric; return the check, the comparison and notes.

    Default metric: pass^k at the largest k that every common task supports. The metric may be
    any k-metric of :data:`~tauguard.analysis.metrics.METRICS` (pass^K, pass@K, asr@K); verdicts follow its
    direction. The check fails when fewer than ``min_tasks`` tasks enter the comparison
    (default :func:`default_min_tasks`). Raises :class:`GateInputError` for a metric that is
    malformed or not shared by both runs, and :class:`CompareError` when the runs cannot be
    compared at all. In non-inferiority mode with ``design_target`` set, raises
    :class:`GateDesignError` when the design passes an unchanged strategy with a lower probability
    (:func:`tauguard.analysis.power.gate_design`; ``available_tasks``: how many tasks the domains have).
    """
    if margin < 0:
        raise GateInputError(f"margin must be >= 0, got {margin:g}")
    if min_tasks is not None and min_tasks < 1:
        raise GateInputError(f"min tasks must be >= 1, got {min_tasks}")
    need = min_tasks if min_tasks is not None else default_min_tasks(confidence)
    alignment = align_tables(run_task_table(baseline).select(subset), run_task_table(run).select(subset))
    if not alignment.size:
        names = f"{baseline.manifest.run_id} and {run.manifest.run_id}"
        if alignment.dropped.no_evaluated_trials:
            raise CompareError(f"runs {names} share no k: no common task has an evaluated trial in both runs")
        raise CompareError(f"runs {names} have no task in common")
    if metric is None:
        spec = MetricSpec(kind=headline_metric().kind, k=alignment.full_common_k)
    else:
        try:
            parsed: MetricSpec | None = parse_metric(metric, scalars=False)
        except ValueError:
            parsed = None
        mdef = parsed.definition if parsed is not None else None
        if mdef is None or parsed is None or alignment.max_n(mdef) < (parsed.k or 0):
            raise GateInputError(f"invalid --metric {metric!r}; allowed: {_allowed_metrics(alignment)}")
        spec = parsed
    mdef = spec.definition
    assert mdef is not None and spec.k is not None
    result = compare_metric(
        alignment, spec, n_resamples=n_resamples, confidence=confidence, seed=seed, primary=True
    )
    # The same notes `compare` prints: which tasks were dropped and why.
    notes = dropped_notes(alignment.dropped)
    if result.dropped_n_lt_k:
        notes.append(
            f"{spec.name}: {result.dropped_n_lt_k} task(s) have fewer than {spec.k} {mdef.n_label} in a run: excluded"
        )

    pct = f"{confidence:.0%}"
    ci = (
        f"Δ = {result.delta:+.3f} (mean per-task difference), {pct} adjusted Wald CI (Bonett-Price) "
        f"[{result.ci_low:+.3f}, {result.ci_high:+.3f}] over {result.tasks} tasks"
    )
    hib = mdef.higher_is_better
    design: GateDesign | None = None
    if result.tasks < need:
        passed = False
        message = (
            f"{ci}; only {result.tasks} task(s) can estimate {spec.name} in both runs, a baseline gate needs at "
            f"least {need} (--min-tasks): too little evidence to gate on"
        )
        threshold = -margin if mode == "non-inferiority" else 0.0
    elif mode == "non-inferiority":
        if design_target is not None:
            design = _design(alignment, spec, margin=margin, confidence=confidence, seed=seed,
                             target=design_target, available_tasks=available_tasks)
            if not design.feasible:
                raise GateDesignError(_design_line(design, baseline), design)
        # Worse means lower for pass^k, higher for ASR: the bound on the bad side must stay within the margin.
        bound = result.ci_low if hib else result.ci_high
        passed = bool(non_inferior(result.ci_low, result.ci_high, margin, hib))
        side = "lower" if hib else "upper"
        limit = f"-{margin:g}" if hib else f"+{margin:g}"
        rel = (">" if hib else "<") if passed else ("<=" if hib else ">=")
        message = f"{ci}; {side} bound {bound:+.3f} {rel} {limit} (margin)"
        threshold = -margin if hib else margin
    else:
        # The same rule as compare's verdict: the CI excludes 0 on the bad side and p < alpha.
        passed = result.verdict != "worse"
        p = "sign-flip permutation " + ("p < 0.0001" if result.p_permutation < 1e-4 else f"p = {result.p_permutation:.4f}")
        message = f"{ci}, {p}; " + (
            "shown worse than the baseline (CI excludes 0 and p < 1 - confidence)"
            if not passed
            else "not shown worse than the baseline"
        )
        threshold = 0.0
    if mdef.note:
        message += f" ({mdef.note})"
    check = GateCriterion(
        name=f"{mode} {spec.name} vs baseline {baseline.manifest.run_id}",
        kind=mode,
        metric=spec.name,
        slice=f"all domains/{subset}",
        passed=passed,
        observed=result.delta,
        threshold=threshold,
        ci_low=result.ci_low,
        ci_high=result.ci_high,
        message=message,
    )
    return check, result, notes, design


def _design(
    alignment: TableAlignment, spec: MetricSpec, *, margin: float, confidence: float, seed: int, target: float,
    available_tasks: int | None,
) -> GateDesign:
    """Whether the comparison's design (its tasks × the baseline's trials) can pass an unchanged strategy."""
    mdef = spec.definition
    assert mdef is not None and spec.k is not None
    sides = alignment.pair_table().sides(mdef)
    used = sides.usable(spec.k)
    n, x = sides.n_a[used], sides.x_a[used]
    try:
        return gate_design(
            x / n, mdef, spec.k, tasks=int(used.sum()), trials=int(n.min()), margin=margin, confidence=confidence,
            target=target, seed=seed, available_tasks=available_tasks,
        )
    except PowerError as exc:
        raise GateInputError(str(exc)) from None


def _design_line(design: GateDesign, baseline: Run) -> str:
    return (
        f"this design cannot pass an unchanged strategy: at {design.tasks} tasks × {design.trials} trials the "
        f"non-inferiority gate on {design.metric} at margin {design.margin:g} passes a candidate with "
        f"{baseline.manifest.run_id}'s per-task rates with probability {design.pass_probability:.2f} "
        f"(< {design.target:.0%}); {design.advice()} (tauguard power {baseline.path} --margin {design.margin:g} "
        f"--k {design.k}); not gated: exit 2, not a failure"
    )


# --------------------------------------------------------------------------- floors


def _slice(metrics: RunMetrics, subset: Subset, domain: str | None) -> SliceMetrics | None:
    if domain is None:
        return metrics.get(subset)
    if domain not in metrics.domains:
        return None
    # Per-domain slices exist only for multi-domain runs; a single-domain run's overall slice is it.
    return metrics.get(subset, domain) if len(metrics.domains) > 1 else metrics.get(subset)


def evaluate_floors(metrics: RunMetrics, config: FloorsConfig) -> list[GateCriterion]:
    """One :class:`GateCriterion` per floor and domain it applies to."""
    checks: list[GateCriterion] = []
    for floor in config.floors:
        domains: list[str | None] = list(metrics.domains) if floor.per_domain else [floor.domain]
        if floor.per_domain and not domains:
            domains = [None]
        for dom in domains:
            label = f"{dom or 'all domains'}/{floor.subset}"
            sl = _slice(metrics, floor.subset, dom)
            value = sl.value(floor.metric) if sl is not None else None
            bound = floor.min if floor.min is not None else floor.max
            name = f"floor {floor.describe()} [{label}]"
            if floor.name:
                name = f"{floor.name}: {name}"
            if value is None:
                reason = "domain not in run" if sl is None else "no data (no task can estimate it)"
                passed = floor.allow_missing
                message = f"{floor.metric} on {label}: {reason}" + ("; allowed" if passed else "")
            else:
                assert bound is not None
                close = math.isclose(value, bound, rel_tol=_REL_SLACK, abs_tol=0.0)
                passed = close or (value >= bound if floor.min is not None else value <= bound)
                message = (
                    f"{floor.metric} on {label} = {value:.3f} ({'meets' if passed else 'violates'} {floor.describe()})"
                )
            spec = parse_metric(floor.metric)
            if spec.definition is not None and spec.definition.note:
                message += f" ({spec.definition.note})"
            checks.append(
                GateCriterion(
                    name=name,
                    kind="floor",
                    metric=floor.metric,
                    slice=label,
                    passed=passed,
                    observed=value,
                    threshold=bound,
                    message=message,
                )
            )
    return checks


@dataclass
class GateContext:
    """What every criterion of a gate reads: the runs, the options, and what earlier criteria found.

    A criterion may add notes (``notes``) and fill the report fields it owns (``report``, passed
    to :class:`GateReport`); it returns its results.
    """

    run: Run
    baseline: Run | None
    run_ref: RunRef
    baseline_ref: RunRef | None
    options: dict[str, object]
    notes: list[str] = field(default_factory=list)
    report: dict[str, object] = field(default_factory=dict)


Criterion = Callable[[GateContext], list[GateCriterion]]
# Criteria every gate evaluates after the built-in ones (see register_criterion).
_REGISTERED: list[Criterion] = []


def register_criterion(criterion: Criterion) -> Criterion:
    """Add a criterion every :func:`run_gate` evaluates after the built-in ones (usable as a decorator)."""
    if criterion not in _REGISTERED:
        _REGISTERED.append(criterion)
    return criterion


def completeness_criterion(ctx: GateContext) -> list[GateCriterion]:
    """A failing check per incomplete run, unless ``allow_partial`` (then a note)."""
    out = []
    for role, r in (("candidate", ctx.run_ref), ("baseline", ctx.baseline_ref)):
        if r is None or r.complete:
            continue
        if ctx.options.get("allow_partial"):
            ctx.notes.append(f"{role} run {r.run_id} is incomplete ({r.completeness()}): gated anyway (--allow-partial)")
        else:
            out.append(completeness_check(r, role))
    return out


def exact_check(ctx: GateContext, reason: str) -> GateCriterion:
    """The outcome-by-outcome check of two deterministic runs (see :mod:`tauguard.analysis.exact`)."""
    assert ctx.baseline is not None
    metric = ctx.options.get("metric")
    kind = "pass^"
    if isinstance(metric, str):
        try:
            spec = parse_metric(metric, scalars=False)
        except ValueError:
            raise GateInputError(
                f"invalid --metric {metric!r}; allowed: " + ", ".join(f"{m.kind}K" for m in METRICS)
            ) from None
        assert spec.definition is not None
        kind = spec.definition.kind
        trials = min(ctx.run.manifest.trials, ctx.baseline.manifest.trials)
        if spec.k is None or spec.k > trials:
            ks = ", ".join(f"{m.kind}1..{m.kind}{trials}" for m in METRICS)
            raise GateInputError(f"invalid --metric {metric!r}; allowed: {ks}")
    subset: Subset = ctx.options.get("subset", "all")  # type: ignore[assignment]
    table = flip_table(ctx.baseline, ctx.run, metric=metric if isinstance(metric, str) else kind, subset=subset)
    allowed = int(ctx.options.get("max_regressions", 0))  # type: ignore[call-overload]
    if not table.compared:
        raise GateInputError(
            f"no (task, trial) has the outcome '{table.outcome}' in both runs: {table.metric} cannot be gated"
        )
    # A regression on a documented gold-conflict task is a guard refusing the policy-violating gold
    # write (issue 40): it is listed, and counted only when asked (--count-conflicts).
    counted = table.regressed if ctx.options.get("count_conflicts") else table.regressed - table.regressed_on_conflicts
    passed = exact_pass(counted, allowed)
    rel = "<=" if passed else ">"
    apart = (
        f" ({table.regressed_on_conflicts} on gold-conflict tasks not counted: their gold contradicts the policy; "
        "--count-conflicts counts them)" if table.regressed_on_conflicts and not ctx.options.get("count_conflicts") else ""
    )
    message = f"{flip_summary(table)}; {counted} regression(s) {rel} {allowed} allowed (--max-regressions){apart}"
    ctx.report.update(gate="exact", gate_reason=reason, flips=table, max_regressions=allowed)
    return GateCriterion(
        name=f"exact {table.metric} outcomes vs baseline {ctx.baseline.manifest.run_id}",
        kind="exact",
        metric=table.metric,
        slice=f"all domains/{subset}",
        passed=passed,
        observed=float(counted),
        threshold=float(allowed),
        message=message,
    )


# Metric kinds whose per-trial outcome the exact gate reads (tauguard.analysis.exact._outcome).
EXACT_KINDS = frozenset({"pass^", "pass@", "asr@", "process_valid^"})


def _metric_kind(metric: object) -> str:
    """The kind of ``--metric`` (``pass^`` when none is given or it does not parse)."""
    if not isinstance(metric, str):
        return "pass^"
    try:
        spec = parse_metric(metric, scalars=False)
    except ValueError:
        return "pass^"
    return spec.definition.kind if spec.definition is not None else "pass^"


def baseline_criterion(ctx: GateContext) -> list[GateCriterion]:
    """The baseline check: exact for deterministic sim pairs, statistical otherwise."""
    run, baseline = ctx.run, ctx.baseline
    if baseline is None:
        return []
    assert ctx.baseline_ref is not None
    opts = ctx.options
    exact, reason = exact_pairing(baseline, run, ctx.baseline_ref, ctx.run_ref)
    if exact and opts.get("statistical"):
        exact, reason = False, f"--statistical asked for intervals (the runs qualify for the exact gate: {reason})"
    kind = _metric_kind(opts.get("metric"))
    if exact and kind not in EXACT_KINDS:
        # A registered metric's per-trial event is its own (e.g. "every trial failed"): no unit outcome to flip.
        exact, reason = False, f"the exact gate compares per-trial outcomes of {', '.join(sorted(EXACT_KINDS))}, not {kind}"
    if exact:
        return [exact_check(ctx, reason)]
    mode: GateMode = opts["mode"]  # type: ignore[assignment]
    check, comparison, base_notes, design = check_baseline(
        run,
        baseline,
        metric=opts.get("metric"),  # type: ignore[arg-type]
        margin=opts["margin"],  # type: ignore[arg-type]
        mode=mode,
        n_resamples=opts["n_resamples"],  # type: ignore[arg-type]
        confidence=opts["confidence"],  # type: ignore[arg-type]
        seed=opts["seed"],  # type: ignore[arg-type]
        subset=opts["subset"],  # type: ignore[arg-type]
        min_tasks=opts.get("min_tasks"),  # type: ignore[arg-type]
        design_target=DESIGN_TARGET,
        available_tasks=opts.get("available_tasks"),  # type: ignore[arg-type]
    )
    # Checked after the comparison, so a pair with no common task gets that (more basic) error.
    pairing = pairing_differences(baseline.manifest, run.manifest)
    if pairing:
        warnings = [d.warning(baseline.manifest.run_id, run.manifest.run_id) for d in pairing]
        if not opts.get("allow_unpaired"):
            fields = ", ".join(d.field for d in pairing)
            raise UnpairedRunsError(
                f"run {run.manifest.run_id} and baseline {baseline.manifest.run_id} are not paired ({fields} "
                "differ); gate runs made with the same seed, faults, user model, split, tasks and tau2, "
                "or pass --allow-unpaired",
                pairing,
                warnings,
            )
        ctx.notes.extend(f"{w} (gated anyway: --allow-unpaired)" for w in warnings)
    ctx.notes.extend(base_notes)
    ctx.report.update(gate="statistical", gate_reason=reason, comparison=comparison, pairing=pairing, design=design)
    return [check]


def floors_criterion(ctx: GateContext) -> list[GateCriterion]:
    """The absolute floors, when a floors file was given."""
    floors = ctx.options.get("floors")
    if floors is None:
        return []
    assert isinstance(floors, FloorsConfig)
    return evaluate_floors(summarize_run(ctx.run), floors)


BUILTIN_CRITERIA: tuple[Criterion, ...] = (completeness_criterion, baseline_criterion, floors_criterion)


def run_gate(
    run: Run,
    *,
    baseline: Run | None = None,
    floors: FloorsConfig | None = None,
    metric: str | None = None,
    margin: float = 0.05,
    mode: GateMode = "non-inferiority",
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    subset: Subset = "all",
    min_tasks: int | None = None,
    allow_partial: bool = False,
    allow_unpaired: bool = False,
    max_regressions: int = 0,
    count_conflicts: bool = False,
    statistical: bool = False,
    available_tasks: int | None = None,
    criteria: Sequence[Criterion] = (),
) -> GateReport:
    """Evaluate every criterion (the built-in ones, the registered ones, then ``criteria``); the gate
    passes when every result passes.

    An incomplete run or baseline (not ``completed``, or fewer recorded than planned units)
    adds a failing completeness check unless ``allow_partial``. Two deterministic sim runs that
    differ only in the strategy are gated exactly (at most ``max_regressions`` regressed (task,
    trial) outcomes, those on documented gold-conflict tasks not counted unless ``count_conflicts``)
    unless ``statistical``. Otherwise a baseline whose manifest
    differs from the run's in a field pairing needs (:mod:`tauguard.analysis.pairing`: seed, fault
    profile, uptake, sim feedback mode, attack, user model, split, task ids, τ² version) raises
    :class:`UnpairedRunsError` unless ``allow_unpaired``: a paired gate on unpaired runs measures
    the difference in setup, not the strategy; and a non-inferiority design that cannot pass an
    unchanged strategy raises :class:`GateDesignError` (``available_tasks``: the domains' tasks, for
    its advice).
    """
    if baseline is None and floors is None:
        raise GateInputError("nothing to check: give --baseline RUN and/or --floors FILE")
    if baseline is None and metric is not None:
        raise GateInputError("--metric applies to the baseline comparison: give --baseline RUN")
    if margin < 0:
        raise GateInputError(f"margin must be >= 0, got {margin:g}")
    if max_regressions < 0:
        raise GateInputError(f"max regressions must be >= 0, got {max_regressions}")
    ref = run_ref(run)
    base_ref = run_ref(baseline) if baseline is not None else None
    ctx = GateContext(
        run=run,
        baseline=baseline,
        run_ref=ref,
        baseline_ref=base_ref,
        options={
            "floors": floors, "metric": metric, "margin": margin, "mode": mode, "n_resamples": n_resamples,
            "confidence": confidence, "seed": seed, "subset": subset, "min_tasks": min_tasks,
            "allow_partial": allow_partial, "allow_unpaired": allow_unpaired, "max_regressions": max_regressions,
            "count_conflicts": count_conflicts,
            "statistical": statistical, "available_tasks": available_tasks,
        },
    )
    checks: list[GateCriterion] = []
    for criterion in (*BUILTIN_CRITERIA, *_REGISTERED, *criteria):
        checks += criterion(ctx)
    notes = run_notes(*(r for r in (base_ref, ref) if r is not None), incomplete=False) + ctx.notes
    simulated = ref.simulated or (base_ref is not None and base_ref.simulated)
    statistical_gate = ctx.report.get("gate") == "statistical"
    return GateReport(
        passed=all(c.passed for c in checks),
        simulated=simulated,
        simulation_note=SIMULATION_NOTE if simulated else None,
        run=ref,
        baseline=base_ref,
        mode=mode if statistical_gate else None,
        margin=margin if statistical_gate and mode == "non-inferiority" else None,
        min_tasks=(min_tasks or default_min_tasks(confidence)) if statistical_gate else None,
        seed=seed if statistical_gate else None,
        n_resamples=n_resamples if statistical_gate else None,
        notes=notes,
        checks=checks,
        **ctx.report,  # type: ignore[arg-type]
    )
