"""`tauguard faults fit`: failed real simulations attributed to faults, a profile with counts."""

from __future__ import annotations

import json
import sys

import pytest

from tauguard.faults.fit import UNATTRIBUTED, _attribute, _projected, fit
from tauguard.faults.profiles import load_profile
from tauguard.testing.shared_data import shared_trajectories

REAL_FILE = "airline_claude-opus-4-6_user-gpt-4.1.json.gz"


class _Action:
    def __init__(self, name: str, **arguments):
        self.name, self.arguments = name, arguments


WRITES = {"cancel_reservation", "send_certificate"}


def test_first_deviation_rules():
    gold = [_Action("cancel_reservation", reservation_id="R")]
    read = ("get_reservation_details", {"reservation_id": "R"})
    assert _attribute("airline", gold, [read, ("transfer_to_human_agents", {})], WRITES, False)[0] == "premature_transfer"
    assert _attribute("airline", gold, [read], WRITES, False)[0] == "premature_stop"
    assert _attribute("airline", gold, [("cancel_reservation", {"reservation_id": "R"})], WRITES, False)[0] == "skip_read"
    assert _attribute("airline", gold, [read, ("cancel_reservation", {"reservation_id": "S"})], WRITES, False)[0] == UNATTRIBUTED
    cert = [_Action("send_certificate", user_id="u", amount=100)]
    assert _attribute("airline", cert, [("get_user_details", {"user_id": "u"}), ("send_certificate", {"user_id": "u", "amount": 200})], WRITES, False)[0] == "airline.certificate_amount"
    assert _attribute("airline", [], [("cancel_reservation", {"reservation_id": "R"})], WRITES, True)[0] == "forbidden_write"


def test_a_passenger_value_an_earlier_read_returned_is_a_stale_value():
    book = [_Action("book_reservation", user_id="u", passengers=[{"first_name": "A", "last_name": "B", "dob": "1985-04-04"}])]
    stale = ("book_reservation", {"user_id": "u", "passengers": [{"first_name": "A", "last_name": "B", "dob": "1981-05-26"}]})
    read = ("get_user_details", {"user_id": "u"})
    writes = {"book_reservation"}
    assert _attribute("airline", book, [read, stale], writes, False, seen=['{"dob": "1981-05-26"}', '{"dob": "1981-05-26"}'])[0] == "airline.stale_value"
    # a value no read returned and the user did not say is made up, not stale
    assert _attribute("airline", book, [read, stale], writes, False, seen=["", '{"dob": "1990-01-01"}'])[0] == "airline.invented_passenger"
    # ... unless the user said it (then the agent took the user's word: no catalogued fault)
    said = ["", "my date of birth is 1981-05-26"]
    assert _attribute("airline", book, [read, stale], writes, False, seen=["", ""], said=said)[0] == UNATTRIBUTED


def test_a_run_cut_at_its_step_limit_by_one_repeated_call_is_a_loop():
    from tauguard.faults.fit import LOOP_MIN, _gold_index, _loop

    change = {"name": "update_reservation_flights", "arguments": {"reservation_id": "R", "cabin": "economy"}}
    def sim(calls: int, reason: str) -> dict:
        return {"termination_reason": reason, "messages": [{"role": "assistant", "tool_calls": [change]} for _ in range(calls)]}

    looped = _loop(sim(LOOP_MIN, "max_steps"))
    assert looped == ("update_reservation_flights", change["arguments"])
    assert _gold_index([_Action("cancel_reservation", reservation_id="R"), _Action(change["name"], **change["arguments"])], looped) == 1
    assert _loop(sim(LOOP_MIN, "user_stop")) is None  # the run ended normally: repeats are extra writes
    assert _loop(sim(LOOP_MIN - 1, "max_steps")) is None  # too short to call a loop
    varied = sim(LOOP_MIN, "too_many_errors")
    varied["messages"][-2] = {"role": "assistant", "tool_calls": [{"name": "get_user_details", "arguments": {}}]}
    assert _loop(varied) is None


