"""`tauguard.llm_call.structured`, the one structured-LLM call of every LLM guard backend,
against the loopback OpenAI-compatible server (no network)."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from tauguard import llm_call, usage_ledger
from tauguard.testing.llm_server import ScriptedLLMServer

KEY = "sk-test-structured-not-a-real-key"


class Answer(BaseModel):
    decision: Literal["allow", "refuse"]


def ask(server: ScriptedLLMServer, **kwargs: Any) -> llm_call.StructuredResult[Answer]:
    args = {"api_base": server.api_base, "api_key": KEY, "max_retries": 0, **kwargs.pop("llm_args", {})}
    return llm_call.structured("openai/judge", [{"role": "user", "content": "decide"}], Answer, llm_args=args, **kwargs)


def test_an_answer_is_validated_and_its_tokens_are_in_the_result_and_the_ledger() -> None:
    reply = {"content": 'Sure: {"decision": "refuse"}', "usage": {"prompt_tokens": 321, "completion_tokens": 7}}
    with ScriptedLLMServer([reply]) as server, usage_ledger.metered() as ledger:
        result = ask(server)
    assert result.answer == Answer(decision="refuse") and result.failure is None
    assert result.raw == reply["content"]
    assert (result.usage.llm_calls, result.usage.prompt_tokens, result.usage.completion_tokens) == (1, 321, 7)
    guard = ledger.roles["guard"]
    assert (guard.calls, guard.prompt_tokens, guard.completion_tokens) == (1, 321, 7)


def test_an_answer_of_the_wrong_shape_is_an_unparseable_failure_keeping_the_raw_text() -> None:
    with ScriptedLLMServer([{"content": '{"decision": "maybe"}'}]) as server:
        result = ask(server, what="verdict")
    assert result.answer is None and result.failure_kind == "unparseable"
    assert result.failure is not None and result.failure.startswith("unparseable verdict: malformed verdict")
    assert result.raw == '{"decision": "maybe"}' and result.usage.llm_calls == 1


def test_a_timeout_is_a_transport_failure_counted_as_one_call() -> None:
    with ScriptedLLMServer([{"content": '{"decision": "allow"}', "delay_s": 3.0}]) as server, usage_ledger.metered() as ledger:
        result = ask(server, llm_args={"timeout": 1})
    assert result.answer is None and result.failure_kind == "transport" and result.raw is None
    assert result.failure is not None and result.failure.startswith("timeout: ")
    assert result.usage.llm_calls == 1 and result.usage.prompt_tokens == 0
    assert ledger.roles["guard"].calls == 1


def test_a_provider_error_repeating_the_key_never_carries_it_into_the_result(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with ScriptedLLMServer([{"status": 401, "echo_auth": True}]) as server:
        result = ask(server)
        echoed = {k.lower(): v for k, v in server.request_headers[0].items()}.get("authorization", "")
    assert KEY in echoed  # the key did go to the server, as a provider needs it
    assert result.failure_kind == "transport" and result.failure is not None and "invalid credentials" in result.failure
    assert KEY not in json.dumps(result.model_dump())


def test_metered_books_apart_from_the_enclosing_ledger() -> None:
    outer = usage_ledger.start_unit()
    with ScriptedLLMServer([{"content": '{"decision": "allow"}'}]) as server:
        with usage_ledger.metered() as inner:
            ask(server, role="attacker")
        assert usage_ledger.current() is outer
    assert inner.roles["attacker"].calls == 1 and "attacker" not in outer.roles
