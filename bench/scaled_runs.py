"""Real-shaped big runs: copies of real run folders, every task repeated ``scale`` times.

``tauguard run`` output at full size (278 tasks x 4 trials) is the template; copy ``c`` of a task
gets the task id ``<id>.r<c>`` (copy 0 keeps the original id), so a scale-100 run holds 27,800
tasks whose records (conversations, guard events, faults, usage) are byte-for-byte those of the
real run apart from the task id. The outcome index is rebuilt by tauguard's own writer.
Used by ``bench/bench_scale.py``; by hand:
``python bench/scaled_runs.py --scale 100 --out /tmp/scale RUN [RUN ...]``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path

from tauguard.runs.store import MANIFEST, RECORDS, RecordWriter

_TASK_ID = re.compile(r'"task_id":"((?:[^"\\]|\\.)*)"')


def _copy_id(task_id: str, copy: int) -> str:
    return task_id if copy == 0 else f"{task_id}.r{copy}"


def scale_run(src: Path, dest_root: Path, scale: int) -> Path:
    """Write ``dest_root/<run name>``: ``src`` with each task repeated ``scale`` times; reused if complete."""
    dest = dest_root / src.name
    manifest = json.loads((src / MANIFEST).read_text(encoding="utf-8"))
    manifest["task_ids"] = {
        dom: [_copy_id(t, c) for c in range(scale) for t in ids] for dom, ids in manifest["task_ids"].items()
    }
    done = dest / ".complete"
    if done.is_file() and done.read_text() == str(scale):
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    (dest / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    lines = (src / RECORDS).read_text(encoding="utf-8").splitlines()
    with open(dest / RECORDS, "w", encoding="utf-8") as fh:
        for copy in range(scale):
            for line in lines:
                m = _TASK_ID.search(line)  # the record's own task_id is its first one
                if m is None:
                    fh.write(line + "\n")
                    continue
                tid = json.loads(f'"{m.group(1)}"')
                new = json.dumps(_copy_id(tid, copy), ensure_ascii=False)
                fh.write(line[: m.start()] + '"task_id":' + new + line[m.end():] + "\n")
    RecordWriter(dest).close()  # builds the outcome index the way a run's writer does
    done.write_text(str(scale))
    return dest


def main() -> None:
    """Build scaled copies of the given runs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--scale", type=int, default=10)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    for run in args.runs:
        dest = scale_run(run, args.out / f"x{args.scale}", args.scale)
        size = sum(f.stat().st_size for f in dest.iterdir()) / 1e6
        print(f"{dest} ({size:.0f} MB)")


if __name__ == "__main__":
    main()