def test_a_booking_beyond_the_payment_limits_is_attributed_by_the_rule(tau2):
    from tauguard.tau2_adapter import compat as t2
    from tauguard.faults.fit import _over_limits

    task = next(t for t in t2.load_tasks("airline", "base") if t.id == "20")
    db = t2.task_environment("airline", task).tools.db
    user = db.users["mia_li_3668"]
    certs = [pid for pid, m in user.payment_methods.items() if m.source == "certificate"]
    card = next(pid for pid, m in user.payment_methods.items() if m.source == "credit_card")
    assert len(certs) >= 2
    assert _over_limits(db, "mia_li_3668", [{"payment_id": certs[0], "amount": 250}, {"payment_id": certs[1], "amount": 5}])
    assert not _over_limits(db, "mia_li_3668", [{"payment_id": certs[0], "amount": 250}, {"payment_id": card, "amount": 5}])
    gold = [_Action("book_reservation", user_id="mia_li_3668", payment_methods=[{"payment_id": certs[0], "amount": 250}, {"payment_id": card, "amount": 5}])]
    real = ("book_reservation", {"user_id": "mia_li_3668", "payment_methods": [{"payment_id": certs[0], "amount": 250}, {"payment_id": certs[1], "amount": 5}]})
    read = ("get_user_details", {"user_id": "mia_li_3668"})
    assert _attribute("airline", gold, [read, real], {"book_reservation"}, False, db, seen=["", ""])[0] == "airline.payment_limits"


def test_writes_match_gold_in_any_order_and_rejected_calls_changed_nothing():
    gold = [_Action("cancel_reservation", reservation_id="R"), _Action("cancel_reservation", reservation_id="S")]
    reads = [("get_reservation_details", {"reservation_id": "R"}), ("get_reservation_details", {"reservation_id": "S"})]
    swapped = [*reads, ("cancel_reservation", {"reservation_id": "S"}), ("cancel_reservation", {"reservation_id": "R"})]
    assert _attribute("airline", gold, swapped, WRITES, False)[:2] == (UNATTRIBUTED, None)  # same end state: no write deviates
    # the second cancellation was rejected by the tool: it never happened
    assert _attribute("airline", gold, swapped, WRITES, False, rejected={3})[:2] == ("premature_stop", 0)


def test_fields_the_tool_ignores_are_no_deviation():
    gold = {"flights": [{"flight_number": "F1", "date": "d"}], "cabin": "economy"}
    real = {"flights": [{"flight_number": "F1", "date": "d", "origin": "JFK", "price": 9}], "cabin": "economy"}
    assert _projected(real, gold) == gold
    assert _projected({**real, "cabin": "business"}, gold) != gold


@pytest.mark.slow
def test_fit_on_a_real_file_writes_a_profile_that_loads_with_its_counts(tmp_path, capsys, monkeypatch):
    from tauguard.cli.main import main

    def cli(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["tauguard", *args])
        with pytest.raises(SystemExit) as exit_:
            main()
        out, err = capsys.readouterr()
        return int(exit_.value.code or 0), out, err

    assert cli("import", str(shared_trajectories() / REAL_FILE), "--name", "real", "--out", str(tmp_path))[0] == 0
    result = fit([tmp_path / "real"])
    assert result.simulations == 50 and result.failures == 12  # reward 0.76
    assert sum(result.counts.values()) == result.failures == len(result.attributions)
    out = tmp_path / "fitted.toml"
    code, text, _ = cli("faults", "fit", str(tmp_path / "real"), "-o", str(out), "--format", "json")
    assert code == 0 and json.loads(text)["failures"] == 12
    profile = load_profile(str(out))
    assert profile.uptake == 0.8 and profile.fit["failures"] == 12
    m = profile.fit["prior_strength"]
    for fid, rate in profile.rates.items():
        n, opp = profile.fit["counts"][fid], profile.fit["opportunities"][fid]
        row = profile.fit["rates"][fid]
        assert (row["count"], row["opportunities"]) == (n, opp) and row["low"] <= n / opp <= row["high"]
        p0 = row["prior"]
        expected = (n + m * p0) / (opp + m) if p0 >= 0 else (n + 0.5) / (opp + 1)
        assert rate == pytest.approx(expected, abs=1e-4) and fid in profile.sources
    assert profile.draw == "first_deviation"  # first deviations compete for a write
    # a gold write the policy forbids, not made: a compliant refusal, not a fault
    from tauguard.domains.gold_conflicts import conflict_at

    refusals = [a for a in result.attributions if a.fault_id == "conflict_refusal"]
    assert refusals and all(conflict_at("airline", a.task_id, a.write_index) for a in refusals)
    assert profile.fit["rates"]["conflict_refusal"]["count"] == len(refusals)
    assert profile.conflict_refusal == pytest.approx((len(refusals) + 0.5) / (result.opportunities["conflict_refusal"] + 1), abs=1e-4)
    code, text, _ = cli("faults", "fit", str(tmp_path / "real"), "-o", str(tmp_path / "explained.toml"), "--explain")
    unexplained = [a for a in result.attributions if a.fault_id in ("unattributed", "wrong_choice", "user_ended") or not a.reproducible]
    assert code == 0 and f"failures no fault the sim can make explains: {len(unexplained)} of 12" in text
    assert all(a.task_id in text for a in unexplained[:1])
    # Opportunities are the writes at risk: every gold write of a passed simulation, a failed
    # one's up to its first deviation (premature_stop can fire at any of them).
    from tauguard.tau2_adapter import compat as t2
    from tauguard.runs.store import load_run

    gold = {t.id: sum(t2.is_agent_write("airline", a) for a in t.evaluation_criteria.actions or []) for t in t2.load_tasks("airline", "base")}
    first = {a.task_id: a.write_index for a in result.attributions}
    at_risk = sum(
        gold[r.task_id] if first.get(r.task_id) is None else min(first[r.task_id] + 1, gold[r.task_id])
        for r in load_run(tmp_path / "real").records if r.task_id in gold
    )
    assert result.opportunities["premature_stop"] == at_risk < sum(gold[r.task_id] for r in load_run(tmp_path / "real").records if r.task_id in gold)
    code, _, err = cli("faults", "fit", str(tmp_path / "real"), "-o", str(out))
    assert code == 2 and "already exists" in err  # nothing overwritten
    code, _, err = cli("faults", "fit", str(tmp_path), "-o", str(tmp_path / "x.toml"))
    assert code == 2 and "not a run directory" in err
    # A path without .toml (issue 38): written and loaded as a path, never read back as a profile name
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("faults", "fit", str(tmp_path / "real"), "-o", "prof")
    assert code == 0 and load_profile(tmp_path / "prof").fit["failures"] == 12, err
    # Refused before any work, and nothing written: under a file, inside the run folder
    (tmp_path / "afile").write_text("x")
    for bad, why in (("afile/p.toml", "is a file, not a folder"), ("real/p.toml", "is a run folder")):
        code, _, err = cli("faults", "fit", str(tmp_path / "real"), "-o", str(tmp_path / bad))
        assert code == 2 and why in err and not (tmp_path / bad).exists()


