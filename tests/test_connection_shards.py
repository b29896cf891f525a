"""litellm's connection pool split into shards when many simulation threads share a process
(:func:`tauguard.provider.shard_connection_pool`)."""

from __future__ import annotations

from pathlib import Path

import httpx
import litellm
import pytest

from tauguard import provider
from tauguard.execution import lifecycle
from tauguard.testing.llm_server import ScriptedLLMServer
from test_execution_concurrency import _responder  # the same scripted airline conversation


@pytest.fixture(autouse=True)
def _own_client_session(monkeypatch: pytest.MonkeyPatch) -> None:
    # The session is process-wide: each test starts without one and leaves none behind.
    monkeypatch.setattr(litellm, "client_session", None)
    monkeypatch.setattr(provider, "_sharded_session", None)
    monkeypatch.setattr(provider, "_sharded_shards", 0)


def test_many_threads_in_a_process_use_sharded_pools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with ScriptedLLMServer(_responder) as server:
        config = {
            "domains": ["airline"], "num_tasks": 8, "trials": 4, "workers": 1, "concurrency": 32,
            "agent_llm": "openai/a", "user_llm": "openai/u", "out": str(tmp_path), "name": "c32",
            "llm_args": {"agent": {"api_base": server.api_base}, "user": {"api_base": server.api_base}},
        }
        result = lifecycle.execute(lifecycle.plan(config))
        requests = len(server.requests)
    assert result.status == "completed" and result.progress.done == 32 and result.progress.errors == 0
    assert requests == 4 * 32
    session = litellm.client_session
    assert session is not None and session is provider._sharded_session and provider._sharded_shards == 2
    pools = session._transport.pools
    # Both shards carried requests, and no pool opened more connections than threads in flight.
    opened = [len(pool._pool.connections) for pool in pools]
    assert len(pools) == 2 and all(opened) and sum(opened) <= 32


def test_few_threads_or_a_callers_session_change_nothing() -> None:
    provider.shard_connection_pool(20)
    assert litellm.client_session is None  # within one pool's idle connections: litellm's default
    own = httpx.Client()
    litellm.client_session = own
    provider.shard_connection_pool(256)
    assert litellm.client_session is own
    own.close()


def test_a_wider_run_shards_finer_and_a_narrower_one_keeps_the_shards() -> None:
    provider.shard_connection_pool(64)
    first = litellm.client_session
    assert provider._sharded_shards == 4
    provider.shard_connection_pool(32)
    assert litellm.client_session is first
    provider.shard_connection_pool(128)
    assert litellm.client_session is not first and provider._sharded_shards == 8
