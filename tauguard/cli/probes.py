"""`tauguard probes build|eval|sweep`: the gate probe benchmark (pre-action decision states) and the gold sweep."""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any, Optional

import typer

from tauguard.cli.common import (
    PLAIN_HELP,
    OutputFormat,
    check_output_file,
    domain_choices,
    fail,
    is_tty,
    merge_task_ids,
    old_task_option,
    parse_strategy_options,
    ranged,
    show_progress,
    task_ids_option,
)

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


def _sim_banner(from_run: Path | None) -> str | None:
    """The SIMULATION line of the probes built: from tau2's gold plans and the sim agent's
    catalogued faults, or from a run the sim model made; None for a real agent's run."""
    if from_run is None:
        return ("SIMULATION: probes built from tau2's gold plans and the sim agent's catalogued faults "
                "(a simulated agent's mistakes), not from real agents' trajectories.")
    from tauguard.runs.records import SIMULATION_NOTE
    from tauguard.runs.store import load_run

    return SIMULATION_NOTE if load_run(str(from_run), records=False).manifest.simulated else None


@app.command("build")
def build(
    domain: Optional[str] = typer.Option(None, "--domain", "-d", help=f"{domain_choices()} (required without --from-run)."),
    split: str = typer.Option("base", "--split", help="A split of tau2's split_tasks.json: train, test or base."),
    output: Path = typer.Option(..., "--output", "-o", help="The JSONL file to write."),
    task_ids: Optional[list[str]] = task_ids_option(),
    task: Optional[list[str]] = old_task_option(),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="Format of the counts: table, json or markdown."),
    plain: bool = typer.Option(False, "--plain", help="Print each task id on stderr as it is built."),
    verbose: bool = typer.Option(False, "--verbose", "-v", hidden=True),  # old spelling of --plain (one release)
    from_run: Optional[Path] = typer.Option(
        None, "--from-run",
        help="Build from a run's recorded conversations instead (e.g. an imported real run, `tauguard import`): its own domain "
        "and tasks, one probe per agent write of each error-free record. \\[default: none]",
    ),
) -> None:
    """Build probes from every task of a split: each gold write (allow), its catalogued faulted
    variants (refuse / verify) and the task's policy-violation temptation (refuse). With
    --from-run: one probe per recorded agent write (its prefix replayed in the real environment),
    labelled by the real-write benchmark when the write is one of its writes, else from its outcome
    class (label_source says which); the run's own domain and tasks (--domain and --task-ids are
    refused, --split is not used)."""
    from tauguard.tau2_adapter import compat as t2
    from tauguard.probes.build import build_probes
    from tauguard.probes.model import write_probes
    from tauguard.probes.render import render_counts

    check_output_file(output, "-o/--output")
    task = merge_task_ids(task_ids, task)
    verbose = plain or verbose
    if from_run is not None:
        # probes from a run's recorded conversations are the trajectories package's (it sits above
        # classifier and probes: its benchmark labels come from classifier.real_states)
        from tauguard.runs.store import RunLoadError, load_run
        from tauguard.trajectories.probes import probes_from_run

        if domain is not None or task:
            fail("--from-run takes the run's own domain and tasks; drop --domain/--task-ids")
        try:
            probes = probes_from_run(load_run(str(from_run)), progress=_progress(verbose))
        except RunLoadError as exc:
            fail(str(exc))
        what = f"recorded writes of {from_run}"
    else:
        if domain is None:
            fail(f"give --domain ({domain_choices()}) or --from-run RUN")
        if domain not in t2.DOMAINS:
            fail(f"unknown domain '{domain}'; allowed: {', '.join(t2.DOMAINS)}")
        splits = t2.task_splits(domain)
        if split not in splits:
            fail(f"unknown split '{split}' for {domain}; allowed: {', '.join(splits)}")
        probes = build_probes(domain, split, task_ids=task, progress=_progress(verbose))  # errors: exit 2 in main
        what = f"{domain}/{split}"
    try:
        write_probes(output, probes)
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror or exc}")
    banner = _sim_banner(from_run)
    counts = render_counts(probes, fmt.value)
    if banner and fmt == OutputFormat.json:
        import json

        counts = json.dumps({"simulation_note": banner, **json.loads(counts)}, indent=2)
    elif banner:
        typer.echo(f"> **{banner}**\n" if fmt == OutputFormat.markdown else banner)
    typer.echo(counts)
    if fmt != OutputFormat.json:
        typer.echo(f"{len(probes)} probes ({what}) written to {output}")


