"""The loopback LLM server itself: keep-alive latency and lost completions at C concurrent clients.

``tauguard/testing/llm_server.py`` stands in for a provider in the tests and in
``bench_concurrency.py``, so it must add no latency of its own and lose no request. This bench
runs it in its own process (as ``bench_concurrency.py`` does), then C client threads, each with
its own keep-alive ``httpx`` connection (the client litellm's OpenAI provider uses), send
``--requests`` completions each. It prints, for C = 1 and the given C: the median and 99th
percentile of the time a request takes beyond the server's scripted delay (a Nagle / delayed-ACK
stall shows as ~40 ms), and how many requests got no answer within ``--timeout`` (lost).
Usage: ``python bench/bench_llm_server.py [--clients 256] [--requests 16] [--delay 0.05]``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import threading
import time
from typing import Any

import httpx


def _serve(delay: float, out: Any) -> None:
    from tauguard.testing.llm_server import ScriptedLLMServer

    with ScriptedLLMServer(lambda body: {"content": "ok", "delay_s": delay}) as server:
        out.put(server.api_base)
        threading.Event().wait()


def _client(api_base: str, n: int, timeout: float, extra: list[float], lost: list[int]) -> None:
    body = {"model": "loopback", "messages": [{"role": "user", "content": "hi"}]}
    with httpx.Client(timeout=timeout, limits=httpx.Limits(max_connections=1, max_keepalive_connections=1)) as client:
        for _ in range(n):
            start = time.perf_counter()
            try:
                client.post(f"{api_base}/chat/completions", json=body).raise_for_status()
            except httpx.HTTPError:
                lost.append(1)
                continue
            extra.append(time.perf_counter() - start)


def level(api_base: str, clients: int, n: int, timeout: float, delay: float) -> str:
    """Run ``clients`` threads of ``n`` requests; one line of results."""
    extra: list[float] = []
    lost: list[int] = []
    threads = [threading.Thread(target=_client, args=(api_base, n, timeout, extra, lost)) for _ in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    over = sorted(x - delay for x in extra)
    p99 = over[int(0.99 * (len(over) - 1))] if over else float("nan")
    return (f"C={clients:<4} requests {clients * n:>5}  answered {len(extra):>5}  lost {len(lost)}  "
            f"beyond the delay: median {1000 * statistics.median(over):.1f} ms, p99 {1000 * p99:.1f} ms  "
            f"wall {wall:.1f} s  load {os.getloadavg()[0]:.2f}")


def main() -> None:
    """Start the server in its own process and run the levels."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=256)
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args()
    ports: Any = multiprocessing.Queue()
    server = multiprocessing.Process(target=_serve, args=(args.delay, ports), daemon=True)
    server.start()
    try:
        api_base = ports.get(timeout=60)
        print(level(api_base, 1, 50, args.timeout, args.delay))
        print(level(api_base, args.clients, args.requests, args.timeout, args.delay))
    finally:
        server.terminate()


if __name__ == "__main__":
    main()
