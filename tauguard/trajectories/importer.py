"""Turning a τ² results file into a tauguard run (manifest + one record per simulation).

Every simulation's task is looked up in τ² 26.3 (the tasks tauguard scores against). A task
that 26.3 does not have, or whose definition in the file differs from 26.3's where scoring
or replay depends on it (gold actions, reward basis, communicate info, env assertions,
initial state), is reported and its simulations are excluded, with a count: they are never
scored against a task they were not run on. Imported runs say where they came from
(``Manifest.source = "imported"`` plus provenance) and are never marked as simulations.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from tauguard import tau2compat as t2
from tauguard.config import redact
from tauguard.records import Manifest, RoleUsage, TrialRecord, is_success
from tauguard.store import RecordWriter, write_manifest
from tauguard.trajectories.labels import check_labels
from tauguard.trajectories.load import ResultsFile

IMPORTED = "imported"
# The parts of a task definition that scoring or replay read.
_COMPARED = ("actions", "reward_basis", "communicate_info", "env_assertions")


class ImportRunError(ValueError):
    """An import that cannot proceed (e.g. the run directory exists); one line for the user."""


class TaskCheck(BaseModel):
    """How the file's simulations and tasks relate to τ² 26.3's."""

    included: list[str] = Field(default_factory=list)  # task ids imported, file order
    excluded: dict[str, str] = Field(default_factory=dict)  # task id -> reason
    unchecked: list[str] = Field(default_factory=list)  # included, but the file has no definition
    label_conflicts: int = 0  # simulations scored against another task's gold than their label's
    relabelled: dict[str, str] = Field(default_factory=dict)  # "label/trial" -> "task id (basis)"
    excluded_simulations: dict[str, str] = Field(default_factory=dict)  # "label/trial" -> reason


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _action_key(action: dict[str, Any]) -> tuple[str, str, str, str]:
    return (
        action.get("requestor") or "assistant",
        action.get("name", ""),
        _canonical(action.get("arguments") or {}),
        _canonical(action.get("compare_args")),
    )


def _criteria_parts(task: t2.Task) -> dict[str, Any]:
    criteria = task.evaluation_criteria.model_dump(mode="json") if task.evaluation_criteria else {}
    parts: dict[str, Any] = {
        "actions": sorted(_action_key(a) for a in (criteria.get("actions") or [])),
        "reward_basis": sorted(criteria.get("reward_basis") or []),
        "communicate_info": sorted(_canonical(c) for c in (criteria.get("communicate_info") or [])),
        "env_assertions": sorted(_canonical(e) for e in (criteria.get("env_assertions") or [])),
    }
    parts["initial_state"] = _canonical(task.initial_state.model_dump(mode="json") if task.initial_state else None)
    return parts


def differences(recorded: dict[str, Any], current: t2.Task) -> list[str]:
    """Parts of a task definition (as stored in a results file) that differ from ``current``."""
    try:
        theirs = t2.Task.model_validate(recorded)
    except Exception as exc:  # pydantic ValidationError or worse: the definition is unreadable
        return [f"unreadable task definition ({type(exc).__name__})"]
    a, b = _criteria_parts(theirs), _criteria_parts(current)
    return [part for part in (*_COMPARED, "initial_state") if a[part] != b[part]]


def tasks_by_id(domain: str, wanted: set[str]) -> dict[str, t2.Task]:
    """26.3's tasks of ``domain`` with these ids (base split first, other splits if needed)."""
    found: dict[str, t2.Task] = {}
    for split in sorted(t2.task_splits(domain), key=lambda s: s != "base"):
        for task in t2.load_tasks(domain, split):
            if task.id in wanted:
                found.setdefault(task.id, task)
        if wanted <= found.keys():
            break
    return found


