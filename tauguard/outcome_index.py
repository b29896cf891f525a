"""The per-run outcome index: what `compare`, `check` and metrics need of each record, in a file of its own.

``runs/<run-id>/outcomes-v1.jsonl`` holds one :class:`IndexRow` per line of ``simulations.jsonl``,
in the same order, as a JSON array: the byte offset just past the line and the record's
:class:`UnitOutcome` (about 70 bytes). The one writer of a run (:class:`tauguard.store.RecordWriter`) appends a
row after each record it makes durable, and rebuilds the index when it opens a run whose index
does not match its records (runs written before the index, imported runs, a writer killed
between the two appends). Readers trust the index only when its last offset is the size of
``simulations.jsonl``; otherwise they parse the records (:func:`tauguard.store.load_run`), so a
missing or stale index can cost time, never correctness.

Rows are derived from the record as a reader parses it back from its stored line, so the index
and the records always agree. Imports neither tau2 nor litellm.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import NamedTuple

from pydantic import TypeAdapter, ValidationError

from tauguard.process.score import record_process
from tauguard.records import TrialRecord, is_success

# The format's version is in the name: a reader never trusts an index of another format.
INDEX = "outcomes-v1.jsonl"


class UnitOutcome(NamedTuple):
    """One (task, trial) record reduced to what the metrics read.

    A named tuple, stored as a JSON array: tens of thousands of them are read (and validated by
    pydantic) in milliseconds, where as many models would take a tenth of a second per run.
    """

    domain: str
    task_id: str
    trial: int
    simulated: bool
    policy_violation_task: bool
    error: bool  # an infrastructure error: excluded from every metric
    success: bool
    reward: float | None
    attacked: bool
    attack_success: bool | None
    guard_error: bool  # a guard event of the trial is a guard error
    # The stored process report (tauguard.process): valid, applicable and satisfied checks.
    process: tuple[bool, int, int] | None

    @property
    def key(self) -> tuple[str, str, int]:
        """The identity of a trial within a run."""
        return (self.domain, self.task_id, self.trial)


class IndexRow(NamedTuple):
    """One line of the index: a record's outcome, or a line loaders ignore (blank) or skip (unparsable)."""

    end: int  # byte offset just past the line in simulations.jsonl
    unit: UnitOutcome | None
    skipped: bool  # the line is not a parsable record (counted in Run.skipped_lines)


_ROWS = TypeAdapter(list[IndexRow])


def trial_success(record: TrialRecord) -> bool:
    """A trial's success: the record's ``success`` field, else tau2's reward criterion."""
    return record.success if record.success is not None else is_success(record.reward)


def unit_outcome(record: TrialRecord) -> UnitOutcome:
    """The :class:`UnitOutcome` of a record."""
    process = record_process(record)
    return UnitOutcome(
        domain=record.domain,
        task_id=record.task_id,
        trial=record.trial,
        simulated=record.simulated,
        policy_violation_task=record.policy_violation_task,
        error=record.error is not None,
        success=trial_success(record),
        reward=record.reward,
        attacked=record.attacked,
        attack_success=record.attack_success,
        guard_error=any(ev.is_guard_error for ev in record.guard_events),
        process=None if process is None else (process.valid, process.applicable, process.satisfied),
    )


def index_line(record_line: str, end: int) -> str:
    """The index line (no newline) of a stored record line that ends at byte ``end``."""
    if not record_line.strip():
        row = IndexRow(end, None, False)
    else:
        try:
            record = TrialRecord.model_validate_json(record_line, context={"conversation": False})
            row = IndexRow(end, unit_outcome(record), False)
        except (ValidationError, ValueError):
            row = IndexRow(end, None, True)
    return json.dumps(row, separators=(",", ":"), ensure_ascii=False)


def read_index(run_dir: Path, records_size: int) -> list[IndexRow] | None:
    """The index rows, or None when the index is missing, unreadable or not for ``records_size`` bytes of records."""
    path = Path(run_dir) / INDEX
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if not text.endswith("\n") and text:
        return None  # a row cut by a kill: stale
    body = text.rstrip("\n")
    try:
        rows = _ROWS.validate_json("[" + body.replace("\n", ",") + "]") if body else []
    except (ValidationError, ValueError):
        return None
    last = rows[-1].end if rows else 0
    return rows if last == records_size else None


def rebuild_index(run_dir: Path) -> int:
    """Rewrite the index from ``simulations.jsonl`` (atomically); return the records' size in bytes."""
    from tauguard.store import RECORDS

    run_dir = Path(run_dir)
    records = run_dir / RECORDS
    lines = []
    end = 0
    if records.exists():
        with open(records, "rb") as fh:
            for raw in fh:
                end += len(raw)
                lines.append(index_line(raw.decode("utf-8", errors="replace"), end))
    tmp = run_dir / (INDEX + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write("".join(line + "\n" for line in lines))
    os.replace(tmp, run_dir / INDEX)
    return end
