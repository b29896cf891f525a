"""``--backend ray``: jobs as Ray tasks on an existing cluster (``--address``) or on a local
one started for the run (``workers`` CPUs) and shut down at its end.

Imported only when the ray backend runs (the ``tauguard[ray]`` extra).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import signal
import threading
from typing import Any, Iterator

import ray
from ray.exceptions import RayError

from tauguard.execution.engines import JobOutput, ended_job
from tauguard.execution.job import Job, job_records

# The local cluster's object store: records are small and taken as soon as they arrive.
LOCAL_OBJECT_STORE_BYTES = 80 * 2**20


class RayEngine:
    """A Ray connection running jobs as tasks (see :class:`~tauguard.execution.engines.Engine`)."""

    def __init__(self, address: str | None, workers: int, inflight: int, threaded: bool) -> None:
        self._owned = not ray.is_initialized()  # a library caller's own session is left alone
        if self._owned:
            with _own_signal_handlers():
                _connect(address, workers)
        # Real-LLM units wait on the network: several share a CPU. A job whose worker dies is
        # not retried here: its units stay pending for --resume, as with every backend.
        cpus = min(1.0, round(workers / max(1, inflight), 4)) if threaded else 1.0
        self._remote = ray.remote(job_records).options(num_cpus=cpus, max_retries=0)
        self._jobs: dict[Any, int] = {}  # object ref -> job id

    def submit(self, job: Job) -> None:
        """Start the job as a Ray task."""
        self._jobs[self._remote.remote(job)] = job.id

    def results(self, timeout: float) -> list[JobOutput]:
        """Ended tasks' records (at least one task, or none after ``timeout``); a task lost
        with its worker or node ends its job ``lost``."""
        refs = list(self._jobs)
        if not refs:
            return []
        ready, rest = ray.wait(refs, num_returns=1, timeout=timeout)
        if ready and rest:
            more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
            ready += more
        return [ended_job(self._jobs.pop(ref), functools.partial(ray.get, ref), RayError) for ref in ready]

    def stop_starting(self) -> None:
        """Nothing to tell the tasks: the driver submits no further job."""

    def close(self, cancel: bool) -> None:
        """Cancel the tasks still queued or running; disconnect (and stop the local cluster this
        engine started)."""
        try:
            for ref in self._jobs:
                try:
                    ray.cancel(ref, force=True)
                except RayError:
                    pass  # already ended
        finally:
            if self._owned:
                ray.shutdown()


def _connect(address: str | None, workers: int) -> None:
    if address:
        ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        return
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # a local run phones nowhere
    ray.init(
        num_cpus=workers, include_dashboard=False, log_to_driver=False,
        object_store_memory=LOCAL_OBJECT_STORE_BYTES, logging_level=logging.WARNING,
    )


@contextlib.contextmanager
def _own_signal_handlers() -> Iterator[None]:
    """Keep the run's SIGTERM and SIGINT handling: ``ray.init`` installs its own (SIGTERM exits
    the process), which would leave the manifest ``failed`` instead of ``interrupted``."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            if handler is not None:
                signal.signal(sig, handler)
