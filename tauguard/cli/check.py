"""`tauguard check RUN [--baseline RUN_B] [--floors FILE]`: a CI regression gate.

Exit codes: 0 every check passed, 1 a check failed, 2 usage or input error.
"""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from tauguard.cli.common import EXIT_CHECK_FAILED, check_output_file, fail, note_live_runs, ranged, terminal_safe
from tauguard.errors import TauguardInputError
from tauguard.gc_pause import gc_paused_command

if TYPE_CHECKING:
    from tauguard.analysis.axes import AxesGate
    from tauguard.analysis.gate import GateReport


class CheckFormat(str, Enum):
    """Output formats of `check`."""

    table = "table"
    json = "json"
    markdown = "markdown"


class ModeChoice(str, Enum):
    """Baseline check modes."""

    non_inferiority = "non-inferiority"
    regression = "regression"


class SubsetChoice(str, Enum):
    """Task subsets the baseline comparison can be restricted to."""

    all = "all"
    policy_violation = "policy_violation"
    mutation = "mutation"


@gc_paused_command  # short-lived: 10^5 rows per run at scale (tauguard.gc_pause)
def check(
    run: Path = typer.Argument(..., help="The run to gate (the candidate)."),
    baseline: Path | None = typer.Option(None, "--baseline", help="Baseline run to compare against. \\[default: none: floors only]"),
    metric: str | None = typer.Option(
        None,
        "--metric",
        help="pass^K, pass@K or asr@K for the baseline check (default: pass^ at the largest k every common task has).",
    ),
    margin: float = typer.Option(0.05, "--margin", **ranged("--margin"), help="Non-inferiority margin on Δ."),
    mode: ModeChoice = typer.Option(
        ModeChoice.non_inferiority,
        "--mode",
        help="non-inferiority: fail unless the CI bound on the bad side is within the margin; "
        "regression: fail only when shown worse (CI excludes 0 and permutation p < 1 - confidence).",
    ),
    min_tasks: int | None = typer.Option(
        None,
        "--min-tasks",
        **ranged("--min-tasks"),
        help="Fewest compared tasks a baseline check accepts (default: 6 at 95% confidence, the fewest "
        "with which the sign-flip test can reject).",
    ),
    allow_partial: bool = typer.Option(
        False, "--allow-partial", help="Gate an incomplete run (not completed, or units missing) instead of failing."
    ),
    allow_unpaired: bool = typer.Option(
        False,
        "--allow-unpaired",
        help="Gate a run whose manifest differs from the baseline's in what pairing needs (seed, faults, "
        "user model, split, tasks, tau2 version) instead of refusing it.",
    ),
    floors: Path | None = typer.Option(None, "--floors", help="TOML file of absolute floors (see configs/ci.toml). \\[default: none]"),
    fmt: CheckFormat = typer.Option(CheckFormat.table, "--format", help="table (human summary), json or markdown"),
    junit: Path | None = typer.Option(None, "--junit", help="Write JUnit XML (one test case per check). \\[default: none]"),
    github_summary: bool = typer.Option(
        False, "--github-summary", help="Append a markdown summary to $GITHUB_STEP_SUMMARY when set."
    ),
    seed: int = typer.Option(0, "--seed", **ranged("--seed (statistics)"), help="Seed of the permutation draws."),
    resamples: int = typer.Option(10_000, "--resamples", **ranged("--resamples"), help="Monte Carlo sign-flip patterns."),
    confidence: float = typer.Option(0.95, "--confidence", **ranged("--confidence"), help="CI confidence level."),
    subset: SubsetChoice = typer.Option(SubsetChoice.all, "--subset", help="Tasks of the baseline comparison."),
    max_regressions: int = typer.Option(
        0,
        "--max-regressions",
        min=0,
        help="Exact gate (two deterministic sim runs that differ only in the strategy): regressed "
        "(task, trial) outcomes allowed.",
    ),
    count_conflicts: bool = typer.Option(
        False,
        "--count-conflicts",
        help="Exact gate: count regressions on documented gold-conflict tasks (tauguard/domains/gold_conflicts.toml), "
        "which a guard refusing the policy-violating gold write loses by being right; by default they are listed, not counted.",
    ),
    statistical: bool = typer.Option(
        False, "--statistical", help="Gate on intervals even when the runs qualify for the exact gate."
    ),
) -> None:
    """Gate a run against a baseline (exactly, outcome by outcome, for two deterministic sim runs
    that differ only in the strategy; else non-inferiority or regression on an interval), and/or floors.

    Exit 0 when every check passes, 1 when one fails, 2 on a usage or input error, or when the
    design cannot pass an unchanged strategy at the margin (the line names a design that can).
    """
    from tauguard.analysis.compare import CompareError, load_runs
    from tauguard.analysis.gate import GateInputError, UnpairedRunsError, load_floors, run_gate
    from tauguard.cli.power import domain_task_count
    from tauguard.analysis.render import render_gate_json, render_gate_junit, render_gate_text
    from tauguard.runs.store import RunLoadError

    if junit is not None:
        check_output_file(junit, "--junit")
    try:
        if baseline is None and floors is None:
            raise GateInputError("nothing to check: give --baseline RUN and/or --floors FILE")
        floors_config = load_floors(floors) if floors is not None else None
        paths = [run] + ([baseline] if baseline is not None else [])
        loaded = load_runs(paths, conversations=False, records=False)
        note_live_runs(loaded)
        if baseline is not None and subset is SubsetChoice.policy_violation:
            from tauguard.analysis.opportunity import no_violation_opportunity

            found = no_violation_opportunity(loaded)
            if found is not None and found[1]:  # a gate that would pass whatever the guard does
                raise GateInputError(f"cannot gate: {found[0]}")
            if found is not None:
                typer.echo(f"warning: {found[0]}", err=True)
        report = run_gate(
            loaded[0],
            baseline=loaded[1] if baseline is not None else None,
            floors=floors_config,
            metric=metric,
            margin=margin,
            mode=mode.value,
            n_resamples=resamples,
            confidence=confidence,
            seed=seed,
            subset=subset.value,
            min_tasks=min_tasks,
            allow_partial=allow_partial,
            allow_unpaired=allow_unpaired,
            max_regressions=max_regressions,
            count_conflicts=count_conflicts,
            statistical=statistical,
            available_tasks=domain_task_count(loaded[1]) if baseline is not None and subset == SubsetChoice.all else None,
        )
        if floors_config is not None and floors_config.axes is not None:
            _gate_axes(report, paths, floors_config.axes, confidence=confidence, seed=seed, n_resamples=resamples)
    except UnpairedRunsError as exc:
        for line in exc.warnings:
            typer.echo(terminal_safe(f"warning: {line}"), err=True)
        fail(str(exc))
    except (GateInputError, RunLoadError, CompareError) as exc:
        fail(str(exc))
    for diff in report.pairing:
        typer.echo(terminal_safe(f"warning: {diff.warning(report.baseline.run_id, report.run.run_id)}"), err=True)  # type: ignore[union-attr]

    if junit is not None:
        from tauguard.output_file import write_output

        write_output(junit, render_gate_junit(report), "--junit")
    if github_summary:
        target = os.environ.get("GITHUB_STEP_SUMMARY")
        if target:
            try:
                _append_summary(target, render_gate_text(report, "markdown") + "\n")
            except TauguardInputError as exc:
                fail(f"cannot append to $GITHUB_STEP_SUMMARY ({target}): {exc.first_line()}")
            except OSError as exc:
                fail(f"cannot append to $GITHUB_STEP_SUMMARY ({target}): {exc.strerror or exc}")
        else:
            typer.echo("note: $GITHUB_STEP_SUMMARY is not set; no step summary written", err=True)

    if fmt == CheckFormat.json:
        typer.echo(render_gate_json(report))
    elif fmt == CheckFormat.table:
        from tauguard.tables import fit_text

        typer.echo(terminal_safe(fit_text(render_gate_text(report, fmt.value))), nl=False)
    else:
        typer.echo(terminal_safe(render_gate_text(report, fmt.value)), nl=False)
    if not report.passed:
        raise typer.Exit(EXIT_CHECK_FAILED)


