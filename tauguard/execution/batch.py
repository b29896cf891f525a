"""Executing a planned run: schedule (task, trial) units over a joblib backend and stream
each returned record to the run's one writer.

The parent process hands small descriptors to joblib workers and appends each returned
record to the run's JSONL as it arrives. Units that already have an error-free record are
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
from tauguard.execution.forkpool import FORK, WorkerLost
from tauguard.execution.plan import UnitSpec, by_task, deal
from tauguard.execution.processes import Terminated, clean_joblib_folders, exit_with_parent, sigterm_as_interrupt
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


def execute(
    pending: list[UnitSpec], workers: int, backend: str, concurrency: int | None = None, threaded: bool = False,
    may_start: Callable[[], bool] | None = None, address: str | None = None,
) -> Iterator[dict[str, Any]]:
    """Run units in parallel, yielding records as they finish.

    ``threaded`` (a real LLM is in play): ``concurrency`` simulations in flight as threads,
    in this process (``workers`` 1) or in ``workers`` processes (see ``concurrency``).
    Otherwise (sim mode, CPU bound) units are grouped by task over joblib processes: one
    job runs a task's pending trials, so the worker's per-task caches serve every trial.
    ``ray``/``dask`` run the same jobs on a cluster (at ``address``, or a local one).
    """
    from tauguard.execution import concurrency as cc
    from tauguard.execution.simulate import run_units

    if not pending:
        return iter(())
    if backend == FORK and workers > 1:
        return _forked(pending, workers, concurrency, threaded, may_start)

    from tauguard.execution.engines import is_cluster, run_on_cluster

    if is_cluster(backend):
        return run_on_cluster(backend, pending, workers, address, threaded, concurrency, may_start)
    if threaded:
        inflight = concurrency or cc.default_concurrency(workers, True)
        if workers == 1 or backend == "threading" or inflight <= 1:
            return cc.run_threads(pending, inflight, may_start)
        return cc.run_processes_of_threads(pending, workers, inflight, backend)
    jobs = by_task(pending)
    if workers == 1:
        return (rec for job in jobs for rec in run_units(job))
    # joblib (and the numpy it imports) only where its backends run the units: a forked or
    # one-process sim run never imports it.
    from joblib import Parallel, delayed

    for return_as in ("generator_unordered", "generator"):
        with _worker_setup(backend):
            try:
                parallel = Parallel(n_jobs=workers, backend=backend, return_as=return_as, batch_size=1)
            except ValueError:
                continue  # this backend cannot stream results this way
            batches = parallel(delayed(run_units)(job) for job in jobs)
        return (rec for batch in batches for rec in batch)
    return _chunked(jobs, workers, backend)


class _Stream:
    """Records from a fork pool; closing it stops the workers (at once if not exhausted)."""

    def __init__(self, pool: Any, records: Iterator[dict[str, Any]]) -> None:
        self._pool, self._records, self._finished = pool, records, False

    def __iter__(self) -> "_Stream":
        return self

    def __next__(self) -> dict[str, Any]:
        try:
            return next(self._records)
        except StopIteration:
            self._finished = True
            raise

    def close(self) -> None:
        """Stop the workers."""
        self._pool.close(cancel=not self._finished)


def _forked(
    pending: list[UnitSpec], workers: int, concurrency: int | None, threaded: bool,
    may_start: Callable[[], bool] | None,
) -> Iterator[dict[str, Any]]:
    # Warm this process, then fork: workers share the warm state (see forkpool).
    from tauguard.execution import concurrency as cc
    from tauguard.execution.forkpool import ForkPool
    from tauguard.execution.simulate import prepare

    prepare(pending)
    if threaded:
        inflight = concurrency or cc.default_concurrency(workers, True)
        shares = deal(pending, min(workers, inflight))
        pool = ForkPool(len(shares))
        threads = max(1, inflight // len(shares))
        return _Stream(pool, pool.run(shares, threads, may_start))
    pool = ForkPool(workers)
    return _Stream(pool, pool.run(sim_jobs(pending, workers), 1, may_start))


def sim_jobs(pending: list[UnitSpec], workers: int) -> list[list[UnitSpec]]:
    """Sim-mode jobs: a task's trials together (one worker's per-task caches serve them all),
    split into smaller jobs, down to single (task, trial) units, when there are too few tasks
    to keep every worker busy (e.g. one task with many trials)."""
    size = max(1, -(-len(pending) // (4 * workers)))
    return [units[i : i + size] for units in by_task(pending) for i in range(0, len(units), size)]


def _worker_setup(backend: str) -> Any:
    """For loky, every worker watches the run's process from its start (not only once it gets a
    job): an idle worker would otherwise outlive a killed run for loky's 300 s idle timeout."""
    if backend != "loky":
        return contextlib.nullcontext()
    from joblib import parallel_config

    return parallel_config(backend="loky", initializer=exit_with_parent, initargs=(os.getpid(),))


def _chunked(jobs: list[list[UnitSpec]], workers: int, backend: str) -> Iterator[dict[str, Any]]:
    # Backends that only return lists (multiprocessing): small chunks keep records flowing
    # to disk instead of all arriving at the end.
    from joblib import Parallel, delayed

    from tauguard.execution.simulate import run_units

    size = max(workers * 2, 1)
    with Parallel(n_jobs=workers, backend=backend) as parallel:
        for i in range(0, len(jobs), size):
            for batch in parallel(delayed(run_units)(job) for job in jobs[i : i + size]):
                yield from batch


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
                from tauguard.execution.concurrency import threaded

                is_threaded = threaded(config.agent_llm, config.user_llm, config.guard_llm)
                # Workers are started (forked) before the caller's progress display starts
                # its thread (see forkpool).
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
                else:
                    manifest.status = "completed"
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
                close()  # stops joblib's workers instead of letting them finish queued jobs
            manifest.wall_time_s += time.perf_counter() - start
            manifest.updated_at = now_iso()
            # After a stop (disk full, read-only, an interrupt) these may fail too: the
            # records on disk are what a resume trusts, so the error that stopped the run is
            # the one reported. After a normal end a failure here is the error.
            ended = manifest.status == "completed"
            with _writing(run_dir) if ended else contextlib.suppress(OSError):
                writer.close()
            with _writing(run_dir) if ended else contextlib.suppress(OSError):
                write_manifest(run_dir, manifest)
            clean_joblib_folders()
    finally:
        lock.release()
    return progress
