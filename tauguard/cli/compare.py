"""`tauguard compare RUN_A RUN_B [RUN_C ...]`: paired comparison of runs against the first."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tauguard.cli.common import fail, note_live_runs, ranged, terminal_safe
from tauguard.gc_pause import gc_paused_command

if TYPE_CHECKING:
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
    subset: SubsetChoice = typer.Option(SubsetChoice.all, "--subset", help="all, policy_violation or mutation tasks."),
    domain: str | None = typer.Option(None, "--domain", help="Compare only the tasks of one domain. \\[default: every domain]"),
    uptake_curve: bool = typer.Option(
        False, "--uptake-curve", help="Sim runs at several uptakes: each strategy's Δ against the baseline per uptake (table, json, markdown)."
    ),
) -> None:
    """Compare runs task by task: Δpass^k with an adjusted paired CI, permutation p, McNemar.

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
    if fmt == CompareFormat.json:
        typer.echo(render_compare_json(report, tasks=tasks))
    elif fmt == CompareFormat.csv:
        typer.echo(terminal_safe(render_compare_csv(report, tasks=tasks)), nl=False)
    else:
        typer.echo(terminal_safe(render_compare_text(report, fmt.value, tasks=tasks)))


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
