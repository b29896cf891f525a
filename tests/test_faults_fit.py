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
    for fid, rate in profile.rates.items():
        n, opp = profile.fit["counts"][fid], profile.fit["opportunities"][fid]
        assert rate == pytest.approx(n / opp, abs=1e-4) and fid in profile.sources
    assert profile.draw == "first_deviation"  # first deviations compete for a write
    # a gold write the policy forbids, not made: a compliant refusal, not a fault
    from tauguard.domains.gold_conflicts import conflict_at

    refusals = [a for a in result.attributions if a.fault_id == "conflict_refusal"]
    assert refusals and all(conflict_at("airline", a.task_id, a.write_index) for a in refusals)
    assert profile.conflict_refusal == pytest.approx(len(refusals) / result.opportunities["conflict_refusal"], abs=1e-4)
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