def test_opportunities_are_the_writes_where_the_sim_can_make_the_fault(tau2):
    from tauguard.tau2_adapter import compat as t2
    from tauguard.faults.opportunity import write_opportunities

    tasks = {t.id: t for t in t2.load_tasks("airline", "base")}
    assert write_opportunities("airline", tasks["0"]) == []  # no gold write
    booking = write_opportunities("airline", tasks["35"])[0]
    assert {"airline.stale_value", "airline.not_cheapest", "premature_transfer"} <= booking
    # task 8 pays with a travel certificate: no dearer flight can be paid, so no wrong-choice fault
    assert "airline.not_cheapest" not in write_opportunities("airline", tasks["8"])[0]


# -- attribution that matches what happened --------------------------------------------------


def _gold(domain: str, task_id: str) -> list:
    from tauguard.tau2_adapter import compat as t2

    task = next(t for t in t2.load_tasks(domain, "base") if t.id == task_id)
    return [a for a in task.evaluation_criteria.actions if t2.is_agent_write(domain, a)]


def _db(domain: str, task_id: str):
    from tauguard.tau2_adapter import compat as t2

    return t2.task_environment(domain, next(t for t in t2.load_tasks(domain, "base") if t.id == task_id)).tools.db


def test_a_compliant_alternative_at_a_gold_conflict_is_not_a_fault(tau2):
    from tauguard.faults.draw import CONFLICT_REFUSAL

    gold = _gold("airline", "33")  # gold charges 2 non-free bags to a gold member who has them free
    writes = {"update_reservation_flights", "update_reservation_baggages"}
    read = ("get_reservation_details", {"reservation_id": "HXDUBJ"})
    bags = {**dict(gold[1].arguments), "nonfree_baggages": 0}
    calls = [read, (gold[0].name, dict(gold[0].arguments)), ("update_reservation_baggages", bags)]
    # with or without the task id (found by its gold writes)
    assert _attribute("airline", gold, calls, writes, False)[:2] == (CONFLICT_REFUSAL, 1)
    assert _attribute("airline", gold, calls, writes, False, task_id="33")[:2] == (CONFLICT_REFUSAL, 1)
    # the same deviation on a task without a documented conflict stays a fault
    assert _attribute("airline", gold, calls, writes, False, task_id="34")[0] == "airline.baggage_nonfree"


