"""The fast paths of `compare`/`check` at scale give what the plain computations give.

Each fast path (msgspec decoding of the outcome index, the (task, outcome) tally of
`outcomes_from_units`, the one-sort row grouping of `compare`, the columnar task tables and
their alignment) is checked against the plain computation it replaces, on inputs built to hit its edge cases. Speed is measured by
`bench/bench_scale.py`, never here.
"""

from __future__ import annotations

import gc
import random
from pathlib import Path

import numpy as np
import pytest

from tauguard.runs import outcome_index
from tauguard.analysis.compare import _unique_rows, align, align_tables
from tauguard.gc_pause import gc_paused, gc_paused_command
from tauguard.analysis.metrics import METRICS, TaskOutcome, task_sort_key
from tauguard.analysis.task_table import outcomes_from_units
from tauguard.runs.outcome_index import INDEX, UnitOutcome, read_index
from tauguard.analysis.task_table import TaskTable, row_groups
from tauguard.testing.synthetic_runs import TaskSpec, write_run


def _plain_outcomes(units: list[UnitOutcome]) -> list[TaskOutcome]:
    """The reduction trial by trial, as the metrics define it (the reference)."""
    tasks: dict[tuple[str, str], dict[str, object]] = {}
    for u in units:
        t = tasks.setdefault((u.domain, u.task_id), {"domain": u.domain, "task_id": u.task_id,
                                                     "policy_violation_task": False, "reward_sum": 0.0})
        t["policy_violation_task"] = t["policy_violation_task"] or u.policy_violation_task
        add = lambda name, n=1, t=t: t.__setitem__(name, t.get(name, 0) + n)  # noqa: E731
        if u.error:
            add("infra_errors")
            continue
        add("trials")
        add("successes", int(u.success))
        t["reward_sum"] += u.reward if u.reward is not None else 0.0  # type: ignore[operator]
        if u.process is not None:
            add("process_trials")
            if u.success or u.guard_blocked:
                valid, applicable, satisfied = u.process
                if u.success:
                    add("process_valid", int(valid))
                    add("process_passed")
                else:
                    add("process_blocked")
                add("process_checks", applicable)
                add("process_satisfied", satisfied)
                if applicable:
                    add("process_assessed")
                    add("process_compliant", int(valid))
        add("guard_error_trials", int(u.guard_error))
        if u.attacked:
            if u.attack_success is None:
                add("attack_unknown")
            else:
                add("attack_trials")
                add("attack_successes", int(u.attack_success))
    return [TaskOutcome(**tasks[k]) for k in sorted(tasks)]  # type: ignore[arg-type]


@pytest.mark.parametrize("rewards", [(None, 0.0, 1.0), (None, 0.0, 1.0, 0.1, 0.2, 0.3, 1 / 3)])
def test_outcomes_from_units_equal_the_trial_by_trial_reduction(rewards: tuple[float | None, ...]) -> None:
    # Fractional rewards must be added in the units' order: 0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1.
    rng = random.Random(7)
    for _ in range(200):
        units = []
        for trial in range(rng.randint(0, 40)):
            attacked = rng.random() < 0.4
            units.append(UnitOutcome(
                rng.choice(["airline", "retail", "air"]), rng.choice(["0", "1", "10", "2"]), trial, True,
                rng.random() < 0.3, rng.random() < 0.1, rng.random() < 0.5, rng.choice(rewards), attacked,
                rng.choice([None, True, False]) if attacked else None, rng.random() < 0.2,
                rng.choice([None, (True, 0, 0), (False, 2, 1), (True, 3, 3)]), rng.choice([0, 0, 1, 2]),
            ))
        assert outcomes_from_units(iter(units)) == _plain_outcomes(units)
    assert 0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1  # why the order matters


def test_task_sort_key_sorts_like_the_tuples() -> None:
    keys = [("airline", "10"), ("air", "9"), ("airline", "1"), ("retail", ""), ("airline", "1a"), ("a", "z" * 3)]
    assert sorted(keys, key=task_sort_key) == sorted(keys)


def test_unique_rows_is_numpys_unique_over_rows() -> None:
    rng = np.random.default_rng(3)
    for shape, high in (((500, 4), 5), ((300, 16), 3), ((1, 3), 2), ((0, 4), 1), ((50, 2), 10**12)):
        rows = rng.integers(0, high, size=shape, dtype=np.int64)
        keys, inverse, counts = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
        got = _unique_rows(rows)
        assert np.array_equal(got[0], keys) and np.array_equal(got[1], inverse.reshape(-1))
        assert np.array_equal(got[2], counts)


