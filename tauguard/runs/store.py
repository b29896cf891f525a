"""Crash-safe run directories: write, resume and load runs.

Records are appended to ``simulations.jsonl`` one line at a time, flushed and fsynced,
so a run killed at any moment (even ``kill -9``) loses at most the line being written;
that truncated line is ignored on load and its unit re-run on ``--resume``.
The manifest is replaced atomically (write to a temp file, then rename). A new run folder is
built under a hidden temporary name and renamed into place once its manifest is written, so a
kill at any point leaves either no run folder or a resumable one. One process at a time writes
a run folder: it holds an OS lock (``flock``) on ``.lock`` in the folder, which the kernel
releases when the process dies; readers may ask who holds it (:func:`lock_holder`).

Imports neither tau2 nor litellm.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, TypeVar

from pydantic import ValidationError

from tauguard.errors import TauguardInputError
from tauguard.gc_pause import gc_paused
from tauguard.runs.records import MANIFEST, RECORDS, USAGE_ROLES, Manifest, TrialRecord, record_line
from tauguard.runs.run_files import (
    MAX_LOCK_BYTES,
    MAX_MANIFEST_BYTES,
    MAX_RECORDS_BYTES,
    RunFileError,
    RunLoadError as RunLoadError,  # re-exported: the class callers catch
    check_manifest_numbers,
    check_mode,
    check_regular_or_absent,
    iter_lines,
    open_run_file,
    read_run_file,
)
from tauguard.secrets import scrub

if TYPE_CHECKING:
    import pandas as pd

    from tauguard.runs.outcome_index import IndexRow, UnitOutcome

T = TypeVar("T")

LOCK = ".lock"
_CREATING = ".creating-"  # suffix of a run folder being built: ".<run_id>.creating-<pid>"


class RunFolderError(TauguardInputError):
    """A run folder cannot be written: it exists, is locked by another writer, or cannot be made."""


@dataclass
class Run:
    """A loaded run: its manifest and its latest record per (domain, task, trial)."""

    path: Path
    manifest: Manifest
    records: list[TrialRecord]
    skipped_lines: int = 0  # truncated or unparsable lines that were ignored
    live_pid: int | None = None  # the PID writing the run right now, if any
    # Set when the run was loaded from its outcome index (load_run(records=False)); ``records``
    # is then empty. Read outcomes through unit_outcomes(), which works either way.
    units: list[UnitOutcome] | None = None
    # With ``units``: the byte span of each unit's record line in simulations.jsonl (read_record
    # reads it back) and the line's index in the file (its row in the tallies file).
    spans: list[tuple[int, int]] | None = None
    lines: list[int] | None = None
    from_index: bool = False  # units came from a fresh outcome index (not from streaming the records)
    _derived_units: tuple[list[TrialRecord], int, list[UnitOutcome]] | None = field(
        default=None, repr=False, compare=False
    )
    # Values derived from the units, keyed by name (e.g. the task outcomes): a report reduces the
    # same run for a dozen comparisons; each is computed once per units list.
    _derived: dict[str, tuple[list[UnitOutcome], object]] = field(default_factory=dict, repr=False, compare=False)

    def derived(self, name: str, compute: Callable[[list[UnitOutcome]], T]) -> T:
        """``compute(self.unit_outcomes())``, computed once per units list (callers must not mutate it)."""
        units = self.unit_outcomes()
        hit = self._derived.get(name)
        if hit is None or hit[0] is not units:
            hit = self._derived[name] = (units, compute(units))
        return hit[1]  # type: ignore[return-value]

    def unit_outcomes(self) -> list[UnitOutcome]:
        """The latest record of each (domain, task, trial) reduced to its outcome."""
        if self.units is not None:
            return self.units
        from tauguard.runs.outcome_index import unit_outcome

        # Reports reduce a run many times (per slice, per comparison): derive the units once
        # per records list.
        cached = self._derived_units
        if cached is None or cached[0] is not self.records or cached[1] != len(self.records):
            cached = self._derived_units = (self.records, len(self.records), [unit_outcome(r) for r in self.records])
        return cached[2]

    @property
    def live(self) -> bool:
        """Whether a process is still writing this run (its figures are partial)."""
        return self.live_pid is not None


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def busy_error(run_dir: Path, holder: int | None) -> RunFolderError:
    """The one-line error for a run folder another process is writing."""
    who = f"process {holder}" if holder and holder > 0 else "another process"
    return RunFolderError(f"run {run_dir} is being written by {who}; wait for it to finish (or stop it) before resuming")


class RunLock:
    """The exclusive writer lock of a run folder (released by :meth:`release` or process death)."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, run_dir: Path) -> "RunLock":
        """Lock ``run_dir`` for writing, or raise :class:`RunFolderError` naming the holder."""
        path = Path(run_dir) / LOCK
        check_regular_or_absent(path)  # a FIFO or device there would block or swallow the PID
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NONBLOCK", 0), 0o644)
        try:
            _check_lock_fd(fd, path)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except RunFileError:
            os.close(fd)
            raise
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            raise busy_error(run_dir, _read_pid(path)) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        os.fsync(fd)
        return cls(fd)

    def release(self) -> None:
        """Release the lock (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None


def _check_lock_fd(fd: int, path: Path) -> None:
    check_mode(os.fstat(fd).st_mode, path, "use")


def _read_pid(path: Path) -> int | None:
    try:
        data = read_run_file(path, MAX_LOCK_BYTES)
    except (OSError, RunFileError):
        return None
    text = (data or b"").decode("utf-8", errors="replace").strip()
    return int(text) if text.isdigit() else None


def lock_holder(run_dir: str | Path) -> int | None:
    """The PID of the process writing ``run_dir`` now, or None when no writer is alive."""
    path = Path(run_dir) / LOCK
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block
    except OSError:
        return None
    try:
        _check_lock_fd(fd, path)
    except BaseException:
        os.close(fd)
        raise
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return _read_pid(path) or -1
    finally:
        os.close(fd)  # also drops the shared lock if it was taken
    return None


def pid_alive(pid: int) -> bool:
    """Whether a process with this PID exists (possibly owned by another user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale_builds(out: Path, run_id: str) -> None:
    # Folders left by a creator killed before its rename: never a run, safe to drop once
    # their creator is gone.
    for tmp in out.glob(f".{run_id}{_CREATING}*"):
        pid = tmp.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not pid_alive(int(pid)):
            shutil.rmtree(tmp, ignore_errors=True)


def create_run_dir(out: Path, run_id: str, manifest: Manifest) -> RunLock:
    """Create ``out/run_id`` with its manifest atomically and return its writer lock.

    The folder is built as ``out/.<run_id>.creating-<pid>`` (lock taken, manifest written and
    fsynced) and renamed into place: the run folder never exists without a manifest.
    """
    out = Path(out)
    final = out / run_id
    if final.exists() or final.is_symlink():
        raise RunFolderError(f"run directory {final} already exists; pick another --name or continue it with --resume {final}")
    try:
        out.mkdir(parents=True, exist_ok=True)
        _remove_stale_builds(out, run_id)
        tmp = out / f".{run_id}{_CREATING}{os.getpid()}"
        tmp.mkdir()
    except OSError as exc:
        raise RunFolderError(f"cannot create run directory {final}: {exc.strerror}") from None
    lock = RunLock.acquire(tmp)
    try:
        write_manifest(tmp, manifest)
        os.rename(tmp, final)
        _fsync_dir(out)
    except OSError as exc:
        lock.release()
        shutil.rmtree(tmp, ignore_errors=True)
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
            raise RunFolderError(f"run directory {final} already exists; continue it with --resume {final}") from None
        raise RunFolderError(f"cannot create run directory {final}: {exc.strerror}") from None
    return lock


def write_manifest(run_dir: Path, manifest: Manifest) -> None:
    """Atomically replace the run's manifest."""
    run_dir.mkdir(parents=True, exist_ok=True)
    tmp = run_dir / (MANIFEST + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(scrub(manifest.model_dump_json(indent=2)))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, run_dir / MANIFEST)


def read_manifest(run_dir: Path) -> Manifest:
    """Read a run's manifest, raising :class:`RunLoadError` with a one-line reason."""
    path = Path(run_dir) / MANIFEST
    if not Path(run_dir).is_dir():
        raise RunLoadError(f"run directory not found: {run_dir}")
    if not path.exists() and not path.is_symlink():
        raise RunLoadError(f"not a tauguard run (no {MANIFEST}): {run_dir}")
    try:
        data = read_run_file(path, MAX_MANIFEST_BYTES) or b""
        manifest = Manifest.model_validate_json(data.decode("utf-8"))
    except RunFileError:
        raise
    except (ValidationError, ValueError, OSError, RecursionError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise RunLoadError(f"corrupt manifest in {run_dir}: {first}") from None
    check_manifest_numbers(manifest.trials, manifest.task_ids, str(run_dir))
    return manifest


class RecordWriter:
    """Appends trial records durably; one instance per run, used by the parent process.

    It also keeps the run's outcome index (:mod:`tauguard.runs.outcome_index`) in step: rebuilt on
    open when it does not match the records, then one row appended after each durable record.
    """

    def __init__(self, run_dir: Path, compress: bool = True) -> None:
        from tauguard.runs.outcome_index import INDEX, TALLIES, read_index, read_tally_lines, rebuild_index

        self.path = Path(run_dir) / RECORDS
        self.compress = compress
        for name in (RECORDS, INDEX, TALLIES):
            check_regular_or_absent(self.path.parent / name)
        self._repair_tail()
        self._fh = open(self.path, "a", encoding="utf-8")
        self._end = self.path.stat().st_size
        run = self.path.parent
        if read_index(run, self._end) is None or read_tally_lines(run, self._end) is None:
            self._end = rebuild_index(run)
        self._index = open(run / INDEX, "a", encoding="utf-8")
        self._tallies = open(run / TALLIES, "a", encoding="utf-8")

    def _repair_tail(self) -> None:
        # A kill during a write leaves a line without its newline; cut it so the next
        # record starts on a line of its own. The cut unit is re-run by resume.
        if not self.path.exists():
            return
        with open(self.path, "rb+") as fh:
            # Read only the tail: a big run's records do not fit in memory on every resume.
            size = fh.seek(0, os.SEEK_END)
            pos = size
            while pos > 0:
                start = max(0, pos - (1 << 16))
                fh.seek(start)
                chunk = fh.read(pos - start)
                if pos == size and chunk.endswith(b"\n"):
                    return
                cut = chunk.rfind(b"\n")
                if cut >= 0:
                    fh.truncate(start + cut + 1)
                    return
                pos = start
            if size:
                fh.truncate(0)

    def write(self, record: TrialRecord) -> None:
        """Append one record (credential values scrubbed) and make it durable before returning."""
        from tauguard.runs.outcome_index import index_lines

        line = record_line(record, self.compress, scrub=scrub) + "\n"
        self._fh.write(line)
        self._fh.flush()
        os.fsync(self._fh.fileno())
        # The index and tally rows follow the durable record and are not fsynced: an index that
        # lags its records is stale, and readers then parse the records instead.
        self._end += len(line.encode("utf-8"))
        row, tally = index_lines(line, self._end)
        self._index.write(row + "\n")
        self._index.flush()
        self._tallies.write(tally + "\n")
        self._tallies.flush()

    def close(self) -> None:
        """Close the files."""
        self._fh.close()
        self._index.close()
        self._tallies.close()


def iter_records(run_dir: Path, conversations: bool = True) -> tuple[list[TrialRecord], int]:
    """All parsable records in file order, and how many lines were skipped.

    ``conversations=False`` leaves each record's ``simulation`` out (never decompressed).
    """
    context = {"conversation": conversations}
    path = Path(run_dir) / RECORDS
    records: list[TrialRecord] = []
    skipped = 0
    fh = open_run_file(path, MAX_RECORDS_BYTES)
    if fh is None:
        return records, 0
    try:
        with fh:
            for raw in iter_lines(fh, path):
                line = raw.decode("utf-8", errors="replace")
                if not line.strip():
                    continue
                try:
                    records.append(TrialRecord.model_validate_json(line, context=context))
                except (ValidationError, ValueError):
                    skipped += 1
    except OSError as exc:
        raise RunLoadError(f"cannot read {path}: {exc.strerror}") from None
    return records, skipped


def foreign(manifest: Manifest, run_id: str | None, domain: str, trial: int) -> str | None:
    """Why a record (its run id, when known, domain and trial) is not one of this run's units, or None."""
    if run_id is not None and run_id != manifest.run_id:
        return f"run id '{run_id}', not '{manifest.run_id}'"
    if domain not in manifest.domains:
        return f"domain '{domain}', not {'/'.join(manifest.domains)}"
    if not 0 <= trial < manifest.trials:
        return f"trial {trial}, outside 0..{manifest.trials - 1}"
    return None


def refuse_foreign(run_dir: Path, manifest: Manifest, records: Iterable[TrialRecord | UnitOutcome]) -> None:
    """Raise :class:`RunLoadError` (one line) when a record belongs to another run: a run
    folder's figures and its resume must never mix in units of another run, domain or trial range."""
    for rec in records:
        why = foreign(manifest, getattr(rec, "run_id", None), rec.domain, rec.trial)
        if why is not None:
            raise RunLoadError(
                f"run {run_dir} holds a record of another run ({rec.domain}/{rec.task_id} trial {rec.trial}: {why}); "
                f"remove it from {RECORDS} (a run folder holds its own records only)"
            )


def refuse_foreign_units(run_dir: Path, manifest: Manifest, units: list[UnitOutcome]) -> None:
    """:func:`refuse_foreign` for index rows (which carry no run id), checking the sets of their
    domains and trials first: 10^5 units cost two set comprehensions, not 10^5 calls."""
    domains = {u[0] for u in units}
    trials = {u[2] for u in units}
    if domains <= set(manifest.domains) and all(0 <= t < manifest.trials for t in trials):
        return
    refuse_foreign(run_dir, manifest, units)


def latest_records(records: Iterable[TrialRecord]) -> list[TrialRecord]:
    """Keep the last record of each (domain, task, trial), in first-seen order."""
    latest: dict[tuple[str, str, int], TrialRecord] = {}
    for rec in records:
        latest[rec.key] = rec
    return list(latest.values())


def load_run(run_dir: str | Path, conversations: bool = True, records: bool = True) -> Run:
    """Load a run directory (manifest + deduplicated records).

    ``conversations=False``: records without their conversation (``simulation`` is None),
    much faster on large runs; outcomes, guard events, faults and usage are all there.
    ``records=False``: only each unit's outcome and record span (:attr:`Run.units`,
    :attr:`Run.spans`, :attr:`Run.lines`; ``records`` stays empty), read from the run's outcome
    index when it matches the records (what `compare`, `check`, `show` and `report` need, without
    parsing a record); otherwise computed from the records one line at a time, none kept.
    """
    with gc_paused():  # 10^5 records or index rows: acyclic objects (tauguard.gc_pause)
        return _load_run(Path(run_dir), conversations, records)


def _load_run(run_dir: Path, conversations: bool, records: bool) -> Run:
    manifest = read_manifest(run_dir)
    live_pid = lock_holder(run_dir)
    if not records:
        units, spans, lines, skipped, fresh = _load_units(run_dir, manifest)
        refuse_foreign_units(run_dir, manifest, units)  # the index has no run id: the writer checked it
        return Run(path=run_dir, manifest=manifest, records=[], skipped_lines=skipped, live_pid=live_pid,
                   units=units, spans=spans, lines=lines, from_index=fresh)
    parsed, skipped = iter_records(run_dir, conversations)
    refuse_foreign(run_dir, manifest, parsed)
    return Run(
        path=run_dir, manifest=manifest, records=latest_records(parsed), skipped_lines=skipped,
        live_pid=live_pid,
    )


def records_size(run_dir: Path) -> int:
    """The size of a run's simulations.jsonl in bytes (0 when it does not exist yet)."""
    path = Path(run_dir) / RECORDS
    try:
        info = path.stat()
    except FileNotFoundError:
        return 0
    except OSError as exc:
        raise RunLoadError(f"cannot read {path}: {exc.strerror}") from None
    check_mode(info.st_mode, path)
    return info.st_size


def _load_units(
    run_dir: Path, manifest: Manifest
) -> tuple[list[UnitOutcome], list[tuple[int, int]], list[int], int, bool]:
    """The latest unit outcomes, their record spans and line numbers, the skipped lines, and whether
    they came from the outcome index (when it is fresh; else from the records, streamed, each
    checked to belong to the run as it goes by)."""
    from tauguard.runs.outcome_index import read_index, scan_records

    rows: list[IndexRow] | None = read_index(run_dir, records_size(run_dir))
    fresh = rows is not None
    if rows is None:
        try:
            rows = scan_records(run_dir, check=lambda rec: refuse_foreign(run_dir, manifest, [rec]))[0]
        except OSError as exc:
            raise RunLoadError(f"cannot read {run_dir / RECORDS}: {exc.strerror}") from None
    # C-level passes (map, zip, dict) only: at 10^5 rows per run a Python loop over the rows cost
    # as much as decoding the index.
    ends = list(map(_END, rows))
    starts = [0, *ends[:-1]]
    all_units = list(map(_UNIT, rows))
    lines = [i for i, unit in enumerate(all_units) if unit is not None]
    skipped = sum(1 for row in rows if row[1] is None and row[2]) if len(lines) < len(rows) else 0
    if not lines:
        return [], [], [], skipped, fresh
    units = all_units if len(lines) == len(rows) else [all_units[i] for i in lines]
    # The latest record of each (domain, task, trial): a dict keeps each key's first position and
    # its last value.
    latest = dict(zip(map(_KEY, units), lines))
    if len(latest) < len(units):
        lines = list(latest.values())
        units = [all_units[i] for i in lines]
    spans = list(zip(map(starts.__getitem__, lines), map(ends.__getitem__, lines)))
    return units, spans, lines, skipped, fresh


_END, _UNIT = itemgetter(0), itemgetter(1)  # IndexRow's fields
_KEY = itemgetter(0, 1, 2)  # UnitOutcome.key


def read_record(run: Run, span: tuple[int, int], conversation: bool = True) -> TrialRecord:
    """The record stored at ``span`` (from :attr:`Run.spans`) of a run's simulations.jsonl."""
    path = run.path / RECORDS
    try:
        fh = open_run_file(path, MAX_RECORDS_BYTES)
        if fh is None:
            raise RunLoadError(f"cannot read {path}: it is gone")
        with fh:
            fh.seek(span[0])
            raw = fh.read(span[1] - span[0])
    except OSError as exc:
        raise RunLoadError(f"cannot read {path}: {exc.strerror}") from None
    return TrialRecord.model_validate_json(raw.decode("utf-8", errors="replace"), context={"conversation": conversation})


def load_run_frame(run_dir: str | Path) -> "pd.DataFrame":
    """Load a run as a pandas DataFrame, one row per (task, trial).

    Columns: run_id, strategy, domain, task_id, trial, seed, reward, success,
    termination_reason, policy_violation_task, attacked, attack_success, error,
    duration_s, guard_events (count), n_verify/n_revise/n_block, faults_injected,
    faults_intercepted, and cost/tokens per role (``agent_cost``, ``user_prompt_tokens``, ...).
    """
    import pandas as pd

    run = load_run(run_dir, conversations=False)
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
            "faults_prevented": sum(f.reached is False for f in rec.faults),
        }
        for verdict in ("VERIFY", "REVISE", "BLOCK"):
            row[f"n_{verdict.lower()}"] = sum(
                1 for e in rec.guard_events if e.verdict is not None and e.verdict.value == verdict
            )
        for role in USAGE_ROLES:
            usage = rec.usage.get(role)
            row[f"{role}_cost"] = usage.cost if usage else 0.0
            row[f"{role}_prompt_tokens"] = usage.prompt_tokens if usage else 0
            row[f"{role}_completion_tokens"] = usage.completion_tokens if usage else 0
        rows.append(row)
    return pd.DataFrame(rows)


def completed_keys(run_dir: Path, manifest: Manifest | None = None) -> set[tuple[str, str, int]]:
    """Keys of units that finished without an infrastructure error (skipped by resume);
    with the run's ``manifest``, a record of another run is refused (:func:`refuse_foreign`)."""
    records, _ = iter_records(run_dir, conversations=False)
    if manifest is not None:
        refuse_foreign(run_dir, manifest, records)
    return {r.key for r in latest_records(records) if r.error is None}


def dump_json(obj: object) -> str:
    """JSON with stable key order, for machine-readable CLI output."""
    return json.dumps(obj, indent=2, sort_keys=False, default=str)