def test_another_connection_between_the_same_places_is_a_wrong_choice_not_a_route_change(tau2):
    from tauguard.faults.fit import WRONG_CHOICE, _flight_fault

    db = _db("airline", "15")
    via_lga = [{"flight_number": "HAT110", "date": "2024-05-24"}, {"flight_number": "HAT172", "date": "2024-05-24"}]
    via_ord = [{"flight_number": "HAT227", "date": "2024-05-24"}, {"flight_number": "HAT139", "date": "2024-05-24"}]
    other_lga = [{"flight_number": "HAT110", "date": "2024-05-24"}, {"flight_number": "HAT029", "date": "2024-05-24"}]
    later = [{"flight_number": "HAT110", "date": "2024-05-25"}, {"flight_number": "HAT172", "date": "2024-05-25"}]
    to_jfk = [{"flight_number": "HAT233", "date": "2024-05-24"}]
    assert _flight_fault(db, via_ord, via_lga) == WRONG_CHOICE
    assert _flight_fault(db, later, via_lga) == WRONG_CHOICE  # a later day, same places
    assert _flight_fault(db, other_lga, via_lga) == "airline.not_cheapest"  # same legs and days
    assert _flight_fault(db, to_jfk, via_lga) == "airline.change_route"
    gold = [_Action("update_reservation_flights", reservation_id="M05KNL", cabin="economy", flights=via_lga, payment_id="g")]
    real = ("update_reservation_flights", {"reservation_id": "M05KNL", "cabin": "economy", "flights": via_ord, "payment_id": "g"})
    read = ("get_reservation_details", {"reservation_id": "M05KNL"})
    assert _attribute("airline", gold, [read, real], {"update_reservation_flights"}, False, db)[0] == WRONG_CHOICE


def test_a_refund_to_the_original_method_or_a_gift_card_is_not_a_refund_method_fault(tau2):
    from tauguard.faults.fit import WRONG_CHOICE

    db = _db("retail", "12")  # gold refunds order #W5490111 to PayPal; it was paid by credit_card_3124723
    gold = _gold("retail", "12")
    args = dict(gold[0].arguments)
    read = ("get_order_details", {"order_id": "#W5490111"})
    writes = {"return_delivered_order_items"}

    def attribute(method: str) -> str:
        return _attribute("retail", gold, [read, ("return_delivered_order_items", {**args, "payment_method_id": method})], writes, False, db)[0]

    assert attribute("credit_card_3124723") == WRONG_CHOICE  # the original method: compliant
    assert attribute("gift_card_1") == WRONG_CHOICE  # a gift card: compliant
    assert attribute("credit_card_999") == "retail.refund_method"  # neither: the fault


def _conversation(*turns: tuple[str, str], reason: str = "user_stop") -> dict:
    return {"termination_reason": reason, "messages": [{"role": r, "content": c} for r, c in turns]}


def test_a_conversation_the_user_ended_is_not_the_agents_premature_stop():
    from tauguard.faults.fit import USER_ENDED, user_ended

    quote = "The change costs $120, charged to your card. Shall I go ahead with the change?"
    declined = _conversation(("user", "Change my flight"), ("assistant", quote), ("user", "No, that's too expensive. ###STOP###"))
    yes_and_stop = _conversation(("user", "Change my flight"), ("assistant", quote), ("user", "Yes, go ahead. ###STOP###"))
    closed = _conversation(("user", "Change my flight"), ("assistant", "Is there anything else I can help you with?"), ("user", "No. ###STOP###"))
    assert user_ended(declined) and user_ended(yes_and_stop)
    assert not user_ended(closed)
    assert not user_ended(_conversation(("assistant", quote), ("user", "Yes ###STOP###"), reason="max_steps"))
    gold = [_Action("cancel_reservation", reservation_id="R")]
    read = ("get_reservation_details", {"reservation_id": "R"})
    assert _attribute("airline", gold, [read], WRITES, False, ended_by_user=True)[0] == USER_ENDED
    assert _attribute("airline", gold, [read], WRITES, False, ended_by_user=False)[0] == "premature_stop"


