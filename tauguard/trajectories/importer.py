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
from collections import Counter
import shutil
import time
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, Field

from tauguard.tau2_adapter import compat as t2
from tauguard.secrets import redact
from tauguard.runs.records import Manifest, TrialRecord, is_success
from tauguard.usage_ledger import RoleUsage
from tauguard.runs.store import RecordWriter, write_manifest
from tauguard.trajectories.labels import matches, recorded_fingerprint, task_fingerprint
from tauguard.trajectories.placement import Placement, TaskText, place_simulations, placement_counts
from tauguard.trajectories.load import ResultsFile
from tauguard.runs.left_out import left_out_summary
from tauguard.errors import TauguardInputError

IMPORTED: Final = "imported"
# The parts of a task definition that scoring or replay read.
_COMPARED = ("actions", "reward_basis", "communicate_info", "env_assertions")


class ImportRunError(TauguardInputError):
    """An import that cannot proceed (e.g. the run directory exists); one line for the user."""


class TaskCheck(BaseModel):
    """How the file's simulations and tasks relate to τ² 26.3's."""

    included: list[str] = Field(default_factory=list)  # task ids imported, file order
    excluded: dict[str, str] = Field(default_factory=dict)  # task id -> reason
    unchecked: list[str] = Field(default_factory=list)  # included, but the file has no definition
    label_conflicts: int = 0  # simulations whose content places them on another task than their label
    relabelled: dict[str, str] = Field(default_factory=dict)  # "label/trial" -> "task id (basis)"
    excluded_simulations: dict[str, str] = Field(default_factory=dict)  # "label/trial" or "#index" -> reason
    placements: dict[str, int] = Field(default_factory=dict)  # confidence -> simulations
    ambiguous: dict[str, str] = Field(default_factory=dict)  # key -> "proposed task? (basis)"
    shared_gold: dict[str, str] = Field(default_factory=dict)  # placed among tasks sharing a gold: key -> task (basis)
    different_version: dict[str, str] = Field(default_factory=dict)  # key -> label: scored against other task definitions
    file_tasks: dict[str, str] = Field(default_factory=dict)  # task id -> why the file's definition is used


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


def run_tasks(domain: str, task_ids: set[str], definitions: dict[str, Any] | None = None) -> dict[str, t2.Task]:
    """The task each record of an imported run is scored against: 26.3's, or the file's own
    definition where the run was imported with ``--tasks-from-file`` (``definitions``, from
    ``Manifest.provenance["task_definitions"]``)."""
    own = {tid: t2.Task.model_validate(raw) for tid, raw in (definitions or {}).items() if tid in task_ids}
    return {**tasks_by_id(domain, task_ids - own.keys()), **own}


def _pool(domain: str, labels: set[str]) -> dict[str, t2.Task]:
    """26.3's base tasks of ``domain`` plus any labelled task found in its other splits."""
    pool = {t.id: t for t in t2.load_tasks(domain, "base")} if "base" in t2.task_splits(domain) else {}
    pool.update(tasks_by_id(domain, labels - pool.keys()))
    return pool


def infer_domain(results: ResultsFile) -> str | None:
    """The domain whose 26.3 gold most simulations' recorded gold matches (None: no match)."""
    from tauguard.domains import DOMAINS

    best: tuple[int, str | None] = (0, None)
    prints = [recorded_fingerprint(s) for s in results.simulations]
    for domain in DOMAINS:
        gold = [task_fingerprint(t) for t in t2.load_tasks(domain, "base")] if "base" in t2.task_splits(domain) else []
        hits = sum(any(matches(fp, g) for g in gold) for fp in prints if fp[0])  # an action list to tell by
        best = max(best, (hits, domain), key=lambda x: x[0])
    return best[1]


def _key(sim: dict[str, Any], index: int) -> str:
    """How a simulation is named in reports: ``label/trial`` as in the file, else its position."""
    if sim.get("task_id") is not None:
        return f"{sim['task_id']}/{sim['trial'] if sim.get('trial') is not None else '?'}"
    return f"#{index}"


