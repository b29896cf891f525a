"""`tauguard probes build|eval`: the gate probe benchmark (pre-action decision states)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

import typer

from tauguard.cli.common import OutputFormat, fail, is_tty, parse_strategy_options

app = typer.Typer(
    help="Gate probes: pre-action decision states labelled allow / verify / refuse (see docs/probes.md).",
    no_args_is_help=True,
    add_completion=False,
)


def _progress(enabled: bool) -> Any:
    if not enabled:
        return None

    def report(*args: Any) -> None:
        typer.echo(f"  {' / '.join(str(a) for a in args)}", err=True)

    return report


@app.command("build")
def build(
    domain: str = typer.Option(..., "--domain", "-d", help="airline, retail or telecom."),
    split: str = typer.Option("base", "--split", help="A split of tau2's split_tasks.json: train, test or base."),
    output: Path = typer.Option(..., "--output", "-o", help="The JSONL file to write."),
    task: Optional[list[str]] = typer.Option(None, "--task", help="Only these task ids (repeatable)."),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="Format of the counts: table, json or markdown."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Print each task id as it is built."),
) -> None:
    """Build probes from every task of a split: each gold write (allow), its catalogued faulted
    variants (refuse / verify) and the task's policy-violation temptation (refuse)."""
    from tauguard import tau2compat as t2
    from tauguard.probes.build import build_probes
    from tauguard.probes.model import write_probes
    from tauguard.probes.render import render_counts

    if domain not in t2.DOMAINS:
        fail(f"unknown domain '{domain}'; allowed: {', '.join(t2.DOMAINS)}")
    splits = t2.task_splits(domain)
    if split not in splits:
        fail(f"unknown split '{split}' for {domain}; allowed: {', '.join(splits)}")
    try:
        probes = build_probes(domain, split, task_ids=task, progress=_progress(verbose))
    except ValueError as exc:
        fail(str(exc))
    try:
        write_probes(output, probes)
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror or exc}")
    typer.echo(render_counts(probes, fmt.value))
    if fmt != OutputFormat.json:
        typer.echo(f"{len(probes)} probes ({domain}/{split}) written to {output}")


@app.command("eval")
def eval_(
    strategy: str = typer.Option(..., "--strategy", "-s", help="Strategy name (see `tauguard strategies`)."),
    probes: Path = typer.Option(..., "--probes", "-p", help="A JSONL probe file (`tauguard probes build`)."),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
    strategy_option: Optional[list[str]] = typer.Option(
        None, "--strategy-option", help="KEY=VALUE option for the strategy (repeatable)."
    ),
    progress: bool = typer.Option(False, "--progress", help="Print progress to stderr."),
) -> None:
    """Run a strategy's gate on every probe (after replaying its prefix) and report the
    confusion matrix, per-class precision/recall/F1, macro-F1, the false-block rate on allow
    probes and how many prefixes did not reproduce."""
    from tauguard.probes.evaluate import check_probes, evaluate_probes
    from tauguard.probes.model import read_probes
    from tauguard.probes.render import render_report
    from tauguard.registry import validated_options

    options = validated_options(strategy, parse_strategy_options(strategy_option))  # errors: exit 2 in main
    items = read_probes(probes)  # ProbeFileError: one line, exit 2 (tauguard.cli.main)
    ticker = None
    if progress:

        def ticker(done: int, total: int) -> None:
            if done == total or done % 25 == 0:
                end = "\n" if done == total or not is_tty() else "\r"
                sys.stderr.write(f"  {done}/{total} probes{end}")

    try:
        check_probes(items)
    except ValueError as exc:
        fail(str(exc))
    report = evaluate_probes(strategy, items, options, progress=ticker)
    typer.echo(render_report(report, fmt.value))
