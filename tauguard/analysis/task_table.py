"""A run's task outcomes as columns: one row per (domain, task), its counts in numpy arrays.

:func:`outcomes_from_units` reduces a run's unit outcomes (one per trial) to
one :class:`~tauguard.analysis.metrics.TaskOutcome` per task. At 100x (10^5 trials, 27,800 tasks per
run) building those pydantic objects, and pairing them, was most of `compare`'s time, while the
metrics read only a few distinct ones: tasks with equal counts have equal per-task values.
:class:`TaskTable` holds the same reduction as arrays, so `compare` and `check` align, select
and group tasks with array operations and build a :class:`~tauguard.analysis.metrics.TaskOutcome` only
for each distinct row (:meth:`TaskTable.outcome`). :meth:`TaskTable.outcomes` gives the list
:func:`outcomes_from_units` always gave, object for object. The run-level reductions
(:func:`run_task_outcomes`, :func:`run_task_table`) live here too, so the metrics (whose types the
rows are) never import the table.

Pure library: imports neither tau2 nor litellm.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from tauguard.analysis.metrics import Subset, TaskOutcome, task_sort_key
from tauguard.domains.gold_conflicts import conflict_tasks
from tauguard.gc_pause import gc_paused
from tauguard.runs.outcome_index import UnitOutcome, unit_outcome
from tauguard.runs.records import TrialRecord

if TYPE_CHECKING:
    from tauguard.runs.store import Run

# The integer counters of a TaskOutcome, in the order of TaskTable.counts' columns.
COUNTERS = (
    "trials", "successes", "infra_errors", "attack_trials", "attack_successes", "attack_unknown",
    "guard_error_trials", "process_trials", "process_valid", "process_passed", "process_blocked", "process_assessed",
    "process_compliant", "process_checks", "process_satisfied",
)
# Positions in a row of counts (by name, so a new counter cannot shift them).
_TRIALS, _SUCCESSES, _INFRA = (COUNTERS.index(n) for n in ("trials", "successes", "infra_errors"))
_ATTACK_TRIALS, _ATTACK_SUCCESSES, _ATTACK_UNKNOWN, _GUARD_ERRORS = (
    COUNTERS.index(n) for n in ("attack_trials", "attack_successes", "attack_unknown", "guard_error_trials")
)
_P_TRIALS, _P_VALID, _P_PASSED, _P_BLOCKED, _P_ASSESSED, _P_COMPLIANT, _P_CHECKS, _P_SATISFIED = (
    COUNTERS.index("process_" + n)
    for n in ("trials", "valid", "passed", "blocked", "assessed", "compliant", "checks", "satisfied")
)


def _increments(outcome: tuple[Any, ...]) -> list[int]:
    """What one trial with these outcome fields (a UnitOutcome after its trial number) adds to its task's counts."""
    _, error, success, _, attacked, attack_success, guard_error, process, guard_blocked = outcome
    c = [0] * len(COUNTERS)
    if error:
        c[_INFRA] = 1
        return c
    c[_TRIALS] = 1
    c[_SUCCESSES] = int(bool(success))
    if process is not None:
        c[_P_TRIALS] = 1
        # Step-/Trace-TCR traces: PolicyGuide's outcome-passing ones, plus (tauguard's rule, the
        # paper being silent on guards) those that failed with a needed write a guard held:
        # dropping them would let blocking raise the rates (docs/compare_and_check.md).
        if success or guard_blocked:
            valid, applicable, satisfied = cast(tuple[bool, int, int], process)
            if success:
                c[_P_VALID] = int(valid)
                c[_P_PASSED] = 1
            else:
                c[_P_BLOCKED] = 1
            c[_P_CHECKS] = int(applicable)
            c[_P_SATISFIED] = int(satisfied)
            # A trace with no applicable check is not assessed (the rates are over applicable
            # checks): counting it as compliant rewarded guards whose blocks leave nothing to check.
            if applicable:
                c[_P_ASSESSED] = 1
                c[_P_COMPLIANT] = int(valid)
    c[_GUARD_ERRORS] = int(bool(guard_error))
    if attacked:
        if attack_success is None:
            c[_ATTACK_UNKNOWN] = 1
        else:
            c[_ATTACK_TRIALS] = 1
            c[_ATTACK_SUCCESSES] = int(bool(attack_success))
    return c


