"""Guard fixes checked on real agents' conversations (tests/data/real_cases; provenance there).

Each case is a write of a recorded real conversation, named by its id in the labelled real-write
benchmark (tauguard/benchmark/real_writes), and what a guard decides on it when the whole
recorded prefix is replayed (``tauguard audit``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data" / "real_cases"
CLAUDE = "airline_claude-opus-4-6_user-gpt-4.1"
GPTOSS = "airline_gpt-oss-120b_user-gpt-oss-120b"


@pytest.fixture(scope="module")
def decisions(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], object]:
    from tauguard.store import load_run
    from tauguard.trajectories.audit import audit_run
    from tauguard.trajectories.importer import import_results
    from tauguard.trajectories.load import read_results

    out = tmp_path_factory.mktemp("real_cases")
    found: dict[tuple[str, str], object] = {}
    for name in ("airline_claude_cases", "airline_gptoss_cases"):
        import_results(read_results(DATA / f"{name}.json.gz"), out, name=name)
        report = audit_run(load_run(out / name), ["ledger", "action-guard"])
        for s in report.strategies:
            assert s.labels is not None and s.labels.unmatched == 0
            for d in s.labels.decisions:
                found[(s.strategy, d.id)] = d
    return found


def test_a_stated_user_id_and_the_reservation_read_identify_the_user(decisions) -> None:
    # "My user id is ..." then get_reservation_details (owner = that id), no get_user_details:
    # the policy asks only that the user provide their id (the write contract's stated-id way).
    d = decisions[("ledger", f"{CLAUDE}:1:8:0")]
    assert d.label == "complies" and not d.held, d.reason


def test_a_delay_certificate_without_the_change_it_is_tied_to_is_blocked(decisions) -> None:
    # The user complains about a delay; the agent sends $150 and changes nothing.
    d = decisions[("ledger", f"{CLAUDE}:14:20:0")]
    assert d.label == "violates" and d.held and d.rule_id == "airline.compensation_delayed", d.reason


def test_a_booking_of_flights_read_from_the_users_reservation_counts_as_observed(decisions) -> None:
    # "a reservation for a friend that's exactly the same as the one I have booked for myself":
    # the flights come from get_reservation_details, not from a search.
    d = decisions[("action-guard", f"{GPTOSS}:25:11:0")]
    assert d.label == "complies" and "flights_searched" not in (d.rule_id or "") and "flight search" not in d.reason, d.reason


# -- clause coverage: gaps the coverage table showed (docs/clause_coverage.md), closed ----------------

RETAIL = "retail_gpt-4.1-mini_user-gpt-4.1"
GUARDS = ["ledger", "action-guard", "workflow"]


@pytest.fixture(scope="module")
def coverage_decisions(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], object]:
    from tauguard.store import load_run
    from tauguard.trajectories.audit import audit_run
    from tauguard.trajectories.importer import import_results
    from tauguard.trajectories.load import read_results

    out = tmp_path_factory.mktemp("coverage_cases")
    found: dict[tuple[str, str], object] = {}
    for name in ("airline_claude_cases", "airline_gptoss_coverage_cases", "retail_coverage_cases"):
        domain = name.split("_")[0]
        import_results(read_results(DATA / f"{name}.json.gz", domain=domain), out, name=name, relabel=domain == "retail")
        report = audit_run(load_run(out / name), GUARDS)
        for s in report.strategies:
            assert s.labels is not None and s.labels.unmatched == 0
            for d in s.labels.decisions:
                found[(s.strategy, d.id)] = d
    return found


@pytest.mark.parametrize("guard", GUARDS)
def test_a_delay_certificate_without_its_change_is_held_by_every_guard(coverage_decisions, guard: str) -> None:
    # Task 27: the user complains about a delay; the agent sends $150 and changes nothing. The
    # action guard (send_certificate.delay_after_change) and the workflow (compensation.eligible,
    # decided by that check) now hold it like the ledger.
    d = coverage_decisions[(guard, f"{CLAUDE}:14:20:0")]
    assert d.label == "violates" and d.held, d.reason
    if guard != "ledger":
        assert "delay" in d.reason and "neither changed nor cancelled" in d.reason, d.reason


def test_the_workflow_decides_the_cancellation_basis_from_tool_results(coverage_decisions) -> None:
    # Task 2: a basic economy, uninsured reservation booked two days earlier, no flight cancelled
    # by the airline. Without an LLM the workflow used to pass its eligibility node; now the node
    # is decided by the cancellation-basis check (the contract's basis alternatives): only a
    # flight the airline cancelled could still qualify it, and no flight status was read.
    d = coverage_decisions[("workflow", f"{GPTOSS}:4:25:0")]
    assert d.label == "violates" and d.held, d.reason
    assert "cancel.eligible is unmet" in d.reason and "qualifies only if the airline cancelled a flight" in d.reason, d.reason


@pytest.mark.parametrize("guard", GUARDS)
def test_an_order_whose_items_were_modified_is_not_modified_again(coverage_decisions, guard: str) -> None:
    # Task 35: modify_pending_order_items, then modify_pending_order_address on the same order
    # ("The agent will not be able to modify or cancel the order anymore").
    d = coverage_decisions[(guard, f"{RETAIL}:35:22:0")]
    assert d.label == "violates" and d.held, d.reason
