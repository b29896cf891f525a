"""The library's run API: ``plan`` a run (every input checked, nothing written), ``run`` it,
``resume`` an interrupted one. The CLI only parses flags and displays what these return.

Every user error is a ``ValueError`` subclass with a one-line message (:class:`ConfigError`,
:class:`PlanError`, :class:`RunLoadError`, :class:`RunFolderError`), raised before any work.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from tauguard.config import FORK, ConfigError, RunConfig, resolve_config
from tauguard.execution.batch import Progress, recorded_cost, run_batch
from tauguard.execution.concurrency import describe as describe_parallelism
from tauguard.execution.concurrency import threaded
from tauguard.execution.engines import describe as describe_engine
from tauguard.execution.engines import is_cluster
from tauguard.execution.preflight import (
    PlanError,
    check_attack,
    check_attack_targets,
    check_backend,
    check_cache_dir,
    check_models,
    check_out_dir,
    check_resume_bounds,
    check_strategy,
    check_workers,
    load_fault_profile,
)
from tauguard.execution.error_line import first_line
from tauguard.execution.manifest import default_run_id, new_manifest, resolve_tasks, versions
from tauguard.runs.records import Manifest, TrialRecord
from tauguard.secrets import drop_redacted, remember_config_secrets
from tauguard.runs.store import RunLock, busy_error, completed_keys, create_run_dir, lock_holder, read_manifest

OnRecord = Callable[[TrialRecord, Progress], None]


def describe_feedback(feedback: str | None, uptake: float | None) -> str:
    """How the sim agent reacts to guards, in words (the oracle labelled an upper bound)."""
    shown = "n/a" if uptake is None else f"{uptake:g}"
    if feedback == "oracle":
        return f"oracle (reacts from the gold plan: an UPPER BOUND on guard gains), uptake {shown}"
    return f"feedback-only (reacts from the decision and the conversation), uptake {shown}"


@dataclass
class RunPlan:
    """A checked run, ready to execute: its config, tasks, fault profile, manifest and folder."""

    config: RunConfig
    tasks: dict[str, list[str]]
    fault_profile: dict[str, Any]
    manifest: Manifest
    run_dir: Path
    resumed: bool = False
    done_units: int = 0  # units already recorded without error (resume)
    warnings: list[str] = field(default_factory=list)  # for the user, one line each (e.g. a version change)

    @property
    def total_units(self) -> int:
        """(task, trial) units of the whole run."""
        return self.manifest.expected_units

    def describe(self) -> list[str]:
        """The plan in lines, as ``tauguard run --dry-run`` prints it."""
        c, profile = self.config, self.fault_profile
        n_tasks = sum(len(v) for v in self.tasks.values())
        sim_note = "  (simulation: the built-in sim model, not a real LLM)"
        lines = [f"run:       {self.run_dir}" + ("  (resume)" if self.resumed else "")]
        lines.append(f"strategy:  {c.strategy} {c.strategy_options or ''}".rstrip())
        lines += [f"domain:    {d} / {c.split}: {len(ids)} tasks" for d, ids in self.tasks.items()]
        lines.append(f"units:     {n_tasks} tasks x {c.trials} trials = {n_tasks * c.trials} simulations")
        if self.resumed:
            lines.append(f"done:      {self.done_units} already recorded")
        lines.append(f"agent:     {c.agent_llm}{sim_note if c.agent_llm == 'sim' else ''}")
        lines.append(f"user:      {c.user_llm}{sim_note if c.user_llm == 'sim' else ''}")
        if c.guard_llm:
            lines.append(f"guard llm: {c.guard_llm}")
        rates = {k: v for k, v in profile.get("rates", {}).items() if v}
        lines.append(
            f"faults:    {profile.get('name')} (uptake {profile.get('uptake')}, forbidden_write {profile.get('forbidden_write')}"
            + (f", rates {rates}" if rates else "")
            + (", one draw per write: first deviations" if profile.get("draw") == "first_deviation" else "") + ")"
        )
        if c.agent_llm == "sim":
            lines.append(f"feedback:  {describe_feedback(c.sim_feedback, profile.get('uptake'))}")
        if c.attack:
            rate = profile.get("attack_susceptibility", {}).get(c.attack)
            lines.append(
                f"attack:    {c.attack} on {c.attack_set or 'policy-violation'} tasks"
                + (f" (sim agent gives in with probability {rate})" if c.agent_llm == "sim" else "")
                + (f"; planner llm {c.attack_llm}" if c.attack_llm else "")
            )
        lines.append(f"seed:      {c.seed}; workers {c.workers} ({c.backend})")
        if c.backend == FORK and c.workers > 1:
            lines.append("engine:    fork: workers forked from this process after its imports and warm-up")
        if is_cluster(c.backend):
            lines.append(f"engine:    {describe_engine(c.backend, c.address, c.workers)}")
        lines.append(f"parallel:  {describe_parallelism(c.workers, c.concurrency, threaded(c.agent_llm, c.user_llm, c.guard_llm), c.backend)}")
        if c.rate_limits:
            shown = ", ".join(f"{m} {v[0]:g} rpm" + (f" {v[1]:g} tpm" if len(v) > 1 else "") for m, v in c.rate_limits.items())
            lines.append(f"limits:    {shown}; {c.max_retries} retries per completion")
        if c.max_cost is not None:
            lines.append(f"budget:    no new simulation once ${c.max_cost:.2f} is recorded")
        if c.cache:
            lines.append(f"cache:     {c.cache} (a stored request is answered at $0)")
        if c.no_key:
            lines.append("keys:      none: the api_base servers need no key (--no-key)")
        return lines


@dataclass
class RunResult:
    """What a finished (or resumed) run produced."""

    run_dir: Path
    manifest: Manifest
    progress: Progress = field(repr=False)

    @property
    def status(self) -> str:
        """The manifest's final status (``completed`` after a normal return)."""
        return self.manifest.status

    @property
    def incomplete(self) -> Incomplete | None:
        """Why the run did not measure every unit (budget stop, lost units, infrastructure
        errors), with the command that finishes it; None for a complete run."""
        return incomplete(self.run_dir, self.manifest, self.progress)