@app.command("eval")
def eval_(
    strategy: str = typer.Option(..., "--strategy", "-s", help="Strategy name (see `tauguard strategies`)."),
    probes: Path = typer.Option(..., "--probes", "-p", help="A JSONL probe file (`tauguard probes build`)."),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
    strategy_option: Optional[list[str]] = typer.Option(
        None, "--strategy-option", help="KEY=VALUE option for the strategy (repeatable). \\[default: each option's own, see `tauguard strategies`]"
    ),
    plain: bool = typer.Option(False, "--plain", help=PLAIN_HELP),
    progress: bool = typer.Option(False, "--progress", hidden=True),  # old spelling of --plain (one release)
) -> None:
    """Run a strategy's gate on every probe (after replaying its prefix) and report the
    confusion matrix, per-class precision/recall/F1, macro-F1, the false-block rate on allow
    probes and how many prefixes did not reproduce."""
    from tauguard.probes.evaluate import check_probes, evaluate_probes
    from tauguard.probes.model import read_probes
    from tauguard.probes.render import render_report
    from tauguard.strategy_api.registry import validated_options

    options = validated_options(strategy, parse_strategy_options(strategy_option))  # errors: exit 2 in main
    items = read_probes(probes)  # ProbeFileError: one line, exit 2 (tauguard.cli.main)
    ticker = None
    shown, as_lines = show_progress(plain or progress)
    if shown:

        def ticker(done: int, total: int) -> None:
            if done == total or done % 25 == 0:
                end = "\n" if done == total or as_lines else "\r"
                sys.stderr.write(f"  {done}/{total} probes{end}")

    check_probes(items)  # TauguardInputError: one line, exit 2 (tauguard.cli.main)
    report = evaluate_probes(strategy, items, options, progress=ticker)
    typer.echo(render_report(report, fmt.value))


class _SweepProgress:
    """Progress of a sweep on stderr: one updating line on a terminal, about 50 plain lines otherwise."""

    def __init__(self, plain: bool) -> None:
        self.plain = plain

    def __call__(self, domain: str, task_id: str, done: int, total: int) -> None:
        if not self.plain:
            end = "\n" if done == total else "\r"
            sys.stderr.write(f"  {domain}: {done}/{total} tasks{end}")
            sys.stderr.flush()
            return
        every = max(1, total // 50)
        if done % every == 0 or done == total:
            typer.echo(f"  [{done}/{total}] {domain}/{task_id}", err=True)


@app.command("sweep")
def sweep_(
    strategy: str = typer.Option(..., "--strategy", "-s", help="Strategy name (see `tauguard strategies`)."),
    strategy_option: Optional[list[str]] = typer.Option(
        None, "--strategy-option", help="KEY=VALUE option for the strategy (repeatable). \\[default: each option's own, see `tauguard strategies`]"
    ),
    domain: Optional[list[str]] = typer.Option(None, "--domain", "-d", help=f"{domain_choices()} (repeatable; default: all)."),
    split: str = typer.Option("base", "--split", help="A split of tau2's split_tasks.json: base, train or test."),
    follow_reads: bool = typer.Option(
        True, "--follow-reads/--no-follow-reads",
        help="Perform the reads a VERIFY asks for and gate again, as a compliant agent would (the headline figure).",
    ),
    task_ids: Optional[list[str]] = task_ids_option(),
    num_tasks: Optional[int] = typer.Option(None, "--num-tasks", **ranged("--num-tasks"), help="Only the first N tasks of the split per domain. \\[default: all]"),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
    plain: bool = typer.Option(False, "--plain", help="Plain progress lines instead of one updating line."),
) -> None:
    """Replay every gold write of a split through a strategy's gate (one replay per task) and
    report ALLOW / VERIFY / REVISE / BLOCK per domain with the held writes listed."""
    from tauguard.tau2_adapter import compat as t2
    from tauguard.probes.sweep import sweep
    from tauguard.probes.sweep_report import build_report, render_sweep
    from tauguard.strategy_api.registry import create_strategy

    options = parse_strategy_options(strategy_option)
    domains = [d for item in (domain or list(t2.DOMAINS)) for d in item.split(",") if d]
    unknown = [d for d in domains if d not in t2.DOMAINS]
    if unknown:
        fail(f"unknown domain '{unknown[0]}'; allowed: {', '.join(t2.DOMAINS)}")
    ids = merge_task_ids(task_ids)
    if ids and len(domains) != 1:
        fail("--task-ids needs a single --domain (task ids are per domain)")
    instance = create_strategy(strategy, options)  # unknown strategy or invalid options: exit 2 in main
    selected: dict[str, list[str]] = {}
    for name in domains:
        splits = t2.task_splits(name)
        if split not in splits:
            fail(f"unknown split '{split}' for {name}; allowed: {', '.join(splits)}")
        all_ids = [t.id for t in t2.load_tasks(name, split)]
        missing = [t for t in ids or [] if t not in all_ids]
        if missing:
            fail(f"unknown task id(s) {', '.join(missing)} for {name}/{split}")
        chosen = [t for t in all_ids if ids is None or t in ids]
        selected[name] = chosen[:num_tasks] if num_tasks is not None else chosen
    ticker = _SweepProgress(plain or not is_tty())
    results = {
        name: sweep(
            instance, name, split, follow_reads, options=options, task_ids=chosen,
            progress=functools.partial(ticker, name),
        )
        for name, chosen in selected.items()
    }
    typer.echo(render_sweep(build_report(strategy, options, split, follow_reads, results), fmt.value))
