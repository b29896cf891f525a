"""Real-LLM concurrency: simulations in flight against a loopback LLM with a fixed latency.

A scripted OpenAI-compatible server (``tauguard/testing/llm_server.py``, 127.0.0.1, in its
own process so it does not share tauguard's GIL) answers every completion after a fixed
delay; each simulation makes 4 calls (agent: a tool call, then a reply; user: an opening,
then the stop token). For each C, ``tauguard.run`` runs 2 x C simulations (airline, react,
real-LLM path: tau2's LLMAgent and UserSimulator through litellm) with ``--concurrency C``
and prints achieved vs ideal throughput, C / (calls per simulation x latency), measured from
the moment the run folder is created (plan and imports excluded) to the last record, and
peak RSS (this process: the simulations are its threads). Usage:
python bench/bench_concurrency.py [--latency 1.0] [--levels 8,32,64,128] [--workers 1]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import sys
import tempfile
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OPENAI_API_KEY", "sk-loopback-not-a-key")
CALLS_PER_SIM = 4


def _responder(latency: float):  # noqa: ANN202 - a closure for the server
    def respond(body: dict) -> dict:
        msgs = body["messages"]
        if body.get("tools"):
            if msgs[-1]["role"] == "tool":
                return {"content": "Done. Anything else?", "delay_s": latency}
            return {"tool_calls": [{"name": "get_user_details", "arguments": {"user_id": "emma_kim_9957"}}], "delay_s": latency}
        turns = sum(1 for m in msgs if m["role"] == "user")
        if turns <= 1:
            return {"content": "Hi, I am Emma Kim, user id emma_kim_9957.", "delay_s": latency}
        return {"content": "###STOP###", "delay_s": latency}

    return respond


def _serve(latency: float, port_out: "multiprocessing.Queue[str]") -> None:
    from tauguard.testing.llm_server import ScriptedLLMServer

    with ScriptedLLMServer(_responder(latency)) as server:
        port_out.put(server.api_base)
        while True:
            time.sleep(3600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--levels", default="8,32,64,128")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--sims-per-level", type=float, default=2.0, help="simulations = this x C")
    args = parser.parse_args()
    ports: multiprocessing.Queue[str] = multiprocessing.Queue()
    server = multiprocessing.Process(target=_serve, args=(args.latency, ports), daemon=True)
    server.start()
    api_base = ports.get(timeout=60)
    from tauguard.execution import lifecycle

    results = []
    try:
        for level in [int(x) for x in args.levels.split(",")]:
            sims = int(args.sims_per_level * level)
            trials = max(1, -(-sims // 50))
            with tempfile.TemporaryDirectory() as out:
                stamps: list[float] = []
                config = {
                    "strategy": "react", "domains": ["airline"], "trials": trials, "agent_llm": "openai/loop-agent",
                    "user_llm": "openai/loop-user", "workers": args.workers, "concurrency": level, "out": out,
                    "name": f"c{level}", "num_tasks": -(-sims // trials),
                    "llm_args": {"agent": {"api_base": api_base}, "user": {"api_base": api_base}},
                }
                begun: list[float] = []
                run_plan = lifecycle.plan(config)
                cpu = time.process_time()
                result = lifecycle.execute(
                    run_plan, on_start=lambda done: begun.append(time.perf_counter()),
                    on_record=lambda rec, prog: stamps.append(time.perf_counter()),
                )
                wall = time.perf_counter() - begun[0]
                cpu = time.process_time() - cpu
                n = result.progress.done
                errors = result.progress.errors
            # From the run folder being ours (tau2 loaded, plan done) to the last record.
            achieved = n / wall
            ideal = level / (CALLS_PER_SIM * args.latency)
            rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            rss_children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            row = {
                "C": level, "sims": n, "errors": errors, "wall_s": round(wall, 1),
                "sims_per_s": round(achieved, 2), "ideal": round(ideal, 2),
                "achieved_over_ideal": round(achieved / ideal, 3),
                "cpu_s_parent": round(cpu, 1), "peak_rss_mb": round(rss_mb), "peak_rss_children_mb": round(rss_children),
            }
            results.append(row)
            print(json.dumps(row), flush=True)
    finally:
        server.terminate()
    json.dump(results, sys.stderr)


if __name__ == "__main__":
    main()