@dataclass(frozen=True)
class Incomplete:
    """A run that ended without a measured outcome for every unit: why, and how to finish it."""

    reason: str
    resume: str


_MAX_ERROR_SHOWN = 160


def incomplete(run_dir: Path, manifest: Manifest, progress: Progress | None = None) -> Incomplete | None:
    """Why the run in ``run_dir`` is incomplete, or None when every unit has an error-free
    record. ``progress`` is the session's (its infrastructure errors; the manifest says the rest)."""
    resume = f"tauguard run --resume {run_dir}"
    errors = progress.errors if progress is not None else 0
    if manifest.status == "completed" and not errors:
        return None
    if manifest.status != "completed":
        reason = manifest.stop_reason or f"the run stopped ({manifest.status})"
        if manifest.status == "incomplete":
            reason = reason.removesuffix("; resume to re-run them")
        cap = manifest.config.get("max_cost")
        if reason.startswith("max cost") and cap:
            reason = reason.split("; resume", 1)[0] + " (any higher cap continues)"
            resume += f" --max-cost {2 * max(float(cap), recorded_cost(run_dir)):.4g}"
        return Incomplete(reason=reason, resume=resume)
    first = (progress.first_error or "") if progress is not None else ""
    if len(first) > _MAX_ERROR_SHOWN:
        first = first[: _MAX_ERROR_SHOWN - 3] + "..."
    total = progress.total if progress is not None else manifest.expected_units
    reason = f"{errors} of {total} units ended in an infrastructure error, not a task outcome" + (f" (first: {first})" if first else "")
    return Incomplete(reason=reason, resume=resume)


def _as_config(config: RunConfig | Mapping[str, Any]) -> RunConfig:
    if isinstance(config, RunConfig):
        return config
    return resolve_config(None, dict(config))


def plan(config: RunConfig | Mapping[str, Any]) -> RunPlan:
    """Check every input of a new run and return its plan; writes nothing.

    ``config`` is a :class:`RunConfig` or a mapping of its fields (defaults fill the rest).
    Raises a ``ValueError`` subclass with a one-line message on any bad input.
    """
    config = _as_config(config)
    remember_config_secrets(config.model_dump())  # scrubbed from every line and file from here on
    check_out_dir(Path(config.out))
    check_cache_dir(config.cache)
    check_backend(config.backend, config.address)
    check_strategy(config)  # unknown name: before loading tau2's tasks
    check_attack(config)
    profile = load_fault_profile(config.faults, config)
    tasks = resolve_tasks(config)
    check_attack_targets(config, tasks)
    check_strategy(config, tasks)
    check_models(config)
    run_dir = Path(config.out) / default_run_id(config)
    if run_dir.exists() or run_dir.is_symlink():
        raise PlanError(f"run directory {run_dir} already exists; pick another --name or continue it with --resume {run_dir}")
    manifest = new_manifest(run_dir.name, config, tasks, profile)
    return RunPlan(config=config, tasks=tasks, fault_profile=profile, manifest=manifest, run_dir=run_dir)


