"""Feedback-only uptake: the sim agent reacts from the decision and what it has seen, never gold."""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest

from tauguard.strategy_api.conversation import Conversation, ToolCallView
from tauguard.faults.model import FaultProfile
from tauguard.faults.profiles import FaultProfileError, check_needs, load_profile
from tauguard.strategy_api.guard import OPEN_REQUEST_MARKER, GuardDecision, GuardSession, ReadRequest, Verdict
from tauguard.sim import reaction
from tauguard.sim.beliefs import Beliefs


def _call(name: str, **arguments: Any) -> ToolCallView:
    return ToolCallView(id="", name=name, arguments=arguments)


# -- the belief-update rule ---------------------------------------------------------------


def _seen(*pairs: tuple[ToolCallView, Any]) -> Beliefs:
    beliefs = Beliefs()
    for call, result in pairs:
        beliefs.observe(call, json.dumps(result))
    return beliefs


def test_a_value_derived_from_an_earlier_read_takes_what_the_fresh_read_returns():
    read = _call("get_user_details", user_id="u1")
    beliefs = _seen((read, {"user_id": "u1", "dob": "1990-01-01"}))
    held = _call("update_passenger", user_id="u1", dob="1990-01-01")
    since = len(beliefs.seen)
    beliefs.observe(read, json.dumps({"user_id": "u1", "dob": "1991-02-02"}))
    assert beliefs.revise(held, since).arguments == {"user_id": "u1", "dob": "1991-02-02"}


def test_a_value_not_derived_from_a_read_is_not_corrected_by_reading_again():
    read = _call("get_user_details", user_id="u1")
    beliefs = _seen((read, {"user_id": "u1", "dob": "1990-01-01"}))
    held = _call("update_passenger", user_id="u1", dob="1985-05-05")  # from the user, or invented
    since = len(beliefs.seen)
    beliefs.observe(read, json.dumps({"user_id": "u1", "dob": "1990-01-01"}))
    assert beliefs.revise(held, since) == held


def test_only_a_re_read_of_the_same_call_can_contradict_a_derived_value():
    beliefs = _seen((_call("get_user_details", user_id="u1"), {"dob": "1990-01-01"}))
    held = _call("update_passenger", dob="1990-01-01")
    since = len(beliefs.seen)
    beliefs.observe(_call("get_user_details", user_id="u2"), json.dumps({"dob": "2000-01-01"}))
    assert beliefs.revise(held, since) == held


def test_nested_arguments_are_revised_in_place():
    read = _call("get_reservation_details", reservation_id="R")
    beliefs = _seen((read, {"flights": [{"flight_number": "HAT1", "date": "2024-05-01"}]}))
    held = _call("update_reservation_flights", reservation_id="R", flights=[{"flight_number": "HAT1", "date": "2024-05-01"}])
    since = len(beliefs.seen)
    beliefs.observe(read, json.dumps({"flights": [{"flight_number": "HAT1", "date": "2024-05-02"}]}))
    assert beliefs.revise(held, since).arguments["flights"] == [{"flight_number": "HAT1", "date": "2024-05-02"}]


# -- the reaction rules -------------------------------------------------------------------

SCHEMAS = {
    "get_user_details": {"function": {"parameters": {"required": ["user_id"]}}},
    "cancel_reservation": {"function": {"parameters": {"required": ["reservation_id"]}}},
    "book_reservation": {"function": {"parameters": {"required": ["user_id", "flights"]}}},
}


def test_block_is_refused_or_handed_off_by_the_draw():
    block = GuardDecision(verdict=Verdict.BLOCK, reason="no")
    held = _call("cancel_reservation", reservation_id="R")
    assert reaction.react(block, held, Beliefs(), SCHEMAS, [], transfer=False, retried=0).kind == "give_up"
    assert reaction.react(block, held, Beliefs(), SCHEMAS, [], transfer=True, retried=0).kind == "transfer"


def test_revise_without_arguments_cannot_be_fixed_from_feedback():
    held = _call("cancel_reservation", reservation_id="R")
    bare = GuardDecision(verdict=Verdict.REVISE, reason="wrong")
    assert reaction.react(bare, held, Beliefs(), SCHEMAS, [], False, 0).kind == "give_up"
    named = GuardDecision(verdict=Verdict.REVISE, revised_arguments={"reservation_id": "S"})
    proposed = reaction.react(named, held, Beliefs(), SCHEMAS, [], False, 0)
    assert proposed.kind == "propose" and proposed.arguments == {"reservation_id": "S"}


