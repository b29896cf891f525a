"""``--backend dask``: jobs as Dask futures on an existing scheduler (``--address``) or on a
local cluster of ``workers`` processes started for the run and closed at its end.

Imported only when the dask backend runs (the ``tauguard[dask]`` extra).
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any

import dask
import distributed

from tauguard.execution.engines import JobOutput, ended_job
from tauguard.execution.job import Job, job_records


class DaskEngine:
    """A Dask client running jobs as futures (see :class:`~tauguard.execution.engines.Engine`)."""

    def __init__(self, address: str | None, workers: int, inflight: int, threaded: bool) -> None:
        self._cluster: Any = None
        self._jobs: dict[Any, int] = {}  # future -> job id
        if address:
            self._client = distributed.Client(address, set_as_default=False)
            self._ended = distributed.as_completed(loop=self._client.loop)
            return
        # Real-LLM units wait on the network: they share a worker process as threads. A job
        # whose worker dies is not retried: its units stay pending for --resume.
        threads = max(1, math.ceil(inflight / workers)) if threaded else 1
        try:
            with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
                self._cluster = distributed.LocalCluster(
                    n_workers=workers, threads_per_worker=threads, processes=True, dashboard_address=None,
                    silence_logs=logging.ERROR,
                )
        except Exception as exc:
            # Its workers are spawned processes that import the main module again.
            raise RuntimeError(
                f"{str(exc).rstrip('.')} (a script that runs a local Dask cluster needs `if __name__ == '__main__':`)"
            ) from exc
        try:
            self._client = distributed.Client(self._cluster, set_as_default=False)
            self._ended = distributed.as_completed(loop=self._client.loop)
        except BaseException:
            self._cluster.close()
            raise

    def submit(self, job: Job) -> None:
        """Start the job as a future (never deduplicated: pure=False)."""
        future = self._client.submit(job_records, job, pure=False)
        self._jobs[future] = job.id
        self._ended.add(future)

    def results(self, timeout: float) -> list[JobOutput]:
        """Ended futures' records (at least one future, or none after ``timeout``); a future
        whose worker died (KilledWorker) or that failed there ends its job ``lost``."""
        deadline = time.monotonic() + timeout
        while not self._ended.has_ready() and time.monotonic() < deadline:
            time.sleep(0.01)  # short naps: Ctrl-C and SIGTERM are handled between them
        ended = self._ended.next_batch(block=False) if self._ended.has_ready() else []
        return [ended_job(self._jobs.pop(future), future.result, Exception) for future in ended]

    def stop_starting(self) -> None:
        """Nothing to tell the futures: the driver submits no further job."""

    def close(self, cancel: bool) -> None:
        """Cancel queued and running futures; disconnect (and close the local cluster this
        engine started)."""
        try:
            if self._jobs:
                self._client.cancel(list(self._jobs), force=True)
        finally:
            try:
                self._client.close()
            finally:
                if self._cluster is not None:
                    self._cluster.close()
