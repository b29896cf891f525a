"""The one job type every engine runs, and the one place a job's units run: one after another
(sim mode, CPU bound) or as simulation threads in flight (real LLM, I/O bound).

A job is a chunk of (task, trial) units plus what the worker needs to run them; whichever
engine carries it (this process, forked workers, loky, Ray, Dask), the worker calls
:func:`run_job` and hands each record back as it finishes.

Imports neither tau2 nor litellm (:mod:`tauguard.execution.simulate` does, when a unit runs).
"""

from __future__ import annotations

import os
import queue
import threading
from typing import Any, Callable, Generator, Iterator

from pydantic import BaseModel, ConfigDict, Field

from tauguard.execution.unit import UnitSpec
from tauguard.execution.os_processes import exit_with_parent

Record = dict[str, Any]
# Test-only: a worker running the job of this "domain/task_id" kills its own process, as a
# lost node would (tests/test_engines.py).
LOSE_JOB_ENV = "TAUGUARD_TEST_LOSE_JOB"


class Job(BaseModel):
    """A chunk of units for one worker: ``threads`` None runs them one after another in the
    worker's thread; a number runs that many simulations in flight, each on its own thread."""

    model_config = ConfigDict(frozen=True)

    id: int
    units: tuple[UnitSpec, ...]
    threads: int | None = Field(default=None, ge=1)

    @property
    def first(self) -> UnitSpec:
        """The job's first unit (its task names the job in messages)."""
        return self.units[0]


def run_job(job: Job, may_start: Callable[[], bool] | None = None) -> Generator[Record, None, None]:
    """Run a job's units in this process, yielding each record as it finishes.

    No unit starts once ``may_start()`` is False (a ``--max-cost`` budget reached); units in
    flight finish. In a worker process started by the run's, the worker exits when the
    run's process dies.
    """
    if not job.units:
        return
    exit_with_parent(job.first.parent_pid)
    if os.environ.get(LOSE_JOB_ENV) == f"{job.first.domain}/{job.first.task_id}" and os.getpid() != job.first.parent_pid:
        os._exit(1)
    allowed = may_start or (lambda: True)
    if job.threads is None:
        from tauguard.execution import simulate  # looked up per call: tests patch run_unit

        for spec in job.units:
            if not allowed():
                return
            yield simulate.run_unit(spec)
        return
    yield from _on_threads(list(job.units), job.threads, allowed)


def job_records(job: Job) -> list[Record]:
    """A job's records, all at its end (engines whose workers return one value per job)."""
    return list(run_job(job))


def _with_event_loop(spec: UnitSpec) -> Record:
    # litellm dispatches a monitoring hook after every completion on the calling thread's
    # event loop, and builds and tears down a new loop (asyncio.run) per call when the thread
    # has none: each simulation thread gets one idle loop for all its calls.
    import asyncio

    from tauguard.execution import simulate

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        return simulate.run_unit(spec)
    finally:
        asyncio.set_event_loop(None)
        loop.close()


def _on_threads(pending: list[UnitSpec], concurrency: int, allowed: Callable[[], bool]) -> Iterator[Record]:
    """Units on ``concurrency`` threads of this process, started lazily; records as they finish.

    When the iteration is stopped early (Ctrl-C, SIGTERM, an error) the provider discipline
    stops every simulation's next completion (:func:`tauguard.provider.stop_calls`),
    and the threads are daemons: the process exits without waiting for a request in flight.
    """
    from tauguard.provider import resume_calls, shard_connection_pool, stop_calls
    from tauguard.execution.simulate import prepare

    prepare(pending)  # warm once, so the threads do not each load the domain at once
    shard_connection_pool(min(concurrency, len(pending)))
    resume_calls()
    todo = (spec for spec in pending if allowed())
    finished: queue.SimpleQueue[tuple[Record | None, BaseException | None]] = queue.SimpleQueue()

    def work(spec: UnitSpec) -> None:
        try:
            finished.put((_with_event_loop(spec), None))
        except BaseException as exc:  # run_unit records errors; anything else is the caller's
            finished.put((None, exc))

    def start() -> bool:
        spec = next(todo, None)
        if spec is None:
            return False
        threading.Thread(target=work, args=(spec,), name=f"tauguard-sim-{spec.task_id}-{spec.trial}", daemon=True).start()
        return True

    running = 0
    complete = False
    try:
        while running < concurrency and start():
            running += 1
        while running:
            record, error = finished.get()
            running -= 1
            if error is not None:
                raise error
            assert record is not None
            yield record
            # Refill after the writer has accounted the record (its cost counts towards
            # --max-cost before anything new starts).
            if start():
                running += 1
        complete = True
    finally:
        if not complete:
            stop_calls()
