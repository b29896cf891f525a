"""Benchmark `tauguard compare` on full-size synthetic runs.

Builds two runs of 278 tasks x 4 trials (airline 50, retail 114, telecom 114) in a temporary
directory, then times:

- the end-to-end CLI (``python -m tauguard compare A B``, a fresh interpreter each time, so
  imports are included; bytecode caches allowed, as in a user's install), and
- the library call (:func:`tauguard.analysis.compare.compare_runs` on loaded runs, and load + compare),

with 10,000 Monte Carlo sign-flip patterns, and the CLI `show`, `check --baseline` and `report` the same
way (``--skip-report`` leaves out `report`, which takes tens of seconds at scale 10). ``--scale 10`` builds 2,780 tasks x 4 trials per run; ``--conversation-kb 20`` gives every
record a conversation of about that size (a τ² simulation's messages, as ``tauguard run`` stores
them; records are ~24 KB uncompressed) so loading costs what it costs on real runs.
``--runs-dir DIR`` keeps the runs in DIR and reuses them on the next call (building scale 10
with conversations takes minutes). Usage:
``python bench/bench_compare.py [--repeat 3] [--scale 10] [--conversation-kb 20] [--runs-dir DIR] [--skip-report]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tauguard.analysis.compare import compare_runs
from tauguard.runs.store import Run, load_run
from tauguard.testing.synthetic_runs import TaskSpec, write_run

DOMAINS = {"airline": 50, "retail": 114, "telecom": 114}
TRIALS = 4
RESAMPLES = 10_000


def build_run(root: Path, name: str, p_pass: float, seed: int, scale: int = 1, conversation_kb: int = 0) -> Path:
    """Write a synthetic sim run with Bernoulli(p_pass) trial outcomes."""
    rng = random.Random(seed)
    tasks = []
    for dom, count in DOMAINS.items():
        for i in range(count * scale):
            # Task difficulty varies, so pass^k spreads out as in real runs.
            p = min(1.0, max(0.0, p_pass + rng.uniform(-0.3, 0.3)))
            outcomes = [rng.random() < p for _ in range(TRIALS)]
            tasks.append(TaskSpec(domain=dom, task_id=str(i), outcomes=outcomes, policy_violation=i % 5 == 0))
    run_dir = write_run(root, name, tasks, strategy=name, trials=TRIALS)
    if conversation_kb:
        _add_conversations(run_dir, conversation_kb, rng)
    return run_dir


def _add_conversations(run_dir: Path, kb: int, rng: random.Random) -> None:
    """Give every record a τ²-like conversation of about ``kb`` KB (rewritten by tauguard's writer)."""
    from tauguard.runs.store import RECORDS, RecordWriter, iter_records

    records, _ = iter_records(run_dir)
    (run_dir / RECORDS).unlink()
    writer = RecordWriter(run_dir)
    for rec in records:
        messages = []
        while len(json.dumps(messages)) < kb * 1000:
            rid = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789") for _ in range(6))
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{len(messages)}", "name": "get_reservation_details", "arguments": {"reservation_id": rid},
                 "requestor": "assistant"}], "turn_idx": len(messages), "timestamp": "2026-01-01T00:00:00", "cost": 0.0})
            content = {"reservation_id": rid, "user_id": f"user_{rng.randint(1, 999)}", "origin": "JFK",
                       "destination": "SFO", "flights": [{"flight_number": f"HAT{rng.randint(1, 300):03d}",
                       "date": f"2024-05-{rng.randint(1, 30):02d}", "price": rng.randint(50, 2000)} for _ in range(3)],
                       "passengers": [{"first_name": "Emma", "last_name": "Kim", "dob": "1990-01-01"}],
                       "payment_history": [{"payment_id": f"credit_card_{rng.randint(1, 10**7)}", "amount": rng.randint(50, 5000)}]}
            messages.append({"role": "tool", "id": f"c{len(messages) - 1}", "content": json.dumps(content),
                             "requestor": "assistant", "turn_idx": len(messages), "timestamp": "2026-01-01T00:00:00",
                             "error": False})
        writer.write(rec.model_copy(update={"simulation": {"id": "x", "task_id": rec.task_id, "messages": messages,
                                                           "termination_reason": "user_stop"}}))
    writer.close()


# A user's install has bytecode caches; an environment that forbids writing them would make
# every command compile tauguard from source (~0.1 s), which users do not pay.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _run_ok(cmd: list[str]) -> None:
    # check exits 1 when a check fails: only a usage/input error (2) is a bench failure.
    proc = subprocess.run(cmd, capture_output=True, text=True, env=ENV, check=False)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")


