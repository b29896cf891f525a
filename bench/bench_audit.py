"""Benchmark `tauguard audit` of one strategy over a 50-task τ² results file (airline).

Imports the file into a temporary directory, then times the end-to-end CLI
(``tauguard audit RUN --strategy S``, a fresh interpreter, imports included). Target: under
60 s on 2 cores. Usage: ``python bench/bench_audit.py [FILE] [--strategy ledger] [--repeat 1]``
(default: the shared airline claude-opus-4-6 file). ``--copies 20`` repeats every imported
conversation as 20 trials of its task (50 airline conversations -> 1,000 real simulations, the
size of a 4-trial submission's archive; target: under 30 s on 2 workers).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

def _shared(name: str) -> Path:
    """``shared/trajectories/NAME`` in the first parent folder holding it (main checkout or worktree)."""
    for parent in Path(__file__).resolve().parents:
        if (parent / "shared" / "trajectories" / name).exists():
            return parent / "shared" / "trajectories" / name
    return Path("shared") / "trajectories" / name


DEFAULT = _shared("airline_claude-opus-4-6_user-gpt-4.1.json.gz")


def _repeat_trials(run_dir: Path, copies: int) -> None:
    """Rewrite the imported run with each record repeated as ``copies`` trials of its task."""
    import json

    from tauguard.runs.store import MANIFEST, RECORDS, RecordWriter

    lines = (run_dir / RECORDS).read_text(encoding="utf-8").splitlines()
    manifest = json.loads((run_dir / MANIFEST).read_text(encoding="utf-8"))
    trials = manifest["trials"]
    manifest["trials"] = trials * copies
    (run_dir / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    with open(run_dir / RECORDS, "w", encoding="utf-8") as fh:
        for line in lines:
            rec = json.loads(line)
            for copy in range(copies):
                fh.write(json.dumps(dict(rec, trial=rec["trial"] + copy * trials)) + "\n")
    RecordWriter(run_dir).close()  # the outcome index, as a writer keeps it


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", type=Path, default=Path(os.environ.get("TAUGUARD_BENCH_FILE", DEFAULT)))
    parser.add_argument("--strategy", default="ledger")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--copies", type=int, default=1, help="Repeat each conversation as this many trials.")
    args = parser.parse_args()
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", CI="true")
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([sys.executable, "-m", "tauguard", "import", str(args.file), "--out", tmp, "--name", "bench",
                               "--relabel"], capture_output=True, text=True, env=env)
        if done.returncode != 0:
            sys.exit(f"import failed: {done.stderr.strip()}")
        if args.copies > 1:
            _repeat_trials(Path(tmp) / "bench", args.copies)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        for _ in range(args.repeat):
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "tauguard", "audit", str(Path(tmp) / "bench"), "-s", args.strategy,
                                   "--workers", str(args.workers)],
                                  capture_output=True, text=True, env=env)
            times.append(time.perf_counter() - start)
            if done.returncode != 0:
                sys.exit(f"audit failed: {done.stderr.strip()}")
        print("\n".join(done.stdout.splitlines()[:8]))
    print(f"file: {args.file} x {args.copies} copies  strategy: {args.strategy}  workers: {args.workers}")
    print(f"audit CLI (fresh interpreter, imports included): median {statistics.median(times):.2f} s  runs {[round(t, 2) for t in times]}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    # On a shared machine wall time says little; the CPU time of the audit processes (workers
    # included) does not depend on how many other processes compete for the cores.
    cpu = (usage.ru_utime + usage.ru_stime - before.ru_utime - before.ru_stime) / args.repeat
    print(f"CPU time per audit (user + system, workers included): {cpu:.1f} s")
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
