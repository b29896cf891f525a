"""Benchmark `tauguard import` on a full-size τ² results file (retail: 114 tasks).

Times the end-to-end CLI (a fresh interpreter, so imports are included) and the library
call (read + check + write), each into a fresh temporary directory. Target: under 10 s.
Usage: ``python bench/bench_import.py [FILE] [--repeat 3]`` (default: the shared retail file,
imported with --relabel since its task labels are permuted; see docs/trajectories.md).
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


DEFAULT = _shared("retail_gpt-4.1-mini_user-gpt-4.1.json.gz")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", type=Path, default=Path(os.environ.get("TAUGUARD_BENCH_FILE", DEFAULT)))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", CI="true")
    cli, lib = [], []
    for i in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "tauguard", "import", str(args.file), "--out", tmp, "--name", "bench", "--relabel"],
                capture_output=True, text=True, env=env,
            )
            cli.append(time.perf_counter() - start)
            if done.returncode != 0:
                sys.exit(f"import failed: {done.stderr.strip()}")
            if i == 0:
                print(done.stdout.splitlines()[0])
        from tauguard.trajectories.importer import import_results
        from tauguard.trajectories.load import read_results

        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            import_results(read_results(args.file), Path(tmp), name="bench", relabel=True)
            lib.append(time.perf_counter() - start)
    print(f"file: {args.file}")
    print(f"CLI (fresh interpreter, imports included): median {statistics.median(cli):.2f} s  runs {[round(t, 2) for t in cli]}")
    print(f"library (read + check + write):            median {statistics.median(lib):.2f} s  runs {[round(t, 2) for t in lib]}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    # On a shared machine wall time says little; the CPU time of the child processes does not
    # depend on how many other processes compete for the cores.
    print(f"CPU time of all child processes (user + system): {usage.ru_utime + usage.ru_stime:.1f} s")
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
