"""Record-by-record diff of two runs of the same plan: proof that a change altered no record.

Both runs must have been made with the same config and seed (e.g. by two checkouts, before and
after a change). Records are paired by (domain, task, trial) and compared field by field, the
conversation included, after dropping what differs between any two runs by nature: the run id,
wall-clock durations and timestamps, τ²'s random simulation ids, guard latencies and time spent
waiting on rate limits. Exit code 0 when every record matches, 1 otherwise (the first
differences are printed). Also compares `tauguard show --format json` of the two runs (run id
and wall time dropped).

Usage: ``python bench/diff_records.py RUN_BEFORE RUN_AFTER [--show 5] [--ignore process.judge ...]``
(``--ignore``: a dotted key path of a record left out of the comparison, for an intended
difference already explained, e.g. the dialogue judge's version label).
A before/after check of the sim path, then of the loopback (real-LLM) path, is in
``bench/diff_paths.sh``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from tauguard.runs.store import load_run
from tauguard.analysis.summary import summarize

# Keys whose values are wall-clock or random by nature, wherever they appear in a record.
VOLATILE = {
    "run_id", "duration_s", "duration", "timestamp", "start_time", "end_time", "latency_s", "waited_s", "id",
    "created_at", "updated_at", "wall_time_s",
}
# Keys kept although named like volatile ones, by their parent key: tool-call ids are replayed
# into messages by the sim agent deterministically, and matter for pairing calls with results.
KEEP_UNDER = {"tool_calls"}


# The loopback server numbers its tool calls by arrival (call_<request>_<i>): with simulations in
# flight, arrival order varies, so each record's call ids are renamed by first appearance.
_SERVER_CALL_ID = re.compile(r"^call_\d+_\d+$")


def canonical_call_ids(value: Any, names: dict[str, str] | None = None) -> Any:
    """``value`` with the loopback server's tool-call ids renamed ``call#0``, ``call#1``, ... by first appearance."""
    names = {} if names is None else names
    if isinstance(value, dict):
        return {k: canonical_call_ids(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [canonical_call_ids(v, names) for v in value]
    if isinstance(value, str) and _SERVER_CALL_ID.match(value):
        return names.setdefault(value, f"call#{len(names)}")
    return value


def normalise(value: Any, parent: str = "") -> Any:
    """``value`` with the volatile keys removed, recursively."""
    if isinstance(value, dict):
        return {
            k: normalise(v, k) for k, v in value.items() if k not in VOLATILE or parent in KEEP_UNDER
        }
    if isinstance(value, list):
        return [normalise(v, parent) for v in value]
    return value


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """The path and values of the first difference between ``a`` and ``b``, or None."""
    if type(a) is not type(b):
        return f"{path}: {a!r:.120} != {b!r:.120}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}.{key}: only in {'after' if key not in a else 'before'}"
            found = first_difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items != {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if a == b else f"{path}: {a!r:.120} != {b!r:.120}"


def drop_path(record: dict[str, Any], path: str) -> dict[str, Any]:
    """``record`` without the value at dotted ``path`` (unchanged when the path is absent)."""
    head, _, rest = path.partition(".")
    if head not in record:
        return record
    if not rest:
        return {k: v for k, v in record.items() if k != head}
    inner = record[head]
    return {**record, head: drop_path(inner, rest)} if isinstance(inner, dict) else record


def diff_runs(before: Path, after: Path, show: int = 5, ignore: tuple[str, ...] = ()) -> int:
    """Print the comparison; return the number of differing or unpaired records."""
    runs = [load_run(before), load_run(after)]

    def prepared(record: Any) -> Any:
        value = record.model_dump(mode="json")
        for path in ignore:
            value = drop_path(value, path)
        return normalise(canonical_call_ids(value))

    tables = [{r.key: prepared(r) for r in run.records} for run in runs]
    keys = sorted(set(tables[0]) | set(tables[1]))
    bad = 0
    for key in keys:
        a, b = tables[0].get(key), tables[1].get(key)
        found = "missing in after" if b is None else "missing in before" if a is None else first_difference(a, b)
        if found:
            bad += 1
            if bad <= show:
                print(f"  {'/'.join(map(str, key))}: {found}")
    summaries = [normalise(json.loads(summarize(run).model_dump_json())) for run in runs]
    summary_diff = first_difference(summaries[0], summaries[1])
    print(f"{len(keys)} records paired: {len(keys) - bad} identical, {bad} differ; summary "
          + ("identical" if summary_diff is None else f"differs at {summary_diff}"))
    return bad + (summary_diff is not None)


def main() -> None:
    """Diff two run folders."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--show", type=int, default=5, help="How many differing records to print.")
    parser.add_argument("--ignore", action="append", default=[], help="Dotted record key path to leave out (repeatable).")
    args = parser.parse_args()
    sys.exit(1 if diff_runs(args.before, args.after, args.show, tuple(args.ignore)) else 0)


if __name__ == "__main__":
    main()
