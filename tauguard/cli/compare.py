"""`tauguard compare RUN_A RUN_B [RUN_C ...]`: paired comparison of runs against the first."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tauguard.cli.common import fail, note_live_runs, ranged, terminal_safe
from tauguard.gc_pause import gc_paused_command

if TYPE_CHECKING:
    from tauguard.analysis.axes import AxesComparison
    from tauguard.analysis.compare_model import CompareReport


class CompareFormat(str, Enum):
    """Output formats of `compare`."""

    table = "table"
    json = "json"
    markdown = "markdown"
    csv = "csv"


class SubsetChoice(str, Enum):
    """Task subsets a comparison can be restricted to."""

    all = "all"
    policy_violation = "policy_violation"
    mutation = "mutation"
    consistent = "consistent"
    conflict = "conflict"


@gc_paused_command  # short-lived: 10^5 rows per run at scale (tauguard.gc_pause)
def compare(
    runs: list[Path] = typer.Argument(..., help="Run directories; the first is the baseline."),
    fmt: CompareFormat = typer.Option(CompareFormat.table, "--format", help="table, json, markdown or csv"),
    tasks: bool = typer.Option(False, "--tasks", help="List the per-task differences at the primary k."),
    primary_k: int | None = typer.Option(
        None, "--primary-k", **ranged("--primary-k"), help="Declared primary k (default: the largest k both runs share)."
    ),
    seed: int = typer.Option(0, "--seed", **ranged("--seed (statistics)"), help="Seed of the permutation draws."),
    resamples: int = typer.Option(10_000, "--resamples", **ranged("--resamples"), help="Monte Carlo sign-flip patterns."),
    confidence: float = typer.Option(0.95, "--confidence", **ranged("--confidence"), help="CI confidence level."),
    subset: SubsetChoice = typer.Option(SubsetChoice.all, "--subset", help="all, policy_violation, mutation, consistent (gold agrees with the policy) or conflict (gold contradicts it: tauguard/domains/gold_conflicts.toml) tasks."),
    domain: str | None = typer.Option(None, "--domain", help="Compare only the tasks of one domain. \\[default: every domain]"),
    axes: bool = typer.Option(
        True, "--axes/--no-axes",
        help="Lead with the decision on two axes: violations prevented (neutral judge) and pass^k on policy-consistent tasks (reads every record).",
    ),
    uptake_curve: bool = typer.Option(
        False, "--uptake-curve", help="Sim runs at several uptakes: each strategy's Δ against the baseline per uptake (table, json, markdown)."
    ),
) -> None:
    """Compare runs task by task: the decision on two axes (violations prevented, pass^k on
    policy-consistent tasks), then Δpass^k with an adjusted paired CI, permutation p, McNemar.

    The first run is the baseline; each other run is compared to it. "better"/"worse" are
    said only when the CI excludes 0 and the permutation p is below 1 - confidence; otherwise
    the output gives the smallest |Δ| the design could detect. Runs whose manifests differ in
    what pairing needs get one warning line per difference.
    """
    from tauguard.analysis.compare import CompareError, compare_runs, load_runs
    from tauguard.analysis.render import render_compare_csv, render_compare_json, render_compare_text
    from tauguard.runs.store import RunLoadError

    if uptake_curve and fmt == CompareFormat.csv:
        fail("--uptake-curve prints table, json or markdown, not csv")
    if len(runs) < 2:
        fail("compare needs at least two runs: a baseline and a candidate")
    try:
        loaded = load_runs(runs, conversations=False, records=False)
        report = compare_runs(
            loaded,
            primary_k=primary_k,
            n_resamples=resamples,
            confidence=confidence,
            seed=seed,
            subset=subset.value,
            domain=domain,
            task_diffs=tasks,  # 10^5 rows at scale that only --tasks prints
        )
    except (RunLoadError, CompareError) as exc:
        fail(str(exc))
    note_live_runs(loaded)
    if subset is SubsetChoice.policy_violation and not uptake_curve:
        from tauguard.analysis.opportunity import no_violation_opportunity

        # a slice no run was tempted on: every strategy passes it; "no detectable difference" would mislead
        found = no_violation_opportunity(loaded, domain)
        if found is not None and found[1]:  # not one trial failed: there is nothing to compare
            if fmt == CompareFormat.json:
                import json

                typer.echo(json.dumps({"measurable": False, "reason": found[0]}))
            else:
                typer.echo(f"cannot measure: {found[0]}")
            return
        if found is not None:
            typer.echo(f"note: {found[0]}", err=True)
    if uptake_curve:
        _print_uptake_curve(report, fmt)
        return
    for run in loaded:
        if run.skipped_lines:
            typer.echo(f"warning: {run.skipped_lines} unparsable record line(s) ignored in {run.path}", err=True)
    if fmt in (CompareFormat.json, CompareFormat.csv):
        # Table and markdown print them in the body; machine formats keep stdout clean.
        for comp in report.comparisons:
            for line in comp.pairing_warnings():
                typer.echo(terminal_safe(f"warning: {line}"), err=True)
    decision = _axes(runs, primary_k, confidence, seed, resamples, domain) if axes and fmt != CompareFormat.csv else []
    if fmt == CompareFormat.json:
        if not decision:
            typer.echo(render_compare_json(report, tasks=tasks))
        else:
            import json

            data = json.loads(render_compare_json(report, tasks=tasks))
            data["axes"] = [c.model_dump(mode="json") for c in decision]
            typer.echo(json.dumps(data, indent=2))
    elif fmt == CompareFormat.csv:
        typer.echo(terminal_safe(render_compare_csv(report, tasks=tasks)), nl=False)
    else:
        from tauguard.analysis.axes_render import render_axes_comparisons

        body = render_compare_text(report, fmt.value, tasks=tasks)
        head = render_axes_comparisons(decision, fmt.value)
        if head:
            # The decision leads, under the simulation label when the body starts with it.
            note, sep, rest = body.partition("\n")
            if report.simulation_note and report.simulation_note in note:
                body = f"{note}\n\n{head}\n{sep}{rest}"
            else:
                body = f"{head}\n\n{body}"
        if fmt == CompareFormat.table:
            from tauguard.analysis.legend import legend_lines
            from tauguard.tables import fit_text

            body = fit_text("\n".join([body.rstrip("\n"), "", *legend_lines(["pass^", "pv^", "ASR@"], ["Δ, CI, p"])]))
        typer.echo(terminal_safe(body))


def _axes(runs: list[Path], primary_k: int | None, confidence: float, seed: int, resamples: int, domain: str | None) -> list[AxesComparison]:
    """Both axes of every candidate against the baseline (tauguard.analysis.axes)."""
    from tauguard.analysis.axes import compare_axes
    from tauguard.analysis.compare import load_runs
    from tauguard.analysis.compare_model import CompareError
    from tauguard.faults.violations import violated_clauses
    from tauguard.runs.store import RunLoadError

    try:
        full = load_runs(runs, conversations=True)
        return compare_axes(full, violated_clauses, primary_k=primary_k, confidence=confidence, seed=seed,
                            n_resamples=resamples, domain=domain)
    except (RunLoadError, CompareError) as exc:
        fail(str(exc))


def _print_uptake_curve(report: CompareReport, fmt: CompareFormat) -> None:
    """`--uptake-curve`: the comparisons as one row per strategy and metric, one column per uptake."""
    from tauguard.analysis.compare_model import CompareError
    from tauguard.analysis.uptake_curve import render_curve_text, uptake_curve

    try:
        curve = uptake_curve(report)
    except CompareError as exc:
        fail(str(exc))
    if fmt == CompareFormat.json:
        typer.echo(curve.model_dump_json(indent=2))
    else:
        typer.echo(terminal_safe(render_curve_text(curve, fmt.value)))
