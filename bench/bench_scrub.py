"""Benchmark the secret scrubber (tauguard.secrets.scrub): CPU time per record line and on
adversarial text.

The scrubber runs on every record line a run writes (tauguard.runs.store.RecordWriter), so its
cost per record matters, and it must stay linear in the text's length on any input (a 100 kB
run of letters before an ``@`` once took ~10 s: the URL-userinfo regex backtracked over every
start position). Usage: ``python bench/bench_scrub.py [--repeat 200]``. Prints, for each case,
the text's length and the median CPU time of one scrub; the 1x / 10x rows of the long cases
show the growth (linear: ~10x time for 10x text).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tauguard.secrets import remember_config_secrets, scrub  # noqa: E402


def _record_line() -> str:
    """A record line of the size a run writes (one airline conversation, ~20 kB of JSON)."""
    turns = [
        {"role": "assistant" if i % 2 else "user", "content": f"turn {i}: please change reservation ABC{i:03d} to flight HAT{i:03d}; " * 4}
        for i in range(60)
    ]
    return json.dumps({"run_id": "r", "domain": "airline", "task_id": "7", "trial": 0, "simulation": {"messages": turns}})


def _time(text: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        scrub(text)
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    # Secrets to look for, as a real run has them: an API key in the environment and a header
    # value from a config.
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-0123456789abcdef")
    remember_config_secrets({"agent": {"extra_headers": {"X-Sub-Key": "hdr-bench-secret-42"}}})
    cases = [
        ("record line (~20 kB JSON)", _record_line()),
        ("100 kB letters + ' x@y'", "a" * 100_000 + " x@y"),
        ("1 MB letters + ' x@y' (10x)", "a" * 1_000_000 + " x@y"),
        ("100 kB '1a' + '://u:p@h'", "1a" * 50_000 + "://u:p@h"),
        ("1 MB '1a' + '://u:p@h' (10x)", "1a" * 500_000 + "://u:p@h"),
        ("100 kB of 'a://b' runs", "a://b" * 20_000 + "@"),
        ("120 kB --llm-args-like JSON", json.dumps({"agent": {"api_base": "http://" + "x" * 120_000}})),
    ]
    print(f"{'case':34} {'chars':>9} {'µs per scrub':>13}")
    for name, text in cases:
        repeat = args.repeat if len(text) < 200_000 else max(3, args.repeat // 20)
        print(f"{name:34} {len(text):>9} {_time(text, repeat) * 1e6:>13.1f}")


if __name__ == "__main__":
    main()
