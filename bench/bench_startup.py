"""Start-up of a sim-mode run: when its first simulation is on disk, and which heavy modules it imported.

Runs ``tauguard run --strategy react --domain airline -k 1`` (sim model; SIMULATION) as a fresh
interpreter and polls its ``simulations.jsonl``: prints the time to the first record (plan,
imports, warm-up and the first simulation), the time to the last, the CPU time of the process
tree and the load average. Then, in a fresh interpreter, it imports what a sim-mode worker
imports (``tauguard.execution.simulate`` and the orchestrator class it drives) and lists the CPU
seconds of each heavy third-party package it pulls in, with who pulls it in: in τ² 26.3 every
entry point that runs a conversation (``tau2.orchestrator``, ``tau2.run``, ``tau2.gym``) imports
``tau2.agent.llm_agent``, which imports litellm at module level.
Usage: ``python bench/bench_startup.py [--num-tasks 50] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
HEAVY = ("litellm", "openai", "tau2", "pandas", "numpy", "scipy", "sklearn", "joblib", "matplotlib", "jinja2", "aiohttp")
PROBE = """
import sys, time
t = time.process_time()
from tauguard.execution import simulate
simulate.t2.orchestrator_class()
print(f"total {time.process_time() - t:.2f}")
print("loaded " + " ".join(sorted(m for m in {HEAVY!r} if m in sys.modules)))
"""


def first_record(num_tasks: int) -> tuple[float, float, float]:
    """(s to first record, s to the end, CPU s of the run's processes)."""
    with tempfile.TemporaryDirectory() as out:
        records = Path(out) / "startup" / "simulations.jsonl"
        before = os.times()
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "tauguard", "run", "--strategy", "react", "--domain", "airline", "-k", "1",
             "--num-tasks", str(num_tasks), "--name", "startup", "--out", out, "--plain"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV,
        )
        first = None
        while proc.poll() is None:
            if first is None and records.exists() and records.stat().st_size > 0:
                first = time.perf_counter() - start
            time.sleep(0.005)
        end = time.perf_counter() - start
        after = os.times()
        if proc.returncode != 0:
            raise SystemExit(f"run failed ({proc.returncode})")
    cpu = (after.children_user + after.children_system) - (before.children_user + before.children_system)
    return (first if first is not None else end), end, cpu


def main() -> None:
    """Time the start-ups, then list the heavy imports."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-tasks", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print("SIMULATION runs (sim model)")
    for _ in range(args.repeat):
        first, end, cpu = first_record(args.num_tasks)
        print(f"first record {first:.2f} s, {args.num_tasks} simulations done {end:.2f} s, CPU {cpu:.2f} s, "
              f"load {os.getloadavg()[0]:.2f}", flush=True)
    probe = subprocess.run([sys.executable, "-X", "importtime", "-c", PROBE.replace("{HEAVY!r}", repr(HEAVY))],
                           capture_output=True, text=True, env=ENV, check=True)
    print("worker imports, CPU s:", probe.stdout.strip().replace("\n", "; "))
    # -X importtime's cumulative microseconds of each heavy package's top module, the largest
    # figure per package (inflated by the measuring itself; the shares are what matters).
    cumulative: dict[str, int] = {}
    for line in probe.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[2].strip() in HEAVY:
            name = parts[2].strip()
            cumulative[name] = max(cumulative.get(name, 0), int(parts[1]))
    for name, micros in sorted(cumulative.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<12} {micros / 1e6:6.2f} s cumulative (importtime)")

if __name__ == "__main__":
    main()
