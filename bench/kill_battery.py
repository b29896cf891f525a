"""Kill battery (issue 11): SIGKILL a run's process group at random points, start-up included,
resume after each kill, and check the outcome against an uninterrupted run with the same seed.

Checks: every (task, trial) is present exactly once in the final ``simulations.jsonl``; pass^k
(every slice, every k) and each unit's reward equal the uninterrupted run's; after every kill
the output folder holds either no run folder (a kill before the atomic rename: the same
command starts again) or a resumable one (a valid manifest); no half-built folder remains.

Simulation only (the sim agent with the realistic fault profile). Usage (slow; run niced):

    nice -n 10 python bench/kill_battery.py --kills 20 --out /tmp/tauguard-kill-battery > /tmp/kill_battery.log
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

RUN_ARGS = ["--strategy", "ledger", "--domain", "retail", "--faults", "realistic", "-k", "2", "--seed", "7", "--workers", "2"]


def _env() -> dict[str, str]:
    return dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", CI="true")


def _cmd(out: Path, name: str, num_tasks: int, resume: bool) -> list[str]:
    base = [sys.executable, "-m", "tauguard", "run"]
    if resume:
        return base + ["--resume", str(out / name), "--workers", "2"]
    return base + RUN_ARGS + ["--num-tasks", str(num_tasks), "--out", str(out), "--name", name]


def _lines(run_dir: Path) -> list[str]:
    path = run_dir / "simulations.jsonl"
    return path.read_text().splitlines() if path.exists() else []


def _summary(run_dir: Path) -> tuple[dict, dict]:
    from tauguard.runs.store import load_run
    from tauguard.analysis.summary import summarize

    run = load_run(run_dir)
    rewards = {"/".join(map(str, r.key)): r.reward for r in run.records}
    slices = {sl.label: [kv.value for kv in sl.pass_hat] for sl in summarize(run).metrics.slices}
    return slices, rewards


def _state(out: Path, name: str) -> str:
    from tauguard.runs.store import RunLoadError, read_manifest

    run_dir = out / name
    if not run_dir.exists():
        return "no run folder (killed before the rename)"
    try:
        read_manifest(run_dir)
    except RunLoadError as exc:
        raise SystemExit(f"UNRESUMABLE folder left: {exc}") from None
    return f"resumable, {len(_lines(run_dir))} record lines"


def main() -> None:
    from tauguard.runs.store import lock_holder

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--num-tasks", type=int, default=20)
    parser.add_argument("--seed", type=int, default=11, help="seed of the kill times")
    parser.add_argument("--out", type=Path, default=Path("/tmp/tauguard-kill-battery"))
    args = parser.parse_args()
    rng = random.Random(args.seed)
    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    t0 = time.time()

    # The uninterrupted reference runs alongside the kills (same seed, same config).
    ref = subprocess.Popen(
        _cmd(args.out, "reference", args.num_tasks, False), env=_env(), stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True,
    )

    name = "killed"
    startup_kills = {0, 4, 9, 14}  # kill as soon as the run folder is being built
    for i in range(args.kills):
        resume = (args.out / name).exists()
        proc = subprocess.Popen(
            _cmd(args.out, name, args.num_tasks, resume), env=_env(), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True,
        )
        run_dir = args.out / name
        if i in startup_kills and not resume:
            point = "start-up (run folder being built)"
            while proc.poll() is None and not any(p.name.startswith(f".{name}.") or p.name == name for p in args.out.iterdir()):
                time.sleep(0.005)
        elif i in startup_kills:
            point = "start-up of a resume (lock just taken)"
            while proc.poll() is None and lock_holder(run_dir) != proc.pid:
                time.sleep(0.005)
        else:
            # a random point of the run: after 0-2 new records, plus up to 2 s (mid-unit)
            before, wanted = len(_lines(run_dir)), rng.randint(0, 2)
            while proc.poll() is None and len(_lines(run_dir)) < before + wanted:
                time.sleep(0.01)
            delay = rng.uniform(0.0, 2.0)
            time.sleep(delay)
            point = f"{wanted} new records + {delay:.1f}s"
        if proc.poll() is not None:
            print(f"kill {i + 1:2d}: process had already finished (rc {proc.returncode}) before {point}", flush=True)
            if proc.returncode == 0:
                break
            continue
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        print(f"kill {i + 1:2d} at {point}: {_state(args.out, name)}", flush=True)

    _, ref_err = ref.communicate()
    assert ref.returncode == 0, ref_err[-2000:]
    final = subprocess.run(
        _cmd(args.out, name, args.num_tasks, (args.out / name).exists()), env=_env(), capture_output=True, text=True
    )
    assert final.returncode == 0, final.stderr[-2000:]
    lines = _lines(args.out / name)
    keys = [tuple(json.loads(line)[k] for k in ("domain", "task_id", "trial")) for line in lines]
    units = args.num_tasks * 2
    ok_once = len(keys) == len(set(keys)) == units
    ref_slices, ref_rewards = _summary(args.out / "reference")
    slices, rewards = _summary(args.out / name)
    leftovers = [p.name for p in args.out.iterdir() if p.name not in ("reference", name)]
    print(f"final: {len(lines)} record lines, {len(set(keys))} distinct (task, trial) of {units}: exactly once = {ok_once}")
    print(f"pass^k equal to the uninterrupted run: {slices == ref_slices}  ({slices.get('all domains/all')})")
    print(f"every unit's reward equal: {rewards == ref_rewards}")
    print(f"half-built folders left: {leftovers or 'none'}")
    print(f"total {time.time() - t0:.0f}s")
    if not (ok_once and slices == ref_slices and rewards == ref_rewards and not leftovers):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