def _file_task(results: ResultsFile, placement: Placement, sim: dict[str, Any]) -> str | None:
    """The file's own task (id) whose gold the simulation was scored against, if the file has it."""
    recorded = recorded_fingerprint(sim)
    ids = [placement.label] if placement.label is not None else list(results.tasks)
    for task_id in ids:
        raw = results.tasks.get(task_id or "")
        if raw is None:
            continue
        try:
            task = t2.Task.model_validate(raw)
        except Exception:  # an unreadable definition cannot score anything
            continue
        if matches(recorded, task_fingerprint(task)):
            return task_id
    return None


def _unwrap(sim: dict[str, Any]) -> dict[str, Any]:
    """A simulation `tauguard export` wrote, with what tauguard had added back in place (label, filled fields)."""
    carried = sim.get("tauguard")
    if not isinstance(carried, dict):
        return sim
    out = {k: v for k, v in sim.items() if k != "tauguard"}
    out.update({k: carried[k] for k in ("source_task_id", "filled") if k in carried})
    return out


def _number_trials(chosen: list[tuple[dict[str, Any], str]]) -> list[tuple[dict[str, Any], str]]:
    """Give each simulation a trial: the file's where free on its task, else the next free one."""
    taken: dict[str, set[int]] = {}
    for sim, task_id in chosen:
        if sim.get("trial") is not None and sim["trial"] not in taken.setdefault(task_id, set()):
            taken[task_id].add(sim["trial"])
            sim["_trial"] = sim["trial"]
    out = []
    for sim, task_id in chosen:
        if "_trial" not in sim:
            used = taken.setdefault(task_id, set())
            sim["_trial"] = next(k for k in range(len(used) + 1) if k not in used)
            used.add(sim["_trial"])
        trial = sim.pop("_trial")
        out.append(({**sim, "trial": trial}, task_id))
    return out


