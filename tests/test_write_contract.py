"""The write contract (tauguard/domains/<domain>/writes.toml): one source for what a write requires.

Checks that the contract matches τ²'s tools and the policy pack, that the rubric, the sim's
lookups, the classifier's reads and the generic faults' scopes are derived from it, and that
every file restating part of it is refused on load when it contradicts it.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from pydantic import ValidationError
from tauguard_strategies.action_guard.schema import Checklist, domain_checklists
from tauguard_strategies.ledger.predicates.base import predicate
from tauguard_strategies.workflow import graph as workflow_graph

from tauguard import domains
from tauguard.tau2_adapter import compat as t2
from tauguard.classifier.state import read_map
from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView
from tauguard.datafiles import DataFileError, load_toml
from tauguard.domains import DOMAINS, consistency
from tauguard.domains.contract import (
    ContractError,
    DomainContract,
    confirmed_tools,
    contract,
    contract_domains,
    targeted_tools,
)
from tauguard.faults.catalog import faults_by_id
from tauguard.faults.model import FaultSpec, Temptation
from tauguard.process.score import score_conversation
from tauguard.sim.clean_plan import load_lookups



def test_every_domain_has_a_contract_of_exactly_its_agent_write_tools() -> None:
    assert contract_domains() == domains.domains() == list(DOMAINS)  # every policy pack has a write contract
    for domain in DOMAINS:
        agent, _ = t2.tool_types(domain)
        writes = sorted(t for t, kind in agent.items() if kind == "WRITE")
        assert sorted(contract(domain).tools) == writes, domain


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_read_the_contract_names_is_an_agent_read_with_that_argument(domain: str) -> None:
    agent, _ = t2.tool_types(domain)
    schemas = {t.name: t.openai_schema["function"]["parameters"]["properties"] for t in t2.agent_tools(domain)}
    c = contract(domain)
    for read in consistency.contract_reads(domain):
        assert agent.get(read) == "READ", (domain, read)
    for argument, entity in c.entities.items():
        assert entity.argument in schemas[entity.read], (argument, entity)
    for w in c.write:
        write_args = schemas[w.tool]
        for t in w.targets:
            assert t.argument in write_args and t.read_argument in schemas[t.read], (w.tool, t)
        for c_arg in w.closed:
            assert c_arg.argument in write_args, (w.tool, c_arg)


def test_the_explicit_yes_has_one_answer_per_domain_taken_from_the_policy() -> None:
    # airline.explicit_confirmation: "any actions that update the booking database": all six writes
    assert confirmed_tools("airline") == contract("airline").tools and len(confirmed_tools("airline")) == 6
    assert confirmed_tools("retail") == contract("retail").tools and len(confirmed_tools("retail")) == 7
    assert confirmed_tools("telecom") == ["refuel_data"]  # "Confirm the price"
    for domain in DOMAINS:
        for tool in confirmed_tools(domain):
            rule = contract(domain).rule(tool)
            assert rule is not None and rule.confirmation is not None
            assert tool in domains.clause(rule.confirmation.clause).tools  # the pack's scope says the same
    # the consumers give the same answer: action-guard's D-items, the workflow's confirm steps
    for domain in DOMAINS:
        asked = sorted(t for t, cl in domain_checklists(domain).items() if any(i.check == "dialogue.explicit_confirmation" for i in cl.items))
        assert asked == sorted(confirmed_tools(domain)), domain
        graph = workflow_graph.load(domain)
        confirming = sorted({
            n.tool for nid, n in graph.nodes.items()
            if n.type == "tool_authorization" and n.tool
            and any(graph.nodes[p].judge == "confirm" for p in graph.prerequisites(nid))
        })
        assert confirming == sorted(confirmed_tools(domain)), domain


def test_consumers_derive_from_the_contract() -> None:
    for domain in DOMAINS:
        c = contract(domain)
        lookups = load_lookups()[domain]
        assert lookups.identify == c.identification.reads[0] and lookups.identified_by == c.identification.reads
        assert {a: (lk.tool, lk.argument) for a, lk in lookups.lookups.items()} == {a: (e.read, e.argument) for a, e in c.entities.items()}
        assert lookups.before == {w.tool: [p.tool for p in w.prior] for w in c.write if w.prior}
        assert {a: (r.tool, r.argument) for a, r in read_map()[domain].items()} == {a: (e.read, e.argument) for a, e in c.entities.items()}
        # checklist statements are the contract's confirmation words and conveyed arguments
        for tool, checklist in domain_checklists(domain).items():
            rule = c.rule(tool)
            assert rule is not None
            want = (rule.confirmation.words, rule.confirmation.conveys) if rule.confirmation else ([], [])
            assert (checklist.statement.words, checklist.statement.key_args) == want
    faults = faults_by_id()
    for domain in DOMAINS:
        assert faults["skip_confirmation"].domain_tools[domain] == confirmed_tools(domain)
        assert faults["skip_read"].domain_tools[domain] == targeted_tools(domain)
    # a derived fault cites the clause of the write it breaks, not one clause for the domain
    assert faults["skip_read"].clause_ids("retail", "modify_pending_order_address") == ["retail.modify_pending"]
    assert faults["skip_read"].clause_ids("airline", "book_reservation") == ["airline.booking_user"]
    # the data files those consumers used to keep are gone
    root = Path(__file__).resolve().parents[1] / "tauguard"
    assert not (root / "sim" / "lookups.toml").exists() and not (root / "classifier" / "reads.toml").exists()
    assert not list((root / "process").glob("*.toml"))


def test_a_derived_fault_scope_cannot_also_be_written() -> None:
    spec = {"id": "skip_read", "domain": "*", "class": "T", "kind": "skip_read", "description": "d", "derive": "target_reads"}
    FaultSpec.model_validate(spec)
    with pytest.raises(ValidationError, match="derived from the write contract"):
        FaultSpec.model_validate({**spec, "clauses": {"airline": ["airline.reservation_owner"]}})
    with pytest.raises(ValidationError, match="derived from the write contract"):
        FaultSpec.model_validate({**spec, "tools": ["cancel_reservation"]})


def _contract_file(tmp_path: Path, domain: str, edit: tuple[str, str]) -> Path:
    text = (Path(domains.DIR) / domain / "writes.toml").read_text()
    assert edit[0] in text
    path = tmp_path / "writes.toml"
    path.write_text(text.replace(edit[0], edit[1], 1))
    return path


def test_a_contract_citing_a_clause_outside_its_scope_is_refused_naming_the_entry(tmp_path: Path) -> None:
    # airline.booking_user constrains only book_reservation
    path = _contract_file(tmp_path, "airline", ('tool = "cancel_reservation"\nidentify = "airline.reservation_owner"',
                                                'tool = "cancel_reservation"\nidentify = "airline.booking_user"'))
    loaded = load_toml(path, DomainContract)
    with pytest.raises(ContractError, match=r"write cancel_reservation cites airline.booking_user, whose scope \(book_reservation\)"):
        consistency_check(loaded)
    with pytest.raises(DataFileError, match="writes.toml: identification ways #1: an identification way has either reads or stated"):
        load_toml(_contract_file(tmp_path, "retail", ('{ reads = ["find_user_id_by_email"] }', '{ }')), DomainContract)


def consistency_check(loaded: DomainContract) -> None:
    from tauguard.domains.contract import _check_against_pack

    _check_against_pack(loaded, f"{loaded.domain}/writes.toml")


def _checklist(tool: str, items: list[dict]) -> dict:
    return {"domain": "airline", "tool": tool, "items": items}


CONFIRM_ITEM = {
    "id": "airline.update_reservation_baggages.confirmation", "kind": "D", "requirement": "yes",
    "clauses": ["airline.explicit_confirmation"], "check": "dialogue.explicit_confirmation",
}


def test_checklists_that_contradict_the_contract_are_refused() -> None:
    Checklist.model_validate(_checklist("update_reservation_baggages", [CONFIRM_ITEM]))
    with pytest.raises(ValidationError, match="asks for no explicit yes before update_reservation_baggages, but the airline write contract says it needs"):
        Checklist.model_validate(_checklist("update_reservation_baggages", []))
    wrong_clause = {**CONFIRM_ITEM, "clauses": ["airline.bag_allowance"]}
    with pytest.raises(ValidationError, match="must cite airline.explicit_confirmation"):
        Checklist.model_validate(_checklist("update_reservation_baggages", [wrong_clause]))
    out_of_scope = {**CONFIRM_ITEM, "id": "airline.update_reservation_baggages.x", "check": None, "clauses": ["airline.max_passengers"]}
    with pytest.raises(ValidationError, match="cites airline.max_passengers for update_reservation_baggages, outside its scope"):
        Checklist.model_validate(_checklist("update_reservation_baggages", [CONFIRM_ITEM, out_of_scope]))
    read = {"id": "airline.update_reservation_baggages.read", "kind": "T", "requirement": "read", "clauses": ["airline.reservation_owner"],
            "check": "tool.entity_read", "params": {"kind": "reservation", "arg": "reservation_id", "read": "get_user_details"}}
    with pytest.raises(ValidationError, match="get_user_details observes 'reservation_id' here, the airline contract says get_reservation_details"):
        Checklist.model_validate(_checklist("update_reservation_baggages", [CONFIRM_ITEM, read]))
    with pytest.raises(ValidationError, match="get_flight_status is not a write of the airline contract"):
        Checklist.model_validate(_checklist("get_flight_status", []))
    # telecom asks for a yes only before a refuel
    telecom = {"domain": "telecom", "tool": "suspend_line", "items": [{**CONFIRM_ITEM, "id": "telecom.suspend_line.c", "clauses": ["telecom.refuel_confirm_price"]}]}
    with pytest.raises(ValidationError, match="asks for an explicit yes before suspend_line, but the telecom write contract says it needs none"):
        Checklist.model_validate(telecom)


def test_a_workflow_graph_that_contradicts_the_contract_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    wf = workflow_graph.read_file("airline")
    comp = wf.subflow["compensation"]
    without_confirm = comp.model_copy(update={
        "nodes": [n for n in comp.nodes if n.id != "confirm"],
        "edges": [e for e in comp.edges if "confirm" not in (e.source, e.target)]
        + [workflow_graph.Edge(source="eligible", target="authorize", condition="eligible")],
    })
    broken = wf.model_copy(update={"subflow": {**wf.subflow, "compensation": without_confirm}})
    with pytest.raises(ContractError, match="workflow node compensation.authorize: asks for no explicit yes before send_certificate"):
        workflow_graph.check_contract(workflow_graph.flatten(broken))


def test_fault_temptation_and_predicate_citations_outside_scope_are_refused() -> None:
    spec = {"id": "airline.x", "domain": "airline", "class": "A", "kind": "call", "generator": "airline.x",
            "tools": ["cancel_reservation"], "description": "d", "clauses": {"airline": ["airline.max_passengers"]}}
    with pytest.raises(ValidationError, match=r"fault airline.x \(airline, cancel_reservation\): cites airline.max_passengers"):
        FaultSpec.model_validate(spec)
    FaultSpec.model_validate({**spec, "clauses": {"airline": ["airline.cancel_requires_basis"]}})
    # a call fault that emits another tool is checked against that tool
    FaultSpec.model_validate({**spec, "clauses": {"airline": ["airline.compensation_eligibility"]}, "emits": "send_certificate"})
    with pytest.raises(ValidationError, match="outside its scope"):
        Temptation.model_validate({"task_id": "1", "name": "cancel_reservation", "arguments": {}, "clause": "airline.max_passengers"})
    def p(ctx: object) -> list:
        return []

    with pytest.raises(ContractError, match="ledger predicate p: cites airline.max_passengers for cancel_reservation"):
        predicate("airline", "airline.max_passengers", "cancel_reservation")(p)  # type: ignore[arg-type]


def test_every_citation_of_every_consumer_is_within_its_clause_scope() -> None:
    """Loading is checking: each consumer refuses an out-of-scope citation when it loads."""
    from tauguard.attacks.catalog import domain_targets
    from tauguard.faults.catalog import load_catalog, temptations
    from tauguard_strategies.ledger.predicates.base import predicates
    from tauguard_strategies.ledger.readmap import domain_map
    import tauguard_strategies.ledger.predicates  # noqa: F401  registers every predicate

    checked = 0
    for domain in DOMAINS:
        checked += sum(len(i.clauses) for cl in domain_checklists(domain).values() for i in cl.items)
        checked += sum(len(n.clauses) for n in workflow_graph.load(domain).nodes.values())
        checked += len(temptations(domain)) + len(domain_targets(domain))
        domain_map(domain)
    checked += len(predicates) + sum(len(ids) for f in load_catalog() for ids in f.clauses.values())
    assert checked > 400


def _conv(*events: ConversationEvent) -> Conversation:
    conv = Conversation()
    for e in events:
        conv.add(e)
    return conv


def _call(i: str, name: str, **args: object) -> ToolCallView:
    return ToolCallView(id=i, name=name, arguments=dict(args), requestor="assistant")


def test_identification_by_a_stated_user_id_and_the_reservation_read_that_shows_its_owner() -> None:
    # airline: "The user must provide their user id." The reservation read shows who owns it; no
    # get_user_details is needed.
    read = _call("r", "get_reservation_details", reservation_id="ABC123")
    cancel = _call("w", "cancel_reservation", reservation_id="ABC123")

    def trace(user_text: str) -> Conversation:
        return _conv(
            ConversationEvent(kind="user_message", content=user_text),
            ConversationEvent(kind="agent_tool_call", tool_call=read),
            ConversationEvent(kind="tool_result", tool_call=read, content='{"reservation_id": "ABC123", "user_id": "mia_li_1"}'),
            ConversationEvent(kind="agent_tool_call", tool_call=cancel),
            ConversationEvent(kind="tool_result", tool_call=cancel, content='{"status": "cancelled"}'),
        )

    def identify_ok(conv: Conversation) -> bool:
        return not [f for f in score_conversation("airline", conv).failures if f.check == "identify"]

    assert identify_ok(trace("I am mia_li_1, please cancel ABC123."))
    assert not identify_ok(trace("I am noah_kim_2, please cancel ABC123."))  # not the owner
    # retail never takes a stated id: "This has to be done even when the user already provides the user id."
    ways = contract("retail").identification.ways
    assert all(w.stated is None for w in ways) and sorted(r for w in ways for r in w.reads) == ["find_user_id_by_email", "find_user_id_by_name_zip"]


def test_contract_files_are_valid_toml_with_the_documented_top_level() -> None:
    for domain in DOMAINS:
        raw = tomllib.loads((Path(domains.DIR) / domain / "writes.toml").read_text())
        assert raw["domain"] == domain and {"identification", "entities", "write", "refusal_clause"} <= set(raw)
