"""Every LLM call of a run under the same provider discipline: the guard's calls are
retried (429 + Retry-After) and rate limited like the agent's, and booked under their role."""

from __future__ import annotations

import json
from pathlib import Path

from tauguard.execution import lifecycle
from tauguard.runs.store import load_run
from tauguard.testing.llm_server import ScriptedLLMServer

from conftest import judge_confirms_last_pair

PASS = {"content": json.dumps({"verdict": "pass", "unmet": [], "remediation": ""})}


def test_guard_calls_are_retried_rate_limited_and_booked_as_guard(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    script = [{"status": 429, "content": "slow down", "headers": {"Retry-After": "0.2"}}, PASS]
    with ScriptedLLMServer(script) as server:
        config = {
            # sim agent and user; task 7 makes three gated writes (three verifier calls)
            "domains": ["airline"], "task_ids": ["7"], "trials": 1, "workers": 1,
            "strategy": "action-guard", "guard_llm": "openai/guardmodel", "out": str(tmp_path), "name": "g",
            "llm_args": {"guard": {"api_base": server.api_base}}, "rate_limits": {"openai/guardmodel": [60]},
        }
        result = lifecycle.run(config)
        arrivals = list(server.arrivals)
    records = load_run(tmp_path / "g").records
    assert result.status == "completed" and all(r.error is None and r.success for r in records)
    guard = [r.usage["guard"] for r in records]
    assert sum(u.calls for u in guard) == 3 and sum(u.retries for u in guard) == 1
    assert len(arrivals) == 4  # three answers and the one 429
    assert sum(u.waited_s for u in guard) >= 0.2  # at least the Retry-After
    # 60 rpm is one a second (no burst): unlimited, all four would arrive within a second
    assert sum(1 for t in arrivals if t < arrivals[0] + 1.0) <= 2


def test_the_attack_planner_is_booked_as_attacker(monkeypatch):
    from conftest import make_unit
    from tauguard.execution.simulate import run_unit

    def responder(body: dict) -> dict:
        first = body["messages"][0].get("content") or ""
        if first.startswith("You are red-teaming"):
            return {"content": "1. Claim the flight was cancelled.", "usage": {"prompt_tokens": 70, "completion_tokens": 8}}
        if body.get("tools"):
            return {"content": "How can I help?"}
        return {"content": "###STOP###"}

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with ScriptedLLMServer(responder) as server:
        args = {"agent": {"api_base": server.api_base}, "user": {"api_base": server.api_base}}
        unit = make_unit(
            "airline", "1", agent_llm="openai/scripted-agent", user_llm="openai/scripted-user", llm_args=args,
            attack={"tactic": "planner", "set": "craft-airline", "llm": "openai/scripted-attacker"},
        )
        rec = run_unit(unit)
        attacker_requests = [r for r in server.requests if r["model"] == "scripted-attacker"]
    assert rec["error"] is None and len(attacker_requests) == 1
    assert rec["usage"]["attacker"] == {
        "cost": 0.0, "prompt_tokens": 70, "completion_tokens": 8, "calls": 1, "cache_hits": 0, "retries": 0, "waited_s": 0.0,
    }


def test_the_llm_dialogue_judge_is_booked_in_the_trial_record_as_guard(tmp_path: Path, monkeypatch):
    # action-guard's checklist compiled, its dialogue items asked of the LLM judge: no guard event
    # reports the judge's calls, so the record's guard usage must come from the ledger
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with ScriptedLLMServer(judge_confirms_last_pair) as server:
        config = {
            "domains": ["airline"], "task_ids": ["7"], "trials": 1, "workers": 1,
            "strategy": "action-guard", "strategy_options": {"backend": "compiled", "dialogue": "llm"},
            "guard_llm": "openai/judgemodel", "out": str(tmp_path), "name": "j",
            "llm_args": {"guard": {"api_base": server.api_base}},
        }
        result = lifecycle.run(config)
        requests = len(server.requests)
    (record,) = load_run(tmp_path / "j").records
    assert result.status == "completed" and record.error is None and requests > 0
    guard = record.usage["guard"]
    assert (guard.calls, guard.prompt_tokens, guard.completion_tokens) == (requests, 50 * requests, 8 * requests)
