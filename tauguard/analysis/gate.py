"""The gate of `tauguard check`: a CI gate against a baseline run and/or absolute floors.

Baseline checks (``mode``), on pass^K, pass@K or asr@K (any k-metric of
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
from tauguard.analysis.task_table import run_task_table
from tauguard.analysis.summary import summarize_run
from tauguard.analysis.pairing import PairingDifference, pairing_differences
from tauguard.analysis.stats import min_tasks_to_reject
from tauguard.runs.records import SIMULATION_NOTE
from tauguard.runs.store import Run

GateMode = Literal["non-inferiority", "regression"]
CheckKind = Literal["non-inferiority", "regression", "floor", "completeness", "superiority"]
# A mean of 4/5 must meet a floor of 0.8 despite float rounding; relative, so that a floor on a
# tiny value (pass^28 of 60 trials is ~1e-15) is not met by 0.
_REL_SLACK = 1e-9


class GateInputError(TauguardInputError):
    """Bad gate input (metric name, floors file, missing runs); one-line message, exit 2."""


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
    """One gate check (a JUnit test case)."""

    name: str
    kind: CheckKind
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
) -> tuple[GateCriterion, KComparison, list[str]]:
    """Gate the run against the baseline on one metric; return the check, the comparison and notes.

    Default metric: pass^k at the largest k that every common task supports. The metric may be
    any k-metric of :data:`~tauguard.analysis.metrics.METRICS` (pass^K, pass@K, asr@K); verdicts follow its
    direction. The check fails when fewer than ``min_tasks`` tasks enter the comparison
    (default :func:`default_min_tasks`). Raises :class:`GateInputError` for a metric that is
    malformed or not shared by both runs, and :class:`CompareError` when the runs cannot be
    compared at all.
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
    ci = f"Δ = {result.delta:+.3f}, {pct} CI [{result.ci_low:+.3f}, {result.ci_high:+.3f}] over {result.tasks} tasks"
    hib = mdef.higher_is_better
    if result.tasks < need:
        passed = False
        message = (
            f"{ci}; only {result.tasks} task(s) can estimate {spec.name} in both runs, a baseline gate needs at "
            f"least {need} (--min-tasks): too little evidence to gate on"
        )
        threshold = -margin if mode == "non-inferiority" else 0.0
    elif mode == "non-inferiority":
        # Worse means lower for pass^k, higher for ASR: the bound on the bad side must stay within the margin.
        bound = result.ci_low if hib else result.ci_high
        passed = bound > -margin if hib else bound < margin
        side = "lower" if hib else "upper"
        limit = f"-{margin:g}" if hib else f"+{margin:g}"
        rel = (">" if hib else "<") if passed else ("<=" if hib else ">=")
        message = f"{ci}; {side} bound {bound:+.3f} {rel} {limit} (margin)"
        threshold = -margin if hib else margin
    else:
        # The same rule as compare's verdict: the CI excludes 0 on the bad side and p < alpha.
        passed = result.verdict != "worse"
        p = "p < 0.0001" if result.p_permutation < 1e-4 else f"p = {result.p_permutation:.4f}"
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
    return check, result, notes


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
) -> GateReport:
    """Run every requested check; the gate passes when all checks pass.

    An incomplete run or baseline (not ``completed``, or fewer recorded than planned units)
    adds a failing completeness check unless ``allow_partial``. A baseline whose manifest
    differs from the run's in a field pairing needs (:mod:`tauguard.analysis.pairing`: seed, fault
    profile, uptake, sim feedback mode, attack, user model, split, task ids, τ² version) raises
    :class:`UnpairedRunsError` unless ``allow_unpaired``: a paired gate on unpaired runs measures
    the difference in setup, not the strategy.
    """
    if baseline is None and floors is None:
        raise GateInputError("nothing to check: give --baseline RUN and/or --floors FILE")
    if baseline is None and metric is not None:
        raise GateInputError("--metric applies to the baseline comparison: give --baseline RUN")
    ref = run_ref(run)
    base_ref = run_ref(baseline) if baseline is not None else None
    checks: list[GateCriterion] = []
    notes: list[str] = []
    for role, r in (("candidate", ref), ("baseline", base_ref)):
        if r is None or r.complete:
            continue
        if allow_partial:
            notes.append(f"{role} run {r.run_id} is incomplete ({r.completeness()}): gated anyway (--allow-partial)")
        else:
            checks.append(completeness_check(r, role))
    comparison: KComparison | None = None
    pairing: list[PairingDifference] = []
    if baseline is not None:
        check, comparison, base_notes = check_baseline(
            run,
            baseline,
            metric=metric,
            margin=margin,
            mode=mode,
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
            subset=subset,
            min_tasks=min_tasks,
        )
        checks.append(check)
        # Checked after the comparison, so a pair with no common task gets that (more basic) error.
        pairing = pairing_differences(baseline.manifest, run.manifest)
        if pairing:
            warnings = [d.warning(baseline.manifest.run_id, run.manifest.run_id) for d in pairing]
            if not allow_unpaired:
                fields = ", ".join(d.field for d in pairing)
                raise UnpairedRunsError(
                    f"run {run.manifest.run_id} and baseline {baseline.manifest.run_id} are not paired ({fields} "
                    "differ); gate runs made with the same seed, faults, user model, split, tasks and tau2, "
                    "or pass --allow-unpaired",
                    pairing,
                    warnings,
                )
            notes += [f"{w} (gated anyway: --allow-unpaired)" for w in warnings]
        notes += base_notes
    notes = run_notes(*(r for r in (base_ref, ref) if r is not None), incomplete=False) + notes
    if floors is not None:
        checks += evaluate_floors(summarize_run(run), floors)
    simulated = ref.simulated or (base_ref is not None and base_ref.simulated)
    return GateReport(
        passed=all(c.passed for c in checks),
        simulated=simulated,
        simulation_note=SIMULATION_NOTE if simulated else None,
        run=ref,
        baseline=base_ref,
        mode=mode if baseline is not None else None,
        margin=margin if baseline is not None and mode == "non-inferiority" else None,
        min_tasks=(min_tasks or default_min_tasks(confidence)) if baseline is not None else None,
        seed=seed if baseline is not None else None,
        n_resamples=n_resamples if baseline is not None else None,
        comparison=comparison,
        pairing=pairing,
        notes=notes,
        checks=checks,
    )
