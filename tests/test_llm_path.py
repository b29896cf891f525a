"""The real-LLM path end to end: tau2's LLMAgent and UserSimulator through litellm,
against a scripted OpenAI-compatible server on 127.0.0.1 that the test starts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import tauguard
from tauguard.runs.store import load_run
from tauguard.testing.llm_server import ScriptedLLMServer


def _responder(body: dict) -> dict:
    msgs = body["messages"]
    if body.get("tools"):  # the agent (tau2's LLMAgent sends its tools)
        if msgs[-1]["role"] == "tool":
            return {"content": "I found your profile. Is there anything else?", "usage": {"prompt_tokens": 120, "completion_tokens": 9}}
        return {
            "tool_calls": [{"name": "get_user_details", "arguments": {"user_id": "emma_kim_9957"}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 12},
        }
    # the user simulator: roles are flipped, so the agent's turns arrive as "user"
    turns = sum(1 for m in msgs if m["role"] == "user")
    if turns <= 1:
        return {"content": "Hi, I am Emma Kim, user id emma_kim_9957.", "usage": {"prompt_tokens": 50, "completion_tokens": 11}}
    return {"content": "###STOP###", "usage": {"prompt_tokens": 60, "completion_tokens": 2}}


@pytest.mark.slow
def test_llm_agent_and_user_through_loopback_server(tmp_path: Path):
    with ScriptedLLMServer(_responder) as server:
        args = json.dumps({"agent": {"api_base": server.api_base}, "user": {"api_base": server.api_base}})
        proc = tauguard(
            "run", "--domain", "airline", "--task-ids", "0", "-k", "1", "--workers", "1",
            "--agent-llm", "openai/scripted-agent", "--user-llm", "openai/scripted-user", "--llm-args", args,
            "--out", str(tmp_path), "--name", "llm",
            env={"OPENAI_API_KEY": "sk-test-not-a-real-key"},
        )
        requests = list(server.requests)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert any(r.get("tools") for r in requests) and any(not r.get("tools") for r in requests)
    run = load_run(tmp_path / "llm")
    assert run.manifest.simulated is False
    rec = run.records[0]
    assert rec.error is None and rec.simulated is False
    calls = [tc["name"] for m in rec.simulation["messages"] for tc in (m.get("tool_calls") or [])]
    assert calls == ["get_user_details"]
    assert rec.usage["agent"].prompt_tokens == 220 and rec.usage["agent"].completion_tokens == 21
    assert rec.usage["user"].prompt_tokens == 110
    # the key came from the environment and is written nowhere
    for f in (tmp_path / "llm").iterdir():
        assert "sk-test-not-a-real-key" not in f.read_text()
    assert "SIMULATION" not in tauguard("show", str(tmp_path / "llm")).stdout


def test_guard_context_reaches_the_llm_prompt(tmp_path: Path):
    """A strategy's render_context is placed in the agent's system prompt before each call."""
    from tauguard.agents.llm import GUARD_CONTEXT_HEADER, GuardContextLLMAgent
    from tauguard.tau2_adapter import compat as t2

    with ScriptedLLMServer([{"content": "Hello"}]) as server:
        env = t2.make_environment("retail")
        agent = GuardContextLLMAgent(tools=env.get_tools(), domain_policy="POLICY", llm="openai/x",
                                     llm_args={"api_base": server.api_base, "api_key": "sk-test"})
        state = agent.get_init_state()
        agent.set_guard_context("LEDGER: order #W1 status=pending")
        agent.generate_next_message(t2.UserMessage(role="user", content="hi"), state)
        agent.set_guard_context("LEDGER: order #W1 status=cancelled")
        agent.generate_next_message(t2.UserMessage(role="user", content="and now?"), state)
        first, second = server.requests
    systems = [[m["content"] for m in r["messages"] if m["role"] == "system"] for r in (first, second)]
    assert any("status=pending" in s for s in systems[0])
    assert any("status=cancelled" in s for s in systems[1]) and not any("status=pending" in s for s in systems[1])
    assert all(sum(GUARD_CONTEXT_HEADER in s for s in sys_) == 1 for sys_ in systems)


def test_ledger_is_rendered_into_the_llm_agent_prompt_through_the_wrapper():
    """The guard wrapper gives the ledger's render_context to tau2's LLMAgent before each call."""
    from tauguard.tau2_adapter import compat as t2
    from tauguard.agents.guarded import GuardedAgent
    from tauguard.agents.llm import GUARD_CONTEXT_HEADER, GuardContextLLMAgent
    from tauguard.strategy_api.registry import create_strategy
    from tauguard.tau2_adapter.replay import session_context

    script = [
        {"tool_calls": [{"name": "get_reservation_details", "arguments": {"reservation_id": "SI5UKW"}}]},
        {"content": "I see your reservation."},
    ]
    with ScriptedLLMServer(script) as server:
        env = t2.make_environment("airline")
        inner = GuardContextLLMAgent(tools=env.get_tools(), domain_policy="POLICY", llm="openai/x",
                                     llm_args={"api_base": server.api_base, "api_key": "sk-test"})
        session = create_strategy("ledger").new_session(session_context("airline", "28"))
        agent = GuardedAgent(inner, session, t2.tool_types("airline")[0])
        state = agent.get_init_state([])
        out, state = agent.generate_next_message(t2.UserMessage(role="user", content="Cancel SI5UKW please."), state)
        result = env.get_response(out.tool_calls[0])
        agent.generate_next_message(result, state)
        first, second = server.requests
    def guard_context(request: dict) -> str:
        return "".join(m["content"] for m in request["messages"] if m["role"] == "system" and GUARD_CONTEXT_HEADER in m["content"])
    assert "SI5UKW" not in guard_context(first)  # nothing read yet
    assert "SI5UKW" in guard_context(second) and "basic_economy" in guard_context(second)