def _gate_axes(report: GateReport, paths: list[Path], gate: AxesGate, **kw: Any) -> None:
    """Add the floors file's ``[axes]`` criteria (tauguard.analysis.axes_gate) to the report."""
    from tauguard.analysis.axes_gate import axes_criteria
    from tauguard.analysis.compare import load_runs
    from tauguard.faults.violations import violated_clauses

    if len(paths) < 2:
        # Floors alone are a valid gate (the same file serves both uses); say what was not checked.
        report.notes.append("the floors file's [axes] gate compares against a baseline: not evaluated without --baseline RUN")
        return
    full = load_runs(paths, conversations=True)
    report.checks += axes_criteria(full[0], full[1], violated_clauses, gate, **kw)
    report.passed = all(c.passed for c in report.checks)


def _append_summary(target: str, text: str) -> None:
    """Append ``text`` to a regular file (created when absent). Opened non-blocking and checked
    before a byte is written: a FIFO would block the gate, a device swallow the summary."""
    import stat

    try:  # named before the open: a FIFO without a reader fails the open with a cryptic ENXIO
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        raise TauguardInputError("not a regular file (a FIFO, a device or a socket); give a file")
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0), 0o644)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise TauguardInputError("not a regular file (a FIFO, a device or a socket); give a file")
        os.set_blocking(fd, True)
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)
