"""`tauguard export RUN -o results.json`: a run as a τ² results file, for τ²'s own viewer and tools."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Optional

import typer

from tauguard.cli.common import OutputFormat, check_output_file, fail


def export(
    run_dir: Path = typer.Argument(..., help="A run directory (runs/<run-id>)."),
    output: Path = typer.Option(..., "-o", "--output", help="The τ² results file to write (.json, or .json.gz compressed)."),
    domain: Optional[str] = typer.Option(None, "--domain", help="The domain to export (default: the run's only domain; required for runs of several)."),
    force: bool = typer.Option(False, "--force", help="Replace OUTPUT if it exists."),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
) -> None:
    """Write a run (simulated or imported) in τ²'s results format: info, tasks, simulations.

    τ²'s own Results model validates the file before it is written; `tauguard import` reads it
    back as the same run. Records τ² cannot represent (no conversation, a termination reason
    τ² does not know) are listed, not written.
    """
    from tauguard.runs.store import RunLoadError, load_run
    from tauguard.trajectories.export import ExportError, export_results

    check_output_file(output, "-o/--output")  # a regular file or none yet, before any work
    if output.exists() and not force:
        fail(f"{output} exists; pass --force to replace it")
    try:
        run = load_run(run_dir)
    except RunLoadError as exc:
        fail(str(exc))
    try:
        payload, report = export_results(run, domain)
    except ExportError as exc:
        fail(str(exc))
    data = json.dumps(payload, indent=None).encode("utf-8")
    if output.name.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    from tauguard.output_file import write_output

    write_output(output, data, "-o/--output")  # atomic: never a half-written results file
    if fmt == OutputFormat.json:
        typer.echo(json.dumps({"output": str(output), **report.model_dump()}, indent=2))
        return
    origin = "SIMULATION (built-in sim model)" if report.simulated else "recorded run"
    lines = [f"wrote {report.simulations} simulations of {report.tasks} tasks ({report.domain}, {origin}) to {output}"]
    if report.skipped:
        lines.append(f"not written ({len(report.skipped)}): records τ²'s results format cannot hold")
        lines.extend(f"  {key}: {why}" for key, why in report.skipped.items())
    typer.echo("\n".join(lines))
