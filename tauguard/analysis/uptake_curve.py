"""Each guard's Δ against the baseline as a function of the sim agent's assumed uptake.

Uptake (the probability that the sim agent acts on a guard's feedback) is a SIMULATION
ASSUMPTION: no real run measures it. This section of `tauguard compare --uptake-curve` lays the
comparisons of runs made at several uptakes (``tauguard run --uptake 0.2,0.5,0.8``) side by side,
one row per strategy and metric, one column per uptake, so a gain is read together with the
uptake it needs. Built from a :class:`~tauguard.analysis.compare_model.CompareReport` of stored runs only
(no tau2, no litellm).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from tauguard.analysis.compare_model import CompareError, CompareReport, KComparison

ORACLE = "oracle"
UPTAKE_FIELD = "fault uptake"  # tauguard.analysis.pairing's name for the field the curve varies on purpose
ORACLE_LABEL = "oracle: UPPER BOUND (reacts from the gold plan)"


class CurvePoint(BaseModel):
    """One candidate run's Δ against the baseline on one metric at the primary k."""

    strategy: str
    run_id: str
    sim_feedback: str
    uptake: float
    metric: str  # e.g. "pass^4"
    baseline: float
    candidate: float
    delta: float
    ci_low: float
    ci_high: float
    verdict: str
    tasks: int


class UptakeCurve(BaseModel):
    """Every candidate's points, with what the reader must know to read them."""

    baseline_run: str
    baseline_strategy: str
    confidence: float
    simulated: bool
    simulation_note: str | None
    assumption: str = "uptake is an assumption of the sim agent (no real run measures it)"
    points: list[CurvePoint] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def uptakes(self) -> list[float]:
        """The uptakes the points cover, ascending."""
        return sorted({p.uptake for p in self.points})

    def rows(self) -> list[tuple[str, str, str, dict[float, CurvePoint]]]:
        """(strategy, sim feedback, metric, uptake -> point), in the order the runs were given."""
        out: dict[tuple[str, str, str], dict[float, CurvePoint]] = {}
        for p in self.points:
            out.setdefault((p.strategy, p.sim_feedback, p.metric), {})[p.uptake] = p
        return [(s, f, m, cells) for (s, f, m), cells in out.items()]


def _point(comp_strategy: str, run_id: str, feedback: str, uptake: float, r: KComparison) -> CurvePoint:
    return CurvePoint(
        strategy=comp_strategy, run_id=run_id, sim_feedback=feedback, uptake=uptake, metric=r.metric,
        baseline=r.baseline, candidate=r.candidate, delta=r.delta, ci_low=r.ci_low, ci_high=r.ci_high,
        verdict=r.verdict, tasks=r.tasks,
    )


def uptake_curve(report: CompareReport) -> UptakeCurve:
    """The curve of a comparison report whose candidates are sim runs with a recorded uptake.

    Raises :class:`CompareError` when a candidate has no uptake (not a guarded sim run) or two
    candidates share strategy, sim feedback and uptake (the cell would be ambiguous).
    """
    if not report.comparisons:
        raise CompareError("an uptake curve needs a baseline and at least one candidate run")
    base = report.comparisons[0].baseline
    curve = UptakeCurve(
        baseline_run=base.run_id, baseline_strategy=base.strategy, confidence=report.confidence,
        simulated=report.simulated, simulation_note=report.simulation_note,
    )
    seen: dict[tuple[str, str, float], str] = {}
    for comp in report.comparisons:
        cand = comp.candidate
        if cand.uptake is None or cand.sim_feedback is None:
            raise CompareError(
                f"run {cand.run_id} records no sim uptake (not a sim run of a guard): an uptake curve compares sim runs"
            )
        key = (cand.strategy, cand.sim_feedback, float(cand.uptake))
        if key in seen:
            raise CompareError(
                f"runs {seen[key]} and {cand.run_id} are both {cand.strategy} with sim feedback "
                f"{cand.sim_feedback} at uptake {cand.uptake:g}: give one run per cell"
            )
        seen[key] = cand.run_id
        for mc in comp.metric_comparisons():
            primary = next(r for r in mc.results if r.primary)
            curve.points.append(_point(cand.strategy, cand.run_id, cand.sim_feedback, float(cand.uptake), primary))
        # The uptake is the curve's axis: a difference there is the design, not a pairing defect.
        for diff in comp.pairing:
            if diff.field != UPTAKE_FIELD:
                curve.notes.append(f"{cand.run_id}: {diff.warning(base.run_id, cand.run_id)}")
        curve.notes.extend(f"{cand.run_id}: {n}" for n in comp.notes)
    if base.uptake is not None and any(p.uptake != base.uptake for p in curve.points):
        curve.notes.append(
            f"the baseline {base.run_id} ran at uptake {base.uptake:g}"
            + (": a strategy without a guard never meets guard feedback, so its uptake does not matter" if base.strategy == "react" else "")
        )
    if any(p.sim_feedback == ORACLE for p in curve.points):
        curve.notes.append("rows marked oracle: the sim agent reacted from the gold plan, an UPPER BOUND on a guard's gain")
    return curve


def _cell(p: CurvePoint | None) -> str:
    if p is None:
        return "-"
    mark = {"better": " better", "worse": " worse"}.get(p.verdict, "")
    return f"{p.delta:+.3f} [{p.ci_low:+.3f}, {p.ci_high:+.3f}]{mark}"


def render_curve_text(curve: UptakeCurve, fmt: str = "table") -> str:
    """The curve as a table (``table``) or a markdown table (``markdown``), with its labels."""
    from tauguard.tables import fit_table

    ups = curve.uptakes()
    headers = ["strategy", "sim feedback", "metric", *[f"uptake {u:g}" for u in ups]]
    body = []
    for strategy, feedback, metric, cells in curve.rows():
        shown = ORACLE_LABEL if feedback == ORACLE else feedback
        body.append([strategy, shown, f"Δ{metric}", *[_cell(cells.get(u)) for u in ups]])
    lines = []
    if curve.simulation_note:
        lines.append(f"**{curve.simulation_note}**" if fmt == "markdown" else curve.simulation_note)
        lines.append("")
    lines.append(
        f"Uptake curve: Δ against {curve.baseline_strategy} ({curve.baseline_run}) at the primary k, "
        f"{curve.confidence:.0%} CI; {curve.assumption}."
    )
    lines.append("")
    lines.append(fit_table(body, headers=headers, tablefmt="github" if fmt == "markdown" else "simple"))
    if curve.notes:
        lines.append("")
        lines.extend(f"note: {n}" for n in curve.notes)
    return "\n".join(lines)
