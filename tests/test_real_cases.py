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
RETAIL = "retail_gpt-4.1-mini_user-gpt-4.1"
GUARDS = ["ledger", "action-guard", "workflow"]


NAMES = ("airline_claude_cases", "airline_gptoss_cases", "retail_cases", "airline_gptoss_coverage_cases", "retail_coverage_cases")


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The case files imported as runs (one folder per file, named as the file)."""
    from tauguard.trajectories.importer import import_results
    from tauguard.trajectories.load import read_results

    out = tmp_path_factory.mktemp("real_cases")
    for name in NAMES:
        domain = name.split("_")[0]
        # the retail file's task labels are wrong: its simulations are placed from their content
        import_results(read_results(DATA / f"{name}.json.gz", domain=domain), out, name=name, relabel=domain == "retail")
    return out


@pytest.fixture(scope="module")
def decisions(imported: Path) -> dict[tuple[str, str], object]:
    from tauguard.runs.store import load_run
    from tauguard.trajectories.audit import audit_run

    found: dict[tuple[str, str], object] = {}
    for name in NAMES:
        report = audit_run(load_run(imported / name), GUARDS, follow_reads=True)
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


def test_workflow_identifies_the_user_by_the_contracts_stated_id_way(decisions) -> None:
    # Same conversation as above: the workflow's identify subflow asked for get_user_details;
    # the write contract's stated-id way (the reservation read shows the stated id as owner)
    # satisfies it too.
    d = decisions[("workflow", f"{CLAUDE}:1:8:0")]
    assert d.label == "complies" and not d.held, d.reason
    d = decisions[("workflow", f"{GPTOSS}:9:10:0")]  # a cabin downgrade on the stated id
    assert d.label == "complies" and not d.held, d.reason


def test_workflow_counts_flights_read_from_the_copied_reservation_as_observed(decisions) -> None:
    d = decisions[("workflow", f"{GPTOSS}:25:11:0")]
    assert d.label == "complies" and not d.held, d.reason


def test_workflow_holds_a_flight_change_paid_by_a_method_nobody_named(decisions) -> None:
    # The agent changes the flights and picks gift_card_6941833 itself; the user is never asked.
    d = decisions[("workflow", f"{GPTOSS}:35:10:0")]
    assert d.label == "violates" and d.held and d.rule_id == "airline.change_payment", d.reason
    # where the agent named the method it refunds to and the user said yes, the node is met
    d = decisions[("workflow", f"{GPTOSS}:9:10:0")]
    assert "payment" not in d.reason


def test_a_payment_entry_without_an_id_is_not_a_method_outside_the_profile(decisions) -> None:
    # {"type": "certificate", "id": "certificate_8045380"}: the tool rejects the shape; the
    # certificate is in the profile, so payment_in_profile has nothing to hold.
    d = decisions[("action-guard", f"{GPTOSS}:7:16:0")]
    assert d.label == "complies" and d.rule_id != "airline.book_reservation.payment_in_profile", d.reason


def test_the_orders_own_paypal_pays_an_exchange_difference_without_a_profile_read(decisions) -> None:
    # find_user_id_by_email, get_order_details, get_product_details; the user asks for the
    # original method (paypal_4518393, the order's payment history): no balance to check.
    d = decisions[("ledger", f"{RETAIL}:103:12:0")]
    assert d.label == "complies" and not d.held, d.reason


def test_a_verify_the_agent_does_not_follow_is_a_hold_and_after_reads_is_apart(decisions) -> None:
    # The ledger asks to read james_patel_9828's profile before the refund to gift_card_1642017:
    # held by default (a real agent need not read), allowed once the read is made.
    d = decisions[("ledger", f"{GPTOSS}:9:10:0")]
    assert d.verdict == "VERIFY" and d.held and d.rule_id == "airline.change_payment", d.reason
    assert d.held_after_reads is False


def test_audit_prints_the_default_figures_and_the_after_reads_figures_apart(imported: Path) -> None:
    from typer.testing import CliRunner

    from tauguard.cli.main import app
    from tauguard.trajectories.render import AFTER_READS_FIGURES, DEFAULT_FIGURES

    result = CliRunner().invoke(app, ["audit", str(imported / "airline_gptoss_cases"), "-s", "ledger", "--format", "markdown"])
    assert result.exit_code == 0, result.output
    text = result.output
    default, after = text.index(DEFAULT_FIGURES), text.index(AFTER_READS_FIGURES)
    assert default < after
    # the ledger's VERIFY on the downgrade refund (profile not read) is a false hold by default
    # and not once the read is made: the two tables differ
    first = text[default:after].split("\n")
    second = text[after:].split("\n")
    row = next(line for line in first if line.startswith("| ledger"))
    row_after = next(line for line in second if line.startswith("| ledger"))
    assert row.split("|")[2].strip().startswith("2/") and row_after.split("|")[2].strip().startswith("0/"), (row, row_after)
    plain = CliRunner().invoke(app, ["audit", str(imported / "airline_gptoss_cases"), "-s", "ledger", "--no-follow-reads"])
    assert plain.exit_code == 0 and AFTER_READS_FIGURES not in plain.output and DEFAULT_FIGURES in plain.output


# -- clause coverage: gaps the coverage table showed (docs/clause_coverage.md), closed ----------------


@pytest.mark.parametrize("guard", GUARDS)
def test_a_delay_certificate_without_its_change_is_held_by_every_guard(decisions, guard: str) -> None:
    # Task 27: the user complains about a delay; the agent sends $150 and changes nothing. The
    # action guard (send_certificate.delay_after_change) and the workflow (compensation.eligible,
    # decided by that check) now hold it like the ledger.
    d = decisions[(guard, f"{CLAUDE}:14:20:0")]
    assert d.label == "violates" and d.held, d.reason
    if guard != "ledger":
        assert "delay" in d.reason and "neither changed nor cancelled" in d.reason, d.reason


def test_the_workflow_decides_the_cancellation_basis_from_tool_results(decisions) -> None:
    # Task 2: a basic economy, uninsured reservation booked two days earlier, no flight cancelled
    # by the airline. Without an LLM the workflow used to pass its eligibility node; now the node
    # is decided by the cancellation-basis check (the contract's basis alternatives): only a
    # flight the airline cancelled could still qualify it, and no flight status was read.
    d = decisions[("workflow", f"{GPTOSS}:4:25:0")]
    assert d.label == "violates" and d.held, d.reason
    assert "cancel.eligible is unmet" in d.reason and "qualifies only if the airline cancelled a flight" in d.reason, d.reason


@pytest.mark.parametrize("guard", GUARDS)
def test_an_order_whose_items_were_modified_is_not_modified_again(decisions, guard: str) -> None:
    # Task 35: modify_pending_order_items, then modify_pending_order_address on the same order
    # ("The agent will not be able to modify or cancel the order anymore").
    d = decisions[(guard, f"{RETAIL}:35:22:0")]
    assert d.label == "violates" and d.held, d.reason


# -- issue 22: the remaining non-confirmation false holds ---------------------------------------------


def test_a_purpose_the_user_gives_for_a_cancellation_is_its_reason(decisions) -> None:
    # Task 23: "I'd like to minimize the amount charged to my Mastercard, so I prefer to cancel
    # and rebook as a new business class reservation": a motive (paying less, a booking instead)
    # tied to the request by "so"; the policy asks for any reason ("or other reasons").
    d = decisions[("action-guard", f"{CLAUDE}:45:24:0")]
    assert d.label == "complies" and not d.held, d.reason


@pytest.mark.parametrize("guard", GUARDS)
def test_a_certificate_after_the_cancellation_earlier_in_its_message_is_tied_to_it(decisions, guard: str) -> None:
    # Task 5: one agent message cancels the delayed reservation 3JA7XV, then sends $50 x 4
    # passengers. The cancellation is issued before the certificate in that message (the
    # wrapper executes the message only if every call in it is allowed): every guard sees it.
    d = decisions[(guard, f"{GPTOSS}:6:20:1")]
    assert d.label == "complies" and "neither changed nor cancelled" not in d.reason, d.reason
    assert d.rule_id not in ("airline.compensation_delayed", "airline.send_certificate.delay_after_change",
                             "airline.compensation_eligibility"), d.reason
    if guard == "ledger":
        assert not d.held, d.reason


@pytest.mark.parametrize("guard", ["ledger", "workflow"])
def test_an_exchange_to_a_variant_nobody_read_available_waits_for_the_product_read(decisions, guard: str) -> None:
    # Label 5: the new earbuds 1646531091 are an item of the same delivered order (same product
    # id), but only get_product_details shows whether the variant is available now; the agent
    # never read it. The guards' VERIFY for that read is what catches labels 4 and 17 (variants
    # that were unavailable); once the read is made this exchange is allowed.
    d = decisions[(guard, f"{RETAIL}:5:16:0")]
    assert d.label == "complies" and d.verdict == "VERIFY" and d.rule_id == "retail.exchange_same_product", d.reason
    assert d.held_after_reads is False
