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

from tauguard.execution.checks import first_line
from tauguard.execution.engines.driver import Job, JobLost, run_job


class DaskEngine:
    """A Dask client running :func:`run_job` as futures (see ``driver.Engine``)."""

    def __init__(self, address: str | None, workers: int, inflight: int, threaded: bool) -> None:
        self._cluster: Any = None
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

    def submit(self, job: Job) -> Any:
        """Start the job as a future (never deduplicated: pure=False)."""
        future = self._client.submit(run_job, job, pure=False)
        self._ended.add(future)
        return future

    def finished(self, handles: list[Any], timeout: float) -> list[Any]:
        """Ended futures: at least one, or none after ``timeout``."""
        deadline = time.monotonic() + timeout
        while not self._ended.has_ready() and time.monotonic() < deadline:
            time.sleep(0.01)  # short naps: Ctrl-C and SIGTERM are handled between them
        return self._ended.next_batch(block=False) if self._ended.has_ready() else []

    def result(self, handle: Any) -> list[dict[str, Any]]:
        """The future's records; JobLost when its worker died (KilledWorker) or it failed there."""
        try:
            records: list[dict[str, Any]] = handle.result()  # run_job's result; a Future is untyped
            return records
        except Exception as exc:
            raise JobLost(first_line(exc)) from None

    def cancel(self, handles: list[Any]) -> None:
        """Cancel queued and running futures."""
        if handles:
            self._client.cancel(handles, force=True)

    def close(self) -> None:
        """Disconnect (and close the local cluster this engine started)."""
        try:
            self._client.close()
        finally:
            if self._cluster is not None:
                self._cluster.close()
