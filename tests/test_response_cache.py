"""--cache: a re-run answers every request from the cache (no request reaches the server),
records the same conversation at $0 with the hits marked, and no key is stored anywhere."""

from __future__ import annotations

from pathlib import Path

from tauguard.execution import lifecycle
from tauguard.provider import install, state
from tauguard.response_cache import request_key
from tauguard.llm_call import complete, usage_of
from tauguard.usage_ledger import start_unit
from tauguard.runs.store import load_run
from tauguard.testing.llm_server import ScriptedLLMServer

KEY = "sk-test-not-a-real-key"


def _responder(body: dict) -> dict:
    usage = {"usage": {"prompt_tokens": 1000, "completion_tokens": 100}}
    if body.get("tools"):  # the agent
        if body["messages"][-1]["role"] == "tool":
            return {"content": "I found your profile. Anything else?"} | usage
        return {"tool_calls": [{"name": "get_user_details", "arguments": {"user_id": "emma_kim_9957"}}]} | usage
    if sum(1 for m in body["messages"] if m["role"] == "user") <= 1:
        return {"content": "Hi, I am Emma Kim, user id emma_kim_9957."} | usage
    return {"content": "###STOP###"} | usage


def _turns(record) -> list:
    return [(m["role"], m.get("content"), m.get("tool_calls")) for m in record.simulation["messages"]]


def test_a_cached_rerun_makes_no_request_and_costs_nothing(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    cache = tmp_path / "llm-cache"
    with ScriptedLLMServer(_responder) as server:
        args = {"api_base": server.api_base}
        config = {
            "domains": ["airline"], "task_ids": ["0"], "trials": 2, "workers": 1, "concurrency": 2,
            "agent_llm": "openai/gpt-4o-mini", "user_llm": "openai/gpt-4o-mini", "out": str(tmp_path),
            "llm_args": {"agent": args, "user": args}, "cache": str(cache),
        }
        lifecycle.run(config | {"name": "first"})
        first_requests = len(server.requests)
        lifecycle.run(config | {"name": "second"})
        second_requests = len(server.requests) - first_requests
    first, second = load_run(tmp_path / "first"), load_run(tmp_path / "second")
    assert first_requests == 2 * 4 and second_requests == 0  # 4 calls a trial; trials differ by seed
    assert second.manifest.config["cache"] == str(cache)
    by_key = {r.key: r for r in first.records}
    for rec in second.records:
        before = by_key[rec.key]
        assert rec.error is None and rec.reward == before.reward and _turns(rec) == _turns(before)
        for role in ("agent", "user"):
            assert before.usage[role].cost > 0 and before.usage[role].cache_hits == 0
            llm_calls = before.usage[role].prompt_tokens // 1000  # the greeting message is no LLM call
            assert rec.usage[role].cost == 0 and rec.usage[role].cache_hits == llm_calls > 0
            assert rec.usage[role].prompt_tokens == before.usage[role].prompt_tokens
    for path in [*cache.rglob("*"), *(tmp_path / "second").iterdir()]:
        if path.is_file():
            assert KEY.encode() not in path.read_bytes() and b"Authorization" not in path.read_bytes()


def test_guard_calls_hit_the_cache_and_credentials_stay_out_of_the_key(tmp_path: Path):
    install(cache=str(tmp_path / "c"))
    try:
        ledger = start_unit()
        with ScriptedLLMServer([{"content": "ok"}]) as server:
            calls = [
                complete("guard", "openai/gpt-4o-mini", [{"role": "user", "content": "q"}], api_base=server.api_base, api_key=key)
                for key in (KEY, "sk-another-key-entirely")
            ]
            requests = len(server.requests)
        assert requests == 1 and usage_of(calls[0]).cost > 0 and usage_of(calls[1]).cost == 0
        assert ledger.roles["guard"].cache_hits == 1 and ledger.roles["guard"].calls == 2
        assert calls[1].choices[0].message.content == "ok"
        base = {"model": "m", "messages": [{"role": "user", "content": "q"}], "temperature": 0}
        assert request_key(base | {"api_key": KEY, "timeout": 3}) == request_key(base)
        assert request_key(base | {"seed": 1}) != request_key(base) != request_key(base | {"temperature": 1})
    finally:
        install(cache=None)
    assert state().cache is None


def _writer(directory: str, worker: int) -> None:
    from tauguard.response_cache import ResponseCache

    cache = ResponseCache(directory)
    for i in range(40):
        cache.put(f"k{i}", {"i": i, "by": worker})
        assert cache.get(f"k{(i * 7) % 40}") in (None, *({"i": (i * 7) % 40, "by": w} for w in range(3)))


def test_several_processes_write_one_cache_at_once(tmp_path: Path):
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    from tauguard.response_cache import ResponseCache

    cache = ResponseCache(tmp_path)
    assert len(cache) == 40 and all(cache.get(f"k{i}")["i"] == i for i in range(40))
