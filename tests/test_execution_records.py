"""Compact records: compressed conversations, loading without them, old runs still readable."""

from __future__ import annotations

import json

from tauguard.strategy_api.guard import GuardEvent
from tauguard.runs.records import CONVERSATION_Z, TrialRecord, record_line
from tauguard.runs.store import RECORDS, RecordWriter, completed_keys, iter_records


def _record(trial: int, **extra) -> TrialRecord:
    messages = [{"role": "tool", "content": json.dumps({"reservation_id": f"R{i}", "flights": ["x"] * 20})} for i in range(30)]
    return TrialRecord(
        run_id="r", domain="airline", task_id="3", trial=trial, seed=300, strategy="ledger", simulated=True,
        policy_violation_task=False, reward=1.0, success=True, termination_reason="user_stop",
        guard_events=[GuardEvent(hook="before_write", step=4, rule_id="x.y")],
        simulation={"id": "s", "messages": messages, "reward_info": {"reward": 1.0}}, **extra,
    )


def test_lines_are_compact_and_round_trip(tmp_path):
    record = _record(0)
    line = record_line(record)
    data = json.loads(line)
    assert CONVERSATION_Z in data and "simulation" not in data
    assert "attacked" not in data and "error" not in data  # defaults are left out
    assert len(line) < len(record.model_dump_json()) / 3
    assert TrialRecord.model_validate_json(line) == record
    plain = json.loads(record_line(record, compress=False))
    assert plain["simulation"] == record.simulation and CONVERSATION_Z not in plain


def test_conversations_skipped_on_demand_and_old_lines_load(tmp_path):
    writer = RecordWriter(tmp_path)
    writer.write(_record(0))
    writer.write(_record(1, error="timeout"))
    writer.close()
    with open(tmp_path / RECORDS, "a", encoding="utf-8") as fh:  # a schema-1 line: every field, plain conversation
        fh.write(_record(2).model_copy(update={"schema_version": 1}).model_dump_json() + "\n")
    full, skipped = iter_records(tmp_path)
    assert skipped == 0 and [r.simulation is not None for r in full] == [True, True, True]
    assert full[0].simulation == _record(0).simulation and full[2].simulation == _record(2).simulation
    light, _ = iter_records(tmp_path, conversations=False)
    assert [r.simulation for r in light] == [None, None, None]
    assert [(r.reward, r.guard_events) for r in light] == [(r.reward, r.guard_events) for r in full]
    assert completed_keys(tmp_path) == {("airline", "3", 0), ("airline", "3", 2)}
