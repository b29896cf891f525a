"""`tauguard audit RUN --strategy S`: counterfactual guard decisions on recorded conversations."""

from __future__ import annotations

import sys
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING, Optional

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
    terminal_safe,
)
from tauguard.errors import TauguardInputError

if TYPE_CHECKING:
    from tauguard.trajectories.audit import GuardModel


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
    guard_llm: Optional[str] = typer.Option(
        None, "--guard-llm", help="A litellm model for the guards' LLM backends (key from the environment). \\[default: none]"
    ),
    api_base: Optional[str] = typer.Option(
        None, "--api-base", help="The --guard-llm model's server (an OpenAI-compatible URL). \\[default: the provider's]"
    ),
    no_key: bool = typer.Option(False, "--no-key", help="The --api-base server needs no API key: none is looked up, a placeholder is sent."),
    rate_limit: Optional[list[str]] = typer.Option(
        None, "--rate-limit", help="MODEL=RPM[,TPM]: requests (and tokens) per minute for the --guard-llm model (repeatable). \\[default: no limit]"
    ),
    cache: Optional[str] = typer.Option(
        None, "--cache", help="Directory of stored completions: a repeated guard request is answered from it at $0. \\[default: no cache]"
    ),
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

    With --guard-llm the guards' LLM backends decide (one model call per write or user turn,
    through the rate limits, retries and cost accounting of a run); their calls, tokens and
    cost are reported in total and per write.
    """
    from tauguard.strategy_api.registry import UnknownStrategyError, get_strategy_class
    from tauguard.runs.store import RunLoadError, load_run

    if output is not None:
        check_output_file(output, "-o/--output")
    options = parse_strategy_options(strategy_option)
    guard = _guard_model(guard_llm, api_base, no_key, rate_limit or [], cache)
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
        except TauguardInputError as exc:
            fail(f"--labels: {exc.first_line()}")
    report = audit_run(run, strategy, options, follow_reads=follow_reads, guard_llm=guard, task_ids=task,
                       progress=ticker, workers=workers, labels=chosen)
    from tauguard.trajectories.audit_axes import audit_axes, render_audit_axes

    # Hand labels measure false holds and catches; without them a hold is not an error (the neutral checks' view).
    axes = audit_axes(report, run.records, load_labels() if chosen is None else chosen)
    as_json = None
    if output is not None or fmt == OutputFormat.json:
        import json

        as_json = json.dumps({**report.model_dump(mode="json"), "axes": axes.model_dump(mode="json")}, indent=2)
    if output is not None:
        from tauguard.output_file import write_output

        write_output(output, as_json or "", "-o/--output")
    if fmt == OutputFormat.json:
        typer.echo(as_json)
    elif fmt == OutputFormat.table:
        from tauguard.tables import fit_text

        typer.echo(terminal_safe(fit_text(render_audit(report, fmt.value, writes=writes) + render_audit_axes(axes, fmt.value))))
    else:
        typer.echo(terminal_safe(render_audit(report, fmt.value, writes=writes) + render_audit_axes(axes, fmt.value)))


def _guard_model(guard_llm: str | None, api_base: str | None, no_key: bool, rate_limit: list[str], cache: str | None) -> "GuardModel | None":
    """The guard model of the audit and its provider discipline, checked as ``run`` checks them
    (provider, credentials, rate limits, cache folder: one ``error:`` line, exit 2, before any replay)."""
    if guard_llm is None:
        given = [flag for flag, value in (("--api-base", api_base), ("--no-key", no_key or None),
                                          ("--rate-limit", rate_limit or None), ("--cache", cache)) if value is not None]
        if given:
            fail(f"{given[0]} applies to the --guard-llm model; give --guard-llm MODEL")
        return None
    args: dict[str, str] = {}
    if api_base is not None:
        parsed = urllib.parse.urlsplit(api_base)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            fail(f"--api-base {api_base!r}: not an http(s) URL (e.g. http://127.0.0.1:8000/v1)")
        if parsed.username or parsed.password:
            fail("--api-base holds credentials (user:password@): API keys come only from the environment")
        args["api_base"] = api_base
    elif no_key:
        fail("--no-key applies to an --api-base server; give --api-base URL")
    from tauguard.config import ConfigError, resolve_config
    from tauguard.execution.preflight import PlanError, check_cache_dir, check_models
    from tauguard.provider import RateLimit
    from tauguard.trajectories.audit import GuardModel

    limits: dict[str, list[float]] = {}
    for text in rate_limit:
        model, limit = RateLimit.parse(text)  # TauguardInputError: one line, exit 2 (tauguard.cli.main)
        limits[model] = [limit.rpm] + ([limit.tpm] if limit.tpm else [])
    try:
        # the run's own resolution: packaged guard defaults (temperature 0), the same validation
        config = resolve_config(None, {"agent_llm": "sim", "user_llm": "sim", "guard_llm": guard_llm, "no_key": no_key,
                                       "llm_args": {"guard": args}, "rate_limits": limits, "cache": cache})
        check_models(config)
        check_cache_dir(config.cache)
    except (ConfigError, PlanError) as exc:
        fail(str(exc).replace("or run offline with --agent-llm sim --user-llm sim", "or audit with the compiled backends (no --guard-llm)"))
    return GuardModel(guard_llm, config.role_args("guard"), no_key, config.cache, dict(config.rate_limits))
