"""Gate every gold WRITE of the base tasks with the action guard's compiled backend.

Prints, per domain, the verdict counts on gold writes (the no-false-block acceptance
check: REVISE/BLOCK must be 0 on writes the environment accepts) and which checklist items
held them. With --follow-reads the gold plans are also replayed with the reads the guard
suggests inserted before each held write (what a compliant agent would do on VERIFY).

    python bench/action_guard_gold_sweep.py [--domains airline retail telecom] [--follow-reads] [--show N]

Exit status 1 if any executed gold write gets REVISE or BLOCK in the plain sweep.
Sim replays only: these counts say nothing about real LLM agents.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

from tauguard_strategies.action_guard.gold_sweep import (
    GoldGate,
    failed_item_counts,
    sweep,
    verdict_counts,
)
from tauguard import tau2compat as t2


def _report(label: str, gates: list[GoldGate], show: int) -> int:
    executed = [g for g in gates if g.executed]
    rejected = [g for g in gates if not g.executed]
    counts = verdict_counts(executed)
    print(f"  {label}: {len(executed)} executed gold writes -> " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    if rejected:
        print(f"    + {len(rejected)} gold writes the environment rejects -> " + ", ".join(f"{g.task_id}:{g.tool}={g.verdict.value}" for g in rejected))
    if show:
        for item, n in failed_item_counts(executed).most_common(show):
            print(f"      {n:4d}  {item}")
    false_blocks = [g for g in executed if g.verdict.value in ("REVISE", "BLOCK")]
    for g in false_blocks:
        print(f"    FALSE {g.verdict.value}: task {g.task_id} write {g.write_index} {g.tool}: {g.reason}")
    return len(false_blocks)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--domains", nargs="+", default=list(t2.DOMAINS), choices=t2.DOMAINS)
    parser.add_argument("--follow-reads", action="store_true", help="also replay with the guard's suggested reads inserted")
    parser.add_argument("--show", type=int, default=8, help="list the N items that held most gold writes")
    args = parser.parse_args()

    false_blocks = 0
    totals: Counter[str] = Counter()
    for domain in args.domains:
        start = time.perf_counter()
        gates = sweep(domain)
        print(f"{domain} ({time.perf_counter() - start:.1f} s)")
        false_blocks += _report("gold plan", gates, args.show)
        totals.update(verdict_counts(g for g in gates if g.executed))
        if args.follow_reads:
            start = time.perf_counter()
            followed = sweep(domain, follow_reads=True)
            print(f"  ({time.perf_counter() - start:.1f} s)")
            _report("gold plan + suggested reads", followed, args.show)
    print("all domains: " + ", ".join(f"{k} {totals.get(k, 0)}" for k in ("ALLOW", "VERIFY", "REVISE", "BLOCK")))
    return 1 if false_blocks else 0


if __name__ == "__main__":
    sys.exit(main())
