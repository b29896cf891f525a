"""A tauguard run as a τ² results file (``info``, ``tasks``, ``simulations``), for τ²'s own tools.

The results are validated by τ²'s own model (``tau2.data_model.simulation.Results``), so a
file that is written is one τ²'s loader reads. Per simulation: τ²'s ``SimulationRun`` as the
record stores it, with the run's task id and trial, and without the keys tauguard adds on
import (``placement``, ``source_task_id``, ``filled``). ``tasks`` are the definitions the records are
scored against (26.3's, or the file's own for runs imported with ``--tasks-from-file``).
What the import added (placement, label, filled fields) is kept under the simulation's
``tauguard`` key, which τ²'s loader ignores and a re-import reads.

A record without a conversation (an infrastructure error before the simulation existed) or
whose simulation τ²'s model rejects (e.g. a termination reason τ² 26.3 does not know) cannot
be written; each is listed with its reason, never dropped silently.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from tauguard.tau2_adapter import compat as t2
from tauguard.runs.store import Run
from tauguard.trajectories.importer import run_tasks
from tauguard.errors import TauguardInputError

# Keys the importer adds to a stored simulation; not part of τ²'s SimulationRun.
_ADDED = ("placement", "source_task_id", "filled")
TAUGUARD_KEY = "tauguard"


class ExportError(TauguardInputError):
    """A run that cannot be exported as asked; one line for the user."""


class ExportReport(BaseModel):
    """What an export wrote and what it could not."""

    run_id: str
    domain: str
    simulations: int
    tasks: int
    simulated: bool
    skipped: dict[str, str] = Field(default_factory=dict)  # "task/trial" -> reason


def _info(run: Run, domain: str) -> dict[str, Any]:
    m = run.manifest
    prov = m.provenance or {}
    return {
        "git_commit": str(prov.get("tau2_git_commit") or m.git_commit or "unknown"),
        "num_trials": int(m.trials),
        "max_steps": int(m.max_steps),
        "max_errors": int(prov.get("max_errors") or 10),
        "user_info": {
            "implementation": str(prov.get("user_implementation") or "user_simulator"),
            "llm": m.user_llm,
            "llm_args": (m.llm_args or {}).get("user") or {},
        },
        "agent_info": {
            "implementation": str(prov.get("agent_implementation") or f"tauguard:{m.strategy}"),
            "llm": m.agent_llm,
            "llm_args": (m.llm_args or {}).get("agent") or {},
        },
        "environment_info": {"domain_name": domain, "policy": t2.policy_text(domain)},
        "seed": int(m.seed),
    }


def _simulation(record: Any) -> dict[str, Any]:
    stored = record.simulation or {}
    sim = {k: v for k, v in stored.items() if k not in _ADDED}
    # What tauguard learnt on import travels under one key τ²'s loader ignores, so a re-import
    # places the simulation as it was placed (an ambiguous placement stays ambiguous).
    ours = {k: stored[k] for k in _ADDED if k in stored}
    if ours:
        sim[TAUGUARD_KEY] = ours
    sim["task_id"] = record.task_id
    sim["trial"] = record.trial
    return sim


def export_results(run: Run, domain: str | None = None) -> tuple[dict[str, Any], ExportReport]:
    """The run (one domain of it) as τ² results JSON, validated by τ²'s ``Results`` model."""
    domains = list(run.manifest.domains)
    if domain is None:
        if len(domains) != 1:
            raise ExportError(f"run {run.manifest.run_id} has domains {', '.join(domains)}; a τ² results file holds one: pass --domain")
        domain = domains[0]
    elif domain not in domains:
        raise ExportError(f"run {run.manifest.run_id} has no domain '{domain}'; it has {', '.join(domains)}")
    report = ExportReport(run_id=run.manifest.run_id, domain=domain, simulations=0, tasks=0,
                          simulated=bool(run.manifest.simulated or any(r.simulated for r in run.records)))
    simulations: list[dict[str, Any]] = []
    for record in sorted((r for r in run.records if r.domain == domain), key=lambda r: (r.task_id, r.trial)):
        key = f"{record.task_id}/{record.trial}"
        if record.simulation is None:
            report.skipped[key] = f"no conversation ({(record.error or 'no simulation').splitlines()[0][:120]})"
            continue
        sim = _simulation(record)
        try:
            t2.SimulationRun.model_validate(sim)
        except Exception as exc:  # pydantic ValidationError: say which field τ² rejects
            first = str(exc).splitlines()
            report.skipped[key] = "τ² rejects it: " + " ".join(first[1:3]).strip()[:200]
            continue
        simulations.append(sim)
    if not simulations:
        raise ExportError(f"run {run.manifest.run_id} has no simulation τ² can read in {domain}")
    definitions = run.manifest.provenance.get("task_definitions") if run.manifest.source == "imported" else None
    tasks = run_tasks(domain, {s["task_id"] for s in simulations}, definitions)
    payload = {
        "timestamp": run.manifest.created_at,
        "info": _info(run, domain),
        "tasks": [tasks[tid].model_dump(mode="json") for tid in sorted(tasks, key=_order)],
        "simulations": simulations,
    }
    validated = t2.Results.model_validate(payload)  # τ²'s own model: what its loader accepts
    report.simulations, report.tasks = len(validated.simulations), len(validated.tasks)
    # The payload itself, not τ²'s dump of it: fields τ² 26.3 does not model (a later release's
    # audio fields, tauguard's own key) are kept, τ²'s loader ignores them, a re-import keeps them.
    return payload, report


def _order(task_id: str) -> tuple[int, str]:
    return (int(task_id), "") if task_id.isdigit() else (10**9, task_id)
