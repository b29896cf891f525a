"""Re-scoring imported conversations with tauguard's evaluator against τ² 26.3's tasks.

Each record's recorded conversation is rebuilt as a τ² ``SimulationRun`` and evaluated by
:class:`tauguard.tau2_adapter.evaluation.CachedEvaluator` (τ²'s ``evaluate_simulation`` semantics). The
predicted state is rebuilt the way τ² does it, by replaying the recorded tool calls on a
fresh environment (:func:`tauguard.trajectories.replayer.replay_recorded`), and every
replayed result is compared with the recorded one. τ² itself raises on any difference; here
a difference is reported with the simulation (and a difference only in pydantic's version
inside an error message's URL is marked benign), and the simulation is still scored on the
replayed state. Every simulation whose reward differs from the recorded one is listed with
the reward components that differ.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, Field

from tauguard.tau2_adapter import compat as t2
from tauguard.tau2_adapter.evaluation import CachedEvaluator
from tauguard.runs.records import SUCCESS_TOLERANCE
from tauguard.runs.store import Run
from tauguard.trajectories.importer import run_tasks
from tauguard.trajectories.replayer import replay_recorded


class Rescored(BaseModel):
    """One simulation: recorded and re-scored reward."""

    task_id: str
    trial: int
    recorded: float | None
    rescored: float | None  # None when the conversation could not be replayed
    agree: bool
    recorded_breakdown: dict[str, float] = Field(default_factory=dict)
    rescored_breakdown: dict[str, float] = Field(default_factory=dict)
    explanation: str = ""  # for a difference: which components differ, or the replay error
    replay_mismatches: int = 0  # replayed tool results that differ from the recorded ones
    benign_mismatches: int = 0  # of which differ only in pydantic's error-URL version


class RescoreReport(BaseModel):
    """Recorded versus re-scored rewards of a run."""

    run_id: str
    domain: str
    simulations: int
    agree: int
    differ: int
    replay_errors: int  # conversations that could not be replayed or scored at all
    unfaithful: int  # simulations with a replayed result differing from the recorded one (not benign)
    benign_mismatch_sims: int  # simulations whose only differences are pydantic error-URL versions
    mean_recorded: float | None
    mean_rescored: float | None
    differences: list[Rescored] = Field(default_factory=list)  # every disagreement
    results: list[Rescored] = Field(default_factory=list)


def _close(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) <= SUCCESS_TOLERANCE


def _breakdown(raw: object) -> dict[str, float]:
    if not isinstance(raw, dict):
        return {}
    return {str(getattr(k, "value", k)): float(v) for k, v in raw.items() if v is not None}


def _explain(recorded: dict[str, float], rescored: dict[str, float]) -> str:
    parts = [
        f"{key} recorded {recorded.get(key, '-')} vs re-scored {rescored.get(key, '-')}"
        for key in sorted(recorded.keys() | rescored.keys())
        if recorded.get(key) != rescored.get(key)
    ]
    return "; ".join(parts) or "rewards differ with equal components"


def rescore_run(run: Run, progress: Callable[[int, int], None] | None = None) -> RescoreReport:
    """Re-evaluate every record of an imported run that has a conversation."""
    records = [r for r in run.records if r.simulation is not None and r.error is None]
    domain = run.manifest.domains[0]
    tasks = run_tasks(domain, {r.task_id for r in records}, run.manifest.provenance.get("task_definitions"))
    evaluator = CachedEvaluator()
    results: list[Rescored] = []
    for i, rec in enumerate(records):
        recorded_info = (rec.simulation or {}).get("reward_info") or {}
        recorded_bd = _breakdown(recorded_info.get("reward_breakdown"))
        try:
            sim = t2.SimulationRun.model_validate(rec.simulation)
            task = tasks[rec.task_id]
            replay = replay_recorded(rec.domain, task, (rec.simulation or {})["messages"])
            info = evaluator.evaluate(sim, task, rec.domain, live_env=replay.environment)
        except Exception as exc:  # an unreadable conversation: reported, never hidden
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            results.append(
                Rescored(task_id=rec.task_id, trial=rec.trial, recorded=rec.reward, rescored=None, agree=False,
                         recorded_breakdown=recorded_bd, explanation=f"replay failed: {type(exc).__name__}: {first[:300]}")
            )
        else:
            bd = _breakdown(info.reward_breakdown)
            agree = _close(rec.reward, info.reward)
            notes = [] if agree else [_explain(recorded_bd, bd)]
            if replay.mismatches:
                mismatch = replay.mismatches[0]
                notes.append(
                    f"{len(replay.mismatches)} replayed result(s) differ, first {mismatch.tool} at message {mismatch.step}: {mismatch.why}"
                )
            results.append(
                Rescored(task_id=rec.task_id, trial=rec.trial, recorded=rec.reward, rescored=info.reward, agree=agree,
                         recorded_breakdown=recorded_bd, rescored_breakdown=bd, explanation="; ".join(notes),
                         replay_mismatches=len(replay.mismatches),
                         benign_mismatches=sum(m.benign for m in replay.mismatches))
            )
        if progress is not None:
            progress(i + 1, len(records))
    recorded = [r.recorded for r in results if r.recorded is not None]
    rescored = [r.rescored for r in results if r.rescored is not None]
    differences = [r for r in results if not r.agree]
    return RescoreReport(
        run_id=run.manifest.run_id,
        domain=domain,
        simulations=len(results),
        agree=sum(r.agree for r in results),
        differ=len(differences),
        replay_errors=sum(r.rescored is None for r in results),
        unfaithful=sum(r.replay_mismatches > r.benign_mismatches for r in results),
        benign_mismatch_sims=sum(0 < r.replay_mismatches == r.benign_mismatches for r in results),
        mean_recorded=sum(recorded) / len(recorded) if recorded else None,
        mean_rescored=sum(rescored) / len(rescored) if rescored else None,
        differences=differences,
        results=results,
    )
