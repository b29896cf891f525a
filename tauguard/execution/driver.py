"""The one execution driver: pending (task, trial) units become jobs for one engine, and the
driver submits them (a bounded number in flight) and streams their records back, in completion
order, to the run's one writer.

Which engine, and the shape of its jobs, is decided once here (:func:`dispatch`):

- sim mode (CPU bound): units run one after another inside a job. Forked workers take a
  task's trials per job (split further when there are too few tasks to keep every worker
  busy, :func:`sim_jobs`); a loky/multiprocessing pool or a cluster one task's trials per job
  (a job's worker computes the task's caches once for all of them); this process
  (``--workers 1``) the same, one job after another;
- real LLM (I/O bound): simulations in flight as threads of a job. This process runs one job
  of every unit with ``--concurrency`` threads; forked or pooled workers each a share of the
  tasks with ``concurrency / workers`` threads; a cluster one unit per job, ``--concurrency``
  jobs in flight (the cluster schedules them).

A job whose worker a cluster lost is not recorded: its units stay pending for ``--resume``.
Imports neither tau2, litellm, joblib, Ray nor Dask (the engines and the workers do).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Callable, Generator, Iterator

from tauguard.config import FORK
from tauguard.errors import TauguardInputError
from tauguard.execution.concurrency import default_concurrency
from tauguard.execution.engines import INLINE_BACKENDS, Engine, describe, is_cluster
from tauguard.execution.error_line import first_line
from tauguard.execution.job import Job, Record
from tauguard.execution.unit import UnitSpec, by_task, deal
from tauguard.secrets import scrub

_WARNED_LOSSES = 5  # lost-job warnings printed one by one; the rest are counted
_WAIT_S = 1.0  # one wait for results; Ctrl-C and SIGTERM are handled between waits


class ClusterUnavailable(TauguardInputError):
    """The cluster at ``--address`` cannot be reached (or a local one cannot start); one line."""


@dataclass(frozen=True)
class Dispatch:
    """How a run's pending units execute: the engine to open, its jobs, how many in flight."""

    engine: str  # inline, fork, pool, ray or dask
    open_engine: Callable[[], Engine]
    jobs: list[Job]
    limit: int
    where: str | None = None  # a cluster engine: named in the error when it cannot open


def _jobs(groups: list[list[UnitSpec]], threads: int | None = None) -> list[Job]:
    return [Job(id=i, units=tuple(group), threads=threads) for i, group in enumerate(groups) if group]


