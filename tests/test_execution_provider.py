"""Provider discipline: retries with backoff honouring Retry-After, rate limits, giving up."""

from __future__ import annotations

import time

import pytest

from tauguard.provider import ProviderUnavailable, RateLimit, RetryPolicy, TokenBucket, install
from tauguard.testing.llm_server import ScriptedLLMServer


def _generate(server: ScriptedLLMServer, timeout: float = 5.0):
    from tauguard.tau2_adapter import compat as t2
    from tauguard.agents.llm_generate import generate

    return generate(
        "agent", "openai/flaky", [t2.UserMessage(role="user", content="hi")],
        api_base=server.api_base, api_key="sk-test-not-a-real-key", timeout=timeout,
    )


def test_429_with_retry_after_500_and_a_stall_are_retried():
    state = install(max_retries=4)
    state.policy = RetryPolicy(max_retries=4, base_s=0.05, cap_s=5.0)
    state.waited_s = 0.0
    script = [
        {"status": 429, "content": "slow down", "headers": {"Retry-After": "1"}},
        {"status": 500, "content": "boom"},
        {"content": "late", "delay_s": 3.0},  # the client times out after 1 s
        {"content": "hello"},
    ]
    with ScriptedLLMServer(script) as server:
        start = time.monotonic()
        message = _generate(server, timeout=1.0)
        elapsed = time.monotonic() - start
        requests = len(server.requests)
    assert message.content == "hello" and requests == 4
    assert elapsed >= 2.0 and state.waited_s >= 1.0  # Retry-After (1 s) honoured, plus the 1 s timeout


def test_after_the_last_retry_the_unit_gets_an_infrastructure_error():
    state = install(max_retries=2)
    state.policy = RetryPolicy(max_retries=2, base_s=0.01, cap_s=0.05)
    with ScriptedLLMServer([{"status": 503, "content": "down"}]) as server:
        with pytest.raises(ProviderUnavailable, match="gave up after 2 retries"):
            _generate(server)
        assert len(server.requests) == 3
    with ScriptedLLMServer([{"status": 400, "content": "bad request"}]) as server:
        with pytest.raises(Exception) as info:
            _generate(server)
        assert not isinstance(info.value, ProviderUnavailable) and len(server.requests) == 1  # never retried


def test_token_bucket_spaces_requests_at_the_rate():
    now = [0.0]
    bucket = TokenBucket(per_minute=120, clock=lambda: now[0])  # 2 per second, burst of 2
    waits = [bucket.reserve() for _ in range(6)]
    assert waits == pytest.approx([0.0, 0.0, 0.5, 1.0, 1.5, 2.0])
    now[0] = 10.0
    assert bucket.reserve() == 0.0
    assert RateLimit.parse("openai/gpt-4.1=500,30000") == ("openai/gpt-4.1", RateLimit(500, 30000))
    with pytest.raises(ValueError, match="MODEL=RPM"):
        RateLimit.parse("gpt-4.1=fast")
    delays = [RetryPolicy(base_s=1, cap_s=8).delay(a, None) for a in range(6)]
    assert all(0.5 * min(8, 2**a) <= d <= min(8, 2**a) for a, d in enumerate(delays))


def test_install_leaves_tau2_unpatched_and_the_agent_and_user_calls_are_booked_by_role():
    """Issue 27: no global patch of τ²'s completion; the agent's and the user's completions go
    through the discipline as their own roles (a retry is booked to the role that made it)."""
    import tau2.utils.llm_utils as llm_utils

    from tauguard.tau2_adapter import compat as t2
    from tauguard.agents.llm import GuardContextLLMAgent
    from tauguard.agents.llm_user import LLMUser
    from tauguard.usage_ledger import start_unit

    original = llm_utils.completion
    state = install(max_retries=2)
    state.policy = RetryPolicy(max_retries=2, base_s=0.01, cap_s=0.05)
    assert llm_utils.completion is original
    ledger = start_unit()
    script = [{"status": 500, "content": "boom"}, {"content": "hello from the agent"}, {"content": "###STOP###"}]
    with ScriptedLLMServer(script) as server:
        args = {"api_base": server.api_base, "api_key": "sk-test-not-a-real-key", "timeout": 5}
        agent = GuardContextLLMAgent(tools=t2.agent_tools("airline"), domain_policy="policy", llm="openai/a", llm_args=args)
        reply, _ = agent.generate_next_message(t2.UserMessage(role="user", content="hi"), agent.get_init_state())
        user = LLMUser(instructions="be brief", llm="openai/u", llm_args=args)
        said, _ = user.generate_next_message(reply, user.get_init_state())
        sent = server.requests
    assert reply.content == "hello from the agent" and reply.cost == 0.0 and reply.usage == {"completion_tokens": 5, "prompt_tokens": 10}
    assert isinstance(said, t2.UserMessage) and said.content == "###STOP###"
    assert ledger.roles["agent"].retries == 1 and "user" not in ledger.roles  # the user's call needed no retry
    assert len(sent) == 3 and sent[0]["tools"] and sent[0]["tool_choice"] == "auto" and "tools" not in sent[2]
    assert [m["role"] for m in sent[2]["messages"]] == ["system", "user"]  # the agent's reply, seen as the user's turn



def test_a_hung_provider_is_bounded_by_the_attempt_timeout_and_the_retry_deadline():
    from tauguard.provider import ProviderState

    seen: list[float | None] = []

    class Hung(Exception):
        status_code = 503

    def completion(**kwargs: object) -> object:
        seen.append(kwargs.get("timeout"))  # type: ignore[arg-type]
        raise Hung("no answer")

    state = ProviderState()
    state.policy = RetryPolicy(max_retries=100, base_s=0.2, cap_s=0.2, timeout_s=7.0, deadline_s=0.5)
    start = time.monotonic()
    with pytest.raises(ProviderUnavailable, match=r"no retry starts past 0.5 s"):
        state.call(completion, model="openai/x", messages=[])
    assert time.monotonic() - start < 5  # the deadline, not 100 retries
    assert 2 <= len(seen) <= 5 and set(seen) == {7.0}  # every attempt carries the default timeout
    seen.clear()
    with pytest.raises(ProviderUnavailable):
        state.call(completion, model="openai/x", messages=[], timeout=3)
    assert set(seen) == {3}  # a timeout in the call's arguments wins
    assert RetryPolicy().timeout_s * 1 + RetryPolicy().deadline_s <= 12 * 60  # the documented bound