def check_tasks(results: ResultsFile, relabel: bool = False) -> tuple[TaskCheck, list[tuple[dict[str, Any], t2.Task]]]:
    """Which simulations can be imported, each with the 26.3 task it is scored against.

    Labels are checked first (:mod:`tauguard.trajectories.labels`): a simulation scored
    against another task's gold is excluded, or with ``relabel`` given the task it ran on.
    When a file has label conflicts, a simulation whose reward info names no gold cannot be
    placed and is excluded too. Then every task's definition in the file is compared with
    26.3's.
    """
    labels = {s["task_id"] for s in results.simulations}
    pool = {t.id: t for t in t2.load_tasks(results.domain, "base")} if "base" in t2.task_splits(results.domain) else {}
    pool.update(tasks_by_id(results.domain, labels - pool.keys()))
    verdicts = check_labels(results.simulations, list(pool.values()))
    conflicts = sum(v.status == "conflict" for v in verdicts)
    check = TaskCheck(label_conflicts=conflicts)
    chosen: list[tuple[dict[str, Any], str]] = []
    for sim, verdict in zip(results.simulations, verdicts, strict=True):
        key = f"{verdict.task_id}/{verdict.trial}"
        if verdict.status == "unknown_task":
            check.excluded[verdict.task_id] = f"not a τ² 26.3 {results.domain} task"
            continue
        if verdict.status == "conflict":
            if relabel and verdict.proposed:
                check.relabelled[key] = f"{verdict.proposed} ({verdict.basis})"
                sim = {**sim, "task_id": verdict.proposed, "source_task_id": verdict.task_id}
            else:
                found = ", ".join(verdict.candidates) or "none"
                check.excluded_simulations[key] = (
                    f"label conflict: its recorded checks are not task {verdict.task_id}'s gold "
                    f"(26.3 tasks with that gold: {found})"
                )
                continue
        elif verdict.status == "unverifiable" and conflicts:
            check.excluded_simulations[key] = (
                f"its reward info names no gold and the file has {conflicts} label conflict(s): task unknown"
            )
            continue
        chosen.append((sim, sim["task_id"]))
    current = tasks_by_id(results.domain, {tid for _, tid in chosen})
    for task_id in dict.fromkeys(tid for _, tid in chosen):
        if task_id not in current:
            check.excluded[task_id] = f"not a τ² 26.3 {results.domain} task"
            continue
        recorded = results.tasks.get(task_id)
        if recorded is None:
            check.unchecked.append(task_id)
        else:
            diff = differences(recorded, current[task_id])
            if diff:
                check.excluded[task_id] = "differs from τ² 26.3 in " + ", ".join(diff)
                continue
        check.included.append(task_id)
    keep = set(check.included)
    return check, [(sim, current[tid]) for sim, tid in chosen if tid in keep]


def role_usage(messages: list[dict[str, Any]], role: str, recorded_cost: Any, has_cost: bool) -> RoleUsage:
    """Cost and tokens of one role from its messages; cost None when the file has none."""
    own = [m for m in messages if isinstance(m, dict) and m.get("role") == role]
    prompt = completion = calls = 0
    for m in own:
        usage = m.get("usage") or {}
        if usage:
            calls += 1
        prompt += int(usage.get("prompt_tokens") or 0)
        completion += int(usage.get("completion_tokens") or 0)
    if has_cost:
        cost = float(recorded_cost) if recorded_cost is not None else None
    else:
        costs = [m.get("cost") for m in own if "cost" in m]
        cost = float(sum(costs)) if costs and all(c is not None for c in costs) else None
    return RoleUsage(cost=cost, prompt_tokens=prompt, completion_tokens=completion, calls=calls)


def slug(text: str) -> str:
    """A run-id-safe form of a model name."""
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-").lower() or "unknown"


def default_run_id(results: ResultsFile) -> str:
    """``imported-<domain>-<agent model>-<first 8 hex of the file's sha256>``."""
    agent = results.agent_info.get("llm") or results.agent_info.get("implementation") or "agent"
    return f"{IMPORTED}-{results.domain}-{slug(str(agent).split('/')[-1])}-{results.sha256[:8]}"


def build_records(results: ResultsFile, run_id: str, chosen: list[tuple[dict[str, Any], t2.Task]]) -> list[TrialRecord]:
    """One record per chosen simulation, with τ²'s recorded reward."""
    from tauguard.process import score_record

    default_seed = int(results.info.get("seed") or 0)
    records = []
    for sim, task in chosen:
        reward_info = sim.get("reward_info") or {}
        reward = reward_info.get("reward")
        reward = float(reward) if reward is not None else None
        skipped = bool(sim.get("skipped"))
        messages = sim["messages"]
        records.append(
            TrialRecord(
                run_id=run_id,
                domain=results.domain,
                task_id=task.id,
                trial=sim["trial"],
                seed=int(sim.get("seed") if sim.get("seed") is not None else default_seed),
                strategy=IMPORTED,
                simulated=False,
                policy_violation_task=t2.is_policy_violation_task(results.domain, task),
                reward=reward,
                success=is_success(reward) if reward is not None else None,
                termination_reason=sim.get("termination_reason"),
                usage={
                    "agent": role_usage(messages, "assistant", sim.get("agent_cost"), "agent_cost" in sim),
                    "user": role_usage(messages, "user", sim.get("user_cost"), "user_cost" in sim),
                },
                duration_s=float(sim.get("duration") or 0.0),
                # A simulation τ² skipped, or one without a recorded reward, is not an outcome.
                error="skipped in the source file" if skipped else (None if reward is not None else "no recorded reward"),
                simulation=sim,
            )
        )
        # Scored at import, like a live run's records, so every loader sees the same report.
        records[-1].process = score_record(records[-1])
    return records