def check_tasks(
    results: ResultsFile, relabel: bool = False, accept_ambiguous: bool = False, tasks_from_file: bool = False
) -> tuple[TaskCheck, list[tuple[dict[str, Any], t2.Task]]]:
    """Which simulations can be imported, each with the task definition it is scored against.

    Every simulation is placed on its task from its content
    (:mod:`tauguard.trajectories.placement`). Excluded, each with its reason: a simulation
    scored against a different task version than 26.3's (unless ``tasks_from_file`` and the
    file carries that version), an ambiguous placement (unless ``accept_ambiguous``), a
    placement on another task than the label (a *label conflict*, unless ``relabel``), and
    the simulations of tasks missing from 26.3 or defined differently in the file (unless
    ``tasks_from_file``: then scored against the file's definition).
    """
    assert results.domain is not None, "the domain is resolved before the tasks are checked"
    labels = {s["task_id"] for s in results.simulations if s.get("task_id") is not None}
    pool = _pool(results.domain, labels)
    texts = [TaskText(id=t.id, fingerprint=task_fingerprint(t), instructions=str(t.user_scenario.instructions)) for t in pool.values()]
    placements = place_simulations(results.simulations, texts)
    check = TaskCheck(placements=placement_counts(placements))
    chosen: list[tuple[dict[str, Any], str]] = []
    for index, (sim, p) in enumerate(zip(results.simulations, placements, strict=True)):
        key = _key(sim, index)
        sim = _unwrap(sim)
        record = {"confidence": p.confidence, "basis": p.basis, "source_index": index}
        if p.confidence == "different_version":
            own = _file_task(results, p, sim) if tasks_from_file else None
            if own is None:
                check.different_version[key] = p.label or "?"
                check.excluded_simulations[key] = (
                    "scored against a different task version: its recorded gold matches no τ² 26.3 "
                    f"{results.domain} task" + ("" if p.label is None else f" (label {p.label})")
                    + ("" if tasks_from_file or not results.tasks else "; --tasks-from-file scores it against the file's definition")
                )
                continue
            chosen.append(({**sim, "task_id": own, "placement": {**record, "confidence": "file_task"}}, own))
            continue
        if p.task_id is None:
            check.excluded_simulations[key] = f"cannot be placed on a task: {p.basis}"
            continue
        if p.confidence == "ambiguous":
            check.ambiguous[key] = f"{p.task_id}? ({p.basis})"
            check.label_conflicts += p.label is not None and p.label not in p.candidates
            if not accept_ambiguous:
                check.excluded_simulations[key] = f"ambiguous placement, left out of per-task pairing (--accept-ambiguous imports it): {p.basis}"
                continue
        if p.relabelled:
            check.label_conflicts += p.confidence != "ambiguous"
            if not relabel:
                check.excluded_simulations[key] = (
                    f"label conflict: its content places it on task {p.task_id}, not its label {p.label} ({p.basis})"
                )
                continue
            check.relabelled[key] = f"{p.task_id} (gold)" if p.confidence == "gold" else f"{p.task_id} ({p.confidence}: {p.basis})"
            sim = {**sim, "source_task_id": p.label}
        elif p.confidence in ("scenario", "label") and len(p.candidates) > 1:
            check.shared_gold[key] = f"{p.task_id} ({p.confidence}: {p.basis})"
        chosen.append(({**sim, "task_id": p.task_id, "placement": record}, p.task_id))
    chosen = _number_trials(chosen)
    current = tasks_by_id(results.domain, {tid for _, tid in chosen})
    definitions: dict[str, t2.Task] = {}
    for task_id in dict.fromkeys(tid for _, tid in chosen):
        recorded = results.tasks.get(task_id)
        if task_id not in current and not (tasks_from_file and recorded is not None):
            check.excluded[task_id] = f"not a τ² 26.3 {results.domain} task"
            continue
        if recorded is None:
            check.unchecked.append(task_id)
        else:
            diff = differences(recorded, current[task_id]) if task_id in current else ["not a τ² 26.3 task"]
            if diff:
                if not tasks_from_file or diff[0].startswith("unreadable"):
                    check.excluded[task_id] = "differs from τ² 26.3 in " + ", ".join(diff) + (
                        "" if tasks_from_file else " (a different task version; --tasks-from-file scores it against the file's)"
                    )
                    continue
                own = t2.Task.model_validate(recorded)
                if not all(matches(recorded_fingerprint(sim), task_fingerprint(own)) for sim, tid in chosen if tid == task_id):
                    # The file's definition is not what τ² scored these simulations against.
                    check.excluded[task_id] = (
                        "differs from τ² 26.3 in " + ", ".join(diff) + ", and its simulations' recorded gold is not the file's definition either"
                    )
                    continue
                definitions[task_id] = own
                check.file_tasks[task_id] = "the file's definition (differs from τ² 26.3 in " + ", ".join(diff) + ")"
        check.included.append(task_id)
    keep = set(check.included)
    for sim, tid in chosen:
        if tid not in keep:
            check.excluded_simulations.setdefault(_key(sim, sim["placement"]["source_index"]), check.excluded.get(tid, "task excluded"))
    return check, [(sim, definitions.get(tid) or current[tid]) for sim, tid in chosen if tid in keep]


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
        known = [c for c in costs if c is not None]
        cost = float(sum(known)) if costs and len(known) == len(costs) else None
    return RoleUsage(cost=cost, prompt_tokens=prompt, completion_tokens=completion, calls=calls)


def slug(text: str) -> str:
    """A run-id-safe form of a model name."""
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-").lower() or "unknown"


def default_run_id(results: ResultsFile) -> str:
    """``imported-<domain>-<agent model>-<first 8 hex of the file's sha256>``."""
    counts = results.models.counts.get("agent") or {}
    top = max(counts, key=lambda m: counts[m]) if counts else None
    agent = results.agent_info.get("llm") or top or results.agent_info.get("implementation") or "agent"
    return f"{IMPORTED}-{results.domain}-{slug(str(agent).split('/')[-1])}-{results.sha256[:8]}"


_USER_STOPS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")


def complete_simulation(sim: dict[str, Any], timestamp: str | None) -> dict[str, Any]:
    """``sim`` with τ²'s required ``SimulationRun`` fields the file lacks filled in, and named in ``filled``.

    An original upload may carry only ``id``, ``reward_info`` and ``messages``. The termination
    reason is read off the conversation as τ²'s orchestrator decides it (a user turn with a stop
    token: ``user_stop``; an agent turn with ``###STOP###``: ``agent_stop``); it is left out when
    the conversation does not show it. Times unknown to the file are its timestamp, duration 0.
    """
    filled: list[str] = []
    out = dict(sim)
    for key in ("start_time", "end_time"):
        if not out.get(key):
            out[key] = timestamp or "unknown"
            filled.append(key)
    if out.get("duration") is None:
        out["duration"] = 0.0
        filled.append("duration")
    if not out.get("termination_reason"):
        last = next((m for m in reversed(out["messages"]) if isinstance(m, dict) and m.get("role") in ("user", "assistant")), None)
        text = str((last or {}).get("content") or "")
        reason = None
        if last and last["role"] == "user" and any(stop in text for stop in _USER_STOPS):
            reason = "user_stop"
        elif last and last["role"] == "assistant" and "###STOP###" in text:
            reason = "agent_stop"
        if reason:
            out["termination_reason"] = reason
            filled.append("termination_reason")
    if filled:
        out["filled"] = filled
    return out


