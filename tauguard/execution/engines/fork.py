"""``--backend fork``: worker processes forked from the run's own, already warm process.

A fresh worker (loky, spawn) re-imports τ² and litellm and reloads each domain's data:
3.5 s and ~250 MB per worker, which dominated short runs. Here the run's process pays
that once (:func:`tauguard.execution.simulate.prepare`, called by the driver), freezes it
out of the garbage collector's reach (so collections in the workers do not touch, and
thereby copy, those pages), and forks its workers: they start in milliseconds and share the
warm state copy on write.

Forking is done when the engine opens, before the caller starts any thread of its own
(progress display, server threads of a test), so no lock a child may need is held by a
thread that does not exist in the child. Workers run jobs and stream each record back as it
finishes, so the parent's one writer sees them in completion order. A worker that dies ends
the run with :class:`WorkerLost`: what was recorded stays, the rest is pending for ``--resume``.

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
from typing import Any

from tauguard.execution.engines import JobOutput, WorkerLost
from tauguard.execution.job import Job, run_job

_RESULTS: Any = None  # the child's end of the results queue (set by the initializer)
_STOP: Any = None  # set by the parent when no new unit may start (budget reached)
_DONE = "job-done"


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
    from tauguard.execution.os_processes import exit_with_parent

    exit_with_parent(parent_pid)


def _may_start() -> bool:
    return _STOP is None or not _STOP.is_set()


def _stream_job(job: Job) -> int:
    # In a worker: run the job, streaming each record, then say the job ended.
    try:
        for record in run_job(job, _may_start):
            _RESULTS.put((job.id, record))
    finally:
        _RESULTS.put((job.id, _DONE))
    return len(job.units)


def _noop() -> int:
    return os.getpid()


class ForkEngine:
    """``workers`` processes forked now from this process (see :class:`~tauguard.execution.engines.Engine`)."""

    def __init__(self, workers: int) -> None:
        ctx = multiprocessing.get_context("fork")
        self._results: Any = ctx.Queue()
        self._stop = ctx.Event()
        self._executor = ProcessPoolExecutor(
            max_workers=workers, mp_context=ctx, initializer=_child_init,
            initargs=(os.getpid(), self._results, self._stop),
        )
        self._running: set[Future[int]] = set()
        # A fork-context executor forks all its workers at the first submission: do it now,
        # while this process has no other thread.
        self._executor.submit(_noop).result()

    def submit(self, job: Job) -> None:
        """Queue the job on the workers (:class:`WorkerLost` when one has died)."""
        try:
            self._running.add(self._executor.submit(_stream_job, job))
        except BrokenProcessPool:
            raise self._lost() from None

    def results(self, timeout: float) -> list[JobOutput]:
        """Streamed records and ended jobs; waits in short slices, checking between them that
        no worker died (:class:`WorkerLost`)."""
        out: list[JobOutput] = []
        try:
            item = self._results.get(timeout=min(timeout, 0.2))
        except queue.Empty:
            self._raise_if_lost(self._running)
            return out
        while True:
            job_id, payload = item
            out.append(JobOutput(job_id, ended=True) if payload == _DONE else JobOutput(job_id, [payload]))
            if payload == _DONE:
                break  # a job's end: look at the futures before taking more
            try:
                item = self._results.get_nowait()
            except queue.Empty:
                return out
        done = {f for f in self._running if f.done()}
        self._running -= done
        self._raise_if_lost(done)
        for future in done:
            future.result()  # a job's own exception (run_unit never raises) surfaces here
        return out

    def _raise_if_lost(self, futures: set[Future[int]]) -> None:
        # A dead worker breaks the whole executor: every pending future fails with
        # BrokenProcessPool, whichever of them the caller looks at first.
        if any(f.done() and isinstance(f.exception(), BrokenProcessPool) for f in futures):
            raise self._lost()

    def _lost(self) -> WorkerLost:
        codes = [p.exitcode for p in getattr(self._executor, "_processes", {}).values() if p.exitcode]
        # the executor stops the surviving workers itself (SIGTERM): name the one that died
        codes.sort(key=lambda code: code == -signal.SIGTERM)
        return WorkerLost(f"a worker process died (exit code {codes[0]})" if codes else "a worker process died")

    def stop_starting(self) -> None:
        """Workers start no further unit of the jobs they run."""
        self._stop.set()

    def close(self, cancel: bool) -> None:
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


__all__ = ["ForkEngine"]
