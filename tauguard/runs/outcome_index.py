"""The per-run outcome index: what `compare`, `check` and metrics need of each record, in a file of its own.

``runs/<run-id>/outcomes-v1.jsonl`` holds one :class:`IndexRow` per line of ``simulations.jsonl``,
in the same order, as a JSON array: the byte offset just past the line and the record's
:class:`UnitOutcome` (about 70 bytes). Beside it, ``tallies-v1.jsonl`` holds one row per line too:
the same offset and the record's :class:`RecordTally` (what `show` and `report` count besides
outcomes: guard verdicts, faults, usage, errors), so `show` parses no record, `report` only the few
it displays (by offset), and `compare` / `check` never read the tallies. The one writer of a run (:class:`tauguard.runs.store.RecordWriter`) appends a
row after each record it makes durable, and rebuilds the index when it opens a run whose index
does not match its records (runs written before the index, imported runs, a writer killed
between the two appends). Readers trust the index only when its last offset is the size of
``simulations.jsonl``; otherwise they parse the records (:func:`tauguard.runs.store.load_run`), so a
missing or stale index can cost time, never correctness.

Rows are derived from the record as a reader parses it back from its stored line, so the index
and the records always agree. Imports neither tau2 nor litellm.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from pydantic import TypeAdapter, ValidationError

from tauguard.process.score import record_process
from tauguard.runs.records import RECORDS, TrialRecord, is_success
from tauguard.runs.run_files import (
    MAX_INDEX_BYTES,
    MAX_RECORDS_BYTES,
    check_regular_or_absent,
    iter_lines,
    open_run_file,
    read_run_file,
)

# The format's version is in the name: a reader never trusts an index of another format.
INDEX = "outcomes-v1.jsonl"
TALLIES = "tallies-v1.jsonl"


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
    # Writes the task needed that a guard held and that never executed (the report's
    # ``blocked_write`` failures): such a trace stays in Step-/Trace-TCR even when it failed the
    # outcome (tauguard.analysis.metrics). Last with a default: rows written before it read as 0, as
    # their reports (rubric < 4) have no such check.
    guard_blocked: int = 0

    @property
    def key(self) -> tuple[str, str, int]:
        """The identity of a trial within a run."""
        return (self.domain, self.task_id, self.trial)


# A scheduled fault as the summary counts it: (fault class, applied, intercepted, reached or None).
FaultTally = Sequence[Any]
# One role's usage as the summary adds it up: (role, cost or None, prompt tokens, completion tokens, calls).
UsageTally = Sequence[Any]


class RecordTally(NamedTuple):
    """What a run's summary and report count of one record besides its outcome.

    Kept exact (each guard event's non-zero cost, not their sum) so that totals built from the
    index add the same numbers in the same order as totals built from the records.
    """

    error_line: str | None  # first line of the infrastructure error
    verdicts: Sequence[str]  # before_write verdicts, in order
    retry_exhausted: int
    guard_calls: int
    guard_costs: Sequence[float]  # non-zero guard event costs, in order
    faults: Sequence[FaultTally]
    usage: Sequence[UsageTally]
    duration_s: float
    attack_tactic: str | None
    attack_clause: str | None  # str(target["clause"]), "?" when absent; None when not attacked


class IndexRow(NamedTuple):
    """One line of the index: a record's outcome, or a line loaders ignore (blank) or skip (unparsable)."""

    end: int  # byte offset just past the line in simulations.jsonl
    unit: UnitOutcome | None
    skipped: bool  # the line is not a parsable record (counted in Run.skipped_lines)


_ROWS = TypeAdapter(list[IndexRow])
_DECODER: Any = None  # msgspec's decoder of the same rows, made on first use


def _decode_rows(body: bytes) -> list[IndexRow]:
    """The rows of an index file's text (its lines joined as one JSON array), validated.

    msgspec validates the rows against the same named tuples in C, about twice as fast as
    pydantic's ``TypeAdapter`` on 10^5 rows (the bulk of `compare` at 100x runs); pydantic
    decodes them where msgspec is not installed (an environment made before it became a
    dependency). Either raises ValueError on a malformed row.
    """
    global _DECODER
    if _DECODER is None:
        try:
            import msgspec
        except ImportError:  # same rows, slower
            _DECODER = False
        else:
            _DECODER = msgspec.json.Decoder(list[IndexRow])
    if _DECODER is False:
        try:
            return _ROWS.validate_json(body)
        except ValidationError as exc:
            raise ValueError(str(exc)) from None
    import msgspec

    try:
        rows: list[IndexRow] = _DECODER.decode(body)  # a Decoder(list[IndexRow]); _DECODER is Any
        return rows
    except msgspec.DecodeError as exc:  # malformed JSON or a row of another shape
        raise ValueError(str(exc)) from None


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
        guard_blocked=0 if process is None else process.blocked,
    )


def record_tally(record: TrialRecord) -> RecordTally:
    """The :class:`RecordTally` of a record."""
    events = record.guard_events
    attack = record.attack
    return RecordTally(
        error_line=None if record.error is None else record.error.splitlines()[0] if record.error else "",
        verdicts=tuple(ev.verdict.value for ev in events if ev.hook == "before_write" and ev.verdict is not None),
        retry_exhausted=sum(1 for ev in events if ev.hook == "retry_exhausted"),
        guard_calls=sum(ev.usage.llm_calls for ev in events),
        guard_costs=tuple(ev.usage.cost for ev in events if ev.usage.cost),
        faults=tuple((f.fault_class, f.applied, bool(f.intercepted), f.reached) for f in record.faults),
        usage=tuple((role, u.cost, u.prompt_tokens, u.completion_tokens, u.calls) for role, u in record.usage.items()),
        duration_s=record.duration_s,
        attack_tactic=None if attack is None else attack.tactic,
        attack_clause=None if attack is None else str(attack.target.get("clause", "?")),
    )