def _stored_config(
    run_dir: Path, manifest: Manifest, workers: int | None, backend: str | None, concurrency: int | None = None,
    max_cost: float | None = None, address: str | None = None, no_key: bool | None = None,
) -> RunConfig:
    # Credentials are never stored; anything redacted is dropped so no placeholder reaches a
    # provider (keys are read from the environment again).
    raw = drop_redacted(dict(manifest.config))
    if workers is not None:
        raw["workers"] = workers
    if backend is not None:
        raw["backend"] = backend
        if not is_cluster(backend):
            raw.pop("address", None)  # the stored cluster is not this backend's
    if address is not None:
        raw["address"] = address
    if concurrency is not None:
        raw["concurrency"] = concurrency
    if max_cost is not None:
        raw["max_cost"] = max_cost
    if no_key is not None:
        raw["no_key"] = no_key
    try:
        return RunConfig.model_validate(raw)
    except Exception as exc:
        raise ConfigError(f"cannot resume {run_dir}: its manifest's config is invalid ({first_line(exc)})") from None


def plan_resume(
    run_dir: str | Path, *, workers: int | None = None, backend: str | None = None, concurrency: int | None = None,
    max_cost: float | None = None, address: str | None = None, no_key: bool | None = None,
) -> RunPlan:
    """Check that ``run_dir`` can be resumed (only ``workers``/``backend``/``address``/``concurrency``/``max_cost``/
    ``no_key`` may change)."""
    run_dir = Path(run_dir)
    check_workers(workers)
    manifest = read_manifest(run_dir)
    holder = lock_holder(run_dir)
    if holder is not None:  # fail fast; execute() takes the lock for real
        raise busy_error(run_dir, holder)
    check_resume_bounds(concurrency=concurrency, max_cost=max_cost)
    config = _stored_config(run_dir, manifest, workers, backend, concurrency, max_cost, address, no_key)
    check_cache_dir(config.cache)
    remember_config_secrets(config.model_dump())
    check_backend(config.backend, config.address)
    check_strategy(config, manifest.task_ids)
    check_models(config)
    return RunPlan(
        config=config, tasks=manifest.task_ids, fault_profile=manifest.fault_profile, manifest=manifest,
        run_dir=run_dir, resumed=True, done_units=len(completed_keys(run_dir, manifest)),
        warnings=[line for line in [version_change(manifest)] if line],
    )


def version_change(manifest: Manifest) -> str | None:
    """A warning line when this process's versions differ from those of the run's last session."""
    now = versions()
    changed = [f"{name} {manifest.versions.get(name, '?')} -> {now[name]}" for name in now if manifest.versions.get(name) != now[name]]
    if not changed:
        return None
    return f"warning: resuming {manifest.run_id} with other versions ({', '.join(changed)}); its records will mix them (the manifest keeps the earlier ones)"


def _record_versions(manifest: Manifest) -> None:
    # A resume records the versions it runs with; the earlier ones stay listed.
    now = versions()
    if manifest.versions and manifest.versions != now:
        manifest.earlier_versions.append(dict(manifest.versions))
    manifest.versions = now


def execute(
    run_plan: RunPlan, *, on_record: OnRecord | None = None, on_start: Callable[[int], None] | None = None,
    verbose: bool = False,
) -> RunResult:
    """Create (or lock, on resume) the run folder and run every pending unit.

    ``on_start(units_already_done)`` is called once the folder is this process's. Raises
    :class:`RunFolderError` when the folder exists (new run) or another process is writing
    it; KeyboardInterrupt (Ctrl-C or SIGTERM) after marking the run ``interrupted``.
    """
    p = run_plan
    if p.resumed:
        lock = RunLock.acquire(p.run_dir)
        try:
            p.manifest = read_manifest(p.run_dir)  # the holder before us may have updated it
        except BaseException:
            lock.release()
            raise
        _record_versions(p.manifest)  # written with the manifest when the batch starts
    else:
        lock = create_run_dir(p.run_dir.parent, p.run_dir.name, p.manifest)
    progress = run_batch(p.run_dir, p.manifest, p.config, lock, on_record=on_record, on_start=on_start, verbose=verbose)
    return RunResult(run_dir=p.run_dir, manifest=p.manifest, progress=progress)


def run(config: RunConfig | Mapping[str, Any], *, on_record: OnRecord | None = None, verbose: bool = False) -> RunResult:
    """Plan and execute a new run; ``on_record(record, progress)`` is called after each unit."""
    return execute(plan(config), on_record=on_record, verbose=verbose)


def resume(
    run_dir: str | Path, *, workers: int | None = None, backend: str | None = None,
    concurrency: int | None = None, max_cost: float | None = None, address: str | None = None,
    no_key: bool | None = None, on_record: OnRecord | None = None, verbose: bool = False,
) -> RunResult:
    """Finish an interrupted or killed run with its own stored config (the overrides are ``tauguard run --resume``'s)."""
    return execute(
        plan_resume(run_dir, workers=workers, backend=backend, concurrency=concurrency, max_cost=max_cost, address=address,
                    no_key=no_key),
        on_record=on_record, verbose=verbose,
    )
