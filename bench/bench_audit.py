"""Benchmark `tauguard audit` of one strategy over a 50-task τ² results file (airline).

Imports the file into a temporary directory, then times the end-to-end CLI
(``tauguard audit RUN --strategy S``, a fresh interpreter, imports included). Target: under
60 s on 2 cores. Usage: ``python bench/bench_audit.py [FILE] [--strategy ledger] [--repeat 1]``
(default: the shared airline claude-opus-4-6 file). ``--copies 20`` repeats every imported
conversation as 20 trials of its task (50 airline conversations -> 1,000 real simulations, the
size of a 4-trial submission's archive; target: under 30 s on 2 workers).
``--run DIR`` starts from an imported run instead (e.g. a folder of ``/work/realruns``, copied
into the temporary directory first, never written in place): ``python bench/bench_audit.py --run
/work/realruns/airline_claude-opus-4-6_user-gpt-4.1 --copies 20 -s ledger -s action-guard -s
workflow`` audits 1,000 real airline simulations with each strategy in turn. Each audit prints
its wall time, the CPU time of its process tree (workers included) and the load average.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
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
    parser.add_argument("--run", type=Path, default=None, help="An imported run folder to copy instead of importing FILE.")
    parser.add_argument("--strategy", "-s", action="append", default=None, help="Strategy to audit (repeatable; default ledger).")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--copies", type=int, default=1, help="Repeat each conversation as this many trials.")
    args = parser.parse_args()
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", CI="true")
    strategies = args.strategy or ["ledger"]
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "bench"
        if args.run is not None:
            shutil.copytree(args.run, run)
        else:
            done = subprocess.run([sys.executable, "-m", "tauguard", "import", str(args.file), "--out", tmp, "--name", "bench",
                                   "--relabel"], capture_output=True, text=True, env=env)
            if done.returncode != 0:
                sys.exit(f"import failed: {done.stderr.strip()}")
        if args.copies > 1:
            _repeat_trials(run, args.copies)
        simulations = sum(1 for _ in open(run / "simulations.jsonl", "rb"))
        print(f"{args.run or args.file} x {args.copies} copies: {simulations} real simulations; workers: {args.workers}")
        for strategy in strategies:
            _audit(run, strategy, args.workers, args.repeat, env)


def _audit(run: Path, strategy: str, workers: int, repeat: int, env: dict[str, str]) -> None:
    """Time ``tauguard audit RUN -s STRATEGY`` (a fresh interpreter) ``repeat`` times and print the figures."""
    times = []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "tauguard", "audit", str(run), "-s", strategy, "--workers", str(workers)],
                              capture_output=True, text=True, env=env)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            sys.exit(f"audit failed: {done.stderr.strip()}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print("\n".join(done.stdout.splitlines()[:8]))
    # On a shared machine wall time says little; the CPU time of the audit processes (workers
    # included) does not depend on how many other processes compete for the cores.
    cpu = (usage.ru_utime + usage.ru_stime - before.ru_utime - before.ru_stime) / repeat
    print(f"strategy {strategy}: audit CLI (fresh interpreter, imports included) median wall "
          f"{statistics.median(times):.2f} s {[round(t, 2) for t in times]}; CPU per audit (user + system, workers "
          f"included) {cpu:.1f} s; peak RSS of a process {usage.ru_maxrss / 1024:.0f} MB; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)


if __name__ == "__main__":
    main()
