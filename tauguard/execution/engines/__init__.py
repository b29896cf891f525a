"""Cluster engines: ``--backend ray`` and ``--backend dask`` run a run's (task, trial) units on a
Ray or Dask cluster (an existing one at ``--address``, or a local one started for the run) and
stream the records back, in completion order, to the run's one writer in this process.

Ray and Dask are optional extras (``pip install 'tauguard[ray]'`` / ``'tauguard[dask]'``),
imported only when their backend runs: nothing here imports them (nor tau2 or litellm).
"""

from __future__ import annotations

import importlib.util
from typing import Any, Callable, Iterator

from tauguard.execution.plan import UnitSpec

# backend name -> (import names it needs, the tauguard extra that installs them)
CLUSTER_BACKENDS: dict[str, tuple[tuple[str, ...], str]] = {
    "ray": (("ray",), "ray"),
    "dask": (("dask", "distributed"), "dask"),
}


def is_cluster(backend: str) -> bool:
    """Whether ``backend`` is a cluster engine rather than a joblib backend."""
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
    """The plan's line naming the engine and where it runs."""
    if address:
        return f"{backend}, cluster at {address}"
    return f"{backend}, local cluster, {workers} workers"


def run_on_cluster(
    backend: str, pending: list[UnitSpec], workers: int, address: str | None, threaded: bool,
    concurrency: int | None, may_start: Callable[[], bool] | None,
) -> Iterator[dict[str, Any]]:
    """Run ``pending`` on the ``backend`` cluster; yield records as jobs finish.

    Sim mode submits one job per task (its trials share the worker's per-task caches), at
    most ``2 x workers`` in flight; real-LLM mode one job per unit, ``concurrency`` in flight.
    Units of a job whose worker is lost are not recorded: they stay pending for ``--resume``.
    """
    from tauguard.execution.engines.driver import drive, jobs_of

    if threaded:
        from tauguard.execution.concurrency import default_concurrency

        inflight = concurrency or default_concurrency(workers, True)
        if backend == "ray":  # a process per simulation: each holds its own rate limiter
            pending = [u.model_copy(update={"rate_share": max(1, inflight)}) for u in pending]
    else:
        inflight = 2 * workers
    jobs = jobs_of(pending, per_task=not threaded)
    if backend == "ray":
        from tauguard.execution.engines.ray_engine import RayEngine as Engine
    else:
        from tauguard.execution.engines.dask_engine import DaskEngine as Engine  # type: ignore[assignment]
    where = describe(backend, address, workers)
    return drive(lambda: Engine(address, workers, inflight, threaded), jobs, inflight, may_start, where)
