"""The ledger's clause data: schema, predicate coverage, docs table (texts: tests/test_domain_policy.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tauguard_strategies.ledger import clauses
from tauguard_strategies.ledger.predicates import all_predicates
from tauguard.tau2_adapter import compat as t2

DOCS = Path(__file__).resolve().parents[1] / "docs" / "ledger.md"


def test_every_domain_has_a_valid_clause_file() -> None:
    assert clauses.domains() == sorted(t2.DOMAINS)
    for domain in clauses.domains():
        book = clauses.load(domain)  # validates against the schema
        assert book.domain == domain and book.clause


def test_schema_rejects_bad_data() -> None:
    good = {"id": "airline.x", "kind": "state", "enforcement": "ledger", "tools": [], "text": "some clause text"}
    clauses.ClauseBook.model_validate({"domain": "airline", "source": "s", "clause": [good]})
    with pytest.raises(ValueError):
        clauses.ClauseBook.model_validate({"domain": "airline", "source": "s", "clause": [good, good]})
    with pytest.raises(ValueError):
        clauses.ClauseBook.model_validate({"domain": "retail", "source": "s", "clause": [good]})
    with pytest.raises(ValueError):
        clauses.LedgerClause.model_validate(dict(good, enforcement="maybe"))
    with pytest.raises(ValueError):
        clauses.LedgerClause.model_validate(dict(good, surprise=1))
    # The enforcement files hold only id, enforcement and note; texts come from the policy pack.
    with pytest.raises(ValueError):
        clauses.EnforcementFile.model_validate({"domain": "airline", "clause": [{"id": "airline.x", "enforcement": "ledger", "text": "t"}]})


def test_cited_clauses_take_text_and_tools_from_the_policy_pack() -> None:
    from tauguard import domains

    for domain in clauses.domains():
        for c in clauses.load(domain).clause:
            pack = domains.clause(c.id)
            assert (c.text, c.tools, c.kind) == (pack.text, pack.tools, pack.kind)
            assert "{" not in c.note  # constants are filled in


def test_every_predicate_cites_an_enforced_clause_of_its_tool() -> None:
    preds = all_predicates()
    assert preds
    for p in preds:
        clause = clauses.load(p.domain).get(p.rule_id)  # KeyError if the rule id is unknown
        assert clause.enforcement == "ledger", p.rule_id
        assert p.tool in clause.tools, (p.rule_id, p.tool)


@pytest.mark.parametrize("domain", t2.DOMAINS)
def test_ledger_clauses_and_write_tools_are_covered(domain: str) -> None:
    preds = [p for p in all_predicates() if p.domain == domain]
    gated = {(p.rule_id, p.tool) for p in preds}
    for c in clauses.load(domain).clause:
        if c.enforcement == "ledger":
            assert all((c.id, t) in gated for t in c.tools), c.id
    agent_types, _ = t2.tool_types(domain)
    writes = {name for name, kind in agent_types.items() if kind == "WRITE"}
    assert writes == {p.tool for p in preds}


def test_docs_table_is_the_generated_one() -> None:
    assert clauses.markdown_table() in DOCS.read_text()
    assert clauses.markdown_table() in (DOCS.parents[1] / "README.md").read_text()
