"""The LLM verifier backend against a loopback OpenAI-compatible server (no network)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tauguard_strategies.action_guard import ActionGuardStrategy
from tauguard_strategies.action_guard.builder import ConversationBuilder
from tauguard_strategies.action_guard.schema import domain_checklists
from tauguard_strategies.action_guard.llm_verifier import parse_verdict
from tauguard.strategy_api.conversation import ToolCallView
from tauguard.strategy_api.guard import GuardDecision, SessionContext, Verdict
from tauguard.testing.llm_server import ScriptedLLMServer

POLICY = "# Retail agent policy\nAt the beginning of the conversation, you have to authenticate the user identity."
CALL = ToolCallView(id="w1", name="cancel_pending_order", arguments={"order_id": "#W5199551", "reason": "no longer needed"})
CONVERSATION = (
    ConversationBuilder()
    .user("Cancel my order #W5199551, I no longer need it. My order is pending, trust me.")
    .tool("find_user_id_by_email", {"email": "f@example.com"}, "fatima_johnson_7581")
    .confirm(CALL.name, CALL.arguments)
    .build()
)


def gate(server: ScriptedLLMServer, **options: Any) -> GuardDecision:
    context = SessionContext(
        domain="retail",
        task_id="t",
        policy=POLICY,
        tool_types={},
        guard_llm="openai/verifier",
        guard_llm_args={"api_base": server.api_base, "api_key": "sk-test", "timeout": 1, "max_retries": 0},
    )
    session = ActionGuardStrategy(options).new_session(context)
    return session.before_write(CALL, CONVERSATION)


def answer(verdict: str, unmet: list[dict[str, str]] | None = None, remediation: str = "", **extra: Any) -> dict[str, Any]:
    return {"content": json.dumps({"verdict": verdict, "unmet": unmet or [], "remediation": remediation}), **extra}


def test_pass_verdict_allows_and_records_usage() -> None:
    with ScriptedLLMServer([answer("pass", usage={"prompt_tokens": 1200, "completion_tokens": 40})]) as server:
        decision = gate(server)
    assert decision.verdict == Verdict.ALLOW
    assert decision.usage.llm_calls == 1
    assert (decision.usage.prompt_tokens, decision.usage.completion_tokens) == (1200, 40)
    assert decision.raw is not None and json.loads(decision.raw)["verdict"] == "pass"
    assert decision.evidence["backend"] == "llm"


def test_the_prompt_carries_policy_conversation_call_checklist_and_evidence_rule() -> None:
    with ScriptedLLMServer([answer("pass")]) as server:
        gate(server)
        request = server.requests[0]
    assert request["model"] == "verifier"
    text = "\n".join(m["content"] for m in request["messages"])
    assert POLICY in text
    assert "My order is pending, trust me." in text  # the whole conversation
    assert "cancel_pending_order" in text and "#W5199551" in text
    for item in domain_checklists("retail")["cancel_pending_order"].items:
        assert item.id in text
    assert "never evidence" in text  # user claims do not count


def test_block_verdict_reaches_the_agent_with_its_remediation() -> None:
    remediation = "Read order #W5199551 with get_order_details and check that it is pending before cancelling."
    unmet = [{"id": "retail.cancel_pending_order.status", "status": "missing", "evidence": "only the user's claim says pending"}]
    with ScriptedLLMServer([answer("block", unmet, remediation)]) as server:
        decision = gate(server)
    assert decision.verdict == Verdict.VERIFY  # a missing T item: read first
    assert decision.rule_id == "retail.cancel_pending_order.status"
    assert remediation in decision.as_tool_error()
    assert "only the user's claim says pending" in decision.reason


def test_violated_item_maps_to_the_items_declared_verdict() -> None:
    unmet = [
        {"id": "retail.cancel_pending_order.confirmation", "status": "missing", "evidence": "no yes"},
        {"id": "retail.cancel_pending_order.owner", "status": "VIOLATED", "evidence": "order of another user"},
    ]
    with ScriptedLLMServer([answer("block", unmet, "Deny the request.")]) as server:
        decision = gate(server)
    assert decision.verdict == Verdict.BLOCK
    assert decision.rule_id == "retail.cancel_pending_order.owner"


def test_malformed_answer_fails_closed_and_keeps_the_raw_output() -> None:
    raw = '{"verdict": "pass", "unmet": [,]}'
    with ScriptedLLMServer([{"content": raw}]) as server:
        decision = gate(server)
    assert decision.verdict == Verdict.VERIFY
    assert decision.rule_id == "guard.error.action_guard_verifier"
    assert decision.raw == raw
    assert "unparseable" in decision.reason
    assert decision.usage.llm_calls == 1


def test_refusal_fails_open_when_configured() -> None:
    refusal = "I'm sorry, but I can't help with that."
    with ScriptedLLMServer([{"content": refusal}]) as server:
        decision = gate(server, failure_policy="open")
    assert decision.verdict == Verdict.ALLOW
    assert decision.raw == refusal
    assert decision.evidence["failure"].startswith("unparseable")


def test_timeout_fails_closed() -> None:
    with ScriptedLLMServer([answer("pass", delay_s=3.0)]) as server:
        decision = gate(server)
    assert decision.verdict == Verdict.VERIFY
    assert decision.rule_id == "guard.error.action_guard_verifier"
    assert decision.evidence["failure"].startswith("timeout")
    assert decision.usage.llm_calls == 1


def test_server_error_fails_closed() -> None:
    with ScriptedLLMServer([{"content": "overloaded", "status": 500}]) as server:
        decision = gate(server)
    assert decision.verdict == Verdict.VERIFY and decision.rule_id == "guard.error.action_guard_verifier"


@pytest.mark.parametrize(
    "text",
    [
        'Here is my verdict:\n```json\n{"verdict": "PASS", "unmet": []}\n```',
        '{"verdict": "block", "unmet": [{"id": "x", "status": "missing"}], "remediation": "r"}',
    ],
)
def test_parse_tolerates_fences_and_case(text: str) -> None:
    assert parse_verdict(text).verdict in ("pass", "block")


@pytest.mark.parametrize("text", ["", "no json here", '{"verdict": "maybe"}', '{"unmet": []}'])
def test_parse_rejects_what_is_not_a_verdict(text: str) -> None:
    with pytest.raises(ValueError):
        parse_verdict(text)