def test_verify_reads_take_arguments_from_the_decision_the_call_or_what_was_seen():
    held = _call("cancel_reservation", reservation_id="R")
    seen = _seen((_call("find_user", email="e"), {"user_id": "u7"}))
    asked = GuardDecision(verdict=Verdict.VERIFY, required_reads=[ReadRequest(tool="get_user_details")])
    verify = reaction.react(asked, held, seen, SCHEMAS, [], False, 0)
    assert [(r.name, r.arguments) for r in verify.reads] == [("get_user_details", {"user_id": "u7"})]
    # nothing seen to supply the argument: no read, and the decision's remediation is asked
    unknown = GuardDecision(verdict=Verdict.VERIFY, required_reads=[ReadRequest(tool="get_user_details")], remediation="your user id")
    asked_user = reaction.react(unknown, held, Beliefs(), SCHEMAS, [], False, 0)
    assert asked_user.reads == [] and asked_user.ask == "your user id"
    # no reads named: the contract's reads of the call's targets
    bare = GuardDecision(verdict=Verdict.VERIFY)
    target = [_call("get_reservation_details", reservation_id="R")]
    assert reaction.react(bare, held, Beliefs(), SCHEMAS, target, False, 0).reads == target


def test_an_open_request_is_taken_up_only_when_its_call_is_derivable():
    writes = ["cancel_reservation", "book_reservation"]
    guidance = f"{OPEN_REQUEST_MARKER}: cancel. Next required step: cancel.authorize: cancel_reservation."
    one = _seen((_call("get_reservation_details", reservation_id="R1"), {"reservation_id": "R1"}))
    call = reaction.open_request_call(guidance, one, SCHEMAS, writes)
    assert call is not None and (call.name, call.arguments) == ("cancel_reservation", {"reservation_id": "R1"})
    two = _seen(
        (_call("get_reservation_details", reservation_id="R1"), {"reservation_id": "R1"}),
        (_call("get_reservation_details", reservation_id="R2"), {"reservation_id": "R2"}),
    )
    # several seen: the one the user said, else the one the agent last looked up
    assert reaction.open_request_call(guidance, two, SCHEMAS, writes).arguments == {"reservation_id": "R2"}  # type: ignore[union-attr]
    said = "I want to cancel R1, please"
    assert reaction.open_request_call(guidance, two, SCHEMAS, writes, said).arguments == {"reservation_id": "R1"}  # type: ignore[union-attr]
    listed = _seen((_call("search_reservations", user_id="u"), [{"reservation_id": "R1"}, {"reservation_id": "R2"}]))
    assert reaction.open_request_call(guidance, listed, SCHEMAS, writes) is None  # ambiguous: none looked up
    by_word = f"{OPEN_REQUEST_MARKER}: cancel. Next required step: identify."
    assert reaction.open_request_call(by_word, one, SCHEMAS, writes) is not None
    assert reaction.open_request_call(f"{OPEN_REQUEST_MARKER}: book.", one, SCHEMAS, writes) is None  # flights unseen
    # a request type names a tool when all its words are the tool's, change verbs alike
    assert reaction._named_tools(f"{OPEN_REQUEST_MARKER}: modify_items.", ["modify_pending_order_items", "cancel_pending_order"]) == ["modify_pending_order_items"]
    assert reaction._named_tools(f"{OPEN_REQUEST_MARKER}: modify_flights.", ["update_reservation_flights", "book_reservation"]) == ["update_reservation_flights"]
    assert reaction._named_tools(f"{OPEN_REQUEST_MARKER}: compensation.", ["send_certificate"]) == []


def test_the_reaction_functions_take_no_gold():
    gold_words = {"task", "gold", "plan", "gold_plan", "steps", "environment", "db"}
    for fn in (reaction.react, reaction.derive_read, reaction.open_request_call):
        assert not set(inspect.signature(fn).parameters) & gold_words, fn.__name__
    source = inspect.getsource(reaction)
    assert "tauguard.sim.plan" not in source and "evaluation_criteria" not in source


# -- a run with poisoned gold ---------------------------------------------------------------


class _Poison:
    """Stands for the gold plan: records every use."""

    def __init__(self, uses: list[str]) -> None:
        self._uses = uses

    def __getattr__(self, name: str) -> Any:
        self._uses.append(name)
        return None

    def __iter__(self):
        self._uses.append("iter")
        return iter([])

    def __len__(self) -> int:
        self._uses.append("len")
        return 0


