"""Crash-safe run directories: write, resume and load runs.

Records are appended to ``simulations.jsonl`` one line at a time, flushed and fsynced,
so a run killed at any moment (even ``kill -9``) loses at most the line being written;
that truncated line is ignored on load and its unit re-run on ``--resume``.
The manifest is replaced atomically (write to a temp file, then rename).

Imports neither tau2 nor litellm.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from pydantic import ValidationError

from tauguard.errors import TauguardInputError
from tauguard.records import Manifest, TrialRecord

if TYPE_CHECKING:
    import pandas as pd

MANIFEST = "manifest.json"
RECORDS = "simulations.jsonl"


class RunLoadError(TauguardInputError):
    """A run directory is missing, unreadable or corrupt."""


@dataclass
class Run:
    """A loaded run: its manifest and its latest record per (domain, task, trial)."""

    path: Path
    manifest: Manifest
    records: list[TrialRecord]
    skipped_lines: int = 0  # truncated or unparsable lines that were ignored


def write_manifest(run_dir: Path, manifest: Manifest) -> None:
    """Atomically replace the run's manifest."""
    run_dir.mkdir(parents=True, exist_ok=True)
    tmp = run_dir / (MANIFEST + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(manifest.model_dump_json(indent=2))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, run_dir / MANIFEST)


def read_manifest(run_dir: Path) -> Manifest:
    """Read a run's manifest, raising :class:`RunLoadError` with a one-line reason."""
    path = Path(run_dir) / MANIFEST
    if not Path(run_dir).is_dir():
        raise RunLoadError(f"run directory not found: {run_dir}")
    if not path.is_file():
        raise RunLoadError(f"not a tauguard run (no {MANIFEST}): {run_dir}")
    try:
        return Manifest.model_validate_json(path.read_text(encoding="utf-8"))
    except (ValidationError, ValueError, OSError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise RunLoadError(f"corrupt manifest in {run_dir}: {first}") from None


class RecordWriter:
    """Appends trial records durably; one instance per run, used by the parent process."""

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / RECORDS
        self._repair_tail()
        self._fh = open(self.path, "a", encoding="utf-8")

    def _repair_tail(self) -> None:
        # A kill during a write leaves a line without its newline; cut it so the next
        # record starts on a line of its own. The cut unit is re-run by resume.
        if not self.path.exists():
            return
        with open(self.path, "rb+") as fh:
            data = fh.read()
            if data and not data.endswith(b"\n"):
                fh.truncate(data.rfind(b"\n") + 1)

    def write(self, record: TrialRecord) -> None:
        """Append one record and make it durable before returning."""
        self._fh.write(record.model_dump_json() + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        """Close the file."""
        self._fh.close()


def iter_records(run_dir: Path) -> tuple[list[TrialRecord], int]:
    """All parsable records in file order, and how many lines were skipped."""
    path = Path(run_dir) / RECORDS
    records: list[TrialRecord] = []
    skipped = 0
    if not path.exists():
        return records, 0
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                records.append(TrialRecord.model_validate_json(line))
            except (ValidationError, ValueError):
                skipped += 1
    return records, skipped


def latest_records(records: Iterable[TrialRecord]) -> list[TrialRecord]:
    """Keep the last record of each (domain, task, trial), in first-seen order."""
    latest: dict[tuple[str, str, int], TrialRecord] = {}
    for rec in records:
        latest[rec.key] = rec
    return list(latest.values())


def load_run(run_dir: str | Path) -> Run:
    """Load a run directory (manifest + deduplicated records)."""
    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    records, skipped = iter_records(run_dir)
    return Run(path=run_dir, manifest=manifest, records=latest_records(records), skipped_lines=skipped)


def load_run_frame(run_dir: str | Path) -> "pd.DataFrame":
    """Load a run as a pandas DataFrame, one row per (task, trial).

    Columns: run_id, strategy, domain, task_id, trial, seed, reward, success,
    termination_reason, policy_violation_task, attacked, attack_success, error,
    duration_s, guard_events (count), n_verify/n_revise/n_block, faults_injected,
    faults_intercepted, and cost/tokens per role (``agent_cost``, ``user_prompt_tokens``, ...).
    """
    import pandas as pd

    run = load_run(run_dir)
    rows = []
    for rec in run.records:
        row = {
            "run_id": rec.run_id,
            "strategy": rec.strategy,
            "simulated": rec.simulated,
            "domain": rec.domain,
            "task_id": rec.task_id,
            "trial": rec.trial,
            "seed": rec.seed,
            "reward": rec.reward,
            "success": rec.success,
            "termination_reason": rec.termination_reason,
            "policy_violation_task": rec.policy_violation_task,
            "attacked": rec.attacked,
            "attack_success": rec.attack_success,
            "error": rec.error,
            "duration_s": rec.duration_s,
            "guard_events": len(rec.guard_events),
            "faults_injected": sum(f.applied for f in rec.faults),
            "faults_intercepted": sum(bool(f.intercepted) for f in rec.faults),
        }
        for verdict in ("VERIFY", "REVISE", "BLOCK"):
            row[f"n_{verdict.lower()}"] = sum(
                1 for e in rec.guard_events if e.verdict is not None and e.verdict.value == verdict
            )
        for role in ("agent", "user", "guard"):
            usage = rec.usage.get(role)
            row[f"{role}_cost"] = usage.cost if usage else 0.0
            row[f"{role}_prompt_tokens"] = usage.prompt_tokens if usage else 0
            row[f"{role}_completion_tokens"] = usage.completion_tokens if usage else 0
        rows.append(row)
    return pd.DataFrame(rows)


def completed_keys(run_dir: Path) -> set[tuple[str, str, int]]:
    """Keys of units that finished without an infrastructure error (skipped by resume)."""
    records, _ = iter_records(run_dir)
    return {r.key for r in latest_records(records) if r.error is None}


def dump_json(obj: object) -> str:
    """JSON with stable key order, for machine-readable CLI output."""
    return json.dumps(obj, indent=2, sort_keys=False, default=str)
