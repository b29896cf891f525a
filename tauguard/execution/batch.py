"""Executing a planned run: the pending (task, trial) units go to the driver
(:mod:`tauguard.execution.driver`), and each record it streams back is appended to the run's
JSONL by the run's one writer as it arrives. Units that already have an error-free record are
skipped, so a run killed at any moment resumes with no lost and no duplicated unit.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from tauguard.config import RunConfig
from tauguard.execution.concurrency import threaded
from tauguard.execution.driver import execute
from tauguard.execution.engines import WorkerLost
from tauguard.execution.unit import UnitSpec
from tauguard.execution.os_processes import Terminated, clean_joblib_folders, sigterm_as_interrupt
from tauguard.runs.records import Manifest, TrialRecord
from tauguard.secrets import scrub
from tauguard.runs.store import RecordWriter, RunLock, completed_keys, write_manifest
from tauguard.attacks.runtime import attack_spec


def now_iso() -> str:
    """UTC timestamp for manifests."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def units(manifest: Manifest, config: RunConfig, verbose: bool = False) -> list[UnitSpec]:
    """All (task, trial) units of a run."""
    out = []
    for trial in range(manifest.trials):
        for domain, ids in manifest.task_ids.items():
            for task_id in ids:
                out.append(
                    UnitSpec(
                        run_id=manifest.run_id, domain=domain, split=manifest.split, task_id=task_id, trial=trial,
                        seed=manifest.seed, strategy=manifest.strategy, strategy_options=manifest.strategy_options,
                        agent_llm=config.agent_llm, user_llm=config.user_llm, guard_llm=config.guard_llm,
                        llm_args=config.llm_args, max_steps=config.max_steps, max_errors=config.max_errors,
                        max_guard_retries=config.max_guard_retries, fault_profile=manifest.fault_profile,
                        attack=attack_spec(config), sim_feedback=manifest.sim_feedback or "oracle",
                        verbose=verbose, parent_pid=os.getpid(), rate_limits=config.rate_limits,
                        rate_share=1 if config.backend == "threading" else config.workers,
                        max_retries=config.max_retries, cache=config.cache, no_key=config.no_key,
                    )
                )
    return out


@dataclass
class Progress:
    """Counts reported to the progress display after each unit."""

    total: int
    done: int = 0
    passed: int = 0
    scored: int = 0
    errors: int = 0
    first_error: str | None = None  # the first line of this session's first infrastructure error
    started: float = field(default_factory=time.perf_counter)

    def update(self, record: TrialRecord) -> None:
        """Account one finished unit."""
        self.done += 1
        if record.error is not None:
            self.errors += 1
            if self.first_error is None:
                self.first_error = next((ln.strip() for ln in record.error.splitlines() if ln.strip()), "error")
        else:
            self.scored += 1
            self.passed += int(bool(record.success))

    @property
    def pass_rate(self) -> float | None:
        """Share of scored units that passed so far."""
        return self.passed / self.scored if self.scored else None


def record_cost(record: TrialRecord) -> float:
    """USD a record cost, all roles (unknown costs count as 0)."""
    return sum(u.cost or 0.0 for u in record.usage.values())


def recorded_cost(run_dir: Path) -> float:
    """USD already recorded in a run folder (latest record per unit, errors included)."""
    from tauguard.runs.store import iter_records, latest_records

    records, _ = iter_records(run_dir, conversations=False)
    return sum(record_cost(r) for r in latest_records(records))


@dataclass
class Budget:
    """``--max-cost``: no new simulation once the recorded cost reaches the cap."""

    cap: float | None
    spent: float = 0.0

    @property
    def reached(self) -> bool:
        """Whether the cap is reached."""
        return self.cap is not None and self.spent >= self.cap

    def may_start(self) -> bool:
        """Whether another simulation may start."""
        return not self.reached

    def add(self, record: TrialRecord) -> None:
        """Account one finished unit."""
        self.spent += record_cost(record)

    def reason(self) -> str:
        """The manifest's stop reason."""
        return (
            f"max cost ${self.cap:.2f} reached (${self.spent:.2f} recorded); "
            "resume with a higher --max-cost to continue"
        )


class RunWriteError(RuntimeError):
    """The run folder could not be written mid-run (disk full, read-only, I/O error): the run
    stops; what was recorded stays and ``--resume`` continues once the disk is fixed."""


@contextlib.contextmanager
def _writing(run_dir: Path) -> Iterator[None]:
    """Turn an OSError of the run folder's files into :class:`RunWriteError` (one line)."""
    try:
        yield
    except OSError as exc:
        raise RunWriteError(f"cannot write run folder {run_dir} ({exc.strerror or exc}); what was recorded stays") from None


