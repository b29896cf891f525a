"""The work behind `tauguard run` (kept out of the command module so `--help` stays light)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from tauguard.cli.common import fail
from tauguard.config import ConfigError, RunConfig, resolve_config
from tauguard.records import Manifest, TrialRecord
from tauguard.execution.batch import (
    PlanError,
    Progress,
    default_run_id,
    known_backends,
    missing_credentials,
    new_manifest,
    resolve_tasks,
    run,
)
from tauguard.store import RunLoadError, read_manifest


def _load_profile(name: str) -> dict[str, Any]:
    from tauguard.faults.profiles import load_profile

    try:
        return load_profile(name).model_dump()
    except ValueError as exc:
        fail(str(exc).splitlines()[0])


def _check_strategy(config: RunConfig) -> None:
    from tauguard.registry import create_strategy

    # Unknown names, bad options and options that do not fit the domains: one line, exit 2.
    create_strategy(config.strategy, config.strategy_options).check_domains(config.domains)


def _resume_config(run_dir: Path, overrides: dict[str, Any]) -> tuple[RunConfig, Manifest]:
    try:
        manifest = read_manifest(run_dir)
    except RunLoadError as exc:
        fail(str(exc))
    given = {k: v for k, v in overrides.items() if v is not None and k not in ("workers", "backend")}
    if given:
        fail(f"--resume takes the run's own config; drop {', '.join('--' + k.replace('_', '-') for k in given)} (only --workers/--backend may change)")
    raw = dict(manifest.config)
    raw.update({k: overrides[k] for k in ("workers", "backend") if overrides.get(k) is not None})
    try:
        return RunConfig.model_validate(raw), manifest
    except Exception as exc:
        fail(f"cannot resume {run_dir}: its manifest config is invalid ({str(exc).splitlines()[0]})")


def _print_plan(config: RunConfig, tasks: dict[str, list[str]], profile: dict[str, Any], run_dir: Path) -> None:
    n_tasks = sum(len(v) for v in tasks.values())
    sim_note = "  (simulation: the built-in sim model, not a real LLM)" if config.simulated else ""
    typer.echo(f"run:       {run_dir}")
    typer.echo(f"strategy:  {config.strategy} {config.strategy_options or ''}".rstrip())
    for domain, ids in tasks.items():
        typer.echo(f"domain:    {domain} / {config.split}: {len(ids)} tasks")
    typer.echo(f"units:     {n_tasks} tasks x {config.trials} trials = {n_tasks * config.trials} simulations")
    typer.echo(f"agent:     {config.agent_llm}{sim_note if config.agent_llm == 'sim' else ''}")
    typer.echo(f"user:      {config.user_llm}{sim_note if config.user_llm == 'sim' else ''}")
    if config.guard_llm:
        typer.echo(f"guard llm: {config.guard_llm}")
    rates = {k: v for k, v in profile.get("rates", {}).items() if v}
    typer.echo(
        f"faults:    {profile.get('name')} (uptake {profile.get('uptake')}, forbidden_write {profile.get('forbidden_write')}"
        + (f", rates {rates}" if rates else "") + ")"
    )
    typer.echo(f"seed:      {config.seed}; workers {config.workers} ({config.backend})")


class _Display:
    """A rich progress bar on a terminal; plain lines in CI logs."""

    def __init__(self, total: int, already: int, plain: bool) -> None:
        self.plain = plain
        self.total = total
        self._progress: Any = None
        if not plain:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self._progress = RichProgress(
                TextColumn("[bold]simulations"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[stats]}"),
                TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), transient=False,
            )
            self._task = self._progress.add_task("run", total=total, completed=already, stats="")
            self._progress.start()
        else:
            typer.echo(f"{already}/{total} simulations already done", err=True) if already else None

    def update(self, record: TrialRecord, progress: Progress) -> None:
        rate = progress.pass_rate
        stats = f"pass {rate:.2f}" if rate is not None else "pass -"
        if progress.errors:
            stats += f", {progress.errors} infra errors"
        if self._progress is not None:
            self._progress.update(self._task, completed=progress.done, stats=stats)
            return
        # Plain mode is for logs: about 50 lines per run, plus every failure and error.
        every = max(1, progress.total // 50)
        if record.success and progress.done % every and progress.done != progress.total:
            return
        import time

        elapsed = time.perf_counter() - progress.started
        remaining = progress.total - progress.done
        per = elapsed / max(progress.scored + progress.errors, 1)
        status = "ERROR" if record.error else ("pass" if record.success else "fail")
        typer.echo(
            f"[{progress.done}/{progress.total}] {record.domain}/{record.task_id} trial {record.trial}: {status} "
            f"| {stats} | eta {per * remaining:.0f}s",
            err=True,
        )

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()


def execute_run(
    overrides: dict[str, Any], config_file: Path | None, resume: Path | None, dry_run: bool, plain: bool, fmt: str,
    verbose: bool,
) -> None:
    """Resolve, validate, plan and execute a run; print its summary."""
    if resume is not None:
        config, manifest = _resume_config(resume, overrides)
        run_dir = resume
        tasks = manifest.task_ids
        profile = manifest.fault_profile
    else:
        try:
            config = resolve_config(config_file, overrides)
        except ConfigError as exc:
            fail(str(exc))
        _check_strategy(config)
        profile = _load_profile(config.faults)
        try:
            tasks = resolve_tasks(config)
        except PlanError as exc:
            fail(str(exc))
        run_dir = Path(config.out) / default_run_id(config)
        manifest = new_manifest(run_dir.name, config, tasks, profile)
    if config.backend not in known_backends():
        fail(f"unknown --backend '{config.backend}'; allowed: {', '.join(known_backends())}")
    if dry_run:
        _print_plan(config, tasks, profile, run_dir)
        raise typer.Exit(0)
    missing = missing_credentials(config)
    if missing:
        role, model, keys = missing[0]
        var = keys[0] if keys else "the provider's API key variable"
        fail(
            f"no credentials for the {role} model '{model}': set {var} in the environment, "
            "or run offline with --agent-llm sim --user-llm sim"
        )
    if resume is None:
        if run_dir.exists():
            fail(f"run directory {run_dir} already exists; pick another --name or continue it with --resume {run_dir}")
        run_dir.mkdir(parents=True)
    total = manifest.expected_units
    from tauguard.store import completed_keys

    display = _Display(total, len(completed_keys(run_dir)), plain)
    try:
        run(run_dir, manifest, config, on_record=display.update, verbose=verbose)
    except KeyboardInterrupt:
        display.close()
        typer.echo(f"\ninterrupted; resume with: tauguard run --resume {run_dir}", err=True)
        raise typer.Exit(130)
    display.close()
    from tauguard.cli.show import print_summary

    print_summary(run_dir, fmt)
    typer.echo(f"\nrun stored in {run_dir}  (tauguard show {run_dir})", err=True)
