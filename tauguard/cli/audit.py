"""`tauguard audit RUN --strategy S`: counterfactual guard decisions on recorded conversations."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from tauguard.cli.common import (
    PLAIN_HELP,
    OutputFormat,
    check_output_file,
    fail,
    merge_task_ids,
    old_task_option,
    parse_strategy_options,
    ranged,
    show_progress,
    task_ids_option,
)


def audit(
    run_dir: Path = typer.Argument(..., help="A run directory (e.g. made by `tauguard import`)."),
    strategy: list[str] = typer.Option(..., "--strategy", "-s", help="Strategy to audit (repeatable)."),
    strategy_option: Optional[list[str]] = typer.Option(
        None, "--strategy-option", help="KEY=VALUE option for the strategies (repeatable). \\[default: each option's own, see `tauguard strategies`]"
    ),
    follow_reads: bool = typer.Option(
        True, "--follow-reads/--no-follow-reads",
        help="Also gate again after performing the reads a VERIFY names, reported apart as 'after reads'; "
             "the default figures always count a VERIFY the agent does not follow as a hold.",
    ),
    writes: bool = typer.Option(False, "--writes", help="List every held write (task, trial, step, rule id, reason)."),
    guard_llm: Optional[str] = typer.Option(None, "--guard-llm", help="A litellm model for LLM-backed guards. \\[default: none]"),
    task_ids: Optional[list[str]] = task_ids_option(),
    task: Optional[list[str]] = old_task_option(),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Also write the full report as JSON here. \\[default: none]"),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
    plain: bool = typer.Option(False, "--plain", help=PLAIN_HELP),
    progress: bool = typer.Option(False, "--progress", hidden=True),  # old spelling of --plain (one release)
    workers: int = typer.Option(1, "--workers", **ranged("--workers"), help="Processes to spread the simulations over (joblib)."),
    labels: Optional[list[Path]] = typer.Option(
        None, "--labels", help="Labelled real-write files (JSONL, tauguard.benchmark.real_writes schema); default: the packaged benchmark."
    ),
    no_labels: bool = typer.Option(False, "--no-labels", help="Do not report against the labelled real-write benchmark."),
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
    task = merge_task_ids(task_ids, task)
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
    shown, as_lines = show_progress(plain or progress)
    if shown:

        def ticker(done: int, total: int) -> None:
            if done == total or done % 10 == 0:
                end = "\n" if done == total or as_lines else "\r"
                sys.stderr.write(f"  {done}/{total} simulations{end}")

    from tauguard.benchmark.real_writes import load_labels

    chosen = None
    if no_labels:
        chosen = []
    elif labels:
        for path in labels:
            if not path.is_file():
                fail(f"--labels {path}: not a file")
        try:
            chosen = load_labels(labels)
        except ValueError as exc:
            fail(f"--labels: {exc}")
    report = audit_run(run, strategy, options, follow_reads=follow_reads, guard_llm=guard_llm, task_ids=task,
                       progress=ticker, workers=workers, labels=chosen)
    if output is not None:
        from tauguard.output_file import write_output

        write_output(output, report.model_dump_json(indent=2), "-o/--output")
    if fmt == OutputFormat.json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        typer.echo(render_audit(report, fmt.value, writes=writes))
