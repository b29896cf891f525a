"""`tauguard report RUN [RUN ...] -o report.html`: one self-contained HTML page comparing runs."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from tauguard.cli.common import check_output_file, fail, note_live_runs, ranged


class ModeChoice(str, Enum):
    """Baseline check modes (as in `tauguard check`)."""

    non_inferiority = "non-inferiority"
    regression = "regression"


def report(
    runs: list[Path] = typer.Argument(..., help="Run directories; the first is the baseline."),
    output: Path = typer.Option(Path("report.html"), "--output", "-o", help="HTML file to write."),
    title: str | None = typer.Option(None, "--title", help="Page title (default: the run ids)."),
    primary_k: int | None = typer.Option(
        None, "--primary-k", **ranged("--primary-k"), help="Declared primary k (default: the largest k the runs share)."
    ),
    seed: int = typer.Option(0, "--seed", **ranged("--seed (statistics)"), help="Seed of the permutation draws."),
    resamples: int = typer.Option(10_000, "--resamples", **ranged("--resamples"), help="Monte Carlo sign-flip permutation patterns."),
    confidence: float = typer.Option(0.95, "--confidence", **ranged("--confidence"), help="CI confidence level."),
    floors: Path | None = typer.Option(None, "--floors", help="TOML floors file: add `check` results per run. \\[default: none]"),
    baseline: Path | None = typer.Option(
        None, "--baseline", help="Gate every other run against this run (as `tauguard check --baseline`). \\[default: none]"
    ),
    metric: str | None = typer.Option(None, "--metric", help="pass^K or pass@K of the baseline gate. \\[default: pass^K at the primary k]"),
    margin: float = typer.Option(0.05, "--margin", **ranged("--margin"), help="Non-inferiority margin of the baseline gate."),
    mode: ModeChoice = typer.Option(ModeChoice.non_inferiority, "--mode", help="non-inferiority or regression."),
    audits: list[Path] = typer.Option(
        [], "--audit", help="An audit report (tauguard audit --output) of one of the runs: adds its false holds."
    ),
    labels: list[Path] = typer.Option(
        [], "--labels", help="Labelled real-write JSONL files for --audit (default: the packaged benchmark)."
    ),
) -> None:
    """Write one self-contained HTML report: pass^k curves, Δpass^k forest plot, task grid, trials.

    The page needs no network (styles, script and plots are inline) and prints legibly.

    Runs still running or killed are shown as far as they got, marked PARTIAL.
    """
    from tauguard.analysis.gate import GateInputError, load_floors
    from tauguard.analysis.compare import load_runs
    from tauguard.report import ReportError, ReportOptions, build_report, write_report
    from tauguard.report.plots import PlotDependencyError
    from tauguard.runs.store import RunLoadError

    check_output_file(output, "-o/--output")  # before any work: a regular file or none yet
    from tauguard.errors import TauguardInputError
    from tauguard.report.guards import read_audit

    try:
        audit_objs = [read_audit(a) for a in audits]
        labelled = None
        if labels:
            from tauguard.benchmark.real_writes import load_labels

            labelled = load_labels(labels)
    except (TauguardInputError, OSError) as exc:  # AuditInputError, DataFileError
        fail(str(exc))
    if labels and not audits:
        fail("--labels applies to --audit: give the audit report of a run")
    try:
        floors_config = load_floors(floors) if floors is not None else None
        # From the outcome indexes: only the trials the page displays are parsed, by offset, so
        # memory does not grow with the runs.
        loaded = load_runs(runs, conversations=False, records=False)
        gate_base = load_runs([baseline], conversations=False, records=False)[0] if baseline is not None else None
        opts = ReportOptions(
            primary_k=primary_k, seed=seed, n_resamples=resamples, confidence=confidence, floors=floors_config,
            gate_baseline=gate_base, gate_metric=metric, gate_margin=margin, gate_mode=mode.value,
            audits=audit_objs, labels=labelled,
        )
        if metric is not None and baseline is None:
            raise GateInputError("--metric applies to the baseline gate: give --baseline RUN")
        data = build_report(loaded, opts, title=title)
    except (RunLoadError, ReportError, GateInputError) as exc:
        fail(str(exc))
    note_live_runs(loaded)
    for run in loaded:
        if run.skipped_lines:
            typer.echo(f"warning: {run.skipped_lines} unparsable record line(s) ignored in {run.path}", err=True)
    for note in data.compare_notes:
        if note.startswith("warning: "):  # unpaired runs (tauguard.analysis.pairing), also shown on the page
            typer.echo(note, err=True)
    try:
        size = write_report(data, output)
    except PlotDependencyError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror or exc}")
    if data.false_holds is not None and not data.false_holds.matched and data.false_holds.note:
        typer.echo(f"note: {data.false_holds.note}", err=True)  # the page says it too; --audit measured nothing
    notes = []
    if data.simulated:
        notes.append("SIMULATION")
    if data.partial:
        notes.append("PARTIAL: a run is incomplete")
    suffix = f" ({'; '.join(notes)})" if notes else ""
    typer.echo(f"wrote {output} ({size / 1e6:.2f} MB, {len(loaded)} run(s)){suffix}")