def test_rates_carry_a_jeffreys_interval_and_shrink_toward_the_realistic_rate():
    from statsmodels.stats.proportion import proportion_confint

    from tauguard.faults.rates import fitted_rate, jeffreys, realistic_prior

    for c, n in ((0, 2), (1, 1), (3, 10), (40, 100)):
        low, high = jeffreys(c, n)
        ref_low, ref_high = proportion_confint(c, n, alpha=0.05, method="jeffreys")
        # at 0 or n the bound is set to 0 or 1 (Brown, Cai & DasGupta 2001); statsmodels does not
        assert low == (0.0 if c == 0 else pytest.approx(ref_low, abs=1e-6))
        assert high == (1.0 if c == n else pytest.approx(ref_high, abs=1e-6))
    p0 = realistic_prior("premature_stop")
    assert p0 == 0.12
    one = fitted_rate(1, 1, p0, 4.0)
    assert one.rate == pytest.approx((1 + 4 * 0.12) / 5) and one.rate < 0.5  # 1/1 is not written as 1.0
    assert fitted_rate(0, 2, p0, 4.0).rate == pytest.approx(4 * 0.12 / 6)  # 0/2 is not 0
    many = fitted_rate(400, 1000, p0, 4.0)
    assert many.rate == pytest.approx(0.4, abs=0.002)  # enough evidence: the data decide
    assert realistic_prior("conflict_refusal") is None  # the realistic profile sets none
    assert fitted_rate(6, 10, None).rate == pytest.approx(6.5 / 11)  # Jeffreys' prior


@pytest.mark.parametrize("domain,task_id", [("retail", "5"), ("airline", "0")])
def test_an_unexplained_failure_fails_the_trial_with_no_write_whatever_the_guard(tau2, domain, task_id):
    from tauguard.tau2_adapter import compat as t2
    from tauguard.tau2_adapter.evaluation import CachedEvaluator
    from tauguard.agents.guarded import GuardedAgent
    from tauguard.faults.draw import UNEXPLAINED, apply_plan_faults, draw_trial_faults
    from tauguard.faults.model import FaultProfile
    from tauguard.sim.agent import SimAgent
    from tauguard.sim.clean_plan import sim_plan
    from tauguard.sim.user import SimUser

    task = next(t for t in t2.load_tasks(domain, "base") if t.id == task_id)
    profile = FaultProfile(name="u", uptake=1.0, block_transfer=0.0, unexplained_failure=1.0)
    gold = sim_plan(domain, task)
    faults = draw_trial_faults(profile, domain, task.id, 0, 1, gold)
    assert [f.fault_id for f in faults] == [UNEXPLAINED]
    # its own stream: the other draws of the trial are unchanged
    base = FaultProfile(name="b", uptake=1.0, block_transfer=0.0, rates={"premature_stop": 0.5})
    assert draw_trial_faults(base, domain, task.id, 0, 1, gold) == [
        f for f in draw_trial_faults(base.model_copy(update={"unexplained_failure": 0.5}), domain, task.id, 0, 1, gold) if f.fault_id != UNEXPLAINED
    ]
    env = t2.make_environment(domain)
    agent_types, user_types = t2.tool_types(domain)
    inner = SimAgent(domain, task, None, apply_plan_faults(domain, task.id, gold, faults), faults, env, 1.0, 1, 0)
    agent = GuardedAgent(inner, None, agent_types, max_retries=2)
    sim = t2.orchestrator_class()(domain=domain, agent=agent, user=SimUser(task, set(user_types)), environment=env,
                                  task=task, max_steps=60, max_errors=10, seed=0).run()
    assert CachedEvaluator().evaluate(sim, task, domain, live_env=env).reward == 0.0
    writes = {n for n, kind in agent_types.items() if kind == "WRITE"}
    assert not [c for m in sim.messages if m.role == "assistant" for c in (m.tool_calls or []) if c.name in writes]
    rec = next(f for f in inner.injected_faults() if f.fault_id == UNEXPLAINED)
    assert rec.applied and rec.reached


def test_an_alternative_at_a_gold_conflict_that_breaks_a_rule_on_its_own_facts_stays_a_fault(tau2):
    from tauguard.faults.fit import OWN_FACT_FAULTS, _argument_fault

    db = _db("airline", "7")  # gold write 1 cancels XEHM4B, which the policy forbids (no ground)
    gold = _gold("airline", "7")
    want = dict(gold[1].arguments)
    other = next(r for r, res in db.reservations.items() if r != want["reservation_id"] and res.user_id != db.reservations[want["reservation_id"]].user_id)
    fid, _ = _argument_fault("airline", "cancel_reservation", {"reservation_id": other}, want, db, "")
    assert fid in OWN_FACT_FAULTS  # another user's reservation
    calls = [("get_reservation_details", {"reservation_id": r}) for r in ("XEHM4B", other)]
    calls += [(gold[0].name, dict(gold[0].arguments)), ("cancel_reservation", {"reservation_id": other})]
    writes = {"update_reservation_flights", "cancel_reservation"}
    assert _attribute("airline", gold, calls, writes, False, db, task_id="7")[:2] == (fid, 1)