def index_rows(
    record_line: str, end: int, check: Callable[[TrialRecord], None] | None = None
) -> tuple[IndexRow, RecordTally | None]:
    """The :class:`IndexRow` and :class:`RecordTally` of a stored record line that ends at byte
    ``end`` (``check`` sees the parsed record first, and may raise)."""
    if not record_line.strip():
        return IndexRow(end, None, False), None
    try:
        record = TrialRecord.model_validate_json(record_line, context={"conversation": False})
    except (ValidationError, ValueError):
        return IndexRow(end, None, True), None
    if check is not None:
        check(record)
    return IndexRow(end, unit_outcome(record), False), record_tally(record)


def _dump(row: object) -> str:
    return json.dumps(row, separators=(",", ":"), ensure_ascii=False)


def index_lines(record_line: str, end: int) -> tuple[str, str]:
    """The index line and the tally line (no newlines) of a stored record line that ends at byte ``end``."""
    row, tally = index_rows(record_line, end)
    return _dump(row), _dump([end, tally])


def scan_records(
    run_dir: Path, check: Callable[[TrialRecord], None] | None = None
) -> tuple[list[IndexRow], list[RecordTally | None], int]:
    """The index rows and tallies of ``simulations.jsonl`` computed from the records, one line at a
    time (no record is kept; ``check`` sees each one), and the records' size in bytes."""
    rows, tallies = [], []
    end = 0
    path = Path(run_dir) / RECORDS
    fh = open_run_file(path, MAX_RECORDS_BYTES)
    if fh is not None:
        with fh:
            for raw in iter_lines(fh, path):
                end += len(raw)
                row, tally = index_rows(raw.decode("utf-8", errors="replace"), end, check)
                rows.append(row)
                tallies.append(tally)
    return rows, tallies, end


def read_index(run_dir: Path, records_size: int) -> list[IndexRow] | None:
    """The index rows, or None when the index is missing, unreadable or not for ``records_size`` bytes of records."""
    path = Path(run_dir) / INDEX
    try:
        text = read_run_file(path, MAX_INDEX_BYTES)
    except OSError:
        return None
    if text is None:
        return None
    if not text.endswith(b"\n") and text:
        return None  # a row cut by a kill: stale
    body = text.rstrip(b"\n")
    try:
        rows = _decode_rows(b"[" + body.replace(b"\n", b",") + b"]") if body else []
    except ValueError:  # malformed rows, or bytes that are not UTF-8
        return None
    last = rows[-1].end if rows else 0
    return rows if last == records_size else None


def read_tally_lines(run_dir: Path, records_size: int) -> list[str] | None:
    """The tallies file's rows, unparsed (:func:`parse_tally` parses one), or None when the file
    is missing, unreadable or not for ``records_size`` bytes of records.

    Kept as text: 100,000 rows take ~20 MB as strings and several times that parsed, and a
    summary needs one row at a time.
    """
    path = Path(run_dir) / TALLIES
    try:
        data = read_run_file(path, MAX_INDEX_BYTES)
        if data is None:
            return None
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if text and not text.endswith("\n"):
        return None  # a row cut by a kill: stale
    lines = text.splitlines()
    try:
        last = int(lines[-1][1 : lines[-1].index(",")]) if lines else 0
    except ValueError:
        return None
    return lines if last == records_size else None


def _json_loads() -> Callable[[str], Any]:
    """msgspec's untyped JSON decoder (the same lists, numbers and strings as ``json.loads``, about
    three times faster on a tally row: `show` parses one per record), else ``json.loads``."""
    try:
        import msgspec
    except ImportError:
        return json.loads
    decode = msgspec.json.decode

    def loads(text: str) -> Any:
        try:
            return decode(text)
        except msgspec.DecodeError as exc:
            raise ValueError(str(exc)) from None

    return loads


_LOADS: Callable[[str], Any] | None = None


def parse_tally(line: str) -> RecordTally | None:
    """One row of the tallies file (None for a line that is not a record); ValueError when malformed."""
    global _LOADS
    if _LOADS is None:
        _LOADS = _json_loads()
    try:
        _, data = _LOADS(line)
        # The lists json gives serve as the tally's sequences: converting them costs more than
        # reading them, on 100,000 rows.
        return None if data is None else RecordTally._make(data)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"malformed tally row: {exc}") from None


def rebuild_index(run_dir: Path) -> int:
    """Rewrite the index and the tallies from ``simulations.jsonl`` (atomically); return the records' size in bytes."""
    run_dir = Path(run_dir)
    rows, tallies, end = scan_records(run_dir)
    for name, lines in ((INDEX, (_dump(r) for r in rows)), (TALLIES, (_dump([r.end, t]) for r, t in zip(rows, tallies)))):
        tmp = run_dir / (name + ".tmp")
        check_regular_or_absent(tmp)
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.writelines(line + "\n" for line in lines)
        os.replace(tmp, run_dir / name)
    return end
