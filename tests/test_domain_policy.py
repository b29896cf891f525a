"""The domain policy packs: schema, verbatim clause texts, and every clause id cited anywhere exists."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from tauguard_strategies.action_guard.schema import (
    Checklist,
    checklist_files,
    load_checklist,
)
from tauguard_strategies.ledger import clauses as ledger_clauses
from tauguard_strategies.workflow import graph as workflow_graph

from tauguard import domains
from tauguard.tau2_adapter import compat as t2
from tauguard.faults.catalog import TEMPTATIONS_DIR, load_catalog, temptations
from tauguard.faults.model import FaultSpec, Temptation
from tauguard.process import rubric as process_rubric


def test_every_domain_has_a_valid_pack_with_typed_constants() -> None:
    assert domains.domains() == sorted(t2.DOMAINS)
    for domain in domains.domains():
        pack = domains.load(domain)
        assert pack.domain == domain and pack.clause
        assert isinstance(domains.constants(domain), domains.CONSTANTS[domain])


@pytest.mark.parametrize("domain", t2.DOMAINS)
def test_clause_texts_are_verbatim_policy(domain: str) -> None:
    # The policy tau2 gives the agent (telecom: main policy plus the technical-support manual).
    policy = t2.policy_text(domain)
    assert [c.id for c in domains.load(domain).clause if c.text.strip() not in policy] == []


@pytest.mark.parametrize("domain", t2.DOMAINS)
def test_clause_tools_are_agent_write_tools(domain: str) -> None:
    agent_types, _ = t2.tool_types(domain)
    for c in domains.load(domain).clause:
        assert all(agent_types.get(t) == "WRITE" for t in c.tools), c.id


def _cited() -> dict[str, set[str]]:
    """Every clause id cited anywhere, by where it is cited."""
    cited: dict[str, set[str]] = {}
    for domain in ledger_clauses.domains():
        for c in ledger_clauses.load(domain).clause:
            cited.setdefault(c.id, set()).add("ledger")
    for path in checklist_files():
        for item in load_checklist(path).items:
            for cid in item.clauses:
                cited.setdefault(cid, set()).add(item.id)
    for spec in load_catalog():
        for ids in spec.clauses.values():
            for cid in ids:
                cited.setdefault(cid, set()).add(spec.id)
    for path in TEMPTATIONS_DIR.glob("*.toml"):
        for t in temptations(path.stem).values():
            cited.setdefault(t.clause_id, set()).add(f"temptation {t.task_id}")
    for domain in process_rubric.domains():
        for cid in process_rubric.load(domain).clause_ids():
            cited.setdefault(cid, set()).add("process rubric")
    for domain in workflow_graph.domains():
        for cid in workflow_graph.read_file(domain).clause_ids():
            cited.setdefault(cid, set()).add("workflow graph")
    return cited


def test_every_cited_clause_exists_and_every_clause_is_cited() -> None:
    cited = _cited()
    known = {c.id for d in domains.domains() for c in domains.load(d).clause}
    assert sorted(set(cited) - known) == []
    parents = {c.part_of for d in domains.domains() for c in domains.load(d).clause if c.part_of}
    assert sorted(known - set(cited) - parents) == []  # no dead clauses


def test_an_unknown_clause_id_is_a_load_error_everywhere() -> None:
    with pytest.raises(domains.UnknownClauseError):
        domains.clause("airline.no_such_clause")
    item = {"id": "retail.cancel_pending_order.x", "kind": "T", "requirement": "r", "clauses": ["retail.nope"]}
    with pytest.raises(ValidationError, match="unknown clause id 'retail.nope'"):
        Checklist.model_validate({"domain": "retail", "tool": "cancel_pending_order", "items": [item]})
    spec = {"id": "x.y", "domain": "airline", "class": "A", "kind": "skip_read", "tools": ["*"], "description": "d"}
    with pytest.raises(ValidationError, match="unknown clause id"):
        FaultSpec.model_validate({**spec, "clauses": {"airline": ["airline.nope"]}})
    with pytest.raises(ValidationError, match="airline clause ids"):
        FaultSpec.model_validate({**spec, "clauses": {"airline": ["retail.cancel_reason"]}})
    with pytest.raises(ValidationError, match="unknown clause id"):
        Temptation.model_validate({"task_id": "1", "name": "cancel_reservation", "arguments": {}, "clause": "airline.nope"})


def _pack(**changes: object) -> dict:
    clause = {"id": "retail.a", "section": "s", "text": "The first policy sentence."}
    part = {"id": "retail.b", "section": "s", "text": "first policy", "part_of": "retail.a"}
    pack = {"domain": "retail", "source": "p.md", "constants": {"k": 1}, "clause": [dict(clause, defines=["k"]), part]}
    return {**pack, **changes}


def test_pack_schema_rejects_inconsistent_data() -> None:
    domains.PolicyPack.model_validate(_pack())
    one = {"id": "retail.a", "section": "s", "text": "The first policy sentence.", "defines": ["k"]}
    with pytest.raises(ValidationError, match="duplicate"):
        domains.PolicyPack.model_validate(_pack(clause=[one, one]))
    with pytest.raises(ValidationError, match="part_of"):
        domains.PolicyPack.model_validate(_pack(clause=[one, {"id": "retail.b", "section": "s", "text": "not in it at all", "part_of": "retail.a"}]))
    with pytest.raises(ValidationError, match="no clause defines"):
        domains.PolicyPack.model_validate(_pack(constants={"k": 1, "j": 2}))
    with pytest.raises(ValidationError, match="not prefixed"):
        domains.PolicyPack.model_validate(_pack(domain="airline"))
    with pytest.raises(ValidationError):
        domains.AirlineConstants.model_validate({**domains.load("airline").constants, "surprise": 1})


def test_constants_are_the_policy_values() -> None:
    airline, telecom = domains.airline(), domains.telecom()
    # Each constant sits next to the clause that states it; spot-check values against the text.
    assert airline.now_iso == "2024-05-15T15:00:00" and airline.now.strftime("%Y-%m-%d %H:%M:%S") in domains.clause("airline.clock").text
    assert airline.cancel_window_start == "2024-05-14T15:00:00"
    assert f"{telecom.max_refuel_gb:g}GB" in domains.clause("telecom.refuel_max").text
    assert telecom.today in domains.clause("telecom.clock").text
    allowance = domains.clause("airline.bag_allowance").text
    for membership, by_cabin in airline.free_bags.items():
        section = allowance.split(f"If the booking user is a {membership} member:")[1].split("- If")[0]
        for cabin, free in by_cabin.items():
            line = next(x for x in section.splitlines() if x.endswith(f"for each {cabin.replace('_', ' ')} passenger"))
            assert line.strip().startswith(f"- {free} free checked bag"), (membership, cabin, line)
    assert f"Each extra baggage is {airline.bag_fee} dollars." in allowance
    assert all(f"'{r}'" in domains.clause("retail.cancel_reason").text for r in domains.retail().cancel_reasons)

