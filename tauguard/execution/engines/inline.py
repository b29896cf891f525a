"""The run's own process as an engine (``--workers 1``, ``--backend threading`` / ``sequential``):
one job at a time, run as the driver asks for results, so a record reaches the writer as soon
as its unit finishes and Ctrl-C lands in the unit (or the wait for its threads) directly.

Imports neither tau2 nor litellm.
"""

from __future__ import annotations

from typing import Generator

from tauguard.execution.engines import JobOutput
from tauguard.execution.job import Job, Record, run_job


class InlineEngine:
    """Jobs run in this process, one after another (see :class:`~tauguard.execution.engines.Engine`)."""

    def __init__(self) -> None:
        self._queued: list[Job] = []
        self._current: tuple[Job, Generator[Record, None, None]] | None = None
        self._stopped = False

    def submit(self, job: Job) -> None:
        """Queue the job; it runs when the driver asks for results."""
        self._queued.append(job)

    def results(self, timeout: float) -> list[JobOutput]:
        """The next record of the job at hand, or its end (blocks until then: the work is here)."""
        if self._current is None:
            if not self._queued:
                return []
            job = self._queued.pop(0)
            self._current = (job, run_job(job, lambda: not self._stopped))
        job, records = self._current
        record = next(records, None)
        if record is None:
            self._current = None
            return [JobOutput(job.id, ended=True)]
        return [JobOutput(job.id, [record])]

    def stop_starting(self) -> None:
        """No further unit starts; threads in flight finish."""
        self._stopped = True

    def close(self, cancel: bool) -> None:
        """Stop the job at hand (its simulation threads' next completions are refused)."""
        if self._current is not None:
            self._current[1].close()
            self._current = None
