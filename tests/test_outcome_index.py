"""The per-run outcome index: kept by the writer, trusted only when it matches the records."""

from __future__ import annotations

from pathlib import Path

from tauguard.analysis.compare import compare_runs
from tauguard.strategy_api.guard import GuardEvent, GuardUsage, Verdict
from tauguard.analysis.task_table import run_task_outcomes
from tauguard.analysis.summary import summarize_run
from tauguard.runs.outcome_index import INDEX, TALLIES, unit_outcome
from tauguard.process.model import ProcessCheck, ProcessReport
from tauguard.runs.records import AttackInfo, InjectedFault, TrialRecord
from tauguard.usage_ledger import RoleUsage
from tauguard.runs.store import RECORDS, RecordWriter, load_run
from tauguard.analysis.summary import summarize
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
    assert fast.records == [] and fast.from_index and fast.units == _units_of_records(a)
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
    stale = load_run(a, records=False)  # the records are streamed instead, none kept
    assert not stale.from_index and stale.records == [] and stale.units is not None and len(stale.units) == 12
    assert run_task_outcomes(stale) != expected and run_task_outcomes(stale)[2].successes == 2
    # A cut index row is stale too, and the next writer rebuilds the index.
    index = (a / INDEX).read_text(encoding="utf-8")
    (a / INDEX).write_text(index[:-5], encoding="utf-8")
    assert not load_run(a, records=False).from_index
    RecordWriter(a).close()
    rebuilt = load_run(a, records=False)
    assert rebuilt.from_index and run_task_outcomes(rebuilt) == run_task_outcomes(load_run(a))


def test_writer_indexes_old_runs_junk_lines_and_resumed_units(tmp_path: Path) -> None:
    a = write_run(tmp_path, "a", TASKS[:2])
    (a / INDEX).unlink()  # a run written before the index existed
    with open(a / RECORDS, "a", encoding="utf-8") as fh:
        fh.write("not json\n\n")
    assert not load_run(a, records=False).from_index
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
    assert fast.from_index and fast.skipped_lines == 1
    assert fast.units == _units_of_records(a)
    outcome = run_task_outcomes(fast)[0]
    assert (outcome.trials, outcome.infra_errors, outcome.process_trials, outcome.process_checks) == (3, 0, 1, 3)


def _accounted_record(trial: int, **kw: object) -> TrialRecord:
    """A record with everything a summary counts: verdicts, guard cost, faults, usage, an attack."""
    events = [
        GuardEvent(hook="before_write", step=2, verdict=Verdict.VERIFY, usage=GuardUsage(llm_calls=1, cost=0.1)),
        GuardEvent(hook="after_tool", step=3, usage=GuardUsage(llm_calls=1, cost=0.2)),
        GuardEvent(hook="retry_exhausted", step=4),
        GuardEvent(hook="before_write", step=5, verdict=Verdict.BLOCK, usage=GuardUsage(cost=0.3)),
    ]
    base: dict[str, object] = dict(
        run_id="a", domain="airline", task_id=str(trial % 2), trial=trial, seed=0, strategy="ledger", simulated=False,
        policy_violation_task=trial % 2 == 1, reward=float(trial % 3 == 0), success=trial % 3 == 0,
        guard_events=events,
        faults=[InjectedFault(fault_id="f", fault_class="W", applied=True, intercepted=trial % 2 == 0),
                InjectedFault(fault_id="g", fault_class="A")],
        usage={"agent": RoleUsage(cost=0.01 * trial, prompt_tokens=10, completion_tokens=2, calls=3),
               "user": RoleUsage(cost=None, calls=1)},
        duration_s=0.25 * trial,
        attacked=trial < 4, attack_success=(trial % 2 == 0) if trial < 4 else None,
        attack=AttackInfo(tactic="insist", attack_set="policy-violation", target={"clause": f"c{trial % 2}"})
        if trial < 4 else None,
    )
    base.update(kw)
    return TrialRecord.model_validate(base)


def test_summary_from_the_index_is_the_summary_from_the_records(tmp_path: Path) -> None:
    a = write_run(tmp_path, "a", [TaskSpec("airline", "0", []), TaskSpec("airline", "1", [])], trials=7)
    writer = RecordWriter(a)
    for trial in range(6):
        writer.write(_accounted_record(trial))
    writer.write(_accounted_record(6, error="provider down\nstack ..."))
    writer.write(_accounted_record(1, reward=0.0, success=False))  # a re-run: the latest record counts
    writer.close()
    by_records = summarize(load_run(a, conversations=False))
    fast = load_run(a, records=False)
    assert fast.from_index and summarize(fast) == by_records
    assert by_records.guard_verdicts == {"VERIFY": 6, "BLOCK": 6} and by_records.infra_errors[0].endswith("provider down")
    assert by_records.attacks is not None and [g.group for g in by_records.attacks.by_clause] == ["c0", "c1"]
    (a / TALLIES).unlink()  # no tallies: the same summary, from the records streamed
    assert summarize(load_run(a, records=False)) == by_records
    (a / INDEX).unlink()  # no index either
    assert summarize(load_run(a, records=False)) == by_records
    RecordWriter(a).close()  # the next writer rebuilds both
    assert (a / TALLIES).is_file() and load_run(a, records=False).from_index
