"""Before/after proof that a change altered no record: the sim path and the loopback (real-LLM) path.

Runs the same plans with two checkouts of tauguard (``--before DIR``: e.g. ``git worktree add
--detach /tmp/before main``; ``--after DIR``, default this checkout), each in a fresh
interpreter with that checkout first on ``PYTHONPATH``, then diffs the runs record by record
(``bench/diff_records.py``):

- sim path: ``ledger`` on airline + retail + telecom, realistic faults, k = 2 (SIMULATION);
- loopback path: ``react`` on airline with the agent and user on the scripted OpenAI-compatible
  server (``tauguard/testing/llm_server.py``, the same deterministic script as
  ``bench_concurrency.py``), 20 tasks x 2 trials through τ²'s LLMAgent / UserSimulator and litellm.

Usage: ``python bench/diff_paths.py --before /tmp/before [--work /tmp/diff]``; exit code 1 when a
record differs.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_concurrency import _serve  # noqa: E402
from diff_records import diff_runs  # noqa: E402

SIM = ["--strategy", "ledger", "--domain", "airline,retail,telecom", "-k", "2", "--faults", "realistic", "--seed", "300"]


def _run(code: Path, out: Path, name: str, args: list[str]) -> Path:
    # The checkout's strategies/ folder installs as tauguard_strategies: a link gives it that name.
    shim = out / f".shim-{name}"
    shim.mkdir(parents=True, exist_ok=True)
    link = shim / "tauguard_strategies"
    if not link.is_symlink():
        link.symlink_to(code / "strategies")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHONPATH=f"{code}{os.pathsep}{shim}", LITELLM_LOCAL_MODEL_COST_MAP="True",
               OPENAI_API_KEY="sk-loopback-not-a-key")
    shutil.rmtree(out / name, ignore_errors=True)
    cmd = [sys.executable, "-m", "tauguard", "run", *args, "--name", name, "--out", str(out), "--plain"]
    # From / so that the current directory's tauguard does not shadow ``code``.
    subprocess.run(cmd, check=True, env=env, cwd="/", stdout=subprocess.DEVNULL)
    return out / name


def main() -> None:
    """Run both paths with both checkouts and diff them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--work", type=Path, default=Path("/tmp/tauguard-diff"))
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    bad = 0
    print("sim path (SIMULATION):")
    runs = [_run(code.resolve(), args.work, f"sim-{tag}", SIM) for tag, code in (("before", args.before), ("after", args.after))]
    bad += diff_runs(*runs)
    ports: Any = multiprocessing.Queue()
    server = multiprocessing.Process(target=_serve, args=(0.0, ports), daemon=True)
    server.start()
    try:
        api_base = ports.get(timeout=60)
        llm_args = json.dumps({"agent": {"api_base": api_base, "timeout": 30}, "user": {"api_base": api_base, "timeout": 30}})
        loop = ["--strategy", "react", "--domain", "airline", "-k", "2", "--num-tasks", "20", "--seed", "300",
                "--agent-llm", "openai/loop-agent", "--user-llm", "openai/loop-user", "--llm-args", llm_args]
        print("loopback path (scripted server; SIMULATION of a provider):")
        runs = [_run(code.resolve(), args.work, f"loop-{tag}", loop) for tag, code in (("before", args.before), ("after", args.after))]
        bad += diff_runs(*runs)
    finally:
        server.terminate()
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
