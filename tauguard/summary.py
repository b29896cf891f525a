"""A run's summary: metrics per slice plus guard, fault, cost and error accounting.

Pure library (no tau2, no litellm); rendered by `tauguard show` and at the end of a run.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from pydantic import BaseModel, Field

from tauguard.attacks.report import AttackReport, attack_report
from tauguard.metrics import RunMetrics, summarize_run
from tauguard.store import Run


class FaultClassRow(BaseModel):
    """Per fault class: how often it was injected, detected and prevented, and the trials it sank.

    Detected is not prevented: a guard may hold a faulty call once and the agent repeat it
    until it goes through, or take a remediation that does not undo the mistake.
    """

    fault_class: str
    scheduled: int
    injected: int
    detected: int  # a guard held the faulty call at least once (records: ``intercepted``)
    prevented: int | None  # the mistake never reached the environment; None: records predate it
    failed_trials: int  # trials with this fault applied that did not pass


class RoleCost(BaseModel):
    """Total usage of one role over the run."""

    role: str
    cost: float | None
    prompt_tokens: int
    completion_tokens: int
    calls: int


class RunSummary(BaseModel):
    """Everything `tauguard show` prints."""

    run_id: str
    status: str
    simulated: bool
    strategy: str
    domains: list[str]
    split: str
    agent_llm: str
    user_llm: str
    guard_llm: str | None
    fault_profile: str | None
    # The sim agent's reaction to guards ("feedback" / "oracle": an upper bound) and its uptake.
    sim_feedback: str | None = None
    uptake: float | None = None
    planned_units: int
    recorded_units: int
    wall_time_s: float
    metrics: RunMetrics
    guard_verdicts: dict[str, int] = Field(default_factory=dict)  # before_write verdict -> count
    guard_retry_exhausted: int = 0
    guard_calls_per_task: float | None = None  # LLM calls of the guard per (task, trial)
    guard_cost_per_task: float | None = None
    faults: list[FaultClassRow] = Field(default_factory=list)
    costs: list[RoleCost] = Field(default_factory=list)
    infra_errors: list[str] = Field(default_factory=list)  # "domain/task trial: first line"
    attacks: AttackReport | None = None  # adversarial-user breakdowns (`run --attack`)
    source: str = "run"  # "imported": conversations recorded elsewhere (`tauguard import`)
    source_note: str | None = None


def summarize(run: Run) -> RunSummary:
    """Build the summary of a loaded run."""
    m = run.manifest
    verdicts: Counter[str] = Counter()
    exhausted = 0
    guard_calls = 0
    guard_cost = 0.0
    fault_rows: dict[str, dict[str, int]] = defaultdict(lambda: Counter())
    role_totals: dict[str, dict[str, Any]] = {
        r: {"cost": 0.0, "prompt_tokens": 0, "completion_tokens": 0, "calls": 0} for r in ("agent", "user", "guard")
    }
    errors = []
    evaluated = [r for r in run.records if r.error is None]
    for rec in run.records:
        if rec.error is not None:
            errors.append(f"{rec.domain}/{rec.task_id} trial {rec.trial}: {rec.error.splitlines()[0]}")
            continue
        for ev in rec.guard_events:
            if ev.hook == "before_write" and ev.verdict is not None:
                verdicts[ev.verdict.value] += 1
            if ev.hook == "retry_exhausted":
                exhausted += 1
            guard_calls += ev.usage.llm_calls
            guard_cost += ev.usage.cost
        for f in rec.faults:
            row = fault_rows[f.fault_class]
            row["scheduled"] += 1
            if f.applied:
                row["injected"] += 1
                row["detected"] += int(bool(f.intercepted))
                row["prevented"] += int(f.reached is False)
                row["unknown_reach"] += int(f.reached is None)
                row["failed_trials"] += int(not rec.success)
        for role, usage in rec.usage.items():
            tot = role_totals.setdefault(role, {"cost": 0.0, "prompt_tokens": 0, "completion_tokens": 0, "calls": 0})
            tot["cost"] = None if tot["cost"] is None or usage.cost is None else tot["cost"] + usage.cost
            tot["prompt_tokens"] += usage.prompt_tokens
            tot["completion_tokens"] += usage.completion_tokens
            tot["calls"] += usage.calls
    order = ["A", "T", "D", "W", "PV"]
    faults = [
        FaultClassRow(
            fault_class=c, **{k: fault_rows[c][k] for k in ("scheduled", "injected", "detected", "failed_trials")},
            prevented=None if fault_rows[c]["unknown_reach"] else fault_rows[c]["prevented"],
        )
        for c in sorted(fault_rows, key=lambda c: order.index(c) if c in order else len(order))
    ]
    n = len(evaluated)
    return RunSummary(
        run_id=m.run_id, status=m.status, simulated=m.simulated or any(r.simulated for r in run.records),
        strategy=m.strategy, domains=m.domains, split=m.split, agent_llm=m.agent_llm, user_llm=m.user_llm,
        guard_llm=m.guard_llm, fault_profile=m.fault_profile.get("name"),
        sim_feedback=m.sim_feedback, uptake=m.fault_profile.get("uptake") if m.sim_feedback else None, planned_units=m.expected_units,
        recorded_units=len(run.records), wall_time_s=m.wall_time_s, metrics=summarize_run(run),
        guard_verdicts=dict(verdicts), guard_retry_exhausted=exhausted,
        guard_calls_per_task=guard_calls / n if n else None, guard_cost_per_task=guard_cost / n if n else None,
        faults=faults, costs=[RoleCost(role=r, **v) for r, v in role_totals.items()], infra_errors=errors,
        attacks=attack_report(run.records, m.run_id, m.strategy),
        source=m.source, source_note=m.note if m.source == "imported" else None,
    )
