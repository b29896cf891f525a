"""A run's summary: metrics per slice plus guard, fault, cost and error accounting.

Pure library (no tau2, no litellm); rendered by `tauguard show` and at the end of a run. Built from
each record's :class:`~tauguard.runs.outcome_index.RecordTally`, so a run loaded from its outcome index
(``load_run(records=False)``) is summarised without parsing a record.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import BaseModel, Field

from tauguard.analysis.attack_report import AttackReport, AttackTrial, attack_report_trials
from tauguard.analysis.metrics import RunMetrics, run_is_simulated, summarize_outcomes
from tauguard.analysis.task_table import run_task_outcomes
from tauguard.runs.left_out import LeftOut, left_out_of
from tauguard.runs.outcome_index import RecordTally, UnitOutcome, parse_tally, read_tally_lines, record_tally, scan_records
from tauguard.runs.store import Run, RunLoadError, records_size


def summarize_run(run: Run) -> RunMetrics:
    """Metrics of a loaded run, per slice, for k = 1..(largest evaluated n)."""
    return summarize_outcomes(
        run_task_outcomes(run),
        run_id=run.manifest.run_id,
        strategy=run.manifest.strategy,
        simulated=run_is_simulated(run),
        domains=run.manifest.domains,
        skipped_lines=run.skipped_lines,
    )


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
    left_out: LeftOut | None = None  # an imported run: the file's simulations the import left out


def iter_tallies(run: Run) -> Iterator[tuple[UnitOutcome, RecordTally]]:
    """Each unit of a run with its tally, in the run's unit order: from its records when loaded
    with them, else from its tallies file row by row (or, when that is stale, from the records
    streamed)."""
    if run.units is None or run.lines is None:
        for unit, record in zip(run.unit_outcomes(), run.records, strict=True):
            yield unit, record_tally(record)
        return
    lines = read_tally_lines(run.path, records_size(run.path))
    parsed: list[RecordTally | None] | None = None
    if lines is None or len(lines) <= max(run.lines, default=-1):
        parsed = scan_records(run.path)[1]
    for unit, line in zip(run.units, run.lines, strict=True):
        try:
            tally = parsed[line] if parsed is not None else parse_tally(lines[line])  # type: ignore[index]
        except (ValueError, IndexError):
            tally = None
        if tally is None:  # the records changed under the loaded run
            raise RunLoadError(f"the records of {run.path} changed while it was read; run the command again")
        yield unit, tally


def summarize(run: Run, tallies: Iterable[tuple[UnitOutcome, RecordTally]] | None = None) -> RunSummary:
    """Build the summary of a loaded run (with records, or from its outcome index: the same summary).

    ``tallies``: the run's :func:`iter_tallies`, when the caller wants to see them go by too.
    """
    m = run.manifest
    units = run.unit_outcomes()
    verdicts: Counter[str] = Counter()
    exhausted = 0
    guard_calls = 0
    guard_cost = 0.0
    fault_rows: dict[str, dict[str, int]] = defaultdict(lambda: Counter())
    role_totals: dict[str, dict[str, Any]] = {
        r: {"cost": 0.0, "prompt_tokens": 0, "completion_tokens": 0, "calls": 0} for r in ("agent", "user", "guard")
    }
    errors = []
    evaluated: list[AttackTrial] = []
    for unit, tally in tallies if tallies is not None else iter_tallies(run):
        if tally.error_line is not None:
            errors.append(f"{unit.domain}/{unit.task_id} trial {unit.trial}: {tally.error_line}")
            continue
        evaluated.append((unit, tally.attack_tactic, tally.attack_clause))
        for verdict in tally.verdicts:
            verdicts[verdict] += 1
        exhausted += tally.retry_exhausted
        guard_calls += tally.guard_calls
        for cost in tally.guard_costs:
            guard_cost += cost
        for fault_class, applied, intercepted, reached in tally.faults:
            row = fault_rows[fault_class]
            row["scheduled"] += 1
            if applied:
                row["injected"] += 1
                row["detected"] += int(intercepted)
                row["prevented"] += int(reached is False)
                row["unknown_reach"] += int(reached is None)
                row["failed_trials"] += int(not unit.success)
        for role, cost, prompt_tokens, completion_tokens, calls in tally.usage:
            tot = role_totals.get(role)
            if tot is None:
                tot = role_totals[role] = {"cost": 0.0, "prompt_tokens": 0, "completion_tokens": 0, "calls": 0}
            tot["cost"] = None if tot["cost"] is None or cost is None else tot["cost"] + cost
            tot["prompt_tokens"] += prompt_tokens
            tot["completion_tokens"] += completion_tokens
            tot["calls"] += calls
    n = len(evaluated)
    order = ["A", "T", "D", "W", "PV"]
    faults = [
        FaultClassRow(
            fault_class=c, **{k: fault_rows[c][k] for k in ("scheduled", "injected", "detected", "failed_trials")},
            prevented=None if fault_rows[c]["unknown_reach"] else fault_rows[c]["prevented"],
        )
        for c in sorted(fault_rows, key=lambda c: order.index(c) if c in order else len(order))
    ]
    return RunSummary(
        run_id=m.run_id, status=m.status, simulated=m.simulated or any(u.simulated for u in units),
        strategy=m.strategy, domains=m.domains, split=m.split, agent_llm=m.agent_llm, user_llm=m.user_llm,
        guard_llm=m.guard_llm, fault_profile=m.fault_profile.get("name"),
        sim_feedback=m.sim_feedback, uptake=m.fault_profile.get("uptake") if m.sim_feedback else None, planned_units=m.expected_units,
        recorded_units=len(units), wall_time_s=m.wall_time_s, metrics=summarize_run(run),
        guard_verdicts=dict(verdicts), guard_retry_exhausted=exhausted,
        guard_calls_per_task=guard_calls / n if n else None, guard_cost_per_task=guard_cost / n if n else None,
        faults=faults, costs=[RoleCost(role=r, **v) for r, v in role_totals.items()], infra_errors=errors,
        attacks=attack_report_trials(evaluated, m.run_id, m.strategy),
        source=m.source, source_note=m.note if m.source == "imported" else None, left_out=left_out_of(m),
    )
