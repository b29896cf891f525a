"""The per-run outcome index: kept by the writer, trusted only when it matches the records."""

from __future__ import annotations

from pathlib import Path

from tauguard.compare import compare_runs
from tauguard.metrics import run_task_outcomes, summarize_run
from tauguard.outcome_index import INDEX, unit_outcome
from tauguard.process.score import ProcessCheck, ProcessReport
from tauguard.records import TrialRecord
from tauguard.store import RECORDS, RecordWriter, load_run
from tauguard.testing.synthetic_runs import TaskSpec, write_run

TASKS = [
    TaskSpec("airline", "0", [True, False, "error"], attacks=[True, None, "-"], guard_errors=[True, False, False]),
    TaskSpec("airline", "1", [True, True, True], policy_violation=True),
    TaskSpec("retail", "0", [False, False, True]),
    TaskSpec("retail", "1", [True, False, False], attacks=[False, False, True]),
]


def _units_of_records(run_dir: Path) -> list:
    return [unit_outcome(r) for r in load_run(run_dir, conversations=False).records]


def test_index_gives_what_the_records_give(tmp_path: Path) -> None:
    a = write_run(tmp_path, "a", TASKS)
    b = write_run(tmp_path, "b", [TaskSpec(t.domain, t.task_id, [True] * 3) for t in TASKS])
    fast = load_run(a, records=False)
    assert fast.records == [] and fast.units == _units_of_records(a)
    assert run_task_outcomes(fast) == run_task_outcomes(load_run(a))
    assert summarize_run(fast) == summarize_run(load_run(a))
    by_index = compare_runs([load_run(a, records=False), load_run(b, records=False)], n_resamples=500)
    by_records = compare_runs([load_run(a), load_run(b)], n_resamples=500)
    assert by_index.model_dump() == by_records.model_dump()


def test_stale_or_broken_index_falls_back_to_the_records(tmp_path: Path) -> None:
    a = write_run(tmp_path, "a", TASKS)
    expected = run_task_outcomes(load_run(a))
    extra = TrialRecord(
        run_id="a", domain="retail", task_id="0", trial=0, seed=0, strategy="react", simulated=True,
        policy_violation_task=False, reward=1.0, success=True,
    )
    # A record appended behind the writer's back: the index no longer covers the records.
    with open(a / RECORDS, "a", encoding="utf-8") as fh:
        fh.write(extra.model_dump_json() + "\n")
    stale = load_run(a, records=False)
    assert stale.units is None and len(stale.records) == 12
    assert run_task_outcomes(stale) != expected and run_task_outcomes(stale)[2].successes == 2
    # A cut index row is stale too, and the next writer rebuilds the index.
    index = (a / INDEX).read_text(encoding="utf-8")
    (a / INDEX).write_text(index[:-5], encoding="utf-8")
    assert load_run(a, records=False).units is None
    RecordWriter(a).close()
    rebuilt = load_run(a, records=False)
    assert rebuilt.units is not None and run_task_outcomes(rebuilt) == run_task_outcomes(load_run(a))


def test_writer_indexes_old_runs_junk_lines_and_resumed_units(tmp_path: Path) -> None:
    a = write_run(tmp_path, "a", TASKS[:2])
    (a / INDEX).unlink()  # a run written before the index existed
    with open(a / RECORDS, "a", encoding="utf-8") as fh:
        fh.write("not json\n\n")
    assert load_run(a, records=False).units is None
    writer = RecordWriter(a)  # resume: rebuilds the index, then appends to both files
    assert load_run(a, records=False).skipped_lines == 1
    retry = TrialRecord(
        run_id="a", domain="airline", task_id="0", trial=2, seed=0, strategy="react", simulated=True,
        policy_violation_task=False, reward=1.0, success=True,
        process=ProcessReport(
            applicable=3, satisfied=2, failures=[ProcessCheck(check="confirmation", clause_id="c1", step=4)]
        ),
    )
    writer.write(retry)  # the errored trial re-run: the latest record wins
    writer.close()
    fast = load_run(a, records=False)
    assert fast.units is not None and fast.skipped_lines == 1
    assert fast.units == _units_of_records(a)
    outcome = run_task_outcomes(fast)[0]
    assert (outcome.trials, outcome.infra_errors, outcome.process_trials, outcome.process_checks) == (3, 0, 1, 3)
