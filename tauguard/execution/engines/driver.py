"""Driving a cluster engine: bounded submission of jobs, records back in completion order,
jobs lost with their worker left pending for ``--resume``.

Imports neither Ray nor Dask (engines do), nor tau2 or litellm.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Iterator, Protocol

from tauguard.errors import TauguardInputError
from tauguard.execution.plan import UnitSpec, by_task
from tauguard.secrets import scrub

Job = list[UnitSpec]
# Test-only: a worker running the job of this "domain/task_id" kills its own process, as a
# lost node would (tests/test_engines.py).
LOSE_JOB_ENV = "TAUGUARD_TEST_LOSE_JOB"
_WARNED_LOSSES = 5  # lost-job warnings printed one by one; the rest are counted


class ClusterUnavailable(TauguardInputError):
    """The cluster at ``--address`` cannot be reached (or a local one cannot start); one line."""


class JobLost(Exception):
    """A job's worker died (or the job could not run there): its units were not recorded."""


class Engine(Protocol):
    """A connected cluster that runs :func:`run_job` on jobs."""

    def submit(self, job: Job) -> Any:
        """Start ``run_job(job)`` on the cluster; a hashable handle."""

    def finished(self, handles: list[Any], timeout: float) -> list[Any]:
        """The handles whose job has ended (at least one, or none after ``timeout`` seconds)."""

    def result(self, handle: Any) -> list[dict[str, Any]]:
        """The records of an ended job; :class:`JobLost` when it died with its worker."""

    def cancel(self, handles: list[Any]) -> None:
        """Cancel jobs still queued or running."""

    def close(self) -> None:
        """Disconnect; shut the cluster down if this engine started it."""


def jobs_of(pending: list[UnitSpec], per_task: bool) -> list[Job]:
    """Units grouped into jobs: a task's units together (``per_task``), else one unit each."""
    if not per_task:
        return [[unit] for unit in pending]
    return by_task(pending)


def run_job(job: Job) -> list[dict[str, Any]]:
    """On a cluster worker: run a job's units (the worker's per-task caches serve them all)."""
    if job and os.environ.get(LOSE_JOB_ENV) == f"{job[0].domain}/{job[0].task_id}":
        os._exit(1)
    from tauguard.execution.simulate import run_units

    return run_units(job)


def drive(
    open_engine: Callable[[], Engine], jobs: list[Job], limit: int, may_start: Callable[[], bool] | None,
    where: str = "the cluster",
) -> Iterator[dict[str, Any]]:
    """Run ``jobs`` with at most ``limit`` in flight; yield each finished job's records.

    A new job is submitted only after the caller has taken the records before it (so their
    cost counts towards ``--max-cost``) and while ``may_start()`` allows. Closing the iterator
    (Ctrl-C, SIGTERM, a budget reached) cancels the jobs in flight and closes the engine.
    """
    allowed = may_start or (lambda: True)
    todo = iter(jobs)
    try:
        engine = open_engine()
    except Exception as exc:
        from tauguard.execution.checks import first_line

        raise ClusterUnavailable(f"cannot use {where}: {scrub(first_line(exc)).rstrip('.')}") from None
    inflight: dict[Any, Job] = {}
    lost: list[tuple[Job, str]] = []

    def refill() -> None:
        while len(inflight) < max(1, limit) and allowed():
            job = next(todo, None)
            if job is None:
                return
            inflight[engine.submit(job)] = job

    try:
        refill()
        while inflight:
            for handle in engine.finished(list(inflight), timeout=1.0):
                job = inflight.pop(handle)
                try:
                    records = engine.result(handle)
                except JobLost as exc:
                    lost.append((job, scrub(str(exc))))  # a worker's error may quote a provider's key
                    _warn_lost(job, lost[-1][1], len(lost))
                else:
                    yield from records
                refill()
    finally:
        try:
            engine.cancel(list(inflight))
        finally:
            engine.close()
    if len(lost) > _WARNED_LOSSES:
        units = sum(len(job) for job, _ in lost)
        print(f"warning: {len(lost)} jobs ({units} units) lost in all; `tauguard run --resume` runs them", file=sys.stderr)


def _warn_lost(job: Job, reason: str, count: int) -> None:
    if count <= _WARNED_LOSSES:
        unit = job[0]
        print(
            f"warning: lost the job of {unit.domain}/{unit.task_id} ({len(job)} units): {reason}; "
            "they stay pending for `tauguard run --resume`",
            file=sys.stderr,
        )
