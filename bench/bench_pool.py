"""litellm's connection pool with many simulation threads in one process: shared vs sharded.

One process runs ``--threads`` threads, each making ``--calls`` completions of the agent's
request (airline system prompt stand-in, the 14 airline tool schemas) through
``litellm.completion`` against the loopback server (own process, ``--latency`` s per
completion), first warmed by one completion. ``shared`` is litellm's default (one httpx pool
per process); ``sharded`` calls :func:`tauguard.provider.shard_connection_pool` first, as a
run's worker does. Prints the CPU per completion of this process (the server's excluded) and
completions per second against the ideal ``threads / latency``; alternate the modes.
Usage: python bench/bench_pool.py [--threads 128] [--calls 8] [--latency 1.0] [--mode shared|sharded]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OPENAI_API_KEY", "sk-loopback-not-a-key")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_concurrency import _serve  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=128)
    parser.add_argument("--calls", type=int, default=8, help="completions per thread")
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--mode", choices=("shared", "sharded"), default="sharded")
    args = parser.parse_args()
    ports: multiprocessing.Queue[str] = multiprocessing.Queue()
    server = multiprocessing.Process(target=_serve, args=(args.latency, ports), daemon=True)
    server.start()
    api_base = ports.get(timeout=60)
    import litellm

    from tauguard.provider import shard_connection_pool
    from tauguard.tau2_adapter import compat as t2

    litellm.suppress_debug_info = True
    tools = [t.openai_schema for t in t2.agent_tools("airline")]
    messages = t2.llm_request_messages()([
        t2.SystemMessage(role="system", content="You are an airline agent. " * 300),
        t2.UserMessage(role="user", content="Hi, I am Emma Kim, user id emma_kim_9957."),
    ])
    request = dict(model="openai/loop-agent", messages=messages, tools=tools, tool_choice="auto", api_base=api_base,
                   timeout=30, temperature=0.0, seed=1, num_retries=0, max_retries=0)
    if args.mode == "sharded":
        shard_connection_pool(args.threads)
    litellm.completion(**request)
    start = threading.Barrier(args.threads + 1)

    def work() -> None:
        # As a simulation thread: an idle event loop for litellm's post-call hook (execution/job.py).
        asyncio.set_event_loop(asyncio.new_event_loop())
        start.wait()
        for _ in range(args.calls):
            litellm.completion(**request)

    threads = [threading.Thread(target=work) for _ in range(args.threads)]
    for thread in threads:
        thread.start()
    start.wait()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for thread in threads:
        thread.join()
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    n = args.threads * args.calls
    print(json.dumps({
        "mode": args.mode, "threads": args.threads, "completions": n, "cpu_ms_per_completion": round(1000 * cpu / n, 2),
        "completions_per_s": round(n / wall, 1), "ideal": round(args.threads / args.latency, 1),
        "load": round(os.getloadavg()[0], 2),
    }))
    server.terminate()


if __name__ == "__main__":
    main()