class _Hold(GuardSession):
    """VERIFY (naming a read) first, then a bare REVISE, then BLOCK, for each write."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def before_write(self, call: ToolCallView, conversation: Conversation) -> GuardDecision:
        n = self.seen[call.name] = self.seen.get(call.name, 0) + 1
        if n == 1:
            return GuardDecision(verdict=Verdict.VERIFY, reason="check", required_reads=[ReadRequest(tool="get_order_details")])
        if n == 2:
            return GuardDecision(verdict=Verdict.REVISE, reason="not this")
        return GuardDecision(verdict=Verdict.BLOCK, reason="no")


def _poisoned_run(feedback: str) -> tuple[list[str], Any, list[Any]]:
    from tauguard.tau2_adapter import compat as t2
    from tauguard.agents.guarded import GuardedAgent
    from tauguard.faults.draw import apply_plan_faults, draw_trial_faults
    from tauguard.sim.agent import SimAgent
    from tauguard.sim.clean_plan import sim_plan
    from tauguard.sim.user import SimUser

    task = next(t for t in t2.load_tasks("retail", "base") if t.id == "11")
    env = t2.make_environment("retail")
    gold = sim_plan("retail", task)
    profile = FaultProfile(name="refund", uptake=1.0, block_transfer=0.0, rates={"retail.refund_method": 1.0})
    faults = draw_trial_faults(profile, "retail", task.id, 0, 1, gold)
    plan = apply_plan_faults("retail", task.id, gold, faults)
    agent_types, user_types = t2.tool_types("retail")
    inner = SimAgent("retail", task, gold, plan, faults, env, 1.0, 1, 0, feedback=feedback)
    uses: list[str] = []
    inner.gold_plan = _Poison(uses)  # type: ignore[assignment]
    agent = GuardedAgent(inner, _Hold(), agent_types, max_retries=2)
    t2.orchestrator_class()(domain="retail", agent=agent, user=SimUser(task, set(user_types)), environment=env,
                            task=task, max_steps=120, max_errors=10, seed=0).run()
    return uses, inner, agent.events


def test_the_feedback_sim_never_reads_the_gold_plan_and_keeps_its_own_faulty_call():
    uses, agent, events = _poisoned_run("feedback")
    assert uses == []
    verdicts = [e.verdict for e in events if e.hook == "before_write"]
    assert {Verdict.VERIFY, Verdict.REVISE, Verdict.BLOCK} <= set(verdicts)
    faulty = [f.detail["faulty_call"] for f in agent.injected_faults() if "faulty_call" in f.detail]
    assert faulty
    # the agent's plan holds its faulty call, not the gold one it replaced
    planned = [s.call.arguments for s in agent.steps if s.kind == "call" and s.call is not None and s.call.name == faulty[0]["name"]]
    assert faulty[0]["arguments"] in planned


def test_the_oracle_sim_reads_gold_so_the_poison_would_catch_it():
    uses, _, _ = _poisoned_run("oracle")
    assert uses  # the upper bound reacts from the gold plan


def test_an_oracle_agent_needs_a_gold_plan():
    from tauguard.sim.agent import SimAgent

    with pytest.raises(ValueError, match="oracle"):
        SimAgent("retail", None, None, [], [], None, 1.0, 1, 0, feedback="oracle")  # type: ignore[arg-type]


# -- the rates a run needs --------------------------------------------------------------------


def test_a_missing_rate_is_an_error_naming_the_field():
    procedural = load_profile("procedural")
    with pytest.raises(FaultProfileError, match=r"attack_susceptibility\.insist"):
        check_needs(procedural, "insist", "feedback")
    with pytest.raises(FaultProfileError, match="uptake"):
        check_needs(FaultProfile(name="p", rates={"skip_read": 0.1}, block_transfer=0.0), None, "feedback")
    with pytest.raises(FaultProfileError, match="block_transfer"):
        check_needs(FaultProfile(name="p", rates={"skip_read": 0.1}, uptake=0.5), None, "feedback")
    check_needs(FaultProfile(name="p", rates={"skip_read": 0.1}, uptake=0.5), None, "oracle")  # the oracle never transfers
    check_needs(FaultProfile(name="quiet"), None, "feedback")  # nothing can fire: nothing needed