def _time(fn, repeat: int) -> list[float]:  # noqa: ANN001 - any callable
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def _fmt(times: list[float]) -> str:
    return f"median {statistics.median(times):.3f} s (min {min(times):.3f}, max {max(times):.3f}, n={len(times)})"


def main() -> None:
    """Build the runs, time CLI and library, print wall times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--conversation-kb", type=int, default=0)
    parser.add_argument("--runs-dir", type=Path, default=None, help="Keep (and reuse) the runs here.")
    parser.add_argument("--skip-report", action="store_true", help="Do not time `tauguard report` (slow).")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="tauguard-bench-") as tmp:
        root = Path(tmp)
        if args.runs_dir is not None:
            root = args.runs_dir / f"scale{args.scale}-conv{args.conversation_kb}"
        start = time.perf_counter()
        a, b = root / "baseline", root / "candidate"
        if not (a / "manifest.json").is_file() or not (b / "manifest.json").is_file():
            root.mkdir(parents=True, exist_ok=True)
            for d in (a, b):
                shutil.rmtree(d, ignore_errors=True)
            a = build_run(root, "baseline", 0.6, seed=1, scale=args.scale, conversation_kb=args.conversation_kb)
            b = build_run(root, "candidate", 0.65, seed=2, scale=args.scale, conversation_kb=args.conversation_kb)
            print(f"built 2 runs x {sum(DOMAINS.values()) * args.scale} tasks x {TRIALS} trials in "
                  f"{time.perf_counter() - start:.2f} s")
        size = sum(f.stat().st_size for f in a.iterdir()) / 1e6
        print(f"runs in {root} ({size:.1f} MB per run on disk)")

        if args.runs_dir is not None:
            _index_runs(a, b)
        cli = [sys.executable, "-m", "tauguard"]
        compare_cmd = cli + ["compare", str(a), str(b), "--resamples", str(RESAMPLES)]
        commands = {
            "`tauguard compare A B` (table)": compare_cmd,
            "`tauguard compare A B --format json`": compare_cmd + ["--format", "json"],
            "`tauguard show B`": cli + ["show", str(b)],
            "`tauguard check B --baseline A`": cli + ["check", str(b), "--baseline", str(a), "--resamples", str(RESAMPLES)],
            "interpreter + `import tauguard.cli.main`": [sys.executable, "-c", "import tauguard.cli.main"],
        }
        if not args.skip_report:
            commands["`tauguard report A B -o FILE`"] = cli + [
                "report", str(a), str(b), "-o", str(root / "report.html"), "--resamples", str(RESAMPLES)
            ]
        out = subprocess.run(compare_cmd, capture_output=True, text=True, check=True, env=ENV).stdout
        cli_times = {}
        for name, cmd in commands.items():
            _run_ok(cmd)  # warm-up: writes the bytecode caches a user's install has
            cli_times[name] = _time(lambda cmd=cmd: _run_ok(cmd), args.repeat)

        lib_times = {}
        runs = [_load(a), _load(b)]
        lib_times["compare_runs (runs loaded)"] = _time(lambda: compare_runs(runs, n_resamples=RESAMPLES), args.repeat)
        lib_times["load x2 + compare_runs"] = _time(
            lambda: compare_runs([_load(a), _load(b)], n_resamples=RESAMPLES), args.repeat
        )

    print(f"resamples: {RESAMPLES}, ks: 1..{TRIALS}, adjusted CI; load average "
          f"{os.getloadavg()[0]:.2f} (1 min) on {os.cpu_count()} CPUs")
    for name, times in cli_times.items():
        print(f"CLI {name:<45} {_fmt(times)}")
    for name, times in lib_times.items():
        print(f"library {name:<41} {_fmt(times)}")
    print()
    print(out.splitlines()[0] if out.startswith("SIMULATION") else "")


def _load(path: Path) -> Run:
    # What `compare` loads: the outcome index when the loader has one (older versions do not).
    if "records" in inspect.signature(load_run).parameters:
        return load_run(path, conversations=False, records=False)
    return load_run(path, conversations=False)


def _index_runs(*run_dirs: Path) -> None:
    # Reused runs may predate the outcome index: the writer builds it when it opens a run.
    from tauguard.runs import store

    if getattr(store, "RecordWriter", None) is not None and importlib.util.find_spec("tauguard.runs.outcome_index"):
        for run_dir in run_dirs:
            store.RecordWriter(run_dir).close()


if __name__ == "__main__":
    main()
