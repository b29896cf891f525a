"""--concurrency: real-LLM simulations in flight as threads, independent of --workers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tauguard.execution import lifecycle
from tauguard.execution.concurrency import describe, threaded
from tauguard.testing.llm_server import ScriptedLLMServer


def _responder(body: dict) -> dict:
    msgs = body["messages"]
    if body.get("tools"):
        if msgs[-1]["role"] == "tool":
            return {"content": "Done. Anything else?", "delay_s": 0.2}
        return {"tool_calls": [{"name": "get_user_details", "arguments": {"user_id": "emma_kim_9957"}}], "delay_s": 0.2}
    if sum(1 for m in msgs if m["role"] == "user") <= 1:
        return {"content": "Hi, I am Emma Kim, user id emma_kim_9957.", "delay_s": 0.2}
    return {"content": "###STOP###", "delay_s": 0.2}


def test_trials_run_concurrently_in_one_process(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with ScriptedLLMServer(_responder) as server:
        config = {
            "domains": ["airline"], "task_ids": ["0", "1"], "trials": 2, "workers": 1, "concurrency": 4,
            "agent_llm": "openai/a", "user_llm": "openai/u", "out": str(tmp_path), "name": "c4",
            "llm_args": {"agent": {"api_base": server.api_base}, "user": {"api_base": server.api_base}},
        }
        plan = lifecycle.plan(config)
        assert "4 simulations in flight: threads in 1 process(es)" in "\n".join(plan.describe())
        seen = []
        result = lifecycle.execute(plan, on_record=lambda rec, progress: seen.append(rec.key))
        requests = list(server.requests)
    assert result.status == "completed" and result.progress.errors == 0
    assert sorted(seen) == [("airline", t, k) for t in ("0", "1") for k in (0, 1)]
    # all four (task, trial) units opened their conversation before any made a second call
    assert all(not r.get("tools") for r in requests[:4])
    assert len(requests) == 16


def test_parallelism_defaults_per_mode():
    assert not threaded("sim", "sim", None) and threaded("sim", "openai/x", None) and threaded("sim", "sim", "openai/g")
    assert describe(2, None, False).startswith("2 simulations in flight: 2 worker processes")
    assert describe(2, 32, True, "ray").startswith("32 simulations in flight: one ray task each")
    assert describe(4, None, False, "dask").startswith("at most 8 jobs")
    assert describe(2, None, True).startswith("16 simulations in flight: threads in 2 process(es)")


def test_max_cost_stops_new_simulations_and_resume_with_a_higher_cap_continues(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")

    def priced(body: dict) -> dict:
        return {k: v for k, v in _responder(body).items() if k != "delay_s"} | {"usage": {"prompt_tokens": 1000, "completion_tokens": 100}}

    with ScriptedLLMServer(priced) as server:
        args = {"api_base": server.api_base}
        config = {
            "domains": ["airline"], "task_ids": ["0"], "trials": 3, "workers": 1, "concurrency": 1,
            "agent_llm": "openai/gpt-4o-mini", "user_llm": "openai/gpt-4o-mini", "out": str(tmp_path), "name": "budget",
            "llm_args": {"agent": args, "user": args}, "max_cost": 1e-6,
        }
        first = lifecycle.run(config)
        assert first.status == "interrupted" and first.progress.done == 1
        assert "max cost $0.00 reached" in first.manifest.stop_reason
        second = lifecycle.resume(tmp_path / "budget", max_cost=100.0)
    assert second.status == "completed" and second.progress.done == 3 and second.manifest.stop_reason is None


@pytest.mark.slow
def test_real_llm_units_stream_from_a_pool_of_fresh_processes(tmp_path: Path, monkeypatch):
    """`--backend multiprocessing` (the pool engine, as loky): each worker runs its share of the
    tasks on threads and streams every record back as it finishes; none lost or repeated."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with ScriptedLLMServer(_responder) as server:
        config = {
            "domains": ["airline"], "task_ids": ["0", "1", "2"], "trials": 2, "workers": 2, "concurrency": 4,
            "backend": "multiprocessing", "agent_llm": "openai/a", "user_llm": "openai/u", "out": str(tmp_path),
            "name": "pool", "llm_args": {"agent": {"api_base": server.api_base}, "user": {"api_base": server.api_base}},
        }
        seen: list[tuple[str, str, int]] = []
        result = lifecycle.run(config, on_record=lambda rec, progress: seen.append(rec.key))
        requests = list(server.requests)
    assert result.status == "completed" and result.progress.errors == 0
    assert sorted(seen) == [("airline", t, k) for t in ("0", "1", "2") for k in (0, 1)]
    assert len(requests) == 24  # 4 completions per simulation