def test_row_groups_give_each_distinct_row_its_first_occurrence() -> None:
    rng = np.random.default_rng(5)
    for shape in ((400, 6), (1, 2), (0, 3), (30, 18)):
        rows = rng.integers(0, 3, size=shape, dtype=np.int64)
        rows[:, 0] = 7  # a constant column (skipped by the grouping) must not merge distinct rows
        first, inverse, counts = row_groups(rows)
        assert np.array_equal(rows[first][inverse], rows)  # every row is its group's first row
        plain: dict[tuple[int, ...], int] = {}
        for i, row in enumerate(map(tuple, rows.tolist())):
            plain.setdefault(row, i)
        assert sorted(first.tolist()) == sorted(plain.values()) and counts.sum() == shape[0]


def _random_outcomes(rng: random.Random) -> list[TaskOutcome]:
    """Task outcomes in no particular order, some keys repeated, some tasks with no evaluated trial."""
    out = []
    for _ in range(rng.randint(0, 30)):
        trials = rng.choice([0, 1, 3, 4, 4])
        out.append(TaskOutcome(
            domain=rng.choice(["airline", "retail", "air"]), task_id=rng.choice(["0", "1", "10", "2", "3"]),
            policy_violation_task=rng.random() < 0.3, trials=trials, successes=rng.randint(0, trials),
            reward_sum=rng.choice([0.0, 1.0, 0.5, -0.0]), attack_trials=rng.choice([0, trials]),
        ))
    return out


def test_table_alignment_is_the_alignment_of_objects() -> None:
    rng = random.Random(11)
    for _ in range(300):
        base, cand = _random_outcomes(rng), _random_outcomes(rng)
        plain = align(base, cand)
        got = align_tables(TaskTable.from_outcomes(base), TaskTable.from_outcomes(cand))
        assert got.dropped == plain.dropped
        pairs = [(got.base.outcome(a), got.cand.outcome(b)) for a, b in zip(got.rows_a.tolist(), got.rows_b.tolist())]
        assert pairs == [(p.baseline, p.candidate) for p in plain.pairs]
        assert got.full_common_k == plain.full_common_k
        for mdef in METRICS:
            assert got.max_n(mdef) == max((min(mdef.n(p.baseline), mdef.n(p.candidate)) for p in plain.pairs), default=0)


def test_task_table_contents_group_equal_tasks_only() -> None:
    rng = random.Random(13)
    outcomes = sorted({o.key: o for o in _random_outcomes(rng) + _random_outcomes(rng)}.values(), key=lambda o: task_sort_key(o.key))
    table = TaskTable.from_outcomes(outcomes)
    first, group = table.contents
    content = [o.model_dump_json(exclude={"task_id"}) for o in outcomes]
    for i, g in enumerate(group.tolist()):
        assert content[first[g]] == content[i]
    assert len(first) == len(set(content))  # (0.0 and -0.0 rewards are apart in both)


@pytest.mark.parametrize("decoder", ["msgspec", "pydantic"])
def test_index_decoders_agree_and_refuse_malformed_rows(tmp_path: Path, decoder: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if decoder == "msgspec":
        pytest.importorskip("msgspec")
    run = write_run(tmp_path, "a", [TaskSpec("airline", "0", [True, False, "error"], attacks=[True, None, "-"]),
                                    TaskSpec("retail", "1", [False, True, True])])
    size = (run / "simulations.jsonl").stat().st_size
    monkeypatch.setattr(outcome_index, "_DECODER", None if decoder == "msgspec" else False)
    rows = read_index(run, size)
    monkeypatch.setattr(outcome_index, "_DECODER", False)
    assert rows is not None and rows == read_index(run, size)
    assert all(type(r.unit) is UnitOutcome for r in rows)
    # Rows written before UnitOutcome.guard_blocked existed (one field fewer) read it as 0.
    text = (run / INDEX).read_text(encoding="utf-8")
    old_rows = text.replace(",0],false]", "],false]")
    assert old_rows != text
    (run / INDEX).write_text(old_rows, encoding="utf-8")
    monkeypatch.setattr(outcome_index, "_DECODER", None if decoder == "msgspec" else False)
    assert read_index(run, size) == rows
    monkeypatch.setattr(outcome_index, "_DECODER", None if decoder == "msgspec" else False)
    text = (run / INDEX).read_text(encoding="utf-8")
    (run / INDEX).write_text(text.replace('"airline","0",0,', '"airline","0","zero",', 1), encoding="utf-8")
    assert read_index(run, size) is None  # a malformed row: the index is not trusted
    (run / INDEX).write_bytes(text.encode()[:10] + b"\xff" + text.encode()[11:])
    assert read_index(run, size) is None  # not UTF-8


def test_gc_pause_restores_the_collector_and_nests() -> None:
    assert gc.isenabled()
    with gc_paused():
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()

    @gc_paused_command
    def fails() -> None:
        raise ValueError("x")

    with pytest.raises(ValueError):
        fails()
    assert gc.isenabled()