def build_records(results: ResultsFile, run_id: str, chosen: list[tuple[dict[str, Any], t2.Task]]) -> list[TrialRecord]:
    """One record per chosen simulation, with τ²'s recorded reward."""
    from tauguard.process import score_record

    default_seed = int(results.info.get("seed") or 0)
    domain = _resolved(results)
    records = []
    for sim, task in chosen:
        sim = complete_simulation(sim, results.timestamp)
        reward_info = sim.get("reward_info") or {}
        reward = reward_info.get("reward")
        reward = float(reward) if reward is not None else None
        skipped = bool(sim.get("skipped"))
        messages = sim["messages"]
        records.append(
            TrialRecord(
                run_id=run_id,
                domain=domain,
                task_id=task.id,
                trial=sim["trial"],
                seed=int(sim["seed"]) if sim.get("seed") is not None else default_seed,
                strategy=IMPORTED,
                simulated=is_simulated(results),
                policy_violation_task=t2.is_policy_violation_task(domain, task),
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


def build_manifest(
    results: ResultsFile, run_id: str, check: TaskCheck, records: list[TrialRecord], definitions: dict[str, Any] | None = None
) -> Manifest:
    """The manifest of an imported run: the file's models, seed, domain, tasks, provenance.

    ``definitions`` (task id -> the file's task JSON) are the tasks imported with the file's
    own definition; rescoring and audits read them from the manifest instead of 26.3's.
    """
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
        "domain_source": results.domain_source,
        "top_level": dict(results.top_level),
        "models": results.models.model_dump(),
        "placements": dict(check.placements),
        "ambiguous": dict(check.ambiguous),
        "shared_gold": dict(check.shared_gold),
        "different_task_version": dict(check.different_version),
        "file_tasks": dict(check.file_tasks),
        "task_definitions": dict(definitions or {}),
        "filled_fields": dict(Counter(f for r in records for f in (r.simulation or {}).get("filled", []))),
        # how many of the file's simulations the run lacks, why, and their recorded rewards:
        # every command reading the run says it (tauguard.runs.left_out)
        "left_out": left_out_summary(results.simulations, [r.reward for r in records], check.excluded_simulations).model_dump(),
    }
    simulated = is_simulated(results)
    what = "of the built-in sim model (SIMULATION, not a real LLM)" if simulated else "of a real agent"
    return Manifest(
        run_id=run_id,
        status="completed",
        note=(
            f"IMPORTED: a τ² results file {what} ({results.models.label('agent')}; user "
            f"{results.models.label('user')}), rewards as recorded by τ²; not run by tauguard."
        ),
        created_at=stamp,
        updated_at=stamp,
        simulated=simulated,
        strategy=IMPORTED,
        domains=[_resolved(results)],
        split=IMPORTED,
        task_ids={_resolved(results): list(check.included)},
        trials=max(trials, 1),
        agent_llm=_model_name(results, "agent"),
        user_llm=_model_name(results, "user"),
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
            "ambiguous": len(check.ambiguous),
            "different_task_version": len(check.different_version),
        },
        source=IMPORTED,
        provenance=provenance,
    )


def is_simulated(results: ResultsFile) -> bool:
    """Whether the file's agent or user is tauguard's built-in sim model (e.g. an exported sim run)."""
    from tauguard.sim import SIM_MODEL

    return any(SIM_MODEL in (results.models.counts.get(role) or {}) for role in ("agent", "user"))


