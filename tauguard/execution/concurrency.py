"""Simulations in flight, independent of worker processes: the mode and its defaults.

A real-LLM run is I/O bound: a simulation spends its time waiting for completions, so
many simulations share one process as threads (``--concurrency``), spread over a few
processes (``--workers``). A sim run is CPU bound and uses processes only. The driver
(:mod:`tauguard.execution.driver`) shapes the jobs; a job's threads run in
:func:`tauguard.execution.job.run_job`.

Imports neither tau2 nor litellm.
"""

from __future__ import annotations

from tauguard.config import SIM

# Simulations in flight per worker process when --concurrency is not given and a real LLM
# is in play (a sim run uses one per process).
DEFAULT_THREADS_PER_WORKER = 8


def threaded(agent_llm: str, user_llm: str, guard_llm: str | None) -> bool:
    """Whether a run is I/O bound (any role is a real LLM): threads inside processes."""
    return agent_llm != SIM or user_llm != SIM or guard_llm is not None


def default_concurrency(workers: int, is_threaded: bool) -> int:
    """Simulations in flight when ``--concurrency`` is not given."""
    return workers * DEFAULT_THREADS_PER_WORKER if is_threaded else workers


def describe(workers: int, concurrency: int | None, is_threaded: bool, backend: str | None = None) -> str:
    """The plan's line about parallelism (``backend`` ray/dask: jobs on the cluster's workers)."""
    from tauguard.execution.engines import is_cluster

    c = concurrency or default_concurrency(workers, is_threaded)
    if backend is not None and is_cluster(backend):
        if is_threaded:
            return f"{c} simulations in flight: one {backend} task each on the cluster (real LLM: I/O bound)"
        return f"at most {2 * workers} jobs (a task's trials each) queued on {workers} {backend} workers (sim mode: CPU bound)"
    if not is_threaded:
        return f"{c} simulations in flight: {min(c, workers)} worker processes (sim mode: CPU bound)"
    procs = max(1, min(workers, c))
    return f"{c} simulations in flight: threads in {procs} process(es) (real LLM: I/O bound)"
