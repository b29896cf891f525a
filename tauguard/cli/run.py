"""`tauguard run`: n trials per task of one strategy on tau2-bench, stored under runs/.

Parsing and display only: planning, checks, resume rules and execution are the library's
(:mod:`tauguard.execution.lifecycle`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Optional

import typer

from tauguard.cli.common import (
    EXIT_INCOMPLETE,
    clear_startup_notice,
    domain_choices,
    error_line,
    fail,
    is_tty,
    merge_task_ids,
    packaged_default,
    parse_strategy_options,
    startup_notice,
    task_ids_option,
)

if TYPE_CHECKING:
    from tauguard.execution.batch import Progress
    from tauguard.runs.records import TrialRecord


def _parse_json_object(value: str | None, flag: str) -> dict[str, Any] | None:
    if value is None:
        return None
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        fail(f"{flag} is not valid JSON ({exc.msg} at char {exc.pos})")
    if not isinstance(parsed, dict):
        fail(f"{flag} must be a JSON object, got {type(parsed).__name__}")
    return parsed


def _split_list(values: list[str] | None) -> list[str] | None:
    """The items of a comma-separated and/or repeated option, in order (a repeat is kept: the
    config's validation names it as an error).

    An empty string stays an (invalid) empty list: `--domain ""` is an error, not the default.
    """
    if values is None:
        return None
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


_FLAGS = {"domains": "--domain", "trials": "-k/--trials", "strategy_options": "--strategy-option"}


def _refuse_with_resume(resume: Path, overrides: dict[str, Any], config: Path | None) -> None:
    given = [k for k, v in overrides.items() if v is not None and k not in ("workers", "backend", "address", "concurrency", "max_cost", "no_key")]
    flags = [_FLAGS.get(k, "--" + k.replace("_", "-")) for k in given]
    if config is not None:
        flags.insert(0, "--config")
    if flags:
        fail(f"--resume takes the run's own config; drop {', '.join(flags)} (only --workers/--backend/--address/--concurrency/--max-cost/--no-key may change)")


def run(
    strategy: Optional[str] = typer.Option(None, "--strategy", "-s", help="Strategy name (see `tauguard strategies`). " + packaged_default("strategy")),
    domain: Optional[list[str]] = typer.Option(None, "--domain", "-d", help=f"{domain_choices()} (comma-separated and/or repeated). " + packaged_default("domains")),
    trials: Optional[int] = typer.Option(None, "-k", "--trials", "--num-trials", help="Trials per task (1..1000); pass^1..pass^k are reported. " + packaged_default("trials")),
    split: Optional[str] = typer.Option(None, "--split", help="tau2 task split: base, train or test. " + packaged_default("split")),
    task_ids: Optional[list[str]] = task_ids_option(),
    num_tasks: Optional[int] = typer.Option(None, "--num-tasks", help="Run only the first N tasks of the split. \\[default: all]"),
    agent_llm: Optional[str] = typer.Option(None, "--agent-llm", help="litellm model string, or 'sim'. " + packaged_default("agent_llm")),
    user_llm: Optional[str] = typer.Option(None, "--user-llm", help="litellm model string, or 'sim'. " + packaged_default("user_llm")),
    guard_llm: Optional[str] = typer.Option(None, "--guard-llm", help="litellm model for LLM-backed guards. " + packaged_default("guard_llm")),
    llm_args: Optional[str] = typer.Option(
        None, "--llm-args", help='JSON per role, e.g. \'{"agent": {"temperature": 0, "api_base": "http://..."}}\' \\[default: temperature 0 per role, from the packaged config]'
    ),
    no_key: Optional[bool] = typer.Option(
        None, "--no-key", help="The api_base servers (local vLLM, ollama...) need no API key: none is looked up or sent. \\[default: false]"
    ),
    strategy_option: Optional[list[str]] = typer.Option(None, "--strategy-option", help="KEY=VALUE option for the strategy (repeatable; `tauguard strategies` lists each option's default)."),
    faults: Optional[str] = typer.Option(None, "--faults", help="Fault profile for the sim agent: none, realistic, procedural (see `tauguard faults`) or a TOML path. " + packaged_default("faults")),
    attack: Optional[str] = typer.Option(None, "--attack", help="Adversarial user tactic: insist, emotional, false-premise, authority, planner (docs/attacks.md). \\[default: none]"),
    attack_set: Optional[str] = typer.Option(None, "--attack-set", help="Attacked tasks: policy-violation or a named set (craft-airline). \\[default: policy-violation]"),
    attack_llm: Optional[str] = typer.Option(None, "--attack-llm", help="litellm model composing the planner tactic's plan (LLM user only). \\[default: none: a deterministic plan from data]"),
    sim_feedback: Optional[str] = typer.Option(
        None, "--sim-feedback",
        help="How the sim agent reacts to a guard: feedback (from the decision and the conversation) or "
        "oracle (from the gold plan: an upper bound on guard gains). \\[default: feedback]",
    ),
    uptake: Optional[str] = typer.Option(
        None, "--uptake", help="Sim agent's uptake of guard feedback (0..1), replacing the profile's; several (0.2,0.5,0.8) run one run each. \\[default: the profile's]"
    ),
    workers: Optional[int] = typer.Option(None, "--workers", "-j", help="Parallel workers (1..1024). " + packaged_default("workers")),
    backend: Optional[str] = typer.Option(
        None, "--backend",
        help="Where units run: fork (default on Linux: workers forked from the warm run process), loky (default "
        "elsewhere), threading, multiprocessing (joblib, this machine), ray or dask "
        "(a cluster: pip install 'tauguard\\[ray]' / 'tauguard\\[dask]'). " + packaged_default("backend"),
    ),
    address: Optional[str] = typer.Option(
        None, "--address",
        help="The existing cluster for --backend ray (ray://HOST:10001, HOST:6379, auto) or dask (tcp://HOST:8786); "
        "\\[default: a local cluster of --workers processes, shut down after the run]",
    ),
    concurrency: Optional[int] = typer.Option(
        None, "--concurrency", "-c",
        help="Simulations in flight (1..4096; threads when a real LLM is in play). \\[default: 8 per worker with a real LLM, one per worker in sim mode]",
    ),
    rate_limit: Optional[list[str]] = typer.Option(
        None, "--rate-limit", help="MODEL=RPM[,TPM]: requests (and tokens) per minute for a model, shared by the run (repeatable). \\[default: no limit]"
    ),
    max_cost: Optional[float] = typer.Option(
        None, "--max-cost", help="USD: no new simulation starts once the run's recorded cost reaches it. \\[default: no limit]"
    ),
    cache: Optional[str] = typer.Option(
        None, "--cache", help="Directory of stored completions: a repeated request is answered from it at $0 (deterministic re-runs). \\[default: no cache]"
    ),
    seed: Optional[int] = typer.Option(None, "--seed", help="Run seed (0..2000000; faults, sim behaviour, LLM seeds). " + packaged_default("seed")),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", help="tau2 orchestrator step limit. " + packaged_default("max_steps")),
    name: Optional[str] = typer.Option(None, "--name", help="Run id (directory name under --out). \\[default: STRATEGY-DOMAIN-UTC timestamp]"),
    out: Optional[str] = typer.Option(None, "--out", help="Directory holding runs. " + packaged_default("out")),
    resume: Optional[Path] = typer.Option(None, "--resume", help="Resume an interrupted run directory (only --workers, --backend, --address, --concurrency and --max-cost may change). \\[default: none: a new run]"),
    config: Optional[Path] = typer.Option(None, "--config", help="TOML run config; flags override it. \\[default: the packaged tauguard/defaults/default.toml]"),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan and exit."),
    plain: bool = typer.Option(False, "--plain", help="Plain progress lines instead of a progress bar."),
    fmt: str = typer.Option("table", "--format", help="Summary format: table, json or markdown."),
    verbose: bool = typer.Option(False, "--verbose", help="Show tau2's own logging."),
) -> None:
    """Run n trials per task of a strategy on tau2-bench and print pass^1..pass^k."""
    if fmt not in ("table", "json", "markdown"):
        fail(f"unknown --format '{fmt}'; allowed: table, json, markdown")
    if trials is not None and trials < 1:
        fail(f"-k/--trials must be at least 1, got {trials}")
    limits: dict[str, list[float]] = {}
    for text in rate_limit or []:
        from tauguard.provider import RateLimit

        model, limit = RateLimit.parse(text)  # TauguardInputError: one line, exit 2 (tauguard.cli.main)
        limits[model] = [limit.rpm] + ([limit.tpm] if limit.tpm else [])
    overrides: dict[str, Any] = {
        "strategy": strategy,
        "domains": _split_list(domain),
        "trials": trials,
        "split": split,
        "task_ids": merge_task_ids(task_ids),
        "num_tasks": num_tasks,
        "agent_llm": agent_llm,
        "user_llm": user_llm,
        "guard_llm": guard_llm,
        "llm_args": _parse_json_object(llm_args, "--llm-args"),
        "no_key": no_key,
        "strategy_options": parse_strategy_options(strategy_option) or None,
        "faults": faults,
        "attack": attack,
        "attack_set": attack_set,
        "attack_llm": attack_llm,
        "sim_feedback": sim_feedback,
        "workers": workers,
        "backend": backend,
        "address": address,
        "concurrency": concurrency,
        "rate_limits": limits or None,
        "max_cost": max_cost,
        "cache": cache,
        "seed": seed,
        "max_steps": max_steps,
        "name": name,
        "out": out,
    }
    startup_notice("tauguard run: starting (loading τ² and litellm, a few seconds) ...")
    from tauguard.config import resolve_config
    from tauguard.execution import lifecycle

    uptakes = _uptakes(uptake)
    # The library's user errors (TauguardInputError) are one line, exit 2 (tauguard.cli.main).
    if resume is not None:
        _refuse_with_resume(resume, {**overrides, "uptake": uptake}, config)
        plans = [lifecycle.plan_resume(
            resume, workers=workers, backend=backend, concurrency=concurrency, max_cost=max_cost, address=address,
            no_key=no_key,
        )]
    else:
        plans = [lifecycle.plan(resolve_config(config, o)) for o in _sweep(overrides, uptakes)]
        if len(plans) > 1:  # a sweep: every run's folder is free before the first one starts
            for p in plans:
                if p.run_dir.exists() or p.run_dir.is_symlink():
                    fail(f"run directory {p.run_dir} already exists; pick another --name (nothing was run)")
    clear_startup_notice()
    for line in (w for p in plans for w in p.warnings):
        typer.echo(line, err=True)
    if dry_run:
        typer.echo("\n\n".join("\n".join(p.describe()) for p in plans))
        raise typer.Exit(0)
    for run_plan in plans:  # an uptake sweep: one run per value, in order
        _execute(run_plan, plain=plain or not is_tty(), fmt=fmt, verbose=verbose)


def _uptakes(text: str | None) -> list[float]:
    """The --uptake values (each within [0, 1])."""
    if text is None:
        return []
    from tauguard.bounds import parse_proportion

    values = [parse_proportion(part, "--uptake") for part in _split_list([text]) or []]
    # One run per value, named by it (-uptake<u:g>): a repeated value (or two that print alike)
    # would run twice into the same folder.
    seen: dict[str, float] = {}
    for value in values:
        if f"{value:g}" in seen:
            fail(f"--uptake lists {value:g} twice (after rounding to 6 significant digits); give each value once")
        seen[f"{value:g}"] = value
    return values


def _sweep(overrides: dict[str, Any], uptakes: list[float]) -> list[dict[str, Any]]:
    """One override set per uptake; several get the run name suffixed ``-uptake<u>``."""
    if len(uptakes) <= 1:
        return [{**overrides, "uptake": uptakes[0] if uptakes else None}]
    import datetime as dt

    base = overrides.get("name") or f"{overrides.get('strategy') or 'run'}-{dt.datetime.now(dt.timezone.utc):%Y%m%d-%H%M%S}"
    return [{**overrides, "uptake": u, "name": f"{base}-uptake{u:g}"} for u in uptakes]


def _execute(run_plan: Any, plain: bool, fmt: str, verbose: bool) -> None:
    from tauguard.execution import lifecycle
    from tauguard.execution.batch import RunWriteError
    from tauguard.execution.driver import ClusterUnavailable
    from tauguard.execution.engines import WorkerLost
    from tauguard.runs.store import RunFolderError

    run_dir = run_plan.run_dir
    from tauguard.cli.progress import RunDisplay

    shown: list[RunDisplay] = []

    def start(done: int) -> None:  # once the folder is ours: no progress output before an error
        engine = [line for line in run_plan.describe() if line.startswith("engine:")]
        if engine:  # starting or reaching a cluster takes a while: say where the units go
            typer.echo(engine[0], err=True)
        shown.append(RunDisplay(run_plan.total_units, done, plain))

    def update(record: "TrialRecord", progress: "Progress") -> None:
        shown[0].update(record, progress)

    def finish_incomplete(reason: str, resume: str) -> NoReturn:
        for display in shown:
            display.close()
        typer.echo(error_line(f"run incomplete: {reason}; resume with: {resume}"), err=True)
        raise typer.Exit(EXIT_INCOMPLETE)

    resume = f"tauguard run --resume {run_dir}"
    try:
        result = lifecycle.execute(run_plan, on_record=update, on_start=start, verbose=verbose)
    except RunFolderError as exc:
        fail(str(exc))
    except (WorkerLost, RunWriteError) as exc:
        finish_incomplete(str(exc), resume)
    except ClusterUnavailable as exc:  # nothing ran: the run stays pending for a resume
        for display in shown:
            display.close()
        fail(f"{exc}; fix it, then: tauguard run --resume {run_dir} [--address ...]")
    except OSError as exc:  # a full or read-only disk while writing the run folder
        where = f" ({exc.filename})" if exc.filename else ""
        problem = f"cannot write the run folder {run_dir}: {exc.strerror or exc}{where}"
        if not run_dir.exists():  # nothing to resume: the folder was never made
            for display in shown:
                display.close()
            fail(f"{problem}; free space or fix permissions and run again")
        finish_incomplete(f"{problem}; free space or fix permissions", resume)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the manifest says which, and how far
        typer.echo("", err=True)
        finish_incomplete(run_plan.manifest.stop_reason or "interrupted", resume)
    for display in shown:
        display.close()
    from tauguard.cli.show import print_summary

    print_summary(run_dir, fmt)
    typer.echo(f"\nrun stored in {run_dir}  (tauguard show {run_dir})", err=True)
    unfinished = result.incomplete
    if unfinished is not None:
        finish_incomplete(unfinished.reason, unfinished.resume)
