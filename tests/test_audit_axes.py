"""`audit`'s view on the two axes (tauguard.trajectories.audit_axes): holds by cause and clause
against hand labels, the plain statement without labels, the neutral checks' flags."""

from __future__ import annotations

from tauguard.benchmark.audit import LabelledDecision
from tauguard.process.model import ProcessCheck, ProcessReport
from tauguard.runs.records import TrialRecord
from tauguard.trajectories.audit_axes import NO_LABELS, AuditAxes, _breakdown, flagged_writes, hold_cause, render_audit_axes


def test_hold_cause_reads_the_decision_not_the_label() -> None:
    assert hold_cause("VERIFY", "airline.update_reservation_baggages.confirmation") == "confirmation"
    assert hold_cause("BLOCK", "airline.explicit_confirmation") == "confirmation"
    assert hold_cause("VERIFY", "airline.cancel_requires_basis") == "read"
    assert hold_cause("REVISE", "retail.refund_destination") == "predicate"
    assert hold_cause("BLOCK", None) == "predicate"


def _d(i: int, label: str, verdict: str, rule: str | None = None) -> LabelledDecision:
    return LabelledDecision(id=f"f:{i}:1:0", label=label, passed=True, verdict=verdict, rule_id=rule, held=verdict != "ALLOW")


def test_breakdown_counts_catches_by_violated_clause_and_holds_by_cause() -> None:
    decisions = [
        _d(1, "complies", "VERIFY", "x.needs_read"), _d(2, "complies", "ALLOW"), _d(3, "complies", "BLOCK", "x.confirm"),
        _d(4, "violates", "REVISE", "x.limit"), _d(5, "violates", "ALLOW"), _d(6, "violates", "BLOCK", "x.rule"),
        _d(7, "ambiguous", "BLOCK"),
    ]
    clauses = {"f:4:1:0": ["airline.payment_limits"], "f:5:1:0": ["airline.payment_limits", "airline.x"],
               "f:6:1:0": ["airline.same_route"]}
    b = _breakdown("g", decisions, clauses)
    assert [(c.clause_id, c.catches.held, c.catches.writes) for c in b.catches_by_clause] == [
        ("airline.payment_limits", 1, 2), ("airline.same_route", 1, 1)]
    assert {c: (r.held, r.writes) for c, r in b.false_holds_by_cause.items()} == {
        "confirmation": (1, 3), "read": (1, 3), "predicate": (0, 3)}
    assert b.catches_by_cause["predicate"].held == 2 and b.catches_by_cause["predicate"].low is not None
    text = render_audit_axes(AuditAxes(labelled=True, labels=[b]), "table")
    assert "false holds: confirmation" in text and "airline.payment_limits" in text


def test_without_labels_it_says_a_hold_is_not_an_error() -> None:
    text = render_audit_axes(AuditAxes(labelled=False, statement=NO_LABELS), "markdown")
    assert "a hold is not an error" in text


def test_neutral_flags_join_the_process_failures_to_the_recorded_call() -> None:
    messages = [
        {"role": "user", "content": "cancel it"},
        {"role": "assistant", "tool_calls": [{"id": "r1", "name": "get_reservation_details", "arguments": {}}]},
        {"role": "tool", "id": "r1", "content": "{}"},
        {"role": "assistant", "tool_calls": [{"id": "w1", "name": "cancel_reservation", "arguments": {}}]},
        {"role": "tool", "id": "w1", "content": "{}"},
    ]
    from tauguard.process.score import conversation_from_messages

    events = conversation_from_messages(messages).events
    step = next(i for i, e in enumerate(events) if e.tool_call is not None and e.tool_call.id == "w1")
    report = ProcessReport(applicable=2, failures=[
        ProcessCheck(check="confirmation", clause_id="airline.explicit_confirmation", step=step, tool="cancel_reservation"),
        ProcessCheck(check="blocked_write", clause_id="airline.explicit_confirmation", step=step, tool="cancel_reservation"),
    ])
    rec = TrialRecord(run_id="r", domain="airline", task_id="3", trial=0, seed=0, strategy="s", simulated=False,
                      policy_violation_task=False, reward=1.0, process=report, simulation={"messages": messages})
    assert flagged_writes([rec]) == {("3", 0, 3, "w1"): [("confirmation", "airline.explicit_confirmation")]}


def test_event_messages_follow_the_conversation_view() -> None:
    from tauguard.process.score import conversation_from_messages
    from tauguard.trajectories.audit_axes import event_messages

    messages = [
        {"role": "system", "content": "policy"},
        {"role": "assistant", "content": "two calls", "tool_calls": [{"id": "a", "name": "x"}, {"id": "a", "name": "x"}]},
        {"role": "tool", "id": "a", "content": "{}"},
        {"role": "tool", "id": "a", "content": "{}"},
        {"role": "user", "content": "yes"},
        {"role": "assistant", "tool_calls": [{"id": "a", "name": "x"}]},
    ]
    where = event_messages(messages)
    events = conversation_from_messages(messages).events
    assert len(where) == len(events) and where == [1, 1, 1, 2, 3, 4, 5]
    # a reused call id still names two writes: the message index tells them apart
    assert [where[i] for i, e in enumerate(events) if e.kind == "agent_tool_call"] == [1, 1, 5]
