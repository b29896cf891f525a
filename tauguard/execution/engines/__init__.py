"""Engines: where a run's jobs (:class:`tauguard.execution.job.Job`) run. Every engine has the
same small interface (:class:`Engine`), and one driver (:mod:`tauguard.execution.driver`)
submits jobs to it and takes back records, in completion order, for the run's one writer.

- ``inline`` (``inline.py``): this process (``--workers 1``, the ``threading`` and
  ``sequential`` backends);
- ``fork`` (``fork.py``): workers forked from this warm process (the default on Linux);
- ``loky`` / ``multiprocessing`` (``pool.py``): a pool of fresh worker processes;
- ``ray`` / ``dask`` (``ray_engine.py``, ``dask_engine.py``): a Ray or Dask cluster (an existing
  one at ``--address``, or a local one started for the run). Ray and Dask are optional extras
  (``pip install 'tauguard[ray]'`` / ``'tauguard[dask]'``), imported only when their engine runs.

Nothing here imports Ray, Dask, joblib, tau2 or litellm.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Callable, Protocol

from tauguard.config import FORK, fork_available
from tauguard.execution.error_line import first_line
from tauguard.execution.job import Job, Record

INLINE_BACKENDS = ("threading", "sequential")  # joblib's names for running in this process
POOL_BACKENDS = ("loky", "multiprocessing")
# backend name -> (import names it needs, the tauguard extra that installs them)
CLUSTER_BACKENDS: dict[str, tuple[tuple[str, ...], str]] = {
    "ray": (("ray",), "ray"),
    "dask": (("dask", "distributed"), "dask"),
}


class WorkerLost(RuntimeError):
    """A worker process of this run died (fork, loky, multiprocessing): the run stops, and its
    unfinished units stay pending for ``--resume``."""

    def __init__(self, detail: str = "a worker process died") -> None:
        super().__init__(f"{detail}; the units it had not finished are pending")


@dataclass
class JobOutput:
    """What an engine has for one job: records finished since the last look, and whether the
    job ended (``lost``: it ended without running its remaining units, and why)."""

    job_id: int
    records: list[Record] = field(default_factory=list)
    ended: bool = False
    lost: str | None = None


def ended_job(job_id: int, fetch: Callable[[], list[Record]], lost_on: type[BaseException]) -> JobOutput:
    """A cluster job that ended: its records, or ``lost`` (why, in one line) when fetching them
    raises ``lost_on`` (its worker or node died, or it failed there)."""
    try:
        return JobOutput(job_id, fetch(), ended=True)
    except lost_on as exc:
        return JobOutput(job_id, ended=True, lost=first_line(exc))


class Engine(Protocol):
    """A place that runs jobs: the driver submits them and collects their records."""

    def submit(self, job: Job) -> None:
        """Start ``job`` (its worker calls :func:`tauguard.execution.job.run_job`)."""

    def results(self, timeout: float) -> list[JobOutput]:
        """Records and job ends since the last call: at least one, or none after ``timeout``
        seconds. Raises when the engine itself is broken (e.g. ``WorkerLost``)."""

    def stop_starting(self) -> None:
        """No worker starts another unit (a budget reached); units in flight finish."""

    def close(self, cancel: bool) -> None:
        """Release the engine: stop what is in flight at once when ``cancel`` (interrupt,
        error), else once idle; shut the cluster down if this engine started it."""


def backend_names() -> list[str]:
    """Every ``--backend`` an engine runs (``fork`` where the platform forks)."""
    names = {*INLINE_BACKENDS, *POOL_BACKENDS, *CLUSTER_BACKENDS}
    return sorted(names | ({FORK} if fork_available() else set()))


def is_cluster(backend: str) -> bool:
    """Whether ``backend`` is a cluster engine (Ray, Dask)."""
    return backend in CLUSTER_BACKENDS


def missing_extra(backend: str) -> str | None:
    """The extra to install for ``backend`` when its packages are missing (None: ready).

    Looks the packages up without importing them.
    """
    modules, extra = CLUSTER_BACKENDS[backend]
    if all(importlib.util.find_spec(m) is not None for m in modules):
        return None
    return extra


def describe(backend: str, address: str | None, workers: int) -> str:
    """The plan's line naming a cluster engine and where it runs."""
    if address:
        return f"{backend}, cluster at {address}"
    return f"{backend}, local cluster, {workers} workers"

