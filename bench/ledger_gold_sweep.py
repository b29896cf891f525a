"""Gold-plan sweep of the `ledger` gate: every gold WRITE of every base task, per domain.

Usage: python bench/ledger_gold_sweep.py [--domain D ...] [--split base] [--list] [--json PATH]

Prints, per domain and mode, ALLOW / VERIFY / REVISE / BLOCK counts on gold writes, the
VERIFY cases grouped by what they ask to read (and whether the gold plan reads the write's
target at all), and every non-ALLOW decision of the compliant mode. ``gold`` sees exactly
the gold plan; ``compliant`` also performs the reads the gate asks for (see
strategies/ledger/sweep.py). Deterministic: the sim, no LLM.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from tauguard_strategies.ledger import sweep
from tauguard.tau2compat import DOMAINS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", action="append", choices=DOMAINS, help="domain(s); default: all three")
    parser.add_argument("--split", default="base")
    parser.add_argument("--list", action="store_true", help="list every VERIFY case of the gold mode too")
    parser.add_argument("--json", type=Path, help="write every gate record as JSON to this path")
    args = parser.parse_args()
    records: list[sweep.GateRecord] = []
    for domain in args.domain or list(DOMAINS):
        start = time.perf_counter()
        recs = sweep.sweep(domain, args.split)
        records += recs
        n_tasks = len({r.task_id for r in recs})
        print(f"\n== {domain} ({args.split}): {len(recs) // 2} gold writes in {n_tasks} tasks, {time.perf_counter() - start:.1f} s")
        for mode in ("gold", "compliant"):
            c = sweep.counts(recs, mode)
            print(f"  {mode:9s} " + "  ".join(f"{k}={v}" for k, v in c.items()))
            for kind, n in sweep.verify_breakdown(recs, mode).items():
                print(f"            VERIFY {n:3d}  {kind}")
        for r in recs:
            listed = r.verdict.value in ("REVISE", "BLOCK") or (r.mode == "compliant" and r.verdict.value != "ALLOW")
            if listed or (args.list and r.mode == "gold" and r.verdict.value == "VERIFY"):
                failed = "  [tau2 rejects this gold write]" if r.gold_write_failed else ""
                print(f"  - {r.mode} task {r.task_id} write {r.write_index} {r.tool}: {r.verdict.value} {r.rule_id}{failed}")
                print(f"      {r.reason.split(' Ledger: ', 1)[-1]}")
                if r.required_reads:
                    print(f"      reads asked: {', '.join(r.required_reads)}")
    if args.json:
        args.json.write_text(json.dumps([r.model_dump(mode="json") for r in records], indent=1))
        print(f"\nwrote {len(records)} records to {args.json}")


if __name__ == "__main__":
    main()
