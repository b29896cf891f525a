"""The `workflow` strategy: graph files, `tauguard workflow show`, the session, the LLM verifier."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from tauguard_strategies.workflow import WorkflowStrategy
from tauguard_strategies.workflow.graph import GraphError, WorkflowFile, flatten, load, problems, read_file
from tauguard.cli.main import app
from tauguard.domains import DOMAINS
from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView
from tauguard.strategy_api.guard import OPEN_REQUEST_MARKER, SessionContext, Verdict
from tauguard.sim import texts
from tauguard.testing.llm_server import ScriptedLLMServer

RETAIL_TYPES = {"find_user_id_by_email": "READ", "get_order_details": "READ", "cancel_pending_order": "WRITE"}
CANCEL = ToolCallView(id="w", name="cancel_pending_order", arguments={"order_id": "#W1", "reason": "no longer needed"})


def _clause_ids(domain: str) -> set[str]:
    from tauguard.domains import load as load_pack

    return {c.id for c in load_pack(domain).clause}


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_graph_is_valid(domain, tau2):
    agent_types, _ = tau2.tool_types(domain)
    writes = sorted(t for t, kind in agent_types.items() if kind == "WRITE")
    graph = load(domain)
    assert problems(graph, writes, _clause_ids(domain)) == []
    assert sorted(read_file(domain).clause_ids() - _clause_ids(domain)) == []  # subflow nodes too
    assert graph.requests and all(r.tools for r in graph.requests)
    for node in graph.nodes.values():
        assert node.type != "subflow"  # inlined
        if node.type in ("tool_call", "tool_authorization"):
            assert node.tool in agent_types or node.actor == "tool"


def test_telecom_chains_service_inside_data_inside_mms():
    ids = set(load("telecom").nodes)
    assert {"troubleshoot_mms.data.service.diagnose", "troubleshoot_mms.data.diagnose", "troubleshoot_mms.diagnose"} <= ids


def test_dangling_subflow_and_unknown_edge_are_load_errors():
    wf = read_file("retail").model_dump()
    wf["nodes"][2]["subflow"] = "nope"
    with pytest.raises(GraphError, match="unknown subflow 'nope'"):
        flatten(WorkflowFile.model_validate(wf))
    wf = read_file("retail").model_dump()
    wf["edges"].append({"source": "start", "target": "ghost", "condition": ""})
    with pytest.raises(GraphError, match="unknown node"):
        flatten(WorkflowFile.model_validate(wf))
    graph = load("retail")
    assert problems(graph, ["no_such_write"], set()) [0] == "write tool no_such_write has no tool_authorization node"


def test_workflow_show_cli():
    runner = CliRunner()
    table = runner.invoke(app, ["workflow", "show", "--domain", "airline"])  # a table by default, as everywhere
    assert table.exit_code == 0 and not table.output.startswith("flowchart TD") and "book_reservation" in table.output
    out = runner.invoke(app, ["workflow", "show", "--domain", "airline", "--format", "mermaid"])
    assert out.exit_code == 0 and out.output.startswith("flowchart TD") and "book_reservation" in out.output
    data = json.loads(runner.invoke(app, ["workflow", "show", "--domain", "telecom", "--format", "json"]).output)
    assert data["domain"] == "telecom" and "troubleshoot_mms.verify" in data["nodes"]
    bad = runner.invoke(app, ["workflow", "show", "--domain", "bank"])
    assert bad.exit_code == 2 and f"error: unknown domain 'bank'; allowed: {', '.join(DOMAINS)}" in bad.output


def _session(**llm: Any):
    context = SessionContext(domain="retail", task_id="t", policy="Retail policy.", tool_types=RETAIL_TYPES, **llm)
    return WorkflowStrategy().new_session(context)


def _feed(session, conv: Conversation, *events: ConversationEvent) -> None:
    for e in events:
        conv.add(e)
        if e.kind == "user_message":
            session.on_user_turn(e, conv)
        elif e.kind == "tool_result":
            session.after_tool(e, conv)


# What the reads return (the order's status decides the workflow's order.status node).
RESULTS = {"find_user_id_by_email": "u1", "get_order_details": json.dumps({"order_id": "#W1", "user_id": "u1", "status": "pending", "items": []})}


def _read(name: str, args: dict) -> list[ConversationEvent]:
    call = ToolCallView(id=name, name=name, arguments=args)
    content = RESULTS.get(name, "{}")
    return [ConversationEvent(kind="agent_tool_call", tool_call=call), ConversationEvent(kind="tool_result", tool_call=call, content=content)]


def test_session_intercepts_until_the_authorization_node_is_reached_and_tracks_the_request():
    session, conv = _session(), Conversation()
    _feed(session, conv, ConversationEvent(kind="user_message", content="Please cancel my order #W1."))
    assert OPEN_REQUEST_MARKER + ": cancel" in (session.render_context() or "")
    first = session.before_write(CANCEL, conv)
    assert first.verdict == Verdict.VERIFY and first.rule_id == "retail.authenticate"
    _feed(session, conv, *_read("find_user_id_by_email", {"email": "a@b.c"}))
    second = session.before_write(CANCEL, conv)
    assert second.verdict == Verdict.VERIFY and second.required_reads[0].tool == "get_order_details"
    assert second.required_reads[0].arguments == {"order_id": "#W1"} and "cancel.order.read_order" in second.remediation
    _feed(session, conv, *_read("get_order_details", {"order_id": "#W1"}))
    # the reason is neither given by the user nor yet in a statement the user confirmed
    third = session.before_write(CANCEL, conv)
    assert third.evidence["unmet"] == "cancel.reason_allowed" and third.rule_id == "retail.cancel_reason_confirm"
    _feed(session, conv, ConversationEvent(kind="agent_message", content=texts.confirm_request(CANCEL.name, CANCEL.arguments)),
          ConversationEvent(kind="user_message", content=texts.USER_YES))
    assert session.before_write(CANCEL, conv).verdict == Verdict.ALLOW
    _feed(session, conv, ConversationEvent(kind="agent_tool_call", tool_call=CANCEL),
          ConversationEvent(kind="tool_result", tool_call=CANCEL, content="{}"))
    assert session.render_context() is None  # request done: nothing open
    assert session.tracker.state.requests[0].status == "done"


@pytest.mark.slow
def test_premature_stop_is_caught_and_the_sim_continues(tau2):
    from conftest import make_unit
    from tauguard.execution.simulate import run_unit
    from tauguard.runs.records import TrialRecord

    profile = {"name": "stop", "rates": {"premature_stop": 1.0}, "uptake": 1.0}
    react = TrialRecord.model_validate(run_unit(make_unit("retail", "5", fault_profile=profile)))
    guided = TrialRecord.model_validate(
        run_unit(make_unit("retail", "5", fault_profile=profile, strategy="workflow", sim_feedback="oracle"))
    )
    assert [(f.fault_class, f.applied, f.intercepted) for f in react.faults] == [("W", True, False)] and not react.success
    assert [(f.fault_class, f.applied, f.intercepted) for f in guided.faults] == [("W", True, True)] and guided.success
    # Feedback-only: the guidance names the open return, but its item_ids were never seen under
    # that name, so the agent cannot derive the call and closes (the oracle resumed the gold plan).
    honest = TrialRecord.model_validate(run_unit(make_unit("retail", "5", fault_profile=profile, strategy="workflow")))
    assert [(f.fault_class, f.applied, f.intercepted) for f in honest.faults] == [("W", True, True)] and not honest.success
    # Airline task 9: one reservation read, so the open cancel's call is derivable and made; its
    # segments have landed (a documented gold/policy conflict), so the guide's cancel.flown
    # decision, decided from the flight statuses, refuses it under its clause (the policy forbids it).
    derivable = TrialRecord.model_validate(run_unit(make_unit("airline", "9", fault_profile=profile, strategy="workflow")))
    assert [(f.fault_class, f.applied, f.intercepted) for f in derivable.faults] == [("W", True, True)]
    held = [e for e in derivable.guard_events if e.hook == "before_write"]
    assert held and all(e.verdict == Verdict.BLOCK and e.evidence["unmet"] == "cancel.flown" for e in held)
    assert {e.rule_id for e in held} == {"airline.cancel_not_flown"}
    turns = [e for e in guided.guard_events if e.hook == "user_turn"]
    assert turns and all("requests" in e.evidence["state"] for e in turns)


def _answer(requests: list[dict], guidance: str = "") -> dict:
    return {"content": json.dumps({"requests": requests, "guidance": guidance}), "usage": {"prompt_tokens": 900, "completion_tokens": 30}}


def _llm_session(server: ScriptedLLMServer, **options: Any):
    args = {"api_base": server.api_base, "api_key": "sk-test", "timeout": 1, "max_retries": 0}
    context = SessionContext(domain="retail", task_id="t", policy="Retail policy.", tool_types=RETAIL_TYPES,
                             guard_llm="openai/verifier", guard_llm_args=args)
    return WorkflowStrategy(options).new_session(context)


def _llm_conversation(session) -> Conversation:
    conv = Conversation()
    _feed(session, conv, ConversationEvent(kind="user_message", content="Cancel order #W1 please, I no longer need it."),
          *_read("find_user_id_by_email", {"email": "a@b.c"}), *_read("get_order_details", {"order_id": "#W1"}),
          ConversationEvent(kind="agent_message", content="Cancel #W1 for reason 'no longer needed'?"),
          ConversationEvent(kind="user_message", content="Yes."),
          ConversationEvent(kind="agent_message", content="Just to be sure: cancel #W1 because it is no longer needed?"),
          ConversationEvent(kind="user_message", content="Yes, it is no longer needed."))
    return conv


def test_llm_verifier_judges_dialogue_nodes_with_a_stable_prefix_and_records_usage():
    sat = ["cancel.reason", "cancel.confirm.state_action", "cancel.confirm.user_yes"]
    with ScriptedLLMServer([_answer([{"type": "cancel", "status": "open", "satisfied": []}]),
                            _answer([{"type": "cancel", "status": "open", "satisfied": sat}])]) as server:
        session = _llm_session(server)
        conv = _llm_conversation(session)
        details = session.turn_details()
        requests = list(server.requests)
    # the tracker opened the request and judged the reads: no call at the first user turn; then
    # one call per user turn while a dialogue node is pending, covering all requests
    assert len(requests) == 2
    assert requests[0]["messages"][0] == requests[1]["messages"][0]  # byte-stable prefix
    assert "<workflow>" in requests[0]["messages"][0]["content"] and "Yes." in requests[1]["messages"][1]["content"]
    assert details["usage"].llm_calls == 1 and details["usage"].prompt_tokens == 900
    assert session.before_write(CANCEL, conv).verdict == Verdict.ALLOW


@pytest.mark.parametrize(("policy", "verdict"), [("closed", Verdict.VERIFY), ("open", Verdict.ALLOW)])
def test_verifier_failure_is_a_guard_error_event_never_a_crash(policy, verdict):
    with ScriptedLLMServer([{"content": "not json"}]) as server:
        session = _llm_session(server, failure_policy=policy)
        conv = _llm_conversation(session)
        details = session.turn_details()
    assert details["rule_id"] == "guard.error.verifier" and "unparseable" in details["reason"]
    assert session.before_write(CANCEL, conv).verdict == verdict


def test_an_unmet_yes_node_says_why_the_dialogue_judge_found_no_yes():
    session, conv = _session(), Conversation()
    # the user gives an allowed reason, so the one unmet node is the yes
    _feed(session, conv, ConversationEvent(kind="user_message", content="Please cancel my order #W1, it is no longer needed."))
    _feed(session, conv, *_read("find_user_id_by_email", {"email": "a@b.c"}))
    _feed(session, conv, *_read("get_order_details", {"order_id": "#W1"}))
    _feed(session, conv, ConversationEvent(kind="agent_message", content=texts.confirm_request(CANCEL.name, CANCEL.arguments)),
          ConversationEvent(kind="user_message", content="Hmm, let me think about it first."))
    held = session.before_write(CANCEL, conv)
    assert held.evidence["unmet"] == "cancel.confirm.user_yes"
    assert "dialogue judge: reply_not_yes: the reply reads as" in held.reason
