"""`tauguard audit RUN --strategy S`: counterfactual guard decisions on recorded conversations."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from tauguard.cli.common import OutputFormat, check_output_file, fail, is_tty, parse_strategy_options


def audit(
    run_dir: Path = typer.Argument(..., help="A run directory (e.g. made by `tauguard import`)."),
    strategy: list[str] = typer.Option(..., "--strategy", "-s", help="Strategy to audit (repeatable)."),
    strategy_option: Optional[list[str]] = typer.Option(
        None, "--strategy-option", help="KEY=VALUE option for the strategies (repeatable)."
    ),
    follow_reads: bool = typer.Option(
        False, "--follow-reads", help="After a VERIFY naming reads, perform them and gate again (reported separately)."
    ),
    writes: bool = typer.Option(False, "--writes", help="List every held write (task, trial, step, rule id, reason)."),
    guard_llm: Optional[str] = typer.Option(None, "--guard-llm", help="A litellm model for LLM-backed guards."),
    task: Optional[list[str]] = typer.Option(None, "--task", help="Only these task ids (repeatable)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Also write the full report as JSON here."),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
    progress: bool = typer.Option(False, "--progress", help="Print progress to stderr."),
    workers: int = typer.Option(1, "--workers", min=1, help="Processes to spread the simulations over (joblib)."),
) -> None:
    """Replay each recorded conversation in τ²'s environment and ask each strategy's gate,
    before every agent write, what it would decide given exactly the recorded prefix.

    Writes are classed gold-matching / off-gold and by the simulation's recorded outcome;
    reported per strategy: hold rate on gold-matching writes in passed simulations
    (false-block proxy), on off-gold writes in failed ones (catch proxy), rescue potential,
    holds per rule, guard cost, and replay mismatches (counted, never hidden).
    """
    from tauguard.registry import UnknownStrategyError, get_strategy_class
    from tauguard.store import RunLoadError, load_run

    if output is not None:
        check_output_file(output, "-o/--output")
    options = parse_strategy_options(strategy_option)
    for name in strategy:
        try:
            get_strategy_class(name)
        except UnknownStrategyError as exc:
            fail(str(exc))
    try:
        run = load_run(run_dir)
    except RunLoadError as exc:
        fail(str(exc))
    if len(run.manifest.domains) != 1:
        fail(f"audit reads one domain per run; {run_dir} has {', '.join(run.manifest.domains)}")
    known = {r.task_id for r in run.records}
    missing = [t for t in task or [] if t not in known]
    if missing:
        fail(f"task ids not in run {run.manifest.run_id}: {', '.join(missing)}")
    if not any(r.simulation is not None and r.error is None for r in run.records):
        fail(f"run {run.manifest.run_id} holds no recorded conversation to audit")
    from tauguard.trajectories.audit import audit_run
    from tauguard.trajectories.render import render_audit

    ticker = None
    if progress:

        def ticker(done: int, total: int) -> None:
            if done == total or done % 10 == 0:
                end = "\n" if done == total or not is_tty() else "\r"
                sys.stderr.write(f"  {done}/{total} simulations{end}")

    report = audit_run(run, strategy, options, follow_reads=follow_reads, guard_llm=guard_llm, task_ids=task,
                       progress=ticker, workers=workers)
    if output is not None:
        from tauguard.output_file import write_output

        write_output(output, report.model_dump_json(indent=2), "-o/--output")
    if fmt == OutputFormat.json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        typer.echo(render_audit(report, fmt.value, writes=writes))
