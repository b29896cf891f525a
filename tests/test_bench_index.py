"""bench/README.md indexes every bench script, and names none that is gone."""

from __future__ import annotations

import re
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"


def test_every_bench_script_has_a_row_and_every_row_a_script() -> None:
    scripts = {p.name for p in BENCH.iterdir() if p.suffix in (".py", ".sh")}
    listed = set(re.findall(r"^\| `([\w.]+\.(?:py|sh))`", (BENCH / "README.md").read_text(encoding="utf-8"), re.M))
    listed |= set(re.findall(r"\(\+ `([\w.]+\.py)`\)", (BENCH / "README.md").read_text(encoding="utf-8")))
    assert scripts - listed == set(), "bench scripts without a row in bench/README.md"
    assert listed - scripts == set(), "rows in bench/README.md without a script"
