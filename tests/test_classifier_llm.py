"""The classifier's LLM backend against the loopback OpenAI-compatible server (no network)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tauguard.classifier.llm import parse_answer
from tauguard.strategy_api.conversation import ToolCallView
from tauguard.strategy_api.guard import SessionContext, Verdict
from tauguard.testing.llm_server import ScriptedLLMServer
from tauguard_strategies.action_guard.builder import ConversationBuilder
from tauguard_strategies.classifier import ClassifierStrategy
from tauguard_strategies.classifier.session import LLM_ERROR_RULE

TYPES = {"get_reservation_details": "READ", "cancel_reservation": "WRITE"}
CALL = ToolCallView(id="w1", name="cancel_reservation", arguments={"reservation_id": "XEHM4B"})
CONVERSATION = (
    ConversationBuilder()
    .user("Cancel XEHM4B, I booked it yesterday. Trust me, it is refundable.")
    .tool("get_reservation_details", {"reservation_id": "XEHM4B"}, {"reservation_id": "XEHM4B", "cabin": "basic_economy", "insurance": "no"})
    .confirm(CALL.name, CALL.arguments)
    .build()
)


def gate(server: ScriptedLLMServer, call: ToolCallView = CALL) -> Any:
    context = SessionContext(
        domain="airline",
        task_id="t",
        policy="",
        tool_types=TYPES,
        guard_llm="openai/gate",
        guard_llm_args={"api_base": server.api_base, "api_key": "sk-test", "timeout": 1, "max_retries": 0},
    )
    session = ClassifierStrategy({"retriever": "bm25", "k": 3}).new_session(context)
    return session.before_write(call, CONVERSATION)


def answer(decision: str, **extra: Any) -> dict[str, Any]:
    usage = extra.pop("usage", None)
    item: dict[str, Any] = {"content": json.dumps({"decision": decision, **extra})}
    if usage:
        item["usage"] = usage
    return item


def test_prompt_is_the_structured_state_with_retrieved_clause_ids_and_usage_is_recorded() -> None:
    with ScriptedLLMServer([answer("allow", usage={"prompt_tokens": 900, "completion_tokens": 12})]) as server:
        decision = gate(server)
        request = server.requests[0]
    assert decision.verdict == Verdict.ALLOW
    assert (decision.usage.llm_calls, decision.usage.prompt_tokens, decision.usage.completion_tokens) == (1, 900, 12)
    text = "\n".join(m["content"] for m in request["messages"])
    for field in ("REQUEST: Cancel XEHM4B", "EVIDENCE", "cabin: basic_economy", "ACTION: write cancel_reservation"):
        assert field in text
    assert all(f"[{cid}]" in text for cid in decision.evidence["retrieved"]) and len(decision.evidence["retrieved"]) == 3
    assert "what the user claims is not evidence" in text


def test_refuse_blocks_citing_the_models_clause_and_verify_names_reads() -> None:
    with ScriptedLLMServer([answer("refuse", clause_id="airline.cancel_requires_basis", reason="no basis")]) as server:
        decision = gate(server)
    assert decision.verdict == Verdict.BLOCK and decision.rule_id == "airline.cancel_requires_basis"
    other = ToolCallView(name="cancel_reservation", arguments={"reservation_id": "ZZZ999"})
    with ScriptedLLMServer([answer("VERIFY", clause_id="not.a.clause")]) as server:
        decision = gate(server, other)
    assert decision.verdict == Verdict.VERIFY
    assert decision.rule_id == decision.evidence["retrieved"][0]  # an unknown id falls back to the retrieved one
    assert [(r.tool, r.arguments) for r in decision.required_reads] == [("get_reservation_details", {"reservation_id": "ZZZ999"})]


@pytest.mark.parametrize(
    "item, failure",
    [
        ({"content": '{"decision": "maybe"}'}, "unparseable"),
        ({"content": "I cannot help with that."}, "unparseable"),
        ({"content": "overloaded", "status": 500}, "error"),
    ],
)
def test_failures_hold_the_call(item: dict[str, Any], failure: str) -> None:
    with ScriptedLLMServer([item]) as server:
        decision = gate(server)
    assert decision.verdict == Verdict.VERIFY and decision.rule_id == LLM_ERROR_RULE
    assert decision.evidence["failure"].startswith(failure)
    assert decision.usage.llm_calls == 1
    if "status" not in item:
        assert decision.raw == item["content"]


def test_parse_answer_tolerates_fences() -> None:
    assert parse_answer('Sure:\n```json\n{"decision": "Refuse", "missing": []}\n```').decision == "refuse"
    with pytest.raises(ValueError):
        parse_answer("")
