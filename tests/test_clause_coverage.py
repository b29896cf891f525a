"""The clause-coverage table: every clause that constrains a write has, for each guard, a check
or a documented reason; the data validates; the docs page is the generated one."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tauguard import coverage
from tauguard.cli.main import app
from tauguard.coverage import collect, model
from tauguard.coverage.render import markdown
from tauguard.domains import DOMAINS, load as load_pack

DOCS = Path(__file__).resolve().parents[1] / "docs" / "clause_coverage.md"
# The reasons of not_observable.toml are optional for a new domain (its gaps are reported as not
# checked, no reason given); the shipped domains must stay fully explained.
SHIPPED = ("airline", "retail", "telecom")


@pytest.fixture(scope="module")
def table() -> list[coverage.Row]:
    return coverage.rows()


@pytest.mark.parametrize("guard", model.GUARDS)
def test_every_write_clause_has_a_check_or_a_reason_for_each_guard(table: list[coverage.Row], guard: str) -> None:
    assert set(SHIPPED) <= {r.domain for r in table}
    gaps = [f"{r.clause} ({r.tool})" for r in table if r.domain in SHIPPED and r.cells[guard].status == "gap"]  # type: ignore[index]
    assert not gaps, f"{guard}: neither a check nor a not_observable.toml entry: {gaps}"


def test_the_table_has_every_clause_and_write_of_the_packs(table: list[coverage.Row]) -> None:
    expected = {(d, c.id, t) for d in DOMAINS for c in load_pack(d).clause for t in c.tools}
    assert {(r.domain, r.clause, r.tool) for r in table} == expected
    # the booking route, the exchange option, the delay tie and the cancellation basis are
    # checked by each guard that can observe them (tool results)
    wanted = {("airline.booking_route_asked", "book_reservation"), ("retail.exchange_same_product_item", "exchange_delivered_order_items"),
              ("airline.compensation_delayed", "send_certificate"), ("airline.cancel_requires_basis", "cancel_reservation"),
              ("retail.modify_items_once", "cancel_pending_order"), ("retail.modify_items_once", "modify_pending_order_address")}
    for r in table:
        if (r.clause, r.tool) in wanted:
            assert all(c.status == "check" for c in r.cells.values()), (r.clause, r.tool, r.cells)


def test_not_observable_entries_are_valid_and_not_contradicted_by_a_check() -> None:
    assert model.not_observable() and model.restatements()
    assert collect.stale_entries() == []
    seen = [(e.guard, e.clause, tuple(e.tools)) for e in model.not_observable()]
    assert len(seen) == len(set(seen))


def test_the_ledgers_not_observable_clauses_are_documented_here() -> None:
    # The ledger's clause book marks some clauses not_observable; the coverage data gives the
    # reason for each, and a clause the book enforces is never listed as not observable.
    from tauguard_strategies.ledger.clauses import load

    listed = {e.clause for e in model.not_observable() if e.guard == "ledger"}
    for domain in DOMAINS:
        for c in load(domain).clause:
            if c.enforcement == "not_observable" and c.tools:
                assert c.id in listed, c.id
            if c.enforcement == "ledger":
                assert c.id not in listed, c.id


def test_a_missing_reason_is_a_gap_and_a_stale_one_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    entries = model.not_observable()
    dropped = next(e for e in entries if e.guard == "workflow" and e.clause == "airline.passenger_details")
    monkeypatch.setattr(collect, "not_observable", lambda: tuple(e for e in entries if e is not dropped))
    rows = collect.rows(["airline"])
    assert [r.cells["workflow"].status for r in rows if r.clause == "airline.passenger_details"] == ["gap"]
    stale = model.NotObservable(guard="ledger", clause="airline.same_route", why="dialogue", reason="wrongly claimed to be dialogue only")
    monkeypatch.setattr(collect, "not_observable", lambda: (*entries, stale))
    assert any("airline.same_route" in p and "checked by same_route" in p for p in collect.stale_entries())


def test_part_of_counts_via_the_parent_unless_the_part_is_documented(table: list[coverage.Row]) -> None:
    by = {(r.clause, r.tool): r for r in table}
    # the ledger checks airline.cancel_requires_basis; its insurance part is documented as dialogue
    part = by[("airline.cancel_basis_24h", "cancel_reservation")].cells["ledger"]
    assert part.status == "check" and part.via == "parent" and part.checks == ["cancel_requires_basis"]
    # the action guard cites every part of the basis list, so the list itself counts via its parts
    whole = by[("airline.cancel_requires_basis", "cancel_reservation")].cells["action-guard"]
    assert whole.status == "check" and whole.via == "parts"


def test_the_docs_page_is_the_generated_one(table: list[coverage.Row]) -> None:
    assert DOCS.read_text() == markdown(table) + "\n", "regenerate: tauguard coverage --format markdown > docs/clause_coverage.md"


def test_cli_formats_and_exit_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["coverage", "--domain", "retail", "--format", "json"])
    assert ok.exit_code == 0 and '"action-guard"' in ok.output
    bad = runner.invoke(app, ["coverage", "--domain", "banking"])
    assert bad.exit_code == 2 and "error: unknown domain 'banking'" in bad.output
    monkeypatch.setattr(collect, "not_observable", lambda: ())
    gap = runner.invoke(app, ["coverage", "--domain", "airline"])
    # a missing reason is reported, not an error: the pair is not checked and no reason is given
    assert gap.exit_code == 0
    assert "coverage: not checked, no reason given: airline.explicit_confirmation (book_reservation) ledger" in gap.stderr
    assert "**not checked** (no reason given)" in runner.invoke(app, ["coverage", "--domain", "airline", "--format", "markdown"]).stdout
    stale = model.NotObservable(guard="ledger", clause="airline.same_route", why="dialogue", reason="wrongly claimed to be dialogue only")
    monkeypatch.setattr(collect, "not_observable", lambda: (stale,))
    contradicted = runner.invoke(app, ["coverage", "--domain", "airline"])
    assert contradicted.exit_code == 1 and "airline.same_route" in contradicted.stderr


def test_a_guard_without_rules_for_a_domain_is_not_checked_with_that_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    collect.has_rules.cache_clear()
    monkeypatch.setattr("tauguard_strategies.workflow.graph.domains", lambda: ["airline", "telecom"])  # as if retail had no graph
    try:
        rows = collect.rows(["retail"])
        cells = [r.cells["workflow"] for r in rows]
        # no check at all; a documented reason still shows, every other pair names the missing rules
        assert rows and {c.status for c in cells} == {"gap", "not_observable"}
        assert {c.reason for c in cells if c.status == "gap"} == {"workflow has no rules for retail"}
        assert any(r.cells["ledger"].status == "check" for r in rows)  # the other guards as before
    finally:
        collect.has_rules.cache_clear()