def sim_jobs(pending: list[UnitSpec], workers: int) -> list[list[UnitSpec]]:
    """Sim-mode jobs of forked workers: a task's trials together (one worker's per-task caches
    serve them all), split into smaller jobs, down to single (task, trial) units, when there
    are too few tasks to keep every worker busy (e.g. one task with many trials)."""
    size = max(1, -(-len(pending) // (4 * workers)))
    return [units[i : i + size] for units in by_task(pending) for i in range(0, len(units), size)]


def dispatch(
    pending: list[UnitSpec], workers: int, backend: str, concurrency: int | None, threaded: bool,
    address: str | None = None,
) -> Dispatch:
    """The engine, jobs and in-flight bound for ``pending`` (see the module's docstring)."""
    inflight = (concurrency or default_concurrency(workers, True)) if threaded else workers
    if is_cluster(backend):
        return _cluster(pending, backend, workers, address, threaded, inflight)
    if workers == 1 or backend in INLINE_BACKENDS or (threaded and inflight <= 1 and backend != FORK):
        if threaded or (backend == "threading" and workers > 1):
            return Dispatch("inline", _inline, _jobs([pending], inflight), 1)
        return Dispatch("inline", _inline, _jobs(by_task(pending)), 1)
    if threaded:
        shares = deal(pending, min(workers, inflight))
        threads = max(1, inflight // len(shares))
        jobs, processes = _jobs(shares, threads), len(shares)
    else:
        jobs, processes = _jobs(sim_jobs(pending, workers) if backend == FORK else by_task(pending)), workers
    if backend == FORK:

        def open_fork() -> Engine:
            from tauguard.execution.engines.fork import ForkEngine
            from tauguard.execution.simulate import prepare

            prepare(pending)  # warm this process, then fork: the workers share the warm state
            return ForkEngine(processes)

        return Dispatch("fork", open_fork, jobs, 2 * processes)

    def open_pool() -> Engine:
        from tauguard.execution.engines.pool import PoolEngine

        return PoolEngine(backend, processes, streaming=threaded)

    return Dispatch("pool", open_pool, jobs, 2 * processes)


def _inline() -> Engine:
    from tauguard.execution.engines.inline import InlineEngine

    return InlineEngine()


def _cluster(
    pending: list[UnitSpec], backend: str, workers: int, address: str | None, threaded: bool, inflight: int,
) -> Dispatch:
    # Sim mode: a task's trials per job, at most 2 x workers queued. Real LLM: one unit per job,
    # --concurrency in flight.
    if threaded:
        if backend == "ray":  # a process per simulation: each holds its own rate limiter
            pending = [u.model_copy(update={"rate_share": max(1, inflight)}) for u in pending]
        jobs = _jobs([[unit] for unit in pending])
    else:
        inflight = 2 * workers
        jobs = _jobs(by_task(pending))

    def open_engine() -> Engine:
        if backend == "ray":
            from tauguard.execution.engines.ray_engine import RayEngine

            return RayEngine(address, workers, inflight, threaded)
        from tauguard.execution.engines.dask_engine import DaskEngine

        return DaskEngine(address, workers, inflight, threaded)

    return Dispatch(backend, open_engine, jobs, inflight, where=describe(backend, address, workers))


class Records:
    """The records of a run's jobs as they finish. Exhausting it closes the engine; closing it
    earlier (Ctrl-C, SIGTERM, a budget reached, an error) stops the jobs in flight at once.

    A process engine opens at once (forked workers are forked before the caller starts a
    thread); a cluster engine at the first record asked for, once the caller has said where
    the units go (starting or reaching a cluster takes a while)."""

    def __init__(self, plan: Dispatch, may_start: Callable[[], bool] | None) -> None:
        self._plan, self._may_start = plan, may_start
        self._engine: Engine | None = None
        self._records: Generator[Record, None, None] | None = None
        self._closed = False
        if plan.where is None:
            self._open()

    def _open(self) -> None:
        try:
            self._engine = self._plan.open_engine()
        except Exception as exc:
            if self._plan.where is None:
                raise
            raise ClusterUnavailable(f"cannot use {self._plan.where}: {scrub(first_line(exc)).rstrip('.')}") from None
        self._records = drive(self._engine, self._plan.jobs, self._plan.limit, self._may_start)

    def __iter__(self) -> Records:
        return self

    def __next__(self) -> Record:
        if self._closed:
            raise StopIteration
        if self._records is None:
            self._open()
        assert self._records is not None
        try:
            return next(self._records)
        except StopIteration:
            self._close(cancel=False)
            raise
        except BaseException:
            self._close(cancel=True)
            raise

    def close(self) -> None:
        """Stop the engine (at once when not exhausted)."""
        if self._records is not None:
            self._records.close()
        self._close(cancel=True)

    def _close(self, cancel: bool) -> None:
        if not self._closed:
            self._closed = True
            if self._engine is not None:
                self._engine.close(cancel)


def execute(
    pending: list[UnitSpec], workers: int, backend: str, concurrency: int | None = None, threaded: bool = False,
    may_start: Callable[[], bool] | None = None, address: str | None = None,
) -> Iterator[Record]:
    """Run units on the engine ``backend`` names, yielding records as they finish; no job is
    submitted once ``may_start()`` is False (a ``--max-cost`` budget reached)."""
    if not pending:
        return iter(())
    return Records(dispatch(pending, workers, backend, concurrency, threaded, address), may_start)


def drive(
    engine: Engine, jobs: list[Job], limit: int, may_start: Callable[[], bool] | None
) -> Generator[Record, None, None]:
    """Run ``jobs`` on ``engine`` with at most ``limit`` in flight; yield each record.

    A new job is submitted only after the caller has taken the records before it (so their
    cost counts towards ``--max-cost``) and while ``may_start()`` allows; once it does not,
    workers start no further unit. Lost jobs are warned about; their units stay pending.
    The caller closes the engine.
    """
    allowed = may_start or (lambda: True)
    todo = iter(jobs)
    inflight: dict[int, Job] = {}
    lost: list[tuple[Job, str]] = []

    def refill() -> None:
        while len(inflight) < max(1, limit):
            if not allowed():
                engine.stop_starting()
                return
            job = next(todo, None)
            if job is None:
                return
            engine.submit(job)
            inflight[job.id] = job

    refill()
    while inflight:
        for output in engine.results(timeout=_WAIT_S):
            for record in output.records:
                yield record
                if not allowed():
                    engine.stop_starting()
            if output.ended:
                job = inflight.pop(output.job_id)
                if output.lost is not None:
                    lost.append((job, scrub(output.lost)))  # a worker's error may quote a provider's key
                    _warn_lost(job, lost[-1][1], len(lost))
                refill()
    if len(lost) > _WARNED_LOSSES:
        units = sum(len(job.units) for job, _ in lost)
        print(f"warning: {len(lost)} jobs ({units} units) lost in all; `tauguard run --resume` runs them", file=sys.stderr)


def _warn_lost(job: Job, reason: str, count: int) -> None:
    if count <= _WARNED_LOSSES:
        print(
            f"warning: lost the job of {job.first.domain}/{job.first.task_id} ({len(job.units)} units): {reason}; "
            "they stay pending for `tauguard run --resume`",
            file=sys.stderr,
        )
