"""Simulations in flight, independent of worker processes.

A real-LLM run is I/O bound: a simulation spends its time waiting for completions, so
many simulations share one process as threads (``--concurrency``), spread over a few
processes (``--workers``). A sim run is CPU bound and uses processes only. Each (task,
trial) is its own unit; per-task caches (task, gold-side database state, the sim plan)
live in the process, so every trial run there reuses them. Records come back to the
caller in completion order, for the run's one writer.

Imports neither tau2 nor litellm.
"""

from __future__ import annotations

import queue
import threading
from typing import Any, Callable, Iterator

from tauguard.execution.plan import UnitSpec, deal

# Simulations in flight per worker process when --concurrency is not given and a real LLM
# is in play (a sim run uses one per process).
DEFAULT_THREADS_PER_WORKER = 8


def threaded(agent_llm: str, user_llm: str, guard_llm: str | None) -> bool:
    """Whether a run is I/O bound (any role is a real LLM): threads inside processes."""
    from tauguard.config import SIM

    return agent_llm != SIM or user_llm != SIM or guard_llm is not None


def default_concurrency(workers: int, is_threaded: bool) -> int:
    """Simulations in flight when ``--concurrency`` is not given."""
    return workers * DEFAULT_THREADS_PER_WORKER if is_threaded else workers


def describe(workers: int, concurrency: int | None, is_threaded: bool, backend: str | None = None) -> str:
    """The plan's line about parallelism (``backend`` ray/dask: jobs on the cluster's workers)."""
    from tauguard.execution.engines import is_cluster

    c = concurrency or default_concurrency(workers, is_threaded)
    if backend is not None and is_cluster(backend):
        if is_threaded:
            return f"{c} simulations in flight: one {backend} task each on the cluster (real LLM: I/O bound)"
        return f"at most {2 * workers} jobs (a task's trials each) queued on {workers} {backend} workers (sim mode: CPU bound)"
    if not is_threaded:
        return f"{c} simulations in flight: {min(c, workers)} worker processes (sim mode: CPU bound)"
    procs = max(1, min(workers, c))
    return f"{c} simulations in flight: threads in {procs} process(es) (real LLM: I/O bound)"


def _with_event_loop(spec: UnitSpec) -> dict[str, Any]:
    # litellm dispatches a monitoring hook after every completion on the calling thread's
    # event loop, and builds and tears down a new loop (asyncio.run) per call when the thread
    # has none: each simulation thread gets one idle loop for all its calls.
    import asyncio

    from tauguard.execution.simulate import run_unit

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        return run_unit(spec)
    finally:
        asyncio.set_event_loop(None)
        loop.close()


def run_threads(
    pending: list[UnitSpec], concurrency: int, may_start: Callable[[], bool] | None = None
) -> Iterator[dict[str, Any]]:
    """Run units on ``concurrency`` threads of this process; yield records as they finish.

    Units are started lazily (at most ``concurrency`` in flight); once ``may_start()`` is
    False (a budget reached) no new unit starts and the ones in flight finish. When the
    iteration is stopped early (Ctrl-C, SIGTERM, an error) the provider discipline stops every
    simulation's next completion (:func:`tauguard.execution.provider.stop_calls`), and the
    threads are daemons: the run's process exits without waiting for a request in flight.
    """
    from tauguard.execution.provider import resume_calls, stop_calls
    from tauguard.execution.simulate import prepare

    prepare(pending)
    resume_calls()
    allowed = may_start or (lambda: True)
    todo = (spec for spec in pending if allowed())
    finished: queue.SimpleQueue[tuple[dict[str, Any] | None, BaseException | None]] = queue.SimpleQueue()

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


def _worker_chunk(chunk: list[UnitSpec], threads: int, out: Any) -> int:
    # In a worker process: run a chunk on threads, streaming each record to the parent.
    for record in run_threads(chunk, threads):
        out.put(record)
    return len(chunk)


def run_processes_of_threads(
    pending: list[UnitSpec], workers: int, concurrency: int, backend: str
) -> Iterator[dict[str, Any]]:
    """``workers`` processes with ``concurrency / workers`` threads each; records in completion order.

    Units are dealt to processes by task (all trials of a task go to one process), so the
    per-task caches serve every trial.
    """
    import multiprocessing

    from joblib import Parallel, delayed

    chunks = deal(pending, workers)
    threads = max(1, concurrency // max(1, len(chunks)))
    manager = multiprocessing.Manager()
    records: Any = manager.Queue()
    failure: list[BaseException] = []

    def _drive() -> None:
        try:
            Parallel(n_jobs=len(chunks), backend=backend)(delayed(_worker_chunk)(c, threads, records) for c in chunks)
        except BaseException as exc:  # surfaced in the consuming thread
            failure.append(exc)
        finally:
            records.put(None)

    driver = threading.Thread(target=_drive, name="tauguard-workers", daemon=True)
    driver.start()
    try:
        while True:
            try:
                item = records.get(timeout=0.5)
            except queue.Empty:
                continue
            if item is None:
                break
            yield item
        if failure:
            raise failure[0]
    finally:
        manager.shutdown()
