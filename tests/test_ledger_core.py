"""Ledger mechanics: what fills it, what makes it stale, rendering, strategy wiring."""

from __future__ import annotations

import json

import pytest

from tauguard_strategies.ledger import LedgerSession, LedgerStrategy
from tauguard_strategies.ledger.parse import parse_content
from tauguard.tau2_adapter import compat as t2
from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView
from tauguard.strategy_api.guard import SessionContext, Verdict
from tauguard.strategy_api.registry import create_strategy
from tauguard.tau2_adapter.replay import call_tool

CONV = Conversation()


@pytest.fixture(scope="module")
def airline_env() -> t2.Environment:
    return t2.make_environment("airline")  # used for reads only


def _session(domain: str = "airline") -> LedgerSession:
    return LedgerSession(domain, t2.tool_types(domain)[0])


def _read(session: LedgerSession, env: t2.Environment, name: str, **args: object) -> ConversationEvent:
    result = call_tool(env, ToolCallView(id=name, name=name, arguments=dict(args)))
    session.after_tool(result, CONV)
    return result


def _ok(name: str, content: object = "{}", requestor: str = "assistant", error: bool = False, **args: object) -> ConversationEvent:
    call = ToolCallView(id=name, name=name, arguments=dict(args), requestor=requestor)  # type: ignore[arg-type]
    text = content if isinstance(content, str) else json.dumps(content)
    return ConversationEvent(kind="tool_result", tool_call=call, content=text, error=error)


def test_parse_content_handles_json_and_plain_strings() -> None:
    assert parse_content('{"a": 1}') == {"a": 1}
    assert parse_content("[1, 2]") == [1, 2]
    assert parse_content("available") == "available"
    assert parse_content("chen_silva_7485") == "chen_silva_7485"
    assert parse_content("{not json") == "{not json"
    assert parse_content(None) is None


def test_successful_reads_fill_the_ledger(airline_env: t2.Environment) -> None:
    s = _session()
    _read(s, airline_env, "get_reservation_details", reservation_id="SI5UKW")
    _read(s, airline_env, "get_flight_status", flight_number="HAT062", date="2024-05-16")
    led = s.ledger
    assert led.reservations["SI5UKW"].cabin == "basic_economy"
    assert led.flight_dates["HAT062"]["2024-05-16"].status == "available"
    assert led.flights["HAT284"].origin == "LAS"  # routes come from reservation segments
    assert led.lookup("reservations", "SI5UKW", "insurance").state == "fresh"
    assert led.lookup("reservations", "NOPE").state == "missing"
    assert led.identified_users == []  # a reservation read identifies nobody


def test_failed_user_side_and_write_results_add_no_state(airline_env: t2.Environment) -> None:
    s = _session()
    failed = _read(s, airline_env, "get_reservation_details", reservation_id="NOPE")
    assert failed.error
    user = json.loads(call_tool(airline_env, ToolCallView(name="get_user_details", arguments={"user_id": "amelia_rossi_1297"})).content or "")
    s.after_tool(_ok("get_user_details", user, requestor="user", user_id="amelia_rossi_1297"), CONV)
    s.after_tool(_ok("get_user_details", user, error=True, user_id="amelia_rossi_1297"), CONV)
    # A write's return is never absorbed, even when it carries a full entity.
    s.after_tool(_ok("book_reservation", {"reservation_id": "HATHAT", "user_id": "x"}, user_id="amelia_rossi_1297"), CONV)
    assert s.ledger.users == {} and s.ledger.reservations == {}
    assert [w.tool for w in s.ledger.history] == ["book_reservation"]


def test_write_marks_touched_facts_stale_until_read_again(airline_env: t2.Environment) -> None:
    s = _session()
    _read(s, airline_env, "get_user_details", user_id="amelia_rossi_1297")
    _read(s, airline_env, "get_reservation_details", reservation_id="SI5UKW")
    s.after_tool(_ok("update_reservation_baggages", reservation_id="SI5UKW", total_baggages=1, nonfree_baggages=1, payment_id="gift_card_3871331"), CONV)
    led = s.ledger
    assert led.lookup("reservations", "SI5UKW", "cabin").state == "stale"
    assert led.lookup("users", "amelia_rossi_1297", "payment_methods", "gift_card_3871331", "amount").state == "stale"
    # Only what the write touched: membership and the other card stay fresh.
    assert led.lookup("users", "amelia_rossi_1297", "membership").state == "fresh"
    assert led.lookup("users", "amelia_rossi_1297", "payment_methods", "credit_card_4579924").state == "fresh"
    decision = s.before_write(ToolCallView(name="cancel_reservation", arguments={"reservation_id": "SI5UKW"}), CONV)
    assert decision.verdict == Verdict.VERIFY
    assert decision.evidence["required_reads"][0] == {
        "tool": "get_reservation_details", "arguments": {"reservation_id": "SI5UKW"}, "why": "observe the reservation"}
    _read(s, airline_env, "get_reservation_details", reservation_id="SI5UKW")
    assert led.lookup("reservations", "SI5UKW", "cabin").state == "fresh"
    assert led.lookup("users", "amelia_rossi_1297", "payment_methods", "gift_card_3871331", "amount").state == "stale"


def test_unparseable_read_is_recorded_not_guessed() -> None:
    s = _session()
    s.after_tool(_ok("get_reservation_details", {"reservation_id": "X"}, reservation_id="X"), CONV)
    assert s.ledger.reservations == {}
    assert s.ledger.unparsed_reads == ["get_reservation_details: ValidationError"]


def test_render_is_deterministic_and_order_independent(airline_env: t2.Environment) -> None:
    reads = [("get_reservation_details", {"reservation_id": "SI5UKW"}), ("get_reservation_details", {"reservation_id": "3I818F"}),
             ("get_flight_status", {"flight_number": "HAT062", "date": "2024-05-16"})]
    a, b = _session(), _session()
    for name, args in reads:
        _read(a, airline_env, name, **args)
    for name, args in reversed(reads):
        _read(b, airline_env, name, **args)
    text = a.render_context()
    assert text == b.render_context() == a.render_context()
    assert text is not None and text.index("- 3I818F:") < text.index("- SI5UKW:")
    assert "- HAT062/2024-05-16: {\"status\":\"available\"}" in text
    a.after_tool(_ok("cancel_reservation", reservation_id="SI5UKW"), CONV)
    rendered = a.render_context() or ""
    assert "[STALE: all]" in rendered and '1. cancel_reservation {"reservation_id":"SI5UKW"}' in rendered


def test_empty_ledger_renders_a_placeholder() -> None:
    assert "(nothing observed yet)" in (_session("telecom").render_context() or "")


def test_strategy_is_registered_and_builds_sessions() -> None:
    strategy = create_strategy("ledger")
    assert isinstance(strategy, LedgerStrategy)
    assert set(strategy.hooks()) == {"before_write", "after_tool", "render_context"}
    ctx = SessionContext(domain="retail", task_id="0", policy="", tool_types=t2.tool_types("retail")[0])
    session = strategy.new_session(ctx)
    assert isinstance(session, LedgerSession) and session.render_context()
    off = create_strategy("ledger", {"render": "false"}).new_session(ctx)
    assert off is not None and off.render_context() is None
    with pytest.raises(ValueError):
        strategy.new_session(SessionContext(domain="mock", task_id="0", policy="", tool_types={}))


def test_unknown_write_tool_is_allowed_with_a_reason() -> None:
    decision = _session().before_write(ToolCallView(name="mystery_write", arguments={}), CONV)
    assert decision.verdict == Verdict.ALLOW and "no ledger predicate" in decision.reason
