"""`audit` counts a guard error (rule id guard.error*) apart, never as a hold (issue 26)."""

from __future__ import annotations

from tauguard.strategy_api.guard import GUARD_ERROR_RULE
from tauguard.trajectories.audit import AuditedWrite, summarize_strategy


def _write(verdict: str, rule_id: str | None = None, write_class: str = "gold_passed", **kw) -> AuditedWrite:
    return AuditedWrite(task_id=kw.pop("task_id", "1"), trial=0, step=1, tool="cancel_reservation", arguments={},
                        write_class=write_class, verdict=verdict, rule_id=rule_id, **kw)


def test_guard_errors_are_neither_holds_nor_in_the_hold_rate():
    writes = [
        _write("ALLOW"),
        _write("BLOCK", "policy.cancel"),
        _write("VERIFY", f"{GUARD_ERROR_RULE}.exception"),  # the guard crashed on this write
        _write("VERIFY", f"{GUARD_ERROR_RULE}.verifier", "off_gold_failed", first_off_gold=True, task_id="2"),
    ]
    audit = summarize_strategy("g", {}, writes, records=[], follow_reads=True)
    gold = audit.by_class["gold_passed"]
    assert (gold.writes, gold.held, gold.guard_errors, gold.hold_rate) == (3, 1, 1, 0.5)
    assert gold.hold_rate_after_reads == 0.5
    off = audit.by_class["off_gold_failed"]
    assert (off.held, off.guard_errors, off.hold_rate) == (0, 1, None)  # no decided write in the class
    assert audit.guard_errors == 2
    assert [w.rule_id for w in audit.held_writes] == ["policy.cancel"]
    assert set(audit.per_rule) == {"policy.cancel"}
