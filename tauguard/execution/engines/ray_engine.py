"""``--backend ray``: jobs as Ray tasks on an existing cluster (``--address``) or on a local
one started for the run (``workers`` CPUs) and shut down at its end.

Imported only when the ray backend runs (the ``tauguard[ray]`` extra).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from typing import Any, Iterator

import ray
from ray.exceptions import RayError

from tauguard.execution.checks import first_line
from tauguard.execution.engines.driver import Job, JobLost, run_job

# The local cluster's object store: records are small and taken as soon as they arrive.
LOCAL_OBJECT_STORE_BYTES = 80 * 2**20


class RayEngine:
    """A Ray connection running :func:`run_job` as tasks (see ``driver.Engine``)."""

    def __init__(self, address: str | None, workers: int, inflight: int, threaded: bool) -> None:
        self._owned = not ray.is_initialized()  # a library caller's own session is left alone
        if self._owned:
            with _own_signal_handlers():
                _connect(address, workers)
        # Real-LLM units wait on the network: several share a CPU. A job whose worker dies is
        # not retried here: its units stay pending for --resume, as with every backend.
        cpus = min(1.0, round(workers / max(1, inflight), 4)) if threaded else 1.0
        self._remote = ray.remote(run_job).options(num_cpus=cpus, max_retries=0)

    def submit(self, job: Job) -> Any:
        """Start the job as a Ray task."""
        return self._remote.remote(job)

    def finished(self, handles: list[Any], timeout: float) -> list[Any]:
        """Ended tasks: at least one, or none after ``timeout``."""
        ready, rest = ray.wait(handles, num_returns=1, timeout=timeout)
        if ready and rest:
            more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
            ready += more
        return ready

    def result(self, handle: Any) -> list[dict[str, Any]]:
        """The task's records; JobLost when its worker or node died."""
        try:
            records: list[dict[str, Any]] = ray.get(handle)  # run_job's result; ray is untyped
            return records
        except RayError as exc:
            raise JobLost(first_line(exc)) from None

    def cancel(self, handles: list[Any]) -> None:
        """Cancel queued and running tasks."""
        for handle in handles:
            try:
                ray.cancel(handle, force=True)
            except RayError:
                pass  # already ended

    def close(self) -> None:
        """Disconnect (and stop the local cluster this engine started)."""
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