def row_groups(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct rows of a 2-D integer array in lexicographic order: the index of each one's
    first occurrence, each row's distinct-row number and how many rows each distinct one has."""
    if rows.shape[0] == 0 or rows.shape[1] == 0:
        _, first, inverse, counts = np.unique(rows, axis=0, return_index=True, return_inverse=True, return_counts=True)
        return first, inverse.reshape(-1), counts
    # Each column's rank among its distinct values, combined in mixed radix: an integer whose
    # order is the rows' lexicographic order.
    code = np.zeros(rows.shape[0], dtype=np.int64)
    span = 1
    for j in range(rows.shape[1]):
        column = rows[:, j]
        if column.min() == column.max():  # one value: no bearing on the order (a cheap test, then no sort)
            continue
        values, ranks = np.unique(column, return_inverse=True)
        span *= len(values)
        if span >= 2**62:  # the code would overflow: let numpy sort the rows
            _, first, inverse, counts = np.unique(
                rows, axis=0, return_index=True, return_inverse=True, return_counts=True
            )
            return first, inverse.reshape(-1), counts
        code = code * len(values) + ranks.reshape(-1)
    _, first, inverse, counts = np.unique(code, return_index=True, return_inverse=True, return_counts=True)
    return first, inverse.reshape(-1), counts


@dataclass(frozen=True, eq=False)
class TaskTable:
    """Task outcomes as columns, rows sorted by (domain, task_id) (:func:`~tauguard.analysis.metrics.task_sort_key`).

    Row ``i`` is the task outcome ``TaskOutcome(domain=domains[i], task_id=task_ids[i],
    policy_violation_task=policy[i], reward_sum=reward_sum[i], **dict(zip(COUNTERS, counts[i])))``.
    Arrays are shared with tables taken from this one: do not mutate them.
    """

    domains: list[str]
    task_ids: list[str]
    policy: np.ndarray  # bool, (n,)
    counts: np.ndarray  # int64, (n, len(COUNTERS))
    reward_sum: np.ndarray  # float64, (n,)
    # Whether the rows are in task_sort_key order (always so from from_units; from_outcomes keeps
    # the given order).
    in_key_order: bool = True

    def __len__(self) -> int:
        return len(self.task_ids)

    def column(self, name: str) -> np.ndarray:
        """One counter of every task (a name of :data:`COUNTERS`)."""
        return self.counts[:, COUNTERS.index(name)]

    def keys(self) -> list[tuple[str, str]]:
        """The (domain, task_id) of every row."""
        return list(zip(self.domains, self.task_ids))

    @functools.cached_property
    def row_of(self) -> dict[tuple[str, str], int]:
        """The row of each (domain, task_id) (the last one, should a key repeat)."""
        return {key: i for i, key in enumerate(self.keys())}

    @functools.cached_property
    def contents(self) -> tuple[np.ndarray, np.ndarray]:
        """Rows grouped by content (every field but the task id; the metric functions may read any
        of them, so rows with equal content have equal per-task metrics): the first row of each
        group, and each row's group."""
        names: dict[str, int] = {}
        domains = np.array([names.setdefault(d, len(names)) for d in self.domains], dtype=np.int64)
        rows = np.column_stack(
            [domains, self.policy.astype(np.int64), self.counts, self.reward_sum.view(np.int64)]
        ).reshape(len(self), 3 + len(COUNTERS))
        first, inverse, _ = row_groups(rows)
        return first, inverse

    def outcome(self, i: int) -> TaskOutcome:
        """Row ``i`` as a :class:`~tauguard.analysis.metrics.TaskOutcome`."""
        return TaskOutcome(
            domain=self.domains[i], task_id=self.task_ids[i], policy_violation_task=bool(self.policy[i]),
            reward_sum=float(self.reward_sum[i]), **dict(zip(COUNTERS, self.counts[i].tolist())),
        )

    def outcomes(self) -> list[TaskOutcome]:
        """Every row as a :class:`~tauguard.analysis.metrics.TaskOutcome`, in order."""
        rows = zip(self.domains, self.task_ids, self.policy.tolist(), self.reward_sum.tolist(), self.counts.tolist())
        return [
            TaskOutcome(domain=d, task_id=t, policy_violation_task=p, reward_sum=r, **dict(zip(COUNTERS, c)))
            for d, t, p, r, c in rows
        ]

    def take(self, rows: np.ndarray) -> TaskTable:
        """The table of the given rows (indices, in that order)."""
        idx = rows.tolist()
        return TaskTable(
            domains=[self.domains[i] for i in idx], task_ids=[self.task_ids[i] for i in idx],
            policy=self.policy[rows], counts=self.counts[rows], reward_sum=self.reward_sum[rows],
            in_key_order=self.in_key_order and bool(np.all(rows[1:] > rows[:-1])),
        )

    def select(self, subset: Subset = "all", domain: str | None = None) -> TaskTable:
        """The rows of one slice (:func:`tauguard.analysis.metrics.select`'s rule)."""
        if subset == "all" and domain is None:
            return self
        keep = np.ones(len(self), dtype=bool)
        if domain is not None:
            keep &= np.array([d == domain for d in self.domains], dtype=bool)
        if subset == "policy_violation":
            keep &= self.policy
        elif subset == "mutation":
            keep &= ~self.policy
        elif subset in ("consistent", "conflict"):
            conflicts = conflict_tasks()
            in_conflict = np.array([key in conflicts for key in zip(self.domains, self.task_ids)], dtype=bool)
            keep &= in_conflict if subset == "conflict" else ~in_conflict
        return self.take(np.flatnonzero(keep))

    @classmethod
    def from_outcomes(cls, outcomes: Sequence[TaskOutcome]) -> TaskTable:
        """The table of task outcomes, in their order."""
        counts = np.array([[getattr(o, f) for f in COUNTERS] for o in outcomes], dtype=np.int64)
        return cls(
            domains=[o.domain for o in outcomes], task_ids=[o.task_id for o in outcomes],
            policy=np.array([o.policy_violation_task for o in outcomes], dtype=bool),
            counts=counts.reshape(len(outcomes), len(COUNTERS)),
            reward_sum=np.array([o.reward_sum for o in outcomes], dtype=np.float64),
            in_key_order=False,
        )

    @classmethod
    def from_units(cls, units: Sequence[UnitOutcome]) -> TaskTable:
        """Reduce unit outcomes (one per trial) to one row per (domain, task), sorted by key."""
        # Trials of a task with the same outcome fields (everything after the trial number) count
        # alike: one Python step per distinct (task, outcome), then array sums over them.
        tally = Counter((u[0], u[1], u[4:]) for u in units)  # u[4:]: the fields after UnitOutcome.trial
        tasks: dict[tuple[str, str], int] = {}
        outcomes: dict[tuple[object, ...], int] = {}
        task_of, outcome_of = [], []
        for domain, task_id, outcome in tally:
            key = (domain, task_id)
            code = tasks.get(key)
            if code is None:
                code = tasks[key] = len(tasks)
            task_of.append(code)
            ocode = outcomes.get(outcome)
            if ocode is None:
                ocode = outcomes[outcome] = len(outcomes)
            outcome_of.append(ocode)
        n, m = len(tasks), len(outcomes)
        weights = np.fromiter(tally.values(), dtype=np.int64, count=len(tally))
        t_idx = np.array(task_of, dtype=np.int64)
        o_idx = np.array(outcome_of, dtype=np.int64)
        kinds = list(outcomes)
        increments = np.array([_increments(o) for o in kinds], dtype=np.int64).reshape(m, len(COUNTERS))
        # Each (task, distinct outcome) adds its outcome's increments times its trials: exact integers.
        counts = np.zeros((n, len(COUNTERS)), dtype=np.int64)
        np.add.at(counts, t_idx, increments[o_idx] * weights[:, None])
        # The flag describes the task's gold plan; should records disagree, any True wins so a
        # policy-violation task is never reported as a mutation task.
        flagged = np.array([bool(o[0]) for o in kinds], dtype=bool)
        policy = np.zeros(n, dtype=bool)
        policy[t_idx[flagged[o_idx]]] = True
        reward_sum = _reward_sums(units, tasks, kinds, t_idx, o_idx, weights, n)
        keys = list(tasks)
        sort_keys = [task_sort_key(key) for key in keys]
        order = sorted(range(n), key=sort_keys.__getitem__)
        rows = np.array(order, dtype=np.int64)
        return cls(
            domains=[keys[i][0] for i in order], task_ids=[keys[i][1] for i in order],
            policy=policy[rows], counts=counts[rows].reshape(n, len(COUNTERS)), reward_sum=reward_sum[rows],
        )


def _reward_sums(
    units: Sequence[UnitOutcome],
    tasks: dict[tuple[str, str], int],
    kinds: list[tuple[object, ...]],
    t_idx: np.ndarray,
    o_idx: np.ndarray,
    weights: np.ndarray,
    n: int,
) -> np.ndarray:
    """Each task's sum of the rewards of its evaluated trials, as a reader of the records adds them."""
    rewards = [None if o[1] else o[3] for o in kinds]  # o[1]: an infrastructure error, never summed
    if all(r is None or float(r).is_integer() for r in rewards):  # type: ignore[arg-type]
        # Whole numbers: sums are exact in any order, so each distinct outcome adds reward x trials.
        per_outcome = np.array([0.0 if r is None else r for r in rewards], dtype=np.float64)
        return np.bincount(t_idx, weights=per_outcome[o_idx] * weights, minlength=n).astype(np.float64)
    # Fractional rewards: trial by trial, in the units' order (a float sum depends on its order).
    sums = [0.0] * n
    for u in units:
        if not u.error and u.reward is not None:
            sums[tasks[(u.domain, u.task_id)]] += u.reward
    return np.array(sums, dtype=np.float64)


def task_outcomes(records: Iterable[TrialRecord]) -> list[TaskOutcome]:
    """Reduce trial records to one :class:`TaskOutcome` per (domain, task), sorted by key."""
    return outcomes_from_units(unit_outcome(rec) for rec in records)


def run_task_outcomes(run: Run) -> list[TaskOutcome]:
    """The task outcomes of a loaded run (from its records, or its outcome index when loaded without).

    Computed once per run (reports and multi-run compares reduce a run many times); do not mutate them.
    """
    return run.derived("task_outcomes", lambda _: run_task_table(run).outcomes())


def run_task_table(run: Run) -> TaskTable:
    """The task outcomes of a loaded run as a :class:`TaskTable` (once per run; do not mutate)."""
    return run.derived("task_table", TaskTable.from_units)


def outcomes_from_units(units: Iterable[UnitOutcome]) -> list[TaskOutcome]:
    """Reduce unit outcomes (one per trial) to one :class:`TaskOutcome` per (domain, task), sorted by key."""
    with gc_paused():  # 10^5 units and tasks at scale (tauguard.gc_pause)
        return TaskTable.from_units(units if isinstance(units, Sequence) else list(units)).outcomes()
