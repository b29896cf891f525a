"""``--backend loky`` / ``multiprocessing``: a pool of fresh worker processes (each imports τ²
and warms up on its own; the fork engine avoids that cost on Linux).

A sim-mode job (threads None) returns its records when it ends, like a cluster job. A
real-LLM job runs simulation threads for a long time, so its worker streams each record back
through a queue as it finishes: the run's writer keeps it even if the run is killed later. A
worker that dies breaks the pool: the run stops with :class:`WorkerLost`, what was recorded
stays and the rest is pending for ``--resume``.

loky is imported (from joblib) only when this engine opens for it.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import signal
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from tauguard.execution.engines import JobOutput, WorkerLost
from tauguard.execution.job import Job, job_records, run_job
from tauguard.execution.os_processes import exit_with_parent

_DONE = "job-done"
# Idle loky workers stay this long for the next run of a long-lived process (joblib's value).
_LOKY_IDLE_S = 300
# Native thread pools a worker may start (BLAS, OpenMP...): each worker gets its share of the
# CPUs unless the variable is set, so W workers do not each start one thread per CPU.
_THREAD_LIMIT_VARS = (
    "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS", "NUMBA_NUM_THREADS", "NUMEXPR_NUM_THREADS",
)


def _thread_limits(workers: int) -> dict[str, str]:
    share = str(max((os.cpu_count() or 1) // workers, 1))
    return {var: os.environ.get(var, share) for var in _THREAD_LIMIT_VARS}


def _stream_job(job: Job, out: Any) -> int:
    # In a worker: a real-LLM job's records, each as it finishes, then the job's end.
    try:
        for record in run_job(job):
            out.put((job.id, record))
    finally:
        out.put((job.id, _DONE))
    return len(job.units)


def _lost(exc: BaseException) -> WorkerLost:
    detail = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
    return WorkerLost(f"a worker process died ({detail})")


class PoolEngine:
    """``workers`` fresh processes of ``backend`` (see :class:`~tauguard.execution.engines.Engine`)."""

    def __init__(self, backend: str, workers: int, streaming: bool) -> None:
        self._loky = backend == "loky"
        # Every worker watches the run's process from its start (not only once it gets a job):
        # an idle worker would otherwise outlive a killed run for loky's idle timeout.
        if self._loky:
            # joblib's own factory of loky's process-wide reusable executor, not loky's: joblib
            # reuses that executor for a later `Parallel(backend="loky")` in this process and
            # needs the temporary-folder manager only its factory attaches.
            from joblib.executor import get_memmapping_executor

            self._executor: Any = get_memmapping_executor(
                workers, timeout=_LOKY_IDLE_S, initializer=exit_with_parent, initargs=(os.getpid(),),
                env=_thread_limits(workers),
            )
        else:
            self._executor = ProcessPoolExecutor(
                max_workers=workers, mp_context=multiprocessing.get_context(), initializer=exit_with_parent,
                initargs=(os.getpid(),),
            )
            # With the fork start method the pool forks all its workers at the first submission:
            # do it now, before the caller starts threads of its own (see the fork engine).
            self._executor.submit(os.getpid).result()
        self._jobs: dict[Future[Any], Job] = {}
        # The queue real-LLM jobs stream their records through (a manager's: it can be sent
        # to a worker with a job).
        self._manager: Any = None
        self._stream: Any = None
        if streaming:
            self._manager = multiprocessing.Manager()
            self._stream = self._manager.Queue()

    def submit(self, job: Job) -> None:
        """Start the job on a worker."""
        try:
            if self._stream is None:
                future = self._executor.submit(job_records, job)
            else:
                future = self._executor.submit(_stream_job, job, self._stream)
        except BrokenProcessPool as exc:
            raise _lost(exc) from None
        self._jobs[future] = job

    def results(self, timeout: float) -> list[JobOutput]:
        """Streamed records, and the records of jobs that ended; :class:`WorkerLost` when the
        pool broke."""
        out: list[JobOutput] = []
        if self._stream is not None:
            try:
                item = self._stream.get(timeout=min(timeout, 0.5))
                while True:
                    job_id, payload = item
                    out.append(JobOutput(job_id, ended=True) if payload == _DONE else JobOutput(job_id, [payload]))
                    item = self._stream.get_nowait()
            except queue.Empty:
                pass
        ended, _ = wait(list(self._jobs), timeout=0 if out or self._stream is not None else timeout, return_when=FIRST_COMPLETED)
        for future in ended:
            job = self._jobs.pop(future)
            try:
                value = future.result()
            except BrokenProcessPool as exc:
                raise _lost(exc) from None
            if self._stream is None:  # a streamed job's end came through the queue
                out.append(JobOutput(job.id, value, ended=True))
        return out

    def stop_starting(self) -> None:
        """Nothing to tell the workers: the driver submits no further job."""

    def close(self, cancel: bool) -> None:
        """Stop the workers at once when ``cancel``; else leave loky's idle for reuse (they exit
        with this process) and let a multiprocessing pool finish."""
        try:
            if self._loky:
                if cancel:
                    self._executor.shutdown(wait=False, kill_workers=True)
            elif cancel:
                processes = list(getattr(self._executor, "_processes", {}).values())
                self._executor.shutdown(wait=False, cancel_futures=True)
                for process in processes:
                    if process.is_alive():
                        # It can still exit between the check and the signal (a dying worker).
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(process.pid, signal.SIGTERM)
                for process in processes:
                    process.join(timeout=5)
            else:
                self._executor.shutdown(wait=True)
        finally:
            if self._manager is not None:
                self._manager.shutdown()
