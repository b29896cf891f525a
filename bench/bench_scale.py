"""`show`, `compare`, `check` and `report` on real-shaped runs at 1x, 10x and 100x.

The runs are copies of real run folders (``bench/scaled_runs.py``: every task repeated ``scale``
times, records otherwise byte-for-byte those ``tauguard run`` wrote), so loading and rendering
cost what they cost on real runs. Each command runs as a fresh interpreter (imports included);
for each it prints wall time, CPU time (user + sys of the process and its children, which load on
the machine barely changes), peak RSS, and the 1-minute load average when it ran.

Make the template runs once (sim model, so these are SIMULATION runs), then bench:
``for s in react ledger action-guard workflow; do tauguard run --strategy $s --domain
airline,retail,telecom -k 4 --faults realistic --name real-$s --out /tmp/scale/base; done``
``python bench/bench_scale.py /tmp/scale/base/real-* --scale 1 10 100 --work /tmp/scale``
(``--commands show,report`` picks commands; ``--repeat N`` repeats each; ``--code DIR`` benches
another checkout's tauguard, e.g. ``git worktree add --detach /tmp/before main``, for before/after).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scaled_runs import scale_run  # noqa: E402

RESAMPLES = 10_000
# A user's install has bytecode caches (see bench_compare.py).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def measure(cmd: list[str], code: Path | None = None) -> tuple[float, float, float, int]:
    """Run ``cmd`` (with tauguard from the checkout ``code`` if given); return (wall s, CPU s of
    its process tree, peak RSS MB, exit code)."""
    env = dict(ENV, PYTHONPATH=str(code)) if code is not None else ENV
    start = time.perf_counter()
    # From / so that the current directory's tauguard (a checkout) does not shadow ``code``.
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd="/")
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {err.strip()[-800:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode


def commands(runs: list[Path], out: Path) -> dict[str, list[str]]:
    """The CLI commands benched, keyed by name."""
    cli = [sys.executable, "-m", "tauguard"]
    r = [str(p) for p in runs]
    return {
        "show": cli + ["show", r[-1]],
        "compare": cli + ["compare", *r, "--resamples", str(RESAMPLES)],
        "check": cli + ["check", r[-1], "--baseline", r[0], "--resamples", str(RESAMPLES)],
        "report": cli + ["report", *r, "-o", str(out), "--resamples", str(RESAMPLES)],
    }


def main() -> None:
    """Build the scaled copies and bench each command on them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="Template run folders (the first is the baseline).")
    parser.add_argument("--scale", nargs="+", type=int, default=[1, 10])
    parser.add_argument("--work", type=Path, required=True, help="Where the scaled copies are kept (reused).")
    parser.add_argument("--commands", default="show,compare,check,report")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--code", type=Path, default=None,
                        help="Bench the tauguard of this checkout (e.g. a `git worktree` of an older commit).")
    args = parser.parse_args()
    chosen = args.commands.split(",")
    print(f"{os.cpu_count()} CPUs; SIMULATION runs (sim model): figures describe tauguard on simulator records")
    for scale in args.scale:
        runs = [scale_run(r.resolve(), args.work.resolve() / f"x{scale}", scale) for r in args.runs]
        n = sum(1 for _ in open(runs[0] / "simulations.jsonl", "rb"))
        mb = sum((r / "simulations.jsonl").stat().st_size for r in runs) / 1e6
        print(f"scale {scale}: {len(runs)} runs x {n} records ({mb:.0f} MB of records)")
        cmds = commands(runs, args.work.resolve() / f"report-x{scale}.html")
        for name in chosen:
            for _ in range(args.repeat):
                wall, cpu, rss, code = measure(cmds[name], args.code)
                load = os.getloadavg()[0]
                print(f"  {name:<8} wall {wall:7.2f} s  cpu {cpu:7.2f} s  peak RSS {rss:7.0f} MB  exit {code}  "
                      f"load {load:.2f}", flush=True)


if __name__ == "__main__":
    main()