def _model_name(results: ResultsFile, role: str) -> str:
    named = results.models.label(role)
    if named != "unknown":
        return named
    part = results.agent_info if role == "agent" else results.user_info
    return str(part.get("implementation") or results.top_level.get("model" if role == "agent" else "") or "unknown")


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
    domain_source: str | None = None
    placements: dict[str, int] = Field(default_factory=dict)
    ambiguous: dict[str, str] = Field(default_factory=dict)
    ambiguous_accepted: bool = False
    shared_gold: dict[str, str] = Field(default_factory=dict)
    different_version: dict[str, str] = Field(default_factory=dict)
    file_tasks: dict[str, str] = Field(default_factory=dict)
    agent_models: str = "unknown"
    user_models: str = "unknown"
    trials: dict[int, int] = Field(default_factory=dict)  # trials per task -> number of tasks
    without_reward: int = 0  # imported simulations with no recorded reward (errors, out of metrics)
    filled_fields: dict[str, int] = Field(default_factory=dict)  # τ² fields the file lacks -> simulations filled


def _resolved(results: ResultsFile) -> str:
    """The domain of ``results`` once :func:`resolve_domain` has set it."""
    if results.domain is None:
        raise RuntimeError(f"{results.path}: records built before the domain was resolved")
    return results.domain


def resolve_domain(results: ResultsFile) -> ResultsFile:
    """``results`` with its domain set: the file's or the option's, else inferred from the recorded gold."""
    if results.domain is not None:
        return results
    domain = infer_domain(results)
    if domain is None:
        raise ImportRunError(f"{results.path}: the file records no domain and its recorded gold matches no domain's tasks; pass --domain")
    return results.model_copy(update={"domain": domain, "domain_source": "content"})


def import_results(
    results: ResultsFile, out: Path, name: str | None = None, relabel: bool = False,
    accept_ambiguous: bool = False, tasks_from_file: bool = False,
) -> ImportResult:
    """Check, convert and write ``results`` as the run ``out/<name>``.

    Nothing is written when the run directory exists already (:class:`ImportRunError`).
    """
    start = time.perf_counter()
    results = resolve_domain(results)
    run_id = name or default_run_id(results)
    run_dir = Path(out) / run_id
    if run_dir.exists():
        raise ImportRunError(f"run directory already exists: {run_dir}")
    check, chosen = check_tasks(results, relabel, accept_ambiguous, tasks_from_file)
    if not chosen:
        why = []
        if check.label_conflicts:
            why.append(f"{check.label_conflicts} label conflict(s)" + ("" if relabel else " (try --relabel)"))
        if check.different_version:
            why.append(f"{len(check.different_version)} scored against a different task version")
        if check.ambiguous and not accept_ambiguous:
            why.append(f"{len(check.ambiguous)} ambiguous placement(s) (try --accept-ambiguous)")
        if check.excluded:
            why.append(f"{len(check.excluded)} task(s) missing from or different in τ² 26.3")
        raise ImportRunError(f"no simulation of {results.path} can be imported: " + "; ".join(why or ["none is usable"]))
    records = build_records(results, run_id, chosen)
    definitions = {tid: results.tasks[tid] for tid in check.file_tasks}
    manifest = build_manifest(results, run_id, check, records, definitions)
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
    except OSError as exc:  # a folder that cannot be written, a full disk
        shutil.rmtree(run_dir, ignore_errors=True)  # no half-written run
        raise ImportRunError(f"cannot write the run {run_dir}: {exc.strerror or exc}") from None
    except BaseException:
        shutil.rmtree(run_dir, ignore_errors=True)  # no half-written run
        raise
    rewards = [r.reward for r in records if r.reward is not None]
    return ImportResult(
        run_dir=str(run_dir),
        run_id=run_id,
        domain=_resolved(results),
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
        domain_source=results.domain_source,
        placements=dict(check.placements),
        ambiguous=dict(check.ambiguous),
        ambiguous_accepted=accept_ambiguous,
        shared_gold=dict(check.shared_gold),
        different_version=dict(check.different_version),
        file_tasks=dict(check.file_tasks),
        agent_models=manifest.agent_llm,
        user_models=manifest.user_llm,
        trials=dict(Counter(Counter(r.task_id for r in records).values())),
        without_reward=len(records) - len(rewards),
        filled_fields=dict(manifest.provenance.get("filled_fields") or {}),
    )
