"""Every LLM call of a run under the same provider discipline: the guard's calls are
retried (429 + Retry-After) and rate limited like the agent's, and booked under their role."""

from __future__ import annotations

import json
from pathlib import Path

from tauguard.execution import lifecycle
from tauguard.store import load_run
from tauguard.testing.llm_server import ScriptedLLMServer

PASS = {"content": json.dumps({"verdict": "pass", "unmet": [], "remediation": ""})}


def test_guard_calls_are_retried_rate_limited_and_booked_as_guard(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    script = [{"status": 429, "content": "slow down", "headers": {"Retry-After": "0.2"}}, PASS]
    with ScriptedLLMServer(script) as server:
        config = {
            # sim agent and user; tasks 7, 8, 9 make 3 + 1 + 1 gated writes (five verifier calls)
            "domains": ["airline"], "task_ids": ["7", "8", "9"], "trials": 1, "workers": 1, "concurrency": 3,
            "strategy": "action-guard", "guard_llm": "openai/guardmodel", "out": str(tmp_path), "name": "g",
            "llm_args": {"guard": {"api_base": server.api_base}}, "rate_limits": {"openai/guardmodel": [60]},
        }
        result = lifecycle.run(config)
        arrivals = list(server.arrivals)
    records = load_run(tmp_path / "g").records
    assert result.status == "completed" and all(r.error is None and r.success for r in records)
    guard = [r.usage["guard"] for r in records]
    assert sum(u.calls for u in guard) == 5 and sum(u.retries for u in guard) == 1
    assert len(arrivals) == 6  # five answers and the one 429
    assert sum(u.waited_s for u in guard) >= 0.2  # at least the Retry-After
    # 60 rpm, one at a time: unlimited, all six would arrive within milliseconds
    assert sum(1 for t in arrivals if t < arrivals[0] + 2.0) <= 3
