"""`tauguard check` logic: a CI gate against a baseline run and/or absolute floors.

Baseline checks (``mode``):

- ``non-inferiority`` (default): passes when the lower CI bound of Δ = candidate - baseline on
  the chosen metric is above ``-margin``: the candidate is shown to be no worse than the
  baseline by more than the margin. Too few tasks (a wide CI) therefore fail the gate.
- ``regression``: fails only when the CI upper bound is below 0: the candidate is shown to be
  worse. Too few tasks therefore pass the gate.

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

import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from tauguard.compare import (
    SIMULATION_NOTE,
    CompareError,
    KComparison,
    RunRef,
    align,
    compare_metric,
    run_ref,
)
from tauguard.metrics import (
    RunMetrics,
    SliceMetrics,
    Subset,
    parse_metric,
    select,
    summarize_run,
    task_outcomes,
)
from tauguard.store import Run

GateMode = Literal["non-inferiority", "regression"]
CheckKind = Literal["non-inferiority", "regression", "floor"]
_FLOAT_SLACK = 1e-12  # a mean of 4/5 must meet a floor of 0.8 despite float rounding


class GateInputError(ValueError):
    """Bad gate input (metric name, floors file, missing runs); one-line message, exit 2."""


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


def _validation_line(exc: ValidationError) -> str:
    err = exc.errors()[0]
    # ("floor", 0, "metric") -> "floor #1 metric": count tables from 1 as a reader of the file would.
    parts = [f"#{p + 1}" if isinstance(p, int) else str(p) for p in err["loc"]]
    where = " ".join(parts) or "file"
    msg = str(err["msg"]).removeprefix("Value error, ")
    return f"{where}: {msg}"


def load_floors(path: str | Path) -> FloorsConfig:
    """Read and validate a floors TOML file; raises :class:`GateInputError` with one line."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GateInputError(f"floors file not found: {path}") from None
    except OSError as exc:
        raise GateInputError(f"cannot read floors file {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise GateInputError(f"invalid TOML in {path}: {exc}") from None
    try:
        config = FloorsConfig.model_validate(data)
    except ValidationError as exc:
        raise GateInputError(f"invalid floors file {path}: {_validation_line(exc)}") from None
    if not config.floors:
        raise GateInputError(f"floors file {path} defines no [[floor]]")
    return config


# --------------------------------------------------------------------------- results


class CheckResult(BaseModel):
    """One gate check (a JUnit test case)."""

    name: str
    kind: CheckKind
    metric: str
    slice: str  # e.g. "all domains/all", "retail/mutation"
    passed: bool
    observed: float | None  # the metric (floors) or Δ (baseline checks)
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
    seed: int | None = None
    n_resamples: int | None = None
    comparison: KComparison | None = None
    checks: list[CheckResult]

    @property
    def failed(self) -> list[CheckResult]:
        """The checks that failed."""
        return [c for c in self.checks if not c.passed]


# --------------------------------------------------------------------------- baseline check


def _allowed_metrics(k_max: int) -> str:
    if k_max == 1:
        return "pass^1, pass@1"
    return f"pass^1..pass^{k_max}, pass@1..pass@{k_max}"


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
) -> tuple[CheckResult, KComparison]:
    """Gate the run against the baseline on one metric (default: pass^k at the largest common k).

    Raises :class:`GateInputError` for a metric that is malformed or not shared by both runs,
    and :class:`CompareError` when the runs cannot be compared at all.
    """
    if margin < 0:
        raise GateInputError(f"margin must be >= 0, got {margin:g}")
    alignment = align(select(task_outcomes(baseline.records), subset), select(task_outcomes(run.records), subset))
    k_max = alignment.max_common_k
    if not alignment.pairs:
        names = f"{baseline.manifest.run_id} and {run.manifest.run_id}"
        if alignment.dropped.no_evaluated_trials:
            raise CompareError(f"runs {names} share no k: no common task has an evaluated trial in both runs")
        raise CompareError(f"runs {names} have no task in common")
    if metric is None:
        spec = parse_metric(f"pass^{k_max}")
    else:
        try:
            spec = parse_metric(metric, scalars=False)
        except ValueError:
            spec = None
        if spec is None or spec.kind not in ("pass^", "pass@") or spec.k is None or spec.k > k_max:
            raise GateInputError(f"invalid --metric {metric!r}; allowed: {_allowed_metrics(k_max)}")
    result = compare_metric(
        alignment.pairs, spec, n_resamples=n_resamples, confidence=confidence, seed=seed, primary=True
    )
    pct = f"{confidence:.0%}"
    ci = f"Δ = {result.delta:+.3f}, {pct} CI [{result.ci_low:+.3f}, {result.ci_high:+.3f}] over {result.tasks} tasks"
    if mode == "non-inferiority":
        passed = result.ci_low > -margin
        rel = ">" if passed else "<="
        message = f"{ci}; lower bound {result.ci_low:+.3f} {rel} -{margin:g} (margin)"
        threshold = -margin
    else:
        passed = not result.ci_high < 0
        message = f"{ci}; " + (
            "upper bound below 0: shown worse than the baseline"
            if not passed
            else "upper bound >= 0: not shown worse than the baseline"
        )
        threshold = 0.0
    check = CheckResult(
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
    return check, result


# --------------------------------------------------------------------------- floors


def _slice(metrics: RunMetrics, subset: Subset, domain: str | None) -> SliceMetrics | None:
    if domain is None:
        return metrics.get(subset)
    if domain not in metrics.domains:
        return None
    # Per-domain slices exist only for multi-domain runs; a single-domain run's overall slice is it.
    return metrics.get(subset, domain) if len(metrics.domains) > 1 else metrics.get(subset)


def evaluate_floors(metrics: RunMetrics, config: FloorsConfig) -> list[CheckResult]:
    """One :class:`CheckResult` per floor and domain it applies to."""
    checks: list[CheckResult] = []
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
                if floor.min is not None:
                    passed = value >= floor.min - _FLOAT_SLACK
                else:
                    passed = value <= floor.max + _FLOAT_SLACK  # type: ignore[operator]
                message = (
                    f"{floor.metric} on {label} = {value:.3f} ({'meets' if passed else 'violates'} {floor.describe()})"
                )
            checks.append(
                CheckResult(
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
) -> GateReport:
    """Run every requested check; the gate passes when all checks pass."""
    if baseline is None and floors is None:
        raise GateInputError("nothing to check: give --baseline RUN and/or --floors FILE")
    if baseline is None and metric is not None:
        raise GateInputError("--metric applies to the baseline comparison: give --baseline RUN")
    checks: list[CheckResult] = []
    comparison: KComparison | None = None
    if baseline is not None:
        check, comparison = check_baseline(
            run,
            baseline,
            metric=metric,
            margin=margin,
            mode=mode,
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
            subset=subset,
        )
        checks.append(check)
    ref = run_ref(run)
    base_ref = run_ref(baseline) if baseline is not None else None
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
        seed=seed if baseline is not None else None,
        n_resamples=n_resamples if baseline is not None else None,
        comparison=comparison,
        checks=checks,
    )