def run_batch(
    run_dir: Path,
    manifest: Manifest,
    config: RunConfig,
    lock: RunLock,
    on_record: Callable[[TrialRecord, Progress], None] | None = None,
    on_start: Callable[[int], None] | None = None,
    verbose: bool = False,
) -> Progress:
    """Execute the pending units of a run into ``run_dir`` (whose writer ``lock`` the caller
    holds; it is released here). SIGTERM is handled like Ctrl-C: the manifest says
    ``interrupted`` and KeyboardInterrupt propagates."""
    try:
        clean_joblib_folders()  # leftovers of killed runs (their owners are gone)
        all_units = units(manifest, config, verbose=verbose)
        done = completed_keys(run_dir, manifest)
        pending = [u for u in all_units if u.key not in done]
        progress = Progress(total=len(all_units), done=len(all_units) - len(pending))
        manifest.status = "running"
        manifest.stop_reason = None
        budget = Budget(config.max_cost, recorded_cost(run_dir))
        manifest.updated_at = now_iso()
        with _writing(run_dir):
            write_manifest(run_dir, manifest)
            writer = RecordWriter(run_dir)
        start = time.perf_counter()
        stream: Iterator[dict[str, Any]] = iter(())
        try:
            with sigterm_as_interrupt():
                is_threaded = threaded(config.agent_llm, config.user_llm, config.guard_llm)
                # Workers are started (forked) before the caller's progress display starts
                # its thread (see engines.fork).
                if budget.may_start():
                    stream = execute(
                        pending, config.workers, config.backend, config.concurrency, is_threaded, budget.may_start,
                        config.address,
                    )
                if on_start is not None:
                    on_start(progress.done)
                for raw in stream:
                    # Scrubbed once here, so progress lines, callbacks and the file never
                    # see a credential a provider echoed back.
                    record = TrialRecord.model_validate_json(scrub(json.dumps(raw)))
                    with _writing(run_dir):
                        writer.write(record)
                    progress.update(record)
                    if on_record is not None:
                        on_record(record, progress)
                    budget.add(record)
                    if not budget.may_start() and not is_threaded:
                        break  # processes cannot be told to stop starting units: stop here
                if budget.reached and progress.done < progress.total:
                    manifest.status = "interrupted"
                    manifest.stop_reason = budget.reason()
                elif progress.done < progress.total:
                    # The engine's stream ended early without an error: jobs lost with their
                    # worker (cluster engines) are the only known cause.
                    manifest.status = "interrupted"
                    manifest.stop_reason = f"{progress.total - progress.done} units not recorded (lost with their worker); resume to run them"
                elif progress.errors:
                    # Every unit ran, but some ended in an infrastructure error, not a task
                    # outcome: the run is not complete (the CLI exits 3) and says so itself.
                    manifest.status = "incomplete"
                    first = (progress.first_error or "")[:160]
                    manifest.stop_reason = (
                        f"{progress.errors} of {progress.total} units ended in an infrastructure error, not a task outcome"
                        + (f" (first: {first})" if first else "") + "; resume to re-run them"
                    )
                else:
                    manifest.status = "completed"
                    manifest.stop_reason = None
        except KeyboardInterrupt as exc:
            manifest.status = "interrupted"
            how = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C (SIGINT)"
            manifest.stop_reason = f"interrupted by {how} at {progress.done} of {progress.total} units"
            raise
        except WorkerLost as exc:
            manifest.status = "interrupted"
            manifest.stop_reason = str(exc)
            raise
        except RunWriteError as exc:  # the folder itself failed: resume once the disk is fixed
            manifest.status = "failed"
            manifest.stop_reason = str(exc)
            raise
        except BaseException:
            manifest.status = "failed"
            raise
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()  # stops the engine's workers instead of letting them finish queued jobs
            manifest.wall_time_s += time.perf_counter() - start
            manifest.updated_at = now_iso()
            # After a stop (disk full, read-only, an interrupt) these may fail too: the
            # records on disk are what a resume trusts, so the error that stopped the run is
            # the one reported. After a normal end a failure here is the error.
            ended = manifest.status in ("completed", "incomplete")  # a normal end
            with _writing(run_dir) if ended else contextlib.suppress(OSError):
                writer.close()
            with _writing(run_dir) if ended else contextlib.suppress(OSError):
                write_manifest(run_dir, manifest)
            clean_joblib_folders()
    finally:
        lock.release()
    return progress
