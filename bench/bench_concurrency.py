"""Real-LLM concurrency: simulations in flight against a loopback LLM with a fixed latency.

A scripted OpenAI-compatible server (``tauguard/testing/llm_server.py``, 127.0.0.1, in its
own process so it does not share tauguard's GIL) answers every completion after a fixed
delay; each simulation makes 4 calls (agent: a tool call, then a reply; user: an opening,
then the stop token). For each C, ``tauguard.run`` runs waves x C simulations (airline,
react, real-LLM path: tau2's LLMAgent and UserSimulator through litellm) with
``--concurrency C`` over ``--workers`` processes (default 2, the default backend: forked
from this process) and prints achieved vs ideal throughput, C / (calls per simulation x
latency), measured from the moment the run's progress starts (plan, imports and worker
start excluded: they are timed as ``start_s``) to the last record; the time to the first
record; and the peak memory of the run's processes (sum of their proportional set sizes,
so pages the forked workers share are counted once; the server's process excluded). Each row
also gives the throughput with start-up counted (from the call to the last record), the CPU per
simulation of the run's processes with start-up (``cpu_ms_per_sim_with_start``) and without it
(``cpu_ms_per_sim``: from the first record to the last), and the load average.
Usage: python bench/bench_concurrency.py [--latency 1.0] [--levels 8,32,64,128]
[--workers 2] [--waves 4]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import threading
from pathlib import Path
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


def _trials_for(sims: int, tasks: int = 50) -> int:
    """Trials per task so that tasks x trials is exactly ``sims`` (airline has 50 tasks): a
    run of C x m + 1 simulations would add a whole wave of latency for one simulation."""
    for trials in range(1, sims + 1):
        if sims % trials == 0 and sims // trials <= tasks:
            return trials
    raise ValueError(f"cannot split {sims} simulations over {tasks} tasks")


def _pss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def _tree(root: int, exclude: int) -> list[int]:
    # The run's process and its descendants (the forked workers), not the LLM server.
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        if pid != exclude:
            out.append(pid)
            todo.extend(children.get(pid, []))
    return out


class _PeakMemory(threading.Thread):
    def __init__(self, exclude: int) -> None:
        super().__init__(daemon=True)
        self.exclude, self.peak, self.running = exclude, 0.0, True

    def run(self) -> None:
        while self.running:
            self.peak = max(self.peak, _pss_mb(_tree(os.getpid(), self.exclude)))
            time.sleep(0.25)


def _tree_cpu_s(exclude: int) -> float:
    """User + system CPU seconds the run's live processes (this one and its workers) have used so far."""
    total = 0
    for pid in _tree(os.getpid(), exclude):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return total / os.sysconf("SC_CLK_TCK")


def _cpu_s() -> float:
    """User + system CPU seconds of this process and its waited-for children (the run's workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _recorder(stamps: list[float], retries: list[int], steady: list[float], sims: int, server_pid: int):  # noqa: ANN202
    """The run's ``on_record``: each record's time and retries; the run's CPU at its first and last record."""

    def on_record(rec, prog) -> None:  # noqa: ANN001
        stamps.append(time.perf_counter())
        retries.append(sum(u.retries for u in rec.usage.values()))
        if len(stamps) in (1, sims):
            steady.append(_tree_cpu_s(server_pid))

    return on_record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--levels", default="8,32,64,128")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--waves", type=int, default=4, help="simulations = waves x C")
    args = parser.parse_args()
    ports: multiprocessing.Queue[str] = multiprocessing.Queue()
    server = multiprocessing.Process(target=_serve, args=(args.latency, ports), daemon=True)
    server.start()
    api_base = ports.get(timeout=60)
    from tauguard.execution import lifecycle

    results = []
    try:
        for level in [int(x) for x in args.levels.split(",")]:
            sims = args.waves * level
            trials = _trials_for(sims)
            with tempfile.TemporaryDirectory() as out:
                config = {
                    "strategy": "react", "domains": ["airline"], "trials": trials, "agent_llm": "openai/loop-agent",
                    "user_llm": "openai/loop-user", "workers": args.workers, "concurrency": level, "out": out,
                    "name": f"c{level}", "num_tasks": sims // trials,
                    # A completion takes 1 s here: one not answered in 30 s is lost, and
                    # is retried instead of waiting out litellm's 600 s default.
                    "llm_args": {"agent": {"api_base": api_base, "timeout": 30},
                                 "user": {"api_base": api_base, "timeout": 30}},
                }
                memory = _PeakMemory(server.pid or -1)
                memory.start()
                stamps: list[float] = []
                retries: list[int] = []
                begun: list[float] = []
                steady: list[float] = []  # the run's CPU at its first and its last record
                cpu0 = _cpu_s()
                t0 = time.perf_counter()
                run_plan = lifecycle.plan(config)
                result = lifecycle.execute(
                    run_plan, on_start=lambda done, begun=begun: begun.append(time.perf_counter()),
                    on_record=_recorder(stamps, retries, steady, sims, server.pid or -1),
                )
                memory.running = False
                memory.join()
                cpu = _cpu_s() - cpu0
                n, errors = result.progress.done, result.progress.errors
            wall = stamps[-1] - begun[0]
            achieved = n / wall
            with_start = n / (stamps[-1] - t0)
            ideal = level / (CALLS_PER_SIM * args.latency)
            row = {
                "C": level, "workers": args.workers, "sims": n, "errors": errors, "retries": sum(retries),
                "start_s": round(begun[0] - t0, 2), "first_record_s": round(stamps[0] - begun[0], 2),
                "wall_s": round(wall, 1), "sims_per_s": round(achieved, 2), "ideal": round(ideal, 2),
                "achieved_over_ideal": round(achieved / ideal, 3),
                # The same with plan, imports and worker start counted: what a user waits for.
                "sims_per_s_with_start": round(with_start, 2), "with_start_over_ideal": round(with_start / ideal, 3),
                "peak_pss_mb": round(max(memory.peak, 0)),
                # CPU of this process and its workers, start-up included (the server's process excluded): load on the
                # machine changes wall time far more than it changes this.
                "cpu_ms_per_sim_with_start": round(1000 * cpu / n, 1) if n else None,
                # Between the first and the last record, per simulation finished in between: the conversations'
                # own cost, without start-up (imports, forks, the first completion's lazy imports).
                "cpu_ms_per_sim": round(1000 * (steady[-1] - steady[0]) / (n - 1), 1) if n > 1 and len(steady) == 2 else None,
                "load": round(os.getloadavg()[0], 2),
            }
            results.append(row)
            print(json.dumps(row), flush=True)
    finally:
        server.terminate()
    json.dump(results, sys.stderr)


if __name__ == "__main__":
    main()
