"""Build run directories from hand-written or random trial outcomes (tests, benchmarks).

A trial outcome is ``True`` (pass), ``False`` (fail) or ``"error"`` (infrastructure error).
An attack outcome is ``True`` / ``False`` (judged), ``None`` (attacked, outcome unknown) or
``"-"`` (not attacked).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tauguard.strategy_api.guard import GuardEvent
from tauguard.runs.records import Manifest, TrialRecord
from tauguard.runs.store import RecordWriter, write_manifest

Outcome = bool | Literal["error"]
Attack = bool | None | Literal["-"]


@dataclass
class TaskSpec:
    """One task's trials."""

    domain: str
    task_id: str
    outcomes: Sequence[Outcome]
    policy_violation: bool = False
    attacks: Sequence[Attack] | None = None
    guard_errors: Sequence[bool] = field(default_factory=tuple)  # per trial: a guard-error event


def write_run(
    root: Path,
    name: str,
    tasks: Sequence[TaskSpec],
    *,
    simulated: bool = True,
    strategy: str = "react",
    trials: int | None = None,
    manifest: dict[str, Any] | None = None,
) -> Path:
    """Write a run directory ``root/name`` with one record per (task, trial); return its path.

    ``manifest`` overrides manifest fields (``seed``, ``fault_profile``, ``config`` ...).
    """
    run_dir = root / name
    task_ids: dict[str, list[str]] = {}
    for t in tasks:
        task_ids.setdefault(t.domain, []).append(t.task_id)
    llm = "sim" if simulated else "openai/gpt-4.1"
    write_manifest(
        run_dir,
        Manifest(
            run_id=name,
            status="completed",
            created_at="2026-01-01T00:00:00Z",
            updated_at="2026-01-01T00:00:00Z",
            simulated=simulated,
            strategy=strategy,
            domains=sorted(task_ids),
            split="base",
            task_ids=task_ids,
            trials=trials if trials is not None else max((len(t.outcomes) for t in tasks), default=0),
            agent_llm=llm,
            user_llm=llm,
            seed=0,
            max_steps=100,
        ).model_copy(update=manifest or {}),
    )
    writer = RecordWriter(run_dir)
    try:
        for t in tasks:
            for i, outcome in enumerate(t.outcomes):
                attack: Attack = t.attacks[i] if t.attacks is not None else "-"
                events = []
                if i < len(t.guard_errors) and t.guard_errors[i]:
                    events.append(GuardEvent(hook="before_write", step=3, rule_id="guard.error.timeout"))
                err = outcome == "error"
                writer.write(
                    TrialRecord(
                        run_id=name,
                        domain=t.domain,
                        task_id=t.task_id,
                        trial=i,
                        seed=i,
                        strategy=strategy,
                        simulated=simulated,
                        policy_violation_task=t.policy_violation,
                        reward=None if err else (1.0 if outcome else 0.0),
                        success=None if err else bool(outcome),
                        attacked=attack != "-",
                        attack_success=None if attack == "-" else attack,
                        guard_events=events,
                        error="LLM provider timeout" if err else None,
                    )
                )
    finally:
        writer.close()
    return run_dir


def random_tasks(
    domains: dict[str, int],
    trials: int,
    p_pass: float | dict[str, float],
    *,
    seed: int = 0,
    pv_every: int = 4,
) -> list[TaskSpec]:
    """Tasks with independent Bernoulli(p_pass) trials; every ``pv_every``-th task is policy-violation."""
    rng = random.Random(seed)
    tasks = []
    for dom, count in domains.items():
        p = p_pass[dom] if isinstance(p_pass, dict) else p_pass
        for i in range(count):
            tasks.append(
                TaskSpec(
                    domain=dom,
                    task_id=str(i),
                    outcomes=[rng.random() < p for _ in range(trials)],
                    policy_violation=i % pv_every == 0,
                )
            )
    return tasks
