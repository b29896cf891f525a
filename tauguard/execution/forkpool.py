"""Worker processes forked from the run's own, already warm process (``--backend fork``).

A fresh worker (loky, spawn) re-imports τ² and litellm and reloads each domain's data:
3.5 s and ~250 MB per worker, which dominated short runs. Here the run's process pays
that once (:func:`tauguard.execution.simulate.prepare`), freezes it out of the garbage
collector's reach (so collections in the workers do not touch, and thereby copy, those
pages), and forks its workers: they start in milliseconds and share the warm state copy on
write.

Forking is done before the caller starts any thread of its own (progress display, server
threads of a test), so no lock a child may need is held by a thread that does not exist in
the child. Workers run jobs (a task's trials in sim mode; a share of the units on threads
for real LLMs) and stream each record back as it finishes, so the parent's one writer sees
them in completion order. A worker that dies ends the run with :class:`WorkerLost`: what
was recorded stays, the rest is pending for ``--resume``.

Imports neither tau2 nor litellm (the caller has warmed the process).
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import sys
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterator

from tauguard.execution.plan import UnitSpec

FORK = "fork"  # the backend's name (--backend fork)
_RESULTS: Any = None  # the child's end of the results queue (set by the initializer)
_STOP: Any = None  # set by the parent when no new unit may start (budget reached)
_DONE = ("job-done",)


class WorkerLost(RuntimeError):
    """A worker process died mid-run; its unfinished units stay pending for ``--resume``."""

    def __init__(self, detail: str = "a worker process died") -> None:
        super().__init__(f"{detail}; the units it had not finished are pending")


def available() -> bool:
    """Whether this platform can fork (Linux; macOS can but its system libraries forbid it)."""
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def _child_init(parent_pid: int, results: Any, stop: Any) -> None:
    global _RESULTS, _STOP
    _RESULTS, _STOP = results, stop
    # The parent owns Ctrl-C and SIGTERM (it marks the run interrupted and stops us).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    litellm = sys.modules.get("litellm")
    if litellm is not None:
        # Keep-alive connections the run's process pooled (an earlier run in a long-lived
        # process) must not be shared by several children: each opens its own.
        litellm.in_memory_llm_clients_cache.flush_cache()
    from tauguard.execution.processes import exit_with_parent

    exit_with_parent(parent_pid)


def _may_start() -> bool:
    return _STOP is None or not _STOP.is_set()


def _run_job(units: list[UnitSpec], threads: int) -> int:
    # In a worker: run the units (one after another, or on threads) and stream each record.
    from tauguard.execution.simulate import run_unit

    try:
        if threads > 1:
            from tauguard.execution.concurrency import run_threads

            for record in run_threads(units, threads, _may_start):
                _RESULTS.put(record)
        else:
            for spec in units:
                if not _may_start():
                    break
                _RESULTS.put(run_unit(spec))
    finally:
        _RESULTS.put(_DONE)
    return len(units)


def _noop() -> int:
    return os.getpid()


class ForkPool:
    """``workers`` processes forked now from this process; :meth:`run` streams records."""

    def __init__(self, workers: int) -> None:
        ctx = multiprocessing.get_context("fork")
        self._results: Any = ctx.Queue()
        self._stop = ctx.Event()
        self._executor = ProcessPoolExecutor(
            max_workers=workers, mp_context=ctx, initializer=_child_init,
            initargs=(os.getpid(), self._results, self._stop),
        )
        self.workers = workers
        # A fork-context executor forks all its workers at the first submission: do it now,
        # while this process has no other thread.
        self._executor.submit(_noop).result()

    def run(
        self, jobs: list[list[UnitSpec]], threads: int = 1, may_start: Callable[[], bool] | None = None
    ) -> Iterator[dict[str, Any]]:
        """Run ``jobs`` (lists of units; ``threads`` simulations in flight per job), yielding
        each record as it finishes. At most two jobs per worker are queued at a time, and no
        job is submitted once ``may_start()`` is False (a ``--max-cost`` budget reached)."""
        allowed = may_start or (lambda: True)
        todo = iter(jobs)
        running: set[Future[int]] = set()
        open_jobs = 0

        def submit() -> bool:
            nonlocal open_jobs
            if not allowed():
                self._stop.set()
                return False
            job = next(todo, None)
            if job is None:
                return False
            running.add(self._executor.submit(_run_job, job, threads))
            open_jobs += 1
            return True

        while len(running) < 2 * self.workers and submit():
            pass
        while open_jobs:
            item = self._next_result(running)
            if item is None:
                continue
            if item == _DONE:
                open_jobs -= 1
                done = {f for f in running if f.done()}
                running -= done
                self._raise_if_lost(done)
                for future in done:
                    future.result()  # a job's own exception (run_unit never raises) surfaces here
                while len(running) < 2 * self.workers and submit():
                    pass
                continue
            yield item
            if not allowed():
                self._stop.set()

    def _next_result(self, running: set[Future[int]]) -> Any:
        # Waits in short slices, checking between them that no worker died.
        try:
            return self._results.get(timeout=0.2)
        except queue.Empty:
            pass
        self._raise_if_lost(running)
        return None

    def _raise_if_lost(self, futures: set[Future[int]]) -> None:
        # A dead worker breaks the whole executor: every pending future fails with
        # BrokenProcessPool, whichever of them the caller looks at first.
        if any(f.done() and isinstance(f.exception(), BrokenProcessPool) for f in futures):
            codes = [p.exitcode for p in getattr(self._executor, "_processes", {}).values() if p.exitcode]
            # the executor stops the surviving workers itself (SIGTERM): name the one that died
            codes.sort(key=lambda code: code == -signal.SIGTERM)
            raise WorkerLost(f"a worker process died (exit code {codes[0]})" if codes else "a worker process died")

    def close(self, cancel: bool = False) -> None:
        """Stop the workers: at once when ``cancel`` (interrupt, error), else once idle."""
        self._stop.set()
        if cancel:
            processes = list(getattr(self._executor, "_processes", {}).values())
            self._executor.shutdown(wait=False, cancel_futures=True)
            for process in processes:
                if process.is_alive():
                    process.terminate()
            for process in processes:
                process.join(timeout=5)
        else:
            self._executor.shutdown(wait=True)


__all__ = ["FORK", "ForkPool", "WorkerLost", "available"]