def build_manifest(results: ResultsFile, run_id: str, check: TaskCheck, records: list[TrialRecord]) -> Manifest:
    """The manifest of an imported run: the file's models, seed, domain, tasks, provenance."""
    from tauguard.execution.batch import now_iso
    from tauguard.execution.manifest import git_commit, versions

    agent, user = results.agent_info, results.user_info
    trials = max((r.trial for r in records), default=-1) + 1
    stamp = now_iso()
    provenance = {
        "path": str(Path(results.path).resolve()),
        "sha256": results.sha256,
        "layout": results.layout,
        "timestamp": results.timestamp,
        "tau2_version": results.tau2_version,
        "tau2_git_commit": results.info.get("git_commit"),
        "agent_implementation": agent.get("implementation"),
        "user_implementation": user.get("implementation"),
        "max_errors": results.info.get("max_errors"),
        "num_trials": results.info.get("num_trials"),
        "excluded_tasks": dict(check.excluded),
        "unchecked_tasks": list(check.unchecked),
        "label_conflicts": check.label_conflicts,
        "relabelled": dict(check.relabelled),
        "excluded_simulations": dict(check.excluded_simulations),
    }
    return Manifest(
        run_id=run_id,
        status="completed",
        note=(
            f"IMPORTED: a τ² results file of a real agent ({agent.get('llm') or '?'}; user "
            f"{user.get('llm') or '?'}), rewards as recorded by τ²; not run by tauguard."
        ),
        created_at=stamp,
        updated_at=stamp,
        simulated=False,
        strategy=IMPORTED,
        domains=[results.domain],
        split=IMPORTED,
        task_ids={results.domain: list(check.included)},
        trials=max(trials, int(results.info.get("num_trials") or 0), 1),
        agent_llm=str(agent.get("llm") or agent.get("implementation") or "unknown"),
        user_llm=str(user.get("llm") or user.get("implementation") or "unknown"),
        llm_args=redact({"agent": agent.get("llm_args") or {}, "user": user.get("llm_args") or {}}),
        seed=int(results.info.get("seed") or 0),
        max_steps=int(results.info.get("max_steps") or 0),
        config={"source": provenance},
        versions=versions(),
        git_commit=git_commit(),
        counts={
            "simulations_in_file": len(results.simulations),
            "imported": len(records),
            "excluded_simulations": len(results.simulations) - len(records),
            "excluded_tasks": len(check.excluded),
            "label_conflicts": check.label_conflicts,
            "relabelled": len(check.relabelled),
        },
        source=IMPORTED,
        provenance=provenance,
    )


class ImportResult(BaseModel):
    """What an import wrote."""

    run_dir: str
    run_id: str
    domain: str
    simulations: int
    imported: int
    excluded_tasks: dict[str, str]
    excluded_simulations: int
    unchecked_tasks: list[str]
    label_conflicts: int
    relabelled: dict[str, str]
    excluded_simulation_reasons: dict[str, str]
    mean_recorded_reward: float | None  # over imported simulations with a reward
    seconds: float


def import_results(results: ResultsFile, out: Path, name: str | None = None, relabel: bool = False) -> ImportResult:
    """Check, convert and write ``results`` as the run ``out/<name>``.

    Nothing is written when the run directory exists already (:class:`ImportRunError`).
    """
    start = time.perf_counter()
    run_id = name or default_run_id(results)
    run_dir = Path(out) / run_id
    if run_dir.exists():
        raise ImportRunError(f"run directory already exists: {run_dir}")
    check, chosen = check_tasks(results, relabel)
    if not chosen:
        why = []
        if check.label_conflicts:
            why.append(f"{check.label_conflicts} label conflict(s)" + ("" if relabel else " (try --relabel)"))
        if check.excluded:
            why.append(f"{len(check.excluded)} task(s) missing from or different in τ² 26.3")
        raise ImportRunError(f"no simulation of {results.path} can be imported: " + "; ".join(why or ["none is usable"]))
    records = build_records(results, run_id, chosen)
    manifest = build_manifest(results, run_id, check, records)
    try:
        write_manifest(run_dir, manifest.model_copy(update={"status": "running"}))
        writer = RecordWriter(run_dir)
        try:
            for record in records:
                writer.write(record)
        finally:
            writer.close()
        manifest.wall_time_s = time.perf_counter() - start
        write_manifest(run_dir, manifest)
    except BaseException:
        shutil.rmtree(run_dir, ignore_errors=True)  # no half-written run
        raise
    rewards = [r.reward for r in records if r.reward is not None]
    return ImportResult(
        run_dir=str(run_dir),
        run_id=run_id,
        domain=results.domain,
        simulations=len(results.simulations),
        imported=len(records),
        excluded_tasks=dict(check.excluded),
        excluded_simulations=len(results.simulations) - len(records),
        unchecked_tasks=list(check.unchecked),
        label_conflicts=check.label_conflicts,
        relabelled=dict(check.relabelled),
        excluded_simulation_reasons=dict(check.excluded_simulations),
        mean_recorded_reward=sum(rewards) / len(rewards) if rewards else None,
        seconds=time.perf_counter() - start,
    )
